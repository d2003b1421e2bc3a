"""Fresh-object oracle tier: new code objects built now with llc-22/clang-22, every metadata
field and every descriptor field of every kernel compared with llvm-readelf-22/llvm-objdump-22.

Unlike the stored fixtures, these are generated anew each run (a different seed each time
unless AMDOCC_DIFF_SEED is set) over every processor llc-22 knows, code-object v4-v6, both wave
sizes, CU/WGP mode and xnack/sramecc variants.
"""

from __future__ import annotations

import os
import random
import subprocess
import time

import pytest

import amdocc
from amdocc.targets import all_targets
from conftest import ROOT
from oracle.check import check_files

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]


def test_fresh_llc_objects_match_llvm_field_by_field(tmp_path):
    import kernelgen

    seed = int(os.environ.get("AMDOCC_DIFF_SEED", time.time_ns() % 2**32))
    rng = random.Random(seed)
    # llc-22 knows every row but gfx940/gfx941 (removed from LLVM) and the rows newer LLVMs added.
    targets = [t.name for t in all_targets() if t.name not in ("gfx940", "gfx941") and not t.since_llvm]
    specs = kernelgen.random_specs(rng, targets, 600)
    batches = [b for b in kernelgen.compile_many(specs, tmp_path, jobs=2) if b.hsaco is not None]
    report = check_files([str(b.hsaco) for b in batches])
    print(
        f"\nfresh llc objects: seed {seed}, {report.files} code objects over "
        f"{len({b.target for b in batches})} processors, {report.kernels} kernels, "
        f"{report.metadata_fields} metadata and {report.descriptor_fields} descriptor fields, "
        f"{len(report.mismatches)} mismatches; no descriptor oracle for "
        f"{sorted(report.no_descriptor_oracle) or 'none'}"
    )
    assert report.mismatches == []  # includes "compared N of the M values LLVM printed" per kernel
    assert report.kernels >= 500
    # llvm-objdump-22 has no disassembler for gfx6/gfx7 ("disassembly not yet supported for
    # subtarget"): their metadata is still compared, their descriptors are not, and those
    # kernels are counted apart rather than as compared.
    assert {p[:4] for p in report.no_descriptor_oracle} <= {"gfx6", "gfx7"}
    old = sum(len(amdocc.load(str(b.hsaco))[0].kernels) for b in batches if b.target[:4] in ("gfx6", "gfx7"))
    assert report.kernels_without_descriptor_oracle == old
    assert report.kernels_with_descriptor_oracle == report.kernels - old > 0
    assert report.descriptor_fields >= 30 * report.kernels_with_descriptor_oracle
    assert report.metadata_fields >= 10 * report.kernels
    print(f"{report.kernels_without_descriptor_oracle} kernels (gfx6/gfx7) without a descriptor oracle")


def test_fresh_hip_objects_match_llvm_field_by_field(tmp_path):
    # The fixture HIP source (static LDS, scratch, hidden arguments, AGPRs where they exist),
    # compiled now for one processor of every generation in both code-object versions.
    source = ROOT / "tools" / "fixture_src" / "kernels.hip"
    files = []
    for arch, cov in (
        ("gfx906", 5),
        ("gfx908", 4),
        ("gfx90a:xnack+", 6),
        ("gfx942:sramecc-:xnack-", 5),
        ("gfx950", 6),
        ("gfx1010", 4),
        ("gfx1030", 6),
        ("gfx1102", 5),
        ("gfx1151", 6),
        ("gfx1200", 4),
        ("gfx1201", 6),
        ("gfx1250", 6),
        ("gfx11-generic", 6),
    ):
        out = tmp_path / f"{arch.replace(':', '_')}_v{cov}.co"
        subprocess.run(
            [
                "clang-22",
                "-x",
                "hip",
                "-nogpulib",
                "-nogpuinc",
                "-O3",
                "--offload-device-only",
                "--no-gpu-bundle-output",
                f"--offload-arch={arch}",
                f"-mcode-object-version={cov}",
                str(source),
                "-o",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        files.append(str(out))
    report = check_files(files)
    print(
        f"\nfresh clang objects: {report.files} code objects, {report.kernels} kernels, "
        f"{len(report.mismatches)} mismatches"
    )
    assert report.mismatches == []
    assert report.kernels >= 4 * len(files)
    assert report.kernels_without_descriptor_oracle == 0  # no gfx6/gfx7 among them
    assert report.descriptor_fields >= 30 * report.kernels and report.metadata_fields >= 10 * report.kernels
    for f in files:
        (co,) = amdocc.load(f)
        assert all(k.descriptor is not None for k in co.kernels)
