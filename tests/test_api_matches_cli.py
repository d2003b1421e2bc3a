"""The Python API takes what the command line takes, and answers what it answers (issue 26,
item 6): API = CLI.

Each command's options (read from its argparse parser, the CLI's own declaration) are either a
parameter of the amdocc.app function of the same name, under the same name or one named in
RENAMED here, or an option that only shapes the command's output or files (CLI_ONLY, each
with why). The same question asked both ways gets the same record: ``--json`` on the command
line and the function's return value. Text where a list is expected is a UsageError naming the
parameter, never read letter by letter.
"""

from __future__ import annotations

import argparse
import inspect
import json

import pytest

import amdocc
from amdocc import UsageError, app
from amdocc.cli.main import build_parser, main

SAMPLE = str(amdocc.samples_path())

FUNCTIONS = {
    "inspect": ("inspect",),
    "occupancy": ("occupancy",),
    "best-block": ("best_block",),
    "sweep": ("sweep",),
    "split": ("split", "split_by_cost"),
    "gate": ("gate",),
    "diff": ("diff",),
    "check": ("check",),
    "census": ("census", "census_compare"),
    "verify": ("verify",),
}

# CLI option (argparse dest) → the Python parameter that says the same, where the names differ.
RENAMED = {
    "occupancy": {"hip_profile": "profile", "llvm_version": "llvm_version", "sgpr_trap_reserve": "trap_reserve"},
    "best-block": {"hip_profile": "profile"},
    "sweep": {
        "paths": "kernel",  # a path, or a Kernel/KernelUsage already in hand
        "kernel": "kernel_regex",
        "dynamic_lds_grid": "dynamic_lds",
        "hip_profile": "profile",
        "sgpr_trap_reserve": "trap_reserve",
    },
    "split": {"block": "block_size"},
    "gate": {"group": "group_mode"},
    "diff": {"old": "old_path", "new": "new_path"},
    "check": {"budget": "budgets"},
    "census": {"paths": "path"},
}
# Options that exist only on the command line, and why a Python caller does not need them.
OUTPUT = "shapes what the command prints; the function returns the records themselves"
MANUAL = "manual-mode numbers: from Python, amdocc.models.manual(...) makes the usage to pass"
CLI_ONLY = {
    "json": OUTPUT,
    "json_lines": OUTPUT,
    "mangled": OUTPUT,
    "findings": OUTPUT,
    "csv": OUTPUT,
    "parquet": OUTPUT,
    "html": OUTPUT,
    "plot": OUTPUT,
    "github": OUTPUT,
    "junit": OUTPUT,
    "sarif": OUTPUT,
    "list_profiles": "lists the HIP profiles: amdocc.models.hip_profiles.profiles() from Python",
    "record": "appends observations to a file: the function returns them (Verification.observations)",
    "fail_on_stale": "an exit status: the function returns the stale entries (result['stale'])",
    "no_config": "config=False, the function's default (config=True finds the file as the command does)",
    "no_trap_reserve": "the negation of --sgpr-trap-reserve: trap_reserve=False",
    "lds_granule_rounding": "llvm model option: the llvm_version names the rule set",
    **dict.fromkeys(
        ("vgprs", "arch_vgprs", "agprs", "sgprs", "lds", "wave", "wgp", "cu_mode", "max_flat_workgroup_size"), MANUAL
    ),
}
# sweep's --block marks the kernel's own block on the plot (--plot).
SWEEP_PLOT = {"block"}
# Options the occupancy and sweep functions take as amdocc.occupancy's model options (**kwargs).
MODEL_OPTIONS = {"profile", "llvm_version", "trap_reserve"}


def _decide():
    from amdocc.policy.prefill_gate import decide

    return decide


def _auto_num_splits():
    from amdocc.policy.splits import auto_num_splits

    return auto_num_splits


# The operations whose decision parameters are the policy's (one signature, documented there).
DECISIONS = {"gate": _decide, "split": _auto_num_splits}


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _parameters(command: str) -> set[str]:
    names: set[str] = set()
    for function in FUNCTIONS[command]:
        for p in inspect.signature(getattr(app, function)).parameters.values():
            names |= MODEL_OPTIONS if p.kind is p.VAR_KEYWORD and p.name == "model_options" else {p.name}
            if p.kind is p.VAR_KEYWORD and p.name == "settings":  # check(): its settings by name
                from amdocc.app.check_op import _SETTING_NAMES

                names |= set(_SETTING_NAMES)
            if p.kind is p.VAR_KEYWORD and p.name == "decision":  # gate(), split(): the policy's own
                names |= set(inspect.signature(DECISIONS[function]()).parameters)
    return names


@pytest.mark.parametrize("command", sorted(FUNCTIONS))
def test_every_option_of_a_command_is_a_parameter_of_its_function(command):
    parser = _commands()[command]
    parameters = _parameters(command)
    missing = []
    for action in parser._actions:
        dest = action.dest
        if dest == "help" or dest in CLI_ONLY or (command == "sweep" and dest in SWEEP_PLOT):
            continue
        if RENAMED.get(command, {}).get(dest, dest) not in parameters:
            missing.append(dest)
    assert missing == [], f"amdocc {command}: options without a parameter of amdocc.app.{FUNCTIONS[command]}"


def test_the_renames_name_real_options_and_parameters():
    commands = _commands()
    for command, renames in RENAMED.items():
        dests = {a.dest for a in commands[command]._actions}
        assert set(renames) <= dests, command
        assert set(renames.values()) <= _parameters(command), command


def _cli_json(argv, capsys):
    status = main([*argv, "--json"])
    out = capsys.readouterr().out
    return status, json.loads(out)


def test_the_python_api_example_of_the_docs_runs_and_equals_the_command(capsys):
    # docs/python-api.md: amdocc.app.check("build/", rules=("spills", "scratch")) raised before.
    got = app.check(SAMPLE, rules=("spills", "scratch"))
    status, printed = _cli_json(["check", "--no-config", "--rules", "spills,scratch", SAMPLE], capsys)
    assert status == 0 and got["settings"]["rules"] == ("vgpr-spills", "sgpr-spills", "scratch")
    printed["config_overrides"] = []
    assert json.loads(json.dumps(got)) == printed


@pytest.mark.parametrize(
    ("keywords", "flags"),
    [
        ({"rules": ("all",), "min_occupancy": 1}, ["--rules", "all", "--min-occupancy", "1"]),
        ({"min_occupancy": 2, "block": 256}, ["--min-occupancy", "2", "--block", "256"]),
        ({"max_scratch": "1K", "rules": ["scratch"]}, ["--max-scratch", "1K", "--rules", "scratch"]),
        ({"budgets": ["vgprs<=64"]}, ["--budget", "vgprs<=64"]),
        ({"target": "gfx942"}, ["--target", "gfx942"]),
    ],
)
def test_check_reads_its_settings_as_the_command_reads_its_flags(keywords, flags, capsys):
    got = app.check(SAMPLE, **keywords)
    status, printed = _cli_json(["check", "--no-config", *flags, SAMPLE], capsys)
    printed["config_overrides"] = []
    assert json.loads(json.dumps(got)) == printed
    assert status == (1 if got["summary"]["failing"] else 0)


@pytest.mark.parametrize(
    ("keywords", "words"),
    [
        ({"rules": ("launch",), "max_scratch": 64}, "max_scratch applies to the scratch rule, which is off by rules"),
        ({"rules": ("occupancy",)}, "the occupancy rule (rules) needs a floor: min_occupancy"),
        ({"rules": ("spill",)}, "unknown rule 'spill'"),
        ({"max_vgpr_spills": -1}, "max_vgpr_spills must be"),
        ({"min_ocupancy": 4}, "check: unknown setting 'min_ocupancy' (settings: rules, max_vgpr_spills"),
    ],
)
def test_check_refuses_settings_as_the_command_refuses_flags(keywords, words):
    with pytest.raises(UsageError) as err:
        app.check(SAMPLE, **keywords)
    assert words in str(err.value)


@pytest.mark.parametrize(
    ("keywords", "flags"),
    [
        ({"target": "gfx942"}, ["--target", "gfx942"]),
        ({"device": "MI300X", "dynamic_lds": 4096}, ["--device", "MI300X", "--dynamic-lds", "4096"]),
        ({"kernel": "saxpy"}, ["--kernel", "saxpy"]),
        ({"target": "gfx90a", "what_if": True}, ["--target", "gfx90a", "--what-if"]),
    ],
)
def test_best_block_takes_the_selection_the_command_takes(keywords, flags, capsys):
    got = app.best_block(SAMPLE, **keywords)
    status, printed = _cli_json(["best-block", *flags, SAMPLE], capsys)
    assert status == 0 and got == printed and got["results"]


def test_sweep_takes_a_path_and_the_kernel_the_command_would_pick(capsys):
    got = app.sweep(SAMPLE, kernel_regex="saxpy", target="gfx942", blocks=[64, 256], dynamic_lds=[0, 4096])
    status, printed = _cli_json(
        ["sweep", SAMPLE, "--kernel", "saxpy", "--target", "gfx942", "--blocks", "64,256", "--dynamic-lds", "0,4096"],
        capsys,
    )
    assert status == 0 and got == printed and len(got["grid"]) == 4
    with pytest.raises(UsageError, match="sweep needs exactly one kernel, 5 selected"):
        app.sweep(SAMPLE, kernel_regex="saxpy")


@pytest.mark.parametrize(
    "keywords, flags",
    [
        ({"kernel_regex": "reg_heavy", "target": "gfx90a"}, ["--kernel", "reg_heavy", "--target", "gfx90a"]),
        (
            {"kernel_regex": "saxpy", "target": "gfx942", "model": "llvm", "blocks": [64]},
            ["--kernel", "saxpy", "--target", "gfx942", "--model", "llvm", "--blocks", "64"],
        ),
        (
            {"kernel_regex": "saxpy", "target": "gfx1100", "model": "hw"},
            ["--kernel", "saxpy", "--target", "gfx1100", "--model", "hw"],
        ),
        (
            {"kernel_regex": "mfma", "target": "gfx90a", "mangled": True},
            ["--kernel", "mfma", "--target", "gfx90a", "--mangled"],
        ),
    ],
)
def test_sweep_returns_the_record_the_command_prints(keywords, flags, capsys):
    # The whole record, its "kernel" title, "built_for" and "what_if" included, not only the grid.
    got = app.sweep(SAMPLE, **keywords)
    status, printed = _cli_json(["sweep", *flags, SAMPLE], capsys)
    assert status == 0 and got == printed
    assert set(got) == {"kernel", "model", "unit", "built_for", "what_if", "grid"}


def test_sweep_of_manual_numbers_returns_the_record_the_command_prints(capsys):
    from amdocc.models import manual
    from amdocc.targets import get_target

    usage = manual(get_target("gfx942"), vgprs=96, lds=4096)
    got = app.sweep(usage, blocks=[64, 512])
    status, printed = _cli_json(
        ["sweep", "--vgprs", "96", "--lds", "4096", "--target", "gfx942", "--blocks", "64,512"], capsys
    )
    assert status == 0 and got == printed and got["kernel"] == "manual kernel on gfx942"


def test_diff_takes_a_target_and_keeps_only_what_runs_there(capsys):
    everything = app.diff(SAMPLE, SAMPLE)
    on_gfx942 = app.diff(SAMPLE, SAMPLE, target="gfx942", fail_on=["all"])
    # The sample holds one gfx942 code object among others: its kernels alone are compared.
    shown = {k["processor"] for k in on_gfx942["kernels"]}
    assert shown == {"gfx942"} and 0 < len(on_gfx942["kernels"]) < len(everything["kernels"])
    assert on_gfx942["fail_on"] == ["occupancy", "spills", "scratch", "vgpr", "lds", "spills-in-loops", "live-vgpr"]
    status, printed = _cli_json(["diff", "--fail-on", "all", SAMPLE, SAMPLE], capsys)
    assert status == 0 and printed["fail_on"] == on_gfx942["fail_on"]


_KERNEL = None


def _kernel():
    global _KERNEL
    if _KERNEL is None:
        _KERNEL = amdocc.load(SAMPLE)[0].kernels[0]
    return _KERNEL


# (call, the parameter the message must name): text where a list is expected
TEXT_FOR_A_LIST = [
    (lambda: app.check(SAMPLE, rules="vgpr-spills"), "rules"),
    (lambda: app.check(SAMPLE, budgets="vgpr<=64"), "budgets"),
    (lambda: app.diff(SAMPLE, SAMPLE, fail_on="spills"), "fail_on"),
    (lambda: app.census_compare(SAMPLE, SAMPLE, fail_on="occupancy"), "fail_on"),
    (lambda: app.inspect(SAMPLE, fields="name"), "fields"),
    (lambda: app.sweep(_kernel(), blocks="256"), "blocks"),
    (lambda: app.sweep(_kernel(), dynamic_lds="0"), "dynamic_lds"),
    (lambda: app.verify(SAMPLE, blocks="256"), "blocks"),
]


@pytest.mark.parametrize(("call", "name"), TEXT_FOR_A_LIST)
def test_text_where_a_list_is_expected_is_a_usage_error_naming_the_parameter(call, name):
    with pytest.raises(UsageError) as err:
        call()
    assert str(err.value).startswith(f"{name} must be a list or tuple of "), err.value
    assert f"(one: {name}=(" in str(err.value)


@pytest.mark.parametrize("paths", [12, b"x.co", [SAMPLE, 3], None])
def test_paths_of_the_wrong_type_are_a_usage_error(paths):
    for call in (app.inspect, app.occupancy, app.best_block, app.check):
        with pytest.raises(UsageError, match=r"^paths must be a path \(str or os.PathLike"):
            call(paths)


def test_an_unknown_regression_kind_is_named():
    with pytest.raises(UsageError, match=r"fail_on: unknown regression kind 'ocupancy' \(choose from occupancy"):
        app.diff(SAMPLE, SAMPLE, fail_on=["ocupancy"])


@pytest.mark.parametrize(
    "numbers, keywords, flags",
    [
        (
            {"vgprs": 128, "sgprs": 40, "lds": 16384},
            {"block": 256},
            ["--vgprs", "128", "--sgprs", "40", "--lds", "16384", "--block", "256"],
        ),
        ({"vgprs": 64}, {"model": "llvm"}, ["--vgprs", "64", "--model", "llvm"]),
        (
            {"arch_vgprs": 64, "agprs": 64},
            {"model": "hw", "block": 512, "dynamic_lds": 0},
            ["--arch-vgprs", "64", "--agprs", "64", "--model", "hw", "--block", "512", "--dynamic-lds", "0"],
        ),
    ],
)
def test_occupancy_of_manual_numbers_returns_what_the_command_prints(numbers, keywords, flags, capsys):
    # Manual mode is the operation's, not the command's: the same record from a KernelUsage.
    from amdocc.models import manual
    from amdocc.targets import get_target

    target = "gfx90a" if "agprs" in numbers else "gfx942"
    got = app.occupancy(manual(get_target(target), **numbers), target=target, **keywords)
    status, printed = _cli_json(["occupancy", "--target", target, *flags], capsys)
    assert status == 0 and json.loads(json.dumps(got)) == printed and got["results"][0]["kernel"] == "manual"


def test_manual_numbers_without_a_block_name_the_parameter_or_the_flag(capsys):
    from amdocc.models import manual
    from amdocc.targets import get_target

    with pytest.raises(UsageError, match=r"^manual mode needs block for the hip model$"):
        app.occupancy(manual(get_target("gfx942"), vgprs=128), target="gfx942")
    assert main(["occupancy", "--vgprs", "128", "--target", "gfx942"]) == 2
    assert capsys.readouterr().err == "amdocc: manual mode needs --block for the hip model\n"


def test_best_block_of_manual_numbers_returns_what_the_command_prints(capsys):
    from amdocc.models import manual
    from amdocc.targets import get_target

    got = app.best_block(manual(get_target("gfx942"), vgprs=96, lds=8192), target="gfx942", dynamic_lds=4096)
    status, printed = _cli_json(
        ["best-block", "--vgprs", "96", "--lds", "8192", "--target", "gfx942", "--dynamic-lds", "4096"], capsys
    )
    assert status == 0 and got == printed and got["results"][0]["kernel"] == "manual"


PROJECT = """
[tool.amdocc.check]
min-occupancy = 8
block = 256
baseline = "accepted.json"
"""


def test_check_applies_the_project_file_and_updates_its_baseline_as_the_command_does(tmp_path, monkeypatch, capsys):
    # Two projects with the same pyproject.toml: the command updates one baseline, the function the
    # other; the settings are the file's (the oracle: the numbers written above), the rewritten
    # files are the same, and a second run accepts every violation in both.
    for name in ("cli", "api"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text(PROJECT)
    monkeypatch.chdir(tmp_path / "cli")
    status, printed = _cli_json(["check", "--update-baseline", SAMPLE], capsys)
    monkeypatch.chdir(tmp_path / "api")
    got = app.check(SAMPLE, config=True, update_baseline=True)
    assert status == 0 and got["settings"]["min_occupancy"] == 8 and got["settings"]["block"] == 256
    assert got["summary"]["violations"] > 0 and got["summary"]["failing"] == got["summary"]["violations"]
    assert got["baseline"] == str(tmp_path / "api" / "accepted.json")
    printed["baseline"] = got["baseline"]
    assert json.loads(json.dumps(got)) == printed
    written = (tmp_path / "api" / "accepted.json").read_text()
    assert written == (tmp_path / "cli" / "accepted.json").read_text()
    assert len(json.loads(written)["entries"]) == got["summary"]["violations"]

    again = app.check(SAMPLE, config=tmp_path / "api" / "pyproject.toml")
    assert again["summary"]["failing"] == 0 and again["summary"]["accepted"] == got["summary"]["violations"]
    monkeypatch.chdir(tmp_path / "cli")
    assert main(["check", SAMPLE]) == 0


def test_check_without_a_config_ignores_the_project_file(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    monkeypatch.chdir(tmp_path)
    assert app.check(SAMPLE)["settings"]["min_occupancy"] is None


def test_a_baseline_update_without_a_baseline_names_the_parameters(capsys):
    with pytest.raises(UsageError, match=r"^update_baseline needs baseline FILE \(or baseline in"):
        app.check(SAMPLE, update_baseline=True)
    assert main(["check", "--no-config", "--update-baseline", SAMPLE]) == 2
    assert "amdocc: --update-baseline needs --baseline FILE (or baseline in" in capsys.readouterr().err
