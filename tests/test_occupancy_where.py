"""``amdocc occupancy --where`` (``next_step_where``): where a register next step's registers are live.

Held to LLVM 22 on a kernel llc-22 builds, whose 140 accumulators and 24 loaded factors make
VGPRs limit occupancy at 256 threads with the most of them live inside its loop:

- the place's count equals the most registers LLVM's final machine IR has live (live-in ∪
  live-out, tests/oracle/mir.py, from each block's ``liveins:`` through every instruction's defs
  and uses) over the instructions of each range, and over the whole kernel;
- it is at most the VGPRs the descriptor allocates (``.amdhsa_next_free_vgpr`` as
  llvm-objdump-22 prints it);
- each range's loop depth is the one llc-22's assembly annotates its block with
  (``Loop Header: Depth=1`` / ``in Loop: ... Depth=1``).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

import amdocc
from amdocc.cli.main import main
from oracle import llvm22, mir

pytestmark = pytest.mark.llvm22

ACCUMULATORS, FACTORS = 140, 24
_ASM_BLOCK = re.compile(r"^(?:\.LBB\d+_(\d+):|; %bb\.(\d+):)")
_DEPTH = re.compile(r"Depth=(\d+)")


def hot_loop_ir() -> str:
    """A kernel keeping ACCUMULATORS values across a loop that loads FACTORS more each trip."""
    lines = [
        'target triple = "amdgcn-amd-amdhsa"',
        "define amdgpu_kernel void @hot_loop(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) #0 {",
        "entry:",
        "  %tid = call i32 @llvm.amdgcn.workitem.id.x()",
    ]
    for i in range(ACCUMULATORS):
        lines += [
            f"  %p{i} = getelementptr float, ptr addrspace(1) %in, i32 {i * 997}",
            f"  %q{i} = getelementptr float, ptr addrspace(1) %p{i}, i32 %tid",
            f"  %a{i} = load volatile float, ptr addrspace(1) %q{i}",
        ]
    lines += ["  br label %loop", "loop:", "  %k = phi i32 [0, %entry], [%k1, %loop]"]
    lines += [f"  %c{i} = phi float [%a{i}, %entry], [%d{i}, %loop]" for i in range(ACCUMULATORS)]
    for j in range(FACTORS):
        lines += [
            f"  %xo{j} = add i32 %k, {j * 131}",
            f"  %xq{j} = getelementptr float, ptr addrspace(1) %in, i32 %xo{j}",
            f"  %xr{j} = getelementptr float, ptr addrspace(1) %xq{j}, i32 %tid",
            f"  %x{j} = load volatile float, ptr addrspace(1) %xr{j}",
        ]
    lines += [
        f"  %d{i} = call float @llvm.fma.f32(float %c{i}, float %x{i % FACTORS}, float %x{(i * 7 + 3) % FACTORS})"
        for i in range(ACCUMULATORS)
    ]
    lines += ["  %k1 = add i32 %k, 1", "  %done = icmp sge i32 %k1, %n", "  br i1 %done, label %exit, label %loop"]
    lines += ["exit:"]
    for i in range(ACCUMULATORS):
        lines += [
            f"  %o{i} = getelementptr float, ptr addrspace(1) %out, i32 {i * 1001}",
            f"  %r{i} = getelementptr float, ptr addrspace(1) %o{i}, i32 %tid",
            f"  store volatile float %d{i}, ptr addrspace(1) %r{i}",
        ]
    lines += [
        "  ret void",
        "}",
        "declare i32 @llvm.amdgcn.workitem.id.x()",
        "declare float @llvm.fma.f32(float, float, float)",
        'attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }',
    ]
    return "\n".join(lines) + "\n"


def asm_loop_depths(asm: str) -> dict[int, int]:
    """Each machine block's loop depth from llc-22's assembly comments (0 when it has none)."""
    depths: dict[int, int] = {}
    current: int | None = None
    for line in asm.splitlines():
        m = _ASM_BLOCK.match(line)
        if m:
            current = int(m.group(1) or m.group(2))
            depths[current] = 0
        if current is not None and (m or line.lstrip().startswith(";")):  # the label's comments
            d = _DEPTH.search(line)
            if d:
                depths[current] = int(d.group(1))
    return depths


@pytest.fixture(scope="module")
def hot_loop(tmp_path_factory):
    work = tmp_path_factory.mktemp("where")
    ll = work / "hot_loop.ll"
    ll.write_text(hot_loop_ir())
    obj, text = mir.compile_with_mir(ll, "gfx942", False, work)
    so = work / "hot_loop.so"
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(so)], check=True, capture_output=True)
    asm = subprocess.run(
        ["llc-22", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O3", str(ll), "-o", "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    fn = mir.parse_mir(text)["hot_loop"]
    mapped = mir.map_function(fn, mir.disassemble(so, "gfx942", False)["hot_loop"])
    live = mir.live_per_instruction(fn)
    vgprs_at: dict[int, int] = {}  # address -> VGPRs MIR has live there
    block_at: dict[int, int] = {}
    for block, (start, end), rows in zip(fn.blocks, mapped.block_ranges, live, strict=True):
        for (_, line), regs in zip(mapped.pairs[start:end], rows, strict=True):
            vgprs_at[line.address] = sum(1 for r in mir.counted(regs) if r[0] == "v")
            block_at[line.address] = block.number
    allocated = llvm22.objdump_descriptors([str(so)], ["hot_loop.kd"])[str(so)]["hot_loop.kd"]["next_free_vgpr"]
    return so, vgprs_at, block_at, asm_loop_depths(asm), allocated


def _record(capsys, *args) -> dict:
    assert main(["occupancy", "--json", *map(str, args)]) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    return r


def test_the_place_is_where_llvms_machine_ir_has_the_most_vgprs_live(hot_loop, capsys):
    so, vgprs_at, block_at, depths, allocated = hot_loop
    r = _record(capsys, "--where", so)
    assert r["limiter"] == "vgpr" and "vgpr" in r["next_step"]["shed"]
    place = r["next_step_where"]
    assert place["class"] == "vgpr" and place["unknown"] is None and place["ranges"]
    assert place["live"] == max(vgprs_at.values())
    assert place["live"] <= allocated
    for stretch in place["ranges"]:
        inside = [n for address, n in vgprs_at.items() if stretch["first"] <= address <= stretch["last"]]
        assert max(inside) == place["live"], stretch
        assert stretch["loop_depth"] == depths[block_at[stretch["first"]]] == 1
        assert stretch["lines"] == []  # no .debug_line


def test_the_text_names_the_place_after_the_shed(hot_loop, capsys):
    so, _, _, _, _ = hot_loop
    place = _record(capsys, "--where", so)["next_step_where"]
    first = place["ranges"][0]
    span = f"{first['first']:#x}" if first["first"] == first["last"] else f"{first['first']:#x}–{first['last']:#x}"
    assert main(["occupancy", "--where", str(so)]) == 0
    out = capsys.readouterr().out
    assert f"for 4 workgroups per CU: {place['live']} VGPRs are live at {span} (loop depth 1)" in out


def test_without_where_the_record_has_a_null_place_and_no_disassembly(hot_loop, capsys):
    so, _, _, _, _ = hot_loop
    assert _record(capsys, so)["next_step_where"] is None
    assert main(["occupancy", str(so)]) == 0
    assert "are live at" not in capsys.readouterr().out


def test_the_api_gives_what_the_command_prints(hot_loop, capsys):
    so, _, _, _, _ = hot_loop
    (api,) = amdocc.app.occupancy(so, where=True)["results"]
    assert api["next_step_where"] == _record(capsys, "--where", so)["next_step_where"]


def test_a_step_that_sheds_no_register_has_no_place(capsys):
    from amdocc.samples import path as sample_path

    args = ["occupancy", "--json", "--where", "--target", "gfx942", "--kernel", "saxpy_lds", str(sample_path())]
    assert main(args) == 0
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert r["next_step"]["shed"] == {"lds": r["next_step"]["shed"]["lds"]} and r["next_step_where"] is None


def test_where_with_manual_numbers_is_a_usage_error(capsys):
    assert main(["occupancy", "--where", "--target", "gfx942", "--vgprs", "128", "--block", "256"]) == 2
    assert capsys.readouterr().err == "amdocc: --where needs PATHs: manual numbers have no code to look at\n"
    from amdocc.models.usage import manual
    from amdocc.targets import get_target

    usage = manual(get_target("gfx942"), vgprs=128)
    with pytest.raises(amdocc.UsageError, match="where needs code to look at"):
        amdocc.app.occupancy(usage, block=256, where=True)


def test_no_libllvm_says_so_in_the_place(hot_loop, monkeypatch, capsys):
    import glob

    from amdocc.isa import libllvm

    so, _, _, _, _ = hot_loop
    zlib = next(p for p in glob.glob("/usr/lib/*/libz.so*") + glob.glob("/lib/*/libz.so*"))  # not LLVM
    monkeypatch.setenv("AMDOCC_LIBLLVM", zlib)
    libllvm.forget()
    try:
        place = _record(capsys, "--where", so)["next_step_where"]
        assert main(["occupancy", "--where", str(so)]) == 0
        out = capsys.readouterr().out
    finally:
        libllvm.forget()
    assert place["live"] is None and place["ranges"] is None
    assert place["unknown"].startswith("no libLLVM to disassemble with: ")
    assert "does not export LLVMInitializeAMDGPUTargetInfo" in place["unknown"]
    assert "where the VGPRs are live is not known: no libLLVM" in out
