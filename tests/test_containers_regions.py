"""Fat-binary regions (a section such as ``.hip_fatbin`` holding containers back to back): a region
is read up to its end and no further, and unreadable bytes inside one are named at their offset.

The regions are built here from bundles the test writes (clang-offload-bundler's layout), so the
offset an error must name is where the test put the bytes.
"""

from __future__ import annotations

from amdocc.containers import Blob, Failed, scan
from amdocc.containers.model import Limits
from amdocc.containers.scan import scan_region
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
