"""Liveness on small kernels worked by hand: the dataflow, RGA's live-in ∪ live-out count, the
refined figure, peaks, the allocation invariant and failing closed.

Each kernel is a handful of instructions in LLVM's syntax with a control-flow graph built by hand;
the expected counts are worked out from the instructions' documented reads and writes (the same
table LLVM 22's machine IR holds instruction by instruction in tests/test_isa_liveness_mir.py).
"""

from __future__ import annotations

from amdocc.isa import liveness as L
from amdocc.isa import semantics as S
from amdocc.isa.model import Block, ControlFlow, Instruction


def program(*texts: str) -> tuple[Instruction, ...]:
    out = []
    for i, text in enumerate(texts):
        mnemonic, _, operands = text.partition(" ")
        out.append(Instruction(4 * i, 4, text, mnemonic, operands.strip()))
    return tuple(out)


def straight(instructions) -> ControlFlow:
    return ControlFlow((Block(0, 0, len(instructions), (), True, 0),))


SEM = S.Semantics(9, 64)


def test_straight_line_counts_live_in_or_live_out():
    code = program(
        "v_mov_b32_e32 v1, 0",  # v1 born: live out only
        "v_add_f32_e32 v2, v0, v1",  # v0, v1 die, v2 born
        "global_store_dword v3, v2, s[0:1]",  # v3, v2, s0, s1 read for the last time
        "s_endpgm",
    )
    live = L.analyse(code, straight(code), SEM)
    assert live.unknown is None
    assert [c.vgpr for c in live.live] == [3, 4, 2, 0]  # {v0,v3}+v1; v0,v1,v3+v2; v2,v3; none
    assert [c.sgpr for c in live.live] == [2, 2, 2, 0]
    assert live.max_live == L.Counts(4, 0, 2)
    (vgpr_peak,) = [p for p in live.peaks if p.register_class == "vgpr"]
    assert vgpr_peak.count == 4 and vgpr_peak.stretches == (L.Stretch(4, 4, 0),)


def test_a_value_used_around_a_loop_stays_live_through_it():
    code = program(
        "v_mov_b32_e32 v1, 0",  # 0: entry
        "v_add_f32_e32 v1, v1, v0",  # 1: loop body: v0 and v1 live around the back edge
        "s_sub_u32 s2, s2, 1",  # 2
        "s_cbranch_scc1 65533",  # 3: back to 1
        "global_store_dword v3, v1, s[0:1]",  # 4: exit
        "s_endpgm",  # 5
    )
    flow = ControlFlow(
        (
            Block(0, 0, 1, (1,), True, 0),
            Block(1, 1, 4, (1, 2), True, 1),
            Block(2, 4, 6, (), True, 0),
        )
    )
    live = L.analyse(code, flow, SEM)
    assert set(S.register_names(live.block_live_in[1])) >= {"v0", "v1", "v3", "s0", "s1", "s2"}
    assert live.live[2].vgpr == 3  # v0, v1, v3 across the whole loop
    vgpr = next(p for p in live.peaks if p.register_class == "vgpr")
    # the first instruction (v0, v3 in; v1 born) and the whole loop body, at its depth
    assert vgpr.count == 3 and vgpr.stretches == (L.Stretch(0, 0, 0), L.Stretch(4, 12, 1))


def test_a_value_used_around_a_loop_of_three_blocks_stays_live_in_all_of_them():
    code = program(
        "v_mov_b32_e32 v1, 0",  # 0: entry
        "v_add_f32_e32 v1, v1, v0",  # 1: loop header: reads v0 and v1 on every trip
        "s_add_u32 s3, s3, 1",  # 2: loop body
        "s_sub_u32 s2, s2, 1",  # 3: loop latch
        "s_cbranch_scc1 65532",  # 4: back to 1
        "global_store_dword v3, v1, s[0:1]",  # 5: exit
        "s_endpgm",  # 6
    )
    flow = ControlFlow(
        (
            Block(0, 0, 1, (1,), True, 0),
            Block(1, 1, 2, (2,), True, 1),
            Block(2, 2, 3, (3,), True, 1),
            Block(3, 3, 5, (1, 4), True, 1),
            Block(4, 5, 7, (), True, 0),
        )
    )
    live = L.analyse(code, flow, SEM)
    for block in (1, 2, 3):
        assert {"v0", "v1", "v3", "s2", "s3"} <= set(S.register_names(live.block_live_in[block]))
    assert [c.vgpr for c in live.live] == [3, 3, 3, 3, 3, 2, 0]


def test_a_tied_accumulator_keeps_its_destination_live_before_it():
    code = program("v_fmac_f32_e32 v1, v2, v3", "global_store_dword v0, v1, s[0:1]", "s_endpgm")
    live = L.analyse(code, straight(code), SEM)
    assert "v1" in S.register_names(live.live_in[0])


def test_a_true16_half_write_keeps_the_other_half_and_the_register_counted():
    sem = S.Semantics(11, 32)
    code = program("v_mov_b16_e32 v1.l, 0", "v_add_f16_e32 v2.l, v1.l, v1.h", "s_endpgm")
    live = L.analyse(code, straight(code), sem)
    assert [n for n in S.register_names(live.live_in[0]) if n[0] == "v"] == ["v1"]  # v1.h read later, not written
    assert live.live[0].vgpr == 1


def test_registers_of_which_only_one_half_is_live_count_one_each():
    sem = S.Semantics(11, 32)
    code = program(
        "v_mov_b16_e32 v1.h, 0",  # v1.h born
        "v_add_f16_e32 v2.l, v1.h, v1.h",  # v2.l born, v1.h read again below
        "v_add_f16_e32 v3.l, v2.l, v1.h",  # both die; v3.l is never read
        "s_endpgm",
    )
    live = L.analyse(code, straight(code), sem)
    assert [c.vgpr for c in live.live] == [1, 2, 2, 0]
    assert live.max_live == L.Counts(2, 0, 0)


def test_the_refined_figure_drops_a_tuple_half_nothing_wrote():
    # Spill code storing a pair of which only v3 was written: v2 looks live from the entry.
    code = program("v_mov_b32_e32 v3, 1", "scratch_store_dwordx2 off, v[2:3], s33", "s_endpgm")
    flow = straight(code)
    plain = L.analyse(code, flow, SEM)
    seeded = L.analyse(code, flow, SEM, initialised=S.vgpr_bits(0))
    assert plain.live[1].vgpr == seeded.live[1].vgpr == 2
    assert seeded.refined[1].vgpr == 1  # v2 was never written
    assert plain.refined == plain.live  # without a seed nothing is dropped
    assert seeded.max_refined == L.Counts(1, 0, 0)


def test_the_refined_figure_keeps_a_half_some_path_wrote_and_drops_it_in_unreachable_code():
    code = program(
        "v_mov_b32_e32 v3, 1",  # 0: block 0
        "s_cbranch_scc0 1",  # 1: around block 1
        "v_mov_b32_e32 v2, 0",  # 2: block 1 writes v2 on one path
        "scratch_store_dwordx2 off, v[2:3], s33",  # 3: block 2, the join: v2 may be written
        "s_endpgm",  # 4
        "v_mov_b32_e32 v5, 0",  # 5: block 3, which nothing reaches
        "scratch_store_dwordx2 off, v[4:5], s33",  # 6: v4 written on no path
        "s_endpgm",  # 7
    )
    flow = ControlFlow(
        (
            Block(0, 0, 2, (2, 1), True, 0),
            Block(1, 2, 3, (2,), True, 0),
            Block(2, 3, 5, (), True, 0),
            Block(3, 5, 8, (), False, 0),
        )
    )
    seeded = L.analyse(code, flow, SEM, initialised=S.vgpr_bits(0))
    assert [c.vgpr for c in seeded.live] == [2, 2, 2, 2, 0, 2, 2, 0]
    assert [c.vgpr for c in seeded.refined] == [1, 1, 2, 2, 0, 1, 1, 0]


def test_the_refined_figure_keeps_a_half_written_later_around_a_loop():
    code = program(
        "v_mov_b32_e32 v3, 1",  # 0: entry
        "scratch_store_dwordx2 off, v[2:3], s33",  # 1: loop: v2 unwritten on the first trip only
        "v_mov_b32_e32 v2, 0",  # 2
        "s_cbranch_scc1 65533",  # 3: back to 1
        "s_endpgm",  # 4
    )
    flow = ControlFlow(
        (
            Block(0, 0, 1, (1,), True, 0),
            Block(1, 1, 4, (1, 2), True, 1),
            Block(2, 4, 5, (), True, 0),
        )
    )
    seeded = L.analyse(code, flow, SEM, initialised=S.vgpr_bits(0))
    assert [c.vgpr for c in seeded.live] == [2, 2, 2, 2, 0]
    assert [c.vgpr for c in seeded.refined] == [1, 2, 2, 2, 0]


def test_what_the_hardware_initialises_follows_the_descriptor():
    fields = {
        "user_sgpr_count": 6,
        "system_sgpr_workgroup_id_x": 1,
        "system_sgpr_workgroup_id_y": 1,
        "system_sgpr_workgroup_id_z": 0,
        "system_sgpr_workgroup_info": 0,
        "enable_private_segment": 1,
        "system_vgpr_workitem_id": 2,
    }
    regs = L.hardware_initialised(fields, "gfx908")
    assert S.register_names(regs) == [*(f"s{i}" for i in range(9)), "v0", "v1", "v2"]
    # gfx90a and later CDNA, gfx11 and gfx12 pack the three ids into v0
    assert S.register_names(L.hardware_initialised(fields, "gfx942")) == [*(f"s{i}" for i in range(9)), "v0"]


def test_more_live_than_allocated_is_a_finding():
    assert L.allocation_breaches(L.Counts(10, 0, 0), {"next_free_vgpr": 16}) == []
    (breach,) = L.allocation_breaches(L.Counts(20, 0, 0), {"next_free_vgpr": 16})
    assert "20 VGPRs" in breach and "16" in breach
    # a unified file: architectural VGPRs up to accum_offset, AGPRs in the rest
    fields = {"next_free_vgpr": 64, "accum_offset": 32}
    assert L.allocation_breaches(L.Counts(32, 32, 0), fields) == []
    assert len(L.allocation_breaches(L.Counts(33, 33, 0), fields)) == 2


def test_unknown_control_flow_register_indexing_and_undecodable_words_fail_closed():
    code = program("v_mov_b32_e32 v0, 0", "s_endpgm")
    assert L.analyse(code, ControlFlow(straight(code).blocks, "s_setpc_b64 at 0x0"), SEM).unknown
    code = program("s_set_gpr_idx_on s2, gpr_idx(SRC0)", "v_mov_b32_e32 v0, v1", "s_endpgm")
    live = L.analyse(code, straight(code), SEM)
    assert live.unknown and "GPR indexing" in live.unknown and live.live == ()
    bad = (Instruction(0, 4, ".long 0xffffffff", "", "", False), *program("s_endpgm")[:1])
    bad = (bad[0], Instruction(4, 4, "s_endpgm", "s_endpgm", ""))
    assert "undecodable" in (L.analyse(bad, straight(bad), SEM).unknown or "")


def test_an_undecodable_word_no_path_reaches_does_not_stop_the_figure():
    code = (Instruction(0, 4, "s_endpgm", "s_endpgm", ""), Instruction(4, 4, ".long 0xffffffff", "", "", False))
    flow = ControlFlow((Block(0, 0, 1, (), True, 0), Block(1, 1, 2, (), False, 0)))
    assert L.analyse(code, flow, SEM).unknown is None


def test_agprs_far_above_the_vgprs_keep_their_names_and_counts():
    # A kernel with AGPRs: liveness works on sets with the AGPRs moved down next to the VGPRs
    # (liveness._Layout); the sets handed out must name the same registers as the instructions.
    code = program(
        "v_accvgpr_write_b32 a200, v7",  # a200 born, v7 dies
        "v_accvgpr_read_b32 v1, a200",  # a200 dies, v1 born
        "v_add_f32_e32 v2, v1, v0",  # v0, v1 die, v2 born
        "global_store_dword v3, v2, s[0:1]",  # v2, v3, s0, s1 read for the last time
        "s_endpgm",
    )
    live = L.analyse(code, straight(code), SEM)

    def gprs(regs: int) -> list[str]:  # exec, read by every vector instruction, left out
        return sorted(n for n in S.register_names(regs) if n[0] in "vas" and n[1].isdigit())

    names = [gprs(x) for x in live.live_in]
    assert names == [
        ["s0", "s1", "v0", "v3", "v7"],
        ["a200", "s0", "s1", "v0", "v3"],
        ["s0", "s1", "v0", "v1", "v3"],
        ["s0", "s1", "v2", "v3"],
        [],
    ]
    assert gprs(live.live_out[0]) == ["a200", "s0", "s1", "v0", "v3"]
    assert gprs(live.block_live_in[0]) == names[0]
    assert [tuple(c) for c in live.live] == [(3, 1, 2), (3, 1, 2), (4, 0, 2), (2, 0, 2), (0, 0, 0)]
    # The per-instruction sets read like a tuple: by index, by slice, in order, equal to one.
    assert live.live_in == tuple(live.live_in) and live.live_in[1:3] == tuple(live.live_in)[1:3]
    assert [gprs(x) for x in live.live_out][1:] == [*names[2:], []]
