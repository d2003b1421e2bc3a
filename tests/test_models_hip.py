"""The hip model: the runtime's own variable names in its details, its profiles (the trap-handler
SGPR reserve, how two profiles differ), dynamic LDS and the workgroup LDS limit, and HIP's
block-size helpers (the C API and the header template's search).

Oracles: the HIP runtime's names and arithmetic (ROCm/clr hipamd/src/hip_platform.cpp names
MaxWavesPerSimd, wavefrontSize, VgprWaves, simdPerCU; the bit-mask alignUp; the header template
hipOccupancyMaxPotentialBlockSizeVariableSMem), and the targets table's cited values (gfx942: 512
VGPRs granule 8, 4 SIMDs, 64 KiB LDS; rocm-6.0 profile 256/4; gfx1100 wave32: 1536 VGPRs granule
24), worked by hand beside each case.
"""

from __future__ import annotations

import dataclasses

import pytest

import amdocc
from amdocc.models import manual
from amdocc.models.hip import max_potential_block_size_search
from amdocc.models.hip_profiles import _differences, get_profile
from amdocc.targets import get_target

GFX942 = get_target("gfx942")
GFX1100 = get_target("gfx1100")


@pytest.mark.parametrize(
    "usage,block,expected",
    [
        # gfx942 wave64, 128 VGPRs: 512 // 128 = 4 waves; gfx9 caps at 8 per SIMD; 4 SIMDs.
        (manual(GFX942, vgprs=128), 256, {"wavefrontSize": 64, "MaxWavesPerSimd": 8, "VgprWaves": 4, "simdPerCU": 4}),
        # gfx1100 wave32 in CU mode, 88 VGPRs: bit-mask alignUp(88, 24) = 104, 1536 // 104 = 14;
        # gfx10+ caps at 16; CU mode halves the 4 SIMDs of a WGP to 2.
        (
            manual(GFX1100, vgprs=88, wave=32, wgp=False),
            64,
            {"wavefrontSize": 32, "MaxWavesPerSimd": 16, "VgprWaves": 14, "simdPerCU": 2},
        ),
    ],
)
def test_hip_details_use_the_runtimes_variable_names(usage, block, expected):
    details = amdocc.occupancy(usage, block_size=block, model="hip").details
    assert {name: details.get(name) for name in expected} == expected


def test_hip_profiles_before_the_trap_reserve_charge_no_sgprs_for_it():
    # docs/hip-occupancy.md §2 step 5: SgprWaves = 800 // alignUp(sgprs, 16) (+ 16 only since PR #10618).
    # 150 SGPRs on gfx942 -> 160 -> 5 waves; 64 threads = 1 wave: 4 SIMDs x 64 x 5 // 64 = 20.
    # With the reserve: 176 -> 4 waves -> 16.
    old = amdocc.occupancy({"vgprs": 8, "sgprs": 150}, target="gfx942", block_size=64, profile="2023-2025")
    new = amdocc.occupancy({"vgprs": 8, "sgprs": 150}, target="gfx942", block_size=64, profile="2026-08")
    assert (old.limits["sgpr"], old.blocks_per_cu) == (20, 20)
    assert (new.limits["sgpr"], new.blocks_per_cu) == (16, 16)


def test_hip_max_potential_block_size_by_hand():
    from amdocc.models.hip import max_potential_block_size

    # The C API, no search: alu = simdPerCU x min(MaxWaves, VgprWaves, SgprWaves) x wave; block =
    # min(alu, alignUp(limit, wave)); grid = CUs x min(alu // block, localMem // lds).
    # 8 VGPRs: VgprWaves 64 -> 8 -> alu 4 x 8 x 64 = 2048, block 1024, 2 per CU; 40000 B of LDS:
    # 65536 // 40000 = 1 -> grid 304.  No LDS: 304 x 2 = 608.
    assert max_potential_block_size(manual(GFX942, vgprs=8, lds=40000), compute_units=304) == {
        "block_size": 1024,
        "grid_size": 304,
        "error": None,
    }
    assert max_potential_block_size(manual(GFX942, vgprs=8), compute_units=304)["grid_size"] == 608
    # 512 VGPRs: exactly one wave -> alu 256 = block, grid 304. 520: none fits.
    assert max_potential_block_size(manual(GFX942, vgprs=512), compute_units=304) == {
        "block_size": 256,
        "grid_size": 304,
        "error": None,
    }
    assert max_potential_block_size(manual(GFX942, vgprs=520), compute_units=304) == {"error": "hipErrorUnknown"}
    assert max_potential_block_size(manual(GFX942, vgprs=520), compute_units=304, profile="rocm-6.0") == {
        "error": "division-by-zero"
    }


def test_hip_block_size_search_uses_the_given_lds():
    from amdocc.models.hip import max_potential_block_size_search

    # 20000 B of LDS in a 32 KiB group segment: 1 block per CU at every size, so the largest
    # (1024) wins with 1 block: min grid 304. (With 64 KiB: 2 blocks of 1024 fill the CU: 608.)
    u = manual(GFX942, vgprs=8, lds=20000)
    assert max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048, lds_bytes=32768) == {
        "block_size": 1024,
        "min_grid_size": 304,
        "error": None,
    }
    assert max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048) == {
        "block_size": 1024,
        "min_grid_size": 608,
        "error": None,
    }


def test_hip_defaults_to_no_dynamic_lds_and_warns_only_above_the_workgroup_limit():
    from amdocc.models import compute
    from amdocc.models.hip import hip_occupancy

    occ = hip_occupancy(manual(GFX942, vgprs=8), 256)
    assert occ.allocated["lds_per_block"] == 0 and occ.limits["lds"] is None
    # gfx942: 64 KiB of LDS per workgroup (LLVM's getAddressableLocalMemorySize; CLR's sharedMemPerBlock).
    for model in ("hip", "llvm", "hw"):
        at_limit = compute(manual(GFX942, vgprs=8, lds=65536), model, 256)
        assert at_limit.launchable and not any("exceed" in w for w in at_limit.warnings), model
        assert at_limit.blocks_per_cu == 1, model
        over = compute(manual(GFX942, vgprs=8, lds=65536), model, 256, 1)
        assert not over.launchable and over.blocks_per_cu == 0, model
        assert [w for w in over.warnings if "exceed" in w] == [
            "65537 B of LDS exceed the 65536 B one workgroup may use: a launch fails"
        ], model


def test_the_search_answers_no_block_when_no_size_holds_one():
    # 65537 B of dynamic LDS at every size exceeds gfx942's 65536 B: 0 blocks at each size, so no
    # size is ever kept (docs/hip-occupancy.md §3: the header template keeps a size only when it
    # holds strictly more threads than the best so far, which starts at none): block 0, grid 0.
    got = max_potential_block_size_search(
        manual(GFX942, vgprs=8), lambda bs: 65537, compute_units=304, max_threads_per_cu=2048
    )
    assert got == {"block_size": 0, "min_grid_size": 0, "error": None}


def test_the_search_asks_the_named_profile_at_every_size():
    # gfx942, 128 VGPRs. Newest profile: 512 // 128 = 4 waves -> 4 x 4 x 64 = 1024 threads: one
    # 1024-thread block (the first, largest, best). rocm-6.0 counted 256 VGPRs: 256 // 128 = 2 waves
    # -> 512 threads: 1024 gives 0 blocks, 512 gives 1 = 512 threads, which nothing smaller beats.
    u = manual(GFX942, vgprs=128)
    newest = max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048)
    assert newest == {"block_size": 1024, "min_grid_size": 304, "error": None}
    old = max_potential_block_size_search(u, compute_units=304, max_threads_per_cu=2048, profile="rocm-6.0")
    assert old == {"block_size": 512, "min_grid_size": 304, "error": None}


def test_profile_differences_are_listed_with_comma_space():
    a = get_profile(None)
    b = dataclasses.replace(a, caller_value="rounded-up", sgpr_granule=8)
    # BEHAVIOUR's order: caller_value comes before sgpr_granule.
    assert _differences(a, b) == "caller_value rounded-up, sgpr_granule 8"
    assert _differences(a, dataclasses.replace(a, sgpr_granule=8)) == "sgpr_granule 8"
    # The table's own words for a granule: "16", or "target" for the processor's own (rocm-10.1).
    assert _differences(a, get_profile("rocm-10.1")) == "sgpr_granule target, sgpr_trap_reserve 16, pr9571 True"
