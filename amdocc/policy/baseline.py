"""Accepted violations of ``amdocc check``, kept in a file so that only new ones fail a build.

llama.cpp keeps such a list by hand in its HIP spill check (a set of mangled names, updated in
PRs #26859 and #28909 as kernels were renamed or fixed). Here the tool writes it: each entry is
one violation that was accepted, named by the kernel's identity (amdocc.identity: location,
target id, kernel name, copy) and the rule, with the value it had then. A violation still
matches its entry while it is no worse than that value; an entry that matches nothing any more
is stale, and is reported so the file can shrink (``--update-baseline``). An accepted violation
in one library (or one bundle) accepts nothing in another.

Version 1 files (written before identities) name no location: their entries are read as
accepting the kernel wherever it is, as they did, and ``--update-baseline`` rewrites the file
as version 2 with each entry's location. ``location`` null in a version 2 file means the same.

The file is JSON, sorted, one entry per line, so that a change to it reads well in review.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError, UsageError
from .checks import RULES, worse

FORMAT = "amdocc-check-baseline"
VERSION = 2
READS = (1, 2)  # versions read; version 1 entries have no location (see the module's text)


@dataclass(frozen=True, slots=True)
class Entry:
    kernel: str
    target: str
    rule: str
    value: int | float | str | None = None
    location: str | None = ""  # None: any location (a version 1 entry)
    copy: int = 0

    @property
    def key(self) -> tuple[str | None, int, str, str, str]:
        """What a violation must share with the entry to match it (None: any location)."""
        if self.location is None:
            return None, 0, self.kernel, self.target, self.rule
        return self.location, self.copy, self.kernel, self.target, self.rule

    @property
    def anywhere(self) -> tuple[None, int, str, str, str]:
        """The key of a version 1 entry for the same kernel, target and rule."""
        return None, 0, self.kernel, self.target, self.rule

    def as_dict(self) -> dict[str, int | float | str | None]:
        return {
            "kernel": self.kernel,
            "target": self.target,
            "rule": self.rule,
            "value": self.value,
            "location": self.location,
            "copy": self.copy,
        }


def read(path: str | Path) -> list[Entry]:
    """The entries of a baseline file; a missing, unreadable or malformed file is an error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(
            f"baseline {path} does not exist (write it with {{update_baseline}})", params=("update_baseline",)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"baseline {path} cannot be read: {exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise FormatError(f"baseline {path} is not JSON: {exc}") from None
    version = doc.get("version") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or version not in READS or isinstance(version, bool):
        raise FormatError(f"baseline {path} is not an {FORMAT} file of version {' or '.join(map(str, READS))}")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise FormatError(f"baseline {path}: 'entries' must be a list")
    return [_entry(e, path, i, version) for i, e in enumerate(entries)]


def upgrade_notice(path: str | Path, entries: list[Entry]) -> str | None:
    """The one line to say when ``entries`` hold version 1 entries (no location), else None."""
    old = sum(e.location is None for e in entries)
    if not old:
        return None
    return (
        f"baseline {path}: {old} entr{'y' if old == 1 else 'ies'} of format version 1 name no location, so "
        f"each accepts its kernel in every library and bundle; --update-baseline rewrites the file as "
        f"version {VERSION}, each entry with its location"
    )


def _entry(raw: object, path: Path, index: int, version: int = VERSION) -> Entry:
    where = f"baseline {path}: entry {index}"
    if not isinstance(raw, dict):
        raise FormatError(f"{where} is not an object")
    for key in ("kernel", "target", "rule"):
        if not isinstance(raw.get(key), str):
            raise FormatError(f"{where} has no string {key!r}")
    if raw["rule"] not in RULES and not raw["rule"].startswith("budget:"):  # budget:<comparison>
        raise FormatError(f"{where}: unknown rule {raw['rule']!r} (rules: {', '.join(RULES)})")
    value = raw.get("value")
    if not (value is None or isinstance(value, (int, float, str))) or isinstance(value, bool):
        raise FormatError(f"{where}: value must be a number, a string or null")
    if version == 1:
        return Entry(raw["kernel"], raw["target"], raw["rule"], value, None)
    location, copy = raw.get("location", ""), raw.get("copy", 0)
    if not (location is None or isinstance(location, str)):
        raise FormatError(f"{where}: location must be a string or null")
    if not isinstance(copy, int) or isinstance(copy, bool) or copy < 0:
        raise FormatError(f"{where}: copy must be a count (0 for the first copy)")
    return Entry(raw["kernel"], raw["target"], raw["rule"], value, location, copy)


def _order(rule: str) -> tuple[int, str]:
    """Rules in report order, then budgets by their text."""
    return (RULES.index(rule), "") if rule in RULES else (len(RULES), rule)


def dumps(entries: Iterable[Entry]) -> str:
    ordered = sorted(
        entries,
        key=lambda e: (e.target, e.location is not None, e.location or "", e.kernel, e.copy, *_order(e.rule)),
    )
    lines = [json.dumps(e.as_dict(), sort_keys=False) for e in ordered]
    body = ",\n  ".join(lines)
    return (
        f'{{"format": "{FORMAT}", "version": {VERSION},\n "entries": [\n  {body}\n ]}}\n'
        if lines
        else f'{{"format": "{FORMAT}", "version": {VERSION},\n "entries": []}}\n'
    )


def write(path: str | Path, entries: Iterable[Entry]) -> None:
    try:
        Path(path).write_text(dumps(entries), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"baseline {path} cannot be written: {exc}") from None


def classify(
    found: Iterable[Entry], entries: list[Entry], in_scope: Callable[[Entry], bool]
) -> tuple[list[str], list[Entry]]:
    """Each found violation's status ("new", "accepted" or "worse": accepted once, now past the
    recorded value), and the stale entries: in scope of this run, matched by nothing found."""
    statuses = []
    matched = set()
    by_key = entries_by_key(entries)
    for f in found:
        entry = accepted_by(f, by_key)
        if entry is None:
            statuses.append("new")
        else:
            matched.add(entry.key)
            statuses.append("worse" if worse(f.rule, f.value, entry.value) else "accepted")
    stale = [e for e in entries if e.key not in matched and in_scope(e)]
    return statuses, stale


def entries_by_key(entries: list[Entry]) -> dict[tuple[str | None, int, str, str, str], Entry]:
    return {e.key: e for e in entries}


def accepted_by(found: Entry, by_key: dict[tuple[str | None, int, str, str, str], Entry]) -> Entry | None:
    """The entry that accepts violation ``found``: the one of its own identity, else a version 1
    entry of its kernel, target and rule (which names no location)."""
    return by_key.get(found.key) or by_key.get(found.anywhere)


def updated(found: Iterable[Entry], entries: list[Entry], in_scope: Callable[[Entry], bool]) -> list[Entry]:
    """The baseline that accepts everything found now: one entry per (identity, rule) with its
    worst value, plus the old entries this run did not look at."""
    out: dict[tuple[str | None, int, str, str, str], Entry] = {}
    for f in found:
        old = out.get(f.key)
        if old is None or worse(f.rule, f.value, old.value):
            out[f.key] = f
    for e in entries:
        if not in_scope(e) and e.key not in out:
            out[e.key] = e
    return list(out.values())


__all__ = [
    "FORMAT",
    "VERSION",
    "Entry",
    "accepted_by",
    "classify",
    "dumps",
    "read",
    "updated",
    "upgrade_notice",
    "write",
]
