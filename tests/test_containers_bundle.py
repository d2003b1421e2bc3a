"""Offload bundles and compressed bundles (CCOB): what is skipped and why, where one bundle ends,
and how a compressed payload is bounded.

Skipped entries and bundle ends are checked against the fixture manifest (clang-offload-bundler-22's
own listing of each bundle, python tools/fixtures). The other containers are built by the test from
the format's layout (zstd frames from RFC 8878 §3.1, CCOB headers from clang-offload-bundler), so
the expected bytes, sizes and offsets are facts of what the test wrote. Where LLVM decides,
clang-offload-bundler-22 is asked.
"""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import tracemalloc

import pytest

from amdocc.containers import Blob, Skipped, scan
from amdocc.containers.bundle import decompress_ccob, parse_bundle
from amdocc.containers.model import Limits
from amdocc.errors import AmdoccError, FormatError, LimitError, Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle
from fuzz.formats.ccob import build_ccob

ORIGIN = Origin("built.bin")
AT = 40  # containers start here, so a size counted from the wrong origin cannot pass
LEAD = b"\xee" * AT
CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
ID0 = b"hipv4-amdgcn-amd-amdhsa--gfx942"
MiB = 1 << 20


# RFC 8878 §3.1.1: a frame is the magic, a header descriptor byte, an optional window
# descriptor (present unless Single_Segment), an optional content size, then blocks, each with
# a 3-byte little-endian header: bit 0 Last_Block, bits 1-2 type (0 raw, 1 RLE), bits 3-23 size.
ZSTD_MAGIC = struct.pack("<I", 0xFD2FB528)
RAW, RLE = 0, 1


def _peak_bytes(call):
    """The most memory Python's allocators held at once during ``call()``, and what it returned
    or the amdocc error it raised."""
    ours = not tracemalloc.is_tracing()
    if ours:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        try:
            outcome = call()
        except AmdoccError as exc:
            outcome = exc
        return tracemalloc.get_traced_memory()[1] - base, outcome
    finally:
        if ours:
            tracemalloc.stop()


def _block(kind: int, size: int, last: bool, body: bytes) -> bytes:
    return ((size << 3) | (kind << 1) | int(last)).to_bytes(3, "little") + body


def _frame(blocks: list[bytes], window_log: int, content_size: int | None) -> bytes:
    """A frame with a window descriptor (window = 2**window_log, mantissa 0) and, when given,
    a 4-byte content size (Frame_Content_Size_flag 2)."""
    descriptor = 0x80 if content_size is not None else 0x00
    head = ZSTD_MAGIC + bytes([descriptor, (window_log - 10) << 3])
    return head + (struct.pack("<I", content_size) if content_size is not None else b"") + b"".join(blocks)


def _raw_frame(payload: bytes, window_log: int) -> bytes:
    """``payload`` stored in raw blocks of at most 128 KiB (the block size limit, §3.1.1.2.4)."""
    pieces = [payload[i : i + (128 << 10)] for i in range(0, len(payload), 128 << 10)]
    blocks = [_block(RAW, len(p), i == len(pieces) - 1, p) for i, p in enumerate(pieces)]
    return _frame(blocks, window_log, len(payload))


MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
BUNDLED = [f for f in MANIFEST["fixtures"] if f.get("bundles")]
CCOB = [f for f in BUNDLED if f["file"].startswith("containers/ccob_")]


@pytest.mark.llvm22
def test_a_v2_zstd_bundle_whose_frame_asks_a_window_over_128_mib_is_read_like_llvm_reads_it(tmp_path):
    # The frame states its content size and asks a 256 MiB window (window log 28, over zstd's
    # streaming default limit of 2**27). LLVM decompresses a v2 bundle in one call with the
    # declared size, which needs no window buffer, so clang-offload-bundler-22 reads it; amdocc
    # must too (its one-call path), not refuse it as a streaming decoder would.
    bundle = build_bundle([(ID0, CODE_OBJECT)])
    ccob = build_ccob(2, 1, bundle, stream=_raw_frame(bundle, window_log=28))
    path = tmp_path / "wide_window.co"
    path.write_bytes(ccob)
    listed = subprocess.run(
        ["clang-offload-bundler-22", "-list", "-type=o", f"-input={path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert listed == [ID0.decode()]
    data = LEAD + ccob
    result = decompress_ccob(data, AT, len(data), ORIGIN, Limits())
    assert (result.payload, result.extent, result.label) == (bundle, len(data), "CCOB v2 zstd")
    entries, _ = parse_bundle(result.payload, 0, len(result.payload), ORIGIN, Limits())
    assert [e.entry_id for e in entries] == listed


@pytest.mark.llvm22
def test_a_wrong_hash_is_read_as_clang_offload_bundler_and_hips_loader_read_it(tmp_path, monkeypatch):
    # LLVM computes the MD5 only under -verbose and then only prints "Hashes match: No"; comgr,
    # which HIP unbundles through, never asks. So by default amdocc reads the file as they do,
    # and AMDOCC_VERIFY_HASHES=1 turns the mismatch into an error at the hash field.
    bundle = build_bundle([(ID0, CODE_OBJECT)])
    ccob = build_ccob(3, 1, bundle, digest=0x1234)
    path = tmp_path / "wrong_hash.co"
    path.write_bytes(ccob)
    verbose = subprocess.run(
        ["clang-offload-bundler-22", "-list", "-type=o", "-verbose", f"-input={path}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert verbose.stdout.split() == [ID0.decode()]
    assert "Hashes match: No" in verbose.stderr
    data = LEAD + ccob
    monkeypatch.delenv("AMDOCC_VERIFY_HASHES", raising=False)
    result = decompress_ccob(data, AT, len(data), ORIGIN, Limits.from_env())
    assert result.payload == bundle
    monkeypatch.setenv("AMDOCC_VERIFY_HASHES", "1")
    with pytest.raises(FormatError) as info:
        decompress_ccob(data, AT, len(data), ORIGIN, Limits.from_env())
    assert info.value.offset == AT + 24 and "hash mismatch: header 0x0000000000001234" in info.value.message


def test_a_v2_total_size_past_the_end_says_how_many_bytes_are_left_from_the_bundle_start():
    ccob = build_ccob(2, 0, CODE_OBJECT, total_delta=1)
    data = LEAD + ccob
    with pytest.raises(FormatError) as info:
        decompress_ccob(data, AT, len(data), ORIGIN, Limits())
    total = len(ccob) + 1  # what the test wrote at offset 8 of the header
    assert info.value.offset == AT + 8
    assert f"total size {total} runs past the end of its data ({len(ccob)} bytes left)" in info.value.message


def test_a_zstd_bomb_is_refused_after_a_bounded_allocation():
    # 4,096 RLE blocks of 16 KiB (4 input bytes each, a 16 KiB window) expand to 64 MiB from
    # 16 KiB of input; the stream states no content size, so only the bounded loop may read it.
    # Fed 1 KiB at a time it passes the declared 100 bytes within the first KiB (at most 256
    # blocks, 4 MiB); fed whole, the decoder would materialise all 64 MiB before the check.
    blocks = [_block(RLE, 16 << 10, i == 4095, b"\x5a") for i in range(4096)]
    bomb = _frame(blocks, window_log=14, content_size=None)
    for version in (1, 2):
        data = LEAD + build_ccob(version, 1, b"\x5a" * 100, stream=bomb)
        peak, exc = _peak_bytes(lambda: decompress_ccob(data, AT, len(data), ORIGIN, Limits()))  # noqa: B023
        assert type(exc) is LimitError, exc
        assert exc.offset == AT and "beyond its declared 100 bytes" in exc.message
        assert peak < 24 * MiB, (version, peak)


@pytest.mark.parametrize("fixture", BUNDLED, ids=[f["file"] for f in BUNDLED])
def test_skipped_entries_and_their_reasons_match_the_bundler_listing(fixture):
    want = sorted(
        (e["entry_id"], e["skipped"].split(" (")[0]) for b in fixture["bundles"] for e in b["entries"] if "skipped" in e
    )
    got = sorted((s.entry_id, s.reason) for s in scan(FIXTURES / fixture["file"]) if isinstance(s, Skipped))
    assert got == want and want


@pytest.mark.parametrize("fixture", CCOB, ids=[f["file"] for f in CCOB])
def test_every_entry_of_a_compressed_bundle_sits_at_the_offset_its_bundler_table_gives(fixture):
    # Inside a decompressed payload there is no file offset: each entry, a skipped one too, is
    # located by its offset in the payload, which (the bundle starting it) is its table's offset.
    want = {e["entry_id"]: e["offset"] for b in fixture["bundles"] for e in b["entries"]}
    items = list(scan(FIXTURES / fixture["file"]))
    got = {i.origin.hops[-1]: (i.origin.base, i.origin.payload) for i in items if isinstance(i, (Blob, Skipped))}
    assert got == {entry_id: (None, offset) for entry_id, offset in want.items()}
    assert any(isinstance(i, Skipped) for i in items)


@pytest.mark.parametrize("fixture", CCOB, ids=[f["file"] for f in CCOB])
def test_compressed_bundles_back_to_back_each_end_where_they_should(fixture):
    # The same compressed bundle three times in a row (padded to 8 bytes, as HIP's fat binaries
    # align them): every copy's entries, in order, and nothing read across a boundary.
    one = (FIXTURES / fixture["file"]).read_bytes()
    one += b"\0" * (-len(one) % 8)
    want = [e["sha256"] for b in fixture["bundles"] for e in b["entries"] if "sha256" in e]
    found = [hashlib.sha256(i.data).hexdigest() for i in scan(one * 3) if isinstance(i, Blob)]
    assert found == want * 3
    assert not [i for i in scan(one * 3) if not isinstance(i, (Blob, Skipped))]
