"""Small helpers for readable terminal output."""
from __future__ import annotations

import json
import sys


def table(rows: list[list[str]], headers: list[str], indent: str = "  ") -> str:
    """Left-aligned columns (numbers right-aligned), widths fitted to the content."""
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(_numeric(r[i]) for r in rows) if rows else False for i in range(len(headers))]
    out = []
    for r in cells:
        parts = [c.rjust(w) if num and r is not headers else c.ljust(w)
                 for c, w, num in zip(r, widths, numeric)]
        out.append(indent + "  ".join(parts).rstrip())
    return "\n".join(out)


def _numeric(text: str) -> bool:
    return text.replace("/", "").replace("+", "").replace("-", "").replace(".", "").isdigit() or text in ("-", "?")


def fmt(value, none: str = "-") -> str:
    return none if value is None else str(value)


def write_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


def error(message: str) -> None:
    print(f"amdocc: {message}", file=sys.stderr)
