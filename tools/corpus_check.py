#!/usr/bin/env python3
"""Check amdocc against LLVM 22 over a whole library or wheel with compressed fat binaries.

    python3 tools/corpus_check.py LIBRARY_OR_WHEEL [--targets gfx942,gfx1250] [--member PATH] [--bundles N]

LLVM's own pipeline extracts every code object (llvm-objcopy-22 --dump-section, then
clang-offload-bundler-22 per CCOB, cut to the size its header gives), one CCOB at a time so the
disk holds one bundle's objects at once, and tests/oracle/check.py compares amdocc with
llvm-readelf-22 (metadata) and llvm-objdump-22 (descriptors) field by field. It prints the
counts per processor and every mismatch, and exits 1 if any mismatch is left.

This is the benchmark-only side of tests/test_corpus_rocm10.py: jax-rocm10-pjrt 0.12.0 expands
to 2.4 GB of code objects (1,215 of them, 409,773 kernels), too much for CI, which checks its
gfx1250 kernels only.

Measured (2026-12, in seven runs of 2 to 5 processors, 16 minutes on a shared two-core machine):
1,215 code objects of 27 processors, 409,773 kernels, 10,085,375 metadata values and 14,613,530
descriptor fields compared; 27 mismatches, all one descriptor llvm-objdump-22 refuses on every
processor (xla_fp_comparison<double>, "kernel descriptor must be 64-byte aligned"; see
tests/test_corpus_rocm10.py), so 0 disagreements.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from oracle.check import check_files  # noqa: E402  (tests/ is put on the path above)
from oracle.unbundle import OBJCOPY, _run, compressed_bundles, unbundle_one  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--member", help="the library inside a wheel (default: the largest .so)")
    ap.add_argument("--targets", help="only these processors (comma-separated)")
    ap.add_argument("--bundles", type=int, help="only the first N compressed bundles")
    args = ap.parse_args(argv)
    targets = set(args.targets.split(",")) if args.targets else None
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="corpus-check-") as tmp:
        work = Path(tmp)
        library = args.path
        if zipfile.is_zipfile(library):
            with zipfile.ZipFile(library) as wheel:
                infos = [i for i in wheel.infolist() if i.filename.endswith(".so")]
                member = args.member or max(infos, key=lambda i: i.file_size).filename
                wheel.extract(member, work)
            library = work / member
        dumped = work / "section.bin"
        _run([OBJCOPY, f"--dump-section=.hip_fatbin={dumped}", str(library), "/dev/null"])
        bundles = compressed_bundles(dumped.read_bytes())
        dumped.unlink()
        counts: Counter[str] = Counter()
        per_target: Counter[str] = Counter()
        mismatches: list[str] = []
        for index, blob in enumerate(bundles):
            paths = unbundle_one(blob, index, work, targets)
            report = check_files([str(p) for p in paths], chunk=8)
            counts.update(
                files=report.files,
                kernels=report.kernels,
                metadata=report.metadata_fields,
                descriptors=report.descriptor_fields,
                no_descriptor_oracle=report.kernels_without_descriptor_oracle,
            )
            for p in paths:
                per_target[p.stem.split("-", 1)[1]] += 1
            mismatches += report.mismatches
            for p in paths:
                p.unlink()
            print(
                f"CCOB {index + 1}/{len(bundles)}: {report.kernels} kernels, {len(report.mismatches)} mismatches; "
                f"so far {counts['kernels']} kernels, {counts['metadata']} metadata values, "
                f"{counts['descriptors']} descriptor fields, {len(mismatches)} mismatches",
                flush=True,
            )
            if args.bundles and index + 1 >= args.bundles:
                break
    print(
        f"{counts['files']} code objects, {counts['kernels']} kernels; {counts['metadata']} metadata values and "
        f"{counts['descriptors']} descriptor fields compared; {counts['no_descriptor_oracle']} kernels without a "
        f"descriptor oracle; {len(mismatches)} mismatches; {time.monotonic() - started:.0f} s"
    )
    print("code objects per processor:", dict(sorted(per_target.items())))
    for line in mismatches:
        print("MISMATCH", line)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
