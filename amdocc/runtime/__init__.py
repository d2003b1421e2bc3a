"""HIP when it can answer, amdocc's static model when it cannot — and both compared when both can.

:func:`max_blocks_per_cu` is the drop-in for FlyDSL's ``CompiledFunction.max_blocks_per_cu()``
(FlyDSL PR #1259): that one loads a temporary module and asks HIP, so it needs a device and fails
inside graph capture. Here HIP answers when the runtime is usable and the stream is not
capturing; otherwise the static ``hip`` model answers from the code object. The answer carries
its source, and every disagreement between the two is logged and counted, never resolved quietly.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import weakref
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

from ..caches import register
from ..errors import UsageError
from .hip import DeviceInfo, Hip, HipError, HipUnavailable, runtime, unavailable_reason

if TYPE_CHECKING:
    from ..codeobject.model import CodeObject, Kernel
    from ..containers.model import Source
    from ..devices import Device

__all__ = [
    "BlocksPerCU",
    "DeviceInfo",
    "Hip",
    "HipError",
    "HipUnavailable",
    "ProfileChoice",
    "choose_profile",
    "max_blocks_per_cu",
    "runtime",
    "stats",
    "unavailable_reason",
]

log = logging.getLogger("amdocc.runtime")
_lock = threading.Lock()
# HIP's answers, per runtime (the hip-python module or the object standing in for it; the cache
# goes with it), keyed by (sha256 of the code object, kernel, block size, dynamic LDS): the
# content, never an object's id, which Python reuses once the object is collected. At most
# HIP_ANSWERS_KEPT per runtime, least recently used dropped first.
HIP_ANSWERS_KEPT = 4096
_hip_answers: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[str, str, int, int], int]] = weakref.WeakKeyDictionary()
register(f"{__name__}._hip_answers", lambda: _hip_answers.clear())
stats = {"hip": 0, "model": 0, "compared": 0, "disagreements": 0}


def _answers_of(rt: Any) -> OrderedDict[tuple[str, str, int, int], int] | None:
    """The answer cache of one runtime (None when the runtime cannot be weakly referenced: then
    nothing is cached)."""
    owner = getattr(rt, "hip", rt)
    try:
        cache = _hip_answers.get(owner)
        if cache is None:
            cache = _hip_answers[owner] = OrderedDict()
    except TypeError:
        return None
    return cache


class ProfileChoice(NamedTuple):
    """The HIP profile the static model reproduces, and why."""

    profile: str | None  # None: the default profile
    runtime_version: int | None  # hipRuntimeGetVersion(), when it was read
    reason: str
    warning: str | None = None  # the version is no release amdocc knows, or could not be read


def choose_profile(rt: Hip | None, profile: str | None = None) -> ProfileChoice:
    """The profile given, else the runtime's own (its hipRuntimeGetVersion() mapped onto a ROCm
    release; an unknown release falls back to the nearest known one), else the default."""
    from ..models.hip import profile_for_runtime

    if profile:
        return ProfileChoice(profile, None, "profile given")
    if rt is None:
        return ProfileChoice(None, None, "no HIP runtime: the default profile")
    if not hasattr(rt, "runtime_version"):  # a stand-in runtime that only answers occupancy
        return ProfileChoice(None, None, "the runtime reports no version: the default profile")
    try:
        version = rt.runtime_version()
    except (HipError, HipUnavailable) as exc:
        return ProfileChoice(
            None,
            None,
            "the default profile",
            f"could not read the HIP runtime's version ({exc}); comparing with the default profile",
        )
    chosen = profile_for_runtime(version)
    return ProfileChoice(chosen.profile.name, version, f"hipRuntimeGetVersion() = {version}", chosen.warning)


class BlocksPerCU(int):
    """An int (so it drops in where FlyDSL returns one) that also says where it came from.

    Attributes:
        source: "hip" (the live runtime answered) or "model" (amdocc's static hip model did).
        model: the static model's answer (None when it has none).
        hip: HIP's answer, when the runtime was asked.
        reason: why this source answered (e.g. "the stream is capturing ...").
        profile: the HIP runtime profile the model reproduced.
        runtime_version: the hipRuntimeGetVersion() value the profile was chosen from (None when
            no runtime was asked).
    """

    source: str  # "hip" or "model"
    model: int | None  # the static model's answer
    hip: int | None  # HIP's answer, when asked
    reason: str  # why this source
    profile: str | None  # the HIP runtime profile the model reproduced
    runtime_version: int | None  # hipRuntimeGetVersion() the profile was chosen from

    def __new__(
        cls,
        value: int,
        *,
        source: str,
        model: int | None = None,
        hip: int | None = None,
        reason: str = "",
        profile: str | None = None,
        runtime_version: int | None = None,
    ) -> BlocksPerCU:
        obj = super().__new__(cls, value)
        obj.source, obj.model, obj.hip, obj.reason, obj.profile = source, model, hip, reason, profile
        obj.runtime_version = runtime_version
        return obj

    def __repr__(self) -> str:
        return f"BlocksPerCU({int(self)}, source={self.source!r})"


def _kernel_and_image(obj: Kernel | CodeObject | Source, kernel_name: str | None) -> tuple[Kernel, bytes | None]:
    """(kernel, code-object bytes or None) from a Kernel, a CodeObject, bytes or a path."""
    from ..codeobject import CodeObject, Kernel
    from ..loader import load

    if isinstance(obj, Kernel):
        if kernel_name is not None and kernel_name not in obj.names():
            raise UsageError(f"kernel_name={kernel_name!r} does not name the kernel passed ({obj.name})")
        return obj, obj.image or None
    cos = [obj] if isinstance(obj, CodeObject) else list(load(obj))
    if len(cos) != 1:
        raise UsageError(f"expected one code object, found {len(cos)}; pass the kernel itself")
    co = cos[0]
    if kernel_name is not None:
        kernel = co.kernel(kernel_name)
    elif len(co.kernels) == 1:
        kernel = co.kernels[0]
    else:
        names = ", ".join(k.name for k in co.kernels[:8]) + (", ..." if len(co.kernels) > 8 else "")
        raise UsageError(
            f"{co.origin} holds {len(co.kernels)} kernels; choose one with kernel_name= ({names or 'none'})"
        )
    return kernel, kernel.image or co.data or None


def max_blocks_per_cu(
    code_object_or_kernel: Kernel | CodeObject | Source,
    block_size: int,
    dynamic_lds: int = 0,
    *,
    stream: Any = None,
    device: str | Device | None = None,
    kernel_name: str | None = None,
    profile: str | None = None,
    hip: Hip | None = None,
    what_if: bool = False,
) -> BlocksPerCU:
    """Workgroups of one kernel resident per CU: HIP's own answer when it can give one, else the model's.
    Public as :func:`amdocc.max_blocks_per_cu` (re-exported lazily).

    The drop-in for FlyDSL's ``CompiledFunction.max_blocks_per_cu()``, usable inside HIP graph
    capture: with hip-python and a ROCm GPU it loads the code object and asks
    hipModuleOccupancyMaxActiveBlocksPerMultiprocessor (cached); when the stream is capturing,
    without a device or without ROCm, amdocc's static hip model answers. When both answer they
    are compared; a disagreement is logged (logger "amdocc.runtime") and counted
    (``amdocc.runtime.stats``).

    Args:
        code_object_or_kernel: a :class:`Kernel`, a :class:`CodeObject`, bytes or a path
            (holding one code object).
        block_size: workgroup size in threads.
        dynamic_lds: dynamic LDS bytes per workgroup.
        stream: the HIP stream the kernel will be launched on (its capture status is checked).
        device: a product (tables/devices.toml) or a processor / target id for the static
            model, e.g. "MI300X" or "gfx942"; one the kernel's code object cannot run on is an
            error naming both, unless ``what_if``.
        kernel_name: which kernel of a code object: its name or symbol ("<name>.kd"), mangled
            or demangled; may be omitted when the code object holds one kernel.
        profile: the HIP runtime era the model reproduces (default: the runtime's own release,
            from hipRuntimeGetVersion(); without a runtime, the default profile).
        hip: a runtime object to ask instead of the real one (tests pass a fake).
        what_if: evaluate on ``device`` even where the code object cannot run (the model's
            answer, labelled what-if).

    Returns:
        A ``BlocksPerCU``: an int that also carries ``.source`` ("hip" or "model"), ``.model``,
        ``.hip``, ``.reason`` and ``.profile``.

    Raises:
        UsageError: no kernel or several match, ``kernel_name`` does not name the kernel
            passed, or neither HIP nor the model can answer.
        UnknownTargetError: an unknown device, processor or profile.
        ProfileDoesNotRun: ``profile`` names a release whose runtime does not run the processor
            (unless ``what_if``).
    """
    kernel, image = _kernel_and_image(code_object_or_kernel, kernel_name)
    rt = hip if hip is not None else runtime()
    choice = choose_profile(rt, profile)
    if choice.warning:
        log.warning("%s", choice.warning)
    kwargs: dict[str, Any] = {"profile": choice.profile} if choice.profile else {}
    target_kwargs: dict[str, Any] = {}
    if device is not None:
        from ..targets import find_target

        is_processor = not hasattr(device, "compute_units") and find_target(str(device)) is not None
        target_kwargs = {"target" if is_processor else "device": device, "what_if": what_if}
    elif what_if:
        raise UsageError("what_if needs device=: the processor to evaluate on")
    from ..models import _evaluate as evaluate  # occupancy, the profile picked here (not named)

    # A profile picked from the runtime's version answers with its refusal where that release does
    # not run the processor; one the caller named is held to it (ProfileDoesNotRun).
    occ = evaluate(
        kernel,
        block_size=block_size,
        dynamic_lds=dynamic_lds,
        profile_named=profile is not None,
        **target_kwargs,
        **kwargs,
    )
    model = occ.blocks_per_cu

    if rt is None:
        reason = f"no HIP runtime: {unavailable_reason()}"
    elif rt.is_capturing(stream):
        reason = "the stream is capturing (or its capture status could not be read): no module load"
    elif image is None:
        reason = "the kernel's code-object bytes are not at hand"
    elif occ.error == "division-by-zero":
        reason = "not asked: this runtime would divide by zero (SIGFPE) and take the process down"
    else:
        key = (hashlib.sha256(image).hexdigest(), kernel.name, block_size, dynamic_lds)
        with _lock:
            cache = _answers_of(rt)
            answer = cache.get(key) if cache is not None else None
            if answer is not None and cache is not None:
                cache.move_to_end(key)
        try:
            if answer is None:
                answer = rt.occupancy_of(image, kernel.name, block_size, dynamic_lds)
                with _lock:
                    if cache is not None:
                        cache[key] = answer
                        while len(cache) > HIP_ANSWERS_KEPT:
                            cache.popitem(last=False)
        except (HipError, HipUnavailable) as exc:
            reason = f"HIP could not answer: {exc}"
        else:
            stats["hip"] += 1
            if model is not None:
                stats["compared"] += 1
                if model != answer:
                    stats["disagreements"] += 1
                    log.warning(
                        "amdocc model says %s blocks/CU for %s at block %d, dynamic LDS %d, HIP says %s "
                        "(profile %s, limiter %s)",
                        model,
                        kernel.name,
                        block_size,
                        dynamic_lds,
                        answer,
                        occ.profile,
                        occ.limiter,
                    )
            return BlocksPerCU(
                answer,
                source="hip",
                model=model,
                hip=answer,
                reason="HIP runtime",
                profile=occ.profile,
                runtime_version=choice.runtime_version,
            )
    if model is None:
        why = f": {occ.warnings[-1]}" if occ.warnings else ""
        raise UsageError(f"{kernel.name}: no answer ({reason}; the model ({occ.profile}) says {occ.error}{why})")
    stats["model"] += 1
    return BlocksPerCU(
        model, source="model", model=model, reason=reason, profile=occ.profile, runtime_version=choice.runtime_version
    )
