"""Every value of every row of tables/targets.toml is held against an independent source.

Each value has one kind of check (value_kind); a value none of them covers fails:
- PROBE: what an LLVM measurably does with the processor, compared by test_targets_table.py
  (assert_row_matches_probe): llc-22 (tests/data/llvm22_target_probe.json) for the processors
  LLVM 22 knows; gfx942's measurement for gfx940/gfx941 (gone from LLVM, same feature set); and
  Triton 3.9's LLVM 24.0.0git (tests/data/triton_llvm_target_probe.json) for the processors LLVM
  22 does not know. That LLVM rounds LDS to its granule, so it measures lds_granule too. A column
  tables/llvm_rules.toml overrides for the row is not measured by it: the probe saw that LLVM's
  value, not the table's.
- RULE: isa_version follows the processor's name (AMDGPUUsage.rst: gfx<major><minor><stepping>,
  stepping in hex; generic targets gfx<major>[-<minor>]-generic). A name outside the rule
  (gfx1250-strict) is measured instead: the subarch of the triple Triton's LLVM printed for it
  (amdgpu12.50s: 12.5.0).
- COMGR: what the ROCm 7.14 runtime's own comgr states for the processor
  (amd_comgr_get_isa_metadata, recorded by tools/comgr_isa.py in tests/data/comgr_isa_metadata.json
  and held to the live library by tests/test_comgr_isa.py): addressable_vgprs
  (AddressableNumVGPRs), sgpr_alloc_granule (SGPRAllocGranule), sgprs_per_simd (TotalNumSGPRs,
  through gfx9: from gfx10 SGPRs are per wave, no shared file) and lds_per_cu (LocalMemorySize),
  for every processor comgr knows, but where comgr is known to be wrong (COMGR_NOT_MEASURED).
- CITE: any other value must be stated by its note, ``[row.cite] column = "..."``: the nearest
  note on the way from the row up its ``like`` chain to the row that sets the value (a row
  inherits a value's note with the value and may add its own). A note states a value as a
  number, "N dwords", "N KiB" or 0xN, a name verbatim, every item of a list or wave map. A value
  with no note, or a note that does not state it, fails; so does a note on a measured value.

since_llvm is a cited value that the probes also bound (test_targets_table.py): LLVM 22 does not
know the processor and Triton's LLVM does, but only its note tells LLVM 23 from 24. Annotations
(like, source, cite, unconfirmed, unknown) are not columns, and the WGP-mode columns of a row
without WGP mode are not values (the loader ignores them).

The raw table is read here with tomllib, not through amdocc, so the checks do not lean on the
code that reads the table.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10, which the package supports: the same parser under its old name
    import tomli as tomllib

from amdocc.tabledata import tables_dir
from conftest import TESTS

# Columns every probe measures (test_targets_table.assert_row_matches_probe compares each).
MEASURED_COLUMNS = frozenset(
    {
        "mach",
        "wave_sizes",
        "default_wave",
        "wgp",
        "vgprs",
        "vgpr_alloc_granule",
        "vgpr_encode_granule",
        "register_file",
        "max_waves_per_simd",
        "addressable_sgprs",
        "sgpr_waves",
        "sgpr_waves_beyond",
        "lds_per_workgroup",
        "lds_per_workgroup_wgp",
        "simds_per_cu",
        "xnack",
        "sramecc",
    }
)
# ... and what only an LLVM that rounds LDS to its granule (23+) shows; cited where LLVM 22 measured.
MEASURED_WHEN_ROUNDED = frozenset({"lds_granule"})
RULE_COLUMNS = frozenset({"isa_version"})
CITED_COLUMNS = frozenset(
    {
        "family",
        "generic_of",
        "addressable_vgprs",
        "agprs",
        "hip_max_waves_per_simd",
        "sgprs_per_simd",
        "sgpr_alloc_granule",
        "lds_per_cu",
        "lds_per_wgp",
        "lds_granule",
        "max_workgroups_per_cu",
        "max_workgroups_per_wgp",
        "descriptor_layout",
        "since_llvm",
        "until_llvm",
        "mode_recorded",  # (the fixtures of tests/test_invisible_mode.py show it, compiler by compiler)
    }
)
ANNOTATIONS = frozenset({"like", "source", "cite", "unconfirmed", "unknown"})
# Read only in WGP mode (amdocc/targets.py sets them to None on a row without it).
WGP_ONLY = frozenset({"lds_per_wgp", "max_workgroups_per_wgp", "lds_per_workgroup_wgp"})
# Removed from LLVM in 2025 (8615f9aaffd4); they share gfx942's FeatureISAVersion9_4_Common.
SAME_FEATURES = {"gfx940": "gfx942", "gfx941": "gfx942"}

# The targets.toml columns comgr's ISA metadata states, by its key (tools/comgr_isa.py).
COMGR_COLUMNS = {
    "addressable_vgprs": "AddressableNumVGPRs",
    "sgpr_alloc_granule": "SGPRAllocGranule",
    "sgprs_per_simd": "TotalNumSGPRs",
    "lds_per_cu": "LocalMemorySize",
}
# Where comgr's value is not the table's fact, with the reason; such values keep their notes.
COMGR_NOT_MEASURED = {
    ("gfx950", "lds_per_cu"): "comgr reports 64 KiB for gfx950 (ROCm/llvm-project#4099); the HSA group "
    "segment HIP reads is 160 KiB",
}
# comgr's TotalNumSGPRs is LLVM's getTotalNumSGPRs (800 on every gfx8+ ISA); the shared SGPR file
# it counts ends with gfx9 (the table's 0, HIP's UINT32_MAX from gfx10 on).
COMGR_SGPR_FILE_UP_TO_MAJOR = 9

RAW = tomllib.loads((tables_dir() / "targets.toml").read_text())
COMGR = json.loads((TESTS / "data" / "comgr_isa_metadata.json").read_text())["isas"]
PROBE = json.loads((TESTS / "data" / "llvm22_target_probe.json").read_text())
TRITON_PROBE = json.loads((TESTS / "data" / "triton_llvm_target_probe.json").read_text())
# The Triton probe is compared through the llvm-23 rules, whose overrides it measured instead.
LLVM23_OVERRIDES = tomllib.loads((tables_dir() / "llvm_rules.toml").read_text())["llvm-23"].get("overrides", {})


def _chain(raw: dict, name: str):
    """The row and the rows it is ``like``, nearest first."""
    while name is not None:
        yield name
        name = raw[name].get("like")


def _defining_row(raw: dict, name: str, column: str) -> str | None:
    """The row whose own text sets ``column`` for row ``name`` (following ``like``)."""
    return next((row for row in _chain(raw, name) if column in raw[row]), None)


def _resolved(raw: dict, name: str) -> dict:
    row = raw[name]
    out = dict(_resolved(raw, row["like"])) if "like" in row else {}
    if "like" in row:
        out.pop("generic_of", None)  # as amdocc/targets.py: membership is never inherited
    out.update(row)
    return out


def _measured(probe: dict, name: str) -> bool:
    return probe.get(name, {}).get("kind") in ("processor", "generic")


def measurement(raw: dict, name: str) -> tuple[str, frozenset] | None:
    """The probe that measured row ``name`` and the columns it measured; None when none did."""
    if _measured(PROBE, name):
        return "llc-22", MEASURED_COLUMNS
    if name in SAME_FEATURES:
        return "llc-22 (as gfx942)", MEASURED_COLUMNS - {"mach"}
    if "since_llvm" in _resolved(raw, name) and _measured(TRITON_PROBE, name):
        overridden = set(LLVM23_OVERRIDES.get(name, {})) - {"cite"}
        return "triton-llvm", (MEASURED_COLUMNS | MEASURED_WHEN_ROUNDED) - overridden
    return None


def _isa_from_name(name: str) -> list[int] | None:
    generic = re.fullmatch(r"gfx(\d+)(?:-(\d+))?-generic", name)
    if generic:
        return [int(generic.group(1)), int(generic.group(2) or 0), 0]
    m = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", name)
    return [int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)] if m else None


def _isa_from_subarch(target_id: str) -> list[int]:
    """The version an amdgpu<major>[.<minor>[<stepping>][s]] triple spells (elf-header-flags-mach.ll)."""
    m = re.match(r"amdgpu(\d+)(?:\.(\d)([0-9a-z])?s?)?-", target_id)
    return [int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or "0", 16)]


def comgr_measures(raw: dict, name: str, column: str) -> bool:
    """Whether comgr's ISA metadata states row ``name``'s value of ``column`` (whatever it is)."""
    if name not in COMGR or column not in COMGR_COLUMNS or (name, column) in COMGR_NOT_MEASURED:
        return False
    return column != "sgprs_per_simd" or _resolved(raw, name)["isa_version"][0] <= COMGR_SGPR_FILE_UP_TO_MAJOR


def value_kind(raw: dict, name: str, column: str) -> str | None:
    """How row ``name``'s value of ``column`` is checked: "probe: <which>", "rule", "comgr" or "cite";
    None for annotations and for WGP-mode columns of a row without WGP mode."""
    row = _resolved(raw, name)
    if column in ANNOTATIONS or (column in WGP_ONLY and not row.get("wgp")):
        return None
    if column in RULE_COLUMNS and _isa_from_name(name) is not None:
        return "rule"
    if column in RULE_COLUMNS and _measured(TRITON_PROBE, name):
        return "probe: triton-llvm"
    measured = measurement(raw, name)
    if measured and column in measured[1]:
        return f"probe: {measured[0]}"
    if comgr_measures(raw, name, column):
        return "comgr"
    return "cite"


def values(raw: dict, rows=None):
    """(row, column, value, kind) for every value of every row (or of ``rows``)."""
    for name in rows if rows is not None else raw:
        for column, value in _resolved(raw, name).items():
            kind = value_kind(raw, name, column)
            if kind is not None:
                yield name, column, value, kind


def _note(raw: dict, name: str, column: str) -> tuple[str, str | None]:
    """(the row whose note speaks for the value, the note): the nearest one from ``name`` up to
    the row that sets the value; (that row, None) when none has one."""
    owner = _defining_row(raw, name, column)
    for row in _chain(raw, name):
        note = raw[row].get("cite", {}).get(column)
        if note is not None or row == owner:
            return row, note
    return owner, None


def _quantities(text: str) -> set[int]:
    """The numbers a note states, in bytes where it gives a unit: "320 dwords" is 1280, 0x4b is 75."""
    found = {int(n) * 4 for n in re.findall(r"\b(\d+) dwords\b", text)}
    found |= {int(n) * 1024 for n in re.findall(r"\b(\d+) KiB\b", text)}
    found |= {int(n, 16) for n in re.findall(r"\b0x([0-9a-fA-F]+)\b", text)}
    bare = re.sub(r"\b\d+ (?:dwords|KiB)\b|\b0x[0-9a-fA-F]+\b", " ", text)
    return found | {int(n) for n in re.findall(r"(?<![\w.#-])(\d+)(?![\w.])", bare)}


def states(note: str, value) -> bool:
    if isinstance(value, bool):
        return str(value).lower() in note.lower()
    if isinstance(value, int):
        return value in _quantities(note)
    if isinstance(value, list):
        return all(states(note, v) for v in value)
    if isinstance(value, dict):  # a wave map: every wave size's value
        return all(states(note, v) for v in value.values())
    return str(value) in note


def source_problems(raw: dict, rows=None) -> tuple[list[str], Counter]:
    """(problems, values checked per column) for every cited or comgr-stated value of every row
    (or of ``rows``)."""
    problems, checked = [], Counter()
    for name, column, value, kind in values(raw, rows):
        if kind == "comgr":
            key = COMGR_COLUMNS[column]
            if value != int(COMGR[name][key]):
                problems.append(f"[{name}] {column} = {value!r}: comgr's {key} for {name} is {COMGR[name][key]}")
            else:
                checked[column] += 1
            continue
        if kind != "cite":
            continue
        owner, note = _note(raw, name, column)
        if note is None:
            problems.append(f"[{name}] {column} = {value!r}: [{owner}] has no cite.{column}")
        elif not states(note, value):
            problems.append(f"[{name}] {column} = {value!r}: [{owner}]'s note does not state it: {note!r}")
        else:
            checked[column] += 1
    return problems, checked


def rule_problems(raw: dict, rows=None) -> list[str]:
    """isa_version against the naming rule, or (a name outside it) the subarch Triton's LLVM printed."""
    problems = []
    for name, column, value, kind in values(raw, rows):
        if column != "isa_version":
            continue
        expected = _isa_from_name(name) if kind == "rule" else _isa_from_subarch(TRITON_PROBE[name]["target_id"])
        if value != expected:
            problems.append(f"[{name}] isa_version = {value!r}, not {expected!r} ({kind})")
    return problems


def stray_notes(raw: dict) -> list[str]:
    """Notes that no check reads: on a column the row lacks, or on a measured, named or
    comgr-stated value that no row taking the note from it (itself, or a row ``like`` it with no
    note of its own) has cited."""

    def read(name: str, column: str) -> bool:
        return any(
            value_kind(raw, user, column) == "cite" and _note(raw, user, column)[0] == name
            for user in _inheritors(raw, name)
        )

    return [
        f"[{name}] cite.{column}: the value is {value_kind(raw, name, column) or 'not one of the row'}"
        for name, row in raw.items()
        for column in row.get("cite", {})
        if column not in _resolved(raw, name) or not read(name, column)
    ]


def _copy(raw: dict) -> dict:
    return {name: {k: dict(v) if isinstance(v, dict) else v for k, v in row.items()} for name, row in raw.items()}


def test_every_column_has_a_kind_of_check():
    columns = {c for row in RAW.values() for c in row}
    kinds = (MEASURED_COLUMNS, RULE_COLUMNS, CITED_COLUMNS, ANNOTATIONS)
    assert columns <= set().union(*kinds), sorted(columns - set().union(*kinds))
    assert sum(len(k) for k in kinds) == len(set().union(*kinds)), "a column is in two kinds"
    assert MEASURED_WHEN_ROUNDED <= CITED_COLUMNS and WGP_ONLY <= MEASURED_COLUMNS | CITED_COLUMNS


def test_every_value_of_every_row_is_checked_against_a_source():
    """The one place that holds every value to its source: cited values are stated by their notes,
    isa_version follows the name, and the rest are the probe's (test_targets_table.py compares them)."""
    problems, checked = source_problems(RAW)
    assert problems == []
    assert rule_problems(RAW) == []
    assert stray_notes(RAW) == []
    kinds = Counter((column, kind) for _, column, _, kind in values(RAW))
    assert sum(n for (c, k), n in kinds.items() if k in ("cite", "comgr")) == sum(checked.values())
    assert sum(n for (c, k), n in kinds.items() if k == "comgr") >= 150  # comgr states most of four columns
    # Every row has every column (its own or inherited) but those only some rows have.
    optional = {
        "generic_of",
        "since_llvm",
        "until_llvm",
        "lds_per_workgroup_wgp",
        "mode_recorded",
    }  # (mode_recorded: default true)
    for name in RAW:
        present = {c for c in _resolved(RAW, name) if value_kind(RAW, name, c)}
        wgp_only = set() if _resolved(RAW, name)["wgp"] else WGP_ONLY
        assert present >= (MEASURED_COLUMNS | RULE_COLUMNS | CITED_COLUMNS) - optional - wgp_only, name
    # The processors LLVM 22 does not know are held to Triton's LLVM wherever it measures a column.
    newer = [name for name in RAW if "since_llvm" in _resolved(RAW, name)]
    assert len(newer) == 9
    assert kinds[("mach", "probe: triton-llvm")] == kinds[("lds_granule", "probe: triton-llvm")] == len(newer)
    assert kinds[("since_llvm", "cite")] == len(newer)
    table = sorted(kinds.items())
    print(
        "\ntargets.toml values per column and source:\n"
        + "\n".join(f"  {c:<24}{k:<26}{n:>4}" for (c, k), n in table)
        + "\n  "
        + ", ".join(f"{k}: {sum(n for (_, kk), n in table if kk == k)}" for k in sorted({k for _, k in kinds}))
    )


@pytest.mark.parametrize(
    "row,column,wrong",
    [
        ("gfx950", "lds_granule", 1024),  # the planted bug: 1280 -> 1024
        ("gfx950", "lds_per_cu", 65536),
        ("gfx600", "sgprs_per_simd", 800),
        ("gfx801", "sgpr_alloc_granule", 8),
        ("gfx1010", "lds_per_wgp", 65536),
        ("gfx1010", "hip_max_waves_per_simd", 8),
        ("gfx700", "lds_granule", 128),  # the note's "128 dwords" is 512 B, not 128
        ("gfx1310", "sgpr_alloc_granule", 8),  # as merged: the note said "as gfx1010's row", which is 106
        ("gfx1154", "family", "RDNA4"),
        ("gfx1310", "vgprs", {"w32": 1536, "w64": 768}),  # Triton's LLVM, before llvm PR #222615
        ("gfx1250-strict", "since_llvm", 23),
        ("gfx940", "mach", 0x41),
    ],
)
def test_a_value_its_note_does_not_state_fails(row, column, wrong):
    raw = _copy(RAW)
    raw[row][column] = wrong
    problems, _ = source_problems(raw)
    assert any(p.startswith(f"[{row}] {column} = {wrong!r}") for p in problems)


def test_a_value_without_a_note_fails():
    raw = _copy(RAW)
    raw["gfx1100"] = dict(raw["gfx1100"], lds_granule=512)  # set again, with no note of its own
    del raw["gfx1310"]["cite"]["agprs"]
    problems, _ = source_problems(raw)
    assert any("[gfx1100] lds_granule = 512: [gfx1100] has no cite.lds_granule" in p for p in problems)
    assert any("[gfx1310] agprs = 0: [gfx1310] has no cite.agprs" in p for p in problems)
    assert any("[gfx13-generic] agprs = 0: [gfx1310] has no cite.agprs" in p for p in problems)


def test_a_note_on_a_measured_value_fails():
    raw = _copy(RAW)
    raw["gfx1310"]["cite"]["wave_sizes"] = "[T39] wave32 and wave64"
    raw["gfx1154"]["cite"]["lds_granule"] = "[T39] lds.granule 512"
    assert stray_notes(raw) == [
        "[gfx1154] cite.lds_granule: the value is probe: triton-llvm",
        "[gfx1310] cite.wave_sizes: the value is probe: triton-llvm",
    ]


def test_a_row_inherits_the_note_of_an_inherited_value():
    assert _defining_row(RAW, "gfx1201", "lds_granule") == "gfx1010"
    assert _defining_row(RAW, "gfx1201", "descriptor_layout") == "gfx1200"
    assert _defining_row(RAW, "gfx942", "lds_granule") == "gfx700"
    assert _note(RAW, "gfx1172", "family")[0] == "gfx1171"  # the value's own row
    assert _note(RAW, "gfx1170", "lds_per_cu")[0] == "gfx1170"  # a note of its own, value from gfx1010
    assert _note(RAW, "gfx13-generic", "vgprs")[0] == "gfx1310"


def test_what_each_probe_measures():
    assert value_kind(RAW, "gfx1310", "vgprs") == "cite"  # llvm-23 overrides it
    assert value_kind(RAW, "gfx1310", "vgpr_encode_granule") == "probe: triton-llvm"
    assert value_kind(RAW, "gfx1310", "lds_granule") == "probe: triton-llvm"
    assert value_kind(RAW, "gfx1250", "lds_granule") == "cite"  # LLVM 22 does not round LDS
    assert value_kind(RAW, "gfx940", "mach") == "cite"
    assert value_kind(RAW, "gfx940", "vgprs") == "probe: llc-22 (as gfx942)"
    assert value_kind(RAW, "gfx1250", "lds_per_wgp") is None  # no WGP mode
    assert value_kind(RAW, "gfx1250-strict", "isa_version") == "probe: triton-llvm"


def test_isa_version_follows_the_processor_name_rule():
    # AMDGPUUsage.rst: "gfx<major><minor><stepping>", the last two digits hexadecimal (gfx90a = 9.0.10).
    assert _isa_from_name("gfx90c") == [9, 0, 12] and _isa_from_name("gfx10-3-generic") == [10, 3, 0]
    assert _isa_from_name("gfx11-7-generic") == [11, 7, 0] and _isa_from_name("gfx1250-strict") is None
    assert [_isa_from_subarch(s + "-amd-amdhsa") for s in ("amdgpu12.50s", "amdgpu9.0a", "amdgpu11.7", "amdgpu13")] == [
        [12, 5, 0],
        [9, 0, 10],
        [11, 7, 0],
        [13, 0, 0],
    ]
    assert rule_problems(RAW) == []
    # Where Triton's LLVM printed a subarch triple, it spells the same version as the rule.
    for name, p in TRITON_PROBE.items():
        if _measured(TRITON_PROBE, name):
            assert _resolved(RAW, name)["isa_version"] == _isa_from_subarch(p["target_id"]), name
    raw = _copy(RAW)
    raw["gfx1250-strict"]["isa_version"] = [12, 5, 1]
    raw["gfx1154"]["isa_version"] = [11, 5, 3]
    assert rule_problems(raw) == [
        "[gfx1154] isa_version = [11, 5, 3], not [11, 5, 4] (rule)",
        "[gfx1250-strict] isa_version = [12, 5, 1], not [12, 5, 0] (probe: triton-llvm)",
    ]


def perturbed(value, choices: tuple = ()):
    """A wrong value of the same shape (a table's or a Target's): a number one more, a flag flipped,
    the next of ``choices`` or a changed name, every wave's value one more, the last number of a
    list one more, the first SGPR step moved (some steps where there were none)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return choices[(choices.index(value) + 1) % len(choices)] if value in choices else value + "?"
    if isinstance(value, dict):
        return {k: v + 1 for k, v in value.items()}
    shape = type(value)
    if not value or isinstance(value[0], (list, tuple)):
        first = value[0] if value else (79, 10)
        return shape([shape([first[0] + 1, first[1]])]) + value[1:]
    return value[:-1] + shape([value[-1] + 1]) if isinstance(value[-1], int) else value + shape(["gfx0"])


def _inheritors(raw: dict, owner: str) -> list[str]:
    return [name for name in raw if owner in _chain(raw, name)]


def written_values(raw: dict):
    """(row, column, value) for every value the file writes (annotations aside)."""
    for owner, row in raw.items():
        for column, value in row.items():
            if column not in ANNOTATIONS:
                yield owner, column, value


def test_breaking_any_cited_or_named_value_fails():
    """Every value the file writes, changed, is caught by its note, comgr or the naming rule (measured
    values: test_targets_table.test_breaking_any_measured_value_fails)."""
    caught = Counter()
    for owner, column, value in written_values(RAW):
        rows = _inheritors(RAW, owner)
        row_kinds = {value_kind(RAW, name, column) for name in rows if _defining_row(RAW, name, column) == owner}
        assert row_kinds - {None}, (owner, column, "no row reads this value")
        if not row_kinds & {"cite", "rule", "comgr"} and column != "isa_version":
            continue
        raw = _copy(RAW)
        raw[owner][column] = perturbed(value)
        problems = source_problems(raw, rows)[0] + rule_problems(raw, rows)
        assert problems, (owner, column, value, perturbed(value))
        caught[column] += 1
    written = Counter(column for _, column, _ in written_values(RAW))
    assert caught["isa_version"] == written["isa_version"] == len(RAW)
    assert caught["since_llvm"] == written["since_llvm"] and caught["family"] == written["family"]
    print(
        f"\nwritten values broken one at a time and caught by a note or the naming rule: {sum(caught.values())}"
        f" of {sum(written.values())} written"
    )


def test_unconfirmed_values_say_why_and_name_a_column_the_row_has():
    for name, row in RAW.items():
        for column, why in row.get("unconfirmed", {}).items():
            assert column in _resolved(RAW, name), (name, column)
            assert len(why) > 20, (name, column)


def test_unknown_facts_say_why_and_name_a_column_or_the_wave_slots():
    for name, row in RAW.items():
        for fact, why in row.get("unknown", {}).items():
            assert fact in _resolved(RAW, name) or fact == "hw_wave_slots", (name, fact)
            assert len(why) > 20, (name, fact)


# -- tables/devices.toml ------------------------------------------------------------------------

DEVICES = tomllib.loads((tables_dir() / "devices.toml").read_text())


def test_every_device_value_is_stated_by_its_source_or_follows_from_its_processor():
    """compute_units must be quoted by the row's source ([A] ROCm's GPU specs, [R] rocminfo); lds
    is quoted where rocminfo was, and otherwise is the processor's LDS per CU (targets.toml). Where
    the source quotes rocminfo's "Max Waves Per CU", it is the processor's SIMDs x waves per SIMD."""
    checked = Counter()
    for name, row in DEVICES.items():
        target = _resolved(RAW, row["processor"])
        stated = _quantities(row["source"])
        assert row["compute_units"] in stated, (name, row["source"])
        checked["compute_units"] += 1
        assert row["lds"] in stated or row["lds"] == target["lds_per_cu"], name
        checked["lds"] += 1
        for waves in re.findall(r"Max Waves Per CU: (\d+)", row["source"]):
            assert int(waves) == target["simds_per_cu"] * target["max_waves_per_simd"], name
            checked["targets.toml waves per CU, by rocminfo"] += 1
    assert checked["compute_units"] == len(DEVICES) > 15 and checked["targets.toml waves per CU, by rocminfo"] >= 5
    print(f"\ndevices.toml values checked: {dict(checked)}")
