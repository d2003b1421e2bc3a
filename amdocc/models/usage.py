"""What the occupancy models read about a kernel: one small immutable record.

A :class:`KernelUsage` comes from a parsed kernel (``from_kernel``) or from numbers a user types
(``manual``). It keeps the metadata view (what HIP and LLVM read) and the descriptor view (what
the hardware allocates) side by side; each model picks the one it is about.
"""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..caches import Memo
from ..codeobject.producer import Producer
from ..errors import UsageError
from ..targets import Target
from .llvm_rules import rules_for_producer

if TYPE_CHECKING:
    from ..codeobject.model import Kernel


@dataclass(frozen=True, slots=True)
class KernelUsage:
    target: Target
    wave: int  # wavefront size the kernel runs with
    vgprs: int  # .vgpr_count: unified total on gfx90a/gfx94x/gfx950
    sgprs: int  # .sgpr_count (VCC/flat-scratch/xnack extras included)
    lds: int  # static LDS bytes (.group_segment_fixed_size)
    wgp_mode: bool  # the descriptor's WGP_MODE bit (False where there are no WGPs)
    # .workgroup_processor_mode as HIP's string parse sees it (None when absent): comgr renders the
    # integer 1 as "1" and a boolean as "true", and runtimes up to 6.4 accept only "true". Text, so
    # usages that differ only there never compare (or cache) equal: True == 1 in Python.
    wgp_metadata: str | None = None
    agprs: int | None = None  # reported beside the total, never added to it
    max_flat_workgroup_size: int | None = None
    vgprs_allocated: int | None = None  # descriptor next_free_vgpr
    sgprs_allocated: int | None = None  # descriptor next_free_sgpr (gfx6-9)
    scratch: int = 0
    tg_split: bool = False
    name: str = ""
    producer: Producer | None = None  # the compiler its code object names (.comment), for the llvm model
    from_file: bool = False  # read from a code object (False: typed-in numbers)
    dynamic_vgpr: bool = False  # the descriptor enables dynamic VGPR allocation (gfx12)
    # Where the code object does not record its CU/WGP mode (targets.toml mode_recorded, by
    # compiler): how wgp_mode was chosen instead, said in every answer (None: read from the object).
    mode_assumed: str | None = None

    def with_(self, **changes: Any) -> KernelUsage:
        return replace(self, **changes)


_USAGES: Memo[tuple[Any, ...], KernelUsage] = Memo(f"{__name__}._USAGES", 1 << 14)


def from_kernel(kernel: Kernel, target: Target | None = None, mode: str | None = None) -> KernelUsage:
    """The usage of a parsed kernel; ``target`` overrides its processor (e.g. generic code on a
    concrete device). ``mode`` ("wgp" or "cu") chooses the CU/WGP mode where the code object does
    not record it (an error where it does). Cached on the kernel, since repeated queries are the
    common case."""
    t = target or kernel.target
    # By content, never on the kernel: what the reader resolved it from (with what else a usage
    # reads of it), the processor asked about and the mode. A kernel without inputs is not shared.
    key = None
    if kernel.inputs is not None:
        key = (kernel.inputs, kernel.name, kernel.producer, kernel.target_id, kernel.target, t, mode)
        cached = _USAGES.get(key)
        if cached is not None:
            return cached
    r = kernel.resources
    if t is None:
        raise UsageError(
            f"kernel {kernel.name}: its processor {kernel.target_id.processor} is not "
            "in tables/targets.toml; pass target= to choose one"
        )
    wave, vgprs, sgprs, lds = r.wavefront_size, r.vgprs, r.sgprs, r.lds
    if wave is None or vgprs is None or sgprs is None or lds is None:
        missing = [
            n
            for n, v in (("wavefront size", wave), ("VGPR count", vgprs), ("SGPR count", sgprs), ("LDS size", lds))
            if v is None
        ]
        raise UsageError(f"kernel {kernel.name}: no {', '.join(missing)} in its metadata or descriptor")
    fields = kernel.descriptor.fields if kernel.descriptor is not None else {}
    wgp_mode, assumed = _mode(kernel, t, bool(r.wgp_mode), mode)
    usage = KernelUsage(
        target=t,
        wave=wave,
        vgprs=vgprs,
        sgprs=sgprs,
        lds=lds,
        wgp_mode=wgp_mode,
        wgp_metadata=metadata_text(kernel.meta("workgroup_processor_mode")),
        agprs=r.agprs,
        max_flat_workgroup_size=r.max_flat_workgroup_size,
        vgprs_allocated=r.vgprs_allocated,
        sgprs_allocated=r.sgprs_allocated,
        scratch=r.scratch or 0,
        tg_split=bool(fields.get("tg_split")),
        name=kernel.name,
        producer=kernel.producer,
        from_file=True,
        dynamic_vgpr=bool(fields.get("enable_dynamic_vgpr")),
        mode_assumed=assumed,
    )
    if key is not None:
        _USAGES.put(key, usage)
    return usage


MODES = ("wgp", "cu")


def _mode(kernel: Kernel, t: Target, recorded_wgp: bool, mode: str | None) -> tuple[bool, str | None]:
    """(WGP mode?, how it was assumed or None) for a kernel on ``t``. Where the compiler that built
    it records the mode (targets.toml mode_recorded, as that compiler's rule set sees the
    processor), the descriptor's WGP_MODE bit says it; elsewhere that bit does not mean what it
    means on gfx10-12 and is not read: the processor's default mode is assumed, or ``mode``."""
    if mode is not None and mode not in MODES:
        raise UsageError(f"mode {mode!r} is not a CU/WGP mode (choose from {', '.join(MODES)})")
    if mode_recorded(kernel.producer, t):
        if mode is not None and not t.wgp:
            raise UsageError(f"kernel {kernel.name}: {t.name} has no WGP mode, so there is no CU/WGP mode to choose")
        if mode is not None:
            raise UsageError(
                f"kernel {kernel.name}: its code object records its mode ({'WGP' if recorded_wgp and t.wgp else 'CU'}) "
                f"on {t.name}; a mode is chosen only where the code object does not record it"
            )
        return recorded_wgp and t.wgp, None
    if mode == "wgp" and not t.wgp:
        raise UsageError(f"kernel {kernel.name}: {t.name} has no WGP mode (CU mode is the only one modelled)")
    default = "wgp" if t.wgp else "cu"
    chosen = mode or default
    label = {"wgp": "WGP", "cu": "CU"}[chosen]
    by = "as chosen by the caller" if mode else f"assumed: {t.name}'s default"
    why = (
        f"the code object does not record CU or WGP mode on {t.name} (its compiler writes the same mode "
        f"fields for both builds); {label} mode {by}"
    )
    if not t.wgp:
        why += ", the only mode amdocc models there"
    return chosen == "wgp", why


def mode_recorded(producer: Producer | None, t: Target) -> bool:
    """Whether a code object from ``producer`` records its CU/WGP mode on ``t`` (targets.toml
    mode_recorded, as that compiler's rule set sees the processor)."""
    return bool(rules_for_producer(producer, True, t).rules.target_view(t).mode_recorded)


def metadata_text(value: object) -> str | None:
    """A metadata value as comgr renders it for HIP's string parse: True -> "true", 1 -> "1" (a
    boolean and an integer stay distinct); a map or list (a malformed note) becomes its type name,
    so a usage stays hashable and nothing walks a deep structure."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return f"<{type(value).__name__}>"


def manual(
    target: Target,
    *,
    vgprs: int = 0,
    agprs: int | None = None,
    arch_vgprs: int | None = None,
    sgprs: int = 0,
    lds: int = 0,
    wave: int | None = None,
    wgp: bool | None = None,
    max_flat_workgroup_size: int | None = None,
    scratch: int = 0,
    name: str = "manual",
) -> KernelUsage:
    """Usage from numbers that mean what the metadata note means (docs/cli.md, manual mode).

    ``vgprs`` is ``.vgpr_count`` (on unified targets AGPRs already included). ``arch_vgprs`` with
    ``agprs`` instead forms that total by the target's rule, as from rocprofv3's separate counts.
    """
    if arch_vgprs is not None:
        if vgprs:
            raise UsageError(
                "give either {vgprs} (the metadata total) or {arch_vgprs} with {agprs}, not both",
                params=("vgprs", "arch_vgprs", "agprs"),
            )
        vgprs = target.total_vgprs(arch_vgprs, agprs or 0)
    for label, value in (("VGPRs", vgprs), ("SGPRs", sgprs), ("LDS", lds), ("AGPRs", agprs)):
        if value is not None and value < 0:
            raise UsageError(f"{label} cannot be negative")
    if agprs and not target.has_agprs:
        raise UsageError(f"{target.name} has no AGPRs")
    wave = wave or target.default_wave
    if wave not in target.wave_sizes:
        raise UsageError(f"{target.name} does not run wave{wave} (it runs {target.wave_sizes})")
    if wgp and not target.wgp:
        raise UsageError(f"{target.name} has no WGP mode")
    wgp_mode = target.wgp if wgp is None else wgp  # compilers default to WGP mode where it exists
    return KernelUsage(
        target=target,
        wave=wave,
        vgprs=vgprs,
        sgprs=sgprs,
        lds=lds,
        wgp_mode=wgp_mode,
        wgp_metadata=("1" if wgp_mode else "0") if target.wgp else None,
        agprs=agprs,
        max_flat_workgroup_size=max_flat_workgroup_size,
        scratch=scratch,
        name=name,
    )


# manual()'s keyword parameters and their defaults, read from its signature (which a wrapper
# such as mutmut's trampoline keeps; __kwdefaults__ it does not).
_MANUAL_DEFAULTS = {
    name: p.default for name, p in inspect.signature(manual).parameters.items() if p.kind is p.KEYWORD_ONLY
}
MANUAL_KEYS = tuple(_MANUAL_DEFAULTS)  # the keys a dict of manual resources may use
# The types each key takes: counts are ints, optional where manual() defaults them to None.
_MANUAL_TYPES: dict[str, tuple[type, ...]] = {
    key: (int, *((type(None),) if default is None else ())) for key, default in _MANUAL_DEFAULTS.items()
}
_MANUAL_TYPES.update(wgp=(bool, type(None)), name=(str,))


def manual_from_dict(target: Target, resources: dict[str, Any]) -> KernelUsage:
    """:func:`manual` from a dict, as ``amdocc.occupancy({"vgprs": 128, ...}, target=...)`` takes
    it: a misspelled key or a value of the wrong type is an error naming the valid keys."""
    unknown = [key for key in resources if key not in MANUAL_KEYS]
    if unknown:
        near = {m for key in unknown for m in difflib.get_close_matches(str(key), MANUAL_KEYS, n=1)}
        hint = f" (did you mean {', '.join(sorted(near))}?)" if near else ""
        raise UsageError(
            f"unknown manual resource key {', '.join(map(repr, unknown))}{hint}; valid keys: {', '.join(MANUAL_KEYS)}"
        )
    for key, value in resources.items():
        allowed = _MANUAL_TYPES.get(key, (int, type(None)))
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise UsageError(
                f"manual resource {key!r} must be "
                f"{' or '.join('None' if t is type(None) else t.__name__ for t in allowed)}, "
                f"not {value!r}"
            )
    return manual(target, **resources)
