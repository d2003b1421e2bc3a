"""``amdocc census PATH`` (one report for a whole tree or wheel) and ``amdocc census OLD NEW``
(two releases compared kernel by kernel)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode
from .render import table

if TYPE_CHECKING:
    from ..app.census_op import CensusOptions
    from ..app.selection import Selection

    # What census_file needs: (the tree's root or None, --block, --dynamic-lds, the Selection's arguments).
    CensusSpec = tuple[str | None, int | None, int, tuple[str | None, str | None, str | None, bool], str | None]


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
    from ..app.compare import KINDS
    from . import args as a

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
        "--isa",
        action="store_true",
        help="add columns read from each kernel's machine code (needs a libLLVM; slower): spill dwords "
        "stored and reloaded inside loops, and the source line of the first",
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
    """Exit status 2 with why, when no kernel was selected (the report is already out); when the
    PATHs held only relocatable device code, why, and status 0: nothing to survey yet."""
    if selection.matched:
        return ExitCode.OK
    from .args import as_flag

    if selection.nothing_to_evaluate():
        print(f"amdocc: nothing to census: {selection.nothing_selected(paths, as_flag)}", file=sys.stderr)
        return ExitCode.OK
    print(f"amdocc: {selection.nothing_selected(paths, as_flag)}", file=sys.stderr)
    return ExitCode.USAGE_ERROR


# --------------------------------------------------------------------------- reading


def options_of(args: argparse.Namespace) -> CensusOptions:
    from ..app.census_op import CensusOptions

    return CensusOptions(
        args.block,
        args.dynamic_lds,
        args.target,
        args.device,
        args.kernel,
        args.what_if,
        args.jobs,
        "all" if args.isa else None,
    )


class KernelCounter:
    """ "N kernels read" on stderr while one file is read, at most ten times a second, only when
    stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled, self.last, self.shown = sys.stderr.isatty(), 0.0, False

    def show(self, kernels: int) -> None:
        if not self.enabled:  # asked after every file or row: nothing to do off a terminal
            return
        import time

        now = time.monotonic()
        if now - self.last > 0.1:
            self.last, self.shown = now, True
            sys.stderr.write(f"\r{kernels} kernels read")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 40 + "\r")
            sys.stderr.flush()


# --------------------------------------------------------------------------- one release


def _census(args: argparse.Namespace, selection: Selection) -> int:
    from .. import report
    from ..app.census_op import Sink, census_rows
    from ..census import COLUMNS, ISA_COLUMNS, Summary
    from ..census.tables import CsvSink, ParquetSink
    from .render import write_report

    path = args.paths[0]
    summary = Summary(top=args.top)
    sinks: list[Sink] = []
    columns = COLUMNS + ISA_COLUMNS if args.isa else COLUMNS
    try:
        if args.csv:
            sinks.append(CsvSink(args.csv, columns))
        if args.parquet:
            sinks.append(ParquetSink(args.parquet, columns))
        census_rows(path, options_of(args), selection, summary, sinks, KernelCounter())
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


def _isa_cells(t: dict[str, Any]) -> list[str]:
    """A target's --isa cells, as the HTML has them: kernels spilling in loops and those whose
    spills could not be read, the most VGPRs live in any kernel ("-": no kernel has a figure),
    and the kernels without one."""
    return [
        str(t.get("spilling_in_loops", 0)),
        str(t.get("spills_in_loops_unknown", 0)),
        str(t.get("max_live_vgpr", "-")),
        str(t.get("max_live_unknown", 0)),
    ]


def render_summary(path: str, s: dict[str, Any], mangled: bool = False) -> str:
    from ..census import models_fitting_some, some_models_heading

    lines = [f"{path}: {s['files']} file(s), {s['code_objects']} code object(s), {s['kernels']} kernel(s)"]
    rows = []
    isa = any("spilling_in_loops" in t for t in s["targets"].values())  # a census with --isa
    for name, t in s["targets"].items():
        occ = " ".join(f"{k}:{n}" for k, n in t["occupancy"].items())
        lim = " ".join(f"{k}:{n}" for k, n in t["limiters"].items())
        rows.append(
            [
                name,
                str(t["kernels"]),
                str(t["spilling"]),
                *(_isa_cells(t) if isa else []),
                str(t["no_spill_counts"]),
                str(t["scratch"]),
                str(t["cannot_launch"]),
                str(t.get("some_models_zero", 0)),
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
                    *(["in loops", "loops unknown", "most live VGPRs", "liveness unknown"] if isa else []),
                    "no spill counts",
                    "scratch",
                    "cannot launch",
                    "0 under some models",
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
    disputed = s.get("some_models_zero") or []
    lines += _kernel_list(
        f"{some_models_heading(disputed)}:",
        disputed,
        {
            "block": lambda r: f"{r['block_size']} ({r['block_source']})",
            "models fitting 0": lambda r: r["cannot_launch"],
            "models fitting 1+": lambda r: ",".join(models_fitting_some(r)),
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


def _compare(args: argparse.Namespace, selection: Selection) -> int:
    from .. import report
    from ..app.census_op import compare_releases
    from .render import write_report

    result = compare_releases(
        args.paths[0],
        args.paths[1],
        options_of(args),
        selection,
        top=args.top,
        fail_on=args.fail_on or [],
        mangled=args.mangled,
    )
    old_summary, new_summary = result["old_summary"], result["new_summary"]
    errors = old_summary["errors"] + new_summary["errors"]
    for side in (old_summary, new_summary):
        unmodelled_lines(side)
    paths = f"{args.paths[0]} and {args.paths[1]}"
    # The verdict is decided before anything is written (a closed standard output keeps it).
    status = 0 if selection.matched or selection.nothing_to_evaluate() else 2
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
    from .render import HEADERS, verdict

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
