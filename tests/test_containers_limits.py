"""The container limits read from the environment (amdocc.containers.Limits: "each can be raised
by its environment variable"): a whole number overrides the default, anything else keeps it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from amdocc.containers.model import _env_int
from conftest import ROOT

NAME = "AMDOCC_TEST_LIMIT"


@pytest.mark.parametrize("value, expected", [(None, 8), ("3", 3), ("0", 0), ("-2", -2), ("x", 8), ("", 8), ("1.5", 8)])
def test_a_limit_is_the_variable_when_it_is_a_whole_number_and_the_default_otherwise(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(NAME, raising=False)
    else:
        monkeypatch.setenv(NAME, value)
    assert _env_int(NAME, 8) == expected


def test_each_limit_reads_its_own_variable():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    values = {
        "AMDOCC_MAX_DECOMPRESSED": 11,
        "AMDOCC_MAX_DEPTH": 12,
        "AMDOCC_MAX_ENTRIES": 13,
        "AMDOCC_MMAP_THRESHOLD": 14,
        "AMDOCC_MAX_ARCHIVE_BYTES": 15,
    }
    env.update({k: str(v) for k, v in values.items()})
    fields = ["max_decompressed", "max_depth", "max_entries", "mmap_threshold", "max_archive_bytes"]
    code = f"from amdocc.containers import Limits; print(*(getattr(Limits(), f) for f in {fields!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(v) for v in values.values()]
