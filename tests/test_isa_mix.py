"""The instruction mix (tables/isa_mix.toml) on hand-worked programs assembled by llvm-mc-22:
each line's class is written beside it, from the ISA family the instruction belongs to."""

from __future__ import annotations

import pytest

from amdocc.isa import disassemble
from amdocc.isa.mix import classify, family_of, waited_counters
from test_isa_disassembly import _library
from test_isa_flow import _assemble

pytestmark = pytest.mark.llvm22

GFX942 = [
    ("s_waitcnt vmcnt(0) lgkmcnt(0)", "waitcnt"),
    ("s_nop 1", "nop"),
    ("s_barrier", "barrier"),
    ("s_load_dword s4, s[0:1], 0x0", "smem"),
    ("scratch_store_dword off, v1, s0", "scratch"),
    ("v_mfma_f32_4x4x1_16b_f32 a[0:3], v0, v1, a[0:3]", "matrix"),
    ("v_accvgpr_write_b32 a4, v2", "agpr_copy"),
    ("v_accvgpr_read_b32 v3, a4", "agpr_copy"),
    ("ds_read_b32 v4, v5", "lds"),
    ("global_store_dword v[0:1], v2, off", "vmem_store"),
    ("global_atomic_add v[0:1], v2, off", "vmem_atomic"),
    ("global_load_dword v6, v[0:1], off", "vmem_load"),
    ("buffer_load_dword v7, v0, s[4:7], 0 offen", "vmem_load"),
    ("v_add_f32_e32 v8, v1, v2", "valu"),
    ("s_add_u32 s2, s2, 1", "salu"),
    ("s_cbranch_scc1 0", "branch"),
    ("s_endpgm", "branch"),
]
GFX1201 = [
    ("s_wait_loadcnt 0x0", "waitcnt"),
    ("s_wait_kmcnt 0x0", "waitcnt"),
    ("s_load_b32 s4, s[0:1], 0x0", "smem"),
    ("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "matrix"),
    ("global_load_b32 v1, v[2:3], off", "vmem_load"),
    ("scratch_load_b32 v1, off, off", "scratch"),
    ("v_add_f32_e32 v1, v2, v3", "valu"),
    ("s_endpgm", "branch"),
]


@pytest.mark.parametrize(("mcpu", "family", "program"), [("gfx942", "CDNA3", GFX942), ("gfx1201", "RDNA4", GFX1201)])
def test_each_instruction_gets_the_class_written_beside_it(tmp_path, mcpu, family, program):
    _library()
    code = _assemble(tmp_path, "".join(f"  {text}\n" for text, _ in program), mcpu)
    instructions = disassemble(code, processor=mcpu)
    assert [i.text.split()[0] for i in instructions] == [t.split()[0] for t, _ in program]
    scratch = [i.mnemonic.startswith("scratch_") for i in instructions]  # as spills.py marks them
    assert list(classify(instructions, family, scratch)) == [c for _, c in program]


def test_family_keys_and_waited_counters(tmp_path):
    _library()
    assert family_of("CDNA3 (MI300/MI325)") == "CDNA3" and family_of(None) is None
    code = _assemble(tmp_path, "  s_waitcnt vmcnt(0) lgkmcnt(0)\n  s_waitcnt lgkmcnt(1)\n", "gfx942")
    assert [waited_counters(i) for i in disassemble(code, processor="gfx942")] == [("vmcnt", "lgkmcnt"), ("lgkmcnt",)]
    code = _assemble(tmp_path, "  s_wait_loadcnt 0x0\n  s_wait_loadcnt_dscnt 0x0\n", "gfx1201")
    assert [waited_counters(i) for i in disassemble(code, processor="gfx1201")] == [("loadcnt",), ("loadcnt", "dscnt")]


def test_a_scratch_mark_makes_a_buffer_access_scratch_and_an_undecodable_word_stays_undecodable(tmp_path):
    # A buffer store that spills.py found through the private segment's resource is "scratch"
    # whatever its mnemonic says; a word LLVM cannot decode (0xffffffff, objdump's ".long") is
    # "undecodable", even where a scratch mark is given for it.
    _library()
    program = [
        ("buffer_store_dword v1, off, s[0:3], 0", "scratch"),
        ("buffer_store_dword v1, off, s[8:11], 0", "vmem_store"),
        ("v_add_f32_e32 v8, v1, v2", "valu"),
    ]
    code = _assemble(tmp_path, "".join(f"  {text}\n" for text, _ in program), "gfx942")
    instructions = disassemble(code + (0xFFFFFFFF).to_bytes(4, "little") + code, processor="gfx942")
    assert [i.decoded for i in instructions] == [True] * 3 + [False] + [True] * 3
    scratch = [True, False, False, True, False, False, False]
    expected = [*(c for _, c in program), "undecodable", "vmem_store", "vmem_store", "valu"]
    assert list(classify(instructions, "CDNA3", scratch)) == expected
    assert list(classify(instructions, "CDNA3")) == ["vmem_store", "vmem_store", "valu", "undecodable", *expected[4:]]
