"""Source lines from DWARF .debug_line against ``llvm-objdump-22 -d -l`` (the location it last
printed before each instruction) and, where the table attributes code to line 0 (no source, which
amdocc gives as null and objdump passes over in silence), ``llvm-dwarfdump-22 --debug-line``.

The line tables are clang-22's: DWARF 2, 3, 4 and 5, 32- and 64-bit, full ``-g`` and
``-gline-tables-only``, and a ``-fgpu-rdc`` device link of two translation units (several
compilation units, each with its own line program). Damaged tables give no lines, never an error."""

from __future__ import annotations

import itertools
import random
import re
import struct
import subprocess
from pathlib import Path

import pytest

import amdocc
from amdocc.isa.analysis import analyse
from amdocc.codeobject import dwarf_line
from isa_oracle import ROOT, build, objdump_lines
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


def _agrees_with_objdump(path: Path, arch: str) -> int:
    """Every instruction's line against objdump's (line 0 against dwarfdump's); the count named."""
    theirs = objdump_lines(path, arch)
    zero = _line_zero_addresses(path)
    co = amdocc.load(path)[0]
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
    return named


@pytest.mark.parametrize(
    ("arch", "flags"),
    [
        ("gfx942", ["-gline-tables-only"]),
        ("gfx1100", ["-g"]),
        ("gfx90a", ["-g"]),
        ("gfx942", ["-gdwarf-2"]),
        ("gfx942", ["-gdwarf-3"]),
        ("gfx942", ["-gdwarf-4"]),
        ("gfx1100", ["-gdwarf-4", "-gline-tables-only"]),
        ("gfx942", ["-gdwarf-5"]),
        ("gfx1201", ["-g", "-gdwarf64"]),
        ("gfx90a", ["-gdwarf-4", "-gdwarf64"]),
    ],
)
def test_each_instruction_has_the_line_objdump_prints(tmp_path, arch, flags):
    _library()
    path = build(tmp_path, f"{arch}-lines", arch, [], extra=flags)
    version = re.search(r"version: (\d+)", _dwarfdump_line(path))
    assert version is not None
    expected = next((int(f[len("-gdwarf-") :]) for f in flags if f[-1].isdigit() and "dwarf-" in f), 5)
    assert int(version[1]) == expected  # the table is the version asked for
    if "-gdwarf64" in flags:
        assert "format: DWARF64" in _dwarfdump_line(path)
    _agrees_with_objdump(path, arch)


def _dwarfdump_line(path: Path) -> str:
    done = subprocess.run(["llvm-dwarfdump-22", "--debug-line", str(path)], capture_output=True, text=True, check=True)
    return done.stdout


def _device_link(tmp_path: Path, arch: str) -> Path:
    """The code object of a -fgpu-rdc host library of two translation units built with -g, as
    clang-22's device link writes it (its LTO partitions each bring their compilation units)."""
    sources = ROOT / "tools" / "fixture_src"
    flags = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "-g", "-fPIC", f"-I{sources}", f"--offload-arch={arch}"]
    objects = []
    for unit in ("notes_a", "notes_b"):
        obj = tmp_path / f"{unit}.o"
        cmd = ["clang-22", *flags, "-fgpu-rdc", "-c", str(sources / f"{unit}.hip"), "-o", str(obj)]
        subprocess.run(cmd, check=True, capture_output=True)
        objects.append(str(obj))
    library = tmp_path / "libnotes.so"
    cmd = ["clang-22", "--hip-link", "-fgpu-rdc", f"--offload-arch={arch}", "-no-hip-rt", "-shared", "-fPIC"]
    subprocess.run([*cmd, *objects, "-o", str(library)], check=True, capture_output=True)
    fatbin, out = tmp_path / "fatbin", tmp_path / "device.co"
    dump = ["llvm-objcopy-22", f"--dump-section=.hip_fatbin={fatbin}", str(library), str(tmp_path / "host.so")]
    subprocess.run(dump, check=True, capture_output=True)
    unbundle = ["clang-offload-bundler-22", "--unbundle", "--type=o", f"--input={fatbin}",
                f"--targets=hipv4-amdgcn-amd-amdhsa--{arch}", f"--output={out}"]  # fmt: skip
    subprocess.run(unbundle, check=True, capture_output=True)
    return out


def test_a_device_link_of_two_units_has_the_lines_objdump_prints(tmp_path):
    _library()
    path = _device_link(tmp_path, "gfx942")
    units = _dwarfdump_line(path).count("debug_line[")
    assert units > 2  # several line programs, one per compilation unit
    _agrees_with_objdump(path, "gfx942")
    files = {line.rsplit(":", 1)[0] for line in objdump_lines(path, "gfx942").values() if line}
    assert {Path(f).name for f in files} >= {"notes_a.hip", "notes_b.hip"}


def test_no_debug_line_gives_null_lines(tmp_path):
    _library()
    path = build(tmp_path, "gfx942-nolines", "gfx942", [])
    (co,) = amdocc.load(path)
    record = amdocc.app.isa_kernel(co.kernels[0], co.origin)
    assert {i["line"] for i in record["instructions"]} == {None}
