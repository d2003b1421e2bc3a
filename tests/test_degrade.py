"""A fact one model lacks leaves that model out, says why once per target with a count on
standard error, and keeps the row and the other models.

gfx1250's hw_wave_slots is unknown (tables/targets.toml names the sources that disagree), so the
hw model cannot answer there; hip and llvm can. Kernels are made by llvm-mc-22/ld.lld-22
(amdocc.testing.synth) with the metadata chosen and read back by llvm-readelf-22."""

from __future__ import annotations

import json
import subprocess

import pytest

from amdocc.cli.main import main
from amdocc.targets import get_target
from amdocc.testing import SynthSpec, synthesize
from conftest import ROOT
from oracle import llvm22

pytestmark = pytest.mark.llvm22

SAMPLE = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
SPECS = [
    SynthSpec("gfx1250", 64, name="k_small", max_flat_workgroup_size=256),
    SynthSpec("gfx1250", 96, name="k_mid", max_flat_workgroup_size=256),
    # 256 VGPRs, 1024 threads of wave32 = 32 waves: more than the VGPR file holds on a CU.
    SynthSpec("gfx1250", 256, name="k_big", max_flat_workgroup_size=1024),
]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    assert "hw_wave_slots" in get_target("gfx1250").unknown  # the premise: a fact no source pins
    root = tmp_path_factory.mktemp("gfx1250")
    for spec in SPECS:
        path = root / f"{spec.name}.co"
        synthesize(spec, path)
        (note,) = llvm22.readelf([str(path)])[str(path)]["metadata"][0]["amdhsa.kernels"]
        assert (note[".name"], note[".vgpr_count"]) == (spec.name, spec.vgpr_count)
    return root


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_census_keeps_every_row_and_says_once_what_the_hw_model_lacks(capsys, tree):
    code, out, err = run(capsys, "census", "--json", tree)
    s = json.loads(out)
    assert code == 0 and s["kernels"] == len(SPECS) and s["errors"] == []
    t = s["targets"]["gfx1250"]
    (why,) = t["unmodelled"]
    assert why.startswith("hw: the hw model needs gfx1250's hw_wave_slots") and t["unmodelled"][why] == len(SPECS)
    lines = [line for line in err.splitlines() if "hw_wave_slots" in line]
    assert len(lines) == 1 and f"gfx1250: {len(SPECS)} kernel(s) without the hw model" in lines[0]
    code, out, err = run(capsys, "census", "--csv", "-", tree)
    rows = out.splitlines()
    assert len(rows) == 1 + len(SPECS) and all("hw: the hw model needs" in r for r in rows[1:])
    assert "hw_wave_slots" not in out.split("\n", 1)[0] and err.count("hw_wave_slots") == 1
    page = run(capsys, "census", "--html", "-", tree)[1]
    assert f"gfx1250: {len(SPECS)} kernel(s) judged without the hw model: the hw model needs" in page


def test_check_judges_with_the_models_that_can_and_says_which_could_not(capsys, tree):
    code, out, _ = run(capsys, "check", "--no-config", "--json", "--rules", "launch", tree)
    result = json.loads(out)
    assert result["errors"] == [] and result["summary"]["kernels"] == len(SPECS)
    (ne,) = result["not_evaluated"]
    assert (ne["rule"], ne["model"], ne["kernels"]) == ("launch", "hw", len(SPECS))
    # k_big still fails launch, under the models that can answer.
    (v,) = result["violations"]
    assert code == 1 and v["kernel"] == "k_big" and "hw" not in v["value"].split(",") and "hip" in v["value"]
    code, out, _ = run(capsys, "check", "--no-config", "--rules", "launch", tree)
    assert f"not evaluated by the hw model (the others judged): launch on {len(SPECS)} kernel(s)" in out


def test_a_profiles_inferred_warning_is_said_once_per_target_on_stderr(capsys):
    code, out, err = run(capsys, "occupancy", "--hip-profile", "rocm-7.1", SAMPLE)
    assert code == 0 and "inferred from" not in out
    warned = [line for line in err.splitlines() if "HIP profile rocm-7.1 is inferred from" in line]
    targets = [line.split("(")[-1] for line in warned]
    assert len(warned) == len(set(targets)) == 5  # the sample's five processors, once each
    assert all(line.startswith("amdocc: warning: ") and "kernels on gfx" in line for line in warned)


def test_inspect_counts_skipped_entries_once_instead_of_listing_each(capsys):
    # The sample bundle's entries as clang-offload-bundler-22 lists them: one empty host entry.
    listed = subprocess.run(
        ["clang-offload-bundler-22", "--list", "--type=o", f"--input={SAMPLE}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    hosts = sum(e.startswith("host-") for e in listed)
    assert hosts == 1
    for argv in (("inspect", "--kernel", "saxpy", SAMPLE), ("inspect", SAMPLE)):
        code, out, err = run(capsys, *argv)
        assert code == 0 and "host entry" not in out
        assert err.count("host entry") == 1 and f"skipped entries: {hosts} host entry" in err
