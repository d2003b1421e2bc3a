"""A missing extra is answered with a pip command that works from where amdocc runs: from a clone
run in place, ``pip install -e '<the clone>[extra]'`` (the index's amdocc, or none, is not the
code running); from an installed amdocc, ``pip install 'amdocc[extra]'``; always quoted for zsh.
``python3 -m amdocc.testing`` without Hypothesis names the extra in one line and exits 2.

A package is made missing by a directory early on PYTHONPATH whose package of that name raises
ModuleNotFoundError on import, as an absent one does. The extras a hint names are checked against
the project's own ``pyproject.toml`` ([project.optional-dependencies]), read with tomllib.
"""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from amdocc.install_hint import install_hint
from conftest import ROOT

SAMPLE = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def without(tmp_path: Path, *modules: str) -> str:
    """A PYTHONPATH under which ``modules`` cannot be imported, and this tree's amdocc can."""
    blocker = tmp_path / "blocked"
    for name in modules:
        (blocker / name).mkdir(parents=True)
        (blocker / name / "__init__.py").write_text(
            f'raise ModuleNotFoundError("No module named {name!r}", name={name!r})\n'
        )
    return os.pathsep.join([str(blocker), str(ROOT)])


def run(argv: list[str], pythonpath: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=cwd)


def installed_copy(tmp_path: Path) -> Path:
    """A package directory laid out as in site-packages: no project file beside it."""
    site = tmp_path / "site-packages" / "amdocc"
    site.mkdir(parents=True)
    (site.parent / "pyproject.toml").write_text('[project]\nname = "another-project"\n')  # not amdocc's
    return site


def test_a_clone_run_in_place_is_told_to_install_that_clone(tmp_path):
    path = without(tmp_path, "hip")
    p = run(["-m", "amdocc", "verify", str(SAMPLE)], path, cwd=ROOT)
    assert p.returncode == 3 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line.endswith("hip-python is not installed (No module named 'hip'); pip install -e '.[hip]'"), line
    # From elsewhere the clone is named by its path, quoted as the shell needs it.
    p = run(["-m", "amdocc", "verify", str(SAMPLE)], path, cwd=tmp_path)
    (line,) = p.stderr.splitlines()
    assert p.returncode == 3 and line.endswith(f"; pip install -e {shlex.quote(f'{ROOT}[hip]')}"), line


def test_the_hint_for_an_installed_copy_names_the_index_requirement(tmp_path):
    package = installed_copy(tmp_path)
    assert install_hint("hip", package_dir=package) == "pip install 'amdocc[hip]'"
    assert install_hint("hip", "test", package_dir=package) == "pip install 'amdocc[hip,test]'"
    # A clone's root holds amdocc's own project file.
    assert install_hint("plot", package_dir=ROOT / "amdocc").startswith("pip install -e ")


@pytest.mark.parametrize("extras", [("hip",), ("hip", "test"), ("plot",), ("triton",)])
def test_each_hint_is_one_pip_command_naming_extras_the_project_declares(tmp_path, extras):
    for package in (ROOT / "amdocc", installed_copy(tmp_path)):
        words = shlex.split(install_hint(*extras, package_dir=package))
        target = words[-1]
        assert words[:2] == ["pip", "install"] and words[2:-1] in ([], ["-e"])
        where, _, listed = target.partition("[")
        assert listed.endswith("]") and tuple(listed[:-1].split(",")) == extras
        assert set(extras) <= set(EXTRAS)
        assert where == "amdocc" if words[2:-1] == [] else Path(where).resolve() == ROOT.resolve()


def test_every_extra_named_in_amdoccs_messages_is_declared():
    """Each install_hint(...) call of the package, and PLOT_EXTRA, names extras pyproject declares."""
    named: set[str] = set()
    for path in (ROOT / "amdocc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "install_hint":
                named |= {a.value for a in node.args if isinstance(a, ast.Constant)}
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PLOT_EXTRA" for t in node.targets):
                named.add(node.value.value)  # type: ignore[attr-defined]
    assert named >= {"hip", "test", "plot", "triton"} and named <= set(EXTRAS), named
    # No message still spells an extra unquoted or for the index alone.
    for path in (ROOT / "amdocc").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert "pip install amdocc[" not in node.value, path


def test_amdocc_testing_without_hypothesis_names_the_extra_in_one_line(tmp_path):
    for cwd, where in ((ROOT, "."), (tmp_path, str(ROOT))):
        p = run(["-m", "amdocc.testing", "--examples", "1"], without(tmp_path / cwd.name, "hypothesis"), cwd=cwd)
        assert p.returncode == 2 and p.stdout == "", p.stderr  # bad setup, as --plot without matplotlib
        assert p.stderr.splitlines() == [
            "amdocc.testing: needs Hypothesis, from amdocc's test extra, which is not installed: "
            f"pip install -e {shlex.quote(f'{where}[hip,test]')}"
        ]


def test_amdocc_testing_help_still_works_without_hypothesis(tmp_path):
    p = run(["-m", "amdocc.testing", "--help"], without(tmp_path, "hypothesis"), cwd=tmp_path)
    assert p.returncode == 0 and "usage: python3 -m amdocc.testing" in p.stdout
