"""TheRock's kpack packaging: a host binary whose device code moved to a ``.kpack`` archive.

Format (read from ROCm's rocm-kpack sources, python/rocm_kpack/kpack.py, compression.py and
elf|coff/kpack_transform.py; written here from that description):

- The host binary keeps its fat-binary section (``.hip_fatbin``; ``.hip_fat`` in a PE) only as
  a zeroed stub or NOBITS, and gains a reference section: ``.rocm_kpack_ref`` in ELF,
  ``.kpackrf`` in PE (8-character section names). It holds a MessagePack map
  ``{"kpack_search_paths": [path, ...], "kernel_name": key}``: archives relative to the binary
  (``@GFXARCH@`` stands for the processor) and the key of the binary in their tables.
- A ``.kpack`` archive: a 16-byte header (``KPAK``, u32 version 1, u64 offset of the table of
  contents), blobs from offset 64, and a MessagePack TOC: ``format_version``, ``group_name``,
  ``gfx_arch_family``, ``gfx_arches``, ``compression_scheme`` and
  ``toc: {binary key: {processor: {"type": "hsaco", "ordinal": n, "original_size": bytes}}}``.
  Scheme ``none``: ``blobs[ordinal] = {"offset": absolute, "size": bytes}``. Scheme
  ``zstd-per-kernel``: at ``zstd_offset`` (``zstd_size`` bytes) a u32 frame count, then per
  ordinal a u32 size and one zstd frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..binary import Buffer, Layout, need_bytes
from ..errors import FormatError, LimitError, Origin
from ..msgpack_value import unpack
from .bundle import decompress_bounded
from .magic import KPACK_MAGIC as KPACK_MAGIC
from .model import Limits

KPACK_VERSION = 1
REF_SECTIONS = (".rocm_kpack_ref", ".kpackrf")  # ELF, PE
HEADER = Layout("KpackHeader", [("magic", "4s"), ("version", "I"), ("toc_offset", "Q")])
U32 = Layout("U32", [("value", "I")])
SCHEMES = ("none", "zstd-per-kernel")


@dataclass(frozen=True, slots=True)
class KpackRef:
    """What a host binary's reference section says: where its device code went."""

    kernel_name: str
    search_paths: tuple[str, ...]

    @property
    def reason(self) -> str:
        return (
            f"device code moved to a kpack archive (TheRock packaging): {self.kernel_name!r} in "
            f"{', '.join(self.search_paths)}"
        )


def parse_ref(data: bytes, origin: Origin) -> KpackRef:
    value = _unpack(data, origin, "kpack reference")
    name, paths = value.get("kernel_name"), value.get("kpack_search_paths")
    if (
        not isinstance(name, str)
        or not isinstance(paths, list)
        or not paths
        or not all(isinstance(p, str) for p in paths)
    ):
        raise FormatError(
            "kpack reference lacks a kernel_name string or a kpack_search_paths list of strings", origin, 0
        )
    return KpackRef(name, tuple(paths))


@dataclass(frozen=True, slots=True)
class KpackEntry:
    """One code object of an archive: (buffer, start, end) of its bytes, and its labels."""

    binary: str
    processor: str
    buf: Buffer
    start: int
    end: int

    @property
    def label(self) -> str:
        return f"kpack {self.binary} [{self.processor}]"


def kpack_entries(
    buf: Buffer, start: int, end: int, origin: Origin, limits: Limits
) -> Iterator[KpackEntry | FormatError]:
    """Every entry of the archive at ``buf[start:end]``; an entry that cannot be read comes back
    as its error (the rest are still read). Offsets in the archive count from ``start``."""
    h = HEADER.read(buf, start, origin, "kpack header")
    if h.version != KPACK_VERSION:
        raise FormatError(f"kpack archive version {h.version} is not {KPACK_VERSION}", origin, start + 4)
    if not HEADER.size <= h.toc_offset < end - start:
        raise FormatError(
            f"kpack table of contents offset {h.toc_offset:#x} lies outside the archive ({end - start:#x} bytes)",
            origin,
            start + 8,
        )
    toc = _unpack(bytes(buf[start + h.toc_offset : end]), origin.at(start + h.toc_offset), "kpack table of contents")
    scheme = toc.get("compression_scheme", "none")
    table = toc.get("toc")
    if scheme not in SCHEMES:
        raise FormatError(
            f"kpack compression scheme {scheme!r} is not one of {', '.join(SCHEMES)}", origin, start + h.toc_offset
        )
    if not isinstance(table, dict):
        raise FormatError("kpack table of contents has no 'toc' map", origin, start + h.toc_offset)
    spans = _blob_spans(toc, scheme, buf, start, end, origin, limits)
    budget = limits.max_decompressed
    for binary, arches in table.items():
        for processor, entry in arches.items() if isinstance(arches, dict) else ():
            try:
                ordinal = entry.get("ordinal") if isinstance(entry, dict) else None
                if not isinstance(ordinal, int) or not 0 <= ordinal < len(spans):
                    raise FormatError(
                        f"kpack entry {binary!r} [{processor}] has ordinal {ordinal!r}, not "
                        f"one of the archive's {len(spans)} blobs",
                        origin,
                        start + h.toc_offset,
                    )
                lo, hi = spans[ordinal]
                if scheme == "none":
                    yield KpackEntry(str(binary), str(processor), buf, lo, hi)
                    continue
                size = entry.get("original_size")
                declared = size if isinstance(size, int) and size >= 0 else budget
                if declared > budget:
                    raise LimitError(
                        f"kpack entry {binary!r} [{processor}] declares {declared} bytes, over "
                        f"what is left of the limit ({budget}, AMDOCC_MAX_DECOMPRESSED)",
                        origin,
                        lo,
                    )
                data = decompress_bounded(buf, lo, hi, "zstd", declared, origin, lo, exact=size == declared)
                budget -= len(data)
                yield KpackEntry(str(binary), str(processor), data, 0, len(data))
            except FormatError as exc:
                yield exc


def _blob_spans(
    toc: dict[Any, Any], scheme: str, buf: Buffer, start: int, end: int, origin: Origin, limits: Limits
) -> list[tuple[int, int]]:
    """(start, end) in ``buf`` of each ordinal's stored bytes, every one checked to lie inside."""
    spans: list[tuple[int, int]] = []
    if scheme == "none":
        blobs = toc.get("blobs")
        if not isinstance(blobs, list) or len(blobs) > limits.max_entries:
            raise FormatError(
                f"kpack scheme 'none' without a blobs list (or more blobs than {limits.max_entries})", origin, start
            )
        for i, b in enumerate(blobs):
            off, size = (b.get("offset"), b.get("size")) if isinstance(b, dict) else (None, None)
            if not isinstance(off, int) or not isinstance(size, int) or off < 0 or size < 0 or start + off + size > end:
                raise FormatError(f"kpack blob {i} ({size!r} bytes at {off!r}) lies outside the archive", origin, start)
            spans.append((start + off, start + off + size))
        return spans
    off, size = toc.get("zstd_offset"), toc.get("zstd_size")
    if not isinstance(off, int) or not isinstance(size, int) or off < 0 or size < 4 or start + off + size > end:
        raise FormatError(f"kpack zstd blob ({size!r} bytes at {off!r}) lies outside the archive", origin, start)
    pos, stop = start + off, start + off + size
    count = U32.read(buf, pos, origin, "kpack zstd frame count").value
    if count > limits.max_entries:
        raise LimitError(f"kpack zstd blob declares {count} frames (limit {limits.max_entries})", origin, pos)
    pos += 4
    for i in range(count):
        frame = U32.read(buf, pos, origin, f"kpack zstd frame {i} size").value
        pos += 4
        if pos + frame > stop:
            raise FormatError(f"kpack zstd frame {i} ({frame} bytes) runs past its blob", origin, pos - 4)
        need_bytes(buf, pos, frame, origin, f"kpack zstd frame {i}")
        spans.append((pos, pos + frame))
        pos += frame
    return spans


def _unpack(data: bytes, origin: Origin, what: str) -> dict[Any, Any]:
    value, _ = unpack(data, origin, 0, what)  # bytes after the map: a stub section may be padded
    if not isinstance(value, dict):
        raise FormatError(f"the {what} holds a {type(value).__name__}, not a map", origin, 0)
    return value
