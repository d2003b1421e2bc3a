"""The loaders of targets.toml, hip_profiles.toml and llvm_rules.toml refuse a broken row with a
message naming the table, the row and the value, word for word.

Each test hands a loader the real table with one value broken (the loaders run uncached through
``__wrapped__``, so the cached singletons stay untouched), plus the lookups that refuse a name.
"""

from __future__ import annotations

import copy

import pytest

from amdocc import AmdoccError, targets
from amdocc.models import hip_profiles, llvm_rules
from amdocc.models.llvm_rules import alias_version
from amdocc.tabledata import load_table
from amdocc.targets import get_target


def _broken(monkeypatch, module, table, change):
    raw = copy.deepcopy(load_table(table))
    change(raw)
    monkeypatch.setattr(module, "load_table", lambda name: raw)


def _gfx600(**changes):
    row = {k: v for k, v in load_table("targets.toml")["gfx600"].items() if k != "cite"}
    return {**row, **changes}


@pytest.mark.parametrize(
    "rows,message",
    [
        (
            {"gfx600": _gfx600(register_file="shared")},
            "targets.toml [gfx600] column 'register_file': 'shared' is not one of none, separate, unified",
        ),
        (
            {"gfx600": _gfx600(descriptor_layout="gfx99")},
            "targets.toml [gfx600] column 'descriptor_layout': 'gfx99' is not one of "
            "gfx6, gfx90a, gfx10, gfx11, gfx12, gfx1250, gfx13",
        ),
        ({"gfx600": _gfx600(wave_sizes=[32, 64])}, "targets.toml [gfx600] column 'vgprs': no w32 entry"),
        (
            {"gfx600": _gfx600(vgprs={"x64": 256})},
            "targets.toml [gfx600.vgprs] column 'x64': is not a wave size (w32 or w64)",
        ),
        (
            {"gfx601": {"like": "gfx600"}, "gfx600": _gfx600()},
            "targets.toml [gfx601] is like 'gfx600', which is not above it",
        ),
        (
            {"gfx600": _gfx600(wgp=True, lds_per_wgp=131072)},
            "targets.toml [gfx600]: a row with WGP mode needs lds_per_wgp and max_workgroups_per_wgp",
        ),
        (
            {"gfx600": _gfx600(wgp=True, max_workgroups_per_wgp=32)},
            "targets.toml [gfx600]: a row with WGP mode needs lds_per_wgp and max_workgroups_per_wgp",
        ),
    ],
)
def test_a_bad_targets_row_is_refused_naming_it(monkeypatch, rows, message):
    monkeypatch.setattr(targets, "load_table", lambda name: rows)
    with pytest.raises(ValueError) as err:
        targets._targets.__wrapped__()
    assert str(err.value) == message


def test_two_rows_with_one_mach_are_refused(monkeypatch):
    rows = {"gfx600": _gfx600(), "gfx601": {"like": "gfx600"}}  # gfx600's mach, 0x20, twice
    monkeypatch.setattr(targets, "load_table", lambda name: rows)
    built = targets._targets.__wrapped__()
    monkeypatch.setattr(targets, "_targets", lambda: built)
    with pytest.raises(ValueError) as err:
        targets._by_mach.__wrapped__()
    assert str(err.value) == "targets.toml: mach 0x20 used by gfx600 and gfx601"


def test_target_lookups_refuse_naming_what_is_wrong():
    with pytest.raises(AmdoccError) as err:
        get_target("gfx9999:xnack-")
    assert str(err.value) == (
        "unknown processor 'gfx9999': not a processor amdocc knows "
        "(tables/targets.toml holds those LLVM and ROCm define)"
    )
    # amdgpu9.42 is gfx942's subarch (LLVM's TargetParser); gfx90a after it contradicts it.
    with pytest.raises(AmdoccError) as err:
        get_target(" amdgpu9.42-amd-amdhsa-unknown-gfx90a ")
    assert (
        str(err.value)
        == "'amdgpu9.42-amd-amdhsa-unknown-gfx90a' names gfx942 in its triple (amdgpu9.42) but gfx90a after it"
    )


def test_hip_profile_rows_must_say_what_an_inference_rests_on(monkeypatch):
    def guess(raw):
        raw["profiles"]["rocm-7.0"]["evidence"] = "a guess"

    _broken(monkeypatch, hip_profiles, "hip_profiles.toml", guess)
    with pytest.raises(ValueError) as err:
        hip_profiles._table.__wrapped__()
    assert str(err.value) == (
        "hip_profiles.toml: profile 'rocm-7.0': evidence must say what it is inferred from "
        "(\"inferred from ...\"), got 'a guess'"
    )


@pytest.mark.parametrize("alias,target", [("2025", "rocm-0.1"), ("rocm-6.4", "develop")])
def test_an_alias_must_name_a_profile_and_not_shadow_one(monkeypatch, alias, target):
    _broken(monkeypatch, hip_profiles, "hip_profiles.toml", lambda raw: raw["aliases"].update({alias: target}))
    with pytest.raises(ValueError) as err:
        hip_profiles._table.__wrapped__()
    assert str(err.value) == f"hip_profiles.toml: alias {alias!r} -> {target!r} is not a profile of its own"


def test_llvm_rule_rows_are_checked(monkeypatch):
    _broken(monkeypatch, llvm_rules, "llvm_rules.toml", lambda raw: raw["llvm-22"].update(sgpr_occupancy="linear"))
    with pytest.raises(ValueError) as err:
        llvm_rules.rule_sets.__wrapped__()
    assert str(err.value) == (
        "llvm_rules.toml [llvm-22] column 'sgpr_occupancy': 'linear' is not one of step-table, budget-inverse"
    )
    monkeypatch.undo()

    def waves(raw):
        raw["llvm-23"]["overrides"]["gfx1310"]["max_waves_per_simd"] = 8

    _broken(monkeypatch, llvm_rules, "llvm_rules.toml", waves)
    with pytest.raises(ValueError) as err:
        llvm_rules.rule_sets.__wrapped__()
    assert str(err.value).startswith(
        "llvm_rules.toml [llvm-23.overrides.gfx1310] column 'max_waves_per_simd': cannot be overridden (only vgprs, "
    )


def test_the_old_switches_need_a_rule_set_that_brought_them(monkeypatch):
    oldest = llvm_rules.rule_sets()[:1]  # llvm-22 alone: neither rounds LDS nor inverts the budget
    monkeypatch.setattr(llvm_rules, "rule_sets", lambda: oldest)
    with pytest.raises(AmdoccError) as err:
        alias_version(True, False)
    assert str(err.value) == "no rule set rounds LDS or inverts the SGPR budget"
    monkeypatch.undo()
    assert alias_version(True, False) == alias_version(False, True) == "llvm-23"
    assert alias_version(False, False) is None
