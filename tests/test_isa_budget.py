"""``amdocc check --budget 'spills_in_loops...'``: the spill traffic inside loops, against
llc-22's own asm for the same IR (its ``4-byte Folded Spill``/``Reload`` comments and its loop
comments); a kernel whose control flow is unknown is not evaluated, with the reason."""

from __future__ import annotations

import json
import re

import pytest

from amdocc.cli.main import main
from isa_oracle import BUILDS, asm_loop_depths, build_ir, llc
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22


def test_spills_in_loops_budget_counts_what_llc_comments_in_loops(tmp_path, capsys):
    _library()
    name, arch, flags = next(b for b in BUILDS if b[0] == "gfx942")
    hsaco, asm = llc(build_ir(tmp_path, name, arch, flags), arch, tmp_path)
    expected = asm_loop_depths(asm)["_Z9isa_spillPKfPfi"]
    # The function's instruction lines, in the order asm_loop_depths lists them, for the bytes
    # each Folded Spill/Reload comment names (gfx942 has no s_clause comments).
    body = asm.split("_Z9isa_spillPKfPfi:", 1)[1].split(".Lfunc_end", 1)[0]
    lines = [line for line in body.splitlines() if line.startswith("\t") and line.strip()[:1].isalpha()]
    assert len(lines) == len(expected)
    in_loops = 0
    for line, (_, depth, _) in zip(lines, expected, strict=True):
        m = re.search(r"(\d+)-byte Folded (?:Spill|Reload)", line)
        if m and depth > 0:
            in_loops += int(m.group(1)) // 4
    assert in_loops > 0
    code = main(["check", "--no-config", "--json", "--rules", "mode", "--budget", "spills_in_loops==0", str(hsaco)])
    doc = json.loads(capsys.readouterr().out)
    values = {v["kernel"]: v["value"] for v in doc["violations"] if v["rule"] == "budget:spills_in_loops==0"}
    assert code == 1
    assert values["_Z9isa_spillPKfPfi"] == in_loops
    assert "_Z11isa_privatePKiPfi" not in values  # a private array, not a spill
    assert "_Z10isa_nestedPKfPfiii" not in values


def test_spills_in_loops_is_not_evaluated_on_an_unknown_graph(tmp_path, capsys):
    import subprocess

    from isa_oracle import HIP_FLAGS, SOURCE, objdump
    from test_isa_flow import CALLS

    _library()
    src, out = tmp_path / "calls.hip", tmp_path / "calls.co"
    src.write_text(CALLS)
    cmd = ["clang-22", *HIP_FLAGS, "--offload-arch=gfx942", f"-I{SOURCE.parent}", str(src), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    (swappc,) = [a for a, t in objdump(out, "gfx942").text.items() if t.startswith("s_swappc_b64")]
    code = main(["check", "--no-config", "--json", "--rules", "mode", "--budget", "spills_in_loops==0", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["violations"] == []
    (skipped,) = doc["not_evaluated"]
    assert skipped["rule"] == "budget:spills_in_loops==0"
    why = f"s_swappc_b64 at {swappc:#x}: an indirect jump or call, its target is not in the code"
    assert skipped["reason"] == f"its control flow is not known: {why}"
