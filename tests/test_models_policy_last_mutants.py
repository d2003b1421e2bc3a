"""The last survivors of the final mutation sample in the models and the policy rooms.

Oracles: the HIP runtime's own names and arithmetic (ROCm/clr rocm-6.2.2
hipamd/src/hip_platform.cpp names MaxWavesPerSimd, wavefrontSize, VgprWaves, simdPerCU;
shared/research/hip-occupancy.md §0, §6 and §7 for the rules, the bit-mask alignUp and the header
template's search), the targets table's cited values (gfx942: 512 VGPRs granule 8, 4 SIMDs,
64 KiB LDS; rocm-6.0 profile 256/4; gfx1100 wave32: 1536 VGPRs granule 24, 16 workgroups per
CU; gfx950: 160 KiB LDS), llvm-objdump-22's listing of the gfx9-4-generic fixture (stored beside
it: .amdhsa_group_segment_fixed_size 16384) and the texts each test writes.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

import amdocc
from amdocc import UsageError
from amdocc.models import manual
from amdocc.models.hip import max_potential_block_size_search
from amdocc.policy.checks import Settings
from amdocc.policy.prefill_gate import AsmKernel, _codegen_rows, validate_asm_kernel
from amdocc.policy.splits import resolve_occupancy
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = get_target("gfx942")
GFX1100 = get_target("gfx1100")
GENERIC = FIXTURES / "elf" / "gfx9-4-generic_cov6.hsaco"


# -- hip: the details carry the runtime's own names ------------------------------------------------


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


# -- hip: the header template's block-size search --------------------------------------------------


def test_the_search_answers_no_block_when_no_size_holds_one():
    # 65537 B of dynamic LDS at every size exceeds gfx942's 65536 B: 0 blocks at each size, so no
    # size is ever kept (§6 step 3 keeps a size only when it holds strictly more threads than the
    # best so far, which starts at none): block 0, grid 0.
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


# -- llvm: a wave holds at least one allocation granule ---------------------------------------------


@pytest.mark.parametrize("granule", [1, 8])
@pytest.mark.parametrize("vgprs", [0, 1])
def test_llvm_allocates_one_granule_to_a_wave_of_at_most_one_vgpr(granule, vgprs):
    # The descriptor asks for (GRANULATED_WORKITEM_VGPR_COUNT + 1) x granule VGPRs (llvm-amdgpu-rules.md
    # §3.6), so a wave of 0 or 1 VGPRs holds exactly one granule: 8 on gfx942; 1 on a processor
    # built here with an allocation granule of 1 (none ships one; the rule does not depend on it).
    t = dataclasses.replace(GFX942, vgpr_alloc_granule={64: granule})
    occ = amdocc.occupancy(manual(t, vgprs=vgprs), block_size=64, model="llvm")
    assert occ.allocated["vgprs_per_wave"] == granule


# -- hw: where the barrier limit is what HIP lacks -------------------------------------------------


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


# -- policy ----------------------------------------------------------------------------------------


def test_the_occupancy_rule_without_a_floor_names_the_option_and_its_unit():
    with pytest.raises(UsageError) as err:
        Settings(rules=("occupancy",))
    assert str(err.value) == "the occupancy rule needs a floor (min-occupancy, in waves per SIMD)"


def test_an_indented_commented_out_codegen_entry_is_not_an_entry():
    def entry(mask, name, indent=""):
        s = f"fmha_fwd_kernel_selector<FmhaFwdBf16, 128, {mask}, false, false, 0, GPUArch::gfx950>"
        return [
            f'{indent}template<> struct FmhaFwdV3Name<{s}> {{ static constexpr const char * n = "{name}"; }};',
            f'{indent}template<> struct FmhaFwdV3Buf<{s}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    live = entry(0, "fwd_live")
    dead = [f"    // {line}" for line in entry(1, "fwd_dead")]  # commented out inside an indented block
    rows = _codegen_rows("\n".join(live + dead) + "\n")
    assert [r["co_name"] for r in rows] == ["fwd_live.co"]


def test_the_gate_counts_blocks_on_the_device_not_on_the_generic_target():
    # llvm-objdump-22: 16384 B static LDS; 6 VGPRs; 256 threads = 4 waves. On gfx950 (160 KiB LDS):
    # LDS 163840 // 16384 = 10, wave slots 4 x 8 x 64 // 256 = 8, VGPRs 512 // 8 = 64 -> capped: 8
    # blocks limited by waves. (gfx942's 64 KiB would give 4, limited by LDS.)
    lds = re.search(r"\.amdhsa_group_segment_fixed_size (\d+)", (GENERIC.parent / f"{GENERIC.name}.kd.txt").read_text())
    assert int(lds.group(1)) == 16384
    kernel = AsmKernel("_Z9saxpy_ldsfPKfPfi", GENERIC.name, GENERIC)
    checks, blocks = validate_asm_kernel(kernel, "gfx950", block_size=256)
    assert blocks == 8
    assert checks[-1].detail == "8 block(s) of 256 threads per CU (limited by waves)"
    assert validate_asm_kernel(kernel, "gfx942", block_size=256)[0][-1].detail == (
        "4 block(s) of 256 threads per CU (limited by lds)"
    )


def test_a_model_answer_on_the_kernels_own_processor_has_no_suffix():
    # gfx942, 128 VGPRs, 256 threads: 512 // 128 = 4 waves -> 4 x 4 x 64 // 256 = 4 blocks by VGPRs.
    answer = resolve_occupancy(kernel=manual(GFX942, vgprs=128), block_size=256)
    assert (answer.blocks_per_cu, answer.source) == (4, "model")
    assert re.fullmatch(r"hip model \([^)]+\) on manual, limited by vgpr", answer.detail)
