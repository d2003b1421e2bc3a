"""The newest public corpora, read whole and checked against LLVM 22's tools.

* bitsandbytes 0.50.2: one library per ROCm compiler (6.4, 7.0, 7.1, 7.2, 7.14 and 7.15 = ROCm
  10.0), every code object of every CCOB extracted by LLVM's own pipeline (llvm-objcopy-22,
  clang-offload-bundler-22) and compared field by field with llvm-readelf-22 (metadata) and
  llvm-objdump-22 (descriptors), gfx1250 included;
* jax-rocm10-pjrt 0.12.0 (ROCm 10.1; PyPI, manylinux_2_27 only): its xla_rocm_plugin.so read
  whole (45 CCOB v3 bundles, 27 processors), and its 15,287 gfx1250 kernels (the only public
  CDNA 5 corpus) extracted by LLVM's pipeline and compared the same way. The full 27-processor
  comparison is tools/corpus_check.py's (benchmark-only: 2.4 GB unbundled).

Where llvm-objdump-22 refuses a descriptor, amdocc must say why in a finding, or the refusal is
pinned here by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

import amdocc
from conftest import ROOT, skip_unless_required
from oracle.check import check_files
from oracle.unbundle import unbundle_compressed

pytestmark = pytest.mark.slow

JAX_WHEEL = ROOT / ".cache" / "jax-rocm10" / "jax_rocm10_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl"
JAX_SHA256 = "45ee7b471b71a582ce165dd63069b10d1d8923d849b61b6fa8783f1d13294edb"
JAX_MEMBER = "jax_plugins/xla_rocm10/xla_rocm_plugin.so"
JAX_PRODUCER = (
    "AMD clang version 24.0.0git (https://github.com/ROCm/llvm-project.git d6f6cb691863e9258034ab48c1dfce21689d5606)"
)
# llvm-objdump-22 says "kernel descriptor must be 64-byte aligned" of this one descriptor, which
# sits at 0xc600, 64-byte aligned (llvm-readelf-22 -s). It is the last descriptor of a .rodata
# that ends 80 bytes later (0xc650), so objdump's region for it is probably 80 bytes, not 64.
# LLVM's refusal, pinned by name (the same kernel on every processor, tools/corpus_check.py).
JAX_OBJDUMP_REFUSES = "_ZN15stream_executor3gpu17xla_fp_comparisonIdEEvPT_S3_fmPi.kd"


def _comment(path: Path) -> str:
    """The compiler's line of .comment, as llvm-readelf-22 -p prints it."""
    text = subprocess.run(
        ["llvm-readelf-22", "-p", ".comment", str(path)], capture_output=True, text=True, check=True
    ).stdout
    lines = [m.group(1) for m in re.finditer(r"^\[\s*[0-9a-f]+\]\s(.*)$", text, re.M)]
    return next(line for line in lines if "clang" in line)


def _explained(report, parsed: dict[str, amdocc.CodeObject]) -> list[str]:
    """The mismatches left once every descriptor llvm-objdump refused is one amdocc's finding
    names as refused."""
    left = []
    for line in report.mismatches:
        m = re.match(r"(.+?): (\S+\.kd): llvm-objdump could not decode", line)
        if m:
            kernel = next(k for k in parsed[m.group(1)].kernels if k.symbol == m.group(2))
            if any(f.code == "descriptor-bits" and "llvm-objdump refuses" in f.message for f in kernel.findings):
                continue
        left.append(line)
    return left


@pytest.mark.bitsandbytes
def test_every_bitsandbytes_rocm_library_against_llvm_22(bitsandbytes_rocm, tmp_path):
    libraries = sorted(bitsandbytes_rocm.glob("libbitsandbytes_rocm*.so"))
    assert len(libraries) == 6
    totals = Counter()
    producers = {}
    for library in libraries:
        extracted = [str(p) for _, p in unbundle_compressed(library, tmp_path / library.stem)]
        report = check_files(extracted, chunk=50)
        parsed = {p: amdocc.load(p)[0] for p in extracted}
        assert _explained(report, parsed) == [], library.name
        assert report.no_descriptor_oracle == {}
        # amdocc reading the library itself finds what LLVM's pipeline extracted, kernel for kernel
        whole = amdocc.load(library)
        assert len(whole) == len(extracted)
        assert sorted(len(co.kernels) for co in whole) == sorted(len(co.kernels) for co in parsed.values())
        assert sum(len(co.kernels) for co in whole) == report.kernels
        # the compiler each library names, as llvm-readelf-22 prints .comment
        named = {_comment(Path(p)) for p in extracted[:3]}
        assert len(named) == 1
        (producers[library.name],) = named
        assert {co.producer.text for co in whole} == named
        totals.update(kernels=report.kernels, metadata=report.metadata_fields, descriptors=report.descriptor_fields)
        totals.update(refused=len(report.mismatches))
    # Measured (2026-12): 19,075 kernels; 1,639,714 metadata values and 471,100 descriptor fields
    # compared; 5,775 descriptors llvm-objdump-22 refuses (reserved SGPR bits set by ROCm 6.4-7.1 on
    # gfx10+), each named by amdocc's descriptor-bits finding.
    assert totals["kernels"] == 19075
    assert totals["metadata"] > 1_500_000 and totals["descriptors"] > 400_000
    assert set(producers) == {f"libbitsandbytes_rocm{v}.so" for v in ("64", "70", "71", "72", "714", "715")}
    assert "roc-6.4.4" in producers["libbitsandbytes_rocm64.so"]
    assert "8f497e0992fb7513f7f78a6f6b6f1056c375e961" in producers["libbitsandbytes_rocm715.so"]


@pytest.fixture(scope="module")
def jax_plugin(tmp_path_factory) -> Path:
    if not JAX_WHEEL.exists():
        skip_unless_required("jax-rocm10-pjrt 0.12.0 is not in .cache/jax-rocm10 (run .ci/setup-tests.sh)")
    digest = hashlib.sha256()
    with JAX_WHEEL.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    assert digest.hexdigest() == JAX_SHA256
    out = tmp_path_factory.mktemp("jax")
    with zipfile.ZipFile(JAX_WHEEL) as wheel:
        wheel.extract(JAX_MEMBER, out)
    return out / JAX_MEMBER


def test_the_jax_rocm10_wheel_read_whole():
    if not JAX_WHEEL.exists():
        skip_unless_required("jax-rocm10-pjrt 0.12.0 is not in .cache/jax-rocm10 (run .ci/setup-tests.sh)")
    # The command line, streamed: one JSON line per kernel (the code objects hold 2.4 GB expanded).
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "amdocc", "inspect", "--json-lines", "--fields", "name", str(JAX_WHEEL)]
    kernels: Counter[str] = Counter()
    ccobs, other = set(), []
    with subprocess.Popen(command, stdout=subprocess.PIPE, env=env, cwd=ROOT) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            record = json.loads(line)
            if "processor" not in record:
                other.append(record)
                continue
            kernels[record["processor"]] += 1
            ccobs.update(h for h in record["origin"].split(" > ") if h.startswith("CCOB"))
    assert proc.returncode == 0
    assert len(ccobs) == 45 and all(h.startswith("CCOB v3 zstd@") for h in ccobs)
    assert len(kernels) == 27 and kernels["gfx1250"] == 15287
    assert sum(kernels.values()) == 409_773  # measured 2026-12
    assert len(other) == 45 and all(r["skipped"]["reason"] == "host entry" for r in other)


def test_the_jax_rocm10_gfx1250_kernels_against_llvm_22(jax_plugin, tmp_path):
    extracted = [str(p) for _, p in unbundle_compressed(jax_plugin, tmp_path, targets={"gfx1250"})]
    assert len(extracted) == 45
    report = check_files(extracted, chunk=8)
    assert report.kernels == 15287 and report.no_descriptor_oracle == {}
    (refused,) = report.mismatches
    assert refused.endswith(
        f"{JAX_OBJDUMP_REFUSES}: llvm-objdump could not decode: kernel descriptor must be 64-byte aligned"
    )
    # Measured: 369,493 metadata values, 535,010 descriptor fields.
    assert report.metadata_fields > 360_000 and report.descriptor_fields > 500_000
    # The gfx1250 layout (docs/code-object-format.md §3.3, encoding granule 16): RSRC1's VGPR
    # field is ceil(v/16) - 1 for every kernel; every kernel is wave32; no dynamic VGPRs.
    for path in extracted:
        (co,) = amdocc.load(path)
        assert _comment(Path(path)) == co.producer.text == JAX_PRODUCER
        for kernel in co.kernels:
            fields = kernel.descriptor.fields
            vgprs = kernel.meta("vgpr_count")
            assert fields["granulated_workitem_vgpr_count"] == max(1, -(-vgprs // 16)) - 1, kernel.name
            assert kernel.meta("wavefront_size") == 32 and not fields.get("enable_dynamic_vgpr")
