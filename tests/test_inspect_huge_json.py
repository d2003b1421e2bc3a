"""`inspect --json` on an input whose JSON is huge (jax's xla_rocm_plugin.so gives 3 GB) says once
on stderr that --json-lines and --fields read better, and changes nothing on stdout (the v1
contract: one object, {"code_objects": [...], "skipped": [...], "errors": [...]})."""

from __future__ import annotations

import json

import amdocc
from amdocc.cli import inspect as inspect_cli
from amdocc.cli.main import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_note_comes_once_past_the_threshold_and_stdout_is_unchanged(capsys, monkeypatch):
    sample = str(amdocc.samples_path())
    code, plain, err = _run(capsys, "inspect", "--json", sample)
    assert code == 0 and err == ""
    monkeypatch.setattr(inspect_cli, "HUGE_JSON_BYTES", 1)
    code, out, err = _run(capsys, "inspect", "--json", sample)
    assert code == 0 and out == plain
    doc = json.loads(out)
    assert len(doc["code_objects"]) == 5  # the sample's gfx90a, gfx942, gfx950, gfx1100, gfx1201 objects
    lines = err.splitlines()
    assert len(lines) == 1 and "--json-lines" in lines[0] and "--fields" in lines[0]


def test_json_lines_gives_no_note(capsys, monkeypatch):
    monkeypatch.setattr(inspect_cli, "HUGE_JSON_BYTES", 1)
    code, _out, err = _run(capsys, "inspect", "--json-lines", str(amdocc.samples_path()))
    assert code == 0 and err == ""
