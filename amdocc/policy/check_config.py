"""``[tool.amdocc.check]`` in a project's pyproject.toml, and how it meets the command line.

Every setting has one name, the same in both places: ``max-scratch = 64`` in the file is
``--max-scratch 64`` on the command line. A setting given in both must agree (a CI job whose
flags contradict the project's file is a mistake to report, not a precedence rule to guess
at), and a threshold whose rule is off is an error, since it would be ignored.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .checks import DEFAULT_RULES, RULE_GROUPS, RULES, Settings, expand_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SECTION = "[tool.amdocc.check]"
MODELS = ("hip", "llvm", "hw")
MAX_BLOCK = 1024


# --------------------------------------------------------------------------- value parsers
# Each takes a value as TOML gives it or as text from the command line, and the setting's name.


def count(value: object, name: str) -> int:
    """An integer >= 0."""
    return _integer(value, name, 0, None, "an integer >= 0")


def positive(value: object, name: str) -> int:
    """An integer >= 1."""
    return _integer(value, name, 1, None, "an integer >= 1")


def block_size(value: object, name: str) -> int:
    return _integer(value, name, 1, MAX_BLOCK, f"an integer from 1 to {MAX_BLOCK}")


def floor(value: object, name: str) -> float:
    """A number of waves per SIMD > 0 (1.5 is allowed: the HIP model averages over SIMDs)."""
    given = value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise UsageError(f"{name} must be a number of waves per SIMD above 0, not {given!r}")
    return int(value) if float(value).is_integer() else float(value)


def model(value: object, name: str) -> str:
    if not isinstance(value, str) or value not in MODELS:
        raise UsageError(f"{name} must be one of {', '.join(MODELS)}, not {value!r}")
    return value


def rules(value: object, name: str) -> tuple[str, ...]:
    """A list of rule names (TOML) or a comma-separated one (command line)."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise UsageError(f"{name} must be a list of rule names, not {value!r}")
    names = [n.strip() for n in names if isinstance(n, str) and n.strip()]  # all are text (checked above)
    if not names:
        raise UsageError(f"{name} is empty (rules: {', '.join(RULES)}; or {', '.join(RULE_GROUPS)})")
    return expand_rules(names)


def path(value: object, name: str) -> Path:
    if not isinstance(value, str | Path) or not str(value):
        raise UsageError(f"{name} must be a file name, not {value!r}")
    return Path(value)


def budget(value: object, name: str) -> tuple[str, ...]:
    """Budget expressions (policy/budgets.py): one text or a list of them, each parsed now."""
    from .budgets import normalize

    return normalize(value, name)


def boolean(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be true or false, not {value!r}")
    return value


def _integer(value: object, name: str, low: int, high: int | None, wanted: str) -> int:
    given = value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = int(value, 10)
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise UsageError(f"{name} must be {wanted}, not {given!r}")
    return value


# setting → (parser, the rules it applies to; None: not a rule threshold)
SETTINGS: dict[str, tuple[Callable[[object, str], object], tuple[str, ...] | None]] = {
    "rules": (rules, None),
    "max-vgpr-spills": (count, ("vgpr-spills",)),
    "max-sgpr-spills": (count, ("sgpr-spills",)),
    "max-scratch": (count, ("scratch",)),
    "min-occupancy": (floor, ("occupancy",)),
    "block": (block_size, ("occupancy", "budget")),  # "budget": used by --budget too
    "model": (model, ("occupancy",)),
    "dynamic-lds": (count, ("occupancy", "launch", "lds", "budget")),
    "budget": (budget, None),  # becomes Settings.budgets (see resolve)
    "baseline": (path, None),
    "fail-on-stale": (boolean, None),
}


def attribute(setting: str) -> str:
    return setting.replace("-", "_")


# --------------------------------------------------------------------------- the file


def find(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.amdocc.check] table."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _section(candidate) is not None:
            return candidate
    return None


def read(config: Path) -> dict[str, Any]:
    """The settings of one file's [tool.amdocc.check], parsed; a relative baseline is taken
    relative to the file's directory."""
    table = _section(config)
    if table is None:
        raise UsageError(f"{config} has no {SECTION} table")
    out = {}
    for key, value in table.items():
        if key not in SETTINGS:
            raise UsageError(f"{config}: {SECTION} has no setting {key!r} (settings: {', '.join(SETTINGS)})")
        parsed = SETTINGS[key][0](value, f"{key} in {config}")
        if key == "baseline" and isinstance(parsed, Path) and not parsed.is_absolute():
            parsed = config.parent / parsed
        out[key] = parsed
    return out


def _section(config: Path) -> dict[str, Any] | None:
    try:
        with open(config, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise UsageError(f"{config} cannot be read: {exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{config} is not valid TOML: {exc}") from None
    tool = doc.get("tool")
    ours = tool.get("amdocc") if isinstance(tool, dict) else None
    if ours is not None and not isinstance(ours, dict):  # `[tool] amdocc = 3` is not a table to look in
        raise UsageError(f"{config}: [tool.amdocc] must be a table")
    table: dict[str, Any] | None = ours.get("check") if ours else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{config}: {SECTION} must be a table")
    return table


# --------------------------------------------------------------------------- meeting the flags


def resolve(flags: dict[str, Any], config: dict[str, Any], config_name: str | None) -> tuple[Settings, dict[str, Any]]:
    """Settings from the command line's ``flags`` and a file's ``config`` (both keyed by setting
    name, values parsed). Returns the rule settings and the rest (baseline, fail-on-stale)."""
    for key in flags.keys() & config.keys():
        if not _same(key, flags[key], config[key]):
            raise UsageError(
                f"--{key} {_shown(flags[key])} contradicts {key} = {_shown(config[key])} in "
                f"{config_name} (change one, or run with --no-config)"
            )
    merged = {**config, **flags}

    def source(key: str) -> str:
        return f"--{key}" if key in flags else f"{key} in {config_name}"

    if "rules" in merged:
        chosen = merged["rules"]
    else:
        chosen = DEFAULT_RULES + (("occupancy",) if "min-occupancy" in merged else ())
        chosen = tuple(r for r in RULES if r in chosen)
    for key, (_, applies) in SETTINGS.items():
        if (
            applies
            and key in merged
            and not set(applies) & (set(chosen) | ({"budget"} if "budget" in merged else set()))
        ):
            where = f" by {source('rules')}" if "rules" in merged else ""
            rules_of_key = " and ".join(r for r in applies if r != "budget")
            raise UsageError(
                f"{source(key)} applies to the {rules_of_key} rule, which is off{where} (rules on: {', '.join(chosen)})"
            )
    if "occupancy" in chosen and "min-occupancy" not in merged:
        raise UsageError(f"the occupancy rule ({source('rules')}) needs a floor: --min-occupancy W (waves per SIMD)")
    thresholds = {attribute(k): v for k, v in merged.items() if SETTINGS[k][1]}
    if "budget" in merged:
        thresholds["budgets"] = merged["budget"]
    rest = {attribute(k): v for k, v in merged.items() if k not in ("rules", "budget") and not SETTINGS[k][1]}
    return Settings(rules=chosen, **thresholds), rest


def _same(key: str, a: object, b: object) -> bool:
    if key == "baseline" and isinstance(a, Path) and isinstance(b, Path):  # as path() parsed them
        return a.resolve() == b.resolve()
    return a == b


def _shown(value: object) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)
