"""A run that starts with a command's name builds the top-level parser and that command's
parser alone (start-up cost, issue 30), and prints exactly what the parser of every command
prints: every command's --help and usage errors, byte for byte, with the same exit status.
The oracle is the full parser, built as before for every run (main with no command named)."""

from __future__ import annotations

import pytest

import amdocc.cli.main as cli_main
from amdocc.cli.main import COMMANDS, main

# Errors the top level or a command's parser gives: no command, an unknown, misspelled or
# abbreviated one, an option before the command, a missing argument, a missing value, a bad
# choice, an unknown option.
ERROR_CASES = [
    [],
    ["--help"],
    ["--version"],
    ["bogus"],
    ["inspec"],
    ["Inspect"],
    ["-h", "inspect"],
    ["--he", "inspect"],
    ["--version", "inspect"],
    ["--", "inspect"],
    ["--bogus", "inspect"],
    ["inspect"],
    ["inspect", "--jobs"],
    ["inspect", "--jobs", "0", "x"],
    ["inspect", "--findings", "zzz", "x"],
    ["inspect", "--jso", "/nonexistent"],
    ["occupancy", "--model", "bogus"],
    ["diff", "only-one"],
]


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _run_with_every_parser(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        m.setattr(cli_main, "_command_named", lambda argv: None)
        return _run(capsys, argv)


@pytest.fixture(autouse=True)
def _fixed_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("how", [["--help"], ["-h"], ["--no-such-option"]])
def test_a_command_prints_what_the_full_parser_prints(capsys, monkeypatch, command, how):
    argv = [command, *how]
    assert _run(capsys, argv) == _run_with_every_parser(capsys, monkeypatch, argv)


@pytest.mark.parametrize("argv", ERROR_CASES, ids=[" ".join(a) or "<none>" for a in ERROR_CASES])
def test_errors_and_top_level_help_are_what_the_full_parser_prints(capsys, monkeypatch, argv):
    got = _run(capsys, argv)
    assert got == _run_with_every_parser(capsys, monkeypatch, argv)
    assert got[0] in (0, 2), got


@pytest.mark.parametrize(
    "argv,only",
    [
        (["inspect", "x.co"], "inspect"),
        (["best-block", "--help"], "best-block"),
        (["--version", "inspect"], None),
        (["-h", "inspect"], None),
        (["inspec", "x.co"], None),
        ([], None),
    ],
)
def test_only_a_leading_full_command_name_narrows_the_parser(monkeypatch, argv, only):
    built = []
    full = cli_main.build_parser

    def spy(only=None):
        built.append(only)
        return full(only)

    monkeypatch.setattr(cli_main, "build_parser", spy)
    main(argv)  # returns a status, --help and usage errors included
    assert built == [only]


def test_top_level_help_lists_every_command(capsys):
    code, out, _ = _run(capsys, ["-h", "inspect"])
    assert code == 0
    assert all(f"    {name}" in out for name in COMMANDS)
