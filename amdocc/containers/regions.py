"""Where device code sits in a host binary, and where each container of a region ends.

One walk of the regions, consumed by the reader (scan.py) and by the work splitter
(pieces.py), so the rules live here once:

- which host sections hold device code: ``.hip_fatbin`` / ``.hip_fat`` / ``.llvm.offloading``
  by name, ``SHT_LLVM_OFFLOADING`` by type, ``__CLANG_OFFLOAD_BUNDLE__<entry id>`` by prefix
  (an RDC object's one entry per section); a kpack reference section instead of them; the
  data sections searched for raw AMDGPU ELF images; sections that overlap (read once);
- inside a fat-binary region: containers back to back, zero padding skipped between them,
  told apart by magic, at most ``limits.max_entries`` of them, and the resident pages of a
  mapped file handed back every ``RELEASE_EVERY`` bytes.

A :class:`Region` says what a span is; what to do with its bytes is the consumer's.
"""

from __future__ import annotations

import contextlib
import mmap
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TypeVar

from ..binary import Buffer, overlaps
from ..elf import EM_AMDGPU, SHT_LLVM_OFFLOADING, SHT_NOBITS, SHT_PROGBITS, ElfFile, Section
from ..errors import AmdoccError, FormatError, LimitError, Origin
from .kpack import REF_SECTIONS
from .magic import BUNDLE_MAGIC, CCOB_MAGIC, OFFLOAD_MAGIC
from .magic import CONTAINER_MAGICS as CONTAINER_MAGICS
from .model import NOT_A_WHOLE_IMAGE, Failed, Item, Limits, Skipped
from .pe import coff_sections

# Host sections that carry device code, by name, type and prefix.
FATBIN_SECTIONS = (".hip_fatbin", ".hip_fat", ".llvm.offloading")
BUNDLE_SECTION_PREFIX = "__CLANG_OFFLOAD_BUNDLE__"
# A mapped file's pages count toward the process's resident size once read. Past this many
# bytes of a region, pages already scanned are handed back, so a multi-GB file keeps RSS flat.
RELEASE_EVERY = 64 << 20
_NON_ZERO = re.compile(rb"[^\x00]")

# Region kinds. In a host binary: containers back to back, one bundle entry (an RDC section),
# a kpack reference, a raw AMDGPU ELF image. In a fat-binary region: one container by magic.
FATBIN, BUNDLE_ENTRY, KPACK_REF, RAW_IMAGE = "fatbin", "bundle-entry", "kpack-ref", "raw-image"
BUNDLE, CCOB, OFFLOAD = "bundle", "ccob", "offload"
# A container's kind by its first four bytes, then its whole magic (all are at least 4 long).
_KINDS = {
    magic[:4]: (magic, kind) for magic, kind in ((BUNDLE_MAGIC, BUNDLE), (CCOB_MAGIC, CCOB), (OFFLOAD_MAGIC, OFFLOAD))
}


@dataclass(frozen=True, slots=True)
class Region:
    """``buf[start:end]`` is a ``kind`` span, named ``origin``; ``section`` is the host
    section's name ("" inside a region). A container's ``end`` is the end of the region that
    holds it: where the container itself ends, its reader finds out."""

    kind: str
    start: int
    end: int
    origin: Origin
    section: str = ""


# -- host binaries --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostSections:
    """A host ELF's sections that hold device code (``regions``) and its kpack references."""

    regions: list[Section]
    refs: list[Section]


def host_sections(elf: ElfFile) -> HostSections:
    """The section selection alone, read from the section table (no section's bytes)."""
    regions = [
        s
        for s in elf.sections
        if s.type != SHT_NOBITS
        and s.size
        and (s.name in FATBIN_SECTIONS or s.type == SHT_LLVM_OFFLOADING or s.name.startswith(BUNDLE_SECTION_PREFIX))
    ]
    refs = [s for s in elf.sections if s.name in REF_SECTIONS and s.type != SHT_NOBITS]
    return HostSections(regions, refs)


def host_elf_regions(buf: Buffer, elf: ElfFile, origin: Origin, limits: Limits) -> Iterator[Region | Item]:
    """The regions of the host ELF in ``buf`` (which starts at offset 0), in reading order: its
    kpack reference, its raw images, then its device-code sections; what there is to say about
    the layout itself (overlaps, misfit images, no device code) comes as Failed/Skipped items."""
    found = host_sections(elf)
    regions = found.regions
    if found.refs:
        ref = found.refs[0]
        lo, hi = elf.section_range(ref)
        yield Region(KPACK_REF, lo, hi, origin.within(f"section {ref.name}"), ref.name)
        regions = [s for s in regions if s.name not in FATBIN_SECTIONS]  # a zeroed stub
        if not regions:
            return
    images = list(raw_images(buf, elf, origin, limits))
    if not regions and not images:
        yield Skipped(origin, f"host ELF (machine {elf.header.e_machine}) without device code")
        return
    for image in images:
        if isinstance(image, tuple):
            section, lo, hi = image
            yield Region(RAW_IMAGE, lo, hi, origin.within(f"section {section.name} @{origin.mark(lo)}"), section.name)
        else:
            yield image
    if not regions:
        return
    spans = [elf.section_range(s) for s in regions]
    # Device code is read once: a table listing one fat binary thousands of times costs one read.
    dropped = overlaps(spans)
    for i, s in enumerate(regions):
        lo, hi = spans[i]
        here = origin.within(f"section {s.name}")
        if i in dropped:
            other = regions[dropped[i]]
            yield Failed(
                here.at(lo),
                FormatError(
                    f"section {s.index} ({s.name}, {lo:#x}-{hi:#x}) overlaps section {other.index} "
                    f"({other.name}) and is skipped: device code is read once",
                    origin,
                    lo,
                ),
            )
        elif s.name.startswith(BUNDLE_SECTION_PREFIX):
            # RDC objects name one bundle entry per section; the section holds the entry itself.
            yield Region(BUNDLE_ENTRY, lo, hi, here, s.name)
        else:
            yield Region(FATBIN, lo, hi, here, s.name)


def bundle_entry_id(region: Region) -> str:
    """The entry id an RDC section's name carries."""
    return region.section[len(BUNDLE_SECTION_PREFIX) :]


def pe_regions(buf: Buffer, origin: Origin) -> Iterator[Region | Item]:
    """The regions of the PE image or COFF object in ``buf`` (starting at offset 0): its kpack
    reference (then nothing else: ``.hip_fat`` is the packager's zeroed stub), or its
    ``.hip_fat`` sections."""
    machine, sections = coff_sections(buf, origin)
    regions = [s for s in sections if s.name in FATBIN_SECTIONS and s.end > s.start]
    refs = [s for s in sections if s.name in REF_SECTIONS]
    if refs:
        yield Region(KPACK_REF, refs[0].start, refs[0].end, origin.within(f"section {refs[0].name}"), refs[0].name)
        return
    if not regions:
        yield Skipped(origin, f"PE/COFF ({machine}) without a .hip_fat section")
        return
    dropped = overlaps([(s.start, s.end) for s in regions])
    for i, s in enumerate(regions):
        here = origin.within(f"section {s.name}")
        if i in dropped:
            other = regions[dropped[i]]
            yield Failed(
                here.at(s.start),
                FormatError(
                    f"section {s.name} ({s.start:#x}-{s.end:#x}) overlaps section {other.name} "
                    f"({other.start:#x}-{other.end:#x}) and is skipped: device code is read once",
                    origin,
                    s.start,
                ),
            )
            continue
        yield Region(FATBIN, s.start, s.end, here, s.name)


# -- containers back to back ------------------------------------------------------------------

T = TypeVar("T")
# Reads the container of a kind (BUNDLE, CCOB, OFFLOAD) that starts at an offset: yields what it
# finds there and returns where the container ends.
Reader = Callable[[str, int], Generator[T, None, int]]


def containers(
    buf: Buffer, start: int, end: int, origin: Origin, limits: Limits, read: Reader[T]
) -> Iterator[T | Failed]:
    """Walk the containers of ``buf[start:end]`` (a ``.hip_fatbin`` section, a CCOB's payload):
    each one's kind and offset go to ``read``, whose items pass through and whose return value
    is where the next search for a container starts. Unrecognised data, more than
    ``limits.max_entries`` containers, or an error from ``read`` end the walk with one Failed
    item, because the region's layout is lost after a bad container."""
    pos, count = start, 0
    released = start
    while pos < end:
        if pos - released >= RELEASE_EVERY:
            released = release_pages(buf, released, pos)
        found = next_container(buf, pos, end)
        if found is None:
            return
        pos = found
        count += 1
        if count > limits.max_entries:
            yield Failed(
                origin.at(pos), LimitError(f"more than {limits.max_entries} containers in one region", origin, pos)
            )
            return
        try:
            magic, kind = _KINDS.get(bytes(buf[pos : pos + 4]), (b"", ""))
            if not kind or buf[pos : pos + len(magic)] != magic:
                raise FormatError(
                    f"unrecognised data in a fat-binary region (starts with "
                    f"{bytes(buf[pos : pos + 8]).hex(' ')}); the rest of the region is not read",
                    origin,
                    pos,
                )
            pos = yield from read(kind, pos)
        except AmdoccError as exc:
            yield Failed(origin.at(pos), exc)
            return


def next_container(buf: Buffer, pos: int, end: int) -> int | None:
    """Where the next container of ``buf[pos:end]`` starts, past the zero padding between
    containers (None: only padding is left)."""
    found = _NON_ZERO.search(buf, pos, end)
    return None if found is None else found.start()


def release_pages(buf: Buffer, lo: int, hi: int) -> int:
    """Drop the resident pages of ``buf[lo:hi]`` when ``buf`` maps a file; returns ``hi``.
    Every blob yielded from there is already a copy, and a read-only file mapping simply
    re-reads a dropped page if it is touched again."""
    advise = getattr(buf, "madvise", None)
    if advise is not None and hasattr(mmap, "MADV_DONTNEED"):
        first = -(-lo // mmap.PAGESIZE) * mmap.PAGESIZE
        last = hi // mmap.PAGESIZE * mmap.PAGESIZE
        if last > first:
            with contextlib.suppress(OSError, ValueError):
                advise(mmap.MADV_DONTNEED, first, last - first)
    return hi


# -- raw code objects in a host binary's data ------------------------------------------------
#
# Some host binaries keep device code as plain byte arrays: a whole AMDGPU ELF image in .rodata
# or .data (the HSA runtime's blit kernels, libraries that embed .hsaco files with xxd or
# incbin), outside every fat-binary container. A candidate counts only when its header is
# consistent: ELF magic, 64-bit little-endian, EV_CURRENT, e_machine 224 (EM_AMDGPU), the ELF64
# header, section-header and program-header sizes (64, 64, 56 bytes), and every table and
# section it declares inside the host section that holds it. The image ends at the last byte
# its headers claim. The search is bounded: at most ``limits.max_entries`` candidates per
# section, each costing one header read and one pass over its section table.

ELF64_EHSIZE, ELF64_SHENTSIZE, ELF64_PHENTSIZE = 64, 64, 56
SHF_EXECINSTR = 0x4
_RAW_SKIP_PREFIXES = (".debug", ".note", ".gnu", ".rela", ".rel.", ".dyn", ".symtab", ".strtab", ".shstrtab")


def _may_hold_raw_images(section: Section) -> bool:
    """Data sections a raw image can sit in: allocated or not, never code, notes, symbol,
    string, relocation or debug tables."""
    return (
        section.type == SHT_PROGBITS
        and section.size >= ELF64_EHSIZE
        and not section.flags & SHF_EXECINSTR
        and not section.name.startswith(_RAW_SKIP_PREFIXES)
        and section.name not in FATBIN_SECTIONS
        and not section.name.startswith(BUNDLE_SECTION_PREFIX)
    )


def raw_images(buf: Buffer, elf: ElfFile, origin: Origin, limits: Limits) -> Iterator[tuple[Section, int, int] | Item]:
    """(section, start, end) of every consistent AMDGPU ELF image in the host ELF's data
    sections; a candidate that has EM_AMDGPU's header but does not fit its section is a Skipped
    item (NOT_A_WHOLE_IMAGE): host data is not device code's container, so a header there that
    leads nowhere is no error."""
    for section in (s for s in elf.sections if _may_hold_raw_images(s)):
        lo, hi = elf.section_range(section)
        pos, candidates = lo, 0
        while True:
            pos = buf.find(b"\x7fELF", pos, hi)
            if pos < 0:
                break
            candidates += 1
            if candidates > limits.max_entries:
                # The search is bounded; what it leaves unsearched is host data, not an error.
                yield Skipped(
                    origin.within(f"section {section.name}").at(pos),
                    f"more than {limits.max_entries} ELF magics in one host data section: the rest of it "
                    "is not searched for raw AMDGPU images (AMDOCC_MAX_ENTRIES)",
                )
                break
            end = _raw_image_end(buf, pos, hi, section, origin)
            if isinstance(end, Skipped):
                yield end
                pos += 4
            elif end is None:
                pos += 4
            else:
                yield section, pos, end
                pos = end


def _raw_image_end(buf: Buffer, pos: int, hi: int, section: Section, origin: Origin) -> int | Skipped | None:
    """Where the AMDGPU image at ``pos`` ends, None when the bytes there are no AMDGPU ELF
    header, a Skipped item when they are one whose tables run past ``hi``."""
    if hi - pos < ELF64_EHSIZE:
        return None
    head = bytes(buf[pos : pos + ELF64_EHSIZE])
    if head[4:7] != b"\x02\x01\x01" or int.from_bytes(head[18:20], "little") != EM_AMDGPU:
        return None
    version, phoff, shoff = int.from_bytes(head[20:24], "little"), _u64(head, 32), _u64(head, 40)
    ehsize, phentsize, phnum = _u16(head, 52), _u16(head, 54), _u16(head, 56)
    shentsize, shnum = _u16(head, 58), _u16(head, 60)
    if version != 1 or ehsize != ELF64_EHSIZE:
        return None
    if (phnum and phentsize != ELF64_PHENTSIZE) or (shnum and shentsize != ELF64_SHENTSIZE):
        return None
    room = hi - pos
    end = ELF64_EHSIZE
    problem = None
    if phnum:
        end = max(end, phoff + phnum * ELF64_PHENTSIZE)
    if shnum:
        end = max(end, shoff + shnum * ELF64_SHENTSIZE)
    if end > room:
        problem = f"its headers claim {end:#x} bytes, the section has {room:#x} from there"
    elif shnum:
        table = bytes(buf[pos + shoff : pos + shoff + shnum * ELF64_SHENTSIZE])
        for i in range(shnum):
            row = table[i * ELF64_SHENTSIZE : (i + 1) * ELF64_SHENTSIZE]
            kind, offset, size = int.from_bytes(row[4:8], "little"), _u64(row, 24), _u64(row, 32)
            if kind not in (0, SHT_NOBITS):
                end = max(end, offset + size)
        if end > room:
            problem = f"its sections claim {end:#x} bytes, the section has {room:#x} from there"
    if problem is None:
        return pos + end
    return Skipped(origin.within(f"section {section.name} @{origin.mark(pos)}").at(pos), NOT_A_WHOLE_IMAGE)


def _u16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 2], "little")


def _u64(data: bytes, at: int) -> int:
    return int.from_bytes(data[at : at + 8], "little")
