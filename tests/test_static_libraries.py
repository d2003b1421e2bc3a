"""Static libraries (``ar`` archives, ``.a``) holding HIP objects: every member read, each code
object named by its member as a wheel member names it, at its offset in the archive.

Inputs are built here by clang-22 (non-RDC objects with a .hip_fatbin, and an -fgpu-rdc one)
and archived by llvm-ar-22 in its GNU and BSD formats and by binutils' ar. Oracles: the member
names ``llvm-ar-22 t`` lists; for each member, the bytes of each code object
clang-offload-bundler-22 unbundles from the .hip_fatbin llvm-objcopy-22 dumps (found again, byte
for byte, at the offset amdocc names in the archive); llvm-readelf-22 --notes for the kernels'
metadata. Damaged archives are written by the tests from the format (60-byte headers, decimal
sizes) and must give one error naming the offset, with what came before still read.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import amdocc
from amdocc.containers import Blob, Failed, Limits, Skipped, scan
from amdocc.containers.ar import ArArchive
from amdocc.errors import Origin
from conftest import ROOT
from test_relocatable_device_code import RDC, build_rdc

pytestmark = pytest.mark.llvm22

SOURCES = ROOT / "tools" / "fixture_src"
ARCHS = ("gfx942", "gfx1100")
HIP = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "-g0", "-fPIC", "--no-offload-new-driver"]


def _objects(tmp_path: Path) -> list[Path]:
    """Two non-RDC objects (long names, so GNU and BSD spell them their own long-name ways) and
    one -fgpu-rdc object, built by clang-22."""
    out = []
    for src in ("tu_a.hip", "tu_b.hip"):
        obj = tmp_path / f"translation_unit_{src[:-4]}_with_a_long_name.o"
        subprocess.run(
            ["clang-22", *HIP, *[f"--offload-arch={a}" for a in ARCHS], "-c", str(SOURCES / src), "-o", str(obj)],
            check=True,
            capture_output=True,
        )
        out.append(obj)
    return [*out, build_rdc(tmp_path, "rdc.o", "--no-offload-new-driver")]


def _unbundled(obj: Path, tmp_path: Path) -> dict[str, bytes]:
    """{entry id: code object} of the object's .hip_fatbin, by llvm-objcopy-22 and the bundler."""
    fatbin = tmp_path / f"{obj.name}.hipfb"
    subprocess.run(["llvm-objcopy-22", f"--dump-section=.hip_fatbin={fatbin}", str(obj), os.devnull], check=True)
    listed = subprocess.run(
        ["clang-offload-bundler-22", "--list", "--type=o", f"--input={fatbin}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    out = {}
    for entry in (e for e in listed if not e.startswith("host-")):
        co = tmp_path / f"{obj.name}.{entry}.co"
        subprocess.run(
            ["clang-offload-bundler-22", "--unbundle", "--type=o", f"--input={fatbin}", f"--targets={entry}",
             f"--output={co}"],
            check=True,
        )  # fmt: skip
        out[entry] = co.read_bytes()
    return out


def _archive(tool: list[str], tmp_path: Path, name: str, objects: list[Path]) -> Path:
    path = tmp_path / name
    subprocess.run([*tool, "rc", str(path), *[o.name for o in objects]], check=True, cwd=tmp_path)
    return path


ARCHIVERS = {
    "llvm-ar-22 gnu": ["llvm-ar-22", "--format=gnu"],
    "llvm-ar-22 bsd": ["llvm-ar-22", "--format=bsd"],
    "binutils ar": ["ar"],
}


@pytest.mark.parametrize("archiver", sorted(ARCHIVERS))
def test_every_member_gives_the_code_objects_llvm_unbundles_named_by_member_at_its_offset(tmp_path, archiver):
    if archiver == "binutils ar" and not shutil.which("ar"):
        pytest.skip("binutils ar is not installed (llvm-ar-22 covers both formats)")
    objects = _objects(tmp_path)
    library = _archive(ARCHIVERS[archiver], tmp_path, "libdevice.a", objects)
    listed = subprocess.run(["llvm-ar-22", "t", str(library)], capture_output=True, text=True, check=True).stdout
    assert listed.split() == [o.name for o in objects]
    want = {
        (o.name, entry, hashlib.sha256(co).hexdigest())
        for o in objects[:2]
        for entry, co in _unbundled(o, tmp_path).items()
    }
    assert len(want) == 2 * len(ARCHS)
    data = library.read_bytes()
    items = list(scan(str(library)))
    assert not [i for i in items if isinstance(i, Failed)]
    blobs = [i for i in items if isinstance(i, Blob)]
    got = set()
    for blob in blobs:
        member, section, bundle, entry = blob.origin.hops
        assert section == "section .hip_fatbin" and bundle.startswith("bundle@0x") and entry == blob.entry_id
        assert data[blob.origin.base : blob.origin.base + len(blob.data)] == blob.data  # at its offset in the .a
        got.add((member, entry, hashlib.sha256(blob.data).hexdigest()))
    assert got == want
    # The -fgpu-rdc member: its bitcode is named relocatable device code, at that member.
    rdc = [i for i in items if isinstance(i, Skipped) and i.reason == RDC]
    assert {i.origin.hops[0] for i in rdc} == {"rdc.o"} and len(rdc) == len(ARCHS)


def test_kernels_read_from_an_archive_member_match_llvm_readelf(tmp_path):
    objects = _objects(tmp_path)[:1]
    library = _archive(["llvm-ar-22"], tmp_path, "libone.a", objects)
    unbundled = _unbundled(objects[0], tmp_path)
    loaded = amdocc.load(library)
    assert len(loaded) == len(ARCHS)
    compared = 0
    for co in loaded:
        entry = co.origin.hops[-1]
        assert co.origin.hops[0] == objects[0].name and unbundled[entry] == co.data
        path = tmp_path / f"{entry}.co"
        path.write_bytes(unbundled[entry])
        text = subprocess.run(["llvm-readelf-22", "--notes", str(path)], capture_output=True, text=True, check=True)
        notes = yaml.safe_load(text.stdout[text.stdout.index("---\n") : text.stdout.index("\n...") + 4])
        want = {k[".name"]: k for k in notes["amdhsa.kernels"]}
        for kernel in co.kernels:
            for key in ("vgpr_count", "sgpr_count", "group_segment_fixed_size", "kernarg_segment_size"):
                assert kernel.meta(key) == want[kernel.name]["." + key]
                compared += 1
    assert compared == 4 * len(ARCHS)


def test_inspect_of_a_static_library_exits_0_and_counts_what_it_passed_over(tmp_path):
    library = _archive(["llvm-ar-22"], tmp_path, "libdevice.a", _objects(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", str(library)], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert f"{library} [translation_unit_tu_a_with_a_long_name.o > section .hip_fatbin" in run.stdout
    assert run.stderr.startswith("amdocc: skipped entries:") and f"2 {RDC}" in run.stderr


def test_a_thin_archive_reads_the_files_it_names_beside_it(tmp_path):
    objects = _objects(tmp_path)
    (tmp_path / "lib").mkdir()
    library = _archive(["llvm-ar-22", "--thin"], tmp_path, "lib/libthin.a", objects)
    listed = subprocess.run(["llvm-ar-22", "t", str(library)], capture_output=True, text=True, check=True).stdout
    assert [os.path.normpath(n) for n in listed.split()] == [str(o) for o in objects]  # where each member is
    want = {
        (str(o), entry, hashlib.sha256(co).hexdigest())
        for o in objects[:2]
        for entry, co in _unbundled(o, tmp_path).items()
    }
    items = list(scan(str(library)))
    # Each named as the archive stores it, relative to its directory ("../x.o").
    names = sorted({i.origin.hops[0] for i in items})
    assert names == sorted(os.path.relpath(o, library.parent) for o in objects)
    got = {
        (os.path.normpath(library.parent / i.origin.hops[0]), i.entry_id, hashlib.sha256(i.data).hexdigest())
        for i in items
        if isinstance(i, Blob)
    }
    assert got == want and not [i for i in items if isinstance(i, Failed)]
    names = [os.path.relpath(o, library.parent) for o in objects]
    assert all(i.origin.base is None for i in items)  # the bytes are another file's, at no offset of the .a
    # The archive as bytes has no directory to find its members in: skipped, saying so.
    (item,) = list(scan(library.read_bytes()))
    assert isinstance(item, Skipped) and item.reason.startswith("thin ar archive that is not a file of its own")
    # A member that is gone is an error naming it; the others are still read.
    objects[0].unlink()
    items = list(scan(str(library)))
    (failed,) = [i for i in items if isinstance(i, Failed)]
    assert failed.origin.hops == (names[0],) and "cannot be read: No such file or directory" in failed.error.message
    assert {i.origin.hops[0] for i in items if isinstance(i, Blob)} == {names[1]}


def _ar(*members: tuple[bytes, bytes]) -> bytes:
    """A GNU-style archive of (header name, data) members, written from the format."""
    out = b"!<arch>\n"
    for name, data in members:
        out += name.ljust(16) + b"0".ljust(12) + b"0".ljust(6) + b"0".ljust(6) + b"644".ljust(8)
        out += str(len(data)).encode().ljust(10) + b"`\n" + data + (b"\n" if len(data) % 2 else b"")
    return out


def _code_object() -> bytes:
    return (ROOT / "tests" / "data" / "fixtures" / "elf" / "agpr_gfx90a_cov5.hsaco").read_bytes()


def test_a_member_whose_size_runs_past_the_archive_is_an_error_naming_its_header_after_the_members_before():
    co = _code_object()
    good = _ar((b"first.co/", co))
    data = good + _ar((b"second.co/", co))[8:]
    header = len(good)
    lying = data[: header + 48] + b"99999999".ljust(10) + data[header + 58 :]
    items = list(scan(lying))
    assert [type(i) for i in items] == [Blob, Failed]
    assert items[0].origin.hops == ("first.co",) and items[0].origin.base == 8 + 60
    error = items[1].error
    assert error.offset == header + 48 and "declares 99999999 bytes" in error.message
    assert str(error).startswith("<bytes>: offset ")


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda d: d[:-200], "declares"),  # cut inside the member
        (lambda d: d[:-1], "declares"),  # one byte short
        (lambda d: d[:8] + d[8:68].replace(b"`\n", b"XX") + d[68:], "no ar member header here"),
        (lambda d: d[: 8 + 48] + b"12ab".ljust(10) + d[8 + 58 :], "is not a decimal number"),
        (lambda d: d[: 8 + 40], "cut short"),
        (lambda d: d[:8] + b"/999".ljust(16) + d[24:], "outside the long-name table"),
        (lambda d: d[:8] + b"#1/99999999".ljust(16) + d[24:], "BSD ar name length"),
    ],
)
def test_a_damaged_archive_is_one_error_naming_the_offset(damage, words):
    items = list(scan(damage(_ar((b"k.co/", _code_object())))))
    failed = [i for i in items if isinstance(i, Failed)]
    assert len(failed) == 1 and words in failed[0].error.message and failed[0].error.offset is not None


def test_gnu_long_names_and_bsd_names_and_symbol_tables_are_read_from_the_format():
    co = _code_object()
    long_name = b"a_member_name_longer_than_sixteen.co"
    table = long_name + b"/\n"
    gnu = _ar((b"/", b"\0\0\0\0"), (b"//", table), (b"/0", co))
    (item,) = list(scan(gnu))
    assert isinstance(item, Blob) and item.origin.hops == (long_name.decode(),) and item.data == co
    name = b"bsd_member_long_name.co\0"
    bsd = _ar((b"__.SYMDEF SORTED", b"\0" * 8), (b"#1/" + str(len(name)).encode(), name + co))
    (item,) = list(scan(bsd))
    assert isinstance(item, Blob) and item.origin.hops == ("bsd_member_long_name.co",) and item.data == co
    assert bsd[item.origin.base : item.origin.base + len(co)] == co


def test_an_odd_sized_member_is_padded_to_an_even_offset_before_the_next_header():
    co = _code_object()
    data = _ar((b"odd.txt/", b"1234567"), (b"k.co/", co))
    (item,) = list(scan(data))
    assert isinstance(item, Blob) and item.origin.hops == ("k.co",) and item.origin.base == 8 + 60 + 8 + 60
    assert data[item.origin.base : item.origin.base + len(co)] == co


def test_a_member_at_the_mapping_threshold_is_held_in_a_mapped_temporary_file():
    co = _code_object()
    data = _ar((b"k.co/", co))
    (small,) = ArArchive(data, Origin("x.a"), Limits(mmap_threshold=len(co) + 1)).members(lambda head: True)
    (large,) = ArArchive(data, Origin("x.a"), Limits(mmap_threshold=len(co))).members(lambda head: True)
    assert isinstance(small.data, bytes) and isinstance(large.data, mmap.mmap)
    assert small.data == large.data[:] == co


def test_an_archive_holds_at_most_max_entries_members():
    co = _code_object()
    data = _ar((b"a.co/", co), (b"b.co/", co), (b"c.co/", co))
    items = list(scan(data, Limits(max_entries=2)))
    assert [type(i) for i in items] == [Blob, Blob, Failed]
    assert "more than 2 members" in items[2].error.message


def test_a_large_member_is_mapped_and_gives_the_same_code_object():
    co = _code_object()
    data = _ar((b"k.co/", co))
    (small,) = list(scan(data))
    (large,) = list(scan(data, Limits(mmap_threshold=1024)))
    assert small.data == large.data == co and small.origin == large.origin


def test_an_archive_of_no_code_objects_is_skipped_naming_its_member_count():
    data = _ar((b"notes.txt/", b"hello world\n" * 10), (b"data.bin/", struct.pack("<Q", 7) * 20))
    (item,) = list(scan(data))
    assert isinstance(item, Skipped)
    assert item.reason == "ar archive of 2 members, none of them a code object or a container amdocc reads"
