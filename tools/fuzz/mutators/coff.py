"""PE/COFF mutators: file header, section table, long names, and many sections over one."""

from __future__ import annotations

from ..fields import Inapplicable, align, get, interesting, put, with_field
from ..formats import FATBIN_SECTIONS
from ..formats.coff import COFF_HEADER, COFF_SECTION, coff_view
from .registry import mutator


@mutator("coff.header", ("coff",), 3.0)
def mut_coff_header(rng, data, ctx):
    at, h, sections = coff_view(data)
    if data[:2] == b"MZ" and rng.random() < 0.3:
        out = bytearray(data)
        lfanew = get(data, 0x3C, 4)
        if rng.random() < 0.5:
            value = interesting(rng, 4, lfanew, len(data), [0, 0x40, len(data) - 2, len(data), 0xFFFFFFFF])
            put(out, 0x3C, 4, value)
            return bytes(out), f"e_lfanew={value:#x}"
        out[lfanew + 2] ^= 0x01
        return bytes(out), "PE signature"
    name = rng.choice(list(COFF_HEADER))
    off, size = COFF_HEADER[name]
    extra = {
        "sections": [0, 1, len(sections) - 1, len(sections) + 1, 0xFFFF, 4095, 4096],
        "symbol_table": [0, len(data), len(data) - 1, 0xFFFFFFFF, h["symbol_table"] + 18],
        "symbols": [0, 1, h["symbols"] + 1, 0xFFFFFFFF, 0x0FFFFFFF],
        "optional_header_size": [0, 1, 224, 240, 0xFFFF, h["optional_header_size"] + 1],
        "machine": [0, 0x14C, 0x8664, 0xAA64, 0x1C0, 0xFFFF],
    }.get(name, ())
    return with_field(rng, data, at + off, size, h[name], len(data), extra, name)


@mutator("coff.section", ("coff",), 3.0)
def mut_coff_section(rng, data, ctx):
    _, h, sections = coff_view(data)
    if not sections:
        raise Inapplicable("no sections")
    fat = [s for s in sections if s.name in FATBIN_SECTIONS]
    s = rng.choice(fat) if fat and rng.random() < 0.7 else rng.choice(sections)
    out = bytearray(data)
    name = rng.choice(["name", "virtual_size", "raw_size", "raw_offset", "strtab"])
    if name == "name":
        new = rng.choice(
            [
                b".hip_fat",
                b"/99999999",
                b"/0",
                b"/",
                b"/-1",
                b"/abc",
                b"/" + str(len(data)).encode(),
                b".hip_fa\xff",
                b"\0" * 8,
            ]
        )
        out[s.at : s.at + 8] = new[:8].ljust(8, b"\0")
        return bytes(out), f"section {s.index} name={new!r}"
    if name == "strtab":
        strings = h["symbol_table"] + 18 * h["symbols"]
        if not h["symbol_table"] or strings >= len(data):
            raise Inapplicable("no string table")
        for i in range(strings + 4, len(out)):
            if out[i] == 0:
                out[i] = 0x41
        return bytes(out), "long-name string table unterminated"
    off, size = COFF_SECTION[name]
    orig = s.f[name]
    value = interesting(
        rng,
        size,
        orig,
        len(data),
        [0, len(data), len(data) - 1, len(data) - s.f["raw_offset"] + 1, 0xFFFFFFFF, 0x7FFFFFFF],
    )
    put(out, s.at + off, size, value)
    return bytes(out), f"section {s.index} ({s.name}) {name}={value:#x}"


@mutator("coff.amplify", ("coff",), 1.0, final=True)
def mut_coff_amplify(rng, data, ctx):
    """Many sections over the same device-code bytes, or many long section names."""
    at, h, sections = coff_view(data)
    fat = [s for s in sections if s.name in FATBIN_SECTIONS]
    if not fat:
        raise Inapplicable("no device-code section")
    s = rng.choice(fat)
    count = rng.choice([100, 1000, 4000])
    table = at + 20 + h["optional_header_size"]
    rows = data[table : table + 40 * h["sections"]]
    row = bytearray(data[s.at : s.at + 40])
    if rng.random() < 0.5:  # long names: "/<offset>" into a string of 4 KiB that ends far away
        strings = h["symbol_table"] + 18 * h["symbols"] if h["symbol_table"] else len(data)
        long_at = len(data)
        row[:8] = f"/{long_at - strings}".encode()[:8].ljust(8, b"\0")
        tail = b"L" * 8192 + b"\0"
        how = "long names"
    else:
        tail, how = b"", "same bytes"
    out = bytearray(data) + tail
    new_table = align(len(out), 8)
    out += b"\0" * (new_table - len(out)) + rows + bytes(row) * count
    if data[:2] != b"MZ" and at == 0:
        # A bare COFF object keeps its section table right after the header: move the header too.
        raise Inapplicable("bare COFF object: section table cannot move")
    put(out, at + 16, 2, new_table - at - 20)  # optional header grows to reach the new table
    put(out, at + 2, 2, min(0xFFFF, h["sections"] + count))
    return bytes(out), f"{count} more sections over {s.name} ({how})"
