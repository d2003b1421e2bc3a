"""sweep: one kernel's workgroups per CU over a grid of block sizes × dynamic LDS sizes, with
the limiting resource of each cell (``amdocc sweep``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .reading import StrPath

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..errors import UsageError
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


@dataclass(frozen=True)
class Subject:
    """The kernel a sweep is about: its usage where it is evaluated, the Kernel (None for manual
    numbers), and how ``sweep --json`` names it (``title``: the code object's origin, the name
    and where it is evaluated; ``name``: the same without the origin)."""

    usage: KernelUsage
    kernel: Kernel | None
    title: str
    name: str
    built_for: str | None
    what_if: bool


def subject(
    kernel: Kernel | KernelUsage | StrPath | Iterable[StrPath],
    *,
    kernel_regex: str | None = None,
    target: str | None = None,
    device: str | None = None,
    what_if: bool = False,
    mode: str | None = None,
    mangled: bool = False,
    failures: list[str] | None = None,
) -> Subject:
    """The one kernel ``kernel`` names (a Kernel, manual numbers as a KernelUsage, or paths that
    ``kernel_regex``, ``target`` and ``device`` select it from, as ``sweep PATH --kernel`` does),
    placed where it is evaluated; ``mode`` as amdocc.occupancy takes it. Files that cannot be
    read are added to ``failures`` when it is given; otherwise the first is raised when nothing
    else was read."""
    from ..codeobject import Kernel
    from ..demangle import display
    from ..models import usage_of
    from ..models.compat import place
    from ..models.usage import KernelUsage

    if isinstance(kernel, KernelUsage):
        if kernel_regex is not None:
            raise _already_one()
        label = f"manual kernel on {kernel.target.name}"
        return Subject(kernel, None, label, label, None, False)
    origin = None
    if not isinstance(kernel, Kernel):
        co, kernel = _one_kernel(kernel, kernel_regex, target, device, what_if, failures)
        origin = co.origin
    elif kernel_regex is not None:
        raise _already_one()
    where = place(kernel.target_id, kernel.target, target, device, what_if=bool(what_if))
    usage = usage_of(kernel, target, device, mode)
    cannot = where is not None and where.what_if
    on = f" on {usage.target.name}" + (f" (what-if: {kernel.target_id} code cannot run there)" if cannot else "")
    name = f"{display(kernel.name, mangled)}{on}"
    title = f"{origin}: {name}" if origin is not None else name
    return Subject(usage, kernel, title, name, where.built_for if where else None, bool(cannot))


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
    mode: str | None = None,
    mangled: bool = False,
    **model_options: Any,
) -> dict[str, Any]:
    """The record ``amdocc sweep --json`` prints for one kernel (a Kernel, a KernelUsage such as
    amdocc.models.manual makes, or paths holding the one kernel :func:`subject` selects):
    ``{"kernel", "model", "unit", "built_for", "what_if", "grid"}``, one grid record per
    (dynamic LDS, block size) cell in that order. ``blocks`` defaults to wave multiples up to the
    kernel's largest workgroup, ``dynamic_lds`` to 0 and powers of two up to the target's limit;
    ``target``/``device``/``what_if``/``mode`` and ``model_options`` are amdocc.occupancy's;
    ``mangled`` keeps the kernel's stored name in "kernel"."""
    chosen = subject(
        kernel, kernel_regex=kernel_regex, target=target, device=device, what_if=what_if, mode=mode, mangled=mangled
    )
    return record(chosen, grid(chosen.usage, blocks, dynamic_lds, model, device, what_if, model_options), model)


def record(chosen: Subject, swept: Grid, model: str) -> dict[str, Any]:
    """The ``sweep --json`` record of ``chosen``'s grid."""
    return {
        "kernel": chosen.title,
        "model": model,
        "unit": swept.unit,
        "built_for": chosen.built_for,
        "what_if": chosen.what_if,
        "grid": swept.cells,
    }


@dataclass(frozen=True)
class Grid:
    """The cells of a sweep (``cells``, in (dynamic LDS, block size) order) and its axes."""

    unit: str | None
    blocks: list[int]
    dynamic_lds: list[int]
    cells: list[dict[str, Any]]


def grid(
    usage: KernelUsage,
    blocks: Iterable[int] | None,
    dynamic_lds: Iterable[int] | None,
    model: str,
    device: str | None,
    what_if: bool,
    model_options: dict[str, Any],
) -> Grid:
    """``usage``'s answer at every (dynamic LDS, block size) of the axes (their defaults as
    :func:`sweep` says)."""
    from ..models import occupancy
    from ..targets import MAX_WORKGROUP_SIZE
    from .reading import sequence

    where: dict[str, Any] = {"target": usage.target, "what_if": True} if what_if else {}
    t = usage.target
    limit = min(usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)
    block_list = sequence(blocks, "blocks", "block sizes") if blocks is not None else []
    lds_sizes = sequence(dynamic_lds, "dynamic_lds", "byte counts") if dynamic_lds is not None else []
    block_list = block_list or default_blocks(usage.wave, limit)
    lds_sizes = lds_sizes or default_dynamic_lds(usage.lds, t.lds_per_workgroup)
    cells: list[dict[str, Any]] = []
    unit: str | None = None
    for dyn in lds_sizes:
        for block in block_list:
            occ = occupancy(
                usage, device=device, block_size=block, dynamic_lds=dyn, model=model, **where, **model_options
            )
            unit = unit or occ.unit
            cells.append(
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
    return Grid(unit, block_list, lds_sizes, cells)


def _already_one() -> UsageError:
    from ..errors import UsageError

    return UsageError(
        "{kernel_regex} selects a kernel from paths; the kernel given is already one", params=("kernel_regex",)
    )


def _one_kernel(
    paths: StrPath | Iterable[StrPath],
    regex: str | None,
    target: str | None,
    device: str | None,
    what_if: bool,
    failures: list[str] | None,
) -> tuple[CodeObject, Kernel]:
    """The one kernel of ``paths`` the selection keeps, as ``amdocc sweep PATH --kernel`` finds it."""
    from ..errors import AmdoccError
    from .occupancy_op import selected_kernels
    from .reading import path_list
    from .selection import Selection, require_one_kernel

    selection = Selection(target, device, regex, what_if)
    unread: list[str] = [] if failures is None else failures
    chosen = selected_kernels(path_list(paths), selection, unread)
    if failures is None and unread and not chosen:
        raise AmdoccError(unread[0])
    require_one_kernel(chosen, "sweep", selection)
    return chosen[0]
