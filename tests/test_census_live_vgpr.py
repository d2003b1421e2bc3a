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

import amdocc.app
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


def _objdump_calls(path) -> dict[str, list[int]]:
    """Each function's s_swappc_b64 addresses (indirect calls), as llvm-objdump-22 -d prints them."""
    text = subprocess.run(
        ["llvm-objdump-22", "-d", "--mcpu=gfx942", str(path)], capture_output=True, text=True, check=True
    ).stdout
    calls: dict[str, list[int]] = {}
    function = None
    for line in text.splitlines():
        if line.endswith(">:"):
            function = line.split("<", 1)[1][:-2]
            calls[function] = []
        elif "s_swappc_b64" in line and function is not None:
            calls[function].append(int(line.rsplit("// ", 1)[1].split(":")[0], 16))
    return calls


def test_census_isa_parquet_reads_back_as_the_json_summary_and_the_csv_rows(builds, tmp_path, capsys):
    # The live-register columns written to Parquet (pyarrow), read back with pyarrow: typed as
    # the columns are (whole numbers int64, null where unknown), equal to the CSV rows of the same
    # run, to LLVM's final MIR on the kernels llc-22 built, and to the --json summary per target.
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        from conftest import skip_unless_required

        skip_unless_required("pyarrow is not installed (the test extra installs it)")
    import shutil

    from conftest import FIXTURES

    (old, old_at), (new, new_at) = builds
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(old, tree / "old.so")
    shutil.copy(new, tree / "new.so")
    calls = FIXTURES / "objects" / "linking_calls.plain.co"  # kernels that call through a register
    shutil.copy(calls, tree / "calls.co")
    parquet, table = tmp_path / "rows.parquet", tmp_path / "rows.csv"
    assert main(["census", "--isa", "--parquet", str(parquet), "--csv", str(table), "--json", str(tree)]) == 0
    summary = json.loads(capsys.readouterr().out)
    read = pq.read_table(parquet)
    live = ("max_live_vgpr", "max_live_agpr", "max_live_sgpr")
    for name in live:
        assert read.schema.field(name).type == pa.int64()
    for name in ("max_live_vgpr_at", "max_live_vgpr_line", "max_live_unknown"):
        assert read.schema.field(name).type == pa.string()
    rows = read.to_pylist()
    with table.open() as fh:
        csv_rows = list(csv.DictReader(fh))
    assert read.schema.names == list(csv_rows[0])  # the same columns, in the same order
    isa = [name for name in read.schema.names if name.startswith(("max_live", "spill_", "spills_in_loops"))]
    assert len(isa) == 10  # docs/gates.md: the spill-in-loop and live-register columns of --isa
    for parsed, written in zip(rows, csv_rows, strict=True):  # CSV writes null as an empty cell
        assert (parsed["member"], parsed["kernel"]) == (written["member"], written["kernel"])
        assert {k: "" if parsed[k] is None else str(parsed[k]) for k in isa} == {k: written[k] for k in isa}
    from_python: list[dict] = []  # the rows amdocc.app.census hands out, as the writers get them
    amdocc.app.census(tree, isa=True, rows=from_python)
    assert [{k: r[k] for k in read.schema.names} for r in from_python] == rows
    by_member = {(r["member"], r["kernel"]): r for r in rows}
    # LLVM's final MIR: the most VGPRs live, and an address where that many are.
    for member, at in (("old.so", old_at), ("new.so", new_at)):
        row = by_member[(member, "hot_loop")]
        assert row["max_live_vgpr"] == max(at.values()) and row["max_live_agpr"] == 0
        assert at[int(row["max_live_vgpr_at"].split("-")[0], 16)] == row["max_live_vgpr"]
        assert row["max_live_unknown"] is None and row["max_live_vgpr_line"] is None
    # llvm-objdump-22: a kernel that calls through a register has no known liveness (nulls).
    called = {name: addresses for name, addresses in _objdump_calls(calls).items() if addresses}
    unknown = [r for r in rows if r["member"] == "calls.co" and r["max_live_unknown"] is not None]
    assert unknown and len(unknown) == len([r for r in rows if r["member"] == "calls.co"])
    for row in unknown:
        assert all(row[name] is None for name in (*live, "max_live_vgpr_at"))
        address = int(row["max_live_unknown"].split(" at ")[1].split(":")[0], 16)
        assert any(address in addresses for addresses in called.values()), row["max_live_unknown"]
    # The --json summary per target, from the same rows.
    for target, figures in summary["targets"].items():
        mine = [r for r in rows if r["target"] == target]
        known = [r["max_live_vgpr"] for r in mine if r["max_live_vgpr"] is not None]
        assert figures["max_live_vgpr"] == max(known, default=0)
        assert figures["max_live_unknown"] == sum(r["max_live_unknown"] is not None for r in mine)
    assert sum(f["max_live_unknown"] for f in summary["targets"].values()) == len(unknown)
    assert max(f["max_live_vgpr"] for f in summary["targets"].values()) == max(new_at.values())


def _cell(text: str, target: str, column: str) -> str:
    """One cell of census's per-target text table (numbers are right-aligned under their heading)."""
    lines = text.splitlines()
    header = next(line for line in lines if line.split()[:1] == ["target"])
    row = next(line for line in lines if line.split()[:1] == [target])
    end = header.index(column) + len(column)
    return row[:end].split()[-1]


def test_census_isa_text_table_shows_the_most_live_vgprs_per_target_as_the_html_does(builds, tmp_path, capsys):
    import shutil

    from conftest import FIXTURES

    (_, _), (new, new_at) = builds
    calls = FIXTURES / "objects" / "linking_calls.plain.co"
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(calls)], capture_output=True, text=True, check=True)
    kernels = {line.split()[-1][: -len(".kd")] for line in notes.stdout.splitlines() if ".symbol:" in line}
    calling = {name for name, addresses in _objdump_calls(calls).items() if addresses and name in kernels}
    assert calling  # kernels whose liveness cannot be known: they call through a register
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(new, tree / "new.so")
    shutil.copy(calls, tree / "calls.co")
    assert main(["census", "--isa", str(tree)]) == 0
    text = capsys.readouterr().out
    assert _cell(text, "gfx942", "most live VGPRs") == str(max(new_at.values()))  # llc-22's final MIR
    assert _cell(text, "gfx942", "liveness unknown") == str(len(calling))
    # No kernel with a figure: "-", as in the HTML; without --isa, no such columns.
    only_calls = tmp_path / "calls"
    only_calls.mkdir()
    shutil.copy(calls, only_calls / "calls.co")
    assert main(["census", "--isa", str(only_calls)]) == 0
    text = capsys.readouterr().out
    assert _cell(text, "gfx942", "most live VGPRs") == "-"
    assert _cell(text, "gfx942", "liveness unknown") == str(len(calling))
    assert main(["census", str(tree)]) == 0
    assert "most live VGPRs" not in capsys.readouterr().out
