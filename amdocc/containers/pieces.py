"""Cut one large input into parts that separate processes can read independently.

A 500 MB library is one file but hundreds of containers (one offload bundle or CCOB per
translation unit, back to back in ``.hip_fatbin``). Each container's extent is known from its
header alone, so the file is cut at container boundaries and each piece is scanned on its own.
A wheel is cut by members: small members go to workers in groups, and a large library member
is written once to a temporary file and cut like a library on disk. Every part gives exactly
the items a serial scan gives there, with the same origins, in the same order: both read the
regions and containers of regions.py's one walk. Anything unusual (no plain fat-binary section,
a kpack reference, a raw image, an RDC section, overlapping sections or members, a container
that does not parse, more containers than ``limits.max_entries``, an archive over its expansion
budget) leaves the input whole, and the serial scan then reports it as usual; a container whose
extent only its decompressor knows ends the last piece of its region.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from ..binary import Buffer
from ..elf import EM_AMDGPU, ElfFile, is_elf
from ..errors import AmdoccError, LimitError, Origin
from .magic import is_zip
from .model import DEFAULT_LIMITS, Item, Limits

# The readers are imported when a large file is cut, not with the rest: every run loads this
# module (the process pool plans its tasks with it), most never cut a file (scan.py says why).

PIECE_BYTES = 8 << 20  # containers are grouped into pieces of about this much work
SPILL_BYTES = 32 << 20  # a wheel member this large is written out and cut like a library


@dataclass(frozen=True, slots=True)
class Piece:
    """Containers ``[start, end)`` of one section of the file at ``path``, named ``origin``
    as the serial scan names that section; ``size`` is their bytes once decompressed."""

    path: str
    origin: Origin
    start: int
    end: int
    size: int


@dataclass(frozen=True, slots=True)
class Members:
    """Some members of the archive at ``path``, read as the serial scan reads them."""

    path: str
    names: tuple[str, ...]
    size: int


Part = Piece | Members


def plan(path: str, limits: Limits = DEFAULT_LIMITS, spill_dir: str | None = None) -> list[Part] | None:
    """The parts of a host library (or, given a directory to spill members to, of a wheel),
    in order, or None to read the file whole."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if is_elf(head):
                return _plan_library(path, Origin(path), limits)
            if is_zip(head) and spill_dir is not None:
                return _plan_archive(fh, path, limits, spill_dir)
    except (OSError, ValueError, AmdoccError):
        pass  # the serial scan reports what is wrong
    return None


def _plan_library(path: str, origin: Origin, limits: Limits) -> list[Part] | None:
    from .regions import FATBIN, Region, host_elf_regions, host_sections

    with open(path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if int.from_bytes(buf[18:20], "little") == EM_AMDGPU:
            return None
        elf = ElfFile(buf, origin)
        found = host_sections(elf)
        if not found.regions or found.refs:
            return None  # nothing to cut, or a kpack reference: the serial scan says which
        regions: list[Region] = []
        for region in host_elf_regions(buf, elf, origin, limits):
            if not isinstance(region, Region) or region.kind != FATBIN:
                return None  # a raw image, an RDC section, an overlap: the serial scan reads them first
            regions.append(region)
        pieces: list[Part] = []
        for region in regions:
            spans = _containers(buf, region.start, region.end, region.origin, limits)
            pieces += _group(path, region.origin, spans)
        return pieces
    finally:
        buf.close()


Span = tuple[int, int, int]


def _containers(buf: Buffer, lo: int, hi: int, origin: Origin, limits: Limits) -> list[Span]:
    """(start, end, bytes once decompressed) of each container in ``buf[lo:hi]``, by the walk
    the serial scan makes there; the last runs to ``hi`` when an extent cannot be known from a
    header. A region the scan would fail in is not cut (AmdoccError)."""
    from .bundle import ccob_extent, parse_bundle
    from .offload_binary import parse_offload_binary
    from .regions import BUNDLE, CCOB, containers, next_container

    failed: list[AmdoccError | None] = [None]

    def measure(kind: str, pos: int) -> Generator[Span, None, int]:
        extent, expanded = None, 0
        try:
            if kind == BUNDLE:
                extent = parse_bundle(buf, pos, hi, origin, limits)[1]
            elif kind == CCOB:
                extent, expanded = ccob_extent(buf, pos, hi, origin)
            else:
                extent = parse_offload_binary(buf, pos, hi, origin, limits).extent
        except AmdoccError as exc:
            failed[0] = exc
            raise
        if extent is None or extent <= pos:
            yield pos, hi, max(expanded, hi - pos)
            return hi
        yield pos, extent, max(expanded, extent - pos)
        return extent

    spans: list[Span] = []
    for span in containers(buf, lo, hi, origin, limits, measure):
        if isinstance(span, tuple):
            spans.append(span)
            continue
        if isinstance(span.error, LimitError) or span.error is failed[0]:
            raise span.error  # more containers than one scan reads, or a bad header: read whole
        # Data the scan does not recognise: the last piece runs from it to the region's end,
        # and its scan reports it there as the serial scan does.
        pos = lo if not spans else spans[-1][1]
        start = next_container(buf, pos, hi)
        if start is not None:
            spans.append((start, hi, hi - start))
    return spans


def _group(path: str, origin: Origin, spans: Iterable[tuple[int, int, int]]) -> list[Piece]:
    out: list[Piece] = []
    for lo, hi, size in spans:
        if out and out[-1].size < PIECE_BYTES:
            out[-1] = Piece(path, origin, out[-1].start, hi, out[-1].size + size)
        else:
            out.append(Piece(path, origin, lo, hi, size))
    return out


def _plan_archive(fh: IO[bytes], path: str, limits: Limits, spill_dir: str) -> list[Part] | None:
    import zipfile

    from .archive import Archive

    archive = Archive(fh, Origin(path), limits)
    if archive.overlapping or sum(i.file_size for i in archive.infos) > archive.budget:
        return None
    parts: list[Part] = []
    group: list[zipfile.ZipInfo] = []

    def close_group() -> None:
        if group:
            parts.append(Members(path, tuple(i.filename for i in group), sum(i.file_size for i in group)))
            group.clear()

    for info in archive.infos:
        head = archive.peek(info)
        if head is not None and not _interesting(head):
            continue  # nothing the scan would say about it
        pieces = None
        if (
            head is not None
            and is_elf(head)
            and info.compress_type == zipfile.ZIP_DEFLATED
            and info.file_size >= SPILL_BYTES
        ):
            spilled = archive.spill(info, spill_dir)
            pieces = _plan_library(spilled, archive.origin.decompressed(info.filename), limits)
            if not pieces or len(pieces) < 2:
                os.unlink(spilled)
                pieces = None
        if pieces:
            close_group()
            parts += pieces
            continue
        group.append(info)
        if sum(i.file_size for i in group) >= PIECE_BYTES:
            close_group()
    close_group()
    return parts if len(parts) > 1 else None


def _interesting(head: bytes) -> bool:
    from .scan import recognised

    return recognised(head)


def scan_part(part: Part, limits: Limits = DEFAULT_LIMITS) -> Iterator[Item]:
    """The items of one part, exactly as the serial scan of the whole input yields them there."""
    from .scan import scan_members, scan_region

    if isinstance(part, Members):
        yield from scan_members(part.path, part.names, limits)
        return
    with open(part.path, "rb") as fh:
        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        yield from scan_region(buf, part.start, part.end, part.origin, limits)
    finally:
        buf.close()


def part_path(part: Part) -> str:
    """The input the part belongs to, as the user named it."""
    return part.origin.path if isinstance(part, Piece) else part.path
