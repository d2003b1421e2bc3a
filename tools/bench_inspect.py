#!/usr/bin/env python3
"""Benchmark: amdocc inspecting the amd-aiter corpus vs ``llvm-readelf-22 --notes`` on the same files.

Both read every file, decode the metadata note and print it. llvm-readelf runs once over all
files (one process). amdocc runs in this process (one core: parse, table, full JSON), and as
the command a user types, `amdocc inspect --json DIR` and `--json-lines DIR`, with the default
--jobs (the idle CPUs when it starts; the worker count it chose is printed) and with --jobs 1.
Each is timed best-of-N, wall clock and CPU, the runs interleaved so a busy machine slows all
alike, and printed as a ratio: LLVM time / amdocc time (above 1.0 means amdocc is faster), with
the load average before and after.

    python tools/bench_inspect.py [CORPUS_DIR] [--repeat 5]

CORPUS_DIR defaults to .cache/aiter/aiter_meta/hsa (where .ci/run unpacks the wheel).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import bench_measure  # noqa: E402 - found through the sys.path entry just above


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process)."""
    start, used = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - used


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    files = sorted(str(p) for p in Path(args.corpus).rglob("*.co"))
    if not files:
        print(f"no .co files under {args.corpus}", file=sys.stderr)
        return 2
    total = sum(os.path.getsize(f) for f in files)
    # In-process runs collect garbage as the command line does (amdocc.cli.main).
    gc.set_threshold(100_000, 50, 100)

    from amdocc import report
    from amdocc.cli.inspect import render_code_object
    from amdocc.loader import iter_load

    def amdocc_text():
        out = io.StringIO()
        with redirect_stdout(out):
            for f in files:
                for co in iter_load(f):
                    print(render_code_object(co))

    def amdocc_json():
        out = io.BytesIO()
        for f in files:
            for co in iter_load(f):
                out.write(report.compact_json(report.code_object_record(co), co.metadata_plain))

    def amdocc_parse():
        for f in files:
            for _ in iter_load(f):
                pass

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # As tools/bench_users.py: a user's pip install has amdocc's bytecode compiled. Without it
    # (PYTHONDONTWRITEBYTECODE=1, as on this project's CI-like machine, and a fresh worktree
    # has no __pycache__) every run compiles amdocc's modules again: ~490 M instructions, more
    # than the rest of the start-up. The bytecode goes to a cache outside the tree, and the
    # first command runs once, untimed, to fill it.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "amdocc-bench-pycache")
    amdocc = [sys.executable, "-m", "amdocc", "inspect"]
    # llvm-readelf takes every file in one process (xargs would split a long list in two).
    commands = {
        "llvm": ["llvm-readelf-22", "--notes", *files],
        "`amdocc inspect --json DIR` (default --jobs)": [*amdocc, "--json", args.corpus],
        "`amdocc inspect --json --jobs 1 DIR`": [*amdocc, "--json", "--jobs", "1", args.corpus],
        "`amdocc inspect --json-lines DIR` (default --jobs)": [*amdocc, "--json-lines", args.corpus],
    }
    in_process = {
        "parse only (amdocc.iter_load, this process)": amdocc_parse,
        "inspect, table output (this process)": amdocc_text,
        "inspect --json (every field, this process)": amdocc_json,
    }
    print(f"corpus: {len(files)} files, {total / 1e6:.1f} MB ({args.corpus})")
    print(f"before: {bench_measure.load_line()}")
    best: dict = {label: None for label in commands}
    best_here = {label: (float("inf"), float("inf")) for label in in_process}
    subprocess.run([*amdocc, "--json", files[0]], env=env, stdout=subprocess.DEVNULL, check=True)  # the bytecode
    for _ in range(args.repeat):  # interleaved: load on a shared machine hits all alike
        for label, cmd in commands.items():
            best[label] = bench_measure.run(cmd, env).better(best[label])
        for label, fn in in_process.items():
            wall, cpu = timed(fn)
            best_here[label] = (min(best_here[label][0], wall), min(best_here[label][1], cpu))
    print(f"after:  {bench_measure.load_line()}")
    llvm = best.pop("llvm")
    print(f"llvm-readelf-22 --notes, one process: {llvm.wall:.3f} s wall, {llvm.cpu:.3f} s CPU")
    for label, (wall, cpu) in best_here.items():
        print(
            f"amdocc {label}: {wall:.3f} s wall, {cpu:.3f} s CPU   ratio LLVM/amdocc = "
            f"{llvm.wall / wall:.2f} wall, {llvm.cpu / cpu:.2f} CPU"
        )
    for label, r in best.items():
        jobs = f"{r.workers} worker processes" if r.workers else "one process"
        print(
            f"amdocc {label}: {r.wall:.3f} s wall, {r.cpu:.3f} s CPU, {jobs}, peak {r.peak_mib} MiB   "
            f"ratio LLVM/amdocc = {llvm.wall / r.wall:.2f} wall, {llvm.cpu / r.cpu:.2f} CPU"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
