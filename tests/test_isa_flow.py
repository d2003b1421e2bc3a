"""amdocc.isa's control flow and loops: every instruction's loop depth against the loop comments
llc-22 prints in its assembly for the same IR (``Loop Header: Depth=N``, ``in Loop: ... Depth=N``),
for the processors the issue names; indirect flow makes the graph unknown; hand-worked programs
pin reachability, ``s_endpgm`` in the middle and irreducible loops."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import amdocc
from amdocc.isa import control_flow, disassemble
from amdocc.isa.analysis import analyse, summary
from isa_oracle import BUILDS, align, asm_loop_depths, build_ir, llc
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    _library()
    out = tmp_path_factory.mktemp("isa-llc")
    made = {}
    for name, arch, flags in BUILDS:
        ir = build_ir(out, name, arch, flags)
        made[name] = llc(ir, arch, out)
    return made


@pytest.mark.parametrize("name", [b[0] for b in BUILDS])
def test_loop_depth_equals_llc_loop_comments_at_every_instruction(compiled, name):
    hsaco, asm = compiled[name]
    expected = asm_loop_depths(asm)
    (co,) = amdocc.load(hsaco)
    deepest = 0
    for kernel in co.kernels:
        isa = analyse(kernel, co.origin)
        assert isa.flow.unknown is None
        theirs = expected[kernel.name]
        pairs = align([i.mnemonic for i in isa.instructions], theirs)
        assert len(pairs) == len(theirs)
        wrong = [(hex(isa.instructions[i].address), isa.loop_depth[i], theirs[j][1]) for i, j in pairs
                 if isa.loop_depth[i] != theirs[j][1]]  # fmt: skip
        assert wrong == [], (kernel.name, wrong[:5])
        # What the asm does not have is alignment padding; all unreachable code is such padding.
        matched = {i for i, _ in pairs}
        unreachable = [i for i, b in enumerate(isa.block) if not isa.flow.blocks[b].reachable]
        assert set(unreachable) <= set(range(len(isa.instructions))) - matched
        deepest = max(deepest, max(d for _, d, _ in theirs))
        assert summary(isa)["max_loop_depth"] == max((d for _, d, _ in theirs), default=0)
    assert deepest == 3  # isa_nested: three loops deep


CALLS = """
#include "hip_defs.h"
__device__ __attribute__((noinline)) float helper(float x) { return x * x + 1.f; }
__global__ void isa_calls(float* p) { p[TID_X()] = helper(p[TID_X()]); }
"""


def test_a_call_makes_the_graph_unknown_with_the_reason(tmp_path):
    from isa_oracle import HIP_FLAGS, SOURCE, objdump

    _library()
    src = tmp_path / "calls.hip"
    src.write_text(CALLS)
    out = tmp_path / "calls.co"
    cmd = ["clang-22", *HIP_FLAGS, "--offload-arch=gfx942", f"-I{SOURCE.parent}", str(src), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    swappc = [a for a, t in objdump(out, "gfx942").text.items() if t.startswith("s_swappc_b64")]
    (co,) = amdocc.load(out)
    record = amdocc.app.isa_kernel(co.kernel("_Z9isa_callsPf"), co.origin)
    assert len(swappc) == 1
    assert record["summary"]["unknown"] == (
        f"s_swappc_b64 at {swappc[0]:#x}: an indirect jump or call, its target is not in the code"
    )
    assert record["summary"]["loops"] is None and record["summary"]["max_loop_depth"] is None
    assert {i["loop_depth"] for i in record["instructions"]} == {None}
    assert record["summary"]["spills"]["in_loops"] is None


# A hand-written program: an early exit to a tail block placed after an s_endpgm, a loop, an
# irreducible cycle (A and B entered from two sides), and a word after the last s_endpgm.
PROGRAM = """
  s_cmp_eq_u32 s0, 0
  s_cbranch_scc1 tail
  s_mov_b32 s1, 0
loop:
  s_add_u32 s1, s1, 1
  s_cmp_lt_u32 s1, 10
  s_cbranch_scc1 loop
  s_cmp_eq_u32 s2, 0
  s_cbranch_scc1 b
a:
  s_add_u32 s3, s3, 1
  s_cmp_lt_u32 s3, 5
  s_cbranch_scc1 b
  s_endpgm
b:
  s_add_u32 s4, s4, 1
  s_cmp_lt_u32 s4, 5
  s_cbranch_scc1 a
  s_endpgm
tail:
  s_mov_b32 s5, 1
  s_endpgm
  s_nop 0
"""


def _assemble(tmp_path, text: str, mcpu: str = "gfx942") -> bytes:
    for tool in ("llvm-mc-22", "llvm-objcopy-22"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed")
    src, obj, raw = tmp_path / "p.s", tmp_path / "p.o", tmp_path / "p.bin"
    src.write_text(text)
    subprocess.run(["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-filetype=obj", str(src), "-o",
                    str(obj)], check=True, capture_output=True)  # fmt: skip
    subprocess.run(["llvm-objcopy-22", "-O", "binary", "--only-section=.text", str(obj), str(raw)], check=True)
    return raw.read_bytes()


def test_hand_worked_program_blocks_loops_and_reachability(tmp_path):
    _library()
    code = _assemble(tmp_path, PROGRAM)
    instructions = disassemble(code, processor="gfx942")
    flow = control_flow(instructions)
    assert flow.unknown is None
    texts = [(b.start, b.end, b.successors, b.reachable, b.loop_depth) for b in flow.blocks]
    # Blocks (instruction index ranges) worked by hand from the program above.
    assert texts == [
        (0, 2, (8, 1), True, 0),  # entry: to tail or on
        (2, 3, (2,), True, 0),
        (3, 6, (2, 3), True, 1),  # the loop: its own header
        (6, 8, (6, 4), True, 0),  # to b or on to a
        (8, 11, (6, 5), True, 0),  # a: irreducible with b (each entered from outside), so no natural loop
        (11, 12, (), True, 0),
        (12, 15, (4, 7), True, 0),  # b
        (15, 16, (), True, 0),
        (16, 18, (), True, 0),  # tail, after an s_endpgm, reached by the first branch
        (18, 19, (), False, 0),  # the word after the last s_endpgm
    ]
    assert [(loop.header, loop.blocks, loop.depth) for loop in flow.loops] == [(2, (2,), 1)]
    assert flow.idom[:9] == (0, 0, 1, 2, 3, 4, 3, 6, 0)
    assert flow.idom[9] is None


def test_branches_out_of_the_code_and_into_an_instruction_are_unknown(tmp_path):
    _library()
    code = _assemble(tmp_path, "  s_branch 5\n  s_endpgm\n")
    flow = control_flow(disassemble(code, processor="gfx942", address=0x100))
    assert flow.unknown == "s_branch at 0x100 jumps to 0x118, outside the kernel"
    # s_branch 0 targets the next word; a 64-bit instruction there is split by a jump to +4.
    code = _assemble(tmp_path, "  s_branch 1\n  s_mov_b32 s0, 0x12345678\n  s_endpgm\n")
    flow = control_flow(disassemble(code, processor="gfx942"))
    assert flow.unknown == "s_branch at 0x0 jumps to 0x8, into the middle of an instruction"


def test_control_running_off_the_end_is_unknown(tmp_path):
    _library()
    code = _assemble(tmp_path, "  s_mov_b32 s0, 0\n")
    assert control_flow(disassemble(code, processor="gfx942")).unknown == (
        "control runs off the end of the kernel after 0x0"
    )


def test_an_undecodable_word_makes_the_graph_unknown_only_where_control_reaches_it(tmp_path):
    _library()
    # llvm-objdump-22 shows both words as ".long 0xffffffff": the first is run, the second follows
    # the program's end and nothing branches to it.
    code = _assemble(tmp_path, "  s_nop 0\n  .long 0xffffffff\n  s_endpgm\n  .long 0xffffffff\n")
    flow = control_flow(disassemble(code, processor="gfx942"))
    assert flow.unknown == "an undecodable word at 0x4"
    code = _assemble(tmp_path, "  s_nop 0\n  s_endpgm\n  .long 0xffffffff\n")
    flow = control_flow(disassemble(code, processor="gfx942"))
    assert flow.unknown is None and [b.reachable for b in flow.blocks] == [True, False]
