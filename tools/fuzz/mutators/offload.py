"""OffloadBinary mutators: header, entry, string map, and many strings into one."""

from __future__ import annotations

import struct

from ..fields import Inapplicable, align, get, interesting, put, with_field
from ..formats.offload import OFFLOAD_ENTRY, OFFLOAD_HEADER, OFFLOAD_MAGIC, offload_parse, offload_string
from .registry import mutator


@mutator("offload.header", ("offload",), 3.0)
def mut_offload_header(rng, data, ctx):
    name = rng.choice(list(OFFLOAD_HEADER))
    off, size = OFFLOAD_HEADER[name]
    orig = get(data, off, size)
    extra = {
        "version": [0, 1, 2, 0xFFFFFFFF],
        "size": [0, 31, 32, len(data), len(data) + 1, len(data) - 1],
        "entry_offset": [0, 8, 32, orig + 1, len(data) - 40, len(data) - 39, len(data), (1 << 64) - 1],
        "entry_size": [0, 39, 40, 41, (1 << 64) - 1],
    }[name]
    return with_field(rng, data, off, size, orig, len(data), extra, name)


@mutator("offload.entry", ("offload",), 3.0)
def mut_offload_entry(rng, data, ctx):
    info = offload_parse(data)
    name = rng.choice(list(OFFLOAD_ENTRY))
    off, size = OFFLOAD_ENTRY[name]
    orig = info["e"][name]
    extra = {
        "image_kind": [0, 1, 2, 3, 6, 7, 0xFFFF],
        "offload_kind": [0, 1, 2, 4, 5, 8, 15, 0xFFFF],
        "num_strings": [0, 1, orig - 1, orig + 1, 1 << 16, (1 << 16) + 1, (1 << 64) - 1, 1 << 60],
        "string_offset": [0, len(data), len(data) - 16, (1 << 64) - 1, 1 << 63],
        "image_offset": [0, len(data), len(data) - info["e"]["image_size"] + 1, (1 << 64) - 1],
        "image_size": [0, 1, len(data), (1 << 64) - 1, orig + 1],
    }.get(name, ())
    return with_field(rng, data, info["entry_at"] + off, size, orig, len(data), extra, f"entry {name}")


@mutator("offload.strings", ("offload",), 2.0)
def mut_offload_strings(rng, data, ctx):
    info = offload_parse(data)
    if not info["strings"]:
        raise Inapplicable("no strings")
    at, key, value = rng.choice(info["strings"])
    out = bytearray(data)
    op = rng.choice(["key", "value", "text", "unterminate"])
    if op in ("key", "value"):
        orig = key if op == "key" else value
        new = interesting(rng, 8, orig, len(data), [0, len(data) - 1, len(data), info["h"]["size"], (1 << 64) - 1])
        put(out, at + (0 if op == "key" else 8), 8, new)
        return bytes(out), f"string {op} offset={new:#x}"
    text_at = value if rng.random() < 0.7 else key
    old = offload_string(data, 0, text_at)
    if op == "text":
        new_text = rng.choice(
            [b"x86_64-unknown-linux-gnu", b"amdgcn-amd-amdhsa", b"\xff\xfe", b"", b"gfx9999", b"triple", b"arch"]
        )[: len(old)]
        out[text_at : text_at + len(old)] = new_text + b"\0" * (len(old) - len(new_text))
        return bytes(out), f"string at {text_at:#x}={new_text!r}"
    end = text_at + len(old)
    while end < len(out) and out[end] == 0:
        out[end] = 0x41
        end += 1
    return bytes(out), f"string at {text_at:#x} unterminated"


@mutator("offload.amplify", ("offload",), 1.0, final=True)
def mut_offload_amplify(rng, data, ctx):
    """A string map of many entries pointing into one long string."""
    info = offload_parse(data)
    e = info["e"]
    image = data[e["image_offset"] : e["image_offset"] + e["image_size"]]
    count = rng.choice([100, 4096, 65536])
    length = rng.choice([4 << 10, 64 << 10, 1 << 20])
    count = min(count, (2 << 20) // 16)
    distinct = rng.random() < 0.5
    strings_at = 72
    long_at = strings_at + 16 * count
    pairs = [
        (long_at + (i % length if distinct else 0), long_at + ((i * 7) % length if distinct else 0))
        for i in range(count)
    ]
    image_at = align(long_at + length + 1, 8)
    size = align(image_at + len(image), 8)
    out = (
        OFFLOAD_MAGIC
        + struct.pack("<IQQQ", 1, size, 32, 40)
        + struct.pack(
            "<HHIQQQQ", e["image_kind"], e["offload_kind"], e["flags"], strings_at, count, image_at, len(image)
        )
        + b"".join(struct.pack("<QQ", k, v) for k, v in pairs)
        + b"T" * length
        + b"\0"
    )
    out += b"\0" * (image_at - len(out)) + image
    out += b"\0" * (size - len(out))
    return out, f"{count} strings into one {length}-byte string ({'distinct' if distinct else 'same'} offsets)"
