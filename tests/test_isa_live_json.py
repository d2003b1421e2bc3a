"""``amdocc isa --json``'s liveness fields: ``live`` per instruction, ``max_live``, ``peak``.

Held to LLVM 22's final machine IR for the same kernels (tests/oracle/mir.py): at the first
instruction of every block, the registers MIR lists as live-in are live before it, so the count
(live before ∪ live after) is at least MIR's and at most MIR's plus what that instruction writes,
wherever amdocc's live-ins equal MIR's (the other blocks are explained in
tests/test_isa_liveness_mir.py). ``max_live`` is reached by some instruction's ``live``, never
exceeds the descriptor's allocation (``.amdhsa_next_free_vgpr`` as llvm-objdump-22 prints it), and
every peak stretch lies where ``live`` equals the maximum.
"""

from __future__ import annotations

import json

import pytest

import isa_mir_cases as cases
from amdocc.cli.main import main
from oracle import llvm22, mir

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]

CLASS_OF = {"v": "vgpr", "a": "agpr", "s": "sgpr"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    work = tmp_path_factory.mktemp("live-json")
    out = []
    for target, wave64 in (("gfx942", False), ("gfx1100", False)):
        ll = work / f"{target}.ll"
        ll.write_text(cases.livegen.module(target, 7, 6))
        obj, text = mir.compile_with_mir(ll, target, wave64, work)
        out.append((target, obj, mir.parse_mir(text), cases.build(ll, target, wave64, work)))
    return out


def _isa_json(capsys, path) -> dict:
    assert main(["isa", "--json", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def test_live_at_each_block_start_brackets_mirs_live_ins(built, capsys):
    checked = 0
    for _target, obj, functions, kernel_cases in built:
        by_name = {c.name: c for c in kernel_cases}
        for k in _isa_json(capsys, obj)["kernels"]:
            case = by_name[k["kernel"]]
            rows = {row["address"]: row for row in k["instructions"]}
            differing = {d.text.split()[0] for d in cases.block_differences(case)}
            for block, (start, end) in zip(functions[k["kernel"]].blocks, case.mapped.block_ranges, strict=True):
                if start == end or f"bb.{block.number}" in differing:
                    continue
                first_mi, line = case.mapped.pairs[start]
                written = mir.counted(first_mi.defs)
                live = rows[line.address]["live"]
                for prefix, cls in CLASS_OF.items():
                    before = sum(1 for r in mir.counted(block.liveins) if r[0] == prefix)
                    assert before <= live[cls] <= before + sum(1 for r in written if r[0] == prefix), (
                        k["kernel"],
                        hex(line.address),
                        cls,
                    )
                checked += 1
    assert checked > 50


def test_max_live_and_peaks_agree_with_the_rows_and_the_allocation(built, capsys):
    for target, obj, _, kernel_cases in built:
        symbols = [f"{c.name}.kd" for c in kernel_cases]
        descriptors = llvm22.objdump_descriptors([str(obj)], symbols)[str(obj)]
        allocated = {name.removesuffix(".kd"): d["next_free_vgpr"] for name, d in descriptors.items()}
        for k in _isa_json(capsys, obj)["kernels"]:
            s = k["summary"]
            assert s["liveness_unknown"] is None and s["live_findings"] == []
            rows = k["instructions"]
            for cls in ("vgpr", "agpr", "sgpr"):
                top = max(row["live"][cls] for row in rows)
                assert s["max_live"][cls] == top
                assert s["max_live_refined"][cls] <= top
                at = {row["address"] for row in rows if row["live"][cls] == top}
                for stretch in s["peak"][cls]["at"]:
                    assert stretch["first"] in at and stretch["last"] in at
            assert s["max_live"]["vgpr"] <= allocated[k["kernel"]], (target, k["kernel"])


def test_the_listing_shows_live_columns_and_the_peak(built, capsys):
    _, obj, _, _ = built[0]
    assert main(["isa", str(obj)]) == 0
    out = capsys.readouterr().out
    assert "live registers (V A S): max vgpr" in out and "peak vgpr" in out
