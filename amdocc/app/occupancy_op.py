"""occupancy: workgroups per CU for each kernel of some files, explained (``amdocc occupancy``).

The per-file worker (``occupancy_file``) is what the CLI streams and what :func:`occupancy`
gathers; ``block_for`` and ``selected_kernels`` are shared by the operations that evaluate a
kernel at its declared block size (census, diff, sweep, split, verify).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..containers import NotWalked
    from ..models import KernelUsage, Occupancy
    from .reading import Event, FileItem, Record
    from .selection import Selection


def selected_kernels(paths: list[str], selection: Selection, failures: list[str]) -> list[tuple[CodeObject, Kernel]]:
    """(code object, kernel) for every kernel the PATHs and the selection keep; what could not
    be read is appended to ``failures`` (one-line messages)."""
    from .reading import read

    chosen: list[tuple[CodeObject, Kernel]] = []
    for item in files_of(paths):
        for kind, value in read(item):
            if kind == "error":
                failures.append(value["error"])
            elif kind == "skipped":
                selection.passed_over(value)
            elif kind == "code_object":
                chosen.extend((value, k) for k in selection.kernels_of(value))
    return chosen


def files_of(paths: list[str]) -> list[tuple[str | NotWalked, bool]]:
    from . import parallel

    return parallel.expand(paths)


def block_for(kernel: Kernel, given: int | None, model: str) -> tuple[int | None, str]:
    """The block size to evaluate at and where it came from: the given one, none for the llvm
    model (its flat workgroup range), else the size the kernel declares (or the largest)."""
    from ..policy.checks import declared_block
    from ..targets import MAX_WORKGROUP_SIZE

    if given is not None:
        return given, "given"
    if model == "llvm":
        return None, "flat workgroup range"
    size, source = declared_block(kernel)
    if size is None:
        return MAX_WORKGROUP_SIZE, f"default {MAX_WORKGROUP_SIZE}"
    return size, source.lstrip(".")


def result_record(
    occ: Occupancy,
    next_step: dict[str, Any] | None,
    hardware: dict[str, Any] | None = None,
    place: dict[str, Any] | None = None,
    **where: Any,
) -> dict[str, Any]:
    """One JSON result: where the kernel is, its record, its next step and, for a hip step, what
    the hw model says the same shed gains (``next_step_hardware``, amdocc.models.nextstep), and
    where the registers the step sheds are live (``next_step_where``, amdocc.app.place; null
    unless asked)."""
    out = dict(where)
    out.update(occ.as_dict())
    out["next_step"] = next_step
    out["next_step_hardware"] = hardware
    out["next_step_where"] = place
    return out


@dataclass(frozen=True)
class OccupancyOptions:
    """What ``occupancy_file`` needs to evaluate one file (picklable, for a worker process):
    the selection (target, device, kernel pattern, what-if), the launch (block and dynamic LDS;
    None: the kernel's declared size or recorded launch, and 0), the model and amdocc.occupancy's
    model options, the mode of kernels whose code object does not record it ("wgp", "cu"), and
    whether to locate a register next step in the machine code (``where``).
    Rows come back as dicts: the command serializes them (measured no slower than workers
    sending JSON text, on 1,281 AITER files with two processes)."""

    target: str | None
    device: str | None
    kernel: str | None
    what_if: bool
    block: int | None
    dynamic_lds: int | None  # None: not given (0, or the recorded launch's)
    model: str
    options: dict[str, Any]
    mode: str | None = None  # "wgp"/"cu": for kernels whose code object does not record it
    where: bool = False  # also say where a register next step's registers are live (libLLVM)


def not_evaluated_record(co: CodeObject, selection: Selection, model: str, kernels: int) -> Record | None:
    """The record of a code object whose ``kernels`` selected kernels are not evaluated by
    ``model`` because they would be judged on a generic target (no member named): where it is,
    its target, how many kernels and why; None when they are evaluated."""
    from .. import report
    from ..models.applicable import needs_member

    on = selection.named[1] if selection.named else co.target
    why = needs_member(on, model) if on is not None and kernels else None
    if why is None:
        return None
    return {**report.origin_record(co.origin), "target": str(co.target_id), "kernels": kernels, "reason": why}


def occupancy_file(item: FileItem, spec: OccupancyOptions) -> Iterator[Event]:
    """Yield ("results", rows of one code object), ("not_evaluated", record) for a generic code
    object no member was named for, ("error", record), ("skipped", record) and, last, ("seen",
    what the selection passed over) for one file. Rows are plain dicts, which a worker process
    can send back."""
    from ..demangle import demangle
    from ..errors import AmdoccError
    from ..integrations.launches import recorded_launch
    from ..models import occupancy, usage_of
    from ..models.nextstep import hardware_view, search_next_step
    from .place import next_step_where
    from .reading import kernel_error, read
    from .selection import Selection

    selection = Selection(spec.target, spec.device, spec.kernel, spec.what_if)
    where = selection.evaluation()
    for kind, co in read(item):
        if kind != "code_object":
            if kind == "skipped":
                selection.passed_over(co)
            yield kind, co
            continue
        rows: list[str | dict[str, Any]] = []
        chosen = selection.kernels_of(co)
        unevaluated = not_evaluated_record(co, selection, spec.model, len(chosen))
        if unevaluated is not None:
            yield "not_evaluated", unevaluated
            continue
        for kernel in chosen:
            block, source = block_for(kernel, spec.block, spec.model)
            try:
                launch = recorded_launch(
                    co.path, co.origin.chain, kernel.name, co.target_id.processor, kernel.resources.wavefront_size
                )
                dynamic_lds = spec.dynamic_lds or 0
                lds_source = "default" if spec.dynamic_lds is None else "given"
                if launch is not None and spec.model != "llvm":  # llvm: the compiler's own view
                    if spec.block is None:
                        block, source = launch.block_size, f"{launch.source} launch"
                    if spec.dynamic_lds is None:
                        dynamic_lds, lds_source = launch.dynamic_lds, f"{launch.source} launch"
                occ = occupancy(
                    kernel,
                    block_size=block,
                    dynamic_lds=dynamic_lds,
                    model=spec.model,
                    mode=spec.mode,
                    **where,
                    **spec.options,
                )
                usage = usage_of(kernel, where.get("target"), where.get("device"), spec.mode)
                step = search_next_step(usage, occ, **step_options(spec.model, spec.options))
                hardware = hardware_view(usage, occ, step)
            except AmdoccError as exc:
                yield "error", kernel_error(co, kernel, exc)
                continue
            place = next_step_where(kernel, co.origin, step) if spec.where else None
            row = result_record(
                occ,
                step,
                hardware,
                place,
                path=co.path,
                origin=co.origin.chain,
                kernel=kernel.name,
                symbol=kernel.symbol,
                demangled=demangle(kernel.name),
                target=str(co.target_id),
                block_source=source,
                dynamic_lds_source=lds_source,
                launch=None if launch is None else launch.as_dict() | {"label": launch.label},
            )
            rows.append(row)
        if rows:
            yield "results", rows
    yield "seen", selection.summary()


def step_options(model: str, options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "profile"} if model != "hip" else dict(options)


def manual_record(
    usage: KernelUsage,
    model: str,
    block: int | None,
    dynamic_lds: int | None,
    where: dict[str, Any],
    model_options: dict[str, Any],
) -> Record:
    """Manual numbers' result record, named "manual" (``dynamic_lds`` None: 0, as not given)."""
    from ..errors import UsageError
    from ..models import occupancy as evaluate
    from ..models.nextstep import hardware_view, search_next_step

    if block is None and model != "llvm":
        raise UsageError(f"manual mode needs {{block}} for the {model} model", params=("block",))
    occ = evaluate(usage, block_size=block, dynamic_lds=dynamic_lds or 0, model=model, **where, **model_options)
    step = search_next_step(usage, occ, **step_options(model, model_options))
    return result_record(
        occ,
        step,
        hardware_view(usage, occ, step),
        None,
        path=None,
        origin=None,
        kernel="manual",
        symbol=None,
        demangled="manual",
        target=usage.target.name,
        block_source="given",
        dynamic_lds_source="default" if dynamic_lds is None else "given",
        launch=None,
    )


def occupancy(
    paths: StrPath | Iterable[StrPath] | KernelUsage,
    *,
    model: str = "hip",
    block: int | None = None,
    dynamic_lds: int | None = None,
    target: str | None = None,
    device: str | None = None,
    kernel: str | None = None,
    what_if: bool = False,
    mode: str | None = None,
    jobs: int | None = 1,
    where: bool = False,
    **model_options: Any,
) -> dict[str, list[Record]]:
    """Every selected kernel of ``paths`` evaluated as ``amdocc occupancy --json`` evaluates it:
    ``{"results": [...], "skipped": [...], "errors": [...], "not_evaluated": [...]}``, the same
    records ("not_evaluated": generic code objects, when no member of their family is named). ``block`` and
    ``dynamic_lds`` default to each kernel's declared size (or a recorded launch) and 0;
    ``mode`` ("wgp" or "cu") applies to kernels whose code object does not record it;
    ``model_options`` are amdocc.occupancy's (``profile``, ``llvm_version``, ``trap_reserve``).
    A selection that matches nothing raises UsageError naming what is there. ``where``: for a
    next step that sheds registers, also say where in the machine code that many are live
    (``next_step_where``, docs/liveness.md; needs libLLVM, else its ``unknown`` says so).

    Manual mode: ``paths`` may instead be a KernelUsage (amdocc.models.manual's numbers), which
    is evaluated on its processor at ``block`` as ``amdocc occupancy --vgprs ... --json``
    prints it (``{"results": [one record], "skipped": [], "errors": []}``)."""
    from ..errors import UsageError
    from ..models.usage import KernelUsage
    from . import parallel
    from .selection import Selection

    if isinstance(paths, KernelUsage):
        if where:
            raise UsageError("{where} needs code to look at: manual numbers have none", params=("where",))
        where_at = {"target": target, "device": device, "what_if": what_if}
        return {
            "results": [manual_record(paths, model, block, dynamic_lds, where_at, model_options)],
            "skipped": [],
            "errors": [],
        }

    selection = Selection(target, device, kernel, what_if)  # a target and device that disagree: refused
    files = parallel.expand(path_list(paths))
    spec = OccupancyOptions(target, device, kernel, what_if, block, dynamic_lds, model, model_options, mode, where)
    out: dict[str, list[Record]] = {"results": [], "skipped": [], "errors": [], "not_evaluated": []}
    jobs = parallel.jobs_for(jobs, len(files))
    for kind, value in parallel.run(files, occupancy_file, spec, jobs, isolated=where):
        if kind == "seen":
            selection.merge(value)
        elif kind in ("error", "skipped", "not_evaluated"):
            out["errors" if kind == "error" else kind].append(value)
        else:
            out["results"].extend(value)
    if not out["results"] and not selection.matched:
        raise selection.nothing_selected_error()
    if not out["results"] and out["not_evaluated"] and not out["errors"]:
        raise UsageError(f"no kernel evaluated: {out['not_evaluated'][0]['reason']}")
    return out
