"""Declarative little-endian struct layouts with bounds-checked reads.

In the spirit of pyelftools' ``structs.py``: each on-disk record is declared once as a list of
(field, struct code) pairs, and every read checks that the record lies inside the buffer, so a
lying offset becomes a :class:`FormatError` naming the file and offset instead of an exception
from deep inside ``struct``.
"""

from __future__ import annotations

import struct
from collections import namedtuple
from typing import Any

from .errors import FormatError, LimitError, Origin

Buffer = Any  # bytes, bytearray, memoryview or mmap: anything struct.unpack_from accepts
# One decoded record: a namedtuple whose attributes are the layout's field names, built at run
# time from the declaration, so a type checker cannot know them.
Record = Any


def _record_type(name: str, fields: tuple[str, ...]) -> type[Record]:
    return namedtuple(name, fields)


class Layout:
    """A named fixed-size record."""

    __slots__ = ("fields", "name", "record", "size", "struct")

    def __init__(self, name: str, fields: list[tuple[str, str]]):
        self.name = name
        self.fields = tuple(f for f, _ in fields)
        self.struct = struct.Struct("<" + "".join(code for _, code in fields))
        self.size = self.struct.size
        self.record = _record_type(name, self.fields)

    def read(self, data: Buffer, offset: int, origin: Origin, what: str | None = None) -> Record:
        """Decode one record at ``offset``; raise FormatError if it does not fit."""
        need_bytes(data, offset, self.size, origin, what or self.name)
        return self.record._make(self.struct.unpack_from(data, offset))

    def read_many(self, data: Buffer, offset: int, count: int, origin: Origin, what: str | None = None) -> list[Record]:
        """Decode ``count`` consecutive records (a table) at ``offset``."""
        need_bytes(data, offset, self.size * count, origin, what or f"{self.name} table")
        make = self.record._make
        unpack = self.struct.unpack_from
        size = self.size
        return [make(unpack(data, offset + i * size)) for i in range(count)]


def need_bytes(data: Buffer, offset: int, size: int, origin: Origin, what: str) -> None:
    """Raise FormatError unless ``data[offset:offset+size]`` lies inside the buffer."""
    if offset < 0 or size < 0 or offset + size > len(data):
        raise out_of_range(data, offset, size, origin, what)


def out_of_range(data: Buffer, offset: int, size: int, origin: Origin, what: str) -> FormatError:
    """The error :func:`need_bytes` raises, for a loop over thousands of records that checks
    its bounds itself and formats ``what`` only for the record that fails."""
    return FormatError(
        f"truncated or out-of-range {what}: needs {size} bytes at {offset:#x}, "
        f"but only {len(data):#x} bytes are available",
        origin,
        offset,
    )


class StringBudget:
    """How many bytes one string table may still hand out as strings.

    Tables share bytes between strings (one name may be the tail of another), so the strings read
    from a table add up to a little more than the table. A file whose entries all point into one
    long string would instead make every entry a copy of it: thousands of entries times a long
    string is gigabytes from a file of a few MiB. Strings may add up to four times the table plus
    64 KiB; past that, reading stops with a LimitError.
    """

    __slots__ = ("left", "total", "what")

    def __init__(self, table_size: int, what: str):
        self.total = self.left = 4 * table_size + (64 << 10)
        self.what = what

    def stop(self, start: int, end: int) -> int:
        """Where the search for the NUL of a string starting at ``start`` may end at the latest."""
        return min(end, start + max(self.left, 0) + 1)

    def spend(self, start: int, nul: int) -> None:
        self.left -= nul - start + 1

    def exceeded(self, origin: Origin, at: int) -> LimitError:
        return LimitError(
            f"strings read from {self.what} add up to more than {self.total} bytes "
            "(four times the table, plus 64 KiB): its entries keep pointing into the "
            "same long strings",
            origin,
            at,
        )


def cstring(
    table: Buffer,
    offset: int,
    origin: Origin,
    what: str,
    at: int,
    budget: StringBudget | None = None,
    *,
    start: int = 0,
    end: int | None = None,
    errors: str = "surrogateescape",
) -> str:
    """Read a NUL-terminated string at ``offset`` of the string table ``table[start:end]``.

    The table (all of ``table`` by default; bytes or an mmap) is searched in place, never copied.
    ``at`` is the buffer offset of the record that refers to the string (a section header, a
    symbol, a string-map entry): errors name it, since that is where the lying offset sits. With
    a ``budget``, the strings read from one table are bounded in total (see :class:`StringBudget`).
    """
    end = len(table) if end is None else end
    if offset < 0 or offset >= end - start:
        raise FormatError(f"{what} offset {offset:#x} is outside its string table ({end - start:#x} bytes)", origin, at)
    first = start + offset
    stop = end if budget is None else budget.stop(first, end)
    nul = table.find(b"\0", first, stop)
    if nul < 0:
        if budget is not None and stop < end:
            raise budget.exceeded(origin, at)
        raise FormatError(f"unterminated {what} at string-table offset {offset:#x}", origin, at)
    if budget is not None:
        budget.spend(first, nul)
    return bytes(table[first:nul]).decode("utf-8", errors)


def overlaps(spans: list[tuple[int, int]]) -> dict[int, int]:
    """Which of the (start, end) spans overlap one kept instead: {index: index kept}.

    Of two overlapping spans the one listed first is kept; empty spans overlap nothing. The kept
    spans are disjoint; O(n log n) however the list is ordered. The first entry is the first
    overlap in start order (see :func:`first_overlap`).
    """
    if len(spans) < 2:  # the common case (one bundle entry, one section) needs no sort
        return {}
    kept: list[int] = []  # indices, in start order, of disjoint spans
    dropped: dict[int, int] = {}
    for i in sorted(range(len(spans)), key=lambda i: (spans[i][0], i)):
        lo, hi = spans[i]
        if hi <= lo:
            continue
        if kept and lo < spans[kept[-1]][1]:
            last = kept[-1]
            if i < last:  # the one listed first wins; it cannot reach back past ``last``'s start
                dropped[last] = i
                kept[-1] = i
            else:
                dropped[i] = last
            continue
        kept.append(i)
    return dropped


def first_overlap(spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """(earlier, later) in start order: the first two spans found to overlap, or None."""
    for pair in overlaps(spans).items():
        earlier, later = sorted(pair, key=lambda i: (spans[i][0], i))
        return earlier, later
    return None


def align_up(value: int, alignment: int) -> int:
    """Round ``value`` up to a multiple of ``alignment`` (true rounding, any alignment >= 1)."""
    return -(-value // alignment) * alignment
