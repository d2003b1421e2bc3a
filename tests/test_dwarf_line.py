"""amdocc.codeobject.dwarf_line on line programs written here by hand from DWARF 5's section 6.2
(the encodings of the header, the standard, extended and special opcodes), for what clang-22 does
not write: sequences that overlap, row addresses that fall, a sequence ending where a checkpoint
was taken, DW_LNE_define_file, an opcode past DWARF 5's. The expected lines are worked by hand
from the rule the module states (tests/test_isa_lines.py holds it to llvm-objdump-22 on clang's
tables): an address's line is that of the range starting last at or before it, over the whole
table; of ranges starting at one address, the longer, then the later in the table."""

from __future__ import annotations

import struct
from typing import NamedTuple

import pytest

from amdocc.codeobject import dwarf_line
from amdocc.codeobject.dwarf_line import LineTable, UnitRef
from amdocc.isa.lines import lines_for

OPCODE_BASE = 13
STANDARD_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])  # DW_LNS_copy .. DW_LNS_set_isa


def uleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def sleb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        done = (value == 0 and not byte & 0x40) or (value == -1 and byte & 0x40)
        out.append(byte | (0 if done else 0x80))
        if done:
            return bytes(out)


class Row(NamedTuple):
    address: int
    line: int


def sequence(rows: list[Row], end: int, file: int = 1) -> bytes:
    """Each row by DW_LNE_set_address, DW_LNS_advance_line and DW_LNS_copy; then the end."""
    out = bytearray(b"\x04" + uleb(file))  # DW_LNS_set_file
    line = 1
    for row in rows:
        out += b"\x00\x09\x02" + struct.pack("<Q", row.address)
        out += b"\x03" + sleb(row.line - line) + b"\x01"
        line = row.line
    out += b"\x00\x09\x02" + struct.pack("<Q", end) + b"\x00\x01\x01"
    return bytes(out)


def unit_v4(program: bytes, opcode_base: int = OPCODE_BASE, lengths: bytes = STANDARD_LENGTHS) -> bytes:
    """A DWARF 4 unit: directory "inc", files "a.c" (in the compilation directory) and
    "inc/b.h"."""
    tables = b"inc\0\0" + b"a.c\0" + uleb(0) + uleb(0) + uleb(0) + b"b.h\0" + uleb(1) + uleb(0) + uleb(0) + b"\0"
    after_length = bytes([1, 1, 1, 0xFB, 14, opcode_base]) + lengths + tables
    body = struct.pack("<HI", 4, len(after_length)) + after_length + program
    return struct.pack("<I", len(body)) + body


def table(units: list[bytes], comp_dir: bytes = b"/src") -> LineTable:
    data, refs = b"", []
    for u in units:
        refs.append(UnitRef(len(data), comp_dir, 8))
        data += u
    return LineTable(data, b"", b"", refs)


class At(NamedTuple):
    address: int


def lines(t: LineTable, lo: int, hi: int) -> list[str | None]:
    return list(lines_for([At(a) for a in range(lo, hi)], t.ranges(lo, hi)))


def test_a_window_inside_the_last_range_of_an_earlier_sequence_has_its_line():
    t = table([unit_v4(sequence([Row(0x100, 10), Row(0x110, 11)], 0x140) + sequence([Row(0x200, 20)], 0x220))])
    assert lines(t, 0x120, 0x124) == ["/src/a.c:11"] * 4
    assert lines(t, 0x13E, 0x202) == ["/src/a.c:11"] * 2 + [None] * 0xC0 + ["/src/a.c:20"] * 2


def test_rows_whose_addresses_fall_count_where_they_start():
    # Ranges: 0x100-0x120 line 1, 0x120-0x130 line 2, 0x108-0x140 line 3 (after the fall to 0x108).
    rows = [Row(0x100, 1), Row(0x120, 2), Row(0x130, 5), Row(0x108, 3)]
    t = table([unit_v4(sequence(rows, 0x140))])
    assert lines(t, 0x100, 0x112) == ["/src/a.c:1"] * 8 + ["/src/a.c:3"] * 10
    assert lines(t, 0x11E, 0x122) == ["/src/a.c:3", "/src/a.c:3", "/src/a.c:2", "/src/a.c:2"]
    # The same range twice (0x100-0x110, lines 1 and 3): the later one counts, below the window too.
    t = table([unit_v4(sequence([Row(0x100, 1), Row(0x110, 2), Row(0x100, 3), Row(0x110, 4)], 0x120))])
    assert lines(t, 0x108, 0x112) == ["/src/a.c:3"] * 8 + ["/src/a.c:4"] * 2


def test_a_checkpoint_where_its_sequence_ends_keeps_the_range_before_it(monkeypatch):
    # Sequence A's last range (0x100-0x110, line 1) starts after B's first (0xf0-0x200, line 7),
    # so at 0x118 the range starting last is A's, which ends before it: no line.
    monkeypatch.setattr(dwarf_line, "CHECKPOINT_EVERY", 1)
    a = sequence([Row(0x100, 1), Row(0x110, 2)], 0x110)
    b = sequence([Row(0xF0, 7), Row(0x200, 8)], 0x210)
    t = table([unit_v4(a + b)])
    assert lines(t, 0x118, 0x120) == [None] * 8
    assert lines(t, 0x0F8, 0x102) == ["/src/a.c:7"] * 8 + ["/src/a.c:1"] * 2


def test_units_keep_their_own_file_tables_and_comp_dir_for_dwarf_2_to_4():
    t = table([unit_v4(sequence([Row(0x100, 4)], 0x104, file=2)), unit_v4(sequence([Row(0x104, 9)], 0x108))])
    assert lines(t, 0x100, 0x108) == ["/src/inc/b.h:4"] * 4 + ["/src/a.c:9"] * 4


def test_define_file_and_opcodes_this_reader_does_not_know_are_read_over():
    # opcode_base 14: opcode 13 is a standard opcode with one LEB128 operand this reader does
    # not know; DW_LNE_define_file names file 3, which is not in the header ("<file 3>"); the
    # vendor extended opcode 0x80 carries 3 bytes to pass over.
    define = b"\x00" + uleb(1 + 7) + b"\x03" + b"c.h\0" + uleb(0) + uleb(0) + uleb(0) + b"\x00\x04\x80\x01\x01\x01"
    program = define + b"\x0d" + uleb(300) + sequence([Row(0x100, 6)], 0x102) + sequence([Row(0x102, 8)], 0x104, 3)
    t = table([unit_v4(program, opcode_base=14, lengths=STANDARD_LENGTHS + b"\x01")])
    assert lines(t, 0x100, 0x104) == ["/src/a.c:6", "/src/a.c:6", "<file 3>:8", "<file 3>:8"]


def unit_v5(program: bytes, line_str: bytes) -> bytes:
    """A DWARF 5 unit: directories by DW_FORM_line_strp (0: "/src", 1: "inc"), files by
    DW_FORM_string, DW_FORM_udata and an MD5 in DW_FORM_data16."""
    dirs = b"\x01" + uleb(1) + uleb(0x1F) + uleb(2) + struct.pack("<II", 0, line_str.index(b"inc\0"))
    file_format = b"\x03" + uleb(1) + uleb(0x08) + uleb(2) + uleb(0x0B) + uleb(5) + uleb(0x1E)
    files = uleb(2) + b"a.c\0\x00" + bytes(16) + b"b.h\0\x01" + bytes(range(16))
    after_length = bytes([1, 1, 1, 0xFB, 14, OPCODE_BASE]) + STANDARD_LENGTHS + dirs + file_format + files
    body = struct.pack("<HBBI", 5, 8, 0, len(after_length)) + after_length + program
    return struct.pack("<I", len(body)) + body


def test_dwarf_5_names_files_from_zero_with_directory_zero_the_compilation_directory():
    line_str = b"/src\0inc\0"
    program = sequence([Row(0x100, 3)], 0x102, file=0) + sequence([Row(0x102, 5)], 0x104, file=1)
    t = LineTable(unit_v5(program, line_str), line_str, b"", [UnitRef(0, None, 8)])
    assert lines(t, 0x100, 0x104) == ["/src/a.c:3", "/src/a.c:3", "/src/inc/b.h:5", "/src/inc/b.h:5"]


@pytest.mark.parametrize(
    ("what", "damage"),
    [
        ("a unit longer than its section", lambda u: struct.pack("<I", len(u)) + u[4:]),
        ("a 64-bit unit longer than its section", lambda u: b"\xff\xff\xff\xff" + struct.pack("<Q", 1 << 60) + u[4:]),
        ("a program that stops inside an operand", lambda u: struct.pack("<I", len(u) - 4 + 1) + u[4:] + b"\x02"),
        (
            "a LEB128 of 100 bytes",
            lambda u: struct.pack("<I", len(u) - 4 + 101) + u[4:] + b"\x02" + b"\x80" * 99 + b"\0",
        ),
        ("line_range 0", lambda u: u[:14] + b"\0" + u[15:]),
    ],
)
def test_damage_is_an_error_the_caller_turns_into_no_lines(what, damage):
    special = bytes([OPCODE_BASE + 14 * 2 + 5])  # a row 2 bytes on, the line unchanged
    intact = unit_v4(b"\x00\x09\x02" + struct.pack("<Q", 0x100) + b"\x01" + special + b"\x00\x01\x01")
    assert lines(LineTable(intact, b"", b"", [UnitRef(0, b"/src", 8)]), 0x100, 0x102) == ["/src/a.c:1"] * 2
    unit = damage(intact)
    with pytest.raises(dwarf_line.DwarfLineError):
        LineTable(unit, b"", b"", [UnitRef(0, b"/src", 8)])
