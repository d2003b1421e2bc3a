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

    def as_dict(self) -> dict:
        return self._asdict()


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
    if waves_per_simd is not None:
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
