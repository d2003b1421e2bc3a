"""Which LLVM built a code object, which occupancy rules follow from it, and the amdgpu spellings.

Expected values come from the sources, not from amdocc: the producer strings are the ones real
compilers write (Debian's clang-22 and LLD in the fixtures' .comment, Triton's LLD, ROCm 6.3's
AMD clang as ROCm ships it); the version → rules mapping is worked out from LLVM's branch dates
(22 branched 2026-01-13, 23 on 2026-07-14; a major's first release is X.1.0 since LLVM 18) and the
merge dates of PRs #201342 (2026-06-03), #205637 (2026-06-24) and #222615 (2026-09-10); the triple
spellings are LLVM main's (llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll, TargetParser.cpp).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import amdocc
from amdocc.codeobject.producer import comment_strings, parse_producer, producers
from amdocc.models import manual
from amdocc.models.llvm_rules import parse_version, rules_for_producer
from amdocc.targets import find_triple, get_target, subarch_admits
from conftest import FIXTURES
from test_cli import run_cli

AMD_CLANG_63 = (
    "AMD clang version 18.0.0git (https://github.com/RadeonOpenCompute/llvm-project "
    "roc-6.3.1 24491 1e0fda770a2079fbd71e4b70974d74f62fd3af10)"
)
TRITON_LLD = "Linker: LLD 24.0.0 (https://github.com/llvm/llvm-project b010a18d2b648cab83c83967ff26b8fde11acdc6)"


@pytest.mark.parametrize(
    "line,tool,vendor,version,snapshot",
    [
        ("Debian clang version 22.1.8 (1~deb12u1)", "clang", "Debian", (22, 1, 8), False),
        ("Linker: Debian LLD 22.1.8", "lld", "Debian", (22, 1, 8), False),
        ("clang version 23.1.0 (https://github.com/llvm/llvm-project 0123456789ab)", "clang", "", (23, 1, 0), False),
        (AMD_CLANG_63, "clang", "AMD", (18, 0, 0), True),
        (TRITON_LLD, "lld", "", (24, 0, 0), True),  # X.0.y is never a release since LLVM 18
        ("clang version 22.0.0git (https://github.com/llvm/llvm-project abc)", "clang", "", (22, 0, 0), True),
    ],
)
def test_producer_lines(line, tool, vendor, version, snapshot):
    p = parse_producer(line)
    assert (p.tool, p.vendor, p.version, p.snapshot) == (tool, vendor, version, snapshot)


def test_comment_section_picks_clang_over_the_linker_and_ignores_noise():
    data = b"\0Linker: Debian LLD 22.1.8\0Debian clang version 22.1.8 (1~deb12u1)\0GCC: (Debian) 12.2.0\0\xff\xfe\0"
    chosen, notes = producers(comment_strings(data))
    assert (chosen.tool, chosen.version, notes) == ("clang", (22, 1, 8), [])
    assert parse_producer("GCC: (Debian) 12.2.0") is None
    two = comment_strings(b"clang version 22.1.8\0clang version 23.1.0\0")
    chosen, notes = producers(two)
    assert chosen.version == (22, 1, 8) and len(notes) == 1 and "2 clang versions" in notes[0]


@pytest.mark.parametrize(
    "version,target,rules,warned",
    [
        ("22.1.8", "gfx942", "llvm-22", False),
        ("22", "gfx942", "llvm-22", False),
        ("21.1.0", "gfx942", "llvm-22", False),  # taken to match 22 (the table says: no oracle of its own)
        ("22.0.0git", "gfx942", "llvm-22", False),  # main Jul 2025 - Jan 2026: before both 2026 changes
        ("23.0.0git", "gfx942", "llvm-22", True),  # main Jan - Jul 2026: the changes landed in June
        ("23.1.0", "gfx942", "llvm-23", False),
        ("24.0.0git", "gfx942", "llvm-23", False),  # PR #222615 changes gfx13 only
        ("24.0.0git", "gfx1310", "llvm-23", True),  # ... so on gfx13 the snapshot is ambiguous
        ("24.1.0", "gfx1310", "llvm-24", False),
        ("main", "gfx1310", "llvm-24", False),
        ("19.1.7", "gfx942", "llvm-22", True),  # before getOccupancyWithWorkGroupSizes: not modelled
        ("27.1.0", "gfx942", "llvm-24", True),  # newer than any rule set
        ("llvm-23", "gfx942", "llvm-23", False),
    ],
)
def test_version_to_rules(version, target, rules, warned):
    choice = parse_version(version, get_target(target))
    assert choice.rules.name == rules and bool(choice.warnings) == warned, choice.warnings


def test_rules_from_a_producer():
    gfx942 = get_target("gfx942")
    amd = rules_for_producer(parse_producer(AMD_CLANG_63), True, gfx942)
    assert amd.rules.name == "llvm-22"
    assert len(amd.warnings) == 2 and "getOccupancyWithLocalMemSize" in amd.warnings[0] and "AMD" in amd.warnings[1]
    triton = rules_for_producer(parse_producer(TRITON_LLD), True, gfx942)
    assert (triton.rules.name, triton.warnings) == ("llvm-23", ()) and "linker" in triton.chosen_by
    nothing = rules_for_producer(None, True, gfx942)
    assert nothing.rules.name == "llvm-22" and "does not name the compiler" in nothing.warnings[0]
    assert rules_for_producer(None, False, gfx942).warnings == ()  # typed-in numbers: the default, no code object


@pytest.mark.parametrize("bad", ["twenty-two", "22.x", "", "llvm-99", "gfx942"])
def test_bad_llvm_versions_are_usage_errors(bad):
    with pytest.raises(amdocc.UsageError, match="not a version"):
        parse_version(bad)


def test_sgpr_rules_by_version_on_numbers_worked_by_hand():
    """gfx90a, 85 SGPRs, nothing else: LLVM 22's step table gives <=88 -> 9, capped at 8 waves;
    LLVM 23 (PR #201342) 800 // (alignTo(85, 16) + 16) = 800 // 112 = 7."""
    u = manual(get_target("gfx90a"), sgprs=85)
    assert [amdocc.occupancy(u, model="llvm", llvm_version=v).waves_per_simd for v in ("22", "23")] == [8, 7]
    # The old switches are spellings of the version that brought them.
    for switch in ("lds_granule_rounding", "sgpr_trap_reserve"):
        occ = amdocc.occupancy(u, model="llvm", **{switch: True})
        assert (occ.profile, occ.waves_per_simd) == ("llvm-23", 7)
    with pytest.raises(amdocc.UsageError, match="mean llvm-23 rules"):
        amdocc.occupancy(u, model="llvm", llvm_version="22", sgpr_trap_reserve=True)
    # A switch given as False asks for nothing: the default rules (LLVM 22's 8 waves), whichever
    # switch it is and whatever the other, absent, one would have meant.
    for switch in ("lds_granule_rounding", "sgpr_trap_reserve"):
        occ = amdocc.occupancy(u, model="llvm", **{switch: False})
        assert (occ.profile, occ.waves_per_simd) == ("llvm-22", 8)


def test_lds_rules_by_version_on_numbers_worked_by_hand():
    """gfx942, range 1..256 (4-wave groups, 16 barriers), 21845 B of LDS: unrounded 65536 // 21845 =
    3 groups x 4 waves = 12 over 4 SIMDs -> 3; rounded to 512 B (PR #205637), 65536 // 22016 = 2
    groups -> 8 -> 2."""
    u = manual(get_target("gfx942"), lds=21845, max_flat_workgroup_size=256)
    assert [amdocc.occupancy(u, model="llvm", llvm_version=v).waves_per_simd for v in ("22", "23")] == [3, 2]


def test_new_processors_refuse_what_no_source_pins():
    for name in ("gfx1250", "gfx1251", "gfx1250-strict", "gfx12-5-generic", "gfx1310"):
        u = manual(get_target(name), vgprs=64)
        with pytest.raises(amdocc.UsageError, match="hw_wave_slots, which no public source pins"):
            amdocc.occupancy(u, model="hw", block_size=256)
        assert amdocc.occupancy(u, model="llvm").waves_per_simd == 16  # LLVM's own count is known
    # gfx11.7 parts have no such gap: the hw model answers (1024 VGPRs, granule 16: 64 -> 16 waves).
    assert amdocc.occupancy(manual(get_target("gfx1170"), vgprs=64), model="hw", block_size=32).waves_per_simd


@pytest.mark.parametrize(
    "text,arch,processor,environment,rest",
    [
        ("amdgpu9.42-amd-amdhsa-unknown-gfx942", "amdgpu9.42", "gfx942", "unknown", "gfx942"),
        ("hipv4-amdgpu9.00-amd-amdhsa--gfx900:xnack+", "amdgpu9.00", "gfx900", "", "gfx900:xnack+"),
        ("amdgpu12.50s-amd-amdhsa", "amdgpu12.50s", "gfx1250-strict", "", ""),
        ("amdgpu9.4-amd-amdhsa-unknown-gfx942", "amdgpu9.4", "gfx9-4-generic", "unknown", "gfx942"),
        ("amdgpu10-amd-amdhsa-unknown-gfx10-1-generic", "amdgpu10", "gfx10-1-generic", "unknown", "gfx10-1-generic"),
        ("amdgpu8-amd-amdhsa", "amdgpu8", "gfx801", "", ""),
        ("hip-amdgcn-amd-amdhsa-gfx906", "amdgcn", None, "", "gfx906"),
        # The 3-field bundle id of older HIP: a feature's "-" is not an environment separator.
        ("hip-amdgcn-amd-amdhsa-gfx906:xnack-", "amdgcn", None, "", "gfx906:xnack-"),
        ("hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "amdgcn", None, "", "gfx10-3-generic"),
    ],
)
def test_triples(text, arch, processor, environment, rest):
    found = find_triple(text)
    assert (found.arch, found.subarch_processor, found.environment, found.rest) == (arch, processor, environment, rest)


def test_bundle_entry_kinds():
    from amdocc.containers.bundle import BundleEntry

    amdgpu = [
        BundleEntry(eid, 0, 1).is_amdgpu
        for eid in (
            "hipv4-amdgpu9.00-amd-amdhsa--gfx900",
            "hip-amdgcn-amd-amdhsa-gfx906",
            "openmp-amdgpu13-amd-amdhsa--gfx1310",
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgpu-amd-amdpal--gfx1100",
            "openmp-nvptx64-nvidia-cuda-sm_90",
        )
    ]
    assert amdgpu == [True, True, True, False, False, False]


def test_subarch_admits_family_members_only():
    # LLVM main's target-id tests: amdgpu11 with gfx1101, amdgpu12.5 with gfx1250, amdgpu9.4 with gfx942.
    assert subarch_admits("gfx11-generic", "gfx1101") and subarch_admits("gfx12-5-generic", "gfx1250")
    assert subarch_admits("gfx9-4-generic", "gfx942") and subarch_admits("gfx942", "gfx942")
    assert not subarch_admits("gfx942", "gfx950") and not subarch_admits("gfx11-generic", "gfx1201")


def test_target_option_takes_the_amdgpu_spellings(capsys):
    base = ["occupancy", "--json", "--vgprs", "100", "--block", "256"]
    answers = []
    for target in (
        "gfx942",
        "amdgpu9.42-amd-amdhsa--gfx942",
        "amdgpu9.42-amd-amdhsa-unknown-gfx942",
        "amdgpu9.42-amd-amdhsa",
    ):
        code, out, err = run_cli(capsys, *base, "--target", target)
        assert code == 0, err
        (r,) = json.loads(out)["results"]
        answers.append((r["target"], r["blocks_per_cu"]))
    assert len(set(answers)) == 1 and answers[0][0] == "gfx942"
    code, _, err = run_cli(capsys, *base, "--target", "amdgpu99.99-amd-amdhsa")
    assert code == 2 and "unknown processor" in err
    code, _, err = run_cli(capsys, *base, "--target", "amdgpu9.42-amd-amdhsa--gfx950")
    assert code == 2 and "names gfx942 in its triple" in err


def test_llvm_version_option(capsys):
    """--llvm-version applies that LLVM's rules to a code object LLVM 22 built; the old switches
    spell llvm-23; contradictions and nonsense are usage errors."""
    path = str(FIXTURES / "newer" / "amdgpu_gfx942.hsaco")

    def run(*extra):
        code, out, err = run_cli(capsys, "occupancy", "--json", "--model", "llvm", "--kernel", "^sgpr85$", path, *extra)
        return code, (json.loads(out)["results"] if code == 0 else err)

    assert [r["waves_per_simd"] for r in run()[1]] == [7]  # its own LLVM 24: 91 SGPRs -> 7
    assert [(r["profile"], r["waves_per_simd"]) for r in run("--llvm-version", "22.1.8")[1]] == [("llvm-22", 8)]
    assert [r["profile"] for r in run("--sgpr-trap-reserve")[1]] == ["llvm-23"]
    code, err = run("--llvm-version", "22", "--lds-granule-rounding")
    assert code == 2 and "llvm-23" in err
    code, err = run("--llvm-version", "banana")
    assert code == 2 and "not a version" in err


@pytest.mark.llvm22
def test_a_code_object_without_comment_says_so(tmp_path):
    objcopy = shutil.which("llvm-objcopy-22")
    if objcopy is None:
        pytest.skip("llvm-objcopy-22 is not installed")
    bare = tmp_path / "bare.hsaco"
    subprocess.run(
        [objcopy, "--remove-section=.comment", str(FIXTURES / "elf" / "gfx942_cov4.hsaco"), str(bare)], check=True
    )
    (co,) = amdocc.load(str(bare))
    assert co.producer is None
    occ = amdocc.occupancy(co.kernels[0], model="llvm")
    assert occ.profile == "llvm-22" and any("does not name the compiler" in w for w in occ.warnings)
