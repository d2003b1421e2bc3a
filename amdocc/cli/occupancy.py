"""``amdocc occupancy``: workgroups per CU for each kernel (or for typed-in numbers), explained."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..app.place import describe
from ..errors import ExitCode
from . import args as a
from .args import (
    add_block_argument,
    add_jobs_argument,
    add_kernel_argument,
    add_mangled_argument,
    add_target_arguments,
)
from .model_args import (
    add_manual_arguments,
    add_model_arguments,
    check_mode,
    manual_usage,
    model_options,
    selection_of,
)
from .render import fmt, table

if TYPE_CHECKING:
    pass

DESCRIPTION = """How many workgroups of each kernel fit on one CU (one WGP for RDNA kernels in WGP
mode) at a block size and dynamic LDS, which resource limits it, and what to shed for one more.

Models: hip (default) reproduces hipModuleOccupancyMaxActiveBlocksPerMultiprocessor for a ROCm
release (--hip-profile; default rocm-7.14, the newest release a real runtime has confirmed; a
profile that does not run the kernel's processor is an error unless --what-if); llvm reproduces
LLVM's '; Occupancy:' (waves per SIMD; without --block over the flat workgroup range
1..max_flat_workgroup_size) under the rules of the LLVM that built the kernel (--llvm-version);
hw estimates what the hardware does from the descriptor's allocation.

File mode reads PATHs; with --target or --device only the code objects that can run there are
evaluated (a generic code object as the member it stands for); --what-if evaluates the others
there too, labelled as what-ifs. Manual mode (no PATH) takes --target and register counts that
mean what the metadata note means: --vgprs is .vgpr_count (AGPRs already included on
gfx90a/gfx942/gfx950), --agprs is reported, never added; --arch-vgprs A --agprs G forms the
total by the target's rule. Options that would be ignored (another model's options, manual
numbers beside a PATH) are errors."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code objects or containers ('-' for stdin)")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"results": [...], "skipped": [...], "errors": [...], "not_evaluated": [...]}',
    )
    add_block_argument(
        parser,
        "workgroup size in threads, >= 1 (file mode "
        "default: the kernel's .reqd_workgroup_size, else its .max_flat_workgroup_size)",
    )
    parser.add_argument(
        "--dynamic-lds",
        type=a.LdsSize(),
        default=None,
        metavar="BYTES",
        help="dynamic LDS per workgroup (bytes, or with a K/KiB suffix; default 0, or the launch a Triton "
        "cache or AOTInductor package records)",
    )
    add_kernel_argument(parser)
    add_mangled_argument(parser)
    parser.add_argument(
        "--where",
        action="store_true",
        help="when the next step sheds registers, say where that many are live: the address ranges, "
        "loop depth and source lines (disassembles each such kernel with libLLVM; docs/liveness.md)",
    )
    parser.add_argument("--list-profiles", action="store_true", help="list the HIP runtime profiles and exit")
    add_jobs_argument(parser)
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.occupancy_op import manual_record

    if args.list_profiles:
        others = [act.dest for act in args._parser._actions if act.dest not in ("help", "list_profiles")]
        a.refuse(args, others, "not used with --list-profiles")
        return _list_profiles()
    check_mode(args)
    options = model_options(args)
    if args.paths:
        return _run_files(args, options)
    if args.where:
        raise a.UsageError("--where needs PATHs: manual numbers have no code to look at")
    if args.vgprs is None and args.arch_vgprs is None:
        raise a.UsageError("give PATHs, or --target (or --device) and --vgprs (or --arch-vgprs) for manual mode")
    where = {"target": args.target, "device": args.device, "what_if": bool(args.what_if)}
    results = [manual_record(manual_usage(args), args.model, args.block, args.dynamic_lds, where, options)]
    if args.json:
        sys.stdout.write(report.dumps({"results": results, "skipped": [], "errors": []}) + "\n")
    else:
        from .notices import Notices

        notices = Notices()  # diagnostics to standard error
        notices.take_warnings(results)
        print(render(results))
        notices.flush()
    return ExitCode.OK


def _run_files(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """File mode: files across processes (--jobs), results printed as each code object is done."""

    from .. import report
    from ..app import parallel
    from ..app.occupancy_op import OccupancyOptions, occupancy_file

    selection = selection_of(args)  # --target and --device that disagree: refused up front
    files = parallel.expand(args.paths)
    spec = OccupancyOptions(
        args.target,
        args.device,
        args.kernel,
        bool(args.what_if),
        args.block,
        args.dynamic_lds,
        args.model,
        options,
        "wgp" if args.wgp else ("cu" if args.cu_mode else None),
        bool(args.where),
    )
    from .notices import Notices

    skipped: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    unevaluated: list[dict[str, Any]] = []  # generic code objects with no member named
    notices = Notices()  # warnings, once per target and message with a count, on standard error
    shown = 0
    if args.json:
        sys.stdout.write('{"results": [')
    jobs = parallel.jobs_for(args.jobs, len(files))
    for kind, value in parallel.run(files, occupancy_file, spec, jobs, isolated=bool(args.where)):
        if kind == "seen":
            selection.merge(value)
        elif kind == "error":
            errors.append(value)
            print(f"amdocc: {value['error']}", file=sys.stderr)
        elif kind == "skipped":
            skipped.append(value)
            if not args.json and not value["origin"]:  # a whole file with nothing to evaluate
                print(f"skipped {value['path']}: {value['reason']}")
        elif kind == "not_evaluated":
            unevaluated.append(value)
            if not args.json:
                head = value["path"] + (f" [{value['origin']}]" if value["origin"] else "")
                print(f"{head}\n  {value['target']}: {value['kernels']} kernel(s) not evaluated: {value['reason']}\n")
        elif args.json:
            rows = [report.dumps(row) for row in value]  # JSON text is the command's, not the worker's
            sys.stdout.write(", ".join(rows) if not shown else ", " + ", ".join(rows))
            shown += len(value)
        else:
            notices.take_warnings(value, args.mangled)
            print(render(value, mangled=args.mangled))
            shown += len(value)
    if args.json:
        sys.stdout.write(
            "], " + report.dumps({"skipped": skipped, "errors": errors, "not_evaluated": unevaluated})[1:] + "\n"
        )
    notices.flush()
    if not shown:
        if not selection.matched:  # kernels that were selected but failed are already reported
            print(f"amdocc: {selection.nothing_selected(spell=a.as_flag)}", file=sys.stderr)
        elif unevaluated and not errors:
            print(f"amdocc: no kernel evaluated: {unevaluated[0]['reason']}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    return ExitCode.USAGE_ERROR if errors else ExitCode.OK


def _list_profiles() -> int:
    from ..models.hip import aliases, default_profile_name, profiles

    default = default_profile_name()
    for name, p in profiles().items():
        if name == p.name:  # aliases are listed once, below
            mark = " (default)" if name == default else ""
            print(f"{name}{mark}  {p.release_name}  {p.dates}\n    {p.unknown or p.changes}\n    source: {p.source}")
            if p.evidence:
                print(f"    evidence: {p.evidence}")
            if p.confirmed:
                print(f"    confirmed: {p.confirmed}")
            reports = p.reports
            if reports is not None and reports != p.release:
                print(f"    hipRuntimeGetVersion(): HIP {reports[0]}.{reports[1]}")
    print("aliases: " + ", ".join(f"{a} = {t}" for a, t in aliases().items()))
    return ExitCode.OK


# -- text -----------------------------------------------------------------------------------------


def where_evaluated(r: dict[str, Any]) -> str:
    """The processor line of a group of results: the code's target, and where it was evaluated
    when that is another processor (a generic family member, or a what-if)."""
    text: str = r["target"]
    built = (r.get("built_for") or r["target"]).split(":", 1)[0]
    if r["processor"] != built:
        text += f" code evaluated on {r['processor']}"
    if r.get("what_if"):
        text = "WHAT-IF: " + text + " (it cannot run there)"
    return text


def render(results: list[dict[str, Any]], mangled: bool = False) -> str:
    if not results:
        return "no kernels selected"
    lines: list[str] = []
    last_where: tuple[object, ...] | None = None
    rows: list[dict[str, Any]] = []
    for r in results:
        where = (
            r["path"],
            r["origin"],
            r["target"],
            r["processor"],
            r["model"],
            r["profile"],
            r["unit"],
            r["block_size"] is None,
        )
        if where != last_where:
            if rows:
                lines.append(_table(rows, mangled))
                rows = []
            head = r["path"] or "manual"
            if r["origin"]:
                head += f" [{r['origin']}]"
            profile = f" ({r['profile']})" if r["profile"] else ""
            lines.append(f"{head}\n  {where_evaluated(r)}  model {r['model']}{profile}")
            last_where = where
        rows.append(r)
    if rows:
        lines.append(_table(rows, mangled))
    return "\n".join(lines)


def _table(results: list[dict[str, Any]], mangled: bool) -> str:
    rows: list[list[str]] = []
    notes: list[str] = []
    unit = results[0]["unit"]
    for r in results:
        name = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
        limits = " ".join(f"{k}={v}" for k, v in r["limits"].items() if v is not None)
        blocks = "-" if r["blocks_per_cu"] is None else str(r["blocks_per_cu"])
        rows.append(
            [
                name,
                fmt(r["block_size"]),
                fmt(r["dynamic_lds"]),
                blocks,
                fmt(r["waves_per_simd"]),
                "-" if r["occupancy_fraction"] is None else f"{r['occupancy_fraction']:.0%}",
                r["error"] or fmt(r["limiter"]),
                limits,
            ]
        )
        step = r.get("next_step")
        if step:
            shed = ", ".join(
                f"{amount} {'B of LDS' if what == 'lds' else what.upper() + 's'}"
                for what, amount in step["shed"].items()
            )
            what = "workgroup" if step["unit"] == "blocks_per_cu" else "wave"
            where = f"per {r['unit']}" if step["unit"] == "blocks_per_cu" else "per SIMD"
            plural = "s" if step["gain"] != 1 else ""
            hardware, place = _hardware_note(r), r.get("next_step_where")
            inline = f": {describe(place)}" if place and not hardware else ""
            notes.append(f"    {name}: shed {shed} for {step['gain']} {what}{plural} {where}{inline}{hardware}")
            if place and hardware:
                notes.append(f"    {name}: {describe(place)}")
        for w in r["warnings"]:
            notes.append(f"    {name}: warning: {w}")
        if r.get("launch"):
            notes.append(f"    {name}: {r['launch']['label']}")
    # The llvm model over the flat workgroup range counts its limits in waves per SIMD.
    per = f"workgroups/{unit}" if results[0]["block_size"] is not None else "waves/SIMD"
    text = table(
        rows,
        [
            "kernel",
            "block",
            "dyn LDS",
            f"workgroups/{unit}",
            "waves/SIMD",
            "occupancy",
            "limiter",
            f"limits ({per} each allows)",
        ],
    )
    return text + ("\n" + "\n".join(notes) if notes else "") + "\n"


def _hardware_note(r: dict[str, Any]) -> str:
    """What follows a hip next step the hw model sees otherwise: that it rests on HIP's occupancy
    API alone, why, and what the hw model fits and needs; or, where the hardware gains too, its
    own numbers (empty where both agree)."""
    hw = r.get("next_step_hardware")
    if not hw or hw["agrees"]:
        return ""
    per = f"per {hw['unit']}" if r["block_size"] is not None else "per SIMD"
    if not hw["hip_only"]:  # the hardware gains too, from other numbers
        return (
            f"; the hardware fits {_count(hw['fits'])} {per} now, {_count(hw['fits_after'])} with this shed (hw model)"
        )
    note = f": HIP's occupancy API only ({hw['why']}); the hardware fits {_count(hw['fits'])} {per} either way"
    own = hw["next_step"]
    if own:
        shed = ", ".join(
            f"{amount} {'B of LDS' if what == 'lds' else what.upper() + 's'}" for what, amount in own["shed"].items()
        )
        note += f", {_count(own['gain'])} with {shed} shed"
    return note + " (hw model)"


def _count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"
