"""Compressed bundle mutators: header fields, the stream itself, rewrapping, and bombs.

Decompression bombs are bounded by ``Limits.max_decompressed`` (1 GiB by default, seconds to
inflate by design), so the bomb stays at 16 MiB and measures the cost per byte instead.
"""

from __future__ import annotations

import struct

from ..fields import Inapplicable, get, interesting, with_field
from ..formats.bundle import BUNDLE_MAGIC, build_bundle
from ..formats.ccob import CCOB_FIELDS, CCOB_HEADER, build_ccob, ccob_parse, compress, md5_low64
from ..formats.elf import ELF_MAGIC
from .registry import mutator


@mutator("ccob.header", ("ccob",), 3.0)
def mut_ccob_header(rng, data, ctx):
    version = get(data, 4, 2)
    fields = CCOB_FIELDS.get(version, CCOB_FIELDS[3])
    name = rng.choice([*fields, "magic"])
    if name == "magic":
        return b"CCOC" + data[4:], "magic=CCOC"
    off, size = fields[name]
    orig = get(data, off, size)
    extra = {
        "version": [0, 1, 2, 3, 4, 0xFFFF],
        "method": [0, 1, 2, 3, 0xFFFF],
        "total_size": [0, 1, 8, 19, 20, 23, 24, 31, 32, len(data), len(data) + 1, len(data) - 1],
        "uncompressed_size": [0, 1, orig - 1, orig + 1, 2 * orig, 1 << 30, (1 << 30) + 1, 1 << 31],
        "hash": [0, orig ^ 1, orig ^ (1 << 63)],
    }[name]
    return with_field(rng, data, off, size, orig, len(data), extra, name)


@mutator("ccob.stream", ("ccob",), 2.0)
def mut_ccob_stream(rng, data, ctx):
    version = get(data, 4, 2)
    start = CCOB_HEADER.get(version, CCOB_HEADER[3])[1]
    if len(data) <= start + 1:
        raise Inapplicable("no stream")
    op = rng.choice(["flip", "truncate", "zero", "append"])
    out = bytearray(data)
    if op == "flip":
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(start, len(out))
            out[at] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        out = out[: rng.randrange(start, len(out))]
    elif op == "zero":
        at = rng.randrange(start, len(out))
        n = min(rng.randint(1, 64), len(out) - at)
        out[at : at + n] = bytes(n)
    else:
        out += rng.choice([b"\0" * 8, b"\x01\x02\x03", bytes(data[start : start + 32])])
    return bytes(out), f"stream {op}"


@mutator("ccob.rewrap", ("ccob",), 3.0)
def mut_ccob_rewrap(rng, data, ctx):
    version, method, payload, _ = ccob_parse(data)
    version = rng.choice([version, 1, 2, 3])
    method = rng.choice([method, 0, 1])
    op = rng.choice(["plain", "declared", "total", "hash", "payload", "stream-of-other"])
    kwargs, detail = {}, ""
    if op == "declared":
        kwargs["declared"] = interesting(
            rng,
            8 if version == 3 else 4,
            len(payload),
            None,
            [0, 1, len(payload) - 1, len(payload) + 1, len(payload) * 2],
        )
        detail = f" declared={kwargs['declared']:#x}"
    elif op == "total" and version > 1:
        kwargs["total_delta"] = rng.choice([-1, 1, -8, 8, -(1 << 20), 1 << 20])
        detail = f" total{kwargs['total_delta']:+d}"
    elif op == "hash":
        kwargs["digest"] = md5_low64(payload) ^ (1 << rng.randrange(64))
    elif op == "payload":
        # A payload that is not exactly one bundle, with a correct hash: reaches the region scanner.
        payload = rng.choice(
            [
                payload + b"\0" * rng.randint(1, 64) + payload,
                payload[: rng.randrange(len(payload))],
                b"\0" * 16 + payload,
                payload + b"junk",
                b"",
                b"CCOB" + payload,
                build_ccob(version, method, payload),
                ELF_MAGIC + payload[4:],
            ]
        )
        detail = f" payload of {len(payload)} bytes"
    elif op == "stream-of-other":
        kwargs["stream"] = compress(1 - method, payload)
        detail = " stream in the other method"
    return build_ccob(version, method, payload, **kwargs), f"v{version} {'zstd' if method else 'zlib'} {op}{detail}"


@mutator("ccob.bomb", ("ccob",), 0.3, final=True)
def mut_ccob_bomb(rng, data, ctx):
    """A payload that compresses to almost nothing: declared honestly or not, hashed or not."""
    size = rng.choice([1 << 20, 4 << 20, 16 << 20])
    version, method = rng.choice([1, 2, 3]), rng.choice([0, 1])
    payload = BUNDLE_MAGIC + struct.pack("<Q", 0) + b"\0" * (size - 32)
    if rng.random() < 0.5:
        payload += build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", b"")])
    how = rng.choice(["honest", "small", "large"])
    declared = {"honest": len(payload), "small": 4096, "large": len(payload) * 4}[how]
    return build_ccob(version, method, payload, declared=declared), f"{size >> 20} MiB of zeros, {how} size"
