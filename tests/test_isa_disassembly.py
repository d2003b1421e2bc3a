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
    # Decoding remembers each instruction by the bytes LLVM reads (amdocc/isa/decode.py). The same
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


def _mc(args: list[str], text: str) -> str:
    import subprocess

    cmd = ["llvm-mc-22", "-triple=amdgcn-amd-amdhsa", *args]
    return subprocess.run(cmd, input=text, check=True, capture_output=True, text=True).stdout


def _encoding(processor: str, assembly: str) -> bytes:
    """The bytes llvm-mc-22 encodes ``assembly`` (one instruction per line) to."""
    import re

    out = _mc([f"-mcpu={processor}", "-show-encoding"], assembly)
    found = re.findall(r"encoding: \[([^\]]*)\]", out)
    return b"".join(bytes(int(b, 16) for b in f.split(",")) for f in found)


def test_an_instruction_is_remembered_by_every_byte_llvm_reads_of_it():
    # gfx950's MFMA with scales is one 16-byte VOP3PX instruction whose first 8 bytes alone
    # decode as v_mfma_ld_scale_b32: LLVM reads 16 bytes before it knows which it is
    # (tables/isa_decoding.toml [read_at_most]). Each must decode as llvm-mc-22 decodes it after
    # the other has been remembered: the 8 bytes alone before the whole instruction, and after.
    _library()
    from amdocc import caches

    scale = _encoding("gfx950", "v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25\n")
    nops = _encoding("gfx950", "s_nop 0\ns_nop 1\n")
    assert len(scale) == 16 and len(nops) == 8
    code = scale[:8] + nops + scale + scale[:8] + nops
    theirs = [
        line.strip()
        for line in _mc(["-mcpu=gfx950", "--disassemble"], ", ".join(f"0x{b:02x}" for b in code)).splitlines()
        if line.strip() and not line.lstrip().startswith(".")
    ]
    caches.clear("amdocc.isa.decode._DECODED")
    got = disassemble(code, processor="gfx950", address=0x1000)
    assert [i.text for i in got] == theirs
    assert [i.size for i in got] == [8, 4, 4, 16, 8, 4, 4] and all(i.decoded for i in got)


def test_a_table_that_says_llvm_reads_fewer_bytes_than_it_decodes_is_an_error(built, monkeypatch):
    # An instruction longer than the bytes the table says LLVM reads shows the table is wrong
    # for this library: one error naming the table, not texts remembered by too few bytes.
    from amdocc import caches
    from amdocc.errors import TableError
    from amdocc.isa import decode

    path, arch, _ = built["gfx942"]
    (co,) = amdocc.load(path)
    code = kernel_code(co.kernels[0], co.origin)
    assert any(i.size == 8 for i in disassemble(code.code, processor=arch, features=code.features))
    caches.clear("amdocc.isa.decode._DECODED")
    monkeypatch.setattr(decode, "read_at_most", lambda lib, processor: 4)
    with pytest.raises(TableError, match=r"isa_decoding.toml \[read_at_most\] .* at most 4 bytes for gfx942"):
        disassemble(code.code, processor=arch, features=code.features)


def test_a_library_of_another_llvm_release_is_remembered_by_whole_windows(monkeypatch):
    # What LLVM reads was read from the source of the releases llvm_majors names; for any other
    # release the whole window is the key, which is exact whatever that release reads.
    from dataclasses import replace

    from amdocc.isa import decode
    from amdocc.isa.libllvm import WINDOW

    lib = _library()
    table = decode._read_at_most_table()
    (first, last), per_processor = table
    assert per_processor["gfx942"] < WINDOW
    for version in (f"{first - 1}.0.0", f"{last + 1}.0.0git", None):
        assert decode.read_at_most(replace(lib, version=version), "gfx942") == WINDOW
    assert decode.read_at_most(replace(lib, version=f"{last}.1.0"), "gfx1100") == WINDOW


def test_an_instruction_met_again_before_other_bytes_is_not_asked_of_llvm_again(monkeypatch):
    # gfx942's LLVM reads at most 8 bytes of an instruction (tables/isa_decoding.toml), so an
    # 8-byte VOP3 met again is answered from memory whatever follows it: four instructions,
    # three distinct first-8-byte runs, three calls into LLVM (whole windows would need four).
    from amdocc import caches
    from amdocc.isa.libllvm import Library

    _library()
    vop3, nop0, nop1 = (_encoding("gfx942", f"{t}\n") for t in ("v_add_f32_e64 v0, v1, v2", "s_nop 0", "s_nop 1"))
    assert (len(vop3), len(nop0), len(nop1)) == (8, 4, 4)
    asked: list[bytes] = []
    real = Library.window_decoder

    def counting(self, processor, features):
        decode = real(self, processor, features)

        def ask(window, address):
            asked.append(window)
            return decode(window, address)

        return ask

    monkeypatch.setattr(Library, "window_decoder", counting)
    caches.clear("amdocc.isa.decode._DECODED")
    got = disassemble(vop3 + nop0 + vop3 + nop1, processor="gfx942")
    assert [i.text for i in got] == ["v_add_f32_e64 v0, v1, v2", "s_nop 0", "v_add_f32_e64 v0, v1, v2", "s_nop 1"]
    assert len(asked) == 3
