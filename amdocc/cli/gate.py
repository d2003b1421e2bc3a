"""``amdocc gate``: would FlashInfer route this prefill to AITER's asm kernel, and why (not)."""
from __future__ import annotations

import sys

DESCRIPTION = """Decide the asm-prefill route as FlashInfer's ROCm port does (gfx950 from qo_len 2048,
never gfx942; bf16, head dims 128/128, no soft cap, no window; FLASHINFER_AITER_ASM_PREFILL=0
pins CK Tile; not during graph capture; AITER_ASM_DIR set), then find AITER's kernel through
$AITER_ASM_DIR/<arch>/fmha_v3_fwd/ and its manifest and validate the .co statically. Prints the
route and every reason; exit 0 either way."""


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--arch", required=True, help="device gcnArchName, e.g. gfx950:sramecc+:xnack-")
    parser.add_argument("--device", help="product (tables/devices.toml) for CU count and LDS")
    parser.add_argument("--cu-count", type=int, help="CUs of the device (picks MI300/MI308 kernels on gfx942)")
    parser.add_argument("--qo-len", type=int, required=True)
    parser.add_argument("--kv-len", type=int, required=True)
    parser.add_argument("--dtype", default="bf16")
    parser.add_argument("--head-dim-qk", type=int, default=128)
    parser.add_argument("--head-dim-v", type=int, default=128)
    parser.add_argument("--logits-soft-cap", type=float, default=0.0)
    parser.add_argument("--window-left", type=int, default=-1)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--group", action="store_true", help="variable-length (group mode) prefill")
    parser.add_argument("--bf16-cvt", type=int, default=0, help="gfx942 rounding mode (0 rtne, 1 rtna, 2 rtz)")
    parser.add_argument("--capturing", action="store_true", help="the stream is being captured into a graph")
    parser.add_argument("--asm-dir", help="AITER's hsa/ directory (default: $AITER_ASM_DIR)")


def run(args) -> int:
    from ..policy.prefill_gate import decide
    from .. import report

    cu_count, lds = args.cu_count, None
    if args.device:
        from ..devices import get_device
        dev = get_device(args.device)
        cu_count, lds = cu_count or dev.compute_units, dev.lds
    d = decide(arch=args.arch, qo_len=args.qo_len, kv_len=args.kv_len, dtype=args.dtype,
               head_dim_qk=args.head_dim_qk, head_dim_v=args.head_dim_v, logits_soft_cap=args.logits_soft_cap,
               window_left=args.window_left, causal=args.causal, group_mode=args.group,
               bf16_cvt=args.bf16_cvt, capturing=args.capturing, asm_dir=args.asm_dir, cu_count=cu_count,
               lds_bytes=lds)
    if args.json:
        sys.stdout.write(report.dumps(d.as_dict()) + "\n")
    else:
        print(f"route: {d.route}")
        for c in d.checks:
            print(f"  {'ok ' if c.ok else 'NO '} {c.rule}: {c.detail}")
    return 0
