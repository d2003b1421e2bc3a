"""tables/targets.toml against what llc-22 measurably does for each processor.

The oracle is tests/data/llvm22_target_probe.json, written by tools/probe_targets.py from llc-22
runs alone (it never imports amdocc). Facts LLVM cannot show (the hardware LDS granule, the
hardware LDS per CU on gfx6) are checked against their cited sources in the table instead.
Processors LLVM 22 does not know are checked the same way against
tests/data/triton_llvm_target_probe.json, measured with the LLVM Triton 3.9 bundles (24.0.0git),
as that LLVM sees them (tables/llvm_rules.toml llvm-23, whose rules round LDS to its granule).
"""
from __future__ import annotations

import json

import pytest

from amdocc.models.llvm import sgpr_waves
from amdocc.models.llvm_rules import rules_named
from amdocc.tabledata import load_table
from amdocc.targets import all_targets, get_target, target_by_mach
from conftest import TESTS

PROBE = json.loads((TESTS / "data" / "llvm22_target_probe.json").read_text())
TRITON_PROBE = json.loads((TESTS / "data" / "triton_llvm_target_probe.json").read_text())
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
    ref = get_target("gfx942")
    for name, mach in (("gfx940", 0x40), ("gfx941", 0x4B)):
        t = target_by_mach(mach)
        assert t.name == name
        for field in ("vgprs", "vgpr_alloc_granule", "register_file", "max_waves_per_simd",
                      "lds_per_workgroup", "sgpr_waves", "descriptor_layout", "xnack", "sramecc"):
            assert getattr(t, field) == getattr(ref, field), (name, field)


@pytest.mark.parametrize("t", MEASURED, ids=[t.name for t in MEASURED])
def test_row_matches_llc(t):
    assert_row_matches_probe(t, PROBE[t.name], "step-table", rounds_lds=False)


@pytest.mark.parametrize("t", NEWER, ids=[t.name for t in NEWER])
def test_newer_row_matches_triton_llvm(t):
    """What Triton's LLVM 24.0.0git measures, as the llvm-23 rules see the row (gfx13's VGPR file
    is overridden there: that LLVM predates llvm PR #222615)."""
    rules = rules_named("llvm-23")
    assert_row_matches_probe(rules.target_view(t), TRITON_PROBE[t.name], rules.sgpr_occupancy, rounds_lds=True)


def test_newer_rows_cite_every_column():
    """LLVM 22 cannot measure these rows, so each column (inherited ones too) names its source."""
    raw = load_table("targets.toml")
    merged: dict[str, dict] = {}
    for name, row in raw.items():
        merged[name] = {k: v for k, v in merged.get(row.get("like"), {}).items() if k != "generic_of"}
        merged[name].update({k: v for k, v in row.items() if k not in ("like", "source")})
    for t in NEWER:
        columns = set(merged[t.name]) - {"cite"}
        cite = raw[t.name].get("cite", {})
        assert columns == set(cite) and all(str(v).strip() for v in cite.values()), (t.name, columns ^ set(cite))


def assert_row_matches_probe(t, p, sgpr_rule, rounds_lds):
    assert t.mach == p["mach"]
    assert t.is_generic == (p["kind"] == "generic")
    assert t.xnack == (p["xnack"] != "unsupported")
    assert t.sramecc == (p["sramecc"] != "unsupported")
    assert sorted(t.wave_sizes) == sorted(p["wave_sizes"]) and t.default_wave == p["default_wave"]
    assert t.wgp == ("wgp" in p["modes"])
    for wave in t.wave_sizes:
        v = p["vgpr"][str(wave)]
        assert (t.vgprs[wave], t.vgpr_alloc_granule[wave], t.vgpr_encode_granule[wave]) == \
            (v["total"], v["alloc_granule"], v["encoding_granule"]), wave
    file = p.get("agpr", {}).get("vgpr_file", "none") if p["agprs"] else "none"
    assert t.register_file == file
    max_waves = p["lds"].get("max_waves_model", {}).get("cu") or max(p["max_waves_per_simd"].values())
    assert t.max_waves_per_simd == max_waves
    assert t.addressable_sgprs == p["sgpr"]["addressable"]
    # SGPR occupancy: LLVM's step function over every count the probe compiled.
    steps = p["sgpr"]["occupancy"]
    if "fixed_total" in p["sgpr"]:
        # SGPR-init-bug parts report one total whatever the kernel uses.
        (limit, waves), = steps
        assert limit == p["sgpr"]["fixed_total"] and sgpr_waves(t, limit, sgpr_rule) == waves
    lo = 0
    for limit, waves in ([] if "fixed_total" in p["sgpr"] else steps):
        for n in range(lo + 1, limit + 1):
            assert min(sgpr_waves(t, n, sgpr_rule), t.max_waves_per_simd) == min(waves, max_waves), n
        lo = limit
    lds = p["lds"]
    assert t.lds_per_workgroup == lds["max_per_workgroup"]["cu"]
    assert lds["pool"]["cu"] == t.lds_per_workgroup          # LLVM's pool is the addressable size
    assert lds["eus_per_cu"]["cu"] == t.simds_per_cu
    if t.wgp:
        assert lds["pool"]["wgp"] == 2 * t.lds_per_workgroup and lds["eus_per_cu"]["wgp"] == 2 * t.simds_per_cu
    for mode, (low, high) in p["workgroups"]["max_wgs_per_cu"].items():
        cap = t.max_workgroups_per_wgp if mode == "wgp" else t.max_workgroups_per_cu
        assert low <= cap and (high is None or cap <= high), (mode, cap, low, high)
    if rounds_lds:   # LLVM 23+ rounds LDS to its granule, so the probe measures it
        assert lds["rounded_to_granule"] is True and set(lds["granule"].values()) == {t.lds_granule}
    else:
        assert lds["rounded_to_granule"] is False   # LLVM 22 never rounds; the granule is a hardware fact


def test_every_row_has_a_source_note():
    for t in all_targets():
        assert t.source.strip(), t.name
