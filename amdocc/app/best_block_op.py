"""best-block: HIP's potential block size beside the block to launch, per kernel (``amdocc best-block``).

:func:`best_block` answers for every kernel of some files (selected as every command selects);
:func:`best_block_record` is one kernel's (or a manual usage's) ``--json`` record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from ..models import KernelUsage
    from ..models.best_block import BlockSizeAnswer
    from .selection import Selection


def best_block(
    paths: StrPath | list[StrPath] | KernelUsage,
    *,
    dynamic_lds: int = 0,
    block_limit: int = 0,
    profile: str | None = None,
    compute_units: int | None = None,
    target: str | None = None,
    device: str | None = None,
    kernel: str | None = None,
    what_if: bool = False,
    selection: Selection | None = None,
) -> dict[str, Any]:
    """``{"results": [...], "errors": [...]}`` as ``amdocc best-block --json PATH...`` prints it:
    for each selected kernel, hipOccupancyMaxPotentialBlockSize's block and grid under the HIP
    ``profile`` (default: the newest confirmed release) and the block to launch, which respects
    ``.max_flat_workgroup_size``. ``target``, ``device``, ``kernel`` (a regex) and ``what_if``
    keep kernels as the CLI's ``--target``/``--device``/``--kernel``/``--what-if`` do (or a
    ready :class:`amdocc.app.selection.Selection`, in their place). Nothing selected raises
    UsageError naming what is there. ``paths`` may instead be a KernelUsage (manual numbers, as
    amdocc.models.manual makes them): its one record is named "manual"."""
    from ..errors import AmdoccError, UsageError
    from ..models.best_block import potential_block_size
    from ..models.usage import KernelUsage
    from .occupancy_op import selected_kernels
    from .selection import Selection

    if isinstance(paths, KernelUsage):
        if selection is not None or kernel:
            raise UsageError("{kernel} selects kernels from paths; manual numbers are one kernel", params=("kernel",))
        answer = potential_block_size(
            paths, dynamic_lds, block_limit, target=target, device=device, profile=profile, compute_units=compute_units
        )
        return {"results": [best_block_record(answer, None, "manual", paths.target.name)], "errors": []}

    if selection is not None and (target or device or kernel or what_if):
        raise UsageError("best_block: give a selection or target/device/kernel/what_if, not both")
    if what_if and not (target or device):
        raise UsageError("what_if needs a processor to evaluate on: target or device")
    chosen_selection = selection if selection is not None else Selection(target, device, kernel, what_if)
    failures: list[str] = []
    chosen = selected_kernels(path_list(paths), chosen_selection, failures)
    errors: list[dict[str, Any]] = [{"error": message} for message in failures]
    results: list[dict[str, Any]] = []
    where = chosen_selection.evaluation()
    for co, k in chosen:
        try:
            answer = potential_block_size(
                k, dynamic_lds, block_limit, **where, profile=profile, compute_units=compute_units
            )
        except AmdoccError as exc:
            errors.append({"path": co.path, "kernel": k.name, "error": str(exc)})
            continue
        results.append(best_block_record(answer, co.path, k.name, str(co.target_id)))
    if selection is None and not results and not errors:
        raise chosen_selection.nothing_selected_error()
    return {"results": results, "errors": errors}


def best_block_record(answer: BlockSizeAnswer, path: str | None, kernel: str, target: str) -> dict[str, Any]:
    """One kernel's record: the answer's fields, ``processor`` where it was evaluated, ``target``
    the code object's (the processor for manual numbers)."""
    from ..demangle import demangle

    out: dict[str, Any] = {"path": path, "kernel": kernel, "demangled": demangle(kernel) if path else kernel}
    out.update(answer.as_dict())
    out["processor"] = out.pop("target")
    out["target"] = target
    return out
