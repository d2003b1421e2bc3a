"""isa: every kernel's machine code, decoded by LLVM, with its control flow, loops, spills and
instruction mix (``amdocc isa``).

The per-file worker ``isa_file`` yields one record per kernel in the JSON contract's form
(docs/isa.md), so a worker process can send it back. A kernel whose code cannot be read (a symbol
outside its section, a truncated ``.text``) is an error record naming the file and the offset;
the rest of the file is still read. No libLLVM at all is :class:`amdocc.isa.LlvmUnavailable`
(exit status 3), raised, not recorded: nothing can be answered without one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..errors import Origin
    from .reading import Event, FileItem, Record


@dataclass(frozen=True)
class IsaOptions:
    """``target`` keeps code objects that run on that processor, ``kernel`` (a regex) the kernels
    that match; ``summary`` leaves the instruction list out (``"instructions": null``); ``json``
    makes each kernel's record compact JSON bytes in the worker (what the command line prints:
    cheaper to send back from a worker process than the records); ``lines`` False leaves source
    lines out of the records (the text summary, which prints none, needs no line table read)."""

    target: str | None = None
    kernel: str | None = None
    summary: bool = False
    json: bool = False
    lines: bool = True


def warm_up() -> None:
    """Import the analysis and load its tables (def/use rules, the mix classes) once, before the
    workers are forked, so that each worker does not spend its first kernel on them."""
    from ..isa import analysis  # noqa: F401 - every worker's analysis
    from ..isa.semantics import table

    table()


def kernel_record(co: CodeObject, kernel: Kernel, summary_only: bool = False, lines: bool = True) -> Record:
    """One kernel of a code object as ``amdocc isa --json`` prints it (``lines`` False: without
    source lines)."""
    return isa_kernel(kernel, co.origin, summary_only, lines)


def kernel_json(co: CodeObject, kernel: Kernel, summary_only: bool = False, lines: bool = True) -> bytes:
    """:func:`kernel_record` as the compact JSON ``amdocc isa --json`` prints, the instruction
    rows written straight as JSON text (no dict per row) and set into the record's text."""
    from .. import report

    rows: list[str | None] = []
    record = isa_kernel(kernel, co.origin, summary_only, lines, rows_json=rows)
    text = report.compact_json(record, plain=True)
    if summary_only or rows[0] is None:
        return text
    # No JSON string holds an unescaped quote, so this is the record's own key, its value [].
    empty = b'"instructions":[],'
    at = text.index(empty) + len(empty) - 3
    return b"".join((text[:at], rows[0].encode("ascii"), text[at + 2 :]))  # the rows copied once more, not twice


def isa_kernel(
    kernel: Kernel,
    origin: Origin | None = None,
    summary_only: bool = False,
    lines: bool = True,
    rows_json: list[str | None] | None = None,
) -> Record:
    """One :class:`~amdocc.codeobject.Kernel`'s record (as in :func:`isa`); ``origin`` (where its
    code object came from) names the file in the record and in errors. ``rows_json``: a list
    that gets the instruction rows as JSON text (None when they must go through the encoder),
    the record's ``instructions`` then empty when they are there."""
    from .. import report
    from ..errors import Origin as _Origin
    from ..isa.analysis import analyse, instruction_rows, instruction_rows_json, summary

    where = origin or _Origin(f"<code object of {kernel.name}>")
    isa = analyse(kernel, where, lines=lines)
    code = isa.code
    rows: list[dict[str, object]] | None = None
    if not summary_only:
        text = instruction_rows_json(isa) if rows_json is not None else None
        if rows_json is not None:
            rows_json.append(text)
        rows = [] if text is not None else instruction_rows(isa)
    return {
        **report.origin_record(where),
        "target": str(kernel.target_id),
        "processor": kernel.target_id.processor,
        "kernel": kernel.name,
        "symbol": kernel.symbol,
        "wavefront_size": code.wavefront_size,
        "disassembler": {**isa.disassembler, "processor": code.processor, "features": code.features},
        "extent": {
            "address": code.address,
            "bytes": len(code.code),
            "file_offset": code.file_offset,
            "inferred": code.inferred,
            "notes": list(code.notes),
        },
        "instructions": rows,
        "summary": summary(isa),
    }


def isa_file(item: FileItem, options: IsaOptions) -> Iterator[Event]:
    """Yield ("kernel", record), ("skipped", record), ("error", record) and, last, ("seen", what
    the filters passed over, and the code objects and relocatable device code met) for one file."""
    from ..errors import AmdoccError, TableError
    from ..isa.libllvm import LlvmUnavailable
    from .reading import kernel_error, read
    from .selection import Selection

    selection = Selection(options.target, None, options.kernel, what_if=None)
    for kind, x in read(item):
        if kind != "code_object":
            if kind == "skipped":
                selection.passed_over(x)
            yield kind, x
            continue
        if not selection.runs_here(x):
            continue
        for kernel in x.kernels:
            if not selection.wants(kernel):
                continue
            try:
                record: Record | bytes = (
                    kernel_json(x, kernel, options.summary, options.lines)
                    if options.json
                    else kernel_record(x, kernel, options.summary, options.lines)
                )
            except (LlvmUnavailable, TableError):  # not this kernel's fault: the whole run stops
                raise
            except AmdoccError as exc:
                yield "error", kernel_error(x, kernel, exc)
                continue
            yield "kernel", record
    yield "seen", selection.summary()


def isa(
    paths: StrPath | Iterable[StrPath],
    *,
    target: str | None = None,
    kernel: str | None = None,
    summary: bool = False,
    jobs: int | None = 1,
) -> dict[str, list[Record]]:
    """Every kernel in ``paths`` as ``amdocc isa --json`` prints it: ``{"kernels": [...],
    "skipped": [...], "errors": [...]}``. ``target`` keeps the code objects that can run on that
    processor, ``kernel`` (a regex) the kernels whose name matches; ``summary`` leaves out each
    kernel's instruction list. No kernel to show (a filter that matches nothing, no code object,
    only relocatable device code) raises UsageError naming what is there; no libLLVM with the
    AMDGPU disassembler raises LlvmUnavailable (exit status 3)."""
    from ..errors import UsageError
    from . import parallel
    from .selection import Selection

    selection = Selection(target, None, kernel, what_if=None)
    files = parallel.expand(path_list(paths))
    out: dict[str, list[Record]] = {"kernels": [], "skipped": [], "errors": []}
    options = IsaOptions(target, kernel, summary)
    for kind, value in parallel.run(files, isa_file, options, parallel.jobs_for(jobs, files), isolated=True):
        if kind == "seen":
            selection.merge(value)
        else:
            out[{"kernel": "kernels", "skipped": "skipped", "error": "errors"}[kind]].append(value)
    if not out["kernels"] and not out["errors"]:
        raise UsageError(selection.nothing_selected())
    return out
