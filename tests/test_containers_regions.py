"""Fat-binary regions (a section such as ``.hip_fatbin`` holding containers back to back): a region
is read up to its end and no further, and unreadable bytes inside one are named at their offset.
The one walk of a host binary's regions (containers/regions.py) puts each region where
llvm-readelf-22 puts its section, and each container where the bundler put it.

The regions are built here from bundles the test writes (clang-offload-bundler's layout), so the
offset an error must name is where the test put the bytes.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Generator

import pytest

from amdocc.containers import Blob, Failed, scan
from amdocc.containers.model import Limits
from amdocc.containers.regions import FATBIN, RAW_IMAGE, Region, containers, host_elf_regions
from amdocc.containers.scan import scan_region
from amdocc.elf import ElfFile
from amdocc.errors import Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle
from test_containers_bundle import AT, CODE_OBJECT, ID0, LEAD, ORIGIN
from test_containers_scan import _bundled


def test_a_region_ends_at_its_end_even_when_bytes_follow_it():
    # A .hip_fatbin-like region: one bundle, zero padding up to the region's end, then bytes of
    # the next section that match no container. The region is read up to its end only.
    bundle = build_bundle([(ID0, CODE_OBJECT)])
    region = LEAD + bundle + b"\0" * 64
    data = region + b"\xee" * 32
    items = list(scan_region(data, AT, len(region), ORIGIN, Limits()))
    assert [type(i) for i in items] == [Blob]
    assert not any(isinstance(i, Failed) for i in items)
    # The same bytes as a region running to the end of the buffer do hold unrecognised data,
    # named where it starts.
    blob, failed = list(scan_region(data, AT, len(data), ORIGIN, Limits()))
    assert isinstance(blob, Blob) and isinstance(failed, Failed) and failed.error.offset == len(region)


def test_unreadable_data_in_a_region_names_the_file_and_its_offset():
    one = _bundled(CODE_OBJECT)  # a region must start with a container to be read as one
    data = one + b"\0" * 8 + b"\x07junk"
    items = list(scan(data))
    assert isinstance(items[-1], Failed) and items[-1].error.offset == len(one) + 8
    assert str(items[-1].error).startswith(
        f"<bytes>: offset {len(one) + 8:#x}: unrecognised data in a fat-binary region (starts with 07 6a 75 6e 6b"
    )


def _readelf_sections(path) -> dict[str, tuple[int, int]]:
    """{name: (file offset, size)} from llvm-readelf-22 -S -W."""
    text = subprocess.run(["llvm-readelf-22", "-S", "-W", str(path)], check=True, capture_output=True, text=True)
    out = {}
    for line in text.stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            out[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
    return out


@pytest.mark.llvm22
def test_the_walk_puts_the_fat_binary_and_its_bundles_where_readelf_and_the_bundler_do():
    path = FIXTURES / "containers" / "libhip_two_tu_plain.so"
    data = path.read_bytes()
    origin = Origin(str(path))
    regions = list(host_elf_regions(data, ElfFile(data, origin), origin, Limits()))
    at, size = _readelf_sections(path)[".hip_fatbin"]
    assert regions == [Region(FATBIN, at, at + size, origin.within("section .hip_fatbin"), ".hip_fatbin")]
    (fixture,) = [
        f for f in json.loads((FIXTURES / "manifest.json").read_text())["fixtures"] if f["file"].endswith(path.name)
    ]
    seen = []

    def read(kind: str, start: int) -> Generator[int, None, int]:
        seen.append((kind, start))
        yield start
        bundle = next(b for b in fixture["bundles"] if at + b["offset_in_section"] == start)
        return start + bundle["size"]

    assert list(containers(data, at, at + size, origin, Limits(), read)) == [
        at + b["offset_in_section"] for b in fixture["bundles"]
    ]
    assert seen == [("bundle", at + b["offset_in_section"]) for b in fixture["bundles"]]


@pytest.mark.llvm22
def test_the_walk_finds_raw_images_in_the_data_sections_readelf_lists():
    path = FIXTURES / "objects" / "host_raw_images.so"
    data = path.read_bytes()
    origin = Origin(str(path))
    sections = _readelf_sections(path)
    regions = [r for r in host_elf_regions(data, ElfFile(data, origin), origin, Limits())]
    assert all(isinstance(r, Region) and r.kind == RAW_IMAGE for r in regions)
    assert sorted(r.section for r in regions) == [".data", ".rodata"]
    for r in regions:
        lo, size = sections[r.section]
        assert lo <= r.start < r.end <= lo + size
        assert r.origin == origin.within(f"section {r.section} @{r.start:#x}")
