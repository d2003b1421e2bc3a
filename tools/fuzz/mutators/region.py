"""Fat-binary region mutators: containers back to back, padded, cut, repeated, or followed by junk."""

from __future__ import annotations

from ..fields import Inapplicable
from ..formats import BITCODE_MAGICS
from ..formats.bundle import build_bundle
from ..formats.elf import ELF_MAGIC
from ..layers import split_region
from .registry import mutator


@mutator("region.layout", ("region",), 3.0)
def mut_region_layout(rng, data, ctx):
    pieces = split_region(data)
    if not pieces:
        raise Inapplicable("no containers")
    start, end = rng.choice(pieces)
    piece = data[start:end]
    op = rng.choice(["pad", "junk", "dup", "drop", "cut", "tail", "bitcode", "elf", "repeat"])
    if op == "pad":
        out = data[:start] + b"\0" * rng.choice([1, 7, 8, 4096]) + data[start:]
    elif op == "junk":
        out = data[:end] + rng.choice([b"\x01", b"\xff" * 8, b"__CLANG", b"CCOB", b"\x10\xff"]) + data[end:]
    elif op == "dup":
        out = data[:end] + piece + data[end:]
    elif op == "drop":
        out = data[:start] + data[end:]
    elif op == "cut":
        out = data[: rng.randrange(start, end)]
    elif op == "tail":
        out = data + piece[: rng.randrange(1, len(piece) + 1)]
    elif op == "bitcode":
        out = data + BITCODE_MAGICS[0] + b"\0" * 60
    elif op == "elf":
        out = data + ELF_MAGIC + b"\x02\x01\x01" + b"\0" * 60
    else:
        small = build_bundle([])
        out = data + small * rng.choice([100, 1000, 10000])
    return out, f"region {op} (container at {start:#x})"


@mutator("region.amplify", ("region",), 0.5, final=True)
def mut_region_amplify(rng, data, ctx):
    """Many containers back to back (each tiny), or one container repeated many times."""
    pieces = split_region(data)
    if not pieces:
        raise Inapplicable("no containers")
    start, end = rng.choice(pieces)
    piece = data[start:end]
    if rng.random() < 0.5:
        # Containers that cost nothing each: the count alone must not hurt.
        small = build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", b"")])
        count = rng.choice([1000, 30000, 70000])
        return data + small * count, f"{count} empty bundles appended"
    # Real containers repeated: linear work (and a CCOB expands about tenfold), so keep it small.
    count = max(1, min(rng.choice([10, 100, 1000]), (128 << 10) // max(len(piece), 1)))
    return data + piece * count, f"container at {start:#x} repeated {count} times"
