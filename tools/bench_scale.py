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
4. Real ROCm wheels from PyPI (--wheels DIR, default .cache/rocm-bench; fetch them with
   ``pip download --no-deps --only-binary=:all: --python-version 3.11 --platform
   manylinux_2_27_x86_64 jax-rocm7-pjrt==0.12.0`` and likewise tensorflow-rocm==2.14.0.600
   (manylinux2014_x86_64) and onnxruntime-rocm==1.22.2.post3 (manylinux_2_34_x86_64)):
   a. each wheel's largest library, extracted once: the LLVM pipeline a user would script
      (llvm-objcopy-22 --dump-section .hip_fatbin, cut at each bundle or CCOB since the
      bundler reads only the first of several, clang-offload-bundler-22 --list and --unbundle
      per target on two processes, llvm-readelf-22 --notes on every code object) against
      `amdocc inspect --json-lines LIB` (one JSON line per kernel) and `--json`;
   b. the largest wheel whole, census-style: the same pipeline after unzipping every library,
      against `amdocc inspect --json-lines WHEEL` on both cores (--jobs 2), the default and one
      process, with peak memory;
   c. the extracted onnxruntime-rocm libraries as a directory: default --jobs against --jobs 1.

Every command runs as its own process tree (tools/bench_measure.py), timed wall clock and CPU
(best of --repeat, interleaved); peak memory is the largest sum of the tree's resident sets
(a pool's workers included), and the number of worker processes a default run chose is shown.
Ratios are LLVM time / amdocc time (above 1: amdocc is faster).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
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
    wall, rss, _ = measure_cpu(cmd, repeat)
    return wall, rss


def measure_cpu(cmd: list[str], repeat: int) -> tuple[float, int, float]:
    """(best wall seconds, peak RSS in MiB, CPU seconds of that best run, children included).
    CPU time is the load-robust half: on a shared machine wall time follows the neighbours."""
    best, peak, cpu = float("inf"), 0, 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        wrapper = [
            sys.executable,
            "-c",
            "import resource,subprocess,sys;"
            "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
            "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(u.ru_maxrss, u.ru_utime + u.ru_stime);sys.exit(r.returncode)",
            *cmd,
        ]
        out = subprocess.run(wrapper, capture_output=True, text=True, env=ENV)
        elapsed = time.perf_counter() - start
        if out.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd[:4])}... failed: {out.stderr.strip()[:300]}")
        maxrss, used = out.stdout.strip().splitlines()[-1].split()
        if elapsed < best:
            best, cpu = elapsed, float(used)
        peak = max(peak, int(maxrss) // 1024)
    return best, peak, cpu


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

    targets = [t for t in kernelgen.DEFAULT_TARGETS if "generic" not in t] + [
        "gfx90c",
        "gfx1012",
        "gfx1031",
        "gfx1034",
        "gfx1103",
        "gfx1150",
        "gfx1152",
        "gfx1153",
        "gfx1200",
        "gfx702",
    ]
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
    subprocess.run([*base, f"--output={plain}"], check=True)
    subprocess.run([*base, "--compress", f"--output={packed}"], check=True)
    return plain, packed, ids[1:]


def llvm_bundle_pipeline(bundle: Path, ids: list[str], work: Path) -> list[list[str]]:
    out = work / "unbundled"
    out.mkdir(exist_ok=True)
    steps = [["clang-offload-bundler-22", "--list", "--type=o", f"--input={bundle}"]]
    files = []
    for i, entry in enumerate(ids):
        f = out / f"{i}.co"
        steps.append(
            [
                "clang-offload-bundler-22",
                "--unbundle",
                "--type=o",
                f"--input={bundle}",
                f"--targets={entry}",
                f"--output={f}",
            ]
        )
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


BUNDLE_MAGICS = (b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB")


def llvm_library_pipeline(libraries: list[str], work: Path, jobs: int = 2) -> int:
    """What a user scripts with LLVM's tools for a host library: dump the fat-binary section,
    cut it at each bundle/CCOB (the bundler reads only the first of several, and a CCOB only
    when cut at its declared total size), list and unbundle every AMDGPU entry, readelf every
    code object. Returns the number of code objects. (Run as a child: --llvm-pipeline.)"""
    import re
    from concurrent.futures import ThreadPoolExecutor

    magic = re.compile(b"|".join(re.escape(m) for m in BUNDLE_MAGICS))
    pieces = []
    for n, lib in enumerate(libraries):
        section = work / f"lib{n}.hip_fatbin"
        proc = subprocess.run(
            ["llvm-objcopy-22", f"--dump-section=.hip_fatbin={section}", lib, "/dev/null"], capture_output=True
        )
        if proc.returncode or not section.exists():
            continue  # no device code in this library
        data = section.read_bytes()
        starts = [m.start() for m in magic.finditer(data)]
        for i, (lo, hi) in enumerate(zip(starts, [*starts[1:], len(data)], strict=True)):
            if data.startswith(b"CCOB", lo) and int.from_bytes(data[lo + 4 : lo + 6], "little") >= 2:
                # LLVM 22's bundler refuses a CCOB followed by padding ("Src size is
                # incorrect"): cut it at the total size its v2/v3 header declares.
                width = 8 if int.from_bytes(data[lo + 4 : lo + 6], "little") >= 3 else 4
                hi = lo + int.from_bytes(data[lo + 8 : lo + 8 + width], "little")
            piece = work / f"lib{n}-{i}.bundle"
            piece.write_bytes(data[lo:hi])
            pieces.append(piece)
        section.unlink()

    def unbundle(piece: Path) -> list[str]:
        """Every AMDGPU entry of one bundle in one bundler call (a CCOB is decompressed once)."""
        listed = subprocess.run(
            ["clang-offload-bundler-22", "--list", "--type=o", f"--input={piece}"], capture_output=True, text=True
        ).stdout.split()
        entries = [e for e in listed if "-amdgcn-amd-amdhsa-" in e]
        out = [f"{piece}.{i}.co" for i in range(len(entries))]
        if (
            entries
            and subprocess.run(
                [
                    "clang-offload-bundler-22",
                    "--unbundle",
                    "--type=o",
                    f"--input={piece}",
                    "--targets=" + ",".join(entries),
                    *[f"--output={o}" for o in out],
                ],
                capture_output=True,
            ).returncode
        ):
            # LLVM 22 refuses every entry after an old three-part host id: one call per entry,
            # keeping those it can unbundle.
            out = [
                o
                for o, e in zip(out, entries, strict=True)
                if subprocess.run(
                    [
                        "clang-offload-bundler-22",
                        "--unbundle",
                        "--type=o",
                        f"--input={piece}",
                        f"--targets={e}",
                        f"--output={o}",
                    ],
                    capture_output=True,
                ).returncode
                == 0
            ]
        return out

    with ThreadPoolExecutor(jobs) as pool:
        objects = [co for cos in pool.map(unbundle, pieces) for co in cos]
    for i in range(0, len(objects), 200):
        subprocess.run(["llvm-readelf-22", "--notes", *objects[i : i + 200]], stdout=subprocess.DEVNULL, check=True)
    return len(objects)


def _runs_line(label: str, r, llvm=None) -> str:
    jobs = f"{r.workers} worker processes" if r.workers else "one process"
    ratio = f"; ratio LLVM/amdocc {llvm.wall / r.wall:.2f} wall, {llvm.cpu / r.cpu:.2f} CPU" if llvm else ""
    return (
        f"    {label}: {r.wall:.1f} s wall, {r.cpu:.1f} s CPU, {jobs}, peak {r.peak_mib} MiB "
        f"(largest process {r.largest_mib} MiB){ratio}"
    )


def real_wheels(wheels: Path, work: Path, repeat: int) -> None:
    import zipfile

    import bench_measure

    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    picks = [w for w in found if w.name.startswith(("jax_rocm7_pjrt", "onnxruntime_rocm", "tensorflow_rocm"))]
    if not picks:
        print(f"real wheels: none under {wheels} (see the module docstring to fetch them)")
        return
    largest_wheel = max(picks, key=lambda w: w.stat().st_size)
    for wheel in picks:
        with zipfile.ZipFile(wheel) as z:
            libs = [i for i in z.infolist() if ".so" in i.filename and i.file_size > 1 << 20]
            largest = max(libs, key=lambda i: i.file_size)
            root = work / wheel.stem
            z.extractall(root, [i.filename for i in libs])
        lib = root / largest.filename
        print(
            f"{wheel.name}: {wheel.stat().st_size / 1e6:.0f} MB; largest library {largest.filename} "
            f"({largest.file_size / 1e6:.0f} MB); {bench_measure.load_line()}",
            flush=True,
        )
        pipe = [sys.executable, __file__, "--llvm-pipeline", str(work / "llvm"), str(lib)]
        compact = "name,vgpr_count,sgpr_count,group_segment_fixed_size,private_segment_fixed_size,findings"
        runs = {
            "LLVM pipeline": pipe,
            "amdocc inspect --json-lines (default --jobs)": [*AMDOCC, "inspect", "--json-lines", str(lib)],
            "amdocc inspect --json-lines --jobs 1": [*AMDOCC, "inspect", "--json-lines", "--jobs", "1", str(lib)],
            "amdocc inspect --json-lines --jobs 2": [*AMDOCC, "inspect", "--json-lines", "--jobs", "2", str(lib)],
            f"amdocc inspect --json-lines --fields {compact} (default --jobs)": [
                *AMDOCC,
                "inspect",
                "--json-lines",
                "--fields",
                compact,
                str(lib),
            ],
            "amdocc inspect --json (default --jobs)": [*AMDOCC, "inspect", "--json", str(lib)],
        }
        best = bench_measure.best_of(runs, repeat, ENV)
        llvm = best.pop("LLVM pipeline")
        print(
            f"  its largest library: LLVM pipeline {llvm.wall:.1f} s wall, {llvm.cpu:.1f} s CPU, "
            f"peak {llvm.peak_mib} MiB",
            flush=True,
        )
        for label, r in best.items():
            print(_runs_line(label, r, llvm), flush=True)
        if wheel == largest_wheel:
            # Census-style: every library of the wheel. LLVM: unzip them, then the same pipeline.
            everything = [str(root / i.filename) for i in libs]
            unzip = [
                sys.executable,
                "-c",
                "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in sys.argv[3:]]",
                str(wheel),
                str(work / "unzipped"),
                *[i.filename for i in libs],
            ]
            t_unzip = bench_measure.run(unzip)
            shutil.rmtree(work / "unzipped", ignore_errors=True)
            llvm_all = bench_measure.run([sys.executable, __file__, "--llvm-pipeline", str(work / "llvm"), *everything])
            wall, cpu = t_unzip.wall + llvm_all.wall, t_unzip.cpu + llvm_all.cpu
            whole = {
                "amdocc inspect --json-lines WHEEL --jobs 2 (both cores)": [
                    *AMDOCC,
                    "inspect",
                    "--json-lines",
                    "--jobs",
                    "2",
                    str(wheel),
                ],
                "amdocc inspect --json-lines WHEEL (default --jobs)": [*AMDOCC, "inspect", "--json-lines", str(wheel)],
                "amdocc inspect --json-lines WHEEL --jobs 1": [
                    *AMDOCC,
                    "inspect",
                    "--json-lines",
                    "--jobs",
                    "1",
                    str(wheel),
                ],
            }
            print(
                f"  whole wheel, census-style: LLVM pipeline (unzip {t_unzip.wall:.1f} s + {llvm_all.wall:.1f} s) "
                f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak {max(t_unzip.peak_mib, llvm_all.peak_mib)} MiB",
                flush=True,
            )
            for label, r in bench_measure.best_of(whole, max(1, repeat - 1), ENV).items():
                print(
                    f"    {label}: {r.wall:.1f} s wall, {r.cpu:.1f} s CPU, "
                    f"{f'{r.workers} worker processes' if r.workers else 'one process'}, peak {r.peak_mib} MiB "
                    f"(largest process {r.largest_mib} MiB); ratio {wall / r.wall:.2f} wall, {cpu / r.cpu:.2f} CPU",
                    flush=True,
                )
        if wheel.name.startswith("onnxruntime_rocm"):
            tree = str(root)
            on_tree = {
                "--jobs 1": [*AMDOCC, "inspect", "--json", "--jobs", "1", tree],
                "default --jobs": [*AMDOCC, "inspect", "--json", tree],
            }
            got = bench_measure.best_of(on_tree, repeat, ENV)
            one, default = got["--jobs 1"], got["default --jobs"]
            print(
                f"  its libraries as a directory (inspect --json): {_runs_line('--jobs 1', one).strip()}; "
                f"{_runs_line('default --jobs', default).strip()}; default/--jobs 1 {one.wall / default.wall:.2f} "
                f"wall",
                flush=True,
            )
        shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    if sys.argv[1:2] == ["--llvm-pipeline"]:
        work = Path(sys.argv[2])
        work.mkdir(parents=True, exist_ok=True)
        try:
            print(llvm_library_pipeline(sys.argv[3:], work), file=sys.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aiter", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--kernels", type=int, default=2400)
    ap.add_argument("--big-mb", type=int, default=1024)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--wheels", default=str(ROOT / ".cache/rocm-bench"))
    ap.add_argument("--only", choices=("synthetic", "wheels"), help="run one half only")
    args = ap.parse_args()
    if args.only == "wheels":
        with tempfile.TemporaryDirectory(prefix="amdocc-scale-") as tmp:
            real_wheels(Path(args.wheels), Path(tmp), args.repeat)
        return 0

    with tempfile.TemporaryDirectory(prefix="amdocc-scale-") as tmp:
        work = Path(tmp)
        print(f"building {args.kernels} kernels across processors with llc-22 ...", flush=True)
        plain, packed, ids = build_fat(work, args.kernels)
        import amdocc

        count = sum(len(co.kernels) for co in amdocc.load(plain))
        print(
            f"synthetic fat binary: {len(ids)} code objects, {count} kernels; "
            f"plain {plain.stat().st_size / 1e6:.1f} MB, CCOB {packed.stat().st_size / 1e6:.1f} MB"
        )
        for label, f in (("plain bundle", plain), ("CCOB zstd", packed)):
            t_llvm, rss_llvm = pipeline_time(llvm_bundle_pipeline(f, ids, work), args.repeat)
            t_ours, rss_ours = measure([*AMDOCC, "inspect", str(f)], args.repeat)
            print(
                f"  {label}: LLVM pipeline ({len(ids) + 2} processes) {t_llvm:.2f} s, peak {rss_llvm} MiB; "
                f"amdocc inspect {t_ours:.2f} s, peak {rss_ours} MiB; ratio {t_llvm / t_ours:.1f}"
            )

        aiter = Path(args.aiter)
        files = sorted(str(p) for p in aiter.rglob("*.co")) if aiter.is_dir() else []
        if files:
            t_llvm, rss_llvm = measure(["llvm-readelf-22", "--notes", *files], args.repeat)
            print(f"aiter corpus: {len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB")
            print(f"  llvm-readelf-22 --notes (one process): {t_llvm:.2f} s, peak {rss_llvm} MiB")
            for jobs in sorted({1, args.jobs}):
                for fmt in ([], ["--json"]):
                    t_ours, rss_ours = measure([*AMDOCC, "inspect", *fmt, "--jobs", str(jobs), str(aiter)], args.repeat)
                    print(
                        f"  amdocc inspect {' '.join([*fmt, '--jobs', str(jobs)])}: {t_ours:.2f} s, "
                        f"peak {rss_ours} MiB; "
                        f"ratio {t_llvm / t_ours:.2f}"
                    )
        else:
            print(f"aiter corpus not found at {aiter} (run .ci/setup-tests.sh or pass --aiter)")

        if args.big_mb:
            big = build_big(work, plain, args.big_mb)
            size = big.stat().st_size
            t_ours, rss_ours = measure([*AMDOCC, "inspect", "--findings", "none", str(big)], 1)
            print(
                f"big file of bundles back to back: {size / 2**20:.0f} MiB; amdocc inspect {t_ours:.1f} s "
                f"({size / 2**20 / t_ours:.0f} MiB/s), peak RSS {rss_ours} MiB"
            )
            half = build_big(work, plain, args.big_mb // 4)
            _t_q, rss_q = measure([*AMDOCC, "inspect", "--findings", "none", str(half)], 1)
            print(
                f"  same at {half.stat().st_size / 2**20:.0f} MiB: peak RSS {rss_q} MiB "
                f"(memory does not grow with the input)"
            )
        if args.only != "synthetic":
            real_wheels(Path(args.wheels), work, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
