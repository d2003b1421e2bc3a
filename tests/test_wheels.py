"""Real ROCm wheels from PyPI, read whole by amdocc, against LLVM's own unbundle-then-readelf.

.ci/setup-tests.sh downloads two pinned wheels into .cache/rocm-wheels (vllm-rocm 0.6.3 and
cupy-rocm-5-0 13.3.0: 98 MB together; the large wheels are benchmarks only, see
tools/bench_scale.py). For each wheel the oracle is the pipeline a user would script, with no
amdocc in it: every .so member with a .hip_fatbin section (found by llvm-readelf-22 -S), its
section dumped by llvm-objcopy-22, cut at each bundle, unbundled per target by
clang-offload-bundler-22, and read by llvm-readelf-22 --notes. Every code object must be the
same bytes, and every kernel's metadata in `amdocc inspect --json` must equal LLVM's, key by key.
Neither wheel carries a Windows .dll (PyPI's ROCm wheels are Linux-only); the PE path is
covered by a fixture DLL inside a wheel in test_archives.py.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import amdocc
from conftest import ROOT
from oracle import llvm22
from oracle.compare import metadata_mismatches
from oracle.unbundle import UNBUNDLED_BY_HAND, unbundle_library

pytestmark = [pytest.mark.wheels, pytest.mark.llvm22, pytest.mark.slow]

# (file name, sha256, code objects and kernels as measured with LLVM's pipeline on 2026-11-30)
WHEELS = {
    "vllm": ("vllm_rocm-0.6.3-cp310-cp310-manylinux_2_34_x86_64.manylinux_2_35_x86_64.whl",
             "1385fa51555f730a1fe31b8bbd40047915eea0688992cb24e288d3550a4831be"),
    "cupy": ("cupy_rocm_5_0-13.3.0-cp311-cp311-manylinux2014_x86_64.whl",
             "00907762735d182737bee317f532dc381337fb8e978bd846acb268df463b2d7b"),
}


def wheels_dir() -> Path:
    return Path(os.environ.get("AMDOCC_WHEELS_DIR", ROOT / ".cache" / "rocm-wheels"))


def _fatbin_members(wheel: Path, work: Path) -> dict[str, Path]:
    """Members LLVM says carry a .hip_fatbin with contents, extracted for LLVM's tools."""
    out = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if not (name.endswith(".so") or ".so." in name):
                continue
            path = work / "members" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(z.read(name))
            sections = llvm22.run([llvm22.READELF, "-S", "-W", str(path)])
            if any(".hip_fatbin" in line and "NOBITS" not in line for line in sections.splitlines()):
                out[name] = path
            else:
                path.unlink()
    return out


@pytest.mark.parametrize("which", sorted(WHEELS))
def test_wheel_agrees_with_llvm_on_every_kernel(which, tmp_path):
    name, digest = WHEELS[which]
    wheel = wheels_dir() / name
    assert wheel.is_file(), f"{wheel} is missing: run .ci/setup-tests.sh"
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == digest

    # LLVM's side: every code object of every library, and its metadata note.
    by_hand = len(UNBUNDLED_BY_HAND)
    oracle: dict[str, list] = {}       # sha256 of the code object -> [member, LLVM metadata]
    members = _fatbin_members(wheel, tmp_path)
    for member, path in members.items():
        for co in unbundle_library(path, tmp_path / "unbundled" / member):
            data = co.read_bytes()
            seen = llvm22.readelf([str(co)])[str(co)]
            (doc,) = seen["metadata"]
            oracle.setdefault(hashlib.sha256(data).hexdigest(), []).append(
                (member, seen["header"]["processor"], doc))

    # amdocc's side: the library call gives the bytes, `inspect --json` the record of each.
    loaded = amdocc.load(wheel)
    proc = subprocess.run([sys.executable, "-m", "amdocc", "inspect", "--json", str(wheel)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)["code_objects"]
    assert len(records) == len(loaded) == sum(len(v) for v in oracle.values())
    assert {co.origin.hops[0] for co in loaded} == set(members)

    kernels, mismatches = 0, []
    for co, rec in zip(loaded, records):
        assert (rec["origin"], rec["offset"]) == (co.origin.chain, co.origin.base)
        candidates = oracle.get(hashlib.sha256(co.data).hexdigest())
        assert candidates, f"{rec['origin']}: LLVM's pipeline extracted no such code object"
        member, processor, doc = candidates.pop()
        assert rec["origin"].split(" > ")[0] == member and rec["processor"] == processor
        llvm_kernels = doc["amdhsa.kernels"]
        assert [k["name"] for k in rec["kernels"]] == [k[".name"] for k in llvm_kernels]
        for mine, theirs in zip(rec["kernels"], llvm_kernels):
            kernels += 1
            mismatches += [f"{rec['origin']}: {mine['name']}: {m}"
                           for m in metadata_mismatches(mine["metadata"], theirs)]
            for key in ("vgpr_count", "sgpr_count", "group_segment_fixed_size", "private_segment_fixed_size",
                        "wavefront_size", "max_flat_workgroup_size", "agpr_count"):
                if mine[key] != theirs.get("." + key):
                    mismatches.append(f"{mine['name']}: {key} {mine[key]} but LLVM {theirs.get('.' + key)}")
        top = {k: v for k, v in doc.items() if k != "amdhsa.kernels"}
        mismatches += [f"{rec['origin']}: {m}" for m in metadata_mismatches(rec["metadata"], top)]
    print(f"\n{which}: {len(records)} code objects from {len(members)} libraries, {kernels} kernels, "
          f"all metadata compared with llvm-readelf-22 --notes: {len(mismatches)} mismatches "
          f"({len(UNBUNDLED_BY_HAND) - by_hand} entries cut by hand where LLVM 22's bundler refused the bundle id)")
    assert mismatches == []
    assert kernels == sum(len(co.kernels) for co in loaded)
