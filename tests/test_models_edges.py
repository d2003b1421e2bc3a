"""The models' edges mutation testing found unguarded: where a rule switches (one-wave workgroups
and barriers, a block of no threads), what each refusal names, and how the rules are chosen.

Expected values are worked here from the cited rules, never read back from amdocc:
- LLVM's getMaxWorkGroupsPerCU (docs/llvm-occupancy.md §2, "1-wave WGs use no
  barrier"; otherwise min(slots // waves, 16 per CU));
- the version -> rule set mapping of tables/llvm_rules.toml, from LLVM's branch dates and the merge
  dates of PRs #201342, #205637 (2026-06, gfx6-9 rules) and #222615 (2026-09, gfx13 only);
- HIP's header template hipOccupancyMaxPotentialBlockSizeVariableSMem (docs/hip-occupancy.md §3) and
  its occupancy function (docs/hip-occupancy.md §2 steps 6-8: limits = simdPerCU x wavefrontSize
  x waves / alignUp(block, W), LDS = localMemSize / lds);
- the code object each test builds: the processor byte (e_flags & 0xff at file offset 0x30) of a
  fixture set to 0xfe, which no AMDGPU processor uses (EF_AMDGPU_MACH values, AMDGPUUsage.rst).
"""

from __future__ import annotations

import dataclasses

import pytest

import amdocc
from amdocc import UsageError
from amdocc.codeobject.producer import parse_producer
from amdocc.codeobject.target_id import TargetId
from amdocc.devices import get_device
from amdocc.models import from_kernel, manual
from amdocc.models.compat import device_id, place
from amdocc.models.hip import max_potential_block_size_search
from amdocc.models.llvm_rules import rules_for_producer
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = get_target("gfx942")
E_FLAGS = 0x30  # ELF64 header: e_flags, whose low byte is EF_AMDGPU_MACH
UNUSED_MACH = 0xFE
AGPR_GFX942 = FIXTURES / "elf" / "agpr_gfx942_cov6.hsaco"  # kernels agpr_clobber, agpr_small (its readelf.txt)


@pytest.fixture
def unknown_processor_kernel(tmp_path):
    data = bytearray(AGPR_GFX942.read_bytes())
    assert data[E_FLAGS] == 0x4C  # EF_AMDGPU_MACH_AMDGCN_GFX942
    data[E_FLAGS] = UNUSED_MACH
    path = tmp_path / "unknown.hsaco"
    path.write_bytes(bytes(data))
    co = amdocc.load(path)
    return co.kernels[0]


# -- where a kernel is evaluated ----------------------------------------------------------------


def test_a_kernel_of_an_unknown_processor_names_itself_and_the_byte(unknown_processor_kernel):
    k = unknown_processor_kernel
    assert k.name == "agpr_clobber" and k.target is None
    with pytest.raises(UsageError) as err:
        amdocc.occupancy(k, block_size=64)
    text = str(err.value)
    assert text.startswith("kernel agpr_clobber: its processor ")
    assert "0xfe" in text and "not in tables/targets.toml" in text and "pass target=" in text


@pytest.mark.parametrize("target", [GFX942, "gfx942"])
def test_a_what_if_for_unknown_code_names_the_processor_asked_for(unknown_processor_kernel, target):
    # The same place whether the target comes as a Target or by name.
    occ = amdocc.occupancy(unknown_processor_kernel, target=target, block_size=64, what_if=True)
    assert occ.what_if and occ.processor == "gfx942"
    (why,) = [w for w in occ.warnings if w.startswith("what-if: ")]
    assert "0xfe" in why and why.endswith("cannot be placed on gfx942")


def test_the_device_id_of_a_target_is_that_processor_without_feature_modes():
    gfx942 = get_target("gfx942")  # (targets compare by identity; a module-level one may be stale under mutmut)
    assert device_id(gfx942) == (TargetId("gfx942"), gfx942)
    assert device_id("gfx942:xnack-") == (TargetId("gfx942", None, "off"), gfx942)
    where = place(TargetId("gfx90a"), get_target("gfx90a"), gfx942, what_if=True)
    assert where is not None and where.device == TargetId("gfx942") and str(where.device) == "gfx942"


@pytest.mark.parametrize(
    "missing,words",
    [
        ("wavefront_size", "no wavefront size in its metadata"),
        ("vgprs", "no VGPR count in its metadata"),
        ("sgprs", "no SGPR count in its metadata"),
        ("lds", "no LDS size in its metadata"),
        (("vgprs", "sgprs"), "no VGPR count, SGPR count in its metadata"),
    ],
)
def test_a_kernel_missing_a_count_is_refused_naming_it(missing, words):
    co = amdocc.load(AGPR_GFX942)
    k = co.kernels[0]
    gone = (missing,) if isinstance(missing, str) else missing
    k = dataclasses.replace(k, resources=dataclasses.replace(k.resources, **dict.fromkeys(gone)))
    with pytest.raises(UsageError, match=f"^kernel agpr_clobber: {words} or descriptor$"):
        from_kernel(k)


# -- llvm: the per-block path's edges -----------------------------------------------------------


@pytest.mark.parametrize(
    "block,barriers,limiters",
    [
        # 1 wave: no barrier, so no barrier limit; the 8 waves x 4 SIMDs = 32 slots bind alone.
        (64, None, ("waves", "vgpr", "sgpr")),
        # 2 waves: min(32 // 2, 16) = 16, as many as the slots allow: both bind.
        (128, 16, ("waves", "barriers", "vgpr", "sgpr")),
        # 3 waves: min(32 // 3, 16) = 10.
        (192, 10, ("waves", "barriers", "vgpr", "sgpr")),
    ],
)
def test_llvm_barrier_limit_starts_at_two_waves(block, barriers, limiters):
    # gfx942, 8 VGPRs (512 // 8 caps at 8 waves), no SGPRs or LDS: every resource allows the slots.
    occ = amdocc.occupancy(manual(GFX942, vgprs=8), model="llvm", block_size=block)
    assert occ.limits["barriers"] == barriers
    assert occ.limiters == limiters
    assert occ.blocks_per_cu == 32 // (block // 64)


def test_llvm_at_a_block_of_no_threads_keeps_the_choices_warnings():
    # A block of 0 threads has no launch; the record still says which rules were chosen and why
    # (LLVM 19 predates LLVM 21's getOccupancyWithWorkGroupSizes, the oldest modelled set).
    occ = amdocc.occupancy(manual(GFX942, vgprs=8), model="llvm", block_size=0, llvm_version="19")
    assert (occ.blocks_per_cu, occ.limits, occ.launchable) == (0, {"block_size": 0}, False)
    assert "LLVM 19 predates every modelled rule set" in occ.warnings[0]
    assert occ.warnings[-1] == "a block of 0 threads cannot launch"


def test_llvm_keeps_its_printed_occupancy_where_no_workgroup_fits():
    # gfx942, 256 VGPRs: 512 // 256 = 2 waves per SIMD, so LLVM prints 2 (the VGPR limit; 1024
    # lanes are 16 waves, 2 groups by the slots). A 16-wave group needs 4 per SIMD: none fits.
    occ = amdocc.occupancy(manual(GFX942, vgprs=256), model="llvm", block_size=1024)
    assert (occ.details["llvm_occupancy"], occ.blocks_per_cu, occ.waves_per_simd) == (2, 0, 0)
    assert occ.warnings == (
        "LLVM prints Occupancy 2 for this workgroup size (its per-wave limit), but no workgroup of "
        "16 waves fits on the 4 SIMDs: 0 workgroups, 0 waves",
    )


# -- llvm: which rules -------------------------------------------------------------------------


def test_a_given_snapshot_version_is_judged_for_the_kernels_processor():
    # 24.0.0git is main between the 24 branch and PR #222615 (gfx13 only): on gfx942 the llvm-23
    # and llvm-24 rules agree, so the choice is exact; on gfx1310 they differ and it is warned.
    occ = amdocc.occupancy(manual(GFX942, vgprs=8), model="llvm", llvm_version="24.0.0git")
    assert (occ.profile, occ.warnings) == ("llvm-23", ())
    gfx1310 = amdocc.occupancy(manual(get_target("gfx1310"), vgprs=8), model="llvm", llvm_version="24.0.0git")
    assert gfx1310.profile == "llvm-23" and "development snapshot" in gfx1310.warnings[0]


def test_code_from_an_llvm_older_than_its_processor_says_so():
    # gfx1310 first appeared in LLVM 23 (targets.toml since_llvm); a code object whose .comment
    # names LLD 22.1.8 cannot have been built by it, and the record says which LLVM was assumed.
    producer = parse_producer("Linker: Debian LLD 22.1.8")
    u = dataclasses.replace(manual(get_target("gfx1310"), vgprs=8), producer=producer, from_file=True)
    occ = amdocc.occupancy(u, model="llvm")
    assert occ.details["llvm_rules"]["chosen_by"] == "gfx1310 needs LLVM 23+"
    assert occ.warnings[-1] == (
        "gfx1310 first appeared in LLVM 23, so it was not built by the LLVM 22 its .comment names; llvm-23 rules used"
    )
    # Typed-in numbers name no compiler: only that the processor needs LLVM 23.
    plain = amdocc.occupancy(manual(get_target("gfx1310"), vgprs=8), model="llvm")
    assert plain.warnings[-1] == "gfx1310 first appeared in LLVM 23; llvm-23 rules used"


def test_a_producer_line_is_named_in_the_choice_and_its_warnings():
    old = rules_for_producer(parse_producer("clang version 19.1.7 (https://example.org abc)"), True, GFX942)
    assert old.warnings[0].startswith("the code object's clang 19.1.7 predates every modelled rule set")
    assert old.chosen_by == "code object: 'clang version 19.1.7 (https://example.org abc)' (clang's .comment line)"
    lld = rules_for_producer(parse_producer("Linker: LLD 22.1.8"), True, GFX942)
    assert lld.chosen_by == (
        "code object: 'Linker: LLD 22.1.8' (.comment linker line (the compiler is taken to be the linker's LLVM))"
    )
    amd = rules_for_producer(parse_producer("AMD clang version 27.0.0git (roc)"), True, GFX942)
    assert amd.warnings[0].startswith("the code object's clang 27.0.0git (AMD) is newer than the newest rule set")


# -- hip ---------------------------------------------------------------------------------------


def test_hip_pr9571_warning_names_what_it_cannot_know():
    occ = amdocc.occupancy({"vgprs": 32, "lds": 8192}, target="gfx1100", block_size=256, profile="develop")
    (w,) = [w for w in occ.warnings if "#9571" in w]
    assert w.endswith("its formula is not known here, so the LDS limit follows the earlier rule")


def test_hip_block_size_search_asks_lds_for_the_size_it_checks():
    # gfx942, 8 VGPRs, 100 B of dynamic LDS per thread. Per block size bs (a multiple of 64):
    # waves 4 x 64 x 8 // bs = 2048 // bs, LDS 65536 // (100 bs). Resident threads bs x n:
    # 1024..704 -> 0; 640 -> 1 x 640; 576 -> 576; 320 -> 2 x 320 = 640; 128 -> 5 x 128 = 640;
    # 64 -> min(32, 10) x 64 = 640. The first (largest) best is kept: 640, one block per CU.
    got = max_potential_block_size_search(
        manual(GFX942, vgprs=8), lambda bs: 100 * bs, compute_units=304, max_threads_per_cu=2048
    )
    assert got == {"block_size": 640, "min_grid_size": 304, "error": None}
    # Without LDS the waves bind: 1024 lanes x 2 = 2048 threads fill the CU at the first size.
    assert max_potential_block_size_search(manual(GFX942, vgprs=8), compute_units=304, max_threads_per_cu=2048) == {
        "block_size": 1024,
        "min_grid_size": 608,
        "error": None,
    }


# -- the entry point ---------------------------------------------------------------------------


@pytest.mark.parametrize("model,takes", [("hip", "profile"), ("llvm", "llvm_version"), ("hw", "trap_reserve")])
def test_an_option_a_model_does_not_take_names_the_one_it_does(model, takes):
    # The options each model takes, as README's Python API section lists them.
    with pytest.raises(UsageError, match=rf"^model {model} takes no option colour \(it takes: {takes}\)$"):
        amdocc.occupancy(manual(GFX942, vgprs=8), model=model, block_size=64, colour=1)


def test_a_kernel_that_is_not_a_kernel_is_refused():
    class Inputs:  # something with a kernel's inputs key but nothing to read
        def __init__(self):
            self.inputs = None

    with pytest.raises(UsageError, match=r"^cannot compute occupancy of a Inputs$"):
        amdocc.occupancy(Inputs(), block_size=64)


@pytest.mark.parametrize("name", ["block_size", "dynamic_lds"])
def test_a_launch_number_that_is_not_whole_is_named(name):
    args = {"block_size": 64, "dynamic_lds": 0, name: 1.5}
    with pytest.raises(UsageError, match=rf"^{name} must be a whole number, not 1\.5$"):
        amdocc.occupancy(manual(GFX942, vgprs=8), **args)


def test_manual_numbers_keep_the_name_given():
    assert manual(GFX942, vgprs=8).name == "manual"  # manual()'s documented default
    assert manual(GFX942, vgprs=8, name="gemm_tile").name == "gemm_tile"


# -- llvm without a block size: the record in waves per SIMD ------------------------------------


def test_llvm_over_the_flat_range_reports_waves_per_eu_limits():
    # gfx942, 8 VGPRs, nothing else, range 1..1024: VGPRs 512 // 8 -> capped at 8; LDS none -> 8,
    # which is the wave cap, so getMinNumSGPRs returns 0 (no padding) and 0 SGPRs give 10, capped
    # at 8; the wave slots 8. All four bind; 8 waves on 4 SIMDs = 32 of 32 slots.
    occ = amdocc.occupancy(manual(GFX942, vgprs=8), model="llvm")
    assert occ.limits == {"lds": 8, "sgpr": 8, "vgpr": 8, "waves": 8}
    assert occ.limiters == ("waves", "lds", "vgpr", "sgpr")
    assert (occ.waves_per_simd, occ.waves_per_cu, occ.max_waves_per_cu, occ.occupancy_fraction) == (8, 32, 32, 1.0)
    assert "sgprs_padded_to" not in occ.details
    # Typed-in numbers name no compiler: the oldest rule set, chosen by default, without a warning.
    assert occ.details["llvm_rules"]["chosen_by"] == "default (no code object)" and occ.warnings == ()


# -- hip: what a failing call leaves -----------------------------------------------------------


def test_hip_failures_report_the_resource_that_leaves_no_wave():
    # 600 VGPRs on gfx942 (512 per SIMD): 512 // alignUp(600, 8) = 0 waves -> hipErrorUnknown.
    vgpr = amdocc.occupancy({"vgprs": 600}, target="gfx942", block_size=64)
    assert (vgpr.error, vgpr.limits) == ("hipErrorUnknown", {"vgpr": 0})
    # 801 SGPRs: alignUp(801, 16) = 816 > 800 per SIMD -> 0 waves; the grid divides by it.
    sgpr = amdocc.occupancy({"vgprs": 8, "sgprs": 801}, target="gfx942", block_size=64)
    assert (sgpr.error, sgpr.limits) == ("division-by-zero", {"sgpr": 0})


@pytest.mark.parametrize(
    "counts,label,value",
    [
        ({"vgprs": 2**31}, ".vgpr_count", 2**31),
        ({"sgprs": 2**31 + 5}, ".sgpr_count", 2**31 + 5),
        ({"lds": 2**32}, ".group_segment_fixed_size", 2**32),
    ],
)
def test_hip_refuses_counts_its_int_cannot_hold(counts, label, value):
    # HIP parses the metadata with atoi into a C int: INT_MAX = 2^31 - 1 = 2147483647.
    with pytest.raises(UsageError) as err:
        amdocc.occupancy(counts, target="gfx942", block_size=64)
    assert str(err.value) == (
        f"{label} {value} exceeds INT_MAX (2147483647): "
        "HIP parses it with atoi into an int, so no HIP answer is defined"
    )


def test_every_release_reporting_one_version_that_answers_differently_is_named(monkeypatch):
    # Whatever the table says, each release that reports the same HIP version and differs from
    # the chosen one is named: make TheRock 7.10 (the first after ROCm 7.2 to report HIP 7.2)
    # differ too, and the warning names it beside 7.12.
    from amdocc.models import hip_profiles

    table = hip_profiles._table()
    changed = dict(table[0])
    changed["rocm-7.10"] = dataclasses.replace(changed["rocm-7.10"], caller_value="unchanged")
    monkeypatch.setattr(hip_profiles, "_table", lambda: (changed, *table[1:]))
    warning = hip_profiles.profile_for_runtime(70200000).warning
    assert "rocm-7.10 (caller_value unchanged)" in warning and "rocm-7.12 (caller_value unchanged)" in warning


def _llvm_occupancy_with_workgroup_sizes(t, wave, wgp, lds, wg_min, wg_max):
    """getOccupancyWithWorkGroupSizes as docs/llvm-occupancy.md §2 transcribes it
    (occ_wg_lds, LLVM 22: no LDS rounding), the slot-filling steps included: (min, max) waves."""
    eus, max_waves = t.simds_per_cu * (2 if wgp else 1), t.max_waves_per_simd
    pool = t.lds_per_workgroup * (2 if wgp else 1)
    wgs_lds = pool // max(lds, 1)
    if wgs_lds == 0:
        return 1, 1

    def max_wgs_per_cu(size):
        slots, n = max_waves * eus, -(-size // wave)
        return slots if n == 1 else min(slots // n, t.max_workgroups_per_wgp if wgp else t.max_workgroups_per_cu)

    def props(s):
        wpw = -(-s // wave)
        g = min(max_wgs_per_cu(s), wgs_lds)
        return wpw, g, wpw * g

    min_wpw, max_g, max_wpc = props(wg_min)
    max_wpw, min_g, min_wpc = props(wg_max)
    if min_wpc >= max_wpc:
        min_wpc, max_wpc = max_wpc, min_wpc
    else:
        slots = max_waves * eus
        m = -(-slots // (min_g + 1)) * min_g
        if min_wpc > m and (min_wpc - m) // min_g:
            min_wpc -= min_g * min((min_wpc - m) // min_g, max_wpw - min_wpw)
        left = (slots - max_g * min_wpw) // max_g
        if left:
            max_wpc += max_g * min(left, (wg_max - 1) // wave + 1 - min_wpw)

    def clamp(x):
        return max(1, min(x, max_waves))

    return clamp(min_wpc // eus), clamp(-(-max_wpc // eus))


def test_llvm_lds_rule_is_llvms_for_every_range_a_code_object_can_state():
    # Every distinct processor shape of the table, both wave sizes and modes, LDS at every pool
    # fraction, and every range the note can state: (1, N) and (N, N).
    from amdocc.models.llvm import lds_waves
    from amdocc.targets import all_targets

    shapes = {}
    for tgt in all_targets():
        key = (tgt.max_waves_per_simd, tgt.simds_per_cu, tgt.wgp, tgt.wave_sizes, tgt.lds_per_workgroup,
               tgt.max_workgroups_per_cu, tgt.max_workgroups_per_wgp)  # fmt: skip
        shapes.setdefault(key, tgt)
    compared = 0
    for tgt in shapes.values():
        for wave in tgt.wave_sizes:
            for wgp in (False, True) if tgt.wgp else (False,):
                pool = tgt.lds_per_workgroup * (2 if wgp else 1)
                for lds in sorted({0, pool + 1, *(pool // k + d for k in range(1, 70, 3) for d in (0, 1))}):
                    for hi in (*range(1, 257, 7), *range(wave, 1025, wave), 1000, 1024):
                        for lo in (1, hi):
                            want = _llvm_occupancy_with_workgroup_sizes(tgt, wave, wgp, lds, lo, hi)[1]
                            assert lds_waves(tgt, wave, wgp, lds, lo, hi) == want, (tgt.name, wave, wgp, lds, lo, hi)
                            compared += 1
    assert len(shapes) >= 5 and compared > 50_000


# -- hw: the record's own numbers --------------------------------------------------------------


def test_hw_record_in_wgp_mode_worked_by_hand():
    # gfx1100, WGP mode (2 CUs x 2 SIMDs), wave32, 64 VGPRs, 1000 B of LDS, 256 threads = 8 waves.
    # VGPRs: alignUp(64, 24) = 72 -> 1536 // 72 = 21 waves -> 4 x 21 // 8 = 10 groups; wave slots
    # 4 x 16 // 8 = 8; LDS rounded to 512 B = 1024 -> the WGP's 128 KiB // 1024 = 128; barriers
    # 32 per WGP; SGPRs do not limit on gfx10+. 8 groups = 64 waves = 16 per SIMD of 64 slots.
    gfx1100 = get_target("gfx1100")
    occ = amdocc.occupancy(manual(gfx1100, vgprs=64, sgprs=20, lds=1000), block_size=256, model="hw")
    assert occ.limits == {"vgpr": 10, "waves": 8, "lds": 128, "barriers": 32}
    assert (occ.blocks_per_cu, occ.limiter, occ.per_wgp, occ.waves_per_cu, occ.max_waves_per_cu) == (
        8,
        "waves",
        True,
        64,
        64,
    )
    assert occ.allocated == {"vgprs_per_wave": 72, "sgprs_per_wave": None, "lds_per_block": 1024}
    assert occ.details == {
        "vgprs_allocated_from": "metadata",
        "waves_per_simd_by_vgpr": 21,
        "waves_per_simd_by_sgpr": None,
        "lds_pool": 131072,
        "simds": 4,
        "unconfirmed": [f"the 512 B LDS granule of gfx1100: {gfx1100.unconfirmed['lds_granule']}"],
    }
    # In CU mode: 2 SIMDs, the CU's 64 KiB and 16 barriers: 2 x 21 // 8 = 5, slots 2 x 16 // 8 = 4.
    cu = amdocc.occupancy(manual(gfx1100, vgprs=64, lds=1000, wgp=False), block_size=256, model="hw")
    assert cu.limits == {"vgpr": 5, "waves": 4, "lds": 64, "barriers": 16}
    assert (cu.details["lds_pool"], cu.details["simds"], cu.per_wgp) == (65536, 2, False)


# -- next step ---------------------------------------------------------------------------------


def test_next_step_where_hip_divides_by_zero_at_no_vgprs():
    # ROCm 5.6 guards the VGPR division by the SGPR count (docs/hip-occupancy.md §2): with 20 SGPRs and
    # 0 VGPRs it computes 512 // alignUp(0, 8) and dies. That does not hide the step: gfx90a,
    # 128 VGPRs, 256 threads: 512 // 128 = 4 blocks; 5 need alignUp(v, 8) <= 102 -> v <= 96.
    occ = amdocc.occupancy(manual(get_target("gfx90a"), vgprs=128, sgprs=20), block_size=256, profile="rocm-5.6")
    assert (occ.blocks_per_cu, occ.limiters) == (4, ("vgpr",))
    assert amdocc.next_step(occ) == {"gain": 5, "unit": "blocks_per_cu", "shed": {"vgpr": 32}}
    # Without SGPRs that runtime skips the VGPR limit altogether (VgprWaves = MaxWavesPerSimd = 8):
    # 256 x 8 // 256 = 8 blocks, bound by the wave slots, which no kernel resource can relax.
    occ = amdocc.occupancy(manual(get_target("gfx90a"), vgprs=128), block_size=256, profile="rocm-5.6")
    assert (occ.blocks_per_cu, occ.limiter, amdocc.next_step(occ)) == (8, "waves", None)


def test_hip_block_size_search_within_a_limit_and_on_error():
    # A limit of 300 threads on gfx942 (8 VGPRs, wave slots 256 x 8 = 2048 threads): from
    # alignUp(300, 64) = 320 down: 300 -> 2048 // alignUp(300, 64) = 6 blocks = 1800 threads; 256 ->
    # 8 blocks = 2048, the CU's maximum: the search stops there.
    got = max_potential_block_size_search(
        manual(GFX942, vgprs=8), block_size_limit=300, compute_units=304, max_threads_per_cu=2048
    )
    assert got == {"block_size": 256, "min_grid_size": 8 * 304, "error": None}
    # 600 VGPRs leave no wave: HIP's error comes back instead of a size.
    bad = max_potential_block_size_search(manual(GFX942, vgprs=600), compute_units=304, max_threads_per_cu=2048)
    assert bad == {"error": "hipErrorUnknown"}


def test_a_runtime_version_keeps_the_number_it_was_given():
    from amdocc.models.hip_profiles import profile_for_runtime

    for version in (70051831, 70200000, 60500000, 0):
        assert profile_for_runtime(version).version == version


def test_no_next_step_without_a_binding_limit():
    # An error record (600 VGPRs: hipErrorUnknown) has no answer, so no limiter.
    assert amdocc.next_step(amdocc.occupancy(manual(GFX942, vgprs=600), block_size=64)) is None
    # gfx942, 8 VGPRs, 64 threads: the wave slots bind (32 blocks): a cap, no step.
    assert amdocc.next_step(amdocc.occupancy(manual(GFX942, vgprs=8), block_size=64)) is None


def test_hip_profile_is_also_spelled_hip_profile():
    # The CLI's --hip-profile, as a keyword: the same answer as profile=.
    u = manual(GFX942, vgprs=128)
    occ = amdocc.occupancy(u, block_size=256, hip_profile="rocm-6.0")
    assert occ.profile == "rocm-6.0" and occ == amdocc.occupancy(u, block_size=256, profile="rocm-6.0")


def test_every_resolved_hip_vgpr_table_holds_processors_only():
    # `like` and `drop` say how a table is built from another; they are not processors.
    from amdocc.models.hip_profiles import profiles
    from amdocc.targets import find_target

    for p in profiles().values():
        for key in p.vgpr_table or {}:
            assert find_target(key) is not None, (p.name, key)


def test_the_hip_model_reads_the_lds_of_the_device_it_is_given():
    """HIP divides the device's own LDS (localMemSize_, the agent's group segment pool) by a block's
    LDS (docs/hip-occupancy.md §1 and §2): 16,384 B per block is 65,536 // 16,384 = 4
    workgroups on an MI300X as the table has it, and 32,768 // 16,384 = 2 on a device a caller
    describes with half of that LDS."""
    u = manual(get_target("gfx942"), vgprs=8, lds=16384)
    mi300x = get_device("MI300X")
    half = dataclasses.replace(mi300x, name="MI300X with 32 KiB of LDS", lds=32768)
    got = [amdocc.occupancy(u, device=d, block_size=256) for d in (mi300x, half)]
    assert [(o.blocks_per_cu, o.limiter, o.limits["lds"]) for o in got] == [(4, "lds", 4), (2, "lds", 2)]
