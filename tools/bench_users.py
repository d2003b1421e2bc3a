#!/usr/bin/env python3
"""Speed where users wait (issue 21 item 5): amdocc against the LLVM pipeline a user would script,
as ratios measured in the same command, with peak memory. Benchmark only (no test times anything).

    python tools/bench_users.py [--onnx WHEEL] [--jax LIB] [--aiter DIR] [--repeat 2] [--only onnx,jax,aiter]

Inputs (pinned; fetched with pip's ordinary client, never committed):
- onnxruntime-rocm 1.22.2.post3, ``pip download --no-deps --only-binary=:all: --python-version 3.11
  --platform manylinux_2_34_x86_64 onnxruntime-rocm==1.22.2.post3`` (57 MB;
  sha256 705596b48933446ae6766921c5c8a46ef42f0c735bf158b6eb44a60bf7f95230), default
  .bench/rocm-bench/ or .cache/rocm-bench/;
- jax-rocm10-pjrt 0.12.0, ``pip download --no-deps --only-binary=:all: --platform
  manylinux_2_27_x86_64 --python-version 3.11 jax-rocm10-pjrt==0.12.0`` (134 MB;
  sha256 45ee7b471b71a582ce165dd63069b10d1d8923d849b61b6fa8783f1d13294edb): its
  jax_plugins/xla_rocm10/xla_rocm_plugin.so (438 MB, 45 CCOB v3 zstd bundles), extracted once;
- the 2,501 amd-aiter .co (.cache/aiter/aiter_meta/hsa, from .ci/setup-tests.sh).

What is compared (tools/bench_measure.py: each command its own process tree, best of --repeat,
interleaved; CPU time of the tree, the load-robust half on a shared machine; peak = largest sum
of the tree's resident sets):
1. the onnxruntime wheel, whole, as a user hands it over: `amdocc inspect`, `inspect --json`,
   `census` and `check` (default --jobs and --jobs 1) against unzipping its libraries and
   tools/bench_scale.py's LLVM pipeline (llvm-objcopy-22 --dump-section .hip_fatbin, cut at each
   bundle, clang-offload-bundler-22 --list/--unbundle on two processes, llvm-readelf-22 --notes on
   every code object). Ratios: census/inspect and check/inspect (goal <= 1.3), LLVM/each (goal >= 3).
2. xla_rocm_plugin.so: `inspect --json-lines` against the same pipeline (goal >= 2), and the floor:
   zstd-decompressing its 45 bundles in one process (python-zstandard, as amdocc does), reported
   per decompressed GiB beside amdocc's own time per GiB.
3. AITER: `inspect --json DIR` (default --jobs and --jobs 1) against `llvm-readelf-22 --notes` over
   all files in one process (goal >= 2).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import bench_measure  # noqa: E402

AMDOCC = [sys.executable, "-m", "amdocc"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
# A user's pip install has amdocc's bytecode compiled; without it each run compiles ~45 modules
# again (~90 ms of CPU, most of a small run). The bytecode goes to a cache outside the tree.
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "amdocc-bench-pycache")
SCALE = str(ROOT / "tools" / "bench_scale.py")


def _first(*candidates: Path) -> Path | None:
    return next((c for c in candidates if c.exists()), None)


def line(label: str, r: bench_measure.Run, peer: bench_measure.Run | None = None, peer_name: str = "LLVM") -> str:
    jobs = f"{r.workers} workers" if r.workers else "one process"
    ratio = f"; {peer_name}/this {peer.wall / r.wall:.2f} wall, {peer.cpu / r.cpu:.2f} CPU" if peer else ""
    return f"    {label}: {r.wall:.1f} s wall, {r.cpu:.1f} s CPU, {jobs}, peak {r.peak_mib} MiB{ratio}"


def onnx(wheel: Path, work: Path, repeat: int) -> None:
    with zipfile.ZipFile(wheel) as z:
        libs = [i.filename for i in z.infolist() if ".so" in i.filename and i.file_size > 1 << 20]
    print(f"onnxruntime-rocm wheel {wheel.name} ({wheel.stat().st_size / 1e6:.0f} MB); {bench_measure.load_line()}")
    unzip = [
        sys.executable,
        "-c",
        "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in sys.argv[3:]]",
        str(wheel),
        str(work / "unzipped"),
        *libs,
    ]
    pipe = [sys.executable, SCALE, "--llvm-pipeline", str(work / "llvm"), *[str(work / "unzipped" / n) for n in libs]]
    w = str(wheel)
    runs = {
        "inspect": [*AMDOCC, "inspect", w],
        "inspect --json": [*AMDOCC, "inspect", "--json", w],
        "census": [*AMDOCC, "census", w],
        "check": [*AMDOCC, "check", "--no-config", w],
        "inspect --jobs 1": [*AMDOCC, "inspect", "--jobs", "1", w],
        "census --jobs 1": [*AMDOCC, "census", "--jobs", "1", w],
        "check --jobs 1": [*AMDOCC, "check", "--no-config", "--jobs", "1", w],
    }
    llvm: bench_measure.Run | None = None
    best: dict[str, bench_measure.Run | None] = dict.fromkeys(runs)
    for _ in range(repeat):  # interleaved: the LLVM pipeline, then each amdocc command
        a = bench_measure.run(unzip)
        b = bench_measure.run(pipe)
        shutil.rmtree(work / "unzipped", ignore_errors=True)
        pair = bench_measure.Run(a.wall + b.wall, a.cpu + b.cpu, max(a.peak_mib, b.peak_mib), 0, 0, 0)
        llvm = pair.better(llvm)
        for label, cmd in runs.items():
            best[label] = bench_measure.run(cmd, ENV).better(best[label])
    assert llvm is not None
    print(
        f"  LLVM pipeline (unzip + objcopy/bundler/readelf): {llvm.wall:.1f} s wall, {llvm.cpu:.1f} s CPU, "
        f"peak {llvm.peak_mib} MiB"
    )
    got = {k: v for k, v in best.items() if v is not None}
    for label, r in got.items():
        print(line(f"amdocc {label}", r, llvm))
    for jobs in ("", " --jobs 1"):
        base = got[f"inspect{jobs}"]
        for cmd in ("census", "check"):
            r = got[f"{cmd}{jobs}"]
            print(
                f"  {cmd}{jobs} / inspect{jobs}: {r.wall / base.wall:.2f} wall, "
                f"{r.cpu / base.cpu:.2f} CPU (goal <= 1.3)"
            )


def zstd_floor(lib: Path) -> tuple[float, float, int, int]:
    """(CPU seconds, the same with the header's MD5 checked as AMDOCC_VERIFY_HASHES=1 checks it,
    bundles, decompressed bytes) to zstd-decompress every CCOB of ``lib`` in one process: the work
    no reader of this library can skip (and the check neither LLVM's bundler nor HIP's loader
    makes, so amdocc makes it only when asked)."""
    import hashlib

    import zstandard

    data = lib.read_bytes()
    start = time.process_time()
    total = count = 0
    hashing = 0.0
    for m in re.finditer(b"CCOB", data):
        lo = m.start()
        version = int.from_bytes(data[lo + 4 : lo + 6], "little")
        if version != 3:
            continue
        # CCOB v3 header: magic, version u16, method u16, total size u64, uncompressed size u64, hash u64.
        size = int.from_bytes(data[lo + 8 : lo + 16], "little")
        raw = int.from_bytes(data[lo + 16 : lo + 24], "little")
        out = zstandard.ZstdDecompressor().decompress(data[lo + 32 : lo + size], max_output_size=raw)
        total += len(out)
        count += 1
        before = time.process_time()
        hashlib.md5(out).digest()
        hashing += time.process_time() - before
    spent = time.process_time() - start
    return spent - hashing, spent, count, total


def jax(lib: Path, work: Path, repeat: int) -> None:
    print(f"xla_rocm_plugin.so ({lib.stat().st_size / 1e6:.0f} MB); {bench_measure.load_line()}")
    cpu, with_md5, bundles, raw = zstd_floor(lib)
    gib = raw / 2**30
    print(
        f"  zstd floor: {bundles} CCOB v3 bundles, {gib:.2f} GiB decompressed in {cpu:.1f} s CPU "
        f"({cpu / gib:.2f} s per GiB, one process); with the MD5 check (AMDOCC_VERIFY_HASHES=1) {with_md5:.1f} s "
        f"({with_md5 / gib:.2f} s per GiB)"
    )
    runs = {
        "LLVM pipeline": [sys.executable, SCALE, "--llvm-pipeline", str(work / "llvm"), str(lib)],
        "amdocc inspect --json-lines (default --jobs)": [*AMDOCC, "inspect", "--json-lines", str(lib)],
        "amdocc inspect --json-lines --jobs 1": [*AMDOCC, "inspect", "--json-lines", "--jobs", "1", str(lib)],
    }
    best = bench_measure.best_of(runs, repeat, ENV)
    llvm = best.pop("LLVM pipeline")
    print(f"  LLVM pipeline: {llvm.wall:.1f} s wall, {llvm.cpu:.1f} s CPU, peak {llvm.peak_mib} MiB")
    for label, r in best.items():
        print(f"{line(label, r, llvm)}; {r.cpu / gib:.2f} s CPU per decompressed GiB (floor {cpu / gib:.2f})")


def aiter(root: Path, repeat: int) -> None:
    files = sorted(str(p) for p in root.rglob("*.co"))
    print(f"AITER: {len(files)} .co; {bench_measure.load_line()}")
    runs = {
        "llvm-readelf-22 --notes": ["llvm-readelf-22", "--notes", *files],
        "amdocc inspect --json (default --jobs)": [*AMDOCC, "inspect", "--json", str(root)],
        "amdocc inspect --json --jobs 1": [*AMDOCC, "inspect", "--json", "--jobs", "1", str(root)],
    }
    best = bench_measure.best_of(runs, repeat, ENV)
    llvm = best.pop("llvm-readelf-22 --notes")
    print(f"  llvm-readelf-22 --notes: {llvm.wall:.2f} s wall, {llvm.cpu:.2f} s CPU, peak {llvm.peak_mib} MiB")
    for label, r in best.items():
        print(line(label, r, llvm, "readelf"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    wheel_name = "onnxruntime_rocm-1.22.2.post3-cp311-cp311-manylinux_2_34_x86_64.whl"
    ap.add_argument(
        "--onnx",
        type=Path,
        default=_first(*(ROOT / d / wheel_name for d in (".bench/rocm-bench", ".cache/rocm-bench"))),
    )
    plugin = "jax_plugins/xla_rocm10/xla_rocm_plugin.so"
    ap.add_argument(
        "--jax", type=Path, default=_first(ROOT / ".bench/jax" / plugin, ROOT / ".cache/jax-rocm10" / plugin)
    )
    ap.add_argument("--aiter", type=Path, default=ROOT / ".cache/aiter/aiter_meta/hsa")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", default="onnx,jax,aiter", help="which inputs, comma-separated")
    args = ap.parse_args()
    only = set(args.only.split(","))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "amdocc")], env=ENV, check=True)
    with tempfile.TemporaryDirectory(prefix="amdocc-users-") as tmp:
        work = Path(tmp)
        if "onnx" in only:
            if args.onnx is None:
                print("onnxruntime-rocm wheel: not found (see the docstring to fetch it)")
            else:
                onnx(args.onnx, work, args.repeat)
        if "jax" in only:
            if args.jax is None:
                print("xla_rocm_plugin.so: not found (see the docstring to fetch and extract it)")
            else:
                jax(args.jax, work, args.repeat)
        if "aiter" in only:
            if args.aiter.is_dir():
                aiter(args.aiter, args.repeat)
            else:
                print(f"AITER corpus not found at {args.aiter}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
