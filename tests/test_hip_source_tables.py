"""tables/hip_profiles.toml against HIP's own source, value by value.

tests/data/hip_source_tables.json is what tools/hip_source_tables.py read from CLR at each ROCm
release's tags or commits (ROCm/clr, smajidzahedi/clr, jeffdaily/clr, and the rocm-systems
develop commits in NautRobot/Eze-P, those pinned by ROCm/TheRock's tags included; before CLR,
ROCm/hipamd and ROCm/ROCclr at ROCm 5.2's tags, where the occupancy function's own if-chain set
the VGPR file): per processor
the runtime runs (device.cpp's ROC column), the VGPRs per SIMD and granule rocdevice.cpp gives it
(its ISA-version switch run for that processor), and the SGPR divisor of hip_platform.cpp's
occupancy function (granule and trap reserve). The tool does not import amdocc; the numbers carry
their repository, revision and file. From rocm-systems 7fd322a the VGPR values come from comgr,
whose source the tool does not read: for those releases it gives the processor list and the SGPR divisor
only, and this test holds their VGPR values to comgr's ISA table (tests/data/comgr_isa_vgprs.json).
The JSON's freshness is `python3 tools/hip_source_tables.py --check`, where the mirrors exist.
ROCm 10.0 and 10.1 pin rocm-systems commits no mirror has, and the develop snapshots follow PRs
no mirror has: for them the newest develop device table read (aaae694; 55feeef and 318d138 for
develop-2025) gives the processors, and where rocm-systems PR #10618 applies (develop, 10.1) the
SGPR divisor is the PR's, not aaae694's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amdocc.models.hip import profiles

ROOT = Path(__file__).resolve().parent.parent
DATA = json.loads((ROOT / "tests" / "data" / "hip_source_tables.json").read_text())
RELEASES = DATA["releases"]
OWN = {name: p for name, p in profiles().items() if p.name == name}
NOT_READ: set[str] = set()
# rocm-systems PR #10618 (merged 2026-08-26, after every develop commit read): the SGPR granule is
# comgr's SGPRAllocGranule ("target") and each wave pays 16 more trap-handler SGPRs.
PR10618 = {"develop", "rocm-10.1"}

# Values compared per profile: 2 per processor whose VGPR file the source sets (switch releases),
# plus the SGPR granule and trap reserve. rocm-5.6: 30 processors; 5.7: 33; 6.0, 6.1: 35; 6.2: 37;
# 6.3: 34 (gfx700-702 gone); 6.4: 36; 7.0: 35 (gfx950 in, gfx940/941 out); 7.x, 10.x and develop
# from comgr: 2. rocm-5.2: 25 processors (gfx700 .. gfx1035) from hipamd's if-chain.
EXPECTED_COUNTS = {
    "rocm-5.2": 52,
    "rocm-5.6": 62,
    "rocm-5.7": 68,
    "rocm-6.0": 72,
    "rocm-6.1": 72,
    "rocm-6.2": 76,
    "rocm-6.3": 70,
    "rocm-6.4": 74,
    "rocm-7.0": 72,
    "rocm-7.1": 2,
    "rocm-7.2": 2,
    "rocm-7.9": 2,
    "rocm-7.10": 2,
    "rocm-7.11": 2,
    "rocm-7.12": 2,
    "rocm-7.13": 2,
    "rocm-7.14": 2,
    "rocm-10.0": 2,
    "rocm-10.1": 2,
    "develop-2025": 2,
    "develop": 2,
}


def table_rows(profile):
    return dict(profile.vgpr_table)


def compare(name):
    """(mismatches, number of values compared) for one profile."""
    profile, read = OWN[name], RELEASES[name]
    rows, wrong, count = table_rows(profile), [], 0
    for processor, source in read["processors"].items():
        if "vgprs_per_simd" not in source:
            continue  # comgr's value: not in these mirrors
        cite = source["source"]
        for what, table_value, source_value in (
            ("VGPRs per SIMD", rows[processor][0], source["vgprs_per_simd"]),
            ("granule", rows[processor][1], source["granule"]),
        ):
            count += 1
            if int(table_value) != source_value:
                wrong.append(
                    f"{name} {processor} {what}: table {table_value}, source {source_value} "
                    f"({cite['repo']} {cite['revision']} {cite['file']}:{cite['lines']})"
                )
    sgpr = read["sgpr"]
    cite = f"({sgpr['source']['repo']} {sgpr['source']['revision']} {sgpr['source']['file']})"
    if name in PR10618:
        sgpr = {"granule": "target", "trap_reserve": 16}
        cite = "(rocm-systems PR #10618)"
    count += 2
    if profile.sgpr_trap_reserve != sgpr["trap_reserve"]:
        wrong.append(
            f"{name} sgpr_trap_reserve: table {profile.sgpr_trap_reserve}, source {sgpr['trap_reserve']} {cite}"
        )
    if profile.sgpr_granule != (None if sgpr["granule"] == "target" else int(sgpr["granule"])):
        wrong.append(f"{name} sgpr_granule: table {profile.sgpr_granule!r}, source {sgpr['granule']} {cite}")
    return wrong, count


def test_every_profile_is_read_or_named_as_not_read():
    assert set(OWN) == set(RELEASES) | NOT_READ
    assert not NOT_READ & set(RELEASES)


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_source_read_is_the_one_the_profile_cites(name):
    # Inferred profiles name the develop commits they are inferred from in `source`/`evidence`.
    profile = OWN[name]
    cited = f"{profile.source} {profile.evidence or ''}"
    for read in RELEASES[name]["read"]:
        revision = read["revision"].split(" ")[0]
        assert revision in cited or read["commit"][:9] in cited, (name, read)
    for missing in RELEASES[name]["unreadable"]:
        assert missing["pins_rocm_systems"][:7] in cited, (name, missing)


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_processors_run_are_the_table_rows(name):
    listed, rows = set(RELEASES[name]["processors"]), set(table_rows(OWN[name]))
    assert listed - rows == set(), f"{name}: the source runs these, the table lacks them"
    assert rows - listed == set(), f"{name}: the table has these, the source does not run them"


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_values_match_the_source(name):
    wrong, count = compare(name)
    assert wrong == []
    assert count == EXPECTED_COUNTS[name] > 0


def test_total_values_compared():
    total = sum(compare(name)[1] for name in RELEASES)
    assert total == sum(EXPECTED_COUNTS.values()) == 642


# From rocm-systems 7fd322a rocdevice.cpp takes each processor's VGPR file from comgr's ISA table;
# tests/data/comgr_isa_vgprs.json holds that table's numbers at the commit the profiles cite.
COMGR = json.loads((ROOT / "tests" / "data" / "comgr_isa_vgprs.json").read_text())
COMGR_RELEASES = sorted(
    name for name in RELEASES if not any("vgprs_per_simd" in p for p in RELEASES[name]["processors"].values())
)


def test_the_comgr_releases_are_the_7x_ones():
    expected = ["rocm-7.1", "rocm-7.2", "rocm-7.9", "rocm-7.10", "rocm-7.11", "rocm-7.12", "rocm-7.13", "rocm-7.14"]
    expected += ["rocm-10.0", "rocm-10.1", "develop-2025", "develop"]
    assert sorted(expected) == COMGR_RELEASES


@pytest.mark.parametrize("name", COMGR_RELEASES)
def test_comgr_releases_match_comgrs_isa_table(name):
    comgr = COMGR["processors"]
    rows = table_rows(OWN[name])
    wrong = [
        (processor, value, comgr[processor])
        for processor, value in rows.items()
        if [int(v) for v in value] != [comgr[processor]["total_vgprs"], comgr[processor]["vgpr_alloc_granule"]]
    ]
    assert wrong == [] and len(rows) >= 35, name
