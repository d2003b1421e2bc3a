"""Device code wherever it is: raw AMDGPU ELF images kept as byte arrays in a host binary's
.rodata or .data, outside every fat-binary container, are found by a bounded scan and read with
their origin ("section .rodata @0x...").

Oracles: llvm-readelf-22's section and symbol tables of the host library (where each array
lies, stored beside tools/fixtures/objects.py's output) and llvm-readelf-22 --notes on each image
amdocc extracted, against amdocc's own record of it. mojolearn-amd (PyPI, 4,502 gfx942 kernels
as raw images in .rodata) is read whole when it is in .cache/mojolearn.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import amdocc
from amdocc.containers import NOT_A_WHOLE_IMAGE, Blob, Failed, Limits, Skipped, plan, scan
from amdocc.elf import ElfFile
from amdocc.errors import Origin
from conftest import FIXTURES, ROOT, skip_unless_required

OBJECTS = FIXTURES / "objects"
HOST = OBJECTS / "host_raw_images.so"
IMAGES = {"ro_image": ("globals_gfx942.co", ".rodata"), "rw_image": ("linking_calls.plain.co", ".data")}


def _sections() -> dict[str, tuple[int, int, int]]:
    """{name: (address, file offset, size)} from llvm-readelf-22 -S -W."""
    out = {}
    for line in (OBJECTS / "host_raw_images.sections.txt").read_text().splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            out[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16))
    return out


def _symbol_offsets() -> dict[str, tuple[str, int, int]]:
    """{array: (section, file offset, size)}: the symbol's value less its section's address,
    plus the section's file offset (llvm-readelf-22 -s -W and -S -W)."""
    sections = _sections()
    by_index = {}
    for line in (OBJECTS / "host_raw_images.sections.txt").read_text().splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
        if m:
            by_index[m.group(1)] = m.group(2)
    out = {}
    for line in (OBJECTS / "host_raw_images.symbols.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 8 and parts[7] in IMAGES:
            value, size, section = int(parts[1], 16), int(parts[2]), by_index[parts[6]]
            address, offset, _ = sections[section]
            out[parts[7]] = (section, offset + value - address, size)
    return out


def _readelf_kernels(path: Path) -> dict[str, dict]:
    text = subprocess.run(["llvm-readelf-22", "--notes", str(path)], capture_output=True, text=True, check=True).stdout
    meta = yaml.safe_load(text[text.index("---\n") : text.index("\n...") + 4])
    return {k[".name"]: k for k in meta["amdhsa.kernels"]}


def test_raw_images_in_rodata_and_data_are_read_with_their_origin(tmp_path):
    where = _symbol_offsets()
    assert set(where) == set(IMAGES)
    loaded = amdocc.load(HOST)
    assert len(loaded) == 2 and not loaded.failed
    by_offset = {co.origin.base: co for co in loaded}
    compared = 0
    for array, (section, offset, size) in where.items():
        source, expected_section = IMAGES[array]
        assert section == expected_section
        co = by_offset[offset]
        assert co.origin.hops == (f"section {section} @{offset:#x}",)
        original = (OBJECTS / source).read_bytes()
        assert co.data == original and co.size == size == len(original)
        extracted = tmp_path / f"{array}.co"
        extracted.write_bytes(co.data)
        oracle = _readelf_kernels(extracted)
        assert {k.name for k in co.kernels} == set(oracle)
        for kernel in co.kernels:
            for key in ("vgpr_count", "sgpr_count", "group_segment_fixed_size", "private_segment_fixed_size"):
                assert kernel.meta(key) == oracle[kernel.name]["." + key], (array, kernel.name, key)
                compared += 1
    assert compared == 4 * 3


def test_a_host_library_without_device_code_is_still_reported_as_such():
    (item,) = list(scan(str(OBJECTS / "host_plain.so")))
    assert isinstance(item, Skipped) and "without device code" in item.reason


def test_elf_magic_of_another_machine_is_passed_over():
    sections = _sections()
    decoy = next(
        ln.split() for ln in (OBJECTS / "host_raw_images.symbols.txt").read_text().splitlines() if ln.endswith(" decoy")
    )
    address, offset, _ = sections[".rodata"]
    at = offset + int(decoy[1], 16) - address
    data = HOST.read_bytes()
    assert data[at : at + 4] == b"\x7fELF" and struct.unpack_from("<H", data, at + 18)[0] == 62
    items = list(scan(str(HOST)))
    assert all(isinstance(i, Blob) for i in items) and at not in {i.origin.base for i in items}


def test_an_amdgpu_header_that_does_not_fit_its_section_is_passed_over_at_its_offset():
    section, offset, _ = _symbol_offsets()["ro_image"]
    data = bytearray(HOST.read_bytes())
    struct.pack_into("<Q", data, offset + 0x28, 1 << 40)  # e_shoff far past the section
    items = list(scan(bytes(data)))
    assert not any(isinstance(i, Failed) for i in items)
    (skipped,) = [i for i in items if isinstance(i, Skipped)]
    assert skipped.reason == NOT_A_WHOLE_IMAGE and skipped.origin.base == offset
    assert skipped.origin.hops == (f"section {section} @{offset:#x}",)
    assert sum(isinstance(i, Blob) for i in items) == 1  # the other image is still read


def test_an_image_in_host_data_that_does_not_parse_is_passed_over_and_the_other_is_read(tmp_path):
    # The headers fit, the image inside does not parse (its note runs past its note section):
    # a raw image is a candidate the scan found, never an error. llvm-readelf-22 agrees the
    # image is broken.
    where = _symbol_offsets()
    _, offset, size = where["ro_image"]
    data = bytearray(HOST.read_bytes())
    image = ElfFile(bytes(data[offset : offset + size]), Origin("ro_image"))
    note = next(s for s in image.sections if s.name == ".note")
    struct.pack_into("<I", data, offset + note.offset + 4, 1 << 20)  # the first note's descriptor size
    broken = tmp_path / "broken.co"
    broken.write_bytes(data[offset : offset + size])
    readelf = subprocess.run(["llvm-readelf-22", "--notes", str(broken)], capture_output=True, text=True)
    assert "overflows" in readelf.stderr
    loaded = amdocc.load(bytes(data), strict=False)
    assert not loaded.failed
    assert [(s.reason, s.origin.base) for s in loaded.skipped] == [(NOT_A_WHOLE_IMAGE, offset)]
    assert [co.origin.base for co in loaded] == [where["rw_image"][1]]
    with pytest.raises(amdocc.AmdoccError, match="runs past the end of its note region"):
        amdocc.load(bytes(broken.read_bytes()))  # the same bytes given as a code object: an error


def test_the_search_for_raw_images_is_bounded_and_says_where_it_stopped():
    # .rodata holds two ELF magics (an image and an x86-64 decoy): with a bound of one, the
    # search stops at the second and says so there.
    items = list(scan(str(HOST), Limits(max_entries=1)))
    assert not any(isinstance(i, Failed) for i in items)
    stops = [i for i in items if isinstance(i, Skipped)]
    assert ("section .rodata",) in {i.origin.hops for i in stops}
    assert all("more than 1 ELF magics in one host data section" in i.reason for i in stops)


def test_a_library_with_raw_images_and_a_fat_binary_is_not_cut_into_pieces(tmp_path):
    # Pieces read only the fat-binary sections, so a library that also holds raw images is read
    # whole, and gives what the serial scan gives.
    bundle = (FIXTURES / "objects" / "bundle_gfx938.hipfb").read_bytes()
    (tmp_path / "fatbin").write_bytes(bundle)
    both = tmp_path / "both.so"
    subprocess.run(
        ["llvm-objcopy-22", "--add-section", f".hip_fatbin={tmp_path / 'fatbin'}", str(HOST), str(both)], check=True
    )
    assert plan(str(both)) is None
    items = list(scan(str(both)))
    hops = [i.origin.hops[0] for i in items if isinstance(i, Blob)]
    assert sum(h.startswith("section .hip_fatbin") for h in hops) == 2
    assert sum(h.startswith(("section .rodata @", "section .data @")) for h in hops) == 2
    assert plan(str(OBJECTS / "host_plain.so")) is None


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300
    )


def test_census_and_check_see_the_kernels_of_raw_images(tmp_path):
    kernels = sum(len(_readelf_kernels(OBJECTS / source)) for source, _ in IMAGES.values())
    assert kernels == 3
    census = _cli("census", "--block", "256", "--csv", str(tmp_path / "c.csv"), str(HOST))
    assert census.returncode == 0, census.stderr
    rows = (tmp_path / "c.csv").read_text().splitlines()[1:]
    assert len(rows) == kernels
    checked = _cli("check", str(HOST))
    assert f"{kernels} kernel(s) checked" in checked.stdout + checked.stderr
    plain = _cli("check", str(OBJECTS / "host_plain.so"))
    assert plain.returncode == 2 and "no code object" in plain.stderr


MOJOLEARN = ROOT / ".cache" / "mojolearn" / "mojolearn_amd-0.8.62-py3-none-manylinux_2_35_x86_64.whl"
MOJOLEARN_SHA256 = "bfd08ff89fa34b09006fd215b1c391585ae2ded73291c6607f1d16aaf3995f8f"


@pytest.mark.slow
def test_mojolearn_amd_raw_images_against_llvm_readelf(tmp_path):
    import hashlib

    if not MOJOLEARN.exists():
        skip_unless_required("mojolearn-amd 0.8.62 is not in .cache/mojolearn (run .ci/setup-tests.sh)")

    assert hashlib.sha256(MOJOLEARN.read_bytes()).hexdigest() == MOJOLEARN_SHA256
    loaded = amdocc.load(MOJOLEARN)
    assert not loaded.failed
    assert {co.origin.hops[-1].split(" @")[0] for co in loaded} == {"section .rodata"}
    assert {co.processor for co in loaded} == {"gfx942"}
    kernels = sum(len(co.kernels) for co in loaded)
    assert kernels == 4502  # the count a user reported for this wheel; llvm-readelf-22 below sees each
    # llvm-readelf-22 on every extracted image, many files to one process
    paths = []
    for i, co in enumerate(loaded):
        path = tmp_path / f"{i}.co"
        path.write_bytes(co.data)
        paths.append((path, co))
    compared = 0
    for start in range(0, len(paths), 400):
        chunk = paths[start : start + 400]
        text = subprocess.run(
            ["llvm-readelf-22", "--notes", *[str(p) for p, _ in chunk]], capture_output=True, text=True, check=True
        ).stdout
        blocks = re.split(r"^File: ", text, flags=re.M)[1:]
        assert len(blocks) == len(chunk)
        for block, (_, co) in zip(blocks, chunk, strict=True):
            meta = yaml.safe_load(block[block.index("---\n") : block.index("\n...") + 4])
            want = {k[".name"]: k for k in meta["amdhsa.kernels"]}
            for kernel in co.kernels:
                for key in ("vgpr_count", "sgpr_count", "group_segment_fixed_size", "private_segment_fixed_size"):
                    assert kernel.meta(key) == want[kernel.name]["." + key]
                    compared += 1
    assert compared == 4 * kernels


HSA_RUNTIME = Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0")  # Debian libhsa-runtime64-1 5.2.3


def test_the_hsa_runtime_blit_kernels_against_llvm_readelf(tmp_path):
    # ROCr keeps its blit kernels as raw code objects in .data, one per processor.
    if not HSA_RUNTIME.exists():
        skip_unless_required("Debian's libhsa-runtime64-1 is not installed (run .ci/setup-tests.sh)")
    from amdocc.loader import iter_load

    items = list(iter_load(str(HSA_RUNTIME)))
    cos = [i for i in items if isinstance(i, amdocc.CodeObject)]
    failed = [i for i in items if isinstance(i, Failed)]
    assert {co.origin.hops[0].split(" @")[0] for co in cos} == {"section .data"}
    compared = 0
    for co in cos:
        path = tmp_path / f"{co.origin.base:x}.co"
        path.write_bytes(co.data)
        want = _readelf_kernels(path)
        assert {k.name for k in co.kernels} == set(want)
        for kernel in co.kernels:
            for key in ("vgpr_count", "sgpr_count", "group_segment_fixed_size", "private_segment_fixed_size"):
                assert kernel.meta(key) == want[kernel.name]["." + key]
                compared += 1
    # Measured on 5.2.3-3: 26 code objects (gfx700 ... gfx1035), 10 kernels each.
    assert len(cos) == 26 and compared == 4 * 260
    # The three HSA code-object v1 images (ET_REL, HSAIL notes) before them have a note that
    # overflows its region: llvm-readelf-22 says so too ("ELF note overflows container"). They
    # are passed over, each counted under one reason, never an error.
    assert not failed
    skipped = [i for i in items if isinstance(i, Skipped)]
    assert len(skipped) == 3 and {i.reason for i in skipped} == {NOT_A_WHOLE_IMAGE}
    _readelf_cannot_read_the_notes(HSA_RUNTIME.read_bytes(), [i.origin.base for i in skipped], tmp_path)


def _readelf_cannot_read_the_notes(data: bytes, starts: list[int], tmp_path: Path) -> None:
    """llvm-readelf-22 --notes warns that a note overflows its section in each image at ``starts``
    (the image cut at the end of its section table, plus slack)."""
    for start in starts:
        length = max(
            struct.unpack_from("<Q", data, start + 0x28)[0] + 64 * struct.unpack_from("<H", data, start + 0x3C)[0], 64
        )
        image = tmp_path / f"v1-{start:x}.co"
        image.write_bytes(data[start : start + length + 4096])
        warned = subprocess.run(["llvm-readelf-22", "--notes", str(image)], capture_output=True, text=True)
        assert "ELF note overflows container" in warned.stderr


HIP_WHEEL = ROOT / ".cache" / "hip-wheels" / "vapoursynth_dfttest2_hip-11.1.0-py3-none-manylinux_2_28_x86_64.whl"
HSA_714 = "vapoursynth_dfttest2_hip.libs/libhsa-runtime64-0ba78719.so.1.21.0"


def test_rocm_7_14s_hsa_runtime_gives_no_errors_and_one_count_of_what_is_passed_over(tmp_path):
    # The wheel .ci/setup-tests.sh pins (vapoursynth-dfttest2-hip 11.1.0) carries ROCm 7.14's
    # ROCr, whose .data holds blit kernels as raw images beside three HSA code-object v1 images
    # with a note that overflows its section.
    import zipfile

    if not HIP_WHEEL.exists():
        skip_unless_required("vapoursynth-dfttest2-hip 11.1.0 is not in .cache/hip-wheels (run .ci/setup-tests.sh)")
    from amdocc.loader import iter_load

    library = tmp_path / "libhsa-runtime64.so"
    with zipfile.ZipFile(HIP_WHEEL) as wheel:
        library.write_bytes(wheel.read(HSA_714))
    items = list(iter_load(str(library)))
    cos = [i for i in items if isinstance(i, amdocc.CodeObject)]
    skipped = [i for i in items if isinstance(i, Skipped)]
    assert not [i for i in items if isinstance(i, Failed)]
    assert len(skipped) == 3 and {i.reason for i in skipped} == {NOT_A_WHOLE_IMAGE}
    _readelf_cannot_read_the_notes(library.read_bytes(), [i.origin.base for i in skipped], tmp_path)
    # Every image read is one llvm-readelf-22 reads: the same kernels, the same counts.
    compared = 0
    for co in cos:
        path = tmp_path / f"{co.origin.base:x}.co"
        path.write_bytes(co.data)
        want = _readelf_kernels(path)
        assert {k.name for k in co.kernels} == set(want)
        for kernel in co.kernels:
            compared += sum(kernel.meta(key) == want[kernel.name]["." + key] for key in ("vgpr_count", "sgpr_count"))
    assert cos and compared == 2 * sum(len(co.kernels) for co in cos)
    # The wheel given whole: exit 0, no error line, one line counting the passed-over headers.
    run = _cli("inspect", str(HIP_WHEEL))
    assert run.returncode == 0, run.stderr
    notes = [line for line in run.stderr.splitlines() if line.startswith("amdocc: skipped entries:")]
    assert len(run.stderr.splitlines()) == 1 and len(notes) == 1
    assert f"3 {NOT_A_WHOLE_IMAGE}" in notes[0]
