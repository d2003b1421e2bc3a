"""The hip model per ROCm release, against cases worked by hand from each release's own source.

Every case names the tag (or commit) and the files its numbers come from; the arithmetic in the
comment is HIP's (ihipOccupancyMaxActiveBlocksPerMultiprocessor in hipamd/src/hip_platform.cpp,
the VGPR switch in rocclr/device/rocm/rocdevice.cpp, the ISA table in rocclr/device/device.cpp,
the .workgroup_processor_mode parse in rocclr/device/devkernel.cpp, the wave size in
rocclr/device/rocm/rockernel.cpp). Tags: ROCm/clr rocm-5.6.0 .. rocm-6.2.0; smajidzahedi/clr
rocm-6.3.0 (fa1d09cbd) and a187df25c (release/rocm-rel-6.4 as merged for 6.4.1); for ROCm 7.x,
rocm-systems develop commits (projects/clr/..., as in NautRobot/Eze-P): the ones TheRock's tags pin
(therock-7.9.0 55feeef, therock-7.11 318d138, therock-7.13 79e85e1), and for the releases whose own
source was not readable the develop commits they are inferred from (84e9845 for 7.0, 55feeef for
7.1/7.2, 598ca70, 93bc019, cd52904 for 7.10, 7.12, 7.14); rocm-systems projects/clr b668f8edd0a4
and PR #10618 for develop. Before CLR, ROCm 5.2 from ROCm/hipamd rocm-5.2.x (src/hip_platform.cpp:
the occupancy function with its own VGPR if-chain) and ROCm/ROCclr rocm-5.2.x (device/device.cpp,
device/rocm/rocdevice.cpp, device/rocm/rocsettings.cpp, device/rocm/rockernel.cpp). ROCm 10.0 and
10.1, whose release branches were not readable, from the develop commits they were cut from and
the cherry-picks ROCm/TheRock's release/therock-10.0 records. Then one test per defect the profiles once had.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import amdocc
from amdocc import observed
from amdocc.cli.main import main
from amdocc.models import compute, manual
from amdocc.models.hip import decode_runtime_version, profiles
from amdocc.targets import get_target


def usage(processor, wgp_metadata=None, **numbers):
    u = manual(get_target(processor), **numbers)
    return u.with_(wgp_metadata=wgp_metadata) if wgp_metadata is not None else u


def answer(occ):
    return occ.error or occ.blocks_per_cu


# (profile, source, processor, usage numbers, block, expected)
CASES = [
    # rocm-5.2: hipamd rocm-5.2.3 hip_platform.cpp (the VGPR file is the occupancy function's own
    # if-chain: 9.0.10 512/8, other major <= 9 256/4, major >= 10 1024/8; the VGPR division guarded
    # by `usedSGPRs_ > 0`; SGPR cost alignUp(s, 16) of 800 on gfx8/9, none on gfx10+;
    # simdPerCU = device.info().simdPerCU_); ROCclr rocm-5.2.3 rocdevice.cpp (simdPerCU_ = the
    # agent's SIMDs, doubled when settings().enableWgpMode_, which rocsettings.cpp sets from
    # GPU_ENABLE_WGP_MODE, default true, for gfx10+ only), rockernel.cpp (wavefrontSize_ = the
    # agent's), device.cpp (ROC column: gfx700 .. gfx1035, no gfx1036, gfx11 or gfx94x).
    (
        "rocm-5.2",
        "rocm-5.2.3 hip_platform.cpp: .sgpr_count 0 skips the VGPR division: 8 waves; gfx9 4 SIMDs "
        "(no WGP mode there): 4 * 8 * 64 = 2048 / 256",
        "gfx90a",
        dict(vgprs=128, sgprs=0),
        256,
        8,
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3 hip_platform.cpp 9.0.10 -> 512/8: 512 / 128 = 4; 800 / 16 = 50; 4 * 4 * 64 = 1024 / 256",
        "gfx90a",
        dict(vgprs=128, sgprs=16),
        256,
        4,
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3 hip_platform.cpp 9.0.8 -> 256/4: 256 / 128 = 2; 4 * 2 * 64 = 512 / 256",
        "gfx908",
        dict(vgprs=128, sgprs=16),
        256,
        2,
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3 hip_platform.cpp: .sgpr_count 16 runs the division: alignUp(0, 8) = 0, 512 / 0",
        "gfx90a",
        dict(vgprs=0, sgprs=16),
        64,
        "division-by-zero",
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3: gfx10+ 1024/8: 1024 / 64 = 16; a CU-mode kernel still gets 2 * 2 SIMDs (runtime WGP "
        "mode): 4 * 16 * 32 = 2048 / 256 (rocm-5.6, 1024/16 and 2 SIMDs: 4)",
        "gfx1030",
        dict(vgprs=64, sgprs=8, wgp=False),
        256,
        8,
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3 rockernel.cpp: a wave64 kernel runs as the agent's wave32, 1024/8 never halved: "
        "1024 / alignUp(100, 8) = 9; 4 * 9 * 32 = 1152 / 256",
        "gfx1030",
        dict(vgprs=100, sgprs=8, wave=64),
        256,
        4,
    ),
    (
        "rocm-5.2",
        "rocm-5.2.3: 1024 / 32 = 32, capped 16; 4 * 16 * 32 = 2048 / 64 = 32; LDS 65536 / 40000 = 1",
        "gfx1035",
        dict(vgprs=32, sgprs=8, lds=40000),
        64,
        1,
    ),
    (
        "rocm-5.2",
        "ROCclr rocm-5.2.3 device.cpp has no gfx11 row",
        "gfx1100",
        dict(vgprs=32),
        256,
        "unsupported-processor",
    ),
    (
        "rocm-5.2",
        "ROCclr rocm-5.2.3 device.cpp has no gfx940/941/942 row",
        "gfx942",
        dict(vgprs=32),
        256,
        "unsupported-processor",
    ),
    # rocm-5.6.0 hip_platform.cpp: the VGPR division runs only `if (usedSGPRs_ > 0)` (hipamd #58).
    (
        "rocm-5.6",
        "rocm-5.6.0 hip_platform.cpp: .sgpr_count 0 skips the VGPR division: VgprWaves = 8; "
        "4 SIMDs * 8 * 64 = 2048 / 256",
        "gfx90a",
        dict(vgprs=128, sgprs=0),
        256,
        8,
    ),
    (
        "rocm-5.6",
        "rocm-5.6.0 rocdevice.cpp 9.0.10 -> 512/8: 512 / 128 = 4; 800 / 16 = 50; 4 * 4 * 64 = 1024 / 256",
        "gfx90a",
        dict(vgprs=128, sgprs=16),
        256,
        4,
    ),
    (
        "rocm-5.6",
        "rocm-5.6.0 hip_platform.cpp: .sgpr_count 16 runs the division: alignUp(0, 8) = 0, 512 / 0",
        "gfx90a",
        dict(vgprs=0, sgprs=16),
        64,
        "division-by-zero",
    ),
    (
        "rocm-5.6",
        "rocm-5.6.0 device.cpp lists no gfx940/941/942",
        "gfx942",
        dict(vgprs=128, sgprs=40),
        256,
        "unsupported-processor",
    ),
    # rocm-5.7.0: the guard reads .vgpr_count (54f73e430); gfx94x run, only 9.4.0 at 512/8.
    (
        "rocm-5.7",
        "rocm-5.7.0 rocdevice.cpp 9.4.2 -> 256/4: 256 / 128 = 2; 800 / 48 = 16; 4 * 2 * 64 = 512 / 256",
        "gfx942",
        dict(vgprs=128, sgprs=40),
        256,
        2,
    ),
    (
        "rocm-5.7",
        "rocm-5.7.0 rocdevice.cpp 9.4.0 -> 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256",
        "gfx940",
        dict(vgprs=128, sgprs=40),
        256,
        4,
    ),
    (
        "rocm-5.7",
        "rocm-5.7.0 hip_platform.cpp: 256 / 300 = 0 unchecked; bestBlockSize = min(0, 64) = 0; 0 / 0",
        "gfx942",
        dict(vgprs=300, sgprs=40),
        64,
        "division-by-zero",
    ),
    (
        "rocm-5.7",
        "rocm-5.7.0 hip_platform.cpp: guard on .vgpr_count: 512 / 128 = 4 even with .sgpr_count 0",
        "gfx90a",
        dict(vgprs=128, sgprs=0),
        256,
        4,
    ),
    # rocm-6.0.0: device.cpp runs gfx1150/1151; rocdevice.cpp's gfx11 case sets only 11.0.x (memset 0).
    (
        "rocm-6.0",
        "rocm-6.0.0 rocdevice.cpp: 11.5.1 unset -> 0/0: alignUp(32, 0) = 0, 0 / 0",
        "gfx1151",
        dict(vgprs=32),
        256,
        "division-by-zero",
    ),
    (
        "rocm-6.0",
        "rocm-6.0.0 hip_platform.cpp: .vgpr_count 0 skips the division: 16 waves; CU mode 2 SIMDs; "
        "2 * 16 * 32 = 1024 / 256",
        "gfx1151",
        dict(vgprs=0, sgprs=8),
        256,
        4,
    ),
    (
        "rocm-6.0",
        "rocm-6.0.0 (docs/hip-occupancy.md §5 ex. 1, <= 6.0): 256 / 128 = 2; 512 threads / 256 = 2; "
        "LDS 65536 / 49152 = 1",
        "gfx942",
        dict(vgprs=128, sgprs=40, lds=49152),
        256,
        1,
    ),
    # rocm-6.1.0: every 9.4.x at 512/8 (b2102fe93); VgprWaves == 0 -> hipErrorUnknown.
    (
        "rocm-6.1",
        "rocm-6.1.0 rocdevice.cpp 9.4.x -> 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256",
        "gfx942",
        dict(vgprs=128, sgprs=40),
        256,
        4,
    ),
    (
        "rocm-6.1",
        "rocm-6.1.0 hip_platform.cpp: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
        "gfx942",
        dict(vgprs=520),
        64,
        "hipErrorUnknown",
    ),
    (
        "rocm-6.1",
        "rocm-6.1.0 rocdevice.cpp: 11.5.1 still 0/0, and the division comes before the check",
        "gfx1151",
        dict(vgprs=32),
        256,
        "division-by-zero",
    ),
    # rocm-6.2.0: 11.5.1 -> 1536/24, other 11.5.x -> 1024/16 (a0127c9ee); gfx12 runs at the default 256/4.
    (
        "rocm-6.2",
        "rocm-6.2.0: alignUp(100, 24) = 104 (bit mask); 1536 / 104 = 14; .workgroup_processor_mode 1 "
        'is "1", read as off: 2 SIMDs; agent wave 32: 2 * 14 * 32 = 896 / 256',
        "gfx1151",
        dict(vgprs=100, wgp=True),
        256,
        3,
    ),
    (
        "rocm-6.2",
        "rocm-6.2.0 rocdevice.cpp 11.5.0 -> 1024/16: 1024 / 112 = 9; 2 * 9 * 32 = 576 / 256",
        "gfx1150",
        dict(vgprs=100),
        256,
        2,
    ),
    (
        "rocm-6.2",
        "rocm-6.2.0 rocdevice.cpp: 12.x falls to the default 256/4: 256 / 128 = 2; 2 * 2 * 32 = 128 / 256 "
        "(tensorflow-upstream #2711: block_count 0 on gfx1200)",
        "gfx1201",
        dict(vgprs=128),
        256,
        0,
    ),
    # rocm-6.3.0: 12.0.x -> 1536/24 (a26dc29eb, 854be96c6 on the 6.3 branch); still no gfx950.
    (
        "rocm-6.3",
        "rocm-6.3.0 rocdevice.cpp 12.0.1 -> 1536/24: alignUp(128, 24) = 128; 1536 / 128 = 12; 2 * 12 * 32 = 768 / 256",
        "gfx1201",
        dict(vgprs=128),
        256,
        3,
    ),
    (
        "rocm-6.3",
        "rocm-6.3.0 device.cpp lists no gfx950",
        "gfx950",
        dict(vgprs=128, sgprs=40),
        256,
        "unsupported-processor",
    ),
    (
        "rocm-6.3",
        "rocm-6.3.0 hip_platform.cpp: 800 / alignUp(801, 16) = 0 SGPR waves; bestBlockSize 0; 0 / 0",
        "gfx942",
        dict(vgprs=32, sgprs=801),
        64,
        "division-by-zero",
    ),
    # a187df25c (rocm-6.4 branch): device.cpp adds gfx1152/1153; same switch, parse and wave size as 6.3.
    (
        "rocm-6.4",
        "a187df25c rocdevice.cpp 11.5.2 -> 1024/16: 1024 / 64 = 16; 2 * 16 * 32 = 1024 / 128",
        "gfx1152",
        dict(vgprs=64),
        128,
        8,
    ),
    (
        "rocm-6.4",
        'a187df25c devkernel.cpp: "1" is not "true": CU mode, 1536 / 104 = 14; 2 * 14 * 32 = 896 / 256',
        "gfx1100",
        dict(vgprs=100, wgp=True),
        256,
        3,
    ),
    (
        "rocm-6.4",
        "a187df25c rockernel.cpp: the agent's wave 32 replaces .wavefront_size 64: alignUp(60, 24) = 64; "
        "1536 / 64 = 24, capped 16; 2 * 16 * 32 = 1024 / 64",
        "gfx1100",
        dict(vgprs=60, wave=64, wgp=False),
        64,
        16,
    ),
    (
        "rocm-6.4",
        "a187df25c hip_platform.cpp: block 0 -> hipErrorInvalidValue",
        "gfx942",
        dict(vgprs=8),
        0,
        "hipErrorInvalidValue",
    ),
    # develop-2025 (rocm-systems b668f8edd0a4 and the 2025 refactor): comgr values, metadata wave, "1" is WGP.
    (
        "develop-2025",
        'b668f8edd0a4: "1" is WGP: 4 SIMDs; 1536 / 104 = 14; 4 * 14 * 32 = 1792 / 256',
        "gfx1100",
        dict(vgprs=100, wgp=True),
        256,
        7,
    ),
    (
        "develop-2025",
        "metadata wave 64: 768 / alignUp(60, 12) = 768 / 68 = 11; 2 * 11 * 64 = 1408 / 64",
        "gfx1100",
        dict(vgprs=60, wave=64, wgp=False),
        64,
        22,
    ),
    (
        "develop-2025",
        "512 / 32 = 16; 800 / alignUp(92, 16) = 8; 4 * 8 * 64 = 2048 / 64 (PR #10618's '32')",
        "gfx942",
        dict(vgprs=32, sgprs=92),
        64,
        32,
    ),
    (
        "develop-2025",
        "800 / alignUp(785, 16) = 800 / 800 = 1 wave; 4 * 1 * 64 = 256 / 64",
        "gfx90a",
        dict(vgprs=32, sgprs=785),
        64,
        4,
    ),
    (
        "develop-2025",
        "comgr gfx950 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256 = 4; LDS 163840 / 49152 = 3",
        "gfx950",
        dict(vgprs=128, sgprs=40, lds=49152),
        256,
        3,
    ),
    # develop (PR #10618): each wave pays alignUp(SGPRs, 16) + 16.
    (
        "develop",
        "PR #10618: 800 / (96 + 16) = 7; 4 * 7 * 64 = 1792 / 64 (the PR's '28')",
        "gfx942",
        dict(vgprs=32, sgprs=92),
        64,
        28,
    ),
    (
        "develop",
        "PR #10618: alignUp(785, 16) + 16 = 816 > 800: 0 waves, the grid divides by zero",
        "gfx90a",
        dict(vgprs=32, sgprs=785),
        64,
        "division-by-zero",
    ),
    (
        "develop",
        "PR #10618 / #11431: 800 / 112 = 7; 4 * 7 * 64 = 1792 / 1024 (the hip-tests '2 -> 1')",
        "gfx950",
        dict(vgprs=32, sgprs=92),
        1024,
        1,
    ),
    (
        "develop",
        "b668f8edd0a4: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
        "gfx942",
        dict(vgprs=520),
        64,
        "hipErrorUnknown",
    ),
    # rocm-7.0, inferred from rocm-systems develop 84e9845 (projects/clr/...): the hard-coded switch
    # in rocdevice.cpp (9.5 -> 512/8), "1" is WGP (devkernel.cpp, 0a45aa8), isa().simdPerCU(), and
    # rockernel.cpp postLoad overwriting .wavefront_size with the agent's.
    (
        "rocm-7.0",
        "84e9845 rocdevice.cpp 9.5 -> 512/8: 512 / 128 = 4; 800 / 48 = 16; 4 * 4 * 64 = 1024 / 256 = 4; "
        "LDS 163840 / 49152 = 3",
        "gfx950",
        dict(vgprs=128, sgprs=40, lds=49152),
        256,
        3,
    ),
    (
        "rocm-7.0",
        '84e9845 devkernel.cpp: "1" is WGP: 2 * 2 SIMDs; 11.0.0 -> 1536/24: alignUp(100, 24) = 104; '
        "1536 / 104 = 14; 4 * 14 * 32 = 1792 / 256",
        "gfx1100",
        dict(vgprs=100, wgp=True),
        256,
        7,
    ),
    (
        "rocm-7.0",
        "84e9845 rockernel.cpp: the agent's wave 32 replaces .wavefront_size 64, no halving: "
        "1536 / alignUp(60, 24) = 1536 / 64 = 24, capped 16; 2 * 16 * 32 = 1024 / 64",
        "gfx1100",
        dict(vgprs=60, wave=64, wgp=False),
        64,
        16,
    ),
    (
        "rocm-7.0",
        "84e9845 rocdevice.cpp 10.3 -> 1024/16: alignUp(72, 16) = 80; 1024 / 80 = 12; 2 * 12 * 32 = 768 / 64",
        "gfx1030",
        dict(vgprs=72, wgp=False),
        64,
        12,
    ),
    ("rocm-7.0", "84e9845 device.cpp lists no gfx940", "gfx940", dict(vgprs=32), 64, "unsupported-processor"),
    (
        "rocm-7.0",
        "84e9845 hip_platform.cpp: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
        "gfx942",
        dict(vgprs=520),
        64,
        "hipErrorUnknown",
    ),
    # rocm-7.1, inferred from develop 55feeef: comgr values (7fd322a), .wavefront_size kept (8f5eb71).
    (
        "rocm-7.1",
        "55feeef hip_platform.cpp: metadata wave 64 on gfx11 halves comgr's 1536/24 to 768/12: "
        "alignUp(60, 12) = 68; 768 / 68 = 11; 2 * 11 * 64 = 1408 / 64",
        "gfx1100",
        dict(vgprs=60, wave=64, wgp=False),
        64,
        22,
    ),
    (
        "rocm-7.1",
        "55feeef rocdevice.cpp: comgr gfx1030 1024/8: 1024 / 72 = 14; 2 * 14 * 32 = 896 / 64",
        "gfx1030",
        dict(vgprs=72, wgp=False),
        64,
        14,
    ),
    (
        "rocm-7.1",
        "55feeef hip_platform.cpp: 800 / alignUp(785, 16) = 1 wave, no trap reserve; 4 * 1 * 64 = 256 / 64",
        "gfx90a",
        dict(vgprs=32, sgprs=785),
        64,
        4,
    ),
    ("rocm-7.1", "55feeef device.cpp lists no gfx1250", "gfx1250", dict(vgprs=32), 64, "unsupported-processor"),
    # rocm-7.2, inferred from develop 55feeef / 598ca70 / 318d138 (the same code).
    (
        "rocm-7.2",
        '318d138: comgr gfx1151 1536/24, "1" is WGP: 1536 / 104 = 14; 4 * 14 * 32 = 1792 / 256',
        "gfx1151",
        dict(vgprs=100, wgp=True),
        256,
        7,
    ),
    (
        "rocm-7.2",
        "318d138: comgr gfx942 512/8: 512 / 128 = 4; 800 / 48 = 16; 4 * 4 * 64 = 1024 / 256",
        "gfx942",
        dict(vgprs=128, sgprs=40),
        256,
        4,
    ),
    (
        "rocm-7.2",
        "318d138 hip_platform.cpp: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
        "gfx942",
        dict(vgprs=520),
        64,
        "hipErrorUnknown",
    ),
    # rocm-7.9: TheRock therock-7.9.0 pins 55feeef, read exactly.
    (
        "rocm-7.9",
        "55feeef: comgr gfx1201 1536/24: alignUp(128, 24) = 128; 1536 / 128 = 12; 2 * 12 * 32 = 768 / 256",
        "gfx1201",
        dict(vgprs=128, wgp=False),
        256,
        3,
    ),
    (
        "rocm-7.9",
        '55feeef: wave 64 halves to 768/12: 768 / 68 = 11; "1" is WGP: 4 * 11 * 64 = 2816 / 256',
        "gfx1100",
        dict(vgprs=60, wave=64, wgp=True),
        256,
        11,
    ),
    # rocm-7.10: inferred from 598ca70, the last develop commit release/therock-7.10 pinned.
    (
        "rocm-7.10",
        "598ca70: comgr gfx1102 1024/16: 1024 / 64 = 16; 2 * 16 * 32 = 1024 / 128",
        "gfx1102",
        dict(vgprs=64, wgp=False),
        128,
        8,
    ),
    (
        "rocm-7.10",
        "598ca70: comgr gfx908 256/4: 256 / 128 = 2; 800 / alignUp(100, 16) = 7; 4 * 2 * 64 = 512 / 256",
        "gfx908",
        dict(vgprs=128, sgprs=100),
        256,
        2,
    ),
    # rocm-7.11: therock-7.11 pins 318d138, read exactly.
    (
        "rocm-7.11",
        "318d138: 512 / 96 = 5; 800 / alignUp(200, 16) = 800 / 208 = 3; 4 * 3 * 64 = 768 / 128 = 6; "
        "LDS 65536 / 20000 = 3",
        "gfx90a",
        dict(vgprs=96, sgprs=200, lds=20000),
        128,
        3,
    ),
    (
        "rocm-7.11",
        '318d138: comgr gfx1036 1024/8: 1024 / 24 = 42, capped 16; "1" is WGP: 4 * 16 * 32 = 2048 / 512',
        "gfx1036",
        dict(vgprs=24, wgp=True),
        512,
        4,
    ),
    # rocm-7.12: inferred from 93bc019 (after 0943dd6), the last develop commit release/therock-7.12 pinned.
    (
        "rocm-7.12",
        "93bc019: wave 64 halves comgr's 1024/16 to 512/8: 512 / 40 = 12; 2 * 12 * 64 = 1536 / 64",
        "gfx1153",
        dict(vgprs=40, wave=64, wgp=False),
        64,
        24,
    ),
    (
        "rocm-7.12",
        "93bc019 device.cpp lists no gfx1250 (f3494e3 came 2026-04-08)",
        "gfx1250",
        dict(vgprs=32),
        64,
        "unsupported-processor",
    ),
    (
        "rocm-7.12",
        "93bc019 hip_platform.cpp: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
        "gfx942",
        dict(vgprs=520),
        64,
        "hipErrorUnknown",
    ),
    # rocm-7.13: therock-7.13 pins 79e85e1, read exactly.
    (
        "rocm-7.13",
        "79e85e1 device.cpp gfx1250 4 SIMDs, comgr 1024/16: 1024 / 128 = 8; 4 * 8 * 32 = 1024 / 256",
        "gfx1250",
        dict(vgprs=128),
        256,
        4,
    ),
    (
        "rocm-7.13",
        "79e85e1: 1024 / alignUp(1040, 16) = 0 -> hipErrorUnknown",
        "gfx1250",
        dict(vgprs=1040),
        32,
        "hipErrorUnknown",
    ),
    (
        "rocm-7.13",
        "79e85e1: no trap reserve: 512 / 32 = 16; 800 / 96 = 8; 4 * 8 * 64 = 2048 / 1024 (develop, with #10618: 1)",
        "gfx950",
        dict(vgprs=32, sgprs=92),
        1024,
        2,
    ),
    # rocm-7.14: inferred from cd52904 and develop head aaae694.
    (
        "rocm-7.14",
        "cd52904: comgr gfx1250 1024/16: 1024 / 96 = 10; 4 * 10 * 32 = 1280 / 128",
        "gfx1250",
        dict(vgprs=96),
        128,
        10,
    ),
    (
        "rocm-7.14",
        "cd52904: 512 / 64 = 8; 800 / alignUp(104, 16) = 7; 4 * 7 * 64 = 1792 / 256 = 7; LDS 65536 / 30000 = 2",
        "gfx942",
        dict(vgprs=64, sgprs=104, lds=30000),
        256,
        2,
    ),
    # rocm-10.0: release/therock-10.0 (cut 2026-07-30 at develop 920e5a8, then 13 cherry-picks,
    # none of them #9571 or #10618); the occupancy code as read at develop aaae694.
    (
        "rocm-10.0",
        "aaae694 (no #10618 on release/therock-10.0): 512 / 32 = 16, capped 8; 800 / alignUp(92, 16) = 8; "
        "4 * 8 * 64 = 2048 / 1024 (rocm-systems #11431's 'without the reserve')",
        "gfx950",
        dict(vgprs=32, sgprs=92),
        1024,
        2,
    ),
    (
        "rocm-10.0",
        "aaae694 (no #9571): alignUp(32, 24) = 32 (bit mask); 1536 / 32 = 48, capped 16; WGP 4 SIMDs: "
        "4 * 16 * 32 = 2048 / 256 = 8; LDS 65536 / 8192 = 8",
        "gfx1100",
        dict(vgprs=32, lds=8192, wgp=True),
        256,
        8,
    ),
    (
        "rocm-10.0",
        "aaae694 device.cpp: no gfx941 row (removed by c81185cf)",
        "gfx941",
        dict(vgprs=32),
        256,
        "unsupported-processor",
    ),
    # rocm-10.1: release/therock-10.1 cut 2026-09-10, after #9571 (07-31) and #10618 (08-26).
    (
        "rocm-10.1",
        "#10618: 92 SGPRs cost alignUp(92, 16) + 16 = 112; 800 / 112 = 7; 4 * 7 * 64 = 1792 / 1024 "
        "(rocm-systems #11431: 1 with the reserve)",
        "gfx950",
        dict(vgprs=32, sgprs=92),
        1024,
        1,
    ),
    (
        "rocm-10.1",
        "#10618 (its own figure, 32 -> 28): 800 / 112 = 7; 4 * 7 * 64 = 1792 / 64",
        "gfx942",
        dict(vgprs=32, sgprs=92),
        64,
        28,
    ),
    (
        "rocm-10.1",
        "#10618 on gfx10+: no SGPR limit (sgprsPerSimd unlimited); comgr 1024/8: 1024 / 64 = 16; WGP: "
        "4 * 16 * 32 = 2048 / 256",
        "gfx1030",
        dict(vgprs=64, sgprs=100, wgp=True),
        256,
        8,
    ),
    (
        "rocm-10.1",
        "aaae694 device.cpp: no gfx1310 row",
        "gfx1310",
        dict(vgprs=32),
        256,
        "unsupported-processor",
    ),
]


@pytest.mark.parametrize(
    "profile,source,processor,numbers,block,expected", CASES, ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)]
)
def test_hand_worked_case(profile, source, processor, numbers, block, expected):
    assert answer(compute(usage(processor, **numbers), "hip", block, profile=profile)) == expected, source


def test_every_profile_has_hand_worked_cases_and_the_counts_per_profile():
    own = {p.name for p in profiles().values()}
    cases = Counter(c[0] for c in CASES)
    agree = Counter(c[0] for c in CASES if answer(compute(usage(c[2], **c[3]), "hip", c[4], profile=c[0])) == c[5])
    rows, _ = observed.load()
    for row in rows:
        name = amdocc.models.hip.get_profile(observed.profile_of(row)).name
        cases[name] += 1
        agree[name] += observed.answer_of(observed.replay(row)) == row.get("blocks_per_cu", row.get("error"))
    print("\nhip model, agreement per profile (hand-worked cases + tables/hip_observed rows):")
    for name in sorted(own, key=lambda n: (profiles()[n].release or (99, 0), n)):
        print(f"  {name}: {agree[name]}/{cases[name]}")
    assert set(cases) == own and agree == cases


# -- defects the profiles once had, one test each -------------------------------------------------


def test_a_boolean_and_the_integer_1_never_share_an_answer():
    # .workgroup_processor_mode as a msgpack boolean renders "true" (WGP), the integer 1 renders "1"
    # (CU until the 2025 refactor). True == 1 and hash(True) == hash(1) in Python, so a usage
    # carrying the raw value let whichever kernel was asked first answer for both.
    row = {
        "processor": "gfx1100",
        "vgpr_count": 100,
        "sgpr_count": 0,
        "group_segment_fixed_size": 0,
        "wavefront_size": 32,
        "block_size": 256,
        "profile": "rocm-6.4",
    }
    as_bool, as_int = (
        observed.usage({**row, "workgroup_processor_mode": True}),
        observed.usage({**row, "workgroup_processor_mode": 1}),
    )
    assert as_bool != as_int and len({as_bool, as_int}) == 2
    # a187df25c devkernel.cpp: "true" -> WGP: 4 * 14 * 32 = 1792 / 256 = 7; "1" -> CU: 896 / 256 = 3.
    for first, second in ((as_bool, as_int), (as_int, as_bool)):
        from amdocc import caches

        caches.clear_all()
        got = [amdocc.occupancy(u, block_size=256, profile="rocm-6.4").blocks_per_cu for u in (first, second)]
        assert dict(zip((first.wgp_metadata, second.wgp_metadata), got, strict=True)) == {"true": 7, "1": 3}
    # Where "1" is WGP too (the default, rocm-7.14, as every release from 7.0), both are 7.
    assert {amdocc.occupancy(u, block_size=256).blocks_per_cu for u in (as_bool, as_int)} == {7}


@pytest.mark.parametrize(
    "profile,sgprs",
    [
        ("rocm-5.6", 801),
        ("rocm-5.7", 801),
        ("rocm-6.0", 801),
        ("rocm-6.1", 801),
        ("rocm-6.2", 801),
        ("rocm-6.3", 801),
        ("rocm-6.4", 801),
        ("rocm-7.0", 801),
        ("rocm-7.1", 801),
        ("rocm-7.2", 801),
        ("rocm-7.9", 801),
        ("rocm-7.10", 801),
        ("rocm-7.11", 801),
        ("rocm-7.12", 801),
        ("rocm-7.13", 801),
        ("rocm-7.14", 801),
        ("develop-2025", 801),
        ("develop", 785),
    ],
)
def test_no_sgpr_limited_wave_divides_by_zero_in_every_release(profile, sgprs):
    # gfx90a: 800 SGPRs per SIMD. Up to rocm-7.14 (hip_platform.cpp at 79e85e1 and develop head
    # aaae694 still divide by alignUp(usedSGPRs_, 16)) a wave costs alignUp(s, 16): 801 -> 816, 0 waves;
    # develop adds 16: 785 -> 800 + 16 = 816, 0 waves. No release checks: alu threads 0, then
    # bestBlocksPerCU = 0 / bestBlockSize (0): SIGFPE. One fewer SGPR granule still answers.
    occ = amdocc.occupancy({"vgprs": 32, "sgprs": sgprs}, target="gfx90a", block_size=64, profile=profile)
    assert occ.error == "division-by-zero" and occ.blocks_per_cu is None
    assert "SIGFPE" in occ.warnings[-1]
    fits = amdocc.occupancy({"vgprs": 32, "sgprs": sgprs - 16}, target="gfx90a", block_size=64, profile=profile)
    assert fits.error is None and fits.blocks_per_cu == 4  # 1 wave: 4 SIMDs * 1 * 64 / 64


def test_lds_beyond_size_t_is_refused_naming_the_limit(capsys):
    size_max = 2**64 - 1
    k = {"vgprs": 32, "lds": 16384}
    with pytest.raises(amdocc.AmdoccError, match=r"SIZE_MAX \(18446744073709551615\)"):
        amdocc.occupancy(k, target="gfx942", block_size=256, dynamic_lds=size_max - 16384 + 1)
    # The largest sum HIP can hold is answered: 65536 // (2**64 - 1) = 0 blocks.
    assert amdocc.occupancy(k, target="gfx942", block_size=256, dynamic_lds=size_max - 16384).blocks_per_cu == 0
    with pytest.raises(amdocc.AmdoccError, match=r"INT_MAX"):
        amdocc.occupancy({"vgprs": 32, "lds": 2**31}, target="gfx942", block_size=256)
    # On the command line such a size is refused before any model: no processor gives a workgroup
    # more than 320 KiB (docs/cli-contract.md).
    code = main(["occupancy", "--target", "gfx942", "--vgprs", "32", "--block", "256", "--dynamic-lds", str(2**64)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 2 and "from 0 to 327680" in err[1]


@pytest.mark.parametrize(
    "profile,caller,text",
    [
        ("rocm-5.7", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-6.1", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-6.3", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-6.4", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.0", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.1", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.2", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.9", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.10", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.11", 0, "writes 0 into the caller's numBlocks"),
        ("rocm-7.12", "unchanged", "leaves the caller's numBlocks unchanged"),
        ("rocm-7.13", "unchanged", "leaves the caller's numBlocks unchanged"),
        ("rocm-7.14", "unchanged", "leaves the caller's numBlocks unchanged"),
        ("develop-2025", "0 or unchanged", "0 or left unchanged"),
        ("develop", "unchanged", "leaves the caller's numBlocks unchanged"),
    ],
)
def test_what_the_caller_holds_after_an_error(profile, caller, text):
    # hipModuleOccupancyMaxActiveBlocksPerMultiprocessor up to the 6.4 branch, and in rocm-systems
    # develop until 0943dd6 (2026-02-25; 84e9845, 55feeef, 318d138): `*numBlocks = num_blocks`
    # after the call whatever it returned (num_blocks a local 0); from 0943dd6 (93bc019, 79e85e1,
    # aaae694) and b668f8edd0a4 numBlocks is passed through, so an early return leaves it. block 0
    # fails in every release; 520 VGPRs give hipErrorUnknown from 6.1 on.
    for numbers, block, error in (({"vgprs": 8}, 0, "hipErrorInvalidValue"), ({"vgprs": 520}, 64, "hipErrorUnknown")):
        occ = amdocc.occupancy(numbers, target="gfx942", block_size=block, profile=profile)
        if profile == "rocm-5.7" and error == "hipErrorUnknown":
            assert occ.error == "division-by-zero"  # no check before 6.1: the process dies instead
            continue
        assert occ.error == error and occ.details["callerNumBlocks"] == caller
        assert any(text in w for w in occ.warnings)  # (a block of 0 also gets the launch warning)


def test_gfx950_is_never_given_256_vgprs():
    # No release up to the 6.4 branch runs gfx950 (device.cpp at each tag); the runtimes that do
    # have 512/8 (799e54aa0, 2025-01-22, before gfx950's target id 29cc39451, 2025-02-04): the 7.0
    # switch (84e9845 rocdevice.cpp, 9.5.x) and comgr's table from 7.1 on.
    for name, p in profiles().items():
        occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40}, target="gfx950", block_size=256, profile=name, what_if=True)
        if p.unknown:
            assert occ.error == "unknown-runtime-values"
        elif p.release is not None and p.release < (7, 0):
            assert occ.error == "unsupported-processor", name
        else:
            assert (occ.details["vgprsPerSimd"], occ.details["vgprAllocGranularity"]) == (512, 8), name


def test_gfx1150_and_gfx1151_from_rocm_6_2_on():
    # rocm-6.2.0 rocdevice.cpp (a0127c9ee): 11.5.1 -> 1536/24, 11.5.0 -> 1024/16; same in 6.3 and 6.4.
    for profile in ("rocm-6.2", "rocm-6.3", "rocm-6.4"):
        for processor, file in (("gfx1150", (1024, 16)), ("gfx1151", (1536, 24))):
            d = amdocc.occupancy({"vgprs": 32}, target=processor, block_size=256, profile=profile).details
            assert (d["vgprsPerSimd"], d["vgprAllocGranularity"]) == file
    for profile in ("rocm-5.2", "rocm-5.6", "rocm-5.7"):
        assert (
            amdocc.occupancy({"vgprs": 32}, target="gfx1151", block_size=256, profile=profile, what_if=True).error
            == "unsupported-processor"
        )


# -- profiles established by inference ------------------------------------------------------------

INFERRED = {"rocm-7.0", "rocm-7.1", "rocm-7.2", "rocm-7.10", "rocm-7.12", "rocm-7.14", "rocm-10.0", "rocm-10.1"}
# rocm-7.14's answers were confirmed by ROCm 7.14's own runtime: its evidence stays data.
CONFIRMED = {"rocm-7.14"}


@pytest.mark.parametrize("name", sorted({p.name for p in profiles().values()}))
def test_every_answer_of_an_inferred_profile_says_so(name):
    # 7.0, 7.1, 7.2: no rocm-7.x tag or release branch was readable; TheRock 7.10, 7.12, 7.14, 10.0
    # and the 10.1 BKC pin release-branch commits (8e91bc5, 769135f, 2b22ab0, 6b0e43f, 44405e9)
    # that were not readable either.
    p = profiles()[name]
    assert bool(p.evidence) == (name in INFERRED)
    assert bool(p.confirmed) == (name in CONFIRMED)
    kinds = (
        ({"vgprs": 32}, "gfx942", 64),
        ({"vgprs": 520}, "gfx942", 64),
        ({"vgprs": 8}, "gfx942", 0),
        ({"vgprs": 32}, "gfx600", 64),
    )  # an answer, hipErrorUnknown, hipErrorInvalidValue, a refusal
    for numbers, processor, block in kinds:
        occ = amdocc.occupancy(numbers, target=processor, block_size=block, profile=name, what_if=True)
        flagged = [w for w in occ.warnings if w.startswith(f"HIP profile {name} is inferred from ")]
        if name in INFERRED - CONFIRMED:
            assert flagged == [occ.warnings[0]] and "not readable" in flagged[0]
            assert len(occ.warnings) == 1 or occ.warnings[-1] != flagged[0]  # an error's reason stays last
        else:
            assert not flagged


def test_a_release_without_its_own_evidence_is_refused_by_the_table_loader(tmp_path, monkeypatch):
    # `evidence` must say what the profile is inferred from; a bare word would hide that.
    import amdocc.models.hip_profiles as hp

    with pytest.raises(ValueError, match="inferred from"):
        hp._evidence("rocm-9.9", "guessed")
    assert hp._evidence("rocm-9.9", None) is None


# -- versions and the list ------------------------------------------------------------------------


def test_runtime_versions_decode_as_hipamd_encodes_them():
    # hipamd/CMakeLists.txt: HIP_VERSION = major * 10000000 + minor * 100000 + patch.
    assert decode_runtime_version(60443482) == (6, 4, 43482)
    assert decode_runtime_version(50631061) == (5, 6, 31061)
    assert decode_runtime_version(71100000) == (7, 11, 0)


@pytest.mark.parametrize(
    "version,profile,warned",
    [
        (70051831, "rocm-7.0", None),  # 7.0.51831
        (70125393, "rocm-7.1", None),  # TheRock 7.9.0 (VERSION 7.1.0 at 55feeef; patch: git date 25393) = rocm-7.1
        (70200000, "rocm-7.2", "rocm-7.12 (caller_value unchanged)"),  # TheRock 7.10/7.11 answer alike, 7.12 not
        (71300000, "rocm-7.13", None),  # VERSION 7.13.0 at 79e85e1
        (71460850, "rocm-7.14", None),  # VERSION 7.14.60850 at cd52904
        (71500000, "rocm-10.0", None),  # HIP 7.15 is ROCm 10.0 (develop 7.15 until #9648, 2026-08-04)
        (71500123, "rocm-10.0", None),
        (71600000, "rocm-10.1", None),  # HIP 7.16 (#9648) is ROCm 10.1 (release/therock-10.1, 2026-09-10)
        (71700000, "rocm-10.1", "not a ROCm release"),  # 7.17 (#11712) is ROCm 10.2: no profile (not read)
        (50221153, "rocm-5.2", None),  # HIP 5.2.21153: ROCm 5.2.3 (ROCm/HIP rocm-5.2.3 bin/hipvars.pm)
        (50221151, "rocm-5.2", None),  # 5.2.0
        (50221152, "rocm-5.2", None),  # 5.2.1
    ],
)
def test_each_7x_runtime_version_picks_its_release(version, profile, warned):
    chosen = amdocc.models.hip.profile_for_runtime(version)
    assert chosen.profile.name == profile
    assert (chosen.warning is None) if warned is None else (warned in chosen.warning)
    if version == 70200000:  # the releases that answer alike are not named as alternatives
        assert "rocm-7.10" not in chosen.warning and "rocm-7.11" not in chosen.warning


def test_list_profiles_shows_each_release_its_dates_and_changes(capsys):
    assert main(["occupancy", "--list-profiles"]) == 0
    out = capsys.readouterr().out
    for name, p in profiles().items():
        if name == p.name:
            assert f"{name}{' (default)' if name == 'rocm-7.14' else ''}  {p.release_name}  {p.dates}" in out
            assert (p.unknown or p.changes) in out
            assert (f"    evidence: {p.evidence}" in out) == bool(p.evidence)
            assert (f"    confirmed: {p.confirmed}" in out) == bool(p.confirmed)
    assert "    hipRuntimeGetVersion(): HIP 7.1" in out and out.count("hipRuntimeGetVersion(): HIP 7.2") == 3
    assert "    hipRuntimeGetVersion(): HIP 7.15" in out and "    hipRuntimeGetVersion(): HIP 7.16" in out
    assert "2026-08 = develop" in out and "2023-2025 = rocm-6.4" in out


def test_era_names_are_aliases():
    assert profiles()["2026-08"] is profiles()["develop"]
    assert profiles()["2025"] is profiles()["develop-2025"]
    assert profiles()["2023-2025"] is profiles()["rocm-6.4"]
    assert amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, profile="2025").profile == "develop-2025"


# -- ROCm 5.2, 10.0, 10.1, the default, patch releases, processors a profile does not run ----------


def test_rocm_5_2_runtime_version_is_what_its_source_builds():
    # ROCm/HIP rocm-5.2.3 bin/hipvars.pm: HIP_BASE_VERSION 5.2.21153 (5.2.0: 21151, 5.2.1: 21152);
    # hipamd rocm-5.2.3 CMakeLists.txt takes major/minor/patch from `hipconfig --version` and
    # writes HIP_VERSION = major * 10000000 + minor * 100000 + patch into hip_version.h, which
    # hip_context.cpp's hipRuntimeGetVersion returns: 5 * 10^7 + 2 * 10^5 + 21153.
    assert decode_runtime_version(50221153) == (5, 2, 21153)
    for version in (50221151, 50221152, 50221153):
        chosen = amdocc.models.hip.profile_for_runtime(version)
        assert (chosen.profile.name, chosen.warning) == ("rocm-5.2", None)


def test_debians_libamdhip64_5_reports_rocm_5_2():
    # The real runtime (Debian 12's libamdhip64-5, ROCm 5.2.3) answers hipRuntimeGetVersion without a
    # GPU; asked in a child process so that its HSA start-up stays out of the test process.
    import ctypes.util
    import subprocess
    import sys

    from conftest import skip_unless_required

    if ctypes.util.find_library("amdhip64") is None and not any(
        Path(d, "libamdhip64.so.5").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
    ):
        skip_unless_required("Debian's libamdhip64-5 is not installed (apt-get install libamdhip64-5)")
    code = (
        "import ctypes; lib = ctypes.CDLL('libamdhip64.so.5'); v = ctypes.c_int(-1); "
        "print(lib.hipRuntimeGetVersion(ctypes.byref(v)), v.value)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    status, version = map(int, done.stdout.split()[-2:])
    assert (status, version) == (0, 50221153)  # hipSuccess; 5.2.21153 as worked out above
    assert amdocc.models.hip.profile_for_runtime(version).profile.name == "rocm-5.2"


def test_rocm_10_versions_and_the_unread_10_2():
    # rocm-systems #9648 (HIP 7.15 -> 7.16, 2026-08-04, after the 10.0 cut) and #11712 (7.16 -> 7.17
    # "for new APIs added in ROCm 10.2", 2026-09-16, after the 10.1 cut).
    assert profiles()["rocm-10.0"].reports == (7, 15) and profiles()["rocm-10.1"].reports == (7, 16)
    assert "rocm-10.2" not in profiles()  # no readable source
    fallback = amdocc.models.hip.profile_for_runtime(71700000)
    assert fallback.profile.name == "rocm-10.1" and "newest known release before it" in fallback.warning


def test_pr11431_anchor_replays_with_and_without_the_trap_reserve():
    # rocm-systems #11431: gfx950, 92 SGPRs, a 1024-thread workgroup: 1 per CU with #10618's
    # reserve (alignUp(92, 16) + 16 = 112: 800 / 112 = 7 waves; 4 * 7 * 64 = 1792 / 1024), 2 without
    # (800 / 96 = 8: 2048 / 1024). tables/hip_observed/worked_examples.toml holds it per profile.
    rows, _ = observed.load()
    by_id = {r["id"]: r for r in rows}
    expected = {
        "pr11431-gfx950-before-trap": ("2025", 2),
        "pr11431-gfx950-trap": ("2026-08", 1),
        "pr11431-gfx950-rocm-10.0": ("rocm-10.0", 2),
        "pr11431-gfx950-rocm-10.1": ("rocm-10.1", 1),
    }
    for row_id, (profile, blocks) in expected.items():
        row = by_id[row_id]
        assert (row["profile"], row["processor"], row["sgpr_count"], row["block_size"]) == (profile, "gfx950", 92, 1024)
        assert row["blocks_per_cu"] == blocks
        occ = observed.replay(row)
        # with the reserve the SGPRs bind; without, 8 SGPR waves tie the 8 wave slots
        assert occ.blocks_per_cu == blocks and occ.limiter == ("sgpr" if blocks == 1 else "waves")
        assert occ.details["SgprWaves"] == (7 if blocks == 1 else 8)


def test_the_default_profile_is_the_newest_confirmed_release():
    own = {p.name: p for p in profiles().values()}
    default = amdocc.models.hip.default_profile_name()
    assert default == "rocm-7.14" and own[default].release is not None and own[default].confirmed
    newer = [p.name for p in own.values() if p.release is not None and p.release > own[default].release]
    assert newer == ["rocm-10.0", "rocm-10.1"] and not any(own[n].confirmed for n in newer)
    # develop is chosen by name only; the default answers as ROCm 7.14 (no trap reserve: PR #10618's 32).
    assert amdocc.occupancy({"vgprs": 32, "sgprs": 92}, target="gfx942", block_size=64).profile == "rocm-7.14"
    assert amdocc.occupancy({"vgprs": 32, "sgprs": 92}, target="gfx942", block_size=64).blocks_per_cu == 32
    assert (
        amdocc.occupancy({"vgprs": 32, "sgprs": 92}, target="gfx942", block_size=64, profile="develop").blocks_per_cu
        == 28
    )
    # a confirmed profile's answers carry no "inferred" warning; its evidence stays as data
    assert own[default].evidence and own[default].inferred is None
    occ = amdocc.occupancy({"vgprs": 32}, target="gfx942", block_size=64)
    assert not [w for w in occ.warnings if "inferred" in w]


@pytest.mark.parametrize(
    "given,line",
    [
        ("rocm-6.4.1", "rocm-6.4"),
        ("rocm-7.14.1", "rocm-7.14"),
        ("rocm-5.2.3", "rocm-5.2"),
        ("rocm-10.1.0", "rocm-10.1"),
    ],
)
def test_a_patch_release_names_its_release_line(given, line, capsys):
    assert amdocc.models.hip.get_profile(given).name == line
    occ = amdocc.occupancy({"vgprs": 32}, target="gfx90a", block_size=256, profile=given)
    assert occ.profile == line
    code = main(
        ["occupancy", "--json", "--target", "gfx90a", "--vgprs", "32", "--block", "256", "--hip-profile", given]
    )
    out = capsys.readouterr().out
    import json

    assert code == 0 and json.loads(out)["results"][0]["profile"] == line


def test_a_patch_of_no_known_line_is_refused(capsys):
    with pytest.raises(amdocc.UnknownTargetError, match=r"unknown HIP profile 'rocm-6\.9\.1'.*patch release"):
        amdocc.models.hip.get_profile("rocm-6.9.1")
    code = main(["occupancy", "--target", "gfx90a", "--vgprs", "32", "--block", "256", "--hip-profile", "rocm-6.9.1"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown HIP profile 'rocm-6.9.1'" in err


def test_a_named_profile_that_does_not_run_the_processor_is_an_error_naming_both(capsys):
    from amdocc.models import ProfileDoesNotRun

    # rocm-5.6.0 device.cpp has no gfx942 row (5.7.0 added gfx940-942).
    with pytest.raises(ProfileDoesNotRun) as err:
        amdocc.occupancy({"vgprs": 32}, target="gfx942", block_size=64, profile="rocm-5.6")
    assert isinstance(err.value, amdocc.AmdoccError)
    assert str(err.value).startswith("HIP profile rocm-5.6 (ROCm 5.6) does not run gfx942")
    assert "rocm-5.7" in str(err.value) and "rocm-5.2" not in str(err.value.args[0].split("runs it")[0])
    # a what-if answers with the profile's refusal
    occ = amdocc.occupancy({"vgprs": 32}, target="gfx942", block_size=64, profile="rocm-5.6", what_if=True)
    assert occ.error == "unsupported-processor" and occ.blocks_per_cu is None
    # the default profile is not a choice the user made: its refusal is the answer
    assert amdocc.occupancy({"vgprs": 32}, target="gfx941", block_size=64).error == "unsupported-processor"
    # CLI, manual mode: exit 2 and one line naming both; with --what-if the refusal row
    argv = ["occupancy", "--target", "gfx942", "--vgprs", "32", "--block", "64", "--hip-profile", "rocm-5.6"]
    assert main(argv) == 2
    err_lines = capsys.readouterr().err.strip().splitlines()
    assert len(err_lines) == 1 and "rocm-5.6" in err_lines[0] and "gfx942" in err_lines[0]
    assert main([*argv, "--what-if", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["results"][0]["error"] == "unsupported-processor"


def test_a_named_profile_that_does_not_run_a_files_processor_exits_2(capsys):
    from conftest import FIXTURES

    path = str(FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco")
    assert main(["occupancy", "--block", "64", "--hip-profile", "rocm-5.6", path]) == 2
    err = capsys.readouterr().err
    assert "HIP profile rocm-5.6 (ROCm 5.6) does not run gfx942" in err
    assert main(["occupancy", "--block", "64", "--hip-profile", "rocm-5.7", path]) == 0
    capsys.readouterr()
    assert main(["occupancy", "--json", "--block", "64", "--hip-profile", "rocm-5.6", "--target", "gfx942",
                 "--what-if", path]) == 0  # fmt: skip
    import json

    rows = json.loads(capsys.readouterr().out)["results"]
    assert rows and {r["error"] for r in rows} == {"unsupported-processor"}


# The develop snapshots run the processors of the runtime's device table at their commits
# (tests/data/hip_source_tables.json: what tools/hip_source_tables.py read from rocclr/device/
# device.cpp's ROC column), not every processor of tables/targets.toml.
@pytest.mark.parametrize("name,release", [("develop-2025", "rocm-7.1"), ("develop", "rocm-7.14")])
def test_develop_runs_the_device_table_of_its_commit(name, release):
    import json

    from amdocc.targets import all_targets

    read = json.loads(Path(__file__).with_name("data").joinpath("hip_source_tables.json").read_text())
    listed = set(read["releases"][release]["processors"])
    p = profiles()[name]
    runs = {t.name for t in all_targets() if p.runs(t)}
    assert runs == listed
    # c81185cf (2025-02-26) removed gfx940 and gfx941; nothing before gfx8, no gfx909 (ROC false),
    # and none of the processors the runtime had not added by then
    for gone in ("gfx940", "gfx941", "gfx600", "gfx700", "gfx909", "gfx1154", "gfx1170", "gfx1251", "gfx1310"):
        assert gone not in runs, gone
    assert ("gfx1250" in runs) == (name == "develop")  # f3494e3, 2026-04-08


def test_rocm_5_2_ignores_the_kernels_mode_and_says_so():
    # ROCclr rocm-5.2.3 devkernel.cpp reads no .workgroup_processor_mode; rocdevice.cpp doubles the
    # device's 2 SIMDs because the runtime runs in WGP mode: a WGP and a CU kernel get the same 4.
    # 1024 / alignUp(64, 8) = 16 waves; 4 * 16 * 32 = 2048 / 256 = 8 for both.
    for wgp in (True, False):
        occ = amdocc.occupancy(
            {"vgprs": 64, "sgprs": 8, "wgp": wgp}, target="gfx1030", block_size=256, profile="rocm-5.2"
        )
        assert (occ.blocks_per_cu, occ.details["simdPerCU"], occ.details["isWGPMode"]) == (8, 4, False)
        assert occ.warnings == (
            "this runtime does not read .workgroup_processor_mode: it runs in WGP mode (GPU_ENABLE_WGP_MODE, "
            "on by default) and counts every kernel per WGP",
        )
    # not even the msgpack boolean (text "true", which every later release reads as WGP)
    occ = amdocc.occupancy(usage("gfx1030", "true", vgprs=64, sgprs=8, wgp=True), block_size=256, profile="rocm-5.2")
    assert (occ.blocks_per_cu, occ.details["isWGPMode"]) == (8, False)
    # gfx9 has no WGP: the device's 4 SIMDs, no warning
    occ = amdocc.occupancy({"vgprs": 64, "sgprs": 8}, target="gfx90a", block_size=256, profile="rocm-5.2")
    assert (occ.details["simdPerCU"], occ.warnings) == (4, ())


def test_rocm_5_2_grid_size_takes_the_halved_cu_count_uncorrected():
    # hipamd rocm-5.2.3: numBlocksPerGrid = device.info().maxComputeUnits_ * min(bestBlocksPerCU, LDS
    # limit), maxComputeUnits_ already halved by rocdevice.cpp in WGP mode (18 for 36 CUs), with no
    # correction for the kernel's mode (fcfe2ec88 came in 6.2). gfx1030, 64 VGPRs, 32 KiB LDS:
    # 1024 / 64 = 16 waves on 4 SIMDs: aluThreads 2048; limit 256: best = 256, 2048 / 256 = 8 per
    # WGP, but LDS 65536 / 32768 = 2 -> 18 x 2 = 36.
    from amdocc.models.hip import max_potential_block_size

    u = usage("gfx1030", vgprs=64, sgprs=8, lds=32768, wgp=False)
    got = max_potential_block_size(u, 0, 256, compute_units=18, runtime_wgp=True, profile="rocm-5.2")
    assert got == {"block_size": 256, "grid_size": 36, "error": None}
    # rocm-6.4 reads the CU-mode kernel as such (2 SIMDs: 1024 threads, best 256, 4 per CU) and
    # doubles the halved count for it: 36 x min(4, 2) = 72.
    got = max_potential_block_size(u, 0, 256, compute_units=18, runtime_wgp=True, profile="rocm-6.4")
    assert got == {"block_size": 256, "grid_size": 72, "error": None}


def test_sweep_holds_a_named_profile_to_the_processor_unless_what_if(capsys):
    import json

    argv = ["sweep", "--target", "gfx942", "--vgprs", "32", "--hip-profile", "rocm-5.6", "--blocks", "64,128"]
    assert main(argv) == 2
    assert "HIP profile rocm-5.6 (ROCm 5.6) does not run gfx942" in capsys.readouterr().err
    assert main([*argv, "--what-if", "--json"]) == 0
    grid = json.loads(capsys.readouterr().out)["grid"]
    assert grid and {cell["error"] for cell in grid} == {"unsupported-processor"}
