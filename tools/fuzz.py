#!/usr/bin/env python3
"""Structure-aware fuzzer for amdocc's readers: real fixtures, mutated where the parsers trust.

    python tools/fuzz.py --inputs 20000 --seed 7 [--jobs 2] [--out DIR]

Every input starts from a real fixture listed in tests/data/fixtures/manifest.json (bare code
objects, offload bundles, CCOB v1-v3 with zlib and zstd, OffloadBinary, host ELF ``.so``/``.o``,
PE ``.dll`` and COFF ``.obj``). The fixture is taken apart into *layers* (a host ELF's fat-binary
section, the containers in it, a CCOB's decompressed bundle, each bundle entry, ...), one layer is
mutated one to four times by structure-aware mutators (ELF identification, header, section and
program headers; notes; MessagePack metadata by type confusion, odd keys, deep nesting, lying
lengths, bad UTF-8 and truncation; v2 YAML metadata; symbols; kernel descriptors; string tables;
bundle, CCOB, OffloadBinary and PE/COFF headers and tables) or generic byte mutators (flips,
words, insertions, deletions, truncation, splices), and put back: sizes, offsets and, for CCOB,
the compressed stream and its MD5 are rebuilt, so a mutation deep inside a compressed bundle
still reaches the parser behind the hash check. Amplifiers build inputs of a few MiB whose tables
point many times at the same bytes (one long name, one note region, one payload, one string),
which a parser must not pay for once per reference. Decompression bombs are bounded by
``Limits.max_decompressed`` (1 GiB by default, seconds to inflate by design), so the bomb
mutator stays at 16 MiB and measures the cost per byte instead. Most inputs reach amdocc as a
buffer; one in eight through a file read by mmap, one in eight loaded strictly.

Input ``i`` of seed ``S`` depends on (S, i) only, so ``--replay S:i`` regenerates it whatever the
number of jobs. The contract checked for every input:

* only ``amdocc.AmdoccError`` may escape ``amdocc.load``, and rendering every code object it
  returns (``report.code_object_record`` + ``report.dumps`` and ``cli.inspect.render_code_object``)
  must not raise at all; every error must name its file and an offset in it (an origin and an
  offset);
* the input is handled within ``--time-limit`` seconds of CPU time (default 1 s, measured in the
  worker, so other load on the machine does not fail it; a slow input is timed twice and the
  faster run counts; wall time is reported too, and a hang is caught on wall time);
* the peak RSS of a worker while it handles one input stays below ``--rss-limit-mib`` (default
  1024 MiB; the peak is reset before each input through /proc/self/clear_refs and read from
  ``ru_maxrss`` after it); address space is capped at ``--as-limit-mib`` (4 GiB) so a runaway
  allocation becomes a reported MemoryError instead of the machine swapping.

Inputs run in worker processes fed through one pipe each. A watchdog in the parent kills a worker
stuck on one input for ``--hang-timeout`` seconds (after asking faulthandler for its stack),
records a hang and carries on with a fresh worker, so a hang cannot stall the campaign. Failures
are grouped by signature (exception type and the innermost amdocc frame); the first input of each
group is minimized in forked children limited like the workers: mutations dropped while the
failure persists, mutated bytes reverted, the surrounding containers dropped, the tail cut. It is
written to ``--out`` as ``<n>-<signature>.bin`` with a ``.txt`` that says what was changed, what
was still needed, the traceback, and how to replay and check it.

Exit status: 0 when no input failed, 1 otherwise, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import difflib
import faulthandler
import hashlib
import json
import math
import multiprocessing as mp
import os
import random
import re
import resource
import signal
import struct
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter, deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_connections
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402
import zstandard  # noqa: E402

import amdocc  # noqa: E402
from amdocc import report  # noqa: E402
from amdocc.cli.inspect import render_code_object  # noqa: E402
from amdocc.errors import AmdoccError  # noqa: E402

FIXTURES = ROOT / "tests" / "data" / "fixtures"
TIME_LIMIT = 1.0          # seconds per input
HANG_TIMEOUT = 10.0       # the watchdog kills a worker stuck this long on one input
RSS_LIMIT_MIB = 1024      # peak resident set size of any campaign process
AS_LIMIT_MIB = 4096       # address-space cap of a worker: runaway allocations raise MemoryError

ELF_MAGIC = b"\x7fELF"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
OFFLOAD_MAGIC = b"\x10\xff\x10\xad"
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
EM_AMDGPU = 224
SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 2, 3, 7, 8, 11
SHT_LLVM_OFFLOADING = 0x6FFF4C0B
FATBIN_SECTIONS = (".hip_fatbin", ".hip_fat", ".llvm.offloading")
BUNDLE_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
_NON_ZERO = re.compile(rb"[^\x00]")


class Inapplicable(Exception):
    """A mutator cannot work on these bytes (not the structure it edits, or already mangled)."""


# -- little helpers ---------------------------------------------------------------------------

def get(data, at: int, size: int) -> int:
    if at < 0 or at + size > len(data):
        raise Inapplicable(f"read of {size} bytes at {at:#x} outside {len(data):#x}")
    return int.from_bytes(data[at:at + size], "little")


def put(data: bytearray, at: int, size: int, value: int) -> None:
    if at < 0 or at + size > len(data):
        raise Inapplicable(f"write of {size} bytes at {at:#x} outside {len(data):#x}")
    data[at:at + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def align(value: int, to: int) -> int:
    return -(-value // to) * to


def pad_to(data: bytes, to: int) -> bytes:
    return data + b"\0" * (align(len(data), to) - len(data))


_COMMON = [0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 0x7F, 0x80, 0xFF, 0x100, 0x3FF, 0x400, 0xFFF,
           0x1000, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32,
           (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def interesting(rng: random.Random, size: int, orig: int | None = None, length: int | None = None,
                extra=()) -> int:
    """A value for a ``size``-byte field: edge cases, near the original, near the buffer's end."""
    top = (1 << (8 * size)) - 1
    roll = rng.random()
    if extra and roll < 0.25:
        value = rng.choice(list(extra))
    elif roll < 0.55:
        value = rng.choice([v for v in _COMMON if v <= top] + [top, top - 1, top >> 1, (top >> 1) + 1])
    elif roll < 0.72 and orig is not None:
        value = orig + rng.choice([-64, -16, -8, -4, -2, -1, 1, 2, 4, 8, 16, 64, orig, -orig])
    elif roll < 0.84 and length is not None:
        value = rng.choice([length, length - 1, length + 1, length - rng.randint(0, 64),
                            rng.randint(0, max(length, 1)), length * 2])
    elif roll < 0.92 and orig is not None:
        value = orig ^ (1 << rng.randrange(8 * size))
    else:
        value = rng.getrandbits(8 * size)
    return value & top


def with_field(rng: random.Random, data: bytes, at: int, size: int, orig: int | None = None,
               length: int | None = None, extra=(), label: str = "") -> tuple[bytes, str]:
    """``data`` with the ``size``-byte field at ``at`` set to an :func:`interesting` value, and
    a note naming the field and the value."""
    value = interesting(rng, size, orig, length, extra)
    out = bytearray(data)
    put(out, at, size, value)
    return bytes(out), f"{label}={value:#x}"


# -- minimal views of the formats (the fuzzer's own, independent of amdocc's parsers) ------------

EHDR = {  # field -> (offset, size)
    2: {"e_type": (0x10, 2), "e_machine": (0x12, 2), "e_version": (0x14, 4), "e_entry": (0x18, 8),
        "e_phoff": (0x20, 8), "e_shoff": (0x28, 8), "e_flags": (0x30, 4), "e_ehsize": (0x34, 2),
        "e_phentsize": (0x36, 2), "e_phnum": (0x38, 2), "e_shentsize": (0x3A, 2),
        "e_shnum": (0x3C, 2), "e_shstrndx": (0x3E, 2)},
    1: {"e_type": (0x10, 2), "e_machine": (0x12, 2), "e_version": (0x14, 4), "e_entry": (0x18, 4),
        "e_phoff": (0x1C, 4), "e_shoff": (0x20, 4), "e_flags": (0x24, 4), "e_ehsize": (0x28, 2),
        "e_phentsize": (0x2A, 2), "e_phnum": (0x2C, 2), "e_shentsize": (0x2E, 2),
        "e_shnum": (0x30, 2), "e_shstrndx": (0x32, 2)},
}
IDENT = {"ei_mag0": 0, "ei_mag3": 3, "ei_class": 4, "ei_data": 5, "ei_version": 6, "ei_osabi": 7,
         "ei_abiversion": 8}
SHDR = {
    2: (64, {"sh_name": (0, 4), "sh_type": (4, 4), "sh_flags": (8, 8), "sh_addr": (16, 8),
             "sh_offset": (24, 8), "sh_size": (32, 8), "sh_link": (40, 4), "sh_info": (44, 4),
             "sh_addralign": (48, 8), "sh_entsize": (56, 8)}),
    1: (40, {"sh_name": (0, 4), "sh_type": (4, 4), "sh_flags": (8, 4), "sh_addr": (12, 4),
             "sh_offset": (16, 4), "sh_size": (20, 4), "sh_link": (24, 4), "sh_info": (28, 4),
             "sh_addralign": (32, 4), "sh_entsize": (36, 4)}),
}
PHDR = {
    2: (56, {"p_type": (0, 4), "p_flags": (4, 4), "p_offset": (8, 8), "p_vaddr": (16, 8),
             "p_paddr": (24, 8), "p_filesz": (32, 8), "p_memsz": (40, 8), "p_align": (48, 8)}),
    1: (32, {"p_type": (0, 4), "p_offset": (4, 4), "p_vaddr": (8, 4), "p_paddr": (12, 4),
             "p_filesz": (16, 4), "p_memsz": (20, 4), "p_flags": (24, 4), "p_align": (28, 4)}),
}
SYM = {
    2: (24, {"st_name": (0, 4), "st_info": (4, 1), "st_other": (5, 1), "st_shndx": (6, 2),
             "st_value": (8, 8), "st_size": (16, 8)}),
    1: (16, {"st_name": (0, 4), "st_value": (4, 4), "st_size": (8, 4), "st_info": (12, 1),
             "st_other": (13, 1), "st_shndx": (14, 2)}),
}


@dataclass
class Rec:
    """One table row: where its header sits and its decoded fields."""
    index: int
    at: int
    f: dict
    name: str = ""


class ElfView:
    """Headers, sections, segments, symbols and notes of an ELF held in bytes (tolerant)."""

    def __init__(self, data: bytes):
        if data[:4] != ELF_MAGIC or len(data) < 0x34 or data[4] not in (1, 2) or data[5] != 1:
            raise Inapplicable("not a little-endian ELF")
        self.data = data
        self.cls = data[4]
        self.h = {k: get(data, o, s) for k, (o, s) in EHDR[self.cls].items()}
        size, fields = SHDR[self.cls]
        self.sections: list[Rec] = []
        shnum = self.h["e_shnum"]
        if self.h["e_shoff"] and self.h["e_shentsize"] == size and shnum <= 4096:
            for i in range(shnum):
                at = self.h["e_shoff"] + i * size
                if at + size > len(data):
                    break
                self.sections.append(Rec(i, at, {k: get(data, at + o, s) for k, (o, s) in fields.items()}))
        strndx = self.h["e_shstrndx"]
        if strndx < len(self.sections):
            names = self.content(self.sections[strndx])
            for s in self.sections:
                end = names.find(b"\0", s.f["sh_name"])
                if 0 <= s.f["sh_name"] < len(names) and end >= 0:
                    s.name = names[s.f["sh_name"]:end].decode("latin-1")
        size, fields = PHDR[self.cls]
        self.segments: list[Rec] = []
        if self.h["e_phoff"] and self.h["e_phentsize"] == size and self.h["e_phnum"] <= 4096:
            for i in range(self.h["e_phnum"]):
                at = self.h["e_phoff"] + i * size
                if at + size > len(data):
                    break
                self.segments.append(Rec(i, at, {k: get(data, at + o, s) for k, (o, s) in fields.items()}))

    @property
    def amdgpu(self) -> bool:
        return self.h["e_machine"] == EM_AMDGPU

    def content(self, s: Rec) -> bytes:
        off, size = s.f["sh_offset"], s.f["sh_size"]
        if s.f["sh_type"] == SHT_NOBITS or off + size > len(self.data):
            raise Inapplicable(f"section {s.index} has no bytes in the file")
        return self.data[off:off + size]

    def named(self, name: str) -> Rec | None:
        return next((s for s in self.sections if s.name == name), None)

    def of_type(self, *types) -> list[Rec]:
        return [s for s in self.sections if s.f["sh_type"] in types]

    def symtab(self) -> Rec:
        table = (self.of_type(SHT_SYMTAB) or self.of_type(SHT_DYNSYM) or [None])[0]
        if table is None:
            raise Inapplicable("no symbol table")
        return table

    def symbols(self, table: Rec) -> list[Rec]:
        size, fields = SYM[self.cls]
        body = self.content(table)
        link = table.f["sh_link"]
        names = self.content(self.sections[link]) if link < len(self.sections) else b""
        out = []
        for i in range(len(body) // size):
            at = table.f["sh_offset"] + i * size
            rec = Rec(i, at, {k: get(self.data, at + o, s) for k, (o, s) in fields.items()})
            n = rec.f["st_name"]
            end = names.find(b"\0", n) if n < len(names) else -1
            rec.name = names[n:end].decode("latin-1") if end >= 0 else ""
            out.append(rec)
        return out

    def symbol_offset(self, sym: Rec) -> int:
        shndx = sym.f["st_shndx"]
        if not 0 < shndx < len(self.sections):
            raise Inapplicable("symbol not in a section")
        s = self.sections[shndx]
        delta = sym.f["st_value"] - (0 if self.h["e_type"] == 1 else s.f["sh_addr"])
        return s.f["sh_offset"] + delta

    def notes(self, section: Rec) -> list[Rec]:
        """Notes of one SHT_NOTE section; ``f`` has namesz, descsz, type, name, desc."""
        body = self.content(section)
        step = 8 if section.f["sh_addralign"] == 8 else 4
        out, pos = [], 0
        while pos + 12 <= len(body):
            namesz, descsz, ntype = struct.unpack_from("<III", body, pos)
            name_at = pos + 12
            desc_at = name_at + align(namesz, step)
            if desc_at + descsz > len(body):
                raise Inapplicable("note runs past its section")
            out.append(Rec(len(out), section.f["sh_offset"] + pos,
                           {"namesz": namesz, "descsz": descsz, "type": ntype,
                            "name": body[name_at:name_at + namesz], "desc": body[desc_at:desc_at + descsz],
                            "desc_at": section.f["sh_offset"] + desc_at},
                           body[name_at:name_at + namesz].rstrip(b"\0").decode("latin-1")))
            pos = desc_at + align(descsz, step)
        return out


def elf_set(data: bytes, rec_at: int, layout: dict, field_name: str, value: int) -> bytes:
    out = bytearray(data)
    off, size = layout[field_name]
    put(out, rec_at + off, size, value)
    return bytes(out)


def elf_replace_section(data: bytes, index: int, new: bytes) -> bytes:
    """Put ``new`` as the contents of section ``index``: in place when it fits, else appended."""
    elf = ElfView(data)
    s = elf.sections[index]
    _, fields = SHDR[elf.cls]
    out = bytearray(data)
    off, size = s.f["sh_offset"], s.f["sh_size"]
    if len(new) <= size and off + size <= len(data):
        out[off:off + size] = new + b"\0" * (size - len(new))
    else:
        off = align(len(out), 16)
        out += b"\0" * (off - len(out)) + new
        put(out, s.at + fields["sh_offset"][0], fields["sh_offset"][1], off)
    put(out, s.at + fields["sh_size"][0], fields["sh_size"][1], len(new))
    return bytes(out)


def build_notes(notes: list[tuple[bytes, int, bytes]], step: int) -> bytes:
    """A note region from (name with its NUL, type, desc) triples."""
    out = b""
    for name, ntype, desc in notes:
        out += struct.pack("<III", len(name), len(desc), ntype) + pad_to(name, step) + pad_to(desc, step)
    return out


# Offload bundles ---------------------------------------------------------------------------

def bundle_entries(data: bytes, start: int = 0) -> tuple[list[Rec], int]:
    """Entries of the bundle at ``start`` and its extent (offset just past its last byte)."""
    count = get(data, start + 24, 8)
    if count > 4096:
        raise Inapplicable("implausible bundle entry count")
    pos, out = start + 32, []
    extent = pos
    for i in range(count):
        offset, size, id_len = get(data, pos, 8), get(data, pos + 8, 8), get(data, pos + 16, 8)
        if id_len > 4096 or pos + 24 + id_len > len(data):
            raise Inapplicable("implausible bundle entry id")
        out.append(Rec(i, pos, {"offset": offset, "size": size, "id_length": id_len},
                       data[pos + 24:pos + 24 + id_len].decode("latin-1")))
        pos += 24 + id_len
        if size and start + offset + size > len(data):
            raise Inapplicable("bundle entry past the end")
        extent = max(extent, pos, start + offset + size)
    return out, extent


def build_bundle(entries: list[tuple[bytes, bytes]], alignment: int = 8) -> bytes:
    """An uncompressed bundle from (id, payload) pairs, payloads aligned."""
    header_size = 32 + sum(24 + len(i) for i, _ in entries)
    pos = align(header_size, alignment)
    table, body = b"", b""
    for entry_id, payload in entries:
        if payload:
            pos = align(pos, alignment)
        table += struct.pack("<QQQ", pos, len(payload), len(entry_id)) + entry_id
        gap = pos - (header_size + len(body)) if payload else 0
        body += b"\0" * max(gap, 0) + payload
        pos += len(payload)
    return BUNDLE_MAGIC + struct.pack("<Q", len(entries)) + table + body


def bundle_replace_entry(data: bytes, index: int, new: bytes) -> bytes:
    entries, _ = bundle_entries(data)
    e = entries[index]
    out = bytearray(data)
    if len(new) <= e.f["size"]:
        out[e.f["offset"]:e.f["offset"] + e.f["size"]] = new + b"\0" * (e.f["size"] - len(new))
    else:
        put(out, e.at, 8, align(len(out), 8))
        out += b"\0" * (align(len(out), 8) - len(out)) + new
    put(out, e.at + 8, 8, len(new))
    return bytes(out)


# Compressed bundles --------------------------------------------------------------------------

CCOB_HEADER = {1: ("<4sHHIQ", 20), 2: ("<4sHHIIQ", 24), 3: ("<4sHHQQQ", 32)}
CCOB_FIELDS = {  # field -> (offset, size) per version
    1: {"version": (4, 2), "method": (6, 2), "uncompressed_size": (8, 4), "hash": (12, 8)},
    2: {"version": (4, 2), "method": (6, 2), "total_size": (8, 4), "uncompressed_size": (12, 4),
        "hash": (16, 8)},
    3: {"version": (4, 2), "method": (6, 2), "total_size": (8, 8), "uncompressed_size": (16, 8),
        "hash": (24, 8)},
}


def compress(method: int, payload: bytes) -> bytes:
    return zlib.compress(payload, 6) if method == 0 else zstandard.ZstdCompressor(level=3).compress(payload)


def md5_low64(payload: bytes) -> int:
    return int.from_bytes(hashlib.md5(payload).digest()[:8], "little")


def build_ccob(version: int, method: int, payload: bytes, *, declared: int | None = None,
               digest: int | None = None, total_delta: int = 0, stream: bytes | None = None) -> bytes:
    body = compress(method, payload) if stream is None else stream
    declared = len(payload) if declared is None else declared
    digest = md5_low64(payload) if digest is None else digest
    fmt, size = CCOB_HEADER[version]
    mask = (1 << 32) - 1 if version < 3 else (1 << 64) - 1
    if version == 1:
        head = struct.pack(fmt, CCOB_MAGIC, 1, method, declared & mask, digest)
    else:
        head = struct.pack(fmt, CCOB_MAGIC, version, method, (size + len(body) + total_delta) & mask,
                           declared & mask, digest)
    return head + body


def ccob_parse(data: bytes, start: int = 0) -> tuple[int, int, bytes, int]:
    """(version, method, payload, extent) of a well-formed CCOB at ``start``."""
    version, method = get(data, start + 4, 2), get(data, start + 6, 2)
    if version not in CCOB_HEADER or method not in (0, 1):
        raise Inapplicable("unknown CCOB version or method")
    fmt, size = CCOB_HEADER[version]
    fields = struct.unpack_from(fmt, data, start)
    if version == 1:
        stream_end = len(data)
    else:
        stream_end = start + fields[3]
        if stream_end > len(data) or fields[3] < size:
            raise Inapplicable("CCOB total size lies")
    stream = data[start + size:stream_end]
    try:
        if method == 0:
            d = zlib.decompressobj()
            payload = d.decompress(stream, 256 << 20)
            unused = len(d.unused_data) + len(d.unconsumed_tail)
        else:
            d = zstandard.ZstdDecompressor().decompressobj()
            payload = d.decompress(stream)
            unused = len(d.unused_data)
    except (zlib.error, zstandard.ZstdError) as exc:
        raise Inapplicable(f"corrupt stream: {exc}") from None
    extent = stream_end if version > 1 else start + size + len(stream) - unused
    return version, method, payload, extent


# OffloadBinary ------------------------------------------------------------------------------

OFFLOAD_HEADER = {"version": (4, 4), "size": (8, 8), "entry_offset": (16, 8), "entry_size": (24, 8)}
OFFLOAD_ENTRY = {"image_kind": (0, 2), "offload_kind": (2, 2), "flags": (4, 4), "string_offset": (8, 8),
                 "num_strings": (16, 8), "image_offset": (24, 8), "image_size": (32, 8)}


def offload_parse(data: bytes, start: int = 0) -> dict:
    h = {k: get(data, start + o, s) for k, (o, s) in OFFLOAD_HEADER.items()}
    if h["size"] < 32 or start + h["size"] > len(data):
        raise Inapplicable("OffloadBinary size lies")
    entry_at = start + h["entry_offset"]
    e = {k: get(data, entry_at + o, s) for k, (o, s) in OFFLOAD_ENTRY.items()}
    if e["num_strings"] > 256:
        raise Inapplicable("too many strings")
    strings = []
    for i in range(e["num_strings"]):
        at = start + e["string_offset"] + 16 * i
        key, value = get(data, at, 8), get(data, at + 8, 8)
        strings.append((at, key, value))
    return {"h": h, "e": e, "entry_at": entry_at, "strings": strings,
            "extent": min(start + align(h["size"], 8), len(data))}


def offload_string(data: bytes, start: int, offset: int) -> bytes:
    at = start + offset
    end = data.find(b"\0", at)
    if at >= len(data) or end < 0:
        raise Inapplicable("bad OffloadBinary string")
    return data[at:end]


def offload_replace_image(data: bytes, new: bytes) -> bytes:
    info = offload_parse(data)
    e, at = info["e"], info["entry_at"]
    out = bytearray(data[:info["h"]["size"]])
    if len(new) <= e["image_size"]:
        off = e["image_offset"]
        out[off:off + e["image_size"]] = new + b"\0" * (e["image_size"] - len(new))
    else:
        off = align(len(out), 8)
        out += b"\0" * (off - len(out)) + new
        put(out, at + 24, 8, off)
    put(out, at + 32, 8, len(new))
    out += b"\0" * (align(len(out), 8) - len(out))
    put(out, 8, 8, len(out))
    return bytes(out)


# PE/COFF ---------------------------------------------------------------------------------

COFF_HEADER = {"machine": (0, 2), "sections": (2, 2), "timestamp": (4, 4), "symbol_table": (8, 4),
               "symbols": (12, 4), "optional_header_size": (16, 2), "characteristics": (18, 2)}
COFF_SECTION = {"name": (0, 8), "virtual_size": (8, 4), "virtual_address": (12, 4), "raw_size": (16, 4),
                "raw_offset": (20, 4), "relocations": (24, 4), "line_numbers": (28, 4),
                "relocation_count": (32, 2), "line_number_count": (34, 2), "characteristics": (36, 4)}


def looks_coff(data: bytes) -> bool:
    return (len(data) >= 20 and get(data, 0, 2) in (0x8664, 0xAA64, 0x14C)
            and 0 < get(data, 2, 2) < 4096 and get(data, 16, 2) == 0)


def coff_view(data: bytes) -> tuple[int, dict, list[Rec]]:
    """(COFF header offset, header fields, sections with resolved names)."""
    if data[:2] == b"MZ":
        lfanew = get(data, 0x3C, 4)
        if data[lfanew:lfanew + 4] != b"PE\0\0":
            raise Inapplicable("no PE signature")
        at = lfanew + 4
    elif looks_coff(data):
        at = 0
    else:
        raise Inapplicable("not PE/COFF")
    h = {k: get(data, at + o, s) for k, (o, s) in COFF_HEADER.items()}
    table = at + 20 + h["optional_header_size"]
    strings = h["symbol_table"] + 18 * h["symbols"]
    out = []
    for i in range(min(h["sections"], 256)):
        rec_at = table + 40 * i
        f = {k: get(data, rec_at + o, s) for k, (o, s) in COFF_SECTION.items() if k != "name"}
        raw = data[rec_at:rec_at + 8].rstrip(b"\0")
        name = raw.decode("latin-1")
        if name.startswith("/") and name[1:].isdigit():
            s = strings + int(name[1:])
            end = data.find(b"\0", s)
            name = data[s:end].decode("latin-1") if end >= 0 else name
        out.append(Rec(i, rec_at, f, name))
    return at, h, out


def coff_replace_section(data: bytes, index: int, new: bytes) -> bytes:
    _, _, sections = coff_view(data)
    s = sections[index]
    out = bytearray(data)
    size = min(s.f["virtual_size"], s.f["raw_size"]) if s.f["virtual_size"] else s.f["raw_size"]
    off = s.f["raw_offset"]
    if len(new) <= size:
        out[off:off + size] = new + b"\0" * (size - len(new))
    else:
        off = align(len(out), 16)
        out += b"\0" * (off - len(out)) + new
        put(out, s.at + 20, 4, off)
    put(out, s.at + 16, 4, len(new))
    if s.f["virtual_size"]:
        put(out, s.at + 8, 4, len(new))
    return bytes(out)


# -- layers ---------------------------------------------------------------------------------

@dataclass
class Layer:
    """One nested piece of a fixture, and how to put a changed copy of it back into the file."""
    kind: str            # co, host-elf, bundle, ccob, offload, coff, region, bitcode, raw
    data: bytes
    wrap: Callable[[bytes], bytes]
    path: str
    depth: int


def _identity(data: bytes) -> bytes:
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
    return "raw"


def discover(data: bytes) -> list[Layer]:
    """Every layer of a fixture, outermost first."""
    out: list[Layer] = []
    _discover(data, _identity, "file", 0, out)
    return out


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
                if not (s.name in FATBIN_SECTIONS or s.f["sh_type"] == SHT_LLVM_OFFLOADING
                        or s.name.startswith(BUNDLE_SECTION_PREFIX)):
                    continue
                w = (lambda new, i=s.index: wrap(elf_replace_section(data, i, new)))
                if s.name.startswith(BUNDLE_SECTION_PREFIX):
                    _discover(elf.content(s), w, f"{path} > section {s.name}", depth + 1, out)
                else:
                    _discover_region(elf.content(s), w, f"{path} > section {s.name}", depth + 1, out)
        elif kind == "coff":
            _, _, sections = coff_view(data)
            for s in sections:
                if s.name in FATBIN_SECTIONS and s.f["raw_size"]:
                    size = min(s.f["virtual_size"], s.f["raw_size"]) if s.f["virtual_size"] else s.f["raw_size"]
                    w = (lambda new, i=s.index: wrap(coff_replace_section(data, i, new)))
                    _discover_region(data[s.f["raw_offset"]:s.f["raw_offset"] + size], w,
                                     f"{path} > section {s.name}", depth + 1, out)
        elif kind == "bundle":
            entries, _ = bundle_entries(data)
            for e in entries:
                if e.f["size"]:
                    w = (lambda new, i=e.index: wrap(bundle_replace_entry(data, i, new)))
                    _discover(data[e.f["offset"]:e.f["offset"] + e.f["size"]], w, f"{path} > {e.name}",
                              depth + 1, out)
        elif kind == "ccob":
            version, method, payload, _ = ccob_parse(data)
            w = (lambda new, v=version, m=method: wrap(build_ccob(v, m, new)))
            _discover(payload, w, f"{path} > CCOB v{version} {'zstd' if method else 'zlib'}", depth + 1, out)
        elif kind == "offload":
            info = offload_parse(data)
            e = info["e"]
            image = data[e["image_offset"]:e["image_offset"] + e["image_size"]]
            w = (lambda new: wrap(offload_replace_image(data, new)))
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
        w = (lambda new, s=start, e=end: wrap(region[:s] + new + region[e:]))
        _discover(region[start:end], w, f"{path} > @{start:#x}", depth + 1, out)


# -- mutators -------------------------------------------------------------------------------

@dataclass
class Mutator:
    name: str
    kinds: frozenset
    weight: float
    fn: Callable
    final: bool = False      # ends a stack of mutations (amplifiers: one big structure is enough)


MUTATORS: dict[str, Mutator] = {}
ELF_KINDS = ("co", "host-elf")
ANY = "*"


def mutator(name: str, kinds, weight: float = 3.0, final: bool = False):
    def register(fn):
        MUTATORS[name] = Mutator(name, frozenset(kinds), weight, fn, final)
        return fn
    return register


@dataclass
class Context:
    """What mutators may draw on besides the layer itself."""
    donors: list[bytes]   # other fixtures' bytes, for splicing


# ELF ---------------------------------------------------------------------------------------

@mutator("elf.ident", ELF_KINDS, 1.5)
def mut_elf_ident(rng, data, ctx):
    name = rng.choice(list(IDENT))
    values = {"ei_class": [0, 1, 2, 3, 0xFF], "ei_data": [0, 1, 2, 0xFF], "ei_version": [0, 1, 2, 0xFF],
              "ei_osabi": [0, 3, 63, 64, 65, 66, 67, 0xFF], "ei_abiversion": [0, 1, 2, 3, 4, 5, 6, 7, 0xFF],
              "ei_mag0": [0, 0x7E], "ei_mag3": [0, ord("G")]}[name]
    if len(data) <= IDENT[name]:
        raise Inapplicable("too short")
    value = rng.choice(values)
    out = bytearray(data)
    out[IDENT[name]] = value
    return bytes(out), f"{name}={value:#x}"


@mutator("elf.header", ELF_KINDS)
def mut_elf_header(rng, data, ctx):
    elf = ElfView(data)
    layout = EHDR[elf.cls]
    name = rng.choice(list(layout))
    orig = elf.h[name]
    n = len(elf.sections)
    extra = {
        "e_shoff": [len(data) - SHDR[elf.cls][0] * max(n, 1), len(data) - 1, len(data), 1, 0x40],
        "e_phoff": [len(data) - 1, len(data), 0, 0x40, elf.h["e_shoff"]],
        "e_shnum": [0, 1, n - 1, n + 1, 0xFF00, 0xFFFF],
        "e_shstrndx": [0, n - 1, n, n + 1, 0xFF00, 0xFFFF] + [s.index for s in elf.sections],
        "e_shentsize": [0, 1, 40, 56, 63, 64, 65, 0xFFFF],
        "e_phentsize": [0, 1, 32, 55, 56, 57, 0xFFFF],
        "e_phnum": [0, 1, 0xFFFF, len(elf.segments) + 1],
        "e_flags": [orig & ~0xFF | rng.randrange(0x100), orig ^ 0x300, orig ^ 0xC00, orig | 0xFF000000,
                    orig & 0xFF, 0],
        "e_machine": [0, 3, 62, 224, 0xFFFF],
        "e_type": [0, 1, 2, 3, 4, 0xFE00, 0xFFFF],
    }.get(name, ())
    value = interesting(rng, layout[name][1], orig, len(data), extra)
    if name == "e_shnum" and value == 0 and elf.sections and rng.random() < 0.6:
        # Extended numbering: the count moves to section 0's sh_size.
        out = elf_set(data, 0, layout, name, 0)
        s0 = elf.sections[0]
        count = interesting(rng, 8, n, len(data), [n, n + 1, 1 << 32, (1 << 64) - 1, 1 << 20])
        return elf_set(out, s0.at, SHDR[elf.cls][1], "sh_size", count), f"e_shnum=0 sh_size[0]={count:#x}"
    if name == "e_shstrndx" and value == 0xFFFF and elf.sections and rng.random() < 0.6:
        out = elf_set(data, 0, layout, name, 0xFFFF)
        link = interesting(rng, 4, elf.h["e_shstrndx"], None, [n, n - 1, 0, 0xFFFFFFFF])
        return elf_set(out, elf.sections[0].at, SHDR[elf.cls][1], "sh_link", link), \
            f"e_shstrndx=SHN_XINDEX sh_link[0]={link:#x}"
    return elf_set(data, 0, layout, name, value), f"{name}={value:#x}"


def _pick_section(rng, elf: ElfView) -> Rec:
    if not elf.sections:
        raise Inapplicable("no sections")
    special = [s for s in elf.sections
               if s.f["sh_type"] in (SHT_NOTE, SHT_SYMTAB, SHT_DYNSYM, SHT_STRTAB, SHT_LLVM_OFFLOADING)
               or s.name in FATBIN_SECTIONS or s.name.startswith(BUNDLE_SECTION_PREFIX)
               or s.name in (".rodata", ".text", ".dynamic")]
    return rng.choice(special) if special and rng.random() < 0.75 else rng.choice(elf.sections)


@mutator("elf.shdr", ELF_KINDS, 4.0)
def mut_elf_shdr(rng, data, ctx):
    elf = ElfView(data)
    s = _pick_section(rng, elf)
    size, layout = SHDR[elf.cls]
    name = rng.choice(list(layout))
    orig = s.f[name]
    n = len(elf.sections)
    offsets = [x.f["sh_offset"] for x in elf.sections]
    extra = {
        "sh_offset": offsets + [0, len(data), len(data) - 1, len(data) - s.f["sh_size"] + 1],
        "sh_size": [0, 1, len(data), len(data) - s.f["sh_offset"], len(data) - s.f["sh_offset"] + 1,
                    orig - 1, orig + 1, (1 << 64) - 1, 1 << 40],
        "sh_link": [0, n, n - 1, n + 1, 0xFFFFFFFF, elf.h["e_shstrndx"]] + [x.index for x in elf.sections],
        "sh_entsize": [0, 1, 16, 23, 24, 25, 48, (1 << 64) - 1],
        "sh_type": [0, 1, 2, 3, 4, 7, 8, 11, SHT_LLVM_OFFLOADING, 0xFFFFFFFF],
        "sh_addralign": [0, 1, 2, 4, 8, 16, 4096, (1 << 64) - 1],
        "sh_addr": [0, s.f["sh_offset"], orig + 64, (1 << 64) - 1, 1 << 63],
        "sh_name": [0, 1] + [x.f["sh_name"] for x in elf.sections] + [0xFFFFFFFF],
    }.get(name, ())
    value = interesting(rng, layout[name][1], orig, len(data), extra)
    return elf_set(data, s.at, layout, name, value), f"section {s.index} ({s.name}) {name}={value:#x}"


@mutator("elf.phdr", ELF_KINDS, 1.5)
def mut_elf_phdr(rng, data, ctx):
    elf = ElfView(data)
    if not elf.segments:
        raise Inapplicable("no segments")
    p = rng.choice(elf.segments)
    _, layout = PHDR[elf.cls]
    name = rng.choice(list(layout))
    extra = {"p_type": [0, 1, 4, 0x6474E550], "p_align": [0, 1, 4, 8, 16, (1 << 64) - 1],
             "p_filesz": [0, (1 << 64) - 1, len(data), len(data) - p.f["p_offset"] + 1]}.get(name, ())
    value = interesting(rng, layout[name][1], p.f[name], len(data), extra)
    out = elf_set(data, p.at, layout, name, value)
    if rng.random() < 0.3:  # notes come from PT_NOTE only when there are no section headers
        out = elf_set(out, 0, EHDR[elf.cls], "e_shoff", 0)
        return out, f"segment {p.index} {name}={value:#x}, e_shoff=0"
    return out, f"segment {p.index} {name}={value:#x}"


def _note_sections(elf: ElfView) -> list[Rec]:
    notes = elf.of_type(SHT_NOTE)
    if not notes:
        raise Inapplicable("no note sections")
    return notes


@mutator("elf.note", ("co",), 3.0)
def mut_elf_note(rng, data, ctx):
    elf = ElfView(data)
    section = rng.choice(_note_sections(elf))
    notes = elf.notes(section)
    if not notes:
        raise Inapplicable("empty note section")
    note = rng.choice(notes)
    what = rng.choice(["namesz", "descsz", "type", "name", "align", "region", "v2-isa"])
    if what in ("namesz", "descsz", "type"):
        off = {"namesz": 0, "descsz": 4, "type": 8}[what]
        extra = {"namesz": [0, 1, 3, 4, 5, 7, 8, 9, 0x7FFFFFFF, 0xFFFFFFFF, section.f["sh_size"]],
                 "descsz": [0, 1, 3, note.f["descsz"] - 1, note.f["descsz"] + 1, 0x7FFFFFF0, 0xFFFFFFFF,
                            section.f["sh_size"]],
                 "type": [0, 1, 2, 3, 4, 5, 10, 11, 32, 33, 0xFFFFFFFF]}[what]
        return with_field(rng, data, note.at + off, 4, note.f[what], section.f["sh_size"], extra,
                          f"note {note.index} ({note.name}) {what}")
    if what == "name":
        name = rng.choice([b"AMD\0", b"AMDGPU\0", b"AMDGPU", b"AMDGPUX", b"\xff\xfe\0", b"", b"GNU\0",
                           b"AMDGPU\0\0\0\0\0\0\0\0\0"])
        rebuilt = [(name if n is note else n.f["name"], n.f["type"], n.f["desc"]) for n in notes]
        step = 8 if section.f["sh_addralign"] == 8 else 4
        return elf_replace_section(data, section.index, build_notes(rebuilt, step)), \
            f"note {note.index} name={name!r}"
    if what == "align":
        value = rng.choice([0, 1, 4, 8, 16])
        return elf_set(data, section.at, SHDR[elf.cls][1], "sh_addralign", value), \
            f"note section {section.index} sh_addralign={value}"
    if what == "region":
        cut = rng.randint(1, 16)
        value = max(0, section.f["sh_size"] - cut)
        return elf_set(data, section.at, SHDR[elf.cls][1], "sh_size", value), \
            f"note section {section.index} sh_size={value:#x} (cut {cut})"
    # CO v2 ISA note: vendor and architecture name sizes
    isa = [n for n in notes if n.f["type"] == 3 and n.name == "AMD"]
    if not isa:
        raise Inapplicable("no v2 ISA note")
    out = bytearray(data)
    at = isa[0].f["desc_at"] + rng.choice([0, 2])
    value = interesting(rng, 2, get(data, at, 2), None, [0, 1, 0xFFFF, isa[0].f["descsz"]])
    put(out, at, 2, value)
    return bytes(out), f"v2 ISA note name size at +{at - isa[0].f['desc_at']}={value:#x}"


def _metadata_note(elf: ElfView, owner: str, ntype: int):
    for section in elf.of_type(SHT_NOTE):
        notes = elf.notes(section)
        for note in notes:
            if note.name == owner and note.f["type"] == ntype:
                return section, notes, note
    raise Inapplicable(f"no {owner} note of type {ntype}")


def _install_desc(data: bytes, elf: ElfView, section: Rec, notes: list[Rec], note: Rec, desc: bytes) -> bytes:
    rebuilt = [(n.f["name"], n.f["type"], desc if n is note else n.f["desc"]) for n in notes]
    step = 8 if section.f["sh_addralign"] == 8 else 4
    return elf_replace_section(data, section.index, build_notes(rebuilt, step))


def with_note_desc(data: bytes, owner: str, note_type: int, desc: bytes) -> bytes:
    """The code object with the descriptor of its ``owner``/``note_type`` note replaced by ``desc``
    (e.g. "AMDGPU", 32 for the MessagePack metadata, "AMD", 10 for v2 YAML)."""
    elf = ElfView(data)
    section, notes, note = _metadata_note(elf, owner, note_type)
    return _install_desc(data, elf, section, notes, note, desc)


def note_desc(data: bytes, owner: str, note_type: int) -> bytes:
    """The descriptor of a code object's ``owner``/``note_type`` note."""
    return _metadata_note(ElfView(data), owner, note_type)[2].f["desc"]


# MessagePack metadata ------------------------------------------------------------------------

class Raw(bytes):
    """An already encoded MessagePack fragment, spliced into the tree as it is."""


class Pairs(list):
    """A map given as (key, value) pairs: keys may be anything, even unhashable fragments."""


def _be(n: int, size: int) -> bytes:
    return n.to_bytes(size, "big")


def mp_map_header(n: int) -> bytes:
    return bytes([0x80 | n]) if n < 16 else (b"\xde" + _be(n, 2) if n < 1 << 16 else b"\xdf" + _be(n, 4))


def mp_array_header(n: int) -> bytes:
    return bytes([0x90 | n]) if n < 16 else (b"\xdc" + _be(n, 2) if n < 1 << 16 else b"\xdd" + _be(n, 4))


def mp_encode(obj) -> bytes:
    if isinstance(obj, Raw):
        return bytes(obj)
    if isinstance(obj, (msgpack.ExtType, msgpack.Timestamp)):   # ExtType is a tuple: before lists
        return msgpack.packb(obj)
    if isinstance(obj, Pairs):
        return mp_map_header(len(obj)) + b"".join(mp_encode(k) + mp_encode(v) for k, v in obj)
    if isinstance(obj, dict):
        return mp_map_header(len(obj)) + b"".join(mp_encode(k) + mp_encode(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return mp_array_header(len(obj)) + b"".join(mp_encode(v) for v in obj)
    return msgpack.packb(obj, use_bin_type=True)


# Keys amdocc reads; mutations aim at them more often than at the long .args lists.
KERNEL_KEYS = (".name", ".symbol", ".vgpr_count", ".agpr_count", ".sgpr_count", ".group_segment_fixed_size",
               ".private_segment_fixed_size", ".kernarg_segment_size", ".wavefront_size",
               ".max_flat_workgroup_size", ".workgroup_processor_mode", ".uses_dynamic_stack",
               ".sgpr_spill_count", ".vgpr_spill_count", ".reqd_workgroup_size", ".kernarg_segment_align",
               ".uniform_work_group_size", ".args")
TOP_KEYS = ("amdhsa.version", "amdhsa.target", "amdhsa.kernels", "amdhsa.printf")


def hostile_value(rng: random.Random, depth: int = 0):
    """A value of the wrong type, an edge value of the right one, or something msgpack-exotic."""
    roll = rng.randrange(12)
    if roll == 0:
        return rng.choice([0, -1, 1, 2 ** 31, 2 ** 32, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, 1024, 1025, 65536,
                           rng.randint(-5000, 5000)])
    if roll == 1:
        return rng.choice(["", "12", "0x10", "-1", "gfx942", "amdgcn-amd-amdhsa--gfx942:xnack+",
                           "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-:foo+", "gfx9999", ":", "+",
                           "a" * rng.choice([1, 64, 5000]), "\x00", "\u202e\u0301", "x.kd", ".kd", "𝔤𝔣𝔵"])
    if roll == 2:
        return rng.choice([math.nan, math.inf, -math.inf, -0.0, 1.5, 1e308, 5e-324, 64.0, 256.0])
    if roll == 3:
        return rng.choice([True, False, None])
    if roll == 4:
        return rng.choice([b"", b"\xff\x00", b"gfx942", bytes(rng.getrandbits(8) for _ in range(8))])
    if roll == 5 and depth < 3:
        return [hostile_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 3, 8]))]
    if roll == 6:
        return rng.choice([[], [1, 2, 3], [0], [-1, 2 ** 64 - 1, 7], [256, 1, 1], [1024, 1024, 1024], ["1", "1", "1"]])
    if roll == 7 and depth < 3:
        return {rng.choice(KERNEL_KEYS): hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if roll == 8:
        return Pairs([(rng.choice([1, -1, None, True, 1.5, b"k", "k", 2 ** 64 - 1]), hostile_value(rng, depth + 1))
                      for _ in range(rng.randint(1, 3))])
    if roll == 9:
        return rng.choice([msgpack.ExtType(rng.randrange(128), b"\x01\x02"), msgpack.ExtType(0, b""),
                           msgpack.Timestamp(rng.randrange(1 << 34), rng.randrange(10 ** 9)),
                           msgpack.Timestamp(-1, 0)])
    if roll == 10:
        return Raw(rng.choice([b"\xa2\xff\xfe", b"\xa3\xed\xa0\x80", b"\xa2\xc0\x80", b"\xc1",
                               b"\xd4\x05\x01", b"\xc7\x00\x07", b"\xd6\xff\xff\xff\xff\xff",
                               b"\xd7\xff" + b"\xff" * 8, b"\xc7\x0c\xff" + b"\x7f" * 12]))
    return rng.choice([0, 1, 64, 32, 256, "x", None])


def _nodes(obj, path=(), out=None, depth=0):
    """(parent, key, path) of every node below ``obj``."""
    if out is None:
        out = []
    if depth > 64:
        return out
    if isinstance(obj, dict):
        for k in list(obj):
            out.append((obj, k, path + (k,)))
            _nodes(obj[k], path + (k,), out, depth + 1)
    elif isinstance(obj, list):
        for i in range(len(obj)):
            out.append((obj, i, path + (i,)))
            _nodes(obj[i], path + (i,), out, depth + 1)
    return out


def _important(nodes):
    keep = []
    for parent, key, path in nodes:
        if isinstance(key, str) and (key in TOP_KEYS or key in KERNEL_KEYS) and ".args" not in path[:-1]:
            keep.append((parent, key, path))
        elif len(path) == 2 and path[0] == "amdhsa.kernels":
            keep.append((parent, key, path))
    return keep


def _deep(rng, leaf) -> Raw:
    n = rng.choice([16, 200, 500, 999, 1000, 1024, 1025, 3000, 100000])
    if rng.random() < 0.5:
        return Raw(b"\x91" * n + mp_encode(leaf))
    return Raw(b"\x81\xa1k" * n + mp_encode(leaf))


def _huge_length(rng) -> Raw:
    return Raw(rng.choice([b"\xdd\xff\xff\xff\xff\x01", b"\xdf\xff\xff\xff\xff\xa1k\x01",
                           b"\xdb\xff\xff\xff\xf0abc", b"\xc6\x7f\xff\xff\xff\x00", b"\xdc\xff\xff",
                           b"\xde\x00\x20\xa1a\x01", b"\xc9\xff\xff\xff\xff\x05", b"\xd9\xff"]))


def mutate_msgpack_tree(rng, obj):
    """One change to a decoded metadata map; returns (new tree, description)."""
    nodes = _nodes(obj)
    important = _important(nodes)
    pick = (important if important and rng.random() < 0.7 else nodes)
    op = rng.choice(["retype", "retype", "retype", "rekey", "drop", "add", "dup", "deep", "huge", "root",
                     "ext"])
    if op == "root":
        value = rng.choice([[], [obj], 0, "amdhsa", None, b"", Pairs([(1, obj)]), _deep(rng, {})])
        return value, f"root={type(value).__name__}"
    if not pick:
        raise Inapplicable("empty metadata")
    parent, key, path = rng.choice(pick)
    where = "/".join(map(str, path))
    if op == "retype":
        value = hostile_value(rng)
        parent[key] = value
        return obj, f"{where}={_short(value)}"
    if op == "ext":
        parent[key] = msgpack.ExtType(rng.randrange(128), b"\x00" * rng.randint(0, 9))
        return obj, f"{where}=ExtType"
    if op == "deep":
        parent[key] = _deep(rng, parent[key] if not isinstance(parent[key], (dict, list)) else 0)
        return obj, f"{where}=deeply nested"
    if op == "huge":
        parent[key] = _huge_length(rng)
        return obj, f"{where}=huge length header {bytes(parent[key])[:6].hex()}"
    if op == "drop":
        del parent[key]
        return obj, f"drop {where}"
    if op == "dup":
        if isinstance(parent, list):
            parent.extend([parent[key]] * rng.choice([1, 2, 16, 64]))
            return obj, f"duplicate {where}"
        raise Inapplicable("dup needs a list")
    if op == "add":
        if not isinstance(parent, dict):
            raise Inapplicable("add needs a map")
        new_key = rng.choice(KERNEL_KEYS + TOP_KEYS)
        parent[new_key] = hostile_value(rng)
        return obj, f"{where}: add {new_key}={_short(parent[new_key])}"
    # rekey: a map key of another type (non-str, unhashable, invalid UTF-8)
    if not isinstance(parent, dict):
        raise Inapplicable("rekey needs a map")
    items = [(k, v) for k, v in parent.items()]
    index = next(i for i, (k, _) in enumerate(items) if k == key)
    new_key = rng.choice([1, -1, None, True, 1.5, b".symbol", Raw(b"\x92\x01\x02"), Raw(b"\x81\x01\x02"),
                          Raw(b"\xa2\xff\xfe"), msgpack.ExtType(1, b"k"), key.upper() if isinstance(key, str) else "k",
                          Raw(b"\xc1")])
    items[index] = (new_key, items[index][1])
    new = Pairs(items)
    if len(path) == 1:
        return new, f"rekey {where} -> {_short(new_key)}"
    grand = _locate(obj, path[:-2])
    grand[path[-2]] = new
    return obj, f"rekey {where} -> {_short(new_key)}"


def _locate(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@mutator("elf.msgpack", ("co",), 6.0)
def mut_elf_msgpack(rng, data, ctx):
    elf = ElfView(data)
    section, notes, note = _metadata_note(elf, "AMDGPU", 32)
    try:
        tree = msgpack.unpackb(note.f["desc"], raw=False, strict_map_key=False)
    except Exception:
        raise Inapplicable("metadata already unreadable") from None
    roll = rng.random()
    if roll < 0.75:
        tree, detail = mutate_msgpack_tree(rng, tree)
        desc = mp_encode(tree)
    else:
        desc = mp_encode(tree)
        how = rng.choice(["truncate", "trailing", "byte", "utf8"])
        if how == "truncate":
            cut = rng.randrange(len(desc))
            desc, detail = desc[:cut], f"truncated at {cut}"
        elif how == "trailing":
            desc, detail = desc + rng.choice([b"\x00", b"\xc1", b"\x81\xa1a\x01", b"\xdd"]), "trailing bytes"
        elif how == "byte":
            at = rng.randrange(len(desc))
            value = rng.choice([0xC1, 0xDD, 0xDF, 0xDB, 0xC6, 0xD9, 0xC7, 0xD4, 0xFF, 0x00, 0x80, 0x90])
            desc = desc[:at] + bytes([value]) + desc[at + 1:]
            detail = f"byte {at}={value:#x}"
        else:
            strings = [m.start() for m in re.finditer(rb"[\xa1-\xbf][.a-z]", desc)]
            if not strings:
                raise Inapplicable("no short strings")
            at = rng.choice(strings) + 1
            desc = desc[:at] + b"\xff" + desc[at + 1:]
            detail = f"invalid UTF-8 at {at}"
    return _install_desc(data, elf, section, notes, note, desc), detail


# CO v2 YAML metadata --------------------------------------------------------------------------

@mutator("elf.yaml", ("co",), 6.0)
def mut_elf_yaml(rng, data, ctx):
    elf = ElfView(data)
    section, notes, note = _metadata_note(elf, "AMD", 10)
    lines = note.f["desc"].rstrip(b"\0").split(b"\n")
    op = rng.choice(["escape", "flow", "block", "tab", "line", "int", "quote", "utf8", "value", "dash", "indent"])
    i = rng.randrange(len(lines))
    line = lines[i]
    indent = len(line) - len(line.lstrip(b" "))
    key = line.split(b":", 1)[0] if b":" in line else b"  Key"
    if op == "escape":
        lines[i] = key + b": " + rng.choice([b'"\\x"', b'"\\u12"', b'"\\N{nope}"', b'"\\', b'"a\\"', b'"\\U0011ffff"',
                                             b'"\\777"', b"'it''s'", b'"\\x4"'])
    elif op == "flow":
        n = rng.choice([3, 100, 999, 5000, 50000])
        lines[i] = key + b": " + b"[" * n + b"1" + b"]" * n
    elif op == "block":
        n = rng.choice([10, 63, 64, 65, 500, 3000])
        lines[i + 1:i + 1] = [b" " * (indent + 1 + d) + b"k: " if d < n - 1 else b" " * (indent + 1 + d) + b"k: 1"
                              for d in range(n)]
        lines[i] = key + b":"
    elif op == "tab":
        lines[i] = b"\t" + line
    elif op == "line":
        j = rng.randrange(len(lines))
        how = rng.choice(["drop", "dup", "swap"])
        if how == "drop":
            del lines[i]
        elif how == "dup":
            lines.insert(i, line)
        else:
            lines[i], lines[j] = lines[j], lines[i]
    elif op == "int":
        lines[i] = key + b": " + rng.choice([b"9" * 5000, b"0x" + b"f" * 40, b"-1", b"0b2", b"1_000", b"0o777",
                                             b"18446744073709551616", b"1e400", b".inf", b"-0"])
    elif op == "quote":
        lines[i] = key + b": " + rng.choice([b"'abc", b'"abc', b"'", b'"', b"''", b"'a'b'", b'"a"b"'])
    elif op == "utf8":
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\x00"]) + line[at:]
    elif op == "value":
        lines[i] = key + b": " + rng.choice([b"abc", b"true", b"~", b"null", b"[ 1, 2 ]", b"[ ]", b"[", b"]", b"{ a: 1 }",
                                             b"- x", b"&anchor", b"*alias", b"!!str 5", b"[ [ 1 ] ]", b"''"])
    elif op == "dash":
        lines[i] = b" " * indent + rng.choice([b"- - - x", b"-x", b"- ", b"-", b"- 'a': 1", b"- a: b: c", b": x",
                                               b"? complex", b"- [ 1, 2 ]"])
    else:
        delta = rng.choice([-4, -2, -1, 1, 2, 4, 40])
        lines[i] = b" " * max(0, indent + delta) + line.lstrip(b" ")
    desc = b"\n".join(lines) + b"\n\0"
    return _install_desc(data, elf, section, notes, note, desc), f"YAML {op} at line {i + 1}"


# Symbols, descriptors, string tables ----------------------------------------------------------

@mutator("elf.symbol", ELF_KINDS, 4.0)
def mut_elf_symbol(rng, data, ctx):
    elf = ElfView(data)
    table = elf.symtab()
    symbols = elf.symbols(table)
    if not symbols:
        raise Inapplicable("empty symbol table")
    favoured = [s for s in symbols if s.name.endswith((".kd", "@kd")) or (s.f["st_info"] & 0xF) in (1, 2, 10)
                or s.f["st_shndx"] == 0xFFF1]
    sym = rng.choice(favoured) if favoured and rng.random() < 0.8 else rng.choice(symbols)
    _, layout = SYM[elf.cls]
    name = rng.choice(list(layout))
    n = len(elf.sections)
    strtab_size = elf.sections[table.f["sh_link"]].f["sh_size"] if table.f["sh_link"] < n else 0
    extra = {
        "st_shndx": [0, 1, n - 1, n, n + 1, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF] + [s.index for s in elf.sections],
        "st_value": [0, 1, (1 << 64) - 1, 1 << 63, sym.f["st_value"] + 1, sym.f["st_value"] - 64]
                    + [s.f["sh_addr"] + s.f["sh_size"] - 63 for s in elf.sections],
        "st_size": [0, 1, 63, 64, 65, 256, (1 << 64) - 1],
        "st_name": [0, 1, strtab_size, strtab_size - 1, 0xFFFFFFFF] + [s.f["st_name"] for s in symbols[:64]],
        "st_info": [0x10, 0x11, 0x12, 0x1A, 0x0A, 0x01, 0x02, 0x03, 0x04, 0x06, 0xFF, sym.f["st_info"] ^ 0x10],
    }.get(name, ())
    value = interesting(rng, layout[name][1], sym.f[name], len(data), extra)
    return elf_set(data, sym.at, layout, name, value), f"symbol {sym.index} ({sym.name}) {name}={value:#x}"


KD_WORDS = {"group_segment_fixed_size": (0, 4), "private_segment_fixed_size": (4, 4), "kernarg_size": (8, 4),
            "reserved0": (12, 4), "kernel_code_entry_byte_offset": (16, 8), "reserved1": (24, 8),
            "compute_pgm_rsrc3": (44, 4), "compute_pgm_rsrc1": (48, 4), "compute_pgm_rsrc2": (52, 4),
            "kernel_code_properties": (56, 2), "kernarg_preload": (58, 2), "reserved3": (60, 4)}
AKC_WORDS = {"version_major": (0, 4), "version_minor": (4, 4), "compute_pgm_rsrc1": (48, 4),
             "compute_pgm_rsrc2": (52, 4), "code_properties": (56, 4), "workitem_private_segment_byte_size": (60, 4),
             "workgroup_group_segment_byte_size": (64, 4), "kernarg_segment_byte_size": (72, 8),
             "wavefront_sgpr_count": (84, 2), "workitem_vgpr_count": (86, 2), "wavefront_size_log2": (103, 1)}


@mutator("elf.kd", ("co",), 4.0)
def mut_elf_kd(rng, data, ctx):
    elf = ElfView(data)
    symbols = elf.symbols(elf.symtab())
    kds = [(s, KD_WORDS) for s in symbols if s.name.endswith(".kd")]
    kds += [(s, AKC_WORDS) for s in symbols if (s.f["st_info"] & 0xF) == 10]
    if not kds:
        raise Inapplicable("no kernel descriptors")
    sym, words = rng.choice(kds)
    base = elf.symbol_offset(sym)
    name = rng.choice(list(words))
    off, size = words[name]
    orig = get(data, base + off, size)
    roll = rng.random()
    if roll < 0.4:
        value = interesting(rng, size, orig)
    elif roll < 0.8:
        value = orig ^ (1 << rng.randrange(8 * size))   # one bit field flips (WGP, wave32, ...)
    else:
        lo = rng.randrange(8 * size)
        width = rng.randint(1, min(8, 8 * size - lo))
        value = orig | (((1 << width) - 1) << lo) if rng.random() < 0.5 else orig & ~(((1 << width) - 1) << lo)
    out = bytearray(data)
    put(out, base + off, size, value)
    return bytes(out), f"{sym.name} {name}={value & ((1 << 8 * size) - 1):#x}"


@mutator("elf.strtab", ELF_KINDS, 2.0)
def mut_elf_strtab(rng, data, ctx):
    elf = ElfView(data)
    tables = [s for s in elf.of_type(SHT_STRTAB) if s.f["sh_size"]]
    if not tables:
        raise Inapplicable("no string tables")
    s = rng.choice(tables)
    body = bytearray(elf.content(s))
    op = rng.choice(["unterminate", "utf8", "rename", "kd"])
    if op == "unterminate":
        body[-1] = 0x41
        detail = "last NUL removed"
    elif op == "utf8":
        at = rng.randrange(len(body))
        body[at] = rng.choice([0xFF, 0xC0, 0xED, 0x80])
        detail = f"byte {at} not UTF-8"
    elif op == "kd":
        spots = [m.start() for m in re.finditer(rb"\.kd\0", bytes(body))]
        if not spots:
            raise Inapplicable("no .kd names")
        at = rng.choice(spots)
        body[at:at + 3] = rng.choice([b".kx", b"@kd", b"\0kd", b".k\0"])
        detail = f".kd name at {at} changed"
    else:
        names = [m.start() for m in re.finditer(rb"\0[^\0]", bytes(body))]
        if len(names) < 2:
            raise Inapplicable("too few names")
        a, b = rng.sample(names, 2)
        end_a = body.index(0, a + 1)
        chunk = body[b + 1:b + 1 + (end_a - a - 1)]
        body[a + 1:a + 1 + len(chunk)] = chunk
        detail = f"name at {a + 1} overwritten"
    out = bytearray(data)
    out[s.f["sh_offset"]:s.f["sh_offset"] + len(body)] = body
    return bytes(out), f"{s.name or s.index}: {detail}"


# Amplification: many references to the same bytes ------------------------------------------
# A small file whose tables point many times at one long string, one note region or one payload
# must not cost time or memory in proportion to (references x referenced bytes). These build
# inputs of at most a few MiB, so a parser that is linear in the input stays far inside the limits.

def with_extra_sections(data: bytes, extra_headers: list[bytes]) -> bytes:
    """The ELF with ``extra_headers`` (raw section headers) added after its own, in a new table."""
    return _append_section_table(data, ElfView(data), extra_headers)


def section_header(data: bytes, **fields) -> bytes:
    """A raw section header of ``data``'s ELF class with the given fields (the rest zero)."""
    return _header(ElfView(data), **fields)


def _append_section_table(data: bytes, elf: ElfView, extra_headers: list[bytes]) -> bytes:
    """The ELF with a new section header table: the old headers, then ``extra_headers``."""
    size, layout = SHDR[elf.cls]
    table = b"".join(data[s.at:s.at + size] for s in elf.sections) + b"".join(extra_headers)
    count = len(elf.sections) + len(extra_headers)
    out = bytearray(data)
    at = align(len(out), 16)
    out += b"\0" * (at - len(out)) + table
    put(out, EHDR[elf.cls]["e_shoff"][0], EHDR[elf.cls]["e_shoff"][1], at)
    if count < 0xFF00:
        put(out, EHDR[elf.cls]["e_shnum"][0], 2, count)
    else:  # extended numbering: the count lives in section 0's sh_size
        put(out, EHDR[elf.cls]["e_shnum"][0], 2, 0)
        put(out, at + layout["sh_size"][0], layout["sh_size"][1], count)
    return bytes(out)


def _header(elf: ElfView, **fields) -> bytes:
    size, layout = SHDR[elf.cls]
    out = bytearray(size)
    for name, value in fields.items():
        put(out, layout[name][0], layout[name][1], value)
    return bytes(out)


@mutator("elf.amplify", ELF_KINDS, 1.0, final=True)
def mut_elf_amplify(rng, data, ctx):
    elf = ElfView(data)
    if not elf.sections:
        raise Inapplicable("no sections")
    size, layout = SHDR[elf.cls]
    op = rng.choice(["section-names", "symbol-names", "note-copies", "fatbin-copies"])
    count = rng.choice([300, 3000, 20000])
    length = rng.choice([4 << 10, 64 << 10, 512 << 10])
    distinct = rng.random() < 0.5   # every reference at its own offset into the string, or all at one
    if op == "section-names":
        # A new section-name table holding one long name, and many sections named by it.
        names = b"\0" + b"N" * length + b"\0"
        out = bytearray(data)
        names_at = align(len(out), 16)
        out += b"\0" * (names_at - len(out)) + names
        elf2 = ElfView(bytes(out))
        n = len(elf.sections)
        extra = [_header(elf, sh_name=1, sh_type=3, sh_offset=names_at, sh_size=len(names), sh_addralign=1)]
        count = min(count, (4 << 20) // size)
        extra += [_header(elf, sh_name=1 + (i % length if distinct else 0), sh_type=1) for i in range(count)]
        out = bytearray(_append_section_table(bytes(out), elf2, extra))
        put(out, EHDR[elf.cls]["e_shstrndx"][0], 2, n)
        return bytes(out), f"{count} sections named into one {length}-byte name ({'distinct' if distinct else 'same'} offsets)"
    if op == "symbol-names":
        table = elf.symtab()
        sym_size, sym_layout = SYM[elf.cls]
        names = b"\0" + b"S" * length + b"\0"
        count = min(count, (4 << 20) // sym_size)
        rows = bytearray(sym_size * count)
        shndx = next((s.index for s in elf.sections if s.name in (".rodata", ".text")), 1)
        for i in range(count):
            at = i * sym_size
            put(rows, at + sym_layout["st_name"][0], 4, 1 + (i % length if distinct else 0))
            put(rows, at + sym_layout["st_info"][0], 1, 0x11)   # global object
            put(rows, at + sym_layout["st_shndx"][0], 2, shndx)
        out = bytearray(data)
        names_at = align(len(out), 16)
        out += b"\0" * (names_at - len(out)) + names
        rows_at = align(len(out), 16)
        out += b"\0" * (rows_at - len(out)) + rows
        elf2 = ElfView(bytes(out))
        n = len(elf.sections)
        extra = [_header(elf, sh_type=3, sh_offset=names_at, sh_size=len(names), sh_addralign=1)]
        out = bytearray(_append_section_table(bytes(out), elf2, extra))
        new = ElfView(bytes(out))
        t = new.sections[table.index]
        put(out, t.at + layout["sh_offset"][0], layout["sh_offset"][1], rows_at)
        put(out, t.at + layout["sh_size"][0], layout["sh_size"][1], len(rows))
        put(out, t.at + layout["sh_link"][0], 4, n)
        return bytes(out), f"{count} symbols named into one {length}-byte name ({'distinct' if distinct else 'same'} offsets)"
    if op == "note-copies":
        notes = elf.of_type(SHT_NOTE)
        if not notes:
            raise Inapplicable("no notes")
        note = rng.choice(notes)
        out = data
        if rng.random() < 0.5:   # make the region big first: a large note nobody reads
            body = elf.content(note) + build_notes([(b"X\0", 1, b"D" * length)], 4)
            out = elf_replace_section(data, note.index, body)
        elf2 = ElfView(out)
        copy = out[elf2.sections[note.index].at:elf2.sections[note.index].at + size]
        count = min(count, (4 << 20) // size)
        return _append_section_table(out, elf2, [copy] * count), f"{count} copies of note section {note.index}"
    fat = [s for s in elf.sections if s.name in FATBIN_SECTIONS or s.name.startswith(BUNDLE_SECTION_PREFIX)]
    if not fat:
        raise Inapplicable("no device-code sections")
    s = rng.choice(fat)
    count = min(count, 5000)   # each copy is one reported failure once refused: linear, keep it small
    return _append_section_table(data, elf, [data[s.at:s.at + size]] * count), \
        f"{count} copies of section {s.index} ({s.name})"


# Bundles ------------------------------------------------------------------------------------

@mutator("bundle.header", ("bundle",), 3.0)
def mut_bundle_header(rng, data, ctx):
    entries, _ = bundle_entries(data)
    n = len(entries)
    if rng.random() < 0.15:
        at = rng.randrange(24)
        out = data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:]
        return out, f"magic byte {at} changed"
    return with_field(rng, data, 24, 8, n, None, [0, 1, n - 1, n + 1, 2 * n, 0xFFFF, 1 << 16, (1 << 16) + 1,
                                                  1 << 32, (1 << 64) - 1], "entry count")


@mutator("bundle.entry", ("bundle",), 4.0)
def mut_bundle_entry(rng, data, ctx):
    entries, _ = bundle_entries(data)
    if not entries:
        raise Inapplicable("no entries")
    e = rng.choice(entries)
    name = rng.choice(["offset", "size", "id_length"])
    off = {"offset": 0, "size": 8, "id_length": 16}[name]
    others = [x.f["offset"] for x in entries]
    extra = {"offset": others + [0, 1, 24, 31, 32, len(data), len(data) - e.f["size"], len(data) - e.f["size"] + 1,
                                 e.f["offset"] + 1, (1 << 64) - 1, (1 << 64) - e.f["size"]],
             "size": [0, 1, 63, 64, e.f["size"] - 1, e.f["size"] + 1, len(data) - e.f["offset"],
                      len(data) - e.f["offset"] + 1, (1 << 64) - 1],
             "id_length": [0, 1, e.f["id_length"] - 1, e.f["id_length"] + 1, 4096, 4097, len(data),
                           (1 << 64) - 1]}[name]
    return with_field(rng, data, e.at + off, 8, e.f[name], len(data), extra, f"entry {e.index} ({e.name}) {name}")


ENTRY_IDS = [b"host-x86_64-unknown-linux-gnu-", b"hipv4-amdgcn-amd-amdhsa--gfx942", b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
             b"hipv4-amdgcn-amd-amdhsa--gfx9999", b"openmp-amdgcn-amd-amdhsa--gfx90a", b"hipv4-amdgcn-amd-amdhsa-",
             b"hipv4-nvptx64-nvidia-cuda--sm_90", b"amdgcn-amd-amdhsa", b"", b"-", b"\xff\xfe", b"hipv4-amdgcn-amd-amdhsa--\xff",
             b"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-:xnack+", b"host-amdgcn-amd-amdhsa--gfx942"]


@mutator("bundle.id", ("bundle",), 2.0)
def mut_bundle_id(rng, data, ctx):
    entries, _ = bundle_entries(data)
    if not entries:
        raise Inapplicable("no entries")
    pairs = [(e.name.encode("latin-1"), data[e.f["offset"]:e.f["offset"] + e.f["size"]]) for e in entries]
    i = rng.randrange(len(pairs))
    new_id = rng.choice(ENTRY_IDS)
    pairs[i] = (new_id, pairs[i][1])
    return build_bundle(pairs), f"entry {i} id={new_id!r}"


@mutator("bundle.layout", ("bundle",), 2.0)
def mut_bundle_layout(rng, data, ctx):
    entries, _ = bundle_entries(data)
    pairs = [(e.name.encode("latin-1"), data[e.f["offset"]:e.f["offset"] + e.f["size"]]) for e in entries]
    op = rng.choice(["drop", "dup", "swap", "overlap", "empty", "many", "junk-tail", "nested"])
    if op == "drop" and pairs:
        del pairs[rng.randrange(len(pairs))]
    elif op == "dup" and pairs:
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(pairs))
    elif op == "swap" and len(pairs) > 1:
        rng.shuffle(pairs)
    elif op == "empty":
        pairs = []
    elif op == "many" and pairs:
        pairs = pairs + [rng.choice(pairs)] * rng.choice([8, 64, 200])
    elif op == "nested" and pairs:
        i = rng.randrange(len(pairs))
        pairs[i] = (b"hipv4-amdgcn-amd-amdhsa--gfx942", build_bundle(pairs))
    out = build_bundle(pairs)
    if op == "overlap" and len(entries) > 1:
        # Point one entry at another's bytes: two entries, one payload.
        a, b = rng.sample(range(len(entries)), 2)
        ea, eb = bundle_entries(out)[0][a], bundle_entries(out)[0][b]
        buf = bytearray(out)
        put(buf, ea.at, 8, eb.f["offset"])
        put(buf, ea.at + 8, 8, eb.f["size"])
        out = bytes(buf)
    elif op == "junk-tail":
        out += rng.choice([b"\x01" * 8, BUNDLE_MAGIC, b"CCOB\x03\x00", OFFLOAD_MAGIC, b"\0" * 100 + b"x"])
    return out, f"layout {op} ({len(pairs)} entries)"


@mutator("bundle.amplify", ("bundle",), 1.0, final=True)
def mut_bundle_amplify(rng, data, ctx):
    """Many entries that all point at one payload."""
    entries, _ = bundle_entries(data)
    full = [e for e in entries if e.f["size"]]
    if not full:
        raise Inapplicable("no payloads")
    e = rng.choice(full)
    payload = data[e.f["offset"]:e.f["offset"] + e.f["size"]]
    entry_id = e.name.encode("latin-1")
    count = rng.choice([100, 1000, 10000, 65536])
    count = min(count, (4 << 20) // (24 + len(entry_id)))
    header = 32 + count * (24 + len(entry_id))
    at = align(header, 8)
    sizes = [len(payload)] * count if rng.random() < 0.5 else [len(payload) - (i % 64) for i in range(count)]
    table = b"".join(struct.pack("<QQQ", at, size, len(entry_id)) + entry_id for size in sizes)
    out = BUNDLE_MAGIC + struct.pack("<Q", count) + table
    return out + b"\0" * (at - len(out)) + payload, f"{count} entries sharing one {len(payload)}-byte payload"


# Compressed bundles ----------------------------------------------------------------------------

@mutator("ccob.header", ("ccob",), 3.0)
def mut_ccob_header(rng, data, ctx):
    version = get(data, 4, 2)
    fields = CCOB_FIELDS.get(version, CCOB_FIELDS[3])
    name = rng.choice(list(fields) + ["magic"])
    if name == "magic":
        return b"CCOC" + data[4:], "magic=CCOC"
    off, size = fields[name]
    orig = get(data, off, size)
    extra = {"version": [0, 1, 2, 3, 4, 0xFFFF], "method": [0, 1, 2, 3, 0xFFFF],
             "total_size": [0, 1, 8, 19, 20, 23, 24, 31, 32, len(data), len(data) + 1, len(data) - 1],
             "uncompressed_size": [0, 1, orig - 1, orig + 1, 2 * orig, 1 << 30, (1 << 30) + 1, 1 << 31],
             "hash": [0, orig ^ 1, orig ^ (1 << 63)]}[name]
    return with_field(rng, data, off, size, orig, len(data), extra, name)


@mutator("ccob.stream", ("ccob",), 2.0)
def mut_ccob_stream(rng, data, ctx):
    version = get(data, 4, 2)
    start = CCOB_HEADER.get(version, CCOB_HEADER[3])[1]
    if len(data) <= start + 1:
        raise Inapplicable("no stream")
    op = rng.choice(["flip", "truncate", "zero", "append"])
    out = bytearray(data)
    if op == "flip":
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(start, len(out))
            out[at] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        out = out[:rng.randrange(start, len(out))]
    elif op == "zero":
        at = rng.randrange(start, len(out))
        n = min(rng.randint(1, 64), len(out) - at)
        out[at:at + n] = bytes(n)
    else:
        out += rng.choice([b"\0" * 8, b"\x01\x02\x03", bytes(data[start:start + 32])])
    return bytes(out), f"stream {op}"


@mutator("ccob.rewrap", ("ccob",), 3.0)
def mut_ccob_rewrap(rng, data, ctx):
    version, method, payload, _ = ccob_parse(data)
    version = rng.choice([version, 1, 2, 3])
    method = rng.choice([method, 0, 1])
    op = rng.choice(["plain", "declared", "total", "hash", "payload", "stream-of-other"])
    kwargs, detail = {}, ""
    if op == "declared":
        kwargs["declared"] = interesting(rng, 8 if version == 3 else 4, len(payload), None,
                                         [0, 1, len(payload) - 1, len(payload) + 1, len(payload) * 2])
        detail = f" declared={kwargs['declared']:#x}"
    elif op == "total" and version > 1:
        kwargs["total_delta"] = rng.choice([-1, 1, -8, 8, -(1 << 20), 1 << 20])
        detail = f" total{kwargs['total_delta']:+d}"
    elif op == "hash":
        kwargs["digest"] = md5_low64(payload) ^ (1 << rng.randrange(64))
    elif op == "payload":
        # A payload that is not exactly one bundle, with a correct hash: reaches the region scanner.
        payload = rng.choice([payload + b"\0" * rng.randint(1, 64) + payload, payload[:rng.randrange(len(payload))],
                              b"\0" * 16 + payload, payload + b"junk", b"", b"CCOB" + payload,
                              build_ccob(version, method, payload), ELF_MAGIC + payload[4:]])
        detail = f" payload of {len(payload)} bytes"
    elif op == "stream-of-other":
        kwargs["stream"] = compress(1 - method, payload)
        detail = " stream in the other method"
    return build_ccob(version, method, payload, **kwargs), f"v{version} {'zstd' if method else 'zlib'} {op}{detail}"


@mutator("ccob.bomb", ("ccob",), 0.3, final=True)
def mut_ccob_bomb(rng, data, ctx):
    """A payload that compresses to almost nothing: declared honestly or not, hashed or not."""
    size = rng.choice([1 << 20, 4 << 20, 16 << 20])
    version, method = rng.choice([1, 2, 3]), rng.choice([0, 1])
    payload = BUNDLE_MAGIC + struct.pack("<Q", 0) + b"\0" * (size - 32)
    if rng.random() < 0.5:
        payload += build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", b"")])
    how = rng.choice(["honest", "small", "large"])
    declared = {"honest": len(payload), "small": 4096, "large": len(payload) * 4}[how]
    return build_ccob(version, method, payload, declared=declared), f"{size >> 20} MiB of zeros, {how} size"


# OffloadBinary ------------------------------------------------------------------------------

@mutator("offload.header", ("offload",), 3.0)
def mut_offload_header(rng, data, ctx):
    name = rng.choice(list(OFFLOAD_HEADER))
    off, size = OFFLOAD_HEADER[name]
    orig = get(data, off, size)
    extra = {"version": [0, 1, 2, 0xFFFFFFFF], "size": [0, 31, 32, len(data), len(data) + 1, len(data) - 1],
             "entry_offset": [0, 8, 32, orig + 1, len(data) - 40, len(data) - 39, len(data), (1 << 64) - 1],
             "entry_size": [0, 39, 40, 41, (1 << 64) - 1]}[name]
    return with_field(rng, data, off, size, orig, len(data), extra, name)


@mutator("offload.entry", ("offload",), 3.0)
def mut_offload_entry(rng, data, ctx):
    info = offload_parse(data)
    name = rng.choice(list(OFFLOAD_ENTRY))
    off, size = OFFLOAD_ENTRY[name]
    orig = info["e"][name]
    extra = {"image_kind": [0, 1, 2, 3, 6, 7, 0xFFFF], "offload_kind": [0, 1, 2, 4, 5, 8, 15, 0xFFFF],
             "num_strings": [0, 1, orig - 1, orig + 1, 1 << 16, (1 << 16) + 1, (1 << 64) - 1, 1 << 60],
             "string_offset": [0, len(data), len(data) - 16, (1 << 64) - 1, 1 << 63],
             "image_offset": [0, len(data), len(data) - info["e"]["image_size"] + 1, (1 << 64) - 1],
             "image_size": [0, 1, len(data), (1 << 64) - 1, orig + 1]}.get(name, ())
    return with_field(rng, data, info["entry_at"] + off, size, orig, len(data), extra, f"entry {name}")


@mutator("offload.strings", ("offload",), 2.0)
def mut_offload_strings(rng, data, ctx):
    info = offload_parse(data)
    if not info["strings"]:
        raise Inapplicable("no strings")
    at, key, value = rng.choice(info["strings"])
    out = bytearray(data)
    op = rng.choice(["key", "value", "text", "unterminate"])
    if op in ("key", "value"):
        orig = key if op == "key" else value
        new = interesting(rng, 8, orig, len(data), [0, len(data) - 1, len(data), info["h"]["size"], (1 << 64) - 1])
        put(out, at + (0 if op == "key" else 8), 8, new)
        return bytes(out), f"string {op} offset={new:#x}"
    text_at = value if rng.random() < 0.7 else key
    old = offload_string(data, 0, text_at)
    if op == "text":
        new_text = rng.choice([b"x86_64-unknown-linux-gnu", b"amdgcn-amd-amdhsa", b"\xff\xfe", b"", b"gfx9999",
                               b"triple", b"arch"])[:len(old)]
        out[text_at:text_at + len(old)] = new_text + b"\0" * (len(old) - len(new_text))
        return bytes(out), f"string at {text_at:#x}={new_text!r}"
    end = text_at + len(old)
    while end < len(out) and out[end] == 0:
        out[end] = 0x41
        end += 1
    return bytes(out), f"string at {text_at:#x} unterminated"


@mutator("offload.amplify", ("offload",), 1.0, final=True)
def mut_offload_amplify(rng, data, ctx):
    """A string map of many entries pointing into one long string."""
    info = offload_parse(data)
    e = info["e"]
    image = data[e["image_offset"]:e["image_offset"] + e["image_size"]]
    count = rng.choice([100, 4096, 65536])
    length = rng.choice([4 << 10, 64 << 10, 1 << 20])
    count = min(count, (2 << 20) // 16)
    distinct = rng.random() < 0.5
    strings_at = 72
    long_at = strings_at + 16 * count
    pairs = [(long_at + (i % length if distinct else 0), long_at + ((i * 7) % length if distinct else 0))
             for i in range(count)]
    image_at = align(long_at + length + 1, 8)
    size = align(image_at + len(image), 8)
    out = (OFFLOAD_MAGIC + struct.pack("<IQQQ", 1, size, 32, 40)
           + struct.pack("<HHIQQQQ", e["image_kind"], e["offload_kind"], e["flags"], strings_at, count, image_at,
                         len(image))
           + b"".join(struct.pack("<QQ", k, v) for k, v in pairs) + b"T" * length + b"\0")
    out += b"\0" * (image_at - len(out)) + image
    out += b"\0" * (size - len(out))
    return out, f"{count} strings into one {length}-byte string ({'distinct' if distinct else 'same'} offsets)"


# PE/COFF ------------------------------------------------------------------------------------

@mutator("coff.header", ("coff",), 3.0)
def mut_coff_header(rng, data, ctx):
    at, h, sections = coff_view(data)
    if data[:2] == b"MZ" and rng.random() < 0.3:
        out = bytearray(data)
        lfanew = get(data, 0x3C, 4)
        if rng.random() < 0.5:
            value = interesting(rng, 4, lfanew, len(data), [0, 0x40, len(data) - 2, len(data), 0xFFFFFFFF])
            put(out, 0x3C, 4, value)
            return bytes(out), f"e_lfanew={value:#x}"
        out[lfanew + 2] ^= 0x01
        return bytes(out), "PE signature"
    name = rng.choice(list(COFF_HEADER))
    off, size = COFF_HEADER[name]
    extra = {"sections": [0, 1, len(sections) - 1, len(sections) + 1, 0xFFFF, 4095, 4096],
             "symbol_table": [0, len(data), len(data) - 1, 0xFFFFFFFF, h["symbol_table"] + 18],
             "symbols": [0, 1, h["symbols"] + 1, 0xFFFFFFFF, 0x0FFFFFFF],
             "optional_header_size": [0, 1, 224, 240, 0xFFFF, h["optional_header_size"] + 1],
             "machine": [0, 0x14C, 0x8664, 0xAA64, 0x1C0, 0xFFFF]}.get(name, ())
    return with_field(rng, data, at + off, size, h[name], len(data), extra, name)


@mutator("coff.section", ("coff",), 3.0)
def mut_coff_section(rng, data, ctx):
    _, h, sections = coff_view(data)
    if not sections:
        raise Inapplicable("no sections")
    fat = [s for s in sections if s.name in FATBIN_SECTIONS]
    s = rng.choice(fat) if fat and rng.random() < 0.7 else rng.choice(sections)
    out = bytearray(data)
    name = rng.choice(["name", "virtual_size", "raw_size", "raw_offset", "strtab"])
    if name == "name":
        new = rng.choice([b".hip_fat", b"/99999999", b"/0", b"/", b"/-1", b"/abc", b"/" + str(len(data)).encode(),
                          b".hip_fa\xff", b"\0" * 8])
        out[s.at:s.at + 8] = new[:8].ljust(8, b"\0")
        return bytes(out), f"section {s.index} name={new!r}"
    if name == "strtab":
        strings = h["symbol_table"] + 18 * h["symbols"]
        if not h["symbol_table"] or strings >= len(data):
            raise Inapplicable("no string table")
        for i in range(strings + 4, len(out)):
            if out[i] == 0:
                out[i] = 0x41
        return bytes(out), "long-name string table unterminated"
    off, size = COFF_SECTION[name]
    orig = s.f[name]
    value = interesting(rng, size, orig, len(data), [0, len(data), len(data) - 1, len(data) - s.f["raw_offset"] + 1,
                                                     0xFFFFFFFF, 0x7FFFFFFF])
    put(out, s.at + off, size, value)
    return bytes(out), f"section {s.index} ({s.name}) {name}={value:#x}"


@mutator("coff.amplify", ("coff",), 1.0, final=True)
def mut_coff_amplify(rng, data, ctx):
    """Many sections over the same device-code bytes, or many long section names."""
    at, h, sections = coff_view(data)
    fat = [s for s in sections if s.name in FATBIN_SECTIONS]
    if not fat:
        raise Inapplicable("no device-code section")
    s = rng.choice(fat)
    count = rng.choice([100, 1000, 4000])
    table = at + 20 + h["optional_header_size"]
    rows = data[table:table + 40 * h["sections"]]
    row = bytearray(data[s.at:s.at + 40])
    if rng.random() < 0.5:  # long names: "/<offset>" into a string of 4 KiB that ends far away
        strings = h["symbol_table"] + 18 * h["symbols"] if h["symbol_table"] else len(data)
        long_at = len(data)
        row[:8] = f"/{long_at - strings}".encode()[:8].ljust(8, b"\0")
        tail = b"L" * 8192 + b"\0"
        how = "long names"
    else:
        tail, how = b"", "same bytes"
    out = bytearray(data) + tail
    new_table = align(len(out), 8)
    out += b"\0" * (new_table - len(out)) + rows + bytes(row) * count
    if data[:2] != b"MZ" and at == 0:
        # A bare COFF object keeps its section table right after the header: move the header too.
        raise Inapplicable("bare COFF object: section table cannot move")
    put(out, at + 16, 2, new_table - at - 20)          # optional header grows to reach the new table
    put(out, at + 2, 2, min(0xFFFF, h["sections"] + count))
    return bytes(out), f"{count} more sections over {s.name} ({how})"


# Fat-binary regions -----------------------------------------------------------------------

@mutator("region.layout", ("region",), 3.0)
def mut_region_layout(rng, data, ctx):
    pieces = split_region(data)
    if not pieces:
        raise Inapplicable("no containers")
    start, end = rng.choice(pieces)
    piece = data[start:end]
    op = rng.choice(["pad", "junk", "dup", "drop", "cut", "tail", "bitcode", "elf", "repeat"])
    if op == "pad":
        out = data[:start] + b"\0" * rng.choice([1, 7, 8, 4096]) + data[start:]
    elif op == "junk":
        out = data[:end] + rng.choice([b"\x01", b"\xff" * 8, b"__CLANG", b"CCOB", b"\x10\xff"]) + data[end:]
    elif op == "dup":
        out = data[:end] + piece + data[end:]
    elif op == "drop":
        out = data[:start] + data[end:]
    elif op == "cut":
        out = data[:rng.randrange(start, end)]
    elif op == "tail":
        out = data + piece[:rng.randrange(1, len(piece) + 1)]
    elif op == "bitcode":
        out = data + BITCODE_MAGICS[0] + b"\0" * 60
    elif op == "elf":
        out = data + ELF_MAGIC + b"\x02\x01\x01" + b"\0" * 60
    else:
        small = build_bundle([])
        out = data + small * rng.choice([100, 1000, 10000])
    return out, f"region {op} (container at {start:#x})"


@mutator("region.amplify", ("region",), 0.5, final=True)
def mut_region_amplify(rng, data, ctx):
    """Many containers back to back (each tiny), or one container repeated many times."""
    pieces = split_region(data)
    if not pieces:
        raise Inapplicable("no containers")
    start, end = rng.choice(pieces)
    piece = data[start:end]
    if rng.random() < 0.5:
        # Containers that cost nothing each: the count alone must not hurt.
        small = build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", b"")])
        count = rng.choice([1000, 30000, 70000])
        return data + small * count, f"{count} empty bundles appended"
    # Real containers repeated: linear work (and a CCOB expands about tenfold), so keep it small.
    count = max(1, min(rng.choice([10, 100, 1000]), (128 << 10) // max(len(piece), 1)))
    return data + piece * count, f"container at {start:#x} repeated {count} times"


# Generic byte mutators ------------------------------------------------------------------------

def _position(rng, data: bytes) -> int:
    if not data:
        raise Inapplicable("empty")
    if rng.random() < 0.3:
        return rng.randrange(min(len(data), 256))
    return rng.randrange(len(data))


@mutator("bytes.flip", (ANY,), 1.0)
def mut_bytes_flip(rng, data, ctx):
    out = bytearray(data)
    spots = []
    for _ in range(rng.randint(1, 8)):
        at = _position(rng, out)
        out[at] ^= 1 << rng.randrange(8)
        spots.append(at)
    return bytes(out), "bits at " + ",".join(f"{a:#x}" for a in spots)


@mutator("bytes.set", (ANY,), 1.0)
def mut_bytes_set(rng, data, ctx):
    out = bytearray(data)
    spots = []
    for _ in range(rng.randint(1, 4)):
        at = _position(rng, out)
        out[at] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, 0x20, 0x40])
        spots.append(at)
    return bytes(out), "bytes at " + ",".join(f"{a:#x}" for a in spots)


@mutator("bytes.word", (ANY,), 1.0)
def mut_bytes_word(rng, data, ctx):
    size = rng.choice([2, 4, 8])
    if len(data) < size:
        raise Inapplicable("too short")
    at = rng.randrange(len(data) - size + 1)
    if rng.random() < 0.6:
        at -= at % size
    return with_field(rng, data, at, size, get(data, at, size), len(data), label=f"u{8 * size} at {at:#x}")


@mutator("bytes.insert", (ANY,), 1.0)
def mut_bytes_insert(rng, data, ctx):
    at = rng.randrange(len(data) + 1)
    n = rng.choice([1, 2, 4, 8, 16, 64, 512])
    chunk = bytes(n) if rng.random() < 0.5 else bytes(rng.getrandbits(8) for _ in range(n))
    return data[:at] + chunk + data[at:], f"{n} bytes inserted at {at:#x}"


@mutator("bytes.delete", (ANY,), 1.0)
def mut_bytes_delete(rng, data, ctx):
    at = _position(rng, data)
    n = rng.choice([1, 2, 4, 8, 64, 256, 4096])
    return data[:at] + data[at + n:], f"{n} bytes deleted at {at:#x}"


@mutator("bytes.truncate", (ANY,), 1.0)
def mut_bytes_truncate(rng, data, ctx):
    if not data:
        raise Inapplicable("empty")
    cut = rng.randrange(min(len(data), 512)) if rng.random() < 0.3 else rng.randrange(len(data))
    return data[:cut], f"truncated to {cut:#x}"


@mutator("bytes.splice", (ANY,), 0.5)
def mut_bytes_splice(rng, data, ctx):
    donor = rng.choice(ctx.donors)
    n = rng.choice([8, 64, 512, 4096])
    src = rng.randrange(max(1, len(donor) - n))
    at = rng.randrange(len(data) + 1)
    return data[:at] + donor[src:src + n] + data[at + n:], f"{n} bytes of another fixture at {at:#x}"


@mutator("bytes.repeat", (ANY,), 0.5)
def mut_bytes_repeat(rng, data, ctx):
    at = _position(rng, data)
    n = rng.choice([4, 16, 64, 1024])
    chunk = data[at:at + n]
    return data[:at] + chunk * rng.choice([2, 4, 16]) + data[at:], f"{n} bytes at {at:#x} repeated"


# -- inputs ---------------------------------------------------------------------------------

@dataclass
class Fixture:
    name: str
    data: bytes
    layers: list[Layer]


@dataclass
class Case:
    """One generated input and how it was made."""
    seed: str
    index: int
    fixture: str
    layer_path: str
    layer_kind: str
    mutations: list[tuple[str, str]]
    mode: str
    data: bytes
    layer_before: bytes
    layer_after: bytes
    wrap: Callable[[bytes], bytes] = field(repr=False)
    steps: list = field(default_factory=list, repr=False)   # (mutator, random state) per mutation

    @property
    def mutators(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.mutations)


_FIXTURES: list[Fixture] | None = None
# How often each kind of layer is picked, relative to the others in the same fixture: the code
# objects inside a container are many, the container headers few but just as worth breaking.
LAYER_WEIGHTS = {"co": 1.0, "region": 1.5, "bundle": 2.0, "ccob": 3.0, "offload": 2.0, "host-elf": 1.5,
                 "coff": 3.0, "bitcode": 0.2, "raw": 0.2}


def fixtures() -> list[Fixture]:
    """Every fixture the manifest lists, with its layers (computed once per process)."""
    global _FIXTURES
    if _FIXTURES is None:
        manifest = json.loads((FIXTURES / "manifest.json").read_text())
        out = []
        for entry in manifest["fixtures"]:
            path = FIXTURES / entry["file"]
            if path.is_file():
                data = path.read_bytes()
                out.append(Fixture(entry["file"], data, discover(data)))
        _FIXTURES = out
    return _FIXTURES


def generate(seed, index: int) -> Case:
    """Input ``index`` of campaign ``seed``: a function of the two alone."""
    rng = random.Random(f"amdocc-fuzz:{seed}:{index}")
    return mutate(rng, seed=str(seed), index=index)


def mutate(rng: random.Random, *, seed: str = "-", index: int = -1, fixture: str | None = None,
           only: str | None = None) -> Case:
    """Pick a fixture and a layer, mutate the layer one to four times, put it back."""
    all_fixtures = fixtures()
    usable = (lambda layer: True) if only is None else \
        (lambda layer: ANY in MUTATORS[only].kinds or layer.kind in MUTATORS[only].kinds)
    if fixture is not None:
        fx = next(f for f in all_fixtures if f.name == fixture)
    else:
        pool = [f for f in all_fixtures if any(usable(layer) for layer in f.layers)]
        fx = rng.choices(pool, [1.5 if f.layers[0].kind != "co" else 1.0 for f in pool])[0]
    for _attempt in range(1 if only is None else 24):
        layers = [layer for layer in fx.layers if usable(layer)] or fx.layers
        weights = [LAYER_WEIGHTS.get(layer.kind, 1.0) for layer in layers]
        layer = rng.choices(layers, weights)[0]
        case = _mutate_layer(rng, fx, layer, seed, index, only)
        if case.mutations or only is None or fixture is not None:
            return case
        fx = rng.choices(pool, weights=[1.0] * len(pool))[0]   # that mutator found nothing here
    return case


def _mutate_layer(rng, fx: Fixture, layer: Layer, seed: str, index: int, only: str | None) -> Case:
    ctx = _context()
    count = 1 if rng.random() < 0.6 else rng.randint(2, 4)
    data, applied, steps = layer.data, [], []
    for _ in range(count):
        candidates = [m for m in MUTATORS.values() if (ANY in m.kinds or layer.kind in m.kinds)
                      and (only is None or m.name == only)]
        for _attempt in range(8):
            m = rng.choices(candidates, [c.weight for c in candidates])[0]
            state = rng.getstate()
            try:
                new, detail = m.fn(rng, data, ctx)
            except Exception:  # noqa: BLE001 - a mutator that cannot apply here; try another
                continue
            data = new
            applied.append((m.name, detail))
            steps.append((m.name, state))
            break
        else:
            m = None
            if only is not None:
                continue
            state = rng.getstate()
            new, detail = mut_bytes_flip(rng, data, ctx) if data else (b"\0", "empty layer")
            data = new
            applied.append(("bytes.flip", detail))
            steps.append(("bytes.flip", state))
        if m is not None and m.final:
            break
    out = layer.wrap(data)
    mode = rng.choices(list(MODES), list(MODES.values()))[0]
    return Case(seed, index, fx.name, layer.path, layer.kind, applied, mode, out, layer.data, data, layer.wrap,
                steps)


_CONTEXT: Context | None = None


def _context() -> Context:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = Context([f.data for f in fixtures()])
    return _CONTEXT


def replay_steps(layer_data: bytes, steps) -> tuple[bytes, list[tuple[str, str]]] | None:
    """Apply recorded mutation steps (mutator, random state) to ``layer_data`` again: each
    mutator makes the same choices as when the input was generated. None if one cannot apply."""
    data, applied = layer_data, []
    for name, state in steps:
        r = random.Random()
        r.setstate(state)
        try:
            data, detail = MUTATORS[name].fn(r, data, _context())
        except Exception:  # noqa: BLE001 - without the earlier steps this one may not apply
            return None
        applied.append((name, detail))
    return data, applied


# -- the contract ---------------------------------------------------------------------------

class ContractError(AssertionError):
    """amdocc returned, but broke the contract (an error without a file or offset, a failure that
    is not an AmdoccError). ``key`` names the kind of breach and the error, without the numbers."""

    def __init__(self, breach: str, error):
        text = str(error)
        super().__init__(f"{breach}: {text}")
        message = getattr(error, "message", text)
        self.key = f"{breach}: " + re.sub(r"0x[0-9a-fA-F]+|\d+", "N", message)[:70]


def _check_error(exc) -> None:
    if not isinstance(exc, AmdoccError):
        raise ContractError(f"Failed item holds a {type(exc).__name__}, not an AmdoccError", exc)
    text = str(exc)
    if exc.origin is None or not text.startswith(exc.origin.path):
        raise ContractError("AmdoccError without a file name", exc)
    if exc.offset is None:
        raise ContractError("AmdoccError without an offset", exc)


# How an input reaches amdocc: as a buffer (most), as a file read through mmap (the path large
# files take), or as a buffer loaded strictly (the first failure raises).
MODES = {"bytes": 6, "file": 1, "strict": 1}
_SCRATCH: str | None = None


def _scratch_file(data: bytes) -> str:
    global _SCRATCH
    if _SCRATCH is None or not os.path.isdir(os.path.dirname(_SCRATCH)):
        _SCRATCH = os.path.join(tempfile.mkdtemp(prefix="amdocc-fuzz-"), "input.bin")
    with open(_SCRATCH, "wb") as fh:
        fh.write(data)
    return _SCRATCH


def exercise(data: bytes, mode: str = "bytes") -> str:
    """Run the entry points on ``data``; anything but AmdoccError from load() propagates.

    Returns "rejected" (load raised an AmdoccError), "partial" (some parts failed), "ok" (code
    objects, nothing failed) or "empty" (nothing failed, nothing found).
    """
    from amdocc.containers import Limits

    try:
        if mode == "file":
            loaded = amdocc.load(_scratch_file(data), strict=False, limits=Limits(mmap_threshold=0))
        else:
            loaded = amdocc.load(data, strict=(mode == "strict"))
    except AmdoccError as exc:
        _check_error(exc)
        return "rejected"
    for co in loaded:
        report.dumps(report.code_object_record(co))
        render_code_object(co, "all")
    for item in loaded.skipped:
        report.skipped_record(item)
    for item in loaded.failed:
        _check_error(item.error)
        report.failed_record(item)
    if loaded.failed:
        return "partial"
    return "ok" if len(loaded) else "empty"


def signature(exc: BaseException) -> str:
    """Exception type and the innermost amdocc (else innermost) frame: one per distinct bug."""
    if isinstance(exc, ContractError):
        return f"ContractError ({exc.key})"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}amdocc{os.sep}" in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return type(exc).__name__
    where = os.path.relpath(frame.filename, ROOT) if frame.filename.startswith(str(ROOT)) else frame.filename
    return f"{type(exc).__name__} at {where}:{frame.lineno} in {frame.name}"


def run_one(data: bytes, mode: str = "bytes") -> tuple[str, float, float, dict | None]:
    """(outcome, CPU seconds, wall seconds, failure) for one input, in this process.

    The time limit applies to CPU time: it is what the input costs, whatever else the machine
    is doing (wall time is reported beside it; the watchdog uses wall time for hangs).
    """
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        outcome, failure = exercise(data, mode), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - any escape is what we are looking for
        outcome = "crash"
        failure = {"kind": "crash", "signature": signature(exc), "exception": type(exc).__name__,
                   "message": _clip(str(exc), 400), "traceback": _clip(traceback.format_exc(), 6000)}
    return outcome, time.process_time() - cpu_start, time.perf_counter() - start, failure


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit // 2] + " ... " + text[-limit // 2:]


# -- campaign ------------------------------------------------------------------------------

def _maxrss_mib(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0   # KiB on Linux


def _current_rss_mib() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576
    except (OSError, ValueError, IndexError):
        return _maxrss_mib()


def _reset_peak_rss() -> bool:
    """Start a new peak-RSS measurement for this process (Linux: clear_refs 5 resets VmHWM,
    and with it ru_maxrss), so each input's peak is its own. False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _worker(conn, slot, seed, as_limit_mib, stack_file, time_limit):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _limit_address_space(as_limit_mib)
    stack = open(stack_file, "w")
    faulthandler.register(signal.SIGUSR1, file=stack, all_threads=False)
    baseline = _current_rss_mib()
    bloated = False
    while not bloated:
        task = conn.recv()
        if task is None:
            break
        for index in task:
            case = generate(seed, index)
            per_input = _reset_peak_rss()
            slot[0] = index
            slot[1] = time.monotonic()
            outcome, elapsed, wall, failure = run_one(case.data, case.mode)
            if elapsed > time_limit and failure is None:
                # A slow input is timed twice and the faster run counts (caches, allocator, GC).
                slot[1] = time.monotonic()
                again = run_one(case.data, case.mode)
                elapsed, wall = min(elapsed, again[1]), min(wall, again[2])
            slot[1] = 0.0
            conn.send(("result", index, case.fixture, case.layer_kind, case.mutators, outcome, elapsed,
                       wall, _maxrss_mib(), per_input, len(case.data), failure))
            del case
            # Memory the allocator keeps after a big input would be charged to the next ones:
            # hand the rest of the chunk back and let a fresh worker take over.
            if _current_rss_mib() > baseline + 256:
                bloated = True
                break
        conn.send(("done", bloated))
    conn.close()


@dataclass
class Worker:
    proc: mp.Process
    conn: object
    slot: object
    stack_file: str
    chunk: list = field(default_factory=list)
    done: set = field(default_factory=set)
    retire: bool = False


@dataclass
class Stats:
    seed: str
    inputs: int = 0
    outcomes: Counter = field(default_factory=Counter)
    mutators: Counter = field(default_factory=Counter)
    layer_kinds: Counter = field(default_factory=Counter)
    fixtures: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)
    slowest: tuple = (0.0, -1)                       # CPU seconds, input index
    slowest_wall: float = 0.0
    slow_list: list = field(default_factory=list)    # the five slowest: (seconds, index, mutators)
    largest_input: int = 0
    peak_rss_mib: float = 0.0
    peak_rss_index: int = -1
    wall: float = 0.0
    jobs: int = 1
    time_limit: float = TIME_LIMIT
    rss_limit_mib: float = RSS_LIMIT_MIB

    def summary(self) -> dict:
        groups = Counter(f["signature"] for f in self.failures)
        return {"seed": self.seed, "inputs": self.inputs, "jobs": self.jobs, "wall_seconds": round(self.wall, 2),
                "outcomes": dict(self.outcomes), "mutators": dict(sorted(self.mutators.items())),
                "layer_kinds": dict(sorted(self.layer_kinds.items())), "failures": len(self.failures),
                "failure_kinds": dict(Counter(f["kind"] for f in self.failures)),
                "failure_signatures": dict(groups),
                "slowest_seconds": round(self.slowest[0], 4), "slowest_index": self.slowest[1],
                "slowest_five": [[round(t, 4), i, list(m)] for t, i, m in self.slow_list],
                "slowest_wall_seconds": round(self.slowest_wall, 4),
                "largest_input_bytes": self.largest_input,
                "peak_rss_mib": round(self.peak_rss_mib, 1), "peak_rss_index": self.peak_rss_index,
                "time_limit_seconds": self.time_limit, "rss_limit_mib": self.rss_limit_mib}


def run_campaign(seed, inputs: int, jobs: int = 2, *, time_limit: float = TIME_LIMIT,
                 hang_timeout: float = HANG_TIMEOUT, rss_limit_mib: float = RSS_LIMIT_MIB,
                 as_limit_mib: int = AS_LIMIT_MIB, chunk: int = 64, progress=None) -> Stats:
    """Run inputs 0..inputs-1 of ``seed`` on ``jobs`` watched worker processes."""
    seed = str(seed)
    fixtures()                       # parse the fixtures once, before forking
    _warm_up()
    ctx = mp.get_context("fork")
    stats = Stats(seed, jobs=jobs, time_limit=time_limit, rss_limit_mib=rss_limit_mib)
    stats.peak_rss_mib = _maxrss_mib()
    pending = deque(list(range(i, min(i + chunk, inputs))) for i in range(0, inputs, chunk))
    workers: list[Worker] = []
    tmp = tempfile.mkdtemp(prefix="amdocc-fuzz-")
    started = time.monotonic()
    spawned = 0
    next_report = 2000

    def spawn():
        nonlocal spawned
        parent, child = ctx.Pipe()
        slot = ctx.Array("d", [-1.0, 0.0], lock=False)
        spawned += 1
        stack_file = os.path.join(tmp, f"stack-{spawned}.txt")
        proc = ctx.Process(target=_worker, args=(child, slot, seed, as_limit_mib, stack_file, time_limit),
                           daemon=True)
        proc.start()
        child.close()
        w = Worker(proc, parent, slot, stack_file)
        workers.append(w)
        feed(w)

    def feed(w):
        if pending and not w.retire:
            w.chunk, w.done = pending.popleft(), set()
            w.conn.send(w.chunk)
        else:
            w.chunk = []
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.proc.join(5)
            workers.remove(w)
            if pending and len(workers) < jobs:
                spawn()

    def lost(w, kind, detail, stack=""):
        """A worker died or hung: record the input it was on, requeue the rest of its chunk."""
        index = int(w.slot[0]) if w.slot[1] else None
        if index is not None:
            case = generate(seed, index)
            stats.failures.append({"index": index, "kind": kind, "signature": f"{kind}: {detail}",
                                   "exception": kind, "message": detail, "traceback": stack,
                                   "elapsed": time.monotonic() - w.slot[1] if kind == "hang" else None,
                                   "fixture": case.fixture, "layer": case.layer_path,
                                   "mutations": case.mutations})
            stats.inputs += 1
            w.done.add(index)
        rest = [i for i in w.chunk if i not in w.done]
        if rest:
            pending.appendleft(rest)
        workers.remove(w)
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(5)
        if pending:
            spawn()

    for _ in range(max(1, min(jobs, len(pending)))):
        spawn()
    while workers:
        ready = wait_connections([w.conn for w in workers], timeout=0.2)
        for conn in ready:
            w = next((x for x in workers if x.conn is conn), None)
            if w is None:
                continue
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                w.proc.join(1)
                lost(w, "died", f"worker exited with status {w.proc.exitcode}")
                continue
            if msg[0] == "done":
                rest = [i for i in w.chunk if i not in w.done]
                if rest:
                    pending.appendleft(rest)
                w.retire = w.retire or msg[1]
                feed(w)
                continue
            _, index, fixture, layer_kind, mutators, outcome, elapsed, wall, rss, per_input, size, failure = msg
            stats.largest_input = max(stats.largest_input, size)
            stats.slowest_wall = max(stats.slowest_wall, wall)
            w.done.add(index)
            stats.inputs += 1
            stats.outcomes[outcome] += 1
            stats.fixtures[fixture] += 1
            stats.layer_kinds[layer_kind] += 1
            for name in set(mutators):
                stats.mutators[name] += 1
            if elapsed > stats.slowest[0]:
                stats.slowest = (elapsed, index)
            if len(stats.slow_list) < 5 or elapsed > stats.slow_list[-1][0]:
                stats.slow_list = sorted(stats.slow_list + [(elapsed, index, mutators)], reverse=True)[:5]
            if rss > stats.peak_rss_mib:
                stats.peak_rss_mib, stats.peak_rss_index = rss, index
            base = {"index": index, "fixture": fixture, "elapsed": elapsed}
            if failure is not None:
                stats.failures.append({**base, **failure})
            if elapsed > time_limit:
                stats.failures.append({**base, "kind": "slow", "signature": "slow: over the time limit",
                                       "exception": "slow",
                                       "message": f"{elapsed:.3f} s of CPU ({wall:.3f} s wall) > {time_limit} s",
                                       "traceback": ""})
            if rss > rss_limit_mib and not w.retire:
                stats.failures.append({**base, "kind": "rss", "signature": "rss: peak RSS over the bound",
                                       "exception": "rss", "message": f"peak RSS {rss:.0f} MiB > {rss_limit_mib} MiB",
                                       "traceback": ""})
                # Without a per-input reset the peak stays high: finish the chunk, then a fresh worker.
                w.retire = not per_input
        now = time.monotonic()
        for w in list(workers):
            if w.slot[1] and now - w.slot[1] > hang_timeout:
                os.kill(w.proc.pid, signal.SIGUSR1)   # faulthandler writes the stuck stack
                time.sleep(0.3)
                stack = Path(w.stack_file).read_text(errors="replace") if os.path.exists(w.stack_file) else ""
                where = _innermost_amdocc(stack)
                lost(w, "hang", f"no answer within {hang_timeout:g} s{' at ' + where if where else ''}", stack)
            elif not w.proc.is_alive() and not w.conn.poll():
                lost(w, "died", f"worker exited with status {w.proc.exitcode}")
        if progress and stats.inputs >= next_report:
            next_report += 2000
            progress(stats)
    stats.wall = time.monotonic() - started
    overall = max(_maxrss_mib(), _maxrss_mib(resource.RUSAGE_CHILDREN))   # the parent; workers' lifetimes
    if overall > stats.peak_rss_mib:
        stats.peak_rss_mib, stats.peak_rss_index = overall, -1
    for f in stats.failures:
        f.setdefault("mutations", None)
    return stats


def _innermost_amdocc(stack: str) -> str:
    hits = re.findall(r'File "([^"]*amdocc[^"]*)", line (\d+) in (\w+)', stack)
    if not hits:
        return ""
    path, line, fn = hits[0]   # faulthandler prints the innermost frame first
    return f"{os.path.relpath(path, ROOT)}:{line} in {fn}"


def _warm_up() -> None:
    """Load every fixture once so lazy imports and tables do not count against input 0."""
    for fx in fixtures():
        try:
            exercise(fx.data)
        except Exception:  # noqa: BLE001 - the campaign reports real failures itself
            pass


# -- minimization --------------------------------------------------------------------------

def _limit_address_space(as_limit_mib: int) -> None:
    if as_limit_mib:
        limit = as_limit_mib << 20
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
        except (ValueError, OSError):
            pass


def _check_in_child(data: bytes, timeout: float, mode: str = "bytes",
                    as_limit_mib: int = AS_LIMIT_MIB) -> tuple[str | None, float, float]:
    """The failure signature of ``data`` (None if it passes), its time and its peak RSS (MiB),
    in a forked child limited like a campaign worker."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def body():
        _limit_address_space(as_limit_mib)
        _reset_peak_rss()
        outcome, elapsed, wall, failure = run_one(data, mode)
        child.send((failure["signature"] if failure else None, elapsed, _maxrss_mib()))

    proc = ctx.Process(target=body, daemon=True)
    proc.start()
    child.close()
    if parent.poll(timeout):
        try:
            result = parent.recv()
        except EOFError:
            result = ("died", timeout, 0.0)
    else:
        result = ("hang", timeout, 0.0)
    if proc.is_alive():
        proc.kill()
    proc.join(5)
    parent.close()
    return result


class Minimizer:
    """Shrinks one failing input while the failure keeps its signature (time- and step-bounded)."""

    def __init__(self, failure: dict, time_limit: float, hang_timeout: float, budget_seconds: float = 60.0,
                 mode: str = "bytes", rss_limit_mib: float = RSS_LIMIT_MIB, as_limit_mib: int = AS_LIMIT_MIB):
        self.mode = mode
        self.rss_limit_mib = rss_limit_mib
        self.as_limit_mib = as_limit_mib
        self.kind = failure["kind"]
        self.signature = failure["signature"]
        self.time_limit = time_limit
        self.timeout = hang_timeout if self.kind in ("hang", "slow") else max(5.0, time_limit * 5)
        self.deadline = time.monotonic() + budget_seconds
        self.checks = 0

    def fails(self, data: bytes) -> bool:
        if time.monotonic() > self.deadline:
            return False
        self.checks += 1
        sig, elapsed, rss = _check_in_child(data, self.timeout, self.mode, self.as_limit_mib)
        if self.kind == "slow":
            return elapsed > self.time_limit or sig == "hang"
        if self.kind == "hang":
            return sig == "hang"
        if self.kind == "rss":
            return rss > self.rss_limit_mib or (sig or "").startswith("MemoryError")
        return sig == self.signature

    def revert(self, before: bytes, after: bytes, wrap) -> bytes:
        """Undo as much of before→after as keeps the failure (ddmin over the changed hunks)."""
        hunks = _hunks(before, after)
        keep = hunks
        granularity = 2
        while len(keep) >= 1 and time.monotonic() < self.deadline:
            size = max(1, len(keep) // granularity)
            shrunk = False
            for start in range(0, len(keep), size):
                trial = keep[:start] + keep[start + size:]
                if trial != keep and self.fails(wrap(_apply(before, trial))):
                    keep, shrunk = trial, True
                    granularity = max(granularity - 1, 2)
                    break
            if not shrunk:
                if size == 1:
                    break
                granularity = min(len(keep), granularity * 2)
        return _apply(before, keep)

    def truncate(self, data: bytes) -> bytes:
        step = len(data) // 2
        while step >= 16 and time.monotonic() < self.deadline:
            if len(data) - step > 0 and self.fails(data[:len(data) - step]):
                data = data[:len(data) - step]
            else:
                step //= 2
        return data


def _hunks(before: bytes, after: bytes) -> list[tuple[int, int, bytes]]:
    """Edits (start, end in ``before``, replacement) that turn ``before`` into ``after``."""
    if len(before) == len(after):
        out, i = [], 0
        while i < len(before):
            if before[i] != after[i]:
                j = i
                while j < len(before) and before[j] != after[j] and j - i < 8:
                    j += 1
                out.append((i, j, after[i:j]))
                i = j
            else:
                i += 1
        return out
    # Lengths differ: the common prefix and suffix stay, the middle is one hunk. Then, if the two
    # middles are not too big, a real diff splits it (difflib is quadratic, so only when small).
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    old, new = before[prefix:len(before) - suffix], after[prefix:len(after) - suffix]
    if len(old) * len(new) > 4_000_000:
        return [(prefix, len(before) - suffix, new)]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(prefix + i1, prefix + i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _apply(before: bytes, hunks) -> bytes:
    out, pos = [], 0
    for start, end, new in sorted(hunks, key=lambda h: h[0]):
        out.append(before[pos:start])
        out.append(new)
        pos = end
    out.append(before[pos:])
    return b"".join(out)


def minimize(failure: dict, seed: str, time_limit: float, hang_timeout: float,
             budget_seconds: float = 60.0, rss_limit_mib: float = RSS_LIMIT_MIB,
             as_limit_mib: int = AS_LIMIT_MIB) -> dict:
    """A smaller input with the same failure, and a description of what in it matters."""
    case = generate(seed, failure["index"])
    m = Minimizer(failure, time_limit, hang_timeout, budget_seconds, case.mode, rss_limit_mib, as_limit_mib)
    data, context = case.data, f"{case.fixture} [{case.layer_path}]"
    if not m.fails(data):
        return {"data": data, "context": context, "changes": [], "reproduced": False, "checks": m.checks,
                "mutations": case.mutations}
    # Fewer mutations first: each one alone, then all but one, replayed with their own dice.
    after, mutations = case.layer_after, case.mutations
    steps = case.steps
    while len(steps) > 1 and time.monotonic() < m.deadline:
        for subset in [[s] for s in steps] + [steps[:k] + steps[k + 1:] for k in range(len(steps))]:
            replayed = replay_steps(case.layer_before, subset)
            if replayed is not None and m.fails(case.wrap(replayed[0])):
                (after, mutations), steps = replayed, subset
                break
        else:
            break
    layer = m.revert(case.layer_before, after, case.wrap)
    data = case.wrap(layer)
    wrap, before = case.wrap, case.layer_before
    # Without the containers around it, does the mutated layer alone still fail the same way?
    if case.layer_path != "file" and m.fails(layer):
        data, wrap, context = layer, _identity, f"{case.layer_path} of {case.fixture}, taken out alone"
    changes = [(start, before[start:end], new) for start, end, new in _hunks(before, layer)][:32]
    if wrap is _identity and not changes:
        data = m.truncate(data)
    return {"data": data, "context": context, "changes": changes, "reproduced": True, "checks": m.checks,
            "mutations": mutations}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:80]


def write_reproducers(stats: Stats, out_dir: Path, minimize_seconds: float, hang_timeout: float,
                      total_seconds: float = 300.0, as_limit_mib: int = AS_LIMIT_MIB) -> list[Path]:
    """One reproducer per distinct failure: minimized within ``minimize_seconds`` each, and
    written as generated once ``total_seconds`` of minimizing are spent."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stop = time.monotonic() + total_seconds
    groups: dict[str, list[dict]] = {}
    for f in stats.failures:
        groups.setdefault(f["signature"], []).append(f)
    written = []
    for n, (sig, items) in enumerate(sorted(groups.items(), key=lambda kv: kv[1][0]["index"]), 1):
        first = min(items, key=lambda f: f["index"])
        case = generate(stats.seed, first["index"])
        budget = min(minimize_seconds, max(0.0, stop - time.monotonic()))
        result = minimize(first, stats.seed, stats.time_limit, hang_timeout, budget, stats.rss_limit_mib,
                          as_limit_mib)
        stem = out_dir / f"{n:02d}-{_slug(sig)}"
        stem.with_suffix(".bin").write_bytes(result["data"])
        lines = [f"signature:  {sig}", f"inputs:     {len(items)} (first: index {first['index']})",
                 f"seed:       {stats.seed}", f"replay:     python tools/fuzz.py --replay {stats.seed}:{first['index']}",
                 f"check:      python tools/fuzz.py --check {stem.with_suffix('.bin')} --mode {case.mode}",
                 f"fixture:    {case.fixture}", f"layer:      {case.layer_path} ({case.layer_kind})",
                 f"mode:       {case.mode}",
                 "mutations:  " + "; ".join(f"{name}: {detail}" for name, detail in case.mutations),
                 f"minimized:  {len(result['data'])} bytes ({result['context']}), "
                 f"{'reproduced' if result['reproduced'] else 'NOT reproduced in a fresh process'}, "
                 f"{result['checks']} checks"]
        if result["mutations"] != case.mutations:
            lines.append("needed:     " + "; ".join(f"{name}: {detail}" for name, detail in result["mutations"]))
        if result["changes"]:
            lines.append("bytes that differ from the fixture's layer (offset: old -> new, first 24 bytes):")
            for start, old, new in result["changes"]:
                sizes = f" ({len(old)} -> {len(new)} bytes)" if len(old) != len(new) or len(old) > 24 else ""
                lines.append(f"  {start:#08x}: {old[:24].hex() or '-'} -> {new[:24].hex() or '-'}{sizes}")
        lines += ["", f"{first['exception']}: {first['message']}", "", first.get("traceback") or ""]
        stem.with_suffix(".txt").write_text("\n".join(lines))
        written.append(stem.with_suffix(".bin"))
    return written


# -- command line ---------------------------------------------------------------------------

def _print_summary(stats: Stats, out=sys.stdout) -> None:
    s = stats.summary()
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"seed {s['seed']}: {s['inputs']} inputs in {s['wall_seconds']:.1f} s on {s['jobs']} jobs "
      f"({s['inputs'] / max(s['wall_seconds'], 1e-9):.0f}/s)")
    p("outcomes:    " + ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items())))
    p("layers:      " + ", ".join(f"{k} {v}" for k, v in s["layer_kinds"].items()))
    p("mutators:")
    names = sorted(MUTATORS)
    for i in range(0, len(names), 4):
        p("  " + "  ".join(f"{n:<16} {s['mutators'].get(n, 0):>6}" for n in names[i:i + 4]))
    p(f"slowest:     {s['slowest_seconds'] * 1000:.1f} ms CPU (input {s['slowest_index']}; limit "
      f"{s['time_limit_seconds'] * 1000:.0f} ms; slowest wall clock {s['slowest_wall_seconds'] * 1000:.0f} ms); next: " +
      ", ".join(f"{t * 1000:.0f} ms ({i}: {'+'.join(m)})" for t, i, m in s["slowest_five"][1:]))
    who = f"input {s['peak_rss_index']}" if s["peak_rss_index"] >= 0 else "a worker's lifetime, input generation included"
    p(f"peak RSS:    {s['peak_rss_mib']:.1f} MiB ({who}; bound {s['rss_limit_mib']:.0f} MiB "
      f"per process; largest input {s['largest_input_bytes'] / 1048576:.2f} MiB)")
    p(f"failures:    {s['failures']}" + (" — " + ", ".join(f"{k} {v}" for k, v in s["failure_kinds"].items())
                                         if s["failures"] else ""))
    for sig, count in s["failure_signatures"].items():
        p(f"  {count:>5}  {sig}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=20000, help="inputs to try (default 20000)")
    ap.add_argument("--seed", default=None, help="campaign seed (default: random, printed)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-failures"),
                    help="where minimized reproducers go (default ./fuzz-failures, only if something fails)")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per input (default 1)")
    ap.add_argument("--hang-timeout", type=float, default=HANG_TIMEOUT,
                    help="seconds before the watchdog kills a worker (default 10)")
    ap.add_argument("--rss-limit-mib", type=float, default=RSS_LIMIT_MIB, help="peak RSS bound (default 1024)")
    ap.add_argument("--as-limit-mib", type=int, default=AS_LIMIT_MIB,
                    help="address-space cap per worker, 0 for none (default 4096)")
    ap.add_argument("--minimize-seconds", type=float, default=60.0, help="time to shrink each distinct failure")
    ap.add_argument("--summary-json", type=Path, help="also write the counts as JSON here")
    ap.add_argument("--replay", metavar="SEED:INDEX", help="regenerate one input, describe it and run it")
    ap.add_argument("--write", type=Path, help="with --replay: write the input's bytes here")
    ap.add_argument("--check", type=Path, metavar="FILE", help="run one file through the contract and report")
    ap.add_argument("--mode", choices=list(MODES), default="bytes", help="with --check: how to load the file")
    args = ap.parse_args(argv)

    if args.check:
        outcome, elapsed, wall, failure = run_one(args.check.read_bytes(), args.mode)
        print(f"{args.check}: {outcome} in {elapsed * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall")
        if failure:
            print(failure["traceback"])
        return 1 if failure or elapsed > args.time_limit else 0
    if args.replay:
        seed, _, index = args.replay.rpartition(":")
        case = generate(seed, int(index))
        print(f"input {seed}:{index}: {case.fixture} [{case.layer_path}] ({len(case.data)} bytes)")
        for name, detail in case.mutations:
            print(f"  {name}: {detail}")
        if args.write:
            args.write.write_bytes(case.data)
        print(f"  mode: {case.mode}")
        outcome, elapsed, wall, failure = run_one(case.data, case.mode)
        print(f"{outcome} in {elapsed * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall")
        if failure:
            print(failure["traceback"])
        return 1 if failure or elapsed > args.time_limit else 0

    seed = args.seed if args.seed is not None else str(random.SystemRandom().randrange(1 << 32))
    print(f"amdocc fuzz: seed {seed}, {args.inputs} inputs, {args.jobs} jobs, {len(fixtures())} fixtures, "
          f"{len(MUTATORS)} mutators; limits {args.time_limit:g} s/input, {args.rss_limit_mib:g} MiB peak RSS",
          flush=True)

    def progress(stats):
        print(f"  ... {stats.inputs} inputs, {len(stats.failures)} failures, "
              f"slowest {stats.slowest[0] * 1000:.0f} ms, peak RSS {stats.peak_rss_mib:.0f} MiB", flush=True)

    stats = run_campaign(seed, args.inputs, args.jobs, time_limit=args.time_limit, hang_timeout=args.hang_timeout,
                         rss_limit_mib=args.rss_limit_mib, as_limit_mib=args.as_limit_mib, progress=progress)
    _print_summary(stats)
    if args.summary_json:
        args.summary_json.write_text(json.dumps(stats.summary(), indent=1))
    if stats.failures:
        written = write_reproducers(stats, args.out, args.minimize_seconds, args.hang_timeout,
                                    as_limit_mib=args.as_limit_mib)
        print(f"reproducers: {len(written)} in {args.out}/")
        for path in written:
            print(f"  {path}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
