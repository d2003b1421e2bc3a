"""Every column of tables/targets.toml is held against a source.

Three kinds of check, one per column:
- PROBE: what llc-22 measurably does (tests/data/llvm22_target_probe.json; test_targets_table.py
  compares every measured row with it);
- RULE: a naming rule LLVM documents (AMDGPUUsage.rst: gfx<major><minor><stepping>, stepping in
  hex; generic targets gfx<major>[-<minor>]-generic);
- CITED: the value must be stated by its row's source note, ``cite = { column = "..." }``. A row
  that says ``like = "x"`` inherits a value's note together with the value. A value whose note is
  missing, or whose note does not state it (as a number, "N dwords" or "N KiB"), fails.

The raw table is read here with tomllib, not through amdocc, so the checks do not lean on the
code that reads the table.
"""
from __future__ import annotations

import re
import tomllib
from collections import Counter

import pytest

from amdocc.tabledata import tables_dir
from conftest import TESTS

PROBE_COLUMNS = {"mach", "wave_sizes", "default_wave", "wgp", "vgprs", "vgpr_alloc_granule", "vgpr_encode_granule",
                 "register_file", "max_waves_per_simd", "addressable_sgprs", "sgpr_waves", "sgpr_waves_beyond",
                 "lds_per_workgroup", "simds_per_cu", "xnack", "sramecc"}
RULE_COLUMNS = {"isa_version"}
CITED_COLUMNS = {"family", "generic_of", "addressable_vgprs", "agprs", "hip_max_waves_per_simd", "sgprs_per_simd",
                 "sgpr_alloc_granule", "lds_per_cu", "lds_per_wgp", "lds_granule", "max_workgroups_per_cu",
                 "max_workgroups_per_wgp", "descriptor_layout"}
META_COLUMNS = {"like", "source", "cite", "unconfirmed"}

RAW = tomllib.loads((tables_dir() / "targets.toml").read_text())


def _defining_row(raw: dict, name: str, column: str) -> str | None:
    """The row whose own text sets ``column`` for row ``name`` (following ``like``)."""
    while name is not None:
        row = raw[name]
        if column in row:
            return name
        name = row.get("like")
    return None


def _resolved(raw: dict, name: str) -> dict:
    row = raw[name]
    out = dict(_resolved(raw, row["like"])) if "like" in row else {}
    if "like" in row:
        out.pop("generic_of", None)        # as amdocc/targets.py: membership is never inherited
    out.update(row)
    return out


def _quantities(text: str) -> set[int]:
    """The numbers a note states, in bytes where it gives a unit: "320 dwords" is 1280."""
    found = {int(n) * 4 for n in re.findall(r"\b(\d+) dwords\b", text)}
    found |= {int(n) * 1024 for n in re.findall(r"\b(\d+) KiB\b", text)}
    bare = re.sub(r"\b\d+ (?:dwords|KiB)\b", " ", text)
    return found | {int(n) for n in re.findall(r"(?<![\w.#-])(\d+)(?![\w.])", bare)}


def states(note: str, value) -> bool:
    if isinstance(value, bool):
        return str(value).lower() in note.lower()
    if isinstance(value, int):
        return value in _quantities(note)
    if isinstance(value, list):
        return all(states(note, v) for v in value)
    return str(value) in note


def source_problems(raw: dict) -> tuple[list[str], Counter]:
    """(problems, values checked per column) for every cited value of every row."""
    problems, checked = [], Counter()
    for name in raw:
        for column, value in _resolved(raw, name).items():
            if column not in CITED_COLUMNS:
                continue
            owner = _defining_row(raw, name, column)
            note = raw[owner].get("cite", {}).get(column)
            if note is None:
                problems.append(f"[{name}] {column} = {value!r}: [{owner}] has no cite.{column}")
            elif not states(note, value):
                problems.append(f"[{name}] {column} = {value!r}: [{owner}]'s note does not state it: {note!r}")
            else:
                checked[column] += 1
    return problems, checked


def test_every_column_has_a_kind_of_check():
    columns = {c for row in RAW.values() for c in row}
    kinds = (PROBE_COLUMNS, RULE_COLUMNS, CITED_COLUMNS, META_COLUMNS)
    assert columns <= set().union(*kinds), sorted(columns - set().union(*kinds))
    assert sum(len(k) for k in kinds) == len(set().union(*kinds)), "a column is in two kinds"


def test_every_cited_value_is_stated_by_its_note():
    problems, checked = source_problems(RAW)
    assert problems == []
    # Every value of every row was held against a note: the counts follow from the table's shape
    # (every row for most columns; generic_of and the WGP columns only where rows have them).
    for column in CITED_COLUMNS:
        present = sum(1 for name in RAW if column in _resolved(RAW, name))
        assert checked[column] == present > 0, column
    assert checked["lds_granule"] == len(RAW)
    print("\ntargets.toml values checked against a cited source note, per column:\n" +
          "\n".join(f"  {c:<24}{checked[c]:>4}" for c in sorted(CITED_COLUMNS)) + f"\n  total {sum(checked.values())}")


@pytest.mark.parametrize("row,column,wrong", [
    ("gfx950", "lds_granule", 1024),       # the planted bug: 1280 -> 1024
    ("gfx950", "lds_per_cu", 65536),
    ("gfx600", "sgprs_per_simd", 800),
    ("gfx801", "sgpr_alloc_granule", 8),
    ("gfx1010", "lds_per_wgp", 65536),
    ("gfx1010", "hip_max_waves_per_simd", 8),
    ("gfx700", "lds_granule", 128),        # the note's "128 dwords" is 512 B, not 128
])
def test_a_value_its_note_does_not_state_fails(row, column, wrong):
    raw = {name: dict(r) for name, r in RAW.items()}
    raw[row][column] = wrong
    problems, _ = source_problems(raw)
    assert any(p.startswith(f"[{row}] {column} = {wrong!r}") for p in problems)


def test_a_value_without_a_note_fails():
    raw = {name: dict(r) for name, r in RAW.items()}
    raw["gfx1100"] = dict(raw["gfx1100"], lds_granule=512)     # set again, with no note of its own
    problems, _ = source_problems(raw)
    assert any("[gfx1100] lds_granule = 512: [gfx1100] has no cite.lds_granule" in p for p in problems)


def test_a_row_inherits_the_note_of_an_inherited_value():
    assert _defining_row(RAW, "gfx1201", "lds_granule") == "gfx1010"
    assert _defining_row(RAW, "gfx1201", "descriptor_layout") == "gfx1200"
    assert _defining_row(RAW, "gfx942", "lds_granule") == "gfx700"


def _isa_from_name(name: str):
    generic = re.fullmatch(r"gfx(\d+)(?:-(\d+))?-generic", name)
    if generic:
        return [int(generic.group(1)), int(generic.group(2) or 0), 0]
    m = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", name)
    return [int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)]


def test_isa_version_follows_the_processor_name_rule():
    # AMDGPUUsage.rst: "gfx<major><minor><stepping>", the last two digits hexadecimal (gfx90a = 9.0.10).
    for name in RAW:
        assert _resolved(RAW, name)["isa_version"] == _isa_from_name(name), name
    assert _isa_from_name("gfx90c") == [9, 0, 12] and _isa_from_name("gfx10-3-generic") == [10, 3, 0]


def test_probe_columns_are_the_ones_the_probe_test_compares():
    # test_targets_table.py's test_row_matches_llc reads these attributes; keep the two in step.
    text = (TESTS / "test_targets_table.py").read_text()
    for column in PROBE_COLUMNS - {"sgpr_waves", "sgpr_waves_beyond", "mach", "xnack", "sramecc"}:
        assert f"t.{column}" in text, column
    assert "sgpr_waves(t," in text and "t.mach" in text and "t.xnack" in text and "t.sramecc" in text


def test_unconfirmed_values_say_why_and_name_a_column_the_row_has():
    for name, row in RAW.items():
        for column, why in row.get("unconfirmed", {}).items():
            assert column in _resolved(RAW, name), (name, column)
            assert len(why) > 20, (name, column)


# -- tables/devices.toml ------------------------------------------------------------------------

DEVICES = tomllib.loads((tables_dir() / "devices.toml").read_text())


def test_every_device_value_is_stated_by_its_source_or_follows_from_its_processor():
    """compute_units must be quoted by the row's source ([A] ROCm's GPU specs, [R] rocminfo);
    max_waves_per_cu and lds are quoted where rocminfo was, and otherwise are the processor's
    (targets.toml): SIMDs per CU x waves per SIMD (rocminfo's "Max Waves Per CU") and LDS per CU."""
    checked = Counter()
    for name, row in DEVICES.items():
        target = _resolved(RAW, row["processor"])
        stated = _quantities(row["source"])
        assert row["compute_units"] in stated, (name, row["source"])
        checked["compute_units"] += 1
        assert row["max_waves_per_cu"] in stated or \
            row["max_waves_per_cu"] == target["simds_per_cu"] * target["max_waves_per_simd"], name
        checked["max_waves_per_cu"] += 1
        assert row["lds"] in stated or row["lds"] == target["lds_per_cu"], name
        checked["lds"] += 1
    assert checked["compute_units"] == len(DEVICES) > 15
    print(f"\ndevices.toml values checked: {dict(checked)}")
