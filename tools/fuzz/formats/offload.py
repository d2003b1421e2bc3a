"""LLVM OffloadBinary: header, entry and string map, and image replacement."""

from __future__ import annotations

from ..fields import Inapplicable, align, get, put

OFFLOAD_MAGIC = b"\x10\xff\x10\xad"


OFFLOAD_HEADER = {"version": (4, 4), "size": (8, 8), "entry_offset": (16, 8), "entry_size": (24, 8)}
OFFLOAD_ENTRY = {
    "image_kind": (0, 2),
    "offload_kind": (2, 2),
    "flags": (4, 4),
    "string_offset": (8, 8),
    "num_strings": (16, 8),
    "image_offset": (24, 8),
    "image_size": (32, 8),
}


def offload_parse(data: bytes, start: int = 0) -> dict:
    h = {k: get(data, start + o, s) for k, (o, s) in OFFLOAD_HEADER.items()}
    if h["size"] < 32 or start + h["size"] > len(data):
        raise Inapplicable("OffloadBinary size lies")
    entry_at = start + h["entry_offset"]
    e = {k: get(data, entry_at + o, s) for k, (o, s) in OFFLOAD_ENTRY.items()}
    if e["num_strings"] > 256:
        raise Inapplicable("too many strings")
    strings = []
    for i in range(e["num_strings"]):
        at = start + e["string_offset"] + 16 * i
        key, value = get(data, at, 8), get(data, at + 8, 8)
        strings.append((at, key, value))
    return {
        "h": h,
        "e": e,
        "entry_at": entry_at,
        "strings": strings,
        "extent": min(start + align(h["size"], 8), len(data)),
    }


def offload_string(data: bytes, start: int, offset: int) -> bytes:
    at = start + offset
    end = data.find(b"\0", at)
    if at >= len(data) or end < 0:
        raise Inapplicable("bad OffloadBinary string")
    return data[at:end]


def offload_replace_image(data: bytes, new: bytes) -> bytes:
    info = offload_parse(data)
    e, at = info["e"], info["entry_at"]
    out = bytearray(data[: info["h"]["size"]])
    if len(new) <= e["image_size"]:
        off = e["image_offset"]
        out[off : off + e["image_size"]] = new + b"\0" * (e["image_size"] - len(new))
    else:
        off = align(len(out), 8)
        out += b"\0" * (off - len(out)) + new
        put(out, at + 24, 8, off)
    put(out, at + 32, 8, len(new))
    out += b"\0" * (align(len(out), 8) - len(out))
    put(out, 8, 8, len(out))
    return bytes(out)
