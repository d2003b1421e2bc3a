"""Occupancy models: pure functions of (usage, target, block size, dynamic LDS, options).

- ``hip``  what hipModuleOccupancyMaxActiveBlocksPerMultiprocessor returns (a named runtime era)
- ``llvm`` what LLVM prints as ``; Occupancy:``, under the rules of the LLVM that built the kernel
- ``hw``   the best physical estimate from what the descriptor allocates

:func:`occupancy` is the one entry point; answers are cached, since callers ask the same
question of the same kernel many times (every launch, every sweep cell).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..codeobject.target_id import TargetId
from ..errors import UsageError
from ..numbers import whole_number
from ..targets import Target
from .applicable import ModelUnavailable
from .compat import IncompatibleTarget, Place, device_id, place
from .dispatch import MODELS, OPTIONS, cached_occupancy, compute
from .hip_profiles import ProfileDoesNotRun, check_runs, get_profile
from .llvm_rules import version_option
from .nextstep import next_step
from .record import LIMITERS, Occupancy
from .usage import KernelUsage, from_kernel, manual, manual_from_dict

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..devices import Device
    from .record import Options

    # What the models are asked about: a parsed kernel, its usage, or numbers typed in.
    Subject = Kernel | KernelUsage | dict[str, Any]

_DEFAULT_OPTIONS = {model: tuple(sorted(opts.items())) for model, opts in OPTIONS.items()}

__all__ = [
    "LIMITERS",
    "MODELS",
    "IncompatibleTarget",
    "KernelUsage",
    "Occupancy",
    "ProfileDoesNotRun",
    "compute",
    "from_kernel",
    "manual",
    "next_step",
    "occupancies",
    "occupancy",
    "usage_of",
]


def usage_of(
    kernel_or_resources: Subject,
    target: Target | str | None = None,
    device: Device | str | None = None,
    mode: str | None = None,
) -> KernelUsage:
    """Turn a Kernel, a KernelUsage or a dict of manual numbers into a KernelUsage on the
    processor ``target``/``device`` name (no compatibility check: see :func:`occupancy`);
    ``mode`` as :func:`occupancy` takes it."""
    named = device_id(target, device)
    return _usage(kernel_or_resources, named[1] if named else None, mode)


def _usage(kernel_or_resources: Subject, t: Target | None, mode: str | None = None) -> KernelUsage:
    if mode is not None and not hasattr(kernel_or_resources, "resources"):
        raise UsageError(
            "mode= chooses the CU/WGP mode of a kernel whose code object does not record it; "
            "typed-in numbers take wgp= instead"
        )
    if isinstance(kernel_or_resources, KernelUsage):
        return (
            kernel_or_resources if t is None or t is kernel_or_resources.target else kernel_or_resources.with_(target=t)
        )
    if isinstance(kernel_or_resources, dict):
        if t is None:
            raise UsageError("manual resources need target= or device=")
        return manual_from_dict(t, kernel_or_resources)
    if hasattr(kernel_or_resources, "resources"):
        return from_kernel(kernel_or_resources, t, mode)
    raise UsageError(f"cannot compute occupancy of a {type(kernel_or_resources).__name__}")


def _built_for(kernel_or_resources: Subject) -> tuple[TargetId | None, Target | None]:
    """The target id a kernel's code object was built for (None for numbers typed in)."""
    if isinstance(kernel_or_resources, KernelUsage):
        return TargetId(kernel_or_resources.target.name), kernel_or_resources.target
    if isinstance(kernel_or_resources, dict) or not hasattr(kernel_or_resources, "target_id"):
        return None, None
    return kernel_or_resources.target_id, kernel_or_resources.target


def _whole(value: object, name: str) -> None:
    whole_number(value, name)


def occupancy(
    kernel_or_resources: Subject,
    *,
    target: Target | str | None = None,
    device: Device | str | None = None,
    block_size: int | None = None,
    dynamic_lds: int = 0,
    model: str = "hip",
    what_if: bool = False,
    mode: str | None = None,
    **options: Any,
) -> Occupancy:
    """How many workgroups of a kernel fit on a CU, which resource limits it, and why.

    Args:
        kernel_or_resources: a :class:`Kernel` (from :func:`load`), or a dict of numbers that
            mean what the metadata note means: ``vgprs`` (.vgpr_count: on gfx90a/gfx942/gfx950
            the unified total, AGPRs included), ``agprs`` (reported, never added), ``arch_vgprs``
            (with ``agprs``: forms the total by the target's rule), ``sgprs``, ``lds`` (static
            bytes), ``wave`` (32 or 64), ``wgp`` (bool), ``max_flat_workgroup_size``,
            ``scratch``, ``name``; omitted counts are 0. A KernelUsage is accepted too.
        target: processor to evaluate on, e.g. "gfx942" (required for a dict, unless ``device``).
        device: a product from tables/devices.toml, e.g. "MI300X" (its processor, and for the
            hip model its LDS size).
        block_size: workgroup size in threads; required except for the llvm model, where None
            means the flat workgroup range 1..max_flat_workgroup_size (LLVM's '; Occupancy:').
        dynamic_lds: dynamic LDS bytes per workgroup (Triton's shared memory goes here).
        model: "hip" (default), "llvm" or "hw".
        mode: "wgp" or "cu", the CU/WGP mode of a kernel whose code object does not record it
            (gfx1250, or gfx1310 built by ROCm 10.0: targets.toml mode_recorded); without it the
            processor's default is assumed, and the llvm and hw records say so (a warning and
            ``details["workgroup_mode"]``); the hip model, which reads the metadata as HIP
            does, takes none.
        what_if: a kernel is evaluated only where its code object can run (its processor with
            matching xnack/sramecc modes, or a member of its generic family); elsewhere this
            raises an AmdoccError naming both, unless ``what_if=True`` (which needs ``target``
            or ``device``), and then the record says ``what_if``.
        **options: hip: ``profile`` (or ``hip_profile``), the ROCm release to reproduce, e.g.
            "rocm-6.4" or a patch release "rocm-6.4.1" (default: rocm-7.14, the newest release a
            real runtime has confirmed; "develop" only by name); llvm: ``llvm_version``, a
            compiler version such as "22.1.8" or "24.0.0git", "main", or a rule set of
            tables/llvm_rules.toml (default: the compiler the code object names);
            ``lds_granule_rounding=True`` and ``sgpr_trap_reserve=True`` are older spellings of
            the version that brought each change, not switches of their own; hw:
            ``trap_reserve`` (bool, default True).

    Returns:
        An :class:`Occupancy` record: ``blocks_per_cu`` (per WGP when ``per_wgp``),
        ``waves_per_simd``, ``occupancy_fraction``, ``limiter`` and ``limits``, ``allocated``,
        ``warnings``, ``error``; :func:`next_step` of it says what to shed for one more workgroup and
        ``.as_dict()`` is the JSON record. Answers are cached (about a microsecond when asked again).

    Raises:
        UsageError: an unknown model or option, a misspelled resource key, a missing block size
            or target, counts that are negative or not whole numbers (a bool or a float is not
            one), a dynamic-VGPR kernel, or a processor fact the model needs that no source pins;
            its message names the parameter (``str(error)``; the CLI names the flag).
        IncompatibleTarget: a kernel asked about where its code object cannot run (a
            UsageError), unless ``what_if``.
        UnknownTargetError: an unknown target, device or HIP profile.
        ProfileDoesNotRun: a ``profile`` named whose runtime does not run the processor (a
            UsageError naming both), unless ``what_if=True``.
    """
    return _evaluate(
        kernel_or_resources,
        target=target,
        device=device,
        block_size=block_size,
        dynamic_lds=dynamic_lds,
        model=model,
        what_if=what_if,
        mode=mode,
        profile_named=True,
        **options,
    )


def _evaluate(
    kernel_or_resources: Subject,
    *,
    target: Target | str | None = None,
    device: Device | str | None = None,
    block_size: int | None = None,
    dynamic_lds: int = 0,
    model: str = "hip",
    what_if: bool = False,
    mode: str | None = None,
    profile_named: bool = True,
    **options: Any,
) -> Occupancy:
    """:func:`occupancy`, internal: ``profile_named=False`` is for amdocc.runtime, which picks a
    profile from a live runtime's version (not the user): a profile whose runtime does not run
    the processor then answers with its refusal instead of raising."""
    opts = _model_options(model, options)
    _check_model_arguments(model, block_size, mode)
    asked = _ask(kernel_or_resources, target, device, block_size, dynamic_lds, what_if, mode)
    return _answer(asked, model, opts, profile_named)


def occupancies(
    kernel_or_resources: Subject,
    models: Iterable[str],
    *,
    target: Target | str | None = None,
    device: Device | str | None = None,
    block_size: int,
    dynamic_lds: int = 0,
    what_if: bool = False,
) -> dict[str, Occupancy | ModelUnavailable]:
    """:func:`occupancy` of one launch under several models with their default options, its
    arguments checked once: model → its answer, or the ModelUnavailable that says why that model
    cannot answer here (a fact it needs is unknown, or dynamic VGPRs), while the others do."""
    if isinstance(models, str):  # one name would be asked letter by letter
        raise UsageError(
            f"models takes a list of model names, not the string {models!r} (choose from {', '.join(MODELS)})"
        )
    chosen = tuple(models)
    if not chosen:
        raise UsageError(f"no model asked (choose from {', '.join(MODELS)})")
    for model in chosen:
        _model_options(model, {})
        _check_model_arguments(model, block_size, None)
    asked = _ask(kernel_or_resources, target, device, block_size, dynamic_lds, what_if, None)
    out: dict[str, Occupancy | ModelUnavailable] = {}
    for model in chosen:
        try:
            out[model] = _answer(asked, model, _DEFAULT_OPTIONS[model], True)
        except ModelUnavailable as exc:
            out[model] = exc
    return out


def _check_model_arguments(model: str, block_size: int | None, mode: str | None) -> None:
    if mode is not None and model == "hip":
        raise UsageError(
            "{mode} chooses the mode the compiler and the hardware use; the hip model reads only the "
            "metadata's .workgroup_processor_mode, as HIP does",
            params=("mode",),
        )
    if block_size is None and model != "llvm":
        raise UsageError(f"the {model} model needs a block size")


class _Asked(NamedTuple):
    """One launch of one subject, its arguments checked: what every model is asked."""

    usage: KernelUsage
    where: Place | None
    block_size: int | None
    dynamic_lds: int
    device_lds: int | None  # the device's LDS bytes, which only the hip model reads
    what_if: bool
    local: bool  # a relocatable's local counts, evaluated as a what-if


def _ask(
    kernel_or_resources: Subject,
    target: Target | str | None,
    device: Device | str | None,
    block_size: int | None,
    dynamic_lds: int,
    what_if: bool,
    mode: str | None,
) -> _Asked:
    if block_size is not None:
        _whole(block_size, "block_size")
    _whole(dynamic_lds, "dynamic_lds")
    if dynamic_lds < 0:
        raise UsageError("dynamic LDS cannot be negative")
    local = getattr(kernel_or_resources, "launchable", True) is False  # a relocatable's local counts
    if what_if and target is None and device is None and not local:
        raise UsageError("what_if needs target= or device=: the processor to evaluate on")
    if local and not what_if:
        raise IncompatibleTarget(
            f"{_LOCAL_COUNTS}; ask for a what-if (what_if=True, or --what-if with --target) to evaluate it anyway"
        )
    code, code_target = _built_for(kernel_or_resources)
    where = place(code, code_target, target, device, what_if=what_if)
    device_lds = None
    if device is not None:
        from ..devices import Device, get_device

        device_lds = (device if isinstance(device, Device) else get_device(device)).lds
    usage = _usage(kernel_or_resources, where.target if where else None, mode)  # a kernel's is memoised on it
    if usage.wave not in usage.target.wave_sizes:  # a what-if cannot change the wave size
        raise UsageError(
            f"the kernel runs wave{usage.wave}, and {usage.target.name} runs "
            f"only wave{'/'.join(map(str, usage.target.wave_sizes))}: no evaluation there can be right"
        )
    return _Asked(usage, where, block_size, dynamic_lds, device_lds, what_if, local)


def _answer(asked: _Asked, model: str, opts: Options, profile_named: bool) -> Occupancy:
    usage, where = asked.usage, asked.where
    if model == "hip" and profile_named:
        _profile_runs(usage.target, dict(opts).get("profile"), asked.what_if)
    lds_bytes = asked.device_lds if model == "hip" else None
    occ = cached_occupancy(usage, model, asked.block_size, asked.dynamic_lds, lds_bytes, opts)
    if where is not None and where.built_for is not None:
        warnings = occ.warnings + ((f"what-if: {where.reason}",) if where.what_if else ())
        occ = occ._replace(built_for=where.built_for, what_if=where.what_if, warnings=warnings)
    if asked.local:
        occ = occ._replace(what_if=True, warnings=(*occ.warnings, f"what-if: {_LOCAL_COUNTS}"))
    return occ


def _profile_runs(t: Target, name: str | None, what_if: bool) -> None:
    """A HIP profile named by the caller must run the processor, unless a what-if is asked for
    (then the record says that runtime does not run it). The default profile is not checked: its
    refusal is an answer (the record's error), not a usage error."""
    if name is not None and not what_if:
        check_runs(get_profile(name), t)


# Why a relocatable's kernel gets no plain answer (codeobject/linking.py; llvm #192594).
_LOCAL_COUNTS = (
    "its code object is a relocatable or object-linking object: local counts, not launchable as built "
    "(the linked kernel may need what its callees use)"
)


def _model_options(model: str, options: dict[str, Any]) -> Options:
    defaults = _DEFAULT_OPTIONS.get(model)
    if defaults is None:
        raise UsageError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    if not options:
        return defaults
    options = dict(options)
    if "hip_profile" in options:
        options["profile"] = options.pop("hip_profile")
    if model == "llvm":
        _version_aliases(options)
    unknown = set(options) - set(OPTIONS[model])
    if unknown:
        raise UsageError(
            f"model {model} takes no option {', '.join(sorted(unknown))} (it takes: {', '.join(OPTIONS[model])})"
        )
    return tuple(sorted({**OPTIONS[model], **options}.items()))


def _version_aliases(options: dict[str, Any]) -> None:
    """Turn the llvm model's old switches into the version they are spellings of."""
    if "lds_granule_rounding" in options or "sgpr_trap_reserve" in options:
        options["llvm_version"] = version_option(
            options.get("llvm_version"),
            options.pop("lds_granule_rounding", False),
            options.pop("sgpr_trap_reserve", False),
        )
