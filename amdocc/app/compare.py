"""What comparing two builds (``diff``) and two releases (``census OLD NEW``) share: the facts of
a kernel they compare, which changes are regressions, and how a change (the table cells that
``census OLD NEW --json`` carries) reads. The verdict sentence and the table's headers are the
command line's (amdocc.cli.diff)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Regression kinds, in the order verdicts and --fail-on lists name them. "spills-in-loops": more
# spill dwords inside loops (amdocc.policy.loop_spills), judged only where both sides are known.
# "live-vgpr": more VGPRs live at once (amdocc.isa.liveness's maximum), where both sides are known.
KINDS = ("occupancy", "spills", "scratch", "vgpr", "lds", "spills-in-loops", "live-vgpr")
LOOP_KIND = "spills-in-loops"
LIVE_KIND = "live-vgpr"


def loop_spills_asked(fail_on: Iterable[str], isa: bool = False) -> str:
    """Which kernels a comparison disassembles for their spills in loops: "all" when the gate
    watches them (or ``isa`` asks for the figures), else "spilling": only kernels whose metadata
    counts a spill (the cheap filter; the rest show none)."""
    fail_on = list(fail_on)
    return "all" if isa or LOOP_KIND in fail_on or LIVE_KIND in fail_on else "spilling"


def live_asked(fail_on: Iterable[str], isa: bool = False) -> bool:
    """Whether a comparison reads each kernel's live VGPRs (a disassembly of every kernel): when
    the gate watches them or ``isa`` asks for the figures."""
    return isa or LIVE_KIND in fail_on


def loop_spill_figure(kernel: Any, which: str) -> tuple[int | None, str | None]:
    """(spill dwords in loops, why unknown) of one kernel, as ``which`` (loop_spills_asked) asks:
    (None, None) for a kernel left out (``"spilling"`` and no spill counted by its metadata, or
    counts it lacks)."""
    from ..policy.loop_spills import SpillsUnknown, asked, loop_spills

    if not asked(kernel, which):
        return None, None
    try:
        return loop_spills(kernel).total, None
    except SpillsUnknown as exc:
        return None, exc.message


def kinds_named(value: object, name: str = "fail_on") -> list[str]:
    """The regression kinds a caller names (``fail_on``), as ``--fail-on`` takes them: names of
    KINDS or "all", returned in KINDS' order without repeats; an unknown name, or text where a
    list is expected, is a UsageError naming the parameter."""
    from ..errors import UsageError
    from .reading import sequence

    picked: set[str] = set()
    for kind in sequence(value, name, "regression kinds"):
        if kind == "all":
            picked.update(KINDS)
        elif kind in KINDS:
            picked.add(kind)
        else:
            raise UsageError(f"{name}: unknown regression kind {kind!r} (choose from {', '.join(KINDS)}; or all)")
    return [k for k in KINDS if k in picked]


def facts(
    *,
    vgpr: int | None,
    agpr: int | None,
    sgpr: int | None,
    lds: int | None,
    scratch: int | None,
    spills: tuple[int | None, int | None],
    blocks_per_cu: int | None,
    unit: str | None,
    limiter: str | None,
    spills_in_loops: int | None = None,
    max_live_vgpr: int | None = None,
    max_live_vgpr_at: str | None = None,
) -> dict[str, Any]:
    """One kernel as a comparison sees it. ``spills``: the (SGPR, VGPR) spill counts, None where
    unknown; ``blocks_per_cu``: the hip model's workgroups per CU, or per WGP when ``unit`` is
    "WGP" (``blocks_per_wgp`` then says so by name); ``spills_in_loops``: spill dwords inside
    loops (loop_spill_figure), None where not known or not asked; ``max_live_vgpr``: the most
    VGPRs live at once and ``max_live_vgpr_at`` the first stretch where they are (census_op's
    live_columns), None where not known or not asked."""
    known = [x for x in spills if x is not None]
    return {
        "vgpr": vgpr,
        "agpr": agpr,
        "sgpr": sgpr,
        "lds": lds,
        "scratch": scratch,
        "spills": sum(known) if known else None,
        "blocks_per_cu": blocks_per_cu,
        "blocks_per_wgp": blocks_per_cu if unit == "WGP" else None,
        "unit": unit,
        "limiter": limiter,
        "spills_in_loops": spills_in_loops,
        "max_live_vgpr": max_live_vgpr,
        "max_live_vgpr_at": max_live_vgpr_at,
    }


def same(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two kernels' facts are the same, where the live peak is (code moves with every
    edit) left out."""
    where = "max_live_vgpr_at"
    return {k: v for k, v in old.items() if k != where} == {k: v for k, v in new.items() if k != where}


def regressions(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The kinds that got worse from ``old`` to ``new`` (unknown counts as 0; spills in loops
    only where both sides are known: a figure never read is no regression)."""
    out = []
    if (old["blocks_per_cu"] or 0) > (new["blocks_per_cu"] or 0):
        out.append("occupancy")
    for kind, key in (("spills", "spills"), ("scratch", "scratch"), ("vgpr", "vgpr"), ("lds", "lds")):
        if (new[key] or 0) > (old[key] or 0):
            out.append(kind)
    before, after = old.get("spills_in_loops"), new.get("spills_in_loops")
    if before is not None and after is not None and after > before:
        out.append(LOOP_KIND)
    before, after = old.get("max_live_vgpr"), new.get("max_live_vgpr")
    if before is not None and after is not None and after > before:
        out.append(LIVE_KIND)
    return out


def failed_kinds(rows: list[dict[str, Any]]) -> list[str]:
    """The kinds that failed the gate in some row (each row's ``fails``)."""
    return [k for k in KINDS if any(k in r["fails"] for r in rows)]


def change(a: object, b: object) -> str:
    if a == b:
        return _shown(a)
    if isinstance(a, int) and isinstance(b, int):
        return f"{a}->{b} ({b - a:+d})"
    return f"{_shown(a)}->{_shown(b)}"


def cells(
    old: dict[str, Any],
    new: dict[str, Any],
    old_block: int | None,
    new_block: int | None,
    worse: list[str],
    fails: list[str],
) -> list[str]:
    """The "cells" of one kernel's change in ``census OLD NEW --json`` (the CLI's table shows
    them under amdocc.cli.diff.HEADERS)."""
    units = [u for u in dict.fromkeys((old["unit"], new["unit"])) if u]
    per = f" per {'->'.join(units)}" if units else ""
    return [
        change(old["vgpr"], new["vgpr"]) + _live(old, new),
        change(old["sgpr"], new["sgpr"]),
        change(old["lds"], new["lds"]),
        change(old["scratch"], new["scratch"]),
        change(old["spills"], new["spills"]) + _in_loops(old, new),
        f"{change(old['blocks_per_cu'], new['blocks_per_cu'])} @{change(old_block, new_block)}{per}",
        ", ".join(("FAIL " if k in fails else "") + k for k in worse) or "-",
    ]


def _in_loops(old: dict[str, Any], new: dict[str, Any]) -> str:
    """ " (0->12 (+12) in loops)" after the spills cell, where either side has spills in loops."""
    a, b = old.get("spills_in_loops"), new.get("spills_in_loops")
    return f" ({change(a, b)} in loops)" if a or b else ""


def _live(old: dict[str, Any], new: dict[str, Any]) -> str:
    """ " (live 176->184 (+8) at 0x1a40-0x1b20)" after the VGPR cell, where either side's live
    VGPRs were read; the place is NEW's peak (OLD's when NEW's is not known)."""
    a, b = old.get("max_live_vgpr"), new.get("max_live_vgpr")
    if a is None and b is None:
        return ""
    at = new.get("max_live_vgpr_at") or old.get("max_live_vgpr_at")
    return f" (live {change(a, b)}" + (f" at {at})" if at else ")")


def _shown(value: object) -> str:
    return "-" if value is None else str(value)
