"""amdocc diff as a CI gate: two deliberate regressions (more VGPRs, more LDS) built with llc-22
(tools/fixtures/diff.py), with expected values from the compiler's own listing and
HIP's rules worked by hand."""

from __future__ import annotations

import json

from amdocc.cli.main import main
from conftest import FIXTURES

D = FIXTURES / "diff"


def run(capsys, *argv):
    code = main(["diff", *map(str, argv)])
    return code, capsys.readouterr().out


def _k_main(result):
    return next(r for r in result["kernels"] if r["kernel"] == "k_main")


def test_more_vgprs_fails_the_default_occupancy_gate(capsys):
    code, out = run(capsys, "--json", D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco")
    assert code == 1
    r = _k_main(json.loads(out))
    # Compiler listing (diff_*.kernel-info.txt): NumVgprs 64 -> 160, LDSByteSize 16384, max WG 256.
    # HIP at 256 threads: 64 VGPRs -> 512/64 = 8 waves, 4*8*64/256 = 8, LDS 65536/16384 = 4 -> 4;
    # 160 VGPRs -> 512/160 = 3 waves, 4*3*64/256 = 3 -> 3.
    assert (r["old"]["vgpr"], r["new"]["vgpr"]) == (64, 160)
    assert (r["old"]["blocks_per_cu"], r["new"]["blocks_per_cu"]) == (4, 3)
    assert r["regressions"] == ["occupancy", "vgpr"] and r["fails"] == ["occupancy"]


def test_more_lds_fails_an_lds_gate_and_reports_it(capsys):
    code, out = run(capsys, D / "diff_base.hsaco", D / "diff_more_lds.hsaco", "--fail-on", "lds")
    assert code == 1
    assert "16384->32768 (+16384)" in out and "4->2 (-2) @256" in out and "FAIL lds" in out
    code, out = run(capsys, "--json", D / "diff_base.hsaco", D / "diff_more_lds.hsaco", "--fail-on", "vgpr,scratch")
    assert code == 0  # the LDS increase is reported but not gated
    assert _k_main(json.loads(out))["regressions"] == ["occupancy", "lds"]


def test_unchanged_build_passes_and_gate_can_be_off(capsys):
    assert run(capsys, D / "diff_base.hsaco", D / "diff_base.hsaco")[0] == 0
    assert run(capsys, D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco", "--fail-on", "none")[0] == 0


def test_added_and_removed_kernels_are_listed(capsys):
    code, out = run(capsys, "--json", D / "diff_base.hsaco", FIXTURES / "elf" / "gfx942_cov4.hsaco")
    result = json.loads(out)
    assert {k["kernel"] for k in result["removed"]} == {"k_main", "k_other"}
    assert "_Z9saxpy_ldsfPKfPfi" in {k["kernel"] for k in result["added"]}
    assert result["kernels"] == [] and code == 0
