"""``[tool.amdocc.check]`` in a project's pyproject.toml, and how it meets the command line.

Every setting has one name and one set of spellings in both places: ``max-scratch = "1K"`` in
the file is ``--max-scratch 1K`` on the command line. The command line overrides the file (as
with ruff, pytest and mypy), so one CI job can tighten a threshold without ``--no-config``; each
override is reported (:func:`overrides`). A threshold whose rule is off is an error where it is
given together with the rule selection (both on the command line, or both in the file), since it
would be ignored; a file's threshold for a rule the command line turns off is reported as unused.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..numbers import describe, in_range, parse_bytes, parse_integer
from ..targets import MAX_WORKGROUP_SIZE
from .checks import DEFAULT_RULES, RULE_GROUPS, RULES, Settings, expand_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SECTION = "[tool.amdocc.check]"
TABLES = ("check",)  # the tables amdocc reads under [tool.amdocc]
MODELS = ("hip", "llvm", "hw")
MAX_BLOCK = MAX_WORKGROUP_SIZE  # the largest workgroup any processor launches (targets.py)


# --------------------------------------------------------------------------- value parsers
# Each takes a value as TOML gives it or as text from the command line, and the setting's name.


def count(value: object, name: str) -> int:
    """An integer >= 0."""
    return _integer(value, name, 0, None, "an integer >= 0")


def byte_count(value: object, name: str) -> int:
    """A byte count >= 0: an integer, or text with a K/KiB, M/MiB or G/GiB suffix as the flag takes."""
    return _integer(value, name, 0, None, 'a byte count >= 0 (an integer, or text such as "1K")', parse_bytes)


def positive(value: object, name: str) -> int:
    """An integer >= 1."""
    return _integer(value, name, 1, None, "an integer >= 1")


def block_size(value: object, name: str) -> int:
    return _integer(value, name, 1, MAX_BLOCK, describe(1, MAX_BLOCK, "an integer"))


def lds_size(value: object, name: str) -> int:
    """LDS bytes per workgroup: a byte count up to the most any processor gives one workgroup."""
    from ..targets import all_targets

    most = max(max(t.lds_per_workgroup, t.lds_per_workgroup_wgp or 0) for t in all_targets())
    return _integer(
        value,
        name,
        0,
        most,
        f'LDS bytes per workgroup from 0 to {most} (an integer, or text such as "16K")',
        parse_bytes,
    )


def floor(value: object, name: str) -> float:
    """A number of waves per SIMD > 0 and at most the most wave slots any processor has (1.5 is
    allowed: the HIP model averages over SIMDs)."""
    given = value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    most = most_waves("llvm")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
        raise UsageError(
            f"{name} must be a number of waves per SIMD above 0 and at most {most} "
            f"(the most wave slots any processor has), not {given!r}"
        )
    return int(value) if float(value).is_integer() else float(value)


def most_waves(model_name: str) -> int:
    """The most waves per SIMD ``model_name`` can answer on any processor of tables/targets.toml:
    hip counts HIP's wave slots (hip_max_waves_per_simd), llvm and hw the processor's
    (max_waves_per_simd, LLVM's getMaxWavesPerEU)."""
    from ..targets import all_targets

    column = "hip_max_waves_per_simd" if model_name == "hip" else "max_waves_per_simd"
    return max(int(getattr(t, column)) for t in all_targets())


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


def _integer(
    value: object,
    name: str,
    low: int,
    high: int | None,
    wanted: str,
    text: Callable[[str], int | None] = parse_integer,
) -> int:
    """A whole number in [low, high] (amdocc.numbers' rule), or text the flag would take."""
    given = value
    if isinstance(value, str):
        value = text(value)
    if not in_range(value, low, high):
        raise UsageError(f"{name} must be {wanted}, not {given!r}")
    return value


# setting → (parser, the rules it applies to; None: not a rule threshold)
SETTINGS: dict[str, tuple[Callable[[object, str], object], tuple[str, ...] | None]] = {
    "rules": (rules, None),
    "max-vgpr-spills": (count, ("vgpr-spills",)),
    "max-sgpr-spills": (count, ("sgpr-spills",)),
    "max-scratch": (byte_count, ("scratch",)),
    "min-occupancy": (floor, ("occupancy",)),
    "block": (block_size, ("occupancy", "budget")),  # "budget": used by --budget too
    "model": (model, ("occupancy",)),
    "dynamic-lds": (lds_size, ("occupancy", "launch", "lds", "budget")),
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
            raise UsageError(f"{config}: {SECTION} has no setting {key!r} ({_suggested(key, SETTINGS, 'settings')})")
        parsed = SETTINGS[key][0](value, f"{key} in {config}")
        if key == "baseline" and isinstance(parsed, Path) and not parsed.is_absolute():
            parsed = config.parent / parsed
        out[key] = parsed
    return out


def _suggested(given: str, valid: Iterable[str], what: str) -> str:
    """ "did you mean 'X'? settings: ..." as an option's suggestion says it, or just the list."""
    names = list(valid)
    close = difflib.get_close_matches(given.replace("_", "-"), names, n=1, cutoff=0.6)
    listed = f"{what}: {', '.join(names)}"
    return f"did you mean {close[0]!r}? {listed}" if close else listed


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
    for key in ours or {}:
        if key not in TABLES:  # [tool.amdocc.chek] would otherwise be passed over in silence
            raise UsageError(f"{config}: [tool.amdocc] has no table {key!r} ({_suggested(key, TABLES, 'tables')})")
    table: dict[str, Any] | None = ours.get("check") if ours else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{config}: {SECTION} must be a table")
    return table


# --------------------------------------------------------------------------- meeting the flags


def resolve(
    flags: dict[str, Any],
    config: dict[str, Any],
    config_name: str | None,
    flag_name: Callable[[str], str] = lambda key: f"--{key}",
) -> tuple[Settings, dict[str, Any]]:
    """Settings from the command line's ``flags`` and a file's ``config`` (both keyed by setting
    name, values parsed; a flag overrides the file's value). Returns the rule settings and the
    rest (baseline, fail-on-stale). ``flag_name`` spells a flag in messages (amdocc.app.check
    names its keyword arguments)."""
    merged = {**config, **flags}

    def source(key: str) -> str:
        return flag_name(key) if key in flags else f"{key} in {config_name}"

    if "rules" in merged:
        chosen = merged["rules"]
    else:
        chosen = DEFAULT_RULES + (("occupancy",) if "min-occupancy" in merged else ())
        chosen = tuple(r for r in RULES if r in chosen)
    for key in unused(flags, config):
        del merged[key]  # the file's threshold of a rule the command line turned off (reported)
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
        raise UsageError(
            f"the occupancy rule ({source('rules')}) needs a floor: {flag_name('min-occupancy')} W (waves per SIMD)"
        )
    if "min-occupancy" in merged:
        chosen_model = merged.get("model", "hip")
        most = most_waves(chosen_model)
        if merged["min-occupancy"] > most:
            raise UsageError(
                f"{source('min-occupancy')} {_shown(merged['min-occupancy'])} can never be met: the "
                f"{chosen_model} model counts at most {most} waves per SIMD on any processor"
            )
    thresholds = {attribute(k): v for k, v in merged.items() if SETTINGS[k][1]}
    if "budget" in merged:
        thresholds["budgets"] = merged["budget"]
    rest = {attribute(k): v for k, v in merged.items() if k not in ("rules", "budget") and not SETTINGS[k][1]}
    return Settings(rules=chosen, **thresholds), rest


def floor_on(settings: Settings, target: Any, named: str) -> None:
    """With the processor named (its target or device, ``named``), a floor above the waves per SIMD
    the model can answer there can never be met: a UsageError, before any kernel is read."""
    if settings.min_occupancy is None or "occupancy" not in settings.rules:
        return
    column = "hip_max_waves_per_simd" if settings.model == "hip" else "max_waves_per_simd"
    most = int(getattr(target, column))
    if settings.min_occupancy > most:
        raise UsageError(
            f"{{min_occupancy}} {_shown(settings.min_occupancy)} can never be met on {named}: the "
            f"{settings.model} model counts at most {most} waves per SIMD on {target.name} ({column})",
            params=("min_occupancy",),
        )


def unused(flags: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The file's thresholds whose every rule ``--rules`` on the command line turned off."""
    if "rules" not in flags:
        return []
    on = set(flags["rules"]) | ({"budget"} if "budget" in flags or "budget" in config else set())  # budgets use some
    return [
        key
        for key, value in config.items()
        if key not in flags and SETTINGS[key][1] and not set(SETTINGS[key][1] or ()) & on and value is not None
    ]


def overrides(flags: dict[str, Any], config: dict[str, Any], config_name: str | None) -> list[str]:
    """One line per file setting the command line replaced or made unused, for the output:
    "--max-scratch 64 overrides max-scratch = 0 in pyproject.toml"."""
    lines = [
        f"--{key} {_shown(flags[key])} overrides {key} = {_shown(config[key])} in {config_name}"
        for key in flags.keys() & config.keys()
        if not _same(key, flags[key], config[key])
    ]
    lines += [
        f"{key} = {_shown(config[key])} in {config_name} is not used: --rules {_shown(flags['rules'])} "
        f"turns off the {' and '.join(SETTINGS[key][1] or ())} rule"
        for key in unused(flags, config)
    ]
    return sorted(lines)


def _same(key: str, a: object, b: object) -> bool:
    if key == "baseline" and isinstance(a, Path) and isinstance(b, Path):  # as path() parsed them
        return a.resolve() == b.resolve()
    return a == b


def _shown(value: object) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)
