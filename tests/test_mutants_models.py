"""Hand-worked cases for the parts of the models mutation testing found unguarded: the next step
(what to shed for one more block), the record's derived numbers, manual usage and the HIP
profile a next step is computed under.

Every expected number is worked below from the rules it follows: HIP's occupancy function
(shared/research/hip-occupancy.md §4: VgprWaves = vgprsPerSimd / alignUp(vgprs, granule),
limits = simdPerCU x wavefrontSize x waves / alignUp(block, wavefrontSize), LDS = localMemSize /
lds), LLVM 22's getNumWavesPerEUWithNumVGPRs (llvm-amdgpu-rules.md §4.2) and the targets table's
cited values (gfx942: 512 VGPRs granule 8 since ROCm 6.1, 256/4 in the rocm-6.0 profile; 4 SIMDs;
64 KiB LDS).
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc import UsageError
from amdocc.models import manual
from amdocc.models.nextstep import next_step
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = get_target("gfx942")


def step(usage, model="hip", block=256, dynamic_lds=0, **options):
    occ = amdocc.occupancy(usage, block_size=block, dynamic_lds=dynamic_lds, model=model, **options)
    return occ, next_step(usage, occ, **options)


# -- next step ---------------------------------------------------------------------------------


def test_vgpr_bound_hip_kernel_sheds_down_to_the_next_granule_step():
    # gfx942, 128 VGPRs, 256 threads (4 waves): VgprWaves 512 // 128 = 4; 256 x 4 // 256 = 4 blocks.
    # 5 blocks need VgprWaves >= 5: alignUp(v, 8) <= 102 -> v <= 96: shed 128 - 96 = 32.
    occ, s = step(manual(GFX942, vgprs=128))
    assert (occ.blocks_per_cu, occ.limiter) == (4, "vgpr")
    assert s == {"gain": 5, "unit": "blocks_per_cu", "shed": {"vgpr": 32}}


def test_the_next_step_keeps_the_hip_profile_of_the_answer():
    # rocm-6.0 counted gfx942 as 256 VGPRs granule 4: 256 // 128 = 2 waves -> 2 blocks. 3 blocks
    # need alignUp(v, 4) <= 85 -> v <= 84: shed 44 (under the newest profile it would be 32).
    occ, s = step(manual(GFX942, vgprs=128), profile="rocm-6.0")
    assert (occ.profile, occ.blocks_per_cu) == ("rocm-6.0", 2)
    assert s == {"gain": 3, "unit": "blocks_per_cu", "shed": {"vgpr": 44}}
    # Asked without options, the next step still follows the answer's profile.
    assert next_step(manual(GFX942, vgprs=128), occ) == s


def test_lds_bound_kernel_sheds_static_and_dynamic_lds_together():
    # 10000 static + 10000 dynamic = 20000 B, 64 threads: 65536 // 20000 = 3 blocks. 4 need
    # lds <= 16384: shed 3616 B of the two together.
    occ, s = step(manual(GFX942, vgprs=8, lds=10000), block=64, dynamic_lds=10000)
    assert (occ.blocks_per_cu, occ.limiter) == (3, "lds")
    assert s == {"gain": 4, "unit": "blocks_per_cu", "shed": {"lds": 3616}}


def test_two_binding_resources_must_both_shrink():
    # 128 VGPRs -> 4 blocks and 16384 B LDS -> 65536 // 16384 = 4 blocks: both bind at 4.
    # 5 blocks: VGPRs <= 96 (shed 32) and LDS <= 13107 (shed 3277).
    occ, s = step(manual(GFX942, vgprs=128, lds=16384))
    assert occ.limiters == ("lds", "vgpr") and occ.blocks_per_cu == 4
    assert s == {"gain": 5, "unit": "blocks_per_cu", "shed": {"lds": 3277, "vgpr": 32}}


def test_no_step_when_a_cap_binds_or_shedding_all_would_not_gain():
    # 1024 threads = 16 waves: wave slots 8 x 4 x 64 // 1024 = 2 and 4 VGPRs allow 2 as well
    # (512 // 8 = 64 -> capped... the slots bind): no kernel resource can help.
    occ, s = step(manual(GFX942, vgprs=4), block=1024)
    assert occ.limiter == "waves" and s is None
    # 256 VGPRs at 1024 threads: 512 // 256 = 2 waves -> 256 x 2 // 1024 = 0 blocks ... shed to
    # 128 -> 4 waves -> 1 block: a gain from 0.
    occ, s = step(manual(GFX942, vgprs=256), block=1024)
    assert occ.blocks_per_cu == 0
    assert s == {"gain": 1, "unit": "blocks_per_cu", "shed": {"vgpr": 128}}


def test_llvm_next_step_is_in_waves_per_simd():
    # LLVM 22: 128 VGPRs on gfx942 -> 512 // 128 = 4 waves per EU (no block: range 1..1024).
    # 5 waves need alignTo(v, 8) <= 102 -> v <= 96: shed 32.
    usage = manual(GFX942, vgprs=128)
    occ = amdocc.occupancy(usage, model="llvm")
    assert occ.waves_per_simd == 4 and occ.details["flat_workgroup_size"] == [1, 1024]
    assert next_step(usage, occ) == {"gain": 5, "unit": "waves_per_simd", "shed": {"vgpr": 32}}


def test_hw_next_step_with_the_trap_reserve_option():
    # hw, gfx942, 92 SGPRs, 1024 threads: (96 + 16) -> 800 // 112 = 7 waves -> 4 x 7 // 16 = 1.
    # 2 blocks need 8 waves: 800 // 8 = 100 >= alignUp(s, 16) + 16 -> s <= 80: shed 12.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024)
    assert (occ.blocks_per_cu, occ.limiter) == (1, "sgpr")
    assert s == {"gain": 2, "unit": "blocks_per_cu", "shed": {"sgpr": 12}}
    # Without the reserve 800 // 96 = 8 already: 2 blocks, bound by the wave slots.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024, trap_reserve=False)
    assert occ.blocks_per_cu == 2 and s is None


# -- the record's derived numbers ----------------------------------------------------------------


def test_waves_per_simd_may_be_fractional_and_the_fraction_is_of_the_slots():
    # hw, gfx942, 320 threads = 5 waves: slots 32 // 5 = 6 blocks = 30 waves over 4 SIMDs = 7.5,
    # fraction 30 / 32 = 0.9375.
    occ = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=320, model="hw")
    assert (occ.blocks_per_cu, occ.waves_per_cu, occ.waves_per_simd) == (6, 30, 7.5)
    assert (occ.max_waves_per_cu, occ.occupancy_fraction) == (32, 0.9375)
    # 256 threads: 8 blocks x 4 waves = 32 waves = 8 per SIMD exactly (an int, not 8.0).
    occ = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=256, model="hw")
    assert occ.waves_per_simd == 8 and isinstance(occ.waves_per_simd, int) and occ.occupancy_fraction == 1.0


def test_a_cap_is_named_before_a_resource_that_allows_exactly_as_much():
    # HIP, gfx942, 64 VGPRs, 256 threads: VgprWaves 512 // 64 = 8 -> 8 blocks; slots 8 -> 8.
    occ = amdocc.occupancy({"vgprs": 64}, target="gfx942", block_size=256)
    assert occ.limiters == ("waves", "vgpr") and occ.limiter == "waves"


def test_waves_per_simd_is_rounded_to_three_places():
    # hw, gfx942, 192 threads = 3 waves: 32 // 3 = 10 blocks = 30 waves over 4 SIMDs = 7.5;
    # 448 threads = 7 waves: 32 // 7 = 4 blocks = 28 waves -> 7; 384 = 6 waves -> 5 blocks ->
    # 30 waves -> 7.5; gfx906 (10 x 4 = 40 slots), 192 threads: 13 blocks = 39 waves -> 9.75;
    # gfx1100 wave32 WGP (16 x 4 = 64 slots), 96 threads = 3 waves: 21 blocks = 63 waves -> 15.75.
    occ = amdocc.occupancy({"vgprs": 8}, target="gfx906", block_size=192, model="hw")
    assert (occ.blocks_per_cu, occ.waves_per_simd) == (13, 9.75)
    occ = amdocc.occupancy({"vgprs": 8, "wave": 32}, target="gfx1010", block_size=96, model="hw")
    # gfx1010: 20 waves x 4 SIMDs = 80 slots, 3 waves per block: 26 by slots, 32 barriers -> 26,
    # 78 waves over 4 SIMDs = 19.5.
    assert (occ.blocks_per_cu, occ.waves_per_simd) == (26, 19.5)


# -- manual usage -------------------------------------------------------------------------------


def test_arch_vgprs_form_the_total_by_the_register_file_rule():
    # Unified (gfx90a/942/950): alignTo(41, 4) + 64 = 108. Separate (gfx908): max(41, 64) = 64.
    assert manual(GFX942, arch_vgprs=41, agprs=64).vgprs == 108
    assert manual(get_target("gfx908"), arch_vgprs=41, agprs=64).vgprs == 64
    assert manual(GFX942, arch_vgprs=41).vgprs == 41
    with pytest.raises(UsageError, match="not both"):
        manual(GFX942, vgprs=10, arch_vgprs=41, agprs=64)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"vgprs": -1}, "VGPRs cannot be negative"),
        ({"sgprs": -1}, "SGPRs cannot be negative"),
        ({"lds": -1}, "LDS cannot be negative"),
        ({"agprs": -1}, "AGPRs cannot be negative"),
        ({"wave": 32}, "does not run wave32"),
        ({"wgp": True}, "has no WGP mode"),
    ],
)
def test_manual_refuses_what_cannot_be(kwargs, message):
    with pytest.raises(UsageError, match=message):
        manual(GFX942, **kwargs)


def test_manual_defaults_follow_the_target():
    gfx1100 = get_target("gfx1100")
    u = manual(gfx1100)
    # Compilers default to WGP mode and LLVM writes the integer 1, which comgr hands HIP as "1".
    assert (u.wave, u.wgp_mode, u.wgp_metadata) == (32, True, "1")
    u = manual(gfx1100, wgp=False, wave=64)
    assert (u.wave, u.wgp_mode, u.wgp_metadata) == (64, False, "0")
    u = manual(GFX942)
    assert (u.wave, u.wgp_mode, u.wgp_metadata, u.vgprs, u.sgprs, u.lds) == (64, False, None, 0, 0, 0)
    with pytest.raises(UsageError, match="has no AGPRs"):
        manual(gfx1100, agprs=4)
    assert manual(gfx1100, agprs=0).agprs == 0


def test_hw_reports_what_it_allocated_and_where_hip_differs():
    # No LDS: nothing allocated. gfx942, 64 VGPRs, 256 threads: hw and HIP agree (8 blocks).
    occ = amdocc.occupancy({"vgprs": 64}, target="gfx942", block_size=256, model="hw")
    assert (occ.allocated["lds_per_block"], occ.dynamic_lds, occ.blocks_per_cu) == (0, 0, 8)
    assert not [w for w in occ.warnings if w.startswith("HIP")]
    # gfx1010 wave32 in WGP mode, 96 threads = 3 waves: hw counts LLVM's 20 waves per SIMD,
    # 4 x 20 // 3 = 26 (32 barriers); HIP caps gfx10+ at 16: 4 x 32 x 16 // 96 = 21.
    occ = amdocc.occupancy({"vgprs": 8, "wave": 32}, target="gfx1010", block_size=96, model="hw")
    assert occ.blocks_per_cu == 26
    (why,) = [w for w in occ.warnings if w.startswith("HIP")]
    assert why == "HIP (rocm-7.14) answers 21: wave slots allow 21 there, 26 here"  # rocm-7.14: the default profile


def test_wave64_on_rdna_is_flagged_and_wave32_is_not():
    gfx1100 = get_target("gfx1100")
    w64 = amdocc.occupancy(manual(gfx1100, vgprs=8, wave=64), block_size=256, model="hw")
    w32 = amdocc.occupancy(manual(gfx1100, vgprs=8, wave=32), block_size=256, model="hw")
    assert any("wave64 on RDNA" in w for w in w64.warnings)
    assert not any("wave64 on RDNA" in w for w in w32.warnings)
    assert not any(
        "wave64 on RDNA" in w
        for w in amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=256, model="hw").warnings
    )


def test_target_and_device_must_agree():
    # MI300X is a gfx942 (tables/devices.toml).
    occ = amdocc.occupancy({"vgprs": 8}, target="gfx942", device="MI300X", block_size=256)
    assert occ.processor == "gfx942"
    with pytest.raises(UsageError, match="is a gfx942, not gfx90a"):
        amdocc.occupancy({"vgprs": 8}, target="gfx90a", device="MI300X", block_size=256)


def test_dynamic_lds_is_reported_back():
    occ = amdocc.occupancy({"vgprs": 8, "lds": 100}, target="gfx942", block_size=64, dynamic_lds=4000, model="hw")
    assert (occ.dynamic_lds, occ.allocated["lds_per_block"]) == (4000, 4608)  # 4100 -> 9 x 512


def test_llvm_sgpr_trap_reserve_option():
    # llvm-amdgpu-rules.md §4.3 (PR #201342): per-wave budget alignDown(800 / W - 16, 16):
    # W = 8 gives 80, W = 7 gives 96. 92 SGPRs on gfx942: 7 waves with the reserve; LLVM 22's
    # table says 8 (<= 100).
    plain = amdocc.occupancy({"vgprs": 8, "sgprs": 92}, target="gfx942", model="llvm")
    reserve = amdocc.occupancy({"vgprs": 8, "sgprs": 92}, target="gfx942", model="llvm", sgpr_trap_reserve=True)
    assert (plain.waves_per_simd, reserve.waves_per_simd) == (8, 7)
    assert reserve.profile == "llvm-23"  # the rule set that brought PR #201342


def test_hw_profile_names_the_trap_reserve():
    on = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, model="hw")
    off = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, model="hw", trap_reserve=False)
    assert (on.profile, off.profile) == ("trap-reserve", "no-trap-reserve")


def test_hip_profiles_before_the_trap_reserve_charge_no_sgprs_for_it():
    # hip-occupancy.md §4 step 5: SgprWaves = 800 // alignUp(sgprs, 16) (+ 16 only since PR #10618).
    # 150 SGPRs on gfx942 -> 160 -> 5 waves; 64 threads = 1 wave: 4 SIMDs x 64 x 5 // 64 = 20.
    # With the reserve: 176 -> 4 waves -> 16.
    old = amdocc.occupancy({"vgprs": 8, "sgprs": 150}, target="gfx942", block_size=64, profile="2023-2025")
    new = amdocc.occupancy({"vgprs": 8, "sgprs": 150}, target="gfx942", block_size=64, profile="2026-08")
    assert (old.limits["sgpr"], old.blocks_per_cu) == (20, 20)
    assert (new.limits["sgpr"], new.blocks_per_cu) == (16, 16)


# -- HIP's block-size helpers (stable behaviour: hip-occupancy.md §6) ------------------------------


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


def test_a_one_thread_block_launches_and_hw_defaults_to_no_dynamic_lds():
    from amdocc.models import compute
    from amdocc.models.hw import hw_occupancy

    # One thread is the smallest workgroup HIP launches (hipModuleLaunchKernel takes block
    # dimensions >= 1); a .max_flat_workgroup_size of 1 admits exactly it.
    usage = manual(GFX942, vgprs=8, lds=1024, max_flat_workgroup_size=1)
    for model in ("hip", "llvm", "hw"):
        occ = compute(usage, model, 1)
        assert occ.launchable and occ.warnings == () and occ.blocks_per_cu, (model, occ.warnings)
    # Without dynamic LDS the hw model allocates the static 1,024 B, a whole number of gfx942's
    # LDS granules (tables/targets.toml lds_granule, held to its source by test_table_sources).
    assert hw_occupancy(usage, 1).allocated["lds_per_block"] == 1024


def test_an_ordinary_evaluation_carries_no_what_if_words():
    kernel = amdocc.load(amdocc.samples_path())[3].kernels[0]  # saxpy_lds for gfx942
    assert str(kernel.target_id) == "gfx942"
    for model in ("hip", "llvm", "hw"):
        occ = amdocc.occupancy(kernel, block_size=256, model=model)
        assert not occ.what_if and not any(w.startswith("what-if") for w in occ.warnings), occ.warnings
    asked = amdocc.occupancy(kernel, block_size=256, target="gfx950", what_if=True)
    assert asked.what_if and any(w.startswith("what-if: ") for w in asked.warnings)
    # Generic code on a member of its family is no what-if: the record names what it was built for.
    generic = amdocc.load(FIXTURES / "elf" / "gfx9-4-generic_cov6.hsaco")[0].kernels[0]
    member = amdocc.occupancy(generic, block_size=64, target="gfx942")
    assert str(member.built_for) == "gfx9-4-generic" and not member.what_if
    assert not any(w.startswith("what-if") for w in member.warnings), member.warnings


def test_compute_refuses_a_model_it_does_not_have():
    from amdocc.models import compute

    with pytest.raises(UsageError, match=r"unknown model 'hw2' \(choose from hip, llvm, hw\)"):
        compute(manual(GFX942, vgprs=8), "hw2", 256)
