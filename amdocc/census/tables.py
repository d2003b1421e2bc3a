"""Census rows to CSV (always) or Parquet (when pyarrow is importable), written as they come."""

from __future__ import annotations

import csv
import sys
from types import ModuleType
from typing import TextIO

from ..errors import UsageError
from ..printable import printable
from . import COLUMNS, Row

PARQUET_BATCH = 10_000  # rows held before a Parquet row group is written


def require_pyarrow() -> ModuleType:
    """pyarrow's Parquet writer, or a usage error saying how to get one."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise UsageError(
            "--parquet needs pyarrow, which is not installed (pip install pyarrow); --csv needs nothing"
        ) from None
    module: ModuleType = pyarrow  # pyarrow has no type information: its names are Any
    return module


def _open(path: str) -> tuple[TextIO, bool]:
    if path == "-":
        return sys.stdout, False
    try:
        return open(path, "w", newline="", encoding="utf-8"), True
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None


class CsvSink:
    """``columns``: COLUMNS, or COLUMNS + ISA_COLUMNS for a census with --isa."""

    def __init__(self, path: str, columns: tuple[tuple[str, type], ...] = COLUMNS) -> None:
        self.file, self.owned = _open(path)
        self.names = tuple(name for name, _ in columns)
        self.writer = csv.writer(self.file, lineterminator="\n")
        self.writer.writerow(self.names)

    def add(self, row: Row) -> None:
        self.writer.writerow(["" if row[c] is None else _cell(row[c]) for c in self.names])

    def close(self) -> None:
        if self.owned:
            self.file.close()
        else:
            self.file.flush()


def _cell(value: object) -> object:
    """A value as a table holds it: text with undecodable bytes written as \\xNN (amdocc.printable)."""
    return printable(value) if isinstance(value, str) else value


class ParquetSink:
    def __init__(self, path: str, columns: tuple[tuple[str, type], ...] = COLUMNS) -> None:
        pa = require_pyarrow()
        types = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
        self.schema = pa.schema([(name, types[kind]) for name, kind in columns])
        self.pa = pa
        try:
            self.writer = pa.parquet.ParquetWriter(path, self.schema)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc}") from None
        self.rows: list[Row] = []

    def add(self, row: Row) -> None:
        self.rows.append({c: _cell(v) for c, v in row.items()})
        if len(self.rows) >= PARQUET_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.rows:
            self.writer.write_table(self.pa.Table.from_pylist(self.rows, schema=self.schema))
            self.rows = []

    def close(self) -> None:
        self._flush()
        self.writer.close()
