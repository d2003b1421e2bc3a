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
from typing import NamedTuple

import pytest

import amdocc
from amdocc.codeobject import dwarf_line
from amdocc.isa.analysis import analyse
from amdocc.isa.lines import lines_for
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


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_the_stored_line_table_fixtures_have_the_lines_objdump_prints(arch):
    # tests/data/fixtures/objects/lines_<arch>.co (tools/fixtures/objects.py), the fuzz
    # campaign's seeds for the ISA path's source lines: their lines are objdump's. Built from a
    # relative source name in a relative compilation directory (-fdebug-compilation-dir=., as
    # reproducible builds do), DWARF 5 and 4: "./isa_kernels.hip", not "././isa_kernels.hip".
    _library()
    path = ROOT / "tests" / "data" / "fixtures" / "objects" / f"lines_{arch}.co"
    assert _agrees_with_objdump(path, arch) > 100


@pytest.mark.parametrize("every", [dwarf_line.CHECKPOINT_EVERY, 2])
def test_any_window_of_addresses_has_the_lines_objdump_prints(tmp_path, monkeypatch, every):
    """The table read for a window that starts anywhere (inside a row's range, mid-kernel), from
    the sequence's start or from a checkpoint (every 2 ranges), gives objdump's lines there."""
    monkeypatch.setattr(dwarf_line, "CHECKPOINT_EVERY", every)
    path = build(tmp_path, "gfx942-windows", "gfx942", [], extra=["-g"])
    theirs = objdump_lines(path, "gfx942")
    zero = _line_zero_addresses(path)
    table = dwarf_line.read_line_table(path.read_bytes())
    assert table is not None
    functions = _function_extents(path)
    addresses = sorted(a for a in theirs if any(lo <= a < hi for lo, hi in functions))
    checked = 0
    for k in range(0, len(addresses), 3):
        window = [a for a in addresses[k : k + 12] if a < addresses[k] + 48]
        got = lines_for([_At(a) for a in window], table.ranges(window[0], window[-1] + 1))
        for address, line in zip(window, got, strict=True):
            if line is None:
                assert any(a <= address < b for a, b in zero), hex(address)
            else:
                assert line == theirs[address], hex(address)
            checked += 1
    assert checked > 1000


def _function_extents(path: Path) -> set[tuple[int, int]]:
    """[start, end) of every function symbol, as ``llvm-readelf-22 -s`` lists them (objdump goes
    on naming the last location over the padding after the last one)."""
    out = subprocess.run(["llvm-readelf-22", "-s", str(path)], capture_output=True, text=True, check=True).stdout
    found = re.findall(r"^\s*\d+: ([0-9a-f]+)\s+(\d+) FUNC ", out, re.MULTILINE)
    return {(int(value, 16), int(value, 16) + int(size)) for value, size in found if int(size)}


class _At(NamedTuple):
    address: int


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


def _debug_line_at(image: bytes) -> tuple[int, int]:
    """(file offset, size) of .debug_line, from the ELF64 section headers."""
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", image, 0x3A)
    string_table = struct.unpack_from("<Q", image, shoff + names * entsize + 0x18)[0]
    for k in range(count):
        header = shoff + k * entsize
        name_at = string_table + struct.unpack_from("<I", image, header)[0]
        if image[name_at : image.index(b"\0", name_at)] == b".debug_line":
            offset, size = struct.unpack_from("<QQ", image, header + 0x18)
            return offset, size
    raise AssertionError("no .debug_line")


def _lines_of(image: bytes, path: Path) -> list[tuple[str | None, ...]]:
    path.write_bytes(image)
    co = amdocc.load(path)[0]
    return [analyse(kernel, co.origin).lines for kernel in co.kernels]


def _damaged(image: bytes, at: int, new: bytes) -> bytes:
    return image[:at] + new + image[at + len(new) :]


@pytest.fixture(scope="module")
def dwarf4(tmp_path_factory) -> bytes:
    """A -gdwarf-4 build: its one line program starts at .debug_line+0 (version 4, 32-bit)."""
    _library()
    return build(tmp_path_factory.mktemp("damage"), "gfx942-dwarf4", "gfx942", [], extra=["-gdwarf-4"]).read_bytes()


def test_lying_lengths_and_a_zero_line_range_give_no_lines(tmp_path, dwarf4):
    start, size = _debug_line_at(dwarf4)
    assert struct.unpack_from("<IH", dwarf4, start)[1] == 4
    # unit_length, version, header_length, minimum_instruction_length, maximum_operations, default_is_stmt, line_base
    line_range_at = start + 4 + 2 + 4 + 1 + 1 + 1 + 1
    cases = {
        "unit length past the section": _damaged(dwarf4, start, struct.pack("<I", 0xFFFFFFF0)),
        "64-bit escape, length past the section": _damaged(dwarf4, start, b"\xff\xff\xff\xff"),
        "header length past the unit": _damaged(dwarf4, start + 6, struct.pack("<I", 0x7FFFFFFF)),
        "line_range 0": _damaged(dwarf4, line_range_at, b"\0"),
        "a LEB128 that never ends": _damaged(dwarf4, start + size - 600, b"\x02" + b"\x80" * 599),
        "unit length shorter than its header": _damaged(dwarf4, start, struct.pack("<I", 20)),
    }
    for what, image in cases.items():
        lines = _lines_of(image, tmp_path / "damaged.co")
        assert {x for per_kernel in lines for x in per_kernel} == {None}, what
    assert any(x for per_kernel in _lines_of(dwarf4, tmp_path / "intact.co") for x in per_kernel)


def test_random_damage_to_the_line_table_never_raises(dwarf4):
    """400 seeded mutants of .debug_line (1-8 bytes each, most in the header): a table or None,
    each range a "file:line" or None."""
    start, size = _debug_line_at(dwarf4)
    rng = random.Random(27)
    base = bytearray(dwarf4)
    read = answered = 0
    for _ in range(400):
        image = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            image[start + rng.randrange(min(size, 400) if rng.random() < 0.7 else size)] = rng.randrange(256)
        table = dwarf_line.read_line_table(bytes(image))
        if table is None:
            continue
        read += 1
        for first in range(0x1000, 0x3000, 0x400):
            for lo, hi, where in table.ranges(first, first + 0x400):
                assert lo < hi and (where is None or ":" in where)
                answered += 1
    assert read > 0 and answered > 0


def test_the_text_summary_reads_no_line_table_and_prints_what_the_records_say(tmp_path, capsys, monkeypatch):
    from amdocc.cli.isa import SUMMARY_HEADERS, summary_row
    from amdocc.cli.main import main
    from amdocc.cli.render import table
    from amdocc.isa import lines

    _library()
    path = build(tmp_path, "gfx942-summary", "gfx942", [], extra=["-g"])
    records = amdocc.app.isa(path, summary=True)["kernels"]
    assert any(s["lines"] for k in records for p in (k["summary"]["peak"] or {}).values() for s in p["at"])
    # isa reads in a worker process: the spy counts its calls in a file, which both processes see.
    calls = tmp_path / "line-table-reads"
    calls.write_text("")

    def read(image: bytes) -> None:
        with calls.open("a") as out:
            out.write("read\n")

    monkeypatch.setattr(lines, "read_line_table", read)
    assert main(["isa", "--summary", str(path)]) == 0
    assert calls.read_text() == ""
    assert capsys.readouterr().out == table([summary_row(k) for k in records], SUMMARY_HEADERS, indent="") + "\n"
    assert main(["isa", "--summary", "--json", str(path)]) == 0
    assert calls.read_text() == "read\n"  # the JSON summary has the peaks' lines
