"""How inputs reach the scanner: paths, directories, stdin and buffers, other vendors' GPU code
named instead of refused, and large files read by peeking and mapping.

Each input is written here, so what a test expects is a fact of the bytes it wrote (the NVIDIA
fat binary header is the public fatBinaryHeader: u32 magic 0xBA55ED50, u16 version, u16 header
size, u64 size of what follows; EM_CUDA is 190 in the ELF machine registry).
"""

from __future__ import annotations

import io
import os
import struct
import sys

import pytest

from amdocc.containers import Blob, Failed, Limits, NotWalked, Skipped, scan
from amdocc.containers.scan import SMALL_FILE, iter_files, recognised, scan_file
from amdocc.errors import AmdoccError, FormatError, Origin
from conftest import FIXTURES
from fuzz.formats.bundle import build_bundle
from test_containers_bundle import MiB, _peak_bytes

CODE_OBJECT = (FIXTURES / "elf" / "hand_aiter_gfx942.hsaco").read_bytes()
BUNDLE = build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942", CODE_OBJECT)])
FATBIN = "NVIDIA CUDA fat binary (magic 0xBA55ED50), not AMD GPU code"


def _fatbin(payload: bytes, header_size: int = 16, size: int | None = None) -> bytes:
    return struct.pack("<IHHQ", 0xBA55ED50, 1, header_size, len(payload) if size is None else size) + payload


def _error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        list(scan(data))
    return info.value


def test_an_nvidia_fat_binary_is_skipped_when_whole_and_refused_at_its_lie_when_not():
    (item,) = list(scan(_fatbin(b"x" * 40)))
    assert isinstance(item, Skipped) and item.reason == FATBIN and item.origin == Origin("<bytes>")
    (item,) = list(scan(_fatbin(b"x" * 40, size=39)))  # a file may hold more than the header says
    assert item.reason == FATBIN
    exc = _error(_fatbin(b"x" * 40, size=41))
    assert exc.offset == 8 and exc.message == "NVIDIA fat binary header says 57 bytes (header 16), the file has 56"
    exc = _error(_fatbin(b"x" * 40, header_size=15))
    assert exc.offset == 8 and "(header 15)" in exc.message
    exc = _error(_fatbin(b"")[:15])
    assert exc.offset == 0 and exc.message == "truncated NVIDIA fat binary header (15 of 16 bytes)"


def test_a_cuda_elf_is_skipped_by_its_machine_and_checked_like_any_elf():
    cuda = bytearray(CODE_OBJECT)
    struct.pack_into("<H", cuda, 18, 190)
    (item,) = list(scan(bytes(cuda)))
    assert isinstance(item, Skipped) and item.reason == "NVIDIA CUDA ELF (e_machine 190, EM_CUDA), not AMD GPU code"
    # A section whose bytes are not in the file: an error, not a skip.
    shoff, shentsize = struct.unpack_from("<Q", cuda, 0x28)[0], struct.unpack_from("<H", cuda, 0x3A)[0]
    struct.pack_into("<Q", cuda, shoff + shentsize + 0x18, len(cuda))  # section 1's sh_offset
    with pytest.raises(FormatError):
        list(scan(bytes(cuda)))


def test_unrecognised_bytes_are_refused_naming_their_first_eight():
    exc = _error(b"#!/bin/sh\necho hi\n")
    assert exc.offset == 0
    assert exc.message == "not a code object or a container amdocc reads (starts with 23 21 2f 62 69 6e 2f 73)"


@pytest.mark.parametrize(
    "head, known",
    [
        (b"\x7fELF", True),
        (b"__CLANG_OFFLOAD_BUNDLE__", True),
        (b"CCOB", True),
        (b"\x10\xff\x10\xad", True),
        (b"MZ", True),
        (b"PK\x03\x04", True),
        (b"PK\x05\x06", True),
        (b"KPAK", True),
        (struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 0, 0), True),
        (b"BC\xc0\xde", False),
        (b"PK\x01\x02", False),
        (b"KPA", False),
    ],
)
def test_what_the_scanner_recognises_by_its_first_bytes(head, known):
    assert recognised(head) is known


def test_a_directory_walk_passes_over_what_it_does_not_read_unless_named_like_a_code_object(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.co").write_bytes(CODE_OBJECT)
    (tmp_path / "b" / "notes.txt").write_bytes(b"plain text")
    (tmp_path / "b" / "k.HSACO").write_bytes(b"plain text")  # the suffix counts in any case
    (tmp_path / "c.fatbin").write_bytes(b"")
    # A second way into b/ is passed over, and said so (tests/test_directory_walks.py).
    (tmp_path / "link").symlink_to(tmp_path / "b", target_is_directory=True)
    assert list(iter_files(str(tmp_path))) == [
        *(str(tmp_path / n) for n in ("a.co", "b/k.HSACO", "b/notes.txt", "c.fatbin")),
        NotWalked(str(tmp_path / "link"), f"a directory already walked as {tmp_path / 'b'}", False),
    ]
    items = list(scan(tmp_path))
    assert [type(i) for i in items] == [Blob, Failed, Failed, Skipped]
    assert items[0].origin == Origin(str(tmp_path / "a.co"))
    assert items[1].origin == Origin(str(tmp_path / "b" / "k.HSACO")) and "not a code object" in items[1].error.message
    assert items[2].origin == Origin(str(tmp_path / "c.fatbin")) and items[2].error.message == "empty file"
    # The same unreadable file named on its own is an error of the call, not an item.
    with pytest.raises(FormatError):
        list(scan_file(str(tmp_path / "b" / "notes.txt")))


def test_a_missing_file_and_a_directory_that_cannot_be_listed_are_amdocc_errors(tmp_path):
    with pytest.raises(AmdoccError) as info:
        list(scan(tmp_path / "nope.co"))
    assert info.value.message.startswith("cannot open: ") and info.value.origin == Origin(str(tmp_path / "nope.co"))
    with pytest.raises(AmdoccError) as info:
        list(iter_files(str(tmp_path / "nope")))
    assert info.value.message.startswith("cannot list directory: ")


def test_stdin_is_read_whole_and_named_dash(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BUNDLE)))
    (item,) = list(scan("-"))
    assert isinstance(item, Blob) and item.data == CODE_OBJECT and item.origin.path == "-"


@pytest.mark.parametrize("threshold", [1 << 40, 1])  # read into memory, or mapped
def test_a_large_file_is_peeked_at_then_read_or_mapped_and_gives_the_same_items(tmp_path, threshold):
    path = tmp_path / "big.hipfb"
    path.write_bytes(BUNDLE + b"\0" * (SMALL_FILE + 1 - len(BUNDLE)))
    assert os.path.getsize(path) == SMALL_FILE + 1
    (item,) = list(scan(path, Limits(mmap_threshold=threshold)))
    assert isinstance(item, Blob) and item.data == CODE_OBJECT
    assert item.origin == Origin(
        str(path), ("bundle@0x0", "hipv4-amdgcn-amd-amdhsa--gfx942"), BUNDLE.index(CODE_OBJECT)
    )
    # In a walk a large file that starts like nothing amdocc reads is passed over unread.
    other = tmp_path / "big.bin"
    other.write_bytes(b"#" * (SMALL_FILE + 1))
    assert list(scan_file(str(other), in_directory=True)) == []


def test_a_large_archive_is_read_member_by_member_from_the_open_file(tmp_path):
    import zipfile

    path = tmp_path / "big.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("pad.bin", b"\0" * SMALL_FILE)
        z.writestr("a.co", CODE_OBJECT)
    data = path.read_bytes()
    assert len(data) > SMALL_FILE
    (item,) = list(scan(path))
    assert isinstance(item, Blob) and item.origin == Origin(str(path), ("a.co",), data.index(CODE_OBJECT))


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview])
def test_a_buffer_of_any_kind_is_scanned_as_bytes(wrap):
    (item,) = list(scan(wrap(BUNDLE)))
    assert isinstance(item, Blob) and item.data == CODE_OBJECT and item.origin.path == "<bytes>"


def test_a_big_non_code_file_in_a_directory_is_passed_over_after_a_peek(tmp_path):
    # A sparse 64 MiB file of zeros: nothing the scanner reads starts with zeros, so the
    # directory walk must look at its first bytes only, never read it whole.
    big = tmp_path / "weights.bin"
    with open(big, "wb") as fh:
        fh.truncate(64 * MiB)
    assert os.path.getsize(big) > SMALL_FILE
    peak, items = _peak_bytes(lambda: list(scan(tmp_path)))
    assert items == []
    assert peak < 4 * MiB, peak
