"""Cut one large host library into pieces that separate processes can read independently.

A 500 MB library is one file but hundreds of containers (one offload bundle or CCOB per
translation unit, back to back in ``.hip_fatbin``). Each container's extent is known from its
header alone, so the file is cut at container boundaries and each piece is scanned on its own,
giving exactly the items a serial scan gives, in the same order. Anything unusual (no plain
fat-binary section, a kpack reference, overlapping sections, a container whose extent only its
decompressor knows) leaves the file whole: the serial scan then reports it as usual.
"""
from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..elf import EM_AMDGPU, SHT_LLVM_OFFLOADING, SHT_NOBITS, ElfFile, is_elf
from ..errors import AmdoccError, Origin
from .bundle import BUNDLE_MAGIC, CCOB_MAGIC, ccob_extent, parse_bundle
from .kpack import REF_SECTIONS
from .model import DEFAULT_LIMITS, Limits, overlapping
from .offload_binary import OFFLOAD_MAGIC, parse_offload_binary

FATBIN_REGIONS = (".hip_fatbin", ".llvm.offloading")
_NON_ZERO = re.compile(rb"[^\x00]")
PIECE_BYTES = 8 << 20        # containers are grouped into pieces of about this size


@dataclass(frozen=True, slots=True)
class Piece:
    """Containers ``[start, end)`` of one section of ``path``, read as the serial scan would."""

    path: str
    section: str
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def plan(path: str, limits: Limits = DEFAULT_LIMITS) -> list[Piece] | None:
    """The pieces of a host ELF's fat-binary sections, or None to read the file whole."""
    try:
        with open(path, "rb") as fh:
            if not is_elf(fh.read(64)):
                return None
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        return _plan(buf, path, limits)
    except AmdoccError:
        return None          # the serial scan reports what is wrong
    finally:
        buf.close()


def _plan(buf, path, limits):
    origin = Origin(path)
    if int.from_bytes(buf[18:20], "little") == EM_AMDGPU:
        return None
    elf = ElfFile(buf, origin)
    names = {s.name for s in elf.sections}
    regions = [s for s in elf.sections if s.type != SHT_NOBITS and s.size
               and (s.name in FATBIN_REGIONS or s.type == SHT_LLVM_OFFLOADING)]
    if not regions or names & set(REF_SECTIONS) or any(n.startswith("__CLANG_OFFLOAD_BUNDLE__") for n in names):
        return None
    spans = [elf.section_range(s) for s in regions]
    if overlapping(spans):
        return None
    pieces: list[Piece] = []
    for s, (lo, hi) in zip(regions, spans):
        pieces += _group(path, f"section {s.name}", _containers(buf, lo, hi, origin.within(f"section {s.name}"), limits))
    return pieces


def _containers(buf, lo: int, hi: int, origin: Origin, limits: Limits) -> Iterator[tuple[int, int]]:
    """(start, end) of each container in ``buf[lo:hi]``; the last runs to ``hi`` when an extent
    cannot be known from a header."""
    pos = lo
    while pos < hi:
        found = _NON_ZERO.search(buf, pos, hi)     # zero padding between containers
        if found is None:
            return
        pos = found.start()
        head = bytes(buf[pos:pos + 24])
        extent = None
        if head.startswith(BUNDLE_MAGIC):
            extent = parse_bundle(buf, pos, hi, origin, limits)[1]
        elif head.startswith(CCOB_MAGIC):
            extent = ccob_extent(buf, pos, hi, origin)
        elif head.startswith(OFFLOAD_MAGIC):
            extent = parse_offload_binary(buf, pos, hi, origin, limits).extent
        if extent is None or extent <= pos:
            yield pos, hi
            return
        yield pos, extent
        pos = extent


def _group(path, section, spans) -> list[Piece]:
    out: list[Piece] = []
    for lo, hi in spans:
        if out and out[-1].size < PIECE_BYTES:
            out[-1] = Piece(path, section, out[-1].start, hi)
        else:
            out.append(Piece(path, section, lo, hi))
    return out


def scan_piece(piece: Piece, limits: Limits = DEFAULT_LIMITS):
    """The items of one piece, exactly as the serial scan of the whole file yields them there."""
    from .scan import scan_region

    with open(piece.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        yield from scan_region(buf, piece.start, piece.end, Origin(piece.path).within(piece.section), limits)
    finally:
        buf.close()


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
