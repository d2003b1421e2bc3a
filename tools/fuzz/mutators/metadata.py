"""Metadata mutators: the MessagePack map of code-object v3+ and the YAML text of v2.

MessagePack: type confusion, odd keys (non-string, unhashable, invalid UTF-8), deep nesting,
lying lengths, extension types, truncation and trailing bytes, aimed at the keys amdocc reads
more often than at the long ``.args`` lists. YAML: escapes, deep flow and block nesting, tabs,
odd scalars, quoting and indentation, within the subset amdocc's reader accepts.
"""

from __future__ import annotations

import math
import random
import re

import msgpack

from ..fields import Inapplicable
from ..formats.elf import ElfView, install_desc, metadata_note
from ..formats.metadata import Pairs, Raw, mp_encode
from .registry import mutator

# Keys amdocc reads; mutations aim at them more often than at the long .args lists.
KERNEL_KEYS = (
    ".name",
    ".symbol",
    ".vgpr_count",
    ".agpr_count",
    ".sgpr_count",
    ".group_segment_fixed_size",
    ".private_segment_fixed_size",
    ".kernarg_segment_size",
    ".wavefront_size",
    ".max_flat_workgroup_size",
    ".workgroup_processor_mode",
    ".uses_dynamic_stack",
    ".sgpr_spill_count",
    ".vgpr_spill_count",
    ".reqd_workgroup_size",
    ".kernarg_segment_align",
    ".uniform_work_group_size",
    ".args",
)
TOP_KEYS = ("amdhsa.version", "amdhsa.target", "amdhsa.kernels", "amdhsa.printf")


def hostile_value(rng: random.Random, depth: int = 0):
    """A value of the wrong type, an edge value of the right one, or something msgpack-exotic."""
    roll = rng.randrange(12)
    if roll == 0:
        return rng.choice(
            [0, -1, 1, 2**31, 2**32, 2**63 - 1, -(2**63), 2**64 - 1, 1024, 1025, 65536, rng.randint(-5000, 5000)]
        )
    if roll == 1:
        return rng.choice(
            [
                "",
                "12",
                "0x10",
                "-1",
                "gfx942",
                "amdgcn-amd-amdhsa--gfx942:xnack+",
                "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-:foo+",
                "gfx9999",
                ":",
                "+",
                "a" * rng.choice([1, 64, 5000]),
                "\x00",
                "\u202e\u0301",
                "x.kd",
                ".kd",
                "𝔤𝔣𝔵",
            ]
        )
    if roll == 2:
        return rng.choice([math.nan, math.inf, -math.inf, -0.0, 1.5, 1e308, 5e-324, 64.0, 256.0])
    if roll == 3:
        return rng.choice([True, False, None])
    if roll == 4:
        return rng.choice([b"", b"\xff\x00", b"gfx942", bytes(rng.getrandbits(8) for _ in range(8))])
    if roll == 5 and depth < 3:
        return [hostile_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 3, 8]))]
    if roll == 6:
        return rng.choice([[], [1, 2, 3], [0], [-1, 2**64 - 1, 7], [256, 1, 1], [1024, 1024, 1024], ["1", "1", "1"]])
    if roll == 7 and depth < 3:
        return {rng.choice(KERNEL_KEYS): hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    if roll == 8:
        return Pairs(
            [
                (rng.choice([1, -1, None, True, 1.5, b"k", "k", 2**64 - 1]), hostile_value(rng, depth + 1))
                for _ in range(rng.randint(1, 3))
            ]
        )
    if roll == 9:
        return rng.choice(
            [
                msgpack.ExtType(rng.randrange(128), b"\x01\x02"),
                msgpack.ExtType(0, b""),
                msgpack.Timestamp(rng.randrange(1 << 34), rng.randrange(10**9)),
                msgpack.Timestamp(-1, 0),
            ]
        )
    if roll == 10:
        return Raw(
            rng.choice(
                [
                    b"\xa2\xff\xfe",
                    b"\xa3\xed\xa0\x80",
                    b"\xa2\xc0\x80",
                    b"\xc1",
                    b"\xd4\x05\x01",
                    b"\xc7\x00\x07",
                    b"\xd6\xff\xff\xff\xff\xff",
                    b"\xd7\xff" + b"\xff" * 8,
                    b"\xc7\x0c\xff" + b"\x7f" * 12,
                ]
            )
        )
    return rng.choice([0, 1, 64, 32, 256, "x", None])


def _nodes(obj, path=(), out=None, depth=0):
    """(parent, key, path) of every node below ``obj``."""
    if out is None:
        out = []
    if depth > 64:
        return out
    if isinstance(obj, dict):
        for k in list(obj):
            out.append((obj, k, (*path, k)))
            _nodes(obj[k], (*path, k), out, depth + 1)
    elif isinstance(obj, list):
        for i in range(len(obj)):
            out.append((obj, i, (*path, i)))
            _nodes(obj[i], (*path, i), out, depth + 1)
    return out


def _important(nodes):
    keep = []
    for parent, key, path in nodes:
        read_key = isinstance(key, str) and (key in TOP_KEYS or key in KERNEL_KEYS) and ".args" not in path[:-1]
        kernel_entry = len(path) == 2 and path[0] == "amdhsa.kernels"
        if read_key or kernel_entry:
            keep.append((parent, key, path))
    return keep


def _deep(rng, leaf) -> Raw:
    n = rng.choice([16, 200, 500, 999, 1000, 1024, 1025, 3000, 100000])
    if rng.random() < 0.5:
        return Raw(b"\x91" * n + mp_encode(leaf))
    return Raw(b"\x81\xa1k" * n + mp_encode(leaf))


def _huge_length(rng) -> Raw:
    return Raw(
        rng.choice(
            [
                b"\xdd\xff\xff\xff\xff\x01",
                b"\xdf\xff\xff\xff\xff\xa1k\x01",
                b"\xdb\xff\xff\xff\xf0abc",
                b"\xc6\x7f\xff\xff\xff\x00",
                b"\xdc\xff\xff",
                b"\xde\x00\x20\xa1a\x01",
                b"\xc9\xff\xff\xff\xff\x05",
                b"\xd9\xff",
            ]
        )
    )


def mutate_msgpack_tree(rng, obj):
    """One change to a decoded metadata map; returns (new tree, description)."""
    nodes = _nodes(obj)
    important = _important(nodes)
    pick = important if important and rng.random() < 0.7 else nodes
    op = rng.choice(["retype", "retype", "retype", "rekey", "drop", "add", "dup", "deep", "huge", "root", "ext"])
    if op == "root":
        value = rng.choice([[], [obj], 0, "amdhsa", None, b"", Pairs([(1, obj)]), _deep(rng, {})])
        return value, f"root={type(value).__name__}"
    if not pick:
        raise Inapplicable("empty metadata")
    parent, key, path = rng.choice(pick)
    where = "/".join(map(str, path))
    if op == "retype":
        value = hostile_value(rng)
        parent[key] = value
        return obj, f"{where}={short(value)}"
    if op == "ext":
        parent[key] = msgpack.ExtType(rng.randrange(128), b"\x00" * rng.randint(0, 9))
        return obj, f"{where}=ExtType"
    if op == "deep":
        parent[key] = _deep(rng, parent[key] if not isinstance(parent[key], (dict, list)) else 0)
        return obj, f"{where}=deeply nested"
    if op == "huge":
        parent[key] = _huge_length(rng)
        return obj, f"{where}=huge length header {bytes(parent[key])[:6].hex()}"
    if op == "drop":
        del parent[key]
        return obj, f"drop {where}"
    if op == "dup":
        if isinstance(parent, list):
            parent.extend([parent[key]] * rng.choice([1, 2, 16, 64]))
            return obj, f"duplicate {where}"
        raise Inapplicable("dup needs a list")
    if op == "add":
        if not isinstance(parent, dict):
            raise Inapplicable("add needs a map")
        new_key = rng.choice(KERNEL_KEYS + TOP_KEYS)
        parent[new_key] = hostile_value(rng)
        return obj, f"{where}: add {new_key}={short(parent[new_key])}"
    # rekey: a map key of another type (non-str, unhashable, invalid UTF-8)
    if not isinstance(parent, dict):
        raise Inapplicable("rekey needs a map")
    items = [(k, v) for k, v in parent.items()]
    index = next(i for i, (k, _) in enumerate(items) if k == key)
    new_key = rng.choice(
        [
            1,
            -1,
            None,
            True,
            1.5,
            b".symbol",
            Raw(b"\x92\x01\x02"),
            Raw(b"\x81\x01\x02"),
            Raw(b"\xa2\xff\xfe"),
            msgpack.ExtType(1, b"k"),
            key.upper() if isinstance(key, str) else "k",
            Raw(b"\xc1"),
        ]
    )
    items[index] = (new_key, items[index][1])
    new = Pairs(items)
    if len(path) == 1:
        return new, f"rekey {where} -> {short(new_key)}"
    grand = _locate(obj, path[:-2])
    grand[path[-2]] = new
    return obj, f"rekey {where} -> {short(new_key)}"


def _locate(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@mutator("elf.msgpack", ("co",), 6.0)
def mut_elf_msgpack(rng, data, ctx):
    elf = ElfView(data)
    section, notes, note = metadata_note(elf, "AMDGPU", 32)
    try:
        tree = msgpack.unpackb(note.f["desc"], raw=False, strict_map_key=False)
    except Exception:
        raise Inapplicable("metadata already unreadable") from None
    roll = rng.random()
    if roll < 0.75:
        tree, detail = mutate_msgpack_tree(rng, tree)
        desc = mp_encode(tree)
    else:
        desc = mp_encode(tree)
        how = rng.choice(["truncate", "trailing", "byte", "utf8"])
        if how == "truncate":
            cut = rng.randrange(len(desc))
            desc, detail = desc[:cut], f"truncated at {cut}"
        elif how == "trailing":
            desc, detail = desc + rng.choice([b"\x00", b"\xc1", b"\x81\xa1a\x01", b"\xdd"]), "trailing bytes"
        elif how == "byte":
            at = rng.randrange(len(desc))
            value = rng.choice([0xC1, 0xDD, 0xDF, 0xDB, 0xC6, 0xD9, 0xC7, 0xD4, 0xFF, 0x00, 0x80, 0x90])
            desc = desc[:at] + bytes([value]) + desc[at + 1 :]
            detail = f"byte {at}={value:#x}"
        else:
            strings = [m.start() for m in re.finditer(rb"[\xa1-\xbf][.a-z]", desc)]
            if not strings:
                raise Inapplicable("no short strings")
            at = rng.choice(strings) + 1
            desc = desc[:at] + b"\xff" + desc[at + 1 :]
            detail = f"invalid UTF-8 at {at}"
    return install_desc(data, elf, section, notes, note, desc), detail


# CO v2 YAML metadata --------------------------------------------------------------------------


@mutator("elf.yaml", ("co",), 6.0)
def mut_elf_yaml(rng, data, ctx):
    elf = ElfView(data)
    section, notes, note = metadata_note(elf, "AMD", 10)
    lines = note.f["desc"].rstrip(b"\0").split(b"\n")
    op = rng.choice(["escape", "flow", "block", "tab", "line", "int", "quote", "utf8", "value", "dash", "indent"])
    i = rng.randrange(len(lines))
    line = lines[i]
    indent = len(line) - len(line.lstrip(b" "))
    key = line.split(b":", 1)[0] if b":" in line else b"  Key"
    if op == "escape":
        lines[i] = (
            key
            + b": "
            + rng.choice(
                [
                    b'"\\x"',
                    b'"\\u12"',
                    b'"\\N{nope}"',
                    b'"\\',
                    b'"a\\"',
                    b'"\\U0011ffff"',
                    b'"\\777"',
                    b"'it''s'",
                    b'"\\x4"',
                ]
            )
        )
    elif op == "flow":
        n = rng.choice([3, 100, 999, 5000, 50000])
        lines[i] = key + b": " + b"[" * n + b"1" + b"]" * n
    elif op == "block":
        n = rng.choice([10, 63, 64, 65, 500, 3000])
        lines[i + 1 : i + 1] = [
            b" " * (indent + 1 + d) + b"k: " if d < n - 1 else b" " * (indent + 1 + d) + b"k: 1" for d in range(n)
        ]
        lines[i] = key + b":"
    elif op == "tab":
        lines[i] = b"\t" + line
    elif op == "line":
        j = rng.randrange(len(lines))
        how = rng.choice(["drop", "dup", "swap"])
        if how == "drop":
            del lines[i]
        elif how == "dup":
            lines.insert(i, line)
        else:
            lines[i], lines[j] = lines[j], lines[i]
    elif op == "int":
        lines[i] = (
            key
            + b": "
            + rng.choice(
                [
                    b"9" * 5000,
                    b"0x" + b"f" * 40,
                    b"-1",
                    b"0b2",
                    b"1_000",
                    b"0o777",
                    b"18446744073709551616",
                    b"1e400",
                    b".inf",
                    b"-0",
                ]
            )
        )
    elif op == "quote":
        lines[i] = key + b": " + rng.choice([b"'abc", b'"abc', b"'", b'"', b"''", b"'a'b'", b'"a"b"'])
    elif op == "utf8":
        at = rng.randrange(len(line) + 1)
        lines[i] = line[:at] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\x00"]) + line[at:]
    elif op == "value":
        lines[i] = (
            key
            + b": "
            + rng.choice(
                [
                    b"abc",
                    b"true",
                    b"~",
                    b"null",
                    b"[ 1, 2 ]",
                    b"[ ]",
                    b"[",
                    b"]",
                    b"{ a: 1 }",
                    b"- x",
                    b"&anchor",
                    b"*alias",
                    b"!!str 5",
                    b"[ [ 1 ] ]",
                    b"''",
                ]
            )
        )
    elif op == "dash":
        lines[i] = b" " * indent + rng.choice(
            [b"- - - x", b"-x", b"- ", b"-", b"- 'a': 1", b"- a: b: c", b": x", b"? complex", b"- [ 1, 2 ]"]
        )
    else:
        delta = rng.choice([-4, -2, -1, 1, 2, 4, 40])
        lines[i] = b" " * max(0, indent + delta) + line.lstrip(b" ")
    desc = b"\n".join(lines) + b"\n\0"
    return install_desc(data, elf, section, notes, note, desc), f"YAML {op} at line {i + 1}"
