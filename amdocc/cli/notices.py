"""Diagnostics said once per run: a message repeated for many kernels (a profile's "inferred"
warning, a fact a model lacks) is printed once per target with a count, on standard error."""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Notices:
    """Messages gathered over a run, keyed by (target, message), in first-seen order."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], list[str]] = {}

    def add(self, target: str, message: str, kernel: str) -> None:
        self.seen.setdefault((target, message), []).append(kernel)

    def take_warnings(self, results: list[dict[str, Any]], mangled: bool = False) -> None:
        """Move each occupancy record's warnings here (the record keeps an empty list)."""
        for r in results:
            name = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
            for w in r.get("warnings") or ():
                self.add(r.get("target") or "", w, name)
            r["warnings"] = []

    def lines(self, label: str = "warning") -> list[str]:
        out = []
        for (target, message), kernels in self.seen.items():
            if len(kernels) == 1:
                out.append(f"amdocc: {label}: {kernels[0]} ({target}): {message}")
            else:
                out.append(f"amdocc: {label}: {message} ({len(kernels)} kernels on {target})")
        return out

    def flush(self, label: str = "warning", stream: TextIO | None = None) -> None:
        for line in self.lines(label):
            print(line, file=stream or sys.stderr)
        self.seen.clear()
