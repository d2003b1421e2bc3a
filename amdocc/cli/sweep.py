"""``amdocc sweep``: the grid of workgroups per CU over block sizes × dynamic LDS for one kernel."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode
from . import args as a
from .args import add_block_argument, add_kernel_argument, add_mangled_argument, add_target_arguments
from .model_args import (
    add_manual_arguments,
    add_model_arguments,
    check_mode,
    manual_usage,
    model_options,
)
from .render import table

if TYPE_CHECKING:
    from ..app.sweep_op import Subject

DESCRIPTION = """Print workgroups per CU (per WGP for kernels in WGP mode) for one kernel over a grid
of block sizes and dynamic LDS sizes, with the limiting resource of each cell. Select the kernel
with --kernel (and --target for fat binaries), or give manual numbers as for `amdocc occupancy`."""

# Options that apply only to a kernel read from a PATH.
FILE_DESTS = ("kernel", "mangled", "what_if")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--json", action="store_true", help='print {"grid": [...]} with one record per cell')
    add_kernel_argument(parser, "the kernel, by its name (mangled or demangled) or symbol; must select exactly one")
    add_mangled_argument(parser)
    parser.add_argument(
        "--blocks",
        type=a.ListOf(a.WorkgroupSize()),
        metavar="N,N,...",
        help="block sizes, each 1 to 1024 (default: wave multiples up to the kernel's limit, in steps)",
    )
    parser.add_argument(
        "--dynamic-lds",
        dest="dynamic_lds_grid",
        type=a.ListOf(a.LdsSize()),
        metavar="B,B,...",
        help="dynamic LDS sizes in bytes (default: 0 and powers of two up to the target's limit)",
    )
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)
    plot_path = a.Checked(_check_plot_path, "out.png", ("", "/nonexistent/dir/out.png", "out.xyz"))
    parser.add_argument(
        "--plot",
        metavar="FILE",
        type=plot_path,
        help="also draw occupancy (waves per SIMD, and workgroups) against block size, "
        "dynamic LDS and VGPRs to FILE (.png, .svg or .pdf; needs matplotlib: "
        "amdocc[plot]); the star marks the kernel where `amdocc occupancy` evaluates "
        "it: --block (default as there), the first --dynamic-lds size (default 0)",
    )
    add_block_argument(
        parser,
        "the kernel's block size, marked on the plot "
        "(default: .reqd_workgroup_size, else .max_flat_workgroup_size, as `amdocc occupancy`)",
    )


def _check_plot_path(text: str) -> None:
    from .plot import check_plot_path  # imports matplotlib only when --plot is given

    check_plot_path(text)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.sweep_op import grid, record, subject

    check_mode(args, FILE_DESTS)
    if args.block is not None and not args.plot:
        raise a.UsageError("--block marks the kernel on the plot, and no --plot is given")
    if not args.paths and args.vgprs is None and args.arch_vgprs is None:
        raise a.UsageError("give a PATH, or --target (or --device) and --vgprs for manual mode")
    failures: list[str] = []
    try:
        chosen = subject(
            args.paths or manual_usage(args),
            kernel_regex=args.kernel if args.paths else None,
            target=args.target,
            device=args.device,
            what_if=bool(args.what_if),
            mode="wgp" if args.wgp else ("cu" if args.cu_mode else None),
            mangled=args.mangled,
            failures=failures,
        )
    finally:
        for message in failures:
            print(f"amdocc: {message}", file=sys.stderr)
    options = model_options(args)
    swept = grid(chosen.usage, args.blocks, args.dynamic_lds_grid, args.model, args.device, args.what_if, options)
    if args.plot:
        # Drawn before the table is printed, so it is written even when stdout closes early.
        _plot(args, chosen, options)
    if args.json:
        sys.stdout.write(report.dumps(record(chosen, swept, args.model)) + "\n")
    else:
        assert swept.unit is not None, "the grid has cells: a block size and a dynamic LDS size at least"
        print(render(chosen.title, args.model, swept.blocks, swept.dynamic_lds, swept.cells, swept.unit))
    return ExitCode.OK


def _plot(args: argparse.Namespace, chosen: Subject, options: dict[str, Any]) -> None:
    """The plot, with its star where `amdocc occupancy` evaluates the kernel."""
    from ..app.curves import star_of
    from .plot import plot_sweep

    dynamic_lds = args.dynamic_lds_grid[0] if args.dynamic_lds_grid else 0
    what_if = bool(getattr(args, "what_if", False))
    point, source = star_of(chosen, args.block, args.model, options, dynamic_lds, args.device, what_if)
    source = {"given": "--block", "max_flat_workgroup_size": "--max-flat-workgroup-size"}.get(source, source)
    plot_sweep(args.plot, point, chosen.name, source)
    print(f"plot written to {args.plot}", file=sys.stderr)


LIMITER_MARK = {
    "vgpr": "v",
    "agpr": "a",
    "sgpr": "s",
    "lds": "L",
    "waves": "w",
    "barriers": "b",
    "workgroup_slots": "g",
    "block_size": "B",
    None: "?",
}


def render(
    title: str, model: str, blocks: list[int], lds_sizes: list[int], grid: list[dict[str, Any]], unit: str = "CU"
) -> str:
    cells = {(c["dynamic_lds"], c["block_size"]): c for c in grid}
    rows = []
    for dyn in lds_sizes:
        row = [str(dyn)]
        for block in blocks:
            c = cells[(dyn, block)]
            row.append(c["error"] or f"{c['blocks_per_cu']}{LIMITER_MARK.get(c['limiter'], '?')}")
        rows.append(row)
    legend = "limiter: v=VGPR s=SGPR L=LDS w=wave slots b=barriers B=block size"
    return (
        f"{title} ({model} model): workgroups per {unit}, block size across, dynamic LDS bytes down\n"
        + table(rows, ["dyn LDS \\ block"] + [str(b) for b in blocks])
        + f"\n  {legend}"
    )
