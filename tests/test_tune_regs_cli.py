"""``amdocc tune-regs`` on the command line: the JSON contract's keys, the exit status of an entry
the installed Triton does not reproduce, usage errors, the plot."""

from __future__ import annotations

import json

import pytest

from amdocc.cli.main import main
from conftest import needs

needs("triton", "tune-regs recompiles with Triton's AMD code generator (pip install 'amdocc[triton]')")

import test_tune_regs_triton as tt  # noqa: E402 - the axpy kernel and the cache helpers

pytestmark = pytest.mark.llvm22

RESULT_KEYS = {"path", "kernel", "target", "compiler", "exact", "launch", "points"}
POINT_KEYS = {"waves_per_eu", "agpr_alloc", "vgprs", "agprs", "sgprs", "vgpr_spill_count", "sgpr_spill_count",
              "private_segment_fixed_size", "spills_in_loops", "accvgpr_copies", "waves_per_simd", "frontier",
              "error"}  # fmt: skip


@pytest.fixture
def entry(tmp_path, monkeypatch):
    built = tt._compile(tmp_path / "cache", "axpy", "gfx942", monkeypatch)
    return tt._entry_of(tmp_path / "cache", built)


def test_json_has_the_contracts_keys(entry, capsys):
    assert main(["tune-regs", "--json", "--waves", "8", str(entry)]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert set(result) >= RESULT_KEYS and set(result["launch"]) == {"block_size", "dynamic_lds"}
    assert result["launch"] == {"block_size": 256, "dynamic_lds": 0} and result["exact"] is True
    for point in result["points"]:
        assert set(point) >= POINT_KEYS and {"llvm", "hip"} <= set(point["waves_per_simd"])
    first = result["points"][0]
    assert (first["waves_per_eu"], first["agpr_alloc"]) == (None, None)


def test_the_table_marks_the_frontier(entry, capsys):
    assert main(["tune-regs", "--waves", "8", str(entry)]) == 0
    out = capsys.readouterr().out
    assert "axpy_kernel  gfx942" in out and "exact: reproduces the build" in out
    assert any(line.lstrip().startswith("*  as built") for line in out.splitlines())


def test_an_entry_another_triton_built_is_exit_3(entry, capsys):
    entry.write_text(entry.read_text().replace("fmul", "fadd", 1))
    assert main(["tune-regs", str(entry)]) == 3
    err = capsys.readouterr().err
    assert "is not the one that built it" in err and "triton_version 3.9.0" in err


def test_llvm_ir_needs_a_compiler(tmp_path, capsys):
    ir = tmp_path / "k.ll"
    ir.write_text("; empty\n")
    assert main(["tune-regs", str(ir)]) == 2
    assert "--compiler" in capsys.readouterr().err


def test_target_without_compiler_is_refused(entry, capsys):
    assert main(["tune-regs", "--target", "gfx942", str(entry)]) == 2
    assert "--target applies to LLVM IR" in capsys.readouterr().err


def test_the_plot_is_written(entry, tmp_path, capsys):
    needs("matplotlib", "the plot needs it (amdocc[plot])")
    out = tmp_path / "front.png"
    assert main(["tune-regs", "--waves", "8", "--plot", str(out), str(entry)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unreadable_entry_is_reported_and_the_others_still_run(entry, capsys):
    broken = entry.parent.parent / "BROKEN" / "k.llir"
    broken.parent.mkdir()
    broken.write_text("; nothing\n")
    broken.with_suffix(".json").write_text("{not json")
    assert main(["tune-regs", "--json", "--waves", "8", str(entry.parent.parent)]) == 2
    captured = capsys.readouterr()
    results = {r["kernel"]: r for r in json.loads(captured.out)["results"]}
    assert results["axpy_kernel"]["exact"] is True and results["axpy_kernel"]["points"]
    assert results["k"]["points"] == [] and "k.json: not JSON" in results["k"]["error"]
    assert "k.json: not JSON" in captured.err
