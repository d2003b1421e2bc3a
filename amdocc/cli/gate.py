"""``amdocc gate``: would FlashInfer route this prefill to AITER's asm kernel, and why (not)."""

from __future__ import annotations

import argparse
import sys

from ..errors import ExitCode
from . import args as a

DESCRIPTION = """Decide the asm-prefill route as FlashInfer's ROCm port does (gfx950 from qo_len 2048,
never gfx942; bf16, head dims 128/128, no soft cap, no window; FLASHINFER_AITER_ASM_PREFILL=0
pins CK Tile; not during graph capture; AITER_ASM_DIR set), then find AITER's kernel through
$AITER_ASM_DIR/<arch>/fmha_v3_fwd/ and its manifest and validate the .co statically. Prints the
route and every reason; exit 0 either way."""


DTYPES = ("bf16", "fp16", "fp8", "fp32")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--arch", required=True, type=a.Processor(), help="device gcnArchName, e.g. gfx950:sramecc+:xnack-"
    )
    parser.add_argument(
        "--device",
        type=a.Device(),
        help="product (tables/devices.toml) for CU count and LDS; must be a --arch processor",
    )
    parser.add_argument("--cu-count", type=a.integer(1), help="CUs of the device (picks MI300/MI308 kernels on gfx942)")
    parser.add_argument("--qo-len", type=a.integer(1), required=True)
    parser.add_argument("--kv-len", type=a.integer(1), required=True)
    parser.add_argument("--dtype", type=a.OneOf(DTYPES, "dtype"), default="bf16", metavar="{" + ",".join(DTYPES) + "}")
    parser.add_argument("--head-dim-qk", type=a.integer(1), default=128)
    parser.add_argument("--head-dim-v", type=a.integer(1), default=128)
    parser.add_argument("--logits-soft-cap", type=a.Number(0.0), default=0.0)
    parser.add_argument("--window-left", type=a.integer(-1), default=-1, help="-1: no sliding window")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--group", action="store_true", help="variable-length (group mode) prefill")
    parser.add_argument(
        "--bf16-cvt",
        type=a.OneOf(("0", "1", "2"), "bf16 rounding mode", int),
        default=0,
        metavar="{0,1,2}",
        help="gfx942 rounding mode (0 rtne, 1 rtna, 2 rtz)",
    )
    parser.add_argument("--capturing", action="store_true", help="the stream is being captured into a graph")
    parser.add_argument(
        "--asm-dir",
        type=a.ExistingPath(stdin=False, directory=True),
        help="AITER's hsa/ directory (default: $AITER_ASM_DIR)",
    )


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.gate_op import gate
    from ..policy.prefill_gate import sku_folders
    from ..targets import processor_name

    proc = processor_name(args.arch)
    if sku_folders(proc) is None:
        a.refuse(
            args,
            ("cu_count", "bf16_cvt"),
            f"used only to choose among AITER's per-SKU kernel folders, and "
            f"AITER keeps none for {proc} (tables/prefill_gate.toml, "
            "aiter.subfolder_by_cu)",
        )
    d = gate(
        args.arch,
        args.qo_len,
        args.kv_len,
        dtype=args.dtype,
        head_dim_qk=args.head_dim_qk,
        head_dim_v=args.head_dim_v,
        logits_soft_cap=args.logits_soft_cap,
        window_left=args.window_left,
        causal=args.causal,
        group_mode=args.group,
        bf16_cvt=args.bf16_cvt,
        capturing=args.capturing,
        asm_dir=args.asm_dir,
        device=args.device,
        cu_count=args.cu_count,
    )
    if args.json:
        sys.stdout.write(report.dumps(d.as_dict()) + "\n")
    else:
        print(f"route: {d.route}")
        for c in d.checks:
            print(f"  {'ok ' if c.ok else 'NO '} {c.rule}: {c.detail}")
    return ExitCode.OK
