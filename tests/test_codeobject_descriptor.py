"""A gfx10+ descriptor that sets GRANULATED_WAVEFRONT_SGPR_COUNT (rsrc1 bits 9:6) is a finding.

tensorflow-rocm 2.14 ships about 25,000 gfx1030/gfx1100 kernels whose descriptors set those
bits, which LLVM 22's disassembler refuses ("reserved bits in range (9:6) set, must be zero on
gfx10+"). The oracle is llvm-objdump-22 itself: the bits are patched into real fixtures (found
with pyelftools, not amdocc), and amdocc must report the finding exactly where objdump refuses.
"""

from __future__ import annotations

import struct
import subprocess

import pytest
from elftools.elf.elffile import ELFFile

import amdocc
from conftest import FIXTURES

pytestmark = pytest.mark.llvm22
RSRC1_AT = 48  # byte offset of compute_pgm_rsrc1 in the 64-byte descriptor


def _descriptor_offsets(path) -> dict[str, int]:
    """File offset of every .kd symbol's descriptor, read with pyelftools."""
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        out = {}
        for sym in elf.get_section_by_name(".symtab").iter_symbols():
            if sym.name.endswith(".kd"):
                sec = elf.get_section(sym["st_shndx"])
                out[sym.name] = sym["st_value"] - sec["sh_addr"] + sec["sh_offset"]
        return out


def _with_sgpr_granule(path, value: int, tmp_path):
    raw = bytearray(path.read_bytes())
    symbols = _descriptor_offsets(path)
    for at in symbols.values():
        (rsrc1,) = struct.unpack_from("<I", raw, at + RSRC1_AT)
        struct.pack_into("<I", raw, at + RSRC1_AT, (rsrc1 & ~(0xF << 6)) | (value << 6))
    out = tmp_path / f"{path.stem}_{value}.hsaco"
    out.write_bytes(bytes(raw))
    return out, sorted(symbols)


def _objdump_refusals(path, symbols) -> set[str]:
    text = subprocess.run(
        ["llvm-objdump-22", "-D", "--disassemble-symbols=" + ",".join(symbols), str(path)],
        capture_output=True,
        text=True,
    ).stdout
    return {
        line.split("error decoding ")[1].split(":")[0]
        for line in text.splitlines()
        if "error decoding" in line and "reserved bits in range (9:6)" in line
    }


@pytest.mark.parametrize(
    "fixture",
    [
        "gfx1030_w32_wgp_cov4.hsaco",
        "gfx1100_w64_cu_cov4.hsaco",
        "gfx1201_w32_cu_cov4.hsaco",
        "gfx942_cov4.hsaco",
        "gfx906_cov6.hsaco",
    ],
)
@pytest.mark.parametrize("value", [0, 3, 15])
def test_finding_exactly_where_llvm_objdump_refuses(fixture, value, tmp_path):
    patched, symbols = _with_sgpr_granule(FIXTURES / "elf" / fixture, value, tmp_path)
    refused = _objdump_refusals(patched, symbols)
    (co,) = amdocc.load(patched)
    flagged = {
        k.symbol
        for k in co.kernels
        if any(f.code == "descriptor-bits" and "GRANULATED_WAVEFRONT_SGPR_COUNT" in f.message for f in k.findings)
    }
    assert flagged == refused
    # The oracle does refuse on gfx10+ for a non-zero value, and only there.
    assert bool(refused) == (value != 0 and co.target.descriptor_layout in ("gfx10", "gfx11", "gfx12"))
    for k in co.kernels:
        if k.symbol in flagged:
            (f,) = [f for f in k.findings if "GRANULATED_WAVEFRONT_SGPR_COUNT" in f.message]
            assert f.severity == "warning" and f"hold {value}" in f.message
