"""sweep: one kernel's workgroups per CU over a grid of block sizes × dynamic LDS sizes, with
the limiting resource of each cell (``amdocc sweep``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .reading import StrPath

if TYPE_CHECKING:
    from ..codeobject import Kernel
    from ..models import KernelUsage


def default_blocks(wave: int, limit: int) -> list[int]:
    steps = [wave * k for k in (1, 2, 3, 4, 5, 6, 8, 10, 12, 16) if wave * k <= limit]
    return steps + ([limit] if limit not in steps else [])


def default_dynamic_lds(static: int, per_workgroup: int) -> list[int]:
    sizes, size = [0], 4096
    while static + size <= per_workgroup:
        sizes.append(size)
        size *= 2
    if sizes[-1] + static < per_workgroup:
        sizes.append(per_workgroup - static)
    return sizes


def sweep(
    kernel: Kernel | KernelUsage | StrPath | Iterable[StrPath],
    *,
    kernel_regex: str | None = None,
    blocks: Iterable[int] | None = None,
    dynamic_lds: Iterable[int] | None = None,
    model: str = "hip",
    target: str | None = None,
    device: str | None = None,
    what_if: bool = False,
    **model_options: Any,
) -> dict[str, Any]:
    """The grid ``amdocc sweep --json`` prints for one kernel (a Kernel, or a KernelUsage such
    as amdocc.models.manual makes): ``{"unit", "blocks", "dynamic_lds", "grid"}``, one grid
    record per (dynamic LDS, block size) cell in that order. ``blocks`` defaults to wave
    multiples up to the kernel's largest workgroup, ``dynamic_lds`` to 0 and powers of two up to
    the target's limit; ``target``/``device``/``what_if`` and ``model_options`` are
    amdocc.occupancy's. As the command does, ``kernel`` may also be a path (or paths) holding
    the one kernel that ``kernel_regex`` (its ``--kernel``), ``target`` and ``device`` select;
    anything but exactly one is a UsageError naming what is there."""
    from ..codeobject import Kernel
    from ..models import occupancy, usage_of
    from ..models.usage import KernelUsage
    from ..targets import MAX_WORKGROUP_SIZE
    from .reading import sequence

    if not isinstance(kernel, (Kernel, KernelUsage)):
        kernel = _one_kernel(kernel, kernel_regex, target, device, what_if)
    elif kernel_regex is not None:
        from ..errors import UsageError

        raise UsageError("kernel_regex selects a kernel from paths; the kernel given is already one")
    usage = kernel if isinstance(kernel, KernelUsage) else usage_of(kernel, target, device)
    where: dict[str, Any] = {"target": target, "what_if": True} if what_if else {}
    t = usage.target
    limit = min(usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)
    blocks = sequence(blocks, "blocks", "block sizes") if blocks is not None else []
    lds_sizes = sequence(dynamic_lds, "dynamic_lds", "byte counts") if dynamic_lds is not None else []
    blocks = blocks or default_blocks(usage.wave, limit)
    lds_sizes = lds_sizes or default_dynamic_lds(usage.lds, t.lds_per_workgroup)
    grid: list[dict[str, Any]] = []
    unit: str | None = None
    for dyn in lds_sizes:
        for block in blocks:
            occ = occupancy(
                usage, device=device, block_size=block, dynamic_lds=dyn, model=model, **where, **model_options
            )
            unit = unit or occ.unit
            grid.append(
                {
                    "block_size": block,
                    "dynamic_lds": dyn,
                    "blocks_per_cu": occ.blocks_per_cu,
                    "blocks_per_wgp": occ.blocks_per_cu if occ.per_wgp else None,
                    "unit": occ.unit,
                    "waves_per_simd": occ.waves_per_simd,
                    "limiter": occ.limiter,
                    "error": occ.error,
                    "launchable": occ.launchable,
                }
            )
    return {"unit": unit, "blocks": blocks, "dynamic_lds": lds_sizes, "grid": grid}


def _one_kernel(
    paths: StrPath | Iterable[StrPath], regex: str | None, target: str | None, device: str | None, what_if: bool
) -> Kernel:
    """The one kernel of ``paths`` the selection keeps, as ``amdocc sweep PATH --kernel`` finds it."""
    from ..errors import AmdoccError
    from .occupancy_op import selected_kernels
    from .reading import path_list
    from .selection import Selection, require_one_kernel

    selection = Selection(target, device, regex, what_if)
    failures: list[str] = []
    chosen = selected_kernels(path_list(paths), selection, failures)
    if failures and not chosen:
        raise AmdoccError(failures[0])
    require_one_kernel(chosen, "sweep", selection)
    return chosen[0][1]
