"""Which registers one instruction reads and writes, from LLVM's text and tables/isa_semantics.toml.

Each expectation is worked from the instruction's description in AMD's ISA manuals (the RDNA3/4,
CDNA3 and Vega ISA guides: "D = S0 * S1 + D" for v_fmac, "VCC = carry-out" for v_add_co_u32, the
GLC/SC0 "return pre-op value" bit of atomics, ...) and from LLVM's assembler syntax; the same table
is held instruction by instruction to LLVM 22's final machine IR by tests/test_isa_liveness_mir.py.
"""

from __future__ import annotations

import pytest

from amdocc.errors import TableError
from amdocc.isa import semantics as S


def regs(*names: str) -> set[str]:
    return set(names)


def access(major: int, wave: int, text: str) -> tuple[set[str], set[str], S.Access]:
    mnemonic, _, operands = text.partition(" ")
    a = S.Semantics(major, wave).access(mnemonic, operands.strip())
    return set(S.register_names(a.defs)), set(S.register_names(a.uses)), a


def gprs(names: set[str]) -> set[str]:
    """The named registers without the implicit ones (exec, scc, m0)."""
    return names - {"exec_lo", "exec_hi", "scc", "m0"}


# -- operand text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v5", {"v5"}),
        ("v[2:3]", {"v2", "v3"}),
        ("s[4:7]", {"s4", "s5", "s6", "s7"}),
        ("a[0:3]", {"a0", "a1", "a2", "a3"}),
        ("vcc_lo", {"vcc_lo"}),
        ("vcc", {"vcc_lo", "vcc_hi"}),
        ("exec", {"exec_lo", "exec_hi"}),
        ("ttmp[4:5]", {"ttmp4", "ttmp5"}),
        ("-|v7|", {"v7"}),
        ("off", set()),
        ("null", set()),
        ("0x3f800000", set()),
        ("1.0", set()),
    ],
)
def test_operand_text_names_its_registers(text, expected):
    assert set(S.register_names(S.operand_registers(text))) == expected


def test_a_16_bit_half_names_only_that_half():
    lo, hi = S.operand_registers("v1.l"), S.operand_registers("v1.h")
    assert lo and hi and lo & hi == 0 and lo | hi == S.vgpr_bits(1)
    assert S.count_vgprs(lo) == S.count_vgprs(hi) == 1  # either half keeps its register counted


def test_modifiers_after_the_last_operand_are_not_operands():
    items, modifiers = S.split_operands("v0, v1, v2, v3 op_sel:[0,1,0] op_sel_hi:[1,0,1] clamp")
    assert items == ["v0", "v1", "v2", "v3"]
    assert modifiers == ["op_sel:[0,1,0]", "op_sel_hi:[1,0,1]", "clamp"]
    items, _ = S.split_operands("s0, hwreg(HW_REG_MODE, 0, 4)")
    assert items == ["s0", "hwreg(HW_REG_MODE, 0, 4)"]


def test_a_register_beyond_the_file_fails_closed():
    _, _, a = access(9, 64, "s_mov_b32 s106, 0")
    assert a.unknown and "s105" in a.unknown


# -- families of the table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("major", "wave", "text", "defs", "uses"),
    [
        # stores and scalar compares write no register
        (9, 64, "global_store_dword v0, v1, s[0:1]", set(), {"v0", "v1", "s0", "s1"}),
        (11, 32, "ds_store_b32 v1, v2 offset:16", set(), {"v1", "v2"}),
        (9, 64, "s_cmp_lt_i32 s4, s6", set(), {"s4", "s6"}),
        # a carry-out beside the sum; div_scale's flag; mad_u64_u32's carry
        (9, 64, "v_add_co_u32_e32 v0, vcc, v1, v2", {"v0", "vcc_lo", "vcc_hi"}, {"v1", "v2"}),
        (11, 32, "v_add_co_u32 v1, s0, 0x40000, v1", {"v1", "s0"}, {"v1"}),
        (9, 64, "v_div_scale_f32 v1, vcc, v2, v3, v2", {"v1", "vcc_lo", "vcc_hi"}, {"v2", "v3"}),
        (9, 64, "v_mad_u64_u32 v[0:1], s[2:3], v4, v5, v[6:7]", {"v0", "v1", "s2", "s3"}, {"v4", "v5", "v6", "v7"}),
        (12, 32, "v_mad_co_u64_u32 v[0:1], null, v4, v5, v[6:7]", {"v0", "v1"}, {"v4", "v5", "v6", "v7"}),
        # tied accumulators read their destination
        (9, 64, "v_fmac_f32_e32 v1, v2, v3", {"v1"}, {"v1", "v2", "v3"}),
        (9, 64, "v_mac_f32_e32 v1, v2, v3", {"v1"}, {"v1", "v2", "v3"}),
        (9, 64, "v_dot2c_f32_f16_e32 v1, v2, v3", {"v1"}, {"v1", "v2", "v3"}),
        (9, 64, "s_mulk_i32 s3, 0x7", {"s3"}, {"s3"}),
        (9, 64, "s_addk_i32 s3, 0x7", {"s3"}, {"s3"}),
        (9, 64, "s_cmov_b32 s3, s4", {"s3"}, {"s3", "s4"}),
        (9, 64, "v_writelane_b32 v1, s4, 21", {"v1"}, {"v1", "s4"}),
        (11, 32, "v_fma_mixhi_f16 v0, v5, v7, 0", {"v0"}, {"v5", "v7"}),  # writes v0.h only (below)
        (9, 64, "v_fma_mixlo_f16 v0, v5, v7, v1", {"v0"}, {"v0", "v5", "v7", "v1"}),
        # half loads keep the other half; DPP and SDWA preserve the lanes or bits they do not write
        (9, 64, "global_load_short_d16_hi v12, v[10:11], off", {"v12"}, {"v12", "v10", "v11"}),
        (11, 32, "global_load_d16_b16 v3, v[4:5], off", {"v3"}, {"v3", "v4", "v5"}),
        (9, 64, "v_mov_b32_dpp v5, v0 row_shr:1 row_mask:0xf bank_mask:0xf", {"v5"}, {"v5", "v0"}),
        (9, 64, "v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE", {"v0"}, {"v0", "v1", "v2"}),
        (9, 64, "v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD", {"v0"}, {"v1", "v2"}),
        # sparse MFMA accumulates into its destination; a dense MFMA names source C
        (9, 64, "v_smfmac_f32_16x16x32_f16 v[0:3], v[4:5], v[6:9], v10", {"v0", "v1", "v2", "v3"},
         {"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10"}),
        (9, 64, "v_mfma_f32_4x4x1f32 a[0:3], v0, v1, a[0:3]", {"a0", "a1", "a2", "a3"},
         {"a0", "a1", "a2", "a3", "v0", "v1"}),
        # lane permutes keep the old value where no lane is selected; swaps write both operands
        (10, 32, "v_permlane16_b32 v1, v2, s0, s1", {"v1"}, {"v1", "v2", "s0", "s1"}),
        (10, 32, "v_permlanex16_b32 v1, v2, s0, s1", {"v1"}, {"v1", "v2", "s0", "s1"}),
        (9, 64, "v_swap_b32 v1, v2", {"v1", "v2"}, {"v1", "v2"}),
        (9, 64, "v_permlane32_swap_b32_e32 v1, v2", {"v1", "v2"}, {"v1", "v2"}),
        # atomics return only when asked
        (9, 64, "global_atomic_add v0, v1, v2, s[0:1] glc", {"v0"}, {"v1", "v2", "s0", "s1"}),
        (9, 64, "global_atomic_add v0, v1, s[0:1] sc0", {"v0"}, {"v1", "s0", "s1"}),
        (12, 32, "global_atomic_add_u32 v0, v1, v2, s[0:1] th:TH_ATOMIC_RETURN", {"v0"}, {"v1", "v2", "s0", "s1"}),
        (9, 64, "global_atomic_add v1, v2, s[0:1]", set(), {"v1", "v2", "s0", "s1"}),
        (9, 64, "buffer_atomic_add v1, off, s[4:7], 0 glc", {"v1"}, {"v1", "s4", "s5", "s6", "s7"}),
        (9, 64, "buffer_atomic_add v1, off, s[4:7], 0", set(), {"v1", "s4", "s5", "s6", "s7"}),
        (9, 64, "ds_add_rtn_u32 v2, v5, v0", {"v2"}, {"v5", "v0"}),
        (9, 64, "ds_add_u32 v5, v0", set(), {"v5", "v0"}),
        (9, 64, "ds_wrxchg_rtn_b32 v2, v3, v7 offset:1024", {"v2"}, {"v3", "v7"}),
        # LDS DMA: the VGPR is an address
        (9, 64, "buffer_load_dword v1, s[4:7], 0 offen lds", set(), {"v1", "s4", "s5", "s6", "s7"}),
        (9, 64, "global_load_lds_dword v[2:3], off", set(), {"v2", "v3"}),
    ],
)  # fmt: skip
def test_the_table_says_what_the_isa_describes(major, wave, text, defs, uses):
    d, u, _ = access(major, wave, text)
    assert gprs(d) == defs
    assert gprs(u) == uses


def test_gfx10_cmpx_writes_exec_only_and_gfx9_cmpx_also_its_destination():
    d, u, _ = access(11, 32, "v_cmpx_gt_i32_e32 s2, v0")
    assert d == {"exec_lo"} and gprs(u) == {"s2", "v0"}
    d, u, _ = access(9, 64, "v_cmpx_gt_i32_e64 s[2:3], v0, v1")
    assert d == {"s2", "s3", "exec_lo", "exec_hi"} and gprs(u) == {"v0", "v1"}


def test_vopd_halves_are_read_as_two_instructions():
    d, u, a = access(11, 32, "v_dual_mul_f32 v0, v1, v2 :: v_dual_fmac_f32 v3, v4, v5")
    assert gprs(d) == {"v0", "v3"} and gprs(u) == {"v1", "v2", "v3", "v4", "v5"}
    assert a.rule == "vopd(default;tied-accumulator)"
    d, u, _ = access(11, 32, "v_dual_cndmask_b32 v0, v1, v2 :: v_dual_mov_b32 v3, v4")
    assert "vcc_lo" in u


def test_one_semantics_answers_each_text_of_a_mnemonic_by_its_own_modifiers_and_operand_count():
    # The table's decision is remembered per mnemonic, modifiers and operand count, and texts that
    # differ in any of them must not share it: GLC/SC0 makes an atomic return the pre-op value,
    # and gfx1250's VOPD3 names its mask as a fourth operand instead of reading VCC.
    for first, second in ((0, 1), (1, 0)):
        sem = S.Semantics(9, 64)
        texts = ("v0, v1, s[0:1] sc0", "v0, v1, s[0:1]")
        answers = {k: sem.access("global_atomic_add", texts[k]) for k in (first, second)}
        assert set(S.register_names(answers[0].defs)) == {"v0"} and answers[1].defs == 0
        sem = S.Semantics(12, 32)
        texts = ("v0, v1, v2 :: v_dual_mov_b32 v3, v4", "v0, v1, v2, s0 :: v_dual_mov_b32 v3, v4")
        answers = {k: sem.access("v_dual_cndmask_b32", texts[k]) for k in (first, second)}
        assert "vcc_lo" in S.register_names(answers[0].uses)
        assert "vcc_lo" not in S.register_names(answers[1].uses) and "s0" in S.register_names(answers[1].uses)


def test_true16_halves_write_their_half_and_keep_the_register_counted():
    mnemonic, operands = "v_add_f16_e32", "v1.l, v2.l, v3.h"
    a = S.Semantics(11, 32).access(mnemonic, operands)
    assert a.defs == S.operand_registers("v1.l")  # v1.h is not written
    assert S.count_vgprs(a.uses) == 2


def test_a_mix_into_one_half_writes_that_half_from_gfx11_and_ties_the_register_before():
    a = S.Semantics(11, 32).access("v_fma_mixhi_f16", "v0, v5, v7, 0")
    assert a.defs == S.operand_registers("v0.h")
    a = S.Semantics(12, 32).access("v_fma_mixlo_f16", "v0, v5, v7, 0")
    assert a.defs == S.operand_registers("v0.l")
    a = S.Semantics(9, 64).access("v_fma_mixhi_f16", "v0, v5, v7, 0")
    assert a.defs == a.uses & S.vgpr_bits(0) == S.vgpr_bits(0)


def test_implicit_registers():
    _, u, _ = access(9, 64, "v_readlane_b32 s2, v1, 4")
    assert "exec_lo" not in u  # lane reads ignore exec
    d, u, _ = access(9, 64, "s_and_saveexec_b64 s[0:1], vcc")
    assert {"exec_lo", "exec_hi", "scc"} <= d and {"exec_lo", "exec_hi"} <= u
    _, u, _ = access(9, 64, "s_cbranch_vccz 12")
    assert u == {"vcc_lo", "vcc_hi"}
    _, u, _ = access(10, 32, "s_cbranch_vccz 12")
    assert u == {"vcc_lo"}
    d, _, _ = access(9, 64, "s_add_u32 s2, s2, 4")
    assert "scc" in d
    d, _, _ = access(12, 32, "s_add_nc_u64 s[2:3], s[2:3], s[8:9]")
    assert "scc" not in d
    _, u, _ = access(9, 64, "buffer_load_dword v1, s[4:7], 0 offen lds")
    assert "m0" in u


@pytest.mark.parametrize(
    "text",
    ["s_set_gpr_idx_on s2, gpr_idx(SRC0)", "v_movrels_b32_e32 v0, v1", "s_movrels_b32 s0, s1", "s_setpc_b64 s[0:1]"],
)
def test_register_indexing_and_indirect_calls_fail_closed(text):
    _, _, a = access(9, 64, text)
    assert a.unknown


def test_a_bad_role_in_the_table_is_a_table_error():
    with pytest.raises(TableError, match="role 'bogus'"):
        S._rules("rule", [{"name": "x", "match": "v_x", "roles": ["bogus"]}])
    with pytest.raises(TableError, match="implicit register"):
        S._rules("implicit", [{"name": "x", "match": "v_x", "uses": ["s0"]}])
