"""Locate and read the TOML tables shipped with amdocc.

In a wheel the tables sit in ``amdocc/tables/``; in a source checkout they sit in the top-level
``tables/`` directory next to the package. Tables are parsed on first use and cached, so
``import amdocc`` stays cheap; a parsed table is read-only (amdocc.frozen), since every reader
shares it. Every reader takes a table's values through :class:`Row`, the one place that says
what a missing or damaged value is: a TableError naming the table, the row and the column.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
from importlib.util import source_hash
from pathlib import Path
from typing import Any

from .caches import cached
from .errors import TableError
from .frozen import freeze
from .numbers import describe, in_range

_PACKAGE_DIR = Path(__file__).resolve().parent


@cached(maxsize=1)
def tables_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "tables", _PACKAGE_DIR.parent / "tables"):
        if (candidate / "targets.toml").is_file():
            return candidate
    raise TableError("amdocc's tables/ directory is missing from this installation")


@cached(maxsize=256)
def load_table(name: str) -> dict[str, Any]:
    """Parse ``tables/<name>`` once: read-only all the way down, since every reader shares it."""
    frozen: dict[str, Any] = freeze(read_toml(tables_dir() / name))
    return frozen


def read_toml(path: Path) -> dict[str, Any]:
    """Parse one TOML file, read anew on every call (for files that are appended to, like
    recorded answers); a file that cannot be read or is not TOML is a TableError naming it.

    Parsing is the costly part of a table (tomllib is pure Python: ``targets.toml`` took ~50 M
    instructions, a tenth of a command's start-up), so the parse is kept as Python keeps a
    module's bytecode: marshalled in ``__pycache__`` beside the file (or under
    ``sys.pycache_prefix``), written only where Python would write bytecode, and used only for
    the very bytes it was parsed from (its key is their source hash, as in a checked hash-based
    ``.pyc``): an edited table is parsed again, never read stale."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise TableError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    key = source_hash(data)
    cache = _parse_cache(path)
    kept = _cached_parse(cache, key)
    if kept is not None:
        return kept
    toml = _tomllib()
    try:
        table: dict[str, Any] = toml.loads(data.decode())  # what tomllib.load does with the bytes it reads
    except (toml.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TableError(f"{path}: not valid TOML: {exc}") from None
    if not sys.dont_write_bytecode:
        _keep_parse(cache, key, table)
    return table


def _tomllib() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - Python 3.10 only

    return tomli  # pragma: no cover


# A kept parse: the source hash of the TOML bytes, the source hash of the marshalled table (a
# damaged cache file is parsed around, not believed), then the marshalled table.
_KEY = 8


def _parse_cache(path: Path) -> Path:
    """Where the parse of ``path`` is kept: as Python places the bytecode of a module there."""
    name = f"{path.name}.{sys.implementation.cache_tag}.marshal"
    if sys.pycache_prefix:
        folder = Path(path).resolve().parent
        return Path(sys.pycache_prefix, *folder.parts[1:], name)
    return path.parent / "__pycache__" / name


def _cached_parse(cache: Path, key: bytes) -> dict[str, Any] | None:
    try:
        with open(cache, "rb") as fh:
            blob = fh.read()
    except OSError:
        return None
    payload = blob[2 * _KEY :]
    if blob[:_KEY] != key or blob[_KEY : 2 * _KEY] != source_hash(payload):
        return None
    try:
        table = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return table if isinstance(table, dict) else None


def _keep_parse(cache: Path, key: bytes, table: dict[str, Any]) -> None:
    """Write the parse for the next run, atomically; a table holding what marshal cannot write
    (a TOML date) or a folder that cannot be written is simply not kept."""
    try:
        payload = marshal.dumps(table)
    except ValueError:
        return
    import tempfile  # only when a parse is written: a run that finds it kept never needs it

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=cache.parent, prefix=cache.name, suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(key + source_hash(payload) + payload)
        os.replace(temporary, cache)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


# -- one reader for a table's rows ----------------------------------------------------------------

_REQUIRED: Any = object()  # a column without a default must be there


class Row:
    """One row of a shipped table (a TOML table of ``tables/``), read column by column.

    Every reader of a table reads its values through a Row, so that a value that is missing, of
    the wrong type or out of range is one TableError naming the table, the row and the column
    (exit 2 on the command line), never a KeyError or ValueError escaping as a traceback. A
    column with a ``default`` may be left out; ``None`` as a default means "not given".
    """

    __slots__ = ("key", "name", "table", "values")

    def __init__(self, table: str, name: str, values: object, key: str | None = None) -> None:
        # name: the row's path in the table ("profiles.rocm-7.0"); key: its own key ("rocm-7.0")
        self.table, self.name, self.key = table, name, name if key is None else key
        if not isinstance(values, dict):
            raise self.error(f"is {_shown(values)}, not a table of columns", column=None)
        self.values: dict[str, Any] = values

    def __repr__(self) -> str:
        return f"Row({self.where()})"

    def where(self) -> str:
        return f"{self.table} [{self.name}]" if self.name else self.table

    def error(self, why: str, column: str | None) -> TableError:
        """A TableError naming the table, this row and ``column``: "TABLE [ROW] column COLUMN: WHY"."""
        return TableError(f"{self.where()}{'' if column is None else f' column {column!r}'}: {why}")

    def has(self, column: str) -> bool:
        return column in self.values

    def columns(self) -> list[str]:
        return list(self.values)

    def value(self, column: str, default: Any = _REQUIRED) -> Any:
        """The column's value as the TOML holds it (``default`` when absent; required without one)."""
        if column in self.values:
            return self.values[column]
        if default is _REQUIRED:
            raise self.error("missing (the row must have this column)", column)
        return default

    def whole(self, column: str, minimum: int | None = 0, maximum: int | None = None, default: Any = _REQUIRED) -> Any:
        """A whole number in [minimum, maximum] (amdocc.numbers' rule: an int, not a bool)."""
        if column not in self.values:
            return self.value(column, default)  # the default, or missing
        value = self.values[column]
        if not in_range(value, minimum, maximum):
            raise self.error(f"{_shown(value)} is not {describe(minimum, maximum)}", column)
        return value

    def flag(self, column: str, default: Any = _REQUIRED) -> Any:
        if column not in self.values:
            return self.value(column, default)  # the default, or missing
        value = self.values[column]
        if not isinstance(value, bool):
            raise self.error(f"{_shown(value)} is not true or false", column)
        return value

    def text(self, column: str, default: Any = _REQUIRED, choices: tuple[str, ...] | None = None) -> Any:
        """Text (not empty), one of ``choices`` when given."""
        if column not in self.values:
            return self.value(column, default)  # the default, or missing
        value = self.values[column]
        if not isinstance(value, str) or not value.strip():
            raise self.error(f"{_shown(value)} is not text", column)
        if choices is not None and value not in choices:
            raise self.error(f"{value!r} is not one of {', '.join(choices)}", column)
        return value

    def texts(self, column: str, default: Any = _REQUIRED) -> Any:
        """A list of texts, as a tuple."""
        if column not in self.values:
            return self.value(column, default)  # the default, or missing
        value = self.values[column]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"{_shown(value)} is not a list of texts", column)
        return tuple(value)

    def wholes(self, column: str, minimum: int | None = 0, default: Any = _REQUIRED) -> Any:
        """A list of whole numbers >= ``minimum``, as a tuple."""
        if column not in self.values:
            return self.value(column, default)  # the default, or missing
        value = self.values[column]
        if not isinstance(value, list) or not all(in_range(v, minimum) for v in value):
            raise self.error(f"{_shown(value)} is not a list of {describe(minimum, None, 'whole numbers')}", column)
        return tuple(value)

    def named_texts(self, column: str) -> dict[str, str]:
        """A table of texts by name (absent: empty), e.g. ``unknown = { hw_wave_slots = "..." }``."""
        table = self.sub(column, {})
        return {key: table.text(key) for key in table.columns()}

    def waves(self, column: str, minimum: int | None = 1) -> dict[int, int]:
        """A value per wave size, ``{w32 = .., w64 = ..}``, as {32: .., 64: ..}."""
        waves = self.sub(column)
        out = {}
        for key in waves.columns():
            if not (key.startswith("w") and key[1:].isdigit()):
                raise waves.error("is not a wave size (w32 or w64)", key)
            out[int(key[1:])] = waves.whole(key, minimum)
        return out

    def sub(self, column: str, default: Any = _REQUIRED) -> Row:
        """A table inside this row, as a Row named "ROW.COLUMN" (an empty one for a default)."""
        name = f"{self.name}.{column}" if self.name else column
        if column not in self.values:
            return Row(self.table, name, dict(self.value(column, default) or {}), column)
        value = self.values[column]
        if not isinstance(value, dict):
            raise self.error(f"{_shown(value)} is not a table", column)
        return Row(self.table, name, value, column)

    def rows(self, skip: tuple[str, ...] = ()) -> list[Row]:
        """The tables inside this row (a table's rows, ``skip`` left out), each a Row."""
        return [self.sub(column) for column in self.values if column not in skip]


def _shown(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return f"a {'table' if isinstance(value, dict) else 'list'}"
    return repr(value)
