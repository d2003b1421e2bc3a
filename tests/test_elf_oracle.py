"""pyelftools as an independent oracle for amdocc's bounded ELF reader (amdocc/elf.py).

amdocc reads ELF with its own small reader, built for speed on multi-GB host binaries and for
hostile input. pyelftools is a separate, widely used implementation of the same format. Every
ELF image of the fixtures and of the shipped sample (each ELF file, and each code object the
container layer finds in bundles, CCOBs, OffloadBinaries, host ELFs and PE/COFF files), every
.co of the amd-aiter corpus, and ELF32/ELF64 files LLVM builds here are read by both; the ELF
header, every program header, every section header (with its name), every note (owner, type,
descriptor bytes) and every symbol of every SYMTAB/DYNSYM (name, value, size, info, other,
section index) must agree. pyelftools spells some fields as names (``SHT_NOTE``, ``STB_GLOBAL``);
they are turned back into numbers through pyelftools' own struct definitions.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

import amdocc.samples
from amdocc.containers import Blob, scan
from amdocc.elf import EM_AMDGPU, PT_NOTE, SHT_DYNSYM, SHT_SYMTAB, ElfFile, is_elf
from amdocc.errors import Origin
from conftest import FIXTURES

HEADER_FIELDS = (
    "e_type",
    "e_machine",
    "e_version",
    "e_entry",
    "e_phoff",
    "e_shoff",
    "e_flags",
    "e_ehsize",
    "e_phentsize",
    "e_phnum",
    "e_shentsize",
    "e_shnum",
    "e_shstrndx",
)
SEGMENT_FIELDS = ("p_type", "p_flags", "p_offset", "p_vaddr", "p_paddr", "p_filesz", "p_memsz", "p_align")
SECTION_FIELDS = ("type", "flags", "addr", "offset", "size", "link", "info", "addralign", "entsize")
NOT_BINARY = {".txt", ".json", ".mlir", ".ll", ".s"}  # sources and LLVM output beside the binaries


@dataclass
class Tally:
    images: int = 0
    header_fields: int = 0
    segments: int = 0
    sections: int = 0
    notes: int = 0
    symbols: int = 0
    differences: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{self.images} ELF images, {self.header_fields} header fields, {self.segments} program "
            f"headers, {self.sections} section headers, {self.notes} notes, {self.symbols} symbols; "
            f"{len(self.differences)} differences"
        )


# -- what amdocc reads ----------------------------------------------------------------------


def amdocc_view(data: bytes) -> dict:
    elf = ElfFile(data, Origin("<oracle>"))
    tables = [s for s in elf.sections if s.type in (SHT_SYMTAB, SHT_DYNSYM)]
    return {
        "header": tuple(getattr(elf.header, f) for f in HEADER_FIELDS),
        "segments": [tuple(getattr(p, f) for f in SEGMENT_FIELDS) for p in elf.segments()],
        "sections": [(s.name, *(getattr(s, f) for f in SECTION_FIELDS)) for s in elf.sections],
        "notes": [(n.owner, n.type, n.desc) for n in elf.notes()],
        "symbols": {
            t.index: [(y.name, y.value, y.size, y.info, y.other, y.shndx) for y in elf.symbols(t)] for t in tables
        },
    }


# -- what pyelftools reads ------------------------------------------------------------------


def _encodings(construct, out=None) -> dict[str, dict]:
    """{field: {name: number}} of every enumerated field of a pyelftools struct."""
    out = {} if out is None else out
    if hasattr(construct, "encoding") and construct.name:
        out[construct.name] = construct.encoding
    for sub in getattr(construct, "subcons", None) or [getattr(construct, "subcon", None)]:
        if sub is not None:
            _encodings(sub, out)
    return out


def _number(encodings: dict, name: str, value) -> int:
    return encodings[name][value] if isinstance(value, str) else value


def pyelftools_view(data: bytes) -> dict:
    elf = ELFFile(io.BytesIO(data))
    header_enc = _encodings(elf.structs.Elf_Ehdr)
    section_enc = _encodings(elf.structs.Elf_Shdr)
    symbol_enc = _encodings(elf.structs.Elf_Sym)
    note_enc = _encodings(elf.structs.Elf_Nhdr)
    segment_enc = _encodings(elf.structs.Elf_Phdr)
    segments = list(elf.iter_segments())
    sections = list(elf.iter_sections())
    note_sources = [s for s in sections if isinstance(s, NoteSection)]
    if not sections:  # amdocc reads PT_NOTE segments only when there are no sections
        note_sources = [p for p in segments if _number(segment_enc, "p_type", p["p_type"]) == PT_NOTE]

    def symbol(sym) -> tuple:
        e = sym.entry
        info = _number(symbol_enc, "bind", e.st_info.bind) << 4 | _number(symbol_enc, "type", e.st_info.type)
        other = _number(symbol_enc, "local", e.st_other.local) << 5 | _number(
            symbol_enc, "visibility", e.st_other.visibility
        )
        return (sym.name, e.st_value, e.st_size, info, other, _number(symbol_enc, "st_shndx", e.st_shndx))

    return {
        "header": tuple(_number(header_enc, f, elf.header[f]) for f in HEADER_FIELDS),
        "segments": [tuple(_number(segment_enc, f, p[f]) for f in SEGMENT_FIELDS) for p in segments],
        "sections": [
            (s.name, _number(section_enc, "sh_type", s["sh_type"]), *(s[f"sh_{f}"] for f in SECTION_FIELDS[1:]))
            for s in sections
        ],
        "notes": [
            (n.n_name or "", _number(note_enc, "n_type", n.n_type), bytes(n.n_descdata))
            for source in note_sources
            for n in source.iter_notes()
        ],
        "symbols": {
            i: [symbol(y) for y in s.iter_symbols()]
            for i, s in enumerate(sections)
            if isinstance(s, SymbolTableSection)
        },
    }


# -- the comparison -------------------------------------------------------------------------


def compare(label: str, data: bytes, tally: Tally) -> None:
    ours, theirs = amdocc_view(data), pyelftools_view(data)
    tally.images += 1
    tally.header_fields += len(theirs["header"])
    tally.segments += len(theirs["segments"])
    tally.sections += len(theirs["sections"])
    tally.notes += len(theirs["notes"])
    tally.symbols += sum(map(len, theirs["symbols"].values()))
    diffs = tally.differences
    if ours["header"] != theirs["header"]:
        diffs.append(f"{label}: ELF header {ours['header']} != pyelftools {theirs['header']}")
    for what in ("segments", "sections", "notes"):
        a, b = ours[what], theirs[what]
        if len(a) != len(b):
            diffs.append(f"{label}: {len(a)} {what} != pyelftools {len(b)}")
        diffs.extend(
            f"{label}: {what[:-1]} {i} {x!r:.200} != pyelftools {y!r:.200}"
            for i, (x, y) in enumerate(zip(a, b, strict=False))
            if x != y
        )
    if ours["symbols"].keys() != theirs["symbols"].keys():
        diffs.append(
            f"{label}: symbol tables in sections {sorted(ours['symbols'])} != pyelftools {sorted(theirs['symbols'])}"
        )
    for index in ours["symbols"].keys() & theirs["symbols"].keys():
        a, b = ours["symbols"][index], theirs["symbols"][index]
        if len(a) != len(b):
            diffs.append(f"{label}: section {index} has {len(a)} symbols != pyelftools {len(b)}")
        diffs.extend(
            f"{label}: section {index} symbol {i} {x} != pyelftools {y}"
            for i, (x, y) in enumerate(zip(a, b, strict=False))
            if x != y
        )


def elf_images(path: Path, label: str) -> list[tuple[str, bytes]]:
    """(label, bytes) of every ELF image in one file: the file itself when it is an ELF, and each
    code object the container layer finds inside it (bundle entries, decompressed CCOB payloads,
    OffloadBinary images, fat-binary sections of host ELF and PE/COFF files)."""
    data = path.read_bytes()
    inner = [
        (f"{label} {item.origin}", item.data) for item in scan(path) if isinstance(item, Blob) and item.data != data
    ]
    return ([(label, data)] if is_elf(data) else []) + inner


def fixture_images() -> list[tuple[str, bytes]]:
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix not in NOT_BINARY)
    out = [image for path in files for image in elf_images(path, str(path.relative_to(FIXTURES)))]
    return out + elf_images(Path(amdocc.samples.path()), "sample_kernels.hipfb")


def test_every_fixture_elf_reads_the_same_in_pyelftools():
    images = fixture_images()
    tally = Tally()
    for label, data in images:
        compare(label, data, tally)
    print(f"\nfixtures and the sample: {tally}")
    assert tally.differences == []
    # Every fixture the manifest lists gave at least one ELF image, and the sample its five.
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    compared = Counter(label.split(" ")[0] for label, _ in images)
    assert [f["file"] for f in manifest["fixtures"] if not compared[f["file"]]] == []
    assert compared["sample_kernels.hipfb"] == len(manifest["sample"]["targets"]) == 5
    assert tally.images == len(images) >= 90
    device = [data for _, data in images if ElfFile(data, Origin("<oracle>")).header.e_machine == EM_AMDGPU]
    assert tally.notes >= len(device) >= 80  # every code object carries its metadata note
    assert tally.symbols > tally.sections > tally.images


# Neither the fixtures nor the corpus hold an ELF32 image or an ELF without section headers: LLVM
# builds them here (an object, a shared library, and that library with its section headers
# stripped, whose notes are then found through PT_NOTE), for both classes.
ASSEMBLY = """
    .text
    .globl entry
    .type entry,@function
    .protected entry
entry:
    ret
    .size entry, .-entry
helper:
    ret
    .weak maybe
    .section .note.amdocc,"a",@note
    .p2align 2
    .long 7, 5, 0x1234
    .asciz "amdocc"
    .p2align 2
    .byte 1, 2, 3, 4, 5
    .p2align 2
    .long 4, 0, 1
    .asciz "AMD"
    .data
    .globl counter
    .type counter,@object
counter:
    .long 42
    .size counter, 4
"""


@pytest.mark.llvm22
@pytest.mark.parametrize("triple", ["i686-linux-gnu", "x86_64-linux-gnu"])
def test_llvm_built_elf32_and_elf64_read_the_same_in_pyelftools(tmp_path, triple):
    source, obj, lib, bare = (tmp_path / n for n in ("t.s", "t.o", "t.so", "bare.so"))
    source.write_text(ASSEMBLY)
    for command in (
        ["llvm-mc-22", f"-triple={triple}", "-filetype=obj", source, "-o", obj],
        ["ld.lld-22", "-shared", obj, "-o", lib],
        ["llvm-objcopy-22", "--strip-sections", lib, bare],
    ):
        subprocess.run([str(c) for c in command], check=True)
    tally = Tally()
    for path in (obj, lib, bare):
        compare(path.name, path.read_bytes(), tally)
    print(f"\n{triple}: {tally}")
    assert tally.differences == []
    assert tally.images == 3 and tally.notes == 6  # two notes each, the bare one's from PT_NOTE
    assert amdocc_view(bare.read_bytes())["sections"] == []
    assert tally.symbols >= 2 * 5  # entry, helper, maybe, counter (+ null, section)


@pytest.mark.corpus
@pytest.mark.slow
def test_every_aiter_code_object_reads_the_same_in_pyelftools(aiter_hsa: Path):
    files = sorted(aiter_hsa.rglob("*.co"))
    assert len(files) >= 2500, f"expected the wheel's ~2,501 .co files, found {len(files)}"
    tally = Tally()
    for path in files:
        compare(str(path.relative_to(aiter_hsa)), path.read_bytes(), tally)
    print(f"\naiter corpus: {tally}")
    assert tally.differences == []
    assert tally.images == len(files)
    assert tally.notes == len(files)  # one AMDGPU metadata note per hand-written .co
    assert tally.sections >= 10 * len(files) and tally.symbols >= 2 * len(files)
