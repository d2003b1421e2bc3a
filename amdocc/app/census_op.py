"""census: one report for a whole tree or wheel, and two releases compared kernel by kernel
(``amdocc census PATH`` and ``amdocc census OLD NEW``).

A census row per kernel (``kernel_row``, the columns of amdocc.census.COLUMNS) is made by the
per-file worker ``census_file``; ``census_rows`` feeds a file's rows, numbered as
amdocc.identity numbers copies, to a Summary and to sinks (CSV, Parquet, a release's Rows).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..caches import Memo, cached
from ..demangle import demangle
from ..identity import KernelId
from ..models.compat import device_id
from ..policy.checks import declared_block, model_key

if TYPE_CHECKING:
    from ..census import Summary
    from ..codeobject import CodeObject, Kernel
    from ..identity import Numbering
    from ..isa.analysis import KernelIsa
    from ..policy.checks import Settings
    from .reading import Event, FileItem
    from .selection import Selection

    # What census_file needs: (the tree's root or None, block, dynamic LDS, the Selection's
    # arguments, and which kernels' spills in loops to read: CensusOptions.isa).
    CensusSpec = tuple[str | None, int | None, int, tuple[str | None, str | None, str | None, bool], str | None]


@dataclass(frozen=True)
class CensusOptions:
    """How a census evaluates each kernel and which kernels it takes: ``block`` None is each
    kernel's declared size; target/device/kernel/what_if select as amdocc.app.selection does.
    ``isa``: which kernels get the spill-in-loop columns (amdocc.census.ISA_COLUMNS), read from
    their machine code: "all", "spilling" (those whose metadata counts a spill; the others, none)
    or None (no such columns, and the ISA layer is not loaded)."""

    block: int | None = None
    dynamic_lds: int = 0
    target: str | None = None
    device: str | None = None
    kernel: str | None = None
    what_if: bool = False
    jobs: int | None = 1
    isa: str | None = None


class Counter(Protocol):
    """A progress display over one large file: shown the kernels read so far, closed at the end."""

    def show(self, kernels: int) -> None: ...

    def close(self) -> None: ...


class Sink(Protocol):
    """Where census rows go besides the summary: a CSV or Parquet file, or a release's rows."""

    def add(self, row: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


def census_rows(
    path: str,
    options: CensusOptions,
    selection: Selection,
    summary: Summary,
    sinks: Iterable[Sink] = (),
    counter: Counter | None = None,
) -> None:
    """Feed every kernel of ``path`` the selection keeps (a row each) to ``summary`` and ``sinks``,
    each row numbered as amdocc.identity numbers copies (results come in file order). Inside one
    large file (a wheel, a fat library) ``counter`` is shown the kernels read so far."""
    from ..identity import Numbering
    from . import parallel

    root = path if path != "-" and os.path.isdir(path) else None
    files = parallel.expand([path])
    o = options
    spec: CensusSpec = (root, o.block, o.dynamic_lds, (o.target, o.device, o.kernel, o.what_if), o.isa)
    # Over a tree the runner counts files; inside one large file (a wheel, a fat library) count kernels.
    if len(files) != 1:
        counter = None
    number = Numbering()
    jobs = parallel.jobs_for(o.jobs, files)
    sinks = list(sinks)
    # Workers without sinks send no rows back: each file's rows are summarised where they are
    # read, and only what the summary keeps comes back to be numbered (a wheel's 80,000 rows are
    # not sent between processes to be counted). One process streams rows as it reads them, so
    # the counter moves kernel by kernel.
    events = (
        parallel.run(files, summarised_file, (spec, summary.top), jobs)
        if jobs > 1 and not sinks
        else parallel.run(files, census_file, spec, jobs, isolated=o.isa is not None)
    )
    for kind, value in events:
        if kind == "row":
            value["copy"] = number.copy(value["member"], value["target"], value["kernel"])
            summary.add(value)
            for sink in sinks:
                sink.add(value)
            if counter is not None:
                counter.show(summary.kernels)
        elif kind == "summary":
            add_summary(summary, number, *value)
            if counter is not None:
                counter.show(summary.kernels)
        elif kind == "code_object":
            summary.add_code_object()
        elif kind == "seen":
            selection.merge(value)
        elif kind == "skipped":
            summary.add_skipped(value["reason"])
        else:
            summary.add_error(value["path"], value["error"])
    if counter is not None:
        counter.close()


def add_summary(summary: Summary, number: Numbering, part: Summary, copies: dict[tuple[str, str, str], int]) -> None:
    """Merge ``part``, the summary of one file's rows numbered within that file (``copies``: how
    many rows each (member, target, kernel) has there), into ``summary``, whose rows ``number``
    numbered: the rows ``part`` keeps are numbered after the copies read before them."""
    for row in part.kept_rows():
        row["copy"] += number.copies(row["member"], row["target"], row["kernel"])
    number.add(copies)
    summary.merge(part)


def summarised_file(item: FileItem, spec: tuple[CensusSpec, int]) -> Iterator[Event]:
    """census_file's events for one file with its rows summarised: every other event as it
    comes, then ("summary", (a Summary of the file's rows, numbered within the file; how many
    rows each (member, target, kernel) has))."""
    from ..census import Summary
    from ..identity import Numbering

    census_spec, top = spec
    part = Summary(top=top)
    number = Numbering()
    for kind, value in census_file(item, census_spec):
        if kind == "row":
            value["copy"] = number.copy(value["member"], value["target"], value["kernel"])
            part.add(value)
        else:
            yield kind, value
    yield "summary", (part, number.counts())


def census_file(item: FileItem, spec: CensusSpec) -> Iterator[Event]:
    """Yield ("row", dict) per kernel, ("code_object", None), ("skipped", record) and ("error",
    record) for one file, and last ("seen", what the selection passed over)."""
    from ..census import member_of
    from ..errors import AmdoccError, TableError
    from .reading import item_path, kernel_error
    from .selection import Selection, selected_in

    root, block, dynamic_lds, chosen, isa = spec
    selection = Selection(*chosen)
    where = selection.evaluation()
    source = item_path(item)  # a large file is cut into parts
    relative = os.path.relpath(source, root) if root else ""
    for kind, value in selected_in(item, selection):
        if kind == "code_object":
            head = code_object_columns(value, member_of(relative, value.origin.hops), selection)
            yield kind, None
        elif kind == "kernel":
            co, kernel = value
            try:
                row = _row(head, kernel, block, dynamic_lds, where)
                if isa is not None:
                    row.update(isa_columns(kernel, isa))
                yield "row", row
            except TableError:  # a damaged table is no kernel's fault: the whole run stops
                raise
            except AmdoccError as exc:
                yield "error", kernel_error(co, kernel, exc)
        else:
            yield kind, value


def isa_columns(kernel: Kernel, which: str) -> dict[str, Any]:
    """The spill-in-loop and, when every kernel is read (``which`` "all"), the live-register
    columns of one kernel (amdocc.census.ISA_COLUMNS), read as ``which`` says (CensusOptions.isa)
    from one analysis of its machine code; all None, with why in ``spills_in_loops_unknown`` and
    ``max_live_unknown``, where they cannot be read."""
    from ..policy.loop_spills import SpillsUnknown, analysed, asked, loop_spills, spills_metadata_free

    blank = {"spill_stores_in_loops": None, "spill_reloads_in_loops": None, "spills_in_loops_line": None}
    live = live_columns(None, None)
    if not asked(kernel, which):
        return {**blank, "spills_in_loops_unknown": None, **live}
    isa, why = None, None
    if which == "all" or not spills_metadata_free(kernel):
        try:
            isa = analysed(kernel)
        except SpillsUnknown as exc:
            why = exc.message
    if which == "all":
        live = live_columns(isa, why)
    if why is not None:
        return {**blank, "spills_in_loops_unknown": why, **live}
    try:
        found = loop_spills(kernel, isa=isa)
    except SpillsUnknown as exc:
        return {**blank, "spills_in_loops_unknown": exc.message, **live}
    return {
        "spill_stores_in_loops": found.stores,
        "spill_reloads_in_loops": found.reloads,
        "spills_in_loops_line": found.line,
        "spills_in_loops_unknown": None,
        **live,
    }


def live_columns(isa: KernelIsa | None, why: str | None) -> dict[str, Any]:
    """The live-register columns of one analysed kernel: ``max_live_vgpr``/``agpr``/``sgpr``
    (amdocc.isa.liveness, RGA's live-in ∪ live-out count), the VGPR peak's first stretch as
    ``max_live_vgpr_at`` ("0x1a40-0x1b20") and its source lines (``max_live_vgpr_line``), or all
    None with ``max_live_unknown`` saying why (None too when the kernel was not read: ``isa`` and
    ``why`` both None)."""
    from .place import source_span

    blank = dict.fromkeys(("max_live_vgpr", "max_live_agpr", "max_live_sgpr", "max_live_vgpr_at", "max_live_vgpr_line"))
    if isa is None:
        return {**blank, "max_live_unknown": why}
    live = isa.liveness
    if live is None or live.unknown is not None or live.max_live is None:
        return {**blank, "max_live_unknown": live.unknown if live is not None else "liveness not computed"}
    at, line = None, None
    peak = next((p for p in live.peaks if p.register_class == "vgpr"), None)
    if peak is not None and peak.stretches:
        first = peak.stretches[0]
        at = span(first.first, first.last)
        if isa.lines:
            index = {ins.address: i for i, ins in enumerate(isa.instructions)}
            lines = sorted({x for x in isa.lines[index[first.first] : index[first.last] + 1] if x})
            line = source_span(lines) or None
    return {
        "max_live_vgpr": live.max_live.vgpr,
        "max_live_agpr": live.max_live.agpr,
        "max_live_sgpr": live.max_live.sgpr,
        "max_live_vgpr_at": at,
        "max_live_vgpr_line": line,
        "max_live_unknown": None,
    }


def span(first: int, last: int) -> str:
    """ "0x1a40-0x1b20", or "0x1a40" for one instruction."""
    return f"{first:#x}" if first == last else f"{first:#x}-{last:#x}"


def code_object_columns(co: CodeObject, member: str, selection: Selection) -> dict[str, Any]:
    """The columns every row of one code object shares, in COLUMNS order: where it lives and the
    processor it is evaluated on (the Selection's evaluated_as)."""
    return {
        "member": member,
        "path": co.path,
        "origin": co.origin.chain,
        **selection.evaluated_as(co.target_id, co.target),
    }


def kernel_row(
    co: CodeObject,
    kernel: Kernel,
    member: str,
    place: dict[str, Any],
    given_block: int | None,
    dynamic_lds: int,
    where: dict[str, Any],
) -> dict[str, Any]:
    """One kernel as a census row (amdocc.census.COLUMNS), evaluated as ``place`` says (the
    Selection's evaluated_as) with amdocc.occupancy's ``where`` keywords."""
    head = {"member": member, "path": co.path, "origin": co.origin.chain, **place}
    return _row(head, kernel, given_block, dynamic_lds, where)


def _row(
    head: dict[str, Any], kernel: Kernel, given_block: int | None, dynamic_lds: int, where: dict[str, Any]
) -> dict[str, Any]:
    declared = declared_block(kernel)
    named = device_id(where.get("target"), where.get("device"))
    target = named[1] if named else kernel.target
    question = (declared, given_block, dynamic_lds)
    # Kernels read from the same inputs (on the same processor, asked the same) have the same row
    # but for their names and findings: it is worked out once (policy.checks.model_key says why).
    inputs = kernel.inputs
    seen = None
    body = None
    if inputs is not None and target is not None:
        seen = (inputs, kernel.producer, kernel.target_id, kernel.launchable, target, question, tuple(where.items()))
        try:
            body = _BODIES.get(seen)
        except TypeError:  # a where that cannot be a key
            seen = None
    if body is None:
        key = model_key(kernel, target, question, where)
        answers = _MODEL_COLUMNS.get(key) if key is not None else None
        if answers is None:
            answers = _model_columns(kernel, declared, given_block, dynamic_lds, where)
            if key is not None:
                _MODEL_COLUMNS.put(key, answers)
        body = _body(kernel, answers)
        if seen is not None and key is not None:
            _BODIES.put(seen, body)
    counts, tail, unmodelled = body
    name = kernel.name
    return {
        **head,
        "kernel": name,
        "demangled": demangle(name),
        "symbol": kernel.symbol,
        **counts,
        "findings": ";".join(f.code for f in kernel.findings if f.severity != "info") or None,
        **tail,
        "unmodelled_by": dict(unmodelled),  # not a column: the same, by model, for the summary
    }


def _body(
    kernel: Kernel, answers: tuple[dict[str, Any], str | None, dict[str, str], str | None]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """What a row holds besides its names and findings: the columns from wave to cannot_launch,
    those from problem to unmodelled, and the models that could not answer, with why."""
    r = kernel.resources
    sgpr_spills, vgpr_spills = r.spills
    columns, problem, unmodelled, unmodelled_text = answers
    counts = {
        "wave": r.wavefront_size,
        "vgprs": r.vgprs,
        "vgprs_allocated": r.vgprs_allocated,
        "arch_vgprs": r.arch_vgprs,
        "agprs": r.agprs,
        "sgprs": r.sgprs,
        "sgprs_allocated": r.sgprs_allocated,
        "lds": r.lds,
        "scratch": r.scratch,
        "vgpr_spills": vgpr_spills,
        "sgpr_spills": sgpr_spills,
        "dynamic_stack": r.uses_dynamic_stack,
        "max_flat_workgroup_size": r.max_flat_workgroup_size,
        **columns,
    }
    tail = {"problem": problem, "copy": 0, "unmodelled": unmodelled_text}  # copy: numbered by census_rows
    return counts, tail, unmodelled


# The columns the models answer, shared by kernels that differ only in name (policy.checks.model_key):
# a library's thousands of instances of one template are evaluated once.
_MODEL_COLUMNS: Memo[Hashable, tuple[dict[str, Any], str | None, dict[str, str], str | None]] = Memo(
    f"{__name__}._MODEL_COLUMNS", 1 << 16
)
# A row's body (see _body) by the kernel's inputs and how it is asked: one lookup per row. Smaller
# than _MODEL_COLUMNS: a body is a whole row's worth of values.
_BODIES: Memo[Hashable, tuple[dict[str, Any], dict[str, Any], dict[str, str]]] = Memo(f"{__name__}._BODIES", 1 << 15)


def _model_columns(
    kernel: Kernel, declared: tuple[int | None, str], given_block: int | None, dynamic_lds: int, where: dict[str, Any]
) -> tuple[dict[str, Any], str | None, dict[str, str], str | None]:
    """The row's columns from block_size to cannot_launch, in order; its "problem"; the models
    that could not answer, with why; and those as the "unmodelled" column says them."""
    from ..models import occupancy
    from ..models.applicable import ModelUnavailable
    from ..policy.checks import LOCAL_COUNTS, evaluate
    from .occupancy_op import block_for

    # Asked once per census key, which already tells apart all the policy's key would: no sharing there.
    verdict = evaluate(kernel, _settings(dynamic_lds), where=where, declared=declared, shared=False)
    found = {v.rule: v for v in verdict.violations}
    block, source = block_for(kernel, given_block, "hip")
    # A model that lacks a fact for this processor blanks its own columns, with why; the row stays.
    unmodelled = {n.model: n.reason for n in verdict.not_evaluated if n.model}
    occ = None
    if not kernel.launchable and not where.get("what_if"):
        unmodelled["hip"] = LOCAL_COUNTS  # a relocatable: its counts are local (the row stays)
    elif "mode" not in found:
        try:
            occ = occupancy(kernel, block_size=block, dynamic_lds=dynamic_lds, **where)
        except ModelUnavailable as exc:
            unmodelled[exc.model] = exc.message
        if occ is not None and occ.no_answer:  # its runtime does not run the processor: blank, not 0
            unmodelled[occ.model] = occ.warnings[-1]
            occ = None
    blocks = None if occ is None or occ.error else occ.blocks_per_cu
    unit = None if occ is None else occ.unit
    columns = {
        "block_size": block,
        "block_source": source,
        "blocks_per_cu": blocks,
        "blocks_per_wgp": blocks if unit == "WGP" else None,
        "unit": unit,
        "waves_per_simd": None if occ is None else (0 if occ.error else occ.waves_per_simd),
        "occupancy_fraction": None if occ is None else (0.0 if occ.error else occ.occupancy_fraction),
        "limiter": None if occ is None else occ.limiter,
        "launch_checked": not any(n.rule == "launch" and n.model is None for n in verdict.not_evaluated),
        "cannot_launch": found["launch"].value if "launch" in found else None,
    }
    text = " | ".join(f"{m}: {why}" for m, why in sorted(unmodelled.items())) or None
    return columns, found["mode"].message if "mode" in found else None, unmodelled, text


@cached(maxsize=64)
def _settings(dynamic_lds: int) -> Settings:
    """The rules a census row reports (launch and mode), at its dynamic LDS."""
    from ..policy.checks import Settings

    return Settings(rules=("launch", "mode"), dynamic_lds=dynamic_lds)


class Rows:
    """Census rows of one release by their identity (amdocc.identity: member, target, kernel, copy)."""

    def __init__(self) -> None:
        self.by_id: dict[KernelId, dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> None:
        self.by_id[KernelId(row["member"], row["target"], row["kernel"], row["copy"])] = row

    def close(self) -> None:
        pass


def facts(row: dict[str, Any]) -> dict[str, Any]:
    """A census row in the shape `amdocc diff` compares."""
    from .compare import facts as compared

    return compared(
        vgpr=row["vgprs"],
        agpr=row["agprs"],
        sgpr=row["sgprs"],
        lds=row["lds"],
        scratch=row["scratch"],
        spills=(row["sgpr_spills"], row["vgpr_spills"]),
        blocks_per_cu=row["blocks_per_cu"],
        unit=row["unit"],
        limiter=row["limiter"],
        spills_in_loops=_in_loops(row),
        max_live_vgpr=row.get("max_live_vgpr"),
        max_live_vgpr_at=row.get("max_live_vgpr_at"),
    )


def _in_loops(row: dict[str, Any]) -> int | None:
    stores, reloads = row.get("spill_stores_in_loops"), row.get("spill_reloads_in_loops")
    return None if stores is None or reloads is None else stores + reloads


def compare_releases(
    old_path: str,
    new_path: str,
    options: CensusOptions,
    selection: Selection,
    *,
    top: int = 25,
    fail_on: Iterable[str] = (),
    mangled: bool = False,
) -> dict[str, Any]:
    """Two releases compared kernel by kernel (matched by member, kernel name, target and copy; a
    kernel now in another member is reported as moved): the record ``census OLD NEW --json``
    prints, plus both releases' summaries under "old_summary" and "new_summary". ``fail_on``
    names the regression kinds (amdocc.app.compare.KINDS) that fail; ``mangled`` shapes the
    names in the "cells" of each change."""
    from ..census import Summary
    from ..demangle import display
    from ..identity import function_of, match
    from .compare import cells, failed_kinds, loop_spills_asked, regressions, same

    fail_on = list(fail_on)
    # Spills in loops: read for every kernel when the gate watches them or --isa asks, else for
    # the kernels whose metadata counts a spill (compare.loop_spills_asked).
    options = dataclasses.replace(options, isa=loop_spills_asked(fail_on, options.isa == "all"))
    sides: list[tuple[Rows, dict[str, Any]]] = []
    for path in (old_path, new_path):
        rows, summary = Rows(), Summary(top=top)
        census_rows(path, options, selection, summary, [rows])
        sides.append((rows, summary.as_dict()))
    (old, old_summary), (new, new_summary) = sides
    # On one named processor, code rebuilt for another of its targets pairs (amdocc.identity).
    named = selection.named is not None
    paired = match(
        old.by_id,
        new.by_id,
        processor=(lambda row: row["processor"]) if named else None,
        function=lambda row: function_of(row["kernel"]),
    )
    changes: list[dict[str, Any]] = []
    matched = 0
    for pair in paired.pairs():
        was, now, a, b = pair.old, pair.new, pair.old_value, pair.new_value
        matched += 1
        before, after = facts(a), facts(b)
        moved = pair.by == "moved"
        if same(before, after) and a["block_size"] == b["block_size"] and pair.by == "identity":
            continue
        worse = regressions(before, after)
        gate = [k for k in worse if k in fail_on]
        member = now.location or "-"
        if moved:
            member += f" (moved from {was.location or 'the file itself'})"
        elif pair.by == "target":
            member += f" (rebuilt; was {was.target})"
        elif pair.by == "signature":
            member += f" (signature changed; was {display(was.name, mangled)})"
        if now.copy or was.copy:
            member += f" copy {now.copy + 1}"
        changes.append(
            {
                "member": now.location,
                "kernel": now.name,
                "demangled": b["demangled"],
                "target": now.target,
                "copy": now.copy,
                "moved_from": {"member": was.location, "copy": was.copy} if moved else None,
                "matched_by": pair.by,
                "was": None
                if pair.by == "identity"
                else {"member": was.location, "kernel": was.name, "target": was.target, "copy": was.copy},
                "old": before,
                "new": after,
                "old_block": a["block_size"],
                "new_block": b["block_size"],
                "regressions": worse,
                "fails": gate,
                "cells": [
                    member,
                    display(now.name, mangled),
                    now.target,
                    *cells(before, after, a["block_size"], b["block_size"], worse, gate),
                ],
            }
        )
    ident = ("member", "kernel", "demangled", "target", "copy")
    added = [{k: row[k] for k in ident} for _, row in paired.added]
    removed = [{k: row[k] for k in ident} for _, row in paired.removed]
    return {
        "old": old_path,
        "new": new_path,
        "fail_on": fail_on,
        "matched": matched,
        "moved": len(paired.moved),
        "changes": changes,
        "regressed": sum(bool(c["regressions"]) for c in changes),
        "failing": sum(bool(c["fails"]) for c in changes),
        "failed_kinds": failed_kinds(changes),
        "added": added,
        "removed": removed,
        "old_summary": old_summary,
        "new_summary": new_summary,
    }


def census(
    path: str | os.PathLike[str],
    *,
    block: int | None = None,
    dynamic_lds: int = 0,
    target: str | None = None,
    device: str | None = None,
    kernel: str | None = None,
    what_if: bool = False,
    top: int = 25,
    jobs: int | None = 1,
    rows: list[dict[str, Any]] | None = None,
    isa: bool = False,
) -> dict[str, Any]:
    """A census of every selected kernel in ``path`` (a library, a directory tree, a wheel, or
    any file amdocc reads): the summary ``amdocc census --json`` prints ({"path", "files",
    "code_objects", "kernels", "targets", ...}). Pass a list as ``rows`` to receive every row
    too (amdocc.census.COLUMNS, plus "unmodelled_by"). ``isa`` adds to each row the columns
    read from its machine code (amdocc.census.ISA_COLUMNS: spill dwords stored and reloaded
    inside loops; needs a libLLVM) and to each target the kernels spilling in loops. A selection
    that matches nothing raises UsageError naming what is there."""
    from ..census import Summary
    from .selection import Selection

    path = os.fspath(path)
    selection = Selection(target, device, kernel, what_if)
    summary = Summary(top=top)
    sinks = [_ListSink(rows)] if rows is not None else []
    options = CensusOptions(block, dynamic_lds, target, device, kernel, what_if, jobs, "all" if isa else None)
    census_rows(path, options, selection, summary, sinks)
    if not selection.matched and not selection.nothing_to_evaluate():
        raise selection.nothing_selected_error(path)
    return {"path": path, **summary.as_dict()}


def census_compare(
    old: str | os.PathLike[str],
    new: str | os.PathLike[str],
    *,
    block: int | None = None,
    dynamic_lds: int = 0,
    target: str | None = None,
    device: str | None = None,
    kernel: str | None = None,
    what_if: bool = False,
    fail_on: Iterable[str] = (),
    jobs: int | None = 1,
    isa: bool = False,
) -> dict[str, Any]:
    """Two releases compared kernel by kernel: the record ``amdocc census OLD NEW --json``
    prints ("changes", "added", "removed", "failing", ...); ``fail_on`` names the regression
    kinds that count as failing ("occupancy", "spills", "scratch", "vgpr", "lds",
    "spills-in-loops"). Spills in loops are read from the machine code of kernels whose
    metadata counts a spill, and of every kernel with ``isa`` or when ``fail_on`` names them."""
    from .compare import kinds_named
    from .selection import Selection

    old, new = os.fspath(old), os.fspath(new)
    selection = Selection(target, device, kernel, what_if)
    options = CensusOptions(block, dynamic_lds, target, device, kernel, what_if, jobs, "all" if isa else None)
    result = compare_releases(old, new, options, selection, fail_on=kinds_named(fail_on))
    if not selection.matched and not selection.nothing_to_evaluate():
        raise selection.nothing_selected_error(f"{old} and {new}")
    return {k: v for k, v in result.items() if k not in ("old_summary", "new_summary")}


class _ListSink:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    def close(self) -> None:
        pass
