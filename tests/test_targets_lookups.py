"""targets.py: names, lookups and the table's own consistency checks.

Expected values come from LLVM's naming (AMDGPUUsage.rst: target triple
``amdgcn-amd-amdhsa``, target ids ``<processor>[:feature(+|-)]*``, EF_AMDGPU_MACH values) and
the register-file rule of docs/code-object-format.md §2.3 (the unified total is alignTo(arch, 4) + agpr only when AGPRs
are used).
"""

from __future__ import annotations

import pytest

import amdocc.targets as targets
from amdocc.errors import UnknownTargetError
from amdocc.targets import get_target, processor_name, strip_triple, target_by_isa_version, target_by_mach


@pytest.mark.parametrize(
    "text,name",
    [
        ("amdgcn-amd-amdhsa--gfx90a:xnack-", "gfx90a"),
        ("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942"),
        ("  GFX1100 ", "gfx1100"),
        ("gfx950", "gfx950"),
    ],
)
def test_processor_name_of_a_target_id(text, name):
    assert processor_name(text) == name


def test_strip_triple_keeps_the_features():
    assert strip_triple("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-") == "gfx942:sramecc+:xnack-"
    assert strip_triple("openmp-amdgcn-amd-amdhsa--gfx90a") == "gfx90a"
    assert strip_triple(" gfx1100 ") == "gfx1100"


def test_lookups():
    assert get_target("amdgcn-amd-amdhsa--gfx942:xnack-").name == "gfx942"
    with pytest.raises(UnknownTargetError, match="'gfx999'"):
        get_target("gfx999")
    assert targets.find_target("gfx999") is None and targets.find_target("gfx90a").name == "gfx90a"
    # EF_AMDGPU_MACH (AMDGPUUsage.rst): 0x4c gfx942, 0x3f gfx90a, 0x5f gfx9-4-generic.
    assert (target_by_mach(0x4C).name, target_by_mach(0x3F).name, target_by_mach(0x5F).name) == (
        "gfx942",
        "gfx90a",
        "gfx9-4-generic",
    )
    assert target_by_mach(0xFE) is None
    # CO v2 ISA versions name real processors, never the generic ones with the same numbers.
    assert target_by_isa_version((9, 0, 10)).name == "gfx90a"
    assert target_by_isa_version((9, 0, 0)).name == "gfx900"  # not gfx9-generic
    assert target_by_isa_version((11, 0, 0)).name == "gfx1100"  # not gfx11-generic
    assert target_by_isa_version((9, 4, 0)).name == "gfx940"  # not gfx9-4-generic
    assert target_by_isa_version((1, 2, 3)) is None


def test_simds_and_the_register_file_rule():
    gfx1100, gfx942, gfx908 = get_target("gfx1100"), get_target("gfx942"), get_target("gfx908")
    assert (gfx1100.simds(True), gfx1100.simds(False), gfx942.simds(False)) == (4, 2, 4)
    assert gfx942.total_vgprs(41, 0) == 41  # no AGPRs: no alignment
    assert gfx942.total_vgprs(41, 1) == 45  # alignTo(41, 4) + 1
    assert gfx942.total_vgprs(44, 8) == 52
    assert gfx908.total_vgprs(41, 64) == 64 and gfx908.total_vgprs(100, 64) == 100
    assert get_target("gfx906").total_vgprs(41, 0) == 41
    assert (gfx942.is_generic, get_target("gfx9-4-generic").is_generic) == (False, True)
    assert (gfx942.has_agprs, gfx1100.has_agprs, gfx942.major, gfx1100.major) == (True, False, 9, 11)
    assert (gfx942.sgprs_limit_occupancy, gfx1100.sgprs_limit_occupancy) == (True, False)
    assert get_target("gfx9-generic").generic_of[:2] == ("gfx900", "gfx902")
    assert get_target("gfx942").generic_of == ()  # membership is never inherited by `like`
    assert (gfx1100.lds_per_wgp, gfx942.lds_per_wgp, gfx942.max_workgroups_per_wgp) == (131072, None, None)


@pytest.fixture
def table(monkeypatch):
    """A hand-made table for the loader. The loader runs uncached (``__wrapped__``): the cached
    targets are singletons other caches hold, and must stay the same objects."""
    rows = {}
    monkeypatch.setattr(targets, "load_table", lambda name: rows)
    return rows


def _load():
    return targets._targets.__wrapped__()


def _row(**changes):
    from amdocc.tabledata import load_table

    row = {k: v for k, v in load_table("targets.toml")["gfx600"].items() if k != "cite"}
    row.update(changes)
    return row


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"register_file": "shared"}, "column 'register_file': 'shared' is not one of none, separate, unified"),
        ({"descriptor_layout": "gfx99"}, "column 'descriptor_layout': 'gfx99' is not one of"),
        ({"wave_sizes": [32, 64]}, "column 'vgprs': no w32 entry"),
        ({"vgprs": {"x64": 256}}, "column 'x64': is not a wave size"),
    ],
)
def test_a_bad_row_is_refused(table, changes, message):
    table["gfx600"] = _row(**changes)
    with pytest.raises(ValueError, match=message):
        _load()


def test_like_must_name_a_row_above_and_machs_must_be_unique(table, monkeypatch):
    table["gfx601"] = {"like": "gfx600", "mach": 0x21}
    table["gfx600"] = _row()
    with pytest.raises(ValueError, match="not above it"):
        _load()
    table.clear()
    table["gfx600"] = _row()
    table["gfx601"] = {"like": "gfx600"}  # same mach 0x20 as its parent
    built = _load()
    monkeypatch.setattr(targets, "_targets", lambda: built)
    with pytest.raises(ValueError, match="mach 0x20 used by gfx600 and gfx601"):
        targets._by_mach.__wrapped__()


def test_a_row_without_its_own_source_names_the_row_it_copies(table):
    table["gfx600"] = _row()
    table["gfx601"] = {"like": "gfx600", "mach": 0x21}
    t = _load()["gfx601"]
    assert t.source == "as gfx600: " + table["gfx600"]["source"]
    assert (t.mach, t.lds_granule) == (0x21, 256)


def test_the_real_targets_stay_the_same_objects():
    # What the tests above must not disturb: devices and models hold these very objects.
    assert get_target("gfx942") is targets.all_targets()[[t.name for t in targets.all_targets()].index("gfx942")]
