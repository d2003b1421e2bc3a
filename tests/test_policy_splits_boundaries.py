"""KV split policy at its boundaries, worked by hand from AITER's rules as
docs/consumers.md §1 gives them (split_policies.toml holds the per-arch values):

    grid_x     = ceil(seq_len / rows_per_block)
    max_splits = max(1, (seq_len_kv // block_kv) // min_tiles_per_split)
    below min_seq_len_kv: 1 split
    fixed path (gfx950): target = cu_oversub x CUs, raised for the streaming low-head case
        (num_heads <= 32 and seq_len_kv > 2 x seq_len) to residency x occupancy x CUs;
        grid_x >= target: 1 split, else min(ceil(target / grid_x), max_splits)
    occupancy-aware path (gfx942): argmin over s of ceil(grid_x s / (CUs x occ)) x (ceil(W / s) + overhead),
        W = max(1, seq_len_kv // block_kv), s <= min(max_splits, 64), ties to fewer splits
"""

from __future__ import annotations

import pytest

from amdocc import UsageError
from amdocc.policy.splits import auto_num_splits, splits_by_wave_cost


@pytest.mark.parametrize("num_heads,aggressive", [(32, True), (33, False), (1, True), (None, False)])
def test_streaming_low_head_starts_at_32_heads(num_heads, aggressive):
    # gfx950, 256 CUs, seq 64 (grid 64), KV 2^20 > 2 x 64, occupancy 3: streaming target
    # 4 x 3 x 256 = 3072 -> ceil(3072 / 64) = 48 splits; otherwise 4 x 256 = 1024 -> 16.
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=num_heads, occupancy=3)
    assert (d.target, d.splits) == ((3072, 48) if aggressive else (1024, 16))
    assert d.reason.endswith("(streaming low-head)") == aggressive


def test_streaming_needs_kv_longer_than_twice_the_queries():
    # seq 512 (grid 512), KV exactly 1024 = 2 x 512: not streaming -> target 1024 -> 2 splits;
    # KV 1025: streaming, 4 x 3 x 256 = 3072 -> 6 splits, capped by max_splits = (1025 // 64) // 2 = 8.
    d = auto_num_splits(512, 1024, 1, 64, arch="gfx950", cu_count=256, num_heads=8, occupancy=3)
    assert (d.target, d.splits) == (1024, 2)
    d = auto_num_splits(512, 1025, 1, 64, arch="gfx950", cu_count=256, num_heads=8, occupancy=3)
    assert (d.target, d.max_splits, d.splits) == (3072, 8, 6)


def test_a_grid_equal_to_the_target_does_not_split_one_less_splits_in_two():
    # gfx950, 256 CUs: target 1024. seq 1024 with one row per block: grid 1024 -> 1 split;
    # seq 1023: grid 1023 -> ceil(1024 / 1023) = 2.
    assert auto_num_splits(1024, 1 << 16, 1, 64, arch="gfx950", cu_count=256, num_heads=64).splits == 1
    d = auto_num_splits(1023, 1 << 16, 1, 64, arch="gfx950", cu_count=256, num_heads=64)
    assert (d.grid_x, d.target, d.splits) == (1023, 1024, 2)


def test_grid_rounds_up_and_an_empty_grid_does_not_split():
    d = auto_num_splits(5, 1 << 16, 4, 64, arch="gfx950", cu_count=256, num_heads=64)
    assert d.grid_x == 2  # ceil(5 / 4)
    d = auto_num_splits(0, 1 << 16, 4, 64, arch="gfx950", cu_count=256)
    assert (d.splits, d.reason) == (1, "empty grid")


def test_kv_length_not_a_multiple_of_block_kv_rounds_the_tiles_down():
    # gfx950 (min_tiles_per_split 2), seq 1, block_kv 64, KV 1000: 15 whole tiles -> 7 splits at
    # most; the target 1024 / grid 1 would want 1024.  KV 1023: still 15 -> 7; 1024: 16 -> 8.
    for kv, cap in ((1000, 7), (1023, 7), (1024, 8)):
        d = auto_num_splits(1, kv, 1, 64, arch="gfx950", cu_count=256, num_heads=64)
        assert (d.max_splits, d.splits) == (cap, cap), kv


def test_min_tiles_per_split_caps_the_occupancy_aware_search():
    # gfx942 (min_tiles 8, overhead 8), seq 4 / 4 rows = grid 1, occupancy 2 over 304 CUs = 608.
    # KV 4993 = 39 whole tiles of 128 (not 40): max_splits 39 // 8 = 4, W = 39.
    # cost(s) = 1 x (ceil(39 / s) + 8): 47, 28, 21, 18 -> s = 4 (s = 5 would cost 16 but is capped).
    d = auto_num_splits(4, 4993, 4, 128, arch="gfx942", cu_count=304, occupancy=2)
    assert (d.window_tiles, d.max_splits, d.effective_cus, d.splits) == (39, 4, 608, 4)
    # 40 whole tiles: 40 // 8 = 5.
    assert auto_num_splits(4, 40 * 128, 4, 128, arch="gfx942", cu_count=304, occupancy=2).max_splits == 5


def test_min_seq_len_kv_is_inclusive():
    # gfx942 never splits below 4096 KV; at 4096 it may (grid 1, occ 2: max_splits 32 // 8 = 4,
    # cost 1 x (ceil(32 / s) + 8): 40, 24, 19, 16 -> 4).
    assert auto_num_splits(4, 4095, 4, 128, arch="gfx942", cu_count=304, occupancy=2).splits == 1
    assert auto_num_splits(4, 4096, 4, 128, arch="gfx942", cu_count=304, occupancy=2).splits == 4


def test_max_splits_is_at_least_one():
    # 3 tiles // 8 = 0 -> 1.
    d = auto_num_splits(4, 4096 * 100, 4, 1 << 17, arch="gfx942", cu_count=304, occupancy=2)
    assert d.max_splits == 1 and d.splits == 1


def test_wave_cost_overhead_and_bad_arguments():
    # grid 1, 1000 CUs, W 8, at most 8 splits: overhead 0 -> cost ceil(8/s): 8 wins (1);
    # overhead 8 -> 16, 12, 11, 10, 10, 10, 10, 9 -> 8 still; grid 600 over 300 CUs, W 8, overhead 8:
    # s=1: 2 x 16 = 32; s=2: 4 x 12 = 48 -> 1.
    assert splits_by_wave_cost(1, 1000, 8, 8, 0) == 8
    assert splits_by_wave_cost(600, 300, 8, 8, 8) == 1
    assert splits_by_wave_cost(2.0, 300.0, 8.0, 8.0, 0.0) == 8
    for bad in ((0, 1, 1, 1, 0), (1, 0, 1, 1, 0), (1, 1, 0, 1, 0), (1, 1, 1, 0, 0), (1, 1, 1, 1, -1)):
        with pytest.raises(UsageError):
            splits_by_wave_cost(*bad)
    with pytest.raises(UsageError, match="whole numbers"):
        splits_by_wave_cost(1.5, 1, 1, 1, 0)
    for bad in ((1, 1, 0, 64), (1, 1, 1, 0), (-1, 1, 1, 64), (1, -1, 1, 64)):
        with pytest.raises(UsageError):
            auto_num_splits(*bad, arch="gfx942")


def test_a_recorded_answer_feeds_the_occupancy_aware_path():
    # gfx942, grid 1, KV 4096 (32 tiles, max 4 splits): recorded occupancy 5 -> 304 x 5 CUs.
    d = auto_num_splits(4, 4096, 4, 128, arch="gfx942", cu_count=304, recorded=lambda: 5)
    assert (d.occupancy.source, d.occupancy.blocks_per_cu, d.effective_cus) == ("recorded", 5, 1520)


def test_streaming_decision_carries_its_occupancy_and_reasons():
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=16, occupancy=3)
    assert (d.occupancy.blocks_per_cu, d.occupancy.source) == (3, "given")
    assert d.reason == "fixed oversubscription (streaming low-head)"
    d = auto_num_splits(1024, 1 << 16, 1, 64, arch="gfx950", cu_count=256, num_heads=64)
    assert d.reason == "grid of 1024 blocks already reaches the target 1024"
    d = auto_num_splits(4096, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=16, occupancy=3)
    assert (d.splits, d.occupancy.blocks_per_cu) == (1, 3)  # grid 4096 >= 3072: no split
    assert d.as_dict()["occupancy"] == {"blocks_per_cu": 3, "source": "given", "detail": "", "unit": "CU"}
