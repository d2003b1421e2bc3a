"""Fixed-size little-endian fields: read, write, and pick values that break parsers.

Mutators raise :class:`Inapplicable` when the bytes in front of them are not the structure they
edit (or are already too mangled); the input generator then tries another mutator.
"""

from __future__ import annotations

import random


class Inapplicable(Exception):
    """A mutator cannot work on these bytes (not the structure it edits, or already mangled)."""


def get(data, at: int, size: int) -> int:
    if at < 0 or at + size > len(data):
        raise Inapplicable(f"read of {size} bytes at {at:#x} outside {len(data):#x}")
    return int.from_bytes(data[at : at + size], "little")


def put(data: bytearray, at: int, size: int, value: int) -> None:
    if at < 0 or at + size > len(data):
        raise Inapplicable(f"write of {size} bytes at {at:#x} outside {len(data):#x}")
    data[at : at + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")


def align(value: int, to: int) -> int:
    return -(-value // to) * to


def pad_to(data: bytes, to: int) -> bytes:
    return data + b"\0" * (align(len(data), to) - len(data))


_COMMON = [
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    15,
    16,
    31,
    32,
    63,
    64,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x3FF,
    0x400,
    0xFFF,
    0x1000,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x10000,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    1 << 32,
    (1 << 63) - 1,
    1 << 63,
    (1 << 64) - 1,
]


def interesting(rng: random.Random, size: int, orig: int | None = None, length: int | None = None, extra=()) -> int:
    """A value for a ``size``-byte field: edge cases, near the original, near the buffer's end."""
    top = (1 << (8 * size)) - 1
    roll = rng.random()
    if extra and roll < 0.25:
        value = rng.choice(list(extra))
    elif roll < 0.55:
        value = rng.choice([v for v in _COMMON if v <= top] + [top, top - 1, top >> 1, (top >> 1) + 1])
    elif roll < 0.72 and orig is not None:
        value = orig + rng.choice([-64, -16, -8, -4, -2, -1, 1, 2, 4, 8, 16, 64, orig, -orig])
    elif roll < 0.84 and length is not None:
        value = rng.choice(
            [length, length - 1, length + 1, length - rng.randint(0, 64), rng.randint(0, max(length, 1)), length * 2]
        )
    elif roll < 0.92 and orig is not None:
        value = orig ^ (1 << rng.randrange(8 * size))
    else:
        value = rng.getrandbits(8 * size)
    return value & top


def with_field(
    rng: random.Random,
    data: bytes,
    at: int,
    size: int,
    orig: int | None = None,
    length: int | None = None,
    extra=(),
    label: str = "",
) -> tuple[bytes, str]:
    """``data`` with the ``size``-byte field at ``at`` set to an :func:`interesting` value, and
    a note naming the field and the value."""
    value = interesting(rng, size, orig, length, extra)
    out = bytearray(data)
    put(out, at, size, value)
    return bytes(out), f"{label}={value:#x}"
