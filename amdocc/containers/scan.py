"""Turn any file, directory or buffer into code-object blobs, each with its origin.

Recognised by magic, at any nesting: a bare AMDGPU ELF; ``__CLANG_OFFLOAD_BUNDLE__``; ``CCOB``
(v1-v3, zlib/zstd); an OffloadBinary; a host ELF's ``.hip_fatbin`` / ``.llvm.offloading`` /
``__CLANG_OFFLOAD_BUNDLE__*`` sections; a PE image's or COFF object's ``.hip_fat`` section.
Sections may hold several containers back to back with zero padding between them.

The scanner yields :class:`Blob`, :class:`Skipped` and :class:`Failed` items. Below the top
level it never raises on bad input, so one corrupt bundle does not hide the rest of a library.

Every function here works on absolute offsets into one buffer (the file, or a decompressed
payload) and receives that buffer's :class:`Origin`, whose hops say where in it we are.
"""

from __future__ import annotations

import importlib
import io
import mmap
import os
import stat
import sys
import zlib
from collections.abc import Collection, Generator, Iterator
from dataclasses import replace
from typing import IO, TYPE_CHECKING, BinaryIO, TypeAlias

from ..binary import Buffer
from ..elf import EM_AMDGPU, ElfFile, is_elf
from ..errors import AmdoccError, FormatError, LimitError, Origin
from .magic import (
    BLOCK,
    BUNDLE_MAGIC,
    CONTAINER_MAGICS,
    KPACK_MAGIC,
    PEEK,
    is_ar,
    is_gzip,
    is_pe,
    is_tar,
    is_zip,
    looks_like_coff_object,
)
from .model import DEFAULT_LIMITS, Blob, Failed, Item, Limits, NotWalked, Skipped, Source

# Each reader (archive, ar, tar, bundle, offload_binary, kpack, pe, regions) is imported where
# its magic is met, not here: a plain code object, the usual file, needs none of them, and a
# run's start-up is on the critical path of every short one (docs/performance.md, issue 30).
# The archive readers are imported in the functions that open an archive (once per archive);
# the readers met once per container (a library may hold 70,000 bundles) are module names bound
# on first use, since an import statement costs ~11 K instructions each time it runs.
if TYPE_CHECKING:
    from . import bundle, kpack, offload_binary, regions
    from .ar import ArArchive
    from .archive import Archive, Member
    from .tar import TarArchive
else:

    class _OnFirstUse:
        """Stands for a reader module until an attribute is asked for: then imports it and puts
        the module itself in this module's namespace, so later uses are plain look-ups."""

        def __init__(self, name: str):
            self.name = name

        def __getattr__(self, attribute: str) -> object:
            module = importlib.import_module(f"{__package__}.{self.name}")
            globals()[self.name] = module
            return getattr(module, attribute)

    bundle, kpack, offload_binary, regions = map(_OnFirstUse, ("bundle", "kpack", "offload_binary", "regions"))

# LLVM bitcode: the raw magic 'BC' C0 DE, and the wrapper header's magic 0x0B17C0DE (LE).
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
# What an AMDGPU entry of bitcode is: a -fgpu-rdc object's device code, compiled but not yet
# linked into a code object (old driver: a bundle entry; new driver: an OffloadBinary image).
RELOCATABLE_DEVICE_CODE = "relocatable device code: nothing to evaluate before the device link"
SMALL_FILE = 1 << 20
# Names that say "this is device code": in a directory walk such a file is never passed over.
CODE_OBJECT_SUFFIXES = (".co", ".hsaco", ".hipfb", ".fatbin")


# -- entry points ---------------------------------------------------------------------------


def scan(source: Source, limits: Limits = DEFAULT_LIMITS) -> Iterator[Item]:
    """Scan a path (file or directory), ``"-"`` for stdin, or a bytes-like buffer."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield from _scan_top(bytes(source), Origin("<bytes>"), limits)
        return
    path = os.fspath(source)
    if path == "-":
        yield from _scan_top(sys.stdin.buffer.read(), Origin("-"), limits)
    elif os.path.isdir(path):
        for file in iter_files(path):
            if isinstance(file, NotWalked):
                yield file.item()
            else:
                yield from scan_file(file, limits, in_directory=True)
    else:
        yield from scan_file(path, limits)


def iter_files(root: str) -> Iterator[str | NotWalked]:
    """Every regular file below ``root`` (names sorted, depth first), and a :class:`NotWalked`
    for every entry below it that is not read, so nothing drops out of a walk unsaid: a
    subdirectory that cannot be listed is an error entry (as an unreadable file is) and the walk
    goes on. Links are followed, to files and to directories; a directory is walked once,
    known by (st_dev, st_ino), so a second link to it or a link that loops back is passed over
    with the path it was walked as. ``root`` itself that cannot be listed raises AmdoccError,
    as a file named that cannot be opened does."""
    try:
        first = os.stat(root)
        listing = _listing(root)
    except OSError as exc:
        raise AmdoccError(f"cannot list directory: {exc.strerror}", Origin(root)) from None
    walked = {(first.st_dev, first.st_ino): root}
    stack = [iter(listing)]  # an explicit stack: a deep tree needs no deep recursion
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        if entry.is_file(follow_symlinks=False):  # the common case, known from the listing alone
            yield entry.path
            continue
        try:
            info = entry.stat()  # follows a link: what it points to
        except FileNotFoundError:
            yield NotWalked(entry.path, "a link to nothing: its target does not exist", False)
            continue
        except OSError as exc:  # a link that loops on itself, or into a directory not readable
            yield NotWalked(entry.path, f"cannot follow link: {exc.strerror}", True)
            continue
        if stat.S_ISREG(info.st_mode):
            yield entry.path
        elif stat.S_ISDIR(info.st_mode):
            key = (info.st_dev, info.st_ino)
            if key in walked:
                yield NotWalked(entry.path, f"a directory already walked as {walked[key]}", False)
                continue
            walked[key] = entry.path
            try:
                stack.append(iter(_listing(entry.path)))
            except OSError as exc:
                yield NotWalked(entry.path, f"cannot list directory: {exc.strerror}", True)
        else:
            yield NotWalked(entry.path, f"not a regular file ({_kind(info.st_mode)})", False)


def _listing(path: str) -> list[os.DirEntry[str]]:
    """The entries of one directory, sorted by name (OSError when it cannot be listed)."""
    with os.scandir(path) as entries:
        return sorted(entries, key=lambda e: e.name)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return f"file type {stat.S_IFMT(mode):#o}"


def scan_file(path: str, limits: Limits = DEFAULT_LIMITS, in_directory: bool = False) -> Iterator[Item]:
    """Scan one file. Inside a directory walk, files that start like nothing amdocc reads
    (sources, CSVs, scripts) are passed over silently instead of failing, unless their name
    says they are code objects (CODE_OBJECT_SUFFIXES): those are read, and a file that cannot
    be read (empty, random bytes, truncated) is a Failed item, so nothing vanishes from a tree
    and the walk goes on."""
    if not in_directory:
        yield from _scan_one(path, limits, False)
        return
    try:
        yield from _scan_one(path, limits, True)
    except AmdoccError as exc:
        yield Failed(Origin(path), exc)


def _open(path: str, origin: Origin) -> BinaryIO:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise AmdoccError(f"cannot open: {exc.strerror}", origin) from None


def _scan_one(path: str, limits: Limits, in_directory: bool) -> Iterator[Item]:
    origin = Origin(path)
    with _open(path, origin) as fh:
        size = os.fstat(fh.fileno()).st_size
        # Small files are read whole at once (one read, not a peek and a read); large ones are
        # peeked at first, so a directory of big non-code files costs nothing and an archive
        # is read member by member from the open file. A file named like a code object is read
        # whatever it starts with, so an unreadable one is reported, not passed over.
        head = fh.read() if size <= SMALL_FILE else fh.read(PEEK)
        passing = in_directory and not path.lower().endswith(CODE_OBJECT_SUFFIXES)
        if passing and not recognised(head[:PEEK]):
            return
        if size > SMALL_FILE and is_archive(head[:PEEK]) and not is_ar(head):
            fh.seek(0)  # zip and tar archives are read from the open file; ar ones from its mapping
            yield from _scan_archive(_open_archive(head[:PEEK], fh, origin, limits), limits, 0)
            return
        buf: bytes | mmap.mmap | None = head if size <= SMALL_FILE else None
        if buf is None:
            fh.seek(0)
        if buf is None and size >= limits.mmap_threshold:
            try:
                buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                buf = None
        if buf is None:
            buf = fh.read()
    try:
        yield from _scan_top(buf, origin, limits)
    finally:
        if isinstance(buf, mmap.mmap):
            buf.close()


def recognised(head: bytes) -> bool:
    """Whether a file starting with ``head`` (its first 512 bytes, where a tar header's magic
    sits) is something the scanner reads."""
    return (
        is_elf(head)
        or head.startswith((*CONTAINER_MAGICS, KPACK_MAGIC))
        or is_pe(head)
        or looks_like_coff_object(head)
        or is_zip(head)
        or is_ar(head)
        or is_tar(head)
        or (is_gzip(head) and _gzip_may_hold_tar(head))
    )


def _gzip_may_hold_tar(head: bytes) -> bool:
    """Whether gzip data starting with ``head`` may expand to a tar archive: its first block,
    when ``head`` expands that far (a tar header compresses to well under 512 bytes), is a tar
    header; when it does not, it may be. So wheels' and trees' other gzip files (logs, data)
    are passed over like any file amdocc does not read, without being read whole."""
    try:
        first = zlib.decompressobj(wbits=31).decompress(head, BLOCK)
    except zlib.error:
        return False
    return len(first) < BLOCK or is_tar(first)


_EM_AMDGPU_BYTES = EM_AMDGPU.to_bytes(2, "little")  # e_machine, at offset 18 of an ELF header

# Device code for other vendors' GPUs, told apart so that it is skipped with its name rather than
# reported unreadable: NVIDIA's fat binary (fatBinaryHeader: u32 magic 0xBA55ED50, u16 version,
# u16 header size, u64 size of what follows the header; little-endian), and a CUDA ELF (cubin,
# e_machine EM_CUDA = 190 in the ELF machine registry).
NV_FATBIN_MAGIC = (0xBA55ED50).to_bytes(4, "little")
EM_CUDA = 190


def foreign_format(buf: Buffer, origin: Origin) -> str | None:
    """What non-AMD GPU format a whole file is (None: none amdocc knows). Only a whole one counts:
    a truncated fat binary or CUDA ELF is a FormatError, like any unreadable file."""
    head = bytes(buf[:20])
    if head.startswith(NV_FATBIN_MAGIC):
        if len(buf) < 16:
            raise FormatError(f"truncated NVIDIA fat binary header ({len(buf)} of 16 bytes)", origin, 0)
        header_size = int.from_bytes(head[6:8], "little")
        size = header_size + int.from_bytes(head[8:16], "little")
        if header_size < 16 or size > len(buf):
            raise FormatError(
                f"NVIDIA fat binary header says {size} bytes (header {header_size}), the file has {len(buf)}", origin, 8
            )
        return "NVIDIA CUDA fat binary (magic 0xBA55ED50), not AMD GPU code"
    if is_elf(head) and len(head) == 20 and int.from_bytes(head[18:20], "little") == EM_CUDA:
        elf = ElfFile(buf, origin)  # headers and section table, checked
        for section in elf.sections:
            elf.section_range(section)  # every section's bytes are in the file
        return "NVIDIA CUDA ELF (e_machine 190, EM_CUDA), not AMD GPU code"
    return None


def _scan_top(buf: Buffer, origin: Origin, limits: Limits) -> Iterator[Item]:
    if len(buf) == 0:
        raise FormatError("empty file", origin, 0)
    if buf.__class__ is bytes and buf[18:20] == _EM_AMDGPU_BYTES and is_elf(buf) and buf[257:262] != b"ustar":
        # The usual file: one whole AMDGPU code object. What the checks below find for it, without
        # their copies of its head: no other vendor's format (an ELF of machine 224 is not
        # EM_CUDA), not an archive (no ustar magic: see is_tar), an ELF of machine EM_AMDGPU.
        if limits.max_depth < 0:
            raise LimitError(f"containers nested deeper than {limits.max_depth} levels", origin, 0)
        yield Blob(buf, origin.at(0))
        return
    foreign = foreign_format(buf, origin)
    if foreign is not None:
        yield Skipped(origin, foreign)
        return
    head = bytes(buf[:PEEK])
    if not recognised(head) and not is_gzip(head):  # gzip: the archive path says what it holds
        raise FormatError(
            f"not a code object or a container amdocc reads (starts with {bytes(buf[:8]).hex(' ')})", origin, 0
        )
    if is_archive(head):
        yield from _scan_archive(_open_archive(head, buf, origin, limits), limits, 0)
    else:
        yield from _scan_blob(buf, 0, len(buf), origin, limits, depth=0)


# -- archives -------------------------------------------------------------------------------


AnyArchive: TypeAlias = "Archive | ArArchive | TarArchive"
THIN_ARCHIVE = (
    "thin ar archive that is not a file of its own: it names object files kept beside it and holds "
    "none of their bytes (give amdocc the archive's path, or those files)"
)


def is_archive(head: bytes) -> bool:
    """Whether ``head`` (a file's first 512 bytes) starts an archive amdocc reads members of."""
    return is_zip(head) or is_ar(head) or is_tar(head) or is_gzip(head)


def _open_archive(
    head: bytes, source: Buffer | IO[bytes], origin: Origin, limits: Limits, budget: int | None = None
) -> AnyArchive:
    """The archive ``head`` announces over ``source``: a buffer (bytes or a mapping), or for a
    zip or tar archive an open file at its start (ar archives are read from a buffer)."""
    if isinstance(source, (bytes, bytearray, memoryview, mmap.mmap)):
        if is_ar(head):
            from .ar import ArArchive

            # A file named on its own (no hops) has a directory, where a thin archive's members are.
            whole_file = not origin.hops and origin.path not in ("-", "<bytes>") and os.path.isfile(origin.path)
            return ArArchive(source, origin, limits, budget, os.path.dirname(origin.path) if whole_file else None)
        if isinstance(source, mmap.mmap):
            from .archive import _MappedFile

            source = _MappedFile(source)
        else:
            source = io.BytesIO(source)
    if is_zip(head):
        from .archive import Archive

        return Archive(source, origin, limits, budget)
    from .tar import TarArchive

    return TarArchive(source, origin, limits, budget, compressed=is_gzip(head))


def _scan_archive(
    archive: AnyArchive, limits: Limits, depth: int, names: Collection[str] | None = None
) -> Iterator[Item]:
    """Every member of an archive (a wheel, a static library, an sdist) that is or holds a code
    object; an archive member is opened in turn, sharing the archive's expansion budget and one
    more level of depth. ``names`` limits the scan to those members (a part of a wheel read by
    one worker)."""
    from .ar import ArArchive  # each loaded already, by the archive's opening or its caller
    from .archive import Refused
    from .tar import NotATar, TarArchive

    found = failed = 0
    try:
        if isinstance(archive, ArArchive) and archive.thin and archive.directory is None:
            yield Skipped(archive.origin, THIN_ARCHIVE)
            return
        if isinstance(archive, TarArchive) and archive.compressed:
            try:
                first = archive.first_block()
            except NotATar:
                yield Skipped(archive.origin, "gzip data that is not a tar archive")
                return
            members = archive.members(recognised, names, first)
        else:
            members = archive.members(recognised, names)
        for member in members:
            if isinstance(member, Refused):
                failed += member.error is not None
                yield Failed(member.origin, member.error) if member.error else Skipped(member.origin, member.reason)
                continue
            found += 1
            try:
                head = bytes(member.data[:PEEK])
                if is_archive(head):
                    if depth + 1 > limits.max_depth:
                        yield Failed(
                            member.origin,
                            LimitError(f"archives nested deeper than {limits.max_depth} levels", member.origin, 0),
                        )
                        continue
                    yield from _guard(_scan_nested(archive, head, member, limits, depth + 1), member.origin)
                else:
                    yield from _guard(
                        _scan_blob(member.data, 0, len(member.data), member.origin, limits, depth + 1), member.origin
                    )
            finally:
                if isinstance(member.data, mmap.mmap):
                    member.data.close()
    finally:
        archive.close()
    if not found and not failed and names is None:  # a member that failed was said already
        yield Skipped(archive.origin, f"{archive.summary}, none of them a code object or a container amdocc reads")


def _scan_nested(outer: AnyArchive, head: bytes, member: Member, limits: Limits, depth: int) -> Iterator[Item]:
    inner = _open_archive(head, member.data, member.origin, limits, outer.budget)
    try:
        yield from _scan_archive(inner, limits, depth)
    finally:
        outer.budget = inner.budget  # what the inner archive expanded is gone for the rest


# -- one blob -------------------------------------------------------------------------------


def _scan_blob(
    buf: Buffer, start: int, end: int, origin: Origin, limits: Limits, depth: int, entry_id: str | None = None
) -> Iterator[Item]:
    """Dispatch on the magic of ``buf[start:end]``."""
    if depth > limits.max_depth:
        raise LimitError(f"containers nested deeper than {limits.max_depth} levels", origin, start)
    head = bytes(buf[start : min(end, start + 24)])
    if is_elf(head):
        machine = int.from_bytes(bytes(buf[start + 18 : start + 20]), "little") if end - start >= 20 else None
        if machine == EM_AMDGPU:
            data = buf if (start == 0 and end == len(buf) and isinstance(buf, bytes)) else bytes(buf[start:end])
            yield Blob(data, origin.at(start), entry_id)
        else:
            yield from _scan_host_elf(buf, start, origin, limits, depth)
    elif head.startswith(CONTAINER_MAGICS):
        yield from _scan_region(buf, start, end, origin, limits, depth)
    elif head.startswith(KPACK_MAGIC):
        yield from _scan_kpack(buf, start, end, origin, limits, depth)
    elif is_pe(head) or (start == 0 and looks_like_coff_object(head)):
        yield from _scan_coff(buf, start, origin, limits, depth)
    elif head.startswith(BITCODE_MAGICS):
        yield Skipped(origin.at(start), RELOCATABLE_DEVICE_CODE, entry_id)
    else:
        yield Failed(
            origin.at(start), FormatError(f"unrecognised data (starts with {head[:8].hex(' ')})", origin, start)
        )


def _scan_region(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits, depth: int) -> Iterator[Item]:
    """Containers back to back (a .hip_fatbin section), with zero padding between them."""

    def read(kind: str, pos: int) -> Scanned:
        if kind == regions.BUNDLE:
            return _scan_bundle(buf, pos, end, origin, limits, depth)
        if kind == regions.CCOB:
            return _scan_ccob(buf, pos, end, origin, limits, depth)
        return _scan_offload(buf, pos, end, origin, limits, depth)

    return regions.containers(buf, start, end, origin, limits, read)


def scan_region(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits) -> Iterator[Item]:
    """The containers of one host section's ``buf[start:end]`` (a piece of a cut-up file)."""
    return _scan_region(buf, start, end, origin, limits, depth=1)


def scan_members(path: str, names: Collection[str], limits: Limits) -> Iterator[Item]:
    """The items of some members of the archive at ``path`` (a part of a cut-up wheel)."""
    from .archive import Archive

    with open(path, "rb") as fh:
        yield from _scan_archive(Archive(fh, Origin(path), limits), limits, 0, frozenset(names))


# A container inside a region: its items, and (the generator's return value) where it ends.
Scanned = Generator[Item, None, int]


def _scan_bundle(buf: Buffer, pos: int, end: int, origin: Origin, limits: Limits, depth: int) -> Scanned:
    here = origin.within(f"bundle@{origin.mark(pos)}")
    entries, extent = bundle.parse_bundle(buf, pos, end, here, limits)
    for entry_id, offset, size in entries:
        at = pos + offset
        if bundle.offload_kind(entry_id) == "host":
            yield Skipped(here.within_at(entry_id, at), "host entry", entry_id)
        elif not bundle.is_amdgpu_triple(entry_id):
            yield Skipped(here.within_at(entry_id, at), "not an AMDGPU entry", entry_id)
        elif size == 0:
            yield Skipped(here.within_at(entry_id, at), "empty entry", entry_id)
        else:
            inner = here.within(entry_id)
            yield from _guard(_scan_blob(buf, at, at + size, inner, limits, depth + 1, entry_id), inner.at(at))
    return extent


def _scan_ccob(buf: Buffer, pos: int, end: int, origin: Origin, limits: Limits, depth: int) -> Scanned:
    ccob = bundle.decompress_ccob(buf, pos, end, origin.within(f"CCOB@{origin.mark(pos)}"), limits)
    inner = origin.decompressed(f"{ccob.label}@{origin.mark(pos)}")
    if not ccob.payload.startswith(BUNDLE_MAGIC):
        yield Failed(inner, FormatError("compressed bundle does not hold an offload bundle", inner, 0))
    else:
        # What this payload used of the decompression budget is gone for anything nested in it,
        # so CCOBs inside CCOBs cannot multiply the limit by the nesting depth.
        rest = replace(limits, max_decompressed=limits.max_decompressed - len(ccob.payload))
        yield from _scan_region(ccob.payload, 0, len(ccob.payload), inner, rest, depth + 1)
    return ccob.extent


def _scan_offload(buf: Buffer, pos: int, end: int, origin: Origin, limits: Limits, depth: int) -> Scanned:
    here = origin.within(f"OffloadBinary@{origin.mark(pos)}")
    image = offload_binary.parse_offload_binary(buf, pos, end, here, limits)
    inner = here.within(image.label)
    if not bundle.is_amdgpu_triple(image.strings.get("triple", "")):
        yield Skipped(
            inner.at(image.start), f"image for {image.strings.get('triple', 'an unknown triple')}", image.label
        )
    elif image.image_kind == "bitcode":
        yield Skipped(inner.at(image.start), RELOCATABLE_DEVICE_CODE, image.label)
    elif image.image_kind != "object":
        yield Skipped(inner.at(image.start), f"{image.image_kind} image, not a code object", image.label)
    else:
        yield from _guard(
            _scan_blob(buf, image.start, image.start + image.size, inner, limits, depth + 1, image.label),
            inner.at(image.start),
        )
    return image.extent


def _scan_kpack(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits, depth: int) -> Iterator[Item]:
    here = origin.within(f"kpack@{origin.mark(start)}")
    for entry in kpack.kpack_entries(buf, start, end, here, limits):
        if isinstance(entry, AmdoccError):
            yield Failed(here, entry)
            continue
        inner = here.within(entry.label) if entry.buf is buf else here.decompressed(entry.label)
        yield from _guard(
            _scan_blob(
                entry.buf, entry.start, entry.end, inner, limits, depth + 1, f"{entry.binary}:{entry.processor}"
            ),
            inner.at(entry.start),
        )


def _guard(items: Iterator[Item], origin: Origin) -> Iterator[Item]:
    """Pass items through; an error inside one entry becomes a Failed item, not an exception."""
    try:
        yield from items
    except AmdoccError as exc:
        yield Failed(origin, exc)


# -- host binaries --------------------------------------------------------------------------


def _scan_host_elf(buf: Buffer, start: int, origin: Origin, limits: Limits, depth: int) -> Iterator[Item]:
    # A host binary is read only where it starts its buffer, and then from its own section table
    # (offsets count from the buffer's start), so how far the caller's range ran does not matter.
    if start != 0:
        yield Skipped(origin.at(start), "embedded non-AMDGPU ELF")
        return
    yield from _scan_regions(buf, regions.host_elf_regions(buf, ElfFile(buf, origin), origin, limits), limits, depth)


def _scan_regions(buf: Buffer, found: Iterator[regions.Region | Item], limits: Limits, depth: int) -> Iterator[Item]:
    """Read each region of a host binary (regions.py says where they are and what they hold)."""
    for region in found:
        if not isinstance(region, regions.Region):
            yield region
            continue
        lo, hi, here = region.start, region.end, region.origin
        if region.kind == regions.KPACK_REF:
            yield _kpack_skip(buf, lo, hi, here)
        elif region.kind == regions.RAW_IMAGE:
            # regions.raw_images checked the AMDGPU ELF header and that its tables fit.
            yield Blob(bytes(buf[lo:hi]), here.at(lo), found_in_data=True)
        elif region.kind == regions.BUNDLE_ENTRY:
            # An RDC object's sections: one per entry, the host's (one byte) beside the device's.
            entry = bundle.BundleEntry(regions.bundle_entry_id(region), 0, hi - lo)
            if entry.kind == "host":
                yield Skipped(here.at(lo), "host entry", entry.entry_id)
            elif not entry.is_amdgpu:
                yield Skipped(here.at(lo), "not an AMDGPU entry", entry.entry_id)
            else:
                yield from _guard(_scan_blob(buf, lo, hi, here, limits, depth + 1, entry.entry_id), here.at(lo))
        else:
            yield from _scan_region(buf, lo, hi, here, limits, depth + 1)


def _kpack_skip(buf: Buffer, lo: int, hi: int, here: Origin) -> Item:
    """The host binary's device code lives in a kpack archive: say which, or why not."""
    try:
        return Skipped(here.at(lo), kpack.parse_ref(bytes(buf[lo:hi]), here.at(lo)).reason)
    except AmdoccError as exc:
        return Failed(here.at(lo), exc)


def _scan_coff(buf: Buffer, start: int, origin: Origin, limits: Limits, depth: int) -> Iterator[Item]:
    if start != 0:
        yield Skipped(origin.at(start), "embedded PE/COFF image")
        return
    yield from _scan_regions(buf, regions.pe_regions(buf, origin), limits, depth)
