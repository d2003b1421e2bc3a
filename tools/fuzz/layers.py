"""A fixture taken apart into layers, each with a way to put a changed copy back.

A host ELF's fat-binary section, the containers in it, a CCOB's decompressed bundle, each bundle
entry, an OffloadBinary's image: every nested piece is a layer. ``wrap`` rebuilds everything
around a layer (sizes, offsets, the compressed stream and its MD5), so one mutated layer becomes
a whole input again.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from dataclasses import dataclass

from .fields import Inapplicable, get
from .formats import BITCODE_MAGICS, BUNDLE_SECTION_PREFIX, FATBIN_SECTIONS
from .formats.archives import (
    AR_MAGIC,
    GZIP_MAGIC,
    ar_members,
    ar_replace,
    gunzip,
    gzip_of,
    is_tar,
    tar_members,
    tar_replace,
)
from .formats.bundle import BUNDLE_MAGIC, bundle_entries, bundle_replace_entry
from .formats.ccob import CCOB_MAGIC, build_ccob, ccob_parse
from .formats.coff import coff_replace_section, coff_view, looks_coff
from .formats.elf import ELF_MAGIC, EM_AMDGPU, SHT_LLVM_OFFLOADING, SHT_NOBITS, ElfView, elf_replace_section
from .formats.offload import OFFLOAD_MAGIC, offload_parse, offload_replace_image

_NON_ZERO = re.compile(rb"[^\x00]")


@dataclass
class Layer:
    """One nested piece of a fixture, and how to put a changed copy of it back into the file."""

    kind: str  # co, host-elf, bundle, ccob, offload, coff, region, bitcode, ar, tar, tgz, raw
    data: bytes
    wrap: Callable[[bytes], bytes]
    path: str
    depth: int


def identity(data: bytes) -> bytes:
    return data


def classify(data: bytes) -> str:
    if data[:4] == ELF_MAGIC:
        return "co" if len(data) >= 20 and get(data, 18, 2) == EM_AMDGPU else "host-elf"
    if data.startswith(BUNDLE_MAGIC):
        return "bundle"
    if data.startswith(CCOB_MAGIC):
        return "ccob"
    if data.startswith(OFFLOAD_MAGIC):
        return "offload"
    if data[:2] == b"MZ" or looks_coff(data):
        return "coff"
    if data[:4] in BITCODE_MAGICS:
        return "bitcode"
    if data.startswith(AR_MAGIC):
        return "ar"
    if is_tar(data):
        return "tar"
    if data.startswith(GZIP_MAGIC):
        return "tgz"
    return "raw"


def discover(data: bytes) -> list[Layer]:
    """Every layer of a fixture, outermost first."""
    out: list[Layer] = []
    _discover(data, identity, "file", 0, out)
    return out


SHT_PROGBITS, SHF_EXECINSTR = 1, 0x4


def raw_image_length(blob: bytes, at: int) -> int | None:
    """The length of the AMDGPU ELF64 image at ``blob[at:]`` by its own headers (section table
    end, or the end of the furthest section), or None when ``at`` holds none."""
    if blob[at : at + 4] != ELF_MAGIC or len(blob) - at < 64 or get(blob, at + 18, 2) != EM_AMDGPU:
        return None
    shoff, shnum = get(blob, at + 40, 8), get(blob, at + 60, 2)
    end = max(64, shoff + shnum * 64)
    for i in range(shnum if shoff + shnum * 64 <= len(blob) - at else 0):
        row = at + shoff + i * 64
        if get(blob, row + 4, 4) not in (0, SHT_NOBITS):
            end = max(end, get(blob, row + 24, 8) + get(blob, row + 32, 8))
    return end if end <= len(blob) - at else None


def _discover_raw_images(elf, s, data, wrap, path, depth, out):
    """Raw AMDGPU images kept as byte arrays in a host data section: each is a code-object layer,
    put back in place (a longer image is cut to its old length, a shorter one zero-padded)."""
    content = elf.content(s)
    pos = content.find(ELF_MAGIC)
    while pos >= 0:
        length = raw_image_length(content, pos)
        if length:

            def w(new, i=s.index, at=pos, n=length, body=content):
                piece = (new + b"\0" * n)[:n]
                return wrap(elf_replace_section(data, i, body[:at] + piece + body[at + n :]))

            _discover(content[pos : pos + length], w, f"{path} > section {s.name} @{pos:#x}", depth + 1, out)
            pos = content.find(ELF_MAGIC, pos + length)
        else:
            pos = content.find(ELF_MAGIC, pos + 4)


def _discover(data, wrap, path, depth, out):
    kind = classify(data)
    if depth == 0 and kind in ("bundle", "ccob", "offload"):
        # At the top, as in a fat-binary section, containers may sit back to back.
        _discover_region(data, wrap, path, depth, out)
        return
    out.append(Layer(kind, data, wrap, path, depth))
    if depth > 6:
        return
    try:
        if kind == "host-elf":
            elf = ElfView(data)
            for s in elf.sections:
                if s.f["sh_type"] == SHT_NOBITS or not s.f["sh_size"]:
                    continue
                if s.f["sh_type"] == SHT_PROGBITS and not s.f["sh_flags"] & SHF_EXECINSTR:
                    _discover_raw_images(elf, s, data, wrap, path, depth, out)
                if not (
                    s.name in FATBIN_SECTIONS
                    or s.f["sh_type"] == SHT_LLVM_OFFLOADING
                    or s.name.startswith(BUNDLE_SECTION_PREFIX)
                ):
                    continue

                def w(new, i=s.index):
                    return wrap(elf_replace_section(data, i, new))

                if s.name.startswith(BUNDLE_SECTION_PREFIX):
                    _discover(elf.content(s), w, f"{path} > section {s.name}", depth + 1, out)
                else:
                    _discover_region(elf.content(s), w, f"{path} > section {s.name}", depth + 1, out)
        elif kind == "coff":
            _, _, sections = coff_view(data)
            for s in sections:
                if s.name in FATBIN_SECTIONS and s.f["raw_size"]:
                    size = min(s.f["virtual_size"], s.f["raw_size"]) if s.f["virtual_size"] else s.f["raw_size"]

                    def w(new, i=s.index):
                        return wrap(coff_replace_section(data, i, new))

                    _discover_region(
                        data[s.f["raw_offset"] : s.f["raw_offset"] + size],
                        w,
                        f"{path} > section {s.name}",
                        depth + 1,
                        out,
                    )
        elif kind == "bundle":
            entries, _ = bundle_entries(data)
            for e in entries:
                if e.f["size"]:

                    def w(new, i=e.index):
                        return wrap(bundle_replace_entry(data, i, new))

                    _discover(
                        data[e.f["offset"] : e.f["offset"] + e.f["size"]], w, f"{path} > {e.name}", depth + 1, out
                    )
        elif kind == "ccob":
            version, method, payload, _ = ccob_parse(data)

            def w(new, v=version, m=method):
                return wrap(build_ccob(v, m, new))

            _discover(payload, w, f"{path} > CCOB v{version} {'zstd' if method else 'zlib'}", depth + 1, out)
        elif kind in ("ar", "tar"):
            listed, replace = (ar_members, ar_replace) if kind == "ar" else (tar_members, tar_replace)
            for m in listed(data):

                def w(new, i=m.index, put=replace):
                    return wrap(put(data, i, new))

                start, size = m.f["start"], m.f["size"]
                _discover(data[start : start + size], w, f"{path} > {m.name}", depth + 1, out)
        elif kind == "tgz":

            def w(new):
                return wrap(gzip_of(new))

            _discover(gunzip(data), w, f"{path} > gzip", depth + 1, out)
        elif kind == "offload":
            info = offload_parse(data)
            e = info["e"]
            image = data[e["image_offset"] : e["image_offset"] + e["image_size"]]

            def w(new):
                return wrap(offload_replace_image(data, new))

            _discover(image, w, f"{path} > image", depth + 1, out)
    except (Inapplicable, struct.error, ValueError):
        pass


def split_region(region: bytes) -> list[tuple[int, int]]:
    """(start, end) of each container in a fat-binary section."""
    pos, out = 0, []
    while pos < len(region):
        found = _NON_ZERO.search(region, pos)
        if found is None:
            break
        pos = found.start()
        if region.startswith(BUNDLE_MAGIC, pos):
            end = bundle_entries(region, pos)[1]
        elif region.startswith(CCOB_MAGIC, pos):
            end = ccob_parse(region, pos)[3]
        elif region.startswith(OFFLOAD_MAGIC, pos):
            end = offload_parse(region, pos)["extent"]
        else:
            break
        out.append((pos, end))
        pos = end
    return out


def _discover_region(region, wrap, path, depth, out):
    out.append(Layer("region", region, wrap, path, depth))
    if depth > 6:
        return
    try:
        pieces = split_region(region)
    except (Inapplicable, struct.error, ValueError):
        return
    for start, end in pieces:

        def w(new, s=start, e=end):
            return wrap(region[:s] + new + region[e:])

        _discover(region[start:end], w, f"{path} > @{start:#x}", depth + 1, out)
