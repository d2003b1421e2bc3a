"""Small helpers for readable terminal output."""

from __future__ import annotations

import re
import sys
from typing import Any


def table(rows: list[list[str]], headers: list[str], indent: str = "  ") -> str:
    """Left-aligned columns (numbers right-aligned), widths fitted to the content."""
    widths = [len(h) for h in headers]
    numeric = [bool(rows)] * len(headers)
    for r in rows:
        for i, cell in enumerate(r):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
            if numeric[i] and not _numeric(cell):
                numeric[i] = False
    out = [indent + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in rows:
        # A row shorter than the headers leaves its last columns empty.
        out.append(
            indent
            + "  ".join(
                c.rjust(w) if num else c.ljust(w) for c, w, num in zip(r, widths, numeric, strict=False)
            ).rstrip()
        )
    return "\n".join(out)


# A cell of a numeric column: "-" or "?" (no value), or digits with / + - . between them
# ("41/48", "32+8"); any other text makes its column left-aligned.
_numeric = re.compile(r"[-?]|[0-9/+.\-]*[0-9][0-9/+.\-]*").fullmatch


def fmt(value: object, none: str = "-") -> str:
    return none if value is None else str(value)


def error(message: str) -> None:
    print(f"amdocc: {message}", file=sys.stderr)


def write_report(path: str, text: str) -> None:
    """Write a report to a file, or to standard output for '-', undecodable bytes of a path or
    name written as \\xNN (amdocc.printable)."""
    from ..errors import UsageError
    from ..printable import printable

    text = printable(text)
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None


def verdict(failing: int, failed: list[str], fail_on: list[str]) -> str:
    """The gate's last line: only the kinds that regressed, never every kind it watches."""
    if failing:
        return f"{failing} kernel(s) regress on {', '.join(failed)}"
    if fail_on:
        return f"no regression on {', '.join(fail_on)}"
    return "no regression gate (--fail-on none)"


# Headers of the compare table: amdocc.app.compare.cells, after the columns naming the kernel.
HEADERS = ["VGPR", "SGPR", "LDS", "scratch", "spills", "workgroups (hip)", "worse"]


def skipped_lines(skipped: list[dict[str, Any]]) -> list[str]:
    """Whole files passed over, one line each (with why); entries inside files, counted by why."""
    lines = [f"skipped {r['path']}: {r['reason']}" for r in skipped if not r["origin"]]
    inside: dict[str, int] = {}
    for r in skipped:
        if r["origin"]:
            inside[r["reason"]] = inside.get(r["reason"], 0) + 1
    if inside:
        lines.append("skipped entries: " + "; ".join(f"{n} {why}" for why, n in inside.items()))
    return lines
