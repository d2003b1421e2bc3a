"""The argument contract: every option of every subcommand, and every AMDOCC_* environment
variable, refuses bad values with exit 2 and one line naming what is wrong and what is valid,
never a traceback and never a silent default.

The bad values are generated from the parsers themselves: each option's validated type lists
the values it must refuse (empty, of the wrong type, out of range), so an option or a command
added later is walked without editing this file. An option without a validated type fails here.
The environment variables are walked the same way from amdocc.env.VARIABLES, and a variable
read anywhere in the repository but missing from that table fails here too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

import pytest

from amdocc import env
from amdocc.cli.args import ArgType, LdsSize, WaveFloor, WorkgroupSize
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
    from amdocc.cli.model_args import MODEL_FLAGS
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
    """AITER's _auto_num_splits (docs/consumers.md §1): gfx942's row is occupancy-aware
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
    # MI300, MI308; docs/consumers.md §2), and the bf16 rounding variant with it.
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
    # 16 KiB static + 16 KiB dynamic = 32768 B: 65536 / 32768 = 2 workgroups by LDS (docs/hip-occupancy.md §2 step 7).
    assert code == 0 and r["allocated"]["lds_per_block"] == 32768 and r["limits"]["lds"] == 2


# -- environment variables ------------------------------------------------------------------------

PACKAGE_VARIABLES = [v for v in env.VARIABLES.values() if v.reader == "amdocc"]
ENV_CASES = [(v.name, bad) for v in PACKAGE_VARIABLES for bad in v.refused]


@pytest.mark.parametrize("name, bad", ENV_CASES, ids=[f"{n}={b!r}" for n, b in ENV_CASES])
def test_a_bad_variable_is_a_usage_error_naming_it(capsys, monkeypatch, name, bad):
    monkeypatch.setenv(name, bad)
    code = main(["inspect", GFX942])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"amdocc: {name}={bad!r}: expected {env.VARIABLES[name].form}\n"


@pytest.mark.parametrize("variable", PACKAGE_VARIABLES, ids=lambda v: v.name)
def test_a_good_or_empty_variable_is_taken(capsys, monkeypatch, variable):
    for value in (variable.sample, ""):  # empty: unset, as `NAME= amdocc ...` means in a shell
        monkeypatch.setenv(variable.name, value)
        assert main(["inspect", GFX942]) == 0, capsys.readouterr().err
        assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "name, bad", [(v.name, b) for v in env.VARIABLES.values() if v.reader == "tests" for b in v.refused]
)
def test_the_suites_variables_are_checked_too(name, bad):
    from amdocc.errors import UsageError

    with pytest.raises(UsageError) as exc:
        env.check("tests", {name: bad})
    assert exc.value.message == f"{name}={bad!r}: expected {env.VARIABLES[name].form}"


def test_the_llvm_tools_directory_is_checked_when_synth_reads_it(capsys, monkeypatch):
    from amdocc.errors import UsageError
    from amdocc.testing.synth import find_llvm_tool

    monkeypatch.setenv("AMDOCC_LLVM_BIN", "/nonexistent/amdocc-llvm")
    assert main(["inspect", GFX942]) == 0  # no command reads it
    capsys.readouterr()
    with pytest.raises(UsageError) as exc:
        find_llvm_tool("llc")
    assert exc.value.message == "AMDOCC_LLVM_BIN='/nonexistent/amdocc-llvm': expected an existing directory"


def test_pytest_itself_stops_on_a_bad_variable_of_the_suite(tmp_path):
    # AMDOCC_REQUIRE_ORACLES=true used to mean "not required" (only "1" was): CI would skip in silence.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(ROOT / "tests" / "test_cli_contract.py"),
            "-k",
            "nothing_matches_this",
        ],
        env=dict(os.environ, PYTHONPATH=str(ROOT), AMDOCC_REQUIRE_ORACLES="true"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2
    assert "amdocc tests: AMDOCC_REQUIRE_ORACLES='true': expected 0 or 1" in run.stdout + run.stderr


def test_a_misspelled_variable_is_named_with_the_one_meant(capsys, monkeypatch):
    monkeypatch.setenv("AMDOCC_MAX_DEPHT", "3")
    assert main(["inspect", GFX942]) == 0
    assert capsys.readouterr().err == (
        "amdocc: warning: AMDOCC_MAX_DEPHT is not a variable amdocc reads (did you mean AMDOCC_MAX_DEPTH?); "
        "it is ignored\n"
    )


_SOURCES = ("amdocc", "tests", "tools", ".ci")


def _files_naming_variables():
    for top in _SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".sh", "") and path.is_file() and "data" not in path.relative_to(ROOT).parts:
                try:
                    text = path.read_text()
                except (UnicodeDecodeError, OSError):
                    continue
                yield path, text


def test_every_variable_the_repository_reads_is_in_the_table():
    read = {}
    for path, text in _files_naming_variables():
        for name in re.findall(r"\bAMDOCC_[A-Z0-9_]+\b", text):
            read.setdefault(name, path.relative_to(ROOT))
    assert read, "the walk found no variable at all"
    missing = {n: str(p) for n, p in read.items() if n not in env.VARIABLES and n != "AMDOCC_MAX_DEPHT"}
    assert missing == {}, "add these to amdocc/env.py VARIABLES (with their form) and docs/cli-contract.md"
    assert {"AMDOCC_MAX_DEPTH", "AMDOCC_REQUIRE_ORACLES", "AMDOCC_FUZZ_INPUTS", "AMDOCC_LLC"} <= set(read)


def test_the_package_reads_its_variables_only_through_amdocc_env():
    for path in sorted((ROOT / "amdocc").rglob("*.py")):
        if path.name == "env.py":
            continue
        for line in path.read_text().splitlines():
            assert not re.search(r"environ\b.*AMDOCC_", line), f"{path.relative_to(ROOT)}: {line.strip()}"


def test_the_documented_variables_are_the_table():
    doc = (ROOT / "docs" / "cli-contract.md").read_text()
    documented = set(re.findall(r"^\| `(AMDOCC_[A-Z0-9_]+)`", doc, re.M))
    assert documented == set(env.VARIABLES)


# -- bounds ---------------------------------------------------------------------------------------


def _typed(kind):
    return {
        (name, max(a.option_strings, key=len))
        for name, parser in _subparsers().items()
        for a in parser._actions
        if isinstance(a.type, kind) or (hasattr(a.type, "item") and isinstance(a.type.item, kind))
    }


def test_every_workgroup_size_option_is_bounded_by_the_largest_workgroup(capsys):
    # Every option that takes a workgroup size in threads, in every command (occupancy, sweep, diff
    # and census accepted 4096 or 10**23; check alone refused them). 1024: the largest workgroup
    # llc-22 compiles for any processor (test_the_largest_workgroup_is_llvm_22s_on_every_processor).
    sizes = _typed(WorkgroupSize)
    assert sizes == {
        ("occupancy", "--block"),
        ("occupancy", "--max-flat-workgroup-size"),
        ("best-block", "--max-flat-workgroup-size"),
        ("sweep", "--block"),
        ("sweep", "--blocks"),
        ("sweep", "--max-flat-workgroup-size"),
        ("diff", "--block"),
        ("census", "--block"),
        ("check", "--block"),
        ("split", "--block"),
        ("verify", "--blocks"),
    }
    for command, flag in sorted(sizes):
        for value in ("1025", "4096", str(10**23), "64,1025" if flag == "--blocks" else "0"):
            assert main([command, flag, value, GFX942]) == 2
            err = capsys.readouterr().err
            assert f"argument {flag}: " in err and "from 1 to 1024" in err, err
    assert main(["occupancy", "--block", "1024", GFX942]) == 0  # the bound itself is a launchable size
    assert main(["sweep", "--blocks", "64,1024", "--kernel", "saxpy", GFX942]) == 0
    capsys.readouterr()


def test_the_occupancy_floor_is_bounded_by_the_most_waves_any_processor_has(capsys):
    # 20 waves per SIMD: the largest '; Occupancy:' llc-22 prints for an empty kernel on any
    # processor (tests/data/llvm22_target_probe.json, max_waves_per_simd per wave size).
    probe = json.loads((ROOT / "tests" / "data" / "llvm22_target_probe.json").read_text())
    most = max(w for row in probe.values() if "max_waves_per_simd" in row for w in row["max_waves_per_simd"].values())
    assert most == 20
    assert _typed(WaveFloor) == {("check", "--min-occupancy")}
    for value in ("100", f"{most + 0.5}", f"{most + 1}"):
        assert main(["check", "--min-occupancy", value, GFX942]) == 2
        assert f"at most {most} (the most wave slots any processor has)" in capsys.readouterr().err
    for value in ("0", "-1"):  # above 0 (docs/cli-contract.md): a floor of no waves is no floor
        assert main(["check", "--min-occupancy", value, GFX942]) == 2
        assert "is out of range: expected a number of waves per SIMD above 0" in capsys.readouterr().err
    assert main(["check", "--min-occupancy", str(most), "--model", "llvm", GFX942]) == 1  # parsed, then failed
    assert "occupancy" in capsys.readouterr().out


@pytest.mark.llvm22
def test_the_largest_workgroup_is_llvm_22s_on_every_processor(tmp_path):
    # llc-22 takes "amdgpu-flat-work-group-size"="N,N" for N up to the largest workgroup the
    # processor launches and drops a larger request to the default 1..1024, so the metadata's
    # .max_flat_workgroup_size shows the bound: 1024 stays 1024, 1025 and 2048 fall back to it.
    from amdocc.targets import MAX_WORKGROUP_SIZE, all_targets

    ir = tmp_path / "k.ll"
    ir.write_text(
        "".join(
            f"define amdgpu_kernel void @k{n}() #{i} {{ ret void }}\n"
            f'attributes #{i} = {{ "amdgpu-flat-work-group-size"="{n},{n}" }}\n'
            for i, n in enumerate((256, 1024, 1025, 2048))
        )
    )
    known = [t.name for t in all_targets() if t.since_llvm is None and "generic" not in t.name]
    assert len(known) > 40
    seen = {}
    for processor in known:
        obj = tmp_path / f"{processor}.o"
        subprocess.run(
            ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={processor}", "-filetype=obj", str(ir), "-o", str(obj)],
            check=True,
            capture_output=True,
        )
        notes = subprocess.run(["llvm-readelf-22", "--notes", str(obj)], check=True, capture_output=True, text=True)
        seen[processor] = [int(v) for v in re.findall(r"\.max_flat_workgroup_size:\s+(\d+)", notes.stdout)]
    assert all(sizes == [256, 1024, 1024, 1024] for sizes in seen.values()), seen
    assert MAX_WORKGROUP_SIZE == 1024


def test_jobs_are_capped_at_the_cpus_this_process_may_use(tmp_path):
    # taskset(1) pins the process to one CPU (the oracle of what sched_getaffinity reports); --jobs 3
    # then runs one process, with a warning, and the answer is the one a single process gives (3,
    # not 5000: were the cap broken, this test would start that many interpreters).
    files = [str(FIXTURES / "elf" / "gfx942_cov4.hsaco")] * 40
    base = [sys.executable, "-m", "amdocc", "inspect", "--json"]
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    one = subprocess.run(
        ["taskset", "-c", "0", *base, "--jobs", "1", *files], env=environ, capture_output=True, text=True
    )
    many = subprocess.run(
        ["taskset", "-c", "0", *base, "--jobs", "3", *files], env=environ, capture_output=True, text=True
    )
    assert one.returncode == many.returncode == 0, many.stderr
    assert many.stderr == "amdocc: warning: --jobs 3 is more than the 1 CPU(s) this process may use; using 1\n"
    assert many.stdout == one.stdout and one.stderr == ""


def test_a_misspelled_command_option_or_value_gets_the_one_meant(capsys):
    cases = [
        (["ocupancy", GFX942], "invalid choice: 'ocupancy' (did you mean 'occupancy'? choose from 'inspect',"),
        (["occupancy", "--blok", "64", GFX942], "unrecognized arguments: --blok (did you mean --block?)"),
        (["occupancy", "--jsn", GFX942], "unrecognized arguments: --jsn (did you mean --json?)"),
        (
            ["check", "--min-ocupancy=2", GFX942],
            "unrecognized arguments: --min-ocupancy=2 (did you mean --min-occupancy?)",
        ),
        (
            ["occupancy", "--model", "hpi", GFX942],
            "unknown model 'hpi' (did you mean 'hip'?) (choose from hip, llvm, hw)",
        ),
        (["check", "--rules", "spils", GFX942], "unknown rule 'spils' (did you mean 'spills'?)"),
        (["occupancy", "--no-such-option", GFX942], "unrecognized arguments: --no-such-option\n"),
    ]
    for argv, words in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.splitlines()) == 2, err


@pytest.mark.parametrize(
    "spelling, level", [("info", "all"), ("warning", "warnings"), ("warn", "warnings"), ("error", "errors")]
)
def test_findings_takes_the_severity_users_write(capsys, spelling, level):
    assert main(["inspect", "--findings", spelling, GFX942]) == 0
    ours = capsys.readouterr().out
    assert main(["inspect", "--findings", level, GFX942]) == 0
    assert capsys.readouterr().out == ours


def test_a_floor_the_named_processor_cannot_reach_is_refused(capsys):
    # gfx942: 8 wave slots per SIMD, both as llc-22 measures getMaxWavesPerEU (the probe) and as
    # HIP's MaxWavesPerSimd for gfx9 (CLR hip_platform.cpp); gfx1100: llc-22 measures 16.
    probe = json.loads((ROOT / "tests" / "data" / "llvm22_target_probe.json").read_text())
    gfx942 = max(probe["gfx942"]["max_waves_per_simd"].values())
    gfx1100 = max(probe["gfx1100"]["max_waves_per_simd"].values())
    assert (gfx942, gfx1100) == (8, 16)
    for where, model in ((["--target", "gfx942"], "hip"), (["--device", "MI300X"], "llvm")):
        code = main(["check", "--no-config", "--min-occupancy", str(gfx942 + 1), "--model", model, *where, GFX942])
        err = capsys.readouterr().err
        assert code == 2 and err == (
            f"amdocc: --min-occupancy {gfx942 + 1} can never be met on {where[1]}: the {model} model counts at most "
            f"{gfx942} waves per SIMD on gfx942 ({'hip_' if model == 'hip' else ''}max_waves_per_simd)\n"
        )
        assert main(["check", "--no-config", "--min-occupancy", str(gfx942), "--model", model, *where, GFX942]) in (
            0,
            1,
        )
        capsys.readouterr()
    # The same floor on a processor with more slots is a floor, not a usage error.
    assert main(["check", "--no-config", "--min-occupancy", "9", "--model", "llvm", "--target", "gfx1100", GFX942]) == 2
    assert "can never be met" not in capsys.readouterr().err  # exit 2 here: no gfx1100 kernel is selected


def test_every_lds_option_is_bounded_by_the_most_lds_a_workgroup_gets(capsys):
    # 320 KiB: gfx1250's lds_per_workgroup in tables/targets.toml (cited there, checked by
    # test_table_sources), the most of any processor; 64 KiB on gfx942, 160 KiB on gfx950.
    from amdocc.targets import get_target

    assert get_target("gfx1250").lds_per_workgroup == 320 << 10
    assert (get_target("gfx942").lds_per_workgroup, get_target("gfx950").lds_per_workgroup) == (64 << 10, 160 << 10)
    lds = _typed(LdsSize)
    assert lds == {
        ("occupancy", "--lds"),
        ("occupancy", "--dynamic-lds"),
        ("best-block", "--lds"),
        ("best-block", "--dynamic-lds"),
        ("sweep", "--lds"),
        ("sweep", "--dynamic-lds"),
        ("diff", "--dynamic-lds"),
        ("census", "--dynamic-lds"),
        ("check", "--dynamic-lds"),
        ("split", "--dynamic-lds"),
        ("verify", "--dynamic-lds"),
    }
    for command, flag in sorted(lds):
        assert main([command, flag, str((320 << 10) + 1), GFX942]) == 2
        assert "from 0 to 327680 (320 KiB" in capsys.readouterr().err
    assert main(["occupancy", "--block", "64", "--dynamic-lds", "320K", GFX942]) == 0  # a size no gfx942 workgroup gets
    assert " 0  " in capsys.readouterr().out  # ... is answered: 0 workgroups there


# --------------------------------------------------------------------------- exit statuses in --help


def _contract_exit_statuses() -> dict[int, str]:
    """The "## Exit status" table of docs/cli-contract.md: status → meaning, markup removed."""
    text = (ROOT / "docs" / "cli-contract.md").read_text()
    section = text.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.+?) \|$", section, re.MULTILINE)
    return {int(status): meaning.replace("`", "") for status, meaning in rows}


def _help_exit_statuses(help_text: str) -> dict[int, str]:
    """The "exit status:" section at the end of a --help, each meaning joined from its lines."""
    section = help_text.split("\nexit status:\n", 1)[1]
    found: dict[int, str] = {}
    last = None
    for line in section.splitlines():
        m = re.match(r"^  (\d+)\s+(.*)$", line)
        if m:
            last = int(m.group(1))
            found[last] = m.group(2)
        elif line.strip() and last is not None:
            found[last] += " " + line.strip()
    return found


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_lists_every_exit_status_as_the_contract_says(capsys, monkeypatch, command):
    contract = _contract_exit_statuses()
    assert set(contract) == {0, 1, 2, 3, 130}  # the table itself, read
    for columns in ("60", "200"):  # wrapped narrow or not, the same words
        monkeypatch.setenv("COLUMNS", columns)
        assert main([*([command] if command else []), "--help"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        assert _help_exit_statuses(out) == contract, (command, columns)


def test_exit_code_names_every_status_of_the_contract(capsys):
    # amdocc.errors.ExitCode (as pytest.ExitCode) holds exactly the statuses docs/cli-contract.md
    # lists, each error class's exit_code is one of them, and the command line returns members.
    from amdocc.errors import ExitCode, TableError, UsageError
    from amdocc.runtime.hip import HipUnavailable
    from amdocc.testing.properties import PropertyFailure

    assert {int(code) for code in ExitCode} == set(_contract_exit_statuses())
    assert [UsageError.exit_code, TableError.exit_code] == [ExitCode.USAGE_ERROR] * 2 == [2, 2]
    assert (HipUnavailable.exit_code, PropertyFailure.exit_code) == (ExitCode.RUNTIME_UNAVAILABLE, ExitCode.GATE_FAILED)
    assert main(["sample"]) is ExitCode.OK
    assert main(["occupancy", "--target", "gfx942", "--vgprs", "8", "--block", "0"]) is ExitCode.USAGE_ERROR
    capsys.readouterr()
