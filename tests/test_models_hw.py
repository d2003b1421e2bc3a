"""The hw model (the best physical estimate): what it allocates, the trap-handler reserve it names
in its profile, TG_SPLIT and barriers, and the words it uses where HIP answers differently.

Oracles: the targets table's cited values (gfx90a: 64 KiB LDS per CU, 4 SIMDs, 8 waves per SIMD,
wave64; gfx942: 512 VGPRs granule 8, 64 KiB LDS and 512 B LDS granules; gfx1010: 20 waves per SIMD;
gfx1100 wave32: 1536 VGPRs granule 24, 16 workgroups per CU), HIP's occupancy function for the
differences it reports (hip_platform.cpp's bit-mask alignUp), all worked by hand beside each case.
"""

from __future__ import annotations

import re

import amdocc
from amdocc.models import manual
from amdocc.models.hw import hw_occupancy
from amdocc.targets import get_target

GFX942 = get_target("gfx942")
GFX1100 = get_target("gfx1100")


def _tg_split_answer():
    # gfx90a, 256 threads = 4 waves, 32768 B LDS, TG_SPLIT set. HIP: LDS 65536 // 32768 = 2
    # blocks. hw drops the LDS and barrier limits under TG_SPLIT: wave slots 4 x 8 // 4 = 8, VGPRs
    # 4 x (512 // 8) // 4 = 64, so 8 blocks, limited by wave slots; hw has no LDS limit at all.
    u = manual(get_target("gfx90a"), vgprs=8, lds=32768).with_(tg_split=True)
    return hw_occupancy(u, 256)


def test_a_limit_only_hip_has_reads_any_number_here():
    occ = _tg_split_answer()
    assert occ.blocks_per_cu == 8
    hip = [w for w in occ.warnings if w.startswith("HIP (")]
    assert len(hip) == 1 and " answers 2: " in hip[0]
    assert "LDS allow 2 there, any number here" in hip[0]
    assert "None" not in hip[0]


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


def test_dynamic_lds_is_reported_back():
    occ = amdocc.occupancy({"vgprs": 8, "lds": 100}, target="gfx942", block_size=64, dynamic_lds=4000, model="hw")
    assert (occ.dynamic_lds, occ.allocated["lds_per_block"]) == (4000, 4608)  # 4100 -> 9 x 512


def test_hw_profile_names_the_trap_reserve():
    on = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, model="hw")
    off = amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, model="hw", trap_reserve=False)
    assert (on.profile, off.profile) == ("trap-reserve", "no-trap-reserve")


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


def test_hw_says_hip_lacks_the_barrier_limit_when_the_barriers_bind():
    # gfx1100 wave32 CU mode, 88 VGPRs, 64 threads (2 waves). hw: true rounding 96 -> 1536 // 96 =
    # 16 waves -> 2 x 16 // 2 = 16; slots 2 x 16 // 2 = 16; 16 workgroups per CU: 16 blocks.
    # HIP: bit-mask 104 -> 14 waves -> 2 x 14 x 32 // 64 = 14 blocks.
    occ = amdocc.occupancy(manual(GFX1100, vgprs=88, wave=32, wgp=False), block_size=64, model="hw")
    assert (occ.blocks_per_cu, occ.limits["barriers"]) == (16, 16)
    (said,) = [w for w in occ.warnings if w.startswith("HIP (")]
    assert re.fullmatch(
        r"HIP \([^)]+\) answers 14: VGPRs allow 14 there, 16 here; HIP has no per-CU workgroup \(barrier\) limit",
        said,
    )
