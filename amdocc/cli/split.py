"""``amdocc split``: the KV split count for AITER's FlyDSL fp8_mqa_logits, with its occupancy's source."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode
from . import args as a
from .args import add_block_argument, add_kernel_argument

if TYPE_CHECKING:
    pass

DESCRIPTION = """Choose the KV split count as AITER's fp8_mqa_logits does, with the kernel's occupancy
taken from amdocc instead of a hand-measured table. Either give the launch shape (--seq-len,
--seq-len-kv, --rows-per-block, --block-kv, --arch) and the occupancy's origin (a code object
PATH with --kernel, --block and --dynamic-lds; or --occupancy N; else the default 2), or give the
cost model's inputs directly (--grid-x, --effective-cus, --window-tiles, --max-splits, --overhead)."""


SHAPE_DESTS = ("arch", "seq_len", "seq_len_kv", "rows_per_block", "block_kv", "cu_count", "num_heads", "aggressive")
OCCUPANCY_DESTS = ("paths", "occupancy", "kernel", "block", "dynamic_lds", "what_if")
DIRECT_DESTS = ("grid_x", "effective_cus", "window_tiles", "max_splits", "overhead")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code object holding the kernel")
    parser.add_argument("--json", action="store_true")
    shape = parser.add_argument_group("launch shape")
    shape.add_argument("--arch", type=a.Processor(), help="device gcnArchName, e.g. gfx942 or gfx950:sramecc+:xnack-")
    shape.add_argument("--seq-len", type=a.integer(0), help="query rows (>= 0)")
    shape.add_argument("--seq-len-kv", type=a.integer(0), help="KV length (>= 0)")
    shape.add_argument("--rows-per-block", type=a.integer(1), help="query rows per block (RPB x WPB for _lds variants)")
    shape.add_argument("--block-kv", type=a.integer(1), help="KV tile (block_kv)")
    shape.add_argument(
        "--cu-count", type=a.integer(1), help="CUs of the device (default: the policy's fallback, with a warning)"
    )
    shape.add_argument("--num-heads", type=a.integer(1), help="query heads (decides the streaming low-head case)")
    shape.add_argument("--aggressive", action="store_const", const=True, help="force the streaming low-head case")
    occ = parser.add_argument_group("occupancy")
    occ.add_argument("--occupancy", type=a.integer(1), help="blocks per CU, if known (instead of a PATH)")
    add_kernel_argument(occ, "the kernel in PATH (name, demangled name or symbol)")
    add_block_argument(occ, "threads per block of the kernel")
    occ.add_argument("--dynamic-lds", type=a.LdsSize(), default=0, help="dynamic LDS bytes per block")
    occ.add_argument(
        "--what-if",
        action="store_true",
        help="evaluate a kernel whose code object cannot run on --arch there anyway, labelled what-if",
    )
    direct = parser.add_argument_group("cost model inputs (instead of a launch shape)")
    for flag, minimum in (
        ("--grid-x", 1),
        ("--effective-cus", 1),
        ("--window-tiles", 1),
        ("--max-splits", 1),
        ("--overhead", 0),
    ):
        direct.add_argument(flag, type=a.integer(minimum), help=f">= {minimum}")


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.split_op import split, split_by_cost

    direct = tuple(getattr(args, d) for d in DIRECT_DESTS)
    if any(v is not None for v in direct):
        a.refuse(args, SHAPE_DESTS + OCCUPANCY_DESTS, "not used with the cost model inputs (--grid-x ...)")
        if any(v is None for v in direct):
            raise a.UsageError(
                "the cost model needs --grid-x, --effective-cus, --window-tiles, --max-splits and --overhead"
            )
        out: dict[str, Any] = split_by_cost(*direct)
    else:
        needed = {
            "--arch": args.arch,
            "--seq-len": args.seq_len,
            "--seq-len-kv": args.seq_len_kv,
            "--rows-per-block": args.rows_per_block,
            "--block-kv": args.block_kv,
        }
        missing = [k for k, v in needed.items() if v is None]
        if missing:
            raise a.UsageError(f"give {', '.join(missing)} (or the cost model inputs)")
        if args.paths:
            a.refuse(args, ("occupancy",), "give either --occupancy or a PATH to take it from, not both")
        else:
            a.refuse(
                args,
                ("kernel", "block", "dynamic_lds", "what_if"),
                "only applies to a kernel read from a PATH, and none is given",
            )
        refuse_unused(args)
        out = split(
            args.seq_len,
            args.seq_len_kv,
            args.rows_per_block,
            args.block_kv,
            arch=args.arch,
            cu_count=args.cu_count,
            num_heads=args.num_heads,
            aggressive=args.aggressive,
            occupancy=args.occupancy,
            paths=args.paths,
            kernel=args.kernel,
            block_size=args.block,
            dynamic_lds=args.dynamic_lds,
            what_if=bool(args.what_if),
        )
    if args.json:
        sys.stdout.write(report.dumps(out) + "\n")
    else:
        occ = out.get("occupancy")
        print(f"splits: {out['splits']} ({out['reason']})")
        if occ:
            print(
                f"occupancy: {occ['blocks_per_cu']} workgroup{'' if occ['blocks_per_cu'] == 1 else 's'} "
                f"per {occ['unit']} from {occ['source']}" + (f" — {occ['detail']}" if occ["detail"] else "")
            )
        for key in (
            "arch_policy",
            "grid_x",
            "cu_count",
            "cu_source",
            "max_splits",
            "target",
            "effective_cus",
            "window_tiles",
        ):
            if out.get(key) is not None:
                print(f"{key}: {out[key]}")
        for w in out.get("warnings", ()):
            print(f"warning: {w}")
    return ExitCode.OK


def refuse_unused(args: argparse.Namespace) -> None:
    """Options the processor's policy row would not use for this launch are usage errors."""
    from ..policy.splits import unused_inputs

    unused = unused_inputs(
        args.arch, args.seq_len, args.seq_len_kv, num_heads=args.num_heads, aggressive=args.aggressive
    )
    dests = {"num_heads": ("num_heads",), "aggressive": ("aggressive",), "occupancy": OCCUPANCY_DESTS}
    for what, why in unused.items():
        shown = ["PATH" if d == "paths" else a.flag_of(args._parser, d) for d in dests[what] if a.given(args, d)]
        if shown:
            raise a.UsageError(f"{', '.join(shown)}: {why}")
