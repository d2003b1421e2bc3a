#!/usr/bin/env python3
"""Benchmark occupancy queries on a parsed kernel: cached (goal <= 2 us) and uncached (goal <= 20 us).

    python tools/bench_occupancy.py [--calls 200000]

"Cached" is amdocc.occupancy() asked the same question again (what a launcher does every launch).
"Uncached" computes a new answer each time: every call uses a (block size, dynamic LDS) pair not
asked before, so the result cache never hits. Times are per call, best of 5 rounds, in this process.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def per_call(fn, calls: int, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(calls)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200_000)
    args = ap.parse_args()

    import amdocc
    from amdocc.models import compute, usage_of
    from amdocc.models.nextstep import search_next_step
    from amdocc.samples import path

    kernel = next(
        k for co in amdocc.load(path()) if co.processor == "gfx942" for k in co.kernels if k.name.startswith("_Z9saxpy")
    )
    print(f"kernel: {kernel.name} on gfx942 (from {path().name})")
    for model in ("hip", "llvm", "hw"):
        amdocc.occupancy(kernel, block_size=256, model=model)  # warm the cache and the tables

        def cached(n, model=model):
            for _ in range(n):
                amdocc.occupancy(kernel, block_size=256, model=model)

        def uncached(n, model=model):
            for i in range(n):
                # a fresh (block, dynamic LDS) pair each call: never in the cache
                amdocc.occupancy(kernel, block_size=64 + (i % 961), dynamic_lds=i // 961, model=model)

        def direct(n, model=model):
            u = usage_of(kernel)
            for i in range(n):
                compute(u, model, 64 + (i % 961), i // 961)

        c = per_call(cached, args.calls)
        u = per_call(uncached, min(args.calls, 50_000), rounds=1)
        d = per_call(direct, min(args.calls, 50_000))
        print(
            f"{model:5s} cached {c:6.2f} us/call (goal <= 2)   uncached {u:6.2f} us/call (goal <= 20)   "
            f"model function alone {d:6.2f} us/call"
        )
    occ = amdocc.occupancy(kernel, block_size=256)
    u = usage_of(kernel)
    step = per_call(lambda n: [search_next_step(u, occ) for _ in range(n)], 2000)
    print(f"next step (bisection over the model, computed only when shown): {step:.1f} us/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
