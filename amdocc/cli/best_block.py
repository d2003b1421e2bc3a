"""``amdocc best-block``: HIP's potential block size, and the block to launch, for each kernel."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode
from . import args as a
from .args import add_kernel_argument, add_mangled_argument, add_target_arguments
from .render import fmt, table

if TYPE_CHECKING:
    from ..models.hip_profiles import HipProfile

DESCRIPTION = """The best block size of each kernel in PATH (or of typed-in numbers), two answers
side by side:

  hip     what hipOccupancyMaxPotentialBlockSize (hipModuleOccupancyMaxPotentialBlockSize)
          returns under the HIP runtime profile (--hip-profile): no search, the smaller of the
          threads one CU holds and the limit (--block-limit, default 1024) rounded up to a wave.
          LDS caps only its grid, and it ignores .max_flat_workgroup_size: its block may be one
          the kernel cannot be launched with.
  launch  the block to launch: the most resident threads per CU (block x workgroups per CU,
          largest block on ties) among sizes from the limit, at most .max_flat_workgroup_size,
          down to one wave in wave steps, as HIP's header template
          hipOccupancyMaxPotentialBlockSizeVariableSMem searches, at the given dynamic LDS.

Grid sizes need the CU count HIP reports: --device gives it (halved on RDNA, whose runtime
counts WGPs), or --compute-units N. Manual mode (no PATH) takes --target or --device and the
numbers of the metadata note, as `amdocc occupancy` does."""

MANUAL_DESTS = ("vgprs", "arch_vgprs", "agprs", "sgprs", "lds", "wave", "wgp", "cu_mode", "max_flat_workgroup_size")
FILE_DESTS = ("kernel", "mangled", "what_if")


def _hip_profiles() -> dict[str, HipProfile]:
    from ..models.hip import profiles

    return profiles()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .model_args import add_manual_arguments

    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code objects or containers ('-' for stdin)")
    parser.add_argument("--json", action="store_true", help='print {"results": [...], "errors": [...]}')
    parser.add_argument(
        "--dynamic-lds",
        type=a.LdsSize(),
        default=0,
        metavar="BYTES",
        help="dynamic LDS per workgroup (bytes, or with a K/KiB suffix)",
    )
    parser.add_argument(
        "--block-limit",
        type=a.integer(0, 1024),
        default=0,
        metavar="N",
        help="HIP's blockSizeLimit: the largest block to consider (default 0: no limit)",
    )
    parser.add_argument(
        "--compute-units",
        type=a.integer(1),
        metavar="N",
        help="the CU count HIP reports (multiProcessorCount), for the grid sizes (default: the --device's)",
    )
    parser.add_argument(
        "--hip-profile",
        metavar="NAME",
        type=a.OneOf(_hip_profiles, "HIP profile"),
        help="the HIP runtime era to reproduce (default: newest; see amdocc occupancy --list-profiles)",
    )
    add_kernel_argument(parser)
    add_mangled_argument(parser)
    add_target_arguments(parser)
    add_manual_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.best_block_op import best_block
    from .model_args import manual_usage, selection_of

    options: dict[str, Any] = {"profile": args.hip_profile, "compute_units": args.compute_units}
    if args.paths:
        a.refuse(args, MANUAL_DESTS, "manual-mode numbers are not used with a PATH (the kernel's own numbers apply)")
        a.what_if_needs_a_processor(args)
        a.check_readable(args.paths)
        selection = selection_of(args)
        answered = best_block(
            args.paths,
            dynamic_lds=args.dynamic_lds,
            block_limit=args.block_limit,
            selection=selection,
            **options,
        )
        results, errors = answered["results"], answered["errors"]
        for e in errors:
            where = f"{e['path']}: {e['kernel']}: " if "kernel" in e else ""
            print(f"amdocc: {where}{e['error']}", file=sys.stderr)
        if not results and not errors:
            print(f"amdocc: {selection.nothing_selected(spell=a.as_flag)}", file=sys.stderr)
            return ExitCode.USAGE_ERROR
    else:
        a.refuse(args, FILE_DESTS, "only applies to kernels read from a PATH, and none is given")
        if args.vgprs is None and args.arch_vgprs is None:
            raise a.UsageError("give PATHs, or --target (or --device) and --vgprs (or --arch-vgprs) for manual mode")
        answered = best_block(
            manual_usage(args),
            dynamic_lds=args.dynamic_lds,
            block_limit=args.block_limit,
            target=args.target,
            device=args.device,
            **options,
        )
        results, errors = answered["results"], answered["errors"]
    if args.json:
        sys.stdout.write(report.dumps({"results": results, "errors": errors}) + "\n")
    else:
        print(render(results, args.mangled if args.paths else False))
    return ExitCode.USAGE_ERROR if errors else ExitCode.OK


def render(results: list[dict[str, Any]], mangled: bool = False) -> str:
    if not results:
        return "no kernels selected"
    lines: list[str] = []
    last: tuple[object, ...] | None = None
    rows: list[list[str]] = []
    notes: list[str] = []

    def flush() -> None:
        if rows:
            headers = [
                "kernel",
                "max flat",
                "hip block",
                "hip grid",
                "launch block",
                "workgroups/CU",
                "min grid",
            ]
            lines.append(table(rows, headers) + ("\n" + "\n".join(notes) if notes else ""))
            rows.clear()
            notes.clear()

    for r in results:
        where = (r["path"], r["target"], r["processor"], r["profile"], r["dynamic_lds"], r["block_limit"])
        if where != last:
            flush()
            cus = f", {r['compute_units']} CUs as HIP counts them" if r["compute_units"] else ""
            limit = f", block limit {r['block_limit']}" if r["block_limit"] else ""
            lines.append(
                f"{r['path'] or 'manual'}\n  {r['target']}  model hip ({r['profile']}), dynamic LDS "
                f"{r['dynamic_lds']} B{limit}{cus}\n"
                "  hip: hipOccupancyMaxPotentialBlockSize's answer; launch: the block to launch "
                "(respects .max_flat_workgroup_size)"
            )
            last = where
        name = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
        hip, launch = r["hip"], r["launch"]
        unit = "/WGP" if launch["per_wgp"] else ""
        rows.append(
            [
                name,
                fmt(r["max_flat_workgroup_size"]),
                r["error"] or fmt(hip["block_size"]),
                fmt(hip["grid_size"]),
                fmt(launch["block_size"]),
                fmt(launch["blocks_per_cu"]) + unit,
                fmt(launch["min_grid_size"]),
            ]
        )
        for w in r["warnings"]:
            notes.append(f"    {name}: warning: {w}")
    flush()
    return "\n".join(lines)
