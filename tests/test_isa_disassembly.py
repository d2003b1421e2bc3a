"""amdocc.isa's disassembly against llvm-objdump-22: the same text at every address, for HIP
kernels clang-22 builds for every processor family the issue names (wave32 and wave64 on gfx1100).

The decoding settings come from the code object (processor, xnack/sramecc) and the kernel
descriptor (wave size); objdump is told them on its command line, as a user would have to.
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc.isa import control_flow, disassemble, kernel_code
from conftest import skip_unless_required
from isa_oracle import BUILDS, build, objdump

pytestmark = pytest.mark.llvm22


def _library():
    from amdocc.isa import LlvmUnavailable, library

    try:
        return library()
    except LlvmUnavailable as exc:
        skip_unless_required(f"no libLLVM with the AMDGPU disassembler: {exc}")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    _library()
    out = tmp_path_factory.mktemp("isa")
    return {name: (build(out, name, arch, flags), arch, "-w64" in name) for name, arch, flags in BUILDS}


AGREED: dict[str, int] = {}


@pytest.mark.parametrize("name", [b[0] for b in BUILDS])
def test_text_equals_objdump_at_every_address(built, name):
    path, arch, wave64 = built[name]
    listing = objdump(path, arch, wave64)
    (co,) = amdocc.load(path)
    assert co.kernels
    compared = 0
    for kernel in co.kernels:
        code = kernel_code(kernel, co.origin)
        assert code.processor == arch and code.inferred is None and code.notes == ()
        assert code.wavefront_size == (64 if wave64 or arch.startswith("gfx9") else 32)
        instructions = disassemble(kernel, origin=co.origin)
        assert sum(i.size for i in instructions) == len(code.code)
        for ins in instructions:
            assert ins.decoded, (name, kernel.name, hex(ins.address))
            assert listing.text.get(ins.address) == ins.text, (name, kernel.name, hex(ins.address))
        compared += len(instructions)
    AGREED[name] = compared
    print(f"{name}: {len(co.kernels)} kernels, {compared} instructions identical to llvm-objdump-22")
    assert compared > 100


def test_wave64_code_on_gfx10_plus_decodes_as_wave64(built):
    # Without +wavefrontsize64 objdump prints gfx1100's wave64 code as wave32 (vcc_lo for vcc):
    # the descriptor's ENABLE_WAVEFRONT_SIZE32 is what tells them apart.
    path, arch, _ = built["gfx1100-w64"]
    (co,) = amdocc.load(path)
    as_wave32 = objdump(path, arch, wave64=False).text
    ours = [i for k in co.kernels for i in disassemble(k, origin=co.origin)]
    assert all("+wavefrontsize64" in kernel_code(k, co.origin).features for k in co.kernels)
    differing = [i for i in ours if as_wave32.get(i.address) != i.text]
    assert differing and any("vcc" in i.text for i in differing)


def test_raw_bytes_decode_with_a_named_processor(built):
    path = built["gfx942"][0]
    (co,) = amdocc.load(path)
    code = kernel_code(co.kernels[0], co.origin)
    raw = disassemble(code.code, processor="gfx942", address=code.address)
    assert raw == disassemble(co.kernels[0], origin=co.origin)
    from amdocc.errors import UsageError

    with pytest.raises(UsageError, match="processor="):
        disassemble(code.code)


def test_an_undecodable_word_is_shown_as_objdump_shows_it_and_flagged(built, tmp_path):
    path, arch, _ = built["gfx942"]
    (co,) = amdocc.load(path)
    kernel = co.kernels[0]
    code = kernel_code(kernel, co.origin)
    second = disassemble(kernel, origin=co.origin)[1]
    data = bytearray(path.read_bytes())
    at = code.file_offset + (second.address - code.address)
    data[at : at + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    broken = tmp_path / "broken.co"
    broken.write_bytes(bytes(data))
    listing = objdump(broken, arch)
    (co2,) = amdocc.load(broken)
    instructions = disassemble(co2.kernels[0], origin=co2.origin)
    bad = [i for i in instructions if not i.decoded]
    assert [(i.address, i.size, i.text) for i in bad] == [(second.address, 4, listing.text[second.address])]
    assert listing.text[second.address] == ".long 0xffffffff"
    for ins in instructions:
        assert listing.text[ins.address] == ins.text
    flow = control_flow(instructions)
    assert flow.unknown is not None and f"{second.address:#x}" in flow.unknown


def test_disassembler_is_reported_with_its_version():
    lib = _library()
    described = lib.description
    assert described["library"] and described["version"] and described["version"][0].isdigit()


def test_remembered_windows_give_objdumps_text_elsewhere_and_after_the_cache_is_emptied(built, monkeypatch):
    # Decoding remembers each 32-byte window's instruction (amdocc/isa/decode.py). The same
    # bytes at another address, and decoding with a cache so small it is emptied over and over,
    # must still give llvm-objdump-22's text for the bytes at every address.
    from amdocc import caches
    from amdocc.isa import decode

    path, arch, wave64 = built["gfx942"]
    listing = objdump(path, arch, wave64)
    (co,) = amdocc.load(path)
    shift = 0x100000
    for bound in (decode._DECODED_BOUND, 8):
        monkeypatch.setattr(decode, "_DECODED_BOUND", bound)
        caches.clear("amdocc.isa.decode._DECODED")
        for kernel in co.kernels:
            code = kernel_code(kernel, co.origin)
            for start in (code.address, code.address + shift, code.address):
                got = disassemble(code.code, processor=arch, features=code.features, address=start)
                assert sum(i.size for i in got) == len(code.code)
                wrong = [hex(i.address) for i in got if listing.text.get(i.address - start + code.address) != i.text]
                assert wrong == [], (bound, kernel.name, start, wrong[:5])
        assert sum(map(len, decode._DECODED.values())) <= bound
