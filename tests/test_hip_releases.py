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
and PR #10618 for develop. Then one test per defect of issue 12.
"""

from __future__ import annotations

from collections import Counter

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
        "rocm-6.0.0 (hip-occupancy.md §9 ex. 1, <= 6.0): 256 / 128 = 2; 512 threads / 256 = 2; LDS 65536 / 49152 = 1",
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


# -- issue 12's defects, one test each ----------------------------------------------------------


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
        amdocc.models._cached.cache_clear()
        amdocc.models.hip._budget.cache_clear()
        got = [amdocc.occupancy(u, block_size=256, profile="rocm-6.4").blocks_per_cu for u in (first, second)]
        assert dict(zip((first.wgp_metadata, second.wgp_metadata), got, strict=True)) == {"true": 7, "1": 3}
    # Where "1" is WGP too (develop), both are 7.
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
    code = main(["occupancy", "--target", "gfx942", "--vgprs", "32", "--block", "256", "--dynamic-lds", str(2**64)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "SIZE_MAX" in err[0]


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
        occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40}, target="gfx950", block_size=256, profile=name)
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
    for profile in ("rocm-5.6", "rocm-5.7"):
        assert (
            amdocc.occupancy({"vgprs": 32}, target="gfx1151", block_size=256, profile=profile).error
            == "unsupported-processor"
        )


# -- profiles established by inference ------------------------------------------------------------

INFERRED = {"rocm-7.0", "rocm-7.1", "rocm-7.2", "rocm-7.10", "rocm-7.12", "rocm-7.14"}


@pytest.mark.parametrize("name", sorted({p.name for p in profiles().values()}))
def test_every_answer_of_an_inferred_profile_says_so(name):
    # 7.0, 7.1, 7.2: no rocm-7.x tag or release branch was readable; TheRock 7.10, 7.12, 7.14 pin
    # release-branch commits (8e91bc5, 769135f, 2b22ab0) that were not readable either.
    p = profiles()[name]
    assert bool(p.evidence) == (name in INFERRED)
    kinds = (
        ({"vgprs": 32}, "gfx942", 64),
        ({"vgprs": 520}, "gfx942", 64),
        ({"vgprs": 8}, "gfx942", 0),
        ({"vgprs": 32}, "gfx600", 64),
    )  # an answer, hipErrorUnknown, hipErrorInvalidValue, a refusal
    for numbers, processor, block in kinds:
        occ = amdocc.occupancy(numbers, target=processor, block_size=block, profile=name)
        flagged = [w for w in occ.warnings if w.startswith(f"HIP profile {name} is inferred from ")]
        if name in INFERRED:
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
        (71500000, "rocm-7.14", "not a ROCm release"),  # develop after 2b8f21d (2026-06-30) reports 7.15
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
            assert f"{name}{' (default)' if name == 'develop' else ''}  {p.release_name}  {p.dates}" in out
            assert (p.unknown or p.changes) in out
            assert (f"    evidence: {p.evidence}" in out) == bool(p.evidence)
    assert "    hipRuntimeGetVersion(): HIP 7.1" in out and out.count("hipRuntimeGetVersion(): HIP 7.2") == 3
    assert "2026-08 = develop" in out and "2023-2025 = rocm-6.4" in out


def test_era_names_are_aliases():
    assert profiles()["2026-08"] is profiles()["develop"]
    assert profiles()["2025"] is profiles()["develop-2025"]
    assert profiles()["2023-2025"] is profiles()["rocm-6.4"]
    assert amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, profile="2025").profile == "develop-2025"
