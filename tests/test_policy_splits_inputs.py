"""The KV split policy's inputs: which values it accepts (every bound of every argument), which it
says a row does not use, and the words of its fallbacks.

Oracle: AITER's _auto_num_splits and _SPLIT_POLICIES as docs/consumers.md §1 gives them
(gfx942: min_seq_len_kv 4096, min_tiles_per_split 8, fallback 304 CUs, occupancy-aware; gfx950:
no KV gate, min_tiles 2, cu_oversub 4, fallback 256 CUs, fixed oversubscription with a streaming
low-head case of residency 4 x occupancy x CUs; an unknown arch uses gfx942's row), worked by hand
beside each case.
"""

from __future__ import annotations

import dataclasses

import pytest

from amdocc import UsageError
from amdocc.policy import splits
from amdocc.policy.splits import (
    OccupancyAnswer,
    auto_num_splits,
    policy_fallback,
    resolve_occupancy,
    streaming_case,
    unused_inputs,
)
from conftest import FIXTURES


@pytest.mark.parametrize(
    "seq_len,seq_len_kv,rows_per_block,block_kv",
    [(0, 0, 1, 1), (1, 0, 1, 1), (0, 1, 1, 1), (7, 4096, 1, 1)],
)
def test_the_smallest_accepted_shapes(seq_len, seq_len_kv, rows_per_block, block_kv):
    # gfx950 has no KV gate (min_seq_len_kv 0). An empty grid never splits; otherwise
    # max_splits = max(1, (kv // block_kv) // 2) caps ceil(1024 / grid_x).
    d = auto_num_splits(seq_len, seq_len_kv, rows_per_block, block_kv, arch="gfx950", cu_count=256, num_heads=64)
    grid = -(-seq_len // rows_per_block)
    expected = 1 if grid == 0 else min(-(-1024 // grid), max(1, (seq_len_kv // block_kv) // 2))
    assert (d.grid_x, d.splits) == (grid, expected)


@pytest.mark.parametrize(
    "shape,message",
    [
        ((-1, 0, 1, 1), "seq_len must be a whole number >= 0, not -1"),
        ((0, -1, 1, 1), "seq_len_kv must be a whole number >= 0, not -1"),
        ((0, 0, 0, 1), "rows_per_block must be a whole number >= 1, not 0"),
        ((0, 0, 1, 0), "block_kv must be a whole number >= 1, not 0"),
    ],
)
def test_one_below_each_bound_is_refused(shape, message):
    with pytest.raises(UsageError) as exc:
        auto_num_splits(*shape, arch="gfx950")
    assert exc.value.message == message


@pytest.mark.parametrize(
    "given,message",
    [
        # 0 CUs was taken for "not given" and replaced by the policy's fallback, with a warning that
        # said it had not been given; a negative count met a message about internal quantities.
        ({"cu_count": 0}, "cu_count must be a whole number >= 1, not 0"),
        ({"cu_count": -5}, "cu_count must be a whole number >= 1, not -5"),
        ({"cu_count": True}, "cu_count must be a whole number >= 1, not True"),
        ({"cu_count": 2.5}, "cu_count must be a whole number >= 1, not 2.5"),
        ({"num_heads": -1}, "num_heads must be a whole number >= 1, not -1"),
        ({"occupancy": 0}, "occupancy must be a whole number >= 1, not 0"),
        ({"block_size": 0}, "block_size must be a whole number >= 1, not 0"),
        ({"dynamic_lds": -1}, "dynamic_lds must be a whole number >= 0, not -1"),
        ({"dynamic_lds": None}, "dynamic_lds must be a whole number >= 0, not absent"),
    ],
)
def test_an_input_that_is_not_a_count_is_refused_by_name(given, message):
    with pytest.raises(UsageError) as exc:
        auto_num_splits(256, 65536, 4, 128, arch="gfx942", **given)
    assert exc.value.message == message


def test_an_empty_kv_on_gfx942_is_below_its_minimum():
    d = auto_num_splits(4, 0, 4, 128, arch="gfx942", cu_count=304, occupancy=2)
    assert (d.splits, d.reason, d.max_splits) == (1, "seq_len_kv 0 below the policy's minimum 4096", 1)


def test_the_fallbacks_are_named_in_words():
    # gfx1100 has no row: gfx942's is used, with its 304 CUs, and no occupancy is known (default 2).
    d = auto_num_splits(256, 65536, 4, 128, arch="gfx1100")
    assert (d.arch_policy, d.policy_fallback, d.cu_count, d.cu_source) == ("gfx942", True, 304, "fallback")
    assert d.warnings == (
        policy_fallback("gfx1100"),
        "CU count not given: the gfx942 policy's fallback of 304 CUs is used",
        "occupancy unknown (no code object, runtime or record answered): AITER's conservative default of 2 "
        "blocks per CU is used",
    )
    assert policy_fallback("gfx1100") == (
        "no split policy for gfx1100: AITER falls back to gfx942's (tables/split_policies.toml has gfx942, gfx950)"
    )
    assert policy_fallback("gfx950:sramecc+") is None
    # 256/4 = 64 blocks over 304 x 2 CUs, W = 512 tiles, max 512 // 8 = 64: cost(s) = ceil(64 s / 608)
    # x (ceil(512 / s) + 8) is 1 x (ceil(512/s) + 8) up to s = 9, 2 x ... from s = 10: s = 9 -> 65.
    assert (d.effective_cus, d.window_tiles, d.splits) == (608, 512, 9)


def test_no_warning_when_everything_is_given_or_answered():
    d = auto_num_splits(256, 65536, 4, 128, arch="gfx942", cu_count=304, recorded=lambda: 2)
    assert (d.warnings, d.occupancy.source, d.occupancy.detail) == ((), "recorded", "")


def test_the_occupancy_sources_in_order():
    assert resolve_occupancy(occupancy=3, hip=lambda: 5) == OccupancyAnswer(3, "given")
    assert resolve_occupancy(hip=lambda: 5, recorded=lambda: 4) == OccupancyAnswer(5, "hip")
    assert resolve_occupancy(hip=lambda: None, recorded=lambda: 4) == OccupancyAnswer(4, "recorded")
    assert resolve_occupancy(hip=lambda: 0, recorded=lambda: 0) == OccupancyAnswer(
        2, "default", "no code object, runtime or record answered"
    )
    with pytest.raises(UsageError, match=r"^the kernel's occupancy needs the launch block size$"):
        resolve_occupancy(kernel=object())


# --------------------------------------------------------------------------- unused inputs


def test_an_occupancy_aware_row_uses_neither_heads_nor_forcing():
    out = unused_inputs("gfx942", 64, 1 << 20, num_heads=8)
    assert set(out) == {"num_heads", "aggressive"} and out["num_heads"] == out["aggressive"]
    assert out["num_heads"] == (
        "gfx942's split policy (the gfx942 row of tables/split_policies.toml) is occupancy-aware: "
        "it has no streaming low-head case for a head count or a forcing to decide"
    )
    # A processor without a row is judged by the row it falls back to.
    assert unused_inputs("gfx1100", 64, 1 << 20)["aggressive"].startswith(
        "gfx1100's split policy (the gfx942 row of tables/split_policies.toml)"
    )


@pytest.mark.parametrize(
    "seq_len,seq_len_kv,num_heads,aggressive,unused",
    [
        (64, 1 << 20, 8, None, set()),  # streaming: 8 <= 32 heads, KV > 2 x 64
        (64, 1 << 20, 32, None, set()),
        (64, 1 << 20, 33, None, {"occupancy"}),
        (64, 128, 8, None, {"occupancy"}),  # KV exactly 2 x seq: not streaming
        (64, 129, 8, None, set()),
        (64, 1 << 20, None, None, {"occupancy"}),
        (64, 128, None, True, {"num_heads"}),  # forced on: occupancy used, a head count would decide nothing
        (64, 128, 8, True, {"num_heads"}),
        (64, 1 << 20, 8, False, {"num_heads", "occupancy"}),  # forced off
    ],
)
def test_gfx950_uses_occupancy_only_in_the_streaming_case(seq_len, seq_len_kv, num_heads, aggressive, unused):
    out = unused_inputs("gfx950", seq_len, seq_len_kv, num_heads=num_heads, aggressive=aggressive)
    assert set(out) == unused
    assert streaming_case(seq_len, seq_len_kv, num_heads, aggressive) == ("occupancy" not in out)
    if "occupancy" in out:
        assert out["occupancy"] == (
            "gfx950's split policy (the gfx950 row of tables/split_policies.toml) keeps a fixed "
            "oversubscription and uses occupancy only in the streaming low-head case (forced, or at most "
            "32 heads over a KV length above twice the query length), which this launch is not"
        )
    if "num_heads" in out:
        forced = "forced (aggressive)" if aggressive else "forced off (aggressive=False)"
        assert out["num_heads"] == f"the streaming low-head case is {forced}, so the head count decides nothing"


def fixed_row(**changes):
    """The policy table with gfx950's row changed: a policy a future table may hold."""
    policies, default, search = splits._policies()
    return {**policies, "gfx950": dataclasses.replace(policies["gfx950"], **changes)}, default, search


def test_a_fixed_row_without_a_streaming_case_uses_no_heads_no_forcing_no_occupancy(monkeypatch):
    table = fixed_row(streaming_lowh_cu_oversub=0, streaming_lowh_residency=0)
    monkeypatch.setattr(splits, "_policies", lambda: table)
    out = unused_inputs("gfx950", 64, 1 << 20, num_heads=8)
    row = "gfx950's split policy (the gfx950 row of tables/split_policies.toml)"
    assert out == {
        "num_heads": f"{row} keeps a fixed oversubscription with no streaming low-head case",
        "aggressive": f"{row} keeps a fixed oversubscription with no streaming low-head case",
        "occupancy": f"{row} keeps a fixed oversubscription counted in CUs: it never uses occupancy",
    }
    # Then the target is cu_oversub x CUs whatever the heads: 4 x 256 = 1024 over grid 64 -> 16.
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=8, occupancy=3)
    assert (d.target, d.splits) == (1024, 16)


def test_a_legacy_streaming_row_counts_cus_not_occupancy(monkeypatch):
    # streaming_lowh_cu_oversub 12, no residency (AITER's legacy rollback): the streaming target is
    # 12 x 256 = 3072 CUs' worth whatever the occupancy -> ceil(3072 / 64) = 48 splits.
    table = fixed_row(streaming_lowh_residency=0)
    monkeypatch.setattr(splits, "_policies", lambda: table)
    out = unused_inputs("gfx950", 64, 1 << 20, num_heads=8)
    assert set(out) == {"occupancy"} and out["occupancy"].endswith("counted in CUs: it never uses occupancy")
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=8, occupancy=7)
    assert (d.target, d.splits, d.occupancy) == (3072, 48, None)


# --------------------------------------------------------------------------- occupancy from a kernel

HAND_AITER = FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"  # 256 VGPRs, 64 KiB LDS, 512 threads (llvm-readelf-22)


def hand_aiter():
    import amdocc

    (co,) = amdocc.load(HAND_AITER)
    return co.kernels[0]


def test_a_kernel_that_fits_no_block_gives_way_to_the_next_source():
    # 65536 B static LDS + 1 B dynamic exceeds gfx942's 65536 B (llc-22's LDS limit): 0 blocks.
    k = hand_aiter()
    assert resolve_occupancy(kernel=k, block_size=512, dynamic_lds=1, recorded=lambda: 4) == OccupancyAnswer(
        4, "recorded"
    )
    answer = resolve_occupancy(kernel=k, block_size=512, dynamic_lds=0, recorded=lambda: 4)
    assert (answer.blocks_per_cu, answer.source, answer.unit) == (1, "model", "CU")
    # Both the VGPRs and the LDS allow exactly one block on gfx942; the name is llvm-readelf-22's .name.
    assert answer.detail.startswith("hip model (") and ") on aiter_like_fwd, limited by " in answer.detail
    assert "what-if" not in answer.detail


def test_a_what_if_says_so_and_without_it_another_processor_is_refused():
    from amdocc import AmdoccError

    k = hand_aiter()
    with pytest.raises(AmdoccError, match="gfx950"):
        resolve_occupancy(kernel=k, block_size=512, arch="gfx950")
    answer = resolve_occupancy(kernel=k, block_size=512, arch="gfx950", what_if=True)
    # On gfx950 (160 KiB LDS) the 256 VGPRs still allow 2 waves per SIMD: 8 waves, one 512-thread block.
    assert answer.blocks_per_cu == 1
    assert answer.detail.endswith(", limited by vgpr (what-if: its code object cannot run there)")
    d = auto_num_splits(
        256, 65536, 4, 128, arch="gfx950", cu_count=256, num_heads=8, kernel=k, block_size=512, what_if=True
    )
    # gfx950 streaming (8 heads, KV > 2 x 256): target max(4 x 256, 4 x 1 x 256) = 1024 over grid 64 -> 16.
    assert (d.target, d.splits, d.occupancy.source) == (1024, 16, "model")


def test_the_decision_as_json():
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=8, occupancy=3)
    out = d.as_dict()
    assert out == {
        "splits": 48,
        "reason": "fixed oversubscription (streaming low-head)",
        "arch_policy": "gfx950",
        "grid_x": 64,
        "cu_count": 256,
        "cu_source": "given",
        "max_splits": (1 << 20) // 64 // 2,
        "occupancy": {"blocks_per_cu": 3, "unit": "CU", "source": "given", "detail": ""},
        "target": 3072,
        "effective_cus": None,
        "window_tiles": None,
        "notes": [],
        "policy_fallback": False,
        "warnings": [],
    }
    assert auto_num_splits(0, 0, 1, 1, arch="gfx950", cu_count=256).as_dict()["occupancy"] is None


def test_a_kv_shorter_than_one_tile_is_one_tile():
    # gfx942, KV 4096 (at its minimum) in tiles of 8192: 0 whole tiles -> W = 1, max_splits 1.
    d = auto_num_splits(4, 4096, 4, 8192, arch="gfx942", cu_count=304, occupancy=2)
    assert (d.window_tiles, d.max_splits, d.splits) == (1, 1, 1)


def test_the_wave_cost_search_refuses_what_it_cannot_count():
    from amdocc.policy.splits import splits_by_wave_cost

    with pytest.raises(UsageError) as exc:
        splits_by_wave_cost(4, 2.5, 8, 8, 0)
    assert exc.value.message == "splits_by_wave_cost takes whole numbers, got 2.5"
    with pytest.raises(UsageError) as exc:
        splits_by_wave_cost(4, 8, 8, 8, -1)
    assert exc.value.message == "grid_x, effective_cus, window_tiles and max_splits must be positive, overhead >= 0"
    # The bounds themselves are accepted: one of each and no overhead -> 1 split.
    assert splits_by_wave_cost(1, 1, 1, 1, 0) == 1


def test_a_processor_the_tables_do_not_know_has_no_policy():
    from amdocc import UnknownTargetError
    from amdocc.policy.splits import policy_for

    for call in (lambda: policy_for("gfx1234"), lambda: unused_inputs("gfx1234", 1, 1)):
        with pytest.raises(UnknownTargetError):
            call()
    with pytest.raises(UnknownTargetError):
        auto_num_splits(4, 4096, 4, 128, arch="gfx1234")


def test_the_kernel_is_modelled_at_the_block_size_given():
    # k_launch_miss (132 VGPRs, .max_flat_workgroup_size 1024) fits no 1024-thread workgroup on gfx942
    # but 3 of 256 threads (HIP by hand, test_check.test_occupancy_floor_at_the_declared_size).
    import amdocc

    (co,) = amdocc.load(FIXTURES / "check" / "check_gfx942.hsaco")
    k = {x.name: x for x in co.kernels}["k_launch_miss"]
    assert resolve_occupancy(kernel=k, block_size=256).blocks_per_cu == 3
    assert resolve_occupancy(kernel=k, block_size=1024).source == "default"


def test_the_split_passes_its_processor_and_dynamic_lds_to_the_kernels_model():
    from amdocc import AmdoccError

    k = hand_aiter()  # gfx942 code: 65536 B of static LDS
    with pytest.raises(AmdoccError, match="gfx950"):
        auto_num_splits(256, 65536, 4, 128, arch="gfx950", cu_count=256, num_heads=8, kernel=k, block_size=512)
    d = auto_num_splits(
        256, 65536, 4, 128, arch="gfx950", cu_count=256, num_heads=8, kernel=k, block_size=512, what_if=True
    )
    assert d.occupancy.detail.endswith("(what-if: its code object cannot run there)")
    # On gfx942 one byte of dynamic LDS leaves no block (65537 > 65536): the default of 2 is used.
    d = auto_num_splits(256, 65536, 4, 128, arch="gfx942", cu_count=304, kernel=k, block_size=512, dynamic_lds=1)
    assert (d.occupancy.source, d.occupancy.blocks_per_cu, d.effective_cus) == ("default", 2, 608)


def test_each_path_gives_its_reason():
    # gfx950, 256 CUs, grid 64: target 4 x 256 = 1024 -> 16 splits, not streaming with 64 heads.
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=64)
    assert (d.splits, d.reason, d.occupancy) == (16, "fixed oversubscription", None)
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, aggressive=True, occupancy=1)
    assert (d.splits, d.reason) == (16, "fixed oversubscription (streaming low-head)")  # max(1024, 4 x 1 x 256)
    d = auto_num_splits(4, 4096, 4, 128, arch="gfx942", cu_count=304, occupancy=2)
    assert d.reason == "wave-quantized cost over CUs x occupancy"
