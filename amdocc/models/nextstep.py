"""The next step: what to shed for one more workgroup (or wave), in the spirit of llvm-calc-occupancy.

Occupancy never rises when a resource grows, so for each binding resource the smallest cut that
gains is found by bisection over the model itself. When several resources bind together all of
them must shrink, and the combined step is checked. LDS is counted as static plus dynamic: the
caller may shed either.
"""
from __future__ import annotations

from . import compute
from .record import Occupancy
from .usage import KernelUsage

# Binding limiters that shrinking a kernel resource can relax, and the usage field to shrink.
SHEDDABLE = {"vgpr": "vgprs", "agpr": "vgprs", "sgpr": "sgprs", "lds": "lds"}


def _value(occ: Occupancy):
    return occ.blocks_per_cu if occ.block_size is not None else occ.waves_per_simd


def next_step(usage: KernelUsage, occ: Occupancy, **options) -> dict | None:
    """{"gain": new value, "unit": ..., "shed": {limiter: amount}}, or None when no kernel
    resource can help (a cap binds: wave slots, barriers, block size) or there is no answer."""
    current = _value(occ)
    if current is None or occ.error or not occ.limiters:
        return None
    if any(name not in SHEDDABLE for name in occ.limiters):
        return None
    if occ.model == "hip":
        options.setdefault("profile", occ.profile)
    # Fold dynamic LDS into the static size so one number can be bisected.
    base = usage.with_(lds=usage.lds + occ.dynamic_lds)

    def value_with(**changes):
        return _value(compute(base.with_(**changes), occ.model, occ.block_size, 0, **options)) or 0

    shed, changes = {}, {}
    binding = {SHEDDABLE[name] for name in occ.limiters}
    for limiter in occ.limiters:
        field = SHEDDABLE[limiter]
        if field in changes:
            continue
        have = getattr(base, field)
        # Each binding resource is bisected with the others out of the way (they must shrink too).
        others = {f: 0 for f in binding if f != field}
        if have == 0 or value_with(**others, **{field: 0}) <= current:
            return None                      # even none of it would not gain
        lo, hi = 0, have - 1                 # the largest amount that still gains lies in [lo, hi]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if value_with(**others, **{field: mid}) > current:
                lo = mid
            else:
                hi = mid - 1
        shed[limiter] = have - lo
        changes[field] = lo
    gain = value_with(**changes)
    if gain <= current:
        return None
    return {"gain": gain, "unit": "blocks_per_cu" if occ.block_size is not None else "waves_per_simd",
            "shed": shed}
