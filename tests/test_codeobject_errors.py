"""Every refusal of the code-object reader names the file and the offset where the bytes lie.

Each case edits a fixture in one known place and checks the error against the bytes the test
built: the ELF identification bytes (EI_OSABI is byte 7, EI_ABIVERSION byte 8, System V gABI
"e_ident"), the start of a note's descriptor (llvm-readelf-22 --notes lists the same notes), the
fields of an NT_AMD_HSA_ISA_VERSION descriptor (two 16-bit name sizes, three 32-bit version
numbers, then the names: 16 bytes of header, as llvm-readelf-22 decodes it).
"""

from __future__ import annotations

import struct

import msgpack
import pytest

from amdocc.codeobject.notes import decode_v2_isa, decode_v2_metadata
from amdocc.codeobject.reader import NotAnHsaCodeObject, parse_code_object
from amdocc.elf import Note
from amdocc.errors import FormatError, Origin
from conftest import FIXTURES
from fuzz.formats.elf import ElfView, metadata_note, note_desc, with_note_desc
from fuzz.formats.metadata import mp_encode

GFX942 = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
LEGACY_V2 = (FIXTURES / "elf" / "legacy_v2_gfx906.co").read_bytes()
PATH = "built.co"
EI_OSABI, EI_ABIVERSION = 7, 8
NT_AMD_HSA_ISA_VERSION, NT_AMD_HSA_METADATA = 3, 10
ISA_HEADER = 16  # vendor_size u16, arch_size u16, major u32, minor u32, stepping u32


def _parse(data: bytes):
    return parse_code_object(data, Origin(PATH))


def _refusal(data: bytes, kind=FormatError) -> FormatError:
    with pytest.raises(kind) as caught:
        _parse(data)
    return caught.value


def _with_byte(data: bytes, offset: int, value: int) -> bytes:
    out = bytearray(data)
    out[offset] = value
    return bytes(out)


def _desc_at(data: bytes, owner: str, note_type: int) -> int:
    """File offset of a note's descriptor, found by walking the note section (not by amdocc)."""
    return metadata_note(ElfView(data), owner, note_type)[2].f["desc_at"]


@pytest.mark.parametrize("osabi,kind", [(65, "PAL"), (66, "Mesa3D")])
def test_graphics_objects_are_named_by_their_osabi_at_byte_7(osabi, kind):
    # ELFOSABI_AMDGPU_PAL = 65, ELFOSABI_AMDGPU_MESA3D = 66 (AMDGPUUsage.rst "ELF Header").
    error = _refusal(_with_byte(GFX942, EI_OSABI, osabi), NotAnHsaCodeObject)
    assert error.message == f"AMDGPU {kind} graphics object, not an HSA code object"
    assert error.offset == EI_OSABI and error.origin.path == PATH


@pytest.mark.parametrize("abiversion", [5, 9, 255])
def test_an_unknown_hsa_abi_version_is_refused_at_byte_8(abiversion):
    # EI_ABIVERSION 0-4 are code-object v2-v6 (AMDGPUUsage.rst); 5 and up are not defined.
    error = _refusal(_with_byte(GFX942, EI_ABIVERSION, abiversion))
    assert error.offset == EI_ABIVERSION and error.origin.path == PATH
    assert f"unsupported HSA ABI version {abiversion}" in error.message
    assert str(error).startswith(f"{PATH}: offset {EI_ABIVERSION:#x}: ")


def test_a_foreign_osabi_without_an_amd_isa_note_is_refused_at_byte_7():
    error = _refusal(_with_byte(GFX942, EI_OSABI, 3))  # ELFOSABI_GNU, and no "AMD" ISA note
    assert error.offset == EI_OSABI and error.origin is not None and error.origin.path == PATH
    assert str(error) == f"{PATH}: offset {EI_OSABI:#x}: EI_OSABI 3 is not AMDGPU HSA (64)"


def test_metadata_that_is_not_a_map_is_refused_at_the_start_of_the_note_descriptor():
    for value in ([1, 2], "text", 7):
        data = with_note_desc(GFX942, "AMDGPU", 32, mp_encode(value))
        error = _refusal(data)
        assert error.offset == _desc_at(data, "AMDGPU", 32)
        assert error.origin.path == PATH
        assert f"holds a {type(value).__name__}, not a map" in error.message


def _isa_desc(vendor: bytes, arch: bytes, version=(9, 0, 6), sizes=None) -> bytes:
    vendor_size, arch_size = sizes or (len(vendor), len(arch))
    return struct.pack("<HHIII", vendor_size, arch_size, *version) + vendor + arch


def test_isa_names_past_the_note_are_refused_after_the_16_byte_header():
    data = with_note_desc(LEGACY_V2, "AMD", NT_AMD_HSA_ISA_VERSION, _isa_desc(b"AMD\0", b"AMDGPU\0", sizes=(4, 8)))
    error = _refusal(data)
    names_at = _desc_at(data, "AMD", NT_AMD_HSA_ISA_VERSION) + ISA_HEADER
    assert error.origin.path == PATH and "ISA note names run past the note" in error.message
    assert f"offset {names_at:#x} in NT_AMD_HSA_ISA_VERSION note" in str(error)


def test_isa_note_names_are_the_bytes_after_the_header_without_their_nuls():
    # llvm-readelf-22 --notes on the v2 fixture: "[Vendor: AMD, Architecture: AMDGPU, Major: 9,
    # Minor: 0, Stepping: 6]"; the names are NUL-terminated, sizes counting the NUL.
    note = Note("AMD", NT_AMD_HSA_ISA_VERSION, note_desc(LEGACY_V2, "AMD", NT_AMD_HSA_ISA_VERSION), 0)
    assert decode_v2_isa(note, Origin(PATH)) == ((9, 0, 6), "AMD", "AMDGPU")
    # Names that end in letters a stray strip set might eat, and sizes that leave slack after them.
    desc = _isa_desc(b"XAMDX\0", b"XgfxX\0\0\0", version=(10, 3, 0))
    assert decode_v2_isa(Note("AMD", 3, desc, 0), Origin(PATH)) == ((10, 3, 0), "XAMDX", "XgfxX")
    desc = _isa_desc(b"AMD\0", b"AMDGPU\0") + b"trailing"
    assert decode_v2_isa(Note("AMD", 3, desc, 0), Origin(PATH))[1:] == ("AMD", "AMDGPU")


def test_an_unknown_v2_isa_version_names_vendor_and_architecture():
    data = with_note_desc(LEGACY_V2, "AMD", NT_AMD_HSA_ISA_VERSION, _isa_desc(b"AMD\0", b"AMDGPU\0", (9, 0, 99)))
    co = _parse(data)
    (finding,) = [f for f in co.findings if f.code == "unknown-processor"]
    assert finding.severity == "error"
    assert finding.message == (
        "ISA version (9, 0, 99) (AMD:AMDGPU) is not a processor amdocc knows "
        "(tables/targets.toml holds those LLVM and ROCm define)"
    )
    assert co.processor == "unknown-isa-9.0.99"


def test_a_v2_object_without_a_metadata_note_says_which_note_is_missing():
    elf = ElfView(LEGACY_V2)
    note = metadata_note(elf, "AMD", NT_AMD_HSA_METADATA)[2]
    data = bytearray(LEGACY_V2)
    struct.pack_into("<I", data, note.at + 8, 0x7777)  # the note type word: no longer metadata
    co = _parse(bytes(data))
    assert [(f.code, f.severity, f.message) for f in co.findings] == [
        ("no-metadata", "warning", "no NT_AMD_HSA_METADATA note")
    ]
    # Its one kernel symbol (llvm-readelf-22 -s: legacy_scale, AMDGPU_HSA_KERNEL) has no entry now.
    (kernel,) = co.kernels
    assert kernel.name == "legacy_scale"
    assert [(f.code, f.severity) for f in kernel.findings if f.code == "metadata-missing"] == [
        ("metadata-missing", "warning")
    ]
    assert "v2 kernel symbol without a metadata entry" in kernel.findings[0].message


# -- v3+ kernel entries -----------------------------------------------------------------------


def _metadata(data=GFX942):
    return msgpack.unpackb(note_desc(data, "AMDGPU", 32), raw=False)


def _with_entry(change, data=GFX942) -> bytes:
    tree = _metadata(data)
    change(tree["amdhsa.kernels"][0])
    return with_note_desc(data, "AMDGPU", 32, mp_encode(tree))


def test_a_kernel_entry_without_symbol_or_name_is_named_from_the_other():
    # gfx942_cov4's first entry: .name _Z9saxpy_ldsfPKfPfi, .symbol _Z9saxpy_ldsfPKfPfi.kd
    # (llvm-readelf-22 --notes), and the symbol table holds that .kd symbol.
    co = _parse(_with_entry(lambda md: md.pop(".symbol")))
    kernel = co.kernels[0]
    assert (kernel.name, kernel.symbol) == ("_Z9saxpy_ldsfPKfPfi", "_Z9saxpy_ldsfPKfPfi.kd")
    assert ("metadata-missing-key", "error", "kernel entry has no .symbol string") in _triples(kernel)
    assert kernel.descriptor is not None  # found under the derived symbol

    co = _parse(_with_entry(lambda md: md.pop(".name")))
    kernel = co.kernels[0]
    assert (kernel.name, kernel.symbol) == ("_Z9saxpy_ldsfPKfPfi", "_Z9saxpy_ldsfPKfPfi.kd")
    assert ("metadata-missing-key", "warning", "kernel entry has no .name string") in _triples(kernel)

    # A .symbol without the .kd suffix is the name as it stands (and no such descriptor exists).
    co = _parse(_with_entry(lambda md: (md.pop(".name"), md.update({".symbol": "plain_symbol"}))))
    kernel = co.kernels[0]
    assert (kernel.name, kernel.symbol) == ("plain_symbol", "plain_symbol")
    assert ("descriptor-missing", "error", "descriptor symbol plain_symbol is not in the symbol table") in _triples(
        kernel
    )

    # Neither: the entry's position names it.
    co = _parse(_with_entry(lambda md: (md.pop(".name"), md.pop(".symbol"))))
    assert (co.kernels[0].name, co.kernels[0].symbol) == ("<kernel 0>", "<kernel 0>")


def _triples(kernel):
    return [(f.code, f.severity, f.message) for f in kernel.findings]


def test_unknown_mach_and_unknown_flag_bits_are_two_findings_of_their_own_kind():
    # e_flags (ELF header offset 0x30): EF_AMDGPU_MACH 0xff names no processor; bit 12 is
    # defined by no code-object version (AMDGPUUsage.rst "AMDGPU ELF Header e_flags").
    data = bytearray(GFX942)
    flags = struct.unpack_from("<I", data, 0x30)[0]
    struct.pack_into("<I", data, 0x30, (flags & ~0xFF) | 0xFF | 0x1000)
    co = _parse(bytes(data))
    found = [(f.code, f.severity, f.message) for f in co.findings]
    assert (
        "unknown-processor",
        "error",
        "EF_AMDGPU_MACH 0xff is not a processor amdocc knows (tables/targets.toml holds those LLVM and ROCm "
        "define); it is read as no other processor",
    ) in found
    assert ("e-flags", "warning", "unknown e_flags bits 0x1000 for code-object v4") in found


# -- v2 YAML metadata: the offset of the offending byte or line inside the note ----------------


def _v2_metadata_error(desc: bytes) -> tuple[FormatError, int]:
    data = with_note_desc(LEGACY_V2, "AMD", NT_AMD_HSA_METADATA, desc)
    return _refusal(data), _desc_at(data, "AMD", NT_AMD_HSA_METADATA)


def test_v2_metadata_that_is_not_utf8_is_refused_at_the_first_bad_byte():
    desc = b"Version: [ 1, 0 ]\nBad: \xff\n\0"
    error, desc_at = _v2_metadata_error(desc)
    assert "v2 metadata is not UTF-8 text" in error.message
    bad = desc_at + desc.index(b"\xff")
    assert f"offset {bad:#x} in NT_AMD_HSA_METADATA note" in str(error)


def test_a_v2_yaml_error_is_refused_at_the_first_byte_of_its_line():
    # Two-byte and three-byte UTF-8 characters before the bad line: the offset counts bytes.
    desc = "A: 'é€'\nB: 1\n   C: 2\n".encode()
    error, desc_at = _v2_metadata_error(desc)
    assert error.message == "v2 metadata YAML: line 3: unexpected indentation"
    assert f"offset {desc_at + desc.index(b'   C'):#x} in NT_AMD_HSA_METADATA note" in str(error)


def test_v2_metadata_that_is_not_a_map_is_refused_at_the_start_of_the_note():
    error, desc_at = _v2_metadata_error(b"- 1\n- 2\n")
    assert error.message == "v2 metadata is not a YAML map"
    assert f"offset {desc_at:#x} in NT_AMD_HSA_METADATA note" in str(error)


def test_v2_metadata_loses_only_its_trailing_nuls():
    # LLVM ends the YAML with a NUL; text that ends in other bytes keeps them.
    desc = b"Version: [ 1, 0 ]\nName: boX\0\0\0"
    note = Note("AMD", NT_AMD_HSA_METADATA, desc, 0)
    assert decode_v2_metadata(note, Origin(PATH)) == {"Version": [1, 0], "Name": "boX"}
