"""Wheels and zip archives, TheRock's kpack archives and kpack references, as inputs.

Oracles: the SHA-256 of every code object clang-offload-bundler-22 unbundled from each fixture
(recorded in the fixture manifest), and the bytes a test itself packed into an archive. The kpack
archives are written here from the format as ROCm's rocm-kpack sources document it (KPAK header,
MessagePack table of contents, "none" and "zstd-per-kernel" schemes): no real .kpack file could
be had (the wheels on PyPI tried do not use kpack), and the layout was checked by hand against
rocm-kpack's own test archives (both schemes read, every entry's size as its TOC declares).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import struct
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest
import zstandard

import amdocc
from amdocc.containers import DEFAULT_LIMITS, Failed, scan
from amdocc.errors import LimitError
from conftest import FIXTURES, ROOT

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
BY_FILE = {f["file"]: f for f in MANIFEST["fixtures"]}
SO, DLL, CCOB_SO = "containers/libhip_plain.so", "containers/hip_win.dll", "containers/libhip_ccob_v3.so"
BARE = ["elf/agpr_gfx90a_cov5.hsaco", "elf/agpr_gfx908_cov4.hsaco"]


def _llvm_entry_hashes(fixture: str) -> list[str]:
    """SHA-256 of each code object LLVM's bundler unbundled from the fixture, sorted."""
    return sorted(e["sha256"] for b in BY_FILE[fixture]["bundles"] for e in b["entries"] if "sha256" in e)


def _hashes(cos) -> list[str]:
    return sorted(hashlib.sha256(co.data).hexdigest() for co in cos)


def _zip(path: Path, members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _wheel(tmp_path: Path) -> Path:
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("lib/libhip_ccob_v3.so", (FIXTURES / CCOB_SO).read_bytes())
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pkg/__init__.py", b"# nothing to see\n")
        z.writestr("pkg/libhip_plain.so", (FIXTURES / SO).read_bytes())
        z.writestr(zipfile.ZipInfo("pkg/bin/hip_win.dll"), (FIXTURES / DLL).read_bytes())  # stored
        z.writestr("pkg/data/inner.zip", inner.getvalue())
        z.writestr("pkg-1.0.dist-info/RECORD", b"")
    return path


def _by_member(cos) -> dict[tuple[str, ...], list[str]]:
    out: dict[tuple[str, ...], list] = {}
    for co in cos:
        members = tuple(h for h in co.origin.hops if not h.startswith(("section", "bundle", "hipv4", "CCOB")))
        out.setdefault(members, []).append(co)
    return {k: _hashes(v) for k, v in out.items()}


def test_wheel_members_give_exactly_the_code_objects_llvm_unbundles(tmp_path):
    loaded = amdocc.load(_wheel(tmp_path))
    assert loaded.failed == []
    assert _by_member(loaded) == {
        ("pkg/libhip_plain.so",): _llvm_entry_hashes(SO),
        ("pkg/bin/hip_win.dll",): _llvm_entry_hashes(DLL),
        ("pkg/data/inner.zip", "lib/libhip_ccob_v3.so"): _llvm_entry_hashes(CCOB_SO),
    }
    # The member path is the first hop; the archive itself is the path.
    assert {co.path for co in loaded} == {str(tmp_path / "pkg-1.0-py3-none-any.whl")}


def test_a_stored_member_keeps_its_file_offset_and_a_deflated_one_does_not(tmp_path):
    wheel = _wheel(tmp_path)
    loaded = amdocc.load(wheel)
    dll = [co for co in loaded if co.origin.hops[0] == "pkg/bin/hip_win.dll"]
    so = [co for co in loaded if co.origin.hops[0] == "pkg/libhip_plain.so"]
    raw = wheel.read_bytes()
    for co in dll:  # the offset is where the code object's bytes sit in the wheel file
        assert raw[co.origin.base : co.origin.base + len(co.data)] == co.data
    assert all(co.origin.base is None for co in so)


def test_a_directory_walk_reads_wheels_as_containers(tmp_path):
    _wheel(tmp_path)
    (tmp_path / "notes.txt").write_text("not code")
    loaded = amdocc.load(tmp_path)
    assert loaded.failed == []
    assert _hashes(loaded) == sorted(_llvm_entry_hashes(SO) + _llvm_entry_hashes(DLL) + _llvm_entry_hashes(CCOB_SO))


def test_wheel_from_bytes_and_from_stdin(tmp_path):
    data = _wheel(tmp_path).read_bytes()
    assert _hashes(amdocc.load(data)) == _hashes(amdocc.load(tmp_path / "pkg-1.0-py3-none-any.whl"))
    proc = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", "--json", "-"],
        input=data,
        capture_output=True,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    )
    cos = json.loads(proc.stdout)["code_objects"]
    assert sorted(c["origin"].split(" > ")[0] for c in cos) == sorted(
        ["pkg/libhip_plain.so"] * len(_llvm_entry_hashes(SO))
        + ["pkg/bin/hip_win.dll"] * len(_llvm_entry_hashes(DLL))
        + ["pkg/data/inner.zip"] * len(_llvm_entry_hashes(CCOB_SO))
    )


def test_an_archive_without_code_objects_is_reported_skipped(tmp_path):
    path = _zip(tmp_path / "docs.zip", {"README": b"hello", "a/b.py": b"x = 1\n"})
    loaded = amdocc.load(path)
    assert list(loaded) == [] and loaded.failed == []
    (skip,) = loaded.skipped
    assert "zip archive of 2 members" in skip.reason


def test_the_expansion_budget_refuses_a_member_and_keeps_the_rest(tmp_path):
    so, dll = (FIXTURES / SO).read_bytes(), (FIXTURES / DLL).read_bytes()
    path = _zip(tmp_path / "w.zip", {"a/hip_win.dll": dll, "b/libhip_plain.so": so})
    limits = replace(DEFAULT_LIMITS, max_archive_bytes=len(dll) + 100)
    items = list(scan(path, limits))
    failed = [i for i in items if isinstance(i, Failed)]
    assert len(failed) == 1 and isinstance(failed[0].error, LimitError)
    assert failed[0].origin.hops == ("b/libhip_plain.so",)
    assert "AMDOCC_MAX_ARCHIVE_BYTES" in str(failed[0].error)
    assert _hashes(amdocc.load(path, limits=limits, strict=False)) == _llvm_entry_hashes(DLL)


def test_a_nested_archive_shares_the_budget_of_its_parent(tmp_path):
    so = (FIXTURES / SO).read_bytes()
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(3):
            z.writestr(f"copy{i}.so", so)
    path = _zip(tmp_path / "outer.zip", {"one.zip": inner.getvalue(), "two.zip": inner.getvalue()})
    # Room for the two nested archives and four of the six copies they hold, not for all six.
    limits = replace(DEFAULT_LIMITS, max_archive_bytes=2 * len(inner.getvalue()) + 4 * len(so) + 10)
    items = list(scan(path, limits))
    refused = [i for i in items if isinstance(i, Failed)]
    assert len(refused) == 2 and all(isinstance(i.error, LimitError) for i in refused)
    assert [i.origin.hops for i in refused] == [("two.zip", "copy1.so"), ("two.zip", "copy2.so")]


def test_archives_nested_past_the_depth_limit_are_refused(tmp_path):
    data = (FIXTURES / SO).read_bytes()
    for level in range(DEFAULT_LIMITS.max_depth + 2):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr(f"level{level}", data)
        data = buf.getvalue()
    items = list(scan(data))
    assert [type(i) for i in items] == [Failed]
    assert isinstance(items[0].error, LimitError) and "nested deeper" in str(items[0].error)


def _overlapping_zip(tmp_path) -> Path:
    """Two central-directory entries whose data is the same local record (the overlap bomb)."""
    path = _zip(
        tmp_path / "overlap.zip", {"a.so": (FIXTURES / SO).read_bytes(), "b.so": b"tiny"}, method=zipfile.ZIP_STORED
    )
    raw = bytearray(path.read_bytes())
    cd = raw.rfind(b"PK\x01\x02")  # the last central-directory entry: b.so
    struct.pack_into("<I", raw, cd + 42, 0)  # its local header offset now points at a.so's
    path.write_bytes(bytes(raw))
    return path


def test_members_whose_data_overlap_are_refused(tmp_path):
    items = list(scan(_overlapping_zip(tmp_path)))
    failed = [i for i in items if isinstance(i, Failed)]
    assert len(failed) == 1 and failed[0].origin.hops == ("b.so",)
    assert "overlaps member 'a.so'" in str(failed[0].error)
    assert _hashes(amdocc.load(_overlapping_zip(tmp_path), strict=False)) == _llvm_entry_hashes(SO)


def test_an_lzma_member_is_named_and_not_read(tmp_path):
    path = _zip(tmp_path / "x.zip", {"libhip_plain.so": (FIXTURES / SO).read_bytes()}, method=zipfile.ZIP_LZMA)
    loaded = amdocc.load(path)
    assert list(loaded) == []
    assert any("lzma-compressed member" in s.reason for s in loaded.skipped)


@pytest.mark.parametrize("damage", ["truncated", "bad member"])
def test_a_damaged_archive_is_a_one_line_error(tmp_path, damage):
    raw = _wheel(tmp_path).read_bytes()
    if damage == "truncated":
        raw = raw[: len(raw) // 2]
    else:  # corrupt the deflated bytes of the first .so member: its CRC cannot match
        at = raw.find(b"pkg/libhip_plain.so") + len("pkg/libhip_plain.so") + 500
        raw = raw[:at] + bytes(b ^ 0xFF for b in raw[at : at + 64]) + raw[at + 64 :]
    bad = tmp_path / "bad.whl"
    bad.write_bytes(raw)
    proc = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", str(bad)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("amdocc:")]
    assert errors and all(str(bad) in line for line in errors)
    assert "Traceback" not in proc.stderr


# -- kpack --------------------------------------------------------------------------------


def write_kpack(entries: dict[tuple[str, str], bytes], scheme: str) -> bytes:
    """A .kpack archive laid out as rocm-kpack documents it (see the module docstring)."""
    blob, toc_meta, toc = bytearray(), {}, {}
    if scheme == "none":
        blobs = []
        for data in entries.values():
            blobs.append({"offset": 64 + len(blob), "size": len(data)})
            blob += data
        toc_meta["blobs"] = blobs
    else:
        blob += struct.pack("<I", len(entries))
        for data in entries.values():
            frame = zstandard.ZstdCompressor(level=3).compress(data)
            blob += struct.pack("<I", len(frame)) + frame
        toc_meta.update(zstd_offset=64, zstd_size=len(blob))
    for ordinal, ((binary, arch), data) in enumerate(entries.items()):
        toc.setdefault(binary, {})[arch] = {"type": "hsaco", "ordinal": ordinal, "original_size": len(data)}
    body = msgpack.packb(
        {
            "format_version": 1,
            "group_name": "test",
            "gfx_arch_family": "gfx9X",
            "gfx_arches": sorted({a for _, a in entries}),
            "compression_scheme": scheme,
            **toc_meta,
            "toc": toc,
        },
        use_bin_type=True,
    )
    header = b"KPAK" + struct.pack("<IQ", 1, 64 + len(blob))
    return header + b"\0" * (64 - len(header)) + bytes(blob) + body


def _kpack_entries() -> dict[tuple[str, str], bytes]:
    return {
        ("lib/libk.so#0", "gfx90a"): (FIXTURES / BARE[0]).read_bytes(),
        ("lib/libk.so#0", "gfx908"): (FIXTURES / BARE[1]).read_bytes(),
        ("bin/app#0", "gfx90a"): (FIXTURES / BARE[0]).read_bytes(),
    }


@pytest.mark.parametrize("scheme", ["none", "zstd-per-kernel"])
def test_kpack_archive_entries_are_the_code_objects_packed(tmp_path, scheme):
    entries = _kpack_entries()
    path = tmp_path / "test-gfx9X.kpack"
    path.write_bytes(write_kpack(entries, scheme))
    loaded = amdocc.load(path)
    assert _hashes(loaded) == sorted(hashlib.sha256(d).hexdigest() for d in entries.values())
    labels = sorted(co.origin.hops[-1] for co in loaded)
    assert labels == ["kpack bin/app#0 [gfx90a]", "kpack lib/libk.so#0 [gfx908]", "kpack lib/libk.so#0 [gfx90a]"]
    assert sorted(co.processor for co in loaded) == ["gfx908", "gfx90a", "gfx90a"]


def test_kpack_with_a_bad_ordinal_reports_that_entry_and_reads_the_rest(tmp_path):
    raw = write_kpack(_kpack_entries(), "none")
    toc_at = struct.unpack_from("<Q", raw, 8)[0]
    toc = msgpack.unpackb(raw[toc_at:])
    toc["toc"]["bin/app#0"]["gfx90a"]["ordinal"] = 7
    raw = raw[:toc_at] + msgpack.packb(toc)
    loaded = amdocc.load(raw, strict=False)
    assert len(loaded) == 2
    (bad,) = loaded.failed
    assert "ordinal 7" in str(bad.error)


@pytest.mark.parametrize(
    "raw, needle",
    [
        (b"KPAK" + struct.pack("<IQ", 2, 16), "version 2"),
        (b"KPAK" + struct.pack("<IQ", 1, 1 << 40), "outside the archive"),
        (b"KPAK" + struct.pack("<IQ", 1, 16) + b"\xc1", "malformed MessagePack"),
    ],
)
def test_broken_kpack_headers_are_errors(raw, needle):
    with pytest.raises(amdocc.AmdoccError, match=needle):
        amdocc.load(raw)


REF = {"kpack_search_paths": ["../.kpack/blas-@GFXARCH@.kpack"], "kernel_name": "lib/libhip_plain.so"}


def _objcopy(args: list[str]):
    subprocess.run(["llvm-objcopy-22", *args], check=True, capture_output=True)


def _zero_pages(path: Path, lo: int, hi: int, page: int = 4096) -> None:
    """What the kpack splitter does to the fat binary it moved out: whole pages zeroed."""
    raw = bytearray(path.read_bytes())
    first, last = -(-lo // page) * page, hi // page * page
    raw[first:last] = bytes(max(0, last - first))
    raw[lo + 24 : lo + 64] = b"\xee" * 40  # and what is left of the stub is not a valid bundle
    path.write_bytes(bytes(raw))


@pytest.mark.llvm22
@pytest.mark.parametrize("stub", ["nobits", "zeroed"])
def test_elf_with_a_kpack_reference_is_skipped_naming_the_archive(tmp_path, stub):
    ref = tmp_path / "ref.bin"
    ref.write_bytes(msgpack.packb(REF))
    out = tmp_path / "libhip_plain.so"
    args = ["--add-section", f".rocm_kpack_ref={ref}"]
    if stub == "nobits":
        args += ["--set-section-type", ".hip_fatbin=8"]
    _objcopy([*args, str(FIXTURES / SO), str(out)])
    if stub == "zeroed":
        section = BY_FILE[SO]["section_size"]
        lo = _section_offset(out, ".hip_fatbin")
        _zero_pages(out, lo, lo + section)
    loaded = amdocc.load(out)
    assert list(loaded) == [] and loaded.failed == []
    (skip,) = loaded.skipped
    assert skip.origin.hops == ("section .rocm_kpack_ref",)
    assert "../.kpack/blas-@GFXARCH@.kpack" in skip.reason and "lib/libhip_plain.so" in skip.reason


@pytest.mark.llvm22
def test_pe_with_a_kpack_reference_is_skipped_naming_the_archive(tmp_path):
    ref = tmp_path / "ref.bin"
    ref.write_bytes(msgpack.packb(REF) + b"\0" * 20)  # PE sections are padded
    out = tmp_path / "hip_win.dll"
    _objcopy(["--add-section", f".kpackrf={ref}", str(FIXTURES / DLL), str(out)])
    lo = _section_offset(out, ".hip_fat")
    _zero_pages(out, lo, lo + BY_FILE[DLL]["section_size"])
    loaded = amdocc.load(out)
    assert list(loaded) == [] and loaded.failed == []
    (skip,) = loaded.skipped
    assert skip.origin.hops == ("section .kpackrf",) and "blas-@GFXARCH@.kpack" in skip.reason


def test_a_malformed_kpack_reference_is_an_error_naming_the_section(tmp_path):
    if not shutil.which("llvm-objcopy-22"):
        pytest.skip("needs llvm-objcopy-22")
    bad = tmp_path / "ref.bin"
    bad.write_bytes(msgpack.packb({"kernel_name": 3}))
    out = tmp_path / "x.so"
    _objcopy(
        ["--add-section", f".rocm_kpack_ref={bad}", "--set-section-type", ".hip_fatbin=8", str(FIXTURES / SO), str(out)]
    )
    loaded = amdocc.load(out, strict=False)
    (failed,) = loaded.failed
    assert "kpack_search_paths" in str(failed.error) and failed.origin.hops == ("section .rocm_kpack_ref",)


def _section_offset(path: Path, name: str) -> int:
    """The file offset of a section, as llvm-readobj-22 reports it."""
    text = subprocess.run(
        ["llvm-readobj-22", "--sections", str(path)], capture_output=True, text=True, check=True
    ).stdout
    for block in text.split("Section {")[1:]:
        if f"Name: {name} " in block:
            for key in ("Offset: ", "PointerToRawData: "):
                if key in block:
                    return int(block.split(key)[1].split()[0], 0)
    raise AssertionError(f"{name} not in {path}")


@pytest.mark.parametrize("kind", ["wheel", "kpack-none", "kpack-zstd"])
def test_every_truncation_and_byte_flip_is_an_amdocc_error_or_a_result(tmp_path, kind):
    """Hostile archives: cut anywhere or with a byte flipped, they load or fail with an
    AmdoccError naming the input, never another exception."""
    import random

    if kind == "wheel":
        raw = _zip(tmp_path / "w.zip", {"a/hip_win.dll": (FIXTURES / DLL).read_bytes(), "b.txt": b"x"}).read_bytes()
    else:
        raw = write_kpack(_kpack_entries(), "none" if kind == "kpack-none" else "zstd-per-kernel")
    rng = random.Random(13)
    cases = [raw[:n] for n in range(0, len(raw), max(1, len(raw) // 300))]
    for _ in range(300):
        flipped = bytearray(raw)
        flipped[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        cases.append(bytes(flipped))
    for case in cases:
        try:
            loaded = amdocc.load(case, strict=False)
        except amdocc.AmdoccError as exc:
            assert str(exc).startswith("<bytes>")
            continue
        for failed in loaded.failed:
            assert isinstance(failed.error, amdocc.AmdoccError)
