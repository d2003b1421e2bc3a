"""Accepted violations of ``amdocc check``, kept in a file so that only new ones fail a build.

llama.cpp keeps such a list by hand in its HIP spill check (a set of mangled names, updated in
PRs #26859 and #28909 as kernels were renamed or fixed). Here the tool writes it: each entry is
one violation that was accepted (kernel name, target id, rule) with the value it had then. A
violation still matches its entry while it is no worse than that value; an entry that matches
nothing any more is stale, and is reported so the file can shrink (``--update-baseline``).

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
VERSION = 1


@dataclass(frozen=True, slots=True)
class Entry:
    kernel: str
    target: str
    rule: str
    value: int | float | str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return self.kernel, self.target, self.rule

    def as_dict(self) -> dict[str, int | float | str | None]:
        return {"kernel": self.kernel, "target": self.target, "rule": self.rule, "value": self.value}


def read(path: str | Path) -> list[Entry]:
    """The entries of a baseline file; a missing, unreadable or malformed file is an error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"baseline {path} does not exist (write it with --update-baseline)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"baseline {path} cannot be read: {exc}") from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise FormatError(f"baseline {path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise FormatError(f"baseline {path} is not an {FORMAT} file of version {VERSION}")
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise FormatError(f"baseline {path}: 'entries' must be a list")
    return [_entry(e, path, i) for i, e in enumerate(entries)]


def _entry(raw: object, path: Path, index: int) -> Entry:
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
    return Entry(raw["kernel"], raw["target"], raw["rule"], value)


def _order(rule: str) -> tuple[int, str]:
    """Rules in report order, then budgets by their text."""
    return (RULES.index(rule), "") if rule in RULES else (len(RULES), rule)


def dumps(entries: Iterable[Entry]) -> str:
    ordered = sorted(entries, key=lambda e: (e.target, e.kernel, *_order(e.rule)))
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
    accepted = {e.key: e for e in entries}
    statuses, matched = [], set()
    for f in found:
        entry = accepted.get(f.key)
        if entry is None:
            statuses.append("new")
        else:
            matched.add(f.key)
            statuses.append("worse" if worse(f.rule, f.value, entry.value) else "accepted")
    stale = [e for e in entries if e.key not in matched and in_scope(e)]
    return statuses, stale


def updated(found: Iterable[Entry], entries: list[Entry], in_scope: Callable[[Entry], bool]) -> list[Entry]:
    """The baseline that accepts everything found now: one entry per (kernel, target, rule) with
    its worst value, plus the old entries this run did not look at."""
    out: dict[tuple[str, str, str], Entry] = {}
    for f in found:
        old = out.get(f.key)
        if old is None or worse(f.rule, f.value, old.value):
            out[f.key] = f
    for e in entries:
        if not in_scope(e) and e.key not in out:
            out[e.key] = e
    return list(out.values())


__all__ = ["FORMAT", "VERSION", "Entry", "classify", "dumps", "read", "updated", "write"]
