"""verify: amdocc's hip model against the live HIP runtime, every kernel × launch shape
(``amdocc verify``); needs a ROCm GPU (or the emulated device the tests run)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .reading import StrPath, path_list, sequence


@dataclass(frozen=True)
class Verification:
    """What a verification found: ``summary`` and ``results`` as ``verify --json`` prints them
    ({**summary, "results": results}); ``observations``, HIP's answers as tables/hip_observed
    rows; ``not_asked``, the shapes HIP was not asked about (the model says the runtime divides
    by zero there); ``failures``, inputs that could not be read; ``warning``, what choosing the
    profile said; ``device``, the device's name."""

    summary: dict[str, Any]
    results: list[dict[str, Any]]
    observations: list[dict[str, Any]]
    not_asked: list[str]
    failures: list[str]
    warning: str | None
    device: str


def verify(
    paths: StrPath | Iterable[StrPath],
    *,
    kernel: str | None = None,
    blocks: Iterable[int] = (64, 128, 256, 512, 1024),
    dynamic_lds: Iterable[int] = (0, 16384),
    hip_profile: str | None = None,
    notify: Callable[[str], object] | None = None,
) -> Verification:
    """Ask the live HIP runtime's occupancy API for every kernel of ``paths`` built for this
    device, at each of ``blocks`` × ``dynamic_lds``, and compare with the hip model under the
    runtime's own release (``hip_profile`` overrides it). Raises HipUnavailable (exit 3) when no
    HIP runtime is usable and UsageError when no kernel is selected. ``notify`` is called at once
    with what choosing the profile warns about (it is also in ``warning``)."""
    from .. import observed
    from ..models import occupancy
    from ..runtime import HipError, HipUnavailable, choose_profile, runtime, unavailable_reason
    from .occupancy_op import selected_kernels
    from .selection import Selection

    paths = path_list(paths)
    blocks = sequence(blocks, "blocks", "block sizes")
    dynamic_lds = sequence(dynamic_lds, "dynamic_lds", "byte counts")
    rt = runtime()
    if rt is None:
        raise HipUnavailable(f"amdocc verify needs a ROCm GPU: {unavailable_reason()}")
    dev = rt.properties()
    choice = choose_profile(rt, hip_profile)
    if choice.warning and notify is not None:
        notify(choice.warning)
    profile: dict[str, Any] = {"profile": choice.profile} if choice.profile else {}
    selection = Selection(dev.gcn_arch_name or dev.processor, None, kernel)
    failures: list[str] = []
    rows: list[dict[str, Any]] = []
    agree = total = 0
    recorded: list[dict[str, Any]] = []
    not_asked: list[str] = []
    chosen = selected_kernels(paths, selection, failures)
    if not chosen and not failures:
        raise selection.nothing_selected_error()
    for co, k in chosen:
        target = selection.target
        for block in blocks:
            for dyn in dynamic_lds:
                occ = occupancy(k, target=target, block_size=block, dynamic_lds=dyn, **profile)
                model = occ.error or occ.blocks_per_cu
                if model == "division-by-zero":  # asking would kill this process with SIGFPE
                    not_asked.append(f"{k.name} block {block} dyn {dyn}")
                    continue
                hip: int | str  # HIP's answer, or the name of its error
                try:
                    hip = rt.occupancy_of(co.data, k.name, block, dyn)
                except HipError as exc:
                    hip = exc.code
                total += 1
                agree += hip == model
                rows.append(
                    {
                        "path": co.path,
                        "origin": co.origin.chain,
                        "kernel": k.name,
                        "block_size": block,
                        "dynamic_lds": dyn,
                        "hip": hip,
                        "model": model,
                        "profile": occ.profile,
                        "limiter": occ.limiter,
                    }
                )
                note = {f"{key}": k.meta(key) for key in observed.NOTE_KEYS}
                recorded.append(
                    {
                        "id": f"{k.name}-{block}-{dyn}",
                        "source": f"amdocc verify on {dev.name}",
                        "kind": "measured",
                        "profile": occ.profile,
                        "processor": dev.processor,
                        "gcn_arch_name": dev.gcn_arch_name,
                        "runtime_version": dev.runtime_version,
                        "date": observed.today(),
                        **note,
                        "block_size": block,
                        "dynamic_lds": dyn,
                        **({"error": hip} if isinstance(hip, str) else {"blocks_per_cu": hip}),
                    }
                )
    summary = {
        "device": dev.gcn_arch_name,
        "runtime_version": dev.runtime_version,
        "profile": rows[0]["profile"] if rows else choice.profile,
        "profile_reason": choice.reason,
        "agree": agree,
        "total": total,
        "not_asked": len(not_asked),
    }
    return Verification(summary, rows, recorded, not_asked, failures, choice.warning, dev.name)
