"""The occupancy result: one record that explains itself (after CUDA's cudaOccResult).

Every model fills ``limits`` with the number of workgroups each resource alone would allow
(None: that resource does not limit), and the record derives the rest: the binding limiter(s),
waves per SIMD and per CU, and the occupancy fraction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..frozen import FrozenDict, freeze
from ..targets import MAX_WORKGROUP_SIZE

if TYPE_CHECKING:
    from .usage import KernelUsage

    # A model's options as sorted (name, value) pairs: hashable, for the caches.
    Options = tuple[tuple[str, Any], ...]
    # How a record was asked, for amdocc.models.nextstep.next_step(): the usage, the model's options, and the device's
    # LDS bytes (None: the processor's).
    Query = tuple[KernelUsage, Options, int | None]

# Limiter names, in the order ties are broken: a hard cap that binds is the limiter even when a
# resource allows exactly as much, because shedding that resource would not gain a workgroup.
# Errors that mean the model was not asked (hip: its runtime does not run the processor, or the
# profile lacks a value), not that it answered no workgroup (see Occupancy.no_answer).
UNSUPPORTED_PROCESSOR, UNKNOWN_RUNTIME_VALUES = "unsupported-processor", "unknown-runtime-values"
NO_ANSWER_ERRORS = frozenset({UNSUPPORTED_PROCESSOR, UNKNOWN_RUNTIME_VALUES})

LIMITERS = ("block_size", "waves", "barriers", "workgroup_slots", "lds", "vgpr", "agpr", "sgpr")


class Occupancy(NamedTuple):
    """One occupancy answer, explained: how many workgroups fit, what limits them, and why.

    Immutable all the way down (a tuple whose dicts are read-only FrozenDicts: cheap to build, and
    safe to share from the cache; ``dict(occ.limits)`` is a copy to change). Every field has its
    own docstring (``help(amdocc.Occupancy)``); :meth:`as_dict` is the record ``amdocc occupancy
    --json`` prints, and :func:`amdocc.next_step` of the record its ``next_step``. Plain data: the
    record computes nothing, and carries how it was asked (``query``) as data.
    """

    model: str
    profile: str | None
    processor: str
    block_size: int | None
    dynamic_lds: int
    blocks_per_cu: int | None
    per_wgp: bool
    waves_per_block: int | None
    waves_per_simd: float | None
    waves_per_cu: int | None
    max_waves_per_cu: int | None
    occupancy_fraction: float | None
    limiter: str | None
    limiters: tuple[str, ...]
    limits: dict[str, int | None]
    allocated: dict[str, int | None]
    warnings: tuple[str, ...] = ()
    error: str | None = None
    details: dict[str, Any] = FrozenDict()  # read-only, as build() makes every record's
    launchable: bool = True
    built_for: str | None = None
    what_if: bool = False
    query: Query | None = None  # how it was asked (for amdocc.next_step()); must stay the last field

    @property
    def no_answer(self) -> bool:
        """True when the model gives no answer at all, as opposed to an answer of failure: the
        runtime a HIP profile reproduces does not run the processor, or the profile lacks a
        value (``error`` says which, and the last warning why). A gate leaves such a model
        out of its verdict; an error such as hipErrorUnknown is the runtime's answer, and counts."""
        return self.error in NO_ANSWER_ERRORS

    @property
    def unit(self) -> str:
        """What ``blocks_per_cu`` and ``waves_per_cu`` count per: "WGP" or "CU"."""
        return "WGP" if self.per_wgp else "CU"

    def as_dict(self) -> dict[str, Any]:
        """The record as ``amdocc occupancy --json`` prints it (without ``query``).
        ``blocks_per_cu``/``waves_per_cu`` keep their v1 names and count per WGP when ``unit`` is
        "WGP"; ``blocks_per_wgp``/``waves_per_wgp`` say so by name (null when the unit is the CU)."""
        out = self._asdict()
        del out["query"]
        out["unit"] = self.unit
        out["blocks_per_wgp"] = self.blocks_per_cu if self.per_wgp else None
        out["waves_per_wgp"] = self.waves_per_cu if self.per_wgp else None
        out["max_waves_per_wgp"] = self.max_waves_per_cu if self.per_wgp else None
        return out

    def __repr__(self) -> str:
        shown = zip(self._fields[:-1], self[:-1], strict=True)
        return f"Occupancy({', '.join(f'{name}={value!r}' for name, value in shown)})"


_FIELD_DOCS = {
    "model": '"hip", "llvm" or "hw": which model answered.',
    "profile": "The HIP runtime profile reproduced (hip), the LLVM flags in effect (llvm, e.g. "
    '"llvm22"), or the trap-reserve setting (hw).',
    "processor": 'The processor the kernel was evaluated on, e.g. "gfx942".',
    "block_size": "Workgroup size in threads; None for llvm over the flat workgroup range.",
    "dynamic_lds": "Dynamic LDS bytes per workgroup, on top of the kernel's static LDS.",
    "blocks_per_cu": "Workgroups resident per CU (per WGP when per_wgp); None when there is no "
    "single answer (llvm without a block size, or an error).",
    "per_wgp": "True when counts are per WGP (RDNA kernels in WGP mode), False when per CU.",
    "waves_per_block": "Waves in one workgroup (block size rounded up to whole waves).",
    "waves_per_simd": "Waves resident per SIMD, averaged over the CU's (or WGP's) SIMDs (may be "
    "fractional); for llvm, LLVM's own '; Occupancy:' number.",
    "waves_per_cu": "Waves resident per CU (per WGP when per_wgp).",
    "max_waves_per_cu": "Wave slots of the CU (or WGP) in this model: waves per SIMD at most, times SIMDs.",
    "occupancy_fraction": "waves_per_cu / max_waves_per_cu, 0..1 (what Nsight Compute calls theoretical occupancy).",
    "limiter": "The binding resource: vgpr, agpr, sgpr, lds, waves, workgroup_slots, block_size "
    "or barriers (the first of limiters); None when nothing binds or on error.",
    "limiters": "Every resource whose own limit equals the answer (ties bind together).",
    "limits": "Workgroups each resource alone would allow (waves per SIMD for llvm without a "
    "block size); None: that resource does not limit.",
    "allocated": "What is allocated after granularity: vgprs_per_wave, sgprs_per_wave (with any "
    "trap reserve), lds_per_block.",
    "warnings": "Things a reader must know (block above .max_flat_workgroup_size, LDS above the "
    "device, a runtime quirk reproduced).",
    "error": 'Set when the API would not answer (e.g. "hipErrorUnknown"); the counts are then None.',
    "details": "The model's intermediate values under its own names (HIP's VgprWaves, aluThreads, ...).",
    "launchable": "False when the block size cannot launch this kernel (above its "
    ".max_flat_workgroup_size or the processor's limit); every model warns the same way.",
    "built_for": "The code object's target id when the kernel was evaluated on another processor "
    "(a member of its generic family, or a what-if); None otherwise.",
    "what_if": "True when evaluated, as asked, on a processor its code object cannot run on.",
    "query": "How the answer was asked (the kernel's usage, model options, device LDS), for "
    "amdocc.next_step(); not part of as_dict().",
}
for _name, _doc in _FIELD_DOCS.items():
    getattr(Occupancy, _name).__doc__ = _doc
assert set(_FIELD_DOCS) == set(Occupancy._fields)


def with_query(occ: Occupancy, query: Query) -> Occupancy:
    """``occ`` carrying how it was asked (cheaper than ``_replace`` on the uncached path)."""
    return tuple.__new__(Occupancy, (*occ[:-1], query))


def smallest(limits: dict[str, int | None]) -> int | None:
    """The binding value among per-resource limits (None entries do not limit)."""
    bounded = [v for v in limits.values() if v is not None]
    return min(bounded) if bounded else None


def build(
    model: str,
    profile: str | None,
    processor: str,
    block_size: int | None,
    dynamic_lds: int,
    limits: dict[str, int | None],
    *,
    blocks: int | None,
    waves_per_block: int | None,
    simds: int,
    max_waves_per_simd: int,
    per_wgp: bool,
    allocated: dict[str, int | None],
    waves_per_simd: int | None = None,
    warnings: Iterable[str] = (),
    error: str | None = None,
    details: dict[str, Any] | None = None,
) -> Occupancy:
    """Finish a record. ``limits`` are in workgroups when ``blocks`` is known; a model that only
    knows waves per SIMD (LLVM without a block size) passes limits in waves and ``blocks=None``."""
    result = blocks if blocks is not None else waves_per_simd
    limiters = tuple(name for name in LIMITERS if limits.get(name) is not None and limits[name] == result)
    per_simd: float | None
    waves_cu: int | None
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
    return Occupancy(
        model=model,
        profile=profile,
        processor=processor,
        block_size=block_size,
        dynamic_lds=dynamic_lds,
        blocks_per_cu=blocks,
        per_wgp=per_wgp,
        waves_per_block=waves_per_block,
        waves_per_simd=per_simd,
        waves_per_cu=waves_cu,
        max_waves_per_cu=slots,
        occupancy_fraction=fraction,
        limiter=limiters[0] if limiters else None,
        limiters=limiters,
        limits=freeze(dict(limits)),
        allocated=freeze(dict(allocated)),
        warnings=tuple(warnings),
        error=error,
        details=freeze(dict(details or {})),
    )


def launch_check(u: KernelUsage, occ: Occupancy) -> Occupancy:
    """Mark a launch that cannot happen, the same way for every model: a block size the kernel
    or the processor does not allow, or more LDS (static + dynamic) than one workgroup may use.
    The record says ``launchable: false`` and carries one warning per reason. Models that know
    the limit answer 0 workgroups there; HIP's occupancy API may answer anyway, and then the
    warning says so."""
    problems = [text for text in (_block_problem(u, occ), _lds_problem(u, occ)) if text]
    if not problems:
        return occ
    return occ._replace(launchable=False, warnings=(*occ.warnings, *problems))


def block_fits(u: KernelUsage, block: int) -> bool:
    """Whether a workgroup of ``block`` threads may launch the kernel: at least one thread, at most
    its .max_flat_workgroup_size and the largest workgroup any processor runs. Every model and the
    launch check ask this one question."""
    return 1 <= block <= min(u.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)


def lds_fits(u: KernelUsage, lds: int) -> bool:
    """Whether ``lds`` bytes (static + dynamic) fit what one workgroup may use in the kernel's mode."""
    return lds <= u.target.max_lds_per_workgroup(u.wgp_mode)


def _block_problem(u: KernelUsage, occ: Occupancy) -> str | None:
    block = occ.block_size
    if block is None or block_fits(u, block):
        return None
    if block < 1:
        text = f"a block of {block} threads cannot launch"
    elif u.max_flat_workgroup_size is not None and block > u.max_flat_workgroup_size:
        text = (
            f"block size {block} exceeds the kernel's .max_flat_workgroup_size "
            f"{u.max_flat_workgroup_size}: a launch fails"
        )
    else:
        text = f"block size {block} exceeds the largest workgroup, {MAX_WORKGROUP_SIZE}: a launch fails"
    if occ.blocks_per_cu:
        text += "; HIP's occupancy API does not read .max_flat_workgroup_size and answers anyway"
    return text


def _lds_problem(u: KernelUsage, occ: Occupancy) -> str | None:
    lds = u.lds + occ.dynamic_lds
    if lds_fits(u, lds):
        return None
    limit = u.target.max_lds_per_workgroup(u.wgp_mode)
    text = f"{lds} B of LDS exceed the {limit} B one workgroup may use: a launch fails"
    if occ.blocks_per_cu and occ.model == "hip":
        text += "; HIP's occupancy API compares LDS with the device's, not a workgroup's, and answers anyway"
    return text
