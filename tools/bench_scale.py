#!/usr/bin/env python3
"""Scale benchmark: amdocc against LLVM's tools on big inputs, as ratios, with peak memory.

    python tools/bench_scale.py [--aiter DIR] [--kernels 2400] [--big-mb 1024] [--jobs 2]

1. A large synthetic fat binary: thousands of llc-22 kernels across every processor llc knows,
   one code object per processor, in one offload bundle (plain) and one CCOB (zstd). LLVM's
   pipeline on it: clang-offload-bundler-22 --list, --unbundle of every entry, then
   llvm-readelf-22 --notes on what came out. amdocc: `amdocc inspect FILE`.
2. The amd-aiter corpus (2,501 .co): `llvm-readelf-22 --notes` over all files in one process
   against `amdocc inspect --jobs N DIR`.
3. A multi-GB file of bundles back to back (LLVM's tools cannot read those): amdocc's
   throughput and peak RSS, to show memory stays bounded as the input grows.

Every command runs as its own process, timed wall-clock (best of --repeat); peak RSS is the
child's ru_maxrss. Ratios are LLVM time / amdocc time (above 1: amdocc is faster).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
AMDOCC = [sys.executable, "-m", "amdocc"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def measure(cmd: list[str], repeat: int) -> tuple[float, int]:
    """(best wall seconds, peak RSS in MiB) of ``cmd`` run as a child process."""
    best, peak = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        wrapper = [sys.executable, "-c",
                   "import resource,subprocess,sys;"
                   "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
                   "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss);sys.exit(r.returncode)",
                   *cmd]
        out = subprocess.run(wrapper, capture_output=True, text=True, env=ENV)
        elapsed = time.perf_counter() - start
        if out.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd[:4])}... failed: {out.stderr.strip()[:300]}")
        best = min(best, elapsed)
        peak = max(peak, int(out.stdout.strip().splitlines()[-1]) // 1024)
    return best, peak


def pipeline_time(steps: list[list[str]], repeat: int) -> tuple[float, int]:
    """Several commands in sequence count as one pipeline: summed time, max RSS."""
    total, peak = 0.0, 0
    for cmd in steps:
        t, rss = measure(cmd, repeat)
        total += t
        peak = max(peak, rss)
    return total, peak


def build_fat(work: Path, kernels: int) -> tuple[Path, Path, list[str]]:
    import kernelgen

    targets = [t for t in kernelgen.DEFAULT_TARGETS if "generic" not in t] + \
        ["gfx90c", "gfx1012", "gfx1031", "gfx1034", "gfx1103", "gfx1150", "gfx1152", "gfx1153", "gfx1200", "gfx702"]
    rng = random.Random(7)
    specs = kernelgen.random_specs(rng, targets, kernels)
    # one code object per processor: put every spec of a processor in one module (same CO version)
    specs = [dataclasses.replace(s, cov=5, xnack=None, sramecc=None) for s in specs]
    batches = [b for b in kernelgen.compile_many(specs, work / "objs", jobs=2, chunk=10**6) if b.hsaco]
    ids, inputs = ["host-x86_64-unknown-linux-gnu-"], ["--input=/dev/null"]
    for b in batches:
        ids.append(f"hipv4-amdgcn-amd-amdhsa--{b.target}")
        inputs.append(f"--input={b.hsaco}")
    plain, packed = work / "fat.hipfb", work / "fat_ccob.hipfb"
    base = ["clang-offload-bundler-22", "--type=o", "--bundle-align=4096", "--targets=" + ",".join(ids), *inputs]
    subprocess.run(base + [f"--output={plain}"], check=True)
    subprocess.run(base + ["--compress", f"--output={packed}"], check=True)
    return plain, packed, ids[1:]


def llvm_bundle_pipeline(bundle: Path, ids: list[str], work: Path) -> list[list[str]]:
    out = work / "unbundled"
    out.mkdir(exist_ok=True)
    steps = [["clang-offload-bundler-22", "--list", "--type=o", f"--input={bundle}"]]
    files = []
    for i, entry in enumerate(ids):
        f = out / f"{i}.co"
        steps.append(["clang-offload-bundler-22", "--unbundle", "--type=o", f"--input={bundle}",
                      f"--targets={entry}", f"--output={f}"])
        files.append(str(f))
    steps.append(["llvm-readelf-22", "--notes", *files])
    return steps


def build_big(work: Path, source: Path, megabytes: int) -> Path:
    """Bundles back to back, each padded to 4096, until the file reaches ``megabytes``."""
    blob = source.read_bytes()
    blob += b"\0" * (-len(blob) % 4096)
    big = work / "big.hipfb"
    with open(big, "wb") as fh:
        for _ in range(max(1, megabytes * (1 << 20) // len(blob))):
            fh.write(blob)
    return big


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aiter", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--kernels", type=int, default=2400)
    ap.add_argument("--big-mb", type=int, default=1024)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="amdocc-scale-") as tmp:
        work = Path(tmp)
        print(f"building {args.kernels} kernels across processors with llc-22 ...", flush=True)
        plain, packed, ids = build_fat(work, args.kernels)
        import amdocc
        count = sum(len(co.kernels) for co in amdocc.load(plain))
        print(f"synthetic fat binary: {len(ids)} code objects, {count} kernels; "
              f"plain {plain.stat().st_size / 1e6:.1f} MB, CCOB {packed.stat().st_size / 1e6:.1f} MB")
        for label, f in (("plain bundle", plain), ("CCOB zstd", packed)):
            t_llvm, rss_llvm = pipeline_time(llvm_bundle_pipeline(f, ids, work), args.repeat)
            t_ours, rss_ours = measure(AMDOCC + ["inspect", str(f)], args.repeat)
            print(f"  {label}: LLVM pipeline ({len(ids) + 2} processes) {t_llvm:.2f} s, peak {rss_llvm} MiB; "
                  f"amdocc inspect {t_ours:.2f} s, peak {rss_ours} MiB; ratio {t_llvm / t_ours:.1f}")

        aiter = Path(args.aiter)
        files = sorted(str(p) for p in aiter.rglob("*.co")) if aiter.is_dir() else []
        if files:
            t_llvm, rss_llvm = measure(["llvm-readelf-22", "--notes", *files], args.repeat)
            print(f"aiter corpus: {len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB")
            print(f"  llvm-readelf-22 --notes (one process): {t_llvm:.2f} s, peak {rss_llvm} MiB")
            for jobs in sorted({1, args.jobs}):
                for fmt in ([], ["--json"]):
                    t_ours, rss_ours = measure(AMDOCC + ["inspect", *fmt, "--jobs", str(jobs), str(aiter)], args.repeat)
                    print(f"  amdocc inspect {' '.join(fmt + ['--jobs', str(jobs)])}: {t_ours:.2f} s, peak {rss_ours} MiB; "
                          f"ratio {t_llvm / t_ours:.2f}")
        else:
            print(f"aiter corpus not found at {aiter} (run .ci/setup-tests.sh or pass --aiter)")

        if args.big_mb:
            big = build_big(work, plain, args.big_mb)
            size = big.stat().st_size
            t_ours, rss_ours = measure(AMDOCC + ["inspect", "--findings", "none", str(big)], 1)
            print(f"big file of bundles back to back: {size / 2**20:.0f} MiB; amdocc inspect {t_ours:.1f} s "
                  f"({size / 2**20 / t_ours:.0f} MiB/s), peak RSS {rss_ours} MiB")
            half = build_big(work, plain, args.big_mb // 4)
            t_q, rss_q = measure(AMDOCC + ["inspect", "--findings", "none", str(half)], 1)
            print(f"  same at {half.stat().st_size / 2**20:.0f} MiB: peak RSS {rss_q} MiB "
                  f"(memory does not grow with the input)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
