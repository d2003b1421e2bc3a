"""Occupancy models: pure functions of (usage, target, block size, dynamic LDS, options).

- ``hip``  what hipModuleOccupancyMaxActiveBlocksPerMultiprocessor returns (a named runtime era)
- ``llvm`` what LLVM prints as ``; Occupancy:``, under the rules of the LLVM that built the kernel
- ``hw``   the best physical estimate from what the descriptor allocates

:func:`occupancy` is the one entry point; answers are cached, since callers ask the same
question of the same kernel many times (every launch, every sweep cell).
"""
from __future__ import annotations

import functools

from ..errors import UsageError
from ..targets import Target, get_target
from .applicable import check as check_applicable
from .hip import hip_occupancy
from .hw import hw_occupancy
from .llvm import llvm_occupancy
from .llvm_rules import version_option
from .record import LIMITERS, Occupancy
from .usage import KernelUsage, from_kernel, manual

MODELS = ("hip", "llvm", "hw")
# Options each model accepts, with their defaults.
OPTIONS = {
    "hip": {"profile": None},
    "llvm": {"llvm_version": None},
    "hw": {"trap_reserve": True},
}

_DEFAULT_OPTIONS = {model: tuple(sorted(opts.items())) for model, opts in OPTIONS.items()}

__all__ = ["LIMITERS", "MODELS", "KernelUsage", "Occupancy", "from_kernel", "manual", "occupancy",
           "usage_of"]


def usage_of(kernel_or_resources, target=None, device=None) -> KernelUsage:
    """Turn a Kernel, a KernelUsage or a dict of manual numbers into a KernelUsage."""
    t = _resolve_target(target, device)
    if isinstance(kernel_or_resources, KernelUsage):
        return kernel_or_resources if t is None or t is kernel_or_resources.target \
            else kernel_or_resources.with_(target=t)
    if isinstance(kernel_or_resources, dict):
        if t is None:
            raise UsageError("manual resources need target= or device=")
        return manual(t, **kernel_or_resources)
    if hasattr(kernel_or_resources, "resources"):
        return from_kernel(kernel_or_resources, t)
    raise UsageError(f"cannot compute occupancy of a {type(kernel_or_resources).__name__}")


def _resolve_target(target, device) -> Target | None:
    if device is not None:
        from ..devices import Device, get_device
        dev = device if isinstance(device, Device) else get_device(device)
        if target is not None and _target(target) is not dev.target:
            raise UsageError(f"device {dev.name} is a {dev.target.name}, not {_target(target).name}")
        return dev.target
    return _target(target) if target is not None else None


def _target(target) -> Target:
    return target if isinstance(target, Target) else get_target(str(target))


def occupancy(kernel_or_resources, *, target=None, device=None, block_size: int | None = None,
              dynamic_lds: int = 0, model: str = "hip", **options) -> Occupancy:
    """How many workgroups of a kernel fit on a CU, and why.

    ``kernel_or_resources``: a parsed Kernel, a KernelUsage, or a dict of manual numbers
    (``vgprs``, ``agprs``, ``arch_vgprs``, ``sgprs``, ``lds``, ``wave``, ``wgp``,
    ``max_flat_workgroup_size``) meaning what the metadata note means. ``target`` overrides the
    processor; ``device`` names a product (its processor and, for HIP, its LDS). Options:
    hip ``profile``; llvm ``llvm_version`` (a version such as "22.1.8" or "24.0.0git", "main", or a
    rule set of tables/llvm_rules.toml; default: the compiler the code object names;
    ``lds_granule_rounding=True`` / ``sgpr_trap_reserve=True`` are spellings of the version that
    brought them); hw ``trap_reserve``. A dynamic-VGPR kernel, or a processor fact no public
    source pins that the model needs, is refused with a UsageError that gives the reason.
    """
    defaults = _DEFAULT_OPTIONS.get(model)
    if defaults is None:
        raise UsageError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    if options:
        if "hip_profile" in options:
            options["profile"] = options.pop("hip_profile")
        if model == "llvm":
            _version_aliases(options)
        unknown = set(options) - set(OPTIONS[model])
        if unknown:
            raise UsageError(f"model {model} takes no option {', '.join(sorted(unknown))} "
                             f"(it takes: {', '.join(OPTIONS[model]) or 'none'})")
        opts = tuple(sorted({**OPTIONS[model], **options}.items()))
    else:
        opts = defaults
    if block_size is None and model != "llvm":
        raise UsageError(f"the {model} model needs a block size")
    if dynamic_lds < 0:
        raise UsageError("dynamic LDS cannot be negative")
    if device is not None:
        from ..devices import Device, get_device
        device = device if isinstance(device, Device) else get_device(device)
    lds_bytes = device.lds if device is not None and model == "hip" else None
    if target is None and device is None and hasattr(kernel_or_resources, "memo"):
        usage = from_kernel(kernel_or_resources)      # memoised on the kernel
    else:
        usage = usage_of(kernel_or_resources, target, device)
    return _cached(usage, model, block_size, dynamic_lds, lds_bytes, opts)


def _version_aliases(options: dict) -> None:
    """Turn the llvm model's old switches into the version they are spellings of."""
    if "lds_granule_rounding" in options or "sgpr_trap_reserve" in options:
        options["llvm_version"] = version_option(options.get("llvm_version"),
                                                 options.pop("lds_granule_rounding", False),
                                                 options.pop("sgpr_trap_reserve", False))


@functools.lru_cache(maxsize=1 << 16)
def _cached(usage: KernelUsage, model: str, block_size, dynamic_lds: int, lds_bytes, opts) -> Occupancy:
    return compute(usage, model, block_size, dynamic_lds, lds_bytes=lds_bytes, **dict(opts))


def compute(usage: KernelUsage, model: str, block_size, dynamic_lds: int = 0, *, lds_bytes=None,
            **options) -> Occupancy:
    """The uncached computation (the models themselves are pure functions)."""
    check_applicable(usage, model)
    if model == "hip":
        return hip_occupancy(usage, block_size, dynamic_lds, profile=options.get("profile"), lds_bytes=lds_bytes)
    if model == "llvm":
        return llvm_occupancy(usage, block_size, dynamic_lds, llvm_version=options.get("llvm_version"))
    return hw_occupancy(usage, block_size, dynamic_lds, trap_reserve=options.get("trap_reserve", True))
