"""Tar archives, plain and gzip-compressed (``.tar``, ``.tar.gz``, ``.tgz``: how a source
distribution ships prebuilt device code): every member read, each code object named by its
member as a wheel member names it.

Inputs are written by Python's tarfile (ustar, GNU and pax formats) from the real fixtures.
Oracles: the SHA-256 of every code object clang-offload-bundler-22 unbundled from each fixture
(recorded in the fixture manifest), tarfile's own reading of each archive (member names, header
offsets, member bytes), and, for damaged archives, the byte the test itself changed. A truncated
archive, a member whose header lies about its size and a gzip bomb each give one error naming
where, after the members before it are read, in bounded memory.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import mmap
import os
import subprocess
import sys
import tarfile
import tracemalloc
from pathlib import Path

import pytest

import amdocc
from amdocc.containers import Blob, Failed, Limits, Skipped, scan
from amdocc.containers.tar import TarArchive
from amdocc.errors import LimitError, Origin
from conftest import FIXTURES, ROOT

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
BY_FILE = {f["file"]: f for f in MANIFEST["fixtures"]}
SO, HIPFB, CCOB = "containers/libhip_plain.so", "containers/bundle_5arch.hipfb", "containers/ccob_v2_zstd.hipfb"
LONG_DIR = "pkg-1.0/" + "deeply/nested/" * 9  # over 100 characters: GNU 'L' and pax 'path' records
MEMBERS = {
    "pkg-1.0/setup.py": b"from setuptools import setup\nsetup()\n",
    f"{LONG_DIR}libhip_plain.so": (FIXTURES / SO).read_bytes(),
    "pkg-1.0/kernels/bundle_5arch.hipfb": (FIXTURES / HIPFB).read_bytes(),
    "pkg-1.0/kernels/ccob.hipfb": (FIXTURES / CCOB).read_bytes(),
}
FROM = {
    f"{LONG_DIR}libhip_plain.so": SO,
    "pkg-1.0/kernels/bundle_5arch.hipfb": HIPFB,
    "pkg-1.0/kernels/ccob.hipfb": CCOB,
}
FORMATS = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT, "ustar": tarfile.USTAR_FORMAT}


def _llvm_entry_hashes(fixture: str) -> list[str]:
    """SHA-256 of each code object LLVM's bundler unbundled from the fixture, sorted."""
    return sorted(e["sha256"] for b in BY_FILE[fixture]["bundles"] for e in b["entries"] if "sha256" in e)


def _tar(path: Path, members: dict[str, bytes], mode: str = "w", fmt: int = tarfile.PAX_FORMAT) -> Path:
    with tarfile.open(path, mode, format=fmt) as t:
        t.addfile(tarfile.TarInfo("pkg-1.0/README"), None)  # an empty file
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def _by_member(cos) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for co in cos:
        out.setdefault(co.origin.hops[0], []).append(hashlib.sha256(co.data).hexdigest())
    return {k: sorted(v) for k, v in out.items()}


@pytest.mark.parametrize("suffix, mode", [(".tar", "w"), (".tar.gz", "w:gz"), (".tgz", "w:gz")])
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_member_gives_the_code_objects_llvm_unbundles_named_by_member(tmp_path, suffix, mode, fmt):
    # The long directory rides in a GNU 'L' member, a pax 'path' record, or ustar's name prefix.
    archive = _tar(tmp_path / f"pkg-1.0{suffix}", MEMBERS, mode, FORMATS[fmt])
    loaded = amdocc.load(archive)
    assert loaded.failed == []
    assert _by_member(loaded) == {name: _llvm_entry_hashes(fixture) for name, fixture in FROM.items()}
    with tarfile.open(archive) as t:  # the oracle's member bytes, and for a plain tar its offsets
        infos = {i.name: i for i in t.getmembers()}
        for co in loaded:
            if any(h.startswith("CCOB") for h in co.origin.hops):
                continue  # offsets inside a compressed bundle's payload: tests/test_containers_offsets.py
            member = t.extractfile(infos[co.origin.hops[0]]).read()
            if mode == "w":
                data_at = infos[co.origin.hops[0]].offset_data
                raw = archive.read_bytes()
                assert raw[co.origin.base : co.origin.base + len(co.data)] == co.data
                assert co.origin.base >= data_at and co.origin.base + len(co.data) <= data_at + len(member)
            else:  # in the expanded stream: no file offset, an offset inside the member
                assert (
                    co.origin.base is None and member[co.origin.payload : co.origin.payload + len(co.data)] == co.data
                )
    assert {co.path for co in loaded} == {str(archive)}


def test_an_sdist_through_the_cli_exits_0_and_names_each_member(tmp_path):
    archive = _tar(tmp_path / "pkg-1.0.tar.gz", MEMBERS, "w:gz")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", "--json", str(archive)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    origins = {co["origin"].split(" > ")[0] for co in json.loads(run.stdout)["code_objects"]}
    assert origins == set(FROM)


def test_a_tar_inside_a_tar_gz_and_an_archive_inside_it_are_read(tmp_path):
    inner = _tar(tmp_path / "inner.tar", {"lib/libhip_plain.so": (FIXTURES / SO).read_bytes()})
    outer = _tar(tmp_path / "outer.tgz", {"pkg/inner.tar": inner.read_bytes()}, "w:gz")
    loaded = amdocc.load(outer)
    assert _by_member(loaded) == {"pkg/inner.tar": _llvm_entry_hashes(SO)}
    assert {co.origin.hops[:2] for co in loaded} == {("pkg/inner.tar", "lib/libhip_plain.so")}


def _headers(archive: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(archive)) as t:
        return {i.name: i for i in t.getmembers()}


def _with_size(archive: bytes, header_at: int, size: int) -> bytes:
    """The archive with one header's size field rewritten, and its checksum made right again
    (as a writer that lies about the size would leave it)."""
    block = bytearray(archive[header_at : header_at + 512])
    block[124:136] = f"{size:011o}\0".encode()
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return archive[:header_at] + bytes(block) + archive[header_at + 512 :]


def _plain(tmp_path: Path) -> bytes:
    return _tar(tmp_path / "p.tar", MEMBERS, fmt=tarfile.GNU_FORMAT).read_bytes()


def test_a_truncated_tar_reads_the_members_before_and_names_the_member_cut_short(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/kernels/bundle_5arch.hipfb"]
    cut = data[: info.offset_data + 1000]
    items = list(scan(cut))
    failed = [i for i in items if isinstance(i, Failed)]
    assert len(failed) == 1 and failed[0].error.offset == info.offset + 124
    assert "'pkg-1.0/kernels/bundle_5arch.hipfb' is cut short" in failed[0].error.message
    assert "after 1000 of the" in failed[0].error.message
    before = {i.origin.hops[0] for i in items if isinstance(i, Blob)}
    assert before == {f"{LONG_DIR}libhip_plain.so"}
    assert str(failed[0].error).startswith(f"<bytes>: offset {info.offset + 124:#x}")


def test_a_tar_cut_inside_a_header_names_that_header(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/kernels/ccob.hipfb"]
    (failed,) = [i for i in scan(data[: info.offset + 100]) if isinstance(i, Failed)]
    assert failed.error.offset == info.offset and "ends inside a header (100 of 512 bytes)" in failed.error.message


def test_a_member_whose_header_understates_its_size_ends_the_walk_at_the_next_header(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/kernels/bundle_5arch.hipfb"]
    lying = _with_size(data, info.offset, 512)  # the real size is larger
    items = list(scan(lying))
    # The member's 512 bytes are read (their bundle is cut short: its own error), then the walk
    # meets the member's remaining bytes where the next header should be: zeros first (they read
    # as the end-of-archive marker), then the bundle's entries, which no archive's end holds.
    inside, failed = [i for i in items if isinstance(i, Failed)]
    assert inside.origin.hops == ("pkg-1.0/kernels/bundle_5arch.hipfb",)
    after = info.offset_data + 512
    assert lying[after : after + 1024] == bytes(1024)
    first_data = next(i for i in range(after, len(lying)) if lying[i])
    assert failed.origin.hops == () and failed.error.offset == first_data
    assert "data after the end-of-archive marker" in failed.error.message
    assert "a member that declares less than it has" in failed.error.message
    assert not [i for i in items if isinstance(i, Blob) and "ccob" in i.origin.hops[0]]  # not read as a member


def test_a_member_whose_header_understates_its_size_is_found_at_the_next_header_it_breaks(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/setup.py"]
    lying = _with_size(data, info.offset, 0)  # the member's own text then sits where a header should
    (failed,) = [i for i in scan(lying) if isinstance(i, Failed)]
    assert failed.error.offset == info.offset_data and "no valid tar header here" in failed.error.message
    assert "declares a size it does not have" in failed.error.message
    assert "no valid tar header here" in failed.error.message and "declares a size" in failed.error.message


def test_a_header_whose_checksum_does_not_match_ends_the_walk_there(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/kernels/ccob.hipfb"]
    damaged = bytearray(data)
    damaged[info.offset + 20] ^= 0x01  # a byte of the name; the checksum field still parses
    items = list(scan(bytes(damaged)))
    (failed,) = [i for i in items if isinstance(i, Failed)]
    assert failed.error.offset == info.offset and "checksum does not match" in failed.error.message
    assert "pkg-1.0/kernels/bundle_5arch.hipfb" in {i.origin.hops[0] for i in items if isinstance(i, Blob)}


def test_a_member_whose_header_overstates_its_size_is_cut_short_at_the_end(tmp_path):
    data = _plain(tmp_path)
    info = _headers(data)["pkg-1.0/kernels/ccob.hipfb"]  # the last member
    lying = _with_size(data, info.offset, info.size + 1_000_000)
    (failed,) = [i for i in scan(lying) if isinstance(i, Failed)]
    assert failed.error.offset == info.offset + 124 and "is cut short" in failed.error.message


def test_a_gzip_bomb_stops_at_the_expansion_budget_in_bounded_memory(tmp_path):
    zeros = 64 << 20
    bomb = tmp_path / "bomb.tar.gz"
    with tarfile.open(bomb, "w:gz") as t:
        t.addfile(tarfile.TarInfo("pkg/ok.hipfb"), io.BytesIO(b""))
        info = tarfile.TarInfo("pkg/zeros.bin")
        info.size = zeros
        t.addfile(info, io.BytesIO(bytes(zeros)))
    assert bomb.stat().st_size < zeros // 500  # a bomb: it expands more than 500 times
    tracemalloc.start()
    try:
        items = list(scan(str(bomb), Limits(max_archive_bytes=8 << 20)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    (failed,) = [i for i in items if isinstance(i, Failed)]
    assert isinstance(failed.error, LimitError) and "AMDOCC_MAX_ARCHIVE_BYTES" in failed.error.message
    assert failed.error.origin.hops == ("gzip",) and failed.error.offset > 8 << 20
    assert peak < 16 << 20  # read past in chunks, never held whole
    # Under the default budget the same archive is read through, still in bounded memory.
    tracemalloc.start()
    try:
        items = list(scan(str(bomb)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not [i for i in items if isinstance(i, Failed)] and peak < 16 << 20


def test_a_truncated_gzip_stream_is_an_error_after_the_members_before(tmp_path):
    archive = _tar(tmp_path / "p.tgz", MEMBERS, "w:gz").read_bytes()
    items = list(scan(archive[: len(archive) - 2000]))
    (failed,) = [i for i in items if isinstance(i, Failed)]
    assert "unreadable gzip stream" in failed.error.message and failed.error.origin.hops == ("gzip",)
    assert any(isinstance(i, Blob) for i in items)


def test_gzip_data_that_is_not_a_tar_is_skipped_and_passed_over_in_a_directory(tmp_path):
    log = tmp_path / "build.log.gz"
    log.write_bytes(gzip.compress(b"no device code here\n" * 100))
    (item,) = list(scan(str(log)))
    assert isinstance(item, Skipped) and item.reason == "gzip data that is not a tar archive"
    _tar(tmp_path / "pkg-1.0.tar.gz", {"k/bundle.hipfb": MEMBERS["pkg-1.0/kernels/bundle_5arch.hipfb"]}, "w:gz")
    walked = list(scan(str(tmp_path)))
    assert {i.origin.path for i in walked} == {str(tmp_path / "pkg-1.0.tar.gz")}
    assert not [i for i in walked if isinstance(i, Failed)]


def test_a_custom_type_is_read_as_a_file_and_a_sparse_one_is_read_past(tmp_path):
    # POSIX reserves types 'A'-'Z' for custom ones, which readers take as regular files (tarfile's
    # extractfile gives their bytes); a GNU sparse member's data is not the file as stored.
    bundle = MEMBERS["pkg-1.0/kernels/bundle_5arch.hipfb"]
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind in (("custom.hipfb", b"A"), ("sparse.hipfb", tarfile.GNUTYPE_SPARSE), ("after.hipfb", b"0")):
            info = tarfile.TarInfo(name)
            info.size, info.type = len(bundle), kind
            t.addfile(info, io.BytesIO(bundle))
    data = out.getvalue()
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        assert t.extractfile("custom.hipfb").read() == bundle
    hops = [i.origin.hops[0] for i in scan(data) if isinstance(i, Blob)]
    assert hops == ["custom.hipfb"] * 5 + ["after.hipfb"] * 5


def test_a_large_member_is_held_in_a_mapped_temporary_file(tmp_path):
    data = _tar(tmp_path / "p.tar", {"k/bundle.hipfb": MEMBERS["pkg-1.0/kernels/ccob.hipfb"]}).read_bytes()
    size = len(MEMBERS["pkg-1.0/kernels/ccob.hipfb"])
    held = {}
    for threshold in (size + 1, size):
        archive = TarArchive(io.BytesIO(data), Origin("p.tar"), Limits(mmap_threshold=threshold))
        (held[threshold],) = [m for m in archive.members(lambda head: True) if m.name == "k/bundle.hipfb"]
    assert isinstance(held[size + 1].data, bytes) and isinstance(held[size].data, mmap.mmap)
    assert held[size + 1].data == held[size].data[:] == MEMBERS["pkg-1.0/kernels/ccob.hipfb"]


def test_a_long_name_larger_than_a_name_can_be_is_refused_without_reading_it(tmp_path):
    size = 2 << 20
    header = bytearray(512)
    header[0:13] = b"././@LongLink"
    header[124:136] = f"{size:011o}\0".encode()
    header[156:157] = b"L"
    header[257:265] = b"ustar  \0"
    header[148:156] = b" " * 8
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    data = bytes(header) + b"a" * size + _plain(tmp_path)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:  # the oracle reads it as a name, 2 MiB long
        assert len(t.getmembers()[0].name) == size
    (item,) = list(scan(data))
    assert isinstance(item, Failed) and item.error.offset == 0
    assert f"tar extended header of {size} bytes" in item.error.message


def test_a_wheel_reads_its_tar_gz_member_and_passes_over_other_gzip_data(tmp_path):
    import zipfile

    sdist = _tar(tmp_path / "inner.tar.gz", {"k/bundle.hipfb": MEMBERS["pkg-1.0/kernels/bundle_5arch.hipfb"]}, "w:gz")
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        z.writestr("pkg/data/table.csv.gz", gzip.compress(b"a,b\n1,2\n" * 500))
        z.writestr("pkg/kernels.tar.gz", sdist.read_bytes())
    items = list(scan(str(wheel)))
    assert not [i for i in items if isinstance(i, (Failed, Skipped)) and "table" in str(i.origin)]
    blobs = [i for i in items if isinstance(i, Blob)]
    assert len(blobs) == 5 and {b.origin.hops[:2] for b in blobs} == {("pkg/kernels.tar.gz", "k/bundle.hipfb")}


def test_a_tar_holds_at_most_max_entries_members(tmp_path):
    data = _tar(
        tmp_path / "p.tar", {f"k{i}.hipfb": MEMBERS["pkg-1.0/kernels/ccob.hipfb"] for i in range(3)}
    ).read_bytes()
    items = list(scan(data, Limits(max_entries=3)))  # the directory entry counts too
    assert [type(i) for i in items][-1] is Failed and "more than 3 entries" in items[-1].error.message


def test_a_large_member_is_mapped_and_gives_the_same_code_objects(tmp_path):
    data = _tar(tmp_path / "p.tar.gz", {"k/bundle.hipfb": MEMBERS["pkg-1.0/kernels/bundle_5arch.hipfb"]}, "w:gz")
    small = [i for i in scan(str(data)) if isinstance(i, Blob)]
    large = [i for i in scan(str(data), Limits(mmap_threshold=4096)) if isinstance(i, Blob)]
    assert [b.data for b in small] == [b.data for b in large] and len(small) == 5
