"""The last survivors of issue 11 in the code-object and container readers.

Each case builds its own bytes or metadata and checks what the rules promise: a workgroup of one
work-item is a legal .max_flat_workgroup_size (AMDGPUUsage: 1..1024), a spill count that is not an
integer is a finding like every other integer field, a refused zip member names the file offset
where its data starts, a refusal carries its words once (a reason when skipped, an error when
failed), a malformed kpack map names which map it is, and a region's unreadable container names
the file it sits in.
"""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from amdocc.codeobject.resources import resolve
from amdocc.containers import Failed, Limits, scan
from amdocc.containers.archive import Archive, Refused
from amdocc.containers.kpack import parse_ref
from amdocc.errors import FormatError, LimitError, Origin
from amdocc.targets import MAX_WORKGROUP_SIZE, get_target
from test_containers_scan import CODE_OBJECT, _bundled

GFX942 = get_target("gfx942")


def _findings(metadata: dict) -> tuple[object, list]:
    findings: list = []
    return resolve(GFX942, 5, metadata, None, {}, findings), findings


@pytest.mark.parametrize("size, legal", [(0, False), (1, True), (MAX_WORKGROUP_SIZE, True), (1025, False)])
def test_max_flat_workgroup_size_is_legal_from_1_to_1024(size, legal):
    r, findings = _findings({".max_flat_workgroup_size": size})
    assert r.max_flat_workgroup_size == size
    bad = [f for f in findings if f.code == "out-of-range"]
    if legal:
        assert bad == []
    else:
        assert [f.message for f in bad] == [f".max_flat_workgroup_size {size} is outside 1..1024"]


@pytest.mark.parametrize("key", [".sgpr_spill_count", ".vgpr_spill_count"])
def test_a_spill_count_that_is_not_an_integer_is_a_finding(key):
    r, findings = _findings({key: "7"})
    assert r.spills == (None, None)
    assert [(f.code, f.severity, f.message) for f in findings if f.code == "metadata-type"] == [
        ("metadata-type", "error", f"{key} is '7', not an integer")
    ]
    r, findings = _findings({key: -2})
    assert [f.message for f in findings if f.code == "out-of-range"] == [f"{key} is negative (-2)"]


def _stored_zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def test_an_overlapping_member_is_refused_at_the_file_offset_of_its_data():
    raw = bytearray(_stored_zip({"a.bin": b"A" * 64, "b.bin": b"tiny"}))
    cd = raw.rfind(b"PK\x01\x02")  # b.bin's central-directory entry
    struct.pack_into("<I", raw, cd + 42, 0)  # its local header now is a.bin's, at 0
    archive = Archive(io.BytesIO(bytes(raw)), Origin("t.zip", (), 0), Limits())
    (refused,) = [m for m in archive.members(lambda head: True) if isinstance(m, Refused)]
    # The data of a stored member starts after the 30-byte local header and its 5-byte name.
    assert refused.name == "b.bin" and refused.reason == ""
    assert isinstance(refused.error, FormatError) and refused.error.offset == 0
    assert str(refused.error).startswith("t.zip: offset 0x23 in b.bin: member's data overlaps member 'a.bin'")


def test_a_member_over_the_budget_is_refused_with_the_limit_error_alone():
    archive = Archive(io.BytesIO(_stored_zip({"big.bin": b"B" * 100})), Origin("t.zip", (), 0), Limits(), budget=99)
    (refused,) = archive.members(lambda head: True)
    assert isinstance(refused, Refused) and isinstance(refused.error, LimitError)
    # A refusal that failed says why in its error; the reason is the words of a skip, so empty.
    assert refused.reason == ""
    assert "member declares 100 bytes, over what is left of the archive's expansion budget (99 of" in str(refused.error)


def test_a_malformed_kpack_reference_names_the_kpack_reference():
    with pytest.raises(FormatError) as info:
        parse_ref(b"\xc1", Origin("lib.so", ("section .rocm_kpack_ref",), 0x200))  # 0xc1: never used
    assert info.value.offset == 0
    assert info.value.message.startswith("malformed MessagePack in the kpack reference: ")


def test_unreadable_data_in_a_region_names_the_file_and_its_offset():
    one = _bundled(CODE_OBJECT)  # a region must start with a container to be read as one
    data = one + b"\0" * 8 + b"\x07junk"
    items = list(scan(data))
    assert isinstance(items[-1], Failed) and items[-1].error.offset == len(one) + 8
    assert str(items[-1].error).startswith(
        f"<bytes>: offset {len(one) + 8:#x}: unrecognised data in a fat-binary region (starts with 07 6a 75 6e 6b"
    )
