"""amdocc/binary.py's shared readers: one overlap check and one bounded C-string reader.

The overlap rule serves note regions, bundle entries and host fat-binary sections alike; the
string reader serves ELF string tables and the OffloadBinary string map alike, with one error
text for an offset outside the table and one for a string that never ends. Expected values are
worked by hand from the spans and from the fixtures' layouts (read with the fuzzer's own view).
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc.binary import StringBudget, cstring, first_overlap, overlaps
from amdocc.errors import FormatError, LimitError, Origin
from conftest import FIXTURES

# tools/fuzz: the fuzzer's own minimal views of ELF and OffloadBinary
from fuzz.fields import put
from fuzz.formats.elf import SHDR, ElfView, elf_set
from fuzz.formats.offload import offload_parse

ORIGIN = Origin("<test>")


@pytest.mark.parametrize(
    "spans,dropped,first",
    [
        ([(0, 16), (16, 32), (40, 48)], {}, None),  # touching is not overlapping
        ([(0, 16), (8, 24)], {1: 0}, (0, 1)),
        ([(8, 24), (0, 16)], {1: 0}, (1, 0)),  # listed first wins; start order
        ([(0, 100), (10, 20), (30, 40)], {1: 0, 2: 0}, (0, 1)),
        ([(30, 40), (10, 20), (0, 100)], {2: 1}, (2, 1)),  # 2 overlaps both, listed last: it goes
        ([(5, 5), (0, 10), (4, 4)], {}, None),  # empty spans overlap nothing
    ],
)
def test_overlaps_keeps_the_span_listed_first(spans, dropped, first):
    assert overlaps(spans) == dropped
    assert first_overlap(spans) == first


def test_string_table_errors():
    table = b"\0abc\0de"
    assert cstring(table, 1, ORIGIN, "name", 0x40) == "abc"
    assert cstring(b"xx" + table, 1, ORIGIN, "name", 0x40, start=2) == "abc"  # a table inside a buffer
    with pytest.raises(FormatError) as err:
        cstring(table, 7, ORIGIN, "symbol 3 name", 0x40)
    assert (err.value.message, err.value.offset) == (
        "symbol 3 name offset 0x7 is outside its string table (0x7 bytes)",
        0x40,
    )
    with pytest.raises(FormatError) as err:
        cstring(table, 5, ORIGIN, "symbol 3 name", 0x40)
    assert (err.value.message, err.value.offset) == ("unterminated symbol 3 name at string-table offset 0x5", 0x40)
    budget = StringBudget(0, "the table")  # 64 KiB to spend, then a LimitError
    long = b"x" * (70 << 10) + b"\0"
    assert len(cstring(long, 10 << 10, ORIGIN, "name", 0, budget)) == 60 << 10
    with pytest.raises(LimitError):
        cstring(long, 0, ORIGIN, "name", 0, budget)


OFFLOAD = (FIXTURES / "containers" / "offload_binary_2arch.bin").read_bytes()


def _offload_failure(data: bytes) -> FormatError:
    (failure,) = amdocc.load(data, strict=False).failed
    return failure.error


def test_offload_binary_strings_share_the_string_table_errors():
    info = offload_parse(OFFLOAD)
    size = info["h"]["size"]
    map_at, _, _value = info["strings"][0]
    past = bytearray(OFFLOAD)
    put(past, map_at, 8, size)  # string 0's key: one past the binary
    error = _offload_failure(bytes(past))
    assert (error.message, error.offset) == (
        f"OffloadBinary string 0 key offset {size:#x} is outside its string table ({size:#x} bytes)",
        map_at,
    )
    endless = bytearray(OFFLOAD)
    endless[size - 8 : size] = b"x" * 8  # the binary's last bytes, with no NUL after them
    put(endless, map_at + 8, 8, size - 8)  # string 0's value starts there
    error = _offload_failure(bytes(endless))
    assert (error.message, error.offset) == (
        f"unterminated OffloadBinary string 0 value at string-table offset {size - 8:#x}",
        map_at + 8,
    )


def test_elf_section_names_share_the_string_table_errors():
    data = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
    elf = ElfView(data)
    names = elf.sections[elf.h["e_shstrndx"]].f["sh_size"]
    bad = elf_set(data, elf.sections[1].at, SHDR[2][1], "sh_name", names)
    with pytest.raises(FormatError) as err:
        amdocc.load(bad)
    assert (err.value.message, err.value.offset) == (
        f"section 1 name offset {names:#x} is outside its string table ({names:#x} bytes)",
        elf.sections[1].at,
    )
