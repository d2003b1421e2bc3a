"""Archive mutators: ar member headers (size, name, terminator) and tar headers (size with its
checksum kept right or not, type, long names and pax records that lie)."""

from __future__ import annotations

from ..fields import Inapplicable
from ..formats.archives import ar_members, tar_members
from .registry import mutator


def _tar_checksum(block: bytearray) -> None:
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\0 ".encode()


@mutator("ar.header", ("ar",), 3.0)
def mut_ar_header(rng, data, ctx):
    members = ar_members(data)
    if not members:
        raise Inapplicable("no members")
    m = rng.choice(members)
    out = bytearray(data)
    field = rng.choice(["size", "name", "terminator"])
    if field == "size":
        size = m.f["size"]
        value = rng.choice(
            [
                b"0",
                str(size - 1).encode(),
                str(size + 1).encode(),
                str(len(data)).encode(),
                b"9999999999",
                b"12ab",
                b"-1",
            ]
        )
        out[m.at + 48 : m.at + 58] = value.ljust(10)[:10]
        return bytes(out), f"member {m.name!r} size field {value!r}"
    if field == "name":
        value = rng.choice([b"/", b"//", b"/999999", b"/" + str(len(data)).encode(), b"#1/999999", b"#1/abc", b"#1/0"])
        out[m.at : m.at + 16] = value.ljust(16)
        return bytes(out), f"member {m.name!r} name field {value!r}"
    out[m.at + 58 : m.at + 60] = bytes(rng.randrange(256) for _ in range(2))
    return bytes(out), f"member {m.name!r} header terminator changed"


@mutator("tar.header", ("tar",), 4.0)
def mut_tar_header(rng, data, ctx):
    members = tar_members(data)
    if not members:
        raise Inapplicable("no members")
    m = rng.choice(members)
    block = bytearray(data[m.at : m.at + 512])
    if len(block) < 512:
        raise Inapplicable("header cut short")
    field = rng.choice(["size", "size-base256", "type", "checksum", "name"])
    keep_checksum = rng.random() < 0.8
    size = m.f["size"]
    if field == "size":
        value = rng.choice([0, 1, size - 512, size - 1, size + 1, size + 512, len(data), 8**11 - 1])
        block[124:136] = f"{max(value, 0):011o}\0".encode()[:12]
        what = f"size {value}"
    elif field == "size-base256":
        value = rng.choice([size, 1 << 40, (1 << 88) - 1])
        block[124:136] = bytes([0x80]) + value.to_bytes(11, "big")
        what = f"base-256 size {value}"
    elif field == "type":
        kind = rng.choice([b"L", b"K", b"x", b"g", b"5", b"2", b"1", b"S", b"7", b"Z"])
        block[156:157] = kind
        what = f"type {kind!r}"
    elif field == "checksum":
        block[148:156] = rng.choice([b"0000000\0", b"zzzzzzz\0", b"        ", b"7777777\0"])
        keep_checksum = False
        what = "checksum"
    else:
        block[0:100] = rng.choice([b"", b"\xff" * 99, b"a/" * 49]).ljust(100, b"\0")
        what = "name"
    if keep_checksum:
        _tar_checksum(block)
    return data[: m.at] + bytes(block) + data[m.at + 512 :], f"member {m.name!r} {what}"


@mutator("tar.pax", ("tar",), 2.0)
def mut_tar_pax(rng, data, ctx):
    """A pax extended header, its records hostile, in front of a member."""
    members = tar_members(data)
    if not members:
        raise Inapplicable("no members")
    m = rng.choice(members)
    record = rng.choice(
        [b"size=999999999999", b"size=-5", b"size=abc", b"path=" + b"x" * 300, b"path=", b"broken", b""]
    )
    body = (f"{len(record) + 4 + len(str(len(record)))} ".encode() + record + b"\n") if record else b"9 x\n"
    if rng.random() < 0.3:
        body = rng.choice([b"99999 size=1\n", b"abc size=1\n", b"0 \n"])
    header = bytearray(512)
    header[0:14] = b"././@PaxHeader"
    header[100:108] = b"0000644\0"
    header[124:136] = f"{len(body):011o}\0".encode()
    header[156:157] = b"x"
    header[257:265] = b"ustar\x0000"
    _tar_checksum(header)
    padded = body + b"\0" * (-len(body) % 512)
    return data[: m.at] + bytes(header) + padded + data[m.at :], f"pax record {record[:20]!r} before {m.name!r}"
