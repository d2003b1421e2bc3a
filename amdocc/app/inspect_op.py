"""inspect: every code object found in some files, with its kernels, resources (both views) and
findings (``amdocc inspect``).

The per-file worker ``inspect_file`` yields each code object already in its output form, so a
worker process can send it back and one process streams a multi-GB file as it reads it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import report
from ..containers import Limits
from .reading import StrPath, path_list, read, sequence
from .selection import Selection

if TYPE_CHECKING:
    from ..codeobject import CodeObject
    from .reading import Event, FileItem, Record


@dataclass(frozen=True)
class InspectOptions:
    """How ``inspect_file`` reports: ``mode`` "json" (compact JSON of amdocc.report's record),
    "lines" (its --json-lines form), "records" (the same record as plain data) or "text" (by
    ``text``, a picklable function of a CodeObject); ``fields`` limits the kernel fields;
    ``target`` and ``kernel`` keep the code objects that run there and the kernels that match;
    ``limits`` bounds every file read (the environment's, read once for the run: reading six
    variables per file cost 8-16 us of a file's ~230 on a corpus of small code objects)."""

    mode: str = "records"
    fields: tuple[str, ...] | None = None
    target: str | None = None
    kernel: str | None = None
    text: Callable[[CodeObject], str] | None = None
    limits: Limits = field(default_factory=Limits.from_env)


def inspect_file(item: FileItem, options: InspectOptions) -> Iterator[Event]:
    """Yield ("code_object", its form: bytes for "json" and "lines", a dict for "records", the
    text renderer's str for "text"), ("skipped", record), ("error", record) and, last when
    the target or kernel filters, ("seen", what the filters passed over) for one file.

    Text, not objects, so a worker process can send them back; in one process they stream, so
    a multi-GB file is printed as it is read.
    """
    mode, fields, target, kernel = options.mode, options.fields, options.target, options.kernel
    # Without --target or --kernel everything is shown, and nothing passed over needs counting.
    selection = Selection(target, None, kernel, what_if=None) if target or kernel else None
    for kind, x in read(item, options.limits):
        if kind != "code_object":
            yield kind, x
            continue
        if selection is not None:
            if not selection.runs_here(x):
                continue
            kernels = [k for k in x.kernels if selection.wants(k)]
            if kernel and not kernels:
                continue
            if len(kernels) != len(x.kernels):
                x = dataclasses.replace(x, kernels=kernels)
        text: bytes | str | dict[str, Any]
        if mode == "lines":
            assert fields is not None, "_output_mode always names the fields of --json-lines"
            text = report.json_lines(x, fields)
        elif mode == "json":
            text = report.compact_json(report.code_object_record(x, fields), report.metadata_plain(x))
        elif mode == "records":
            text = json.loads(report.compact_json(report.code_object_record(x, fields), report.metadata_plain(x)))
        else:
            assert options.text is not None, "the text mode names its renderer"
            text = options.text(x)
        yield "code_object", text
    if selection is not None:
        yield "seen", selection.summary()


def inspect(
    paths: StrPath | Iterable[StrPath],
    *,
    target: str | None = None,
    kernel: str | None = None,
    fields: Iterable[str] | None = None,
    jobs: int | None = 1,
) -> dict[str, list[Record]]:
    """Every code object in ``paths`` as ``amdocc inspect --json`` prints it: ``{"code_objects":
    [...], "skipped": [...], "errors": [...]}``, the same records as plain data. ``target``
    keeps the code objects that can run on that processor, ``kernel`` (a regex) the kernels
    whose name matches; ``fields`` names the kernel fields to keep (amdocc.report.KERNEL_FIELDS).
    A filter that matches nothing raises UsageError naming what is there."""
    from . import parallel

    selection = Selection(target, None, kernel, what_if=None) if target or kernel else None
    files = parallel.expand(path_list(paths))
    chosen = tuple(sequence(fields, "fields", "kernel field names")) if fields is not None else None
    options = InspectOptions("records", chosen, target, kernel)
    out: dict[str, list[Record]] = {"code_objects": [], "skipped": [], "errors": []}
    for kind, value in parallel.run(files, inspect_file, options, parallel.jobs_for(jobs, files)):
        if kind == "seen":
            assert selection is not None, "only a filtering worker reports what it passed over"
            selection.merge(value)
        else:
            out[{"code_object": "code_objects", "skipped": "skipped", "error": "errors"}[kind]].append(value)
    if selection is not None and not out["code_objects"]:
        raise selection.nothing_selected_error()
    return out
