"""The next step (what to shed for one more block or wave), worked by hand from the rules of each
model: HIP's occupancy function (VgprWaves = vgprsPerSimd / alignUp(vgprs, granule), limits =
simdPerCU x wavefrontSize x waves / alignUp(block, wavefrontSize), LDS = localMemSize / lds), LLVM
22's getNumWavesPerEUWithNumVGPRs, the hw model's trap-handler SGPR reserve, and the targets
table's cited values (gfx942: 512 VGPRs granule 8 since ROCm 6.1, 256/4 in the rocm-6.0 profile;
4 SIMDs; 64 KiB LDS). The answer's HIP profile is the one a next step is computed under.
"""

from __future__ import annotations

import amdocc
from amdocc.models import manual
from amdocc.models.nextstep import search_next_step
from amdocc.targets import get_target

GFX942 = get_target("gfx942")


def step(usage, model="hip", block=256, dynamic_lds=0, **options):
    occ = amdocc.occupancy(usage, block_size=block, dynamic_lds=dynamic_lds, model=model, **options)
    return occ, search_next_step(usage, occ, **options)


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
    assert search_next_step(manual(GFX942, vgprs=128), occ) == s


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
    assert search_next_step(usage, occ) == {"gain": 5, "unit": "waves_per_simd", "shed": {"vgpr": 32}}


def test_hw_next_step_with_the_trap_reserve_option():
    # hw, gfx942, 92 SGPRs, 1024 threads: (96 + 16) -> 800 // 112 = 7 waves -> 4 x 7 // 16 = 1.
    # 2 blocks need 8 waves: 800 // 8 = 100 >= alignUp(s, 16) + 16 -> s <= 80: shed 12.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024)
    assert (occ.blocks_per_cu, occ.limiter) == (1, "sgpr")
    assert s == {"gain": 2, "unit": "blocks_per_cu", "shed": {"sgpr": 12}}
    # Without the reserve 800 // 96 = 8 already: 2 blocks, bound by the wave slots.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024, trap_reserve=False)
    assert occ.blocks_per_cu == 2 and s is None
