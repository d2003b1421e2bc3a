"""Unix ``ar`` archives (static libraries, ``.a``): each member read as a wheel member is.

Layout: the magic ``!<arch>\\n``, then per member a 60-byte header (name 16 bytes, modification
time 12, owner 6, group 6, mode 8, size 10 as decimal ASCII, terminator ``\\x60\\n``) and the
member's bytes, padded to an even offset. Names, by convention:

- GNU (and llvm-ar's default): ``name/``; longer names live in the ``//`` member, one per line
  ending ``/\\n``, and the header says ``/<offset into it>``; ``/`` and ``/SYM64/`` are the symbol
  tables;
- BSD and Darwin: ``#1/<n>``: the name is the first n bytes of the member's data (NUL padded);
  ``__.SYMDEF`` (``SORTED``, ``_64``) is the symbol table.

A thin archive (``!<thin>\\n``) holds only the names of files kept beside it (relative to its own
directory), not their bytes: when the archive is a file, each member is read from the file it
names (a regular file, or it is skipped with the reason); otherwise it cannot be read.

The archive is a buffer (the mapped file, or a member of another archive): a member is peeked at
where it lies and copied out only when it starts like something amdocc reads; one at or above
``Limits.mmap_threshold`` bytes goes to an unlinked temporary file, mapped, as a wheel's does.
"""

from __future__ import annotations

import mmap
import os
import stat
from collections.abc import Callable, Collection, Iterator

from ..binary import Buffer
from ..errors import FormatError, LimitError, Origin
from .archive import PEEK, Member, Refused, hold_chunks
from .magic import AR_MAGIC as AR_MAGIC
from .magic import THIN_MAGIC as THIN_MAGIC
from .magic import is_ar as is_ar
from .model import Limits

HEADER_SIZE = 60
_TERMINATOR = b"`\n"
_SYMBOL_TABLES = {"/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED", "__.SYMDEF_64", "__.SYMDEF_64 SORTED"}
_COPY_CHUNK = 1 << 20


class ArArchive:
    """An ar archive in ``buf`` (which it starts), named ``origin``."""

    def __init__(
        self, buf: Buffer, origin: Origin, limits: Limits, budget: int | None = None, directory: str | None = None
    ) -> None:
        self.buf, self.origin, self.limits = buf, origin, limits
        # Where a thin archive's members are (the directory of the archive file; None when the
        # archive is no file of its own, and its members cannot be found).
        self.directory = directory
        # Nothing is expanded out of an ar archive; the budget passes through to nested archives.
        self.budget = limits.max_archive_bytes if budget is None else budget
        self.thin = bytes(buf[:8]) == THIN_MAGIC
        self.count = 0

    @property
    def summary(self) -> str:
        return f"{'thin ' if self.thin else ''}ar archive of {self.count} members"

    def members(
        self, wanted: Callable[[bytes], bool], names: Collection[str] | None = None
    ) -> Iterator[Member | Refused]:
        """Each member whose first bytes satisfy ``wanted(head)``, in archive order. A damaged
        header ends the walk with a Refused record naming its offset: past it the layout is lost."""
        buf, end = self.buf, len(self.buf)
        pos, long_names = len(AR_MAGIC), b""
        try:
            while pos < end:
                name, start, size, after = self._header(pos, long_names)
                pos = after
                if name == "//":
                    long_names = bytes(buf[start : start + size])
                    continue
                if name in _SYMBOL_TABLES:
                    continue
                self.count += 1
                if self.count > self.limits.max_entries:
                    raise LimitError(
                        f"ar archive holds more than {self.limits.max_entries} members (AMDOCC_MAX_ENTRIES)",
                        self.origin,
                        start - HEADER_SIZE,
                    )
                if names is not None and name not in names:
                    continue
                if self.thin:
                    beside = self._beside(name, wanted)
                    if beside is not None:
                        yield beside
                    continue
                if not wanted(bytes(buf[start : start + min(size, PEEK)])):
                    continue
                here = self.origin.within(name).at(start)
                yield Member(name, self._copy(start, size), here)
        except FormatError as exc:
            yield Refused("", self.origin, "", exc)

    def _header(self, pos: int, long_names: bytes) -> tuple[str, int, int, int]:
        """(name, data start, data size, next header offset) of the member header at ``pos``."""
        buf, end, origin = self.buf, len(self.buf), self.origin
        header = bytes(buf[pos : pos + HEADER_SIZE])
        if len(header) < HEADER_SIZE:
            raise FormatError(
                f"ar member header cut short: {len(header)} of {HEADER_SIZE} bytes before the end", origin, pos
            )
        if header[58:60] != _TERMINATOR:
            raise FormatError(
                f"no ar member header here (it would end in 60 0a, not {header[58:60].hex(' ')})", origin, pos
            )
        field = header[48:58].rstrip(b" ")
        if not field.isdigit():
            raise FormatError(f"ar member size {field!r} is not a decimal number", origin, pos + 48)
        size, start = int(field), pos + HEADER_SIZE
        raw = header[:16].rstrip(b" ")
        held = not self.thin or raw in (b"/", b"//", b"/SYM64/")  # a thin archive holds only its tables
        if held and start + size > end:
            raise FormatError(
                f"ar member {raw.decode('latin-1')!r} declares {size} bytes at offset {origin.mark(start)}, "
                f"past the end of the archive ({end - start} bytes left)",
                origin,
                pos + 48,
            )
        after = start + size + (size & 1) if held else start  # data padded to an even offset
        if raw.startswith(b"#1/"):  # BSD: the name leads the data
            length = raw[3:]
            if not held or not length.isdigit() or int(length) > size:
                raise FormatError(f"BSD ar name length {length!r} does not fit its member ({size} bytes)", origin, pos)
            named = int(length)
            name = bytes(buf[start : start + named]).rstrip(b"\0")
            start, size = start + named, size - named
        elif raw in (b"/", b"//", b"/SYM64/"):
            name = raw
        elif raw.startswith(b"/"):  # GNU: an offset into the long-name member
            offset = raw[1:]
            if not offset.isdigit() or int(offset) >= len(long_names):
                raise FormatError(
                    f"ar long name {raw.decode('latin-1')!r} points outside the long-name table "
                    f"({len(long_names)} bytes)",
                    origin,
                    pos,
                )
            tail = long_names[int(offset) :]
            name = tail[: tail.index(b"\n")] if b"\n" in tail else tail
            name = name[:-1] if name.endswith(b"/") else name
        else:
            name = raw[:-1] if raw.endswith(b"/") else raw
        return name.decode("utf-8", "replace"), start, size, after

    def _beside(self, name: str, wanted: Callable[[bytes], bool]) -> Member | Refused | None:
        """A thin archive's member: the file it names, relative to the archive's directory. Its
        offsets count from that file's start, which sits at no offset of the archive."""
        here = self.origin.decompressed(name)
        path = os.path.join(self.directory or "", name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return Refused(name, here, f"thin archive member {path!r} is not a regular file; not read")
            with open(path, "rb") as fh:
                if not wanted(fh.read(PEEK)):
                    return None
                fh.seek(0)
                size = os.fstat(fh.fileno()).st_size
                if size < self.limits.mmap_threshold:
                    return Member(name, fh.read(size), here)
                return Member(name, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), here)
        except OSError as exc:  # a member the archive needs and cannot be had: its device code is lost
            return Refused(
                name, here, "", FormatError(f"thin archive member {path!r} cannot be read: {exc.strerror}", here)
            )

    def _copy(self, start: int, size: int) -> bytes | mmap.mmap:
        if size < self.limits.mmap_threshold:
            return bytes(self.buf[start : start + size])
        chunks = (
            bytes(self.buf[at : min(start + size, at + _COPY_CHUNK)]) for at in range(start, start + size, _COPY_CHUNK)
        )
        return hold_chunks(chunks)

    def close(self) -> None:
        """The buffer belongs to the caller."""
