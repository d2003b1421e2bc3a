"""Every container error names the file and the offset where the lie sits, and every size rule
holds exactly at its boundary.

Each test builds its container by hand with the layout of the format (clang-offload-bundler's
bundle and CCOB headers, LLVM's OffloadBinary, rocm-kpack's archive; docs/code-object-format.md §4), so
the offset a test expects is where the test itself wrote the bad field. Containers are read at a
non-zero start (``AT``) so an offset counted from the wrong origin cannot pass.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import replace

import msgpack
import pytest
import zstandard

from amdocc.containers.bundle import ccob_extent, decompress_ccob, parse_bundle
from amdocc.containers.kpack import kpack_entries, parse_ref
from amdocc.containers.model import Limits
from amdocc.containers.offload_binary import parse_offload_binary
from amdocc.errors import FormatError, LimitError, Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle
from fuzz.formats.ccob import build_ccob

ORIGIN = Origin("built.bin")
AT = 40  # containers start here, after bytes that match no magic
LEAD = b"\xee" * AT
CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
ID0, ID1 = b"hipv4-amdgcn-amd-amdhsa--gfx942", b"host-x86_64-unknown-linux-gnu-"
LIMITS = Limits()


def _raises(exc_type, call, *args):
    with pytest.raises(exc_type) as info:
        call(*args)
    exc = info.value
    assert type(exc) is exc_type
    return exc


def _at(exc, offset: int, *words: str) -> None:
    """The error names the origin it was given, the exact offset and its key words."""
    assert exc.origin == ORIGIN and exc.offset == offset, (exc.origin, exc.offset, str(exc))
    assert str(exc).startswith(f"built.bin: offset {offset:#x}: ")
    for word in words:
        assert word in exc.message, (word, exc.message)


# -- offload bundles ----------------------------------------------------------------------------
# Header: 24-byte magic, u64 count (at 24); entry i: u64 offset, u64 size, u64 id length, id.


def _bundle(entries=((ID0, CODE_OBJECT), (ID1, b""))) -> bytes:
    return LEAD + build_bundle(list(entries))


def _entry_at(index: int, ids=(ID0, ID1)) -> int:
    return AT + 32 + sum(24 + len(i) for i in ids[:index])


def _set(data: bytes, at: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def _parse_bundle(data: bytes, limits: Limits = LIMITS):
    return parse_bundle(data, AT, len(data), ORIGIN, limits)


def test_a_bundle_reads_at_its_start_and_ends_past_its_last_payload():
    data = _bundle() + b"\0" * 16
    entries, extent = parse_bundle(data, AT, len(data), ORIGIN, LIMITS)
    assert [(e.entry_id, e.size) for e in entries] == [(ID0.decode(), len(CODE_OBJECT)), (ID1.decode(), 0)]
    assert data[AT + entries[0].offset : AT + entries[0].offset + entries[0].size] == CODE_OBJECT
    assert extent == len(data) - 16
    # Only an empty entry: the bundle ends where its table ends.
    table_only = LEAD + build_bundle([(ID1, b"")])
    assert parse_bundle(table_only, AT, len(table_only), ORIGIN, LIMITS)[1] == len(table_only)
    # An empty entry's offset is not checked, so it must not carry the extent past the data.
    lying = _set(table_only, AT + 32, "<Q", 1 << 40)
    assert parse_bundle(lying, AT, len(lying), ORIGIN, LIMITS)[1] == len(lying)


def test_a_truncated_bundle_header_is_named_at_the_bundle_start():
    data = _bundle()[: AT + 30]
    _at(_raises(FormatError, _parse_bundle, data), AT, "offload bundle header", "needs 32 bytes")


def test_the_entry_count_limit_names_the_count_field():
    data = _bundle()
    _at(_raises(LimitError, _parse_bundle, data, Limits(max_entries=1)), AT + 24, "declares 2 entries", "limit 1")
    assert len(_parse_bundle(data, Limits(max_entries=2))[0]) == 2


@pytest.mark.parametrize("present", [0, 10, 23])  # bytes of the third entry header that are there
def test_a_truncated_entry_header_is_named_with_its_index(present):
    ids = (ID1, ID1)  # empty entries: their offsets are not checked, so only the table matters
    data = _set(_bundle([(i, b"") for i in ids]), AT + 24, "<Q", 3)  # a third entry the table lacks
    assert len(data) == _entry_at(2, ids)  # the table of empty entries ends the buffer
    data += b"\xff" * present
    _at(_raises(FormatError, _parse_bundle, data), _entry_at(2, ids), "offload bundle entry 2", "needs 24 bytes")


def test_a_table_of_empty_entries_may_end_exactly_where_the_buffer_ends():
    ids = (ID1, ID1)
    data = _bundle([(i, b"") for i in ids])
    table_end = _entry_at(2, ids)
    entries, extent = _parse_bundle(data[:table_end])
    assert [e.entry_id for e in entries] == [i.decode() for i in ids] and extent == table_end


def test_an_entry_id_up_to_4096_bytes_is_read_and_a_longer_one_is_refused_at_its_length():
    long_id = b"host-" + b"x" * 4091
    entries, _ = _parse_bundle(_bundle([(long_id, b"")]))
    assert entries[0].entry_id == long_id.decode() and len(long_id) == 4096
    data = _bundle([(long_id + b"y", b"")])
    _at(_raises(FormatError, _parse_bundle, data), AT + 32 + 16, "entry 0 id length 4097 is implausible")


@pytest.mark.parametrize("present", [5, len(ID0) - 1])  # bytes of the id that are there
def test_a_truncated_entry_id_is_named_where_the_id_starts(present):
    data = _bundle()[: _entry_at(0) + 24 + present]
    _at(_raises(FormatError, _parse_bundle, data), _entry_at(0) + 24, "bundle entry 0 id", f"needs {len(ID0)} bytes")


def test_an_entry_past_the_end_of_the_bundle_is_named_at_its_entry_header():
    data = _bundle()
    offset, size = struct.unpack_from("<QQ", data, _entry_at(0))
    assert offset + size == len(data) - AT  # the payload ends the bundle exactly: accepted
    bad = _set(data, _entry_at(0) + 8, "<Q", size + 1)
    _at(
        _raises(FormatError, _parse_bundle, bad),
        _entry_at(0),
        f"claims {size + 1} bytes at bundle offset {offset:#x}",
        f"past the end of its data ({len(data) - AT:#x} bytes)",
    )


def test_an_entry_may_not_start_inside_the_32_byte_bundle_header():
    data = _bundle([(ID0, CODE_OBJECT)])
    entries, _ = _parse_bundle(_set(data, _entry_at(0), "<Q", 32))
    assert entries[0].offset == 32
    _at(_raises(FormatError, _parse_bundle, _set(data, _entry_at(0), "<Q", 31)), _entry_at(0), "bundle offset 0x1f")


def test_overlapping_entries_are_named_at_the_second_entry_header():
    data = _bundle([(ID0, CODE_OBJECT), (ID0 + b"b", CODE_OBJECT)])
    first = struct.unpack_from("<Q", data, _entry_at(0))[0]
    ids = (ID0, ID0 + b"b")
    bad = _set(data, _entry_at(1, ids), "<Q", first + 8)
    _at(
        _raises(FormatError, _parse_bundle, bad),
        _entry_at(1, ids),
        "overlap",
        f"starts at bundle offset {first + 8:#x}, before the first ends at {first + len(CODE_OBJECT):#x}",
    )


# -- compressed bundles (CCOB) ------------------------------------------------------------------
# "CCOB", u16 version (at 4), u16 method (at 6), then v1: u32 size, u64 hash (header 20 bytes);
# v2: u32 total, u32 size, u64 hash (24); v3: u64 total, u64 size, u64 hash (32).
HEADER_SIZE = {1: 20, 2: 24, 3: 32}
PAYLOAD = build_bundle([(ID0, CODE_OBJECT)])


def _ccob(version=3, method=1, **kw) -> bytes:
    return LEAD + build_ccob(version, method, PAYLOAD, **kw)


def _decompress(data: bytes, limits: Limits = LIMITS):
    return decompress_ccob(data, AT, len(data), ORIGIN, limits)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", [0, 1])
def test_a_compressed_bundle_expands_to_its_payload_and_ends_where_its_stream_ends(version, method):
    body = zlib.compress(PAYLOAD, 6) if method == 0 else zstandard.ZstdCompressor(level=3).compress(PAYLOAD)
    data = _ccob(version, method) + b"\0" * 24  # padding after: v1 has no total size to say where it ends
    ccob = _decompress(data)
    assert ccob.payload == PAYLOAD and ccob.method == ("zlib", "zstd")[method] and ccob.version == version
    assert ccob.extent == AT + HEADER_SIZE[version] + len(body)
    extent, expanded = ccob_extent(data, AT, len(data), ORIGIN)
    assert expanded == len(PAYLOAD)
    assert extent == (None if version == 1 else AT + HEADER_SIZE[version] + len(body))


def test_ccob_extent_is_unknown_when_the_total_size_lies():
    data = _ccob(3, total_delta=25)  # 25 bytes past the end of the data
    assert ccob_extent(data, AT, len(data), ORIGIN) == (None, len(PAYLOAD))
    data = _ccob(2, total_delta=-(24 + len(zstandard.ZstdCompressor(level=3).compress(PAYLOAD))) + 23)  # total 23
    assert ccob_extent(data, AT, len(data), ORIGIN) == (None, len(PAYLOAD))
    assert ccob_extent(_set(_ccob(), AT + 4, "<H", 4), AT, len(_ccob()), ORIGIN) == (None, 0)


def test_a_truncated_ccob_header_is_named_at_its_start():
    _at(_raises(FormatError, _decompress, _ccob()[: AT + 6]), AT, "compressed bundle header", "needs 8 bytes")
    _at(_raises(FormatError, _decompress, _ccob(3)[: AT + 31]), AT, "CCOB v3 header", "needs 32 bytes")
    with pytest.raises(FormatError) as info:
        ccob_extent(_ccob(2)[: AT + 20], AT, AT + 20, ORIGIN)
    _at(info.value, AT, "CCOB v2 header", "needs 24 bytes")


def test_an_unknown_ccob_version_and_method_are_named_at_their_fields():
    _at(_raises(FormatError, _decompress, _set(_ccob(), AT + 4, "<H", 4)), AT + 4, "version 4 is not 1, 2 or 3")
    _at(_raises(FormatError, _decompress, _set(_ccob(), AT + 6, "<H", 2)), AT + 6, "method 2 is neither zlib")


def test_the_decompression_limit_holds_at_the_declared_size():
    assert _decompress(_ccob(), Limits(max_decompressed=len(PAYLOAD))).payload == PAYLOAD
    exc = _raises(LimitError, _decompress, _ccob(), Limits(max_decompressed=len(PAYLOAD) - 1))
    _at(exc, AT, f"declares {len(PAYLOAD)} uncompressed bytes", f"limit of {len(PAYLOAD) - 1}")


@pytest.mark.parametrize("version", [2, 3])
def test_a_total_size_past_the_data_or_inside_the_header_is_named_at_the_total(version):
    _at(_raises(FormatError, _decompress, _ccob(version, total_delta=1)), AT + 8, "total size", "runs past the end")
    body = len(zstandard.ZstdCompressor(level=3).compress(PAYLOAD))
    short = _ccob(version, total_delta=-body - 1)  # total = header size - 1
    _at(_raises(FormatError, _decompress, short), AT + 8, f"total size {HEADER_SIZE[version] - 1} ")


@pytest.mark.parametrize("method", [0, 1])
def test_a_stream_expanding_past_its_declared_size_is_a_limit_error_at_the_ccob_start(method):
    exc = _raises(LimitError, _decompress, _ccob(3, method, declared=len(PAYLOAD) - 1))
    _at(exc, AT, f"expands beyond its declared {len(PAYLOAD) - 1} bytes")


def test_a_stream_expanding_short_of_its_declared_size_is_named_at_the_ccob_start():
    exc = _raises(FormatError, _decompress, _ccob(3, 0, declared=len(PAYLOAD) + 1))
    _at(exc, AT, f"expands to {len(PAYLOAD)} bytes, not the declared {len(PAYLOAD) + 1}")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_hash_mismatch_is_named_at_the_hash_field_when_hashes_are_verified(version):
    exc = _raises(FormatError, _decompress, _ccob(version, digest=1), replace(LIMITS, verify_hashes=True))
    digest = int.from_bytes(hashlib.md5(PAYLOAD).digest()[:8], "little")
    _at(exc, AT + HEADER_SIZE[version] - 8, f"header {1:#018x}", f"gives {digest:#018x}")


def test_a_corrupt_or_truncated_stream_is_named_at_the_ccob_start():
    stream = zstandard.ZstdCompressor(level=3).compress(PAYLOAD)
    _at(_raises(FormatError, _decompress, _ccob(3, 1, stream=b"\xff" * 64)), AT, "corrupt zstd data")
    _at(_raises(FormatError, _decompress, _ccob(1, 1, stream=stream[:-40])), AT, "zstd stream", "is truncated")
    cut = zlib.compress(PAYLOAD, 6)[:-40]
    _at(_raises(FormatError, _decompress, _ccob(1, 0, stream=cut)), AT, "zlib stream", "is truncated")


# -- kpack archives -----------------------------------------------------------------------------
# "KPAK", u32 version (at 4), u64 offset of the table of contents (at 8); blobs from 64.


def _kpack(blob: bytes, toc: object, version: int = 1, toc_at: int | None = None) -> bytes:
    toc_offset = 64 + len(blob) if toc_at is None else toc_at
    head = b"KPAK" + struct.pack("<IQ", version, toc_offset)
    return LEAD + head + b"\0" * (64 - len(head)) + blob + msgpack.packb(toc, use_bin_type=True)


def _toc(**kw) -> dict:
    base = {"compression_scheme": "none", "blobs": [{"offset": 64, "size": len(CODE_OBJECT)}]}
    base["toc"] = {"lib.so": {"gfx942": {"type": "hsaco", "ordinal": 0}}}
    return base | kw


def _entries(data: bytes, limits: Limits = LIMITS) -> list:
    return list(kpack_entries(data, AT, len(data), ORIGIN, limits))


def _frames(*frames: bytes) -> bytes:
    return struct.pack("<I", len(frames)) + b"".join(struct.pack("<I", len(f)) + f for f in frames)


def test_a_stored_kpack_entry_is_the_blob_at_its_offset_from_the_archive_start():
    data = _kpack(CODE_OBJECT, _toc())
    (entry,) = _entries(data)
    assert (entry.binary, entry.processor, entry.start, entry.end) == (
        "lib.so",
        "gfx942",
        AT + 64,
        AT + 64 + len(CODE_OBJECT),
    )
    assert bytes(entry.buf[entry.start : entry.end]) == CODE_OBJECT


def test_kpack_header_errors_name_their_fields():
    data = _kpack(CODE_OBJECT, _toc())
    _at(_raises(FormatError, _entries, data[: AT + 12]), AT, "kpack header", "needs 16 bytes")
    _at(_raises(FormatError, _entries, _set(data, AT + 4, "<I", 2)), AT + 4, "kpack archive version 2 is not 1")
    size = len(data) - AT
    for bad in (15, size):
        _at(_raises(FormatError, _entries, _set(data, AT + 8, "<Q", bad)), AT + 8, f"offset {bad:#x} lies outside")
    # The lowest table offset there can be is just past the 16-byte header.
    toc = msgpack.packb(_toc(blobs=[]), use_bin_type=True)
    low = LEAD + b"KPAK" + struct.pack("<IQ", 1, 16) + toc
    assert _entries(low) and isinstance(_entries(low)[0], FormatError)  # ordinal 0 of no blobs, but read


def test_kpack_table_errors_name_the_table_offset():
    toc_at = AT + 64 + len(CODE_OBJECT)
    exc = _raises(FormatError, _entries, _kpack(CODE_OBJECT, [1, 2]))
    assert exc.origin == ORIGIN.at(toc_at) and exc.offset == 0
    assert str(exc).startswith(f"built.bin: offset {toc_at:#x}: ") and "holds a list, not a map" in exc.message
    _at(_raises(FormatError, _entries, _kpack(CODE_OBJECT, _toc(compression_scheme="lz4"))), toc_at, "'lz4'")
    _at(_raises(FormatError, _entries, _kpack(CODE_OBJECT, _toc(toc=[]))), toc_at, "no 'toc' map")
    (exc,) = _entries(_kpack(CODE_OBJECT, _toc(toc={"lib.so": {"gfx942": {"ordinal": 1}}})))
    _at(exc, toc_at, "'lib.so' [gfx942] has ordinal 1", "archive's 1 blobs")


def test_kpack_blob_bounds_hold_at_the_end_of_the_archive():
    # The table of contents follows the blob, so a blob may run to the archive's last byte.
    size = len(_kpack(CODE_OBJECT, _toc())) - AT - 64
    assert len(_entries(_kpack(CODE_OBJECT, _toc(blobs=[{"offset": 64, "size": size}])))) == 1
    for blob in ({"offset": 64, "size": size + 1}, {"offset": -1, "size": 1}, {"offset": 64, "size": -1}, 7, "x"):
        exc = _raises(FormatError, _entries, _kpack(CODE_OBJECT, _toc(blobs=[blob])))
        _at(exc, AT, "kpack blob 0", "lies outside the archive")
    exc = _raises(FormatError, _entries, _kpack(CODE_OBJECT, _toc(blobs=[5])))
    assert "(None bytes at None)" in exc.message
    _at(_raises(FormatError, _entries, _kpack(CODE_OBJECT, _toc(blobs={}))), AT, "without a blobs list")
    two = _toc(blobs=[{"offset": 64, "size": 1}] * 2)
    _at(_raises(FormatError, _entries, _kpack(CODE_OBJECT, two), Limits(max_entries=1)), AT, "more blobs than 1")
    assert len(_entries(_kpack(CODE_OBJECT, two), Limits(max_entries=2))) == 1


def _zstd_toc(blob: bytes, **kw) -> dict:
    entry = {"type": "hsaco", "ordinal": 0, "original_size": len(CODE_OBJECT)}
    return {"compression_scheme": "zstd-per-kernel", "zstd_offset": 64, "zstd_size": len(blob), **kw} | {
        "toc": {"lib.so": {"gfx942": entry}}
    }


def test_zstd_kpack_frames_are_bounded_by_their_blob_and_named_at_their_size_fields():
    frame = zstandard.ZstdCompressor(level=3).compress(CODE_OBJECT)
    blob = _frames(frame)
    (entry,) = _entries(_kpack(blob, _zstd_toc(blob)))
    assert bytes(entry.buf[entry.start : entry.end]) == CODE_OBJECT
    _at(_raises(FormatError, _entries, _kpack(blob, _zstd_toc(blob, zstd_size=3))), AT, "zstd blob (3 bytes at 64)")
    assert _entries(_kpack(_frames(), _zstd_toc(_frames()) | {"toc": {}})) == []  # 4 bytes: no frames
    size = len(_kpack(blob, _zstd_toc(blob))) - AT - 64  # to the archive's last byte (the table)
    exc = _raises(FormatError, _entries, _kpack(blob, _zstd_toc(blob, zstd_size=size + 1)))
    _at(exc, AT, "lies outside the archive")
    assert len(_entries(_kpack(blob, _zstd_toc(blob, zstd_size=size)))) == 1
    short = blob[:-1] + b"\0"  # one byte of padding after the blob, inside the archive
    exc = _raises(FormatError, _entries, _kpack(short, _zstd_toc(short, zstd_size=len(blob) - 1)))
    _at(exc, AT + 64 + 4, f"frame 0 ({len(frame)} bytes) runs past its blob")
    two = _frames(frame, frame)
    exc = _raises(LimitError, _entries, _kpack(two, _zstd_toc(two)), Limits(max_entries=1))
    _at(exc, AT + 64, "declares 2 frames (limit 1)")


def test_zstd_kpack_entries_share_one_decompression_budget():
    frame = zstandard.ZstdCompressor(level=3).compress(CODE_OBJECT)
    blob = _frames(frame)
    limit = Limits(max_decompressed=len(CODE_OBJECT) - 1)
    (exc,) = _entries(_kpack(blob, _zstd_toc(blob)), limit)
    _at(exc, AT + 64 + 8, f"declares {len(CODE_OBJECT)} bytes", f"left of the limit ({len(CODE_OBJECT) - 1}")
    (entry,) = _entries(_kpack(blob, _zstd_toc(blob)), Limits(max_decompressed=len(CODE_OBJECT)))
    assert bytes(entry.buf) == CODE_OBJECT


@pytest.mark.parametrize(
    "ref, word",
    [
        ([1], "holds a list, not a map"),
        ({"kpack_search_paths": ["a.kpack"]}, "lacks a kernel_name string"),
        ({"kernel_name": 3, "kpack_search_paths": ["a.kpack"]}, "lacks a kernel_name string"),
        ({"kernel_name": "k", "kpack_search_paths": "a.kpack"}, "kpack_search_paths list of strings"),
        ({"kernel_name": "k", "kpack_search_paths": []}, "kpack_search_paths list of strings"),
        ({"kernel_name": "k", "kpack_search_paths": ["a", 1]}, "kpack_search_paths list of strings"),
    ],
)
def test_a_bad_kpack_reference_is_named_at_the_start_of_its_section(ref, word):
    exc = _raises(FormatError, parse_ref, msgpack.packb(ref), ORIGIN)
    _at(exc, 0, word)


def test_a_kpack_reference_names_its_archives():
    ref = parse_ref(msgpack.packb({"kernel_name": "k", "kpack_search_paths": ["a.kpack", "b.kpack"]}) + b"\0", ORIGIN)
    assert ref.reason == "device code moved to a kpack archive (TheRock packaging): 'k' in a.kpack, b.kpack"


# -- OffloadBinary ------------------------------------------------------------------------------
# Header (32): magic, u32 version (at 4), u64 size (8), u64 entry offset (16), u64 entry size (24).
# Entry (40): u16 image kind, u16 offload kind, u32 flags, u64 string offset (8), u64 string
# count (16), u64 image offset (24), u64 image size (32). Strings: u64 key, u64 value offsets.


def _offload(image: bytes = CODE_OBJECT, strings=(("triple", "amdgcn-amd-amdhsa"), ("arch", "gfx942")), kinds=(1, 4)):
    text = b""
    offsets = []
    base = 32 + 40 + 16 * len(strings)
    for key, value in strings:
        offsets.append((base + len(text), base + len(text) + len(key) + 1))
        text += key.encode() + b"\0" + value.encode() + b"\0"
    image_at = base + len(text)
    size = image_at + len(image)
    header = b"\x10\xff\x10\xad" + struct.pack("<IQQQ", 1, size, 32, 40)
    entry = struct.pack("<HHIQQQQ", kinds[0], kinds[1], 0, 72, len(strings), image_at, len(image))
    table = b"".join(struct.pack("<QQ", k, v) for k, v in offsets)
    return LEAD + header + entry + table + text + image


def _offload_at(data: bytes, limits: Limits = LIMITS, end: int | None = None):
    return parse_offload_binary(data, AT, len(data) if end is None else end, ORIGIN, limits)


def test_an_offload_binary_reads_at_its_start_and_ends_8_aligned():
    data = _offload(CODE_OBJECT + b"x") + b"\0" * 16
    image = _offload_at(data)
    size = len(data) - 16 - AT
    assert (image.image_kind, image.offload_kind, image.label) == ("object", "hip", "hip-amdgcn-amd-amdhsa-gfx942")
    assert data[image.start : image.start + image.size] == CODE_OBJECT + b"x"
    assert image.extent == AT + -(-size // 8) * 8 and image.extent > AT + size
    assert _offload_at(data, end=AT + size).extent == AT + size  # never past the data it was given
    assert _offload_at(_offload(kinds=(9, 5))).image_kind == "kind-9"
    assert _offload_at(_offload(kinds=(2, 5))).offload_kind == "openmp+hip"
    assert _offload_at(_offload(kinds=(2, 0))).offload_kind == "none"


def test_offload_binary_header_errors_name_their_fields():
    data = _offload()
    size = len(data) - AT
    _at(_raises(FormatError, _offload_at, data[: AT + 20]), AT, "OffloadBinary header", "needs 32 bytes")
    _at(_raises(FormatError, _offload_at, _set(data, AT + 4, "<I", 2)), AT + 4, "version 2 is not supported")
    for bad in (31, size + 1):
        _at(_raises(FormatError, _offload_at, _set(data, AT + 8, "<Q", bad)), AT + 8, f"OffloadBinary size {bad} ")
    _at(_raises(FormatError, _offload_at, _set(data, AT + 24, "<Q", 39)), AT + 16, "entry lies outside")
    _at(_raises(FormatError, _offload_at, _set(data, AT + 16, "<Q", size - 39)), AT + 16, "entry lies outside")


def test_offload_binary_entry_errors_name_the_entry():
    data = _offload()
    size = len(data) - AT
    entry = AT + 32
    _at(_raises(LimitError, _offload_at, data, Limits(max_entries=1)), entry, "declares 2 strings")
    assert _offload_at(data, Limits(max_entries=2)).strings == {"triple": "amdgcn-amd-amdhsa", "arch": "gfx942"}
    _at(_raises(FormatError, _offload_at, _set(data, entry + 8, "<Q", size - 31)), entry, "string map lies outside")
    image_at = struct.unpack_from("<Q", data, entry + 24)[0]
    assert _offload_at(_set(data, entry + 32, "<Q", size - image_at)).size == size - image_at
    exc = _raises(FormatError, _offload_at, _set(data, entry + 32, "<Q", size - image_at + 1))
    _at(exc, entry, f"image ({size - image_at + 1} bytes at {image_at:#x}) lies outside")


def test_an_offload_string_offset_outside_the_binary_is_named_at_its_record():
    data = _offload()
    size = len(data) - AT
    table = AT + 72
    _at(_raises(FormatError, _offload_at, _set(data, table + 16, "<Q", size)), table + 16, "string 1 key offset")
    _at(_raises(FormatError, _offload_at, _set(data, table + 8, "<Q", size)), table + 8, "string 0 value offset")


def test_ccob_extent_names_a_truncated_prefix():
    with pytest.raises(FormatError) as info:
        ccob_extent(_ccob()[: AT + 6], AT, AT + 6, ORIGIN)
    _at(info.value, AT, "compressed bundle header", "needs 8 bytes")


def test_a_zstd_kpack_frame_must_expand_to_its_original_size():
    frame = zstandard.ZstdCompressor(level=3).compress(CODE_OBJECT)
    blob = _frames(frame)
    size = len(CODE_OBJECT)
    toc = _zstd_toc(blob)
    for declared, error, words in (
        (size - 1, LimitError, f"expands beyond its declared {size - 1} bytes"),
        (size + 1, FormatError, f"zstd data expands to {size} bytes, not the declared {size + 1}"),
    ):
        toc["toc"]["lib.so"]["gfx942"]["original_size"] = declared
        (exc,) = _entries(_kpack(blob, toc))
        assert type(exc) is error
        _at(exc, AT + 64 + 8, words)
    toc["toc"]["lib.so"]["gfx942"]["original_size"] = size
    bad = _frames(b"\x28\xb5\x2f\xfd" + b"\xff" * 32)  # zstd's frame magic, then nonsense
    (exc,) = _entries(_kpack(bad, _zstd_toc(bad) | {"toc": toc["toc"]}))
    _at(exc, AT + 64 + 8, "corrupt zstd data")


def test_a_zstd_kpack_entry_without_a_usable_original_size_is_bounded_by_what_is_left():
    frame = zstandard.ZstdCompressor(level=3).compress(CODE_OBJECT)
    blob = _frames(frame)
    toc = _zstd_toc(blob)
    for size in (None, -1):  # no size, or a negative one: read up to the budget, any length
        entry = toc["toc"]["lib.so"]["gfx942"]
        entry.pop("original_size", None) if size is None else entry.update(original_size=size)
        (got,) = _entries(_kpack(blob, toc))
        assert bytes(got.buf) == CODE_OBJECT
        (exc,) = _entries(_kpack(blob, toc), Limits(max_decompressed=len(CODE_OBJECT) - 1))
        _at(exc, AT + 64 + 8, f"expands beyond its declared {len(CODE_OBJECT) - 1} bytes")
    toc["toc"]["lib.so"]["gfx942"]["original_size"] = 0  # zero is a size: the frame says more
    (exc,) = _entries(_kpack(blob, toc))
    _at(exc, AT + 64 + 8, "expands beyond its declared 0 bytes")


def test_kpack_table_rows_that_are_not_maps_are_passed_over_or_named():
    toc_at = AT + 64 + len(CODE_OBJECT)
    table = {"odd.so": 5, "lib.so": {"gfx90a": "x", "gfx942": {"ordinal": 0}}}
    bad, good = _entries(_kpack(CODE_OBJECT, _toc(toc=table)))
    _at(bad, toc_at, "'lib.so' [gfx90a] has ordinal None")
    assert (good.binary, good.processor) == ("lib.so", "gfx942")
