"""``amdocc split``: the KV split count for AITER's FlyDSL fp8_mqa_logits, with its occupancy's source."""
from __future__ import annotations

import sys

DESCRIPTION = """Choose the KV split count as AITER's fp8_mqa_logits does, with the kernel's occupancy
taken from amdocc instead of a hand-measured table. Either give the launch shape (--seq-len,
--seq-len-kv, --rows-per-block, --block-kv, --arch) and the occupancy's origin (a code object
PATH with --kernel, --block and --dynamic-lds; or --occupancy N; else the default 2), or give the
cost model's inputs directly (--grid-x, --effective-cus, --window-tiles, --max-splits, --overhead)."""


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code object holding the kernel")
    parser.add_argument("--json", action="store_true")
    shape = parser.add_argument_group("launch shape")
    shape.add_argument("--arch", help="device gcnArchName, e.g. gfx942 or gfx950:sramecc+:xnack-")
    shape.add_argument("--seq-len", type=int)
    shape.add_argument("--seq-len-kv", type=int)
    shape.add_argument("--rows-per-block", type=int, help="query rows per block (RPB x WPB for _lds variants)")
    shape.add_argument("--block-kv", type=int, help="KV tile (block_kv)")
    shape.add_argument("--cu-count", type=int, help="CUs of the device (default: the policy's fallback)")
    shape.add_argument("--num-heads", type=int, help="query heads (decides the streaming low-head case)")
    shape.add_argument("--aggressive", action="store_true", default=None, help="force the streaming low-head case")
    occ = parser.add_argument_group("occupancy")
    occ.add_argument("--occupancy", type=int, help="blocks per CU, if known")
    occ.add_argument("--kernel", metavar="REGEX", help="the kernel in PATH")
    occ.add_argument("--block", type=int, help="threads per block of the kernel")
    occ.add_argument("--dynamic-lds", type=int, default=0, help="dynamic LDS bytes per block")
    direct = parser.add_argument_group("cost model inputs (instead of a launch shape)")
    for flag in ("--grid-x", "--effective-cus", "--window-tiles", "--max-splits", "--overhead"):
        direct.add_argument(flag, type=int)


def run(args) -> int:
    from ..errors import UsageError
    from ..policy.splits import auto_num_splits, splits_by_wave_cost
    from .. import report

    direct = (args.grid_x, args.effective_cus, args.window_tiles, args.max_splits, args.overhead)
    if any(v is not None for v in direct):
        if any(v is None for v in direct):
            raise UsageError("the cost model needs --grid-x, --effective-cus, --window-tiles, --max-splits and --overhead")
        splits = splits_by_wave_cost(*direct)
        out = {"splits": splits, "reason": "wave-quantized cost", "inputs": dict(zip(
            ("grid_x", "effective_cus", "window_tiles", "max_splits", "overhead"), direct))}
    else:
        needed = {"--arch": args.arch, "--seq-len": args.seq_len, "--seq-len-kv": args.seq_len_kv,
                  "--rows-per-block": args.rows_per_block, "--block-kv": args.block_kv}
        missing = [k for k, v in needed.items() if v is None]
        if missing:
            raise UsageError(f"give {', '.join(missing)} (or the cost model inputs)")
        kernel = None
        if args.paths:
            from .occupancy import selected_kernels
            args.target, args.device = args.arch, None
            failures: list[str] = []
            chosen = list(selected_kernels(args, failures))
            if failures or len(chosen) != 1:
                raise UsageError(("; ".join(failures) + "; " if failures else "")
                                 + f"{len(chosen)} kernels selected for {args.arch}; use --kernel")
            kernel = chosen[0][1]
        decision = auto_num_splits(args.seq_len, args.seq_len_kv, args.rows_per_block, args.block_kv,
                                   arch=args.arch, cu_count=args.cu_count, num_heads=args.num_heads,
                                   aggressive=args.aggressive, occupancy=args.occupancy, kernel=kernel,
                                   block_size=args.block, dynamic_lds=args.dynamic_lds)
        out = decision.as_dict()
    if args.json:
        sys.stdout.write(report.dumps(out) + "\n")
    else:
        occ = out.get("occupancy")
        print(f"splits: {out['splits']} ({out['reason']})")
        if occ:
            print(f"occupancy: {occ['blocks_per_cu']} blocks/CU from {occ['source']}"
                  + (f" — {occ['detail']}" if occ["detail"] else ""))
        for key in ("arch_policy", "grid_x", "cu_count", "cu_source", "max_splits", "target", "effective_cus",
                    "window_tiles"):
            if out.get(key) is not None:
                print(f"{key}: {out[key]}")
    return 0
