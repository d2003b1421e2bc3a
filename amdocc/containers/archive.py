"""Zip archives (Python wheels and any ``.zip``): the members worth scanning, read one at a time.

A wheel is a zip file. Its members are read straight from the archive (``zipfile`` on the open
file): each member is peeked at, and only one that starts like something amdocc reads is read
whole. A member of up to ``Limits.mmap_threshold`` bytes is held in memory; a larger one (a
1.4 GB ``libtensorflow_cc.so``) is streamed into an unlinked temporary file and mapped, so the
scanner's page release keeps memory flat. The archive as a whole is never extracted.

Bounds against zip bombs: every byte expanded out of one archive, nested archives included,
counts against ``Limits.max_archive_bytes``; a member's declared size is checked before it is
read and ``zipfile`` never returns more than that size; members whose data overlap another's
(the overlapping-entry bomb) are refused; only stored and deflated members are read (a deflate
read yields at most its requested size, while LZMA has no output bound per read).
"""

from __future__ import annotations

import io
import mmap
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

from ..binary import overlaps
from ..errors import FormatError, LimitError, Origin
from .magic import PEEK as PEEK
from .magic import ZIP_MAGICS as ZIP_MAGICS
from .magic import is_zip as is_zip
from .model import Limits

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

READABLE_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_LOCAL_HEADER = 30
_COPY_CHUNK = 1 << 20
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    OverflowError,
    NotImplementedError,
    RuntimeError,
)


@dataclass(frozen=True, slots=True)
class Member:
    """One archive member: its name, bytes (bytes, or a mapped temporary file) and origin."""

    name: str
    data: bytes | mmap.mmap
    origin: Origin


@dataclass(frozen=True, slots=True)
class Refused:
    """A member that is not read, and why (the scanner turns it into Skipped or Failed)."""

    name: str
    origin: Origin
    reason: str
    error: FormatError | None = None


class Archive:
    """An open zip archive over a seekable file object, with its expansion budget."""

    def __init__(
        self, fileobj: IO[bytes] | _MappedFile, origin: Origin, limits: Limits, budget: int | None = None
    ) -> None:
        self.origin = origin
        self.limits = limits
        self.budget = limits.max_archive_bytes if budget is None else budget
        try:
            self.zip = zipfile.ZipFile(fileobj)
            infos = self.zip.infolist()
        except _ZIP_ERRORS as exc:
            raise FormatError(f"unreadable zip archive: {exc}", origin, 0) from None
        if len(infos) > limits.max_entries:
            raise LimitError(
                f"zip archive lists {len(infos)} members (limit {limits.max_entries}, AMDOCC_MAX_ENTRIES)", origin, 0
            )
        self.infos = [i for i in infos if not i.is_dir()]
        # Each member's local header and compressed data must end before another's begins.
        spans = [(i.header_offset, i.header_offset + _LOCAL_HEADER + i.compress_size) for i in self.infos]
        self.overlapping = {self.infos[i].filename: self.infos[kept].filename for i, kept in overlaps(spans).items()}

    def members(
        self, wanted: Callable[[bytes], bool], names: Collection[str] | None = None
    ) -> Iterator[Member | Refused]:
        """Each file member (of ``names``, when given) whose first bytes satisfy
        ``wanted(head)``, read whole, in archive order; members that cannot be read come back
        as Refused."""
        for info in self.infos if names is None else [i for i in self.infos if i.filename in names]:
            here = self._origin(info)
            if info.filename in self.overlapping:
                yield Refused(
                    info.filename,
                    here,
                    "",
                    FormatError(
                        f"member's data overlaps member {self.overlapping[info.filename]!r} "
                        "(an overlapping-entry zip bomb?); not read",
                        here,
                        0,
                    ),
                )
                continue
            try:
                head = self._peek(info)
            except _ZIP_ERRORS as exc:
                yield Refused(info.filename, here, "", FormatError(f"unreadable member: {exc}", here, 0))
                continue
            if head is None or not wanted(head):
                if head is None and _worth_naming(info):
                    yield Refused(
                        info.filename,
                        here,
                        f"{_method(info)}-compressed member, which "
                        "amdocc does not read (only stored and deflated members are)",
                    )
                continue
            try:
                yield Member(info.filename, self._read(info, here), here)
            except LimitError as exc:
                yield Refused(info.filename, here, "", exc)
            except _ZIP_ERRORS as exc:
                yield Refused(info.filename, here, "", FormatError(f"unreadable member: {exc}", here, 0))

    def _origin(self, info: zipfile.ZipInfo) -> Origin:
        """A stored member still sits at a file offset; a deflated one is a new buffer."""
        hop = self.origin.within(info.filename)
        if info.compress_type == zipfile.ZIP_STORED and self.origin.base is not None:
            start = (
                info.header_offset
                + _LOCAL_HEADER
                + len(info.orig_filename.encode("utf-8", "replace"))
                + len(info.extra)
            )
            return hop.at(start)
        return self.origin.decompressed(info.filename)

    def peek(self, info: zipfile.ZipInfo) -> bytes | None:
        """The first bytes of a member, or None when it cannot be read (or is not readable)."""
        try:
            return self._peek(info)
        except _ZIP_ERRORS:
            return None

    def spill(self, info: zipfile.ZipInfo, directory: str) -> str:
        """Write a member to a file in ``directory`` (for other processes to map); its path."""
        fd, path = tempfile.mkstemp(prefix="member-", dir=directory)
        with self.zip.open(info) as stream, open(fd, "wb") as out:
            shutil.copyfileobj(stream, out, _COPY_CHUNK)
        return path

    def _peek(self, info: zipfile.ZipInfo) -> bytes | None:
        if info.compress_type not in READABLE_METHODS:
            return None
        with self.zip.open(info) as stream:
            return stream.read(PEEK)

    def _read(self, info: zipfile.ZipInfo, here: Origin) -> bytes | mmap.mmap:
        if info.file_size > self.budget:
            raise LimitError(
                f"member declares {info.file_size} bytes, over what is left of the "
                f"archive's expansion budget ({self.budget} of "
                f"{self.limits.max_archive_bytes} bytes, AMDOCC_MAX_ARCHIVE_BYTES)",
                here,
                0,
            )
        self.budget -= info.file_size
        with self.zip.open(info) as stream:
            if info.file_size < self.limits.mmap_threshold:
                return stream.read()
            return hold_chunks(iter(lambda: stream.read(_COPY_CHUNK), b""))

    def nested(self, member: Member) -> Archive:
        """The archive held in ``member`` (a zip inside a zip), sharing what is left of this
        archive's budget; the caller hands back what it did not use."""
        data = member.data
        fileobj = io.BytesIO(data) if isinstance(data, (bytes, bytearray)) else _MappedFile(data)
        return Archive(fileobj, member.origin, self.limits, self.budget)

    @property
    def summary(self) -> str:
        return f"zip archive of {len(self.infos)} members"

    def close(self) -> None:
        self.zip.close()


class _MappedFile(io.RawIOBase):
    """A read-only, seekable file over an mmap, so zipfile can read a spilled nested archive."""

    def __init__(self, mapping: mmap.mmap) -> None:
        self.mapping, self.pos = mapping, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: len(self.mapping)}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer)
        chunk = self.mapping[self.pos : self.pos + len(view)]
        view[: len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def hold_chunks(chunks: Iterable[bytes]) -> bytes | mmap.mmap:
    """A large member's bytes, written to an unlinked temporary file and mapped, so the
    scanner's page release keeps memory flat. Closing the file at the end is fine: the mapping
    keeps the unlinked file's pages alive."""
    with tempfile.TemporaryFile(prefix="amdocc-member-") as spill:
        for chunk in chunks:
            spill.write(chunk)
        spill.flush()
        return mmap.mmap(spill.fileno(), 0, access=mmap.ACCESS_READ) if spill.tell() else b""


def _method(info: zipfile.ZipInfo) -> str:
    return {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}.get(
        info.compress_type, f"method-{info.compress_type}"
    )


def _worth_naming(info: zipfile.ZipInfo) -> bool:
    """An unreadable member is worth a line only if it might have held device code (an ELF
    header alone is 64 bytes)."""
    return info.file_size >= 64
