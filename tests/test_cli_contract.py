"""The argument contract (issue 10 §1): every option of every subcommand refuses bad values with
exit 2, argparse's usage line and one line naming what is wrong, never a traceback.

The bad values are generated from the parsers themselves: each option's validated type lists
the values it must refuse (empty, of the wrong type, out of range), so an option or a command
added later is walked without editing this file. An option without a validated type fails here.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from amdocc.cli.args import ArgType
from amdocc.cli.main import COMMANDS, build_parser, main
from conftest import FIXTURES, ROOT, SPLIT_SHAPE

GFX942 = str(FIXTURES / "elf" / "gfx942_cov4.hsaco")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _option_cases():
    """(command, option, bad value) for every value-taking option, and (command, flag, None)
    for every flag (given a value with '=' it must be refused too)."""
    cases = []
    for name, parser in _subparsers().items():
        for action in parser._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            flag = max(action.option_strings, key=len)
            if action.nargs == 0:
                cases.append((name, flag, None))
                continue
            assert isinstance(action.type, ArgType), f"amdocc {name} {flag} has no validated type (cli/args.py)"
            for bad in action.type.invalid_examples():
                cases.append((name, flag, bad))
    return cases


CASES = _option_cases()


def test_every_command_is_walked():
    assert {c for c, _, _ in CASES} == set(COMMANDS) - {"sample"}
    assert len(CASES) > 150


def _assert_usage_error(code, err, command):
    lines = err.strip().splitlines()
    assert code == 2, err
    assert "Traceback" not in err
    assert len(lines) <= 2, err
    if len(lines) == 2:
        assert lines[0].startswith(f"usage: amdocc {command}")  # the subcommand's usage, not the top level's
    assert lines[-1].strip()


@pytest.mark.parametrize(
    "command,flag,bad", CASES, ids=[f"{c} {f}={b!r}" if b is not None else f"{c} {f}=<flag value>" for c, f, b in CASES]
)
def test_bad_values_are_usage_errors(capsys, command, flag, bad):
    argv = [command, f"{flag}=x" if bad is None else f"{flag}={bad}"]
    code = main(argv)
    _assert_usage_error(code, capsys.readouterr().err, command)


def _valid_rest(parser) -> list[str]:
    """Required options (each with a value its type accepts) and one PATH per required positional."""
    out = []
    for action in parser._actions:
        if action.option_strings and action.required:
            out += [max(action.option_strings, key=len), action.type.example()]
        elif not action.option_strings and action.nargs in (None, "+"):
            out.append(GFX942)
    return out


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"sample"}))
def test_an_unknown_option_shows_the_subcommands_usage(capsys, command):
    code = main([command, *_valid_rest(_subparsers()[command]), "--no-such-option"])
    err = capsys.readouterr().err
    _assert_usage_error(code, err, command)
    assert "--no-such-option" in err


def test_no_traceback_in_a_real_process():
    # The same contract through `python -m amdocc`, for a few of the cases the issue lists.
    for argv in (
        ["sweep", "--blocks", "64,abc", GFX942],
        ["sweep", "--dynamic-lds", "1e3", GFX942],
        ["diff", "--fail-on", "bogus", GFX942, GFX942],
        ["sweep", "--plot", "/missing/dir/x.png", GFX942],
        ["sweep", "--plot", "x.xyz", GFX942],
        ["occupancy", "--block", "0", GFX942],
        ["occupancy", "--block", "-5", GFX942],
        ["occupancy", "--dynamic-lds", "-1", GFX942],
    ):
        proc = subprocess.run([sys.executable, "-m", "amdocc", *argv], capture_output=True, text=True, cwd=ROOT)
        _assert_usage_error(proc.returncode, proc.stderr, argv[0])


# -- options that would be ignored, and options that contradict each other ----------------------


def _err(capsys, *argv):
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err
    return code, err


def test_model_options_of_another_model_are_refused(capsys):
    # Walks the one table of model options, so options added there are covered here too.
    from amdocc.cli.occupancy import MODEL_FLAGS
    from amdocc.models import MODELS

    for f in MODEL_FLAGS:
        value = [f.settings["type"].example()] if "type" in f.settings else []
        for model in MODELS:
            argv = [
                "occupancy",
                "--target",
                "gfx942",
                "--vgprs",
                "32",
                "--block",
                "64",
                "--model",
                model,
                f.flag,
                *value,
            ]
            code, err = _err(capsys, *argv)
            if model in f.models:
                assert code == 0, err
            else:
                assert code == 2 and f.flag in err and model in err


def test_manual_numbers_beside_a_path_are_refused(capsys):
    code, err = _err(capsys, "occupancy", "--target", "gfx942", "--vgprs", "128", "--block", "256", GFX942)
    assert code == 2 and "--vgprs" in err
    for flag, value in (("--sgprs", "8"), ("--lds", "1024"), ("--wave", "64"), ("--max-flat-workgroup-size", "64")):
        code, err = _err(capsys, "occupancy", "--block", "256", flag, value, GFX942)
        assert code == 2 and flag in err


def test_file_options_without_a_path_are_refused(capsys):
    for extra in (["--kernel", "x"], ["--jobs", "2"], ["--mangled"], ["--what-if"]):
        code, err = _err(capsys, "occupancy", "--target", "gfx942", "--vgprs", "8", "--block", "64", *extra)
        assert code == 2 and extra[0] in err


def test_target_and_device_must_name_one_processor(capsys):
    code, err = _err(capsys, "occupancy", "--target", "gfx942", "--device", "MI355X", GFX942)
    assert code == 2 and "MI355X" in err and "gfx950" in err and "gfx942" in err
    # The same processor is fine: --target then adds the device's xnack/sramecc modes.
    code, err = _err(capsys, "occupancy", "--target", "gfx942:xnack-", "--device", "MI300X", "--block", "256", GFX942)
    assert code == 0, err
    code, err = _err(capsys, "gate", "--arch", "gfx950", "--device", "MI300X", "--qo-len", "4096", "--kv-len", "4096")
    assert code == 2 and "MI300X" in err and "gfx950" in err


def test_unknown_processors_list_the_valid_ones(capsys):
    from amdocc.targets import all_targets

    for argv in (
        ["gate", "--arch", "gfx9999", "--qo-len", "4096", "--kv-len", "4096"],
        [
            "split",
            "--arch",
            "banana",
            "--seq-len",
            "1",
            "--seq-len-kv",
            "1",
            "--rows-per-block",
            "1",
            "--block-kv",
            "1",
        ],
    ):
        code, err = _err(capsys, *argv)
        assert code == 2
        assert all(t.name in err for t in all_targets())


def test_wave_size_the_target_does_not_run(capsys):
    code, err = _err(capsys, "occupancy", "--target", "gfx942", "--vgprs", "8", "--block", "64", "--wave", "32")
    assert code == 2 and "wave32" in err and "64" in err


def test_what_if_needs_a_processor(capsys):
    code, err = _err(capsys, "occupancy", "--what-if", "--block", "64", GFX942)
    assert code == 2 and "--target" in err


def test_split_refuses_options_it_would_ignore(capsys):
    shape = [
        "--arch",
        "gfx942",
        *SPLIT_SHAPE,
    ]
    code, err = _err(
        capsys, "split", *shape, "--occupancy", "2", "--block", "512", str(FIXTURES / "elf" / "hand_aiter_gfx942.hsaco")
    )
    assert code == 2 and "--occupancy" in err
    code, err = _err(capsys, "split", *shape, "--kernel", "fmha")
    assert code == 2 and "--kernel" in err
    code, err = _err(
        capsys,
        "split",
        "--grid-x",
        "1",
        "--effective-cus",
        "1",
        "--window-tiles",
        "1",
        "--max-splits",
        "1",
        "--overhead",
        "0",
        "--arch",
        "gfx942",
    )
    assert code == 2 and "--arch" in err


def test_split_refuses_what_the_policy_row_ignores(capsys):
    """AITER's _auto_num_splits (consumers-and-anchors.md §1.1): gfx942's row is occupancy-aware
    and has no streaming low-head case; gfx950's keeps fixed oversubscription and queries
    occupancy only in that case (num_heads <= 32 and seq_len_kv > 2 * seq_len, or aggressive)."""
    import json

    launch = [
        *SPLIT_SHAPE,
        "--cu-count",
        "256",
    ]
    for extra in (["--num-heads", "8"], ["--aggressive"]):
        code, err = _err(capsys, "split", "--arch", "gfx942", *launch, *extra)
        assert code == 2 and extra[0] in err and "occupancy-aware" in err and "gfx942" in err
    code, err = _err(capsys, "split", "--arch", "gfx950", *launch, "--aggressive", "--num-heads", "8")
    assert code == 2 and "--num-heads" in err and "forced" in err
    for extra in ([], ["--num-heads", "64"]):  # not the streaming case: occupancy is not asked
        code, err = _err(capsys, "split", "--arch", "gfx950", *launch, *extra, "--occupancy", "3")
        assert code == 2 and "--occupancy" in err and "streaming low-head case" in err
    code, err = _err(
        capsys,
        "split",
        "--arch",
        "gfx950",
        *launch,
        "--block",
        "512",
        str(FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"),
    )
    assert code == 2 and "PATH, --block" in err
    # Where they apply they are used. grid_x = 256/4 = 64; gfx950 streaming: target =
    # max(4 x 256, 4 x 3 x 256) = 3072, splits = min(ceil(3072/64), (65536/128)/2) = 48; not
    # streaming (64 heads): target 4 x 256 = 1024, splits = ceil(1024/64) = 16.
    for extra, splits in (
        (["--num-heads", "8", "--occupancy", "3"], 48),
        (["--aggressive", "--occupancy", "3"], 48),
        (["--num-heads", "64"], 16),
    ):
        assert main(["split", "--json", "--arch", "gfx950", *launch, *extra]) == 0
        assert json.loads(capsys.readouterr().out)["splits"] == splits


def test_gate_refuses_what_the_device_or_tables_make_moot(capsys):
    # AITER picks a per-SKU kernel folder by CU count only on gfx942 (hsa/gfx942/fmha_v3_fwd/
    # MI300, MI308; consumers-and-anchors.md §1.3), and the bf16 rounding variant with it.
    shape = ["--qo-len", "4096", "--kv-len", "4096"]
    for extra in (["--cu-count", "256"], ["--bf16-cvt", "1"]):
        code, err = _err(capsys, "gate", "--arch", "gfx950", *shape, *extra)
        assert code == 2 and extra[0] in err and "gfx950" in err
        assert _err(capsys, "gate", "--arch", "gfx942", *shape, *extra)[0] == 0
    # MI300X has 304 CUs (AMD's MI300X data sheet): another count contradicts it.
    code, err = _err(capsys, "gate", "--arch", "gfx942", "--device", "MI300X", "--cu-count", "80", *shape)
    assert code == 2 and "304" in err and "--cu-count 80" in err
    assert _err(capsys, "gate", "--arch", "gfx942", "--device", "MI300X", "--cu-count", "304", *shape)[0] == 0


def test_sweep_block_needs_a_plot(capsys):
    code, err = _err(capsys, "sweep", "--block", "256", GFX942, "--kernel", "saxpy")
    assert code == 2 and "--plot" in err


def test_list_profiles_takes_nothing_else(capsys):
    assert _err(capsys, "occupancy", "--list-profiles")[0] == 0
    code, err = _err(capsys, "occupancy", "--list-profiles", "--block", "64")
    assert code == 2 and "--block" in err


def test_byte_sizes_take_binary_suffixes(capsys):
    import json

    code = main(
        [
            "occupancy",
            "--json",
            "--target",
            "gfx942",
            "--vgprs",
            "8",
            "--block",
            "64",
            "--lds",
            "16K",
            "--dynamic-lds",
            "0x4000",
        ]
    )
    (r,) = json.loads(capsys.readouterr().out)["results"]
    # 16 KiB static + 16 KiB dynamic = 32768 B: 65536 / 32768 = 2 workgroups by LDS (HIP §4).
    assert code == 0 and r["allocated"]["lds_per_block"] == 32768 and r["limits"]["lds"] == 2
