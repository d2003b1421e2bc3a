"""Properties every occupancy answer must have, over random kernels on every processor."""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amdocc.models import compute, manual
from amdocc.models.applicable import refusal
from amdocc.models.hip import get_profile, max_waves_per_simd, profiles
from amdocc.targets import all_targets

TARGETS = [t for t in all_targets() if not t.is_generic]
PROFILES = sorted({p.name for p in profiles().values()})
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def kernels(draw, targets=TARGETS, cu_mode_only=False):
    t = draw(st.sampled_from(targets))
    wave = draw(st.sampled_from(t.wave_sizes))
    wgp = draw(st.booleans()) if t.wgp and not cu_mode_only else False
    return manual(
        t,
        vgprs=draw(st.integers(0, t.addressable_vgprs)),
        sgprs=draw(st.integers(0, 112)),
        lds=draw(st.integers(0, t.lds_per_workgroup)),
        wave=wave,
        wgp=wgp,
    )


blocks = st.integers(1, 1024)
dyn_lds = st.integers(0, 64 << 10)


def _value(occ):
    return occ.blocks_per_cu if occ.block_size is not None else occ.waves_per_simd


def _pow2_granule(u, profile):
    file = get_profile(profile).vgpr_file(u.target)
    return file is not None and file[1] & (file[1] - 1) == 0


@SETTINGS
@given(
    u=kernels(),
    block=blocks,
    dyn=dyn_lds,
    model=st.sampled_from(["hip", "llvm", "hw"]),
    field=st.sampled_from(["vgprs", "sgprs", "lds", "dyn"]),
    more=st.integers(1, 300),
)
def test_more_of_any_resource_never_raises_occupancy(u, block, dyn, model, field, more):
    assume(refusal(u, model) is None)  # a fact no source pins: refused, tested in test_new_targets.py
    if model == "hip":
        # HIP's bit-mask round-up is not monotone for granules 24 and 12 (docs/hip-occupancy.md §7):
        # that documented quirk is tested on its own below.
        assume(_pow2_granule(u, None))
    base = compute(u, model, block, dyn)
    if field == "dyn":
        grown = compute(u, model, block, dyn + more)
    else:
        grown = compute(u.with_(**{field: getattr(u, field) + more}), model, block, dyn)
    if base.error or grown.error:
        return
    assert (_value(grown) or 0) <= (_value(base) or 0)


def test_hip_bitmask_quirk_is_not_monotone_where_the_note_says():
    # docs/hip-occupancy.md §7, granule 24 of 1536 (gfx1100 wave32): HIP gives 14 waves for 81-88 and
    # 97-104 VGPRs, 11 for 113-120 and 12 for 121-128, so 121 VGPRs get more waves than 120.
    t = next(t for t in TARGETS if t.name == "gfx1100")
    waves = {v: compute(manual(t, vgprs=v), "hip", 32).details["VgprWaves"] for v in (80, 81, 88, 96, 97, 120, 121)}
    assert waves == {80: 16, 81: 14, 88: 14, 96: 16, 97: 14, 120: 11, 121: 12}


@SETTINGS
@given(
    u=kernels(),
    block=blocks,
    dyn=dyn_lds,
    model=st.sampled_from(["hip", "llvm", "hw"]),
    profile=st.sampled_from(PROFILES),
)
def test_results_respect_the_wave_caps_and_name_the_binding_limiter(u, block, dyn, model, profile):
    assume(refusal(u, model) is None)
    occ = compute(u, model, block, dyn, **({"profile": profile} if model == "hip" else {}))
    if occ.error:
        return
    cap = max_waves_per_simd(u.target) if model == "hip" else u.target.max_waves_per_simd
    assert occ.waves_per_simd is None or occ.waves_per_simd <= cap
    assert occ.waves_per_cu is None or occ.waves_per_cu <= occ.max_waves_per_cu
    value = _value(occ)
    assert occ.limiter is not None and occ.limits[occ.limiter] == value
    for name in occ.limiters:
        assert occ.limits[name] == value
    assert all(v is None or v >= value for v in occ.limits.values())


# The HIP runtime that charges the trap handler's SGPRs as the hardware does (rocm-systems #10618):
# develop. Earlier runtimes (the default, rocm-7.14, among them) omit the reserve, a documented quirk.
HW_LIKE_PROFILE = "develop"


def _hip_matches_hardware_facts(t) -> bool:
    """Targets where HIP's device values equal the hardware's: a power-of-two VGPR granule equal to
    the targets table's (not gfx1100/1101/1151/120x: granule 24; not gfx103x: comgr's 8 vs 16), and
    HIP's wave cap equal to the hardware's (not gfx6-gfx908: HIP caps at 8, the hardware has 10)."""
    wave = 32 if t.major >= 10 else 64
    file = get_profile(HW_LIKE_PROFILE).vgpr_file(t)  # None where that runtime does not run t
    return (
        file == (t.vgprs[wave], t.vgpr_alloc_granule[wave])
        and file[1] & (file[1] - 1) == 0
        and max_waves_per_simd(t) == t.max_waves_per_simd
    )


# Not where the hw model refuses: gfx1250/gfx1251/gfx1250-strict/gfx1310 wave slots are unknown.
COMPARABLE = [t for t in TARGETS if _hip_matches_hardware_facts(t) and refusal(manual(t), "hw") is None]


def test_the_comparable_targets_are_the_expected_ones():
    assert {t.name for t in COMPARABLE} == {
        # (develop's device table, rocm-systems aaae694: no gfx940/941, gfx1154 or gfx117x)
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1102",
        "gfx1103",
        "gfx1150",
        "gfx1152",
        "gfx1153",
    }


@SETTINGS
@given(u=kernels(COMPARABLE, cu_mode_only=True), block=blocks, granules=st.integers(0, 40))
def test_hip_and_hw_agree_where_no_documented_quirk_applies(u, block, granules):
    # CU mode only: in WGP mode HIP keeps the CU's 64 KiB of LDS where the WGP pools 128 KiB.
    t = u.target
    lds = min(granules * t.lds_granule, t.lds_per_workgroup)  # LDS already on its granule
    u = u.with_(lds=lds)
    hip = compute(u, "hip", block, profile=HW_LIKE_PROFILE)
    hw = compute(u, "hw", block)
    assume(hip.error is None)
    waves_per_block = -(-block // u.wave)
    # HIP has no per-CU workgroup (barrier) limit; the hardware allows 16 multi-wave groups.
    assume(waves_per_block == 1 or hip.blocks_per_cu <= t.max_workgroups_per_cu)
    assert hip.blocks_per_cu == hw.blocks_per_cu, (hip.limits, hw.limits)
