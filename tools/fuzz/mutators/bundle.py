"""Offload bundle mutators: header, entry table, entry ids, layout, and shared payloads."""

from __future__ import annotations

import struct

from ..fields import Inapplicable, align, put, with_field
from ..formats.bundle import BUNDLE_MAGIC, build_bundle, bundle_entries
from ..formats.offload import OFFLOAD_MAGIC
from .registry import mutator


@mutator("bundle.header", ("bundle",), 3.0)
def mut_bundle_header(rng, data, ctx):
    entries, _ = bundle_entries(data)
    n = len(entries)
    if rng.random() < 0.15:
        at = rng.randrange(24)
        out = data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]
        return out, f"magic byte {at} changed"
    return with_field(
        rng,
        data,
        24,
        8,
        n,
        None,
        [0, 1, n - 1, n + 1, 2 * n, 0xFFFF, 1 << 16, (1 << 16) + 1, 1 << 32, (1 << 64) - 1],
        "entry count",
    )


@mutator("bundle.entry", ("bundle",), 4.0)
def mut_bundle_entry(rng, data, ctx):
    entries, _ = bundle_entries(data)
    if not entries:
        raise Inapplicable("no entries")
    e = rng.choice(entries)
    name = rng.choice(["offset", "size", "id_length"])
    off = {"offset": 0, "size": 8, "id_length": 16}[name]
    others = [x.f["offset"] for x in entries]
    extra = {
        "offset": [
            *others,
            0,
            1,
            24,
            31,
            32,
            len(data),
            len(data) - e.f["size"],
            len(data) - e.f["size"] + 1,
            e.f["offset"] + 1,
            (1 << 64) - 1,
            (1 << 64) - e.f["size"],
        ],
        "size": [
            0,
            1,
            63,
            64,
            e.f["size"] - 1,
            e.f["size"] + 1,
            len(data) - e.f["offset"],
            len(data) - e.f["offset"] + 1,
            (1 << 64) - 1,
        ],
        "id_length": [0, 1, e.f["id_length"] - 1, e.f["id_length"] + 1, 4096, 4097, len(data), (1 << 64) - 1],
    }[name]
    return with_field(rng, data, e.at + off, 8, e.f[name], len(data), extra, f"entry {e.index} ({e.name}) {name}")


ENTRY_IDS = [
    b"host-x86_64-unknown-linux-gnu-",
    b"hipv4-amdgcn-amd-amdhsa--gfx942",
    b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
    b"hipv4-amdgcn-amd-amdhsa--gfx9999",
    b"openmp-amdgcn-amd-amdhsa--gfx90a",
    b"hipv4-amdgcn-amd-amdhsa-",
    b"hipv4-nvptx64-nvidia-cuda--sm_90",
    b"amdgcn-amd-amdhsa",
    b"",
    b"-",
    b"\xff\xfe",
    b"hipv4-amdgcn-amd-amdhsa--\xff",
    b"hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-:xnack+",
    b"host-amdgcn-amd-amdhsa--gfx942",
]


@mutator("bundle.id", ("bundle",), 2.0)
def mut_bundle_id(rng, data, ctx):
    entries, _ = bundle_entries(data)
    if not entries:
        raise Inapplicable("no entries")
    pairs = [(e.name.encode("latin-1"), data[e.f["offset"] : e.f["offset"] + e.f["size"]]) for e in entries]
    i = rng.randrange(len(pairs))
    new_id = rng.choice(ENTRY_IDS)
    pairs[i] = (new_id, pairs[i][1])
    return build_bundle(pairs), f"entry {i} id={new_id!r}"


@mutator("bundle.layout", ("bundle",), 2.0)
def mut_bundle_layout(rng, data, ctx):
    entries, _ = bundle_entries(data)
    pairs = [(e.name.encode("latin-1"), data[e.f["offset"] : e.f["offset"] + e.f["size"]]) for e in entries]
    op = rng.choice(["drop", "dup", "swap", "overlap", "empty", "many", "junk-tail", "nested"])
    if op == "drop" and pairs:
        del pairs[rng.randrange(len(pairs))]
    elif op == "dup" and pairs:
        pairs.insert(rng.randrange(len(pairs) + 1), rng.choice(pairs))
    elif op == "swap" and len(pairs) > 1:
        rng.shuffle(pairs)
    elif op == "empty":
        pairs = []
    elif op == "many" and pairs:
        pairs = pairs + [rng.choice(pairs)] * rng.choice([8, 64, 200])
    elif op == "nested" and pairs:
        i = rng.randrange(len(pairs))
        pairs[i] = (b"hipv4-amdgcn-amd-amdhsa--gfx942", build_bundle(pairs))
    out = build_bundle(pairs)
    if op == "overlap" and len(entries) > 1:
        # Point one entry at another's bytes: two entries, one payload.
        a, b = rng.sample(range(len(entries)), 2)
        ea, eb = bundle_entries(out)[0][a], bundle_entries(out)[0][b]
        buf = bytearray(out)
        put(buf, ea.at, 8, eb.f["offset"])
        put(buf, ea.at + 8, 8, eb.f["size"])
        out = bytes(buf)
    elif op == "junk-tail":
        out += rng.choice([b"\x01" * 8, BUNDLE_MAGIC, b"CCOB\x03\x00", OFFLOAD_MAGIC, b"\0" * 100 + b"x"])
    return out, f"layout {op} ({len(pairs)} entries)"


@mutator("bundle.amplify", ("bundle",), 1.0, final=True)
def mut_bundle_amplify(rng, data, ctx):
    """Many entries that all point at one payload."""
    entries, _ = bundle_entries(data)
    full = [e for e in entries if e.f["size"]]
    if not full:
        raise Inapplicable("no payloads")
    e = rng.choice(full)
    payload = data[e.f["offset"] : e.f["offset"] + e.f["size"]]
    entry_id = e.name.encode("latin-1")
    count = rng.choice([100, 1000, 10000, 65536])
    count = min(count, (4 << 20) // (24 + len(entry_id)))
    header = 32 + count * (24 + len(entry_id))
    at = align(header, 8)
    sizes = [len(payload)] * count if rng.random() < 0.5 else [len(payload) - (i % 64) for i in range(count)]
    table = b"".join(struct.pack("<QQQ", at, size, len(entry_id)) + entry_id for size in sizes)
    out = BUNDLE_MAGIC + struct.pack("<Q", count) + table
    return out + b"\0" * (at - len(out)) + payload, f"{count} entries sharing one {len(payload)}-byte payload"
