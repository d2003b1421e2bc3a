"""The container limits: ``Limits()`` is the built-in bounds, ``Limits.from_env()`` reads each
bound's AMDOCC_* variable when it is called and refuses a value that is not a whole number >= 0
(byte bounds also take K/M/G suffixes), naming the variable."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from amdocc.containers import DEFAULT_LIMITS, Limits
from amdocc.errors import UsageError
from conftest import ROOT

FIELDS = {
    "AMDOCC_MAX_DECOMPRESSED": "max_decompressed",
    "AMDOCC_MAX_DEPTH": "max_depth",
    "AMDOCC_MAX_ENTRIES": "max_entries",
    "AMDOCC_MMAP_THRESHOLD": "mmap_threshold",
    "AMDOCC_MAX_ARCHIVE_BYTES": "max_archive_bytes",
}


def test_the_built_in_bounds_are_those_the_readme_states():
    # README "Containers": 1 GiB decompressed, 8 layers, 65536 entries, 64 MiB mapping, 8 GiB per archive.
    assert Limits() == DEFAULT_LIMITS
    assert (Limits().max_decompressed, Limits().max_depth, Limits().max_entries) == (1 << 30, 8, 1 << 16)
    assert (Limits().mmap_threshold, Limits().max_archive_bytes) == (64 << 20, 8 << 30)


@pytest.mark.parametrize(
    "value, expected",
    [(None, 8), ("", 8), ("3", 3), ("0", 0), (" 12 ", 12), ("0x10", 16), ("+5", 5)],
)
def test_a_bound_is_its_variable_when_that_is_a_whole_number(value, expected):
    environ = {} if value is None else {"AMDOCC_MAX_DEPTH": value}
    assert Limits.from_env(environ).max_depth == expected


@pytest.mark.parametrize("value", ["x", "abc", "-1", "-2", "1.5", "1e3", "8K"])
def test_a_bound_that_is_not_a_whole_number_is_refused_naming_its_variable(value):
    with pytest.raises(UsageError) as exc:
        Limits.from_env({"AMDOCC_MAX_DEPTH": value})
    assert exc.value.message == f"AMDOCC_MAX_DEPTH={value!r}: expected a whole number >= 0"


@pytest.mark.parametrize(
    "value, expected", [("1K", 1024), ("2 MiB", 2 << 20), ("16G", 16 << 30), ("3gib", 3 << 30), ("100", 100)]
)
def test_byte_bounds_take_the_suffixes_the_byte_options_take(value, expected):
    assert Limits.from_env({"AMDOCC_MAX_ARCHIVE_BYTES": value}).max_archive_bytes == expected


@pytest.mark.parametrize("value", ["-1", "1T", "1.5G", "K"])
def test_a_byte_bound_that_is_not_a_byte_count_is_refused(value):
    with pytest.raises(UsageError, match=r"^AMDOCC_MAX_DECOMPRESSED=.*: expected a byte count >= 0 \(bytes, or with"):
        Limits.from_env({"AMDOCC_MAX_DECOMPRESSED": value})


def test_each_bound_reads_its_own_variable_when_from_env_is_called(monkeypatch):
    values = dict(zip(FIELDS, (11, 12, 13, 14, 15), strict=True))
    for name, value in values.items():
        monkeypatch.setenv(name, str(value))
    limits = Limits.from_env()  # the environment now, not when the class was defined
    assert [getattr(limits, field) for field in FIELDS.values()] == list(values.values())
    assert Limits() == DEFAULT_LIMITS  # the built-in bounds do not move with the environment


def test_amdocc_load_honours_the_environment_and_the_cli_refuses_a_bad_value(tmp_path):
    """A depth of 0 refuses the sample's bundle layer (README: nesting stops at AMDOCC_MAX_DEPTH);
    a bad value is exit 2 with one line naming the variable."""
    sample = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
    env = dict(os.environ, PYTHONPATH=str(ROOT), AMDOCC_MAX_DEPTH="0")
    code = (
        f"import amdocc; r = amdocc.load({str(sample)!r}, strict=False); "
        "print(len(r), *sorted({f.error.message for f in r.failed}), sep='|')"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "0|containers nested deeper than 0 levels\n"
    env["AMDOCC_MAX_DEPTH"] = "-1"
    cli = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", str(sample)], env=env, capture_output=True, text=True
    )
    assert (cli.returncode, cli.stdout) == (2, "")
    assert cli.stderr == "amdocc: AMDOCC_MAX_DEPTH='-1': expected a whole number >= 0\n"
