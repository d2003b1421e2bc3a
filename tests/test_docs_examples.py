"""Every example in README.md and docs/*.md runs (issue 26, item 6): the Python blocks are
executed and the ``amdocc ...`` commands of the shell blocks run as ``python -m amdocc``.

The files the examples name (``build/``, ``kernels.hsaco``, ``old/lib.so``, ...) are made, in a
fresh working directory, from the code object shipped with amdocc (FILES below). The Python
blocks of one page run in order in one namespace, as a reader types them. An example that cannot
run here (it needs a GPU, a Triton compile, or is the test suite itself) says so in the page, on
a comment line just above its fence:

    <!-- example: not run: REASON -->      the block is not run
    <!-- example: amdocc only: REASON -->  only its amdocc commands run (``pip install .`` is not)

and this test counts them (BLOCKS, NOT_RUN): an example is never passed over in silence. A
command exits 0 (the sample has no violation), with nothing on standard error that reads as a
traceback.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import amdocc
from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAMPLE = Path(amdocc.samples_path())
# What the examples' file names stand for: a copy of the sample, or a directory holding one.
FILES = {
    "libkernels.so": "file",
    "kernels.hsaco": "file",
    "mqa.hsaco": "file",
    "old/lib.so": "file",
    "new/lib.so": "file",
    "build/": "directory",
    "site-packages/torch/lib": "directory",
    "rocm-6.4/lib": "directory",
}
FENCE = re.compile(r"^```(python|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARK = re.compile(r"<!-- example: (not run|amdocc only): (.+?) -->")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str
    mark: str | None  # "not run", "amdocc only" or None
    reason: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    out = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            before = text[: m.start()].splitlines()
            comments = []
            while before and before[-1].startswith("<!--"):  # the comment lines just above the fence
                comments.append(before.pop())
            marks = [mk for c in comments if (mk := MARK.fullmatch(c.strip()))]
            assert len(marks) <= 1, f"{page.name}: two example marks above one block"
            mark = marks[0] if marks else None
            out.append(
                Block(
                    str(page.relative_to(ROOT)),
                    text[: m.start()].count("\n") + 1,
                    m.group(1),
                    m.group(2),
                    mark.group(1) if mark else None,
                    mark.group(2) if mark else None,
                )
            )
    return out


BLOCKS = blocks()


def test_every_example_runs_or_says_why_not_and_the_count_is_known():
    # Counted, so that a block left out (or a page whose examples are no longer found) shows.
    python = [b for b in BLOCKS if b.language == "python"]
    shell = [b for b in BLOCKS if b.language == "sh"]
    not_run = [b for b in BLOCKS if b.mark == "not run"]
    assert (len(python), len(shell)) == (17, 10)
    counted = {page: sum(b.page == page for b in not_run) for page in {b.page for b in not_run}}
    assert counted == NOT_RUN, [b.where for b in not_run]
    assert all(b.reason and len(b.reason) > 10 for b in BLOCKS if b.mark)
    assert sum(len(_commands(b)) for b in shell if b.mark != "not run") == 2


# The blocks that do not run, per page (each with its reason in the page, above the block).
NOT_RUN = {
    "README.md": 3,  # the test suite, the emulated runtime, a Triton cache and a .pt2 package
    "docs/contributing.md": 4,  # the test suite, campaigns, the fixture makers, fuzzing
    "docs/hip-runtime.md": 2,  # a HIP stream; the GPU tests
    "docs/integrations.md": 2,  # fragments around the caller's Triton and FlyDSL kernels
    "docs/python-api.md": 1,  # verify asks the live runtime
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    for name, kind in FILES.items():
        place = tmp_path / name
        if kind == "directory":
            place.mkdir(parents=True)
            shutil.copy(SAMPLE, place / SAMPLE.name)
        else:
            place.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(SAMPLE, place)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _commands(block: Block) -> list[list[str]]:
    """The amdocc commands of a shell block, as argv after ``amdocc``; any other command is
    allowed only in a block marked "amdocc only"."""
    out = []
    for line in block.text.splitlines():
        line = line.split("  #", 1)[0].strip()
        for part in (p.strip() for p in line.split("&&")):
            if not part:
                continue
            words = shlex.split(part.replace('"$(amdocc sample)"', shlex.quote(str(SAMPLE))))
            if words[0] == "amdocc":
                out.append(words[1:])
            else:
                assert block.mark == "amdocc only", f"{block.where}: {part!r} is not an amdocc command"
    return out


PAGES_WITH_PYTHON = sorted({b.page for b in BLOCKS if b.language == "python" and b.mark != "not run"})


@pytest.mark.parametrize("page", PAGES_WITH_PYTHON)
def test_the_python_examples_of_a_page_run_in_order(page, workdir, capsys):
    namespace: dict[str, object] = {"__name__": "__example__"}
    ran = 0
    for block in BLOCKS:
        if block.page != page or block.language != "python" or block.mark == "not run":
            continue
        code = compile(block.text, block.where, "exec")
        exec(code, namespace)  # the documentation's own examples
        ran += 1
    assert ran > 0
    capsys.readouterr()


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if b.language == "sh" and b.mark != "not run"], ids=lambda b: b.where
)
def test_the_amdocc_commands_of_a_shell_example_run(block, workdir):
    commands = _commands(block)
    assert commands, f"{block.where}: no amdocc command to run"
    for argv in commands:
        run = subprocess.run(
            [sys.executable, "-m", "amdocc", *argv], capture_output=True, text=True, cwd=workdir, timeout=300
        )
        assert run.returncode == 0, (block.where, argv, run.stderr)
        assert "Traceback" not in run.stderr and run.stdout, (block.where, argv, run.stderr)
