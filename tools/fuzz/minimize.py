"""Shrinking a failing input, and writing it out as a reproducer.

The first input of each failure group is minimized in forked children limited like the
workers: mutations dropped while the failure persists, mutated bytes reverted, the surrounding
containers dropped, the tail cut. It is written as ``<n>-<signature>.bin`` with a ``.txt`` that
says what was changed, what was still needed, the traceback, and how to replay and check it.
"""

from __future__ import annotations

import difflib
import re
import time
from pathlib import Path

from .campaign import Stats, check_in_child
from .inputs import generate, replay_steps
from .layers import identity
from .limits import AS_LIMIT_MIB, RSS_LIMIT_MIB


class Minimizer:
    """Shrinks one failing input while the failure keeps its signature (time- and step-bounded)."""

    def __init__(
        self,
        failure: dict,
        time_limit: float,
        hang_timeout: float,
        budget_seconds: float = 60.0,
        mode: str = "bytes",
        rss_limit_mib: float = RSS_LIMIT_MIB,
        as_limit_mib: int = AS_LIMIT_MIB,
    ):
        self.mode = mode
        self.rss_limit_mib = rss_limit_mib
        self.as_limit_mib = as_limit_mib
        self.kind = failure["kind"]
        self.signature = failure["signature"]
        self.time_limit = time_limit
        self.timeout = hang_timeout if self.kind in ("hang", "slow") else max(5.0, time_limit * 5)
        self.deadline = time.monotonic() + budget_seconds
        self.checks = 0

    def fails(self, data: bytes) -> bool:
        if time.monotonic() > self.deadline:
            return False
        self.checks += 1
        sig, elapsed, rss = check_in_child(data, self.timeout, self.mode, self.as_limit_mib)
        if self.kind == "slow":
            return elapsed > self.time_limit or sig == "hang"
        if self.kind == "hang":
            return sig == "hang"
        if self.kind == "rss":
            return rss > self.rss_limit_mib or (sig or "").startswith("MemoryError")
        return sig == self.signature

    def revert(self, before: bytes, after: bytes, wrap) -> bytes:
        """Undo as much of before→after as keeps the failure (ddmin over the changed hunks)."""
        hunks = _hunks(before, after)
        keep = hunks
        granularity = 2
        while len(keep) >= 1 and time.monotonic() < self.deadline:
            size = max(1, len(keep) // granularity)
            shrunk = False
            for start in range(0, len(keep), size):
                trial = keep[:start] + keep[start + size :]
                if trial != keep and self.fails(wrap(_apply(before, trial))):
                    keep, shrunk = trial, True
                    granularity = max(granularity - 1, 2)
                    break
            if not shrunk:
                if size == 1:
                    break
                granularity = min(len(keep), granularity * 2)
        return _apply(before, keep)

    def truncate(self, data: bytes) -> bytes:
        step = len(data) // 2
        while step >= 16 and time.monotonic() < self.deadline:
            if len(data) - step > 0 and self.fails(data[: len(data) - step]):
                data = data[: len(data) - step]
            else:
                step //= 2
        return data


def _hunks(before: bytes, after: bytes) -> list[tuple[int, int, bytes]]:
    """Edits (start, end in ``before``, replacement) that turn ``before`` into ``after``."""
    if len(before) == len(after):
        out, i = [], 0
        while i < len(before):
            if before[i] != after[i]:
                j = i
                while j < len(before) and before[j] != after[j] and j - i < 8:
                    j += 1
                out.append((i, j, after[i:j]))
                i = j
            else:
                i += 1
        return out
    # Lengths differ: the common prefix and suffix stay, the middle is one hunk. Then, if the two
    # middles are not too big, a real diff splits it (difflib is quadratic, so only when small).
    prefix = 0
    limit = min(len(before), len(after))
    while prefix < limit and before[prefix] == after[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
        suffix += 1
    old, new = before[prefix : len(before) - suffix], after[prefix : len(after) - suffix]
    if len(old) * len(new) > 4_000_000:
        return [(prefix, len(before) - suffix, new)]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(prefix + i1, prefix + i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def _apply(before: bytes, hunks) -> bytes:
    out, pos = [], 0
    for start, end, new in sorted(hunks, key=lambda h: h[0]):
        out.append(before[pos:start])
        out.append(new)
        pos = end
    out.append(before[pos:])
    return b"".join(out)


def minimize(
    failure: dict,
    seed: str,
    time_limit: float,
    hang_timeout: float,
    budget_seconds: float = 60.0,
    rss_limit_mib: float = RSS_LIMIT_MIB,
    as_limit_mib: int = AS_LIMIT_MIB,
) -> dict:
    """A smaller input with the same failure, and a description of what in it matters."""
    case = generate(seed, failure["index"])
    m = Minimizer(failure, time_limit, hang_timeout, budget_seconds, case.mode, rss_limit_mib, as_limit_mib)
    data, context = case.data, f"{case.fixture} [{case.layer_path}]"
    if not m.fails(data):
        return {
            "data": data,
            "context": context,
            "changes": [],
            "reproduced": False,
            "checks": m.checks,
            "mutations": case.mutations,
        }
    # Fewer mutations first: each one alone, then all but one, replayed with their own dice.
    after, mutations = case.layer_after, case.mutations
    steps = case.steps
    while len(steps) > 1 and time.monotonic() < m.deadline:
        for subset in [[s] for s in steps] + [steps[:k] + steps[k + 1 :] for k in range(len(steps))]:
            replayed = replay_steps(case.layer_before, subset)
            if replayed is not None and m.fails(case.wrap(replayed[0])):
                (after, mutations), steps = replayed, subset
                break
        else:
            break
    layer = m.revert(case.layer_before, after, case.wrap)
    data = case.wrap(layer)
    wrap, before = case.wrap, case.layer_before
    # Without the containers around it, does the mutated layer alone still fail the same way?
    if case.layer_path != "file" and m.fails(layer):
        data, wrap, context = layer, identity, f"{case.layer_path} of {case.fixture}, taken out alone"
    changes = [(start, before[start:end], new) for start, end, new in _hunks(before, layer)][:32]
    if wrap is identity and not changes:
        data = m.truncate(data)
    return {
        "data": data,
        "context": context,
        "changes": changes,
        "reproduced": True,
        "checks": m.checks,
        "mutations": mutations,
    }


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:80]


def write_reproducers(
    stats: Stats,
    out_dir: Path,
    minimize_seconds: float,
    hang_timeout: float,
    total_seconds: float = 300.0,
    as_limit_mib: int = AS_LIMIT_MIB,
) -> list[Path]:
    """One reproducer per distinct failure: minimized within ``minimize_seconds`` each, and
    written as generated once ``total_seconds`` of minimizing are spent."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stop = time.monotonic() + total_seconds
    groups: dict[str, list[dict]] = {}
    for f in stats.failures:
        groups.setdefault(f["signature"], []).append(f)
    written = []
    for n, (sig, items) in enumerate(sorted(groups.items(), key=lambda kv: kv[1][0]["index"]), 1):
        first = min(items, key=lambda f: f["index"])
        case = generate(stats.seed, first["index"])
        budget = min(minimize_seconds, max(0.0, stop - time.monotonic()))
        result = minimize(first, stats.seed, stats.time_limit, hang_timeout, budget, stats.rss_limit_mib, as_limit_mib)
        stem = out_dir / f"{n:02d}-{_slug(sig)}"
        stem.with_suffix(".bin").write_bytes(result["data"])
        lines = [
            f"signature:  {sig}",
            f"inputs:     {len(items)} (first: index {first['index']})",
            f"seed:       {stats.seed}",
            f"replay:     python tools/fuzz --replay {stats.seed}:{first['index']}",
            f"check:      python tools/fuzz --check {stem.with_suffix('.bin')} --mode {case.mode}",
            f"fixture:    {case.fixture}",
            f"layer:      {case.layer_path} ({case.layer_kind})",
            f"mode:       {case.mode}",
            "mutations:  " + "; ".join(f"{name}: {detail}" for name, detail in case.mutations),
            f"minimized:  {len(result['data'])} bytes ({result['context']}), "
            f"{'reproduced' if result['reproduced'] else 'NOT reproduced in a fresh process'}, "
            f"{result['checks']} checks",
        ]
        if result["mutations"] != case.mutations:
            lines.append("needed:     " + "; ".join(f"{name}: {detail}" for name, detail in result["mutations"]))
        if result["changes"]:
            lines.append("bytes that differ from the fixture's layer (offset: old -> new, first 24 bytes):")
            for start, old, new in result["changes"]:
                sizes = f" ({len(old)} -> {len(new)} bytes)" if len(old) != len(new) or len(old) > 24 else ""
                lines.append(f"  {start:#08x}: {old[:24].hex() or '-'} -> {new[:24].hex() or '-'}{sizes}")
        lines += ["", f"{first['exception']}: {first['message']}", "", first.get("traceback") or ""]
        stem.with_suffix(".txt").write_text("\n".join(lines))
        written.append(stem.with_suffix(".bin"))
    return written
