"""The settings of ``amdocc check``: a rule that needs a value says which option gives it and in
what unit (the occupancy rule's floor is min-occupancy, in waves per SIMD, as the policy module
documents it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from amdocc import UsageError
from amdocc.cli.main import main
from amdocc.policy.checks import Settings


def test_the_occupancy_rule_without_a_floor_names_the_option_and_its_unit():
    with pytest.raises(UsageError) as err:
        Settings(rules=("occupancy",))
    assert str(err.value) == "the occupancy rule needs a floor (min-occupancy, in waves per SIMD)"


# --------------------------------------------------------------------------- [tool.amdocc] in pyproject.toml
# A table or key amdocc does not know is refused as a misspelled option is, with the nearest name.

SAMPLE = str(Path(__file__).resolve().parents[1] / "amdocc" / "samples" / "sample_kernels.hipfb")


def _check_in(directory: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["check", *argv, SAMPLE])
    out, err = capsys.readouterr()
    assert out == "" or code == 0
    return code, err.strip().splitlines()


@pytest.mark.parametrize(
    "body,line",
    [
        # a misspelled table: before, the file was passed over and check ran with no settings
        (
            "[tool.amdocc.chek]\nmax-scratch = 0\n",
            "[tool.amdocc] has no table 'chek' (did you mean 'check'? tables: check)",
        ),
        ("[tool.amdocc]\nrules = ['spills']\n", "[tool.amdocc] has no table 'rules' (tables: check)"),
        (
            "[tool.amdocc.check]\nmax_scratch = 0\n",
            "[tool.amdocc.check] has no setting 'max_scratch' (did you mean 'max-scratch'? settings: rules, ",
        ),
        (
            "[tool.amdocc.check]\nmin-ocupancy = 2\n",
            "[tool.amdocc.check] has no setting 'min-ocupancy' (did you mean 'min-occupancy'? settings: ",
        ),
        (
            "[tool.amdocc.check]\nbudgets = ['spills==0']\n",
            "[tool.amdocc.check] has no setting 'budgets' (did you mean 'budget'? ",
        ),
        ("[tool.amdocc.check]\nspeed = 1\n", "[tool.amdocc.check] has no setting 'speed' (settings: rules, "),
    ],
)
def test_an_unknown_table_or_key_under_tool_amdocc_exits_2_naming_the_nearest(
    tmp_path, monkeypatch, capsys, body, line
):
    config = tmp_path / "pyproject.toml"
    config.write_text(body)
    # found by walking up from the working directory, and named with --config
    monkeypatch.chdir(tmp_path)
    for argv in ((), ("--config", str(config))):
        code, err = _check_in(tmp_path, capsys, *argv)
        assert code == 2 and len(err) == 1, err
        assert err[0].startswith(f"amdocc: {config}: {line}"), err


def test_a_pyproject_without_tool_amdocc_is_still_passed_over(tmp_path, monkeypatch, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")
    monkeypatch.chdir(tmp_path)
    code, _ = _check_in(tmp_path, capsys, "--rules", "mode")
    assert code == 0
