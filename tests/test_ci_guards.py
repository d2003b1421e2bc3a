"""The guards that keep CI honest: no silent skips with AMDOCC_REQUIRE_ORACLES=1, a printed and
reproducible Hypothesis seed, and a setup script that stops when an install fails."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, TESTS

PROBE = """
from hypothesis import given, settings, strategies as st
from conftest import needs

def test_missing_package():
    needs("amdocc_no_such_package", "a package this test compares against")

DRAWN = []

# Enough examples that some are drawn at random: Hypothesis tries boundary values first.
@settings(max_examples=40, database=None)
@given(st.integers(0, 10**9))
def test_draws(x):
    DRAWN.append(x)

def test_report():
    print("DRAWN", DRAWN)
"""


def _run(tmp_path, **env):
    (tmp_path / "test_probe.py").write_text(PROBE)
    # The project's conftest, under another name (this directory's conftest re-exports its hooks).
    (tmp_path / "conftest.py").write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('project_conftest', {str(TESTS / 'conftest.py')!r})\n"
        "project = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(project)\n"
        "needs, pytest_configure, pytest_terminal_summary = project.needs, project.pytest_configure, "
        "project.pytest_terminal_summary\n"
    )
    ours = ("AMDOCC_REQUIRE_ORACLES", "AMDOCC_HYPOTHESIS_SEED", "CI")
    full = {k: v for k, v in os.environ.items() if k not in ours}
    # An empty value means "not set" (Hypothesis counts a CI variable that is present at all).
    full.update({k: v for k, v in env.items() if v}, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
        capture_output=True,
        text=True,
        env=full,
        cwd=tmp_path,
    )


def test_a_missing_package_skips_locally_and_fails_when_oracles_are_required(tmp_path):
    local = _run(tmp_path)
    assert "1 skipped" in local.stdout and "amdocc_no_such_package is not installed" in local.stdout
    required = _run(tmp_path, AMDOCC_REQUIRE_ORACLES="1")
    assert required.returncode == 1 and "1 failed" in required.stdout
    assert "amdocc_no_such_package is required (AMDOCC_REQUIRE_ORACLES=1)" in required.stdout


@pytest.mark.parametrize("ci", ["", "true"], ids=["local", "CI=true"])
def test_the_hypothesis_seed_is_printed_and_replays_the_same_examples(tmp_path, ci):
    # CI=true makes Hypothesis load its derandomizing "ci" profile; CI machines set it.
    first = _run(tmp_path, AMDOCC_HYPOTHESIS_SEED="12345", CI=ci)
    again = _run(tmp_path, AMDOCC_HYPOTHESIS_SEED="12345", CI=ci)
    other = _run(tmp_path, AMDOCC_HYPOTHESIS_SEED="54321", CI=ci)
    assert "hypothesis seed 12345 (AMDOCC_HYPOTHESIS_SEED=12345 replays this run)" in first.stdout
    drawn = [re.search(r"DRAWN (\[.*\])", r.stdout).group(1) for r in (first, again, other)]
    assert drawn[0] == drawn[1] != drawn[2]
    # Without the variable a seed is drawn and printed.
    assert re.search(r"hypothesis seed \d+ \(AMDOCC_HYPOTHESIS_SEED=\d+ replays", _run(tmp_path, CI=ci).stdout)


def test_setup_script_stops_on_a_failed_install():
    script = (ROOT / ".ci" / "setup-tests.sh").read_text()
    assert "set -euo pipefail" in script
    installs = [line for line in script.splitlines() if "pip install" in line or "apt-get install" in line]
    assert installs and not any("||" in line for line in installs), installs
    assert '"flydsl==' in script and '"triton==' in script and '"torch==' in script
