#!/usr/bin/env python3
"""Benchmark: amdocc inspecting the amd-aiter corpus vs ``llvm-readelf-22 --notes`` on the same files.

Both read every file, decode the metadata note and print it. llvm-readelf runs once over all
files (one process). amdocc runs in this process (one core: parse, table, full JSON), and as
the command a user types, `amdocc inspect --json DIR` and `--json-lines DIR` (default --jobs:
one process per CPU). Each is timed best-of-N wall clock, the runs interleaved so a busy
machine slows both alike, and printed as a ratio: LLVM time / amdocc time (above 1.0 means
amdocc is faster).

    python tools/bench_inspect.py [CORPUS_DIR] [--repeat 3]

CORPUS_DIR defaults to .cache/aiter/aiter_meta/hsa (where .ci/run unpacks the wheel).
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best_of(repeat: int, fn) -> float:
    return min(timed(fn) for _ in range(repeat))[0]


def timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process and of the children it waited for)."""
    import resource

    def cpu():
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    start, used = time.perf_counter(), cpu()
    fn()
    return time.perf_counter() - start, cpu() - used


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    files = sorted(str(p) for p in Path(args.corpus).rglob("*.co"))
    if not files:
        print(f"no .co files under {args.corpus}", file=sys.stderr)
        return 2
    total = sum(os.path.getsize(f) for f in files)

    from amdocc.cli.inspect import render_code_object
    from amdocc.loader import iter_load
    from amdocc import report

    def llvm():
        subprocess.run(["llvm-readelf-22", "--notes", *files], check=True, stdout=subprocess.DEVNULL)

    def amdocc_text():
        out = io.StringIO()
        with redirect_stdout(out):
            for f in files:
                for co in iter_load(f):
                    print(render_code_object(co))

    def amdocc_json():
        out = io.StringIO()
        for f in files:
            for co in iter_load(f):
                out.write(report.dumps(report.code_object_record(co)))

    def amdocc_parse():
        for f in files:
            for _ in iter_load(f):
                pass

    def cli(*form):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return lambda: subprocess.run([sys.executable, "-m", "amdocc", "inspect", *form, args.corpus],
                                      check=True, stdout=subprocess.DEVNULL, env=env)

    runs = {"llvm": llvm,
            "parse only (amdocc.iter_load, this process)": amdocc_parse,
            "inspect, table output (this process)": amdocc_text,
            "inspect --json (every field, this process)": amdocc_json,
            "`amdocc inspect --json DIR` (default --jobs)": cli("--json"),
            "`amdocc inspect --json-lines DIR` (default --jobs)": cli("--json-lines")}
    best = {label: (float("inf"), 0.0) for label in runs}
    for _ in range(args.repeat):            # interleaved: load on a shared machine hits all alike
        for label, fn in runs.items():
            best[label] = min(best[label], timed(fn))
    t_llvm, cpu_llvm = best.pop("llvm")
    print(f"corpus: {len(files)} files, {total / 1e6:.1f} MB ({args.corpus})")
    print(f"llvm-readelf-22 --notes, one process: {t_llvm:.3f} s wall, {cpu_llvm:.3f} s CPU")
    for label, (t, cpu) in best.items():
        print(f"amdocc {label}: {t:.3f} s wall, {cpu:.3f} s CPU   ratio LLVM/amdocc = {t_llvm / t:.2f} wall, "
              f"{cpu_llvm / cpu:.2f} CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
