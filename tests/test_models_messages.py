"""Every warning and refusal of the occupancy models, word for word, with its numbers worked by hand.

The house rule is that a reader is told what is wrong and what is valid; these tests hold each
message to the words it must say, so that a changed word, number or name is caught. Numbers come
from the rules the messages describe: HIP's occupancy function (docs/hip-occupancy.md
§4: VgprWaves = vgprsPerSimd / alignUp(vgprs, granule), SGPR cost = alignUp(sgprs, 16) + the trap
reserve, limits = simdPerCU x wavefrontSize x waves / alignUp(block, W)), the hw model's rules
(hw.py's docstring and tests/test_hw_sources.py: barriers 16 per CU, trap-handler SGPRs 16), C's
INT_MAX, and the targets table's cited values (gfx942: 512 VGPRs, 800 SGPRs, 64 KiB LDS; gfx906:
256 VGPRs, 10 waves; gfx1100: wave32 default, WGP mode, LDS granule 512 B unconfirmed).
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc import UsageError
from amdocc.codeobject.producer import parse_producer
from amdocc.models import manual
from amdocc.models.llvm_rules import rules_for_producer
from amdocc.targets import get_target


def t(name):
    return get_target(name)


def warnings_of(usage, **kw):
    return amdocc.occupancy(usage, **kw).warnings


# -- warnings ----------------------------------------------------------------------------------


def test_hip_warnings_about_how_an_old_runtime_read_the_kernel():
    # ROCm 6.0 takes the wave size from the device (wave32 on gfx1100) and parses
    # .workgroup_processor_mode as "true" only, where LLVM writes 1.
    w = warnings_of(manual(t("gfx1100"), vgprs=32, wave=64), block_size=256, profile="rocm-6.0")
    assert w == (
        "this runtime takes the wave size from the device (32), not the kernel's .wavefront_size 64",
        "this runtime reads .workgroup_processor_mode '1' as off (it accepts only \"true\", and LLVM "
        "writes 1), so it counts per CU, not per WGP",
    )


def test_hip_pr9571_warning():
    (w,) = warnings_of(manual(t("gfx1100"), vgprs=32, lds=8192), block_size=256, profile="develop")
    assert w == (
        "rocm-systems PR #9571 (Jul 2026) changed how this runtime counts LDS for gfx11 WGP-mode "
        "kernels; its formula is not known here, so the LDS limit follows the earlier rule"
    )


@pytest.mark.parametrize(
    "profile,caller",
    [
        ("rocm-6.4", "this runtime's module wrapper writes 0 into the caller's numBlocks"),
        ("rocm-7.12", "HIP leaves the caller's numBlocks unchanged"),
    ],
)
def test_hip_errors_say_why_and_what_the_caller_holds(profile, caller):
    # 600 VGPRs on gfx942: 512 // alignUp(600, 8) = 0 waves; since 6.4's check, hipErrorUnknown.
    occ = amdocc.occupancy(manual(t("gfx942"), vgprs=600), block_size=64, profile=profile)
    assert occ.error == "hipErrorUnknown"
    assert occ.warnings[-1] == (
        f"600 VGPRs leave no room for one wave of 64 lanes in 512 registers; HIP returns hipErrorUnknown; {caller}"
    )
    bad = amdocc.occupancy(manual(t("gfx942"), vgprs=8), block_size=0, profile=profile)
    assert bad.error == "hipErrorInvalidValue"
    assert bad.warnings[-2:] == (f"block size 0 is not positive; {caller}", "a block of 0 threads cannot launch")


def test_hip_crashes_say_the_process_dies():
    # ROCm 6.0 counts gfx942 as 256 VGPRs in granules of 4 and does not check for no wave:
    # 256 // alignUp(300, 4) = 0, and the grid divides by it.
    old = amdocc.occupancy(manual(t("gfx942"), vgprs=300), block_size=64, profile="rocm-6.0")
    assert (old.error, old.warnings[-1]) == (
        "division-by-zero",
        "300 VGPRs leave no room for one wave of 64 lanes in 256 registers; this runtime does not check, "
        "and divides by zero computing the grid (SIGFPE); the calling process dies, so no value is returned",
    )
    # 801 SGPRs cost alignUp(801, 16) + 16 (develop's trap reserve) = 832 > 800.
    sgpr = amdocc.occupancy(manual(t("gfx942"), vgprs=8, sgprs=801), block_size=64, profile="develop")
    assert sgpr.warnings[-1] == (
        "801 SGPRs cost 832 per wave, more than the 800 a SIMD has: no wave fits, and HIP divides by the zero "
        "thread budget computing the grid (SIGFPE); the calling process dies, so no value is returned"
    )


def test_hip_refuses_a_sum_of_lds_size_t_cannot_hold():
    size_max = 2**64 - 1
    with pytest.raises(UsageError) as err:
        amdocc.occupancy(manual(t("gfx942"), lds=16), block_size=64, dynamic_lds=size_max)
    assert str(err.value) == (
        f"static + dynamic LDS 16 + {size_max} B exceeds SIZE_MAX ({size_max}): HIP adds them in size_t, "
        f"where the sum wraps and the LDS limit vanishes; give at most {size_max - 16} B of dynamic LDS"
    )


def test_hw_warnings_name_what_is_not_modelled_or_not_confirmed():
    u = manual(t("gfx1100"), vgprs=32, lds=1000, wave=64, scratch=256).with_(tg_split=True)
    w = warnings_of(u, block_size=64, model="hw")
    unconfirmed_granule = t("gfx1100").unconfirmed["lds_granule"]
    assert w[:4] == (
        "TG_SPLIT is set: a workgroup's waves may spread over CUs, so the LDS and barrier limits are not per CU",
        "256 B of scratch per work-item: scratch backing memory can limit waves further at run time; not modelled",
        "wave64 on RDNA is modelled with LLVM's wave64 VGPR file; how it takes wave slots on silicon is not confirmed",
        "unconfirmed by any public source: the 512 B LDS granule of gfx1100: "
        f"{unconfirmed_granule}; how TG_SPLIT waves count against one CU's limits (AMDGPUUsage says only "
        "that they may run on different CUs)",
    )


def test_hw_says_where_hip_answers_otherwise():
    # gfx942, 128 VGPRs but a descriptor allocating 256: hw 512 // 256 = 2 waves -> 4 x 2 = 8
    # one-wave blocks; HIP reads .vgpr_count: 512 // 128 = 4 -> 256 x 4 // 64 = 16. The default
    # HIP profile (rocm-7.14) charges 8 SGPRs alignUp(8, 16) = 16, no trap reserve: 800 // 16 = 50
    # waves -> 256 x 50 // 64 = 200; hw charges 8 + 16 = 24, rounded to 32: 800 // 32 = 25 -> 100.
    u = manual(t("gfx942"), vgprs=128, sgprs=8).with_(vgprs_allocated=256)
    (w,) = warnings_of(u, block_size=64, model="hw")
    assert w == "HIP (rocm-7.14) answers 16: VGPRs allow 16 there, 8 here; SGPRs allow 200 there, 100 here"
    # gfx942, 13000 B of LDS, no SGPRs, one-wave blocks: HIP 65536 // 13000 = 5 and it counts no
    # SGPRs; hw rounds LDS to 512 B (13312): 65536 // 13312 = 4, and charges 1 SGPR + 16 (32):
    # 800 // 32 = 25 waves -> 4 x 25 = 100. Every resource that differs is named, binding or not.
    (w,) = warnings_of(manual(t("gfx942"), vgprs=8, lds=13000), block_size=64, model="hw")
    assert w == "HIP (rocm-7.14) answers 5: SGPRs allow any number there, 100 here; LDS allow 5 there, 4 here"


def test_llvm_warns_that_dynamic_lds_is_a_what_if():
    w = warnings_of(manual(t("gfx942"), vgprs=8), model="llvm", dynamic_lds=1024)
    assert w == ("LLVM's occupancy sees only static LDS; dynamic LDS was added as a what-if",)


def test_llvm_version_warnings():
    def first(version):
        return warnings_of(manual(t("gfx942"), vgprs=8), model="llvm", llvm_version=version)[0]

    assert first("19") == (
        "LLVM 19 predates every modelled rule set: before LLVM 21 occupancy came from "
        "getOccupancyWithLocalMemSize (largest workgroup only), which is not modelled; llvm-22 rules "
        "used and may differ for LDS-bound kernels and restricted workgroup ranges"
    )
    newer = first("27.1.0")
    assert newer.startswith("LLVM 27.1.0 is newer than the newest rule set, llvm-24 (LLVM 24: ")
    assert newer.endswith("); llvm-24 rules used")
    snapshot = first("23.0.0git")
    assert snapshot.startswith(
        "LLVM 23.0.0git is a development snapshot from the cycle in which llvm-23's changes landed (llvm PR #201342"
    )
    assert snapshot.endswith("); llvm-22 rules used (--llvm-version chooses)")


def test_warnings_about_the_compiler_a_code_object_names():
    gfx942 = t("gfx942")
    amd_line = "AMD clang version 22.1.0 (roc-7.2)"
    amd = rules_for_producer(parse_producer(amd_line), True, gfx942)
    assert amd.warnings == (
        f"built by AMD's LLVM fork ({amd_line!r}), which names no commit: the rules its version 22.1.0 "
        "implies (llvm-22) are assumed, and AMD's fork may carry occupancy changes upstream LLVM 22.1.0 lacks",
    )
    none = rules_for_producer(None, True, gfx942)
    assert (none.chosen_by, none.warnings) == (
        "default",
        (
            "the code object does not name the compiler that built it (no LLVM version in .comment); "
            "llvm-22 rules used (--llvm-version chooses)",
        ),
    )


def test_launch_problems_are_said_alike():
    u = manual(t("gfx942"), vgprs=8, sgprs=8, max_flat_workgroup_size=256)
    # HIP answers above .max_flat_workgroup_size: 256 x 8 // 512 = 4 blocks, and says so.
    hip = warnings_of(u, block_size=512)
    assert hip == (
        "block size 512 exceeds the kernel's .max_flat_workgroup_size 256: a launch fails; "
        "HIP's occupancy API does not read .max_flat_workgroup_size and answers anyway",
    )
    # The hw model answers 0 there. HIP (rocm-7.14) charges 8 SGPRs 16 (no trap reserve): 800 // 16
    # = 50 waves -> 256 x 50 // 512 = 25; hw charges 32: 25 waves -> 256 x 25 // 512 = 12.
    assert warnings_of(u, block_size=512, model="hw") == (
        "HIP (rocm-7.14) answers 4: SGPRs allow 25 there, 12 here",
        "block size 512 exceeds the kernel's .max_flat_workgroup_size 256: a launch fails",
    )
    assert warnings_of(manual(t("gfx942"), vgprs=8), block_size=2048, model="hw") == (
        "block size 2048 exceeds the largest workgroup, 1024: a launch fails",
    )
    assert warnings_of(manual(t("gfx942"), vgprs=8, lds=70000), block_size=64, model="hw")[-1] == (
        "70000 B of LDS exceed the 65536 B one workgroup may use: a launch fails"
    )


# -- refusals ----------------------------------------------------------------------------------


def refusal(call):
    with pytest.raises(UsageError) as err:
        call()
    return str(err.value)


def test_entry_point_refusals():
    u = manual(t("gfx942"), vgprs=8)
    assert refusal(lambda: amdocc.occupancy(u, block_size=64, dynamic_lds=-1)) == "dynamic LDS cannot be negative"
    assert refusal(lambda: amdocc.occupancy(u, block_size=64, what_if=True)) == (
        "what_if needs target= or device=: the processor to evaluate on"
    )
    assert refusal(lambda: amdocc.occupancy({"vgprs": 8}, block_size=64)) == "manual resources need target= or device="
    assert refusal(lambda: amdocc.occupancy(u, model="hw")) == "the hw model needs a block size"
    assert refusal(lambda: amdocc.occupancy(u, model="occ", block_size=64)) == (
        "unknown model 'occ' (choose from hip, llvm, hw)"
    )
    # A wave32 kernel asked about on a wave64-only processor: even a what-if cannot be right.
    w32 = manual(t("gfx1100"), vgprs=8, wave=32)
    assert refusal(lambda: amdocc.occupancy(w32, target="gfx942", block_size=64, what_if=True)) == (
        "the kernel runs wave32, and gfx942 runs only wave64: no evaluation there can be right"
    )
    assert refusal(lambda: amdocc.occupancy(u, model="llvm", llvm_version="22", sgpr_trap_reserve=True)) == (
        "lds_granule_rounding/sgpr_trap_reserve mean llvm-23 rules, but llvm_version 22 chooses llvm-22"
    )
    assert refusal(lambda: amdocc.occupancy(manual(t("gfx1310"), vgprs=8), model="llvm", llvm_version="22")) == (
        "LLVM 22 (llvm-22 rules) did not know gfx1310: LLVM first knew it in LLVM 23"
    )


def test_where_code_cannot_run():
    hint = "ask for a what-if (what_if=True, or --what-if) to evaluate it there anyway"
    other = manual(t("gfx90a"), vgprs=8)
    assert refusal(lambda: amdocc.occupancy(other, target="gfx942", block_size=64)) == (
        f"gfx90a code cannot run on gfx942; {hint}"
    )
    members = ", ".join(t("gfx11-generic").generic_of)
    generic = manual(t("gfx11-generic"), vgprs=8)
    assert refusal(lambda: amdocc.occupancy(generic, target="gfx942", block_size=64)) == (
        f"gfx11-generic code cannot run on gfx942 (it runs on {members}); {hint}"
    )


def test_manual_refusals():
    gfx942, gfx1100 = t("gfx942"), t("gfx1100")
    assert refusal(lambda: manual(gfx942, vgprs=8, arch_vgprs=8, agprs=4)) == (
        "give either vgprs (the metadata total) or arch_vgprs with agprs, not both"
    )
    for key, label in (("vgprs", "VGPRs"), ("sgprs", "SGPRs"), ("lds", "LDS"), ("agprs", "AGPRs")):
        assert refusal(lambda key=key: manual(gfx942, **{key: -1})) == f"{label} cannot be negative"
    assert refusal(lambda: manual(gfx1100, agprs=4)) == "gfx1100 has no AGPRs"
    assert refusal(lambda: manual(gfx942, wave=32)) == "gfx942 does not run wave32 (it runs (64,))"
    assert refusal(lambda: manual(gfx942, wgp=True)) == "gfx942 has no WGP mode"


def test_a_dynamic_vgpr_kernel_is_refused_by_every_model():
    u = manual(t("gfx1200"), vgprs=8, name="dyn").with_(dynamic_vgpr=True)
    for model in ("hip", "llvm", "hw"):
        assert refusal(lambda model=model: amdocc.occupancy(u, model=model, block_size=64)) == (
            "kernel dyn enables dynamic VGPRs (descriptor ENABLE_DYNAMIC_VGPR): its VGPRs are allocated while it "
            f"runs, so no static {model} model can count its waves"
        )


def test_a_record_made_by_hand_has_no_next_step():
    occ = amdocc.occupancy(manual(t("gfx942"), vgprs=8), block_size=64)._replace(query=None)
    assert refusal(lambda: amdocc.next_step(occ)) == (
        "this record does not say how it was asked; make it with amdocc.occupancy()"
    )


def test_hip_runtime_versions_that_name_no_release_say_which_profile_stands_in():
    # hipRuntimeGetVersion() is major x 10^7 + minor x 10^5 + patch (HIP_VERSION's encoding).
    from amdocc.models.hip_profiles import get_profile, profile_for_runtime

    assert profile_for_runtime(0).warning == (
        "hipRuntimeGetVersion() returned 0, which is no HIP version; comparing with rocm-5.2, the oldest release known"
    )
    # 5.1.3 predates ROCm 5.2, the oldest release with a profile; 5.5.1 falls between 5.2 and 5.6;
    # 6.5.0 follows 6.4.
    assert profile_for_runtime(50100003).warning == (
        "HIP runtime 5.1.3 (50100003) is not a ROCm release amdocc has a profile for; using rocm-5.2, "
        "the oldest known release"
    )
    assert profile_for_runtime(50500001).warning == (
        "HIP runtime 5.5.1 (50500001) is not a ROCm release amdocc has a profile for; using rocm-5.2, "
        "the newest known release before it"
    )
    assert profile_for_runtime(60500000).warning == (
        "HIP runtime 6.5.0 (60500000) is not a ROCm release amdocc has a profile for; using rocm-6.4, "
        "the newest known release before it"
    )
    with pytest.raises(
        amdocc.AmdoccError, match=r"^unknown HIP profile 'rocm-9\.9' \(known: rocm-5\.2, rocm-5\.6, .*; aliases: "
    ):
        get_profile("rocm-9.9")


def test_feature_modes_that_differ_are_named_with_both_modes():
    # Code built with xnack on (gfx90a:xnack+) cannot run where xnack is off, and the reverse;
    # "any" (no feature in the id) runs on both. sramecc is checked the same way, first.
    hint = "ask for a what-if (what_if=True, or --what-if) to evaluate it there anyway"
    from amdocc.codeobject.target_id import TargetId
    from amdocc.models.compat import place

    gfx90a = t("gfx90a")
    with pytest.raises(UsageError) as err:
        place(TargetId("gfx90a", None, "on"), gfx90a, "gfx90a:xnack-")
    assert str(err.value) == (
        f"gfx90a:xnack+ code is built with xnack on; it cannot run on gfx90a:xnack-, which runs with xnack off; {hint}"
    )
    with pytest.raises(UsageError) as err:
        place(TargetId("gfx90a", "off", "on"), gfx90a, "gfx90a:sramecc+:xnack-")
    assert str(err.value).startswith("gfx90a:sramecc-:xnack+ code is built with sramecc off; it cannot run on ")
    assert place(TargetId("gfx90a"), gfx90a, "gfx90a:sramecc+:xnack-").reason is None
    where = place(TargetId("gfx90a", None, "on"), gfx90a, "gfx90a:xnack-", what_if=True)
    assert (where.what_if, where.built_for, str(where.device)) == (True, "gfx90a:xnack+", "gfx90a:xnack-")
    with pytest.raises(UsageError) as err:
        place(TargetId("gfx942"), t("gfx942"), "gfx942", "MI355X")
    assert str(err.value) == "device MI355X is a gfx950, not gfx942"


def test_hip_divisions_by_zero_in_the_vgpr_and_wave_arithmetic():
    from amdocc.models.hip import hip_occupancy

    # ROCm 5.6 divides by alignUp(.vgpr_count, 8) whenever .sgpr_count > 0: 0 VGPRs divide by 0.
    occ = amdocc.occupancy(manual(t("gfx90a"), sgprs=20), block_size=64, profile="rocm-5.6")
    assert (occ.error, occ.warnings[-1]) == (
        "division-by-zero",
        "this runtime has 512 VGPRs in granules of 8 for gfx90a, so alignUp(0, 8) is 0 and it divides by zero "
        "(SIGFPE); the calling process dies, so no value is returned",
    )
    # A .wavefront_size of 0 (which occupancy() refuses first) makes alignUp(block, 0) = 0.
    zero = hip_occupancy(manual(t("gfx942"), vgprs=8).with_(wave=0), 64)
    assert (zero.error, zero.warnings[-1]) == (
        "division-by-zero",
        "this runtime takes .wavefront_size 0 from the metadata and divides by alignUp(block, 0) = 0 (SIGFPE); "
        "the calling process dies, so no value is returned",
    )
