"""The llvm model's rules that LLVM's listings do not reach directly: the SGPR trap-handler reserve
of PR #201342 (per-wave budget alignDown(800 / W - 16, 16)) and the one allocation granule a wave
of at most one VGPR holds ((GRANULATED_WORKITEM_VGPR_COUNT + 1) x granule, AMDGPUUsage.rst).
"""

from __future__ import annotations

import dataclasses

import pytest

import amdocc
from amdocc.models import manual
from amdocc.targets import get_target

GFX942 = get_target("gfx942")


def test_llvm_sgpr_trap_reserve_option():
    # docs/llvm-occupancy.md §3 (PR #201342): per-wave budget alignDown(800 / W - 16, 16):
    # W = 8 gives 80, W = 7 gives 96. 92 SGPRs on gfx942: 7 waves with the reserve; LLVM 22's
    # table says 8 (<= 100).
    plain = amdocc.occupancy({"vgprs": 8, "sgprs": 92}, target="gfx942", model="llvm")
    reserve = amdocc.occupancy({"vgprs": 8, "sgprs": 92}, target="gfx942", model="llvm", sgpr_trap_reserve=True)
    assert (plain.waves_per_simd, reserve.waves_per_simd) == (8, 7)
    assert reserve.profile == "llvm-23"  # the rule set that brought PR #201342


@pytest.mark.parametrize("granule", [1, 8])
@pytest.mark.parametrize("vgprs", [0, 1])
def test_llvm_allocates_one_granule_to_a_wave_of_at_most_one_vgpr(granule, vgprs):
    # The descriptor asks for (GRANULATED_WORKITEM_VGPR_COUNT + 1) x granule VGPRs (docs/code-object-format.md
    # §3.3), so a wave of 0 or 1 VGPRs holds exactly one granule: 8 on gfx942; 1 on a processor
    # built here with an allocation granule of 1 (none ships one; the rule does not depend on it).
    t = dataclasses.replace(GFX942, vgpr_alloc_granule={64: granule})
    occ = amdocc.occupancy(manual(t, vgprs=vgprs), block_size=64, model="llvm")
    assert occ.allocated["vgprs_per_wave"] == granule
