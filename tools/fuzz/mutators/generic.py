"""Byte mutators for any layer: flips, set bytes, words, insertions, deletions, truncation,
splices from other fixtures, repeats."""

from __future__ import annotations

from ..fields import Inapplicable, get, with_field
from .registry import ANY, mutator


def _position(rng, data: bytes) -> int:
    if not data:
        raise Inapplicable("empty")
    if rng.random() < 0.3:
        return rng.randrange(min(len(data), 256))
    return rng.randrange(len(data))


@mutator("bytes.flip", (ANY,), 1.0)
def mut_bytes_flip(rng, data, ctx):
    out = bytearray(data)
    spots = []
    for _ in range(rng.randint(1, 8)):
        at = _position(rng, out)
        out[at] ^= 1 << rng.randrange(8)
        spots.append(at)
    return bytes(out), "bits at " + ",".join(f"{a:#x}" for a in spots)


@mutator("bytes.set", (ANY,), 1.0)
def mut_bytes_set(rng, data, ctx):
    out = bytearray(data)
    spots = []
    for _ in range(rng.randint(1, 4)):
        at = _position(rng, out)
        out[at] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, 0x20, 0x40])
        spots.append(at)
    return bytes(out), "bytes at " + ",".join(f"{a:#x}" for a in spots)


@mutator("bytes.word", (ANY,), 1.0)
def mut_bytes_word(rng, data, ctx):
    size = rng.choice([2, 4, 8])
    if len(data) < size:
        raise Inapplicable("too short")
    at = rng.randrange(len(data) - size + 1)
    if rng.random() < 0.6:
        at -= at % size
    return with_field(rng, data, at, size, get(data, at, size), len(data), label=f"u{8 * size} at {at:#x}")


@mutator("bytes.insert", (ANY,), 1.0)
def mut_bytes_insert(rng, data, ctx):
    at = rng.randrange(len(data) + 1)
    n = rng.choice([1, 2, 4, 8, 16, 64, 512])
    chunk = bytes(n) if rng.random() < 0.5 else bytes(rng.getrandbits(8) for _ in range(n))
    return data[:at] + chunk + data[at:], f"{n} bytes inserted at {at:#x}"


@mutator("bytes.delete", (ANY,), 1.0)
def mut_bytes_delete(rng, data, ctx):
    at = _position(rng, data)
    n = rng.choice([1, 2, 4, 8, 64, 256, 4096])
    return data[:at] + data[at + n :], f"{n} bytes deleted at {at:#x}"


@mutator("bytes.truncate", (ANY,), 1.0)
def mut_bytes_truncate(rng, data, ctx):
    if not data:
        raise Inapplicable("empty")
    cut = rng.randrange(min(len(data), 512)) if rng.random() < 0.3 else rng.randrange(len(data))
    return data[:cut], f"truncated to {cut:#x}"


@mutator("bytes.splice", (ANY,), 0.5)
def mut_bytes_splice(rng, data, ctx):
    donor = rng.choice(ctx.donors)
    n = rng.choice([8, 64, 512, 4096])
    src = rng.randrange(max(1, len(donor) - n))
    at = rng.randrange(len(data) + 1)
    return data[:at] + donor[src : src + n] + data[at + n :], f"{n} bytes of another fixture at {at:#x}"


@mutator("bytes.repeat", (ANY,), 0.5)
def mut_bytes_repeat(rng, data, ctx):
    at = _position(rng, data)
    n = rng.choice([4, 16, 64, 1024])
    chunk = data[at : at + n]
    return data[:at] + chunk * rng.choice([2, 4, 16]) + data[at:], f"{n} bytes at {at:#x} repeated"
