"""The occupancy result: one record that explains itself (after CUDA's cudaOccResult).

Every model fills ``limits`` with the number of workgroups each resource alone would allow
(None: that resource does not limit), and the record derives the rest: the binding limiter(s),
waves per SIMD and per CU, and the occupancy fraction.
"""
from __future__ import annotations

from typing import Any, NamedTuple

# Limiter names, in the order ties are broken: a hard cap that binds is the limiter even when a
# resource allows exactly as much, because shedding that resource would not gain a workgroup.
LIMITERS = ("block_size", "waves", "barriers", "workgroup_slots", "lds", "vgpr", "agpr", "sgpr")


class Occupancy(NamedTuple):
    """One answer. Immutable (a tuple: cheap to build, and safe to share from the cache)."""

    model: str                          # "hip", "llvm" or "hw"
    profile: str | None                 # HIP runtime profile, or the LLVM flags in effect
    processor: str
    block_size: int | None
    dynamic_lds: int
    blocks_per_cu: int | None           # workgroups resident per CU (per WGP when per_wgp)
    per_wgp: bool
    waves_per_block: int | None
    waves_per_simd: float | None        # average over the SIMDs (may be fractional); LLVM: its number
    waves_per_cu: int | None            # per WGP when per_wgp
    max_waves_per_cu: int | None        # wave slots of the CU (or WGP) in this model
    occupancy_fraction: float | None
    limiter: str | None
    limiters: tuple[str, ...]           # every resource whose own limit equals the result
    limits: dict[str, int | None]       # workgroups each resource alone allows
    allocated: dict[str, int | None]    # after granularity: VGPRs and SGPRs per wave, LDS per block
    warnings: tuple[str, ...] = ()
    error: str | None = None            # e.g. "hipErrorUnknown": the API would not answer
    details: dict[str, Any] = {}        # the model's intermediate values
    launchable: bool = True             # False: the block size cannot launch this kernel
    built_for: str | None = None        # the code object's target id, when evaluated on a named processor
    what_if: bool = False               # evaluated where the code object cannot run, as asked

    @property
    def unit(self) -> str:
        """What ``blocks_per_cu`` and ``waves_per_cu`` count per: "WGP" or "CU"."""
        return "WGP" if self.per_wgp else "CU"

    def as_dict(self) -> dict:
        """The record as JSON fields. ``blocks_per_cu``/``waves_per_cu`` keep their v1 names and
        count per WGP when ``unit`` is "WGP"; ``blocks_per_wgp``/``waves_per_wgp`` say so by name
        (null when the unit is the CU)."""
        out = self._asdict()
        out["unit"] = self.unit
        out["blocks_per_wgp"] = self.blocks_per_cu if self.per_wgp else None
        out["waves_per_wgp"] = self.waves_per_cu if self.per_wgp else None
        out["max_waves_per_wgp"] = self.max_waves_per_cu if self.per_wgp else None
        return out


def smallest(limits: dict[str, int | None]) -> int | None:
    """The binding value among per-resource limits (None entries do not limit)."""
    bounded = [v for v in limits.values() if v is not None]
    return min(bounded) if bounded else None


def build(model: str, profile: str | None, processor: str, block_size: int | None, dynamic_lds: int,
          limits: dict[str, int | None], *, blocks: int | None, waves_per_block: int | None, simds: int,
          max_waves_per_simd: int, per_wgp: bool, allocated: dict, waves_per_simd=None,
          warnings=(), error=None, details=None) -> Occupancy:
    """Finish a record. ``limits`` are in workgroups when ``blocks`` is known; a model that only
    knows waves per SIMD (LLVM without a block size) passes limits in waves and ``blocks=None``."""
    result = blocks if blocks is not None else waves_per_simd
    limiters = tuple(name for name in LIMITERS if limits.get(name) is not None and limits[name] == result)
    if blocks == 0:
        # No workgroup fits, so no wave runs, whatever a per-wave limit alone would allow.
        per_simd = waves_cu = 0
    elif waves_per_simd is not None:
        per_simd = waves_per_simd
        waves_cu = per_simd * simds
    elif blocks is not None and waves_per_block:
        waves_cu = blocks * waves_per_block
        per_simd = waves_cu / simds
        per_simd = int(per_simd) if per_simd == int(per_simd) else round(per_simd, 3)
    else:
        waves_cu = per_simd = None
    slots = max_waves_per_simd * simds
    fraction = round(waves_cu / slots, 4) if waves_cu is not None and slots else None
    return Occupancy(model=model, profile=profile, processor=processor, block_size=block_size,
                     dynamic_lds=dynamic_lds, blocks_per_cu=blocks, per_wgp=per_wgp,
                     waves_per_block=waves_per_block, waves_per_simd=per_simd, waves_per_cu=waves_cu,
                     max_waves_per_cu=slots, occupancy_fraction=fraction,
                     limiter=limiters[0] if limiters else None, limiters=limiters, limits=dict(limits),
                     allocated=dict(allocated), warnings=tuple(warnings), error=error,
                     details=dict(details or {}))


def launch_check(u, occ: Occupancy) -> Occupancy:
    """Mark a block size that cannot launch the kernel, the same way for every model: the
    record says ``launchable: false`` and carries one warning. Models that know the kernel's
    limit answer 0 workgroups there; HIP's occupancy API does not read it and answers anyway."""
    from ..targets import MAX_WORKGROUP_SIZE

    block = occ.block_size
    if block is None:
        return occ
    limit = min(u.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)
    if 1 <= block <= limit:
        return occ
    if block < 1:
        text = f"a block of {block} threads cannot launch"
    elif u.max_flat_workgroup_size is not None and block > u.max_flat_workgroup_size:
        text = (f"block size {block} exceeds the kernel's .max_flat_workgroup_size "
                f"{u.max_flat_workgroup_size}: a launch fails")
    else:
        text = f"block size {block} exceeds the largest workgroup, {MAX_WORKGROUP_SIZE}: a launch fails"
    if occ.blocks_per_cu:
        text += "; HIP's occupancy API does not read .max_flat_workgroup_size and answers anyway"
    return occ._replace(launchable=False, warnings=occ.warnings + (text,))
