"""Workgroups per CU and per WGP, not only waves per SIMD, where the VGPRs bind: every model, both
modes, on kernels llc-22 builds to sit on that edge; and LLVM's floor of one VGPR-limited wave.

Oracles: llc-22's ``; Occupancy:`` for each kernel (built here by tools/kernelgen.py), and LLVM's
rules worked by hand from it (docs/llvm-occupancy.md §2): getNumWavesPerEUWithNumVGPRs gives
min(max(file // alignTo(VGPRs, granule), 1), max waves); a CU has 2 SIMDs on gfx11/gfx12 and a
WGP 4 (getEUsPerCU), so the workgroups that fit are waves per SIMD x SIMDs // waves per workgroup.
The VGPR files and granules are llc-22's measured ones (tests/data/llvm22_target_probe.json:
1536 in granules of 24 for wave32, 768 in granules of 12 for wave64, on gfx1100 and gfx1201).
HIP counts the same file in wave32 units (device.cpp's 1536/24, halved for wave64) and doubles
its SIMDs in WGP mode; the hw model allocates the same granules; so all three agree here.

Two faults no earlier test caught are killed here: the llvm model counting a WGP's workgroups
with a CU's SIMDs where the VGPRs bind (by_vgpr x 2 // waves instead of x 4), and its VGPR-limited
waves reaching 0 where LLVM clamps them to 1.
"""

from __future__ import annotations

import pytest

import amdocc
import kernelgen
from amdocc.models import manual
from amdocc.targets import get_target

# (processor, wave, VGPRs, block): 200 VGPRs in wave32 round to 216, 1536 // 216 = 7 waves per
# SIMD; 100 VGPRs in wave64 round to 108, 768 // 108 = 7. Every other limit is wider: 16 wave
# slots per SIMD, a barrier limit of 16 workgroups per CU and 32 per WGP, no LDS, few SGPRs.
VGPR_WAVES = 7
SHAPES = [
    (processor, wave, vgprs, block)
    for processor in ("gfx1100", "gfx1201")
    for wave, vgprs, blocks in ((32, 200, (128, 96)), (64, 100, (128, 192)))
    for block in blocks
]


def by_hand(wave: int, block: int, wgp: bool) -> int:
    """Workgroups per CU (per WGP in WGP mode): 7 waves on each of 2 SIMDs (4 in a WGP), shared
    by workgroups of ceil(block / wave) waves."""
    simds = 4 if wgp else 2
    return VGPR_WAVES * simds // -(-block // wave)


def test_the_hand_worked_numbers():
    # wave32: blocks of 4 and 3 waves; wave64: blocks of 2 and 3 waves.
    assert [by_hand(32, 128, True), by_hand(32, 96, True), by_hand(64, 128, True), by_hand(64, 192, True)] == [
        7,
        9,
        14,
        9,
    ]
    assert [by_hand(32, 128, False), by_hand(32, 96, False), by_hand(64, 128, False), by_hand(64, 192, False)] == [
        3,
        4,
        7,
        4,
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The kernels of SHAPES in WGP mode (the gfx11/gfx12 default) and with +cumode, one fixed
    workgroup size each ("amdgpu-flat-work-group-size"="B,B"), compiled and linked by llc-22."""
    specs = {}
    for processor, wave, vgprs, block in SHAPES:
        for cumode in (False, True):
            name = f"k_{processor}_w{wave}_b{block}_{'cu' if cumode else 'wgp'}"
            specs[name] = kernelgen.KernelSpec(
                name, processor, wave=wave, cumode=cumode, vgprs=vgprs, min_wg=block, max_wg=block
            )
    out = {}
    for batch in kernelgen.compile_many(list(specs.values()), tmp_path_factory.mktemp("wgp_edge"), jobs=2):
        assert batch.errors == {} and batch.hsaco is not None, batch.errors
        kernels = {k.name: k for co in amdocc.load(batch.hsaco) for k in co.kernels}
        for name, info in batch.infos.items():
            out[name] = (specs[name], kernels[name], info)
    assert len(out) == 2 * len(SHAPES)
    return out


@pytest.mark.llvm22
@pytest.mark.parametrize("model", ["llvm", "hip", "hw"])
@pytest.mark.parametrize("mode", ["wgp", "cu"])
@pytest.mark.parametrize(("processor", "wave", "vgprs", "block"), SHAPES)
def test_vgpr_bound_workgroups_per_cu_and_per_wgp(built, model, mode, processor, wave, vgprs, block):
    _, kernel, info = built[f"k_{processor}_w{wave}_b{block}_{mode}"]
    assert (info["NumVgprs"], info["Occupancy"]) == (vgprs, VGPR_WAVES)  # llc-22: the VGPRs bind
    occ = amdocc.occupancy(kernel, model=model, block_size=block)
    wgp = mode == "wgp"
    assert occ.per_wgp is wgp
    assert (occ.blocks_per_cu, occ.limiter) == (by_hand(wave, block, wgp), "vgpr")
    assert occ.as_dict()["blocks_per_wgp" if wgp else "blocks_per_cu"] == by_hand(wave, block, wgp)
    if model == "llvm":
        assert occ.waves_per_simd == occ.details["llvm_occupancy"] == info["Occupancy"]


# -- LLVM's floor: a VGPR-limited wave count is at least 1 ----------------------------------------


@pytest.mark.llvm22
def test_llc22_gives_the_largest_unified_file_one_wave(tmp_path):
    # The edge a kernel can reach: 256 arch VGPRs + 256 AGPRs on gfx942 fill its 512-register file.
    spec = kernelgen.KernelSpec("full", "gfx942", vgprs=256, agprs=256, min_wg=64, max_wg=64)
    ((hsaco, infos),) = kernelgen.compile_many([spec], tmp_path, jobs=1)
    assert (infos["full"]["TotalNumVgprs"], infos["full"]["Occupancy"]) == (512, 1)
    (kernel,) = [k for co in amdocc.load(hsaco) for k in co.kernels]
    occ = amdocc.occupancy(kernel, model="llvm", block_size=64)
    assert (occ.waves_per_simd, occ.blocks_per_cu) == (1, 4)  # 1 wave x 4 SIMDs, one-wave workgroups


@pytest.mark.parametrize("vgprs", [513, 520, 600, 1024])
@pytest.mark.parametrize(("block", "workgroups"), [(64, 4), (256, 1)])
def test_llvm_clamps_vgpr_waves_to_one_beyond_the_file(vgprs, block, workgroups):
    # getNumWavesPerEUWithNumVGPRs: min(max(512 // alignTo(N, 8), 1), 8) = 1 for any N > 512 on
    # gfx942 (what a hand-written .vgpr_count may claim; LLVM never answers 0 waves). One wave on
    # each of 4 SIMDs: 4 one-wave workgroups, or 1 of four waves.
    occ = amdocc.occupancy(manual(get_target("gfx942"), vgprs=vgprs), model="llvm", block_size=block)
    assert occ.limits["vgpr"] == workgroups and occ.blocks_per_cu == workgroups
    assert occ.details["waves_per_eu_limits"]["vgpr"] == 1 and occ.details["llvm_occupancy"] == 1
    plain = amdocc.occupancy(manual(get_target("gfx942"), vgprs=vgprs), model="llvm")
    assert plain.waves_per_simd == 1
