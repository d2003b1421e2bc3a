#!/usr/bin/env python3
"""Benchmark: register liveness of large kernels against their own disassembly, in one process.

For each kernel of the files given (default: the amd-aiter corpus) with at least
``--min-instructions`` instructions (default 4,000), up to ``--limit`` kernels, three steps are
timed in this process, best of ``--repeat`` after one warm-up (which compiles the def/use table):
LLVM's disassembly of the kernel (amdocc.isa.disassemble), its control-flow graph
(amdocc.isa.control_flow) and the liveness pass (amdocc.isa.analysis.kernel_liveness: def/use of
every instruction, the backward dataflow, the refined figure and the peaks). CPU time of this
process (``time.process_time``), so the other processes of a shared machine weigh less; the
ratio printed is liveness time / disassembly time, which holds across machines better than the
seconds do. The goal (issue 28): liveness of a 4,000-instruction kernel well under 0.1 s.

    python tools/bench_liveness.py [PATH ...] [--min-instructions 4000] [--limit 5] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best_of(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """(least CPU seconds over ``repeat`` calls after a warm-up, the last result)."""
    result = fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(ROOT / ".cache/aiter/aiter_meta/hsa")])
    ap.add_argument("--min-instructions", type=int, default=4000)
    ap.add_argument("--limit", type=int, default=5, help="kernels to time (default 5)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    import amdocc
    from amdocc import caches
    from amdocc.errors import Origin
    from amdocc.isa import control_flow, disassemble, kernel_code, library
    from amdocc.isa.analysis import kernel_liveness
    from amdocc.isa.model import Instruction

    def cold_decode(kernel: amdocc.Kernel, origin: Origin | None) -> tuple[Instruction, ...]:
        """Decoding as a process's first kernel meets it: no window of its code remembered."""
        caches.clear("amdocc.isa.decode._DECODED")
        return disassemble(kernel, origin=origin)

    files: list[str] = []
    for p in args.paths:
        files += sorted(str(f) for f in Path(p).rglob("*.co")) if os.path.isdir(p) else [p]
    print(f"libLLVM: {library().description}")
    print(f"{'instructions':>12}  {'blocks':>6}  {'decode ms':>9}  {'flow ms':>7}  {'liveness ms':>11}  ratio  kernel")
    timed = 0
    ratios: list[float] = []
    for f in files:
        for co in amdocc.load(f):
            for k in co.kernels:
                code = kernel_code(k, co.origin)
                if len(code.code) < 4 * args.min_instructions:  # no instruction is shorter than 4 bytes
                    continue
                decode_s, instructions = best_of(args.repeat, lambda k=k, co=co: cold_decode(k, co.origin))
                if len(instructions) < args.min_instructions:
                    continue
                flow_s, flow = best_of(args.repeat, lambda ins=instructions: control_flow(ins))
                live_s, live = best_of(
                    args.repeat, lambda k=k, c=code, ins=instructions, fl=flow: kernel_liveness(k, c, ins, fl)
                )
                state = "" if live.unknown is None else f"  (unknown: {live.unknown})"
                ratio = live_s / decode_s if decode_s else float("inf")
                ratios.append(ratio)
                print(
                    f"{len(instructions):>12}  {len(flow.blocks):>6}  {decode_s * 1e3:>9.1f}  {flow_s * 1e3:>7.1f}  "
                    f"{live_s * 1e3:>11.1f}  {ratio:5.2f}  {k.name[:60]} ({co.processor}){state}"
                )
                timed += 1
                if timed >= args.limit:
                    break
            if timed >= args.limit:
                break
        if timed >= args.limit:
            break
    if not timed:
        print(f"no kernel with {args.min_instructions} instructions or more in {args.paths}", file=sys.stderr)
        return 2
    print(f"liveness / disassembly CPU time: {min(ratios):.2f}..{max(ratios):.2f} over {timed} kernel(s)")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
