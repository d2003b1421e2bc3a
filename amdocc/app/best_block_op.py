"""best-block: HIP's potential block size beside the block to launch, per kernel (``amdocc best-block``).

:func:`best_block` answers for every kernel of some files (selected as every command selects);
:func:`best_block_record` is one kernel's (or a manual usage's) ``--json`` record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from ..models.best_block import BlockSizeAnswer
    from .selection import Selection


def best_block(
    paths: StrPath | list[StrPath],
    *,
    dynamic_lds: int = 0,
    block_limit: int = 0,
    profile: str | None = None,
    compute_units: int | None = None,
    selection: Selection | None = None,
) -> dict[str, Any]:
    """``{"results": [...], "errors": [...]}`` as ``amdocc best-block --json PATH...`` prints it:
    for each selected kernel, hipOccupancyMaxPotentialBlockSize's block and grid under the HIP
    ``profile`` (default: the newest confirmed release) and the block to launch, which respects
    ``.max_flat_workgroup_size``. ``selection`` (:class:`amdocc.app.selection.Selection`) keeps
    kernels by target, device and name, as the CLI's ``--target``/``--device``/``--kernel`` do."""
    from ..errors import AmdoccError
    from ..models.best_block import potential_block_size
    from .occupancy_op import selected_kernels
    from .selection import Selection

    chosen_selection = selection if selection is not None else Selection()
    failures: list[str] = []
    chosen = selected_kernels(path_list(paths), chosen_selection, failures)
    errors: list[dict[str, Any]] = [{"error": message} for message in failures]
    results: list[dict[str, Any]] = []
    where = chosen_selection.evaluation()
    for co, kernel in chosen:
        try:
            answer = potential_block_size(
                kernel, dynamic_lds, block_limit, **where, profile=profile, compute_units=compute_units
            )
        except AmdoccError as exc:
            errors.append({"path": co.path, "kernel": kernel.name, "error": str(exc)})
            continue
        results.append(best_block_record(answer, co.path, kernel.name, str(co.target_id)))
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
