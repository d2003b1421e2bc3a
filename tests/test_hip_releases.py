"""The hip model per ROCm release, against cases worked by hand from each release's own source.

Every case names the tag (or commit) and the files its numbers come from; the arithmetic in the
comment is HIP's (ihipOccupancyMaxActiveBlocksPerMultiprocessor in hipamd/src/hip_platform.cpp,
the VGPR switch in rocclr/device/rocm/rocdevice.cpp, the ISA table in rocclr/device/device.cpp,
the .workgroup_processor_mode parse in rocclr/device/devkernel.cpp, the wave size in
rocclr/device/rocm/rockernel.cpp). Tags: ROCm/clr rocm-5.6.0 .. rocm-6.2.0; smajidzahedi/clr
rocm-6.3.0 (fa1d09cbd) and a187df25c (release/rocm-rel-6.4 as merged for 6.4.1); rocm-systems
projects/clr b668f8edd0a4 and PR #10618 for develop. Then one test per defect of issue 12.
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
    ("rocm-5.6", "rocm-5.6.0 hip_platform.cpp: .sgpr_count 0 skips the VGPR division: VgprWaves = 8; "
     "4 SIMDs * 8 * 64 = 2048 / 256", "gfx90a", dict(vgprs=128, sgprs=0), 256, 8),
    ("rocm-5.6", "rocm-5.6.0 rocdevice.cpp 9.0.10 -> 512/8: 512 / 128 = 4; 800 / 16 = 50; 4 * 4 * 64 = 1024 / 256",
     "gfx90a", dict(vgprs=128, sgprs=16), 256, 4),
    ("rocm-5.6", "rocm-5.6.0 hip_platform.cpp: .sgpr_count 16 runs the division: alignUp(0, 8) = 0, 512 / 0",
     "gfx90a", dict(vgprs=0, sgprs=16), 64, "division-by-zero"),
    ("rocm-5.6", "rocm-5.6.0 device.cpp lists no gfx940/941/942", "gfx942", dict(vgprs=128, sgprs=40), 256,
     "unsupported-processor"),
    # rocm-5.7.0: the guard reads .vgpr_count (54f73e430); gfx94x run, only 9.4.0 at 512/8.
    ("rocm-5.7", "rocm-5.7.0 rocdevice.cpp 9.4.2 -> 256/4: 256 / 128 = 2; 800 / 48 = 16; 4 * 2 * 64 = 512 / 256",
     "gfx942", dict(vgprs=128, sgprs=40), 256, 2),
    ("rocm-5.7", "rocm-5.7.0 rocdevice.cpp 9.4.0 -> 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256",
     "gfx940", dict(vgprs=128, sgprs=40), 256, 4),
    ("rocm-5.7", "rocm-5.7.0 hip_platform.cpp: 256 / 300 = 0 unchecked; bestBlockSize = min(0, 64) = 0; 0 / 0",
     "gfx942", dict(vgprs=300, sgprs=40), 64, "division-by-zero"),
    ("rocm-5.7", "rocm-5.7.0 hip_platform.cpp: guard on .vgpr_count: 512 / 128 = 4 even with .sgpr_count 0",
     "gfx90a", dict(vgprs=128, sgprs=0), 256, 4),
    # rocm-6.0.0: device.cpp runs gfx1150/1151; rocdevice.cpp's gfx11 case sets only 11.0.x (memset 0).
    ("rocm-6.0", "rocm-6.0.0 rocdevice.cpp: 11.5.1 unset -> 0/0: alignUp(32, 0) = 0, 0 / 0",
     "gfx1151", dict(vgprs=32), 256, "division-by-zero"),
    ("rocm-6.0", "rocm-6.0.0 hip_platform.cpp: .vgpr_count 0 skips the division: 16 waves; CU mode 2 SIMDs; "
     "2 * 16 * 32 = 1024 / 256", "gfx1151", dict(vgprs=0, sgprs=8), 256, 4),
    ("rocm-6.0", "rocm-6.0.0 (hip-occupancy.md §9 ex. 1, <= 6.0): 256 / 128 = 2; 512 threads / 256 = 2; "
     "LDS 65536 / 49152 = 1", "gfx942", dict(vgprs=128, sgprs=40, lds=49152), 256, 1),
    # rocm-6.1.0: every 9.4.x at 512/8 (b2102fe93); VgprWaves == 0 -> hipErrorUnknown.
    ("rocm-6.1", "rocm-6.1.0 rocdevice.cpp 9.4.x -> 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256",
     "gfx942", dict(vgprs=128, sgprs=40), 256, 4),
    ("rocm-6.1", "rocm-6.1.0 hip_platform.cpp: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown",
     "gfx942", dict(vgprs=520), 64, "hipErrorUnknown"),
    ("rocm-6.1", "rocm-6.1.0 rocdevice.cpp: 11.5.1 still 0/0, and the division comes before the check",
     "gfx1151", dict(vgprs=32), 256, "division-by-zero"),
    # rocm-6.2.0: 11.5.1 -> 1536/24, other 11.5.x -> 1024/16 (a0127c9ee); gfx12 runs at the default 256/4.
    ("rocm-6.2", "rocm-6.2.0: alignUp(100, 24) = 104 (bit mask); 1536 / 104 = 14; .workgroup_processor_mode 1 "
     "is \"1\", read as off: 2 SIMDs; agent wave 32: 2 * 14 * 32 = 896 / 256",
     "gfx1151", dict(vgprs=100, wgp=True), 256, 3),
    ("rocm-6.2", "rocm-6.2.0 rocdevice.cpp 11.5.0 -> 1024/16: 1024 / 112 = 9; 2 * 9 * 32 = 576 / 256",
     "gfx1150", dict(vgprs=100), 256, 2),
    ("rocm-6.2", "rocm-6.2.0 rocdevice.cpp: 12.x falls to the default 256/4: 256 / 128 = 2; 2 * 2 * 32 = 128 / 256 "
     "(tensorflow-upstream #2711: block_count 0 on gfx1200)", "gfx1201", dict(vgprs=128), 256, 0),
    # rocm-6.3.0: 12.0.x -> 1536/24 (a26dc29eb, 854be96c6 on the 6.3 branch); still no gfx950.
    ("rocm-6.3", "rocm-6.3.0 rocdevice.cpp 12.0.1 -> 1536/24: alignUp(128, 24) = 128; 1536 / 128 = 12; "
     "2 * 12 * 32 = 768 / 256", "gfx1201", dict(vgprs=128), 256, 3),
    ("rocm-6.3", "rocm-6.3.0 device.cpp lists no gfx950", "gfx950", dict(vgprs=128, sgprs=40), 256,
     "unsupported-processor"),
    ("rocm-6.3", "rocm-6.3.0 hip_platform.cpp: 800 / alignUp(801, 16) = 0 SGPR waves; bestBlockSize 0; 0 / 0",
     "gfx942", dict(vgprs=32, sgprs=801), 64, "division-by-zero"),
    # a187df25c (rocm-6.4 branch): device.cpp adds gfx1152/1153; same switch, parse and wave size as 6.3.
    ("rocm-6.4", "a187df25c rocdevice.cpp 11.5.2 -> 1024/16: 1024 / 64 = 16; 2 * 16 * 32 = 1024 / 128",
     "gfx1152", dict(vgprs=64), 128, 8),
    ("rocm-6.4", "a187df25c devkernel.cpp: \"1\" is not \"true\": CU mode, 1536 / 104 = 14; 2 * 14 * 32 = 896 / 256",
     "gfx1100", dict(vgprs=100, wgp=True), 256, 3),
    ("rocm-6.4", "a187df25c rockernel.cpp: the agent's wave 32 replaces .wavefront_size 64: alignUp(60, 24) = 64; "
     "1536 / 64 = 24, capped 16; 2 * 16 * 32 = 1024 / 64", "gfx1100", dict(vgprs=60, wave=64, wgp=False), 64, 16),
    ("rocm-6.4", "a187df25c hip_platform.cpp: block 0 -> hipErrorInvalidValue", "gfx942", dict(vgprs=8), 0,
     "hipErrorInvalidValue"),
    # develop-2025 (rocm-systems b668f8edd0a4 and the 2025 refactor): comgr values, metadata wave, "1" is WGP.
    ("develop-2025", "b668f8edd0a4: \"1\" is WGP: 4 SIMDs; 1536 / 104 = 14; 4 * 14 * 32 = 1792 / 256",
     "gfx1100", dict(vgprs=100, wgp=True), 256, 7),
    ("develop-2025", "metadata wave 64: 768 / alignUp(60, 12) = 768 / 68 = 11; 2 * 11 * 64 = 1408 / 64",
     "gfx1100", dict(vgprs=60, wave=64, wgp=False), 64, 22),
    ("develop-2025", "512 / 32 = 16; 800 / alignUp(92, 16) = 8; 4 * 8 * 64 = 2048 / 64 (PR #10618's '32')",
     "gfx942", dict(vgprs=32, sgprs=92), 64, 32),
    ("develop-2025", "800 / alignUp(785, 16) = 800 / 800 = 1 wave; 4 * 1 * 64 = 256 / 64",
     "gfx90a", dict(vgprs=32, sgprs=785), 64, 4),
    ("develop-2025", "comgr gfx950 512/8: 512 / 128 = 4; 4 * 4 * 64 = 1024 / 256 = 4; LDS 163840 / 49152 = 3",
     "gfx950", dict(vgprs=128, sgprs=40, lds=49152), 256, 3),
    # develop (PR #10618): each wave pays alignUp(SGPRs, 16) + 16.
    ("develop", "PR #10618: 800 / (96 + 16) = 7; 4 * 7 * 64 = 1792 / 64 (the PR's '28')",
     "gfx942", dict(vgprs=32, sgprs=92), 64, 28),
    ("develop", "PR #10618: alignUp(785, 16) + 16 = 816 > 800: 0 waves, the grid divides by zero",
     "gfx90a", dict(vgprs=32, sgprs=785), 64, "division-by-zero"),
    ("develop", "PR #10618 / #11431: 800 / 112 = 7; 4 * 7 * 64 = 1792 / 1024 (the hip-tests '2 -> 1')",
     "gfx950", dict(vgprs=32, sgprs=92), 1024, 1),
    ("develop", "b668f8edd0a4: 512 / alignUp(520, 8) = 0 -> hipErrorUnknown", "gfx942", dict(vgprs=520), 64,
     "hipErrorUnknown"),
    # Releases whose source was not read refuse.
    ("rocm-7.0", "no tagged source read", "gfx942", dict(vgprs=32), 64, "unknown-runtime-values"),
    ("rocm-7.1", "no tagged source read", "gfx942", dict(vgprs=32), 64, "unknown-runtime-values"),
    ("rocm-7.2", "no tagged source read", "gfx942", dict(vgprs=32), 64, "unknown-runtime-values"),
]


@pytest.mark.parametrize("profile,source,processor,numbers,block,expected", CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
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
    for name in sorted(own):
        print(f"  {name}: {agree[name]}/{cases[name]}")
    assert set(cases) == own and agree == cases


# -- issue 12's defects, one test each ----------------------------------------------------------

def test_a_boolean_and_the_integer_1_never_share_an_answer():
    # .workgroup_processor_mode as a msgpack boolean renders "true" (WGP), the integer 1 renders "1"
    # (CU until the 2025 refactor). True == 1 and hash(True) == hash(1) in Python, so a usage
    # carrying the raw value let whichever kernel was asked first answer for both.
    row = {"processor": "gfx1100", "vgpr_count": 100, "sgpr_count": 0, "group_segment_fixed_size": 0,
           "wavefront_size": 32, "block_size": 256, "profile": "rocm-6.4"}
    as_bool, as_int = observed.usage({**row, "workgroup_processor_mode": True}), \
        observed.usage({**row, "workgroup_processor_mode": 1})
    assert as_bool != as_int and len({as_bool, as_int}) == 2
    # a187df25c devkernel.cpp: "true" -> WGP: 4 * 14 * 32 = 1792 / 256 = 7; "1" -> CU: 896 / 256 = 3.
    for first, second in ((as_bool, as_int), (as_int, as_bool)):
        amdocc.models._cached.cache_clear()
        amdocc.models.hip._budget.cache_clear()
        got = [amdocc.occupancy(u, block_size=256, profile="rocm-6.4").blocks_per_cu for u in (first, second)]
        assert dict(zip((first.wgp_metadata, second.wgp_metadata), got)) == {"true": 7, "1": 3}
    # Where "1" is WGP too (develop), both are 7.
    assert {amdocc.occupancy(u, block_size=256).blocks_per_cu for u in (as_bool, as_int)} == {7}


@pytest.mark.parametrize("profile,sgprs", [("rocm-5.6", 801), ("rocm-5.7", 801), ("rocm-6.0", 801),
                                           ("rocm-6.1", 801), ("rocm-6.2", 801), ("rocm-6.3", 801),
                                           ("rocm-6.4", 801), ("develop-2025", 801), ("develop", 785)])
def test_no_sgpr_limited_wave_divides_by_zero_in_every_release(profile, sgprs):
    # gfx90a: 800 SGPRs per SIMD. Up to develop-2025 a wave costs alignUp(s, 16): 801 -> 816, 0 waves;
    # develop adds 16: 785 -> 800 + 16 = 816, 0 waves. No release checks: alu threads 0, then
    # bestBlocksPerCU = 0 / bestBlockSize (0): SIGFPE. One fewer SGPR granule still answers.
    occ = amdocc.occupancy({"vgprs": 32, "sgprs": sgprs}, target="gfx90a", block_size=64, profile=profile)
    assert occ.error == "division-by-zero" and occ.blocks_per_cu is None
    assert "SIGFPE" in occ.warnings[-1]
    fits = amdocc.occupancy({"vgprs": 32, "sgprs": sgprs - 16}, target="gfx90a", block_size=64, profile=profile)
    assert fits.error is None and fits.blocks_per_cu == 4       # 1 wave: 4 SIMDs * 1 * 64 / 64


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


@pytest.mark.parametrize("profile,caller,text", [
    ("rocm-5.7", 0, "writes 0 into the caller's numBlocks"), ("rocm-6.1", 0, "writes 0 into the caller's numBlocks"),
    ("rocm-6.3", 0, "writes 0 into the caller's numBlocks"), ("rocm-6.4", 0, "writes 0 into the caller's numBlocks"),
    ("develop-2025", "0 or unchanged", "0 or left unchanged"), ("develop", "unchanged", "leaves the caller's numBlocks unchanged"),
])
def test_what_the_caller_holds_after_an_error(profile, caller, text):
    # hipModuleOccupancyMaxActiveBlocksPerMultiprocessor up to the 6.4 branch: `*numBlocks = num_blocks`
    # after the call whatever it returned (num_blocks a local 0); rocm-systems b668f8edd0a4 passes
    # numBlocks through, so an early return leaves it. block 0 fails in every release; 520 VGPRs
    # give hipErrorUnknown from 6.1 on.
    for numbers, block, error in (({"vgprs": 8}, 0, "hipErrorInvalidValue"), ({"vgprs": 520}, 64, "hipErrorUnknown")):
        occ = amdocc.occupancy(numbers, target="gfx942", block_size=block, profile=profile)
        if profile == "rocm-5.7" and error == "hipErrorUnknown":
            assert occ.error == "division-by-zero"      # no check before 6.1: the process dies instead
            continue
        assert occ.error == error and occ.details["callerNumBlocks"] == caller
        # Among the warnings (a block of 0 threads also carries the launch check's, issue 10 §4).
        assert any(text in w for w in occ.warnings), occ.warnings


def test_gfx950_is_never_given_256_vgprs():
    # No release up to the 6.4 branch runs gfx950 (device.cpp at each tag); the runtimes that do
    # have 512/8 (799e54aa0, 2025-01-22, before gfx950's target id 29cc39451, 2025-02-04).
    for name, p in profiles().items():
        occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40}, target="gfx950", block_size=256, profile=name)
        if p.unknown:
            assert occ.error == "unknown-runtime-values"
        elif p.release is not None:
            assert occ.error == "unsupported-processor", name
        else:
            assert (occ.details["vgprsPerSimd"], occ.details["vgprAllocGranularity"]) == (512, 8)


def test_gfx1150_and_gfx1151_from_rocm_6_2_on():
    # rocm-6.2.0 rocdevice.cpp (a0127c9ee): 11.5.1 -> 1536/24, 11.5.0 -> 1024/16; same in 6.3 and 6.4.
    for profile in ("rocm-6.2", "rocm-6.3", "rocm-6.4"):
        for processor, file in (("gfx1150", (1024, 16)), ("gfx1151", (1536, 24))):
            d = amdocc.occupancy({"vgprs": 32}, target=processor, block_size=256, profile=profile).details
            assert (d["vgprsPerSimd"], d["vgprAllocGranularity"]) == file
    for profile in ("rocm-5.6", "rocm-5.7"):
        assert amdocc.occupancy({"vgprs": 32}, target="gfx1151", block_size=256,
                                profile=profile).error == "unsupported-processor"


# -- versions and the list ------------------------------------------------------------------------

def test_runtime_versions_decode_as_hipamd_encodes_them():
    # hipamd/CMakeLists.txt: HIP_VERSION = major * 10000000 + minor * 100000 + patch.
    assert decode_runtime_version(60443482) == (6, 4, 43482)
    assert decode_runtime_version(50631061) == (5, 6, 31061)
    assert decode_runtime_version(71100000) == (7, 11, 0)


def test_list_profiles_shows_each_release_its_dates_and_changes(capsys):
    assert main(["occupancy", "--list-profiles"]) == 0
    out = capsys.readouterr().out
    for name, p in profiles().items():
        if name == p.name:
            assert f"{name}{' (default)' if name == 'develop' else ''}  {p.release_name}  {p.dates}" in out
            assert (p.unknown or p.changes) in out
    assert "2026-08 = develop" in out and "2023-2025 = rocm-6.4" in out


def test_era_names_are_aliases():
    assert profiles()["2026-08"] is profiles()["develop"]
    assert profiles()["2025"] is profiles()["develop-2025"]
    assert profiles()["2023-2025"] is profiles()["rocm-6.4"]
    assert amdocc.occupancy({"vgprs": 8}, target="gfx942", block_size=64, profile="2025").profile == "develop-2025"
