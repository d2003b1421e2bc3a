"""Decoding checked against independent readers: llvm-objdump-22 for descriptors, PyYAML for the
v2 YAML subset, the bytes the test wrote for .comment strings and descriptor bits."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
import yaml

import amdocc
from amdocc.codeobject import yaml_subset
from amdocc.codeobject.descriptor import R2, BitField, _f, _flags, decode_amd_kernel_code
from amdocc.codeobject.model import Finding
from amdocc.codeobject.notes import decode_v2_isa
from amdocc.codeobject.producer import comment_strings, producers
from amdocc.codeobject.reader import parse_code_object
from amdocc.codeobject.target_id import TargetId
from amdocc.elf import Note
from amdocc.errors import FormatError, Origin, UsageError
from amdocc.targets import DESCRIPTOR_LAYOUTS, get_target
from conftest import FIXTURES
from fuzz.formats.elf import ElfView
from oracle.llvm22 import objdump_descriptors

GFX1250 = FIXTURES / "newer" / "amdgpu_gfx1250.hsaco"
GFX1200 = FIXTURES / "elf" / "gfx1200_w32_wgp_cov5.hsaco"
# Offsets inside the 64-byte kernel descriptor (AMDGPUUsage.rst "Kernel Descriptor").
RSRC2, KERNEL_CODE_PROPERTIES = 52, 56
ENABLE_WAVEFRONT_SIZE32 = 1 << 10  # kernel_code_properties bit 10
GFX12_ENABLE_DYNAMIC_VGPR = 1 << 6  # compute_pgm_rsrc2 bit 6 on GFX12


def _patched_descriptor(path, symbol: str, offset: int, change) -> bytes:
    data = bytearray(path.read_bytes())
    elf = ElfView(bytes(data))
    at = elf.symbol_offset(next(s for s in elf.symbols(elf.symtab()) if s.name == symbol)) + offset
    width = 2 if offset == KERNEL_CODE_PROPERTIES else 4
    fmt = "<H" if width == 2 else "<I"
    struct.pack_into(fmt, data, at, change(struct.unpack_from(fmt, data, at)[0]))
    return bytes(data)


@pytest.mark.llvm22
def test_a_wave_the_processor_cannot_run_leaves_the_vgpr_allocation_undecoded(tmp_path):
    # gfx1250 runs wave32 only. As built, llvm-objdump-22 and amdocc read the same allocation.
    (dumped,) = objdump_descriptors([str(GFX1250)], ["v200.kd"]).values()
    (co,) = amdocc.load(GFX1250)
    kernel = co.kernel("v200")
    assert kernel.descriptor.fields["next_free_vgpr"] == dumped["v200.kd"]["next_free_vgpr"]
    assert kernel.resources.vgprs_allocated == dumped["v200.kd"]["next_free_vgpr"]
    # With ENABLE_WAVEFRONT_SIZE32 cleared the descriptor asks for wave64; objdump then decodes
    # the VGPR field with a wave64 granule (8) that no gfx1250 row of the table has.
    wave64 = tmp_path / "gfx1250_wave64.hsaco"
    wave64.write_bytes(
        _patched_descriptor(GFX1250, "v200.kd", KERNEL_CODE_PROPERTIES, lambda w: w & ~ENABLE_WAVEFRONT_SIZE32)
    )
    (dumped,) = objdump_descriptors([str(wave64)], ["v200.kd"]).values()
    assert dumped["v200.kd"]["wavefront_size32"] == 0
    (co,) = amdocc.load(wave64)
    kernel = co.kernel("v200")
    assert kernel.descriptor.wave_size == 64
    assert "next_free_vgpr" not in kernel.descriptor.fields
    assert kernel.resources.vgprs_allocated is None
    problem = "descriptor asks for wave64, which gfx1250 does not support: its VGPR allocation is not decoded"
    assert kernel.descriptor.problems == [problem]
    assert ("descriptor-bits", "warning", problem) in [(f.code, f.severity, f.message) for f in kernel.findings]


def test_gfx12_dynamic_vgprs_are_a_finding_naming_the_bit():
    symbol = "_Z9saxpy_ldsfPKfPfi.kd"
    co = parse_code_object(
        _patched_descriptor(GFX1200, symbol, RSRC2, lambda w: w | GFX12_ENABLE_DYNAMIC_VGPR), Origin("x")
    )
    (kernel,) = [k for k in co.kernels if k.symbol == symbol]
    (finding,) = [f for f in kernel.findings if f.code == "dynamic-vgpr"]
    assert finding.severity == "warning"
    assert "(ENABLE_DYNAMIC_VGPR): VGPRs are allocated in blocks" in finding.message
    as_built = parse_code_object(GFX1200.read_bytes(), Origin("x"))
    assert not [f for k in as_built.kernels for f in k.findings if f.code == "dynamic-vgpr"]


# -- .comment ----------------------------------------------------------------------------------


def test_comment_strings_keep_only_printable_utf8_text():
    section = b"\0".join(
        [
            b"",
            b"  clang version 22.1.8 (https://github.com/llvm/llvm-project x)  ",
            b"Linker: LLD 22.1.8",
            b"bell\x07inside",  # a control character: not text
            b"\xff\xfe",  # not UTF-8
            b"   ",
            b"",
        ]
    )
    assert comment_strings(section) == [
        "clang version 22.1.8 (https://github.com/llvm/llvm-project x)",
        "Linker: LLD 22.1.8",
    ]


def test_several_clang_versions_are_listed_sorted_and_the_first_is_used():
    lines = ["clang version 22.1.8 (a)", "AMD clang version 19.0.0git (b)", "clang version 22.1.8 (c)"]
    chosen, notes = producers(lines)
    assert chosen is not None and chosen.text == lines[0]
    assert notes == [".comment names 2 clang versions (19.0.0git, 22.1.8); the first, 22.1.8, is used"]
    assert producers(lines[:1])[1] == []


# -- CodeObject.kernel -------------------------------------------------------------------------


@pytest.mark.parametrize("name,kind", [(5, "int"), (None, "NoneType"), (b"saxpy", "bytes")])
def test_a_kernel_name_that_is_not_a_string_is_a_usage_error_naming_its_type(name, kind):
    (co,) = amdocc.load(FIXTURES / "elf" / "gfx942_cov4.hsaco")
    with pytest.raises(UsageError) as caught:
        co.kernel(name)
    assert caught.value.message == f"a kernel name is a str, not {kind}"


# -- the v2 YAML subset against PyYAML -----------------------------------------------------------

# Documents in the subset LLVM's YAML writer produced (one key per line, block collections, flow
# sequences of scalars, plain and quoted scalars); PyYAML's safe_load is the reference reading.
DOCUMENTS = {
    "legacy v2 shape": (
        "---\nVersion: [ 1, 0 ]\nKernels:\n  - Name: k\n    SymbolName: 'k@kd'\n    Args:\n"
        "      - Size: 8\n        Align: 8\n      - Size: 4\n    CodeProps:\n      NumVGPRs: 10\n...\n"
    ),
    "scalar items": "Printf:\n  - 1\n  - x\n  - 'quoted '' item'\n  - \"esc\\tape\"\n",
    "dash alone, then a block": "List:\n  -\n    a: 1\n    b: [ 2, 3 ]\n  -\n    - 4\n  -\n",
    "items at the key's indentation": "Args:\n- Name: x\n  Size: 8\n- Name: y\nAfter: 1\n",
    "empty values and comments": "# a comment\nA:\nB: []\nC: true\nD: False\nE: 0x10\n'q key': v\n",
    "quoted keys and values": "'a''b': 1\n\"dq: key\": 2\nA: 'x: y'\nB: \"a\\tb\"\nC: 'it''s'\n",
    "flow sequences": "L: [ 'a', \"b\", 3, true, False ]\nM: [1,2]\nN: [ ]\nO: [ -5, 0x1F ]\n",
    "booleans and integers": "A: true\nB: True\nC: false\nD: False\nE: -5\nF: 0\nG: 123456789012\nH: plain text\n",
    "flow sequences nested 65 deep": "A: " + "[" * 65 + "]" * 65 + "\n",
    "flow sequences nested 63 deep two keys down": "A:\n  B:\n    C: " + "[" * 63 + "]" * 63 + "\n",
    "an item's flow sequence nested 64 deep": "A:\n  - " + "[" * 64 + "]" * 64 + "\n",
    "keys that end in a colon": "A:\nB: [ 1 ]\nC: 'x:'\n",
    "indented comments": "A:\n  # inside A\n  B: 1\n    # deeper still\n  C: [ 1 ]\n",
    "empty items among items": "A:\n  -\n  - 2\n  -\n  - c: 3\nB: 1\n",
}


@pytest.mark.parametrize("name", DOCUMENTS)
def test_the_yaml_subset_reads_as_pyyaml_does(name):
    text = DOCUMENTS[name]
    assert yaml_subset.loads(text) == yaml.safe_load(text)


ERRORS = {
    "a deeper line after a scalar": ("A: 1\n  B: 2\n", 2, "unexpected indentation"),
    "a tab in the indentation": ("A: 1\n\tB: 2\n", 2, "tab in indentation"),
    "a sequence item after a mapping's keys": ("A: 1\n- x\n", 2, "unexpected indentation"),
    # "- k:" nests a mapping in a sequence item, two levels a line: line 34 is 66 levels deep.
    "items nested past 64 levels": (
        "".join(" " * 4 * d + "- k:\n" for d in range(40)),
        34,
        "nesting deeper than 64 levels",
    ),
    "a line that is not key: value": ("A: 1\nplain words\n", 2, "expected 'key: value'"),
    "an empty key": ("A: 1\n: x\n", 2, "expected 'key: value'"),
    "a colon alone": ("A: 1\nB: 2\n:\n", 3, "expected 'key: value'"),
    # The flow bound counts the block levels around it: a key two levels down may open 63 more.
    "a nested key's flow sequence past 64 levels": (
        "A:\n  B:\n    C: " + "[" * 64 + "]" * 64 + "\n",
        3,
        "flow sequences nested deeper than 64 levels",
    ),
    "an item's flow sequence past 64 levels": (
        "A:\n  - " + "[" * 65 + "]" * 65 + "\n",
        2,
        "flow sequences nested deeper than 64 levels",
    ),
    "an open single quote": ("A: 1\nB: 'open\n", 2, "unterminated quoted scalar"),
    "an open double quote": ('A: 1\nB: 2\nC: "open\n', 3, "unterminated quoted scalar"),
    "a bad escape": ('A: "\\x"\n', 1, "bad escape in double-quoted scalar: truncated \\xXX escape"),
    # Line n of a chain of keys is nested n - 1 deep: line 66 is the first past 64 levels.
    "keys nested past 64 levels": ("".join(" " * d + "k:\n" for d in range(70)), 66, "nesting deeper than 64 levels"),
    "flow sequences nested past 64 levels": (
        "A: 1\nB: " + "[" * 70 + "]" * 70 + "\n",
        2,
        "flow sequences nested deeper than 64 levels",
    ),
}


@pytest.mark.parametrize("name", ERRORS)
def test_yaml_outside_the_subset_is_refused_at_its_line(name):
    text, line, message = ERRORS[name]
    with pytest.raises(yaml_subset.YamlSubsetError) as caught:
        yaml_subset.loads(text)
    assert caught.value.line == line
    assert str(caught.value) == f"line {line}: {message}"


def test_a_yaml_error_without_a_line_is_its_message_alone():
    error = yaml_subset.YamlSubsetError("no line known")
    assert (str(error), error.line) == ("no line known", None)


# -- CO v2: the e_flags feature bit and the amd_kernel_code_t record ----------------------------


@pytest.mark.parametrize("flags,xnack", [(0, "off"), (0x01, "on"), (0x02, "off"), (0x03, "on")])
def test_v2_xnack_is_e_flags_bit_0(flags, xnack):
    # Code-object v2 e_flags: EF_AMDGPU_XNACK_V2 = 0x01, EF_AMDGPU_TRAP_HANDLER_V2 = 0x02
    # (AMDGPUUsage.rst, "AMDGPU ELF Header e_flags for Code Object V2"); gfx906 has XNACK.
    data = bytearray((FIXTURES / "elf" / "legacy_v2_gfx906.co").read_bytes())
    struct.pack_into("<I", data, 0x30, flags)
    co = parse_code_object(bytes(data), Origin("x"))
    assert (
        co.target_id == TargetId("gfx906", None, xnack) and str(co.target_id) == f"gfx906:xnack{'+-'[xnack == 'off']}"
    )


def test_a_truncated_amd_kernel_code_t_is_refused_naming_the_record():
    # The record is 256 bytes (AMDGPUUsage.rst "amd_kernel_code_t"); 200 are not enough.
    with pytest.raises(FormatError) as caught:
        decode_amd_kernel_code(bytes(300), 100, get_target("gfx906"), Origin("x"))
    error = caught.value
    assert error.offset == 100
    assert error.message == (
        "truncated or out-of-range amd_kernel_code_t: needs 256 bytes at 0x64, but only 0x12c bytes are available"
    )


def test_a_bit_field_declaration_keeps_its_range_and_generations():
    # _f declares one bit range: one bit when no high bit is given, on the generations named.
    assert _f("enable_dynamic_vgpr", R2, 6, layouts={"gfx12"}) == BitField(
        "enable_dynamic_vgpr", R2, 6, 6, frozenset({"gfx12"})
    )
    assert _f("user_sgpr_count", R2, 1, 5).layouts == frozenset(DESCRIPTOR_LAYOUTS)
    first, second = _flags(R2, 13, "enable_exception_address_watch", "enable_exception_memory")
    assert (first.lo, first.hi, second.lo, second.hi) == (13, 13, 14, 14)
    assert first.layouts == second.layouts == frozenset(DESCRIPTOR_LAYOUTS)


def test_a_v2_amd_kernel_code_t_read_at_the_offsets_amdgpuusage_gives():
    # legacy_v2_gfx906.co: llvm-readelf-22 --notes shows CodeProps KernargSegmentSize 24,
    # GroupSegmentFixedSize 1024, PrivateSegmentFixedSize 16, WavefrontSize 64, NumSGPRs 12,
    # NumVGPRs 10. amd_kernel_code_t (AMDGPUUsage.rst): version_major/minor u32 at 0 and 4,
    # compute_pgm_rsrc1/2 at 48 and 52, code_properties at 56, private/group segment sizes at 60
    # and 64, kernarg size u64 at 72, wavefront_sgpr_count/workitem_vgpr_count u16 at 84 and 86,
    # wavefront_size (log2) u8 at 103.
    path = FIXTURES / "elf" / "legacy_v2_gfx906.co"
    data = path.read_bytes()
    elf = ElfView(data)
    at = elf.symbol_offset(next(s for s in elf.symbols(elf.symtab()) if s.name == "legacy_scale"))
    u32 = lambda offset: struct.unpack_from("<I", data, at + offset)[0]  # noqa: E731
    u16 = lambda offset: struct.unpack_from("<H", data, at + offset)[0]  # noqa: E731
    (kernel,) = parse_code_object(data, Origin("x")).kernels
    words = kernel.descriptor.words
    assert words["amd_kernel_code_version"] == (u32(0), u32(4)) and u32(0) == 1
    assert (words["compute_pgm_rsrc1"], words["compute_pgm_rsrc2"]) == (u32(48), u32(52))
    assert words["code_properties"] == u32(56) and words["kernel_code_properties"] == u32(56) & 0x7F
    assert (words["compute_pgm_rsrc3"], words["kernarg_preload"]) == (0, 0)  # no such words in v2
    assert (words["private_segment_fixed_size"], words["group_segment_fixed_size"], words["kernarg_size"]) == (
        u32(60),
        u32(64),
        struct.unpack_from("<Q", data, at + 72)[0],
    )
    assert (u32(60), u32(64), words["kernarg_size"]) == (16, 1024, 24)
    assert (words["wavefront_sgpr_count"], words["workitem_vgpr_count"]) == (u16(84), u16(86)) == (12, 10)
    assert words["wavefront_size"] == 1 << data[at + 103] == 64 and kernel.descriptor.wave_size == 64
    assert kernel.descriptor.problems == []


def test_records_carry_the_names_the_readme_and_the_producer_line_give():
    # README's API table: "`amdocc.Finding` | `code`, `severity`, `message`".
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `amdocc.Finding` |"))
    keys = re.findall(r"`(\w+)`", row.split("|")[2])
    assert keys == ["code", "severity", "message"]
    assert Finding("c", "s", "m").as_dict() == dict(zip(keys, ["c", "s", "m"], strict=True))
    line = "Linker: AMD LLD 19.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.3.1)"
    (chosen, notes) = producers([line])
    assert notes == [] and chosen.as_dict() == {"text": line, "tool": "lld", "vendor": "AMD", "version": "19.0.0git"}


def test_isa_names_past_the_note_are_refused_in_those_words():
    desc = struct.pack("<HHIII", 4, 8, 9, 0, 6) + b"AMD\0AMDGPU\0"  # 8 + 4 > 11 name bytes
    with pytest.raises(FormatError) as caught:
        decode_v2_isa(Note("AMD", 1, desc, 0x40), Origin("built.co", base=0))
    assert caught.value.message == "ISA note names run past the note"
    assert caught.value.offset == 16  # the names start after the 16-byte header
