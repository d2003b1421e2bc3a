#!/usr/bin/env python3
"""Where `amdocc inspect --json` spends its time on the AITER corpus, stage by stage, per file.

Each stage is timed in this process as the work up to and including it, over every file, best
of N in CPU seconds (a shared machine moves wall time far more); a stage's cost is its
difference from the one before, divided by the number of files:

    read        open and read the file
    ELF         + the ELF header and section table (amdocc.elf.ElfFile)
    notes       + the note sections found and the metadata note's MessagePack decoded
    descriptor  + the symbol table read and each kernel's descriptor decoded
    resolve     + the rest of parse_code_object (resources resolved, findings, the records)
    containers  + the container walk around it (amdocc.loader.iter_load, as inspect reads a file)
    JSON write  + the --json record built and written (amdocc.report)

Start-up is measured apart: the CPU of `python3 -c pass`, and of `python3 -m amdocc inspect
--json --jobs 1` on one file, in child processes (best of N).

    python tools/bench_inspect_stages.py [CORPUS_DIR] [--repeat 7]

For counts that do not move with the load, run a stage under valgrind --tool=cachegrind
(docs/performance.md says how).
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def best_cpu(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def child_cpu(cmd: list[str], repeat: int) -> float:
    """Best CPU seconds (user + system) of ``cmd`` run as a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # With amdocc's bytecode compiled, as a pip install has it (see tools/bench_inspect.py).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "amdocc-bench-pycache")
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)  # fills the bytecode cache
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / ".cache/aiter/aiter_meta/hsa"))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    files = sorted(str(p) for p in Path(args.corpus).rglob("*.co"))
    if not files:
        print(f"no .co files under {args.corpus}", file=sys.stderr)
        return 2
    gc.set_threshold(100_000, 50, 100)  # as amdocc.cli.main runs

    from amdocc import report
    from amdocc.codeobject import notes as N
    from amdocc.codeobject import reader as R
    from amdocc.codeobject.descriptor import decode_descriptor
    from amdocc.codeobject.reader import parse_code_object
    from amdocc.codeobject.target_id import decode_e_flags
    from amdocc.containers import Limits
    from amdocc.elf import ElfFile
    from amdocc.errors import Origin
    from amdocc.loader import iter_load

    limits = Limits.from_env()

    def read() -> None:
        for f in files:
            with open(f, "rb") as fh:
                fh.read()

    def elf() -> None:
        for f in files:
            with open(f, "rb") as fh:
                ElfFile(fh.read(), Origin(f))

    def notes() -> None:
        for f in files:
            with open(f, "rb") as fh:
                e = ElfFile(fh.read(), Origin(f))
            for n in e.notes():
                if n.owner == "AMDGPU" and n.type == N.NT_AMDGPU_METADATA:
                    N.decode_msgpack_metadata(n, e.origin)
                    N.without_floats(n)

    def descriptor() -> None:
        for f in files:
            with open(f, "rb") as fh:
                data = fh.read()
            e = ElfFile(data, Origin(f))
            for n in e.notes():
                if n.owner == "AMDGPU" and n.type == N.NT_AMDGPU_METADATA:
                    N.decode_msgpack_metadata(n, e.origin)
                    N.without_floats(n)
            target = decode_e_flags(e.header.e_flags, R.HSA_ABI_VERSIONS[e.ident.abiversion]).target
            for s in R._symbols(e).all:
                if s.name.endswith(".kd"):
                    decode_descriptor(data, e.symbol_file_offset(s, 64), target, e.origin)

    def resolve() -> None:
        for f in files:
            with open(f, "rb") as fh:
                parse_code_object(fh.read(), Origin(f))

    def containers() -> None:
        for f in files:
            for _ in iter_load(f, limits, in_directory=True):
                pass

    def json_write() -> None:
        out = io.BytesIO()
        for f in files:
            for co in iter_load(f, limits, in_directory=True):
                out.write(report.compact_json(report.code_object_record(co), report.metadata_plain(co)))

    stages = [
        ("read", read),
        ("ELF", elf),
        ("notes", notes),
        ("descriptor", descriptor),
        ("resolve", resolve),
        ("containers", containers),
        ("JSON write", json_write),
    ]
    for _, fn in stages:
        fn()  # warm: tables loaded, caches as a run has them after its first files
    print(f"corpus: {len(files)} files ({args.corpus}); CPU, best of {args.repeat}")
    python = child_cpu([sys.executable, "-c", "pass"], args.repeat)
    one = child_cpu([sys.executable, "-m", "amdocc", "inspect", "--json", "--jobs", "1", files[0]], args.repeat)
    print(f"start-up: interpreter {python * 1e3:.0f} ms, amdocc's imports and tables {(one - python) * 1e3:.0f} ms")
    previous = 0.0
    for name, fn in stages:
        cumulative = best_cpu(fn, args.repeat)
        step = max(cumulative - previous, 0.0)
        print(f"{name:11s} {step / len(files) * 1e6:6.1f} us/file   (up to here {cumulative:.3f} s)")
        previous = cumulative
    print(f"per file in all: {previous / len(files) * 1e6:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
