"""Spills inside loops as verdicts: ``check --rules ...,spills-in-loops``, ``census --isa`` and
the ``spills-in-loops`` regression kind of ``diff`` and ``census OLD NEW``.

The oracle is llc-22's own assembly for the same IR: its ``N-byte Folded Spill``/``Reload``
comments (VGPR spills, N/4 dwords), its ``v_writelane_b32``/``v_readlane_b32`` (SGPR lane spills,
counted when ``llvm-readelf-22 --notes`` gives a nonzero ``.sgpr_spill_count``), and its loop
comments (``Loop Header: Depth=N``) for which of them sit in a loop; source lines against the
source text itself.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from amdocc.cli.main import main
from isa_oracle import BUILDS, SOURCE, asm_loop_depths, build, build_ir, llc, llc_from_source, readelf_notes
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22

SPILL = "_Z9isa_spillPKfPfi"
SGPR_SPILL = "_Z14isa_sgpr_spillPKiPii"
PRIVATE = "_Z11isa_privatePKiPfi"

# Spills with no loop at all (every spill outside a loop), and spills beside a call (the call
# hides the control flow). Test-local kernels, built with the fixture's header.
EXTRA = """
#include "hip_defs.h"
__global__ __attribute__((amdgpu_num_vgpr(24))) void isa_spill_straight(const float* x, float* y) {
  int t = TID_X();
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = x[i * 64 + t];
#pragma unroll
  for (int s = 0; s < 3; ++s) {
#pragma unroll
    for (int i = 0; i < 48; ++i) v[i] = v[i] * v[(i + 7) % 48] + x[s];
  }
#pragma unroll
  for (int i = 0; i < 48; ++i) y[i * 64 + t] = v[i];
}
__device__ __attribute__((noinline)) float isa_helper(float x) { return x * x + 1.f; }
__global__ __attribute__((amdgpu_num_vgpr(24))) void isa_spill_call(const float* x, float* y, int n) {
  int t = TID_X();
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = x[i * 64 + t];
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < 48; ++i) v[i] = v[i] * v[(i + 7) % 48] + x[r];
  }
#pragma unroll
  for (int i = 0; i < 48; ++i) y[i * 64 + t] = isa_helper(v[i]);
}
"""
STRAIGHT = "_Z18isa_spill_straightPKfPf"
CALL = "_Z14isa_spill_callPKfPfi"

# One kernel, two builds: its spills outside a loop (OLD), then inside one (NEW).
MOVED = """
#include "hip_defs.h"
__global__ __attribute__((amdgpu_num_vgpr(24))) void isa_moved(const float* x, float* y, int n) {
  int t = TID_X();
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = x[i * 64 + t];
#ifdef IN_LOOP
  for (int r = 0; r < n; ++r) {
#else
#pragma unroll
  for (int r = 0; r < 3; ++r) {
#endif
#pragma unroll
    for (int i = 0; i < 48; ++i) v[i] = v[i] * v[(i + 7) % 48] + x[r];
  }
#pragma unroll
  for (int i = 0; i < 48; ++i) y[i * 64 + t] = v[i];
}
"""
MOVED_NAME = "_Z9isa_movedPKfPfi"


def _compile(tmp_path: Path, name: str, text: str, defines: tuple[str, ...] = ()) -> tuple[Path, str]:
    """``text`` built by clang-22 and llc-22 for gfx942: the code object and its assembly."""
    return llc_from_source(tmp_path, name, text, "gfx942", defines)


def in_loops(asm: str, function: str, sgpr_spills: int) -> tuple[int, int]:
    """(spill dwords stored, reloaded) inside loops, as llc's assembly for ``function`` says."""
    expected = asm_loop_depths(asm)[function]
    body = asm.split(f"{function}:", 1)[1].split(".Lfunc_end", 1)[0]
    lines = [line for line in body.splitlines() if line.startswith("\t") and line.strip()[:1].isalpha()]
    assert len(lines) == len(expected)
    stores = reloads = 0
    for line, (mnemonic, depth, _) in zip(lines, expected, strict=True):
        if depth == 0:
            continue
        m = re.search(r"(\d+)-byte Folded (Spill|Reload)", line)
        if m:
            n = int(m.group(1)) // 4
            stores, reloads = (stores + n, reloads) if m.group(2) == "Spill" else (stores, reloads + n)
        elif sgpr_spills and mnemonic == "v_writelane_b32":
            stores += 1
        elif sgpr_spills and mnemonic == "v_readlane_b32":
            reloads += 1
    return stores, reloads


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    """The fixture's kernels and the test-local ones, built by llc-22 for gfx942, with the asm."""
    _library()
    out = tmp_path_factory.mktemp("loops")
    name, arch, flags = next(b for b in BUILDS if b[0] == "gfx942")
    kernels = llc(build_ir(out, name, arch, flags), arch, out)
    extra = _compile(out, "extra", EXTRA)
    return kernels, extra


def _check(capsys, *args: str) -> tuple[int, dict]:
    code = main(["check", "--no-config", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_check_fails_spills_in_loops_by_llc_comments(fixture, capsys):
    (hsaco, asm), _ = fixture
    notes = readelf_notes(hsaco)
    code, doc = _check(capsys, "--rules", "defaults,spills-in-loops", str(hsaco))
    found = {v["kernel"]: v for v in doc["violations"] if v["rule"] == "spills-in-loops"}
    assert code == 1
    assert "spills-in-loops" in doc["settings"]["rules"] and "vgpr-spills" in doc["settings"]["rules"]
    for name in (SPILL, SGPR_SPILL):
        stores, reloads = in_loops(asm, name, notes[name]["sgpr_spill_count"])
        assert stores + reloads > 0
        assert found[name]["value"] == stores + reloads
        assert found[name]["limit"] == 0
    # A private array is no spill, and the kernels that spill nothing are not failed.
    assert set(found) == {SPILL, SGPR_SPILL}
    assert notes[PRIVATE]["vgpr_spill_count"] == 0 and notes[PRIVATE]["private_segment_fixed_size"] > 0


def test_spills_outside_any_loop_pass_and_a_call_is_not_evaluated(fixture, capsys):
    _, (hsaco, asm) = fixture
    notes = readelf_notes(hsaco)
    assert notes[STRAIGHT]["vgpr_spill_count"] > 0  # it spills: the metadata filter does not pass it
    assert "Folded Spill" in asm.split(f"{STRAIGHT}:", 1)[1].split(".Lfunc_end", 1)[0]
    assert in_loops(asm, STRAIGHT, 0) == (0, 0)
    code, doc = _check(capsys, "--rules", "spills-in-loops", str(hsaco))
    assert code == 0 and doc["violations"] == []
    (skipped,) = doc["not_evaluated"]
    assert skipped["rule"] == "spills-in-loops" and skipped["kernels"] == 1
    assert skipped["reason"].startswith("its control flow is not known: s_swappc_b64 at ")


def test_without_libllvm_the_rule_is_not_evaluated_never_passed_or_failed(fixture, capsys, monkeypatch):
    import glob

    from amdocc.isa import libllvm

    (hsaco, _), _ = fixture
    path = next(p for p in glob.glob("/usr/lib/*/libz.so*") + glob.glob("/lib/*/libz.so*"))  # zlib: not LLVM
    monkeypatch.setenv("AMDOCC_LIBLLVM", path)
    libllvm.forget()
    try:
        code, doc = _check(capsys, "--rules", "vgpr-spills,spills-in-loops", str(hsaco))
    finally:
        libllvm.forget()
    assert code == 1  # vgpr-spills still judged
    assert {v["rule"] for v in doc["violations"]} == {"vgpr-spills"}
    (skipped,) = doc["not_evaluated"]
    assert skipped["rule"] == "spills-in-loops"
    assert skipped["kernels"] == 2  # the two kernels whose metadata counts spills
    assert f"AMDOCC_LIBLLVM={path}: does not export" in skipped["reason"]
    assert doc["errors"] == []


def test_sarif_and_github_point_at_the_source_line_of_the_loop(tmp_path, capsys):
    _library()
    co = build(tmp_path, "lines", "gfx942", [], ["-gline-tables-only"])
    sarif = tmp_path / "out.sarif"
    main(
        [
            "check",
            "--no-config",
            "--rules",
            "spills-in-loops",
            "--sarif",
            str(sarif),
            "--kernel",
            "^_Z9isa_spill",
            str(co),
        ]
    )
    capsys.readouterr()
    loop_body = "v[i] = v[i] * v[(i + 7) % 48] + x[r];"
    line = next(i for i, text in enumerate(SOURCE.read_text().splitlines(), 1) if loop_body in text)
    (result,) = json.loads(sarif.read_text())["runs"][0]["results"]
    where = result["locations"][0]["physicalLocation"]
    assert result["ruleId"] == "spills-in-loops"
    assert where["artifactLocation"]["uri"].endswith("tools/fixture_src/isa_kernels.hip")
    assert where["region"] == {"startLine": line}
    assert result["locations"][1]["physicalLocation"]["artifactLocation"]["uri"].endswith("lines.co")
    main(["check", "--no-config", "--rules", "spills-in-loops", "--github", "--kernel", "^_Z9isa_spill", str(co)])
    (annotation,) = capsys.readouterr().out.splitlines()
    assert re.match(
        rf"::error file=[^,]*isa_kernels\.hip,line={line},title=amdocc check%3A spills-in-loops::", annotation
    )


def test_the_rule_is_off_by_default_and_the_isa_layer_stays_unloaded(fixture):
    (hsaco, _), _ = fixture
    probe = (
        "import sys, json, io, contextlib\n"
        "from amdocc.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['check', '--no-config', '--json', {str(hsaco)!r}])\n"
        f"    main(['census', '--json', {str(hsaco)!r}])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('amdocc.isa'))))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    assert json.loads(loaded.stdout.splitlines()[-1]) == []


def test_census_isa_columns_count_what_llc_comments_in_loops(fixture, tmp_path, capsys):
    (hsaco, asm), _ = fixture
    notes = readelf_notes(hsaco)
    table = tmp_path / "rows.csv"
    assert main(["census", "--isa", "--csv", str(table), "--json", str(hsaco)]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = {r["kernel"]: r for r in csv.DictReader(table.open())}
    for name in (SPILL, SGPR_SPILL):
        stores, reloads = in_loops(asm, name, notes[name]["sgpr_spill_count"])
        assert (rows[name]["spill_stores_in_loops"], rows[name]["spill_reloads_in_loops"]) == (
            str(stores),
            str(reloads),
        )
    for name, row in rows.items():
        if notes[name].get("vgpr_spill_count") == 0 and notes[name].get("sgpr_spill_count") == 0:
            assert (row["spill_stores_in_loops"], row["spill_reloads_in_loops"]) == ("0", "0")
        assert row["spills_in_loops_unknown"] == ""
    (target,) = summary["targets"].values()
    assert target["spilling_in_loops"] == 2 and target["spills_in_loops_unknown"] == 0
    # Without --isa: no such columns, no such counts.
    assert main(["census", "--csv", str(table), "--json", str(hsaco)]) == 0
    assert "spilling_in_loops" not in next(iter(json.loads(capsys.readouterr().out)["targets"].values()))
    assert "spill_stores_in_loops" not in next(csv.reader(table.open()))


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    _library()
    out = tmp_path_factory.mktemp("moved")
    old = _compile(out, "old", MOVED)
    new = _compile(out, "new", MOVED, ("-DIN_LOOP",))
    return old, new


def test_diff_reports_spills_that_moved_into_a_loop(moved, capsys):
    (old, old_asm), (new, new_asm) = moved
    assert readelf_notes(old)[MOVED_NAME]["vgpr_spill_count"] > 0  # it spilled before too
    assert in_loops(old_asm, MOVED_NAME, 0) == (0, 0)
    stores, reloads = in_loops(new_asm, MOVED_NAME, readelf_notes(new)[MOVED_NAME]["sgpr_spill_count"])
    assert stores + reloads > 0
    assert main(["diff", "--json", "--fail-on", "none", str(old), str(new)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert (row["old"]["spills_in_loops"], row["new"]["spills_in_loops"]) == (0, stores + reloads)
    assert "spills-in-loops" in row["regressions"]
    assert main(["diff", "--fail-on", "all", str(old), str(new)]) == 1
    text = capsys.readouterr().out
    assert f"(0->{stores + reloads} (+{stores + reloads}) in loops)" in text
    assert "FAIL spills-in-loops" in text
    assert main(["diff", "--fail-on", "spills-in-loops", str(new), str(old)]) == 0  # moved out: no regression
    capsys.readouterr()


def test_census_old_new_fails_on_spills_that_moved_into_a_loop(moved, capsys):
    (old, _), (new, new_asm) = moved
    stores, reloads = in_loops(new_asm, MOVED_NAME, readelf_notes(new)[MOVED_NAME]["sgpr_spill_count"])
    assert main(["census", "--json", "--fail-on", "spills-in-loops", str(old), str(new)]) == 1
    (change,) = json.loads(capsys.readouterr().out)["changes"]
    assert change["fails"] == ["spills-in-loops"]
    assert (change["old"]["spills_in_loops"], change["new"]["spills_in_loops"]) == (0, stores + reloads)


def test_kernels_without_spill_counts_are_read_only_when_the_gate_watches_loops(capsys):
    # A hand-assembled kernel whose metadata has no spill counts: its code (llvm-objdump-22) is
    # one s_endpgm, no loop, no spill. diff reads it only when --fail-on names the kind.
    from isa_oracle import objdump

    _library()
    co = Path(__file__).parent / "data" / "fixtures" / "objects" / "globals_gfx942.co"
    assert "vgpr_spill_count" not in next(iter(readelf_notes(co).values()))
    assert list(objdump(co, "gfx942").text.values()) == ["s_endpgm"]
    assert main(["diff", "--json", "--fail-on", "none", str(co), str(co)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert row["old"]["spills_in_loops"] is None and row["spills_in_loops_unknown"] is None
    for asked in ("spills-in-loops", "all"):
        assert main(["diff", "--json", "--fail-on", asked, str(co), str(co)]) == 0
        (row,) = json.loads(capsys.readouterr().out)["kernels"]
        assert (row["old"]["spills_in_loops"], row["new"]["spills_in_loops"]) == (0, 0)
