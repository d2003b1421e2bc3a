"""The kernel descriptor (and CO v2's amd_kernel_code_t): its fields, its reserved bits and bytes,
and what it allocates, against llvm-objdump-22 and the layout of AMDGPUUsage.rst "Kernel Descriptor".

A gfx10+ descriptor that sets GRANULATED_WAVEFRONT_SGPR_COUNT (rsrc1 bits 9:6) is a finding.
tensorflow-rocm 2.14 ships about 25,000 gfx1030/gfx1100 kernels whose descriptors set those
bits, which LLVM 22's disassembler refuses ("reserved bits in range (9:6) set, must be zero on
gfx10+"). The oracle is llvm-objdump-22 itself: the bits are patched into real fixtures (found
with pyelftools, not amdocc), and amdocc must report the finding exactly where objdump refuses.
The other cases build descriptor bytes by hand from the layout, or read what llvm-objdump-22
printed for a fixture's descriptors (stored beside it at build time).
"""

from __future__ import annotations

import struct
import subprocess

import pytest
from elftools.elf.elffile import ELFFile

import amdocc
from amdocc.codeobject.descriptor import _BY_LAYOUT, KERNEL_DESCRIPTOR, _CompiledLayout, decode_descriptor
from amdocc.errors import FormatError, Origin
from amdocc.targets import get_target
from conftest import FIXTURES
from test_codeobject_resources import GFX942, descriptor

pytestmark = pytest.mark.llvm22


RSRC1_AT = 48  # byte offset of compute_pgm_rsrc1 in the 64-byte descriptor


def _descriptor_offsets(path) -> dict[str, int]:
    """File offset of every .kd symbol's descriptor, read with pyelftools."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        out = {}
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            if sym.name.endswith(".kd"):
                sec = elf.get_section(sym["st_shndx"])
                out[sym.name] = sym["st_value"] - sec["sh_addr"] + sec["sh_offset"]
        return out


def _with_sgpr_granule(path, value: int, tmp_path):
    raw = bytearray(path.read_bytes())
    symbols = _descriptor_offsets(path)
    for at in symbols.values():
        (rsrc1,) = struct.unpack_from("<I", raw, at + RSRC1_AT)
        struct.pack_into("<I", raw, at + RSRC1_AT, (rsrc1 & ~(0xF << 6)) | (value << 6))
    out = tmp_path / f"{path.stem}_{value}.hsaco"
    out.write_bytes(bytes(raw))
    return out, sorted(symbols)


def _objdump_refusals(path, symbols) -> set[str]:
    text = subprocess.run(
        ["llvm-objdump-22", "-D", "--disassemble-symbols=" + ",".join(symbols), str(path)],
        capture_output=True,
        text=True,
    ).stdout
    return {
        line.split("error decoding ")[1].split(":")[0]
        for line in text.splitlines()
        if "error decoding" in line and "reserved bits in range (9:6)" in line
    }


@pytest.mark.parametrize(
    "fixture",
    [
        "gfx1030_w32_wgp_cov4.hsaco",
        "gfx1100_w64_cu_cov4.hsaco",
        "gfx1201_w32_cu_cov4.hsaco",
        "gfx942_cov4.hsaco",
        "gfx906_cov6.hsaco",
    ],
)
@pytest.mark.parametrize("value", [0, 3, 15])
def test_finding_exactly_where_llvm_objdump_refuses(fixture, value, tmp_path):
    patched, symbols = _with_sgpr_granule(FIXTURES / "elf" / fixture, value, tmp_path)
    refused = _objdump_refusals(patched, symbols)
    (co,) = amdocc.load(patched)
    flagged = {
        k.symbol
        for k in co.kernels
        if any(f.code == "descriptor-bits" and "GRANULATED_WAVEFRONT_SGPR_COUNT" in f.message for f in k.findings)
    }
    assert flagged == refused
    # The oracle does refuse on gfx10+ for a non-zero value, and only there.
    assert bool(refused) == (value != 0 and co.target.descriptor_layout in ("gfx10", "gfx11", "gfx12"))
    for k in co.kernels:
        if k.symbol in flagged:
            (f,) = [f for f in k.findings if "GRANULATED_WAVEFRONT_SGPR_COUNT" in f.message]
            assert f.severity == "warning" and f"hold {value}" in f.message


def test_reserved_descriptor_bits_and_bytes_are_problems_and_defined_ones_are_not():
    # gfx942 (the gfx90a layout): rsrc1 bits 0-26 are defined, 27-31 reserved (AMDGPUUsage.rst).
    every_defined = descriptor(GFX942, vgpr_blocks=0x3F, sgpr_blocks=0xF)
    assert every_defined.problems == []
    assert descriptor(GFX942, vgpr_blocks=1).problems == []
    stray = descriptor(GFX942, vgpr_blocks=1 << 28)
    assert stray.problems == ["compute_pgm_rsrc1 has reserved bits 0x10000000 set for gfx90a"]
    data = bytearray(struct.pack("<III4sq20sIIIHH4s", 0, 0, 0, b"\0" * 4, 0, b"\0" * 20, 0, 0, 0, 0, 0, b"\0" * 4))
    data[13] = 1  # a reserved byte (12-15)
    kd = decode_descriptor(bytes(data), 0, GFX942, Origin("test"))
    assert kd.problems == ["descriptor reserved bytes (12-15, 24-43 or 60-63) are not zero"]
    assert decode_descriptor(bytes(data), 0, None, Origin("test")).fields == {}


def test_fixture_descriptors_built_by_llvm_have_no_problems():
    import amdocc
    from conftest import FIXTURES

    paths = [
        p for p in sorted((FIXTURES / "elf").iterdir()) if p.suffix in (".hsaco", ".co", ".o") and "hand_" not in p.name
    ]
    kernels = [k for path in paths for co in amdocc.load(path) for k in co.kernels]
    assert len(kernels) > 20 and any(p.name == "legacy_v2_gfx906.co" for p in paths)  # amd_kernel_code_t too
    assert [(k.name, k.descriptor.problems) for k in kernels if k.descriptor.problems] == []


def test_v2_amd_kernel_code_wave_size_and_words():
    from amdocc.codeobject.descriptor import AMD_KERNEL_CODE, decode_amd_kernel_code

    gfx906 = get_target("gfx906")

    def code(log2):
        raw = AMD_KERNEL_CODE.record(*[0] * len(AMD_KERNEL_CODE.fields))._replace(
            version_major=1,
            wavefront_size_log2=log2,
            debug_fields=b"\0" * 12,
            reserved=b"\0" * 12,
            control_directives=b"\0" * 128,
        )
        return AMD_KERNEL_CODE.struct.pack(*raw)

    kd = decode_amd_kernel_code(code(6), 0, gfx906, Origin("test"))
    assert (kd.words["wavefront_size"], kd.wave_size, kd.words["compute_pgm_rsrc3"], kd.problems) == (64, 64, 0, [])
    # A log2 of 20 names no wave size (and would be a 1 MiB wave): None, not 1 << 20.
    assert decode_amd_kernel_code(code(20), 0, gfx906, Origin("test")).words["wavefront_size"] is None


def test_usage_of_a_fixture_kernel_carries_the_descriptors_allocation():
    # What llvm-objdump-22 printed for agpr_gfx942_cov6.hsaco's descriptors (stored at build time).
    import amdocc
    from amdocc.models import from_kernel
    from conftest import FIXTURES
    from oracle.llvm22 import parse_descriptor_dump

    (dumped,) = parse_descriptor_dump((FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco.kd.txt").read_text()).values()
    (co,) = amdocc.load(FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco")
    for k in co.kernels:
        u = from_kernel(k)
        assert u.vgprs_allocated == dumped[k.symbol]["next_free_vgpr"]
        assert u.sgprs_allocated == dumped[k.symbol]["next_free_sgpr"]


def test_a_truncated_descriptor_is_named_with_its_offset():
    data = bytes(KERNEL_DESCRIPTOR.size + 8)
    with pytest.raises(FormatError) as caught:
        decode_descriptor(data, 16, get_target("gfx942"), Origin("built.co"))
    assert caught.value.offset == 16
    assert caught.value.message == (
        "truncated or out-of-range kernel descriptor: needs 64 bytes at 0x10, but only 0x48 bytes are available"
    )


def test_a_set_sgpr_granule_on_gfx10_plus_names_rsrc1_bits_9_to_6():
    # AMDGPUUsage.rst: COMPUTE_PGM_RSRC1 bits 9:6 are GRANULATED_WAVEFRONT_SGPR_COUNT, reserved
    # from gfx10 on; rsrc1 is the descriptor's word at byte 48.
    data = bytearray(KERNEL_DESCRIPTOR.size)
    struct.pack_into("<I", data, 48, 5 << 6)
    descriptor = decode_descriptor(bytes(data), 0, get_target("gfx1100"), Origin("built.co"))
    assert [p for p in descriptor.problems if "reserved on" in p] == [
        "compute_pgm_rsrc1 bits 9:6 (GRANULATED_WAVEFRONT_SGPR_COUNT) are reserved on gfx11 and must be zero "
        "(SGPRs are not allocated per wave from gfx10 on), but hold 5; llvm-objdump refuses this descriptor"
    ]


def test_each_layout_compiles_the_sgpr_granule_as_its_only_must_be_zero_field_from_gfx10_on():
    # Built afresh here: decoding caches each layout's compiled form once per process, so a
    # decode alone may never build it.
    for layout in _BY_LAYOUT:
        found = [(name, f.name, f.word, f.hi, f.lo) for name, f, _ in _CompiledLayout(layout).must_be_zero]
        gfx10_on = layout not in ("gfx6", "gfx90a")
        assert (
            found
            == [("granulated_wavefront_sgpr_count", "granulated_wavefront_sgpr_count", "compute_pgm_rsrc1", 9, 6)]
            * gfx10_on
        )
