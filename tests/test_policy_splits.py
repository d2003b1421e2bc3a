"""The KV split policy against AITER's published test vectors and the PR's worked figures
(docs/consumers.md §1)."""

from __future__ import annotations

import re

import pytest

import amdocc
from amdocc.models import manual
from amdocc.policy.splits import auto_num_splits, policy_for, resolve_occupancy, splits_by_wave_cost
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = get_target("gfx942")

# AITER's _splits_by_wave_cost unit-test vectors: (grid_x, effective_cus, W, max_splits, overhead).
VECTORS = [
    ((100000, 1520, 1024, 64, 8), 1),
    ((8, 4096, 8192, 4, 8), 4),
    ((1, 1e6, 1e6, 1e6, 0), 64),
    ((64, 304, 1024, 16, 3), 14),
    ((64, 608, 1024, 16, 3), 9),
]


@pytest.mark.parametrize("args,expected", VECTORS)
def test_aiter_vectors(args, expected):
    assert splits_by_wave_cost(*args) == expected


def test_not_monotone_in_occupancy():
    # Twice the effective CUs pick fewer splits here (14 → 9): the docstring's point.
    assert splits_by_wave_cost(64, 304, 1024, 16, 3) > splits_by_wave_cost(64, 608, 1024, 16, 3)


def test_ties_go_to_fewer_splits():
    # One block, one tile: every s costs 1 wave × (1 tile + 0), so the first (1) wins.
    assert splits_by_wave_cost(1, 1000, 1, 16, 0) == 1
    # W=2, overhead 0: s=1 costs 1·2, s=2 costs 1·1, s=3..: 1·1 again — the tie goes to 2.
    assert splits_by_wave_cost(1, 1000, 2, 16, 0) == 2


def test_saturated_grid_does_not_split():
    assert splits_by_wave_cost(100000, 1520, 1024, 64, 8) == 1
    d = auto_num_splits(8192, 65536, 1, 64, arch="gfx950", cu_count=256)  # fixed path: grid ≥ 4·256
    assert d.splits == 1 and d.target == 1024


def test_search_stops_at_64_splits():
    assert splits_by_wave_cost(1, 10**6, 10**6, 10**6, 0) == 64


def test_worked_example_gfx942_occupancy_5_and_2():
    # §1.1: gfx942, 304 CUs, seq 256, KV 64k, RPB 4 (mfma_r4_w4), block_kv 128: 23 splits at
    # occupancy 5, 9 at occupancy 2, against 19 from the legacy 4×CU rule.
    d5 = auto_num_splits(256, 65536, 4, 128, arch="gfx942", cu_count=304, occupancy=5)
    d2 = auto_num_splits(256, 65536, 4, 128, arch="gfx942", cu_count=304, occupancy=2)
    assert (d5.splits, d2.splits) == (23, 9)


def test_gfx950_aggressive_target_is_residency_times_occupancy():
    # The streaming low-head target is 4 · occ · CUs / grid_x; at occ 3 it is the legacy 12×.
    for occ in (1, 2, 3, 5):
        d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=16, occupancy=occ)
        assert d.target == max(4 * 256, 4 * occ * 256)
        # §1.1 step 3: max_splits = (2^20 // 64) // 2 tiles per split = 8192, far above these.
        assert d.splits == min(-(-d.target // 64), 8192)
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=16, occupancy=3)
    assert d.target == 12 * 256
    # Not streaming (many heads): the conservative 4× target, occupancy never asked.
    d = auto_num_splits(64, 1 << 20, 1, 64, arch="gfx950", cu_count=256, num_heads=64)
    assert d.target == 4 * 256 and d.occupancy is None


def test_policy_values_and_unknown_arch():
    p = policy_for("gfx942:sramecc+:xnack-")
    assert (
        p.min_seq_len_kv,
        p.min_tiles_per_split,
        p.cu_oversub,
        p.fallback_cu,
        p.occupancy_aware,
        p.block_overhead_tiles,
    ) == (4096, 8, 4, 304, True, 8)
    q = policy_for("gfx950")
    assert (
        q.min_seq_len_kv,
        q.min_tiles_per_split,
        q.fallback_cu,
        q.occupancy_aware,
        q.streaming_lowh_cu_oversub,
        q.streaming_lowh_residency,
    ) == (0, 2, 256, False, 12, 4)
    assert policy_for("gfx1100") == p
    assert auto_num_splits(256, 2048, 4, 128, arch="gfx942").splits == 1  # below min_seq_len_kv
    d = auto_num_splits(256, 65536, 4, 128, arch="gfx942")
    assert (d.cu_count, d.cu_source) == (304, "fallback")


def test_occupancy_source_is_reported_in_order():
    assert resolve_occupancy(occupancy=3).source == "given"
    assert resolve_occupancy(hip=lambda: None, recorded=lambda: 7) == resolve_occupancy(recorded=lambda: 7)
    assert resolve_occupancy(recorded=lambda: 7).source == "recorded"
    assert resolve_occupancy(hip=lambda: 6, recorded=lambda: 7).source == "hip"
    default = resolve_occupancy()
    assert (default.blocks_per_cu, default.source) == (2, "default")
    # From a code object: the static HIP model on the AITER-style kernel (256 unified VGPRs,
    # 64 KiB LDS, 512 threads) gives 1 block per CU (docs/consumers.md §2).
    (co,) = amdocc.load(FIXTURES / "elf" / "hand_aiter_gfx942.hsaco")
    d = auto_num_splits(256, 65536, 4, 128, arch="gfx942", cu_count=304, kernel=co.kernels[0], block_size=512)
    assert d.occupancy.source == "model" and d.occupancy.blocks_per_cu == 1
    # §1.1 by hand: grid_x 256/4 = 64, W 65536/128 = 512, max_splits 512 // 8 = 64, effective
    # CUs 304 · 1; cost(s) = ceil(64s/304) · (ceil(512/s) + 8) is least (130) at s = 9.
    assert d.splits == 9


@pytest.mark.llvm22
def test_the_occupancy_source_names_the_kernel_as_source_spells_it(capsys):
    import subprocess

    from amdocc.cli.main import main

    kernel = amdocc.load(amdocc.samples_path())[3].kernels[0]
    (readable,) = subprocess.run(
        ["llvm-cxxfilt-22", kernel.name], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    answer = resolve_occupancy(kernel=kernel, block_size=256, arch="gfx942")
    assert f"on {readable}, limited by" in answer.detail and kernel.name not in answer.detail
    # The text says workgroups per CU, singular for one: 16 KiB of static LDS plus 48 KiB of
    # dynamic LDS fill gfx942's 64 KiB, so one workgroup fits (the hip model's LDS limit).
    code = main(
        [
            "split",
            "--arch",
            "gfx942",
            "--seq-len",
            "256",
            "--seq-len-kv",
            "65536",
            "--rows-per-block",
            "4",
            "--block-kv",
            "128",
            "--cu-count",
            "304",
            "--block",
            "256",
            "--dynamic-lds",
            "49152",
            "--kernel",
            "saxpy",
            str(amdocc.samples_path()),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and f"occupancy: 1 workgroup per CU from model — hip model (rocm-7.14) on {readable}" in out


def test_a_model_answer_on_the_kernels_own_processor_has_no_suffix():
    # gfx942, 128 VGPRs, 256 threads: 512 // 128 = 4 waves -> 4 x 4 x 64 // 256 = 4 blocks by VGPRs.
    answer = resolve_occupancy(kernel=manual(GFX942, vgprs=128), block_size=256)
    assert (answer.blocks_per_cu, answer.source) == (4, "model")
    assert re.fullmatch(r"hip model \([^)]+\) on manual, limited by vgpr", answer.detail)
