"""What ``hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`` returns, bit for bit, per ROCm release.

Written from the algorithm in docs/hip-occupancy.md §2 (ROCm CLR hip_platform.cpp,
ihipOccupancyMaxActiveBlocksPerMultiprocessor), with each release's behaviour a profile of
tables/hip_profiles.toml (see :mod:`.hip_profiles`). HIP reads only the metadata note:
.vgpr_count, .sgpr_count, .group_segment_fixed_size, .wavefront_size and
.workgroup_processor_mode. It never reads the descriptor, never adds .agpr_count, rounds with a
bit mask, and pools a CU's waves. Where HIP divides by zero (the process dies with SIGFPE) or
returns an error, the record says so instead of answering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from ..caches import cached
from ..errors import UsageError
from ..targets import MAX_WORKGROUP_SIZE, Target
from .hip_profiles import (
    HipProfile,
    RuntimeProfile,
    aliases,
    decode_runtime_version,
    default_profile_name,
    get_profile,
    profile_for_runtime,
    profiles,
)
from .record import UNKNOWN_RUNTIME_VALUES, UNSUPPORTED_PROCESSOR, Occupancy, build, smallest
from .usage import KernelUsage

__all__ = [
    "HipProfile",
    "RuntimeProfile",
    "aliases",
    "align_up_bitmask",
    "decode_runtime_version",
    "default_profile_name",
    "get_profile",
    "hip_limits",
    "hip_occupancy",
    "max_potential_block_size",
    "max_potential_block_size_search",
    "max_waves_per_simd",
    "profile_for_runtime",
    "profiles",
]

INT_MAX = 2**31 - 1
SIZE_MAX = 2**64 - 1  # static + dynamic LDS is size_t arithmetic in HIP


def align_up_bitmask(value: int, alignment: int) -> int:
    """amd::alignUp: ``(v + a - 1) & ~(a - 1)``, exact only for powers of two (24 is not; 0 gives 0)."""
    return (value + alignment - 1) & ~(alignment - 1)


def max_waves_per_simd(target: Target) -> int:
    """HIP's MaxWavesPerSimd (the targets table's hip_max_waves_per_simd)."""
    return target.hip_max_waves_per_simd


@dataclass(frozen=True, slots=True)
class _Budget:
    """The intermediate values of the HIP computation for one kernel (block size aside)."""

    wave: int
    max_waves: int
    vgpr_waves: int | None
    sgpr_waves: int | None
    simds: int
    wgp: bool  # SIMDs doubled: counted per WGP
    wgp_mode: bool  # the kernel's isWGPMode_ as this runtime parsed it
    lds_bytes: int  # the device's group segment (localMemSize_)
    vgpr_file: tuple[int, int] | None  # as the profile's table gives it (wave32 units on gfx10+)
    vgpr_granule: int | None  # after halving for wave64 on gfx10+
    sgpr_cost: int | None
    refusal: tuple[str, str] | None = None  # no such runtime answer at all: (error, why)
    failure: tuple[str, str] | None = None  # HIP fails after its block-size checks: (error, why)


@cached(maxsize=4096)  # depends on the kernel and runtime, not on the launch shape
def _budget(u: KernelUsage, p: HipProfile, lds_bytes: int | None) -> _Budget:
    t = u.target
    max_waves = max_waves_per_simd(t)
    # Until 2025 postLoad overwrote the metadata wave size with the device's (32 on RDNA).
    wave = u.wave if p.wave_size == "metadata" else t.default_wave
    wgp_mode = p.parses_wgp(u.wgp_metadata)
    # ROCm <= 5.5 ("device"): the device's SIMDs per CU, doubled on every processor with WGPs
    # because the runtime runs in WGP mode there (GPU_ENABLE_WGP_MODE, on by default), whatever the
    # kernel. Runtimes up to 6.4 took gfx9's SIMD count from the device and ignored WGP mode there.
    wgp = t.wgp if p.simd_count == "device" else wgp_mode and (p.simd_count == "isa" or t.wgp)
    # The values as they are worked out, made a _Budget once where the computation stops.
    fields: dict[str, Any] = dict(
        wave=wave,
        max_waves=max_waves,
        vgpr_waves=None,
        sgpr_waves=None,
        simds=t.simds(wgp),
        wgp=wgp,
        wgp_mode=wgp_mode,
        lds_bytes=t.lds_per_cu if lds_bytes is None else lds_bytes,
        vgpr_file=None,
        vgpr_granule=None,
        sgpr_cost=None,
    )
    if p.unknown:
        return _Budget(**fields, refusal=(UNKNOWN_RUNTIME_VALUES, f"HIP profile {p.name}: {p.unknown}"))
    file = p.vgpr_file(t)
    if file is None:
        return _Budget(
            **fields,
            refusal=(
                UNSUPPORTED_PROCESSOR,
                # The profile's name, not its whole source: the warning is printed once per
                # processor, and the profile's listing (hip_profiles.toml) gives the source.
                f"the {p.release_name} runtime does not run {t.name} (not among the processors of "
                f"its device.cpp ISA table: HIP profile {p.name})",
            ),
        )
    vmax, gran = file
    if wave == 64 and t.vgpr_file_in_wave32_units:
        vmax, gran = vmax >> 1, gran >> 1
    fields.update(vgpr_file=file, vgpr_granule=gran)
    guard = u.sgprs if p.vgpr_guard == "sgprs" else u.vgprs
    divisor = align_up_bitmask(u.vgprs, gran)
    if guard > 0 and divisor == 0:
        return _Budget(
            **fields,
            failure=(
                "division-by-zero",
                f"this runtime has {vmax} VGPRs in granules of "
                f"{gran} for {t.name}, so alignUp({u.vgprs}, {gran}) is 0 and it "
                "divides by zero (SIGFPE)",
            ),
        )
    vgpr_waves = vmax // divisor if guard > 0 else max_waves
    fields["vgpr_waves"] = vgpr_waves
    if vgpr_waves == 0:
        return _Budget(
            **fields,
            failure=_no_wave(p, f"{u.vgprs} VGPRs leave no room for one wave of {wave} lanes in {vmax} registers"),
        )
    if u.sgprs > 0 and t.sgprs_per_simd:
        granule = p.sgpr_granule or t.sgpr_alloc_granule
        cost = align_up_bitmask(u.sgprs, granule) + p.sgpr_trap_reserve
        fields.update(sgpr_cost=cost, sgpr_waves=t.sgprs_per_simd // cost)
        if fields["sgpr_waves"] == 0:
            # No runtime checks this one: the thread budget is 0 and the grid divides by it.
            return _Budget(
                **fields,
                failure=(
                    "division-by-zero",
                    f"{u.sgprs} SGPRs cost {cost} per wave, more than "
                    f"the {t.sgprs_per_simd} a SIMD has: no wave fits, and HIP divides by "
                    "the zero thread budget computing the grid (SIGFPE)",
                ),
            )
    if wave == 0:
        return _Budget(
            **fields,
            failure=(
                "division-by-zero",
                "this runtime takes .wavefront_size 0 from the metadata and divides by alignUp(block, 0) = 0 (SIGFPE)",
            ),
        )
    return _Budget(**fields)


def _no_wave(p: HipProfile, why: str) -> tuple[str, str]:
    if p.zero_vgpr_waves == "hipErrorUnknown":
        return "hipErrorUnknown", f"{why}; HIP returns hipErrorUnknown"
    return "division-by-zero", f"{why}; this runtime does not check, and divides by zero computing the grid (SIGFPE)"


_CALLER_VALUE = {
    "0": (0, "this runtime's module wrapper writes 0 into the caller's numBlocks"),
    "unchanged": ("unchanged", "HIP leaves the caller's numBlocks unchanged"),
    "0-or-unchanged": (
        "0 or unchanged",
        "the caller's numBlocks is set to 0 or left unchanged, depending on the develop snapshot",
    ),
}


def check_sizes(u: KernelUsage, dynamic_lds: int) -> None:
    """Refuse inputs HIP's own types cannot hold: it parses the counts with atoi into an int and
    adds static and dynamic LDS in size_t, so beyond those limits its answer is not defined."""
    for label, value in ((".vgpr_count", u.vgprs), (".sgpr_count", u.sgprs), (".group_segment_fixed_size", u.lds)):
        if value > INT_MAX:
            raise UsageError(
                f"{label} {value} exceeds INT_MAX ({INT_MAX}): HIP parses it with atoi into an "
                "int, so no HIP answer is defined"
            )
    if u.lds + dynamic_lds > SIZE_MAX:
        raise UsageError(
            f"static + dynamic LDS {u.lds} + {dynamic_lds} B exceeds SIZE_MAX ({SIZE_MAX}): HIP adds "
            "them in size_t, where the sum wraps and the LDS limit vanishes; give at most "
            f"{SIZE_MAX - u.lds} B of dynamic LDS"
        )


class _Common(TypedDict):
    """The arguments of :func:`.record.build` every HIP record shares."""

    model: str
    profile: str
    processor: str
    block_size: int
    dynamic_lds: int


class _Shape(TypedDict):
    """The arguments of :func:`.record.build` known once the budget is (block size aside)."""

    waves_per_block: int | None
    simds: int
    max_waves_per_simd: int
    per_wgp: bool
    allocated: dict[str, int | None]
    details: dict[str, Any]


def hip_occupancy(
    u: KernelUsage, block_size: int, dynamic_lds: int = 0, *, profile: str | None = None, lds_bytes: int | None = None
) -> Occupancy:
    """Blocks per CU as the named HIP runtime answers (default: the table's default release,
    the newest one a real runtime has confirmed; ROCm develop only when named)."""
    p = get_profile(profile)
    check_sizes(u, dynamic_lds)
    t = u.target
    b = _budget(u, p, lds_bytes)
    common = _Common(model="hip", profile=p.name, processor=t.name, block_size=block_size, dynamic_lds=dynamic_lds)
    inferred = [p.inferred] if p.inferred else []  # first: an error's reason stays last
    if b.refusal:
        return build(
            **common,
            limits={},
            blocks=None,
            waves_per_block=None,
            simds=t.simds_per_cu,
            max_waves_per_simd=b.max_waves,
            per_wgp=False,
            allocated={},
            error=b.refusal[0],
            warnings=[*inferred, b.refusal[1]],
        )
    # Without a refusal the budget holds the VGPR file (see _budget).
    assert b.vgpr_file is not None and b.vgpr_granule is not None
    waves_per_block = -(-block_size // b.wave) if block_size > 0 and b.wave else None
    details: dict[str, Any] = {
        "MaxWavesPerSimd": b.max_waves,
        "wavefrontSize": b.wave,
        "vgprsPerSimd": b.vgpr_file[0],
        "vgprAllocGranularity": b.vgpr_file[1],
        "VgprWaves": b.vgpr_waves,
        "SgprWaves": b.sgpr_waves,
        "simdPerCU": b.simds,
        "isWGPMode": b.wgp_mode,
        "localMemSize": b.lds_bytes,
    }
    allocated: dict[str, int | None] = {
        "vgprs_per_wave": align_up_bitmask(u.vgprs, b.vgpr_granule),
        "sgprs_per_wave": b.sgpr_cost,
        "lds_per_block": u.lds + dynamic_lds,
    }
    shape = _Shape(
        waves_per_block=waves_per_block,
        simds=b.simds,
        max_waves_per_simd=b.max_waves,
        per_wgp=b.wgp,
        allocated=allocated,
        details=details,
    )
    warnings = inferred + _warnings(u, p, b, dynamic_lds)
    if p.sgpr_trap_reserve and t.sgprs_per_simd and u.sgprs:
        details["trapReserveSgprs"] = p.sgpr_trap_reserve
    if u.agprs:
        details["agpr_count_ignored"] = u.agprs

    if block_size <= 0:
        return _error(common, shape, warnings, p, "hipErrorInvalidValue", f"block size {block_size} is not positive")
    if block_size > MAX_WORKGROUP_SIZE:
        return build(**common, limits={"block_size": 0}, blocks=0, warnings=warnings, **shape)
    if b.failure:
        error, why = b.failure
        zero: dict[str, int | None] = {
            name: 0 for name, waves in (("vgpr", b.vgpr_waves), ("sgpr", b.sgpr_waves)) if waves == 0
        }
        return _error(common, shape, warnings, p, error, why, limits=zero)

    lds = u.lds + dynamic_lds
    limits = _limits(b, block_size, lds)
    assert b.vgpr_waves is not None  # set whenever the budget has no failure (see _budget)
    details["aluThreads"] = (
        b.simds * b.wave * min(b.max_waves, b.vgpr_waves, b.sgpr_waves if b.sgpr_waves is not None else INT_MAX)
    )
    return build(**common, limits=limits, blocks=smallest(limits), warnings=warnings, **shape)


def _warnings(u: KernelUsage, p: HipProfile, b: _Budget, dynamic_lds: int) -> list[str]:
    """What the reader should know about how this runtime read the kernel."""
    t = u.target
    warnings = []
    if u.wave != b.wave:
        warnings.append(
            f"this runtime takes the wave size from the device ({b.wave}), not the kernel's .wavefront_size {u.wave}"
        )
    if p.wgp_parse == "none" and t.wgp:
        warnings.append(
            "this runtime does not read .workgroup_processor_mode: it runs in WGP mode "
            "(GPU_ENABLE_WGP_MODE, on by default) and counts every kernel per WGP"
        )
    elif t.wgp and u.wgp_metadata not in (None, "0", "false") and not b.wgp_mode:
        warnings.append(
            f"this runtime reads .workgroup_processor_mode {u.wgp_metadata!r} as off (it accepts only "
            '"true", and LLVM writes 1), so it counts per CU, not per WGP'
        )
    if p.pr9571 and t.major == p.pr9571_isa_major and b.wgp and u.lds + dynamic_lds:
        warnings.append(
            "rocm-systems PR #9571 (Jul 2026) changed how this runtime counts LDS for gfx11 "
            "WGP-mode kernels; its formula is not known here, so the LDS limit follows the "
            "earlier rule"
        )
    return warnings


def _error(
    common: _Common,
    shape: _Shape,
    warnings: list[str],
    p: HipProfile,
    error: str,
    why: str,
    limits: dict[str, int | None] | None = None,
) -> Occupancy:
    """A record for a HIP call that fails: say why, and what the caller's numBlocks holds after it."""
    if error == "division-by-zero":
        why += "; the calling process dies, so no value is returned"
    else:
        value, text = _CALLER_VALUE[p.caller_value]
        shape["details"]["callerNumBlocks"] = value
        why += f"; {text}"
    return build(**common, limits=limits or {}, blocks=None, error=error, warnings=[*warnings, why], **shape)


def _limits(b: _Budget, block_size: int, lds: int) -> dict[str, int | None]:
    """Workgroups per CU each resource alone allows (valid block size, at least one wave)."""
    assert b.vgpr_waves is not None  # callers pass only a budget without refusal or failure
    balign = align_up_bitmask(block_size, b.wave)
    per_wave_threads = b.simds * b.wave
    return {
        "vgpr": per_wave_threads * b.vgpr_waves // balign,
        "sgpr": per_wave_threads * b.sgpr_waves // balign if b.sgpr_waves is not None else None,
        "waves": per_wave_threads * b.max_waves // balign,
        "lds": b.lds_bytes // lds if lds else None,
    }


def hip_limits(u: KernelUsage, block_size: int, dynamic_lds: int = 0) -> dict[str, int | None] | None:
    """Just the per-resource limits of the default profile (None when HIP would not answer),
    for models that compare themselves with HIP without building a whole record."""
    if not 0 < block_size <= MAX_WORKGROUP_SIZE or u.lds + dynamic_lds > SIZE_MAX:
        return None
    b = _budget(u, get_profile(None), None)
    if b.refusal or b.failure:
        return None
    return _limits(b, block_size, u.lds + dynamic_lds)


def max_potential_block_size(
    u: KernelUsage,
    dynamic_lds: int = 0,
    block_size_limit: int = 0,
    *,
    compute_units: int,
    runtime_wgp: bool | None = None,
    profile: str | None = None,
    lds_bytes: int | None = None,
) -> dict[str, int | str | None]:
    """hipModuleOccupancyMaxPotentialBlockSize (the C API): no search (docs/hip-occupancy.md §3).

    ``compute_units`` is the device's CU count as HIP reports it (already halved in a WGP-mode
    runtime on RDNA); ``runtime_wgp`` says whether the runtime runs in WGP mode (RDNA default).
    """
    p = get_profile(profile)
    check_sizes(u, dynamic_lds)
    b = _budget(u, p, lds_bytes)
    stop = b.refusal or b.failure
    if stop:
        return {"error": stop[0]}
    assert b.vgpr_waves is not None  # set whenever the budget has no refusal or failure
    limit = block_size_limit if 0 < block_size_limit <= MAX_WORKGROUP_SIZE else MAX_WORKGROUP_SIZE
    sgpr_waves = b.sgpr_waves if b.sgpr_waves is not None else INT_MAX
    alu_threads = b.simds * min(b.max_waves, b.vgpr_waves, sgpr_waves) * b.wave
    lds = u.lds + dynamic_lds
    lds_wgs = b.lds_bytes // lds if lds else INT_MAX
    best = min(alu_threads, align_up_bitmask(limit, b.wave))
    cus = compute_units
    runtime_wgp = u.target.wgp if runtime_wgp is None else runtime_wgp
    if p.grid_cu_correction and b.wgp_mode != runtime_wgp:  # since 2024-04-02 (fcfe2ec88)
        cus = cus // 2 if b.wgp_mode else cus * 2
    return {"block_size": best, "grid_size": cus * min(alu_threads // best, lds_wgs), "error": None}


def max_potential_block_size_search(
    u: KernelUsage,
    smem_for_block: Callable[[int], int] = lambda block: 0,
    block_size_limit: int = 0,
    *,
    compute_units: int,
    max_threads_per_cu: int,
    profile: str | None = None,
    lds_bytes: int | None = None,
) -> dict[str, int | str | None]:
    """The header template hipOccupancyMaxPotentialBlockSizeVariableSMem: it does search.

    From the block limit (default: the kernel's .max_flat_workgroup_size) down to one wave, in
    wave steps, keep the size with the most resident threads (first, i.e. largest, on ties);
    stop early once a CU is full. ``max_threads_per_cu`` is hipDeviceAttributeMaxThreadsPerMultiProcessor.
    """
    max_block = u.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
    limit = max_block if block_size_limit <= 0 else min(block_size_limit, max_block)
    warp = u.wave
    best_threads, best_block, best_blocks = 0, 0, 0
    start = align_up_bitmask(limit, warp)
    for bs in range(start, 0, -warp):
        check = min(limit, bs)
        occ = hip_occupancy(u, check, smem_for_block(check), profile=profile, lds_bytes=lds_bytes)
        if occ.error:
            return {"error": occ.error}
        n = occ.blocks_per_cu or 0
        if check * n > best_threads:
            best_threads, best_block, best_blocks = check * n, check, n
            if best_threads == max_threads_per_cu:
                break
    return {"block_size": best_block, "min_grid_size": best_blocks * compute_units, "error": None}
