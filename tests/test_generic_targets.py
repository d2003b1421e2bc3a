"""Generic code objects (gfx9-generic, gfx9-4-generic, gfx10-3-generic, gfx11-generic,
gfx12-generic): without --target a generic code object is "not evaluated: name a member with
--target" in check, census and occupancy, never a launch violation; with a member named it is
evaluated there, and diff/census OLD NEW pair it with the member's own code.

Every input is compiled here by clang-22 (HIP, -mcode-object-version=6, as generic targets
require); llvm-readelf-22 says what each object is (its e_flags processor and generic version,
its kernels and their counts). The families' members are AMDGPUUsage.rst's generic processor
table (gfx9-4-generic: gfx942, gfx950; gfx11-generic: gfx1100-gfx1103, gfx1150-gfx1153 ...)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from amdocc.cli.main import main
from oracle import llvm22

pytestmark = pytest.mark.llvm22

ROOT = Path(__file__).resolve().parents[1]
HIP_DEFS = ROOT / "tools" / "fixture_src" / "hip_defs.h"

# A kernel that fits anywhere at its launch bound: few VGPRs, no LDS, no scratch.
SOURCE = """
#include "hip_defs.h"
__global__ __launch_bounds__(1024) void saxpy(float a, const float* x, float* y, int n) {
  int i = TID_X() + BID_X() * 1024;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ __launch_bounds__(64) void tiny(int* out) { out[TID_X()] = TID_X(); }
"""

# AMDGPUUsage.rst, "Generic processors": a member of each family.
MEMBER = {
    "gfx9-generic": "gfx906",
    "gfx9-4-generic": "gfx942",
    "gfx10-3-generic": "gfx1030",
    "gfx11-generic": "gfx1100",
    "gfx12-generic": "gfx1201",
}
WORDS = "name a member with --target"


def compile_hip(source: str, arch: str, out: Path) -> Path:
    """``source`` compiled by clang-22 for ``arch`` as one bare code object (CO v6)."""
    src = out.with_suffix(".hip")
    src.write_text(source)
    subprocess.run(
        [
            llvm22.CLANG,
            "-x",
            "hip",
            "-nogpulib",
            "-nogpuinc",
            "-O3",
            f"-I{HIP_DEFS.parent}",
            "--offload-device-only",
            "--no-gpu-bundle-output",
            f"--offload-arch={arch}",
            "-mcode-object-version=6",
            str(src),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    return out


def notes(path: Path) -> tuple[dict, dict[str, dict]]:
    """(the e_flags as llvm-readelf-22 names them, {kernel name: its metadata})."""
    read = llvm22.readelf([str(path)])[str(path)]
    (doc,) = read["metadata"]
    return read["header"], {k[".name"]: k for k in doc["amdhsa.kernels"]}


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture(scope="module")
def generic(tmp_path_factory) -> dict[str, Path]:
    """SOURCE built for every generic family of MEMBER, checked against llvm-readelf-22: its
    e_flags name the generic processor with generic version 1."""
    work = tmp_path_factory.mktemp("generic")
    built = {}
    for family in MEMBER:
        path = compile_hip(SOURCE, family, work / f"{family}.co")
        header, kernels = notes(path)
        assert header["processor"] == family and "generic_v1" in header["features"]
        assert header["e_flags"] >> 24 == 1  # EF_AMDGPU_GENERIC_VERSION
        assert set(kernels) == {"_Z5saxpyfPKfPfi", "_Z4tinyPi"}
        built[family] = path
    return built


@pytest.mark.parametrize("family", list(MEMBER))
def test_check_does_not_judge_generic_code_without_a_member(capsys, generic, family):
    path = generic[family]
    code, out, _ = cli(capsys, "check", "--json", path)
    result = json.loads(out)
    assert code == 0 and result["violations"] == []
    judged = {n["rule"]: n for n in result["not_evaluated"]}
    assert set(judged) == {"launch", "lds"}
    for n in judged.values():
        assert n["kernels"] == 2 and WORDS in n["reason"] and family in n["reason"] and n["model"] is None
        assert MEMBER[family] in n["reason"]
    code, out, _ = cli(capsys, "check", path)
    assert code == 0 and f"not evaluated: launch on 2 kernel(s): {family} is a family of processors" in out
    assert "cannot launch" not in out and "unsupported-processor" not in out
    # Named, the member judges it: the launch and LDS rules are evaluated, and pass.
    code, out, _ = cli(capsys, "check", "--json", "--target", MEMBER[family], path)
    result = json.loads(out)
    assert code == 0 and result["violations"] == [] and result["not_evaluated"] == []


@pytest.mark.parametrize("family", ["gfx9-4-generic", "gfx11-generic"])
def test_census_lists_generic_code_as_not_checked_never_as_cannot_launch(capsys, generic, family):
    code, out, err = cli(capsys, "census", "--json", generic[family])
    summary = json.loads(out)
    (t,) = summary["targets"].values()
    assert code == 0 and summary["kernels"] == 2
    assert t["cannot_launch"] == 0 and t["launch_unchecked"] == 2 and summary["cannot_launch"] == []
    assert f"2 kernel(s) without the hip model: {family} is a family of processors" in err and WORDS in err
    code, out, _ = cli(capsys, "census", "--json", "--target", MEMBER[family], generic[family])
    (t,) = json.loads(out)["targets"].values()
    assert code == 0 and t["launch_unchecked"] == 0 and t["cannot_launch"] == 0


def test_occupancy_of_generic_code_needs_a_member(capsys, generic, tmp_path):
    path = generic["gfx11-generic"]
    code, out, err = cli(capsys, "occupancy", "--json", path)
    result = json.loads(out)
    assert code == 2 and result["results"] == [] and result["errors"] == []
    (record,) = result["not_evaluated"]
    assert (record["target"], record["kernels"]) == ("gfx11-generic", 2) and WORDS in record["reason"]
    assert "no kernel evaluated: gfx11-generic is a family of processors" in err
    code, out, _ = cli(capsys, "occupancy", path)
    assert code == 2 and "gfx11-generic: 2 kernel(s) not evaluated: gfx11-generic is a family" in out
    # Beside code that runs on one processor, the rest is evaluated and the run succeeds.
    own = compile_hip(SOURCE, "gfx1100", tmp_path / "gfx1100.co")
    code, out, _ = cli(capsys, "occupancy", "--json", path, own)
    result = json.loads(out)
    assert code == 0 and len(result["results"]) == 2 and len(result["not_evaluated"]) == 1
    # A member named: every kernel is evaluated there.
    code, out, _ = cli(capsys, "occupancy", "--json", "--target", "gfx1101", path)
    rows = json.loads(out)["results"]
    assert code == 0 and {(r["processor"], r["built_for"]) for r in rows} == {("gfx1101", "gfx11-generic")}


def test_the_llvm_model_still_answers_for_the_generic_target_llc_compiled_for(capsys, generic, tmp_path):
    # The compiler's own "; Occupancy:" for the generic target (clang-22 -S of the same source).
    asm = tmp_path / "gfx11-generic.s"
    src = tmp_path / "k.hip"
    src.write_text(SOURCE)
    subprocess.run(
        [
            *(llvm22.CLANG, "-x", "hip", "-nogpulib", "-nogpuinc", "-O3", f"-I{HIP_DEFS.parent}", "-S"),
            *("--offload-device-only", "--offload-arch=gfx11-generic", "-mcode-object-version=6", str(src), "-o", asm),
        ],
        check=True,
        capture_output=True,
    )
    printed = [int(n) for n in re.findall(r"; Occupancy: (\d+)", asm.read_text())]
    code, out, _ = cli(capsys, "occupancy", "--json", "--model", "llvm", generic["gfx11-generic"])
    rows = json.loads(out)["results"]
    assert code == 0 and sorted(r["waves_per_simd"] for r in rows) == sorted(printed) and len(printed) == 2


def test_the_python_api_refuses_the_family_and_answers_for_a_member(generic):
    import amdocc
    from amdocc.errors import UsageError
    from amdocc.models.applicable import ModelUnavailable

    with pytest.raises(UsageError, match=f"no kernel evaluated: .*{WORDS}"):
        amdocc.app.occupancy(generic["gfx12-generic"])
    assert len(amdocc.app.occupancy(generic["gfx12-generic"], target="gfx1200")["results"]) == 2

    (co,) = amdocc.load(generic["gfx9-4-generic"])
    kernel = co.kernel("_Z5saxpyfPKfPfi")
    for model in ("hip", "hw"):
        with pytest.raises(ModelUnavailable, match=WORDS):
            amdocc.occupancy(kernel, block_size=256, model=model)
    occ = amdocc.occupancy(kernel, block_size=256, target="gfx942")
    assert (occ.processor, occ.built_for, occ.error) == ("gfx942", "gfx9-4-generic", None)
