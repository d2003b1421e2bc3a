"""The next step: what to shed for one more workgroup (or wave), in the spirit of llvm-calc-occupancy.

For each binding resource the largest amount that still gains is searched over the model
itself, with the other binding resources relaxed, so that ties (say LDS and VGPRs both allowing
4) are answered too: all of them must shrink, and the combined step is checked. Occupancy never
rises when a resource grows, so the search is a bisection — except for VGPRs under HIP with a
VGPR granule that is not a power of two (24 or 12 on gfx11/gfx12): HIP's bit-mask round-up is
not monotone there (docs/hip-occupancy.md §4; 88 VGPRs round to 104 but 96 to 96), so the search walks
down one register at a time. LDS is counted as static plus dynamic: the caller may shed either.
Amounts are in what the model reads: the hw model's VGPRs and SGPRs are the descriptor's
allocation when the kernel has one.

A hip step is HIP's API arithmetic, which the hardware need not share (docs/hip-occupancy.md §4:
the bit-mask round-up; LDS not rounded to its granule; LDS counted per CU in a WGP). So
:func:`hardware_view` asks the hw model what the same shed gains there, on the counts as a rebuilt
kernel would have them (the descriptor's padding, which follows the occupancy the kernel had,
set aside): when the hardware gains nothing, the step rests on HIP's API alone and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..caches import cached
from ..errors import AmdoccError, UsageError
from .dispatch import cached_occupancy, compute
from .record import Occupancy
from .usage import KernelUsage

if TYPE_CHECKING:
    from .record import Options

# Binding limiters that shrinking a kernel resource can relax, and the usage field to shrink.
SHEDDABLE = {"vgpr": "vgprs", "agpr": "vgprs", "sgpr": "sgprs", "lds": "lds"}
# What the hw model reads instead, when the descriptor gives it.
ALLOCATED = {"vgprs": "vgprs_allocated", "sgprs": "sgprs_allocated"}


def _value(occ: Occupancy) -> float | None:
    return occ.blocks_per_cu if occ.block_size is not None else occ.waves_per_simd


def _field(usage: KernelUsage, model: str, limiter: str) -> str:
    field = SHEDDABLE[limiter]
    if model == "hw" and field in ALLOCATED and getattr(usage, ALLOCATED[field]) is not None:
        return ALLOCATED[field]
    return field


def _walk_stride(occ: Occupancy, field: str) -> int | None:
    """None when the answer never rises as this resource grows (bisection is exact); otherwise
    the stride of a downward walk. HIP's ``(v + g - 1) & ~(g - 1)`` clears every bit below the
    granule's lowest set bit, so its answer is constant on runs of that many registers; half
    of it also covers the granule halved for wave64 on gfx10+."""
    granule: int | None = occ.details.get("vgprAllocGranularity") if occ.model == "hip" and field == "vgprs" else None
    if not granule or granule & (granule - 1) == 0:
        return None
    return max((granule & -granule) >> 1, 1)


def _largest_by_walk(gains: Callable[[int], bool], have: int, stride: int, floor: int) -> int:
    """The largest amount below ``have`` that gains, checking the top of each constant run."""
    amount = have - 1
    while amount > floor and not gains(amount):
        amount = max((amount - 1) // stride * stride, floor)  # the top of the run below
    return amount  # the floor gains: the caller checked it


def search_next_step(usage: KernelUsage, occ: Occupancy, **options: Any) -> dict[str, Any] | None:
    """The search behind :func:`next_step`, uncached, for a record of ``usage`` under the model's
    ``options`` (as :func:`amdocc.models.compute` takes them): {"gain": new value, "unit": ...,
    "shed": {limiter: amount}}, or None when no kernel resource can help (a cap binds: wave
    slots, barriers, block size) or there is no answer."""
    if not occ.limiters:  # nothing binds: an error, no single answer (llvm's range), or no limit at all
        return None
    current = _value(occ)
    assert current is not None  # a limiter equals the record's answer (see record.build)
    if any(name not in SHEDDABLE for name in occ.limiters):
        return None
    if occ.model == "hip":
        options.setdefault("profile", occ.profile)
    # Fold dynamic LDS into the static size so one number can be searched.
    base = usage.with_(lds=usage.lds + occ.dynamic_lds)
    fields = {limiter: _field(base, occ.model, limiter) for limiter in occ.limiters}
    relaxed = {field: 0 for field in fields.values()}

    def value_with(**changes: int) -> float:
        return _value(compute(base.with_(**changes), occ.model, occ.block_size, 0, **options)) or 0

    shed: dict[str, int] = {}
    changes: dict[str, int] = {}
    for limiter, field in fields.items():
        if field in changes:
            continue

        def gains(amount: int, field: str = field) -> bool:
            return value_with(**{**relaxed, field: amount}) > current

        have = getattr(base, field)
        # The least that can gain: none of it, or one register where HIP divides by zero at none
        # (runtimes that guard the VGPR division by the SGPR count, docs/hip-occupancy.md §2).
        floor = next((amount for amount in (0, 1) if amount < have and gains(amount)), None)
        if floor is None:
            return None  # even (almost) none of it would not gain
        stride = _walk_stride(occ, field)
        if stride:
            keep = _largest_by_walk(gains, have, stride, floor)
        else:
            lo, hi = floor, have - 1  # the largest amount that still gains lies in [lo, hi]
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if gains(mid):
                    lo = mid
                else:
                    hi = mid - 1
            keep = lo
        shed[limiter] = have - keep
        changes[field] = keep
    gain = value_with(**changes)
    if gain <= current:
        return None
    return {"gain": gain, "unit": "blocks_per_cu" if occ.block_size is not None else "waves_per_simd", "shed": shed}


def next_step(occ: Occupancy) -> dict[str, Any] | None:
    """What to shed for one more workgroup (or wave): the ``next_step`` of the JSON record.

    Args:
        occ: a record made by :func:`amdocc.occupancy` (it carries how it was asked, ``query``).

    Returns:
        ``{"gain": value after the cut, "unit": "blocks_per_cu" or "waves_per_simd",
        "shed": {limiter: amount}}`` (VGPRs/SGPRs per work-item, bytes of LDS: static and
        dynamic together), or None when no kernel resource can help (a cap such as wave
        slots or the block size binds) or there is no answer. A fresh dict each call.

    Raises:
        UsageError (an AmdoccError): the record does not say how it was asked (made by hand).

    Computed on first call by bisection over the same model, inputs and device (about
    0.2 ms), then cached by those inputs.
    """
    if occ.query is None:
        raise UsageError("this record does not say how it was asked; make it with amdocc.occupancy()")
    usage, opts, lds_bytes = occ.query
    step = _cached_next_step(usage, occ.model, occ.block_size, occ.dynamic_lds, lds_bytes, opts)
    return None if step is None else {**step, "shed": dict(step["shed"])}


@cached(maxsize=4096)
def _cached_next_step(
    usage: KernelUsage, model: str, block_size: int | None, dynamic_lds: int, lds_bytes: int | None, opts: Options
) -> dict[str, Any] | None:
    occ = cached_occupancy(usage, model, block_size, dynamic_lds, lds_bytes, opts)
    return search_next_step(usage, occ, lds_bytes=lds_bytes, **dict(opts))


def hardware_view(usage: KernelUsage, occ: Occupancy, step: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the hw model says of a hip ``step`` (as :func:`search_next_step` gives it) for the
    kernel ``usage`` at ``occ``'s launch, or None when there is nothing to compare (another
    model, no step, no block size, or a processor the hw model cannot describe):

    ``{"fits": workgroups (or waves) the hardware fits now, "unit": per "CU" or "WGP" as the
    hardware counts them (HIP may count otherwise), "fits_after": with the step's shed,
    "gains": whether that is more, "agrees": whether both are HIP's numbers (before the shed and
    the step's gain), "hip_only": the step gains in HIP's API and not on the hardware, "why":
    which of HIP's arithmetic it rests on (None when the hardware gains too), "next_step": the
    hw model's own step on the same counts, or None}``.

    Counts are the metadata's (.vgpr_count, .sgpr_count, static plus dynamic LDS), as a rebuilt
    kernel would be allocated them: the descriptor's padding follows the occupancy it was built
    for, so it is not carried over.
    """
    if occ.model != "hip" or step is None or occ.block_size is None:
        return None
    rebuilt = usage.with_(vgprs_allocated=None, sgprs_allocated=None, lds=usage.lds + occ.dynamic_lds)
    fields = {SHEDDABLE[limiter]: amount for limiter, amount in step["shed"].items()}
    shed = rebuilt.with_(**{field: max(getattr(rebuilt, field) - amount, 0) for field, amount in fields.items()})
    try:
        now = compute(rebuilt, "hw", occ.block_size, 0)
        after = compute(shed, "hw", occ.block_size, 0)
        own = search_next_step(rebuilt, now)
    except AmdoccError:  # the hw model lacks a fact for this processor: no second opinion
        return None
    fits, fits_after = _value(now), _value(after)
    if fits is None or fits_after is None:
        return None
    gains = fits_after > fits
    return {
        "fits": fits,
        "unit": now.unit,
        "fits_after": fits_after,
        "gains": gains,
        "agrees": (fits, fits_after) == (_value(occ), step["gain"]),
        "hip_only": not gains,
        "why": None if gains else _hip_arithmetic(occ, now, fields),
        "next_step": own,
    }


def _hip_arithmetic(occ: Occupancy, hardware: Occupancy, fields: dict[str, int]) -> str:
    """Which of HIP's API arithmetic a step the hardware does not share rests on, in words."""
    reasons = []
    granule = occ.details.get("vgprAllocGranularity")
    if "vgprs" in fields and granule and granule & (granule - 1):
        reasons.append(f"its bit-mask round-up of VGPRs to a granule of {granule}")
    hip_sgprs, hw_sgprs = occ.allocated.get("sgprs_per_wave"), hardware.allocated.get("sgprs_per_wave")
    if "sgprs" in fields and hip_sgprs is not None and hw_sgprs is not None and hip_sgprs < hw_sgprs:
        reasons.append(
            f"it counts {hip_sgprs} SGPRs per wave where the hardware allocates {hw_sgprs}, "
            "the trap handler's reserve included"
        )
    if occ.unit != hardware.unit:  # .workgroup_processor_mode as HIP parses it (docs/hip-occupancy.md §1)
        reasons.append(f"it counts per {occ.unit} where the kernel runs per {hardware.unit}")
    if "lds" in fields:
        current, hardware_fits = _value(occ), _value(hardware)
        if current is not None and hardware_fits is not None and hardware_fits > current:
            reasons.append(
                f"it counts {occ.details.get('localMemSize')} B of LDS per {occ.unit}, less than the hardware"
            )
        else:
            reasons.append("it does not round LDS to the hardware's allocation granule")
    return "; ".join(reasons) or "its own arithmetic"


def next_step_view(occ: Occupancy) -> dict[str, Any] | None:
    """:func:`hardware_view` of a record made by :func:`amdocc.occupancy` and its own next step
    (the JSON record's ``next_step_hardware``)."""
    if occ.query is None:
        raise UsageError("this record does not say how it was asked; make it with amdocc.occupancy()")
    usage, _, _ = occ.query
    return hardware_view(usage, occ, next_step(occ))
