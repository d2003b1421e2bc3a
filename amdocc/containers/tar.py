"""Tar archives, plain (``.tar``) or gzip-compressed (``.tar.gz``/``.tgz``, the form of a source
distribution): members read one at a time from a stream, as wheel members are named.

Layout (POSIX ustar, with the GNU and pax extensions Python's tarfile and GNU tar write): 512-byte
blocks; per member a header block (name 0-99, size 124-135 as octal or GNU base-256, checksum
148-155, type 156, magic ``ustar`` at 257, ustar name prefix 345-499) and its data padded to a
whole block; two zero blocks end the archive. A GNU ``L`` member holds the next member's long
name, a pax ``x`` member its ``path`` and ``size`` records; ``g`` and ``K`` are read past.

Every header is checked (its checksum, its numbers) and every member's bytes must be there, so a
truncated archive or a member whose header lies about its size is a FormatError naming the offset
in the (decompressed) stream, never a member silently cut or dropped. A gzip stream's expanded
bytes count against ``Limits.max_archive_bytes`` as they are read (a gzip bomb ends the read with
a LimitError); a member is read whole only when it starts like something amdocc reads, and one
at or above ``Limits.mmap_threshold`` bytes goes to a mapped temporary file.
"""

from __future__ import annotations

import gzip
import mmap
import zlib
from collections.abc import Callable, Collection, Iterator
from typing import IO

from ..errors import FormatError, LimitError, Origin
from .archive import PEEK, Member, Refused, _MappedFile, hold_chunks
from .magic import BLOCK as BLOCK
from .magic import GZIP_MAGIC as GZIP_MAGIC
from .magic import is_gzip as is_gzip
from .magic import is_tar as is_tar
from .magic import tar_checksum_matches
from .model import Limits

_ZERO_BLOCK = bytes(BLOCK)
# Types whose data is not a file's bytes (links, devices, directories, FIFOs; GNU sparse files,
# volume labels, multi-volume continuations, dump directories): read past. Regular and contiguous
# files, and types no one defined (POSIX reserves 'A'-'Z' for custom ones, which readers take as
# regular files, as Python's tarfile does), are read as files.
_NOT_FILES = (b"1", b"2", b"3", b"4", b"5", b"6", b"S", b"V", b"M", b"N", b"D")
_META_TYPES = (b"L", b"K", b"x", b"g")  # GNU long name/link, pax per-file and global headers
_META_LIMIT = 1 << 20  # a long name or pax header larger than this is not a name
_CHUNK = 1 << 20
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error, OSError)


class NotATar(FormatError):
    """A gzip stream that does not hold a tar archive (its one caller passes the file over)."""


class TarArchive:
    """A tar archive read from ``stream`` (from its current position), named ``origin``;
    ``compressed``: the stream is gzip data holding the tar."""

    def __init__(
        self,
        stream: IO[bytes] | _MappedFile,
        origin: Origin,
        limits: Limits,
        budget: int | None = None,
        compressed: bool = False,
    ) -> None:
        self.origin, self.limits, self.compressed = origin, limits, compressed
        self.budget = limits.max_archive_bytes if budget is None else budget
        self.stream: IO[bytes] | _MappedFile | gzip.GzipFile = (
            gzip.GzipFile(fileobj=stream, mode="rb") if compressed else stream
        )
        # Where offsets count from: the file, or the expanded gzip stream (which sits at no file offset).
        self.where = origin.decompressed("gzip") if compressed else origin
        self.pos = 0
        self.count = 0

    @property
    def summary(self) -> str:
        return f"{'gzip-compressed ' if self.compressed else ''}tar archive of {self.count} members"

    def first_block(self) -> bytes:
        """The first header block, read and checked before any member is (NotATar: the stream,
        a gzip one, holds something else); :meth:`members` then starts from it."""
        block = self._read(BLOCK)
        if not is_tar(block):
            raise NotATar("gzip data that is not a tar archive", self.origin)
        return block

    def members(
        self, wanted: Callable[[bytes], bool], names: Collection[str] | None = None, first: bytes | None = None
    ) -> Iterator[Member | Refused]:
        """Each file member whose first bytes satisfy ``wanted(head)``, in archive order. A
        damaged header, a member cut short or a stream that cannot be expanded ends the walk
        with a Refused record naming where."""
        try:
            yield from self._members(wanted, names, first)
        except FormatError as exc:
            yield Refused("", self.where, "", exc)

    def _members(
        self, wanted: Callable[[bytes], bool], names: Collection[str] | None, first: bytes | None
    ) -> Iterator[Member | Refused]:
        long_name: str | None = None
        pax: dict[str, str] = {}
        block = first
        while True:
            header_at = self.pos - (BLOCK if block is not None else 0)
            if block is None:
                block = self._read(BLOCK)
            if not block:
                return  # the end of the stream between members
            if block == _ZERO_BLOCK:
                self._only_zeros_after(header_at)
                return
            if len(block) < BLOCK:
                raise FormatError(
                    f"tar archive ends inside a header ({len(block)} of {BLOCK} bytes)", self.where, header_at
                )
            if not tar_checksum_matches(block):
                raise FormatError(
                    "no valid tar header here (its checksum does not match): the archive is damaged, "
                    "or the member before it declares a size it does not have",
                    self.where,
                    header_at,
                )
            kind = block[156:157]
            size = _number(block[124:136], self.where, header_at + 124, "size")
            if "size" in pax:
                size = _pax_size(pax["size"], self.where, header_at)
            name = pax.get("path") or long_name or _ustar_name(block)
            data_at = self.pos
            block = None
            self.count += 1
            if self.count > self.limits.max_entries:
                raise LimitError(
                    f"tar archive holds more than {self.limits.max_entries} entries (AMDOCC_MAX_ENTRIES)",
                    self.where,
                    header_at,
                )
            if kind in _META_TYPES:
                if size > _META_LIMIT:
                    raise FormatError(
                        f"tar extended header of {size} bytes (at most {_META_LIMIT})", self.where, header_at
                    )
                meta = self._exactly(size, name, header_at)
                self._skip(_padding(size), name, header_at, size, size)
                if kind == b"L":
                    long_name = meta.split(b"\0", 1)[0].decode("utf-8", "replace")
                elif kind == b"x":
                    pax = _pax_records(meta, self.where, data_at)
                continue
            long_name, pax = None, {}
            if kind in _NOT_FILES or (names is not None and name not in names):
                self._skip(size + _padding(size), name, header_at, size)
                continue
            head = self._exactly(min(size, PEEK), name, header_at, size)
            if not wanted(head):
                self._skip(size - len(head) + _padding(size), name, header_at, size, len(head))
                continue
            here = self.origin.decompressed(name) if self.compressed else self.origin.within(name).at(data_at)
            data = self._hold(head, size, name, header_at)
            self._skip(_padding(size), name, header_at, size, size)
            yield Member(name, data, here)

    # -- reading the stream ------------------------------------------------------------------

    def _read(self, n: int) -> bytes:
        """Up to ``n`` bytes (fewer only at the end of the stream), counted against the budget."""
        out = bytearray()
        try:
            while len(out) < n:
                chunk = self.stream.read(n - len(out))
                if not chunk:
                    break
                out += chunk
        except _GZIP_ERRORS as exc:
            raise FormatError(f"unreadable gzip stream: {exc}", self.where, self.pos + len(out)) from None
        self.pos += len(out)
        if self.compressed:
            self.budget -= len(out)
            if self.budget < 0:
                raise LimitError(
                    f"gzip stream expands past what is left of the archive's expansion budget "
                    f"({self.limits.max_archive_bytes} bytes, AMDOCC_MAX_ARCHIVE_BYTES): a decompression bomb?",
                    self.where,
                    self.pos,
                )
        return bytes(out)

    def _only_zeros_after(self, marker_at: int) -> None:
        """What follows the end-of-archive marker is zero padding (to the writer's record size).
        Anything else means the archive holds more than its headers describe: a member that
        declares less than it has (the walk then met zeros inside it), or archives concatenated."""
        while True:
            at = self.pos
            chunk = self._read(_CHUNK)
            if not chunk:
                return
            if chunk.count(0) != len(chunk):
                first = at + next(i for i, b in enumerate(chunk) if b)
                raise FormatError(
                    f"data after the end-of-archive marker at {self.where.mark(marker_at)}: the archive "
                    "holds more than its headers describe (a member that declares less than it has, "
                    "or archives concatenated)",
                    self.where,
                    first,
                )

    def _exactly(self, n: int, name: str, header_at: int, declared: int | None = None, before: int = 0) -> bytes:
        """``n`` bytes of a member whose header declares ``declared`` (default ``n``) bytes, of
        which ``before`` were read already; fewer is a FormatError naming the member."""
        data = self._read(n)
        if len(data) < n:
            self._cut_short(name, header_at, n if declared is None else declared, before + len(data))
        return data

    def _skip(self, n: int, name: str, header_at: int, declared: int, before: int = 0) -> None:
        """Read past ``n`` bytes of a member (its rest and padding) as :meth:`_exactly` reads."""
        left = n
        while left:
            got = len(self._read(min(left, _CHUNK)))
            if not got:
                self._cut_short(name, header_at, declared, min(declared, before + n - left))
            left -= got

    def _hold(self, head: bytes, size: int, name: str, header_at: int) -> bytes | mmap.mmap:
        if size < self.limits.mmap_threshold:
            return head + self._exactly(size - len(head), name, header_at, size, len(head))

        def chunks() -> Iterator[bytes]:
            yield head
            left = size - len(head)
            while left:
                chunk = self._exactly(min(left, _CHUNK), name, header_at, size, size - left)
                left -= len(chunk)
                yield chunk

        return hold_chunks(chunks())

    def _cut_short(self, name: str, header_at: int, wanted: int, got: int) -> None:
        raise FormatError(
            f"tar member {name!r} is cut short: the archive ends after {got} of the {wanted} bytes its "
            "header declares (a truncated archive, or a size that lies)",
            self.where,
            header_at + 124,
        )

    def close(self) -> None:
        if self.compressed:
            self.stream.close()  # the GzipFile, not the file under it


def _padding(size: int) -> int:
    return -size % BLOCK


def _number(field: bytes, origin: Origin, at: int, what: str) -> int:
    """An octal number, or GNU's base-256 form (the high bit of the first byte set)."""
    if field[:1] and field[0] & 0x80:
        if field[0] & 0x40:
            raise FormatError(f"tar header {what} is negative", origin, at)
        return int.from_bytes(bytes([field[0] & 0x7F]) + field[1:], "big")
    text = field.split(b"\0", 1)[0].strip(b" ")
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise FormatError(f"tar header {what} {text!r} is not an octal number", origin, at) from None


def _ustar_name(block: bytes) -> str:
    name = block[:100].split(b"\0", 1)[0]
    if block[257:263] == b"ustar\0":  # POSIX: a prefix may lead the name (GNU uses the bytes otherwise)
        prefix = block[345:500].split(b"\0", 1)[0]
        if prefix:
            name = prefix + b"/" + name
    return name.decode("utf-8", "replace")


def _pax_records(meta: bytes, origin: Origin, at: int) -> dict[str, str]:
    """``<length> <key>=<value>\\n`` records."""
    out, pos = {}, 0
    while pos < len(meta) and meta[pos : pos + 1] != b"\0":
        space = meta.find(b" ", pos)
        length = meta[pos:space] if space > pos else b""
        if not length.isdigit() or int(length) <= space - pos or pos + int(length) > len(meta):
            raise FormatError("malformed pax extended header record", origin, at + pos)
        record = meta[space + 1 : pos + int(length)].rstrip(b"\n")
        key, _, value = record.partition(b"=")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        pos += int(length)
    return out


def _pax_size(text: str, origin: Origin, at: int) -> int:
    if not text.isdigit():
        raise FormatError(f"pax size {text!r} is not a whole number", origin, at)
    return int(text)
