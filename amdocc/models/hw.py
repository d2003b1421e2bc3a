"""The best physical estimate of how many workgroups a CU (or WGP) holds.

Unlike ``hip`` it uses what the hardware allocates: the descriptor's VGPR and SGPR counts (LLVM
may pad them, see docs/code-object-format.md §3.3) rounded to the real allocation granule (true rounding, not a bit
mask), LDS rounded to its allocation granule, the per-CU workgroup (barrier) limit, and the
trap handler's SGPRs. It is a modelling choice (docs/llvm-occupancy.md §2, "feature-level"
occupancy), not a measured answer; where it differs from ``hip`` the result says so.

Each rule has a public source (tests/test_hw_sources.py works a case of each by hand). Where no
public source pins a number the answer rests on (a table value marked ``unconfirmed``, or how
TG_SPLIT waves count against a CU), the result lists it in ``details["unconfirmed"]`` and warns.
"""

from __future__ import annotations

from ..binary import align_up
from ..targets import TRAP_HANDLER_SGPRS
from .hip import default_profile_name, hip_limits
from .record import Occupancy, block_fits, build, lds_fits, smallest
from .usage import KernelUsage


def hw_occupancy(u: KernelUsage, block_size: int, dynamic_lds: int = 0, *, trap_reserve: bool = True) -> Occupancy:
    t = u.target
    wave = u.wave
    wgp = u.wgp_mode and t.wgp
    simds = t.simds(wgp)
    max_waves = t.max_waves_per_simd
    warnings = []
    waves_per_block = -(-block_size // wave) if block_size > 0 else 0

    vgprs = u.vgprs_allocated if u.vgprs_allocated is not None else u.vgprs
    vgpr_alloc = align_up(max(vgprs, 1), t.vgpr_alloc_granule[wave])
    waves_by_vgpr = t.vgprs[wave] // vgpr_alloc
    sgpr_alloc, waves_by_sgpr = None, None
    if t.sgprs_limit_occupancy and t.sgprs_per_simd:
        sgprs = u.sgprs_allocated if u.sgprs_allocated is not None else u.sgprs
        sgpr_alloc = align_up(max(sgprs, 1), t.sgpr_alloc_granule) + (TRAP_HANDLER_SGPRS if trap_reserve else 0)
        waves_by_sgpr = t.sgprs_per_simd // sgpr_alloc

    lds = u.lds + dynamic_lds
    lds_alloc = align_up(lds, t.lds_granule) if lds else 0
    pool = t.lds_per_cu
    if wgp:
        assert t.lds_per_wgp is not None  # the targets loader refuses a row with WGPs without it
        pool = t.lds_per_wgp

    limits: dict[str, int | None] = {}
    if not block_fits(u, block_size):
        limits["block_size"] = 0  # the warning is launch_check's, the same for every model
    if waves_per_block:
        limits["vgpr"] = simds * waves_by_vgpr // waves_per_block
        if waves_by_sgpr is not None:
            limits["sgpr"] = simds * waves_by_sgpr // waves_per_block
        limits["waves"] = simds * max_waves // waves_per_block
    if lds:
        limits["lds"] = pool // lds_alloc if lds_fits(u, lds) else 0
    if waves_per_block > 1:
        limits["barriers"] = t.max_workgroups_per_wgp if wgp else t.max_workgroups_per_cu
    unconfirmed = []
    if lds and "lds_granule" in t.unconfirmed:
        unconfirmed.append(f"the {t.lds_granule} B LDS granule of {t.name}: {t.unconfirmed['lds_granule']}")
    if u.tg_split:
        warnings.append(
            "TG_SPLIT is set: a workgroup's waves may spread over CUs, so the LDS and barrier limits are not per CU"
        )
        unconfirmed.append(
            "how TG_SPLIT waves count against one CU's limits (AMDGPUUsage says only that "
            "they may run on different CUs)"
        )
        limits.pop("lds", None)
        limits.pop("barriers", None)
    if u.scratch:
        warnings.append(
            f"{u.scratch} B of scratch per work-item: scratch backing memory can limit "
            "waves further at run time; not modelled"
        )
    if wave == 64 and t.vgpr_file_in_wave32_units:
        warnings.append(
            "wave64 on RDNA is modelled with LLVM's wave64 VGPR file; how it takes wave "
            "slots on silicon is not confirmed"
        )
    if unconfirmed:
        warnings.append("unconfirmed by any public source: " + "; ".join(unconfirmed))
    blocks = smallest(limits)
    warnings += _differences_from_hip(u, block_size, dynamic_lds, blocks, limits)
    details = {
        "vgprs_allocated_from": "descriptor" if u.vgprs_allocated is not None else "metadata",
        "waves_per_simd_by_vgpr": waves_by_vgpr,
        "waves_per_simd_by_sgpr": waves_by_sgpr,
        "lds_pool": pool,
        "simds": simds,
        "unconfirmed": unconfirmed,
    }
    return build(
        "hw",
        "trap-reserve" if trap_reserve else "no-trap-reserve",
        t.name,
        block_size,
        dynamic_lds,
        limits,
        blocks=blocks,
        waves_per_block=waves_per_block or None,
        simds=simds,
        max_waves_per_simd=max_waves,
        per_wgp=wgp,
        allocated={"vgprs_per_wave": vgpr_alloc, "sgprs_per_wave": sgpr_alloc, "lds_per_block": lds_alloc},
        warnings=warnings,
        details=details,
    )


def _differences_from_hip(
    u: KernelUsage, block_size: int, dynamic_lds: int, blocks: int | None, limits: dict[str, int | None]
) -> list[str]:
    """Say where HIP's newest answer differs from this estimate, resource by resource."""
    hip = hip_limits(u, block_size, dynamic_lds)
    if hip is None:
        return []
    hip_blocks = smallest(hip)
    if hip_blocks == blocks:
        return []
    why = []
    for name, label in (("vgpr", "VGPRs"), ("sgpr", "SGPRs"), ("lds", "LDS"), ("waves", "wave slots")):
        mine, theirs = limits.get(name), hip.get(name)
        if mine != theirs:
            why.append(
                f"{label} allow {theirs if theirs is not None else 'any number'} there, "
                f"{mine if mine is not None else 'any number'} here"
            )
    if "barriers" in limits and limits["barriers"] == blocks:
        why.append("HIP has no per-CU workgroup (barrier) limit")
    return [f"HIP ({default_profile_name()}) answers {hip_blocks}: " + "; ".join(why or ["see the limits"])]
