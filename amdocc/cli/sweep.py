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
    asked_what_if,
    check_mode,
    manual_usage,
    model_options,
    selection_of,
)
from .render import table

if TYPE_CHECKING:
    from ..codeobject import Kernel
    from ..models import KernelUsage

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
    from ..app.occupancy_op import selected_kernels
    from ..app.selection import require_one_kernel
    from ..app.sweep_op import sweep
    from ..demangle import display
    from ..models import usage_of
    from ..models.compat import place

    check_mode(args, FILE_DESTS)
    if args.block is not None and not args.plot:
        raise a.UsageError("--block marks the kernel on the plot, and no --plot is given")
    where = kernel = None
    if args.paths:
        selection = selection_of(args)
        failures: list[str] = []
        chosen = selected_kernels(args.paths, selection, failures)
        for message in failures:
            print(f"amdocc: {message}", file=sys.stderr)
        require_one_kernel(chosen, "sweep", selection)
        co, kernel = chosen[0]
        where = place(co.target_id, co.target, args.target, args.device, what_if=bool(args.what_if))
        usage = usage_of(kernel, args.target, args.device, "wgp" if args.wgp else ("cu" if args.cu_mode else None))
        name = display(kernel.name, args.mangled)
        on = f" on {usage.target.name}" + (
            f" (what-if: {co.target_id} code cannot run there)" if where is not None and where.what_if else ""
        )
        title, short_title = f"{co.origin}: {name}{on}", f"{name}{on}"
    else:
        if args.vgprs is None and args.arch_vgprs is None:
            raise a.UsageError("give a PATH, or --target (or --device) and --vgprs for manual mode")
        usage = manual_usage(args)
        title = short_title = f"manual kernel on {usage.target.name}"
    options = model_options(args)
    swept = sweep(
        usage,
        blocks=args.blocks,
        dynamic_lds=args.dynamic_lds_grid,
        model=args.model,
        device=args.device,
        **asked_what_if(args, usage),
        **options,
    )
    blocks, lds_sizes, grid, unit = swept["blocks"], swept["dynamic_lds"], swept["grid"], swept["unit"]
    if args.plot:
        # Drawn before the table is printed, so it is written even when stdout closes early.
        _plot(args, usage, kernel, options, short_title)
    if args.json:
        sys.stdout.write(
            report.dumps(
                {
                    "kernel": title,
                    "model": args.model,
                    "unit": unit,
                    "built_for": where.built_for if where else None,
                    "what_if": bool(where and where.what_if),
                    "grid": grid,
                }
            )
            + "\n"
        )
    else:
        assert unit is not None, "the grid has cells: a block size and a dynamic LDS size at least"
        print(render(title, args.model, blocks, lds_sizes, grid, unit))
    return ExitCode.OK


def _plot(
    args: argparse.Namespace, usage: KernelUsage, kernel: Kernel | None, options: dict[str, Any], title: str
) -> None:
    """The plot, with its star where `amdocc occupancy` evaluates the kernel."""
    from ..app.occupancy_op import block_for
    from ..targets import MAX_WORKGROUP_SIZE
    from .plot import Point, plot_sweep

    if kernel is not None:
        block, source = block_for(kernel, args.block, args.model)
    elif args.block is not None or args.model == "llvm":
        block, source = args.block, "given"
    else:
        block = usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
        source = "--max-flat-workgroup-size" if usage.max_flat_workgroup_size else f"default {MAX_WORKGROUP_SIZE}"
    source = {
        "reqd_workgroup_size": ".reqd_workgroup_size",
        "max_flat_workgroup_size": ".max_flat_workgroup_size",
        "given": "--block",
    }.get(source, source)
    dynamic_lds = args.dynamic_lds_grid[0] if args.dynamic_lds_grid else 0
    point = Point(usage, args.model, options, block, dynamic_lds, args.device, bool(getattr(args, "what_if", False)))
    plot_sweep(args.plot, point, title, source)
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
