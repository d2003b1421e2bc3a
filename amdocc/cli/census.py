"""``amdocc census PATH`` (one report for a whole tree or wheel) and ``amdocc census OLD NEW``
(two releases compared kernel by kernel)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from .render import table

if TYPE_CHECKING:
    from ..app.reading import Event, FileItem
    from ..app.selection import Selection
    from ..census import Summary
    from ..codeobject import CodeObject, Kernel
    from ..identity import KernelId

    # What census_file needs: (the tree's root or None, --block, --dynamic-lds, the Selection's arguments).
    CensusSpec = tuple[str | None, int | None, int, tuple[str | None, str | None, str | None, bool]]


class Sink(Protocol):
    """Where census rows go besides the summary: a CSV or Parquet file, or a release's rows."""

    def add(self, row: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


DESCRIPTION = """A census of every kernel in PATH (a library, a directory tree, a wheel, or any file
amdocc reads): per kernel the member it lives in, target, wave size, VGPRs (used and allocated,
arch and AGPR), SGPRs, static LDS, scratch, spills, the hip model's workgroups per CU at the
kernel's declared block size (.reqd_workgroup_size, else .max_flat_workgroup_size; or --block),
the limiter, whether a workgroup of the declared size fits at all under every model, and the
findings. Writes the rows as CSV or Parquet and one self-contained HTML report (summary tables,
occupancy per target, limiter shares, top spillers, kernels that cannot launch), and prints a
summary.

--kernel, --target, --device and --what-if select as in every command; a census that selects
nothing exits 2 naming what is there.

With two PATHs, compares the releases OLD and NEW kernel by kernel (matched by member, kernel
name, target and copy; a kernel now in another member is reported as moved) the way
`amdocc diff` compares two builds; --fail-on makes it a gate (exit 1)."""

REPORT_KINDS = ("csv", "parquet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import args as a
    from .compare import KINDS

    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="+", metavar="PATH", help="PATH, or OLD NEW to compare two releases")
    parser.add_argument(
        "--csv", metavar="FILE", type=a.OutputFile(stdout=True), help="write one row per kernel as CSV ('-': stdout)"
    )
    parser.add_argument(
        "--parquet", metavar="FILE", type=a.OutputFile(), help="write the rows as Parquet (needs pyarrow)"
    )
    parser.add_argument(
        "--html",
        metavar="FILE",
        type=a.OutputFile(stdout=True),
        help="write the report as one self-contained HTML page ('-': stdout)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary (or the comparison) as JSON")
    a.add_block_argument(parser, "block size for occupancy (default: each kernel's declared size)")
    parser.add_argument(
        "--dynamic-lds", type=a.LdsSize(), default=0, metavar="BYTES", help="dynamic LDS per workgroup (default 0)"
    )
    a.add_kernel_argument(parser)
    a.add_target_arguments(parser)
    a.add_mangled_argument(parser, "text and HTML; CSV and JSON carry both")
    parser.add_argument(
        "--top", type=a.integer(1), default=25, metavar="N", help="spillers listed in the report (default 25)"
    )
    parser.add_argument(
        "--fail-on",
        type=a.Kinds(KINDS),
        default=None,
        metavar="KIND,...",
        help=f"OLD NEW only: regressions that exit 1: {', '.join(KINDS)}, all or none (default none)",
    )
    a.add_jobs_argument(parser)


def run(args: argparse.Namespace) -> int:
    from ..app.selection import Selection
    from ..errors import UsageError
    from . import args as a

    if len(args.paths) > 2:
        raise UsageError(f"census takes one PATH, or OLD NEW to compare, not {len(args.paths)} paths")
    a.what_if_needs_a_processor(args)
    outputs = [f"--{o} -" for o in ("csv", "html") if getattr(args, o) == "-"]
    if len(outputs) + bool(args.json) > 1:
        raise UsageError("only one of --json, --csv - and --html - may use standard output")
    text = not (args.json or outputs)
    if not (text or args.html):
        a.refuse(
            args,
            ("mangled",),
            f"names are shown only in the text and HTML reports, and "
            f"{(outputs or ['--json'])[0]} replaces the text (CSV and JSON carry both names)",
        )
    selection = Selection(args.target, args.device, args.kernel, args.what_if)
    if len(args.paths) == 2:
        given = [f"--{k}" for k in REPORT_KINDS if getattr(args, k)]
        if given:
            raise UsageError(f"{' and '.join(given)} apply to a census of one PATH, not to a comparison")
        a.refuse(args, ("top",), "lists the top spillers of a census of one PATH; a comparison lists none")
        return _compare(args, selection)
    if args.fail_on is not None:
        raise UsageError("--fail-on applies to a comparison (census OLD NEW), not to one PATH")
    if not (text or args.html or args.json):
        a.refuse(args, ("top",), f"lists spillers in the summary, and {outputs[0]} replaces it")
    if args.parquet:
        from ..census.tables import require_pyarrow

        require_pyarrow()
    return _census(args, selection)


def nothing_selected(selection: Selection, paths: str) -> int:
    """Exit status 2 with why, when no kernel was selected (the report is already out)."""
    if selection.matched:
        return 0
    print(f"amdocc: {selection.nothing_selected(paths)}", file=sys.stderr)
    return 2


# --------------------------------------------------------------------------- reading


def census_rows(
    path: str, args: argparse.Namespace, selection: Selection, summary: Summary, sinks: Iterable[Sink] = ()
) -> None:
    """Feed every kernel of ``path`` the selection keeps (a row each) to ``summary`` and ``sinks``,
    each row numbered as amdocc.identity numbers copies (results come in file order)."""
    from ..app import parallel
    from ..identity import Numbering

    root = path if path != "-" and os.path.isdir(path) else None
    files = parallel.expand([path])
    spec: CensusSpec = (root, args.block, args.dynamic_lds, (args.target, args.device, args.kernel, args.what_if))
    # Over a tree the runner counts files; inside one large file (a wheel, a fat library) count kernels.
    counter = KernelCounter() if len(files) == 1 else None
    number = Numbering()
    for kind, value in parallel.run(files, census_file, spec, parallel.jobs_for(args.jobs, len(files))):
        if kind == "row":
            value["copy"] = number(value["member"], value["target"], value["kernel"]).copy
            summary.add(value)
            for sink in sinks:
                sink.add(value)
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


class KernelCounter:
    """ "N kernels read" on stderr while one file is read, at most ten times a second, only when
    stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled, self.last, self.shown = sys.stderr.isatty(), 0.0, False

    def show(self, kernels: int) -> None:
        import time

        now = time.monotonic()
        if self.enabled and now - self.last > 0.1:
            self.last, self.shown = now, True
            sys.stderr.write(f"\r{kernels} kernels read")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


def census_file(item: FileItem, spec: CensusSpec) -> Iterator[Event]:
    """Yield ("row", dict) per kernel, ("code_object", None), ("skipped", record) and ("error",
    record) for one file, and last ("seen", what the selection passed over)."""
    from ..app.reading import kernel_error
    from ..app.selection import Selection, selected_in
    from ..census import member_of
    from ..containers import part_path
    from ..errors import AmdoccError

    root, block, dynamic_lds, chosen = spec
    selection = Selection(*chosen)
    where = selection.evaluation()
    source = item[0] if isinstance(item[0], str) else part_path(item[0])  # a large file is cut into parts
    relative = os.path.relpath(source, root) if root else ""
    for kind, value in selected_in(item, selection):
        if kind == "code_object":
            member = member_of(relative, value.origin.hops)
            place = selection.evaluated_as(value.target_id, value.target)
            yield kind, None
        elif kind == "kernel":
            co, kernel = value
            try:
                yield "row", kernel_row(co, kernel, member, place, block, dynamic_lds, where)
            except AmdoccError as exc:
                yield "error", kernel_error(co, kernel, exc)
        else:
            yield kind, value


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
    from ..demangle import demangle
    from ..models import occupancy
    from ..models.applicable import ModelUnavailable
    from ..policy.checks import Settings, declared_block, evaluate
    from .occupancy import block_for

    r = kernel.resources
    sgpr_spills, vgpr_spills = r.spills
    verdict = evaluate(
        kernel,
        Settings(rules=("launch", "mode"), dynamic_lds=dynamic_lds),
        where=where,
        declared=declared_block(kernel),
    )
    found = {v.rule: v for v in verdict.violations}
    block, source = block_for(kernel, given_block, "hip")
    # A model that lacks a fact for this processor blanks its own columns, with why; the row stays.
    unmodelled = {n.model: n.reason for n in verdict.not_evaluated if n.model}
    occ = None
    if "mode" not in found:
        try:
            occ = occupancy(kernel, block_size=block, dynamic_lds=dynamic_lds, **where)
        except ModelUnavailable as exc:
            unmodelled[exc.model] = exc.message
    blocks = None if occ is None or occ.error else occ.blocks_per_cu
    unit = None if occ is None else occ.unit
    return {
        "member": member,
        "path": co.path,
        "origin": co.origin.chain,
        **place,
        "kernel": kernel.name,
        "demangled": demangle(kernel.name),
        "symbol": kernel.symbol,
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
        "findings": ";".join(f.code for f in kernel.findings if f.severity != "info") or None,
        "problem": found["mode"].message if "mode" in found else None,
        "copy": 0,  # numbered in reading order by census_rows
        "unmodelled": " | ".join(f"{m}: {why}" for m, why in sorted(unmodelled.items())) or None,
        "unmodelled_by": unmodelled,  # not a column: the same, by model, for the summary
    }


# --------------------------------------------------------------------------- one release


def _census(args: argparse.Namespace, selection: Selection) -> int:
    from .. import report
    from ..census import Summary
    from ..census.tables import CsvSink, ParquetSink
    from .render import write_report

    path = args.paths[0]
    summary = Summary(top=args.top)
    sinks: list[Sink] = []
    try:
        if args.csv:
            sinks.append(CsvSink(args.csv))
        if args.parquet:
            sinks.append(ParquetSink(args.parquet))
        census_rows(path, args, selection, summary, sinks)
    finally:
        for sink in sinks:
            sink.close()
    result = summary.as_dict()
    if args.html:
        from ..census.html import census_page

        write_report(args.html, census_page(result, f"amdocc census: {path}", _note(args), args.mangled))
    if args.json:
        sys.stdout.write(report.dumps({"path": path, **result}) + "\n")
    elif "-" not in (args.csv, args.html):
        print(render_summary(path, result, args.mangled))
    unmodelled_lines(result)
    for e in result["errors"]:
        print(f"amdocc: {e['error']}", file=sys.stderr)
    return nothing_selected(selection, path) or (2 if result["errors"] else 0)


def unmodelled_lines(summary: dict[str, Any]) -> None:
    """Once per target and reason, with a count, on standard error: the models that could not
    answer (their columns are blank in those rows)."""
    for target, t in summary["targets"].items():
        for key, n in t.get("unmodelled", {}).items():
            model, why = key.split(": ", 1)
            print(f"amdocc: {target}: {n} kernel(s) without the {model} model: {why}", file=sys.stderr)


def _note(args: argparse.Namespace) -> str:
    block = f"block size {args.block}" if args.block else "each kernel's declared block size"
    dyn = f", {args.dynamic_lds} B dynamic LDS" if args.dynamic_lds else ""
    return f"Occupancy: the hip model at {block}{dyn}."


def render_summary(path: str, s: dict[str, Any], mangled: bool = False) -> str:
    lines = [f"{path}: {s['files']} file(s), {s['code_objects']} code object(s), {s['kernels']} kernel(s)"]
    rows = []
    for name, t in s["targets"].items():
        occ = " ".join(f"{k}:{n}" for k, n in t["occupancy"].items())
        lim = " ".join(f"{k}:{n}" for k, n in t["limiters"].items())
        rows.append(
            [
                name,
                str(t["kernels"]),
                str(t["spilling"]),
                str(t["no_spill_counts"]),
                str(t["scratch"]),
                str(t["cannot_launch"]),
                str(t["launch_unchecked"]),
                occ,
                lim,
            ]
        )
    if rows:
        lines.append(
            table(
                rows,
                [
                    "target",
                    "kernels",
                    "spilling",
                    "no spill counts",
                    "scratch",
                    "cannot launch",
                    "not checked",
                    "waves/SIMD:kernels",
                    "limiter:kernels",
                ],
            )
        )
    lines += _kernel_list(
        "top spillers:",
        s["top_spillers"],
        {"VGPR spills": lambda r: str(r["vgpr_spills"] or 0), "SGPR spills": lambda r: str(r["sgpr_spills"] or 0)},
        mangled,
    )
    lines += _kernel_list(
        "cannot launch at their declared size:",
        s["cannot_launch"],
        {
            "block": lambda r: f"{r['block_size']} ({r['block_source']})",
            "models fitting 0": lambda r: r["cannot_launch"],
        },
        mangled,
    )
    if s["skipped"]:
        lines.append("skipped: " + "; ".join(f"{n} {k}" for k, n in s["skipped"].items()))
    return "\n".join(lines)


def _kernel_list(
    heading: str, records: list[dict[str, Any]], columns: dict[str, Callable[[dict[str, Any]], str]], mangled: bool
) -> list[str]:
    """``heading`` and an indented table of ``records``: the kernel, its target and member, then
    ``columns`` (header: cell of a record); nothing when there are no records."""
    from ..demangle import display

    if not records:
        return []
    rows = [
        [display(r["kernel"], mangled), r["target"], r["member"] or "-", *(c(r) for c in columns.values())]
        for r in records
    ]
    return [heading, table(rows, ["kernel", "target", "member", *columns], "    ")]


# --------------------------------------------------------------------------- two releases


class _Rows:
    """Census rows of one release by their identity (amdocc.identity: member, target, kernel, copy)."""

    def __init__(self) -> None:
        self.by_id: dict[KernelId, dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> None:
        from ..identity import KernelId

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
    )


def _compare(args: argparse.Namespace, selection: Selection) -> int:
    from .. import report
    from ..census import Summary
    from ..demangle import display
    from ..identity import match
    from .compare import cells, failed_kinds, regressions
    from .render import write_report

    sides: list[tuple[_Rows, dict[str, Any]]] = []
    for path in args.paths:
        rows, summary = _Rows(), Summary(top=args.top)
        census_rows(path, args, selection, summary, [rows])
        sides.append((rows, summary.as_dict()))
    (old, old_summary), (new, new_summary) = sides
    fail_on = args.fail_on or []
    paired = match(old.by_id, new.by_id)
    changes: list[dict[str, Any]] = []
    pairs = [(k, k, a, b) for k, a, b in paired.same] + list(paired.moved)
    for was, now, a, b in pairs:
        before, after = facts(a), facts(b)
        moved = was != now
        if before == after and a["block_size"] == b["block_size"] and not moved:
            continue
        worse = regressions(before, after)
        gate = [k for k in worse if k in fail_on]
        member = now.location or "-"
        if moved:
            member += f" (moved from {was.location or 'the file itself'})"
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
                "old": before,
                "new": after,
                "old_block": a["block_size"],
                "new_block": b["block_size"],
                "regressions": worse,
                "fails": gate,
                "cells": [
                    member,
                    display(now.name, args.mangled),
                    now.target,
                    *cells(before, after, a["block_size"], b["block_size"], worse, gate),
                ],
            }
        )
    ident = ("member", "kernel", "demangled", "target", "copy")
    added = [{k: row[k] for k in ident} for _, row in paired.added]
    removed = [{k: row[k] for k in ident} for _, row in paired.removed]
    result = {
        "old": args.paths[0],
        "new": args.paths[1],
        "fail_on": fail_on,
        "matched": len(pairs),
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
    errors = old_summary["errors"] + new_summary["errors"]
    for side in (old_summary, new_summary):
        unmodelled_lines(side)
    paths = f"{args.paths[0]} and {args.paths[1]}"
    # The verdict is decided before anything is written (a closed standard output keeps it).
    status = 0 if selection.matched else 2
    status = status or (2 if errors else (1 if result["failing"] else 0))
    if args.html:
        from ..census.html import compare_page

        write_report(
            args.html, compare_page(result, f"amdocc census: {args.paths[0]} -> {args.paths[1]}", args.mangled)
        )
    if args.json:
        sys.stdout.write(
            report.dumps({k: v for k, v in result.items() if k not in ("old_summary", "new_summary")}) + "\n"
        )
    elif args.html != "-":
        print(render_compare(result, args.mangled))
    for e in errors:
        print(f"amdocc: {e['error']}", file=sys.stderr)
    return nothing_selected(selection, paths) or status


def render_compare(result: dict[str, Any], mangled: bool = False) -> str:
    from ..demangle import display
    from .compare import HEADERS, verdict

    lines = [
        f"{result['old']} -> {result['new']}: {result['matched']} kernel(s) matched, "
        f"{len(result['changes'])} changed, {result['regressed']} regressed, {len(result['added'])} added, "
        f"{len(result['removed'])} removed"
    ]
    if result["changes"]:
        lines.append(table([c["cells"] for c in result["changes"]], ["member", "kernel", "target", *HEADERS]))
    for label in ("added", "removed"):
        for k in result[label]:
            lines.append(
                f"  {label}: {display(k['kernel'], mangled)} ({k['target']})"
                + (f" in {k['member']}" if k["member"] else "")
                + (f" copy {k['copy'] + 1}" if k.get("copy") else "")
            )
    lines.append(verdict(result["failing"], result["failed_kinds"], result["fail_on"]))
    return "\n".join(lines)
