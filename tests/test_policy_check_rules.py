"""The rules of ``amdocc check`` one function at a time: which rule each outcome names, the
words of each message, the settings' parsers and the baseline file's rules.

Oracles: the llc-22-built fixtures of tests/test_check.py with LLVM's own output stored beside
them (k_launch_miss: 132 VGPRs at 1024 threads on gfx942, 3 waves per SIMD where a workgroup
needs 4, so no model fits one; hand-worked in test_check.test_launch_miss_is_the_kokkos_case),
the baseline and settings files each test writes itself, and the rules as the modules' docs
state them (a smaller occupancy is the worse one; counts are "at most").
"""

from __future__ import annotations

import json

import pytest

import amdocc
from amdocc import FormatError, UsageError
from amdocc.policy import baseline, check_config
from amdocc.policy.checks import RULES, NotEvaluated, Settings, evaluate, launch_rule
from conftest import FIXTURES

C = FIXTURES / "check"
LIB1 = C / "check_gfx942.hsaco"
NO_MODEL = "the kernel cannot be modelled (see the mode rule)"


def kernel(name: str, path=LIB1):
    (co,) = amdocc.load(path)
    return {k.name: k for k in co.kernels}[name]


def unknown_processor_kernel(tmp_path):
    """k_clean with e_flags' mach byte set to 0x7e, which LLVM's ELF.h leaves unassigned."""
    data = bytearray(LIB1.read_bytes())
    data[0x30] = 0x7E
    path = tmp_path / "unknown.hsaco"
    path.write_bytes(bytes(data))
    return kernel("k_clean", path)


# --------------------------------------------------------------------------- launch messages


@pytest.fixture(scope="module")
def launch_miss_answers():
    k = kernel("k_launch_miss")
    return {m: amdocc.occupancy(k, block_size=1024, model=m) for m in ("hip", "llvm", "hw")}


@pytest.mark.parametrize(
    "models,listed",
    [
        (("llvm",), "llvm fits 0"),
        (("hip", "hw"), "hip and hw fit 0"),
        (("hip", "llvm", "hw"), "hip, llvm and hw fit 0"),
    ],
)
def test_the_launch_message_lists_the_models_that_fit_nothing_in_english(launch_miss_answers, models, listed):
    # Every model fits 0 workgroups of 1024 threads of k_launch_miss (VGPR-bound, see the module doc).
    v = launch_rule({m: launch_miss_answers[m] for m in models}, 1024, ".max_flat_workgroup_size")
    assert (v.rule, v.value, v.limit) == ("launch", ",".join(models), None)
    assert v.message == (
        f"a 1024-thread workgroup (.max_flat_workgroup_size) does not fit on a CU: {listed} (limited by vgpr)"
    )


def test_a_launch_every_model_fits_is_no_violation():
    k = kernel("k_launch_miss")  # 3 waves per SIMD x 4 SIMDs = 12 waves: a 256-thread block (4 waves) fits
    assert launch_rule({m: amdocc.occupancy(k, block_size=256, model=m) for m in ("hip", "hw")}, 256, "given") is None


# --------------------------------------------------------------------------- not evaluated


def test_a_kernel_that_cannot_be_modelled_leaves_occupancy_and_launch_unevaluated(tmp_path):
    k = unknown_processor_kernel(tmp_path)
    settings = Settings(rules=("occupancy", "launch", "lds", "mode"), min_occupancy=1)
    verdict = evaluate(k, settings, declared=(256, ".max_flat_workgroup_size"))
    assert verdict.not_evaluated == [
        NotEvaluated("occupancy", NO_MODEL),
        NotEvaluated("launch", NO_MODEL),
        NotEvaluated("lds", "unknown processor (see the mode rule)"),
    ]
    assert [(v.rule, v.value) for v in verdict.violations] == [("mode", "unknown-processor")]


def test_no_declared_block_size_leaves_occupancy_and_launch_unevaluated_with_the_reason():
    why = "no .reqd_workgroup_size or .max_flat_workgroup_size in the metadata"
    settings = Settings(rules=("occupancy", "launch"), min_occupancy=1)
    verdict = evaluate(kernel("k_clean"), settings, declared=(None, why))
    assert verdict.not_evaluated == [
        NotEvaluated("occupancy", f"no block size: {why}; give one"),
        NotEvaluated("launch", why),
    ]
    assert verdict.violations == []
    # A given block size is used instead: k_clean (24 VGPRs) at 64 threads reaches a floor of 1.
    assert evaluate(kernel("k_clean"), Settings(rules=("occupancy",), min_occupancy=1, block=64)).not_evaluated == []


# --------------------------------------------------------------------------- settings


def test_unknown_rules_are_each_named_once():
    with pytest.raises(UsageError) as exc:
        Settings(rules=("nope", "scratch", "bogus"))
    assert exc.value.message == f"unknown rule nope, bogus (rules: {', '.join(RULES)})"
    with pytest.raises(UsageError, match=r"^the occupancy rule needs a floor"):
        Settings(rules=("occupancy",))


@pytest.mark.parametrize(
    "parser,text,wanted",
    [
        (check_config.count, "-1", "an integer >= 0"),
        (check_config.positive, "0", "an integer >= 1"),
        (check_config.block_size, "1025", "an integer from 1 to 1024"),
        (check_config.block_size, "0", "an integer from 1 to 1024"),
    ],
)
def test_each_integer_setting_says_what_it_wants(parser, text, wanted):
    with pytest.raises(UsageError) as exc:
        parser(text, "--x")
    assert exc.value.message == f"--x must be {wanted}, not {text!r}"


@pytest.mark.parametrize(
    "parser,low,high",
    [(check_config.count, 0, 10**9), (check_config.positive, 1, 10**9), (check_config.block_size, 1, 1024)],
)
def test_integer_settings_take_their_bounds_from_text_and_toml(parser, low, high):
    assert parser(str(low), "--x") == low and parser(low, "x") == low and parser(high, "x") == high
    for bad in (low - 1, True, 1.0, "1.5", "ten"):
        with pytest.raises(UsageError, match=r"^x must be an integer"):
            parser(bad, "x")


@pytest.mark.parametrize("value", [5, ["scratch", 3], ("launch", None), {"scratch": 1}])
def test_rules_must_be_a_list_of_names(value):
    with pytest.raises(UsageError) as exc:
        check_config.rules(value, "rules in p.toml")
    assert exc.value.message == f"rules in p.toml must be a list of rule names, not {value!r}"


def test_rules_parse_from_text_and_lists_in_report_order():
    assert check_config.rules("lds, spills", "--rules") == ("vgpr-spills", "sgpr-spills", "lds")
    assert check_config.rules(["mode", "scratch"], "rules") == ("scratch", "mode")
    with pytest.raises(UsageError, match=r"^--rules is empty \(rules: vgpr-spills"):
        check_config.rules(" , ", "--rules")


# --------------------------------------------------------------------------- the baseline file


def write_baseline(tmp_path, entries):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"format": baseline.FORMAT, "version": baseline.VERSION, "entries": entries}))
    return path


@pytest.mark.parametrize("value", [None, 0, 2.5, "hip,llvm"])
def test_a_baseline_value_may_be_a_number_a_string_or_null(tmp_path, value):
    path = write_baseline(tmp_path, [{"kernel": "k", "target": "gfx942", "rule": "launch", "value": value}])
    assert baseline.read(path) == [baseline.Entry("k", "gfx942", "launch", value)]


@pytest.mark.parametrize("value", [[1], {"a": 1}, True])
def test_any_other_baseline_value_is_refused_naming_the_entry(tmp_path, value):
    ok = {"kernel": "k", "target": "gfx942", "rule": "scratch", "value": 4}
    path = write_baseline(tmp_path, [ok, {**ok, "value": value}])
    with pytest.raises(FormatError) as exc:
        baseline.read(path)
    assert str(exc.value).endswith(f"baseline {path}: entry 1: value must be a number, a string or null")


def test_the_updated_baseline_keeps_each_rules_worst_value():
    # Occupancy is a floor, so its worst value is the smallest; spills and scratch are "at most",
    # so theirs is the largest. Found twice each (two code objects of one target, say).
    found = [
        baseline.Entry("k", "gfx942", "occupancy", 3),
        baseline.Entry("k", "gfx942", "occupancy", 2),
        baseline.Entry("k", "gfx942", "occupancy", 5),
        baseline.Entry("k", "gfx942", "scratch", 16),
        baseline.Entry("k", "gfx942", "scratch", 64),
        baseline.Entry("k", "gfx942", "scratch", 32),
    ]
    kept = {e.rule: e.value for e in baseline.updated(found, [], lambda e: True)}
    assert kept == {"occupancy": 2, "scratch": 64}


def test_classify_calls_a_value_past_the_recorded_one_worse_by_the_rules_direction():
    accepted = [baseline.Entry("k", "gfx942", "occupancy", 3), baseline.Entry("k", "gfx942", "scratch", 32)]
    found = [baseline.Entry("k", "gfx942", "occupancy", 2), baseline.Entry("k", "gfx942", "scratch", 16)]
    statuses, stale = baseline.classify(found, accepted, lambda e: True)
    assert (statuses, stale) == (["worse", "accepted"], [])
    found = [baseline.Entry("k", "gfx942", "occupancy", 4), baseline.Entry("k", "gfx942", "scratch", 33)]
    assert baseline.classify(found, accepted, lambda e: True)[0] == ["accepted", "worse"]
