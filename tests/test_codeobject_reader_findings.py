"""Every finding the code-object reader raises, on a fixture edited in one known place.

Each case changes one thing in a code object llvm built (a note's type or descriptor, a symbol's
size, a section's bytes) and states every finding that must follow: its code, its severity and its
message, whose names and numbers are the ones the edit put there. What the fixture holds before
the edit is what llvm-readelf-22 prints for it (--notes, -s, -p .comment; see the .readelf.txt and
.symbols.txt files beside each fixture).
"""

from __future__ import annotations

import struct
import subprocess

import msgpack
import pytest

from amdocc.codeobject.reader import parse_code_object
from amdocc.errors import FormatError, Origin
from conftest import FIXTURES
from fuzz.formats.elf import (
    SHDR,
    SYM,
    ElfView,
    build_notes,
    elf_replace_section,
    elf_set,
    metadata_note,
    note_desc,
    with_note_desc,
)
from fuzz.formats.metadata import mp_encode

GFX942 = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
LEGACY_V2 = (FIXTURES / "elf" / "legacy_v2_gfx906.co").read_bytes()
# llvm-readelf-22 -s gfx942_cov4.hsaco: the five kernel descriptors (64-byte OBJECTs).
KERNELS = [
    "_Z9saxpy_ldsfPKfPfi",
    "_Z15scratch_privatePKiPf",
    "_Z16uses_hidden_argsPf",
    "_Z11dynamic_ldsPf",
    "_Z9agpr_userPf",
]
NT_AMDGPU_METADATA = 32


def _parse(data: bytes):
    return parse_code_object(data, Origin("built.co"))


def _triples(findings):
    return [(f.code, f.severity, f.message) for f in findings]


def _metadata(data=GFX942):
    return msgpack.unpackb(note_desc(data, "AMDGPU", NT_AMDGPU_METADATA), raw=False)


def _with_metadata(tree, data=GFX942, trailing=b"") -> bytes:
    return with_note_desc(data, "AMDGPU", NT_AMDGPU_METADATA, mp_encode(tree) + trailing)


def _with_note_type(data: bytes, owner: str, note_type: int, new_type: int) -> bytes:
    note = metadata_note(ElfView(data), owner, note_type)[2]
    out = bytearray(data)
    struct.pack_into("<I", out, note.at + 8, new_type)  # namesz, descsz, type
    return bytes(out)


def test_the_fixture_as_built_has_no_code_object_findings():
    co = _parse(GFX942)
    assert co.findings == [] and [k.name for k in co.kernels] == KERNELS


def test_without_a_metadata_note_kernels_come_from_their_descriptors():
    co = _parse(_with_note_type(GFX942, "AMDGPU", NT_AMDGPU_METADATA, 0x7777))
    assert _triples(co.findings) == [
        ("no-metadata", "warning", "no NT_AMDGPU_METADATA note: kernels are known only from their descriptors")
    ]
    assert co.metadata is None and co.metadata_version is None
    assert co.metadata_plain  # no note, so certainly no floating-point value in it
    assert [(k.name, k.symbol) for k in co.kernels] == [(name, name + ".kd") for name in KERNELS]
    for kernel in co.kernels:
        assert (
            "metadata-missing",
            "warning",
            "kernel descriptor without a metadata entry: resources come from the descriptor alone",
        ) in _triples(kernel.findings)


def test_a_second_metadata_note_of_another_version_is_left_out_as_comgr_leaves_it():
    """Every note is read (tests/test_codeobject_several_notes.py has the device links that
    write several); one whose amdhsa.version differs from the first's is one comgr does not merge."""
    elf = ElfView(GFX942)
    section, notes, note = metadata_note(elf, "AMDGPU", NT_AMDGPU_METADATA)
    second = mp_encode({"amdhsa.version": [9, 9], "amdhsa.kernels": []})
    step = 8 if section.f["sh_addralign"] == 8 else 4
    rebuilt = [(n.f["name"], n.f["type"], n.f["desc"]) for n in notes] + [(note.f["name"], NT_AMDGPU_METADATA, second)]
    data = elf_replace_section(GFX942, section.index, build_notes(rebuilt, step))
    (*_, added) = ElfView(data).notes(ElfView(data).sections[section.index])
    co = _parse(data)
    assert _triples(co.findings) == [
        (
            "metadata-notes",
            "info",
            "2 metadata notes (a device link writes one per LTO partition); their amdhsa.kernels are merged as "
            "comgr merges them: 5 kernel entries",
        ),
        (
            "metadata-note-left-out",
            "error",
            f"metadata note 2 (at {added.f['desc_at']:#x} in the code object) says amdhsa.version [9, 9], "
            "note 1 [1, 1]: comgr, through which HIP reads metadata, leaves the whole note out, so HIP does not "
            "find the 0 kernel(s) it describes",
        ),
    ]
    assert co.metadata_version == (1, 1) and len(co.kernels) == len(KERNELS)


def test_bytes_after_the_metadata_map_are_counted():
    co = _parse(_with_metadata(_metadata(), trailing=b"\xc0\xc0\xc0"))
    assert _triples(co.findings) == [
        ("metadata-trailing-bytes", "warning", "3 bytes after the metadata map were ignored")
    ]


@pytest.mark.parametrize(
    "version,expected",
    [([1, 2], (1, 2)), ([1, "2"], None), ("1.2", None), (None, None)],
    ids=["ints", "a string inside", "a string", "absent"],
)
def test_the_metadata_version_is_read_only_from_a_list_of_integers(version, expected):
    tree = _metadata()
    tree.pop("amdhsa.version")
    if version is not None:
        tree["amdhsa.version"] = version
    assert _parse(_with_metadata(tree)).metadata_version == expected


def test_kernel_lists_and_entries_of_the_wrong_type_are_errors():
    tree = _metadata()
    tree["amdhsa.kernels"] = {"not": "a list"}
    co = _parse(_with_metadata(tree))
    assert ("metadata-type", "error", "amdhsa.kernels is missing or not a list") in _triples(co.findings)
    # Its descriptors still name the kernels.
    assert [k.name for k in co.kernels] == KERNELS

    tree = _metadata()
    tree["amdhsa.kernels"][1] = ["not", "a", "map"]
    co = _parse(_with_metadata(tree))
    assert _triples(co.findings) == [("metadata-type", "error", "amdhsa.kernels[1] is not a map")]
    # The entry is skipped; its descriptor is found without metadata, after the listed ones.
    assert [k.name for k in co.kernels] == [*KERNELS[:1], *KERNELS[2:], KERNELS[1]]


def _declared_findings(declared):
    tree = _metadata()
    tree["amdhsa.target"] = declared
    return _triples(_parse(_with_metadata(tree)).findings)


@pytest.mark.parametrize(
    "declared,message",
    [
        # e_flags 0x54c: gfx942 with xnack and sramecc "any" (llvm-readelf-22 -h), so "gfx942".
        (
            "amdgcn-amd-amdhsa--gfx90a:xnack+",
            "metadata amdhsa.target says 'amdgcn-amd-amdhsa--gfx90a:xnack+' but e_flags say gfx942",
        ),
        # LLVM main's amdgpu<subarch> triple names a processor too ('9.0a' is gfx90a, '9.42' gfx942).
        (
            "amdgpu9.0a-amd-amdhsa-unknown-gfx942",
            "metadata amdhsa.target's triple 'amdgpu9.0a' names gfx90a, but e_flags say gfx942",
        ),
        ("amdgpu9.42-amd-amdhsa-unknown-gfx942", None),
    ],
)
def test_a_declared_target_that_is_not_the_e_flags_one_is_a_warning(declared, message):
    assert _declared_findings(declared) == ([("target-mismatch", "warning", message)] if message else [])


def test_a_descriptor_symbol_of_the_wrong_size_is_a_warning_and_size_0_is_not():
    elf = ElfView(GFX942)
    symbol = next(s for s in elf.symbols(elf.symtab()) if s.name == KERNELS[0] + ".kd")
    wrong = ("descriptor-size", "warning", f"descriptor symbol {symbol.name} has size 32, not 64")
    for size, expected in ((32, [wrong]), (0, [])):
        co = _parse(elf_set(GFX942, symbol.at, SYM[2][1], "st_size", size))
        assert [t for t in _triples(co.kernels[0].findings) if t[0] == "descriptor-size"] == expected


def _with_comment(data: bytes, comment: bytes) -> bytes:
    return elf_replace_section(data, ElfView(data).named(".comment").index, comment)


def test_several_compilers_in_comment_are_an_info_finding_and_a_damaged_section_a_warning():
    co = _parse(_with_comment(GFX942, b"\0clang version 22.1.8 (a)\0AMD clang version 19.0.0git (b)\0"))
    assert _triples(co.findings) == [
        ("producer", "info", ".comment names 2 clang versions (19.0.0git, 22.1.8); the first, 22.1.8, is used")
    ]
    assert co.producer.version == (22, 1, 8) and co.producer.vendor == ""
    elf = ElfView(GFX942)
    comment = elf.named(".comment")
    co = _parse(elf_set(GFX942, comment.at, SHDR[2][1], "sh_offset", len(GFX942) + 16))
    assert [(f.code, f.severity) for f in co.findings] == [("comment-section", "warning")]
    assert co.findings[0].message.startswith(".comment cannot be read: ")
    assert co.producer is None


# -- code-object v2 ---------------------------------------------------------------------------


def test_a_v2_object_without_the_hsa_osabi_is_read_by_its_isa_note():
    data = bytearray(LEGACY_V2)
    data[7] = 0  # EI_OSABI: ELFOSABI_NONE, as early v2 objects left it
    co = _parse(bytes(data))
    assert co.code_object_version == 2 and co.processor == "gfx906"
    assert _triples(co.findings) == [
        (
            "elf-osabi",
            "info",
            "EI_OSABI is 0, not HSA (64); treated as code-object v2 because it carries an AMD ISA note",
        )
    ]


def _v2_metadata_text(data=LEGACY_V2) -> str:
    return note_desc(data, "AMD", 10).rstrip(b"\0").decode()


def test_a_v2_metadata_kernel_without_its_symbol_is_an_error_of_the_code_object():
    # The YAML lists legacy_scale (llvm-readelf-22 --notes); one more entry names no symbol.
    text = _v2_metadata_text().replace("...\n", "") + "  - Name: ghost\n    SymbolName: 'ghost@kd'\n"
    co = _parse(with_note_desc(LEGACY_V2, "AMD", 10, text.encode() + b"\0"))
    assert _triples(co.findings) == [("descriptor-missing", "error", "v2 metadata kernel ghost has no kernel symbol")]
    assert [k.name for k in co.kernels] == ["legacy_scale"]


def test_a_v2_kernel_is_named_by_its_metadata_name():
    text = _v2_metadata_text().replace("- Name:            legacy_scale", "- Name:            scaled_by_name")
    co = _parse(with_note_desc(LEGACY_V2, "AMD", 10, text.encode() + b"\0"))
    (kernel,) = co.kernels
    assert (kernel.name, kernel.symbol) == ("scaled_by_name", "legacy_scale")
    assert kernel.findings == [] and kernel.resources.vgprs == 10  # CodeProps NumVGPRs: 10


# -- symbols -------------------------------------------------------------------------------------


def _readelf_symtab(path):
    """(name, value, ndx) of the .symtab rows llvm-readelf-22 -s printed for a fixture."""
    text = path.with_name(path.name + ".symbols.txt").read_text()
    table = text.split("Symbol table '.symtab'", 1)[1]
    rows = []
    for line in table.splitlines()[2:]:
        parts = line.split()
        if len(parts) == 8:
            rows.append((parts[7], int(parts[1], 16), parts[6]))
    return rows


def test_resource_symbols_are_the_absolute_symbols_llvm_readelf_lists_under_each_kernel():
    compared = 0
    for path in sorted((FIXTURES / "elf").glob("*.hsaco")):
        if not path.with_name(path.name + ".symbols.txt").exists():
            continue
        co = _parse(path.read_bytes())
        absolute = _readelf_symtab(path)
        for kernel in co.kernels:
            prefix = kernel.symbol.removesuffix(".kd") + "."
            expected = {
                name[len(prefix) :]: value for name, value, ndx in absolute if ndx == "ABS" and name.startswith(prefix)
            }
            assert kernel.resource_symbols == expected, (path.name, kernel.name)
            compared += len(expected)
    assert compared > 100  # LLVM 20+ writes eight or more per kernel


def test_without_a_symtab_kernels_are_found_in_the_dynamic_symbols():
    # agpr_gfx942_cov6: .dynsym holds the two kernels and their .kd objects, .symtab adds the
    # local resource symbols (llvm-readelf-22 -s); hide .symtab and only the former remain.
    data = (FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco").read_bytes()
    symtab = ElfView(data).named(".symtab")
    co = _parse(elf_set(data, symtab.at, SHDR[2][1], "sh_type", 1))  # SHT_PROGBITS
    assert [k.symbol for k in co.kernels] == ["agpr_clobber.kd", "agpr_small.kd"]
    assert all(k.descriptor is not None and k.resource_symbols == {} for k in co.kernels)
    full = _parse(data)
    assert [k.resource_symbols["num_agpr"] for k in full.kernels] == [0x40, 0xB]


@pytest.mark.parametrize("declared", [5, "", ["gfx90a"]], ids=["an int", "empty", "a list"])
def test_a_declared_target_that_is_not_a_string_is_not_compared(declared):
    assert _declared_findings(declared) == []


def test_v2_kernels_after_other_symbols_are_all_found():
    # llvm-readelf-22 -s legacy_v2_gfx906.co: .symtab row 1 is _DYNAMIC (NOTYPE, read by no one),
    # row 2 legacy_scale (AMDGPU_HSA_KERNEL). Make row 1 an OBJECT: it is read, and is no kernel.
    elf = ElfView(LEGACY_V2)
    dynamic = next(s for s in elf.symbols(elf.symtab()) if s.name == "_DYNAMIC")
    data = elf_set(LEGACY_V2, dynamic.at, SYM[2][1], "st_info", 1)  # STB_LOCAL, STT_OBJECT
    assert [k.name for k in _parse(data).kernels] == ["legacy_scale"]


@pytest.mark.llvm22
def test_every_kernel_carries_the_compiler_its_comment_names():
    # llvm-readelf-22 -p .comment: "Linker: Debian LLD 22.1.8", "Debian clang version 22.1.8 (...)";
    # clang's line is the compiler.
    path = FIXTURES / "elf" / "gfx942_cov4.hsaco"
    dump = subprocess.run(["llvm-readelf-22", "-p", ".comment", str(path)], capture_output=True, text=True).stdout
    clang = next(line.split("] ", 1)[1] for line in dump.splitlines() if "clang version" in line)
    co = _parse(path.read_bytes())
    assert co.producer.text == clang and (co.producer.tool, co.producer.vendor) == ("clang", "Debian")
    assert [k.producer for k in co.kernels] == [co.producer] * len(KERNELS)


def test_v2_metadata_without_a_version_list_has_no_version():
    text = _v2_metadata_text()
    assert _parse(LEGACY_V2).metadata_version == (1, 0)  # "Version: [ 1, 0 ]"
    for replacement in ("Version:         '1.0'", "Other:           [ 1, 0 ]"):
        data = with_note_desc(
            LEGACY_V2, "AMD", 10, text.replace("Version:         [ 1, 0 ]", replacement).encode() + b"\0"
        )
        assert _parse(data).metadata_version is None


def test_a_v2_object_without_an_isa_note_is_refused_at_its_first_note():
    elf = ElfView(LEGACY_V2)
    section = elf.of_type(7)[0]  # SHT_NOTE
    notes = elf.notes(section)
    isa = next(n for n in notes if n.f["type"] == 3)
    data = bytearray(LEGACY_V2)
    struct.pack_into("<I", data, isa.at + 8, 0x7777)
    with pytest.raises(FormatError) as caught:
        _parse(bytes(data))
    assert caught.value.offset == min(n.f["desc_at"] for n in notes)
    assert caught.value.message == (
        "code-object v2 without an NT_AMD_HSA_ISA_VERSION note: its processor cannot be known"
    )


def test_resource_symbols_of_a_kernel_whose_name_has_dots():
    # Rename agpr_small to agpr.small everywhere (same length: string tables and metadata alike);
    # its resource symbols are then agpr.small.num_vgpr and so on (llvm-readelf-22 -s).
    data = (FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco").read_bytes().replace(b"agpr_small", b"agpr.small")
    kernel = next(k for k in _parse(data).kernels if k.name == "agpr.small")
    absolute = {name: value for name, value, _ in _readelf_symtab(FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco")}
    assert kernel.resource_symbols["num_agpr"] == absolute["agpr_small.num_agpr"] == 0xB
    assert kernel.resource_symbols["num_vgpr"] == absolute["agpr_small.num_vgpr"] == 0x29
