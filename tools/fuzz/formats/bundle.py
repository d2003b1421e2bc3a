"""Uncompressed clang offload bundles: the entry table, a builder, and entry replacement."""

from __future__ import annotations

import struct

from ..fields import Inapplicable, align, get, put
from .elf import Rec

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def bundle_entries(data: bytes, start: int = 0) -> tuple[list[Rec], int]:
    """Entries of the bundle at ``start`` and its extent (offset just past its last byte)."""
    count = get(data, start + 24, 8)
    if count > 4096:
        raise Inapplicable("implausible bundle entry count")
    pos, out = start + 32, []
    extent = pos
    for i in range(count):
        offset, size, id_len = get(data, pos, 8), get(data, pos + 8, 8), get(data, pos + 16, 8)
        if id_len > 4096 or pos + 24 + id_len > len(data):
            raise Inapplicable("implausible bundle entry id")
        out.append(
            Rec(
                i,
                pos,
                {"offset": offset, "size": size, "id_length": id_len},
                data[pos + 24 : pos + 24 + id_len].decode("latin-1"),
            )
        )
        pos += 24 + id_len
        if size and start + offset + size > len(data):
            raise Inapplicable("bundle entry past the end")
        extent = max(extent, pos, start + offset + size)
    return out, extent


def build_bundle(entries: list[tuple[bytes, bytes]], alignment: int = 8) -> bytes:
    """An uncompressed bundle from (id, payload) pairs, payloads aligned."""
    header_size = 32 + sum(24 + len(i) for i, _ in entries)
    pos = align(header_size, alignment)
    table, body = b"", b""
    for entry_id, payload in entries:
        if payload:
            pos = align(pos, alignment)
        table += struct.pack("<QQQ", pos, len(payload), len(entry_id)) + entry_id
        gap = pos - (header_size + len(body)) if payload else 0
        body += b"\0" * max(gap, 0) + payload
        pos += len(payload)
    return BUNDLE_MAGIC + struct.pack("<Q", len(entries)) + table + body


def bundle_replace_entry(data: bytes, index: int, new: bytes) -> bytes:
    entries, _ = bundle_entries(data)
    e = entries[index]
    out = bytearray(data)
    if len(new) <= e.f["size"]:
        out[e.f["offset"] : e.f["offset"] + e.f["size"]] = new + b"\0" * (e.f["size"] - len(new))
    else:
        put(out, e.at, 8, align(len(out), 8))
        out += b"\0" * (align(len(out), 8) - len(out)) + new
    put(out, e.at + 8, 8, len(new))
    return bytes(out)
