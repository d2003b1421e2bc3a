"""The rules of ``amdocc check`` one function at a time: which rule each outcome names, the
words of each message, the settings' parsers and the baseline file's rules.

Oracles: the llc-22-built fixtures of tests/test_check.py with LLVM's own output stored beside
them (k_launch_miss: 132 VGPRs at 1024 threads on gfx942, 3 waves per SIMD where a workgroup
needs 4, so no model fits one; hand-worked in test_check.test_launch_miss_is_the_kokkos_case),
the baseline and settings files each test writes itself, and the rules as the modules' docs
state them (a smaller occupancy is the worse one; counts are "at most").
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import amdocc
from amdocc import FormatError, UsageError
from amdocc.policy import baseline, check_config
from amdocc.policy.checks import LOCAL_COUNTS, RULES, NotEvaluated, Settings, evaluate, launch_rule
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
        (("llvm",), "llvm answers 0"),
        (("hip", "hw"), "hip and hw answer 0"),
        (("hip", "llvm", "hw"), "hip, llvm and hw answer 0"),
    ],
)
def test_the_launch_message_lists_the_models_that_fit_nothing_in_english(launch_miss_answers, models, listed):
    # Every model fits 0 workgroups of 1024 threads of k_launch_miss (VGPR-bound, see the module doc).
    v = launch_rule({m: launch_miss_answers[m] for m in models}, 1024, ".max_flat_workgroup_size")
    assert (v.rule, v.value, v.limit) == ("launch", ",".join(models), None)
    assert v.message == (
        f"a 1024-thread workgroup (.max_flat_workgroup_size) does not fit on a CU: {listed} (limited by vgpr)"
    )


@pytest.mark.llvm22
def test_a_launch_only_hips_rounding_refuses_names_hip_and_what_the_others_fit(tmp_path):
    # gfx1100, wave32, CU mode, .vgpr_count 88, 1024 threads = 32 waves on the CU's 2 SIMDs.
    # HIP's amd::alignUp is a bit-mask (docs/hip-occupancy.md section 7, rocclr/utils/util.hpp):
    # (88 + 23) & ~23 = 104, 1536 / 104 = 14 waves per SIMD, 2 x 14 = 28 < 32 waves: 0 workgroups.
    # Rounded truly, 88 -> 96 VGPRs, 1536 / 96 = 16 waves per SIMD, 32 waves: 1 workgroup, as the
    # hardware allocates and as LLVM counts. The metadata is what llvm-readelf-22 reads back.
    from amdocc.testing import SynthSpec, synthesize
    from oracle import llvm22

    path = tmp_path / "k.co"
    synthesize(SynthSpec("gfx1100", 88, 0, 10, 0, wave=32, wgp=False, max_flat_workgroup_size=1024, name="k"), path)
    (note,) = llvm22.readelf([str(path)])[str(path)]["metadata"][0]["amdhsa.kernels"]
    assert (note[".vgpr_count"], note[".wavefront_size"], note[".workgroup_processor_mode"]) == (88, 32, 0)
    (k,) = amdocc.load(path)[0].kernels
    v = launch_rule({m: amdocc.occupancy(k, block_size=1024, model=m) for m in ("hip", "llvm", "hw")}, 1024, "x")
    assert v.value == "hip"
    assert v.message == (
        "a 1024-thread workgroup (x) does not fit on a CU: hip (HIP's occupancy API) answers 0 "
        "(limited by vgpr), while llvm and hw fit 1 per CU"
    )


@pytest.mark.llvm22
def test_a_launch_message_of_a_wgp_mode_kernel_says_wgp(tmp_path):
    # gfx1100 wave32 in WGP mode (.workgroup_processor_mode 1, read back by llvm-readelf-22), 256
    # VGPRs: a 1024-thread workgroup fits under no model, and the unit is the WGP.
    from amdocc.testing import SynthSpec, synthesize
    from oracle import llvm22

    path = tmp_path / "k.co"
    synthesize(SynthSpec("gfx1100", 256, 0, 10, 0, wave=32, wgp=True, max_flat_workgroup_size=1024, name="k"), path)
    (note,) = llvm22.readelf([str(path)])[str(path)]["metadata"][0]["amdhsa.kernels"]
    assert note[".workgroup_processor_mode"] == 1
    (k,) = amdocc.load(path)[0].kernels
    v = launch_rule({m: amdocc.occupancy(k, block_size=1024, model=m) for m in ("hip", "hw")}, 1024, "x")
    assert v.message.startswith("a 1024-thread workgroup (x) does not fit on a WGP: hip and hw answer 0")


def test_a_launch_every_model_fits_is_no_violation():
    k = kernel("k_launch_miss")  # 3 waves per SIMD x 4 SIMDs = 12 waves: a 256-thread block (4 waves) fits
    assert launch_rule({m: amdocc.occupancy(k, block_size=256, model=m) for m in ("hip", "hw")}, 256, "given") is None


def test_kernels_read_from_the_same_inputs_share_verdicts_only_where_they_run_alike():
    # The shared answers are keyed by what the reader resolved a kernel from; a copy that is a
    # relocatable's (local counts) or another processor's must still be judged as itself.
    k = kernel("k_launch_miss")
    settings = Settings(rules=("occupancy", "launch", "mode"), min_occupancy=1)
    declared = (1024, ".max_flat_workgroup_size")
    built = evaluate(k, settings, declared=declared)
    # 1024 threads are 16 wave64 waves and the CU holds 12 (see above): no block fits, so the
    # launch fails and the occupancy is 0, under the floor of 1.
    assert [v.rule for v in built.violations] == ["occupancy", "launch"]
    renamed = dataclasses.replace(k, name="other")
    renamed.inputs = k.inputs  # read from the same values (a copy has no inputs of its own)
    assert evaluate(renamed, settings, declared=declared) == built
    local = dataclasses.replace(k, launchable=False)
    local.inputs = k.inputs
    assert [(n.rule, n.reason) for n in evaluate(local, settings, declared=declared).not_evaluated] == [
        ("occupancy", LOCAL_COUNTS),
        ("launch", LOCAL_COUNTS),
    ]


def test_a_verdict_not_shared_is_the_same_worked_verdict_and_shared_takes_only_a_bool():
    k = kernel("k_launch_miss")
    settings = Settings(rules=("occupancy", "launch", "mode"), min_occupancy=1)
    declared = (1024, ".max_flat_workgroup_size")
    # 16 wave64 waves against the CU's 12, as above: the launch fails and the occupancy is 0.
    alone = evaluate(k, settings, declared=declared, shared=False)
    assert [v.rule for v in alone.violations] == ["occupancy", "launch"]
    with pytest.raises(UsageError, match="shared must be True or False, not 'no'"):
        evaluate(k, settings, declared=declared, shared="no")  # type: ignore[arg-type]


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


@pytest.mark.parametrize(
    "doc,message",
    [
        ("[]", "is not an amdocc-check-baseline file of version 1 or 2"),
        ('{"format": "amdocc-check-baseline", "version": 3, "entries": []}', "is not an amdocc-check-baseline file"),
        ('{"format": "amdocc-check-baseline", "version": true, "entries": []}', "is not an amdocc-check-baseline file"),
        (
            '{"format": "amdocc-check-baseline", "version": 2, "entries": '
            '[{"kernel": "k", "target": "t", "rule": "lds", "location": 3}]}',
            "entry 0: location must be a string or null",
        ),
        (
            '{"format": "amdocc-check-baseline", "version": 2, "entries": '
            '[{"kernel": "k", "target": "t", "rule": "lds", "copy": -1}]}',
            "entry 0: copy must be a count",
        ),
        ('{"format": "amdocc-check-baseline", "version": 1}', "'entries' must be a list"),
        ('{"format": "amdocc-check-baseline", "version": 1, "entries": {}}', "'entries' must be a list"),
        ('{"format": "amdocc-check-baseline", "version": 1, "entries": [3]}', "entry 0 is not an object"),
        (
            '{"format": "amdocc-check-baseline", "version": 1, "entries": [{"kernel": "k", "rule": "lds"}]}',
            "entry 0 has no string 'target'",
        ),
        (
            '{"format": "amdocc-check-baseline", "version": 1, "entries": [{"kernel": "k", "target": "t", "rule": 1}]}',
            "entry 0 has no string 'rule'",
        ),
        (
            '{"format": "amdocc-check-baseline", "version": 1, "entries": '
            '[{"kernel": "k", "target": "t", "rule": "lds"}, {"kernel": "k", "target": "t", "rule": "fast"}]}',
            f"entry 1: unknown rule 'fast' (rules: {', '.join(RULES)})",
        ),
    ],
)
def test_a_malformed_baseline_is_a_format_error_saying_what_is_wrong(tmp_path, doc, message):
    path = tmp_path / "b.json"
    path.write_text(doc)
    with pytest.raises(FormatError) as exc:
        baseline.read(path)
    assert str(exc.value).startswith(f"baseline {path}") and message in str(exc.value)


def test_a_baseline_that_cannot_be_read_or_written_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError) as exc:
        baseline.read(tmp_path / "none.json")
    assert exc.value.message == f"baseline {tmp_path / 'none.json'} does not exist (write it with update_baseline)"
    with pytest.raises(UsageError, match=r"cannot be read: "):
        baseline.read(tmp_path)  # a directory
    (tmp_path / "latin1.json").write_bytes(b'{"format": "\xff"}')
    with pytest.raises(UsageError, match=r"latin1\.json cannot be read: "):
        baseline.read(tmp_path / "latin1.json")
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(FormatError, match=r"empty\.json is not JSON: "):
        baseline.read(tmp_path / "empty.json")
    with pytest.raises(UsageError, match=r"cannot be written: "):
        baseline.write(tmp_path, [])


def test_the_baseline_file_is_sorted_one_entry_per_line_and_reads_back(tmp_path):
    # Sorted by target, then location, kernel, copy, then the rules' report order (RULES),
    # whatever the input order.
    entries = [
        baseline.Entry("b", "gfx942", "scratch", 16),
        baseline.Entry("a", "gfx950", "vgpr-spills", 1),
        baseline.Entry("b", "gfx942", "vgpr-spills", 2),
        baseline.Entry("a", "gfx942", "mode", "dynamic-vgpr"),
        baseline.Entry("b", "gfx942", "occupancy", 1.5),
    ]
    text = baseline.dumps(entries)
    lines = text.splitlines()
    assert lines[0] == '{"format": "amdocc-check-baseline", "version": 2,'
    assert lines[1] == ' "entries": ['
    assert lines[-1] == " ]}" and len(lines) == 2 + len(entries) + 1
    body = [json.loads(line.strip().rstrip(",")) for line in lines[2:-1]]
    assert [(e["target"], e["kernel"], e["rule"]) for e in body] == [
        ("gfx942", "a", "mode"),
        ("gfx942", "b", "vgpr-spills"),
        ("gfx942", "b", "scratch"),
        ("gfx942", "b", "occupancy"),
        ("gfx950", "a", "vgpr-spills"),
    ]
    assert list(body[0]) == ["kernel", "target", "rule", "value", "location", "copy"]
    path = tmp_path / "b.json"
    baseline.write(path, entries)
    assert path.read_text() == text and text.endswith("\n")
    assert sorted(baseline.read(path), key=str) == sorted(entries, key=str)
    baseline.write(path, [])
    assert json.loads(path.read_text()) == {"format": "amdocc-check-baseline", "version": 2, "entries": []}
    assert baseline.read(path) == []


def test_stale_entries_are_the_ones_in_scope_that_nothing_matched():
    gfx942 = lambda e: e.target == "gfx942"  # noqa: E731
    entries = [
        baseline.Entry("k", "gfx942", "scratch", 8),
        baseline.Entry("gone", "gfx942", "lds", 70000),
        baseline.Entry("other", "gfx950", "lds", 70000),
    ]
    found = [baseline.Entry("k", "gfx942", "scratch", 8), baseline.Entry("new", "gfx942", "mode", "dynamic-vgpr")]
    statuses, stale = baseline.classify(found, entries, gfx942)
    assert statuses == ["accepted", "new"] and stale == [entries[1]]
    # Updating keeps what this run did not look at (gfx950) and drops the stale gfx942 entry.
    assert sorted(e.kernel for e in baseline.updated(found, entries, gfx942)) == ["k", "new", "other"]
    # A string value (mode, launch) is never "worse": it is the same violation.
    statuses, _ = baseline.classify(
        [baseline.Entry("m", "t", "mode", "b")], [baseline.Entry("m", "t", "mode", "a")], gfx942
    )
    assert statuses == ["accepted"]


# --------------------------------------------------------------------------- the project file


@pytest.mark.parametrize("given,parsed", [("2", 2), ("1.5", 1.5), (4, 4), (0.25, 0.25), (3.0, 3)])
def test_a_floor_is_any_positive_number_of_waves(given, parsed):
    value = check_config.floor(given, "--min-occupancy")
    assert value == parsed and type(value) is type(parsed)


@pytest.mark.parametrize("given", ["0", 0, -1, "x", True, float("inf"), "nan", None, 21, "20.5", 100])
def test_anything_else_is_not_a_floor(given):
    # 20: the most wave slots per SIMD of any processor (targets.toml max_waves_per_simd of gfx10.1,
    # [L22]: llc-22's getMaxWavesPerEU), above which no kernel's occupancy can be.
    with pytest.raises(UsageError) as exc:
        check_config.floor(given, "min-occupancy in p.toml")
    assert exc.value.message == (
        "min-occupancy in p.toml must be a number of waves per SIMD above 0 and at most 20 "
        f"(the most wave slots any processor has), not {given!r}"
    )


@pytest.mark.parametrize("model, most", [("hip", 16), ("llvm", 20), ("hw", 20)])
def test_a_floor_above_what_the_model_can_answer_is_refused(model, most):
    # hip: HIP's MaxWavesPerSimd is 8 through gfx9 and 16 from gfx10 (CLR hip_platform.cpp, the
    # hip_max_waves_per_simd column); llvm/hw: getMaxWavesPerEU, 20 on gfx10.1 (llc-22 measured).
    assert check_config.resolve({"min-occupancy": most, "model": model}, {}, None)[0].min_occupancy == most
    with pytest.raises(UsageError) as exc:
        check_config.resolve({"min-occupancy": most + 0.5}, {"model": model}, "p.toml")
    assert exc.value.message == (
        f"--min-occupancy {most + 0.5:g} can never be met: the {model} model counts at most {most} waves "
        "per SIMD on any processor"
    )


def test_the_other_parsers_refuse_with_what_is_valid():
    assert check_config.model("llvm", "m") == "llvm"
    with pytest.raises(UsageError) as exc:
        check_config.model("HIP", "model in p.toml")
    assert exc.value.message == "model in p.toml must be one of hip, llvm, hw, not 'HIP'"
    assert check_config.boolean(False, "f") is False
    with pytest.raises(UsageError) as exc:
        check_config.boolean("true", "fail-on-stale in p.toml")
    assert exc.value.message == "fail-on-stale in p.toml must be true or false, not 'true'"
    assert str(check_config.path("a/b.json", "b")) == "a/b.json"
    for bad in ("", 3):
        with pytest.raises(UsageError) as exc:
            check_config.path(bad, "baseline in p.toml")
        assert exc.value.message == f"baseline in p.toml must be a file name, not {bad!r}"


def project(tmp_path, body, name="pyproject.toml"):
    path = tmp_path / name
    path.write_text(body)
    return path


def test_find_walks_up_to_the_nearest_file_with_the_table(tmp_path):
    project(tmp_path, "[tool.amdocc.check]\nmax-scratch = 8\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    project(tmp_path / "a", "[tool.other]\nx = 1\n")  # nearer, but without the table
    assert check_config.find(deep) == tmp_path / "pyproject.toml"
    project(deep, "[tool.amdocc.check]\n")
    assert check_config.find(deep) == deep / "pyproject.toml"


def test_read_parses_each_setting_and_places_a_relative_baseline_beside_the_file(tmp_path):
    config = project(tmp_path, '[tool.amdocc.check]\nrules = "spills"\nmax-vgpr-spills = "3"\nbaseline = "ci/b.json"\n')
    assert check_config.read(config) == {
        "rules": ("vgpr-spills", "sgpr-spills"),
        "max-vgpr-spills": 3,
        "baseline": tmp_path / "ci" / "b.json",
    }
    absolute = project(tmp_path, f'[tool.amdocc.check]\nbaseline = "{tmp_path / "x.json"}"\n', "abs.toml")
    assert check_config.read(absolute) == {"baseline": tmp_path / "x.json"}


@pytest.mark.parametrize(
    "body,message",
    [
        ("[tool.other]\n", "{config} has no [tool.amdocc.check] table"),
        ("[tool]\namdocc = {check = 3}\n", "{config}: [tool.amdocc.check] must be a table"),
        ("[tool]\namdocc = 3\n", "{config}: [tool.amdocc] must be a table"),  # was an AttributeError
        ("tool = 3\n", "{config} has no [tool.amdocc.check] table"),
        ("[tool.amdocc.check]\nspeed = 1\n", "{config}: [tool.amdocc.check] has no setting 'speed' (settings: "),
        (
            "[tool.amdocc.check]\nmax-scratch = -1\n",
            'max-scratch in {config} must be a byte count >= 0 (an integer, or text such as "1K"), not -1',
        ),
        ("[tool.amdocc.check\n", "{config} is not valid TOML: "),
    ],
)
def test_read_refuses_a_file_naming_it(tmp_path, body, message):
    config = project(tmp_path, body)
    with pytest.raises(UsageError) as exc:
        check_config.read(config)
    assert exc.value.message.startswith(message.format(config=config))
    with pytest.raises(UsageError, match=r"cannot be read: "):
        check_config.read(tmp_path / "missing.toml")


def test_resolve_merges_the_flags_and_the_file():
    settings, rest = check_config.resolve({"max-scratch": 8}, {"baseline": Path("b.json"), "fail-on-stale": True}, "p")
    assert settings.rules == ("vgpr-spills", "sgpr-spills", "scratch", "launch", "lds", "mode")
    assert settings.max_scratch == 8 and rest == {"baseline": Path("b.json"), "fail_on_stale": True}
    # A floor alone turns the occupancy rule on, in report order.
    settings, _ = check_config.resolve({"min-occupancy": 2}, {}, None)
    assert settings.rules == tuple(r for r in RULES if r != "spills-in-loops") and settings.min_occupancy == 2
    # The same value in both places agrees; a baseline is compared as the file it names.
    settings, _ = check_config.resolve({"max-scratch": 8}, {"max-scratch": 8}, "p")
    assert settings.max_scratch == 8
    check_config.resolve({"baseline": Path("x/../b.json")}, {"baseline": Path("b.json").resolve()}, "p")


def test_the_command_line_overrides_the_file_and_says_so():
    # The convention of ruff, pytest and mypy: a flag replaces the file's value of its setting.
    flags = {"rules": ("scratch", "lds"), "baseline": Path("a.json"), "max-scratch": 64}
    config = {"rules": ("lds",), "baseline": Path("b.json"), "max-scratch": 0, "max-vgpr-spills": 3}
    settings, rest = check_config.resolve(flags, config, "p.toml")
    assert settings.rules == ("scratch", "lds") and settings.max_scratch == 64 and rest["baseline"] == Path("a.json")
    assert check_config.overrides(flags, config, "p.toml") == [
        "--baseline a.json overrides baseline = b.json in p.toml",
        "--max-scratch 64 overrides max-scratch = 0 in p.toml",
        "--rules scratch,lds overrides rules = lds in p.toml",
        "max-vgpr-spills = 3 in p.toml is not used: --rules scratch,lds turns off the vgpr-spills rule",
    ]
    assert settings.max_vgpr_spills == 0  # the file's threshold of a rule turned off is not applied
    assert check_config.overrides({"max-scratch": 8}, {"max-scratch": 8}, "p.toml") == []  # agreeing: nothing


@pytest.mark.parametrize("text, expected", [("1K", 1024), ("64", 64), ("0x40", 64), ("2 MiB", 2 << 20), (512, 512)])
def test_config_byte_settings_take_the_spellings_of_the_flags(text, expected):
    # --max-scratch 1K is 1024 bytes (cli/args.ByteSize); max-scratch = "1K" in the file is the same.
    assert check_config.byte_count(text, "max-scratch in p.toml") == expected
    assert check_config.SETTINGS["max-scratch"][0] is check_config.byte_count
    if expected <= 320 << 10:  # dynamic LDS: up to the most any processor gives a workgroup (gfx1250)
        assert check_config.lds_size(text, "dynamic-lds in p.toml") == expected


@pytest.mark.parametrize("text", ["1e3", "-1", "1.5K", True, 1.0, "lots"])
def test_config_byte_settings_refuse_what_the_flags_refuse(text):
    with pytest.raises(UsageError, match=r"^max-scratch in p.toml must be a byte count >= 0"):
        check_config.byte_count(text, "max-scratch in p.toml")


@pytest.mark.parametrize(
    "flags,config,message",
    [
        (
            {},
            {"rules": ("scratch",), "dynamic-lds": 4},
            "dynamic-lds in p.toml applies to the occupancy and launch and lds rule, which is off by rules in "
            "p.toml (rules on: scratch)",
        ),
        (
            {"model": "llvm"},
            {},
            "--model applies to the occupancy rule, which is off (rules on: vgpr-spills, sgpr-spills, scratch, "
            "launch, lds, mode)",
        ),
        (
            {},
            {"rules": ("occupancy",)},
            "the occupancy rule (rules in p.toml) needs a floor: --min-occupancy W (waves per SIMD)",
        ),
    ],
)
def test_resolve_refuses_contradictions_and_ignored_thresholds(flags, config, message):
    with pytest.raises(UsageError) as exc:
        check_config.resolve(flags, config, "p.toml")
    assert exc.value.message == message


# --------------------------------------------------------------------------- each rule's words


def meta(name: str) -> dict:
    from test_check import kernels_of

    return kernels_of(LIB1)[name]


@pytest.mark.parametrize("allowed", [15, 16])
def test_a_spill_count_is_held_against_the_allowance_at_most(allowed):
    from amdocc.policy.checks import spill_rule

    n = meta("k_vgpr_spill")[".vgpr_spill_count"]  # 16 by llvm-readelf-22
    v = spill_rule(kernel("k_vgpr_spill"), "vgpr-spills", allowed)
    if allowed >= n:
        assert v is None
    else:
        assert (v.rule, v.value, v.limit, v.message) == (
            "vgpr-spills",
            n,
            allowed,
            f"{n} VGPR spills (allowed: {allowed})",
        )
    s = meta("k_sgpr_spill")[".sgpr_spill_count"]  # 28
    v = spill_rule(kernel("k_sgpr_spill"), "sgpr-spills", s - 1)
    assert (v.rule, v.value, v.limit, v.message) == ("sgpr-spills", s, s - 1, f"{s} SGPR spills (allowed: {s - 1})")
    assert spill_rule(kernel("k_sgpr_spill"), "vgpr-spills", 0) is None  # it spills SGPRs only


def test_one_spill_is_singular():
    from amdocc.policy.checks import spill_rule

    v = spill_rule(kernel("k_vgpr_spill"), "vgpr-spills", 0)
    assert v.message.startswith("16 VGPR spills")
    one = dataclasses_replace_spills(kernel("k_vgpr_spill"), (0, 1))
    assert spill_rule(one, "vgpr-spills", 0).message == "1 VGPR spill (allowed: 0)"


def dataclasses_replace_spills(k, spills):
    """The kernel with other spill counts (sgpr, vgpr), as a code object without them would give."""
    return dataclasses.replace(k, resources=dataclasses.replace(k.resources, spills=spills))


def test_spill_counts_a_code_object_does_not_carry_are_not_evaluated():
    from amdocc.policy.checks import spill_rule

    k = dataclasses_replace_spills(kernel("k_clean"), (None, None))
    assert spill_rule(k, "vgpr-spills", 0) == NotEvaluated("vgpr-spills", "no .vgpr_spill_count in the metadata")
    assert spill_rule(k, "sgpr-spills", 0) == NotEvaluated("sgpr-spills", "no .sgpr_spill_count in the metadata")


def test_scratch_is_held_against_its_allowance_and_a_dynamic_stack_always_fails():
    from amdocc.policy.checks import scratch_rule

    n = meta("k_scratch")[".private_segment_fixed_size"]  # 260
    assert scratch_rule(kernel("k_scratch"), n) is None
    v = scratch_rule(kernel("k_scratch"), n - 1)
    assert (v.rule, v.value, v.limit, v.message) == (
        "scratch",
        n,
        n - 1,
        f"{n} B of scratch per work-item (allowed: {n - 1} B)",
    )
    d = meta("k_dynamic_stack")[".private_segment_fixed_size"]  # 16, and .uses_dynamic_stack: true
    v = scratch_rule(kernel("k_dynamic_stack"), 1 << 20)
    assert (v.value, v.message) == (
        d,
        f"{d} B of scratch per work-item and a dynamic stack, whose size is known only at run time "
        f"(allowed: {1 << 20} B)",
    )


def test_lds_is_held_against_the_processors_workgroup_limit():
    from amdocc.policy.checks import lds_rule
    from amdocc.targets import get_target
    from test_check import LDS, kernels_of, llc_lds_limit

    limit, gfx942 = llc_lds_limit(), get_target("gfx942")
    at = kernel("k_lds_at_limit", LDS)
    assert kernels_of(LDS)["k_lds_at_limit"][".group_segment_fixed_size"] == limit
    assert lds_rule(at, gfx942, 0) is None
    v = lds_rule(at, gfx942, 1)
    assert (v.rule, v.value, v.limit) == ("lds", limit + 1, limit)
    assert v.message == f"{limit} B static LDS + 1 B dynamic exceeds the {limit} B a gfx942 workgroup may use"
    v = lds_rule(kernel("k_lds_over", LDS), gfx942, 0)
    assert v.message == f"98304 B static LDS exceeds the {limit} B a gfx942 workgroup may use"


def test_the_occupancy_message_names_the_model_its_limiter_and_the_floor():
    from amdocc.policy.checks import occupancy_rule

    k = kernel("k_launch_miss")  # 3 waves per SIMD by LLVM; no 1024-thread workgroup fits
    occ = amdocc.occupancy(k, block_size=256, model="llvm")
    assert occ.waves_per_simd == 3
    assert occupancy_rule(occ, 3, 256, "given") is None
    v = occupancy_rule(occ, 3.5, 256, "given")
    assert (v.rule, v.value, v.limit) == ("occupancy", 3, 3.5)
    assert v.message == "3 waves per SIMD at 256 threads (given; llvm model, limited by vgpr), below the floor of 3.5"
    zero = amdocc.occupancy(k, block_size=1024, model="hip")
    v = occupancy_rule(zero, 1, 1024, ".max_flat_workgroup_size")
    assert v.value == 0 and v.message.startswith(
        "0 waves per SIMD at 1024 threads (.max_flat_workgroup_size; hip model"
    )


@pytest.mark.parametrize(
    "reqd,expected",
    [([64, 4, 1], (256, ".reqd_workgroup_size")), ([], None), ([64, 0, 1], None), ([64.0, 4, 1], None), ("64", None)],
)
def test_the_declared_block_is_the_product_of_a_valid_reqd_size_else_the_max_flat_size(reqd, expected):
    from amdocc.policy.checks import declared_block

    k = kernel("k_reqd")  # .reqd_workgroup_size [64, 4, 1], .max_flat_workgroup_size 1024 (llvm-readelf-22)
    assert declared_block(k) == (256, ".reqd_workgroup_size")
    fake = dataclasses.replace(k, metadata={**k.metadata, ".reqd_workgroup_size": reqd})
    assert declared_block(fake) == (expected or (1024, ".max_flat_workgroup_size"))
    none = dataclasses.replace(
        fake, metadata={}, resources=dataclasses.replace(k.resources, max_flat_workgroup_size=None)
    )
    assert declared_block(none) == (None, "no .reqd_workgroup_size or .max_flat_workgroup_size in the metadata")


# --------------------------------------------------------------------------- the mode rule

DYNAMIC_VGPR = (
    "the descriptor enables dynamic-VGPR mode: waves allocate VGPRs at run time, so no static occupancy applies"
)


def test_each_reason_a_kernel_cannot_be_modelled_is_named():
    from amdocc.policy.checks import mode_problems, mode_rule
    from amdocc.targets import get_target

    # COMPUTE_PGM_RSRC2 bit 6 set after linking (tests/data/fixtures/check/manifest.json).
    dvgpr = kernel("k_dynamic_vgpr", C / "check_dvgpr_gfx1200.hsaco")
    assert mode_problems(dvgpr, get_target("gfx1200")) == [("dynamic-vgpr", DYNAMIC_VGPR)]
    # gfx942 (CDNA3) runs wave64 only; llvm-readelf-22 gives this gfx1030 kernel .wavefront_size 32.
    (co,) = amdocc.load(FIXTURES / "elf" / "gfx1030_w32_wgp_cov4.hsaco")
    wave32 = co.kernels[0]
    assert wave32.resources.wavefront_size == 32
    assert mode_problems(wave32, get_target("gfx942")) == [
        ("unsupported-wave", "wave32 does not run on gfx942 (it runs wave64)")
    ]
    assert mode_problems(wave32, get_target("gfx1030")) == []
    assert mode_problems(kernel("k_clean"), None) == [
        ("unknown-processor", "processor gfx942 is not in tables/targets.toml")
    ]
    # Two reasons: both codes, both explanations.
    v = mode_rule(mode_problems(dvgpr, get_target("gfx942")))
    assert (v.rule, v.value, v.limit) == ("mode", "dynamic-vgpr,unsupported-wave", None)
    assert v.message == f"{DYNAMIC_VGPR}; wave32 does not run on gfx942 (it runs wave64)"
    assert mode_rule([]) is None


def test_rule_names_and_shorthands():
    from amdocc.policy.checks import expand_rules, worse

    assert expand_rules(["mode", "spills", "lds", "vgpr-spills"]) == ("vgpr-spills", "sgpr-spills", "lds", "mode")
    assert expand_rules(["all"]) == RULES
    with pytest.raises(UsageError) as exc:
        expand_rules(["lds", "speed"])
    assert exc.value.message == f"unknown rule 'speed' (rules: {', '.join(RULES)}; or spills, defaults, all)"
    # Only numbers compare; a bool is not a count.
    assert worse("scratch", 9, 8) and not worse("scratch", 8, 8) and not worse("scratch", True, 0)
    assert worse("occupancy", 1.5, 2) and not worse("occupancy", 2, 2)
    assert not worse("scratch", "9", 8) and not worse("scratch", 9, None)
    assert Settings().as_dict() == {
        "rules": ("vgpr-spills", "sgpr-spills", "scratch", "launch", "lds", "mode"),
        "max_vgpr_spills": 0,
        "max_sgpr_spills": 0,
        "max_scratch": 0,
        "min_occupancy": None,
        "block": None,
        "dynamic_lds": 0,
        "model": "hip",
    }


def test_dynamic_lds_counts_in_the_occupancy_and_launch_rules():
    # k_lds_at_limit uses exactly gfx942's 65536 B (llc-22's limit): with one byte of dynamic LDS
    # no workgroup fits, so the floor sees 0 waves and HIP fits no 256-thread workgroup.
    from test_check import LDS

    k = kernel("k_lds_at_limit", LDS)
    settings = Settings(rules=("occupancy", "launch"), min_occupancy=1, dynamic_lds=1)
    verdict = evaluate(k, settings, declared=(256, ".max_flat_workgroup_size"))
    occupancy, launch = verdict.violations
    assert (occupancy.rule, occupancy.value) == ("occupancy", 0)
    assert launch.rule == "launch" and "hip" in launch.value.split(",")
    clean = evaluate(k, dataclasses.replace(settings, dynamic_lds=0), declared=(256, ".max_flat_workgroup_size"))
    assert clean.violations == [] and clean.not_evaluated == []


def test_an_answer_that_is_an_error_is_zero_and_says_so():
    # CLR (rocm-6.2.2 hipamd/src/hip_platform.cpp, ihipOccupancyMaxActiveBlocksPerMultiprocessor):
    # "if (inputBlockSize <= 0) return hipErrorInvalidValue" — an error, with no limiter to name.
    from amdocc.policy.checks import occupancy_rule

    k = kernel("k_clean")
    hip = amdocc.occupancy(k, block_size=0, model="hip")
    assert (hip.error, hip.limiter) == ("hipErrorInvalidValue", None)
    v = launch_rule({"hip": hip}, 0, "given")
    assert v.message == "a 0-thread workgroup (given) does not fit on a CU: hip answers hipErrorInvalidValue"
    v = occupancy_rule(hip, 1, 0, "given")
    assert (v.value, v.message) == (
        0,
        "0 waves per SIMD at 0 threads (given; hip answers hipErrorInvalidValue), below the floor of 1",
    )
    # A model that names its limit says it; one that answers an error says the error.
    llvm = amdocc.occupancy(k, block_size=0, model="llvm")
    assert launch_rule({"hip": hip, "llvm": llvm}, 0, "given").message.endswith(
        f"hip answers hipErrorInvalidValue; llvm answers 0 (limited by {llvm.limiter})"
    )


def test_a_kernel_without_a_scratch_size_is_not_evaluated():
    from amdocc.policy.checks import scratch_rule

    k = kernel("k_scratch")
    k = dataclasses.replace(k, resources=dataclasses.replace(k.resources, scratch=None))
    assert scratch_rule(k, 0) == NotEvaluated("scratch", "no .private_segment_fixed_size in the metadata or descriptor")


@pytest.mark.llvm22
def test_a_device_is_judged_as_its_processor(tmp_path):
    from test_check import LDS, llc_lds_limit_of

    # k_lds_over has 98304 B of static LDS: over gfx942's per-workgroup limit, within gfx950's (both
    # as llc-22 states them). MI355X is a gfx950 (tables/devices.toml), MI300X a gfx942.
    assert llc_lds_limit_of("gfx942", tmp_path) < 98304 <= llc_lds_limit_of("gfx950", tmp_path)
    k = kernel("k_lds_over", LDS)
    settings = Settings(rules=("lds",))
    assert evaluate(k, settings, where={"device": "MI355X", "what_if": True}).violations == []
    (v,) = evaluate(k, settings, where={"device": "MI300X"}).violations
    assert (v.rule, v.value) == ("lds", 98304)
    assert evaluate(k, settings, where={"target": "gfx950", "what_if": True}).violations == []


@pytest.mark.parametrize(
    "setting,value,rules",
    [
        ("max-vgpr-spills", 3, ("vgpr-spills",)),
        ("max-sgpr-spills", 3, ("sgpr-spills",)),
        ("max-scratch", 64, ("scratch",)),
        ("block", 256, ("occupancy",)),
        ("model", "llvm", ("occupancy",)),
        ("dynamic-lds", 512, ("occupancy", "launch", "lds")),
    ],
)
def test_each_threshold_applies_to_its_own_rules_only(setting, value, rules):
    for rule in rules:
        floor = {"min-occupancy": 1} if rule == "occupancy" else {}
        settings, rest = check_config.resolve({setting: value, **floor}, {"rules": (rule,)}, "p.toml")
        assert getattr(settings, check_config.attribute(setting)) == value and rest == {}
    others = tuple(r for r in RULES if r not in rules and r != "occupancy")
    with pytest.raises(UsageError) as exc:
        check_config.resolve({setting: value}, {"rules": others}, "p.toml")
    assert exc.value.message == (
        f"--{setting} applies to the {' and '.join(rules)} rule, which is off by rules in p.toml "
        f"(rules on: {', '.join(others)})"
    )


@pytest.mark.parametrize(
    "setting,text,wanted",
    [
        ("max-vgpr-spills", '"x"', "must be an integer >= 0"),
        ("max-sgpr-spills", "-1", "must be an integer >= 0"),
        ("max-scratch", "1.5", 'must be a byte count >= 0 (an integer, or text such as "1K")'),
        (
            "min-occupancy",
            "0",
            "must be a number of waves per SIMD above 0 and at most 20 (the most wave slots any processor has)",
        ),
        ("block", "0", "must be an integer from 1 to 1024"),
        ("model", '"fast"', "must be one of hip, llvm, hw"),
        ("dynamic-lds", "-1", 'must be LDS bytes per workgroup from 0 to 327680 (an integer, or text such as "16K")'),
        ("rules", "3", "must be a list of rule names"),
        ("baseline", '""', "must be a file name"),
        ("fail-on-stale", '"yes"', "must be true or false"),
    ],
)
def test_each_setting_in_the_file_is_parsed_by_its_own_rule(tmp_path, setting, text, wanted):
    config = project(tmp_path, f"[tool.amdocc.check]\n{setting} = {text}\n")
    with pytest.raises(UsageError) as exc:
        check_config.read(config)
    assert exc.value.message.startswith(f"{setting} in {config} {wanted}, not ")


def test_the_occupancy_floor_at_a_given_block_names_it():
    # k_launch_miss at 256 threads by hand (HIP, docs/hip-occupancy.md §2): 512 VGPRs / alignUp(132, 8) = 3
    # waves per SIMD; 4-wave workgroups: 12 waves per CU -> 3 workgroups, 3 waves per SIMD < 4.
    settings = Settings(rules=("occupancy",), min_occupancy=4, block=256)
    (v,) = evaluate(kernel("k_launch_miss"), settings, declared=(1024, ".max_flat_workgroup_size")).violations
    assert (v.rule, v.value, v.limit) == ("occupancy", 3, 4)
    assert v.message == "3 waves per SIMD at 256 threads (given; hip model, limited by vgpr), below the floor of 4"
    # Without a given block the declared one is used, and named.
    (v,) = evaluate(
        kernel("k_launch_miss"), dataclasses.replace(settings, block=None), declared=(1024, ".max_flat_workgroup_size")
    ).violations
    assert v.value == 0 and v.message.startswith("0 waves per SIMD at 1024 threads (.max_flat_workgroup_size; ")


def test_a_kernel_without_resource_counts_cannot_be_modelled():
    from amdocc.policy.checks import mode_problems

    k = kernel("k_clean")  # a copy: nothing cached from the complete kernel
    k = dataclasses.replace(k, resources=dataclasses.replace(k.resources, vgprs=None, lds=None))
    assert mode_problems(k, k.target) == [
        ("no-resources", "kernel k_clean: no VGPR count, LDS size in its metadata or descriptor")
    ]
    settings = Settings(rules=("occupancy", "launch", "mode"), min_occupancy=1)
    verdict = evaluate(k, settings, declared=(256, ".max_flat_workgroup_size"))
    assert [(v.rule, v.value) for v in verdict.violations] == [("mode", "no-resources")]
    assert [n.rule for n in verdict.not_evaluated] == ["occupancy", "launch"]


def test_a_baseline_is_read_as_utf8_whatever_the_locale(tmp_path):
    # JSON text is UTF-8 (RFC 8259 §8.1). Under the C locale without UTF-8 mode Python's default
    # text encoding is ASCII, so a kernel name outside ASCII shows whether the encoding is explicit.
    import os
    import subprocess
    import sys

    path = tmp_path / "b.json"
    doc = {"format": baseline.FORMAT, "version": baseline.VERSION, "entries": []}
    doc["entries"].append({"kernel": "k\u00e9", "target": "gfx942", "rule": "scratch", "value": 4})
    path.write_bytes(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    env = {**os.environ, "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    code = "import sys; from amdocc.policy import baseline; print(ascii(baseline.read(sys.argv[1])[0].kernel))"
    run = subprocess.run([sys.executable, "-c", code, str(path)], env=env, capture_output=True, text=True)
    assert (run.returncode, run.stdout.strip()) == (0, "'k\\xe9'"), run.stderr


def test_launch_is_judged_at_the_declared_size_on_the_processor_asked():
    # k_launch_miss fits 3 workgroups of 256 threads and none of 1024 (HIP by hand, test_check).
    k = kernel("k_launch_miss")
    settings = Settings(rules=("launch",))
    assert evaluate(k, settings, declared=(256, ".reqd_workgroup_size")).violations == []
    (v,) = evaluate(k, settings, declared=(1024, ".max_flat_workgroup_size")).violations
    assert v.value == "hip,llvm,hw"


@pytest.mark.llvm22
def test_occupancy_and_launch_are_judged_on_the_processor_asked(tmp_path):
    from test_check import LDS, llc_lds_limit_of

    # 98304 B of static LDS: no workgroup on gfx942, one on gfx950 (llc-22's limits).
    assert llc_lds_limit_of("gfx942", tmp_path) < 98304 <= llc_lds_limit_of("gfx950", tmp_path)
    k = kernel("k_lds_over", LDS)
    settings = Settings(rules=("occupancy", "launch"), min_occupancy=1)
    declared = (256, ".max_flat_workgroup_size")
    assert evaluate(k, settings, where={"target": "gfx950", "what_if": True}, declared=declared).violations == []
    assert [v.rule for v in evaluate(k, settings, declared=declared).violations] == ["occupancy", "launch"]


def test_a_kernel_without_a_static_lds_size_is_not_evaluated():
    from amdocc.policy.checks import lds_rule
    from amdocc.targets import get_target

    k = kernel("k_clean")
    k = dataclasses.replace(k, resources=dataclasses.replace(k.resources, lds=None))
    assert lds_rule(k, get_target("gfx942"), 0) == NotEvaluated(
        "lds", "no static LDS size in the metadata or descriptor"
    )


def test_a_baseline_is_opened_as_utf8_in_process(tmp_path, monkeypatch):
    # The C-locale test above runs in a child process, where a mutation tool cannot see it; this
    # one watches the same fact here: the baseline is decoded by an explicit UTF-8 codec.
    import codecs
    import pathlib

    path = write_baseline(tmp_path, [])
    real_read_text = pathlib.Path.read_text
    seen = []

    def spy_read_text(self, encoding=None, errors=None):
        seen.append(encoding)
        return real_read_text(self, encoding=encoding, errors=errors)

    monkeypatch.setattr(pathlib.Path, "read_text", spy_read_text)
    assert baseline.read(path) == []
    assert len(seen) == 1 and seen[0] is not None and codecs.lookup(seen[0]).name == "utf-8"
