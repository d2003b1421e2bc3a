"""ELF mutators: identification, header, section and program headers, notes.

They apply to code objects and host ELFs alike (``ELF_KINDS``), except the note mutator, which
aims at the AMDGPU notes of code objects (the v2 ISA note's inner sizes included).
"""

from __future__ import annotations

from ..fields import Inapplicable, get, interesting, put, with_field
from ..formats import BUNDLE_SECTION_PREFIX, FATBIN_SECTIONS
from ..formats.elf import (
    EHDR,
    IDENT,
    PHDR,
    SHDR,
    SHT_DYNSYM,
    SHT_LLVM_OFFLOADING,
    SHT_NOTE,
    SHT_STRTAB,
    SHT_SYMTAB,
    ElfView,
    Rec,
    build_notes,
    elf_replace_section,
    elf_set,
)
from .registry import ELF_KINDS, mutator


@mutator("elf.ident", ELF_KINDS, 1.5)
def mut_elf_ident(rng, data, ctx):
    name = rng.choice(list(IDENT))
    values = {
        "ei_class": [0, 1, 2, 3, 0xFF],
        "ei_data": [0, 1, 2, 0xFF],
        "ei_version": [0, 1, 2, 0xFF],
        "ei_osabi": [0, 3, 63, 64, 65, 66, 67, 0xFF],
        "ei_abiversion": [0, 1, 2, 3, 4, 5, 6, 7, 0xFF],
        "ei_mag0": [0, 0x7E],
        "ei_mag3": [0, ord("G")],
    }[name]
    if len(data) <= IDENT[name]:
        raise Inapplicable("too short")
    value = rng.choice(values)
    out = bytearray(data)
    out[IDENT[name]] = value
    return bytes(out), f"{name}={value:#x}"


@mutator("elf.header", ELF_KINDS)
def mut_elf_header(rng, data, ctx):
    elf = ElfView(data)
    layout = EHDR[elf.cls]
    name = rng.choice(list(layout))
    orig = elf.h[name]
    n = len(elf.sections)
    extra = {
        "e_shoff": [len(data) - SHDR[elf.cls][0] * max(n, 1), len(data) - 1, len(data), 1, 0x40],
        "e_phoff": [len(data) - 1, len(data), 0, 0x40, elf.h["e_shoff"]],
        "e_shnum": [0, 1, n - 1, n + 1, 0xFF00, 0xFFFF],
        "e_shstrndx": [0, n - 1, n, n + 1, 0xFF00, 0xFFFF] + [s.index for s in elf.sections],
        "e_shentsize": [0, 1, 40, 56, 63, 64, 65, 0xFFFF],
        "e_phentsize": [0, 1, 32, 55, 56, 57, 0xFFFF],
        "e_phnum": [0, 1, 0xFFFF, len(elf.segments) + 1],
        "e_flags": [orig & ~0xFF | rng.randrange(0x100), orig ^ 0x300, orig ^ 0xC00, orig | 0xFF000000, orig & 0xFF, 0],
        "e_machine": [0, 3, 62, 224, 0xFFFF],
        "e_type": [0, 1, 2, 3, 4, 0xFE00, 0xFFFF],
    }.get(name, ())
    value = interesting(rng, layout[name][1], orig, len(data), extra)
    if name == "e_shnum" and value == 0 and elf.sections and rng.random() < 0.6:
        # Extended numbering: the count moves to section 0's sh_size.
        out = elf_set(data, 0, layout, name, 0)
        s0 = elf.sections[0]
        count = interesting(rng, 8, n, len(data), [n, n + 1, 1 << 32, (1 << 64) - 1, 1 << 20])
        return elf_set(out, s0.at, SHDR[elf.cls][1], "sh_size", count), f"e_shnum=0 sh_size[0]={count:#x}"
    if name == "e_shstrndx" and value == 0xFFFF and elf.sections and rng.random() < 0.6:
        out = elf_set(data, 0, layout, name, 0xFFFF)
        link = interesting(rng, 4, elf.h["e_shstrndx"], None, [n, n - 1, 0, 0xFFFFFFFF])
        return elf_set(
            out, elf.sections[0].at, SHDR[elf.cls][1], "sh_link", link
        ), f"e_shstrndx=SHN_XINDEX sh_link[0]={link:#x}"
    return elf_set(data, 0, layout, name, value), f"{name}={value:#x}"


def _pick_section(rng, elf: ElfView) -> Rec:
    if not elf.sections:
        raise Inapplicable("no sections")
    special = [
        s
        for s in elf.sections
        if s.f["sh_type"] in (SHT_NOTE, SHT_SYMTAB, SHT_DYNSYM, SHT_STRTAB, SHT_LLVM_OFFLOADING)
        or s.name in FATBIN_SECTIONS
        or s.name.startswith(BUNDLE_SECTION_PREFIX)
        or s.name in (".rodata", ".text", ".dynamic")
    ]
    return rng.choice(special) if special and rng.random() < 0.75 else rng.choice(elf.sections)


@mutator("elf.shdr", ELF_KINDS, 4.0)
def mut_elf_shdr(rng, data, ctx):
    elf = ElfView(data)
    s = _pick_section(rng, elf)
    _size, layout = SHDR[elf.cls]
    name = rng.choice(list(layout))
    orig = s.f[name]
    n = len(elf.sections)
    offsets = [x.f["sh_offset"] for x in elf.sections]
    extra = {
        "sh_offset": [*offsets, 0, len(data), len(data) - 1, len(data) - s.f["sh_size"] + 1],
        "sh_size": [
            0,
            1,
            len(data),
            len(data) - s.f["sh_offset"],
            len(data) - s.f["sh_offset"] + 1,
            orig - 1,
            orig + 1,
            (1 << 64) - 1,
            1 << 40,
        ],
        "sh_link": [0, n, n - 1, n + 1, 0xFFFFFFFF, elf.h["e_shstrndx"]] + [x.index for x in elf.sections],
        "sh_entsize": [0, 1, 16, 23, 24, 25, 48, (1 << 64) - 1],
        "sh_type": [0, 1, 2, 3, 4, 7, 8, 11, SHT_LLVM_OFFLOADING, 0xFFFFFFFF],
        "sh_addralign": [0, 1, 2, 4, 8, 16, 4096, (1 << 64) - 1],
        "sh_addr": [0, s.f["sh_offset"], orig + 64, (1 << 64) - 1, 1 << 63],
        "sh_name": [0, 1] + [x.f["sh_name"] for x in elf.sections] + [0xFFFFFFFF],
    }.get(name, ())
    value = interesting(rng, layout[name][1], orig, len(data), extra)
    return elf_set(data, s.at, layout, name, value), f"section {s.index} ({s.name}) {name}={value:#x}"


@mutator("elf.phdr", ELF_KINDS, 1.5)
def mut_elf_phdr(rng, data, ctx):
    elf = ElfView(data)
    if not elf.segments:
        raise Inapplicable("no segments")
    p = rng.choice(elf.segments)
    _, layout = PHDR[elf.cls]
    name = rng.choice(list(layout))
    extra = {
        "p_type": [0, 1, 4, 0x6474E550],
        "p_align": [0, 1, 4, 8, 16, (1 << 64) - 1],
        "p_filesz": [0, (1 << 64) - 1, len(data), len(data) - p.f["p_offset"] + 1],
    }.get(name, ())
    value = interesting(rng, layout[name][1], p.f[name], len(data), extra)
    out = elf_set(data, p.at, layout, name, value)
    if rng.random() < 0.3:  # notes come from PT_NOTE only when there are no section headers
        out = elf_set(out, 0, EHDR[elf.cls], "e_shoff", 0)
        return out, f"segment {p.index} {name}={value:#x}, e_shoff=0"
    return out, f"segment {p.index} {name}={value:#x}"


def _note_sections(elf: ElfView) -> list[Rec]:
    notes = elf.of_type(SHT_NOTE)
    if not notes:
        raise Inapplicable("no note sections")
    return notes


@mutator("elf.note", ("co",), 3.0)
def mut_elf_note(rng, data, ctx):
    elf = ElfView(data)
    section = rng.choice(_note_sections(elf))
    notes = elf.notes(section)
    if not notes:
        raise Inapplicable("empty note section")
    note = rng.choice(notes)
    what = rng.choice(["namesz", "descsz", "type", "name", "align", "region", "v2-isa"])
    if what in ("namesz", "descsz", "type"):
        off = {"namesz": 0, "descsz": 4, "type": 8}[what]
        extra = {
            "namesz": [0, 1, 3, 4, 5, 7, 8, 9, 0x7FFFFFFF, 0xFFFFFFFF, section.f["sh_size"]],
            "descsz": [
                0,
                1,
                3,
                note.f["descsz"] - 1,
                note.f["descsz"] + 1,
                0x7FFFFFF0,
                0xFFFFFFFF,
                section.f["sh_size"],
            ],
            "type": [0, 1, 2, 3, 4, 5, 10, 11, 32, 33, 0xFFFFFFFF],
        }[what]
        return with_field(
            rng,
            data,
            note.at + off,
            4,
            note.f[what],
            section.f["sh_size"],
            extra,
            f"note {note.index} ({note.name}) {what}",
        )
    if what == "name":
        name = rng.choice(
            [b"AMD\0", b"AMDGPU\0", b"AMDGPU", b"AMDGPUX", b"\xff\xfe\0", b"", b"GNU\0", b"AMDGPU\0\0\0\0\0\0\0\0\0"]
        )
        rebuilt = [(name if n is note else n.f["name"], n.f["type"], n.f["desc"]) for n in notes]
        step = 8 if section.f["sh_addralign"] == 8 else 4
        return elf_replace_section(data, section.index, build_notes(rebuilt, step)), f"note {note.index} name={name!r}"
    if what == "align":
        value = rng.choice([0, 1, 4, 8, 16])
        return elf_set(
            data, section.at, SHDR[elf.cls][1], "sh_addralign", value
        ), f"note section {section.index} sh_addralign={value}"
    if what == "region":
        cut = rng.randint(1, 16)
        value = max(0, section.f["sh_size"] - cut)
        return elf_set(
            data, section.at, SHDR[elf.cls][1], "sh_size", value
        ), f"note section {section.index} sh_size={value:#x} (cut {cut})"
    # CO v2 ISA note: vendor and architecture name sizes
    isa = [n for n in notes if n.f["type"] == 3 and n.name == "AMD"]
    if not isa:
        raise Inapplicable("no v2 ISA note")
    out = bytearray(data)
    at = isa[0].f["desc_at"] + rng.choice([0, 2])
    value = interesting(rng, 2, get(data, at, 2), None, [0, 1, 0xFFFF, isa[0].f["descsz"]])
    put(out, at, 2, value)
    return bytes(out), f"v2 ISA note name size at +{at - isa[0].f['desc_at']}={value:#x}"
