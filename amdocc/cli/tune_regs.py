"""``amdocc tune-regs``: what a register budget would cost, from the kernel's own compiler."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import args as a
from .render import error, fmt, table

DESCRIPTION = """For each kernel of a Triton cache (a cache directory, an entry, or an entry's file),
recompile its unmodified .llir with the installed Triton's own AMD code generator and require its
.amdgcn byte for byte (exit 3 for an entry it does not reproduce: another Triton built it); then
compile it again with "amdgpu-waves-per-eu"="N,N" for each N from what the kernel reaches to the
processor's maximum (or --waves), and with "amdgpu-agpr-alloc" where the IR carries it, and show
per point the registers, spills (in loops), AGPR<->VGPR copies and waves per SIMD; '*' marks the
points no other point beats on both occupancy (hip, at the entry's launch) and spilled dwords.
LLVM IR from elsewhere (.ll) is compiled by the libLLVM --compiler names; a code object with the
same stem beside it (.o/.co/.hsaco) must be reproduced first, otherwise the answer is for that
compiler ("exact": false)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH", type=a.ExistingPath(stdin=False),
                        help="Triton cache directory, entry or entry file; or a .ll (and its code object)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help='print {"results": [...]} (docs/tune-regs.md)')
    parser.add_argument("--waves", type=a.integers(1, 20), metavar="N,N,...",
                        help="the amdgpu-waves-per-eu values to compile (default: from what the kernel "
                        "reaches as built to the processor's maximum waves per SIMD)")  # fmt: skip
    parser.add_argument("--agpr-alloc", type=a.integers(0, 512), metavar="N,N,...",
                        help="AGPR counts to try with each waves value where the IR carries "
                        "amdgpu-agpr-alloc (default: half the budget at each waves value)")  # fmt: skip
    a.add_kernel_argument(parser, "only kernels whose name matches this regular expression")
    parser.add_argument("--compiler", metavar="LIB", type=a.ExistingPath(stdin=False, directory=False),
                        help="the libLLVM that compiles LLVM IR input "
                        "(e.g. /usr/lib/llvm-22/lib/libLLVM.so.22.1)")  # fmt: skip
    parser.add_argument("--target", metavar="GFX", type=a.Processor(),
                        help="the processor of LLVM IR whose kernel names no target-cpu")  # fmt: skip
    parser.add_argument("--timeout", type=a.Number(0, exclusive=True, what="seconds"), default=300.0,
                        metavar="SECONDS", help="how long one compile may take before that point is "
                        "reported as a timeout (default 300)")  # fmt: skip
    parser.add_argument("--plot", metavar="FILE", type=a.Checked(_check_plot_path, "out.png", ("", "out.xyz")),
                        help="also draw waves per SIMD against spilled dwords per kernel, the frontier "
                        "joined (.png, .svg or .pdf; needs matplotlib: amdocc[plot])")  # fmt: skip


def _check_plot_path(text: str) -> None:
    from .plot import check_plot_path

    check_plot_path(text)


HEADERS = ["", "waves/eu", "agpr", "vgprs", "agprs", "sgprs", "spill v", "spill s", "scratch",
           "in loops st/ld", "acc copies", "loop instr", "llvm", "hip", "error"]  # fmt: skip


def _row(p: dict[str, Any]) -> list[str]:
    loops = p["spills_in_loops"]
    return [
        "*" if p["frontier"] else "",
        "as built" if p["waves_per_eu"] is None and p["agpr_alloc"] is None else fmt(p["waves_per_eu"], "kept"),
        fmt(p["agpr_alloc"], "kept"),
        fmt(p["vgprs"]),
        fmt(p["agprs"]),
        fmt(p["sgprs"]),
        fmt(p["vgpr_spill_count"]),
        fmt(p["sgpr_spill_count"]),
        fmt(p["private_segment_fixed_size"]),
        f"{loops['vgpr']}/{loops['vgpr_reload']}" if loops else "-",
        fmt(p["accvgpr_copies"]),
        fmt(p["main_loop_instructions"]),
        fmt(p["waves_per_simd"]["llvm"]),
        fmt(p["waves_per_simd"]["hip"]),
        (p["error"] or "").splitlines()[0][:60] if p["error"] else "",
    ]


def render(result: dict[str, Any]) -> str:
    c = result["compiler"]
    if c.get("name") == "triton":
        who = f"Triton {c.get('triton_version')} (AMD codegen {c.get('codegen_revision')})"
    else:
        who = f"{c.get('library')} (LLVM {c.get('version')})"
    launch = result["launch"]
    lines = [
        result["path"],
        f"  {result['kernel']}  {result['target']}  compiled by {who}; "
        + ("exact: reproduces the build" if result["exact"] else "not proven to be the compiler that built it"),
        f"  launch: {launch['block_size']} threads, {launch['dynamic_lds']} B dynamic LDS"
        + (f"; {len(result['points'])} points in {result['seconds']} s" if result["seconds"] else ""),
    ]
    if result["points"]:
        lines.append(table([_row(p) for p in result["points"]], HEADERS))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.tune_regs_op import TuneOptions, tune_regs_iter
    from ..errors import UsageError

    if args.target and not args.compiler:
        raise UsageError("--target applies to LLVM IR input, which needs --compiler LIB")
    options = TuneOptions(
        waves=tuple(args.waves) if args.waves else None,
        agpr_alloc=tuple(args.agpr_alloc) if args.agpr_alloc is not None else None,
        kernel=args.kernel,
        compiler=args.compiler,
        target=args.target,
        timeout=args.timeout,
    )
    results = []
    for result in tune_regs_iter(args.paths, options):
        results.append(result)
        if result["error"]:
            error(result["error"])
        if not args.json:
            print(render(result))
            sys.stdout.flush()
    if not results:
        raise UsageError(f"no kernel matches --kernel {args.kernel!r}" if args.kernel else "no kernel found")
    if args.json:
        print(report.dumps({"results": results}))
    if args.plot:
        from .plot_tune import plot_frontier

        plot_frontier(args.plot, results)
    return int(max(r["exit_status"] for r in results))
