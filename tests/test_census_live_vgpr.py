"""``census --isa`` live-register columns and the ``live-vgpr`` regression of ``diff`` and
``census OLD NEW``.

Held to LLVM 22 on one kernel llc-22 builds twice for gfx942, keeping 100 and then 140
accumulators live across a loop (test_occupancy_where.hot_loop_ir): the most VGPRs live is the
maximum over the instructions of LLVM's final machine IR of its live-in ∪ live-out count
(tests/oracle/mir.py), and the VGPR peak's first address is an instruction where that IR has
that many live.
"""

from __future__ import annotations

import csv
import json
import subprocess

import pytest

from amdocc.cli.main import main
from oracle import mir
from test_occupancy_where import hot_loop_ir

pytestmark = pytest.mark.llvm22

SMALL, LARGE = 100, 140


def _build(work, accumulators: int, side: str):
    import test_occupancy_where as where

    where.ACCUMULATORS = accumulators
    try:
        text = hot_loop_ir()
    finally:
        where.ACCUMULATORS = LARGE
    folder = work / side
    folder.mkdir()
    ll = folder / "hot_loop.ll"
    ll.write_text(text)
    obj, dump = mir.compile_with_mir(ll, "gfx942", False, folder)
    so = folder / "hot_loop.so"
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(so)], check=True, capture_output=True)
    fn = mir.parse_mir(dump)["hot_loop"]
    mapped = mir.map_function(fn, mir.disassemble(so, "gfx942", False)["hot_loop"])
    vgprs_at: dict[int, int] = {}
    for (start, end), rows in zip(mapped.block_ranges, mir.live_per_instruction(fn), strict=True):
        for (_, line), regs in zip(mapped.pairs[start:end], rows, strict=True):
            vgprs_at[line.address] = sum(1 for r in mir.counted(regs) if r[0] == "v")
    return so, vgprs_at


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    work = tmp_path_factory.mktemp("live")
    return _build(work, SMALL, "old"), _build(work, LARGE, "new")


def test_census_isa_columns_give_llvms_most_live_vgprs_and_where(builds, tmp_path, capsys):
    _, (so, vgprs_at) = builds
    table = tmp_path / "rows.csv"
    html = tmp_path / "census.html"
    assert main(["census", "--isa", "--csv", str(table), "--html", str(html), "--json", str(so)]) == 0
    summary = json.loads(capsys.readouterr().out)
    (row,) = csv.DictReader(table.open())
    top = max(vgprs_at.values())
    assert row["max_live_vgpr"] == str(top) and row["max_live_unknown"] == ""
    assert row["max_live_agpr"] == "0"
    first = int(row["max_live_vgpr_at"].split("-")[0], 16)
    assert vgprs_at[first] == top
    assert row["max_live_vgpr_line"] == ""  # no .debug_line
    (target,) = summary["targets"].values()
    assert target["max_live_vgpr"] == top and target["max_live_unknown"] == 0
    assert "most live VGPRs" in html.read_text()
    # Without --isa: no such columns.
    assert main(["census", "--csv", str(table), "--json", str(so)]) == 0
    capsys.readouterr()
    assert "max_live_vgpr" not in next(csv.reader(table.open()))


def test_diff_fails_on_live_vgprs_that_rose_and_says_where(builds, capsys):
    (old, old_at), (new, new_at) = builds
    before, after = max(old_at.values()), max(new_at.values())
    assert after > before
    assert main(["diff", "--json", "--fail-on", "live-vgpr", str(old), str(new)]) == 1
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert (row["old"]["max_live_vgpr"], row["new"]["max_live_vgpr"]) == (before, after)
    assert row["fails"] == ["live-vgpr"] or "live-vgpr" in row["fails"]
    at = row["new"]["max_live_vgpr_at"]
    assert new_at[int(at.split("-")[0], 16)] == after
    assert main(["diff", "--fail-on", "live-vgpr", str(old), str(new)]) == 1
    text = capsys.readouterr().out
    assert f"(live {before}->{after} (+{after - before}) at {at})" in text
    assert "FAIL live-vgpr" in text
    # As many live: no regression.
    assert main(["diff", "--json", "--fail-on", "live-vgpr", str(new), str(new)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert row["old"]["max_live_vgpr"] == row["new"]["max_live_vgpr"] == after and row["regressions"] == []
    # Fewer live: no regression; not named by --fail-on: not read.
    assert main(["diff", "--fail-on", "live-vgpr", str(new), str(old)]) == 0
    capsys.readouterr()
    assert main(["diff", "--json", "--fail-on", "none", str(old), str(new)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert row["new"]["max_live_vgpr"] is None and "live-vgpr" not in row["regressions"]
    # --isa reads them without failing on them.
    assert main(["diff", "--json", "--isa", "--fail-on", "none", str(old), str(new)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["kernels"]
    assert (row["old"]["max_live_vgpr"], row["new"]["max_live_vgpr"]) == (before, after)
    assert "live-vgpr" in row["regressions"] and row["fails"] == []


def test_census_old_new_fails_on_live_vgprs_that_rose(builds, capsys):
    (old, old_at), (new, new_at) = builds
    before, after = max(old_at.values()), max(new_at.values())
    assert main(["census", "--json", "--fail-on", "live-vgpr", str(old), str(new)]) == 1
    (change,) = json.loads(capsys.readouterr().out)["changes"]
    assert "live-vgpr" in change["fails"]
    assert (change["old"]["max_live_vgpr"], change["new"]["max_live_vgpr"]) == (before, after)
    assert f"(live {before}->{after} (+{after - before}) at {change['new']['max_live_vgpr_at']})" in change["cells"][3]
    # --isa reads them without failing on them; without either they are not read.
    assert main(["census", "--json", "--isa", "--fail-on", "none", str(old), str(new)]) == 0
    (change,) = json.loads(capsys.readouterr().out)["changes"]
    assert "live-vgpr" in change["regressions"] and change["fails"] == []
    assert main(["census", "--json", "--fail-on", "none", str(old), str(new)]) == 0
    (change,) = json.loads(capsys.readouterr().out)["changes"]
    assert change["new"]["max_live_vgpr"] is None and "live-vgpr" not in change["regressions"]
