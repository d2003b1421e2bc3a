"""The occupancy record's derived numbers and how it prints: waves per SIMD (fractional, rounded to
three places), the occupancy fraction of the wave slots, the order in which limiters are named.

Every expected number is worked by hand from the hw and HIP rules and the targets table's cited
values (gfx942: 4 SIMDs x 8 wave slots; gfx906: 10 x 4; gfx1010: 20 waves x 4 SIMDs, 32 barriers).
"""

from __future__ import annotations

import amdocc
from test_models_hw import _tg_split_answer


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


def test_an_occupancy_repr_separates_its_fields_with_comma_space():
    text = repr(_tg_split_answer())
    assert text.startswith(
        "Occupancy(model='hw', profile='trap-reserve', processor='gfx90a', block_size=256, "
        "dynamic_lds=0, blocks_per_cu=8, per_wgp=False, waves_per_block=4, "
    )
    assert text.endswith(")") and "XX" not in text
