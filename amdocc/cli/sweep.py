"""``amdocc sweep``: the grid of workgroups per CU over block sizes × dynamic LDS for one kernel."""
from __future__ import annotations

import sys

from .occupancy import add_manual_arguments, add_model_arguments, add_target_arguments, manual_usage, \
    model_options, selected_kernels
from .render import table

DESCRIPTION = """Print workgroups per CU (per WGP in WGP mode) for one kernel over a grid of block
sizes and dynamic LDS sizes, with the limiting resource of each cell. Select the kernel with
--kernel (and --target for fat binaries), or give manual numbers as for `amdocc occupancy`."""


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x, 0) for x in text.split(",") if x.strip()]
    except ValueError:
        from ..errors import UsageError
        raise UsageError(f"expected comma-separated integers, got {text!r}") from None
    return values


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--json", action="store_true", help='print {"grid": [...]} with one record per cell')
    parser.add_argument("--kernel", metavar="REGEX", help="the kernel (must select exactly one)")
    parser.add_argument("--blocks", type=_int_list, metavar="N,N,...",
                        help="block sizes (default: every wave multiple up to the kernel's limit, in steps)")
    parser.add_argument("--dynamic-lds", dest="dynamic_lds_grid", type=_int_list, metavar="B,B,...",
                        help="dynamic LDS sizes in bytes (default: 0 and powers of two up to the target's limit)")
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)
    parser.add_argument("--plot", metavar="FILE", help="also draw occupancy (waves per SIMD, and workgroups) "
                        "against block size, dynamic LDS and VGPRs to FILE (.png, .svg, .pdf, ...; needs "
                        "matplotlib: amdocc[plot]); the star marks the kernel where `amdocc occupancy` "
                        "evaluates it: --block (default as there), the first --dynamic-lds size (default 0)")
    parser.add_argument("--block", type=int, help="the kernel's block size, marked on the plot (default: "
                        ".reqd_workgroup_size, else .max_flat_workgroup_size, as `amdocc occupancy`)")


def default_blocks(wave: int, limit: int) -> list[int]:
    steps = [wave * k for k in (1, 2, 3, 4, 5, 6, 8, 10, 12, 16) if wave * k <= limit]
    return steps + ([limit] if limit not in steps else [])


def default_dynamic_lds(static: int, per_workgroup: int) -> list[int]:
    sizes, size = [0], 4096
    while static + size <= per_workgroup:
        sizes.append(size)
        size *= 2
    if sizes[-1] + static < per_workgroup:
        sizes.append(per_workgroup - static)
    return sizes


def run(args) -> int:
    from ..errors import UsageError
    from ..models import occupancy, usage_of
    from ..targets import MAX_WORKGROUP_SIZE
    from .. import report

    if args.plot:
        from .plot import check_plot_path
        check_plot_path(args.plot)          # a bad path is a usage error before any work
    kernel = None
    if args.paths:
        failures: list[str] = []
        chosen = list(selected_kernels(args, failures))
        for message in failures:
            print(f"amdocc: {message}", file=sys.stderr)
        if len(chosen) != 1:
            names = ", ".join(f"{k.name} ({co.processor})" for co, k, _ in chosen[:12])
            raise UsageError(f"sweep needs exactly one kernel, {len(chosen)} selected"
                             + (f": {names}" if names else "") + " (use --kernel and --target)")
        co, kernel, target = chosen[0]
        usage = usage_of(kernel, target)
        title = f"{co.origin}: {kernel.name} on {usage.target.name}"
        short_title = f"{kernel.name} on {usage.target.name}"
    else:
        if args.vgprs is None and args.arch_vgprs is None:
            raise UsageError("give a PATH, or --target and --vgprs for manual mode")
        usage = manual_usage(args)
        title = short_title = f"manual kernel on {usage.target.name}"
    t = usage.target
    limit = min(usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)
    blocks = args.blocks or default_blocks(usage.wave, limit)
    lds_sizes = args.dynamic_lds_grid or default_dynamic_lds(usage.lds, t.lds_per_workgroup)
    options = model_options(args)
    grid = []
    for dyn in lds_sizes:
        row = []
        for block in blocks:
            occ = occupancy(usage, device=args.device, block_size=block, dynamic_lds=dyn, model=args.model,
                            **options)
            row.append(occ)
            grid.append({"block_size": block, "dynamic_lds": dyn, "blocks_per_cu": occ.blocks_per_cu,
                         "waves_per_simd": occ.waves_per_simd, "limiter": occ.limiter, "error": occ.error})
    if args.plot:
        # Drawn before the table is printed, so it is written even when stdout closes early.
        _plot(args, usage, kernel, options, short_title)
    if args.json:
        sys.stdout.write(report.dumps({"kernel": title, "model": args.model, "grid": grid}) + "\n")
    else:
        print(render(title, args.model, blocks, lds_sizes, grid))
    return 0


def _plot(args, usage, kernel, options, title: str) -> None:
    """The plot, with its star where `amdocc occupancy` evaluates the kernel."""
    from ..targets import MAX_WORKGROUP_SIZE
    from .occupancy import block_for
    from .plot import plot_sweep

    if kernel is not None:
        block, source = block_for(kernel, args.block, args.model)
    elif args.block is not None or args.model == "llvm":
        block, source = args.block, "given"
    else:
        block = usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
        source = "--max-flat-workgroup-size" if usage.max_flat_workgroup_size else f"default {MAX_WORKGROUP_SIZE}"
    source = {"reqd_workgroup_size": ".reqd_workgroup_size", "max_flat_workgroup_size": ".max_flat_workgroup_size",
              "given": "--block"}.get(source, source)
    dynamic_lds = args.dynamic_lds_grid[0] if args.dynamic_lds_grid else 0
    plot_sweep(args.plot, usage, args.model, options, block=block, dynamic_lds=dynamic_lds, device=args.device,
               title=title, block_source=source)
    print(f"plot written to {args.plot}", file=sys.stderr)


LIMITER_MARK = {"vgpr": "v", "agpr": "a", "sgpr": "s", "lds": "L", "waves": "w", "barriers": "b",
                "workgroup_slots": "g", "block_size": "B", None: "?"}


def render(title, model, blocks, lds_sizes, grid) -> str:
    cells = {(c["dynamic_lds"], c["block_size"]): c for c in grid}
    rows = []
    for dyn in lds_sizes:
        row = [str(dyn)]
        for block in blocks:
            c = cells[(dyn, block)]
            row.append(c["error"] or f"{c['blocks_per_cu']}{LIMITER_MARK.get(c['limiter'], '?')}")
        rows.append(row)
    legend = "limiter: v=VGPR s=SGPR L=LDS w=wave slots b=barriers B=block size"
    return (f"{title} ({model} model): workgroups per CU, block size across, dynamic LDS bytes down\n"
            + table(rows, ["dyn LDS \\ block"] + [str(b) for b in blocks]) + f"\n  {legend}")
