"""``amdocc check --budget 'max_live_vgpr<=N'`` (and ``max_live_agpr``, ``max_live_sgpr``): the
most registers live at once, against a program whose liveness is worked by hand (RGA's
convention: live-in or live-out at each instruction), assembled by llvm-mc-22 into a kernel."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from amdocc.cli.main import main
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22

KERNEL = """
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl k
.p2align 8
.type k,@function
k:
{body}
.Lk_end:
.size k, .Lk_end-k
.rodata
.p2align 6
.amdhsa_kernel k
  .amdhsa_next_free_vgpr 4
  .amdhsa_next_free_sgpr 2
  .amdhsa_accum_offset 4
.end_amdhsa_kernel
.amdgpu_metadata
---
amdhsa.version: [1, 2]
amdhsa.kernels:
  - .name: k
    .symbol: k.kd
    .kernarg_segment_size: 0
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .wavefront_size: 64
    .sgpr_count: 2
    .vgpr_count: 4
    .max_flat_workgroup_size: 256
...
.end_amdgpu_metadata
"""
# Worked by hand: before the add, v0 and v3 are live in and v1 live out; at the add v0, v1, v3
# (in) and v2 (out): 4 VGPRs; s0 and s1 are live until the store: 2 SGPRs; no AGPR.
STRAIGHT = """
  v_mov_b32_e32 v1, 0
  v_add_f32_e32 v2, v0, v1
  global_store_dword v3, v2, s[0:1]
  s_endpgm
"""


def _kernel(tmp_path, body: str):
    for tool in ("llvm-mc-22", "ld.lld-22"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    src, obj, out = tmp_path / "k.s", tmp_path / "k.o", tmp_path / "k.hsaco"
    src.write_text(KERNEL.format(body=body))
    cmd = ["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", str(src), "-o", str(obj)]
    subprocess.run(cmd, check=True, capture_output=True)
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(out)], check=True, capture_output=True)
    return out


def _check(capsys, budget: str, path) -> tuple[int, dict]:
    code = main(["check", "--no-config", "--json", "--rules", "mode", "--budget", budget, str(path)])
    return code, json.loads(capsys.readouterr().out)


def test_max_live_budgets_hold_the_hand_worked_counts(tmp_path, capsys):
    _library()
    hsaco = _kernel(tmp_path, STRAIGHT)
    code, doc = _check(capsys, "max_live_vgpr<=3, max_live_sgpr<=1, max_live_agpr<=0", hsaco)
    assert code == 1
    assert {v["rule"]: v["value"] for v in doc["violations"]} == {
        "budget:max_live_vgpr<=3": 4,
        "budget:max_live_sgpr<=1": 2,
    }
    assert doc["not_evaluated"] == []
    code, doc = _check(capsys, "max_live_vgpr<=4, max_live_sgpr<=2", hsaco)
    assert code == 0 and doc["violations"] == []


def test_max_live_is_not_evaluated_when_the_control_flow_is_unknown(tmp_path, capsys):
    _library()
    hsaco = _kernel(tmp_path, "  s_setpc_b64 s[0:1]\n  s_endpgm\n")
    code, doc = _check(capsys, "max_live_vgpr<=0", hsaco)
    assert code == 0 and doc["violations"] == []
    (skipped,) = doc["not_evaluated"]
    assert skipped["rule"] == "budget:max_live_vgpr<=0"
    assert skipped["reason"].startswith("its register liveness is not known: control flow unknown: s_setpc_b64 at ")


def test_a_max_live_violation_points_at_a_source_line_of_its_kernel(tmp_path, capsys):
    # tools/fixture_src/isa_kernels.hip built with a line table: the annotation names the file
    # and a line of isa_spill's own body (read from the source text).
    import re

    from isa_oracle import SOURCE, build

    _library()
    co = build(tmp_path, "lines", "gfx942", [], ["-gline-tables-only"])
    text = SOURCE.read_text().splitlines()
    start = next(i for i, t in enumerate(text, 1) if " void isa_spill(" in t)
    end = next(i for i, t in enumerate(text, 1) if i > start and t == "}")
    argv = ["check", "--no-config", "--rules", "mode", "--budget", "max_live_vgpr<=1", "--github"]
    assert main([*argv, "--kernel", "^_Z9isa_spill", str(co)]) == 1
    (annotation,) = capsys.readouterr().out.splitlines()
    m = re.match(r"::error file=([^,]*),line=(\d+),title=amdocc check%3A budget%3Amax_live_vgpr<=1::", annotation)
    assert m and m.group(1).endswith("isa_kernels.hip")
    assert start <= int(m.group(2)) <= end
