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

from .errors import FormatError, Origin

Buffer = Any  # bytes, bytearray, memoryview or mmap: anything struct.unpack_from accepts


class Layout:
    """A named fixed-size record."""

    __slots__ = ("name", "struct", "size", "record", "fields")

    def __init__(self, name: str, fields: list[tuple[str, str]]):
        self.name = name
        self.fields = tuple(f for f, _ in fields)
        self.struct = struct.Struct("<" + "".join(code for _, code in fields))
        self.size = self.struct.size
        self.record = namedtuple(name, self.fields)

    def read(self, data: Buffer, offset: int, origin: Origin, what: str | None = None):
        """Decode one record at ``offset``; raise FormatError if it does not fit."""
        need_bytes(data, offset, self.size, origin, what or self.name)
        return self.record._make(self.struct.unpack_from(data, offset))

    def read_many(self, data: Buffer, offset: int, count: int, origin: Origin, what: str | None = None):
        """Decode ``count`` consecutive records (a table) at ``offset``."""
        need_bytes(data, offset, self.size * count, origin, what or f"{self.name} table")
        make = self.record._make
        unpack = self.struct.unpack_from
        size = self.size
        return [make(unpack(data, offset + i * size)) for i in range(count)]


def need_bytes(data: Buffer, offset: int, size: int, origin: Origin, what: str) -> None:
    """Raise FormatError unless ``data[offset:offset+size]`` lies inside the buffer."""
    if offset < 0 or size < 0 or offset + size > len(data):
        raise FormatError(
            f"truncated or out-of-range {what}: needs {size} bytes at {offset:#x}, "
            f"but only {len(data):#x} bytes are available",
            origin,
            offset,
        )


def cstring(table: bytes, offset: int, origin: Origin, what: str) -> str:
    """Read a NUL-terminated string at ``offset`` of a string table held as ``bytes``."""
    if offset < 0 or offset >= len(table):
        raise FormatError(f"{what} offset {offset:#x} is outside its string table", origin)
    end = table.find(b"\0", offset)
    if end < 0:
        raise FormatError(f"unterminated {what} at string-table offset {offset:#x}", origin)
    return table[offset:end].decode("utf-8", "surrogateescape")


def align_up(value: int, alignment: int) -> int:
    """Round ``value`` up to a multiple of ``alignment`` (true rounding, any alignment >= 1)."""
    return -(-value // alignment) * alignment


def bits(word: int, lo: int, hi: int) -> int:
    """The bit field ``word[hi:lo]`` (inclusive)."""
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)
