"""Bad input gets a one-line amdocc error naming the file and offset: never a traceback, a hang,
or an unbounded allocation."""
from __future__ import annotations

import hashlib
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
    "note descriptor size lies": lambda d: _patch(d, struct.unpack_from("<Q", d, _section_header_offset(d, SHT_NOTE) + 24)[0] + 4, "<I", 0x7FFFFFF0),
    "bad msgpack": lambda d: (lambda at: d[:at] + b"\xc1" * 16 + d[at + 16:])(
        struct.unpack_from("<Q", d, _section_header_offset(d, SHT_NOTE) + 24)[0] + 20),
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
    for size in range(0, len(CODE_OBJECT), 7):
        try:
            amdocc.load(CODE_OBJECT[:size])
        except amdocc.AmdoccError:
            pass


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


@pytest.mark.parametrize("label,blob,needle", [
    ("hash mismatch", lambda: _ccob(BUNDLE, hash_value=1), "hash mismatch"),
    ("expands beyond its declared size", lambda: _ccob(BUNDLE, declared=1000), "beyond its declared"),
    ("declares more than it expands to", lambda: _ccob(BUNDLE, method=0, declared=len(BUNDLE) + 10), "not the declared"),
    ("zlib bomb over the cap", lambda: _ccob(b"\0" * (64 << 20), method=0), "over the limit"),
    ("zstd bomb lying about its size", lambda: _ccob(b"\0" * (256 << 20), declared=4096), "beyond its declared"),
    ("unknown method", lambda: _patch(_ccob(BUNDLE), 6, "<H", 7), "method"),
    ("unknown version", lambda: _patch(_ccob(BUNDLE), 4, "<H", 9), "version"),
    ("total size past the end", lambda: _patch(_ccob(BUNDLE), 8, "<Q", 10**12), "past the end"),
    ("corrupt stream", lambda: (lambda b: b[:40] + bytes(64) + b[104:])(_ccob(BUNDLE)), "corrupt"),
])
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
    bad[at + note:at + note + 8] = b"\xc1" * 8
    loaded = amdocc.load(bytes(bad), strict=False)
    assert len(loaded.failed) == 1 and len(loaded) == len(items) - 1
    assert "MessagePack" in str(loaded.failed[0].error)
    code, err, path = _run_cli(tmp_path, capsys, bytes(bad), "lib.so")
    assert code == 2 and len(err) == 1 and "hipv4-amdgcn-amd-amdhsa" in err[0]


def test_not_a_container_is_refused(tmp_path, capsys):
    code, err, path = _run_cli(tmp_path, capsys, b"#!/bin/sh\necho hi\n", "script.sh")
    assert code == 2 and err == [f"amdocc: {path}: offset 0x0: not a code object or a container "
                                 "amdocc reads (starts with 23 21 2f 62 69 6e 2f 73)"]


def test_missing_file(tmp_path, capsys):
    code = main(["inspect", str(tmp_path / "nope.co")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot open" in err[0]
