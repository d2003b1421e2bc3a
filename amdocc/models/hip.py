"""What ``hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`` returns, bit for bit.

Written from the algorithm in shared/research/hip-occupancy.md §4 (ROCm CLR hip_platform.cpp,
ihipOccupancyMaxActiveBlocksPerMultiprocessor), with each era's behaviour as a profile in
tables/hip_profiles.toml. HIP reads only the metadata note: .vgpr_count, .sgpr_count,
.group_segment_fixed_size, .wavefront_size and .workgroup_processor_mode. It never reads the
descriptor, never adds .agpr_count, rounds with a bit mask, and pools a CU's waves.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import UnknownTargetError
from ..tabledata import load_table
from ..targets import MAX_WORKGROUP_SIZE, Target
from .record import Occupancy, build, smallest
from .usage import KernelUsage

INT_MAX = 2**31 - 1


def align_up_bitmask(value: int, alignment: int) -> int:
    """amd::alignUp: ``(v + a - 1) & ~(a - 1)``, exact only for powers of two (24 is not)."""
    return (value + alignment - 1) & ~(alignment - 1)


def max_waves_per_simd(target: Target) -> int:
    """HIP's MaxWavesPerSimd (the targets table's hip_max_waves_per_simd)."""
    return target.hip_max_waves_per_simd


@dataclass(frozen=True, slots=True, eq=False)
class HipProfile:
    name: str
    summary: str
    vgpr_table: dict
    sgpr_granule: str
    sgpr_trap_reserve: int
    wgp_parse: str
    wave_size: str
    zero_vgpr_waves: str
    pr9571: bool
    source: str

    def vgpr_file(self, target: Target) -> tuple[int, int] | None:
        """[VGPRs per SIMD, granule] in HIP's units (wave32 on gfx10+), None if unknown."""
        value = self.vgpr_table.get(target.name, self.vgpr_table["base"])
        if value == "targets":
            wave = target.default_wave
            return target.vgprs[wave], target.vgpr_alloc_granule[wave]
        if value == "unknown":
            return None
        return int(value[0]), int(value[1])

    def parses_wgp(self, metadata_value) -> bool:
        # comgr turns the note's value into text; LLVM writes the integer 1, i.e. "1".
        if metadata_value is None:
            text = ""
        elif isinstance(metadata_value, bool):   # checked first: True == 1 in Python
            text = "true" if metadata_value else "false"
        else:
            text = str(metadata_value)
        return text == "true" or (self.wgp_parse == "true-or-1" and text == "1")


@functools.lru_cache(maxsize=None)
def profiles() -> dict[str, HipProfile]:
    table = load_table("hip_profiles.toml")
    tables = table["vgpr_tables"]
    out = {}
    for name, row in table["profiles"].items():
        vgpr = dict(tables[row["vgpr_table"]])
        out[name] = HipProfile(name, row["summary"], vgpr, row["sgpr_granule"], int(row["sgpr_trap_reserve"]),
                               row["wgp_parse"], row["wave_size"], row["zero_vgpr_waves"],
                               bool(row["pr9571"]), row["source"])
    return out


def default_profile_name() -> str:
    return load_table("hip_profiles.toml")["default"]


@functools.lru_cache(maxsize=None)
def get_profile(name: str | None) -> HipProfile:
    name = name or default_profile_name()
    try:
        return profiles()[name]
    except KeyError:
        raise UnknownTargetError(f"unknown HIP profile {name!r} (known: {', '.join(profiles())})") from None


@dataclass(slots=True)
class _Budget:
    """The intermediate values of the HIP computation for one kernel (block size aside)."""
    wave: int
    max_waves: int
    vgpr_waves: int
    sgpr_waves: int | None
    simds: int
    wgp: bool
    lds_bytes: int          # the device's group segment (localMemSize_)
    vgpr_file: tuple[int, int]   # as the profile's table gives it (wave32 units on gfx10+)
    vgpr_granule: int       # after halving for wave64 on gfx10+
    sgpr_cost: int | None


@functools.lru_cache(maxsize=4096)   # depends on the kernel and runtime, not on the launch shape
def _budget(u: KernelUsage, profile: HipProfile, lds_bytes: int | None):
    t = u.target
    file = profile.vgpr_file(t)
    if file is None:
        return None
    max_waves = max_waves_per_simd(t)
    # Until early 2025 postLoad overwrote the metadata wave size with the device's (32 on RDNA).
    wave = u.wave if profile.wave_size == "metadata" else t.default_wave
    vmax, gran = file
    if wave == 64 and 32 in t.wave_sizes:     # the file is counted in wave32 units there
        vmax, gran = vmax >> 1, gran >> 1
    vgpr_waves = vmax // align_up_bitmask(u.vgprs, gran) if u.vgprs > 0 else max_waves
    sgpr_waves, cost = None, None
    if u.sgprs > 0 and t.sgprs_per_simd:
        granule = 16 if profile.sgpr_granule == "16" else t.sgpr_alloc_granule
        cost = align_up_bitmask(u.sgprs, granule) + profile.sgpr_trap_reserve
        sgpr_waves = t.sgprs_per_simd // cost
    wgp = t.wgp and profile.parses_wgp(u.wgp_metadata)
    simds = t.simds(wgp)
    return _Budget(wave, max_waves, vgpr_waves, sgpr_waves, simds, wgp,
                   t.lds_per_cu if lds_bytes is None else lds_bytes, file, gran, cost)


def hip_occupancy(u: KernelUsage, block_size: int, dynamic_lds: int = 0, *, profile: str | None = None,
                  lds_bytes: int | None = None) -> Occupancy:
    """Blocks per CU as the named HIP runtime answers (default: the newest known behaviour)."""
    p = get_profile(profile)
    t = u.target
    b = _budget(u, p, lds_bytes)
    common = dict(model="hip", profile=p.name, processor=t.name, block_size=block_size, dynamic_lds=dynamic_lds)
    warnings = []
    if b is None:
        return build(**common, limits={}, blocks=None, waves_per_block=None, simds=t.simds_per_cu,
                     max_waves_per_simd=max_waves_per_simd(t), per_wgp=False, allocated={},
                     error="unknown-runtime-values",
                     warnings=[f"the VGPR values HIP profile {p.name} used for {t.name} are not known"])
    waves_per_block = -(-block_size // b.wave) if block_size > 0 else None
    details = {"MaxWavesPerSimd": b.max_waves, "wavefrontSize": b.wave, "vgprsPerSimd": b.vgpr_file[0],
               "vgprAllocGranularity": b.vgpr_file[1], "VgprWaves": b.vgpr_waves, "SgprWaves": b.sgpr_waves,
               "simdPerCU": b.simds, "isWGPMode": b.wgp, "localMemSize": b.lds_bytes}
    allocated = {"vgprs_per_wave": align_up_bitmask(u.vgprs, b.vgpr_granule),
                 "sgprs_per_wave": b.sgpr_cost, "lds_per_block": u.lds + dynamic_lds}
    shape = dict(waves_per_block=waves_per_block, simds=b.simds, max_waves_per_simd=b.max_waves,
                 per_wgp=b.wgp, allocated=allocated, details=details)

    if u.wave != b.wave:
        warnings.append(f"this runtime takes the wave size from the device ({b.wave}), not the "
                        f"kernel's .wavefront_size {u.wave}")
    if t.wgp and u.wgp_metadata not in (None, 0, False) and not b.wgp:
        warnings.append("this runtime reads .workgroup_processor_mode as off (it accepted only "
                        "\"true\", and LLVM writes 1), so it counts per CU, not per WGP")
    if p.pr9571 and t.major == load_table("hip_profiles.toml")["pr9571_isa_major"] and b.wgp and u.lds + dynamic_lds:
        warnings.append("rocm-systems PR #9571 (Jul 2026) changed how this runtime counts LDS for gfx11 "
                        "WGP-mode kernels; its formula is not known here, so the LDS limit follows the "
                        "earlier rule")
    if p.sgpr_trap_reserve and t.sgprs_per_simd and u.sgprs:
        details["trapReserveSgprs"] = p.sgpr_trap_reserve
    if u.agprs:
        details["agpr_count_ignored"] = u.agprs

    if block_size <= 0:
        return build(**common, limits={}, blocks=None, error="hipErrorInvalidValue", warnings=warnings, **shape)
    if block_size > MAX_WORKGROUP_SIZE:
        return build(**common, limits={"block_size": 0}, blocks=0, warnings=warnings, **shape)
    if b.vgpr_waves == 0:
        error = "hipErrorUnknown" if p.zero_vgpr_waves == "hipErrorUnknown" else "division-by-zero"
        warnings.append(f"{u.vgprs} VGPRs leave no room for one wave of {b.wave} lanes in "
                        f"{b.vgpr_file[0]} registers; " + ("HIP returns hipErrorUnknown and leaves the "
                        "output unchanged" if error == "hipErrorUnknown" else
                        "this runtime divides by zero computing the grid (SIGFPE)"))
        return build(**common, limits={"vgpr": 0}, blocks=None, error=error, warnings=warnings, **shape)

    lds = u.lds + dynamic_lds
    limits = _limits(b, block_size, lds)
    details["aluThreads"] = b.simds * b.wave * min(b.max_waves, b.vgpr_waves,
                                                    b.sgpr_waves if b.sgpr_waves is not None else INT_MAX)
    if lds > t.lds_per_workgroup:
        warnings.append(f"{lds} B of LDS exceed the {t.lds_per_workgroup} B one workgroup may use")
    return build(**common, limits=limits, blocks=smallest(limits), warnings=warnings, **shape)


def _limits(b: _Budget, block_size: int, lds: int) -> dict[str, int | None]:
    """Workgroups per CU each resource alone allows (valid block size, at least one wave)."""
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
    b = _budget(u, get_profile(None), None)
    if b is None or b.vgpr_waves == 0 or not 0 < block_size <= MAX_WORKGROUP_SIZE:
        return None
    return _limits(b, block_size, u.lds + dynamic_lds)


def max_potential_block_size(u: KernelUsage, dynamic_lds: int = 0, block_size_limit: int = 0, *,
                             compute_units: int, runtime_wgp: bool | None = None,
                             profile: str | None = None, lds_bytes: int | None = None) -> dict:
    """hipModuleOccupancyMaxPotentialBlockSize (the C API): no search (hip-occupancy.md §6).

    ``compute_units`` is the device's CU count as HIP reports it (already halved in a WGP-mode
    runtime on RDNA); ``runtime_wgp`` says whether the runtime runs in WGP mode (RDNA default).
    """
    p = get_profile(profile)
    b = _budget(u, p, lds_bytes)
    if b is None:
        return {"error": "unknown-runtime-values"}
    if b.vgpr_waves == 0:
        return {"error": "hipErrorUnknown" if p.zero_vgpr_waves == "hipErrorUnknown" else "division-by-zero"}
    limit = block_size_limit if 0 < block_size_limit <= MAX_WORKGROUP_SIZE else MAX_WORKGROUP_SIZE
    sgpr_waves = b.sgpr_waves if b.sgpr_waves is not None else INT_MAX
    alu_threads = b.simds * min(b.max_waves, b.vgpr_waves, sgpr_waves) * b.wave
    lds = u.lds + dynamic_lds
    lds_wgs = b.lds_bytes // lds if lds else INT_MAX
    best = min(alu_threads, align_up_bitmask(limit, b.wave))
    cus = compute_units
    runtime_wgp = u.target.wgp if runtime_wgp is None else runtime_wgp
    if b.wgp != runtime_wgp:    # since 2024-04-02 (fcfe2ec88)
        cus = cus // 2 if b.wgp else cus * 2
    return {"block_size": best, "grid_size": cus * min(alu_threads // best, lds_wgs), "error": None}


def max_potential_block_size_search(u: KernelUsage, smem_for_block=lambda block: 0, block_size_limit: int = 0,
                                    *, compute_units: int, max_threads_per_cu: int,
                                    profile: str | None = None, lds_bytes: int | None = None) -> dict:
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
