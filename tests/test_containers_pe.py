"""PE images and COFF objects built by hand: the .hip_fat section is found, sized and read, and
every lie in the headers is named at the offset where the test wrote it.

Layout (Microsoft PE/COFF specification): ``MZ`` stub with e_lfanew at 0x3c; ``PE\\0\\0``; the
20-byte COFF file header (machine, section count, time stamp, symbol table offset, symbol count,
optional header size, characteristics); the optional header; 40-byte section headers (name,
virtual size, virtual address, raw size, raw offset, ...). A name ``/n`` is at offset n of the
string table, which follows the 18-byte symbols.
"""

from __future__ import annotations

import struct

import msgpack
import pytest

from amdocc.containers import Blob, Failed, Skipped, scan
from amdocc.containers.pe import looks_like_coff_object
from amdocc.errors import FormatError, Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle

CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
AMD = b"hipv4-amdgcn-amd-amdhsa--gfx942"
BUNDLE = build_bundle([(AMD, CODE_OBJECT)])
LFANEW = 0x40
OPTIONAL = 16  # bytes of optional header (its contents are not read)
TABLE = LFANEW + 4 + 20 + OPTIONAL


def _pe(sections, machine=0x8664, symbols=(0, 0), strings=b"", mz=True) -> bytes:
    """``sections``: (name, data, virtual size or None, raw size or None); data follows the table."""
    head_at = LFANEW + 4 if mz else 0
    table = head_at + 20 + (OPTIONAL if mz else 0)
    pos = table + 40 * len(sections)
    headers, body = b"", b""
    for name, data, vsize, raw in sections:
        headers += struct.pack(
            "<8sIIIIIIHHI", name, len(data) if vsize is None else vsize, 0, len(data) if raw is None else raw,
            pos, 0, 0, 0, 0, 0,
        )  # fmt: skip
        body += data
        pos += len(data)
    coff = struct.pack("<HHIIIHH", machine, len(sections), 0, *symbols, OPTIONAL if mz else 0, 0)
    if not mz:
        return coff + headers + body + strings
    stub = b"MZ" + b"\0" * (0x3C - 2) + struct.pack("<I", LFANEW)
    return stub + b"PE\0\0" + coff + b"\0" * OPTIONAL + headers + body + strings


def _error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        list(scan(data))
    assert info.value.origin == Origin("<bytes>")
    return info.value


def test_the_hip_fat_section_of_a_pe_is_read_where_it_lies():
    data = _pe([(b".text", b"\xc3" * 16, None, None), (b".hip_fat", BUNDLE, None, None)])
    (blob,) = list(scan(data))
    assert isinstance(blob, Blob) and blob.data == CODE_OBJECT and blob.entry_id == AMD.decode()
    at = data.index(BUNDLE)
    assert blob.origin == Origin(
        "<bytes>", ("section .hip_fat", f"bundle@{at:#x}", AMD.decode()), data.index(CODE_OBJECT)
    )


def test_a_coff_object_without_a_dos_stub_is_read_too():
    (blob,) = list(scan(_pe([(b".hip_fat", BUNDLE, None, None)], mz=False)))
    assert isinstance(blob, Blob) and blob.data == CODE_OBJECT


def test_the_virtual_size_bounds_the_section_when_it_is_smaller_than_the_raw_size():
    padded = BUNDLE + b"\x07" * 24  # file alignment padding that is not zero
    assert [type(i) for i in scan(_pe([(b".hip_fat", padded, len(BUNDLE), None)]))] == [Blob]
    # Without a virtual size the raw size counts, and the padding is data the region cannot read.
    items = list(scan(_pe([(b".hip_fat", padded, 0, None)])))
    assert [type(i) for i in items] == [Blob, Failed] and "unrecognised data" in items[1].error.message
    # A virtual size larger than the raw data does not reach past it.
    assert [type(i) for i in scan(_pe([(b".hip_fat", BUNDLE, len(BUNDLE) + 64, None)]))] == [Blob]


def test_a_long_section_name_resolves_through_the_string_table():
    # Symbol table at s with 2 symbols: strings at s + 36; the name sits at offset 4 of them.
    sections = [(b"/4", BUNDLE, None, None)]
    size = len(_pe(sections))
    data = _pe(sections, symbols=(size, 2), strings=b"\0" * 36 + b"\0\0\0\0.hip_fat\0")
    (blob,) = list(scan(data))
    assert blob.origin.hops[0] == "section .hip_fat"
    exc = _error(_pe(sections, symbols=(size, 2), strings=b"\0" * 36 + b"\0\0\0\0.hip_fat"))
    assert exc.offset == size + 36 + 4 and exc.message == "COFF long section name runs off the string table"


def test_pe_header_lies_are_named_where_they_sit():
    exc = _error(b"MZ" + b"\0" * 40)
    assert exc.offset == 0x3C and "DOS header e_lfanew" in exc.message
    data = bytearray(_pe([(b".hip_fat", BUNDLE, None, None)]))
    data[LFANEW : LFANEW + 4] = b"PX\0\0"
    exc = _error(bytes(data))
    assert exc.offset == LFANEW and exc.message == "MZ file without a PE signature at e_lfanew"
    exc = _error(_pe([])[: LFANEW + 4 + 10])
    assert exc.offset == LFANEW + 4 and "COFF file header" in exc.message
    exc = _error(_pe([(b".hip_fat", BUNDLE, None, None)])[: TABLE + 30])
    assert exc.offset == TABLE and "COFF section table" in exc.message and "needs 40 bytes" in exc.message


def test_a_section_past_the_end_of_the_file_is_named_at_the_section_table():
    data = _pe([(b".hip_fat", BUNDLE, 0, len(BUNDLE) + 1)])  # no virtual size: the raw size counts
    exc = _error(data)
    assert exc.offset == TABLE
    assert exc.message == (
        f"COFF section .hip_fat ({len(BUNDLE) + 1} bytes at {data.index(BUNDLE):#x}) runs past the end of the file"
    )


@pytest.mark.parametrize(
    "machine, name", [(0x8664, "x86-64"), (0xAA64, "arm64"), (0x14C, "i386"), (0x1234, "machine 0x1234")]
)
def test_a_pe_without_device_code_is_skipped_naming_its_machine(machine, name):
    (item,) = list(scan(_pe([(b".text", b"\xc3" * 16, None, None), (b".hip_fat", b"", None, None)], machine)))
    assert isinstance(item, Skipped) and item.reason == f"PE/COFF ({name}) without a .hip_fat section"


def test_a_hip_fat_section_listed_twice_is_read_once_and_the_second_is_named():
    data = bytearray(_pe([(b".hip_fat", BUNDLE, None, None), (b".hip_fat", b"", None, None)]))
    first = data.index(BUNDLE)
    struct.pack_into("<II", data, TABLE + 40 + 16, len(BUNDLE), first)  # the second points at the first's bytes
    struct.pack_into("<I", data, TABLE + 40 + 8, len(BUNDLE))
    items = list(scan(bytes(data)))
    assert [type(i) for i in items] == [Blob, Failed]
    span = f"{first:#x}-{first + len(BUNDLE):#x}"
    assert items[1].error.message == (
        f"section .hip_fat ({span}) overlaps section .hip_fat ({span}) and is skipped: device code is read once"
    )
    assert items[1].error.offset == first and items[1].origin == Origin("<bytes>", ("section .hip_fat",), first)


def test_a_kpack_reference_section_replaces_the_stub():
    ref = msgpack.packb({"kernel_name": "x.dll", "kpack_search_paths": ["x.kpack"]})
    data = _pe([(b".hip_fat", b"\0" * 64, None, None), (b".kpackrf", ref, None, None)])
    (item,) = list(scan(data))
    assert isinstance(item, Skipped) and item.origin == Origin("<bytes>", ("section .kpackrf",), data.index(ref))
    assert item.reason == "device code moved to a kpack archive (TheRock packaging): 'x.dll' in x.kpack"


@pytest.mark.parametrize(
    "count, optional, size, coff", [(1, 0, 20, True), (4095, 0, 20, True), (0, 0, 20, False), (4096, 0, 20, False),
                                    (1, 1, 20, False), (1, 0, 19, False)]
)  # fmt: skip
def test_a_bare_coff_object_is_recognised_by_machine_section_count_and_no_optional_header(count, optional, size, coff):
    head = struct.pack("<HHIIIHH", 0x8664, count, 0, 0, 0, optional, 0)[:size]
    assert looks_like_coff_object(head) is coff
    assert looks_like_coff_object(struct.pack("<HHIIIHH", 0x1234, 1, 0, 0, 0, 0, 0)) is False


def test_a_long_section_name_is_at_most_4095_bytes_before_its_nul():
    sections = [(b"/4", BUNDLE, None, None)]
    size = len(_pe(sections))
    for length, ok in ((4095, True), (4096, False)):
        name = b"." + b"n" * (length - 1)
        data = _pe(sections, symbols=(size, 0), strings=b"\0\0\0\0" + name + b"\0")
        if ok:
            (item,) = list(scan(data))  # read, and not a .hip_fat section
            assert item.reason == "PE/COFF (x86-64) without a .hip_fat section"
        else:
            assert _error(data).offset == size + 4


def test_a_slash_name_is_looked_up_only_with_a_symbol_table_and_digits():
    for name, symbols in ((b"/4", (0, 0)), (b"/x", (10**6, 0))):  # no string table; not an offset
        (item,) = list(scan(_pe([(name, BUNDLE, None, None)], symbols=symbols)))
        assert item.reason == "PE/COFF (x86-64) without a .hip_fat section", name


def test_without_a_symbol_table_a_slash_name_is_not_an_offset_even_where_one_would_resolve():
    # "/N" with N pointing at ".hip_fat\0" in the file: only a symbol table makes it a string offset.
    size = len(_pe([(b"/0", BUNDLE, None, None)], mz=False))
    name = f"/{size}".encode()
    (item,) = list(scan(_pe([(name, BUNDLE, None, None)], mz=False, strings=b".hip_fat\0")))
    assert isinstance(item, Skipped) and item.reason == "PE/COFF (x86-64) without a .hip_fat section"
    # With a symbol table of no symbols at that offset, the same name resolves and the section is read.
    (blob,) = list(scan(_pe([(b"/0", BUNDLE, None, None)], symbols=(size, 0), mz=False, strings=b".hip_fat\0")))
    assert isinstance(blob, Blob) and blob.origin.hops[0] == "section .hip_fat"
