"""comgr, the HIP runtime's own code-object manager, as an oracle for the tables (issue 17 item 6).

The ROCm 7.14 runtime's libamd_comgr (from the pinned vapoursynth-dfttest2-hip wheel) answers
amd_comgr_get_isa_metadata for every ISA it knows (tools/comgr_isa.py asks it with ctypes; the
answer is recorded in tests/data/comgr_isa_metadata.json, and the first test holds the record to
the live library). Against it:
- tables/targets.toml: every value comgr states (VGPR file and granule, addressable VGPRs and
  SGPRs, SGPR granule and file, LDS per CU, SIMDs, xnack/sramecc), with the known disagreements
  listed exactly (a new one, or one that went away, fails);
- tables/hip_profiles.toml: the VGPR file and granule of every processor the rocm-7.14 profile
  runs are what its comgr says (that runtime takes them from comgr: docs/hip-occupancy.md §1), and it
  runs no ISA its comgr does not know. The file is read through amdocc (the profile code resolves
  `like` chains), the expected values are comgr's.
test_table_sources.py takes four of these columns as the values' source ("comgr" kind).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from amdocc.models.hip_profiles import get_profile, profiles
from amdocc.targets import MAX_WORKGROUP_SIZE, Target, all_targets, find_target
from comgr_isa import RECORD, find_comgr, read_all
from conftest import skip_unless_required

RECORDED = json.loads(RECORD.read_text())
ISAS: dict[str, dict] = RECORDED["isas"]


def _wave(t: Target) -> int:
    # comgr counts VGPRs in wave32 units where wave32 exists (HIP halves them for wave64).
    return 32 if 32 in t.wave_sizes else 64


def comgr_view(t: Target) -> dict[str, object]:
    """The targets.toml values a row must have for comgr's metadata to hold (name -> value)."""
    w = _wave(t)
    return {
        "vgprs": t.vgprs[w],
        "vgpr_alloc_granule": t.vgpr_alloc_granule[w],
        "addressable_vgprs": t.addressable_vgprs,
        "addressable_sgprs": t.addressable_sgprs,
        "sgpr_alloc_granule": t.sgpr_alloc_granule,
        "sgprs_per_simd": t.sgprs_per_simd,
        "lds_per_cu": t.lds_per_cu,
        "simds (per WGP where it has WGPs)": t.simds(t.wgp),
        "max_workgroup_size": MAX_WORKGROUP_SIZE,
        "xnack": t.xnack,
        "sramecc": t.sramecc,
    }


def comgr_says(md: dict) -> dict[str, object]:
    return {
        "vgprs": int(md["TotalNumVGPRs"]),
        "vgpr_alloc_granule": int(md["VGPRAllocGranule"]),
        "addressable_vgprs": int(md["AddressableNumVGPRs"]),
        "addressable_sgprs": int(md["AddressableNumSGPRs"]),
        "sgpr_alloc_granule": int(md["SGPRAllocGranule"]),
        "sgprs_per_simd": int(md["TotalNumSGPRs"]),
        "lds_per_cu": int(md["LocalMemorySize"]),
        "simds (per WGP where it has WGPs)": int(md["EUsPerCU"]),
        "max_workgroup_size": int(md["MaxFlatWorkGroupSize"]),
        "xnack": "xnack" in md["Features"],
        "sramecc": "sramecc" in md["Features"],
    }


# Where the table and comgr 3.3 disagree, and why the table is right for what it models.
GFX103 = ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx10-3-generic")
GFX10_PLUS = [n for n in ISAS if find_target(n) is not None and find_target(n).isa_version[0] >= 10]
KNOWN_DISAGREEMENTS = {
    # LLVM 22 (llc-22, measured by tests/data/llvm22_target_probe.json) allocates gfx10.3 wave32
    # VGPRs in granules of 16; comgr keeps its older table's 8 (docs/hip-occupancy.md §7). The
    # targets table holds the compiler's; the HIP profiles that read comgr hold 8 (tested below).
    **{(n, "vgpr_alloc_granule"): (16, 8) for n in GFX103},
    # comgr's TotalNumSGPRs is 800 on every gfx8+ ISA; from gfx10 SGPRs are per wave, not a shared
    # file (the table's 0; HIP sets sgprsPerSimd to UINT32_MAX there, docs/hip-occupancy.md §1).
    **{(n, "sgprs_per_simd"): (0, 800) for n in GFX10_PLUS},
    # comgr reports 64 KiB for gfx950 (ROCm/llvm-project#4099); its HSA group segment, which HIP
    # reads, is 160 KiB (rocminfo on MI355X, docs/hip-occupancy.md §1).
    ("gfx950", "lds_per_cu"): (163840, 65536),
}


def disagreements(targets: dict[str, Target]) -> tuple[dict, Counter]:
    found, agreed = {}, Counter()
    for name, md in ISAS.items():
        t = targets.get(name)
        if t is None:
            continue
        ours, theirs = comgr_view(t), comgr_says(md)
        for key in ours:
            if ours[key] == theirs[key]:
                agreed[key] += 1
            else:
                found[name, key] = (ours[key], theirs[key])
    return found, agreed


def test_the_record_is_what_the_runtimes_comgr_answers():
    path = find_comgr()
    if path is None:
        skip_unless_required("no comgr library here (run .ci/setup-tests.sh, or set AMDOCC_COMGR)")
    live = read_all(path)
    assert live["comgr_version"] == RECORDED["comgr_version"] == "3.3"
    assert live["isas"] == ISAS
    assert len(ISAS) >= 50


def test_every_isa_comgr_knows_is_a_targets_row():
    assert [n for n in ISAS if find_target(n) is None] == []
    assert {n for n in ISAS} >= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"}


def test_targets_table_agrees_with_comgr_but_where_known():
    targets = {t.name: t for t in all_targets()}
    found, agreed = disagreements(targets)
    assert found == KNOWN_DISAGREEMENTS
    assert sum(agreed.values()) >= 550
    print(
        f"\ntargets.toml values comgr {RECORDED['comgr_version']} confirms, per column "
        f"({len([n for n in ISAS if n in targets])} ISAs): {dict(sorted(agreed.items()))}; "
        f"known disagreements: {len(found)}"
    )


@pytest.mark.parametrize(
    "row,key,wrong",
    [
        ("gfx950", "vgprs", 256),  # the pre-2025 HIP table's gfx950 file
        ("gfx942", "vgpr_alloc_granule", 4),
        ("gfx1100", "vgpr_alloc_granule", 16),
        ("gfx1201", "vgprs", 1024),
        ("gfx90a", "addressable_vgprs", 256),
        ("gfx942", "sgprs_per_simd", 512),
        ("gfx1100", "lds_per_cu", 131072),
        ("gfx942", "sramecc", False),
    ],
)
def test_a_table_value_comgr_contradicts_fails(row, key, wrong):
    from dataclasses import replace

    targets = {t.name: t for t in all_targets()}
    t = targets[row]
    w = _wave(t)
    field = {"vgprs": "vgprs", "vgpr_alloc_granule": "vgpr_alloc_granule"}.get(key)
    changed = replace(t, **{field: {**getattr(t, field), w: wrong}}) if field else replace(t, **{key: wrong})
    found, _ = disagreements({**targets, row: changed})
    assert found[row, key][0] == wrong and found != KNOWN_DISAGREEMENTS


def _comgr_file(name: str) -> tuple[int, int]:
    return int(ISAS[name]["TotalNumVGPRs"]), int(ISAS[name]["VGPRAllocGranule"])


def profile_problems(p) -> tuple[dict, dict]:
    """(the processors a profile runs, {processor: (its file, comgr's)} where they differ)."""
    runs = {t.name: p.vgpr_file(t) for t in all_targets() if p.vgpr_file(t) is not None}
    unknown = sorted(set(runs) - set(ISAS))
    assert unknown == [], f"{p.name} runs ISAs its comgr does not know: {unknown}"
    return runs, {name: (file, _comgr_file(name)) for name, file in runs.items() if file != _comgr_file(name)}


def test_rocm_7_14_profile_reads_its_own_comgr():
    """rocm-7.14's runtime takes VGPRs per SIMD and their granule from this very comgr."""
    runs, wrong = profile_problems(get_profile("rocm-7.14"))
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"} <= set(runs)
    assert wrong == {}
    print(f"\nrocm-7.14 VGPR files equal comgr {RECORDED['comgr_version']}'s for all {len(runs)} processors it runs")


def test_profiles_sharing_rocm_7_14s_vgpr_table_hold_comgrs_values():
    """Every profile with 7.14's VGPR table (7.13, develop) holds comgr 3.3's files too, gfx10.3's
    granule of 8 included; the profiles that take SGPR granules from comgr get comgr's."""
    table = get_profile("rocm-7.14").vgpr_table
    sharing = [p for p in profiles().values() if p.unknown is None and p.vgpr_table == table]
    assert len({p.name for p in sharing}) >= 2
    for p in sharing:
        assert profile_problems(p)[1] == {}, p.name
    assert get_profile("rocm-7.14").vgpr_file(find_target("gfx1030")) == (1024, 8)
    targets = {t.name: t for t in all_targets()}
    for p in profiles().values():
        if p.unknown is None and p.sgpr_granule is None:
            for name in ISAS:
                assert targets[name].sgpr_alloc_granule == int(ISAS[name]["SGPRAllocGranule"]), (p.name, name)


def test_a_profile_vgpr_file_comgr_contradicts_fails():
    from dataclasses import replace

    p = get_profile("rocm-7.14")
    broken = replace(p, vgpr_table={**p.vgpr_table, "gfx1030": [1024, 16]})  # LLVM's granule, not comgr's
    assert profile_problems(broken)[1] == {"gfx1030": ((1024, 16), (1024, 8))}
    beyond = replace(p, vgpr_table={**p.vgpr_table, "gfx1310": [1536, 24]})  # an ISA comgr 3.3 lacks
    with pytest.raises(AssertionError, match="gfx1310"):
        profile_problems(beyond)
