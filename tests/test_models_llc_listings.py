"""The llvm model against the compiler's own listing, for every fixture that keeps one.

Each fixture with a ``.kernel-info.txt`` keeps the ``; Kernel info`` comments the compiler that
built it printed (llc-22, or Triton 3.9's LLVM 24.0.0git for the processors LLVM 22 does not know):
``; Occupancy:`` is LLVM's waves per SIMD and ``; NumSGPRsForWavesPerEU:`` the SGPR count it
computed that number from (the kernel's SGPRs padded by getMinNumSGPRs, AMDGPUAsmPrinter). The
model, given no version, must find the LLVM in the code object's ``.comment`` and print the same
numbers in its record: ``details["llvm_occupancy"]``, and ``details["sgprs_padded_to"]`` exactly
when the padding raised the count.

A kernel whose source (the fixture's ``.ll``) fixes its flat workgroup range to "B,B" is asked at
``block_size=B``; every other kernel has LLVM's default range (1, .max_flat_workgroup_size).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import amdocc
from amdocc.models import from_kernel
from conftest import FIXTURES


def _listing(path: Path) -> dict[str, dict[str, int]]:
    """{kernel: {key: value}} from the compiler's '; Key: N' lines, one block per '# kernel NAME'."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in path.read_text().splitlines():
        if line.startswith("# kernel "):
            current = out.setdefault(line.split()[-1], {})
        m = re.match(r"; (\w+): (\d+)$", line)
        if current is not None and m:
            current[m.group(1)] = int(m.group(2))
    return out


def _fixed_ranges(source: Path) -> dict[str, int]:
    """Kernels whose IR sets "amdgpu-flat-work-group-size"="B,B", with B."""
    if not source.exists():
        return {}
    text = source.read_text()
    groups = {
        g: int(lo)
        for g, lo, hi in re.findall(r'attributes #(\d+) = \{[^}]*"amdgpu-flat-work-group-size"="(\d+),(\d+)"', text)
        if lo == hi
    }
    kernels = re.findall(r"define amdgpu_kernel void @(\w+)\([^)]*\) #(\d+)", text)
    return {name: groups[g] for name, g in kernels if g in groups}


def _cases():
    for info in sorted(FIXTURES.rglob("*.kernel-info.txt")):
        binary = Path(str(info).removesuffix(".kernel-info.txt"))
        if not binary.exists():  # newer/: the listing is named without the .hsaco suffix
            binary = binary.with_name(binary.name + ".hsaco")
        if binary.exists():  # (containers/ and sample/ keep listings of members, not files)
            yield pytest.param(binary, info, id=str(binary.relative_to(FIXTURES)))


CASES = list(_cases())


def test_the_listings_cover_every_generation():
    # A guard against an empty comparison: the fixtures hold listings for gfx6-9 (SGPR-limited,
    # padded), gfx10-12 and the processors only Triton's LLVM knows.
    names = {p.values[0].name for p in CASES}
    assert len(CASES) >= 20
    needed = {"agpr_gfx908_cov4.hsaco", "amdgpu_gfx906.hsaco", "amdgpu_gfx1310.hsaco", "gfx1030_w32_wgp_cov4.hsaco"}
    assert needed <= names


@pytest.mark.parametrize("binary,info", CASES)
def test_llvm_model_prints_the_compilers_occupancy_and_padded_sgprs(binary, info):
    listing = _listing(info)
    fixed = _fixed_ranges(binary.with_suffix(".ll"))
    compared = 0
    loaded = amdocc.load(binary)
    for co in loaded if isinstance(loaded, list) else [loaded]:
        for kernel in co.kernels:
            want = listing.get(kernel.name)
            if not want or "Occupancy" not in want:
                continue
            # A relocatable (the OpenCL .o) is local counts, evaluated only as a what-if; its
            # kernels call nothing, so the listing's occupancy is theirs.
            what_if = not co.launchable
            occ = amdocc.occupancy(kernel, model="llvm", block_size=fixed.get(kernel.name), what_if=what_if)
            assert occ.what_if is what_if
            assert occ.details["llvm_occupancy"] == want["Occupancy"], kernel.name
            u = from_kernel(kernel)
            padded = want["NumSGPRsForWavesPerEU"]
            if u.target.sgpr_waves:  # gfx6-9: SGPRs bound occupancy, and LLVM pads them
                assert occ.details.get("sgprs_padded_to", u.sgprs) == padded, kernel.name
                assert ("sgprs_padded_to" in occ.details) == (padded > u.sgprs), kernel.name
            else:  # gfx10+: SGPRs never bound occupancy; LLVM prints at least 1 and pads no further
                assert "sgprs_padded_to" not in occ.details and padded in (u.sgprs, 1), kernel.name
            compared += 1
    assert compared > 0
