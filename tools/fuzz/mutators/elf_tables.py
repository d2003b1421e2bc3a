"""ELF table mutators: symbols, kernel descriptors, string tables, and amplified tables.

Amplifiers build inputs of a few MiB whose tables point many times at the same bytes (one long
name, one note region, one device-code section), which a parser must not pay for once per
reference.
"""

from __future__ import annotations

import re

from ..fields import Inapplicable, align, get, interesting, put
from ..formats import BUNDLE_SECTION_PREFIX, FATBIN_SECTIONS
from ..formats.elf import (
    EHDR,
    SHDR,
    SHT_NOTE,
    SHT_STRTAB,
    SYM,
    ElfView,
    append_section_table,
    build_notes,
    elf_replace_section,
    elf_set,
    raw_section_header,
)
from .registry import ELF_KINDS, mutator


@mutator("elf.symbol", ELF_KINDS, 4.0)
def mut_elf_symbol(rng, data, ctx):
    elf = ElfView(data)
    table = elf.symtab()
    symbols = elf.symbols(table)
    if not symbols:
        raise Inapplicable("empty symbol table")
    favoured = [
        s
        for s in symbols
        if s.name.endswith((".kd", "@kd")) or (s.f["st_info"] & 0xF) in (1, 2, 10) or s.f["st_shndx"] == 0xFFF1
    ]
    sym = rng.choice(favoured) if favoured and rng.random() < 0.8 else rng.choice(symbols)
    _, layout = SYM[elf.cls]
    name = rng.choice(list(layout))
    n = len(elf.sections)
    strtab_size = elf.sections[table.f["sh_link"]].f["sh_size"] if table.f["sh_link"] < n else 0
    extra = {
        "st_shndx": [0, 1, n - 1, n, n + 1, 0xFF00, 0xFFF1, 0xFFF2, 0xFFFF] + [s.index for s in elf.sections],
        "st_value": [0, 1, (1 << 64) - 1, 1 << 63, sym.f["st_value"] + 1, sym.f["st_value"] - 64]
        + [s.f["sh_addr"] + s.f["sh_size"] - 63 for s in elf.sections],
        "st_size": [0, 1, 63, 64, 65, 256, (1 << 64) - 1],
        "st_name": [0, 1, strtab_size, strtab_size - 1, 0xFFFFFFFF] + [s.f["st_name"] for s in symbols[:64]],
        "st_info": [0x10, 0x11, 0x12, 0x1A, 0x0A, 0x01, 0x02, 0x03, 0x04, 0x06, 0xFF, sym.f["st_info"] ^ 0x10],
    }.get(name, ())
    value = interesting(rng, layout[name][1], sym.f[name], len(data), extra)
    return elf_set(data, sym.at, layout, name, value), f"symbol {sym.index} ({sym.name}) {name}={value:#x}"


KD_WORDS = {
    "group_segment_fixed_size": (0, 4),
    "private_segment_fixed_size": (4, 4),
    "kernarg_size": (8, 4),
    "reserved0": (12, 4),
    "kernel_code_entry_byte_offset": (16, 8),
    "reserved1": (24, 8),
    "compute_pgm_rsrc3": (44, 4),
    "compute_pgm_rsrc1": (48, 4),
    "compute_pgm_rsrc2": (52, 4),
    "kernel_code_properties": (56, 2),
    "kernarg_preload": (58, 2),
    "reserved3": (60, 4),
}
AKC_WORDS = {
    "version_major": (0, 4),
    "version_minor": (4, 4),
    "compute_pgm_rsrc1": (48, 4),
    "compute_pgm_rsrc2": (52, 4),
    "code_properties": (56, 4),
    "workitem_private_segment_byte_size": (60, 4),
    "workgroup_group_segment_byte_size": (64, 4),
    "kernarg_segment_byte_size": (72, 8),
    "wavefront_sgpr_count": (84, 2),
    "workitem_vgpr_count": (86, 2),
    "wavefront_size_log2": (103, 1),
}


@mutator("elf.kd", ("co",), 4.0)
def mut_elf_kd(rng, data, ctx):
    elf = ElfView(data)
    symbols = elf.symbols(elf.symtab())
    kds = [(s, KD_WORDS) for s in symbols if s.name.endswith(".kd")]
    kds += [(s, AKC_WORDS) for s in symbols if (s.f["st_info"] & 0xF) == 10]
    if not kds:
        raise Inapplicable("no kernel descriptors")
    sym, words = rng.choice(kds)
    base = elf.symbol_offset(sym)
    name = rng.choice(list(words))
    off, size = words[name]
    orig = get(data, base + off, size)
    roll = rng.random()
    if roll < 0.4:
        value = interesting(rng, size, orig)
    elif roll < 0.8:
        value = orig ^ (1 << rng.randrange(8 * size))  # one bit field flips (WGP, wave32, ...)
    else:
        lo = rng.randrange(8 * size)
        width = rng.randint(1, min(8, 8 * size - lo))
        value = orig | (((1 << width) - 1) << lo) if rng.random() < 0.5 else orig & ~(((1 << width) - 1) << lo)
    out = bytearray(data)
    put(out, base + off, size, value)
    return bytes(out), f"{sym.name} {name}={value & ((1 << 8 * size) - 1):#x}"


@mutator("elf.strtab", ELF_KINDS, 2.0)
def mut_elf_strtab(rng, data, ctx):
    elf = ElfView(data)
    tables = [s for s in elf.of_type(SHT_STRTAB) if s.f["sh_size"]]
    if not tables:
        raise Inapplicable("no string tables")
    s = rng.choice(tables)
    body = bytearray(elf.content(s))
    op = rng.choice(["unterminate", "utf8", "rename", "kd"])
    if op == "unterminate":
        body[-1] = 0x41
        detail = "last NUL removed"
    elif op == "utf8":
        at = rng.randrange(len(body))
        body[at] = rng.choice([0xFF, 0xC0, 0xED, 0x80])
        detail = f"byte {at} not UTF-8"
    elif op == "kd":
        spots = [m.start() for m in re.finditer(rb"\.kd\0", bytes(body))]
        if not spots:
            raise Inapplicable("no .kd names")
        at = rng.choice(spots)
        body[at : at + 3] = rng.choice([b".kx", b"@kd", b"\0kd", b".k\0"])
        detail = f".kd name at {at} changed"
    else:
        names = [m.start() for m in re.finditer(rb"\0[^\0]", bytes(body))]
        if len(names) < 2:
            raise Inapplicable("too few names")
        a, b = rng.sample(names, 2)
        end_a = body.index(0, a + 1)
        chunk = body[b + 1 : b + 1 + (end_a - a - 1)]
        body[a + 1 : a + 1 + len(chunk)] = chunk
        detail = f"name at {a + 1} overwritten"
    out = bytearray(data)
    out[s.f["sh_offset"] : s.f["sh_offset"] + len(body)] = body
    return bytes(out), f"{s.name or s.index}: {detail}"


# Amplification: many references to the same bytes ------------------------------------------
# A small file whose tables point many times at one long string, one note region or one payload
# must not cost time or memory in proportion to (references x referenced bytes). These build
# inputs of at most a few MiB, so a parser that is linear in the input stays far inside the limits.


@mutator("elf.amplify", ELF_KINDS, 1.0, final=True)
def mut_elf_amplify(rng, data, ctx):
    elf = ElfView(data)
    if not elf.sections:
        raise Inapplicable("no sections")
    size, layout = SHDR[elf.cls]
    op = rng.choice(["section-names", "symbol-names", "note-copies", "fatbin-copies"])
    count = rng.choice([300, 3000, 20000])
    length = rng.choice([4 << 10, 64 << 10, 512 << 10])
    distinct = rng.random() < 0.5  # every reference at its own offset into the string, or all at one
    if op == "section-names":
        # A new section-name table holding one long name, and many sections named by it.
        names = b"\0" + b"N" * length + b"\0"
        out = bytearray(data)
        names_at = align(len(out), 16)
        out += b"\0" * (names_at - len(out)) + names
        elf2 = ElfView(bytes(out))
        n = len(elf.sections)
        extra = [
            raw_section_header(elf.cls, sh_name=1, sh_type=3, sh_offset=names_at, sh_size=len(names), sh_addralign=1)
        ]
        count = min(count, (4 << 20) // size)
        extra += [
            raw_section_header(elf.cls, sh_name=1 + (i % length if distinct else 0), sh_type=1) for i in range(count)
        ]
        out = bytearray(append_section_table(bytes(out), elf2, extra))
        put(out, EHDR[elf.cls]["e_shstrndx"][0], 2, n)
        offsets = "distinct" if distinct else "same"
        return bytes(out), f"{count} sections named into one {length}-byte name ({offsets} offsets)"
    if op == "symbol-names":
        table = elf.symtab()
        sym_size, sym_layout = SYM[elf.cls]
        names = b"\0" + b"S" * length + b"\0"
        count = min(count, (4 << 20) // sym_size)
        rows = bytearray(sym_size * count)
        shndx = next((s.index for s in elf.sections if s.name in (".rodata", ".text")), 1)
        for i in range(count):
            at = i * sym_size
            put(rows, at + sym_layout["st_name"][0], 4, 1 + (i % length if distinct else 0))
            put(rows, at + sym_layout["st_info"][0], 1, 0x11)  # global object
            put(rows, at + sym_layout["st_shndx"][0], 2, shndx)
        out = bytearray(data)
        names_at = align(len(out), 16)
        out += b"\0" * (names_at - len(out)) + names
        rows_at = align(len(out), 16)
        out += b"\0" * (rows_at - len(out)) + rows
        elf2 = ElfView(bytes(out))
        n = len(elf.sections)
        extra = [raw_section_header(elf.cls, sh_type=3, sh_offset=names_at, sh_size=len(names), sh_addralign=1)]
        out = bytearray(append_section_table(bytes(out), elf2, extra))
        new = ElfView(bytes(out))
        t = new.sections[table.index]
        put(out, t.at + layout["sh_offset"][0], layout["sh_offset"][1], rows_at)
        put(out, t.at + layout["sh_size"][0], layout["sh_size"][1], len(rows))
        put(out, t.at + layout["sh_link"][0], 4, n)
        offsets = "distinct" if distinct else "same"
        return bytes(out), f"{count} symbols named into one {length}-byte name ({offsets} offsets)"
    if op == "note-copies":
        notes = elf.of_type(SHT_NOTE)
        if not notes:
            raise Inapplicable("no notes")
        note = rng.choice(notes)
        out = data
        if rng.random() < 0.5:  # make the region big first: a large note nobody reads
            body = elf.content(note) + build_notes([(b"X\0", 1, b"D" * length)], 4)
            out = elf_replace_section(data, note.index, body)
        elf2 = ElfView(out)
        copy = out[elf2.sections[note.index].at : elf2.sections[note.index].at + size]
        count = min(count, (4 << 20) // size)
        return append_section_table(out, elf2, [copy] * count), f"{count} copies of note section {note.index}"
    fat = [s for s in elf.sections if s.name in FATBIN_SECTIONS or s.name.startswith(BUNDLE_SECTION_PREFIX)]
    if not fat:
        raise Inapplicable("no device-code sections")
    s = rng.choice(fat)
    count = min(count, 5000)  # each copy is one reported failure once refused: linear, keep it small
    return append_section_table(
        data, elf, [data[s.at : s.at + size]] * count
    ), f"{count} copies of section {s.index} ({s.name})"
