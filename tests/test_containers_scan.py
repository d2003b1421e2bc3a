"""What the scanner says about each layer: how deep a code object may sit, what is skipped and
why, and which origin every item and error names.

The inputs are built here (bundles, CCOBs, OffloadBinaries, kpack archives, zips) or cut from
the fixtures with llvm-objcopy-22, so the offset an item must name is where the test put the
bytes, or where llvm-readelf-22 says the section lies. Limits.max_depth is "how many container
layers may wrap a code object" (bundle in CCOB in section ...): a code object inside N layers is
read with max_depth N and refused, at its own offset, with max_depth N - 1.
"""

from __future__ import annotations

import io
import re
import struct
import subprocess
import zipfile

import msgpack
import pytest
import zstandard

from amdocc.containers import Blob, Failed, Limits, Skipped, scan
from amdocc.errors import FormatError, LimitError, Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle
from fuzz.formats.ccob import build_ccob
from test_containers_offsets import AT, _kpack, _offload, _toc

CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
CONTAINERS = FIXTURES / "containers"
AMD = b"hipv4-amdgcn-amd-amdhsa--gfx942"
BITCODE = b"BC\xc0\xde" + bytes(range(60))


def _bundled(payload: bytes, layers: int = 1, entry_id: bytes = AMD) -> bytes:
    for _ in range(layers):
        payload = build_bundle([(entry_id, payload)])
    return payload


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _zstd_kpack(entry: bytes) -> bytes:
    frame = zstandard.ZstdCompressor(level=3).compress(entry)
    blob = struct.pack("<II", 1, len(frame)) + frame
    toc = {"compression_scheme": "zstd-per-kernel", "zstd_offset": 64, "zstd_size": len(blob)}
    toc["toc"] = {"lib.so": {"gfx942": {"type": "hsaco", "ordinal": 0, "original_size": len(entry)}}}
    return _kpack(blob, toc)[AT:]


# (input, layers around the code object, where the code object starts: in the file, or None when
# it was decompressed out of it)
WRAPPED = {
    "bare": (CODE_OBJECT, 0),
    "bundle": (_bundled(CODE_OBJECT), 1),
    "bundle in bundle": (_bundled(CODE_OBJECT, 2), 2),
    "bundle x3": (_bundled(CODE_OBJECT, 3), 3),
    "CCOB": (build_ccob(3, 1, _bundled(CODE_OBJECT)), 2),
    "bundle in CCOB in bundle": (build_bundle([(AMD, build_ccob(2, 0, _bundled(CODE_OBJECT)))]), 3),
    "OffloadBinary": (_offload()[AT:], 1),
    "kpack": (_kpack(CODE_OBJECT, _toc())[AT:], 1),
    "zstd kpack": (_zstd_kpack(CODE_OBJECT), 1),
    "zip": (_zip({"a.co": CODE_OBJECT}), 1),
    "deflated zip": (_zip({"a.co": CODE_OBJECT}, zipfile.ZIP_DEFLATED), 1),
    "bundle in zip": (_zip({"a.hipfb": _bundled(CODE_OBJECT)}), 2),
    "zip in zip": (_zip({"in.zip": _zip({"a.co": CODE_OBJECT})}), 2),
    "host ELF section": ((CONTAINERS / "libhip_plain.so").read_bytes(), 2),
    "PE section": ((CONTAINERS / "hip_win.dll").read_bytes(), 2),
}


@pytest.mark.parametrize("name", list(WRAPPED))
def test_a_code_object_inside_n_layers_is_read_with_depth_n_and_refused_with_n_minus_1(name):
    data, layers = WRAPPED[name]
    items = list(scan(data, Limits(max_depth=layers)))
    assert items and all(isinstance(i, (Blob, Skipped)) for i in items), items
    assert any(isinstance(i, Blob) for i in items)
    if layers == 0:
        return
    items = list(scan(data, Limits(max_depth=layers - 1)))
    refused = [i for i in items if isinstance(i, Failed)]
    assert refused and not [i for i in items if isinstance(i, Blob)]
    assert all(isinstance(i.error, LimitError) for i in refused)
    assert all(f"nested deeper than {layers - 1} levels" in i.error.message for i in refused)


def test_the_depth_limit_names_the_offset_of_the_layer_it_refuses():
    data = _bundled(CODE_OBJECT, 3)
    magics = [m.start() for m in re.finditer(b"__CLANG_OFFLOAD_BUNDLE__", data)]
    for depth, at in [(0, magics[1]), (1, magics[2]), (2, data.index(CODE_OBJECT))]:
        (failed,) = [i for i in scan(data, Limits(max_depth=depth)) if isinstance(i, Failed)]
        assert failed.error.offset == at and failed.origin.base == at
        assert f"offset {at:#x} in bundle@" in str(failed.error), str(failed.error)


def test_bundle_entries_are_skipped_with_their_reason_at_their_offset():
    data = build_bundle(
        [
            (b"host-x86_64-unknown-linux-gnu-", b""),
            (b"hipv4-nvptx64-nvidia-cuda--sm_90", b"\x01" * 16),
            (AMD, b""),
            (b"hipv4-amdgcn-amd-amdhsa--gfx90a", CODE_OBJECT),
        ]
    )
    items = list(scan(data))
    got = [(type(i).__name__, getattr(i, "reason", None), i.entry_id) for i in items]
    assert got == [
        ("Skipped", "host entry", "host-x86_64-unknown-linux-gnu-"),
        ("Skipped", "not an AMDGPU entry", "hipv4-nvptx64-nvidia-cuda--sm_90"),
        ("Skipped", "empty entry", AMD.decode()),
        ("Blob", None, "hipv4-amdgcn-amd-amdhsa--gfx90a"),
    ]
    nv = data.index(b"\x01" * 16)
    assert items[1].origin == Origin("<bytes>", ("bundle@0x0", "hipv4-nvptx64-nvidia-cuda--sm_90"), nv)
    assert items[3].origin == Origin(
        "<bytes>", ("bundle@0x0", "hipv4-amdgcn-amd-amdhsa--gfx90a"), data.index(CODE_OBJECT)
    )


COFF_OBJECT = struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 0, 0) + b"\0" * 60  # x86-64, 1 section, no optional header


@pytest.mark.parametrize(
    "payload, kind, words",
    [
        (BITCODE, Skipped, "relocatable device code: nothing to evaluate before the device link"),
        (b"MZ" + b"\0" * 62, Skipped, "embedded PE/COFF image"),
        (b"\x7fELF\x02\x01\x01" + b"\0" * 11 + struct.pack("<H", 62) + b"\0" * 44, Skipped, "embedded non-AMDGPU ELF"),
        (COFF_OBJECT, Failed, "unrecognised data (starts with 64 86 01 00 00 00 00 00)"),
        (b"\x05" * 64, Failed, "unrecognised data (starts with 05 05 05 05 05 05 05 05)"),
    ],
)
def test_what_sits_inside_a_bundle_entry_is_named_at_the_entry(payload, kind, words):
    # Inside a bundle a payload is never at offset 0: a COFF object is only recognised as a whole file.
    data = build_bundle([(AMD, payload)])
    (item,) = list(scan(data))
    at = data.index(payload)
    assert isinstance(item, kind) and item.origin.base == at
    text = item.reason if kind is Skipped else item.error.message
    assert text == words
    if kind is Failed:
        assert item.error.offset == at


@pytest.mark.parametrize(
    "payload, kind, words",
    [
        (BITCODE, Skipped, "relocatable device code: nothing to evaluate before the device link"),
        (b"\x05" * 64, Failed, "unrecognised data (starts with 05 05 05 05 05 05 05 05)"),
    ],
)
def test_a_decompressed_kpack_entry_that_is_not_a_code_object_is_named(payload, kind, words):
    # A zstd kpack entry is a new buffer that starts at 0: still not a COFF object unless it is one.
    (item,) = list(scan(_zstd_kpack(payload)))
    assert isinstance(item, kind)
    assert (item.reason if kind is Skipped else item.error.message) == words
    assert item.origin.hops == ("kpack@0x0", "kpack lib.so [gfx942]") and item.origin.base is None


def test_a_region_stops_at_data_it_cannot_read_and_names_where():
    one = _bundled(CODE_OBJECT)
    gap = 8
    data = one + b"\0" * gap + b"\x07junk" + b"\0" * 3
    items = list(scan(data))
    assert isinstance(items[0], Blob) and isinstance(items[1], Failed) and len(items) == 2
    assert items[1].error.offset == len(one) + gap and items[1].origin.base == len(one) + gap
    assert "unrecognised data in a fat-binary region (starts with 07 6a 75 6e 6b 00 00 00)" in items[1].error.message


def test_data_that_starts_like_a_bundle_magic_but_is_none_stops_the_region():
    one = _bundled(CODE_OBJECT)
    almost = b"__CLANG_OFFLOAD_BUNDLX__" + b"\0" * 8  # the magic's first 23 bytes, then another byte
    items = list(scan(one + almost))
    assert isinstance(items[0], Blob) and isinstance(items[1], Failed) and len(items) == 2
    assert items[1].error.offset == len(one)
    assert "unrecognised data in a fat-binary region (starts with 5f 5f 43 4c 41 4e 47 5f)" in items[1].error.message


def test_a_region_holds_at_most_max_entries_containers():
    one = _bundled(CODE_OBJECT)
    data = one * 3
    assert len([i for i in scan(data, Limits(max_entries=3)) if isinstance(i, Blob)]) == 3
    items = list(scan(data, Limits(max_entries=2)))
    assert [type(i) for i in items] == [Blob, Blob, Failed]
    assert items[2].error.offset == 2 * len(one) and "more than 2 containers in one region" in items[2].error.message


def test_a_compressed_bundle_must_hold_a_bundle():
    (item,) = list(scan(build_ccob(3, 1, CODE_OBJECT)))
    assert isinstance(item, Failed) and item.error.message == "compressed bundle does not hold an offload bundle"
    assert item.origin == Origin("<bytes>", ("CCOB v3 zstd@0x0",), None) and item.error.offset == 0


@pytest.mark.parametrize(
    "kinds, strings, reason",
    [
        (
            (2, 4),
            (("triple", "amdgcn-amd-amdhsa"), ("arch", "gfx942")),
            "relocatable device code: nothing to evaluate before the device link",
        ),
        ((1, 4), (("triple", "nvptx64-nvidia-cuda"), ("arch", "sm_90")), "image for nvptx64-nvidia-cuda"),
        ((1, 4), (("arch", "gfx942"),), "image for an unknown triple"),
    ],
)
def test_offload_binary_images_that_are_not_amdgpu_code_objects_are_skipped(kinds, strings, reason):
    data = _offload(CODE_OBJECT, strings, kinds)[AT:]
    (item,) = list(scan(data))
    assert isinstance(item, Skipped) and item.reason == reason and item.origin.base == data.index(CODE_OBJECT)


def test_an_unreadable_nested_archive_is_named_at_its_member():
    inner = _zip({"a.co": CODE_OBJECT})
    data = _zip({"in.zip": inner[: len(inner) // 2]})
    (item,) = list(scan(data))
    assert isinstance(item, Failed) and "unreadable zip archive" in item.error.message
    at = data.index(inner[:30])  # the stored member's bytes follow its local header
    assert item.origin == Origin("<bytes>", ("in.zip",), at) and item.error.origin == item.origin


def test_a_bare_code_object_is_one_blob_of_all_its_bytes_at_offset_0(tmp_path):
    # The usual input, which the scanner reads first and most briefly: the file is the code object.
    path = tmp_path / "kernel.co"
    path.write_bytes(CODE_OBJECT)
    for source, where in ((CODE_OBJECT, "<bytes>"), (str(path), str(path))):
        (blob,) = scan(source)
        assert isinstance(blob, Blob) and blob.data == CODE_OBJECT and blob.entry_id is None
        assert blob.origin == Origin(where, (), 0) and blob.origin.payload is None


def test_an_empty_input_is_refused_at_offset_0():
    with pytest.raises(FormatError) as info:
        list(scan(b""))
    assert info.value.offset == 0 and info.value.message == "empty file"


# -- host binaries cut with llvm-objcopy-22 -------------------------------------------------------


def _objcopy(tmp_path, *args: str, source: str = "libhip_plain.so") -> bytes:
    out = tmp_path / "host.so"
    subprocess.run(["llvm-objcopy-22", *args, str(CONTAINERS / source), str(out)], check=True)
    return out.read_bytes()


def _section_offset(data: bytes, tmp_path, name: str) -> int:
    path = tmp_path / "probe.so"
    path.write_bytes(data)
    text = subprocess.run(["llvm-readelf-22", "-S", "-W", str(path)], check=True, capture_output=True, text=True)
    (line,) = [x for x in text.stdout.splitlines() if f"] {name} " in x]
    return int(line.split("]", 1)[1].split()[3], 16)


@pytest.mark.llvm22
def test_a_host_elf_without_device_code_is_skipped_naming_its_machine(tmp_path):
    data = _objcopy(tmp_path, "--remove-section", ".hip_fatbin")
    (item,) = list(scan(data))
    machine = struct.unpack_from("<H", data, 18)[0]  # e_machine; 62 is EM_X86_64
    assert machine == 62
    assert isinstance(item, Skipped) and item.reason == "host ELF (machine 62) without device code"
    assert item.origin == Origin("<bytes>")


@pytest.mark.llvm22
def test_an_rdc_bundle_section_holds_one_entry_named_by_the_section(tmp_path):
    co = FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"
    name = "__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--gfx942"
    data = _objcopy(tmp_path, "--remove-section", ".hip_fatbin", "--add-section", f"{name}={co}")
    at = _section_offset(data, tmp_path, name)
    (item,) = list(scan(data))
    assert isinstance(item, Blob) and item.data == CODE_OBJECT
    assert item.entry_id == "hipv4-amdgcn-amd-amdhsa--gfx942"
    assert item.origin == Origin("<bytes>", (f"section {name}",), at)
    (item,) = list(scan(data, Limits(max_depth=0)))  # the section is the one layer around it
    assert isinstance(item, Failed) and item.error.message == "containers nested deeper than 0 levels"
    assert item.error.offset == at


@pytest.mark.llvm22
def test_a_kpack_reference_replaces_the_stub_fat_binary(tmp_path):
    ref = tmp_path / "ref.bin"
    ref.write_bytes(msgpack.packb({"kernel_name": "libx.so", "kpack_search_paths": ["x_@GFXARCH@.kpack"]}))
    data = _objcopy(tmp_path, "--add-section", f".rocm_kpack_ref={ref}")
    at = _section_offset(data, tmp_path, ".rocm_kpack_ref")
    (item,) = list(scan(data))
    assert isinstance(item, Skipped) and item.origin == Origin("<bytes>", ("section .rocm_kpack_ref",), at)
    assert item.reason == "device code moved to a kpack archive (TheRock packaging): 'libx.so' in x_@GFXARCH@.kpack"
    # Device code in RDC bundle sections is still read beside the reference; only the stub goes.
    name = "__CLANG_OFFLOAD_BUNDLE__hipv4-amdgcn-amd-amdhsa--gfx942"
    co = FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"
    both = _objcopy(tmp_path, "--add-section", f".rocm_kpack_ref={ref}", "--add-section", f"{name}={co}")
    assert [type(i) for i in scan(both)] == [Skipped, Blob]
    ref.write_bytes(msgpack.packb([1]))
    data = _objcopy(tmp_path, "--add-section", f".rocm_kpack_ref={ref}")
    (item,) = list(scan(data))
    assert isinstance(item, Failed) and item.error.offset == 0 and item.error.origin.base == at
    assert f"offset {at:#x} in section .rocm_kpack_ref: the kpack reference holds a list" in str(item.error)


def test_a_stored_kpack_entry_keeps_its_file_offset():
    data = _kpack(CODE_OBJECT, _toc())[AT:]
    (item,) = list(scan(data))
    assert isinstance(item, Blob) and item.entry_id == "lib.so:gfx942"
    assert item.origin == Origin("<bytes>", ("kpack@0x0", "kpack lib.so [gfx942]"), data.index(CODE_OBJECT))


def test_a_nested_archive_spilled_to_a_mapped_file_reads_as_one_in_memory():
    data = _zip({"in.zip": _zip({"a.co": CODE_OBJECT}, zipfile.ZIP_DEFLATED)}, zipfile.ZIP_DEFLATED)
    mapped = list(scan(data, Limits(mmap_threshold=1)))  # every member is spilled and mapped
    assert [(type(i), i.origin) for i in mapped] == [(type(i), i.origin) for i in scan(data)]
    assert isinstance(mapped[0], Blob) and mapped[0].data == CODE_OBJECT


def test_a_stored_member_starts_past_its_utf8_name_and_its_extra_field():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        info = zipfile.ZipInfo("ünï.co")  # 4 characters, 6 bytes of UTF-8
        info.extra = b"\xfe\xca\x04\x00abcd"  # one extra field (id 0xcafe, 4 bytes of data)
        z.writestr(info, CODE_OBJECT)
    data = out.getvalue()
    (item,) = list(scan(data))
    assert isinstance(item, Blob) and item.origin == Origin("<bytes>", ("ünï.co",), data.index(CODE_OBJECT))


class _Advised:
    """A buffer that records the advice it is given instead of acting on it."""

    def __init__(self):
        self.calls = []

    def madvise(self, *args):
        self.calls.append(args)


@pytest.mark.parametrize(
    "lo, hi, pages",
    [(1, 3 * 4096 + 5, (1, 2)), (0, 4095, None), (4096, 8192, (1, 1)), (0, 8192, (0, 2)), (4095, 8193, (1, 1))],
)
def test_only_whole_pages_inside_a_scanned_span_are_handed_back(lo, hi, pages):
    import mmap

    from amdocc.containers.regions import release_pages

    if mmap.PAGESIZE != 4096 or not hasattr(mmap, "MADV_DONTNEED"):
        pytest.skip("the cases are worked for 4 KiB pages with madvise")
    buf = _Advised()
    assert release_pages(buf, lo, hi) == hi
    want = [] if pages is None else [(mmap.MADV_DONTNEED, pages[0] * 4096, pages[1] * 4096)]
    assert buf.calls == want
    assert release_pages(b"bytes", lo, hi) == hi  # a buffer without madvise: nothing to hand back


def test_a_mapped_region_hands_back_pages_as_it_goes_and_reads_the_same(tmp_path, monkeypatch):
    import importlib

    monkeypatch.setattr(importlib.import_module("amdocc.containers.regions"), "RELEASE_EVERY", 4096)
    one = _bundled(CODE_OBJECT)
    path = tmp_path / "big.hipfb"
    with open(path, "wb") as fh:  # three bundles 512 KiB apart, in a file past SMALL_FILE
        for i in range(3):
            fh.seek(i * (512 << 10))
            fh.write(one)
        fh.truncate((1 << 20) + 4096)
    mapped = list(scan(path, Limits(mmap_threshold=1)))
    assert [i.origin.base for i in mapped] == [i * (512 << 10) + one.index(CODE_OBJECT) for i in range(3)]
    assert all(isinstance(i, Blob) and i.data == CODE_OBJECT for i in mapped)


def _second(bad: bytes) -> tuple[bytes, int]:
    """A good bundle, zero padding, then ``bad``: the bad container starts at a known offset."""
    first = _bundled(CODE_OBJECT)
    pos = len(first) + 16
    return first + b"\0" * 16 + bad, pos


@pytest.mark.parametrize(
    "bad, hop, offset, words",
    [
        (build_ccob(3, 1, _bundled(CODE_OBJECT), total_delta=10**6), "CCOB", 8, "total size"),
        (_offload()[AT:][:8] + struct.pack("<Q", 31) + _offload()[AT:][16:], "OffloadBinary", 8, "size 31 "),
        (build_bundle([(AMD, CODE_OBJECT)])[:40], "bundle", 32, "offload bundle entry 0"),
    ],
    ids=["ccob", "offload", "bundle"],
)
def test_a_bad_container_in_a_region_is_named_with_its_layer_and_offset(bad, hop, offset, words):
    data, pos = _second(bad)
    items = list(scan(data))
    assert [type(i) for i in items] == [Blob, Failed]
    err = items[1].error
    assert items[1].origin == Origin("<bytes>", (), pos)
    assert err.origin == Origin("<bytes>", (f"{hop}@{pos:#x}",), 0) and err.offset == pos + offset
    assert words in err.message
    assert str(err).startswith(f"<bytes>: offset {pos + offset:#x} in {hop}@{pos:#x}: ")


def test_what_a_compressed_bundle_holds_is_named_relative_to_its_payload():
    payload = _bundled(CODE_OBJECT)
    data, pos = _second(build_ccob(2, 0, payload))
    items = list(scan(data))
    assert (
        items[1].origin
        == Origin("<bytes>", (f"CCOB v2 zlib@{pos:#x}", "bundle@+0x0", AMD.decode()), None, payload.index(CODE_OBJECT))
        and items[1].data == CODE_OBJECT
    )  # the code object's offset in the decompressed payload, found by searching the payload itself


def test_a_kpack_entry_that_cannot_be_read_is_named_in_the_archive():
    data = _kpack(CODE_OBJECT, _toc(toc={"lib.so": {"gfx942": {"ordinal": 3}, "gfx90a": {"ordinal": 0}}}))[AT:]
    items = list(scan(data))
    assert [type(i) for i in items] == [Failed, Blob]
    assert items[0].origin == Origin("<bytes>", ("kpack@0x0",), 0) and "has ordinal 3" in items[0].error.message
