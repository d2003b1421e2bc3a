#!/usr/bin/env python3
"""Benchmark: amdocc's LLVM-C disassembly of the amd-aiter corpus vs ``llvm-objdump-22 -d``.

Both decode every instruction of every kernel of the same files. objdump runs once per file
(it needs ``--mcpu`` per processor, so files are grouped by processor directory and each group is
one objdump process over all its files), sequentially for "one process" and with ``--jobs N``
groups side by side. amdocc runs ``amdocc isa --json`` (decode, control flow, loops, spills, mix,
JSON out) as a user types it, with ``--jobs 1`` and ``--jobs N``, and in this process the bare
decode (amdocc.isa.disassemble) and, on the same decoded kernels, the control-flow graph and
register liveness (amdocc.isa.analysis.kernel_liveness; its seconds alone are printed beside the
decode's, with how many kernels had no figure and why, docs/liveness.md); every in-process repeat
starts with amdocc's caches empty (decoded windows, def/use answers), as a fresh process does. Wall clock, best of
``--repeat``, interleaved; the ratio printed is objdump time / amdocc time (above 1.0: amdocc is
faster), with the load average around it.

    python tools/bench_isa.py [CORPUS_DIR] [--repeat 3] [--jobs 2] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _objdump_group(processor: str, files: list[str]) -> int:
    out = subprocess.run(["llvm-objdump-22", "-d", f"--mcpu={processor}", *files], capture_output=True, check=True)
    return out.stdout.count(b"\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--limit", type=int, default=0, help="only the first N files (0: all)")
    args = ap.parse_args()

    files = sorted(str(p) for p in Path(args.corpus).rglob("*.co"))
    if args.limit:
        files = files[: args.limit]
    if not files:
        print(f"no .co files under {args.corpus}", file=sys.stderr)
        return 2
    import amdocc
    from amdocc import caches
    from amdocc.isa import control_flow, disassemble, kernel_code, library
    from amdocc.isa.analysis import kernel_liveness

    # Group by processor (every amd-aiter file is in hsa/<processor>/...; read it from the object).
    groups: dict[str, list[str]] = {}
    for f in files:
        for co in amdocc.load(f):
            groups.setdefault(co.processor, []).append(f)
            break
    print(f"{len(files)} files, processors {sorted(groups)}; {library().description}")

    def objdump_serial() -> None:
        for processor, fs in groups.items():
            _objdump_group(processor, fs)

    def objdump_parallel() -> None:
        chunks = [(p, fs[i :: args.jobs]) for p, fs in groups.items() for i in range(args.jobs) if fs[i :: args.jobs]]
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda c: _objdump_group(*c), chunks))

    def amdocc_cli(jobs: int) -> None:
        cmd = [sys.executable, "-m", "amdocc", "isa", "--json", "--jobs", str(jobs), *files]
        subprocess.run(cmd, check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))

    counted = [0]

    def amdocc_decode() -> None:
        caches.clear_all()  # each repeat starts as a fresh process: no decoded window remembered
        counted[0] = 0
        for f in files:
            for co in amdocc.load(f):
                for k in co.kernels:
                    counted[0] += len(disassemble(k, origin=co.origin))

    live_best = [float("inf")]
    unknown: dict[str, int] = {}

    def amdocc_liveness() -> None:
        """Decode, then time the control-flow graph and liveness of every kernel alone."""
        spent = 0.0
        unknown.clear()
        caches.clear_all()
        for f in files:
            for co in amdocc.load(f):
                for k in co.kernels:
                    instructions = disassemble(k, origin=co.origin)
                    code = kernel_code(k, co.origin)
                    start = time.perf_counter()
                    live = kernel_liveness(k, code, instructions, control_flow(instructions))
                    spent += time.perf_counter() - start
                    if live.unknown is not None:
                        reason = live.unknown.split(" (")[0].split(":")[0]
                        unknown[reason] = unknown.get(reason, 0) + 1
        live_best[0] = min(live_best[0], spent)

    runs = {
        "objdump, one process": objdump_serial,
        f"objdump, {args.jobs} jobs": objdump_parallel,
        "amdocc decode in-process": amdocc_decode,
        "amdocc decode + liveness in-process": amdocc_liveness,
        "amdocc isa --json --jobs 1": lambda: amdocc_cli(1),
        f"amdocc isa --json --jobs {args.jobs}": lambda: amdocc_cli(args.jobs),
    }
    best = dict.fromkeys(runs, float("inf"))
    load_before = os.getloadavg()
    for _ in range(args.repeat):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    load_after = os.getloadavg()
    print(f"{counted[0]} instructions; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    for name, seconds in best.items():
        print(f"  {name:36s} {seconds:8.2f} s  {counted[0] / seconds:10.0f} instructions/s")
    decode = best["amdocc decode in-process"]
    print(
        f"liveness (control flow + dataflow) alone: {live_best[0]:.2f} s, {counted[0] / live_best[0]:.0f} "
        f"instructions/s; ratio liveness/decode {live_best[0] / decode:.2f}"
    )
    print(f"kernels without a liveness figure: {sum(unknown.values())} {dict(sorted(unknown.items()))}")
    serial, parallel = best["objdump, one process"], best[f"objdump, {args.jobs} jobs"]
    print(f"ratio objdump/amdocc, one process (decode): {serial / best['amdocc decode in-process']:.2f}")
    print(f"ratio objdump/amdocc, one process (isa --json --jobs 1): {serial / best['amdocc isa --json --jobs 1']:.2f}")
    amdocc_jobs = best[f"amdocc isa --json --jobs {args.jobs}"]
    # llvm-objdump has no --jobs: what a user runs is one objdump over the files, and the split
    # into groups side by side is the stricter comparison, printed too.
    print(f"ratio objdump one process / amdocc isa --json --jobs {args.jobs}: {serial / amdocc_jobs:.2f}")
    side_by_side = f"objdump, {args.jobs} groups side by side"
    print(f"ratio {side_by_side} / amdocc isa --json --jobs {args.jobs}: {parallel / amdocc_jobs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
