#!/usr/bin/env python3
"""Memory of `amdocc diff OLD NEW` against `amdocc census OLD NEW` on the same pair (issue 26,
"Must show"): diff must hold no more than the census. Benchmark only (no test measures memory).

    python tools/bench_diff_memory.py [WHEEL [WHEEL]] [--jobs N] [--repeat 1]

Default pair: cupy-rocm-5-0 13.3.0's wheel against itself (.cache/rocm-wheels/, fetched by
.ci/setup-tests.sh: ``pip download --no-deps cupy-rocm-5-0==13.3.0``). Each command runs as its
own process tree (tools/bench_measure.py); peak is the largest sum of the tree's resident sets,
"largest" the largest single process (what /usr/bin/time -v reports). Both commands write JSON
to /dev/null, with the same --jobs (default: as a user's run chooses).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import bench_measure  # noqa: E402

WHEEL = ROOT / ".cache" / "rocm-wheels" / "cupy_rocm_5_0-13.3.0-cp311-cp311-manylinux2014_x86_64.whl"
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "amdocc-bench-pycache")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="OLD [NEW] (default: the cupy-rocm-5-0 wheel, twice)")
    parser.add_argument("--jobs", type=int, help="--jobs for both commands (default: each chooses)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, interleaved (default 1)")
    args = parser.parse_args()
    old, new = ([*args.paths, args.paths[0]] if len(args.paths) == 1 else args.paths) or [WHEEL, WHEEL]
    for p in (old, new):
        if not p.exists():
            raise SystemExit(f"{p} not found (run .ci/setup-tests.sh, or give the pair)")
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    amdocc = [sys.executable, "-m", "amdocc"]
    runs = {
        "census OLD NEW": [*amdocc, "census", "--json", *jobs, str(old), str(new)],
        "diff OLD NEW": [*amdocc, "diff", "--json", *jobs, str(old), str(new)],
    }
    print(f"{old.name} -> {new.name}; {bench_measure.load_line()}")
    best = bench_measure.best_of(runs, args.repeat, ENV)
    for label, r in best.items():
        workers = f"{r.workers} workers" if r.workers else "one process"
        print(f"  {label}: peak {r.peak_mib} MiB (largest process {r.largest_mib} MiB), {r.wall:.1f} s wall, {workers}")
    census, diff = best["census OLD NEW"], best["diff OLD NEW"]
    ratio = diff.peak_mib / census.peak_mib
    print(f"  diff/census peak memory: {ratio:.2f} (goal <= 1.00)")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
