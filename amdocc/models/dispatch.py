"""The one computation behind every occupancy answer: the model chosen, the launch check, the
mode note, and the cache of answers (keyed by the inputs' content: usage, model, block size,
dynamic LDS, device LDS, options). :mod:`amdocc.models` validates the caller's arguments and
:mod:`amdocc.models.nextstep` re-asks through here; neither is imported by the models themselves.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import TYPE_CHECKING, Any

from ..caches import Memo
from ..errors import UsageError
from ..frozen import freeze
from .applicable import check as check_applicable
from .hip import hip_occupancy
from .hw import hw_occupancy
from .llvm import llvm_occupancy
from .record import Occupancy, launch_check, with_query
from .usage import KernelUsage

if TYPE_CHECKING:
    from .record import Options, Query

MODELS = ("hip", "llvm", "hw")
# Options each model accepts, with their defaults.
OPTIONS: dict[str, dict[str, Any]] = {
    "hip": {"profile": None},
    "llvm": {"llvm_version": None},
    "hw": {"trap_reserve": True},
}


# Every field of a usage but its name: what the models read. No model's answer names the kernel
# (only a refusal does, and a refusal is raised, never cached), so kernels that differ only in
# name (the thousands of instances of one template in a library) share one answer.
_ANSWER_FIELDS = tuple(f.name for f in dataclasses.fields(KernelUsage) if f.name != "name")
answer_key = operator.attrgetter(*_ANSWER_FIELDS)  # a usage as the models see it
# Bounded: a corpus of distinct kernels cannot grow it without end.
_ANSWERS: Memo[tuple[Any, ...], Occupancy] = Memo(f"{__name__}._ANSWERS", 1 << 16)


def cached_occupancy(
    usage: KernelUsage, model: str, block_size: int | None, dynamic_lds: int, lds_bytes: int | None, opts: Options
) -> Occupancy:
    """:func:`compute`, cached by what the models read (the usage without its name); the record
    carries how it was asked (its ``query``), as data, so that
    :func:`amdocc.models.nextstep.next_step` can re-ask the same model."""
    query: Query = (usage, opts, lds_bytes)
    key = (answer_key(usage), model, block_size, dynamic_lds, lds_bytes, opts)
    occ = _ANSWERS.get(key)
    if occ is None:
        occ = compute(usage, model, block_size, dynamic_lds, lds_bytes=lds_bytes, **dict(opts))
        _ANSWERS.put(key, occ)
    return with_query(occ, query)


def compute(
    usage: KernelUsage,
    model: str,
    block_size: int | None,
    dynamic_lds: int = 0,
    *,
    lds_bytes: int | None = None,
    **options: Any,
) -> Occupancy:
    """The uncached computation (the models themselves are pure functions)."""
    if model not in MODELS:  # any other name would fall through to the hw model below
        raise UsageError(f"unknown model {model!r} (choose from {', '.join(MODELS)})")
    check_applicable(usage, model)
    if model == "llvm":
        occ = llvm_occupancy(usage, block_size, dynamic_lds, llvm_version=options.get("llvm_version"))
    elif block_size is None:
        raise UsageError(f"the {model} model needs a block size")
    elif model == "hip":
        occ = hip_occupancy(usage, block_size, dynamic_lds, profile=options.get("profile"), lds_bytes=lds_bytes)
    else:
        occ = hw_occupancy(usage, block_size, dynamic_lds, trap_reserve=options.get("trap_reserve", True))
    occ = launch_check(usage, occ)
    # The mode was not in the code object: the llvm and hw answers assumed one and say so. (HIP
    # reads only the metadata's .workgroup_processor_mode, and the hip model reproduces that parse.)
    if usage.mode_assumed is not None and model != "hip":
        mode = {"wgp": usage.wgp_mode, "recorded": False, "why": usage.mode_assumed}
        occ = occ._replace(
            warnings=(*occ.warnings, usage.mode_assumed), details=freeze({**occ.details, "workgroup_mode": mode})
        )
    return occ
