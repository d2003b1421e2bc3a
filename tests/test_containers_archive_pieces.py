"""Zip archives and cutting inputs into parts: every bound at its edge, every refusal with the
member it names, and the parts a large input is cut into.

Archives are written here with ``zipfile`` (stored members keep their bytes at a file offset the
test finds in the archive it wrote). Library pieces are checked against the fixture manifest:
where clang-offload-bundler-22 and the translation units' own objects put each bundle
(``offset_in_section``, ``size``, the CCOB header's sizes as ``clang-offload-bundler -verbose``
prints them) and where llvm-readelf-22 puts the section.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import zipfile

import pytest

from amdocc.containers import Blob, Failed, Limits, Members, Piece, Skipped, pieces, plan, scan, scan_part
from amdocc.containers.archive import Archive, Refused
from amdocc.errors import FormatError, LimitError, Origin
from conftest import FIXTURES

CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
CONTAINERS = FIXTURES / "containers"
MANIFEST = {f["file"]: f for f in json.loads((FIXTURES / "manifest.json").read_text())["fixtures"]}
UNREAD = "-compressed member, which amdocc does not read (only stored and deflated members are)"


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED, dirs: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for d in dirs:
            z.mkdir(d)
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _with_method(data: bytes, method: int) -> bytes:
    """The archive with every member's compression method field (local header at 8, central
    directory entry at 10; PKWARE APPNOTE 4.3.7 and 4.3.12) set to ``method``."""
    out = bytearray(data)
    for magic, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        pos = out.find(magic)
        while pos >= 0:
            out[pos + at : pos + at + 2] = method.to_bytes(2, "little")
            pos = out.find(magic, pos + 4)
    return bytes(out)


# -- archives -----------------------------------------------------------------------------------


def test_the_member_count_limit_holds_at_its_edge_and_names_the_archive():
    data = _zip({"a.co": CODE_OBJECT, "b.co": CODE_OBJECT, "c.txt": b"x"})
    assert len([i for i in scan(data, Limits(max_entries=3)) if isinstance(i, Blob)]) == 2
    with pytest.raises(LimitError) as info:
        list(scan(data, Limits(max_entries=2)))
    assert info.value.origin == Origin("<bytes>") and info.value.offset == 0
    assert info.value.message == "zip archive lists 3 members (limit 2, AMDOCC_MAX_ENTRIES)"


def test_an_unreadable_archive_is_named_at_offset_0():
    with pytest.raises(FormatError) as info:
        list(scan(b"PK\x03\x04" + b"\0" * 60))
    assert info.value.offset == 0 and info.value.message.startswith("unreadable zip archive: ")


def test_an_archive_without_code_objects_counts_its_file_members():
    (item,) = list(scan(_zip({"a.txt": b"x" * 100, "b.py": b""}, dirs=("d",))))
    assert isinstance(item, Skipped) and item.origin == Origin("<bytes>")
    assert item.reason == "zip archive of 2 members, none of them a code object or a container amdocc reads"


@pytest.mark.parametrize("method, name", [(zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_LZMA, "lzma"), (99, "method-99")])
def test_a_member_amdocc_cannot_decompress_is_named_with_its_method(method, name):
    data = _zip({"a.co": CODE_OBJECT}, method) if method != 99 else _with_method(_zip({"a.co": CODE_OBJECT}), 99)
    item, archive = list(scan(data))  # the member, then the archive: nothing in it was read
    assert isinstance(item, Skipped) and item.reason == name + UNREAD
    assert item.origin == Origin("<bytes>", ("a.co",), None)
    assert archive.reason.startswith("zip archive of 1 members, none")


def test_only_a_member_of_64_bytes_or_more_is_worth_naming_unread():
    for size, named in ((63, False), (64, True)):
        items = list(scan(_zip({"a.co": b"\x7fELF" + b"\0" * (size - 4)}, zipfile.ZIP_BZIP2)))
        assert ["bzip2" + UNREAD in i.reason for i in items] == ([True, False] if named else [False])


def test_the_expansion_budget_holds_at_its_edge_and_names_the_member_refused():
    data = _zip({"a.co": CODE_OBJECT, "b.co": CODE_OBJECT})
    size = len(CODE_OBJECT)
    assert len([i for i in scan(data, Limits(max_archive_bytes=2 * size)) if isinstance(i, Blob)]) == 2
    items = list(scan(data, Limits(max_archive_bytes=2 * size - 1)))
    assert [type(i) for i in items] == [Blob, Failed]
    second = data.index(CODE_OBJECT, data.index(CODE_OBJECT) + 1)  # b.co is stored: its bytes sit in the file
    err = items[1].error
    assert isinstance(err, LimitError) and err.origin == Origin("<bytes>", ("b.co",), second) and err.offset == 0
    assert items[1].origin == err.origin
    assert err.message == (
        f"member declares {size} bytes, over what is left of the archive's expansion budget "
        f"({size - 1} of {2 * size - 1} bytes, AMDOCC_MAX_ARCHIVE_BYTES)"
    )


def test_archives_nested_past_the_depth_limit_are_named_at_the_nested_member():
    inner = _zip({"a.co": CODE_OBJECT})
    data = _zip({"in.zip": inner})
    (item,) = list(scan(data, Limits(max_depth=0)))
    assert isinstance(item, Failed) and item.error.message == "archives nested deeper than 0 levels"
    assert item.origin == Origin("<bytes>", ("in.zip",), data.index(inner)) == item.error.origin
    # One level more: the nested archive opens, and its code object is one layer too deep.
    (item,) = list(scan(data, Limits(max_depth=1)))
    assert item.error.message == "containers nested deeper than 1 levels"
    assert item.origin.hops == ("in.zip", "a.co")


def test_a_member_after_a_nested_archive_has_what_the_nested_one_left_of_the_budget():
    size = len(CODE_OBJECT)
    data = _zip({"in.zip": _zip({"a.co": CODE_OBJECT}), "b.co": CODE_OBJECT})
    nested = len(_zip({"a.co": CODE_OBJECT}))
    budget = nested + size + size  # the nested archive's bytes, its member, and b.co
    assert len([i for i in scan(data, Limits(max_archive_bytes=budget)) if isinstance(i, Blob)]) == 2
    items = list(scan(data, Limits(max_archive_bytes=budget - 1)))
    assert [type(i) for i in items] == [Blob, Failed] and items[1].origin.hops == ("b.co",)


# -- wheels cut into parts ----------------------------------------------------------------------


def _wheel(tmp_path, members: dict[str, bytes]):
    path = tmp_path / "w.whl"
    path.write_bytes(_zip(members))
    return str(path)


def _groups(parts) -> list[tuple[str, ...]]:
    assert all(isinstance(p, Members) for p in parts)
    return [p.names for p in parts]


def test_a_group_of_members_closes_once_it_holds_piece_bytes(tmp_path, monkeypatch):
    path = _wheel(tmp_path, {"a.co": CODE_OBJECT, "skip.txt": b"text", "b.co": CODE_OBJECT, "c.co": CODE_OBJECT})
    size = len(CODE_OBJECT)
    monkeypatch.setattr(pieces, "PIECE_BYTES", size)  # each member fills a group exactly
    parts = plan(path, spill_dir=str(tmp_path))
    assert _groups(parts) == [("a.co",), ("b.co",), ("c.co",)] and [p.size for p in parts] == [size] * 3
    monkeypatch.setattr(pieces, "PIECE_BYTES", size + 1)
    parts = plan(path, spill_dir=str(tmp_path))
    assert _groups(parts) == [("a.co", "b.co"), ("c.co",)] and [p.size for p in parts] == [2 * size, size]
    # Each part gives what the serial scan gives for its members.
    serial = [i.origin for i in scan(path)]
    assert [i.origin for p in parts for i in scan_part(p)] == serial


def test_a_wheel_that_makes_one_part_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    assert plan(_wheel(tmp_path, {"a.co": CODE_OBJECT, "skip.txt": b"text"}), spill_dir=str(tmp_path)) is None
    assert plan(_wheel(tmp_path, {"skip.txt": b"text"}), spill_dir=str(tmp_path)) is None
    two = _wheel(tmp_path, {"a.co": CODE_OBJECT, "b.co": CODE_OBJECT})
    assert _groups(plan(two, spill_dir=str(tmp_path))) == [("a.co",), ("b.co",)]
    assert plan(two) is None  # without a directory to spill to, a wheel is not cut


def test_a_wheel_over_its_budget_or_with_overlapping_members_is_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    two = _wheel(tmp_path, {"a.co": CODE_OBJECT, "b.co": CODE_OBJECT})
    size = len(CODE_OBJECT)
    assert plan(two, Limits(max_archive_bytes=2 * size), spill_dir=str(tmp_path)) is not None
    assert plan(two, Limits(max_archive_bytes=2 * size - 1), spill_dir=str(tmp_path)) is None


# -- libraries cut into pieces ------------------------------------------------------------------


def _section(path, name: str) -> tuple[int, int]:
    text = subprocess.run(["llvm-readelf-22", "-S", "-W", str(path)], check=True, capture_output=True, text=True)
    (line,) = [x for x in text.stdout.splitlines() if f"] {name} " in x]
    fields = line.split("]", 1)[1].split()
    return int(fields[3], 16), int(fields[4], 16)


@pytest.mark.llvm22
@pytest.mark.parametrize("library", ["libhip_two_tu_plain.so", "libhip_two_tu_ccob.so"])
def test_a_library_is_cut_at_the_bundles_the_bundler_wrote(monkeypatch, library):
    fixture = MANIFEST[f"containers/{library}"]
    path = CONTAINERS / library
    at, _ = _section(path, ".hip_fatbin")
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # one container per piece
    cut = plan(str(path))
    want = []
    for b in fixture["bundles"]:
        start = at + b["offset_in_section"]
        expanded = b["ccob"]["uncompressed_size"] if "ccob" in b else b["size"]
        want.append((start, start + b["size"], expanded))
    assert [(p.start, p.end, p.size) for p in cut] == want
    assert all(p.origin == Origin(str(path), ("section .hip_fatbin",)) for p in cut)
    monkeypatch.setattr(pieces, "PIECE_BYTES", want[0][2])  # the first piece is full after one container
    assert len(plan(str(path))) == 2
    monkeypatch.setattr(pieces, "PIECE_BYTES", want[0][2] + 1)  # now both fit in one
    assert [(p.start, p.end) for p in plan(str(path))] == [(want[0][0], want[1][1])]


def _objcopy(tmp_path, *args: str) -> str:
    out = tmp_path / "host.so"
    subprocess.run(["llvm-objcopy-22", *args, str(CONTAINERS / "libhip_two_tu_plain.so"), str(out)], check=True)
    return str(out)


@pytest.mark.llvm22
@pytest.mark.parametrize(
    "section", [".rocm_kpack_ref", "__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--gfx942"], ids=["kpack", "rdc"]
)
def test_a_library_with_a_kpack_reference_or_an_rdc_bundle_section_is_read_whole(tmp_path, monkeypatch, section):
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    extra = tmp_path / "extra.bin"
    extra.write_bytes(CODE_OBJECT)
    assert plan(_objcopy(tmp_path)) is not None  # the same library without the section is cut
    assert plan(_objcopy(tmp_path, "--add-section", f"{section}={extra}")) is None
    assert plan(_objcopy(tmp_path, "--remove-section", ".hip_fatbin")) is None  # nothing to cut


@pytest.mark.llvm22
def test_a_region_holding_more_containers_than_the_limit_is_read_whole(tmp_path, monkeypatch):
    """Cut into pieces, each part would count its containers from zero and never reach the
    limit that the serial scan reports at the fourth bundle of a section holding four."""
    library = CONTAINERS / "libhip_two_tu_plain.so"
    at, size = _section(library, ".hip_fatbin")  # where llvm-readelf-22 puts it: two bundles
    fatbin = tmp_path / "fatbin.bin"
    fatbin.write_bytes(library.read_bytes()[at : at + size] * 2)
    path = _objcopy(tmp_path, "--remove-section", ".hip_fatbin", "--add-section", f".hip_fatbin={fatbin}")
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    limits = Limits(max_entries=3)  # each bundle holds three entries: the bundles themselves pass
    *_, last = scan(path, limits)
    assert isinstance(last, Failed) and "more than 3 containers in one region" in str(last.error)
    assert plan(path, limits) is None
    assert len(plan(path, Limits(max_entries=4))) == 4


@pytest.mark.llvm22
def test_a_host_elf_with_its_fat_binary_in_hip_fat_is_cut_as_the_scan_reads_it(tmp_path, monkeypatch):
    """``.hip_fat`` is a device-code section wherever it sits (the scan reads it in an ELF too),
    so the splitter cuts it like ``.hip_fatbin`` and its parts give the serial scan's items."""
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    path = _objcopy(tmp_path, "--rename-section", ".hip_fatbin=.hip_fat")
    serial = [(type(i), i.origin, getattr(i, "data", None)) for i in scan(path)]
    assert sum(isinstance(i, Blob) for i in scan(path)) > 0
    cut = plan(path)
    assert cut is not None and len(cut) == 2
    assert all(p.origin == Origin(path, ("section .hip_fat",)) for p in cut)
    assert [(type(i), i.origin, getattr(i, "data", None)) for p in cut for i in scan_part(p)] == serial


def test_a_part_names_the_input_as_the_user_gave_it():
    piece = Piece(str(CONTAINERS / "libhip_plain.so"), Origin("x"), 0, 0, 0)
    assert pieces.part_path(piece) == "x" and pieces.part_path(Members("w.whl", (), 0)) == "w.whl"


@pytest.mark.llvm22
@pytest.mark.parametrize("library", ["libhip_two_tu_plain.so", "libhip_two_tu_ccob.so"])
def test_the_pieces_of_a_library_give_what_the_serial_scan_gives(monkeypatch, library):
    path = str(CONTAINERS / library)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    cut = plan(path)
    assert len(cut) == 2
    serial = [(type(i), i.origin, getattr(i, "data", None)) for i in scan(path)]
    assert [(type(i), i.origin, getattr(i, "data", None)) for p in cut for i in scan_part(p)] == serial


@pytest.mark.llvm22
def test_a_code_object_is_never_cut_even_with_a_fat_binary_section(tmp_path, monkeypatch):
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    bundle = tmp_path / "bundle.bin"
    bundle.write_bytes((CONTAINERS / "bundle_5arch.hipfb").read_bytes())
    out = tmp_path / "co.hsaco"
    source = FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"
    subprocess.run(["llvm-objcopy-22", "--add-section", f".hip_fatbin={bundle}", str(source), str(out)], check=True)
    assert int.from_bytes(out.read_bytes()[18:20], "little") == 224  # EM_AMDGPU
    assert plan(str(out)) is None


def _deflated_wheel(tmp_path, members: dict[str, bytes]) -> str:
    path = tmp_path / "lib.whl"
    path.write_bytes(_zip(members, zipfile.ZIP_DEFLATED))
    return str(path)


@pytest.mark.llvm22
def test_a_deflated_library_member_is_spilled_and_cut_from_spill_bytes_on(tmp_path, monkeypatch):
    library = (CONTAINERS / "libhip_two_tu_plain.so").read_bytes()
    path = _deflated_wheel(tmp_path, {"pkg/lib.so": library, "pkg/a.co": CODE_OBJECT})
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    monkeypatch.setattr(pieces, "SPILL_BYTES", len(library))  # exactly the member's size: spilled
    parts = plan(path, spill_dir=str(spill))
    assert [type(p).__name__ for p in parts] == ["Piece", "Piece", "Members"]
    assert parts[0].origin == Origin(path, ("pkg/lib.so", "section .hip_fatbin"), None)
    assert len(list(spill.iterdir())) == 1  # the spilled library, which the pieces read
    serial = [(type(i), i.origin, getattr(i, "data", None)) for i in scan(path)]
    assert [(type(i), i.origin, getattr(i, "data", None)) for p in parts for i in scan_part(p)] == serial
    monkeypatch.setattr(pieces, "SPILL_BYTES", len(library) + 1)  # one byte short: read as a member
    assert _groups(plan(path, spill_dir=str(spill))) == [("pkg/lib.so",), ("pkg/a.co",)]


def test_a_stored_library_member_is_not_spilled(tmp_path, monkeypatch):
    library = (CONTAINERS / "libhip_two_tu_plain.so").read_bytes()
    path = _wheel(tmp_path, {"pkg/lib.so": library, "pkg/a.co": CODE_OBJECT})
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    monkeypatch.setattr(pieces, "SPILL_BYTES", 0)
    assert _groups(plan(path, spill_dir=str(tmp_path))) == [("pkg/lib.so",), ("pkg/a.co",)]


def test_a_spilled_library_that_makes_one_piece_is_read_as_a_member_and_its_spill_removed(tmp_path, monkeypatch):
    path = _deflated_wheel(tmp_path, {"pkg/lib.so": (CONTAINERS / "libhip_plain.so").read_bytes(), "a.co": CODE_OBJECT})
    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    monkeypatch.setattr(pieces, "SPILL_BYTES", 0)
    assert _groups(plan(path, spill_dir=str(spill))) == [("pkg/lib.so",), ("a.co",)]
    assert list(spill.iterdir()) == []


@pytest.mark.llvm22
def test_a_container_whose_end_only_its_decompressor_knows_runs_to_the_end_of_the_section(tmp_path, monkeypatch):
    from fuzz.formats.bundle import build_bundle
    from fuzz.formats.ccob import build_ccob

    bundle = build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", CODE_OBJECT)])
    ccob = build_ccob(1, 1, bundle)  # CCOB v1 has no total size
    section = tmp_path / "fatbin.bin"
    section.write_bytes(bundle + b"\0" * 8 + ccob + b"\0" * 8)
    path = tmp_path / "lib.so"
    source = CONTAINERS / "libhip_plain.so"
    subprocess.run(
        ["llvm-objcopy-22", "--update-section", f".hip_fatbin={section}", str(source), str(path)], check=True
    )
    at, size = _section(path, ".hip_fatbin")
    assert size == len(section.read_bytes())
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    cut = plan(str(path))
    second = at + len(bundle) + 8
    assert [(p.start, p.end, p.size) for p in cut] == [
        (at, at + len(bundle), len(bundle)),
        (second, at + size, max(len(bundle), at + size - second)),  # the larger of expanded and stored
    ]


def test_a_part_of_a_wheel_says_nothing_about_the_wheel_as_a_whole(tmp_path):
    path = _wheel(tmp_path, {"a.txt": b"text", "b.co": CODE_OBJECT})
    assert list(scan_part(Members(path, ("a.txt",), 4))) == []  # not "none of them a code object"
    assert [i.origin.hops for i in scan_part(Members(path, ("b.co",), len(CODE_OBJECT)))] == [("b.co",)]
    (whole,) = list(scan(_wheel(tmp_path, {"a.txt": b"text"})))
    assert isinstance(whole, Skipped) and whole.reason.startswith("zip archive of 1 members, none")


def _damaged(method: int, at: int) -> tuple[bytes, int]:
    """An archive of one member (a code object and 100 kB of zeros: larger than zipfile reads at
    once, so the first bytes can be read before a broken end is found) whose stored data has
    bytes flipped ``at`` bytes in (negative: from its end), and where that data starts."""
    stored = _zip({"a.co": CODE_OBJECT + bytes(100_000)}, method)
    body = zipfile.ZipFile(io.BytesIO(stored)).infolist()[0]
    start = body.header_offset + 30 + len("a.co") + len(body.extra)
    flip = start + (at if at >= 0 else body.compress_size + at)
    data = bytearray(stored)
    data[flip : flip + 8] = bytes(b ^ 0xFF for b in data[flip : flip + 8])
    return bytes(data), start


@pytest.mark.parametrize(
    "method, at, base",
    [(zipfile.ZIP_DEFLATED, 2, None), (zipfile.ZIP_DEFLATED, -12, None), (zipfile.ZIP_STORED, -8, "start")],
    ids=["deflate stream broken at its start", "deflated data broken at its end", "stored data fails its CRC"],
)
def test_an_unreadable_member_is_named_at_its_start(method, at, base):
    # Broken at the start, the first bytes cannot be read (the peek fails); broken at the end,
    # the peek succeeds and reading the whole member fails.
    data, start = _damaged(method, at)
    items = [i for i in scan(data) if isinstance(i, Failed)]
    assert len(items) == 1
    err = items[0].error
    where = Origin("<bytes>", ("a.co",), start if base == "start" else None)
    assert err.origin == where == items[0].origin and err.offset == 0
    assert err.message.startswith("unreadable member: ")


@pytest.mark.llvm22
def test_offload_binaries_back_to_back_are_cut_at_their_8_aligned_ends(tmp_path, monkeypatch):
    from test_containers_offsets import AT, _offload

    one = _offload(CODE_OBJECT + b"x")[AT:]  # an odd size: the next starts at the 8-aligned end
    aligned = -(-len(one) // 8) * 8
    section = tmp_path / "fatbin.bin"
    section.write_bytes(one + b"\0" * (aligned - len(one)) + one)
    path = tmp_path / "lib.so"
    subprocess.run(
        [
            "llvm-objcopy-22",
            "--update-section",
            f".hip_fatbin={section}",
            str(CONTAINERS / "libhip_plain.so"),
            str(path),
        ],
        check=True,
    )
    at, size = _section(path, ".hip_fatbin")
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    assert [(p.start, p.end) for p in plan(str(path))] == [(at, at + aligned), (at + aligned, at + size)]


def test_an_overlapping_member_is_refused_at_the_file_offset_of_its_data():
    raw = bytearray(_zip({"a.bin": b"A" * 64, "b.bin": b"tiny"}))
    cd = raw.rfind(b"PK\x01\x02")  # b.bin's central-directory entry
    struct.pack_into("<I", raw, cd + 42, 0)  # its local header now is a.bin's, at 0
    archive = Archive(io.BytesIO(bytes(raw)), Origin("t.zip", (), 0), Limits())
    (refused,) = [m for m in archive.members(lambda head: True) if isinstance(m, Refused)]
    # The data of a stored member starts after the 30-byte local header and its 5-byte name.
    assert refused.name == "b.bin" and refused.reason == ""
    assert isinstance(refused.error, FormatError) and refused.error.offset == 0
    assert str(refused.error).startswith("t.zip: offset 0x23 in b.bin: member's data overlaps member 'a.bin'")


def test_a_member_over_the_budget_is_refused_with_the_limit_error_alone():
    archive = Archive(io.BytesIO(_zip({"big.bin": b"B" * 100})), Origin("t.zip", (), 0), Limits(), budget=99)
    (refused,) = archive.members(lambda head: True)
    assert isinstance(refused, Refused) and isinstance(refused.error, LimitError)
    # A refusal that failed says why in its error; the reason is the words of a skip, so empty.
    assert refused.reason == ""
    assert "member declares 100 bytes, over what is left of the archive's expansion budget (99 of" in str(refused.error)
