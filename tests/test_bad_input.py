"""Bad input gets a one-line amdocc error naming the file and offset: never a traceback, a hang,
or an unbounded allocation."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.containers import Failed, Limits, scan
from conftest import FIXTURES

CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
BUNDLE = (FIXTURES / "containers" / "bundle_5arch.hipfb").read_bytes()
FAT_SO = (FIXTURES / "containers" / "libhip_plain.so").read_bytes()


def _run_cli(tmp_path, capsys, data: bytes, name="bad.co"):
    path = tmp_path / name
    path.write_bytes(data)
    code = main(["inspect", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    return code, err, str(path)


def _patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _elf_fields(data: bytes):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum = struct.unpack_from("<H", data, 0x3C)[0]
    shstrndx = struct.unpack_from("<H", data, 0x3E)[0]
    return shoff, shnum, shstrndx


def _section_header_offset(data: bytes, type_wanted: int) -> int:
    shoff, shnum, _ = _elf_fields(data)
    for i in range(shnum):
        at = shoff + 64 * i
        if struct.unpack_from("<I", data, at + 4)[0] == type_wanted:
            return at
    raise AssertionError("section type not found")


SHT_NOTE, SHT_SYMTAB = 7, 2
SHOFF, SHNUM = 0x28, 0x3C
CORRUPTIONS = {
    "truncated header": lambda d: d[:40],
    "section table past the end": lambda d: _patch(d, SHOFF, "<Q", len(d) + 64),
    "section count past the end": lambda d: _patch(d, SHNUM, "<H", 4000),
    "note size past its section": lambda d: _patch(d, _section_header_offset(d, SHT_NOTE) + 32, "<Q", 10**9),
    "note descriptor size lies": lambda d: _patch(
        d, struct.unpack_from("<Q", d, _section_header_offset(d, SHT_NOTE) + 24)[0] + 4, "<I", 0x7FFFFFF0
    ),
    "bad msgpack": lambda d: (lambda at: d[:at] + b"\xc1" * 16 + d[at + 16 :])(
        struct.unpack_from("<Q", d, _section_header_offset(d, SHT_NOTE) + 24)[0] + 20
    ),
    "symbol table entry size": lambda d: _patch(d, _section_header_offset(d, SHT_SYMTAB) + 56, "<Q", 7),
    "symbol table past the end": lambda d: _patch(d, _section_header_offset(d, SHT_SYMTAB) + 24, "<Q", len(d) - 8),
    "truncated in the middle": lambda d: d[: len(d) // 2],
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_corrupt_code_object_gives_one_line_error(tmp_path, capsys, name):
    data = CORRUPTIONS[name](CODE_OBJECT)
    code, err, path = _run_cli(tmp_path, capsys, data)
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"amdocc: {path}: ")
    assert "offset 0x" in err[0] or "string-table offset" in err[0]
    with pytest.raises(amdocc.AmdoccError):
        amdocc.load(data)


def test_every_truncation_of_a_code_object_is_an_amdocc_error():
    # A whole-file sweep is cheap on a 5 KB object and covers every header and table boundary.
    # Every prefix loses the section headers at the end of the file, so every one must fail,
    # and only with an amdocc error (anything else escapes pytest.raises and fails the test).
    for size in range(0, len(CODE_OBJECT), 7):
        with pytest.raises(amdocc.AmdoccError):
            amdocc.load(CODE_OBJECT[:size])


def _ccob(payload: bytes, version=3, method=1, declared=None, hash_value=None) -> bytes:
    import zstandard

    body = zstandard.ZstdCompressor().compress(payload) if method == 1 else zlib.compress(payload)
    declared = len(payload) if declared is None else declared
    digest = int.from_bytes(hashlib.md5(payload).digest()[:8], "little") if hash_value is None else hash_value
    if version == 3:
        return b"CCOB" + struct.pack("<HHQQQ", 3, method, 32 + len(body), declared, digest) + body
    if version == 2:
        return b"CCOB" + struct.pack("<HHIIQ", 2, method, 24 + len(body), declared, digest) + body
    return b"CCOB" + struct.pack("<HHIQ", 1, method, declared, digest) + body


def test_ccob_roundtrip_reads_back():
    for version in (1, 2, 3):
        for method in (0, 1):
            cos = amdocc.load(_ccob(BUNDLE, version, method))
            assert len(cos) == 5


@pytest.mark.parametrize(
    "label,blob,needle",
    [
        ("expands beyond its declared size", lambda: _ccob(BUNDLE, declared=1000), "beyond its declared"),
        (
            "declares more than it expands to",
            lambda: _ccob(BUNDLE, method=0, declared=len(BUNDLE) + 10),
            "not the declared",
        ),
        ("zlib bomb over the cap", lambda: _ccob(b"\0" * (64 << 20), method=0), "over the limit"),
        ("zstd bomb lying about its size", lambda: _ccob(b"\0" * (256 << 20), declared=4096), "beyond its declared"),
        ("unknown method", lambda: _patch(_ccob(BUNDLE), 6, "<H", 7), "method"),
        ("unknown version", lambda: _patch(_ccob(BUNDLE), 4, "<H", 9), "version"),
        ("total size past the end", lambda: _patch(_ccob(BUNDLE), 8, "<Q", 10**12), "past the end"),
        ("corrupt stream", lambda: (lambda b: b[:40] + bytes(64) + b[104:])(_ccob(BUNDLE)), "corrupt"),
    ],
)
def test_bad_compressed_bundles(label, blob, needle):
    limits = Limits(max_decompressed=32 << 20)
    items = list(scan(blob(), limits))
    assert len(items) == 1 and isinstance(items[0], Failed), label
    assert needle in str(items[0].error)
    assert str(items[0].error).startswith("<bytes>: ")


def test_bundle_entry_past_the_end_is_an_error_naming_the_offset():
    # Entry 1's offset field: header (24 magic + 8 count), entry 0 (24 + id), then entry 1.
    id0 = struct.unpack_from("<Q", BUNDLE, 32 + 16)[0]
    bad = _patch(BUNDLE, 32 + 24 + id0, "<Q", len(BUNDLE) + 100)
    items = list(scan(bad))
    assert len(items) == 1 and isinstance(items[0], Failed)
    assert "past the end of its data" in str(items[0].error)
    assert "offset 0x" in str(items[0].error)


def test_bundle_with_absurd_entry_count_is_refused_without_allocating():
    bad = _patch(BUNDLE, 24, "<Q", 2**62)
    (item,) = list(scan(bad))
    assert isinstance(item, Failed) and "entries" in str(item.error)


def test_bundles_nested_past_the_depth_limit_are_refused():
    blob = CODE_OBJECT
    for _ in range(12):
        entry = b"hipv4-amdgcn-amd-amdhsa--gfx942"
        header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1)
        start = len(header) + 24 + len(entry)
        blob = header + struct.pack("<QQQ", start, len(blob), len(entry)) + entry + blob
    items = list(scan(blob))
    assert any(isinstance(i, Failed) and "nested deeper" in str(i.error) for i in items)


def test_one_bad_entry_keeps_the_rest_of_a_fat_binary(tmp_path, capsys):
    # Corrupt the msgpack note of one code object inside the .so: the other entries still print.
    items = [i for i in scan(FAT_SO) if hasattr(i, "data")]
    victim = items[0]
    at = FAT_SO.index(victim.data)
    note = victim.data.index(b"AMDGPU\0\0") + 8
    bad = bytearray(FAT_SO)
    bad[at + note : at + note + 8] = b"\xc1" * 8
    loaded = amdocc.load(bytes(bad), strict=False)
    assert len(loaded.failed) == 1 and len(loaded) == len(items) - 1
    assert "MessagePack" in str(loaded.failed[0].error)
    code, err, _path = _run_cli(tmp_path, capsys, bytes(bad), "lib.so")
    assert code == 2 and len(err) == 1 and "hipv4-amdgcn-amd-amdhsa" in err[0]


def test_not_a_container_is_refused(tmp_path, capsys):
    code, err, path = _run_cli(tmp_path, capsys, b"#!/bin/sh\necho hi\n", "script.sh")
    assert code == 2 and err == [
        f"amdocc: {path}: offset 0x0: not a code object or a container "
        "amdocc reads (starts with 23 21 2f 62 69 6e 2f 73)"
    ]


def test_missing_file(tmp_path, capsys):
    code = main(["inspect", str(tmp_path / "nope.co")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot open" in err[0]


# -- found by tools/fuzz -------------------------------------------------------------------------
# Each test below is the minimized form of a failure the fuzz campaign found, kept so the fix stays.

import json  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402

import msgpack  # noqa: E402

from amdocc import report  # noqa: E402
from amdocc.cli.inspect import render_code_object  # noqa: E402
from amdocc.errors import FormatError, LimitError  # noqa: E402

# tools/fuzz: the fuzzer's own builders for mutated code objects and containers
from fuzz.fields import put  # noqa: E402
from fuzz.formats.bundle import BUNDLE_MAGIC, build_bundle, bundle_entries  # noqa: E402
from fuzz.formats.elf import SHDR, SYM, ElfView, elf_set, note_desc, section_header, with_extra_sections, with_note_desc  # noqa: E402
from fuzz.formats.metadata import Raw, mp_encode  # noqa: E402
from fuzz.inputs import mutate  # noqa: E402

GFX942 = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
LEGACY_V2 = (FIXTURES / "elf" / "legacy_v2_gfx906.co").read_bytes()
DLL = (FIXTURES / "containers" / "hip_win.dll").read_bytes()


def _metadata(data=GFX942):
    return msgpack.unpackb(note_desc(data, "AMDGPU", 32), raw=False)


def _with_metadata(tree, data=GFX942) -> bytes:
    return with_note_desc(data, "AMDGPU", 32, mp_encode(tree))


def _render_all(loaded):
    for co in loaded:
        json.loads(report.dumps(report.code_object_record(co)))
        render_code_object(co, "all")


def _only_failure(data: bytes):
    loaded = amdocc.load(data, strict=False)
    assert len(loaded.failed) == 1 and not loaded, [str(f.error) for f in loaded.failed]
    return loaded.failed[0].error


def test_msgpack_extension_values_in_metadata_render_as_tagged_json():
    # Was: TypeError "Timestamp is not JSON serialisable" from report.dumps.
    tree = _metadata()
    tree["amdhsa.kernels"][0][".vgpr_count"] = msgpack.ExtType(5, b"\x01\x02")
    tree["amdhsa.kernels"][0][".build_time"] = msgpack.Timestamp(1, 0)
    (co,) = amdocc.load(_with_metadata(tree))
    record = json.loads(report.dumps(report.code_object_record(co)))
    kernel = record["kernels"][0]
    assert kernel["vgpr_count"] == [5, "0102"]
    assert kernel["metadata"][".build_time"] == [-1, "00000001"]
    assert any(f["code"] == "metadata-type" and ".vgpr_count is ExtType" in f["message"] for f in kernel["findings"])
    render_code_object(co)


def test_deeply_nested_metadata_renders_without_recursion_errors():
    # Was: RecursionError in json.dumps / repr for metadata nested 1,000 deep (msgpack allows 1,024).
    # Deep nesting is legal MessagePack; what recurses over it (JSON, findings) bounds its depth.
    for depth in (1000, 65):
        tree = _metadata()
        tree["amdhsa.kernels"][0][".args"] = Raw(b"\x91" * depth + b"\x01")
        tree["amdhsa.kernels"][0][".workgroup_processor_mode"] = Raw(b"\x91" * depth + b"\x01")
        loaded = amdocc.load(_with_metadata(tree))
        text = report.dumps(report.code_object_record(loaded[0]))
        assert json.loads(text)
        # json.dumps manages 65 levels; at 1,000 the record is written with the deep part elided.
        assert ("nested deeper than 64 levels" in text) == (depth == 1000)
        render_code_object(loaded[0], "all")
        assert amdocc.occupancy(loaded[0].kernels[0], block_size=256).blocks_per_cu is not None
    tree = _metadata()
    tree["amdhsa.kernels"][0][".args"] = Raw(b"\x91" * 60 + b"\x01")  # deep, but within the bound
    _render_all(amdocc.load(_with_metadata(tree)))


def _with_yaml_line(line: bytes, data=LEGACY_V2) -> bytes:
    text = note_desc(data, "AMD", 10).rstrip(b"\0")
    return with_note_desc(data, "AMD", 10, text + line + b"\n\0")


@pytest.mark.parametrize(
    "line,needle",
    [
        (b"Deep: " + b"[" * 5000 + b"1" + b"]" * 5000, "nested deeper than 64"),  # was RecursionError
        (b'Escape: "\\x"', "bad escape"),  # was UnicodeDecodeError
        (b'Escape: "\\N{no such name}"', "bad escape"),
    ],
    ids=["deep flow sequence", "truncated x escape", "unknown N name"],
)  # no backslash: mutmut re-runs tests by id
def test_v2_yaml_errors_are_format_errors_at_their_line(line, needle):
    data = _with_yaml_line(line)
    error = _only_failure(data)
    assert isinstance(error, FormatError) and needle in str(error)
    # The offset is the start of the offending line inside the note.
    text = note_desc(data, "AMD", 10)
    desc_at = data.index(text)
    assert data[desc_at + error.offset :].startswith(line[:6])


def _kd_symbol(data=GFX942):
    elf = ElfView(data)
    return elf, next(s for s in elf.symbols(elf.symtab()) if s.name.endswith(".kd"))


def _strtab_unterminated(data: bytes) -> bytes:
    elf = ElfView(data)
    names = elf.sections[elf.h["e_shstrndx"]]
    out = bytearray(data)
    out[names.f["sh_offset"] + names.f["sh_size"] - 1] = 0x41
    return bytes(out)


def _v2_without_isa_note(data=LEGACY_V2) -> bytes:
    elf = ElfView(data)
    note = next(n for n in elf.notes(elf.of_type(SHT_NOTE)[0]) if n.f["type"] == 3)
    out = bytearray(data)
    put(out, note.at + 8, 4, 0x7777)  # the ISA note becomes an unknown note type
    return bytes(out)


# Errors that named the file but no offset; each now names where the lying field sits.
NO_OFFSET_BEFORE = {
    "section name outside the table": (
        lambda: elf_set(GFX942, ElfView(GFX942).sections[1].at, SHDR[2][1], "sh_name", 0xFFFFFF),
        lambda: ElfView(GFX942).sections[1].at,
    ),
    "unterminated section name": (lambda: _strtab_unterminated(GFX942), None),
    "symbol name outside the table": (
        lambda: elf_set(GFX942, _kd_symbol()[1].at, SYM[2][1], "st_name", 0xFFFFFFFF),
        lambda: _kd_symbol()[1].at,
    ),
    "descriptor symbol undefined": (
        lambda: elf_set(GFX942, _kd_symbol()[1].at, SYM[2][1], "st_shndx", 0),
        lambda: _kd_symbol()[1].at,
    ),
    "v2 without an ISA note": (_v2_without_isa_note, None),
    "v2 YAML indentation": (lambda: _with_yaml_line(b"   Odd: 1"), None),
}


@pytest.mark.parametrize("name", NO_OFFSET_BEFORE)
def test_code_object_errors_name_an_offset(name):
    build, where = NO_OFFSET_BEFORE[name]
    loaded = amdocc.load(build(), strict=False)
    assert loaded.failed, name
    error = loaded.failed[0].error
    assert error.offset is not None and "offset 0x" in str(error), str(error)
    if where is not None:
        assert error.offset == where()


# Not a speed goal: these inputs once took tens of seconds (quadratic work). Bounded work stays
# far below this on any machine; CPU time, so a busy CI host does not fail it. Under mutation
# testing (tools/mutation.py) every call goes through mutmut's trampoline, several times slower:
# the bound widens there, and a mutant that makes the work quadratic still times out.
QUADRATIC_CPU_SECONDS = 5.0 * (20 if "MUTANT_UNDER_TEST" in os.environ else 1)


def _bounded_load(data: bytes):
    start = time.process_time()
    loaded = amdocc.load(data, strict=False)
    spent = time.process_time() - start
    assert spent < QUADRATIC_CPU_SECONDS, f"{spent:.1f} s of CPU: the work is no longer bounded"
    return loaded


def test_many_section_names_into_one_long_string_are_bounded():
    # Was: 20,000 section headers named at successive offsets of one 512 KiB name: 27 s and GiBs.
    length, count = 512 << 10, 20000
    names = b"\0" + b"N" * length + b"\0"
    base = GFX942 + b"\0" * (-len(GFX942) % 16)
    names_at = len(base)
    data = base + names
    headers = [section_header(data, sh_name=1, sh_type=3, sh_offset=names_at, sh_size=len(names))]
    headers += [section_header(data, sh_name=1 + i, sh_type=1) for i in range(count)]
    data = bytearray(with_extra_sections(data, headers))
    put(data, 0x3E, 2, len(ElfView(GFX942).sections))  # e_shstrndx: the new name table
    loaded = _bounded_load(bytes(data))
    (failure,) = loaded.failed
    assert isinstance(failure.error, LimitError) and "section-name string table" in str(failure.error)


def test_many_symbol_names_into_one_long_string_are_bounded():
    # 40,000 symbols named at successive offsets of one 256 KiB name.
    elf = ElfView(GFX942)
    table = elf.symtab()
    names = b"\0" + b"S" * (256 << 10) + b"\0"
    rows = b"".join(struct.pack("<IBBHQQ", 1 + i, 0x11, 0, 1, 0, 0) for i in range(40000))
    base = GFX942 + b"\0" * (-len(GFX942) % 16)
    names_at, rows_at = len(base), len(base) + len(names) + (-len(names) % 16)
    data = base + names + b"\0" * (-len(names) % 16) + rows
    data = bytearray(
        with_extra_sections(data, [section_header(data, sh_type=3, sh_offset=names_at, sh_size=len(names))])
    )
    t = ElfView(bytes(data)).sections[table.index]
    put(data, t.at + 24, 8, rows_at)
    put(data, t.at + 32, 8, len(rows))
    put(data, t.at + 40, 4, len(elf.sections))
    loaded = _bounded_load(bytes(data))
    (failure,) = loaded.failed
    assert isinstance(failure.error, LimitError) and "add up to more than" in str(failure.error)


def test_note_section_listed_many_times_is_an_error_not_many_copies():
    # Was: 20,000 headers of one note section (grown to 512 KiB): every note copied 20,000 times.
    elf = ElfView(GFX942)
    note = elf.of_type(SHT_NOTE)[0]
    data = with_extra_sections(GFX942, [GFX942[note.at : note.at + 64]] * 5000)
    loaded = _bounded_load(data)
    (failure,) = loaded.failed
    assert "note sections overlap" in str(failure.error) and failure.error.offset == note.f["sh_offset"]


def test_offload_binary_strings_into_one_long_string_are_bounded():
    # Was: 65,536 string-map entries into one 64 KiB string: 10 s and 4 GiB.
    case = None
    for i in range(64):
        case = mutate(
            random.Random(f"offload-{i}"), fixture="containers/offload_binary_2arch.bin", only="offload.amplify"
        )
        if case.mutations and "65536 strings into one 65536-byte string (distinct" in case.mutations[0][1]:
            break
    else:
        pytest.fail("no such input among the first 64")
    loaded = _bounded_load(case.data)
    assert any(isinstance(f.error, LimitError) and "OffloadBinary string map" in str(f.error) for f in loaded.failed)


def test_bundle_entries_sharing_a_payload_are_refused():
    # Was: 10,000 entries over one code object: parsed 10,000 times (4 s; 65,536 entries: 470 MiB).
    entries, _ = bundle_entries(BUNDLE)
    e = next(x for x in entries if x.f["size"])
    payload = BUNDLE[e.f["offset"] : e.f["offset"] + e.f["size"]]
    entry_id = b"hipv4-amdgcn-amd-amdhsa--gfx942"
    twice = bytearray(build_bundle([(entry_id, payload), (entry_id, b"")]))
    first, second = bundle_entries(bytes(twice))[0]
    put(twice, second.at, 8, first.f["offset"] + 8)  # the second starts inside the first
    put(twice, second.at + 8, 8, first.f["size"] - 8)
    (item,) = list(scan(bytes(twice)))
    assert isinstance(item, Failed) and "overlap" in str(item.error)
    assert item.error.offset == second.at
    header = 32 + 10000 * (24 + len(entry_id))
    at = header + (-header % 8)
    table = b"".join(struct.pack("<QQQ", at, len(payload), len(entry_id)) + entry_id for _ in range(10000))
    many = BUNDLE_MAGIC + struct.pack("<Q", 10000) + table + b"\0" * (at - header) + payload
    loaded = _bounded_load(many)
    assert not loaded and "overlap" in str(loaded.failed[0].error)
    assert amdocc.load(build_bundle([(entry_id, payload)]))  # one entry alone still reads


def _fatbin_copies(data: bytes, name: str, count: int) -> bytes:
    elf = ElfView(data)
    s = elf.named(name)
    return with_extra_sections(data, [data[s.at : s.at + 64]] * count)


def test_device_code_section_listed_twice_is_read_once():
    # Was: 3,000 headers of one .hip_fatbin: the fat binary read 3,000 times.
    good = amdocc.load(FAT_SO)
    loaded = _bounded_load(_fatbin_copies(FAT_SO, ".hip_fatbin", 3000))
    assert len(loaded) == len(good) and len(loaded.failed) == 3000
    assert "overlaps section" in str(loaded.failed[0].error) and "skipped" in str(loaded.failed[0].error)


def test_pe_device_code_section_listed_twice_is_read_once():
    case = None
    for i in range(64):
        case = mutate(random.Random(f"coff-{i}"), fixture="containers/hip_win.dll", only="coff.amplify")
        if case.mutations and "same bytes" in case.mutations[0][1]:
            break
    else:
        pytest.fail("no such input among the first 64")
    good = amdocc.load(DLL)
    loaded = _bounded_load(case.data)
    assert len(loaded) == len(good)
    assert loaded.failed and all("overlaps section" in str(f.error) for f in loaded.failed)


def test_findings_quote_long_metadata_values_briefly():
    tree = _metadata()
    tree["amdhsa.kernels"][0][".sgpr_count"] = "x" * 100000
    (co,) = amdocc.load(_with_metadata(tree))
    (finding,) = [f for f in co.kernels[0].findings if f.code == "metadata-type"]
    assert len(finding.message) < 200 and "100002 characters" in finding.message


def test_nested_compressed_bundles_share_one_decompression_budget():
    # A CCOB whose bundle holds another CCOB: the inner one may only use what the outer one left.
    inner = _ccob(BUNDLE)
    entry = b"hipv4-amdgcn-amd-amdhsa--gfx942"
    header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1)
    start = len(header) + 24 + len(entry)
    middle = header + struct.pack("<QQQ", start, len(inner), len(entry)) + entry + inner
    outer = _ccob(middle)
    assert sum(hasattr(i, "data") for i in scan(outer)) == 5  # enough budget: all read
    tight = Limits(max_decompressed=len(middle) + len(BUNDLE) - 1)
    items = list(scan(outer, tight))
    assert any(isinstance(i, Failed) and "over the limit" in str(i.error) for i in items)


def test_json_never_holds_nan_or_unhashable_wgp_values():
    import json

    import msgpack

    from amdocc import report

    (co,) = amdocc.load(CODE_OBJECT)
    co.kernels[0].metadata[".odd"] = float("nan")
    text = report.dumps(report.code_object_record(co))
    assert json.loads(text)["kernels"][0]["metadata"][".odd"] == "nan"
    assert "NaN" not in text
    # A map where .workgroup_processor_mode should be an integer still gets an answer.
    k = co.kernels[0]
    k.metadata[".workgroup_processor_mode"] = {"x": 1}
    k.inputs = None  # no longer the values it was read from: answered afresh, not shared
    assert amdocc.occupancy(k, block_size=256).blocks_per_cu is not None
    del msgpack
