"""A command's exit status is its verdict, also when standard output or standard error closes
early (``amdocc check … | head -1``, ``amdocc inspect F 2>&1 | head -0``): a failing gate still
exits 1, a passing one 0, and the reports written to files (--junit, --sarif, --html, --csv) are
complete.

Each run is a real process whose standard output is a pipe. Python ignores SIGPIPE, so a write
to a pipe nobody reads fails with EPIPE; the tests close the reading end either before the
command starts (its first write fails) or after the first line, with the pipe shrunk to one
page (F_SETPIPE_SZ) so that the rest of a long report cannot sit in the pipe's buffer. The
violations counted come from llvm-readelf-22 (the fixtures' notes) and HIP's rule worked by
hand, as in test_identity."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from amdocc.testing import SynthSpec, synthesize
from conftest import FIXTURES, ROOT
from oracle import llvm22

pytestmark = pytest.mark.llvm22

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux fcntl(2)
PAGE = 4096
COPIES = 120  # libraries in the wheel, each one violating kernel: a report far over one page
SAMPLE = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
D = FIXTURES / "diff"


def command(*argv) -> list[str]:
    return [sys.executable, "-m", "amdocc", *map(str, argv)]


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def unpiped(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    p = subprocess.run(argv, capture_output=True, text=True, env=environment(), cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def closed_before(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run with a standard output whose reading end is already closed."""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, text=True, env=environment(), cwd=cwd)
    finally:
        os.close(w)
    return p.returncode, p.stderr


def closed_after_one_line(argv: list[str], cwd: Path) -> tuple[int, bytes, str]:
    """Run, read standard output up to the first newline, close it, and wait."""
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, PAGE)
    p = subprocess.Popen(argv, stdout=w, stderr=subprocess.PIPE, env=environment(), cwd=cwd)
    os.close(w)
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(r, 1)
        if not chunk:
            break
        line += chunk
    os.close(r)
    _, err = p.communicate()
    return p.returncode, line, err.decode()


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err, err


@pytest.fixture(scope="module")
def failing_wheel(tmp_path_factory) -> Path:
    """A wheel of COPIES libraries, each with one kernel of 160 VGPRs at a 256 block on gfx942:
    HIP gives floor(512/160) = 3 waves per SIMD, under an occupancy floor of 4."""
    out = tmp_path_factory.mktemp("wheel")
    co = out / "k.co"
    synthesize(SynthSpec("gfx942", 160, name="heavy", max_flat_workgroup_size=256), co)
    (kernel,) = llvm22.readelf([str(co)])[str(co)]["metadata"][0]["amdhsa.kernels"]
    assert kernel[".vgpr_count"] == 160
    path = out / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(COPIES):
            z.write(co, f"pkg/lib/lib{i:03d}_with_a_longer_name_for_a_longer_report.hsaco")
    return path


CHECK = ("check", "--no-config", "--rules", "occupancy", "--min-occupancy", "4")


def test_a_failing_check_exits_1_when_stdout_closes_after_one_line(tmp_path, failing_wheel):
    junit, sarif = tmp_path / "r.xml", tmp_path / "r.sarif"
    argv = command(*CHECK, "--junit", junit, "--sarif", sarif, failing_wheel)
    code, out, err = unpiped(argv, tmp_path)
    assert code == 1 and len(out) > 4 * PAGE  # long enough that the pipe cannot hold it
    junit.unlink()
    sarif.unlink()
    code, line, err = closed_after_one_line(argv, tmp_path)
    assert code == 1 and line == out.splitlines(keepends=True)[0].encode()
    no_traceback(err)
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert len(cases) == COPIES and all(c.find("failure") is not None for c in cases)
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert len(results) == COPIES and {r["properties"]["value"] for r in results} == {3}


def test_a_failing_check_exits_1_when_stdout_is_closed_before_it_starts(tmp_path, failing_wheel):
    for fmt in ((), ("--json",), ("--github",), ("--jobs", "2")):
        code, err = closed_before(command(*CHECK, *fmt, failing_wheel), tmp_path)
        assert code == 1, (fmt, err)
        no_traceback(err)


def test_census_reports_to_files_are_complete_when_stdout_closes(tmp_path, failing_wheel):
    html, csv = tmp_path / "r.html", tmp_path / "r.csv"
    code, err = closed_before(command("census", "--html", html, "--csv", csv, failing_wheel), tmp_path)
    assert code == 0
    no_traceback(err)
    assert html.read_text().rstrip().endswith("</html>")
    assert len(csv.read_text().splitlines()) == 1 + COPIES
    # CSV on the closed standard output itself: the HTML file is still written whole.
    html.unlink()
    code, err = closed_before(command("census", "--html", html, "--csv", "-", failing_wheel), tmp_path)
    assert code == 0 and html.read_text().rstrip().endswith("</html>")
    no_traceback(err)


# Every command, its closed-output status against its unpiped one (a gate that fails included).
RUNS = {
    "inspect": ("inspect", SAMPLE),
    "inspect-json": ("inspect", "--json", SAMPLE),
    "occupancy": ("occupancy", SAMPLE),
    "occupancy-manual": ("occupancy", "--target", "gfx942", "--vgprs", "128", "--block", "256"),
    "census": ("census", SAMPLE),
    "diff-failing": ("diff", D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco"),
    "diff-passing": ("diff", D / "diff_base.hsaco", D / "diff_base.hsaco"),
    "census-compare-failing": ("census", "--fail-on", "vgpr", D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco"),
    "check-passing": ("check", "--no-config", "--rules", "vgpr-spills", SAMPLE),
    "sweep": ("sweep", "--kernel", "saxpy", "--target", "gfx942", SAMPLE),
    "verify": ("verify", SAMPLE),  # no HIP runtime here: 3, and the same closed
    "split": (
        "split",
        "--arch",
        "gfx942",
        "--seq-len",
        "4096",
        "--seq-len-kv",
        "8192",
        "--rows-per-block",
        "64",
        "--block-kv",
        "64",
    ),
    "gate": ("gate", "--arch", "gfx942", "--qo-len", "4096", "--kv-len", "4096"),
    "usage-error": ("occupancy", "--block", "0", SAMPLE),
}


@pytest.mark.parametrize("name", RUNS)
def test_every_command_keeps_its_exit_status_when_stdout_is_closed(tmp_path, name):
    argv = command(*RUNS[name])
    code, out, _ = unpiped(argv, tmp_path)
    expected = {"diff-failing": 1, "census-compare-failing": 1, "usage-error": 2}.get(name)
    if expected is not None:
        assert code == expected
    assert out or code in (2, 3)  # something to write, or a usage error / no runtime (stderr only)
    closed, err = closed_before(argv, tmp_path)
    assert closed == code, err
    no_traceback(err)


# Standard error closing, alone or with standard output (one pipe, as `2>&1 | head -0` makes, or
# two): the status is the one the same run gives with both streams read. Each of these writes to
# standard error as well as standard output (a skipped host entry, an override, a notice), so the
# closed stream is written to; a misspelled AMDOCC_* variable adds a warning to every command's
# standard error before any output.
NOISY = {"AMDOCC_MAX_DEPHT": "3"}
STREAM_RUNS = {
    "inspect": ("inspect", SAMPLE),
    "occupancy": ("occupancy", "--block", "256", SAMPLE),
    "census": ("census", SAMPLE),
    "census-jobs": ("census", "--jobs", "2", SAMPLE, SAMPLE),
    "check-failing": ("check", "--no-config", "--rules", "occupancy", "--min-occupancy", "8", SAMPLE),
    "diff-failing": ("diff", D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco"),
    "usage-error": ("occupancy", "--block", "0", SAMPLE),
    "help": ("--help",),
    "command-help": ("check", "--help"),
}
CLOSED = ("stdout", "stderr", "both on one pipe", "both on two pipes")


def closed_streams(argv: list[str], cwd: Path, which: str) -> int:
    """The status of a run whose ``which`` streams are pipes with their reading ends closed (the
    others go to /dev/null)."""
    ends: list[int] = []

    def closed_pipe() -> int:
        r, w = os.pipe()
        os.close(r)
        ends.append(w)
        return w

    out = err = subprocess.DEVNULL
    if which == "stdout":
        out = closed_pipe()
    elif which == "stderr":
        err = closed_pipe()
    elif which == "both on one pipe":
        out = err = closed_pipe()
    else:
        out, err = closed_pipe(), closed_pipe()
    try:
        return subprocess.run(argv, stdout=out, stderr=err, env={**environment(), **NOISY}, cwd=cwd).returncode
    finally:
        for w in ends:
            os.close(w)


@pytest.mark.parametrize("name", STREAM_RUNS)
def test_no_status_changes_when_stdout_or_stderr_closes(tmp_path, name):
    argv = command(*STREAM_RUNS[name])
    p = subprocess.run(argv, capture_output=True, text=True, env={**environment(), **NOISY}, cwd=tmp_path)
    code, out, err = p.returncode, p.stdout, p.stderr
    expected = {"check-failing": 1, "diff-failing": 1, "usage-error": 2}.get(name, 0)
    assert code == expected, err
    if name not in ("help", "command-help"):
        assert err, "the run writes nothing to standard error: closing it would prove nothing"
    assert out or name == "usage-error"
    assert {which: closed_streams(argv, tmp_path, which) for which in CLOSED} == dict.fromkeys(CLOSED, code)


def test_a_closed_stderr_loses_only_the_diagnostics(tmp_path):
    """Standard output is still written whole when nobody reads standard error."""
    argv = command("inspect", SAMPLE)
    code, out, _ = unpiped(argv, tmp_path)
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=w, text=True, env=environment(), cwd=tmp_path)
    finally:
        os.close(w)
    assert (p.returncode, p.stdout) == (code, out)
