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
from collections import Counter
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
    "vllm": (
        "vllm_rocm-0.6.3-cp310-cp310-manylinux_2_34_x86_64.manylinux_2_35_x86_64.whl",
        "1385fa51555f730a1fe31b8bbd40047915eea0688992cb24e288d3550a4831be",
    ),
    "cupy": (
        "cupy_rocm_5_0-13.3.0-cp311-cp311-manylinux2014_x86_64.whl",
        "00907762735d182737bee317f532dc381337fb8e978bd846acb268df463b2d7b",
    ),
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


class Oracle:
    """LLVM's reading of one wheel: every code object (by sha256) with its member, processor
    and metadata note, from the pipeline above; computed once per wheel for every test."""

    def __init__(self, wheel: Path, work: Path):
        self.members = _fatbin_members(wheel, work)
        self.by_sha: dict[str, list] = {}
        for member, path in self.members.items():
            for co in unbundle_library(path, work / "unbundled" / member):
                seen = llvm22.readelf([str(co)])[str(co)]
                (doc,) = seen["metadata"]
                self.by_sha.setdefault(hashlib.sha256(co.read_bytes()).hexdigest(), []).append(
                    (member, seen["header"]["processor"], doc)
                )

    def kernels(self):
        """(member, processor, LLVM's kernel map) of every kernel."""
        for entries in self.by_sha.values():
            for member, processor, doc in entries:
                for k in doc["amdhsa.kernels"]:
                    yield member, processor, k


@pytest.fixture(scope="module", params=sorted(WHEELS))
def wheel_and_oracle(request, tmp_path_factory):
    name, digest = WHEELS[request.param]
    wheel = wheels_dir() / name
    assert wheel.is_file(), f"{wheel} is missing: run .ci/setup-tests.sh"
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == digest
    return request.param, wheel, Oracle(wheel, tmp_path_factory.mktemp(request.param))


def _amdocc(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_wheel_agrees_with_llvm_on_every_kernel(wheel_and_oracle):
    which, wheel, llvm = wheel_and_oracle
    by_hand = len(UNBUNDLED_BY_HAND)
    oracle = {sha: list(entries) for sha, entries in llvm.by_sha.items()}
    members = llvm.members

    # amdocc's side: the library call gives the bytes, `inspect --json` the record of each.
    loaded = amdocc.load(wheel)
    proc = _amdocc("inspect", "--json", str(wheel))
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)["code_objects"]
    assert len(records) == len(loaded) == sum(len(v) for v in oracle.values())
    assert {co.origin.hops[0] for co in loaded} == set(members)

    kernels, mismatches = 0, []
    for co, rec in zip(loaded, records, strict=True):
        assert (rec["origin"], rec["offset"]) == (co.origin.chain, co.origin.base)
        candidates = oracle.get(hashlib.sha256(co.data).hexdigest())
        assert candidates, f"{rec['origin']}: LLVM's pipeline extracted no such code object"
        member, processor, doc = candidates.pop()
        assert rec["origin"].split(" > ")[0] == member and rec["processor"] == processor
        llvm_kernels = doc["amdhsa.kernels"]
        assert [k["name"] for k in rec["kernels"]] == [k[".name"] for k in llvm_kernels]
        for mine, theirs in zip(rec["kernels"], llvm_kernels, strict=True):
            kernels += 1
            mismatches += [
                f"{rec['origin']}: {mine['name']}: {m}" for m in metadata_mismatches(mine["metadata"], theirs)
            ]
            for key in (
                "vgpr_count",
                "sgpr_count",
                "group_segment_fixed_size",
                "private_segment_fixed_size",
                "wavefront_size",
                "max_flat_workgroup_size",
                "agpr_count",
            ):
                if mine[key] != theirs.get("." + key):
                    mismatches.append(f"{mine['name']}: {key} {mine[key]} but LLVM {theirs.get('.' + key)}")
        top = {k: v for k, v in doc.items() if k != "amdhsa.kernels"}
        mismatches += [f"{rec['origin']}: {m}" for m in metadata_mismatches(rec["metadata"], top)]
    print(
        f"\n{which}: {len(records)} code objects from {len(members)} libraries, {kernels} kernels, "
        f"all metadata compared with llvm-readelf-22 --notes: {len(mismatches)} mismatches "
        f"({len(UNBUNDLED_BY_HAND) - by_hand} entries cut by hand where LLVM 22's bundler refused the bundle id)"
    )
    assert mismatches == []
    assert kernels == sum(len(co.kernels) for co in loaded)


# The census row's numbers and the metadata note's keys they must equal.
CENSUS_NOTE_KEYS = {
    "wave": ".wavefront_size",
    "vgprs": ".vgpr_count",
    "agprs": ".agpr_count",
    "sgprs": ".sgpr_count",
    "lds": ".group_segment_fixed_size",
    "scratch": ".private_segment_fixed_size",
    "vgpr_spills": ".vgpr_spill_count",
    "sgpr_spills": ".sgpr_spill_count",
    "max_flat_workgroup_size": ".max_flat_workgroup_size",
}


def test_census_of_a_wheel_agrees_with_llvm_on_every_kernel(wheel_and_oracle, tmp_path):
    """`amdocc census --csv` over the whole wheel: one row per kernel LLVM's pipeline finds, in
    the member LLVM found it in, for the processor LLVM read, with the note's numbers."""
    import csv

    which, wheel, llvm = wheel_and_oracle
    out = tmp_path / "census.csv"
    proc = _amdocc("census", "--csv", str(out), str(wheel))
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(out.open()))

    def as_int(text):
        return None if text == "" else int(float(text))

    # A key the note lacks (e.g. .agpr_count on processors without AGPRs, in older compilers)
    # is not compared: the census then gives amdocc's resolved value, which is no note value.
    present = {
        (member, processor, k[".name"]): tuple(key in k for key in CENSUS_NOTE_KEYS.values())
        for member, processor, k in llvm.kernels()
    }

    def masked(where, values):
        return (*where, *(v if keep else "-" for v, keep in zip(values, present.get(where, ()), strict=False)))

    census = Counter(
        masked((r["member"], r["processor"], r["kernel"]), [as_int(r[c]) for c in CENSUS_NOTE_KEYS]) for r in rows
    )
    expected = Counter(
        masked((member, processor, k[".name"]), [k.get(key) for key in CENSUS_NOTE_KEYS.values()])
        for member, processor, k in llvm.kernels()
    )
    not_compared = sum(not all(mask) for mask in present.values())
    missing, extra = expected - census, census - expected
    print(
        f"\n{which}: census rows {len(rows)}, LLVM kernels {sum(expected.values())}, "
        f"{len(missing)} missing, {len(extra)} extra; {not_compared} kernel names with a note key absent"
    )
    assert sum(expected.values()) > 1000
    assert (list(missing.items())[:5], list(extra.items())[:5]) == ([], [])
    # Every kernel got a HIP answer at its declared size, or says why not.
    assert all(r["blocks_per_cu"] != "" or r["problem"] for r in rows)
