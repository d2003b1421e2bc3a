"""amdocc check, the CI gate: fixtures built with llc-22 to trip each rule
(tools/fixtures/check.py), with every expected violation worked out from LLVM's own output
stored next to them (llvm-readelf-22 --notes, the compiler's "; Kernel info" blocks, llc-22's
LDS-limit error), the baseline round trip, the config file, and JUnit/SARIF reports validated
against their published schemas (tests/data/schemas)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from amdocc.check_report import annotation
from amdocc.cli.main import main
from conftest import FIXTURES, TESTS
from fixtures.oracles import metadata_yaml

C = FIXTURES / "check"
LIB1, LIB2 = C / "check_gfx942.hsaco", C / "check_next_gfx942.hsaco"
LDS, DVGPR = C / "check_lds_gfx942.hsaco", C / "check_dvgpr_gfx1200.hsaco"
SCHEMAS = TESTS / "data" / "schemas"
# gfx942 has 4 SIMDs per CU (AMD CDNA3 ISA guide; the "4*8*64/256" of test_diff's hand-worked
# HIP numbers), and LLVM's "; Occupancy:" counts waves per SIMD.
SIMDS_PER_CU = 4


# --------------------------------------------------------------------------- LLVM's view


def kernels_of(path: Path) -> dict[str, dict]:
    """Each kernel's metadata map as llvm-readelf-22 --notes printed it."""
    meta = metadata_yaml(Path(f"{path}.readelf.txt").read_text())
    return {k[".name"]: k for k in meta["amdhsa.kernels"]}


def llvm_occupancy(path: Path) -> dict[str, int]:
    """Each kernel's '; Occupancy:' (waves per SIMD) from the compiler's own listing."""
    out, name = {}, None
    for line in Path(f"{path}.kernel-info.txt").read_text().splitlines():
        if line.startswith("# kernel "):
            name = line.split()[-1]
        m = re.match(r"; Occupancy: (\d+)", line)
        if m:
            out[name] = int(m.group(1))
    return out


def llc_lds_limit() -> int:
    """The per-workgroup LDS limit of gfx942 as llc-22 states it when it refuses a kernel."""
    text = (C / "check_lds_over.llc-error.txt").read_text()
    return int(re.search(r"exceeds limit \((\d+)\)", text).group(1))


def llc_lds_limit_of(cpu: str, work: Path) -> int:
    """A processor's per-workgroup LDS limit as llc-22 states it, refusing a kernel with 1 MiB."""
    import subprocess

    ir = work / f"lds_over_{cpu}.ll"
    ir.write_text((C / "src" / "check_lds_over.ll").read_text().replace("98304", str(1 << 20)))
    refused = subprocess.run(
        ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=asm", str(ir), "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    return int(re.search(r"exceeds limit \((\d+)\)", refused.stderr).group(1))


def declared_size(k: dict) -> int:
    reqd = k.get(".reqd_workgroup_size")
    if reqd:
        return reqd[0] * reqd[1] * reqd[2]
    return k[".max_flat_workgroup_size"]


def expected_violations(path: Path) -> dict[tuple[str, str], object]:
    """(kernel, rule) → value, for the default rules, from LLVM's output alone."""
    out = {}
    occupancy = llvm_occupancy(path) if Path(f"{path}.kernel-info.txt").exists() else {}
    limit = llc_lds_limit()
    for name, k in kernels_of(path).items():
        if k.get(".vgpr_spill_count"):
            out[(name, "vgpr-spills")] = k[".vgpr_spill_count"]
        if k.get(".sgpr_spill_count"):
            out[(name, "sgpr-spills")] = k[".sgpr_spill_count"]
        if k[".private_segment_fixed_size"] or k.get(".uses_dynamic_stack"):
            out[(name, "scratch")] = k[".private_segment_fixed_size"]
        waves_needed = -(-declared_size(k) // k[".wavefront_size"])
        if name in occupancy and -(-waves_needed // SIMDS_PER_CU) > occupancy[name]:
            out[(name, "launch")] = "hip,llvm,hw"
        if k[".group_segment_fixed_size"] > limit:
            out[(name, "lds")] = k[".group_segment_fixed_size"]
            # gfx942's CU holds as much LDS as one workgroup may use (docs/llvm-occupancy.md §1: 64 KiB), so a
            # workgroup over the limit fits on no CU either.
            out[(name, "launch")] = "hip,llvm,hw"
    return out


def run(capsys, *argv):
    code = main(["check", "--no-config", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def check_json(capsys, *argv):
    code, out, err = run(capsys, "--json", *argv)
    return code, json.loads(out), err


def found(result: dict, status: str | None = None) -> dict[tuple[str, str], object]:
    return {
        (v["kernel"], v["rule"]): v["value"] for v in result["violations"] if status is None or v["status"] == status
    }


# --------------------------------------------------------------------------- the rules


def test_each_rule_trips_on_the_kernel_built_for_it(capsys):
    code, result, _ = check_json(capsys, LIB1, LDS)
    expected = {**expected_violations(LIB1), **expected_violations(LDS)}
    assert code == 1
    assert found(result) == expected
    # Every rule of the default set is tripped by some kernel built for it, and the controls
    # (k_clean, k_lds_at_limit at exactly the limit, k_reqd fitting at its 64x4x1) are clean.
    assert {rule for _, rule in expected} == {"vgpr-spills", "sgpr-spills", "scratch", "launch", "lds"}
    assert not {k for k, _ in expected} & {"k_clean", "k_lds_at_limit", "k_reqd", "k_low_occupancy"}
    assert result["summary"] == {
        "kernels": 10,
        "violations": len(expected),
        "failing": len(expected),
        "accepted": 0,
        "stale": 0,
        "errors": 0,
    }


def test_launch_miss_is_the_kokkos_case(capsys):
    """132 VGPRs at max flat size 1024 on gfx942: LLVM reports 3 waves per SIMD, a 1024-thread
    workgroup needs 16 waves = 4 per SIMD. HIP by hand (docs/hip-occupancy.md §2): 512 VGPRs /
    alignUp(132, 8) = 3 waves per SIMD, 12 per CU < 16 → 0 workgroups."""
    k = kernels_of(LIB1)["k_launch_miss"]
    assert (k[".vgpr_count"], k[".max_flat_workgroup_size"], llvm_occupancy(LIB1)["k_launch_miss"]) == (132, 1024, 3)
    _, result, _ = check_json(capsys, "--rules", "launch", LIB1)
    (v,) = result["violations"]
    assert (v["kernel"], v["value"]) == ("k_launch_miss", "hip,llvm,hw")
    assert "1024-thread workgroup (.max_flat_workgroup_size)" in v["message"] and "vgpr" in v["message"]


def test_spills_without_scratch_and_scratch_without_spills(capsys):
    """SGPR spills go to VGPR lanes (no stack, as XLA #35211 notes); a private array is
    scratch without a spill; a dynamic alloca is a dynamic stack."""
    k = kernels_of(LIB1)
    assert (k["k_sgpr_spill"][".sgpr_spill_count"], k["k_sgpr_spill"][".private_segment_fixed_size"]) == (28, 0)
    assert (k["k_scratch"][".vgpr_spill_count"], k["k_scratch"][".private_segment_fixed_size"]) == (0, 260)
    assert k["k_dynamic_stack"][".uses_dynamic_stack"] is True
    _, result, _ = check_json(capsys, "--max-scratch", "300", "--max-sgpr-spills", "28", LIB1)
    got = found(result)
    assert ("k_scratch", "scratch") not in got and ("k_sgpr_spill", "sgpr-spills") not in got
    # A dynamic stack fails whatever the allowance: its size is only known at run time.
    assert got[("k_dynamic_stack", "scratch")] == 16
    _, result, _ = check_json(capsys, "--rules", "spills", "--max-vgpr-spills", "15", LIB1)
    assert found(result) == {("k_vgpr_spill", "vgpr-spills"): 16, ("k_sgpr_spill", "sgpr-spills"): 28}


def test_occupancy_floor_at_the_declared_size(capsys):
    """Floor 4 waves per SIMD. Kernels LLVM puts at 3 waves per SIMD fall below it. HIP by hand
    at 256 threads: 160 VGPRs → 512/160 = 3 waves per SIMD, 12 per CU, 3 workgroups of 4 waves
    → 3; k_reqd at its 64x4x1 = 256 → 3; k_launch_miss at 1024 → 0 workgroups → 0."""
    occupancy = llvm_occupancy(LIB1)
    _, result, _ = check_json(capsys, "--rules", "occupancy", "--min-occupancy", "4", LIB1)
    got = found(result)
    assert {k for k, _ in got} == {k for k, w in occupancy.items() if w < 4}
    assert got == {("k_low_occupancy", "occupancy"): 3, ("k_reqd", "occupancy"): 3, ("k_launch_miss", "occupancy"): 0}
    # With the llvm model the value is the compiler's own number at that block size.
    _, result, _ = check_json(
        capsys, "--rules", "occupancy", "--min-occupancy", "4", "--model", "llvm", "--block", "256", LIB1
    )
    assert found(result) == {(k, "occupancy"): w for k, w in occupancy.items() if w < 4}


def test_dynamic_vgpr_and_unknown_processor_are_mode_violations(capsys, tmp_path):
    # COMPUTE_PGM_RSRC2 bit 6 (ENABLE_DYNAMIC_VGPR on GFX12) was set after linking; see the manifest.
    manifest = json.loads((C / "manifest.json").read_text())
    (rec,) = [f for f in manifest["fixtures"] if f["file"].endswith(DVGPR.name)]
    assert "(bit 6, ENABLE_DYNAMIC_VGPR)" in rec["commands"][-1]
    code, result, _ = check_json(capsys, DVGPR)
    assert code == 1 and found(result) == {("k_dynamic_vgpr", "mode"): "dynamic-vgpr"}
    assert {n["rule"] for n in result["not_evaluated"]} == {"launch"}
    # A processor the tables do not know (e_flags mach 0x7e is unassigned in LLVM's ELF.h).
    data = bytearray(LIB1.read_bytes())
    data[0x30] = 0x7E
    unknown = tmp_path / "unknown.hsaco"
    unknown.write_bytes(bytes(data))
    code, result, _ = check_json(capsys, "--rules", "mode,lds", "--kernel", "^k_clean$", unknown)
    assert found(result) == {("k_clean", "mode"): "unknown-processor"}
    assert {n["rule"] for n in result["not_evaluated"]} == {"lds"}


def test_dynamic_lds_counts_against_the_lds_limit(capsys):
    # k_lds_at_limit uses exactly llc's limit; one more byte of dynamic LDS is over it.
    limit = llc_lds_limit()
    assert kernels_of(LDS)["k_lds_at_limit"][".group_segment_fixed_size"] == limit
    _, result, _ = check_json(capsys, "--rules", "lds", "--dynamic-lds", "1", LDS)
    assert found(result) == {("k_lds_at_limit", "lds"): limit + 1, ("k_lds_over", "lds"): 98304 + 1}


# --------------------------------------------------------------------------- the baseline


def test_baseline_round_trip(capsys, tmp_path):
    base = tmp_path / "baseline.json"
    release1, release2 = expected_violations(LIB1), expected_violations(LIB2)
    # 1. Accept everything release 1 violates.
    code, _, err = run(capsys, "--baseline", base, "--update-baseline", LIB1)
    assert code == 0 and "wrote" in err
    entries = json.loads(base.read_text())["entries"]
    assert {(e["kernel"], e["rule"]): e["value"] for e in entries} == release1
    assert {e["target"] for e in entries} == {"gfx942"}
    # 2. The same build passes, every violation accepted, nothing stale.
    code, result, _ = check_json(capsys, "--baseline", base, LIB1)
    assert code == 0 and found(result, "accepted") == release1 and result["stale"] == []
    # 3. Release 2: a new kernel spills, k_scratch's array doubled, k_vgpr_spill was fixed.
    code, result, _ = check_json(capsys, "--baseline", base, LIB2)
    assert code == 1
    new = {key: v for key, v in release2.items() if key not in release1}
    assert new and {k for k, _ in new} == {"k_new_spill"}
    assert found(result, "new") == new
    assert found(result, "worse") == {("k_scratch", "scratch"): release2[("k_scratch", "scratch")]}
    assert release2[("k_scratch", "scratch")] > release1[("k_scratch", "scratch")]
    gone = {key for key in release1 if key not in release2}
    assert gone == {("k_vgpr_spill", "vgpr-spills"), ("k_vgpr_spill", "scratch")}
    assert {(e["kernel"], e["rule"]) for e in result["stale"]} == gone
    code, out, _ = run(capsys, "--baseline", base, LIB2)
    assert "stale baseline entries" in out and "k_vgpr_spill (gfx942) vgpr-spills" in out
    # 4. Stale entries alone pass, unless --fail-on-stale; --kernel keeps other entries out of scope.
    code, result, _ = check_json(capsys, "--baseline", base, "--kernel", "k_vgpr_spill", LIB2)
    assert code == 0 and result["violations"] == [] and len(result["stale"]) == 2
    assert run(capsys, "--baseline", base, "--kernel", "k_vgpr_spill", "--fail-on-stale", LIB2)[0] == 1
    # 5. Accept release 2: stale entries leave, new ones join, and it passes.
    assert run(capsys, "--baseline", base, "--update-baseline", LIB2)[0] == 0
    entries = json.loads(base.read_text())["entries"]
    assert {(e["kernel"], e["rule"]): e["value"] for e in entries} == release2
    assert run(capsys, "--baseline", base, LIB2)[0] == 0


def test_update_with_a_kernel_filter_keeps_entries_it_did_not_look_at(capsys, tmp_path):
    base = tmp_path / "b.json"
    assert run(capsys, "--baseline", base, "--update-baseline", LIB1)[0] == 0
    before = json.loads(base.read_text())["entries"]
    assert run(capsys, "--baseline", base, "--update-baseline", "--kernel", "k_vgpr_spill", LIB2)[0] == 0
    after = json.loads(base.read_text())["entries"]
    assert [e for e in after if e["kernel"] != "k_vgpr_spill"] == [e for e in before if e["kernel"] != "k_vgpr_spill"]
    assert not [e for e in after if e["kernel"] == "k_vgpr_spill"]


def test_bad_baseline_files_are_usage_errors(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    for text, words in (
        ("not json", "not JSON"),
        ('{"format": "x"}', "is not an amdocc-check-baseline"),
        ('{"format": "amdocc-check-baseline", "version": 1, "entries": [{"kernel": 1}]}', "no string 'kernel'"),
        (
            '{"format": "amdocc-check-baseline", "version": 1, "entries": '
            '[{"kernel": "k", "target": "gfx942", "rule": "speed"}]}',
            "unknown rule 'speed'",
        ),
    ):
        bad.write_text(text)
        code, out, err = run(capsys, "--baseline", bad, LIB1)
        assert code == 2 and out == "" and words in err and err.count("\n") == 1, (text, err)
    code, _, err = run(capsys, "--baseline", tmp_path / "missing.json", LIB1)
    assert code == 2 and "does not exist (write it with --update-baseline)" in err


def test_unreadable_input_exits_2_and_never_updates_the_baseline(capsys, tmp_path):
    base = tmp_path / "b.json"
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"\x7fELF" + b"\0" * 12)
    code, _out, err = run(capsys, "--baseline", base, "--update-baseline", LIB1, bad)
    assert code == 2 and not base.exists() and "not updated" in err and str(bad) in err


# --------------------------------------------------------------------------- CI formats


def test_junit_validates_against_the_ant_schema(capsys, tmp_path):
    base, report = tmp_path / "b.json", tmp_path / "junit.xml"
    run(capsys, "--baseline", base, "--update-baseline", LIB1)
    code, _, _ = run(capsys, "--baseline", base, "--junit", report, LIB2, LDS)
    assert code == 1
    schema = xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd"))
    schema.validate(str(report))
    doc = schema.to_dict(str(report))
    suites = {s["@name"]: s for s in doc["testsuite"]}
    assert set(suites) == {str(LIB2), str(LDS)}
    release1, release2 = expected_violations(LIB1), expected_violations(LIB2)
    failing_kernels = {
        k
        for (k, rule), v in release2.items()  # new, or worse than accepted
        if (k, rule) not in release1 or (isinstance(v, int) and v > release1[(k, rule)])
    }
    lib2 = suites[str(LIB2)]
    assert lib2["@tests"] == len(kernels_of(LIB2)) and lib2["@failures"] == len(failing_kernels)
    failed = {tc["@name"].split(" ")[0] for tc in lib2["testcase"] if "failure" in tc}
    assert failed == failing_kernels == {"k_new_spill", "k_scratch"}
    assert "stale baseline entry: k_vgpr_spill (gfx942) vgpr-spills" in doc["testsuite"][0]["system-out"]
    lds = suites[str(LDS)]
    assert lds["@failures"] == len({k for k, _ in expected_violations(LDS)}) == 1


def test_sarif_validates_against_the_oasis_schema(capsys, tmp_path):
    base, report = tmp_path / "b.json", tmp_path / "out.sarif"
    run(capsys, "--baseline", base, "--update-baseline", LIB1)
    run(capsys, "--baseline", base, "--sarif", report, LIB2)
    doc = json.loads(report.read_text())
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(doc)
    (sarif_run,) = doc["runs"]
    rules = [r["id"] for r in sarif_run["tool"]["driver"]["rules"]]
    assert rules == ["vgpr-spills", "sgpr-spills", "scratch", "launch", "lds", "mode"]
    by_state = {}
    for r in sarif_run["results"]:
        kernel = r["locations"][0]["logicalLocations"][0]["name"]
        by_state.setdefault(r["baselineState"], set()).add((kernel, r["ruleId"]))
        assert rules[r["ruleIndex"]] == r["ruleId"]
    release1, release2 = expected_violations(LIB1), expected_violations(LIB2)
    assert by_state["new"] == {key for key in release2 if key not in release1}
    assert by_state["updated"] == {("k_scratch", "scratch")}
    assert by_state["unchanged"] == {key for key in release2 if key in release1} - {("k_scratch", "scratch")}
    assert by_state["absent"] == {key for key in release1 if key not in release2}
    suppressed = {
        (r["locations"][0]["logicalLocations"][0]["name"], r["ruleId"])
        for r in sarif_run["results"]
        if r.get("suppressions")
    }
    assert suppressed == by_state["unchanged"]
    assert sarif_run["invocations"][0]["executionSuccessful"] is True


def test_a_report_on_standard_output_replaces_the_text(capsys):
    code, out, _ = run(capsys, "--junit", "-", "--rules", "lds", LDS)
    assert code == 1 and out.startswith('<?xml version="1.0"')
    xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).validate(out)


def test_github_annotations(capsys):
    code, out, _ = run(capsys, "--github", "--rules", "lds", LDS)
    assert code == 1
    assert out.splitlines() == [
        f"::error file={LDS},title=amdocc check%3A lds::k_lds_over (gfx942) in {LDS}: 98304 B static LDS "
        f"exceeds the {llc_lds_limit()} B a gfx942 workgroup may use"
    ]


def test_junit_survives_names_xml_cannot_carry():
    from amdocc.check_report import junit

    v = {
        "path": "lib.so",
        "origin": "",
        "kernel": "k\x01<odd>",
        "symbol": "k.kd",
        "target": "gfx942",
        "rule": "lds",
        "value": 1,
        "limit": 0,
        "message": "m\x00",
        "status": "new",
        "accepted_value": None,
    }
    result = {"settings": {"rules": ["lds"]}, "baseline": None, "violations": [v], "stale": [], "errors": []}
    text = junit(result, [("lib.so", "", v["kernel"], "gfx942")])
    xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).validate(text)
    assert "k\\x01&lt;odd&gt; [gfx942]" in text


def test_annotation_escaping():
    # The runner's own escaping (actions/toolkit, command.ts): % \r \n in data; also : and , in properties.
    assert (
        annotation("error", "50% done\nnext", file="a,b:c.so", title="t: x")
        == "::error file=a%2Cb%3Ac.so,title=t%3A x::50%25 done%0Anext"
    )


# --------------------------------------------------------------------------- selection (the argument contract)

GENERIC = FIXTURES / "elf" / "gfx11-generic_cov6.hsaco"


def built_for(path: Path) -> str:
    """The target id a code object names in its metadata, as llvm-readelf-22 printed it."""
    return metadata_yaml(Path(f"{path}.readelf.txt").read_text())["amdhsa.target"].split("--")[-1]


@pytest.mark.llvm22
def test_kernels_match_demangled_names_and_generic_code_is_placed(capsys):
    from test_demangle import cxxfilt

    mangled = "_Z15scratch_privatePKiPf"
    (readable,) = cxxfilt([mangled])
    scratch = kernels_of(GENERIC)[mangled][".private_segment_fixed_size"]
    assert scratch > 0 and "(" in readable and "(" not in mangled
    # The pattern matches only the demangled name; gfx1100 is a member of the gfx11-generic family,
    # so the code is evaluated there, and the record says so.
    code, result, _ = check_json(
        capsys, "--rules", "scratch", "--target", "gfx1100", "--kernel", r"scratch_private\(", GENERIC
    )
    (v,) = result["violations"]
    assert code == 1 and (v["kernel"], v["demangled"], v["value"]) == (mangled, readable, scratch)
    assert (v["target"], v["built_for"], v["processor"], v["what_if"]) == (
        f"{built_for(GENERIC)} on gfx1100",
        built_for(GENERIC),
        "gfx1100",
        False,
    )
    # Text shows the demangled name; --mangled the stored one.
    _, out, _ = run(capsys, "--rules", "scratch", "--kernel", r"scratch_private\(", GENERIC)
    assert readable in out and mangled not in out
    _, out, _ = run(capsys, "--rules", "scratch", "--kernel", r"scratch_private\(", "--mangled", GENERIC)
    assert mangled in out and readable not in out
    _, out, _ = run(capsys, "--github", "--rules", "scratch", "--kernel", r"scratch_private\(", GENERIC)
    assert f"::{readable} ({built_for(GENERIC)})" in out.replace("%3A", ":")


def test_a_selection_that_matches_nothing_exits_2_naming_what_is_there(capsys, tmp_path):
    code, _, err = run(capsys, "--kernel", "no_such_kernel", LIB1)
    assert code == 2 and f"which hold {len(kernels_of(LIB1))} kernels" in err and "k_clean" in err
    code, _, err = run(capsys, "--target", "gfx942", GENERIC)
    assert code == 2 and f"built for {built_for(GENERIC)}" in err and "--what-if" in err
    base = tmp_path / "b.json"
    code, _, err = run(capsys, "--baseline", base, "--update-baseline", "--kernel", "no_such_kernel", LIB1)
    assert code == 2 and not base.exists() and "not updated" in err


@pytest.mark.llvm22
def test_a_what_if_is_judged_on_the_processor_it_names(capsys, tmp_path):
    """k_lds_over's 96 KiB of LDS is over gfx942's limit and under gfx950's: llc-22 states each
    limit when it refuses a kernel over it."""
    gfx942, gfx950 = llc_lds_limit_of("gfx942", tmp_path), llc_lds_limit_of("gfx950", tmp_path)
    static = kernels_of(LDS)["k_lds_over"][".group_segment_fixed_size"]
    assert gfx942 == llc_lds_limit() < static < gfx950
    # gfx942 code cannot run on gfx950: not selected unless a what-if is asked for.
    code, _, err = run(capsys, "--rules", "lds", "--target", "gfx950", LDS)
    assert code == 2 and f"built for {built_for(LDS)}" in err
    code, result, _ = check_json(
        capsys, "--rules", "lds", "--target", "gfx950", "--what-if", "--dynamic-lds", str(gfx950 - static), LDS
    )
    assert code == 0 and result["violations"] == [] and result["summary"]["kernels"] == len(kernels_of(LDS))
    code, result, _ = check_json(
        capsys, "--rules", "lds", "--target", "gfx950", "--what-if", "--dynamic-lds", str(gfx950 - static + 1), LDS
    )
    (v,) = result["violations"]
    assert code == 1 and (v["kernel"], v["value"], v["limit"]) == ("k_lds_over", gfx950 + 1, gfx950)
    assert (v["target"], v["processor"], v["what_if"]) == (f"{built_for(LDS)} on gfx950 (what-if)", "gfx950", True)
    _, out, _ = run(
        capsys, "--rules", "lds", "--target", "gfx950", "--what-if", "--dynamic-lds", str(gfx950 - static + 1), LDS
    )
    assert "on gfx950 (what-if)" in out
    # A baseline keeps what-ifs apart: accepting them accepts nothing of a run on the code's own processor.
    base = tmp_path / "b.json"
    assert (
        run(
            capsys,
            "--rules",
            "lds",
            "--target",
            "gfx950",
            "--what-if",
            "--dynamic-lds",
            str(gfx950 - static + 1),
            "--baseline",
            base,
            "--update-baseline",
            LDS,
        )[0]
        == 0
    )
    code, result, _ = check_json(capsys, "--rules", "lds", "--baseline", base, LDS)
    assert code == 1 and result["stale"] == [] and found(result, "new") == {("k_lds_over", "lds"): static}


def test_baseline_entries_the_selection_leaves_out_are_not_stale(capsys, tmp_path):
    base = tmp_path / "b.json"
    assert run(capsys, "--baseline", base, "--update-baseline", LIB1, DVGPR)[0] == 0
    entries = json.loads(base.read_text())["entries"]
    assert {e["target"] for e in entries} == {built_for(LIB1), built_for(DVGPR)}
    # With --target gfx942 the gfx1200 code object is not looked at: its entry is out of scope.
    code, result, _ = check_json(capsys, "--baseline", base, "--target", "gfx942", LIB1, DVGPR)
    assert code == 0 and result["stale"] == [] and found(result, "accepted") == expected_violations(LIB1)
    # Reading only the gfx942 file, the gfx1200 entry matches nothing any more: stale.
    code, result, _ = check_json(capsys, "--baseline", base, LIB1)
    assert code == 0 and {(e["kernel"], e["target"]) for e in result["stale"]} == {("k_dynamic_vgpr", "gfx1200")}


def test_fail_on_stale_is_refused_while_updating(capsys, tmp_path):
    base = tmp_path / "b.json"
    code, out, err = run(capsys, "--baseline", base, "--update-baseline", "--fail-on-stale", LIB1)
    assert code == 2 and out == "" and "--fail-on-stale" in one_line(err) and not base.exists()


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# --------------------------------------------------------------------------- settings


def test_config_is_found_walking_up_and_applies(capsys, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.amdocc.check]\nrules = ["occupancy"]\nmin-occupancy = 4\n')
    sub = tmp_path / "build" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert main(["check", "--json", str(LIB1)]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["settings"]["rules"] == ["occupancy"] and result["settings"]["min_occupancy"] == 4
    assert {k for k, _ in found(result)} == {k for k, w in llvm_occupancy(LIB1).items() if w < 4}
    # --no-config ignores it; the same value on the command line agrees with it.
    assert main(["check", "--no-config", "--json", str(LIB1)]) == 1
    assert json.loads(capsys.readouterr().out)["settings"]["rules"] == [
        "vgpr-spills",
        "sgpr-spills",
        "scratch",
        "launch",
        "lds",
        "mode",
    ]
    assert main(["check", "--min-occupancy", "4", "--json", str(LIB1)]) == 1
    capsys.readouterr()


def test_config_baseline_is_relative_to_the_file(capsys, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.amdocc.check]\nbaseline = "ci/accepted.json"\n')
    (tmp_path / "ci").mkdir()
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    assert main(["check", "--update-baseline", str(LIB1)]) == 0
    assert (tmp_path / "ci" / "accepted.json").is_file()
    assert main(["check", str(LIB1)]) == 0
    assert main(["check", "--baseline", "../ci/accepted.json", str(LIB1)]) == 0  # the same file: agrees
    capsys.readouterr()


@pytest.mark.parametrize(
    "config, flags, words",
    [
        ("min-occupancy = 4", ["--min-occupancy", "17"], "--min-occupancy 17 can never be met: the hip model"),
        ('rules = ["spills"]\nmax-scratch = 8', [], "max-scratch in"),
        (
            'rules = ["spills"]',
            ["--min-occupancy", "2"],
            "--min-occupancy applies to the occupancy rule, which is off by rules in",
        ),
        ("max-scratch = -1", [], "max-scratch in"),
        ("speed = 3", [], "has no setting 'speed' (settings: rules, max-vgpr-spills"),
        ('model = "fast"\nmin-occupancy = 2', [], "must be one of hip, llvm, hw, not 'fast'"),
        ("fail-on-stale = 1", [], "must be true or false"),
        ("fail-on-stale = true", [], "--fail-on-stale needs a baseline"),
        ("[broken", [], "is not valid TOML"),
    ],
)
def test_config_errors_exit_2_with_one_line(capsys, tmp_path, config, flags, words):
    project = tmp_path / "pyproject.toml"
    project.write_text(config if config.startswith("[") else f"[tool.amdocc.check]\n{config}\n")
    code = main(["check", "--config", str(project), *flags, str(LIB1)])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1, err


def test_a_config_that_is_not_utf8_exits_2_with_one_line(capsys, tmp_path):
    project = tmp_path / "pyproject.toml"
    project.write_bytes(b"[tool.amdocc.check]\nmax-scratch = 0 # \xff\n")  # TOML is UTF-8 by definition
    code = main(["check", "--config", str(project), str(LIB1)])
    err = capsys.readouterr().err
    assert code == 2 and "is not valid TOML" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--max-scratch", "-1"], "argument --max-scratch: '-1' is out of range: expected a byte count >= 0"),
        (["--max-vgpr-spills", "x"], "argument --max-vgpr-spills: 'x' is not an integer: expected an integer >= 0"),
        (
            ["--min-occupancy", "0"],
            "argument --min-occupancy: '0' is out of range: expected a number of waves per SIMD above 0",
        ),
        (
            ["--block", "2000", "--min-occupancy", "1"],
            "argument --block: '2000' is out of range: expected a workgroup size in threads from 1 to 1024",
        ),
        (["--rules", "speed"], "argument --rules: unknown rule 'speed' (choose from vgpr-spills, sgpr-spills, scratch"),
        (["--model", "fast"], "argument --model: unknown model 'fast' (choose from hip, llvm, hw)"),
        (["--jobs", "0"], "argument --jobs: '0' is out of range: expected an integer >= 1"),
        (["--kernel", "("], "argument --kernel: '(' is not a regular expression"),
        (["--json", "--github"], "not allowed with argument"),
        (["--config", str(LIB1), "--no-config"], "not allowed with argument"),
        (["--config", "missing.toml"], "argument --config: missing.toml: no such file or directory"),
    ],
)
def test_bad_arguments_exit_2(capsys, flags, words):
    # The argument contract (cli/args.py): argparse's one-line usage, then what is wrong.
    code = main(["check", *flags, str(LIB1)])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.startswith("usage: amdocc check") and err.count("\n") == 2, err


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--rules", "occupancy"], "the occupancy rule (--rules) needs a floor: --min-occupancy W"),
        (
            ["--rules", "spills", "--max-scratch", "8"],
            "--max-scratch applies to the scratch rule, which is off by --rules",
        ),
        (["--rules", "spills", "--block", "64"], "--block applies to the occupancy rule, which is off"),
        (
            ["--rules", "spills", "--dynamic-lds", "64"],
            "--dynamic-lds applies to the occupancy and launch and lds rule",
        ),
        (["--update-baseline"], "--update-baseline needs --baseline FILE"),
        (["--fail-on-stale"], "--fail-on-stale needs a baseline"),
        (["--json", "--sarif", "-"], "only one of --json, --github, --junit - and --sarif - may use standard output"),
        (["--json", "--mangled"], "--mangled: names are shown only in the text and --github output"),
        (["--junit", "-", "--mangled"], "--mangled: names are shown only in the text and --github output"),
        (["--what-if"], "--what-if needs --target or --device"),
        (["--target", "gfx942", "--device", "MI355X"], "device MI355X is a gfx950, not gfx942"),
    ],
)
def test_inapplicable_or_incomplete_options_exit_2(capsys, flags, words):
    code, out, err = run(capsys, *flags, LIB1)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1, err


def test_text_report_and_exit_codes(capsys):
    code, out, _ = run(capsys, LIB1)
    assert code == 1
    assert re.search(r"k_vgpr_spill\s+gfx942\s+vgpr-spills\s+NEW\s+16 VGPR spills \(allowed: 0\)", out)
    assert out.splitlines()[-1].startswith(f"{len(kernels_of(LIB1))} kernel(s) checked")
    assert run(capsys, "--kernel", "^k_clean$", LIB1)[0] == 0
    assert run(capsys, "--rules", "lds", LIB1)[0] == 0


def test_a_tree_in_parallel_matches_one_process(capsys, tmp_path):
    for i in range(3):
        for f in (LIB1, LDS):
            shutil.copyfile(f, tmp_path / f"{i}_{f.name}")
    _, one, _ = check_json(capsys, "--jobs", "1", tmp_path)
    _, two, _ = check_json(capsys, "--jobs", "2", tmp_path)
    assert one == two and one["summary"]["kernels"] == 3 * (len(kernels_of(LIB1)) + len(kernels_of(LDS)))


@pytest.mark.llvm22
def test_a_fresh_llc_22_build_trips_the_same_rules(capsys, tmp_path):
    """Rebuild release 1 from its IR with the installed llc-22 and take LLVM's view of the new
    object: the violations found agree with it and with the stored fixture's."""
    import subprocess

    from fixtures.check import library
    from fixtures.oracles import kernel_info_text

    (tmp_path / "lib.ll").write_text(library(1))
    llc = ["llc-22", "-mtriple=amdgcn-amd-amdhsa", "-O3", "-mcpu=gfx942"]
    for cmd in (
        [*llc, "-filetype=obj", "lib.ll", "-o", "lib.o"],
        ["ld.lld-22", "-shared", "lib.o", "-o", "lib.hsaco"],
        [*llc, "-filetype=asm", "lib.ll", "-o", "lib.s"],
    ):
        subprocess.run(cmd, cwd=tmp_path, check=True, capture_output=True)
    fresh = tmp_path / "lib.hsaco"
    notes = subprocess.run(["llvm-readelf-22", "-h", "--notes", fresh], check=True, capture_output=True, text=True)
    Path(f"{fresh}.readelf.txt").write_text(notes.stdout)
    Path(f"{fresh}.kernel-info.txt").write_text(kernel_info_text((tmp_path / "lib.s").read_text()))
    _, result, _ = check_json(capsys, fresh)
    assert found(result) == expected_violations(fresh) == expected_violations(LIB1)
