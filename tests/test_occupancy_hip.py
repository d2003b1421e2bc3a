"""The hip model against HIP's worked answers (docs/hip-occupancy.md §5, the seed's
case, and the figures quoted from rocm-systems PRs), and every profile difference flipping."""

from __future__ import annotations

import pytest

import amdocc
from amdocc.models import manual
from amdocc.models.hip import align_up_bitmask, max_potential_block_size, max_potential_block_size_search
from amdocc.targets import get_target


def blocks(target, block, dyn=0, profile=None, model="hip", **usage):
    occ = amdocc.occupancy(
        usage,
        target=target,
        block_size=block,
        dynamic_lds=dyn,
        model=model,
        **({"profile": profile} if profile else {}),
    )
    return occ.blocks_per_cu


# -- docs/hip-occupancy.md §5 example 1 and the gfx942 case --------------------------------


def test_gfx942_lds_bound_kernel_is_one_block():
    assert blocks("gfx942", 256, vgprs=128, sgprs=40, lds=49152) == 1


def test_gfx942_same_kernel_without_lds_is_four_blocks():
    assert blocks("gfx942", 256, vgprs=128, sgprs=40) == 4


def test_gfx942_rocm60_vgpr_table_gives_two_without_lds_and_one_with():
    assert blocks("gfx942", 256, profile="rocm-6.0", vgprs=128, sgprs=40) == 2
    assert blocks("gfx942", 256, profile="rocm-6.0", vgprs=128, sgprs=40, lds=49152) == 1


def test_gfx942_intermediate_values_match_the_worked_example():
    # docs/hip-occupancy.md §5 example 1: SgprWaves 800 / 48 = 16 without the trap reserve (the default, rocm-7.14),
    # 800 / 64 = 12 with it (develop, rocm-systems #10618).
    occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942", block_size=256)
    d = occ.details
    assert (d["VgprWaves"], d["SgprWaves"], d["aluThreads"]) == (4, 16, 1024)
    occ = amdocc.occupancy(
        {"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942", block_size=256, profile="develop"
    )
    d = occ.details
    assert (d["VgprWaves"], d["SgprWaves"], d["aluThreads"]) == (4, 12, 1024)
    assert occ.limits["lds"] == 1 and occ.limiter == "lds"


def test_max_potential_block_size_c_api_on_mi300x():
    u = manual(get_target("gfx942"), vgprs=128, sgprs=40, lds=49152)
    got = max_potential_block_size(u, 0, 0, compute_units=304)
    assert got == {"block_size": 1024, "grid_size": 304, "error": None}


# -- docs/hip-occupancy.md §5 example 2: gfx950 ----------------------------------------------------


def test_gfx950_same_kernel_is_three_blocks():
    assert blocks("gfx950", 256, vgprs=128, sgprs=40, lds=49152) == 3


def test_no_runtime_that_ran_gfx950_used_256_vgprs():
    # docs/hip-occupancy.md's "before Jan 2025 (256 / 4) it would have been 2" was never a runtime's
    # answer: no release up to rocm-6.4 runs gfx950 (device.cpp at each tag), and the runtimes
    # that do (develop, from amd-staging 29cc39451, 2025-02-04) have 512/8 (799e54aa0, 2025-01-22).
    # (a profile named for a processor its runtime does not run is a what-if)
    for profile in ("rocm-6.3", "rocm-6.4", "2023-2025"):
        occ = amdocc.occupancy(
            {"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx950", block_size=256, profile=profile, what_if=True
        )
        assert occ.error == "unsupported-processor" and occ.blocks_per_cu is None
        assert "does not run gfx950" in occ.warnings[0]
    assert blocks("gfx950", 256, profile="2025", vgprs=128, sgprs=40, lds=49152) == 3


# -- docs/hip-occupancy.md §5 example 3 and the seed's case: .vgpr_count is the unified total ------


def test_gfx950_mfma_kernel_uses_the_total_not_the_arch_count():
    # 78 arch + 32 AGPRs → .vgpr_count 112: 4 blocks (arch alone would give 6).
    assert blocks("gfx950", 256, vgprs=112, agprs=32) == 4
    assert blocks("gfx950", 256, arch_vgprs=78, agprs=32) == 4


def test_seed_case_gfx950_452_vgprs_200_agprs_is_two_blocks():
    # FlyDSL/AITER seed: summing .vgpr_count and .agpr_count would give 0 (or 1 clamped).
    occ = amdocc.occupancy({"vgprs": 452, "agprs": 200}, target="gfx950", block_size=128)
    assert occ.blocks_per_cu == 2
    assert occ.details["VgprWaves"] == 1 and occ.details["agpr_count_ignored"] == 200


# -- docs/hip-occupancy.md §5 example 4: gfx1100 wave32 WGP, granule 24 ----------------------------


def test_bitmask_round_up_is_wrong_for_granule_24():
    assert align_up_bitmask(100, 24) == 104  # true rounding gives 120
    assert align_up_bitmask(128, 16) == 128 and align_up_bitmask(129, 16) == 144


def test_gfx1100_wgp_kernel_is_seven_blocks_per_wgp():
    occ = amdocc.occupancy({"vgprs": 100}, target="gfx1100", block_size=256)
    assert occ.blocks_per_cu == 7 and occ.per_wgp
    assert occ.details["VgprWaves"] == 14


def test_gfx1100_true_rounding_in_hw_gives_six():
    assert blocks("gfx1100", 256, model="hw", vgprs=100) == 6


def test_gfx1100_wgp_parse_bug_gives_three():
    occ = amdocc.occupancy({"vgprs": 100}, target="gfx1100", block_size=256, profile="2023-2025")
    assert occ.blocks_per_cu == 3 and not occ.per_wgp
    assert any("workgroup_processor_mode" in w for w in occ.warnings)


def test_gfx1100_grid_size_doubles_cus_under_the_parse_bug():
    # docs/hip-occupancy.md §5 example 4: "gridSize uses CUs × 2 in that case". 48 WGPs (RX 7900 XTX).
    u = manual(get_target("gfx1100"), vgprs=100)
    fixed = max_potential_block_size(u, 0, 256, compute_units=48, profile="2025")
    buggy = max_potential_block_size(u, 0, 256, compute_units=48, profile="2023-2025")
    assert fixed == {"block_size": 256, "grid_size": 48 * 7, "error": None}
    assert buggy == {"block_size": 256, "grid_size": 96 * 3, "error": None}


# -- docs/hip-occupancy.md §5 example 5: the trap-handler SGPR reserve (rocm-systems PR #10618) ----


def test_gfx942_92_sgprs_before_and_after_the_trap_reserve():
    assert blocks("gfx942", 64, profile="2025", vgprs=32, sgprs=92) == 32
    assert blocks("gfx942", 64, profile="2026-08", vgprs=32, sgprs=92) == 28
    # the default is a release (rocm-7.14), which predates the reserve
    assert blocks("gfx942", 64, vgprs=32, sgprs=92) == 32


def test_gfx950_92_sgprs_1024_threads_pr11431():
    # rocm-systems PR #11431 (hip-tests) confirms gfx950, 92 SGPRs, 1024 threads: 2 → 1.
    assert blocks("gfx950", 1024, profile="2025", vgprs=32, sgprs=92) == 2
    assert blocks("gfx950", 1024, profile="2026-08", vgprs=32, sgprs=92) == 1


# -- every other profile difference, each flipping ------------------------------------------------


def test_wave_size_from_the_device_until_early_2025():
    # A wave64 CU-mode kernel on gfx1100: newer runtimes use .wavefront_size 64 (granule 12 of
    # 768), older ones the device's 32 (granule 24 of 1536). 60 VGPRs, block 64:
    #   2025: alignUp(60,12)=68 → 768/68=11 waves → 2 SIMDs·11·64 / 64 = 22
    #   2023-2025: alignUp(60,24)=64 → 1536/64=24, capped 16 → 2·16·32 / 64 = 16
    args = dict(vgprs=60, wave=64, wgp=False)
    assert blocks("gfx1100", 64, profile="2025", **args) == 22
    occ = amdocc.occupancy(args, target="gfx1100", block_size=64, profile="2023-2025")
    assert occ.blocks_per_cu == 16
    assert any("wave size from the device" in w for w in occ.warnings)


def test_gfx103x_granule_from_comgr_vs_the_hard_coded_table():
    # comgr's .def gave gfx1030 a granule of 8, rocdevice.cpp 16 (docs/hip-occupancy.md §7).
    args = dict(vgprs=70, wgp=False)  # CU mode so the WGP parse does not differ
    assert blocks("gfx1030", 32, profile="2025", **args) == 28  # 1024/72=14 → 2·14·32/32
    assert blocks("gfx1030", 32, profile="2023-2025", **args) == 24  # 1024/80=12


def test_no_wave_fits_is_hip_error_unknown_or_a_crash_by_era():
    new = amdocc.occupancy({"vgprs": 600}, target="gfx942", block_size=64)
    assert new.error == "hipErrorUnknown" and new.blocks_per_cu is None
    old = amdocc.occupancy({"vgprs": 300}, target="gfx942", block_size=64, profile="rocm-6.0")
    assert old.error == "division-by-zero"
    assert amdocc.occupancy({"vgprs": 300}, target="gfx942", block_size=64).error is None


def test_pr9571_gfx11_wgp_lds_is_flagged_as_unknown():
    occ = amdocc.occupancy({"vgprs": 32, "lds": 8192}, target="gfx1100", block_size=256, profile="develop")
    assert any("#9571" in w for w in occ.warnings)
    occ = amdocc.occupancy({"vgprs": 32, "lds": 8192}, target="gfx1100", block_size=256)  # rocm-7.14
    assert not any("#9571" in w for w in occ.warnings)
    occ = amdocc.occupancy({"vgprs": 32, "lds": 8192}, target="gfx1100", block_size=256, profile="2025")
    assert not any("#9571" in w for w in occ.warnings)


def test_a_release_whose_source_was_not_read_refuses_rather_than_guess(monkeypatch):
    # Every release line amdocc lists is now read or inferred (rocm-7.0 .. 7.2: test_hip_releases);
    # a profile whose row says `unknown` still refuses every answer with that reason.
    from amdocc.models import hip

    unknown = hip.HipProfile(
        name="rocm-9.9",
        release=(9, 9),
        dates="",
        changes="",
        source="",
        unknown="ROCm 9.9's CLR source was not available",
    )
    known = hip.get_profile
    monkeypatch.setattr(hip, "get_profile", lambda name: unknown if name == "rocm-9.9" else known(name))
    occ = hip.hip_occupancy(manual(get_target("gfx942"), vgprs=32), 256, profile="rocm-9.9")
    assert occ.error == "unknown-runtime-values" and occ.blocks_per_cu is None
    assert occ.warnings == ("HIP profile rocm-9.9: ROCm 9.9's CLR source was not available",)


# -- API edges -------------------------------------------------------------------------------------


def test_block_size_edges():
    assert amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=0).error == "hipErrorInvalidValue"
    over = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=1025)
    assert over.blocks_per_cu == 0 and over.limiter == "block_size"


def test_header_block_size_search_keeps_the_largest_of_equal_thread_counts():
    # gfx942, 128 VGPRs: 4 waves/SIMD → 1024 threads per CU whatever the block; the search
    # starts at 1024 and only a strictly larger product replaces it.
    u = manual(get_target("gfx942"), vgprs=128, max_flat_workgroup_size=1024)
    got = max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048)
    assert got == {"block_size": 1024, "min_grid_size": 304, "error": None}
    # With 32 VGPRs a CU holds 2048 threads: 1024 reaches it at once and the search stops.
    u = manual(get_target("gfx942"), vgprs=32, max_flat_workgroup_size=256)
    got = max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048)
    assert got == {"block_size": 256, "min_grid_size": 8 * 304, "error": None}


def test_device_lds_and_unknown_names():
    assert amdocc.occupancy({"vgprs": 64, "lds": 65536}, device="MI355X", block_size=256).blocks_per_cu == 2
    with pytest.raises(amdocc.AmdoccError):
        amdocc.occupancy({"vgprs": 64}, device="MI999", block_size=256)
    with pytest.raises(amdocc.AmdoccError):
        amdocc.occupancy({"vgprs": 64}, target="gfx942", block_size=256, profile="nope")
