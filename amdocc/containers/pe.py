"""Windows PE images and COFF objects: find the sections that hold HIP fat binaries.

HIP on Windows puts the offload bundle in a section named ``.hip_fat`` (hip-quant's DLLs). Only
the headers and the section table are read: the DOS stub's e_lfanew, the "PE\\0\\0" signature, the
COFF file header, and 40-byte section headers (long names resolve through the COFF string table).
"""

from __future__ import annotations

from typing import NamedTuple

from ..binary import Buffer, Layout
from ..errors import FormatError, Origin
from .magic import COFF_MACHINES
from .magic import is_pe as is_pe
from .magic import looks_like_coff_object as looks_like_coff_object

DOS_LFANEW = Layout("DosLfanew", [("e_lfanew", "I")])  # at offset 0x3c of the MZ stub
COFF_HEADER = Layout(
    "CoffHeader",
    [
        ("machine", "H"),
        ("sections", "H"),
        ("timestamp", "I"),
        ("symbol_table", "I"),
        ("symbols", "I"),
        ("optional_header_size", "H"),
        ("characteristics", "H"),
    ],
)
SECTION = Layout(
    "CoffSection",
    [
        ("name", "8s"),
        ("virtual_size", "I"),
        ("virtual_address", "I"),
        ("raw_size", "I"),
        ("raw_offset", "I"),
        ("relocations", "I"),
        ("line_numbers", "I"),
        ("relocation_count", "H"),
        ("line_number_count", "H"),
        ("characteristics", "I"),
    ],
)
SYMBOL_SIZE = 18


class CoffSection(NamedTuple):
    """A section's name and the file range of its raw data."""

    name: str
    start: int
    end: int


def coff_sections(buf: Buffer, origin: Origin) -> tuple[str, list[CoffSection]]:
    """(machine name, sections) of a PE image or a COFF object."""
    if is_pe(buf):
        lfanew = DOS_LFANEW.read(buf, 0x3C, origin, "DOS header e_lfanew").e_lfanew
        if bytes(buf[lfanew : lfanew + 4]) != b"PE\0\0":
            raise FormatError("MZ file without a PE signature at e_lfanew", origin, lfanew)
        header_at = lfanew + 4
    else:
        header_at = 0
    h = COFF_HEADER.read(buf, header_at, origin, "COFF file header")
    table_at = header_at + COFF_HEADER.size + h.optional_header_size
    raw = SECTION.read_many(buf, table_at, h.sections, origin, "COFF section table")
    strings_at = h.symbol_table + h.symbols * SYMBOL_SIZE if h.symbol_table else None
    out = []
    for s in raw:
        name = s.name.rstrip(b"\0").decode("latin-1")
        if name.startswith("/") and name[1:].isdigit() and strings_at is not None:
            at = strings_at + int(name[1:])
            stop = buf.find(b"\0", at, min(len(buf), at + 4096))
            if stop < 0:
                raise FormatError("COFF long section name runs off the string table", origin, at)
            name = bytes(buf[at:stop]).decode("latin-1")
        size = min(s.virtual_size, s.raw_size) if s.virtual_size else s.raw_size
        if s.raw_offset + size > len(buf):
            raise FormatError(
                f"COFF section {name} ({size} bytes at {s.raw_offset:#x}) runs past the end of the file",
                origin,
                table_at,
            )
        out.append(CoffSection(name, s.raw_offset, s.raw_offset + size))
    return COFF_MACHINES.get(h.machine, f"machine {h.machine:#x}"), out
