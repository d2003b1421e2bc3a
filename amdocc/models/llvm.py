"""What LLVM prints as ``; Occupancy:`` (waves per SIMD), exactly, for the LLVM that built the kernel.

Written from the rules in docs/llvm-occupancy.md §2 (GCNSubtarget::computeOccupancy:
the minimum of the LDS/workgroup-size, SGPR and VGPR limits). Inputs are what the compiler had:
the metadata's .vgpr_count, .sgpr_count and static LDS, the wave size and WGP mode, and the flat
workgroup range (1, .max_flat_workgroup_size). The rules differ by LLVM version
(tables/llvm_rules.toml, chosen in llvm_rules.py): LLVM 23 made pre-GFX10 SGPR occupancy the exact
inverse of the SGPR budget (llvm PR #201342) and rounds per-workgroup LDS to its granule (#205637).

LLVM pads a kernel's SGPR count up to the fewest SGPRs that keep it from reaching one wave more
than its workgroup range and LDS allow (AMDGPUAsmPrinter's NumSGPRsForWavesPerEU, from
getMinNumSGPRs), and prints the occupancy of the padded count. Under the step table that padding
never costs a wave; under the exact inverse it does where that wave count is unreachable (9 on
gfx9: a 9-wave kernel is printed as 8). VGPRs are padded the same way, but getMinNumVGPRs returns
0 for unreachable counts, so the padding never costs a wave and is not modelled.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..binary import align_up
from ..errors import UsageError
from ..targets import MAX_WORKGROUP_SIZE, TRAP_HANDLER_SGPRS, Target
from .llvm_rules import RulesChoice, parse_version, rules_for_producer, rules_for_version
from .record import Occupancy, block_fits, build, lds_fits, smallest
from .usage import KernelUsage


def vgpr_waves(t: Target, wave: int, vgprs: int) -> int:
    """getNumWavesPerEUWithNumVGPRs."""
    granule, total = t.vgpr_alloc_granule[wave], t.vgprs[wave]
    if vgprs < granule:
        return t.max_waves_per_simd
    return min(max(total // align_up(vgprs, granule), 1), t.max_waves_per_simd)


def sgpr_waves(t: Target, sgprs: int, sgpr_rule: str = "step-table") -> int:
    """getOccupancyWithNumSGPRs: LLVM 22's step table, or ("budget-inverse", LLVM 23, PR #201342)
    the exact inverse of the per-wave budget: file / (alignTo(SGPRs, granule) + trap-handler SGPRs)."""
    if not t.sgpr_waves:
        return t.max_waves_per_simd
    if sgpr_rule == "budget-inverse":
        cost = align_up(sgprs, t.sgpr_alloc_granule) + TRAP_HANDLER_SGPRS
        return max(1, min(t.max_waves_per_simd, t.sgprs_per_simd // cost))
    for limit, waves in t.sgpr_waves:
        if sgprs <= limit:
            return min(waves, t.max_waves_per_simd)
    return min(t.sgpr_waves_beyond, t.max_waves_per_simd)


def sgprs_padded_for(t: Target, waves: int) -> int:
    """getMinNumSGPRs: the SGPR count LLVM pads a kernel to when ``waves`` per SIMD is the most its
    workgroup range allows (the budget of one wave more, plus one; 0 at the wave-slot cap)."""
    if not t.sgpr_waves or waves >= t.max_waves_per_simd:
        return 0
    budget = t.sgprs_per_simd // (waves + 1) - TRAP_HANDLER_SGPRS
    return min(budget // t.sgpr_alloc_granule * t.sgpr_alloc_granule + 1, t.addressable_sgprs)


def max_workgroups_per_cu(t: Target, wave: int, wgp: bool, wg_size: int) -> int:
    """getMaxWorkGroupsPerCU: one-wave groups need no barrier; others share 16 (32 per WGP)."""
    slots = t.max_waves_per_simd * t.simds(wgp)
    waves = -(-wg_size // wave)
    if waves == 1:
        return slots
    cap = t.max_workgroups_per_wgp if wgp else t.max_workgroups_per_cu
    assert cap is not None  # the targets loader refuses a row with WGPs without max_workgroups_per_wgp
    return min(slots // waves, cap)


def workgroups_by_lds(t: Target, wgp: bool, lds: int, granule_rounding: bool = False) -> int:
    """Workgroups of ``lds`` bytes that LLVM's getLocalMemorySize (doubled in WGP mode) holds."""
    pool = t.lds_per_workgroup * (2 if wgp else 1)
    size = align_up(lds, t.lds_granule) if granule_rounding and lds else lds
    return pool // max(size, 1)


def lds_waves(
    t: Target, wave: int, wgp: bool, lds: int, wg_min: int, wg_max: int, granule_rounding: bool = False
) -> int:
    """getOccupancyWithWorkGroupSizes (LLVM 21+, PR #123748): the most waves per EU, its second value
    (computeOccupancy takes that one). LLVM takes the waves of the smallest and of the largest
    workgroups the range allows, and fills the slots the smallest leave; with a range that starts
    at 1 or is one size, all a code object's note can say, the smallest never leave a slot to fill
    where they give more waves (tests/test_models_edges.py checks every processor against the full
    rule), so the answer is the larger of the two ends."""
    eus = t.simds(wgp)
    wgs_lds = workgroups_by_lds(t, wgp, lds, granule_rounding)
    if wgs_lds == 0:
        return 1

    def waves_of(size: int) -> int:
        return -(-size // wave) * min(max_workgroups_per_cu(t, wave, wgp, size), wgs_lds)

    return max(1, min(-(-max(waves_of(wg_min), waves_of(wg_max)) // eus), t.max_waves_per_simd))


def choose_rules(u: KernelUsage, llvm_version: str | None) -> RulesChoice:
    """The rules for this kernel: ``llvm_version`` when given, else its code object's compiler.
    A processor the chosen LLVM did not know is refused when the version was given, and moves the
    choice to the first LLVM that knew it when the version came from the code object (its .comment
    may name an older linker than the compiler) or from nowhere."""
    t = u.target
    if llvm_version is not None:
        choice = parse_version(llvm_version, t)
        if t.since_llvm and choice.llvm_major < t.since_llvm:
            raise UsageError(
                f"LLVM {choice.llvm_major} ({choice.rules.name} rules) did not know {t.name}: "
                f"LLVM first knew it in LLVM {t.since_llvm}"
            )
        return choice
    choice = rules_for_producer(u.producer, u.from_file, t)
    if t.since_llvm and choice.llvm_major < t.since_llvm:
        rules, _ = rules_for_version(t.since_llvm, False, f"LLVM {t.since_llvm}")
        built = f", so it was not built by the LLVM {choice.llvm_major} its .comment names" if u.producer else ""
        note = f"{t.name} first appeared in LLVM {t.since_llvm}{built}; {rules.name} rules used"
        return RulesChoice(rules, f"{t.name} needs LLVM {t.since_llvm}+", (*choice.warnings, note), t.since_llvm)
    return choice


def llvm_occupancy(
    u: KernelUsage, block_size: int | None = None, dynamic_lds: int = 0, *, llvm_version: str | None = None
) -> Occupancy:
    """LLVM's occupancy under the rules of ``llvm_version`` (default: the kernel's compiler).
    Without ``block_size`` the flat workgroup range is (1, .max_flat_workgroup_size) and the answer
    is the compiler's ``; Occupancy:``; with it, the range is that exact size and ``blocks_per_cu``
    is also derived.

    LLVM does not see dynamic LDS; when given, it is added to the static size (a what-if).
    """
    choice = choose_rules(u, llvm_version)
    rules = choice.rules
    t = rules.target_view(u.target)
    wave, wgp = u.wave, u.wgp_mode and t.wgp
    eus = t.simds(wgp)
    # The record of this kernel on this target at this launch: what every answer below shares.
    record = partial(
        build,
        "llvm",
        rules.name,
        t.name,
        block_size,
        dynamic_lds,
        simds=eus,
        max_waves_per_simd=t.max_waves_per_simd,
        per_wgp=wgp,
    )
    if block_size is not None and block_size < 1:  # no such launch: nothing to evaluate
        return record({"block_size": 0}, blocks=0, waves_per_block=None, allocated={}, warnings=list(choice.warnings))
    wg_max = u.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
    wg_min, wg_hi = (block_size, block_size) if block_size else (1, wg_max)
    lds = u.lds + dynamic_lds
    by_lds = lds_waves(t, wave, wgp, lds, wg_min, wg_hi, rules.lds_granule_rounding)
    padded = max(u.sgprs, sgprs_padded_for(t, by_lds))
    by_sgpr = sgpr_waves(t, padded, rules.sgpr_occupancy)
    by_vgpr = vgpr_waves(t, wave, u.vgprs)
    waves = min(by_lds, by_sgpr, by_vgpr)
    per_wg = -(-block_size // wave) if block_size else None
    # Waves per EU each resource alone allows, reported the way LLVM counts them.
    waves_limits = {"lds": by_lds, "sgpr": by_sgpr, "vgpr": by_vgpr, "waves": t.max_waves_per_simd}
    # The compiler's own '; Occupancy:' number, kept even where no workgroup of this size fits
    # (the record's waves_per_simd is then 0: see record.build).
    details: dict[str, Any] = {
        "llvm_occupancy": waves,
        "waves_per_eu_limits": waves_limits,
        "eus_per_cu": eus,
        "flat_workgroup_size": [wg_min, wg_hi],
        "llvm_rules": choice.as_dict(),
    }
    if u.producer is not None:
        details["compiler"] = u.producer.as_dict()
    if padded > u.sgprs:
        details["sgprs_padded_to"] = padded  # NumSGPRsForWavesPerEU, what LLVM's number is computed from
    warnings = list(choice.warnings)
    if dynamic_lds:
        warnings.append("LLVM's occupancy sees only static LDS; dynamic LDS was added as a what-if")
    if u.agprs:
        details["agpr_count"] = u.agprs
    limits: dict[str, int | None] = {}
    blocks = None
    if block_size and per_wg:  # per_wg is set whenever block_size is
        # Workgroups that fit at this occupancy, bounded like LLVM bounds workgroups per CU.
        groups_lds = workgroups_by_lds(t, wgp, lds, rules.lds_granule_rounding)
        limits = {
            "vgpr": by_vgpr * eus // per_wg,
            "sgpr": by_sgpr * eus // per_wg,
            "waves": t.max_waves_per_simd * eus // per_wg,
            "lds": groups_lds if lds else None,
            "barriers": max_workgroups_per_cu(t, wave, wgp, block_size) if per_wg > 1 else None,
        }
        if not block_fits(u, block_size):
            limits["block_size"] = 0
        if not lds_fits(u, lds):  # LLVM refuses such a kernel; the warning is launch_check's
            limits["lds"] = 0
        blocks = smallest(limits)
        # (A block size or LDS no workgroup may have is launch_check's warning, not this one.)
        if blocks == 0 and waves and limits.get("block_size") is None and limits.get("lds") != 0:
            warnings.append(
                f"LLVM prints Occupancy {waves} for this workgroup size (its per-wave limit), but "
                f"no workgroup of {per_wg} waves fits on the {eus} SIMDs: 0 workgroups, 0 waves"
            )
    else:
        limits = dict(waves_limits)
    return record(
        limits,
        blocks=blocks,
        waves_per_block=per_wg,
        allocated={
            "vgprs_per_wave": align_up(max(u.vgprs, 1), t.vgpr_alloc_granule[wave]),
            "sgprs_per_wave": u.sgprs,
            "lds_per_block": lds,
        },
        waves_per_simd=waves,
        warnings=warnings,
        details=details,
    )
