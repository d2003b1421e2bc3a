"""The hw model, rule by rule, on cases worked by hand from public sources.

Each case names its source beside the numbers; none of the numbers comes from amdocc. Sources:
- [USAGE] llvm/docs/AMDGPUUsage.rst: compute_pgm_rsrc1 GRANULATED_WORKITEM_VGPR_COUNT /
  GRANULATED_WAVEFRONT_SGPR_COUNT (what the hardware allocates), compute_pgm_rsrc2 LDS_SIZE
  granularity (GFX6 64 dwords, GFX7-GFX12 128 dwords, GFX950 320 dwords), compute_pgm_rsrc3
  TG_SPLIT (the waves of a workgroup may be launched on different CUs).
- [BASEINFO] llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp: getMaxWavesPerEU (10 on gfx6-9
  but 8 with GFX90A insts; 20 on gfx10.1, 16 after), getEUsPerCU (4; 2 per CU on gfx10+, a WGP
  has 4), getTotalNumVGPRs / getVGPRAllocGranule, getTotalNumSGPRs (800 from gfx8) /
  getSGPRAllocGranule (16 on gfx8/9), getLdsDwGranularity, getLocalMemorySize (doubled in WGP
  mode), getMaxWorkGroupsPerCU (16 barriers per CU, 32 on gfx10+ outside CU mode; a one-wave
  workgroup takes none).
- [TD] llvm/lib/Target/AMDGPU/AMDGPU.td: FeatureAddressableLocalMemorySize65536 / 163840
  (gfx950, PR #116309).
- [CLR] rocm-systems PR #10618: the trap handler reserves 16 SGPRs per wave on gfx8/9; PR #11431
  reports gfx950, 92 SGPRs, 1024 threads: 2 blocks per CU before it, 1 after.
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc.models import manual
from amdocc.targets import get_target


def hw(target, block, *, dynamic_lds=0, trap_reserve=True, **usage):
    u = usage.pop("_usage", None) or manual(get_target(target), **usage)
    return amdocc.occupancy(u, block_size=block, dynamic_lds=dynamic_lds, model="hw", trap_reserve=trap_reserve)


# -- LDS granule rounding ---------------------------------------------------------------------


def test_lds_rounds_to_512_bytes_on_gfx942():
    # [BASEINFO]/[USAGE] 128 dwords = 512 B; [TD] 64 KiB per CU. 4097 B -> 9 granules = 4608 B;
    # 65536 // 4608 = 14 (unrounded 65536 // 4097 would be 15). One wave per block: 4 EUs x 8 = 32.
    occ = hw("gfx942", 64, lds=4097, vgprs=8)
    assert occ.allocated["lds_per_block"] == 4608
    assert occ.limits["lds"] == 14 and occ.limits["waves"] == 32
    assert (occ.blocks_per_cu, occ.limiter) == (14, "lds")


def test_lds_rounds_to_1280_bytes_on_gfx950():
    # [USAGE] GFX950 320 dwords = 1280 B; [TD] 160 KiB. 12801 B -> 11 granules = 14080 B;
    # 163840 // 14080 = 11. (A 1024 B granule would give 13312 B and 12; no rounding 12.)
    occ = hw("gfx950", 64, lds=12801, vgprs=8)
    assert occ.allocated["lds_per_block"] == 14080
    assert (occ.blocks_per_cu, occ.limiter) == (11, "lds")


def test_lds_rounds_to_256_bytes_on_gfx600():
    # [USAGE] GFX6 64 dwords = 256 B; Southern Islands ISA: 64 KiB of LDS per CU. 2049 B -> 2304 B;
    # 65536 // 2304 = 28 (512 B granules would give 25). One wave: 4 EUs x 10 waves = 40.
    occ = hw("gfx600", 64, lds=2049, vgprs=4)
    assert occ.allocated["lds_per_block"] == 2304
    assert (occ.limits["lds"], occ.limits["waves"], occ.blocks_per_cu) == (28, 40, 28)


def test_dynamic_lds_is_added_before_rounding():
    # 4000 static + 97 dynamic = 4097 B: as the first case, 14 on gfx942.
    occ = hw("gfx942", 64, lds=4000, dynamic_lds=97, vgprs=8)
    assert (occ.allocated["lds_per_block"], occ.blocks_per_cu) == (4608, 14)


def test_lds_above_one_workgroups_limit_fits_nowhere():
    # [TD] 64 KiB is the most one gfx942 workgroup may address: 65537 B cannot launch.
    occ = hw("gfx942", 64, lds=65536, dynamic_lds=1, vgprs=8)
    assert occ.blocks_per_cu == 0 and occ.limiter == "lds"


# -- the WGP LDS pool -------------------------------------------------------------------------


def test_wgp_mode_pools_128_kib_and_four_simds():
    # [BASEINFO] getLocalMemorySize doubles in WGP mode: 2 x 64 KiB = 131072 B; getEUsPerCU 4 in
    # WGP mode, 2 in CU mode; gfx1100 16 waves per EU. wave32, 32 threads = 1 wave, 8192 B LDS:
    # WGP: 131072 // 8192 = 16, slots 4 x 16 = 64 -> 16. CU mode: 65536 // 8192 = 8, slots 32 -> 8.
    wgp = hw("gfx1100", 32, lds=8192, vgprs=8, wave=32, wgp=True)
    cu = hw("gfx1100", 32, lds=8192, vgprs=8, wave=32, wgp=False)
    assert (wgp.per_wgp, wgp.limits["lds"], wgp.limits["waves"], wgp.blocks_per_cu) == (True, 16, 64, 16)
    assert (cu.per_wgp, cu.limits["lds"], cu.limits["waves"], cu.blocks_per_cu) == (False, 8, 32, 8)
    assert wgp.details["lds_pool"] == 131072 and cu.details["lds_pool"] == 65536


# -- registers: the descriptor's allocation ---------------------------------------------------


def test_descriptor_vgpr_allocation_is_what_counts():
    # [USAGE] the hardware allocates what GRANULATED_WORKITEM_VGPR_COUNT says, not .vgpr_count:
    # metadata 4 VGPRs, descriptor 128 on gfx942 (512-entry file, granule 8 [BASEINFO]):
    # 512 // 128 = 4 waves per EU; 256 threads = 4 waves: 4 EUs x 4 // 4 = 4 blocks.
    # By the metadata 4 VGPRs -> 8 -> 64 waves, capped at 8: 4 x 8 // 4 = 8.
    base = manual(get_target("gfx942"), vgprs=4)
    padded = hw("gfx942", 256, _usage=base.with_(vgprs_allocated=128))
    plain = hw("gfx942", 256, _usage=base)
    assert (padded.allocated["vgprs_per_wave"], padded.blocks_per_cu, padded.limiter) == (128, 4, "vgpr")
    assert padded.details["vgprs_allocated_from"] == "descriptor"
    assert (plain.allocated["vgprs_per_wave"], plain.blocks_per_cu) == (8, 8)


def test_vgprs_round_to_the_allocation_granule_not_a_bit_mask():
    # [BASEINFO] gfx1100 wave32: 1536 VGPRs, granule 24. 100 VGPRs -> 5 granules = 120:
    # 1536 // 120 = 12 waves per EU; 256 threads = 8 waves, WGP 4 EUs: 4 x 12 // 8 = 6.
    occ = hw("gfx1100", 256, vgprs=100, wave=32, wgp=True)
    assert (occ.allocated["vgprs_per_wave"], occ.details["waves_per_simd_by_vgpr"], occ.blocks_per_cu) == (120, 12, 6)


def test_descriptor_sgpr_allocation_and_the_trap_handler_reserve():
    # [BASEINFO] gfx950: 800 SGPRs per EU, granule 16; [CLR] +16 for the trap handler.
    # 92 SGPRs -> 96 + 16 = 112: 800 // 112 = 7 waves per EU; 1024 threads = 16 waves:
    # 4 x 7 // 16 = 1. Without the reserve 800 // 96 = 8: 4 x 8 // 16 = 2 (PR #11431: 2 -> 1).
    occ = hw("gfx950", 1024, sgprs=92, vgprs=8)
    assert (occ.allocated["sgprs_per_wave"], occ.details["waves_per_simd_by_sgpr"], occ.blocks_per_cu) == (112, 7, 1)
    assert occ.limiter == "sgpr"
    free = hw("gfx950", 1024, sgprs=92, vgprs=8, trap_reserve=False)
    assert (free.allocated["sgprs_per_wave"], free.blocks_per_cu) == (96, 2)
    # The descriptor's allocation wins over .sgpr_count: 112 allocated -> 112 + 16 = 128 -> 6 waves.
    u = manual(get_target("gfx950"), sgprs=92, vgprs=8).with_(sgprs_allocated=112)
    assert hw("gfx950", 1024, _usage=u).allocated["sgprs_per_wave"] == 128


def test_sgprs_do_not_limit_on_gfx10_plus():
    # [BASEINFO]/CLR: gfx10+ does not share SGPRs between waves.
    occ = hw("gfx1100", 64, sgprs=106, vgprs=8, wave=32, wgp=True)
    assert "sgpr" not in occ.limits and occ.allocated["sgprs_per_wave"] is None


# -- wave slots and barriers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "target,block,wave,wgp,waves_limit,barriers,blocks,limiter",
    [
        # [BASEINFO] gfx906: 10 waves x 4 EUs = 40 slots. 128 threads = 2 waves: 20 by slots, 16 barriers.
        ("gfx906", 128, 64, None, 20, 16, 16, "barriers"),
        # one-wave workgroups take no barrier: 40.
        ("gfx906", 64, 64, None, 40, None, 40, "waves"),
        # 256 threads = 4 waves: 10 by slots < 16 barriers.
        ("gfx906", 256, 64, None, 10, 16, 10, "waves"),
        # gfx942 (GFX90A insts): 8 x 4 = 32 slots; 1024 threads = 16 waves: 2.
        ("gfx942", 1024, 64, None, 2, 16, 2, "waves"),
        # gfx1010 wave32 WGP: 20 x 4 = 80 slots; 64 threads = 2 waves: 40 by slots, 32 barriers per WGP.
        ("gfx1010", 64, 32, True, 40, 32, 32, "barriers"),
        # the same in CU mode: 20 x 2 = 40 slots -> 20, 16 barriers per CU.
        ("gfx1010", 64, 32, False, 20, 16, 16, "barriers"),
    ],
)
def test_wave_slots_and_barriers(target, block, wave, wgp, waves_limit, barriers, blocks, limiter):
    occ = hw(target, block, vgprs=4, wave=wave, wgp=wgp)
    assert occ.limits["waves"] == waves_limit
    assert occ.limits.get("barriers") == barriers
    assert (occ.blocks_per_cu, occ.limiter) == (blocks, limiter)


def test_block_larger_than_the_kernel_allows_cannot_launch():
    occ = hw("gfx942", 512, vgprs=8, max_flat_workgroup_size=256)
    assert (occ.blocks_per_cu, occ.limiter) == (0, "block_size")
    assert hw("gfx942", 1025, vgprs=8).blocks_per_cu == 0


# -- TG_SPLIT -----------------------------------------------------------------------------------


def test_tg_split_lifts_the_per_cu_lds_and_barrier_limits_and_says_it_is_unconfirmed():
    # [USAGE] TG_SPLIT: a workgroup's waves may run on different CUs, so one CU's LDS pool and
    # barriers do not bound it. gfx90a, 32 KiB LDS, 256 threads (4 waves): without TG_SPLIT
    # 65536 // 32768 = 2; with it only the slots bound: 32 // 4 = 8.
    base = manual(get_target("gfx90a"), vgprs=8, lds=32768)
    plain, split = hw("gfx90a", 256, _usage=base), hw("gfx90a", 256, _usage=base.with_(tg_split=True))
    assert (plain.blocks_per_cu, plain.limiter) == (2, "lds")
    assert (split.blocks_per_cu, split.limiter) == (8, "waves")
    assert "lds" not in split.limits and "barriers" not in split.limits
    assert any("TG_SPLIT" in item for item in split.details["unconfirmed"])
    assert not plain.details["unconfirmed"]
    assert any("unconfirmed" in w for w in split.warnings)


def test_an_lds_granule_no_source_pins_is_reported_unconfirmed():
    # gfx10+: LLVM says 128 dwords, the RDNA ISA table is read as 1 KiB elsewhere (targets.toml).
    occ = hw("gfx1100", 64, lds=4096, vgprs=8, wave=32)
    assert any("LDS granule" in item for item in occ.details["unconfirmed"])
    assert not hw("gfx1100", 64, vgprs=8, wave=32).details["unconfirmed"]  # no LDS: nothing rests on it
    assert not hw("gfx942", 64, lds=4096, vgprs=8).details["unconfirmed"]  # sourced granule
