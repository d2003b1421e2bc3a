"""tables/targets.toml against what an LLVM measurably does for each processor.

The oracle is tests/data/llvm22_target_probe.json, written by tools/probe_targets.py from llc-22
runs alone (it never imports amdocc). Processors LLVM 22 does not know are checked the same way
against tests/data/triton_llvm_target_probe.json, measured with the LLVM Triton 3.9 bundles
(24.0.0git), as that LLVM sees them (tables/llvm_rules.toml llvm-23, whose rules round LDS to its
granule). Which columns of which row each probe measures is decided in test_table_sources.py
(value_kind), which holds every other value to its naming rule or cited note.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from amdocc.models.llvm import sgpr_waves
from amdocc.models.llvm_rules import rules_named
from amdocc.targets import REGISTER_FILES, all_targets, target_by_mach
from test_table_sources import (
    MEASURED_COLUMNS,
    MEASURED_WHEN_ROUNDED,
    PROBE,
    RAW,
    SAME_FEATURES,
    TRITON_PROBE,
    _defining_row,
    measurement,
    perturbed,
    value_kind,
    written_values,
)

# The LLVM of the Triton probe: Triton 3.9.0's libtriton_amd_codegen.so, LLVM 24.0.0git at this
# revision (tools/triton_llc.py --revision; the library's own version string).
TRITON_LLVM = ("6bc4aaf6641c", 24)
# gfx940 and gfx941 left LLVM in 2025; the table gives them gfx942's facts (checked below).
MEASURED = [t for t in all_targets() if t.name in PROBE]
# Rows LLVM 22 cannot measure: the processors it does not know (since_llvm set).
NEWER = [t for t in all_targets() if t.since_llvm]


def test_every_llc_processor_has_a_row_and_every_row_but_gfx940_941_was_measured():
    llc_names = {name for name, p in PROBE.items() if p.get("kind") in ("processor", "generic")}
    assert llc_names == {t.name for t in MEASURED}
    newer = {name for name, p in TRITON_PROBE.items() if p.get("kind") in ("processor", "generic")} - llc_names
    assert newer == {t.name for t in NEWER} and len(newer) == 9
    assert {t.name for t in all_targets()} - llc_names - newer == {"gfx940", "gfx941"}


def test_gfx940_and_gfx941_are_gfx942_equivalents():
    """Gone from LLVM: every measured column is held to gfx942's measurement; mach to its note."""
    for name, mach in (("gfx940", 0x40), ("gfx941", 0x4B)):
        t = target_by_mach(mach)
        assert t.name == name and SAME_FEATURES[name] == "gfx942"
        compare_with_probe(t)


def compare_with_probe(t):
    """Row ``t`` against the probe that measured it (test_table_sources.measurement)."""
    which, _ = measurement(RAW, t.name)
    if which == "triton-llvm":
        rules = rules_named("llvm-23")
        assert_row_matches_probe(rules.target_view(t), TRITON_PROBE[t.name], rules.sgpr_occupancy, rounds_lds=True)
    else:
        p = PROBE[SAME_FEATURES.get(t.name, t.name)]
        assert_row_matches_probe(
            dataclasses.replace(t, mach=p["mach"]) if t.name in SAME_FEATURES else t, p, "step-table", rounds_lds=False
        )


@pytest.mark.parametrize("t", MEASURED, ids=[t.name for t in MEASURED])
def test_row_matches_llc(t):
    assert measurement(RAW, t.name)[0] == "llc-22"
    compare_with_probe(t)


@pytest.mark.parametrize("t", NEWER, ids=[t.name for t in NEWER])
def test_newer_row_matches_triton_llvm(t):
    """What Triton's LLVM 24.0.0git measures, as the llvm-23 rules see the row (gfx13's VGPR file
    is overridden there: that LLVM predates llvm PR #222615)."""
    assert measurement(RAW, t.name)[0] == "triton-llvm"
    compare_with_probe(t)


def test_since_llvm_is_set_exactly_where_llvm_22_does_not_know_the_processor():
    """The probes bound it: LLVM 22 does not know the processor and Triton's LLVM does, so it is
    23 or 24 (which of the two, only the row's cited note says: test_table_sources.py)."""
    assert TRITON_PROBE["_about"]["compiler_revision"].startswith(TRITON_LLVM[0])
    for t in all_targets():
        if t.name in PROBE or t.name in SAME_FEATURES:
            assert t.since_llvm is None, t.name
        else:
            assert t.name in TRITON_PROBE and 22 < t.since_llvm <= TRITON_LLVM[1], t.name


def test_breaking_any_measured_value_fails():
    """Every measured value the file writes, changed (in every row that inherits it), makes some
    row disagree with its probe: no measured column goes uncompared."""
    targets = {t.name: t for t in all_targets()}
    broken = Counter()
    for owner, column, value in written_values(RAW):
        rows = [
            name
            for name in RAW
            if _defining_row(RAW, name, column) == owner
            and (value_kind(RAW, name, column) or "").startswith("probe")
            and column != "isa_version"
        ]
        if not rows:
            continue
        wrong = perturbed(getattr(targets[owner], column), REGISTER_FILES)
        failures = 0
        for name in rows:
            try:
                compare_with_probe(dataclasses.replace(targets[name], **{column: wrong}))
            except AssertionError:
                failures += 1
        assert failures, (owner, column, value, wrong)
        broken[column] += 1
    assert set(broken) == MEASURED_COLUMNS | MEASURED_WHEN_ROUNDED  # each column compared somewhere
    print(
        f"\nmeasured values written in targets.toml, broken one at a time and caught by a probe: {sum(broken.values())}"
    )


def assert_row_matches_probe(t, p, sgpr_rule, rounds_lds):
    assert t.mach == p["mach"]
    assert t.is_generic == (p["kind"] == "generic")
    assert t.xnack == (p["xnack"] != "unsupported")
    assert t.sramecc == (p["sramecc"] != "unsupported")
    assert sorted(t.wave_sizes) == sorted(p["wave_sizes"]) and t.default_wave == p["default_wave"]
    assert t.wgp == ("wgp" in p["modes"])
    for wave in t.wave_sizes:
        v = p["vgpr"][str(wave)]
        assert (t.vgprs[wave], t.vgpr_alloc_granule[wave], t.vgpr_encode_granule[wave]) == (
            v["total"],
            v["alloc_granule"],
            v["encoding_granule"],
        ), wave
    file = p.get("agpr", {}).get("vgpr_file", "none") if p["agprs"] else "none"
    assert t.register_file == file
    max_waves = p["lds"].get("max_waves_model", {}).get("cu") or max(p["max_waves_per_simd"].values())
    assert t.max_waves_per_simd == max_waves
    assert t.addressable_sgprs == p["sgpr"]["addressable"]
    # SGPR occupancy: LLVM's step function over every count the probe compiled.
    steps = p["sgpr"]["occupancy"]
    if not p["sgpr"]["limits_occupancy"]:  # no steps, and nothing beyond them
        assert (t.sgpr_waves, t.sgpr_waves_beyond) == ((), 0)
    if "fixed_total" in p["sgpr"]:
        # SGPR-init-bug parts report one total whatever the kernel uses.
        ((limit, waves),) = steps
        assert limit == p["sgpr"]["fixed_total"] and sgpr_waves(t, limit, sgpr_rule) == waves
    lo = 0
    for limit, waves in [] if "fixed_total" in p["sgpr"] else steps:
        for n in range(lo + 1, limit + 1):
            assert min(sgpr_waves(t, n, sgpr_rule), t.max_waves_per_simd) == min(waves, max_waves), n
        lo = limit
    lds = p["lds"]
    assert t.lds_per_workgroup == lds["max_per_workgroup"]["cu"]
    assert lds["pool"]["cu"] == t.lds_per_workgroup  # LLVM's pool is the addressable size
    assert lds["eus_per_cu"]["cu"] == t.simds_per_cu
    if t.wgp:
        assert lds["pool"]["wgp"] == 2 * t.lds_per_workgroup and lds["eus_per_cu"]["wgp"] == 2 * t.simds_per_cu
        assert t.max_lds_per_workgroup(wgp=True) == lds["max_per_workgroup"]["wgp"]
    else:
        assert t.lds_per_workgroup_wgp is None
    for mode, (low, high) in p["workgroups"]["max_wgs_per_cu"].items():
        cap = t.max_workgroups_per_wgp if mode == "wgp" else t.max_workgroups_per_cu
        assert low <= cap and (high is None or cap <= high), (mode, cap, low, high)
    if rounds_lds:  # LLVM 23+ rounds LDS to its granule, so the probe measures it
        assert lds["rounded_to_granule"] is True and set(lds["granule"].values()) == {t.lds_granule}
    else:
        assert lds["rounded_to_granule"] is False  # LLVM 22 never rounds; the granule is a hardware fact


def test_every_row_has_a_source_note():
    for t in all_targets():
        assert t.source.strip(), t.name


@pytest.mark.parametrize("t", MEASURED, ids=lambda t: t.name)
def test_vgpr_file_in_wave32_units_where_llc_gives_wave64_half_the_wave32_file(t):
    # llc-22's '; Occupancy:' sweep measured the VGPR file per wave size: where a processor runs
    # wave32 at all, a wave64 kernel sees exactly half the registers (each takes two wave32 rows),
    # which is the fact the hip and hw models halve the file for.
    # (gfx1250 runs wave32 only: nothing to halve, its file is still in wave32 units).
    vgpr = PROBE[t.name]["vgpr"]
    assert t.vgpr_file_in_wave32_units == ("32" in vgpr)
    if "32" in vgpr and "64" in vgpr:
        assert vgpr["64"]["total"] * 2 == vgpr["32"]["total"]
