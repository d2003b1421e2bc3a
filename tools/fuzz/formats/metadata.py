"""MessagePack metadata encoded by hand, so it can hold what msgpack.packb never writes.

``Raw`` fragments are spliced in as they are (deep nesting, lying lengths, bad UTF-8, reserved
bytes); ``Pairs`` is a map whose keys may be anything, even unhashable fragments.
"""

from __future__ import annotations

import msgpack


class Raw(bytes):
    """An already encoded MessagePack fragment, spliced into the tree as it is."""


class Pairs(list):
    """A map given as (key, value) pairs: keys may be anything, even unhashable fragments."""


def _be(n: int, size: int) -> bytes:
    return n.to_bytes(size, "big")


def mp_map_header(n: int) -> bytes:
    return bytes([0x80 | n]) if n < 16 else (b"\xde" + _be(n, 2) if n < 1 << 16 else b"\xdf" + _be(n, 4))


def mp_array_header(n: int) -> bytes:
    return bytes([0x90 | n]) if n < 16 else (b"\xdc" + _be(n, 2) if n < 1 << 16 else b"\xdd" + _be(n, 4))


def mp_encode(obj) -> bytes:
    if isinstance(obj, Raw):
        return bytes(obj)
    if isinstance(obj, (msgpack.ExtType, msgpack.Timestamp)):  # ExtType is a tuple: before lists
        return msgpack.packb(obj)
    if isinstance(obj, Pairs):
        return mp_map_header(len(obj)) + b"".join(mp_encode(k) + mp_encode(v) for k, v in obj)
    if isinstance(obj, dict):
        return mp_map_header(len(obj)) + b"".join(mp_encode(k) + mp_encode(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return mp_array_header(len(obj)) + b"".join(mp_encode(v) for v in obj)
    return msgpack.packb(obj, use_bin_type=True)
