"""``amdocc check --budget``: per-kernel budget expressions over a kernel's record.

Expected values come from LLVM's own tools on the kernels checked: the metadata notes as
``llvm-readelf-22 --notes`` printed them (``tests/data/fixtures/check/*.readelf.txt``), and LLVM's
``; Occupancy:`` from the same build's ``-S`` listing (``*.kernel-info.txt``); for the HIP model,
the answers worked out by hand in test_triton.HIP_BY_HAND at the launch a Triton cache records.
"""

from __future__ import annotations

import json
import operator
import textwrap

import jsonschema
import pytest

from amdocc.cli.main import main
from amdocc.policy import budgets
from test_check import LDS, LIB1, SCHEMAS, SIMDS_PER_CU, declared_size, kernels_of, llvm_occupancy

NOTES = kernels_of(LIB1)
OCCUPANCY = llvm_occupancy(LIB1)
OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def check(capsys, *argv):
    code = main(["check", "--no-config", "--json", "--rules", "mode", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def values(doc, rule):
    return {v["kernel"]: v["value"] for v in doc["violations"] if v["rule"] == rule}


def llvm_waves_at_declared(name: str) -> int:
    """LLVM's waves per SIMD at the declared workgroup: its '; Occupancy:' when that many waves
    fit, else 0 (the workgroup's waves, spread over the CU's SIMDs, exceed what LLVM allows)."""
    k = NOTES[name]
    waves = -(-declared_size(k) // k[".wavefront_size"])  # ceil
    waves_per_simd_needed = -(-waves // SIMDS_PER_CU)
    return OCCUPANCY[name] if waves_per_simd_needed <= OCCUPANCY[name] else 0


# Each field against the notes: "FIELD<0" fails on every kernel, reporting the kernel's value.
NOTE_FIELDS = {
    "vgprs": lambda k: k[".vgpr_count"],
    "agprs": lambda k: k[".agpr_count"],
    "sgprs": lambda k: k[".sgpr_count"],
    "vgpr_spills": lambda k: k[".vgpr_spill_count"],
    "sgpr_spills": lambda k: k[".sgpr_spill_count"],
    "spills": lambda k: k[".vgpr_spill_count"] + k[".sgpr_spill_count"],
    "scratch": lambda k: k[".private_segment_fixed_size"],
    "static_lds": lambda k: k[".group_segment_fixed_size"],
    "lds": lambda k: k[".group_segment_fixed_size"],
    "block": declared_size,
}


@pytest.mark.parametrize("field", NOTE_FIELDS)
def test_each_count_field_is_the_notes_value(capsys, field):
    code, doc, _ = check(capsys, LIB1, "--budget", f"{field}<0")
    assert code == 1
    assert values(doc, f"budget:{field}<0") == {n: NOTE_FIELDS[field](k) for n, k in NOTES.items()}


def test_lds_counts_the_dynamic_lds_and_static_lds_does_not(capsys):
    _, doc, _ = check(capsys, LDS, "--dynamic-lds", 1000, "--budget", "lds<0, static_lds<0")
    notes = kernels_of(LDS)
    assert values(doc, "budget:lds<0") == {n: k[".group_segment_fixed_size"] + 1000 for n, k in notes.items()}
    assert values(doc, "budget:static_lds<0") == {n: k[".group_segment_fixed_size"] for n, k in notes.items()}


def test_block_and_dynamic_lds_serve_budgets_and_are_refused_without_one(capsys):
    _, doc, _ = check(capsys, LIB1, "--block", 64, "--budget", "block<0")
    assert values(doc, "budget:block<0") == dict.fromkeys(NOTES, 64)
    assert all("(given)" not in v["message"] for v in doc["violations"])  # block takes no model
    for flag, value in (("--block", "64"), ("--dynamic-lds", "512")):
        assert main(["check", "--no-config", "--rules", "mode", flag, value, str(LIB1)]) == 2
        assert f"{flag} applies to the " in capsys.readouterr().err


def test_waves_per_simd_llvm_is_llvms_occupancy_at_the_declared_size(capsys):
    _, doc, _ = check(capsys, LIB1, "--budget", "waves_per_simd[llvm]<0; *: waves_per_simd[llvm]>=100")
    assert values(doc, "budget:waves_per_simd[llvm]>=100") == {n: llvm_waves_at_declared(n) for n in NOTES}
    assert values(doc, "budget:waves_per_simd[llvm]<0") == {n: llvm_waves_at_declared(n) for n in NOTES}


def test_launchable_and_dynamic_stack_booleans(capsys):
    _, doc, _ = check(capsys, LIB1, "--budget", "launchable, launchable[llvm]==true, dynamic_stack==false")
    unlaunchable = {n for n in NOTES if llvm_waves_at_declared(n) == 0}
    assert unlaunchable == {"k_launch_miss"}  # the premise: one kernel's declared size does not fit
    assert values(doc, "budget:launchable") == dict.fromkeys(unlaunchable, "false")
    assert values(doc, "budget:launchable[llvm]==true") == dict.fromkeys(unlaunchable, "false")
    stack = {n for n, k in NOTES.items() if k[".uses_dynamic_stack"]}
    assert stack == {"k_dynamic_stack"}
    assert values(doc, "budget:dynamic_stack==false") == dict.fromkeys(stack, "true")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("delta", [-1, 0, 1])
def test_each_operator_at_its_boundary(capsys, op, delta):
    """``vgprs OP v+delta`` fails exactly on the kernels where the notes' count makes it false."""
    limit = NOTES["k_vgpr_spill"][".vgpr_count"] + delta  # 64 + delta
    code, doc, _ = check(capsys, LIB1, "--budget", f"vgprs{op}{limit}")
    want = {n: k[".vgpr_count"] for n, k in NOTES.items() if not OPS[op](k[".vgpr_count"], limit)}
    assert values(doc, f"budget:vgprs{op}{limit}") == want
    assert code == (1 if want else 0)


def test_a_scope_limits_its_comparisons_to_matching_kernels(capsys):
    _, doc, _ = check(capsys, LIB1, "--budget", "k_*_spill: spills==0; k_clean: vgprs<24; k_low*, k_reqd:vgprs<0")
    spilling = {n: NOTE_FIELDS["spills"](k) for n, k in NOTES.items() if n.endswith("_spill")}
    assert values(doc, "budget:spills==0") == spilling == {"k_vgpr_spill": 16, "k_sgpr_spill": 28}
    assert values(doc, "budget:vgprs<24") == {"k_clean": 24}
    # "k_low*, k_reqd" is one glob containing ", " (a comma before the colon is part of the pattern)
    assert values(doc, "budget:vgprs<0") == {}


def test_several_budgets_and_one_kernel_per_comparison(capsys):
    code, doc, _ = check(capsys, LIB1, "--budget", "vgprs<=128", "--budget", "k_launch_miss: vgprs<=128, sgprs<=6")
    assert code == 1
    assert values(doc, "budget:vgprs<=128") == {"k_launch_miss": 132, "k_low_occupancy": 160, "k_reqd": 132}
    assert values(doc, "budget:sgprs<=6") == {}


def test_hip_waves_at_a_triton_launch(capsys, tmp_path_factory):
    """waves_per_simd[hip] and blocks_per_cu[hip] at the cache's recorded launch: HIP by hand."""
    from triton_cache_fixture import HIP_BY_HAND, session_cache

    cache, made = session_cache(tmp_path_factory)
    _, doc, _ = check(capsys, cache, "--budget", "blocks_per_cu[hip]>=99, waves_per_simd[hip]>=99")
    where = {str(v["hsaco"]): k for k, v in made.items()}
    blocks = {where[v["path"]]: v["value"] for v in doc["violations"] if v["rule"] == "budget:blocks_per_cu[hip]>=99"}
    waves = {where[v["path"]]: v["value"] for v in doc["violations"] if v["rule"] == "budget:waves_per_simd[hip]>=99"}
    assert blocks == {c: h["blocks"] for c, h in HIP_BY_HAND.items()}
    # waves per SIMD = blocks × waves per block / 4 SIMDs per CU (per WGP on gfx1100: 4 SIMD32s)
    assert waves == {c: h["blocks"] * (h["B"] // h["wave"]) / 4 for c, h in HIP_BY_HAND.items()}
    assert all("triton-cache launch" in v["message"] for v in doc["violations"])


def test_config_budgets_equal_the_flags(capsys, tmp_path):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(
        textwrap.dedent(
            """
            [tool.amdocc.check]
            rules = ["mode"]
            budget = ["spills==0", "k_clean: vgprs<24"]
            """
        )
    )
    code = main(["check", "--json", "--config", str(cfg), str(LIB1)])
    from_file = json.loads(capsys.readouterr().out)
    _, from_flags, _ = check(capsys, LIB1, "--budget", "spills==0", "--budget", "k_clean: vgprs<24")
    assert code == 1
    assert from_file["violations"] == from_flags["violations"]
    assert from_file["settings"]["budgets"] == ["spills==0", "k_clean: vgprs<24"]
    cfg.write_text('[tool.amdocc.check]\nbudget = "vgprz<1"\n')
    assert main(["check", "--config", str(cfg), str(LIB1)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"budget in {cfg}" in err[0] and "unknown field 'vgprz'" in err[0]


# Byte fields take what every byte option takes (--max-scratch, --dynamic-lds): a K/KiB, M/MiB or
# G/GiB suffix in powers of 1024, attached or apart, or 0x hex. Worked by hand: 64 x 1024 = 65536,
# 96 x 1024 = 98304, 160 x 1024 = 163840, 0x100 = 256, 1 x 1024 x 1024 = 1048576.
BYTE_SPELLINGS = [
    ("64K", 65536),
    ("64KiB", 65536),
    ("64 kib", 65536),
    ("96K", 98304),
    ("160KiB", 163840),
    ("0x100", 256),
    ("1M", 1048576),
    ("2 MiB", 2097152),
    ("1G", 1 << 30),
]


@pytest.mark.parametrize("spelling,byte_count", BYTE_SPELLINGS)
def test_byte_fields_take_byte_suffixes_as_the_byte_options_do(spelling, byte_count):
    for field in ("lds", "static_lds", "scratch"):
        ((comparison,),) = [g.comparisons for g in budgets.parse(f"{field}<={spelling}")]
        # One rule name however it is spelled, so a baseline entry of 65536 accepts 64K.
        assert comparison.rule == f"budget:{field}<={byte_count}" and comparison.value == byte_count


def test_a_byte_suffix_budget_judges_the_notes_lds_as_its_byte_count(capsys):
    """k_lds_at_limit has 65536 bytes of static LDS and k_lds_over 98304 (llvm-readelf-22)."""
    notes = kernels_of(LDS)
    code, doc, _ = check(capsys, LDS, "--budget", "static_lds<64K", "--budget", "static_lds<=96KiB")
    assert code == 1
    over = {n: k[".group_segment_fixed_size"] for n, k in notes.items() if k[".group_segment_fixed_size"] >= 65536}
    assert values(doc, "budget:static_lds<65536") == over and over
    assert values(doc, "budget:static_lds<=98304") == {}  # 96 KiB holds both
    # The same run with the byte counts written out gives the same verdicts.
    _, plain, _ = check(capsys, LDS, "--budget", "static_lds<65536", "--budget", "static_lds<=98304")
    assert plain["violations"] == doc["violations"]


def test_a_byte_suffix_budget_in_pyproject_is_the_flags(capsys, tmp_path):
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.amdocc.check]\nrules = ["mode"]\nbudget = ["scratch<=0x100", "lds < 1K"]\n')
    code = main(["check", "--json", "--config", str(cfg), str(LIB1)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    scratch = {n: k[".private_segment_fixed_size"] for n, k in NOTES.items() if k[".private_segment_fixed_size"] > 256}
    assert values(doc, "budget:scratch<=256") == scratch and scratch


@pytest.mark.parametrize(
    "budget,message",
    [
        ("vgprs<=64K", "column 8: vgprs is a count, not bytes: '64K' is not a number (byte suffixes such as 64K"),
        ("waves_per_simd[hip]>=2K", "column 22: waves_per_simd[hip] is a count, not bytes"),
        ("lds<=1.5K", "column 6: lds is a byte count: '1.5K' is not one"),
        ("lds<=64Q", "column 6: lds is a byte count: '64Q' is not one"),
        ("vgprs<=64 K", "column 11: expected ',' or the end of the budget, found 'K'"),
    ],
)
def test_a_byte_suffix_where_no_bytes_are_counted_exits_2(capsys, budget, message):
    code = main(["check", "--no-config", "--budget", budget, str(LIB1)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert message in err.strip().splitlines()[-1], err


@pytest.mark.parametrize(
    "budget,message",
    [
        (
            "vgpr<=8",
            "column 1: unknown field 'vgpr' (fields: spills, vgpr_spills, sgpr_spills, scratch, "
            "dynamic_stack, vgprs, arch_vgprs, agprs, sgprs, static_lds, lds, block, waves_per_simd[model], "
            "blocks_per_cu[model], launchable, spills_in_loops, "
            "max_live_vgpr, max_live_agpr, max_live_sgpr)",
        ),
        (
            "waves_per_simd>=2",
            "column 1: waves_per_simd needs a model: waves_per_simd[hip], waves_per_simd[llvm], waves_per_simd[hw]",
        ),
        ("waves_per_simd[cuda]>=2", "column 16: expected a model (hip, llvm, hw), found 'cuda'"),
        ("vgprs[hip]<=2", "column 7: vgprs takes no [model]"),
        ("waves_per_simd[hip>=2", "column 19: expected ']', found '>='"),
        ("vgprs", "column 6: expected an operator (== != <= >= < >) after vgprs, found the end"),
        ("vgprs=<3", "column 6: unexpected '='"),
        ("vgprs<=x", "column 8: expected a number after vgprs<=, found 'x'"),
        ("vgprs<=-1", "column 8: unexpected '-'"),
        ("vgprs<=1 sgprs<2", "column 10: expected ',' or the end of the budget, found 'sgprs'"),
        ("vgprs<=1,", "column 10: expected a field"),
        ("launchable>=1", "column 11: launchable is true or false: only == and != compare it"),
        ("launchable==1", "column 13: expected true or false after launchable==, found '1'"),
        ("a: b: vgprs<1", "column 5: more than one ':' in one group (separate groups with ';')"),
        (": vgprs<1", "column 1: empty kernel pattern before ':'"),
        ("k_*:", "column 5: expected a comparison, found the end"),
        ("vgprs<1;;", "column 9: expected a comparison, found the end"),
        ("__import__('os')", "column 11: unexpected"),
        ("   ", "is empty"),
    ],
)
def test_a_bad_budget_exits_2_with_one_line(capsys, budget, message):
    code = main(["check", "--no-config", "--budget", budget, str(LIB1)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    # argparse's usage line, then the one line naming what is wrong (as for every bad option)
    usage, line = err.strip().splitlines()
    assert usage.startswith("usage: amdocc check ")
    assert line.startswith("amdocc check: error: argument --budget: budget "), line
    assert message in line, line


def test_a_field_the_models_cannot_give_is_not_evaluated_not_zero(capsys):
    """A dynamic-VGPR kernel (COMPUTE_PGM_RSRC2 bit 6 set after linking, per the fixtures'
    manifest) has no static occupancy: the models' fields are reported not evaluated, with the
    reason, never 0; the counts still evaluate."""
    from test_check import DVGPR, C

    manifest = json.loads((C / "manifest.json").read_text())
    (rec,) = [f for f in manifest["fixtures"] if f["file"].endswith(DVGPR.name)]
    assert "(bit 6, ENABLE_DYNAMIC_VGPR)" in rec["commands"][-1]
    _, doc, _ = check(capsys, DVGPR, "--budget", "waves_per_simd[hip]>=1, launchable, vgprs>=0")
    assert [v["rule"] for v in doc["violations"]] == ["mode"]
    skipped = {n["rule"]: n["reason"] for n in doc["not_evaluated"]}
    assert set(skipped) == {"budget:waves_per_simd[hip]>=1", "budget:launchable"}
    assert all("dynamic VGPRs" in why for why in skipped.values())


def test_baseline_accepts_a_budget_and_fails_when_worse(capsys, tmp_path):
    base = tmp_path / "baseline.json"
    argv = ["check", "--no-config", "--rules", "mode", "--baseline", str(base), str(LIB1)]
    assert main([*argv, "--budget", "vgprs<=128, waves_per_simd[llvm]>=4", "--update-baseline"]) == 0
    capsys.readouterr()
    entries = json.loads(base.read_text())["entries"]
    got = {(e["kernel"], e["rule"]): e["value"] for e in entries}
    assert got == {
        ("k_launch_miss", "budget:vgprs<=128"): 132,
        ("k_low_occupancy", "budget:vgprs<=128"): 160,
        ("k_reqd", "budget:vgprs<=128"): 132,
        ("k_launch_miss", "budget:waves_per_simd[llvm]>=4"): 0,
        ("k_low_occupancy", "budget:waves_per_simd[llvm]>=4"): 3,
        ("k_reqd", "budget:waves_per_simd[llvm]>=4"): 3,
    }
    assert main([*argv, "--budget", "vgprs<=128, waves_per_simd[llvm]>=4"]) == 0
    capsys.readouterr()
    # Accepted values better than now: "<=" is worse above the accepted, ">=" below it.
    for e in entries:
        if e["kernel"] == "k_reqd":
            e["value"] = 100 if e["rule"] == "budget:vgprs<=128" else 4
    base.write_text(json.dumps({**json.loads(base.read_text()), "entries": entries}))
    assert main([*argv, "--json", "--budget", "vgprs<=128, waves_per_simd[llvm]>=4"]) == 1
    doc = json.loads(capsys.readouterr().out)
    worse = {(v["kernel"], v["rule"]) for v in doc["violations"] if v["status"] == "worse"}
    assert worse == {("k_reqd", "budget:vgprs<=128"), ("k_reqd", "budget:waves_per_simd[llvm]>=4")}
    # A budget no longer asked for leaves its entries out of scope (not stale).
    assert main([*argv, "--json", "--fail-on-stale", "--budget", "vgprs<=128"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["stale"] == [] and {v["status"] for v in doc["violations"]} == {"accepted", "worse"}


def test_sarif_names_each_budget_as_a_rule_and_validates(capsys, tmp_path):
    sarif = tmp_path / "out.sarif"
    assert main(["check", "--no-config", "--sarif", str(sarif), "--budget", "spills==0", str(LIB1)]) == 1
    capsys.readouterr()
    doc = json.loads(sarif.read_text())
    jsonschema.Draft4Validator(json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())).validate(doc)
    (run,) = doc["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules[-1] == "budget:spills==0" and "budget:spills==0" not in rules[:-1]
    hits = [r for r in run["results"] if r["ruleId"] == "budget:spills==0"]
    assert {r["properties"]["value"] for r in hits} == {16, 28}
    assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"])


# --------------------------------------------------------------------------- fuzzing the parser

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from amdocc.errors import UsageError  # noqa: E402

_PIECES = [
    *budgets.FIELDS,
    *budgets.OPERATORS,
    "hip",
    "llvm",
    "hw",
    "true",
    "false",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    "*",
    "k_",
    "1",
    "0",
    "2.5",
    "1e3",
    " ",
    "=",
    "!",
    "-",
    "(",
    ")",
    "x",
    "'",
    "\\",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_any_text_parses_or_is_refused_by_a_usage_error(text):
    """Any text either parses, and each comparison's canonical text parses back to itself, or is
    refused by a UsageError of one line that names the budget; nothing else escapes."""
    try:
        groups = budgets.parse(text)
    except UsageError as exc:
        assert "\n" not in exc.message and exc.message.startswith("budget ")
        return
    for g in groups:
        for c in g.comparisons:
            ((again,),) = [g2.comparisons for g2 in budgets.parse(c.text)]
            assert again == c


@st.composite
def _comparison(draw):
    name = draw(st.sampled_from(list(budgets.FIELDS)))
    spec = budgets.FIELDS[name]
    model = None
    if spec.models == "required" or (spec.models == "optional" and draw(st.booleans())):
        model = draw(st.sampled_from(budgets.MODELS))
    text = name + (f"[{model}]" if model else "")
    if spec.kind == "bool":
        op, value = draw(st.sampled_from(["==", "!="])), draw(st.sampled_from(["true", "false"]))
    else:
        op, value = draw(st.sampled_from(budgets.OPERATORS)), str(draw(st.integers(0, 10**6)))
    space = draw(st.sampled_from(["", " ", "  "]))
    return f"{space}{text}{space}{op}{space}{value}{space}", (name, model, op)


@st.composite
def _budget(draw):
    groups, want = [], []
    for _ in range(draw(st.integers(1, 3))):
        comps = draw(st.lists(_comparison(), min_size=1, max_size=3))
        scope = draw(st.sampled_from([None, "k_*", "ns::attn*", "*gemm*"]))
        groups.append((f"{scope}: " if scope else "") + ",".join(t for t, _ in comps))
        want.append((scope, [w for _, w in comps]))
    return ";".join(groups), want


@settings(max_examples=1500, deadline=None)
@given(_budget(), st.integers(0, 200), st.sampled_from(_PIECES))
def test_grammatical_budgets_parse_to_what_was_written_and_one_insertion_never_escapes(made, at, piece):
    text, want = made
    groups = budgets.parse(text)
    assert [(g.scope, [(c.field, c.model, c.op) for c in g.comparisons]) for g in groups] == want
    mutated = text[: at % (len(text) + 1)] + piece + text[at % (len(text) + 1) :]
    try:
        budgets.parse(mutated)
    except UsageError as exc:
        assert "\n" not in exc.message and exc.message.startswith("budget ")


# --------------------------------------------------------------------------- scopes over demangled names


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """Kernels built now by clang-22 (test_names_as_written.SOURCE): C names, saxpy, the template
    wave_attn<float, 64> and <int, 128>, and ns::gemm<double>."""
    from test_names_as_written import build_named_kernels, cxxfilt, note_names

    co = build_named_kernels(tmp_path_factory.mktemp("named"))
    names = note_names(co)
    # name -> (llvm-cxxfilt-22's signature, llvm-cxxfilt-22 -p's name without return type and parameters)
    return co, dict(zip(names, zip(cxxfilt(names), cxxfilt(names, "-p"), strict=True), strict=True))


@pytest.mark.llvm22
@pytest.mark.parametrize(
    ("scope", "matches"),
    [
        # The case: the signature starts with the return type "void ", the pattern does not.
        ("wave_attn*", lambda signature, qualified: qualified.startswith("wave_attn")),
        ("wave_attn<float, 64>", lambda signature, qualified: qualified == "wave_attn<float, 64>"),
        ("wave_attn<*>(int*, int)", lambda s, q: q.startswith("wave_attn<") and s.endswith("(int*, int)")),
        ("ns::gemm*", lambda signature, qualified: qualified.startswith("ns::gemm")),
        ("*gemm<double>", lambda signature, qualified: qualified.endswith("gemm<double>")),
        ("void *", lambda signature, qualified: signature.startswith("void ")),  # the signature still matches
        ("saxpy", lambda signature, qualified: qualified == "saxpy"),
        ("_Z*wave_attn*", lambda signature, qualified: "wave_attn" in qualified),  # the mangled name
        ("a", lambda signature, qualified: qualified == "a"),
    ],
)
def test_a_scope_matches_the_name_without_its_return_type(capsys, named, scope, matches):
    co, spelt = named
    want = {name: None for name, (signature, qualified) in spelt.items() if matches(signature, qualified)}
    assert want, f"{scope!r} is meant to scope some kernel of {sorted(spelt.values())}"
    code, doc, _ = check(capsys, co, "--budget", f"{scope}: vgprs<0")
    assert set(values(doc, "budget:vgprs<0")) == set(want)
    assert code == 1
