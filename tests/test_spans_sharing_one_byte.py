"""Two spans of a container that share exactly one byte overlap; two that only touch do not.

Every container check that spans own their bytes (bundle entries, device-code sections of a host
file, zip members, note regions) goes through ``amdocc.binary.overlaps``. A ``<`` written as
``<=`` there (or an end counted inclusive) would let two spans that share their last and first
byte pass as disjoint, or refuse two that only touch; no test pinned either edge before.

Oracle: bundles written by clang-offload-bundler-22 (its ``-type=o`` entries follow one another
with no gap, so adjacent entries touch), then edited by one byte: the first entry's size grown
by one, or the second entry's offset moved back by one. clang-offload-bundler-22 itself unbundles
the edited file, and what it hands out for the two entries shares exactly that one byte, so the
overlap the test asserts is the bundler's reading of the layout, not amdocc's. For regions, a
library built by clang-22 gets a second ``.hip_fatbin`` section header starting one byte before
(or exactly where) its fat binary ends, and llvm-readelf-22 -S says where both sections lie.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

import amdocc
from amdocc.binary import first_overlap, overlaps
from amdocc.containers import Blob, Failed, Skipped, scan
from conftest import FIXTURES

# tools/fuzz: the fuzzer's own minimal view of ELF
from fuzz.formats.elf import SHDR, ElfView, with_extra_sections

BUNDLER = "clang-offload-bundler-22"
HOST = "host-x86_64-unknown-linux-gnu-"
GFX942 = "hipv4-amdgcn-amd-amdhsa--gfx942"
GFX90A = "hipv4-amdgcn-amd-amdhsa--gfx90a"
CODE_OBJECT = FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"
FAT_SO = FIXTURES / "containers" / "libhip_plain.so"  # clang-22 -fgpu-rdc=false, one .hip_fatbin
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


# -- the helper at its edges (half-open spans: [start, end)) -------------------------------------


@pytest.mark.parametrize(
    "spans,dropped",
    [
        ([(0, 10), (10, 20)], {}),  # touching: the first ends where the second starts
        ([(0, 10), (9, 20)], {1: 0}),  # byte 9 is in both
        ([(9, 20), (0, 10)], {1: 0}),  # the same, listed the other way: the one listed first is kept
        ([(0, 1), (0, 1)], {1: 0}),  # two one-byte spans on the same byte
        ([(0, 10), (9, 10)], {1: 0}),  # a one-byte span on the other's last byte
        ([(0, 10), (10, 11)], {}),  # a one-byte span just past it
        ([(5, 10), (0, 6)], {1: 0}),  # the later-listed span ends one byte inside the first
        ([(5, 10), (0, 5)], {}),  # ... or exactly where it starts
        ([(0, 10), (10, 10), (9, 9)], {}),  # empty spans own no byte, even at the edge
    ],
)
def test_spans_sharing_one_byte_overlap_and_touching_spans_do_not(spans, dropped):
    assert overlaps(spans) == dropped
    pair = next(iter(dropped.items()), None)
    assert first_overlap(spans) == (None if pair is None else tuple(sorted(pair, key=lambda i: (spans[i][0], i))))


# -- bundles written by clang-offload-bundler-22, edited by one byte ----------------------------


def _entries(data: bytes) -> dict[str, tuple[int, int, int]]:
    """{entry id: (file offset of its header, its offset, its size)} as the bundle's table says
    (magic, u64 count, then per entry u64 offset, u64 size, u64 id length, the id)."""
    assert data.startswith(MAGIC)
    (count,) = struct.unpack_from("<Q", data, len(MAGIC))
    pos, table = len(MAGIC) + 8, {}
    for _ in range(count):
        offset, size, id_length = struct.unpack_from("<QQQ", data, pos)
        table[data[pos + 24 : pos + 24 + id_length].decode()] = (pos, offset, size)
        pos += 24 + id_length
    return table


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Path:
    """A host entry and two device entries (the same code object twice), as the bundler lays them."""
    where = tmp_path_factory.mktemp("bundle")
    (where / "host.bin").write_bytes(b"host")
    out = where / "two.co"
    subprocess.run(
        [
            BUNDLER,
            "-type=o",
            f"-targets={HOST},{GFX942},{GFX90A}",
            f"-input={where / 'host.bin'}",
            f"-input={CODE_OBJECT}",
            f"-input={CODE_OBJECT}",
            f"-output={out}",
        ],
        check=True,
        capture_output=True,
    )
    return out


def _unbundled(path: Path, tmp_path: Path) -> dict[str, bytes]:
    """What clang-offload-bundler-22 hands out for each device entry of ``path``."""
    outs = {t: tmp_path / f"{t}.out" for t in (GFX942, GFX90A)}
    subprocess.run(
        [
            BUNDLER,
            "-unbundle",
            "-type=o",
            f"-targets={GFX942},{GFX90A}",
            f"-input={path}",
            *(f"-output={o}" for o in outs.values()),
        ],
        check=True,
        capture_output=True,
    )
    return {t: o.read_bytes() for t, o in outs.items()}


@pytest.mark.llvm22
def test_entries_the_bundler_lays_end_to_end_touch_and_are_both_read(bundled, tmp_path):
    data = bundled.read_bytes()
    table = _entries(data)
    _, first_offset, first_size = table[GFX942]
    _, second_offset, _ = table[GFX90A]
    assert first_offset + first_size == second_offset  # the bundler left no gap: they touch
    items = list(scan(bundled))
    assert not [i for i in items if isinstance(i, Failed)]
    blobs = {i.entry_id: bytes(i.data) for i in items if isinstance(i, Blob)}
    assert blobs == _unbundled(bundled, tmp_path)
    assert [i.entry_id for i in items if isinstance(i, Skipped)] == [HOST]


@pytest.mark.llvm22
@pytest.mark.parametrize("edit", ["first entry one byte longer", "second entry one byte earlier"])
def test_entries_sharing_exactly_one_byte_are_refused_at_the_second_entry(bundled, tmp_path, edit):
    data = bytearray(bundled.read_bytes())
    table = _entries(bytes(data))
    first_header, _, first_size = table[GFX942]
    second_header, second_offset, _ = table[GFX90A]
    if edit == "first entry one byte longer":
        struct.pack_into("<Q", data, first_header + 8, first_size + 1)
    else:
        struct.pack_into("<Q", data, second_header, second_offset - 1)
    assert sum(a != b for a, b in zip(data, bundled.read_bytes(), strict=True)) == 1  # one byte edited
    edited = tmp_path / "edited.co"
    edited.write_bytes(bytes(data))

    # The bundler's own reading: the two entries it hands out share exactly one byte of the file.
    table = _entries(bytes(data))
    (_, a_offset, a_size), (_, b_offset, b_size) = table[GFX942], table[GFX90A]
    assert a_offset + a_size - b_offset == 1
    out = _unbundled(edited, tmp_path)
    assert (len(out[GFX942]), len(out[GFX90A])) == (a_size, b_size)
    assert out[GFX942][-1:] == out[GFX90A][:1] == bytes(data[b_offset : b_offset + 1])

    failed = [i for i in scan(edited) if isinstance(i, Failed)]
    assert len(failed) == 1
    error = failed[0].error
    assert error.offset == second_header  # the entry that starts inside the other one
    assert error.message == (
        f"bundle entries {GFX942!r} and {GFX90A!r} overlap: the second starts at bundle offset "
        f"{b_offset:#x}, before the first ends at {a_offset + a_size:#x}"
    )


# -- device-code sections of a host library (regions) -------------------------------------------


def _readelf_sections(path: Path) -> list[tuple[int, str, int, int]]:
    """(index, name, offset, size) of every section, as llvm-readelf-22 -S lists them."""
    listing = subprocess.run(
        ["llvm-readelf-22", "-S", "-W", str(path)], capture_output=True, text=True, check=True
    ).stdout
    out = []
    for line in listing.splitlines():
        line = line.strip()
        if not line.startswith("[") or "]" not in line or line.startswith("[Nr]"):
            continue
        index, rest = line[1:].split("]", 1)
        fields = rest.split()
        out.append((int(index), fields[0], int(fields[3], 16), int(fields[4], 16)))
    return out


@pytest.mark.llvm22
@pytest.mark.parametrize("shared", [1, 0], ids=["sharing one byte", "touching"])
def test_a_second_fat_binary_section_sharing_one_byte_is_skipped_and_one_touching_is_not(tmp_path, shared):
    # A copy of the .hip_fatbin section header, moved to start ``shared`` bytes before that
    # section ends, appended to the library's section table.
    data = FAT_SO.read_bytes()
    fatbin = ElfView(data).named(".hip_fatbin")
    size, fields = SHDR[2]
    header = bytearray(data[fatbin.at : fatbin.at + size])
    start = fatbin.f["sh_offset"] + fatbin.f["sh_size"] - shared
    struct.pack_into("<QQ", header, fields["sh_offset"][0], start, 0x40)
    edited = tmp_path / "twice.so"
    edited.write_bytes(with_extra_sections(data, [bytes(header)]))

    # llvm-readelf-22's reading of the edited file: two .hip_fatbin sections, the second
    # starting ``shared`` bytes before the first ends.
    listed = [row for row in _readelf_sections(edited) if row[1] == ".hip_fatbin"]
    assert len(listed) == 2
    (first, _, first_offset, first_size), (second, _, second_offset, second_size) = listed
    assert first_offset + first_size - second_offset == shared

    loaded = amdocc.load(edited, strict=False)
    overlapping = [f for f in loaded.failed if "overlaps section" in str(f.error)]
    if shared:
        (failure,) = overlapping
        assert failure.error.offset == second_offset
        assert failure.error.message == (
            f"section {second} (.hip_fatbin, {second_offset:#x}-{second_offset + second_size:#x}) overlaps "
            f"section {first} (.hip_fatbin) and is skipped: device code is read once"
        )
    else:
        assert overlapping == []
    assert len(loaded) == len(amdocc.load(FAT_SO))  # the first is read either way
