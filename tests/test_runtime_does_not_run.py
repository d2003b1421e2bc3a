"""A processor the HIP profile's runtime does not run is not a launch failure.

ROCm 7.14's runtime (the default HIP profile) does not list gfx700 in its device.cpp ISA table
(ROCm 6.3 dropped gfx700-gfx702; tests/test_hip_releases.py pins that per release), so HIP's
occupancy API gives no answer for such a kernel at all: "unsupported-processor" is not "no
workgroup fits". A wheel that ships gfx700-gfx909 code objects (vapoursynth-dfttest2-hip's
bundled HSA runtime) failed `check` with 40 "does not fit on a CU" violations, and `census`
counted its kernels as "0 under some models" at 0 waves per SIMD. The gates now leave the hip
model out of those kernels' verdicts, saying why, and the others judge: llc-22's own
"; Occupancy:" for the same source is the oracle that the llvm model fits.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import ROOT

pytestmark = pytest.mark.llvm22

SOURCE = ROOT / "tools" / "fixture_src" / "kernels.hip"
HIP = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "--offload-device-only", "--no-gpu-bundle-output"]
NOT_RUN = "the ROCm 7.14 runtime does not run gfx700"


@pytest.fixture(scope="module")
def gfx700(tmp_path_factory):
    """kernels.hip for gfx700 by clang-22, and the compiler's '; Occupancy:' per kernel."""
    out = tmp_path_factory.mktemp("gfx700") / "k.co"
    cmd = ["clang-22", *HIP, "--offload-arch=gfx700", f"-I{SOURCE.parent}", str(SOURCE)]
    subprocess.run([*cmd, "-o", str(out)], check=True, capture_output=True)
    asm = subprocess.run([*cmd, "-S", "-o", "-"], check=True, capture_output=True, text=True).stdout
    occupancy = [int(n) for n in re.findall(r"; Occupancy: (\d+)", asm)]
    return out, occupancy


def test_the_hip_model_gives_no_answer_for_a_processor_its_runtime_does_not_run(gfx700):
    path, _ = gfx700
    kernel = amdocc.load(path)[0].kernels[0]
    occ = amdocc.occupancy(kernel, block_size=256)
    assert occ.error == "unsupported-processor" and occ.no_answer
    assert occ.warnings[-1].startswith(NOT_RUN)
    assert not amdocc.occupancy(kernel, block_size=256, profile="rocm-6.2").no_answer  # 6.2 still ran gfx700


def test_check_leaves_the_hip_model_out_and_the_others_judge(gfx700, capsys):
    path, compiler_occupancy = gfx700
    assert compiler_occupancy and min(compiler_occupancy) > 0  # llc-22: every kernel fits
    assert main(["check", "--no-config", "--rules", "launch", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    kernels = len(amdocc.load(path)[0].kernels)
    assert report["summary"]["violations"] == 0
    hip_left_out = [n for n in report["not_evaluated"] if n["rule"] == "launch" and n.get("model") == "hip"]
    assert [(n["kernels"], n["reason"].startswith(NOT_RUN)) for n in hip_left_out] == [(kernels, True)]


def test_an_occupancy_floor_is_not_failed_by_a_model_that_gives_no_answer(gfx700, capsys):
    path, _ = gfx700
    assert main(["check", "--no-config", "--rules", "occupancy", "--min-occupancy", "1", str(path)]) == 0
    out = capsys.readouterr().out
    assert "not evaluated by the hip model" in out and NOT_RUN in out


def test_census_counts_no_kernel_as_zero_and_says_why_the_hip_columns_are_blank(gfx700, capsys):
    path, _ = gfx700
    assert main(["census", "--json", str(path)]) == 0
    captured = capsys.readouterr()
    census = json.loads(captured.out)
    row = census["targets"]["gfx700"]
    kernels = len(amdocc.load(path)[0].kernels)
    assert (row["kernels"], row["some_models_zero"], row["cannot_launch"]) == (kernels, 0, 0)
    assert row["occupancy"] == {"n/a": kernels}  # no waves per SIMD from hip: not 0
    assert census["some_models_zero"] == [] and census["cannot_launch"] == []
    assert list(row["unmodelled"].values()) == [kernels]
    assert next(iter(row["unmodelled"])).startswith(f"hip: {NOT_RUN}")
    assert f"kernel(s) without the hip model: {NOT_RUN}" in captured.err
