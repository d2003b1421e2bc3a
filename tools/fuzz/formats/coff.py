"""PE images and COFF objects: the file header and section table, long names included."""

from __future__ import annotations

from ..fields import Inapplicable, align, get, put
from .elf import Rec

COFF_HEADER = {
    "machine": (0, 2),
    "sections": (2, 2),
    "timestamp": (4, 4),
    "symbol_table": (8, 4),
    "symbols": (12, 4),
    "optional_header_size": (16, 2),
    "characteristics": (18, 2),
}
COFF_SECTION = {
    "name": (0, 8),
    "virtual_size": (8, 4),
    "virtual_address": (12, 4),
    "raw_size": (16, 4),
    "raw_offset": (20, 4),
    "relocations": (24, 4),
    "line_numbers": (28, 4),
    "relocation_count": (32, 2),
    "line_number_count": (34, 2),
    "characteristics": (36, 4),
}


def looks_coff(data: bytes) -> bool:
    return (
        len(data) >= 20
        and get(data, 0, 2) in (0x8664, 0xAA64, 0x14C)
        and 0 < get(data, 2, 2) < 4096
        and get(data, 16, 2) == 0
    )


def coff_view(data: bytes) -> tuple[int, dict, list[Rec]]:
    """(COFF header offset, header fields, sections with resolved names)."""
    if data[:2] == b"MZ":
        lfanew = get(data, 0x3C, 4)
        if data[lfanew : lfanew + 4] != b"PE\0\0":
            raise Inapplicable("no PE signature")
        at = lfanew + 4
    elif looks_coff(data):
        at = 0
    else:
        raise Inapplicable("not PE/COFF")
    h = {k: get(data, at + o, s) for k, (o, s) in COFF_HEADER.items()}
    table = at + 20 + h["optional_header_size"]
    strings = h["symbol_table"] + 18 * h["symbols"]
    out = []
    for i in range(min(h["sections"], 256)):
        rec_at = table + 40 * i
        f = {k: get(data, rec_at + o, s) for k, (o, s) in COFF_SECTION.items() if k != "name"}
        raw = data[rec_at : rec_at + 8].rstrip(b"\0")
        name = raw.decode("latin-1")
        if name.startswith("/") and name[1:].isdigit():
            s = strings + int(name[1:])
            end = data.find(b"\0", s)
            name = data[s:end].decode("latin-1") if end >= 0 else name
        out.append(Rec(i, rec_at, f, name))
    return at, h, out


def coff_replace_section(data: bytes, index: int, new: bytes) -> bytes:
    _, _, sections = coff_view(data)
    s = sections[index]
    out = bytearray(data)
    size = min(s.f["virtual_size"], s.f["raw_size"]) if s.f["virtual_size"] else s.f["raw_size"]
    off = s.f["raw_offset"]
    if len(new) <= size:
        out[off : off + size] = new + b"\0" * (size - len(new))
    else:
        off = align(len(out), 16)
        out += b"\0" * (off - len(out)) + new
        put(out, s.at + 20, 4, off)
    put(out, s.at + 16, 4, len(new))
    if s.f["virtual_size"]:
        put(out, s.at + 8, 4, len(new))
    return bytes(out)
