"""The reusable GitHub Action (action.yml) and the pre-commit hook (.pre-commit-hooks.yaml), run.

The action's ``run:`` steps are executed as GitHub runs a composite action's bash steps
(``bash --noprofile --norc -eo pipefail``), in order, with ``${{ inputs.* }}``,
``${{ github.action_path }}`` and ``${{ steps.<id>.outputs.* }}`` substituted and each step's
``$GITHUB_OUTPUT`` read back; the install step really installs this checkout with pip (into a
virtual environment, offline: ``--no-deps --no-build-isolation --no-index``). The one ``uses:``
step, the SARIF upload, is GitHub's own and is checked for what it is handed. The SARIF the
check step writes is validated against the SARIF 2.1.0 schema stored in tests/data/schemas, and
its results against what LLVM's tools say of the fixture (test_check.expected_violations, from
llvm-readelf-22 and the compiler's '; Occupancy:').

The pre-commit hook is run by pre-commit itself (``pre-commit try-repo`` on this checkout), which
builds its own environment from a local wheelhouse (``.cache/wheelhouse``, filled by
.ci/setup-tests.sh) so that no index is needed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

import amdocc
from conftest import ROOT, needs, skip_unless_required
from test_check import LIB1, SCHEMAS, expected_violations, kernels_of

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SCHEMA = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def defaults() -> dict[str, str]:
    return {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}


def substitute(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    def value(m: re.Match) -> str:
        expr = m.group(1)
        if expr == "github.action_path":
            return str(ROOT)
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if step:
            return outputs.get(step.group(1), {}).get(step.group(2), "")
        raise AssertionError(f"action.yml uses an expression this runner does not know: {expr}")

    return EXPR.sub(value, text)


def run_action(workspace: Path, venv: Path, inputs: dict[str, str], *, skip_install: bool = False):
    """Run the action's steps; return (last status, outputs, stdout of each step by name, uses steps)."""
    given = {**defaults(), **inputs}
    assert ACTION["runs"]["using"] == "composite"
    outputs: dict[str, dict[str, str]] = {}
    logs: dict[str, str] = {}
    uses = []
    env_base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env_base["PATH"] = f"{venv / 'bin'}{os.pathsep}{env_base['PATH']}"
    failed = 0
    for i, step in enumerate(ACTION["runs"]["steps"]):
        cond = step.get("if")
        if "uses" in step:
            uses.append({**step, "with": {k: substitute(v, given, outputs) for k, v in step["with"].items()}})
            continue
        assert cond in (None, "${{ always() }}"), f"a run step's condition this runner does not evaluate: {cond}"
        if failed and cond is None:
            continue  # GitHub skips a step without always() once one has failed
        if skip_install and step["name"] == "Install amdocc":
            continue
        assert step["shell"] == "bash"
        out_file = workspace / f".github_output_{i}"
        out_file.write_text("")
        env = {**env_base, "GITHUB_OUTPUT": str(out_file)}
        env.update({k: substitute(str(v), given, outputs) for k, v in step.get("env", {}).items()})
        script = workspace / f".step_{i}.sh"
        script.write_text(substitute(step["run"], given, outputs))
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        logs[step["name"]] = done.stdout + done.stderr
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line)
        if done.returncode:
            failed = done.returncode
    return failed, outputs, logs, uses


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A workspace with a committed code object, and the action run once, install step included."""
    try:
        import hatchling  # noqa: F401 - the build backend pip needs offline
    except ImportError:
        skip_unless_required("hatchling is not installed: the install step builds this checkout offline with it")
    work = tmp_path_factory.mktemp("action")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    ws = work / "ws"
    (ws / "kernels").mkdir(parents=True)
    shutil.copy(LIB1, ws / "kernels" / LIB1.name)
    first = run_action(ws, venv, {"paths": "kernels", "pip-args": "--no-deps --no-build-isolation --no-index"})
    return ws, venv, first


def sarif_of(ws: Path, outputs) -> dict:
    doc = json.loads((ws / outputs["check"]["sarif-file"]).read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    return doc


def results_of(doc) -> dict[tuple[str, str], dict]:
    (run,) = doc["runs"]
    out = {}
    for r in run["results"]:
        (loc,) = r["locations"][0]["logicalLocations"]
        out[loc["name"], r["ruleId"]] = r
    return out


def test_install_step_installs_this_checkout(installed):
    ws, venv, (_, _, logs, _) = installed
    assert f"amdocc {amdocc.__version__}" in logs["Install amdocc"]
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import amdocc; print(amdocc.__file__)"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        cwd=ws,  # where the steps run (python -c puts the current directory first on sys.path)
        check=True,
    ).stdout
    assert where.startswith(str(venv)), where


def test_violations_fail_the_job_after_the_sarif_is_written(installed):
    ws, _, (status, outputs, logs, uses) = installed
    assert status == 1 and outputs["check"]["exit-code"] == "1"
    doc = sarif_of(ws, outputs)
    want = expected_violations(LIB1)
    got = results_of(doc)
    assert set(got) == set(want)
    assert all(r["properties"]["value"] == want[key] for key, r in got.items())
    assert (
        "::error file=kernels/check_gfx942.hsaco,title=amdocc check%3A vgpr-spills::k_vgpr_spill"
        in logs["Run amdocc check"]
    )
    assert "amdocc check exited with status 1" in logs["Fail on violations"]
    (upload,) = uses
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "amdocc.sarif" and (ws / "amdocc.sarif").is_file()
    assert "always()" in upload["if"]  # uploaded even though the check step found violations


def test_a_baseline_accepting_everything_passes(installed):
    ws, venv, _ = installed
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [str(venv / "bin" / "amdocc"), "check", "--baseline", "base.json", "--update-baseline", "kernels"],
        cwd=ws,
        env=env,
        check=True,
        capture_output=True,
    )
    status, outputs, _, _ = run_action(
        ws, venv, {"paths": "kernels", "baseline": "base.json", "sarif-file": "accepted.sarif"}, skip_install=True
    )
    assert status == 0 and outputs["check"]["exit-code"] == "0"
    got = results_of(sarif_of(ws, outputs))
    assert set(got) == set(expected_violations(LIB1))
    assert {r["baselineState"] for r in got.values()} == {"unchanged"}
    assert all(r["suppressions"][0]["status"] == "accepted" for r in got.values())


def test_budgets_input_each_line_a_budget(installed):
    ws, venv, _ = installed
    status, outputs, _, _ = run_action(
        ws,
        venv,
        {
            "paths": "kernels",
            "baseline": "base.json",
            "budgets": "vgprs<=128\n\n  k_clean: sgprs<6\n",
            "sarif-file": "budgets.sarif",
        },
        skip_install=True,
    )
    assert status == 1
    got = {k: r for k, r in results_of(sarif_of(ws, outputs)).items() if r["baselineState"] == "new"}
    notes = kernels_of(LIB1)
    want = {(n, "budget:vgprs<=128") for n, k in notes.items() if k[".vgpr_count"] > 128}
    want |= {("k_clean", "budget:sgprs<6")} if notes["k_clean"][".sgpr_count"] >= 6 else set()
    assert set(got) == want and len(want) == 4


def test_a_bad_input_fails_with_status_2_and_nothing_to_upload(installed):
    ws, venv, _ = installed
    status, outputs, logs, _ = run_action(
        ws, venv, {"paths": "kernels", "budgets": "vgpr<=1", "sarif-file": "bad.sarif"}, skip_install=True
    )
    assert status == 2 and outputs["check"] == {"exit-code": "2"}  # no sarif-file: the upload is skipped
    assert "unknown field 'vgpr'" in logs["Run amdocc check"]
    assert not (ws / "bad.sarif").exists()


def test_the_readme_example_names_the_inputs_the_action_has():
    doc = (ROOT / "docs" / "caches-and-budgets.md").read_text()
    (example,) = re.findall(r"```yaml\n(# \.github/workflows/amdocc\.yml.*?)```", doc, re.S)
    workflow = yaml.safe_load(example)
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["security-events"] == "write"
    (step,) = [s for s in job["steps"] if "amdocc" in s.get("uses", "") and "checkout" not in s["uses"]]
    assert set(step["with"]) <= set(ACTION["inputs"]) and "paths" in step["with"]


# --------------------------------------------------------------------------- pre-commit


def test_the_hook_manifest_is_valid_for_pre_commit():
    clientlib = needs("pre_commit.clientlib", "the hook manifest is checked by pre-commit's own loader")
    load_manifest = clientlib.load_manifest
    (hook,) = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "amdocc-check" and hook["entry"] == "amdocc check" and hook["language"] == "python"


def test_pre_commit_runs_the_hook_on_committed_code_objects(tmp_path):
    """pre-commit itself installs the hook from this repository (its HEAD commit) and runs it on
    the staged files its ``files``/``types`` select: a code object with violations fails the
    commit, a text file is not handed to it, and the hook's ``args`` (a baseline) pass through."""
    needs("pre_commit", "pre-commit runs the hook")
    wheelhouse = Path(os.environ.get("AMDOCC_WHEELHOUSE", ROOT / ".cache" / "wheelhouse"))
    if not any(wheelhouse.glob("hatchling-*.whl")):
        skip_unless_required(f"no wheelhouse at {wheelhouse} (.ci/setup-tests.sh fills it) for pre-commit offline")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    shutil.copy(LIB1, repo / "lib.hsaco")
    (repo / "notes.txt").write_text("not a code object\n")
    config = repo / ".pre-commit-config.yaml"
    hook = f"repos:\n- repo: {ROOT}\n  rev: {head.strip()}\n  hooks:\n  - id: amdocc-check\n"
    config.write_text(hook)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }

    def pre_commit() -> tuple[int, str]:
        cmd = [sys.executable, "-m", "pre_commit", "run", "--files", "lib.hsaco", "notes.txt", "--verbose"]
        done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        return done.returncode, done.stdout + done.stderr

    code, out = pre_commit()
    assert code == 1, out
    assert "- exit code: 1" in out and "notes.txt" not in out
    for kernel, rule in expected_violations(LIB1):
        assert re.search(rf"{kernel}\s+gfx942\s+{rule}\s+NEW", out), (kernel, rule)
    # The hook's args reach amdocc check: a baseline accepting every violation lets it pass.
    subprocess.run(
        [sys.executable, "-m", "amdocc", "check", "--baseline", "base.json", "--update-baseline", "lib.hsaco"],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        capture_output=True,
    )
    config.write_text(hook + "    args: [--baseline, base.json]\n")
    code, out = pre_commit()
    assert code == 0, out
    assert re.search(r"amdocc check \(AMD GPU code objects\)\.+Passed", out), out
    assert "6 violation(s): 0 failing, 6 accepted by the baseline" in out
