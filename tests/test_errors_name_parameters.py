"""From Python an error names the parameter the caller passed; the command line names the flag.

The oracle is each function's own signature (the parameter names a Python caller typed) and each
command's parser (the options a shell user typed): the same refusal must be worded in the terms of
whoever asked, and nothing below the CLI may write to the terminal.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

import amdocc
from amdocc import app
from amdocc.app import parallel
from amdocc.cli.main import main
from amdocc.errors import AmdoccWarning, UsageError
from amdocc.models.usage import manual


def sample() -> str:
    return str(amdocc.samples_path())


def refusal(call) -> UsageError:
    with pytest.raises(UsageError) as exc:
        call()
    return exc.value


def test_manual_counts_that_contradict_name_the_parameters_from_python():
    err = refusal(
        lambda: amdocc.occupancy({"vgprs": 128, "arch_vgprs": 64, "agprs": 64}, target="gfx942", block_size=256)
    )
    assert str(err) == "give either vgprs (the metadata total) or arch_vgprs with agprs, not both"
    assert {"vgprs", "arch_vgprs", "agprs"} <= set(inspect.signature(manual).parameters)


def test_manual_counts_that_contradict_name_the_flags_on_the_command_line(capsys):
    argv = [
        "occupancy",
        "--vgprs",
        "128",
        "--arch-vgprs",
        "64",
        "--agprs",
        "64",
        "--target",
        "gfx942",
        "--block",
        "256",
    ]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "amdocc: give either --vgprs (the metadata total) or --arch-vgprs with --agprs, not both\n"
    )


def test_a_kernel_pattern_that_matches_nothing_names_the_parameter_or_the_flag(capsys):
    err = refusal(lambda: app.occupancy([sample()], kernel="nomatch"))
    assert str(err).startswith("no kernel matches kernel 'nomatch' in the PATHs")
    assert "--" not in str(err)
    assert main(["occupancy", "--json", "--kernel", "nomatch", sample()]) == 2
    assert capsys.readouterr().err.startswith("amdocc: no kernel matches --kernel 'nomatch' in the PATHs")


def test_split_names_its_own_processor_parameter(capsys):
    # split takes the processor as arch= (--arch), not target=: its hint says so in both worlds.
    launch = {"seq_len": 4096, "seq_len_kv": 8192, "rows_per_block": 16, "block_kv": 64}
    err = refusal(lambda: app.split(**launch, arch="gfx942", paths=[sample()], kernel="saxpy", what_if=True))
    assert str(err).endswith("(narrow it with kernel and arch)")
    argv = ["split", "--arch", "gfx942", "--seq-len", "4096", "--seq-len-kv", "8192", "--rows-per-block", "16"]
    argv += ["--block-kv", "64", "--kernel", "saxpy", "--block", "256", "--what-if", sample()]
    assert main(argv) == 2
    assert capsys.readouterr().err.endswith("(narrow it with --kernel and --arch)\n")


def test_a_device_of_another_processor_is_named_as_each_caller_named_it(capsys):
    # tables/devices.toml: the MI300X is a gfx942 (AMD's CDNA3 product page).
    err = refusal(lambda: app.gate("gfx90a", 128, 128, device="MI300X"))
    assert str(err) == "device MI300X is a gfx942, but arch says gfx90a"
    assert main(["gate", "--arch", "gfx90a", "--device", "MI300X", "--qo-len", "128", "--kv-len", "128"]) == 2
    assert capsys.readouterr().err == "amdocc: --device MI300X is a gfx942, but --arch says gfx90a\n"


def test_more_jobs_than_cpus_is_a_warning_to_python_and_a_line_on_stderr_to_the_cli(monkeypatch, capsys):
    monkeypatch.setattr(parallel, "available_cpus", lambda: 1)
    with pytest.warns(AmdoccWarning) as caught:
        assert parallel.capped_jobs(3) == 1
    assert str(caught[0].message) == "jobs 3 is more than the 1 CPU(s) this process may use; using 1"
    assert capsys.readouterr().err == ""  # the library printed nothing itself
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the CLI shows it even where warnings would be errors
        assert main(["inspect", "--json", "--jobs", "3", sample()]) == 0
    assert capsys.readouterr().err == (
        "amdocc: warning: --jobs 3 is more than the 1 CPU(s) this process may use; using 1\n"
    )


def test_a_library_run_reports_progress_to_the_callback_it_is_given(capsys):
    # Two files in, two steps out, each with the total; nothing is drawn when no one asked.
    seen: list[tuple[int, int]] = []

    class Recorder:
        def step(self, done: int, total: int) -> None:
            seen.append((done, total))

        def close(self) -> None:
            seen.append((-1, -1))

    token = parallel.PROGRESS.set(Recorder)
    try:
        app.inspect([sample(), sample()])
    finally:
        parallel.PROGRESS.reset(token)
    assert seen == [(1, 2), (2, 2), (-1, -1)]
    app.inspect([sample(), sample()])
    assert capsys.readouterr().err == ""
