"""HIP's occupancy arithmetic worked by hand from docs/hip-occupancy.md §2 (newest runtime:
the 16-SGPR trap-handler reserve, WGP mode parsed), for the processors of its worked examples (§5).

An oracle for tests, written from the research note's steps, independent of amdocc's models.
"""

from __future__ import annotations

# VGPRs per SIMD and granule (wave32 units on gfx10+), SGPRs per SIMD (None: never limits),
# SIMDs per CU, LDS bytes, HIP's MaxWavesPerSimd: gfx942 and gfx1100 as docs/hip-occupancy.md §1
# gives them; gfx1201 from the research note's device table (gfx1200/gfx1201: 1536 / 24 wave32,
# UINT32_MAX SGPRs, 2 SIMDs per CU, 65536 B, 16 waves; every source agrees on 1536/24 for gfx1201, its §"comgr values").
DEVICES = {
    "gfx942": (512, 8, 800, 4, 65536, 8),
    "gfx1100": (1536, 24, None, 2, 65536, 16),
    "gfx1201": (1536, 24, None, 2, 65536, 16),
}


def align_up_bitmask(value: int, alignment: int) -> int:
    """amd::alignUp: a bit mask, exact only for powers of two (docs/hip-occupancy.md §4)."""
    return (value + alignment - 1) & ~(alignment - 1)


def hip_blocks(
    processor: str, vgprs: int, block: int, sgprs: int = 0, lds: int = 0, wave: int = 64, wgp: bool = False
) -> int | None:
    """Blocks per CU (per WGP in WGP mode) by docs/hip-occupancy.md §2 steps 2-8; None where HIP
    answers hipErrorUnknown."""
    vmax, gran, sgpr_file, simds, lds_bytes, max_waves = DEVICES[processor]
    if wave == 64 and processor != "gfx942":  # wave64 on gfx10+: both halved (step 3)
        vmax, gran = vmax >> 1, gran >> 1
    vgpr_waves = vmax // align_up_bitmask(vgprs, gran) if vgprs else max_waves
    if vgpr_waves == 0:
        return None
    waves = vgpr_waves
    if sgprs and sgpr_file:
        waves = min(waves, sgpr_file // (align_up_bitmask(sgprs, 16) + 16))
    alu_threads = simds * (2 if wgp else 1) * min(max_waves, waves) * wave
    by_lds = lds_bytes // lds if lds else 2**31 - 1
    return min(alu_threads // align_up_bitmask(block, wave), by_lds)
