"""ELF as the fuzzer sees it: headers, sections, segments, symbols and notes held in bytes.

Layouts are (offset, size) per field and ELF class, so a mutator can name the field it sets.
Builders replace a section's contents, rebuild a note region, swap a note's descriptor, and
append a new section-header table (for inputs that add thousands of sections).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..fields import Inapplicable, align, get, pad_to, put

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 2, 3, 7, 8, 11
SHT_LLVM_OFFLOADING = 0x6FFF4C0B

EHDR = {  # field -> (offset, size)
    2: {
        "e_type": (0x10, 2),
        "e_machine": (0x12, 2),
        "e_version": (0x14, 4),
        "e_entry": (0x18, 8),
        "e_phoff": (0x20, 8),
        "e_shoff": (0x28, 8),
        "e_flags": (0x30, 4),
        "e_ehsize": (0x34, 2),
        "e_phentsize": (0x36, 2),
        "e_phnum": (0x38, 2),
        "e_shentsize": (0x3A, 2),
        "e_shnum": (0x3C, 2),
        "e_shstrndx": (0x3E, 2),
    },
    1: {
        "e_type": (0x10, 2),
        "e_machine": (0x12, 2),
        "e_version": (0x14, 4),
        "e_entry": (0x18, 4),
        "e_phoff": (0x1C, 4),
        "e_shoff": (0x20, 4),
        "e_flags": (0x24, 4),
        "e_ehsize": (0x28, 2),
        "e_phentsize": (0x2A, 2),
        "e_phnum": (0x2C, 2),
        "e_shentsize": (0x2E, 2),
        "e_shnum": (0x30, 2),
        "e_shstrndx": (0x32, 2),
    },
}
IDENT = {"ei_mag0": 0, "ei_mag3": 3, "ei_class": 4, "ei_data": 5, "ei_version": 6, "ei_osabi": 7, "ei_abiversion": 8}
SHDR = {
    2: (
        64,
        {
            "sh_name": (0, 4),
            "sh_type": (4, 4),
            "sh_flags": (8, 8),
            "sh_addr": (16, 8),
            "sh_offset": (24, 8),
            "sh_size": (32, 8),
            "sh_link": (40, 4),
            "sh_info": (44, 4),
            "sh_addralign": (48, 8),
            "sh_entsize": (56, 8),
        },
    ),
    1: (
        40,
        {
            "sh_name": (0, 4),
            "sh_type": (4, 4),
            "sh_flags": (8, 4),
            "sh_addr": (12, 4),
            "sh_offset": (16, 4),
            "sh_size": (20, 4),
            "sh_link": (24, 4),
            "sh_info": (28, 4),
            "sh_addralign": (32, 4),
            "sh_entsize": (36, 4),
        },
    ),
}
PHDR = {
    2: (
        56,
        {
            "p_type": (0, 4),
            "p_flags": (4, 4),
            "p_offset": (8, 8),
            "p_vaddr": (16, 8),
            "p_paddr": (24, 8),
            "p_filesz": (32, 8),
            "p_memsz": (40, 8),
            "p_align": (48, 8),
        },
    ),
    1: (
        32,
        {
            "p_type": (0, 4),
            "p_offset": (4, 4),
            "p_vaddr": (8, 4),
            "p_paddr": (12, 4),
            "p_filesz": (16, 4),
            "p_memsz": (20, 4),
            "p_flags": (24, 4),
            "p_align": (28, 4),
        },
    ),
}
SYM = {
    2: (
        24,
        {
            "st_name": (0, 4),
            "st_info": (4, 1),
            "st_other": (5, 1),
            "st_shndx": (6, 2),
            "st_value": (8, 8),
            "st_size": (16, 8),
        },
    ),
    1: (
        16,
        {
            "st_name": (0, 4),
            "st_value": (4, 4),
            "st_size": (8, 4),
            "st_info": (12, 1),
            "st_other": (13, 1),
            "st_shndx": (14, 2),
        },
    ),
}


@dataclass
class Rec:
    """One table row: where its header sits and its decoded fields."""

    index: int
    at: int
    f: dict
    name: str = ""


class ElfView:
    """Headers, sections, segments, symbols and notes of an ELF held in bytes (tolerant)."""

    def __init__(self, data: bytes):
        if data[:4] != ELF_MAGIC or len(data) < 0x34 or data[4] not in (1, 2) or data[5] != 1:
            raise Inapplicable("not a little-endian ELF")
        self.data = data
        self.cls = data[4]
        self.h = {k: get(data, o, s) for k, (o, s) in EHDR[self.cls].items()}
        size, fields = SHDR[self.cls]
        self.sections: list[Rec] = []
        shnum = self.h["e_shnum"]
        if self.h["e_shoff"] and self.h["e_shentsize"] == size and shnum <= 4096:
            for i in range(shnum):
                at = self.h["e_shoff"] + i * size
                if at + size > len(data):
                    break
                self.sections.append(Rec(i, at, {k: get(data, at + o, s) for k, (o, s) in fields.items()}))
        strndx = self.h["e_shstrndx"]
        if strndx < len(self.sections):
            names = self.content(self.sections[strndx])
            for s in self.sections:
                end = names.find(b"\0", s.f["sh_name"])
                if 0 <= s.f["sh_name"] < len(names) and end >= 0:
                    s.name = names[s.f["sh_name"] : end].decode("latin-1")
        size, fields = PHDR[self.cls]
        self.segments: list[Rec] = []
        if self.h["e_phoff"] and self.h["e_phentsize"] == size and self.h["e_phnum"] <= 4096:
            for i in range(self.h["e_phnum"]):
                at = self.h["e_phoff"] + i * size
                if at + size > len(data):
                    break
                self.segments.append(Rec(i, at, {k: get(data, at + o, s) for k, (o, s) in fields.items()}))

    @property
    def amdgpu(self) -> bool:
        return self.h["e_machine"] == EM_AMDGPU

    def content(self, s: Rec) -> bytes:
        off, size = s.f["sh_offset"], s.f["sh_size"]
        if s.f["sh_type"] == SHT_NOBITS or off + size > len(self.data):
            raise Inapplicable(f"section {s.index} has no bytes in the file")
        return self.data[off : off + size]

    def named(self, name: str) -> Rec | None:
        return next((s for s in self.sections if s.name == name), None)

    def of_type(self, *types) -> list[Rec]:
        return [s for s in self.sections if s.f["sh_type"] in types]

    def symtab(self) -> Rec:
        table = (self.of_type(SHT_SYMTAB) or self.of_type(SHT_DYNSYM) or [None])[0]
        if table is None:
            raise Inapplicable("no symbol table")
        return table

    def symbols(self, table: Rec) -> list[Rec]:
        size, fields = SYM[self.cls]
        body = self.content(table)
        link = table.f["sh_link"]
        names = self.content(self.sections[link]) if link < len(self.sections) else b""
        out = []
        for i in range(len(body) // size):
            at = table.f["sh_offset"] + i * size
            rec = Rec(i, at, {k: get(self.data, at + o, s) for k, (o, s) in fields.items()})
            n = rec.f["st_name"]
            end = names.find(b"\0", n) if n < len(names) else -1
            rec.name = names[n:end].decode("latin-1") if end >= 0 else ""
            out.append(rec)
        return out

    def symbol_offset(self, sym: Rec) -> int:
        shndx = sym.f["st_shndx"]
        if not 0 < shndx < len(self.sections):
            raise Inapplicable("symbol not in a section")
        s = self.sections[shndx]
        delta = sym.f["st_value"] - (0 if self.h["e_type"] == 1 else s.f["sh_addr"])
        return s.f["sh_offset"] + delta

    def notes(self, section: Rec) -> list[Rec]:
        """Notes of one SHT_NOTE section; ``f`` has namesz, descsz, type, name, desc."""
        body = self.content(section)
        step = 8 if section.f["sh_addralign"] == 8 else 4
        out, pos = [], 0
        while pos + 12 <= len(body):
            namesz, descsz, ntype = struct.unpack_from("<III", body, pos)
            name_at = pos + 12
            desc_at = name_at + align(namesz, step)
            if desc_at + descsz > len(body):
                raise Inapplicable("note runs past its section")
            out.append(
                Rec(
                    len(out),
                    section.f["sh_offset"] + pos,
                    {
                        "namesz": namesz,
                        "descsz": descsz,
                        "type": ntype,
                        "name": body[name_at : name_at + namesz],
                        "desc": body[desc_at : desc_at + descsz],
                        "desc_at": section.f["sh_offset"] + desc_at,
                    },
                    body[name_at : name_at + namesz].rstrip(b"\0").decode("latin-1"),
                )
            )
            pos = desc_at + align(descsz, step)
        return out


def elf_set(data: bytes, rec_at: int, layout: dict, field_name: str, value: int) -> bytes:
    out = bytearray(data)
    off, size = layout[field_name]
    put(out, rec_at + off, size, value)
    return bytes(out)


def elf_replace_section(data: bytes, index: int, new: bytes) -> bytes:
    """Put ``new`` as the contents of section ``index``: in place when it fits, else appended."""
    elf = ElfView(data)
    s = elf.sections[index]
    _, fields = SHDR[elf.cls]
    out = bytearray(data)
    off, size = s.f["sh_offset"], s.f["sh_size"]
    if len(new) <= size and off + size <= len(data):
        out[off : off + size] = new + b"\0" * (size - len(new))
    else:
        off = align(len(out), 16)
        out += b"\0" * (off - len(out)) + new
        put(out, s.at + fields["sh_offset"][0], fields["sh_offset"][1], off)
    put(out, s.at + fields["sh_size"][0], fields["sh_size"][1], len(new))
    return bytes(out)


def build_notes(notes: list[tuple[bytes, int, bytes]], step: int) -> bytes:
    """A note region from (name with its NUL, type, desc) triples."""
    out = b""
    for name, ntype, desc in notes:
        out += struct.pack("<III", len(name), len(desc), ntype) + pad_to(name, step) + pad_to(desc, step)
    return out


def metadata_note(elf: ElfView, owner: str, ntype: int):
    """(section, its notes, the note) of the first ``owner``/``ntype`` note."""
    for section in elf.of_type(SHT_NOTE):
        notes = elf.notes(section)
        for note in notes:
            if note.name == owner and note.f["type"] == ntype:
                return section, notes, note
    raise Inapplicable(f"no {owner} note of type {ntype}")


def install_desc(data: bytes, elf: ElfView, section: Rec, notes: list[Rec], note: Rec, desc: bytes) -> bytes:
    """The ELF with ``note``'s descriptor replaced by ``desc`` and its note region rebuilt."""
    rebuilt = [(n.f["name"], n.f["type"], desc if n is note else n.f["desc"]) for n in notes]
    step = 8 if section.f["sh_addralign"] == 8 else 4
    return elf_replace_section(data, section.index, build_notes(rebuilt, step))


def with_note_desc(data: bytes, owner: str, note_type: int, desc: bytes) -> bytes:
    """The code object with the descriptor of its ``owner``/``note_type`` note replaced by ``desc``
    (e.g. "AMDGPU", 32 for the MessagePack metadata, "AMD", 10 for v2 YAML)."""
    elf = ElfView(data)
    section, notes, note = metadata_note(elf, owner, note_type)
    return install_desc(data, elf, section, notes, note, desc)


def note_desc(data: bytes, owner: str, note_type: int) -> bytes:
    """The descriptor of a code object's ``owner``/``note_type`` note."""
    return metadata_note(ElfView(data), owner, note_type)[2].f["desc"]


def with_extra_sections(data: bytes, extra_headers: list[bytes]) -> bytes:
    """The ELF with ``extra_headers`` (raw section headers) added after its own, in a new table."""
    return append_section_table(data, ElfView(data), extra_headers)


def section_header(data: bytes, **fields) -> bytes:
    """A raw section header of ``data``'s ELF class with the given fields (the rest zero)."""
    return raw_section_header(ElfView(data).cls, **fields)


def append_section_table(data: bytes, elf: ElfView, extra_headers: list[bytes]) -> bytes:
    """The ELF with a new section header table: the old headers, then ``extra_headers``."""
    size, layout = SHDR[elf.cls]
    table = b"".join(data[s.at : s.at + size] for s in elf.sections) + b"".join(extra_headers)
    count = len(elf.sections) + len(extra_headers)
    out = bytearray(data)
    at = align(len(out), 16)
    out += b"\0" * (at - len(out)) + table
    put(out, EHDR[elf.cls]["e_shoff"][0], EHDR[elf.cls]["e_shoff"][1], at)
    if count < 0xFF00:
        put(out, EHDR[elf.cls]["e_shnum"][0], 2, count)
    else:  # extended numbering: the count lives in section 0's sh_size
        put(out, EHDR[elf.cls]["e_shnum"][0], 2, 0)
        put(out, at + layout["sh_size"][0], layout["sh_size"][1], count)
    return bytes(out)


def raw_section_header(elf_class: int, **fields) -> bytes:
    """A raw section header of ELF class ``elf_class`` with the given fields (the rest zero)."""
    size, layout = SHDR[elf_class]
    out = bytearray(size)
    for name, value in fields.items():
        put(out, layout[name][0], layout[name][1], value)
    return bytes(out)
