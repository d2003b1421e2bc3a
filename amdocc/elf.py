"""A small, bounds-checked ELF reader (little-endian ELF32 and ELF64).

Both halves of the house read ELF: the containers layer finds ``.hip_fatbin`` in host binaries
(which may be gigabytes, so the buffer may be an mmap and only headers are copied), and the
codeobject layer reads AMDGPU code objects. This module knows the ELF format only; it knows
nothing about AMD. Layouts are declared once; every offset a file supplies is checked before use.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from .binary import Buffer, Layout, Record, StringBudget, cstring, first_overlap, need_bytes
from .errors import FormatError, Origin

ELF_MAGIC = b"\x7fELF"
ELFCLASS32, ELFCLASS64 = 1, 2
ELFDATA2LSB = 1

ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
EM_AMDGPU = 224

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 1, 2, 3, 4
SHT_NOTE, SHT_NOBITS, SHT_DYNSYM = 7, 8, 11
SHT_LLVM_OFFLOADING = 0x6FFF4C0B
PT_NOTE = 4

SHN_UNDEF, SHN_LORESERVE, SHN_ABS, SHN_XINDEX = 0, 0xFF00, 0xFFF1, 0xFFFF

# e_ident is read separately; the rest of the header differs between the two classes.
IDENT = Layout(
    "Ident",
    [
        ("magic", "4s"),
        ("elf_class", "B"),
        ("data", "B"),
        ("version", "B"),
        ("osabi", "B"),
        ("abiversion", "B"),
        ("pad", "7s"),
    ],
)
_HEADER_FIELDS = [
    ("e_type", "H"),
    ("e_machine", "H"),
    ("e_version", "I"),
    ("e_entry", "{a}"),
    ("e_phoff", "{a}"),
    ("e_shoff", "{a}"),
    ("e_flags", "I"),
    ("e_ehsize", "H"),
    ("e_phentsize", "H"),
    ("e_phnum", "H"),
    ("e_shentsize", "H"),
    ("e_shnum", "H"),
    ("e_shstrndx", "H"),
]


def _sized(name: str, fields: list[tuple[str, str]], addr: str) -> Layout:
    return Layout(name, [(f, code.format(a=addr)) for f, code in fields])


HEADER = {
    ELFCLASS64: _sized("Header64", _HEADER_FIELDS, "Q"),
    ELFCLASS32: _sized("Header32", _HEADER_FIELDS, "I"),
}
SECTION_HEADER = {
    ELFCLASS64: Layout(
        "Shdr64",
        [
            ("sh_name", "I"),
            ("sh_type", "I"),
            ("sh_flags", "Q"),
            ("sh_addr", "Q"),
            ("sh_offset", "Q"),
            ("sh_size", "Q"),
            ("sh_link", "I"),
            ("sh_info", "I"),
            ("sh_addralign", "Q"),
            ("sh_entsize", "Q"),
        ],
    ),
    ELFCLASS32: Layout(
        "Shdr32",
        [
            ("sh_name", "I"),
            ("sh_type", "I"),
            ("sh_flags", "I"),
            ("sh_addr", "I"),
            ("sh_offset", "I"),
            ("sh_size", "I"),
            ("sh_link", "I"),
            ("sh_info", "I"),
            ("sh_addralign", "I"),
            ("sh_entsize", "I"),
        ],
    ),
}
PROGRAM_HEADER = {
    ELFCLASS64: Layout(
        "Phdr64",
        [
            ("p_type", "I"),
            ("p_flags", "I"),
            ("p_offset", "Q"),
            ("p_vaddr", "Q"),
            ("p_paddr", "Q"),
            ("p_filesz", "Q"),
            ("p_memsz", "Q"),
            ("p_align", "Q"),
        ],
    ),
    ELFCLASS32: Layout(
        "Phdr32",
        [
            ("p_type", "I"),
            ("p_offset", "I"),
            ("p_vaddr", "I"),
            ("p_paddr", "I"),
            ("p_filesz", "I"),
            ("p_memsz", "I"),
            ("p_flags", "I"),
            ("p_align", "I"),
        ],
    ),
}
# Symbols are decoded in bulk with iter_unpack; field order differs between classes.
_SYMBOL_STRUCT = {ELFCLASS64: struct.Struct("<IBBHQQ"), ELFCLASS32: struct.Struct("<IIIBBH")}
NOTE_HEADER = Layout("Nhdr", [("namesz", "I"), ("descsz", "I"), ("type", "I")])
MANY_SYMBOLS = 16  # from this many names on, a string table is decoded in one pass


@dataclass(slots=True)
class Section:
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


# A symbol as elf.symbol_rows gives it: (name, value, size, info, other, shndx, entry_offset).
SymbolRow = tuple[str, int, int, int, int, int, int]


@dataclass(slots=True)
class Symbol:
    name: str
    value: int
    size: int
    info: int
    other: int
    shndx: int
    entry_offset: int | None = None  # offset of the symbol's table entry inside the ELF buffer

    @property
    def type(self) -> int:
        return self.info & 0xF

    @property
    def bind(self) -> int:
        return self.info >> 4


@dataclass(frozen=True, slots=True)
class Note:
    owner: str
    type: int
    desc: bytes
    desc_offset: int  # offset of the descriptor inside the ELF buffer


def _string_starts(table: bytes) -> dict[int, str]:
    """{offset: string} for every string that starts right after a NUL in a string table."""
    out, pos = {}, 0
    for part in table.split(b"\0")[:-1]:  # the last piece has no terminating NUL
        out[pos] = part.decode("utf-8", "surrogateescape")
        pos += len(part) + 1
    return out


def is_elf(data: Buffer, offset: int = 0) -> bool:
    head: bytes = data[offset : offset + 4]
    return head == ELF_MAGIC


class ElfFile:
    """The headers of one ELF image held in ``data`` (bytes or mmap), read eagerly and checked."""

    __slots__ = ("_segments", "data", "elf_class", "header", "ident", "origin", "sections")

    def __init__(self, data: Buffer, origin: Origin):
        self.data = data
        self.origin = origin
        self.ident = IDENT.read(data, 0, origin, "ELF identification")
        if self.ident.magic != ELF_MAGIC:
            raise FormatError("not an ELF file (bad magic)", origin, 0)
        if self.ident.elf_class not in HEADER:
            raise FormatError(f"unknown ELF class {self.ident.elf_class}", origin, 4)
        if self.ident.data != ELFDATA2LSB:
            raise FormatError("big-endian ELF is not supported", origin, 5)
        self.elf_class = self.ident.elf_class
        self.header = HEADER[self.elf_class].read(data, IDENT.size, origin, "ELF header")
        self.sections = self._read_sections()
        self._segments: list[Record] | None = None

    # -- tables ---------------------------------------------------------------------------

    def _read_sections(self) -> list[Section]:
        h, origin = self.header, self.origin
        if h.e_shoff == 0:
            return []
        layout = SECTION_HEADER[self.elf_class]
        if h.e_shentsize != layout.size:
            raise FormatError(
                f"section header size {h.e_shentsize} is not {layout.size}",
                origin,
                0x3A if self.elf_class == ELFCLASS64 else 0x2E,
            )
        count, shstrndx = h.e_shnum, h.e_shstrndx
        if count == 0 or shstrndx == SHN_XINDEX:
            # Extended numbering: the real values live in section 0.
            first = layout.read(self.data, h.e_shoff, origin, "section header 0")
            count = count or first.sh_size
            if shstrndx == SHN_XINDEX:
                shstrndx = first.sh_link
        table = self._slice(h.e_shoff, count * layout.size, "section header table")
        raw = list(layout.struct.iter_unpack(table))
        names = b""
        if shstrndx != SHN_UNDEF:
            if shstrndx >= count:
                raise FormatError(f"section-name table index {shstrndx} >= {count} sections", origin, h.e_shoff)
            strtab = raw[shstrndx]  # fields: name, type, flags, addr, offset, size, ...
            names = self._slice(strtab[4], strtab[5], "section-name string table")
        sections = []
        budget = StringBudget(len(names), "the section-name string table")
        starts = _string_starts(names)
        name: str | None
        for i, (sh_name, sh_type, flags, addr, offset, size, link, info, align, entsize) in enumerate(raw):
            if not (names and sh_name):
                name = ""
            else:
                # Names usually start where a string starts: decoded once. Others (a shared
                # suffix, or a lying offset) go through the bounded reader.
                name = starts.get(sh_name)
                if name is None:
                    name = cstring(names, sh_name, origin, f"section {i} name", h.e_shoff + i * layout.size, budget)
            sections.append(Section(i, name, sh_type, flags, addr, offset, size, link, info, align, entsize))
        return sections

    def segments(self) -> list[Record]:
        if self._segments is None:
            h = self.header
            layout = PROGRAM_HEADER[self.elf_class]
            if h.e_phoff == 0 or h.e_phnum == 0:
                self._segments = []
            else:
                if h.e_phentsize != layout.size:
                    raise FormatError(
                        f"program header size {h.e_phentsize} is not {layout.size}", self.origin, h.e_phoff
                    )
                self._segments = layout.read_many(self.data, h.e_phoff, h.e_phnum, self.origin, "program header table")
        return self._segments

    # -- contents -------------------------------------------------------------------------

    def _slice(self, offset: int, size: int, what: str) -> bytes:
        need_bytes(self.data, offset, size, self.origin, what)
        chunk = self.data[offset : offset + size]
        return chunk if isinstance(chunk, bytes) else bytes(chunk)

    def section_range(self, section: Section) -> tuple[int, int]:
        """(start, end) of a section's bytes in the buffer, checked; empty for NOBITS."""
        if section.type == SHT_NOBITS:
            return section.offset, section.offset
        need_bytes(self.data, section.offset, section.size, self.origin, f"section {section.name or section.index}")
        return section.offset, section.offset + section.size

    def section_bytes(self, section: Section) -> bytes:
        start, end = self.section_range(section)
        return self._slice(start, end - start, f"section {section.name or section.index}")

    def symbols(self, section: Section, wanted: Callable[[int, int], bool] | None = None) -> list[Symbol]:
        """Symbols of a SYMTAB/DYNSYM section, names resolved through its linked string table.

        ``wanted(info, shndx)`` may reject symbols before their names are decoded: code objects
        carry thousands of local labels nobody asks about.
        """
        return [Symbol(*row) for row in self.symbol_rows(section, wanted)]

    def symbol_rows(
        self,
        section: Section,
        wanted: Callable[[int, int], bool] | None = None,
        *,
        types: frozenset[int] | None = None,
        shndx: int | None = None,
    ) -> list[SymbolRow]:
        """:meth:`symbols` as plain tuples, in Symbol's field order: for a reader that makes
        objects of only some of them (a library's code object has a dozen resource symbols per
        kernel). Instead of ``wanted``, ``types`` keeps the symbols of those types (``info &
        0xF``) and, with it, ``shndx`` those of that section index too, without a call per
        symbol (a code object's symbol table is mostly local labels)."""
        sym_struct = _SYMBOL_STRUCT[self.elf_class]
        if section.entsize != sym_struct.size:
            raise FormatError(
                f"symbol entry size {section.entsize} in {section.name} is not {sym_struct.size}",
                self.origin,
                section.offset,
            )
        if section.link >= len(self.sections):
            raise FormatError(
                f"{section.name} links to missing string table {section.link}", self.origin, section.offset
            )
        table = self.section_bytes(section)
        strtab = self.section_bytes(self.sections[section.link])
        usable = len(table) - len(table) % sym_struct.size
        rows = sym_struct.iter_unpack(table[:usable])
        if self.elf_class == ELFCLASS32:
            rows = ((n, i, o, x, v, z) for n, v, z, i, o, x in rows)
        out: list[SymbolRow] = []
        origin = self.origin
        entry_size = sym_struct.size
        budget = StringBudget(len(strtab), f"the string table of {section.name or 'the symbol table'}")
        if types is not None:
            kept = [(index, row) for index, row in enumerate(rows) if row[3] == shndx or row[1] & 0xF in types]
        else:
            kept = [(index, row) for index, row in enumerate(rows) if wanted is None or wanted(row[1], row[3])]
        # Many names (a library's code object): as for section names, those that start where a
        # string starts are decoded in one pass over the table and shared. Few: each is read
        # where it is. Either way a name that starts elsewhere goes through the bounded reader.
        starts = _string_starts(strtab) if len(kept) >= MANY_SYMBOLS else {}
        for index, (st_name, info, other, shndx, value, size) in kept:
            at = section.offset + index * entry_size
            if st_name:
                name = starts.get(st_name)
                if name is None:
                    name = cstring(strtab, st_name, origin, f"symbol {index} name", at, budget)
            else:
                name = ""
            out.append((name, value, size, info, other, shndx, at))
        return out

    def symbol_file_offset(self, symbol: Symbol, size: int) -> int:
        """File offset of ``size`` bytes at a symbol defined in a section (checked)."""
        if symbol.shndx in (SHN_UNDEF, SHN_ABS) or symbol.shndx >= len(self.sections):
            raise FormatError(
                f"symbol {symbol.name} is not defined in a section (section index {symbol.shndx:#x})",
                self.origin,
                symbol.entry_offset,
            )
        section = self.sections[symbol.shndx]
        # Relocatable objects store section-relative values, linked images virtual addresses.
        delta = symbol.value if self.header.e_type == ET_REL else symbol.value - section.addr
        if section.type == SHT_NOBITS or delta < 0 or delta + size > section.size:
            raise FormatError(
                f"symbol {symbol.name} ({size} bytes at {symbol.value:#x}) lies outside its section {section.name}",
                self.origin,
                section.offset,
            )
        offset = section.offset + delta
        need_bytes(self.data, offset, size, self.origin, f"contents of symbol {symbol.name}")
        return offset

    def notes(self) -> list[Note]:
        """Every note in SHT_NOTE sections, or in PT_NOTE segments when there are no sections.

        Note regions must not overlap: each note is read once, so a table that lists one region
        thousands of times cannot make thousands of copies of it.
        """
        regions = [(s.offset, s.size, s.addralign) for s in self.sections if s.type == SHT_NOTE]
        what = "note sections"
        if not regions:
            regions = [(p.p_offset, p.p_filesz, p.p_align) for p in self.segments() if p.p_type == PT_NOTE]
            what = "PT_NOTE segments"
        spans = [(offset, offset + size) for offset, size, _ in regions]
        clash = first_overlap(spans)
        if clash is not None:
            earlier, later = (spans[i] for i in clash)
            raise FormatError(
                f"{what} overlap: one starts at {later[0]:#x}, before another ends at {earlier[1]:#x}",
                self.origin,
                later[0],
            )
        out = []
        for offset, size, align in regions:
            out.extend(self._notes_in(offset, size, 8 if align == 8 else 4))
        return out

    def _notes_in(self, offset: int, size: int, align: int) -> list[Note]:
        need_bytes(self.data, offset, size, self.origin, "note region")
        end, pos, out = offset + size, offset, []
        while pos + NOTE_HEADER.size <= end:
            h = NOTE_HEADER.read(self.data, pos, self.origin, "note header")
            name_at = pos + NOTE_HEADER.size
            desc_at = name_at + -(-h.namesz // align) * align
            next_at = desc_at + -(-h.descsz // align) * align
            if desc_at + h.descsz > end:
                raise FormatError(
                    f"note (name size {h.namesz}, descriptor size {h.descsz}) runs "
                    f"past the end of its note region at {end:#x}",
                    self.origin,
                    pos,
                )
            owner = bytes(self.data[name_at : name_at + h.namesz]).rstrip(b"\0")
            desc = self._slice(desc_at, h.descsz, "note descriptor")
            out.append(Note(owner.decode("latin-1"), h.type, desc, desc_at))
            pos = next_at
        return out
