"""``amdocc occupancy --where`` on a Triton cache entry built with line info: the place's source
lines against ``llvm-objdump-22 -d -l`` (the location it last printed before each instruction;
instructions ``llvm-dwarfdump-22 --debug-line`` gives line 0 have none), and its count against
the descriptor's VGPR allocation.

Triton 3.9 compiles test_triton.py's 128×128×32 matmul for gfx942 with no GPU, with its line info
(the shared session cache turns it off), into a private cache directory, so the launch Triton
records (4 warps of 64) is the block size the record uses.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from amdocc.cli.main import main
from conftest import needs
from isa_oracle import objdump_lines
from oracle import llvm22
from test_isa_lines import _agrees_with_objdump, _line_zero_addresses

pytestmark = pytest.mark.llvm22
needs("triton", "the Triton kernel is compiled with it (pip install 'amdocc[triton]')")

import test_triton as tt  # noqa: E402 - its kernels
from amdocc.integrations import triton as at  # noqa: E402


@pytest.fixture(scope="module")
def matmul_with_lines(tmp_path_factory):
    cache = tmp_path_factory.mktemp("triton-lines")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_CACHE_DIR", str(cache))
        mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        mp.delenv("TRITON_DISABLE_LINE_INFO", raising=False)
        fn, signature, constexprs, options = tt.KERNELS["matmul"]
        compiled = at.compile_offline(fn, signature, constexprs, "gfx942", **options)
    (hsaco,) = [p for p in cache.rglob("*.hsaco") if p.read_bytes() == compiled.asm["hsaco"]]
    return hsaco, compiled.metadata.name


def test_the_places_lines_are_those_objdump_prints_for_its_ranges(matmul_with_lines, capsys):
    hsaco, name = matmul_with_lines
    assert main(["occupancy", "--json", "--where", str(hsaco)]) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert r["block_source"] == "triton-cache launch" and r["limiter"] == "vgpr"
    place = r["next_step_where"]
    assert place["class"] == "vgpr" and place["unknown"] is None
    allocated = llvm22.objdump_descriptors([str(hsaco)], [f"{name}.kd"])[str(hsaco)][f"{name}.kd"]["next_free_vgpr"]
    assert place["live"] <= allocated
    theirs = objdump_lines(hsaco, "gfx942")
    zero = _line_zero_addresses(hsaco)
    named = 0
    for stretch in place["ranges"]:
        expected = {
            where
            for address, where in theirs.items()
            if stretch["first"] <= address <= stretch["last"] and not any(a <= address < b for a, b in zero)
        }
        assert stretch["lines"] == sorted(expected)
        named += len(expected)
    assert named > 0

    assert main(["occupancy", "--where", str(hsaco)]) == 0
    out = capsys.readouterr().out
    first = place["ranges"][0]
    numbers = [int(w.rsplit(":", 1)[1]) for w in first["lines"]]
    files = {os.path.basename(w.rsplit(":", 1)[0]) for w in first["lines"]}
    assert files == {"test_triton.py"}
    span = f"{min(numbers)}" if min(numbers) == max(numbers) else f"{min(numbers)}–{max(numbers)}"
    assert f"VGPRs are live at {first['first']:#x}" in out
    assert f"(test_triton.py:{span}, loop depth {first['loop_depth']})" in out


def test_every_instruction_of_the_triton_kernel_has_the_line_objdump_prints(matmul_with_lines):
    hsaco, _ = matmul_with_lines
    assert _agrees_with_objdump(hsaco, "gfx942") > 100


def test_vgprs_and_agprs_together_where_they_share_the_file(tmp_path, capsys):
    # Triton's 256x128x64 matmul keeps its accumulators in AGPRs on gfx942, whose VGPR limiter
    # counts both classes: its own LLVM IR through llc-22 gives the machine IR to count them in.
    from oracle import mir

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
        mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        fn, signature, constexprs, options = tt.KERNELS["matmul_agpr"]
        compiled = at.compile_offline(fn, signature, constexprs, "gfx942", **options)
    name = compiled.metadata.name
    ll = tmp_path / "matmul_agpr.ll"
    ll.write_text(mir.for_llc22(compiled.asm["llir"]))
    obj, text = mir.compile_with_mir(ll, "gfx942", False, tmp_path)
    so = tmp_path / "matmul_agpr.so"
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(so)], check=True, capture_output=True)
    fn_mir = mir.parse_mir(text)[name]
    mapped = mir.map_function(fn_mir, mir.disassemble(so, "gfx942", False)[name])
    both_at: dict[int, int] = {}
    for (start, end), rows in zip(mapped.block_ranges, mir.live_per_instruction(fn_mir), strict=True):
        for (_, line), regs in zip(mapped.pairs[start:end], rows, strict=True):
            both_at[line.address] = sum(1 for r in mir.counted(regs) if r[0] in "va")
    assert any(r[0] == "a" for b in fn_mir.blocks for r in b.liveins)  # AGPRs are live across blocks

    assert main(["occupancy", "--json", "--where", "--block", "256", str(so)]) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert r["limiter"] == "vgpr"
    place = r["next_step_where"]
    assert place["class"] == "vgpr+agpr" and place["unknown"] is None
    assert place["live"] == max(both_at.values())
    allocated = llvm22.objdump_descriptors([str(so)], [f"{name}.kd"])[str(so)][f"{name}.kd"]["next_free_vgpr"]
    assert place["live"] <= allocated
    for stretch in place["ranges"]:
        inside = [n for address, n in both_at.items() if stretch["first"] <= address <= stretch["last"]]
        assert max(inside) == place["live"]
    assert main(["occupancy", "--where", "--block", "256", str(so)]) == 0
    assert f"{place['live']} VGPRs and AGPRs are live at" in capsys.readouterr().out
