"""Source lines from DWARF .debug_line against ``llvm-objdump-22 -d -l`` (the location it last
printed before each instruction) and, where the table attributes code to line 0 (no source, which
amdocc gives as null and objdump passes over in silence), ``llvm-dwarfdump-22 --debug-line``."""

from __future__ import annotations

import itertools
import re
import subprocess

import pytest

import amdocc
from amdocc.isa.analysis import analyse
from isa_oracle import build, objdump_lines
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22
_ROW = re.compile(r"^0x(?P<addr>[0-9a-f]+)\s+(?P<line>\d+)\s+\d+\s+\d+\s.*?(?P<end>end_sequence)?\s*$")


def _line_zero_addresses(path) -> list[tuple[int, int]]:
    """[start, end) ranges llvm-dwarfdump-22's line table gives line 0."""
    out = subprocess.run(["llvm-dwarfdump-22", "--debug-line", str(path)], capture_output=True, text=True, check=True)
    rows = [(int(m["addr"], 16), int(m["line"]), bool(m["end"])) for m in map(_ROW.match, out.stdout.splitlines()) if m]
    zero = []
    for (addr, line, end), nxt in itertools.pairwise(rows):
        if line == 0 and not end:
            zero.append((addr, nxt[0]))
    return zero


@pytest.mark.parametrize(("arch", "flag"), [("gfx942", "-gline-tables-only"), ("gfx1100", "-g"), ("gfx90a", "-g")])
def test_each_instruction_has_the_line_objdump_prints(tmp_path, arch, flag):
    _library()
    path = build(tmp_path, f"{arch}-lines", arch, [], extra=[flag])
    theirs = objdump_lines(path, arch)
    zero = _line_zero_addresses(path)
    (co,) = amdocc.load(path)
    named = nulls = 0
    for kernel in co.kernels:
        isa = analyse(kernel, co.origin)
        for ins, line in zip(isa.instructions, isa.lines, strict=True):
            if line is None:
                assert any(a <= ins.address < b for a, b in zero), (kernel.name, hex(ins.address), theirs[ins.address])
                nulls += 1
            else:
                assert line == theirs[ins.address], (kernel.name, hex(ins.address))
                named += 1
    assert named > 0.5 * (named + nulls)


def test_no_debug_line_gives_null_lines(tmp_path):
    _library()
    path = build(tmp_path, "gfx942-nolines", "gfx942", [])
    (co,) = amdocc.load(path)
    record = amdocc.app.isa_kernel(co.kernels[0], co.origin)
    assert {i["line"] for i in record["instructions"]} == {None}
