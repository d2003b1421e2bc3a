"""A table's parse kept between runs (amdocc.tabledata.read_toml) is only ever the parse of the
table's current bytes: the oracle is tomllib parsing the same text, and a kept parse that a run
uses is shown used by a parser that refuses to run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomllib

from amdocc import tabledata

FIRST = '[gfx942]\nvgprs = 512\nname = "MI300"\n'
EDITED = '[gfx942]\nvgprs = 256\nname = "MI308"\n'  # the same length: no size or mtime shortcut


@pytest.fixture
def writing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs where Python writes bytecode beside its sources (this machine's CI sets
    PYTHONDONTWRITEBYTECODE, which keeps parses unwritten too)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)


def _no_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise AssertionError("the table was parsed again")

    monkeypatch.setattr(tabledata, "_tomllib", refuse)


def _kept(table: Path) -> Path:
    (kept,) = (table.parent / "__pycache__").iterdir()
    return kept


def test_a_kept_parse_is_used_for_the_same_bytes_and_an_edited_table_is_parsed_anew(
    tmp_path: Path, writing: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "targets.toml"
    table.write_text(FIRST)
    assert tabledata.read_toml(table) == tomllib.loads(FIRST)
    assert _kept(table).name == f"targets.toml.{sys.implementation.cache_tag}.marshal"
    with monkeypatch.context() as m:
        _no_parser(m)
        assert tabledata.read_toml(table) == tomllib.loads(FIRST)
    table.write_text(EDITED)
    assert tabledata.read_toml(table) == tomllib.loads(EDITED)
    with monkeypatch.context() as m:
        _no_parser(m)
        assert tabledata.read_toml(table) == tomllib.loads(EDITED)


def test_a_damaged_kept_parse_is_parsed_around(tmp_path: Path, writing: None) -> None:
    table = tmp_path / "targets.toml"
    table.write_text(FIRST)
    tabledata.read_toml(table)
    kept = _kept(table)
    blob = bytearray(kept.read_bytes())
    blob[-3] ^= 0xFF  # inside the marshalled table
    kept.write_bytes(bytes(blob))
    assert tabledata.read_toml(table) == tomllib.loads(FIRST)
    kept.write_bytes(blob[:10])  # cut short
    assert tabledata.read_toml(table) == tomllib.loads(FIRST)


def test_nothing_is_kept_where_python_keeps_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    table = tmp_path / "targets.toml"
    table.write_text(FIRST)
    assert tabledata.read_toml(table) == tomllib.loads(FIRST)
    assert not (tmp_path / "__pycache__").exists()


def test_under_a_pycache_prefix_the_parse_is_kept_there(
    tmp_path: Path, writing: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    table = tmp_path / "tables" / "targets.toml"
    table.parent.mkdir()
    table.write_text(FIRST)
    assert tabledata.read_toml(table) == tomllib.loads(FIRST)
    assert not (table.parent / "__pycache__").exists()
    (kept,) = prefix.rglob("*.marshal")
    assert kept.parent == prefix.joinpath(*table.parent.resolve().parts[1:])


def test_a_table_marshal_cannot_keep_is_still_read(tmp_path: Path, writing: None) -> None:
    text = "[row]\nreleased = 2024-05-01\n"  # a TOML date: marshal writes no datetime.date
    table = tmp_path / "dated.toml"
    table.write_text(text)
    assert tabledata.read_toml(table) == tomllib.loads(text)
    assert tabledata.read_toml(table) == tomllib.loads(text)
