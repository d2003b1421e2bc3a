"""Locate and read the TOML tables shipped with amdocc.

In a wheel the tables sit in ``amdocc/tables/``; in a source checkout they sit in the top-level
``tables/`` directory next to the package. Tables are parsed on first use and cached, so
``import amdocc`` stays cheap.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .caches import cached
from .errors import TableError
from .frozen import freeze

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

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
    """Parse one TOML file (uncached: for files that are appended to, like recorded answers); a
    file that cannot be read or is not TOML is a TableError naming it."""
    try:
        with open(path, "rb") as fh:
            table: dict[str, Any] = tomllib.load(fh)
    except OSError as exc:
        raise TableError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TableError(f"{path}: not valid TOML: {exc}") from None
    return table
