"""A census of every kernel in a library, a tree or a wheel: one row per kernel, and a summary.

Rows are plain dicts with the :data:`COLUMNS` below (built by ``amdocc census``); this package
aggregates them (:class:`Summary`), writes them (CSV or Parquet, :mod:`.tables`) and reports
them (one offline HTML page, :mod:`.html`). It reads no files of its own.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..caches import cached

# (column, type): the row a kernel becomes. Types are for Parquet: str, int, float, bool.
COLUMNS = (
    ("member", str),  # the file within the tree (or wheel), '' for a single file
    ("path", str),
    ("origin", str),
    ("target", str),  # the code's target id; "X on P" where evaluated on processor P, "(what-if)"
    ("built_for", str),  # the code's target id
    ("processor", str),  # the processor evaluated on
    ("what_if", bool),  # evaluated where the code cannot run (--what-if)
    ("kernel", str),
    ("demangled", str),
    ("symbol", str),
    ("wave", int),
    ("vgprs", int),
    ("vgprs_allocated", int),
    ("arch_vgprs", int),
    ("agprs", int),
    ("sgprs", int),
    ("sgprs_allocated", int),
    ("lds", int),
    ("scratch", int),
    ("vgpr_spills", int),
    ("sgpr_spills", int),
    ("dynamic_stack", bool),
    ("max_flat_workgroup_size", int),
    ("block_size", int),
    ("block_source", str),
    ("blocks_per_cu", int),  # per WGP when unit is "WGP"
    ("blocks_per_wgp", int),
    ("unit", str),
    ("waves_per_simd", float),
    ("occupancy_fraction", float),
    ("limiter", str),
    ("launch_checked", bool),  # False: no declared size, or a kernel amdocc cannot model
    ("cannot_launch", str),  # models that fit no workgroup of the declared size, ','-joined (see no_model_fits)
    ("findings", str),  # codes of warning/error findings, ';'-joined
    ("problem", str),  # why occupancy could not be computed, if it could not
    ("copy", int),  # which copy of (member, target, kernel) in reading order, 0 first (amdocc.identity)
    ("unmodelled", str),  # "model: why" of each model that cannot answer here (" | "-joined)
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
# Columns read from the kernel's machine code (amdocc.policy.loop_spills), after COLUMNS, only in
# a census asked for them (--isa): spill dwords stored/reloaded inside loops, the source line of
# the first, and why they could not be read (null when they could).
ISA_COLUMNS = (
    ("spill_stores_in_loops", int),
    ("spill_reloads_in_loops", int),
    ("spills_in_loops_line", str),
    ("spills_in_loops_unknown", str),
    ("max_live_vgpr", int),
    ("max_live_agpr", int),
    ("max_live_sgpr", int),
    ("max_live_vgpr_at", str),
    ("max_live_vgpr_line", str),
    ("max_live_unknown", str),
)
# One census row: COLUMN_NAMES → values of the COLUMNS types, None where not known.
Row = dict[str, Any]


def member_of(relative_path: str, hops: Iterable[str]) -> str:
    """The member a kernel lives in: its location as amdocc.identity decides it (the file's
    path within what was given, then any archive member, packing hops and offsets left out)."""
    from ..identity import location_of

    return location_of(relative_path, hops)


# The models a launch is judged by (amdocc.policy.checks' launch rule), and how a summary names
# HIP's: a zero only its occupancy API answers is its arithmetic, not a launch the hardware refuses.
LAUNCH_MODELS = ("hip", "llvm", "hw")


def models_fitting_none(row: Row) -> set[str]:
    """The models that fit no workgroup of the row's declared size (its cannot_launch column)."""
    return set(filter(None, (row["cannot_launch"] or "").split(",")))


def no_model_fits(row: Row) -> bool:
    """Whether the row's kernel cannot launch: every model that judged it fits no workgroup. A
    model that could not answer here (its "unmodelled" entry) did not judge."""
    judged = set(LAUNCH_MODELS) - set(row.get("unmodelled_by") or {})
    zero = models_fitting_none(row)
    return bool(zero) and zero >= judged


def models_fitting_some(row: Row) -> list[str]:
    """The models that judged the row's launch and fit a workgroup, in LAUNCH_MODELS order."""
    unjudged, zero = set(row.get("unmodelled_by") or {}), models_fitting_none(row)
    return [m for m in LAUNCH_MODELS if m not in unjudged and m not in zero]


def some_models_heading(rows: Iterable[Row]) -> str:
    """The heading of the kernels only some models fit no workgroup of: when only HIP's API
    answers 0 it says that this is HIP's arithmetic (its bit-mask round-up, its WGP-mode parse),
    not a launch the hardware refuses."""
    if all(models_fitting_none(row) == {"hip"} and "hw" in models_fitting_some(row) for row in rows):
        return "HIP's occupancy API answers 0 at their declared size; the hardware fits at least 1 (HIP's arithmetic)"
    return "fit no workgroup of their declared size under some models only (another model fits one)"


def spills(row: Row) -> int:
    return (row["vgpr_spills"] or 0) + (row["sgpr_spills"] or 0)


class Summary:
    """What the report shows, gathered one row at a time (memory does not follow the row count,
    save for the kernels that cannot launch, which are all listed, and those only some models
    fit no workgroup of, listed apart: "cannot launch" is kept for what no model fits)."""

    def __init__(self, top: int = 25) -> None:
        self.top = top
        self.kernels = 0
        self.code_objects = 0
        self.files: set[str] = set()
        self.targets: dict[str, dict[str, Any]] = {}
        self.findings: Counter[str] = Counter()
        self.spillers: list[tuple[int, int, Row]] = []  # heap of (spills, order, row)
        self.cannot_launch: list[Row] = []
        self.some_models_zero: list[Row] = []  # answered 0 by some models; another fits one
        self.skipped: Counter[str] = Counter()
        self.errors: list[dict[str, str]] = []

    def add(self, row: Row) -> None:
        self.kernels += 1
        self.files.add(row["path"])
        t = self.targets.get(row["target"])
        if t is None:
            t = self.targets[row["target"]] = {
                "processor": row.get("processor"),
                "max_waves_per_simd": _most_waves(row.get("processor")),
                "kernels": 0,
                "occupancy": Counter(),
                "limiters": Counter(),
                "spilling": 0,
                "no_spill_counts": 0,
                "scratch": 0,
                "cannot_launch": 0,
                "some_models_zero": 0,
                "launch_unchecked": 0,
                "unmodelled": Counter(),
            }
        t["kernels"] += 1
        t["occupancy"][_bucket(row["waves_per_simd"])] += 1
        t["limiters"][row["limiter"] or "n/a"] += 1
        if row["vgpr_spills"] is None and row["sgpr_spills"] is None:
            t["no_spill_counts"] += 1
        n = spills(row)
        if n:
            t["spilling"] += 1
            self._keep_spiller((n, -self.kernels, row))
        if row["scratch"]:
            t["scratch"] += 1
        if "spill_stores_in_loops" in row:  # a census with --isa: kernels spilling in loops, and unread
            inside = (row["spill_stores_in_loops"] or 0) + (row["spill_reloads_in_loops"] or 0)
            t["spilling_in_loops"] = t.get("spilling_in_loops", 0) + bool(inside)
            t["spills_in_loops_unknown"] = t.get("spills_in_loops_unknown", 0) + bool(row["spills_in_loops_unknown"])
            # The most VGPRs live at once in any of the target's kernels, and how many it could not read.
            if row.get("max_live_vgpr") is not None:
                t["max_live_vgpr"] = max(t.get("max_live_vgpr", 0), row["max_live_vgpr"])
            t["max_live_unknown"] = t.get("max_live_unknown", 0) + bool(row.get("max_live_unknown"))
        if row["cannot_launch"] and no_model_fits(row):
            t["cannot_launch"] += 1
            self.cannot_launch.append(row)
        elif row["cannot_launch"]:
            t["some_models_zero"] += 1
            self.some_models_zero.append(row)
        elif not row["launch_checked"]:
            t["launch_unchecked"] += 1
        for code in filter(None, (row["findings"] or "").split(";")):
            self.findings[code] += 1
        for model, why in (row.get("unmodelled_by") or {}).items():
            t["unmodelled"][f"{model}: {why}"] += 1

    def merge(self, part: Summary) -> None:
        """Add ``part``, a summary of the rows that follow every row added so far (a worker's file),
        as if each of its rows were added here in turn: counts add up, the top spillers are the
        top of both (``part``'s order numbers follow this one's), and the kernels that cannot
        launch are listed after these."""
        before = self.kernels
        self.kernels += part.kernels
        self.files |= part.files
        for name, theirs in part.targets.items():
            t = self.targets.get(name)
            if t is None:
                self.targets[name] = theirs
                continue
            for key, value in theirs.items():
                if isinstance(value, Counter):
                    t[key].update(value)
                elif key not in ("processor", "max_waves_per_simd"):
                    t[key] = t.get(key, 0) + value
        self.findings.update(part.findings)
        for n, order, row in part.spillers:
            self._keep_spiller((n, order - before, row))
        self.cannot_launch.extend(part.cannot_launch)
        self.some_models_zero.extend(part.some_models_zero)
        self.code_objects += part.code_objects
        self.skipped.update(part.skipped)
        self.errors.extend(part.errors)

    def _keep_spiller(self, item: tuple[int, int, Row]) -> None:
        """Keep (spills, -order, row) if it is among the ``top`` most (the earlier row on a tie)."""
        if len(self.spillers) < self.top:
            heapq.heappush(self.spillers, item)
        elif item > self.spillers[0]:
            heapq.heapreplace(self.spillers, item)

    def kept_rows(self) -> list[Row]:
        """The rows this summary holds (the top spillers and the kernels that cannot launch or that
        some models fit no workgroup of), each once."""
        rows = {}
        for row in [*self.cannot_launch, *self.some_models_zero, *(row for _, _, row in self.spillers)]:
            rows[(row["member"], row["target"], row["kernel"], row["copy"])] = row
        return list(rows.values())

    def add_code_object(self) -> None:
        self.code_objects += 1

    def add_skipped(self, reason: str) -> None:
        self.skipped[reason] += 1

    def add_error(self, path: str, error: str) -> None:
        self.errors.append({"path": path, "error": error})

    def as_dict(self) -> dict[str, Any]:
        top = [row for _, _, row in sorted(self.spillers, reverse=True)]
        return {
            "files": len(self.files),
            "code_objects": self.code_objects,
            "kernels": self.kernels,
            "targets": {
                name: {
                    **t,
                    "occupancy": dict(sorted(t["occupancy"].items(), key=_bucket_order)),
                    "limiters": dict(t["limiters"].most_common()),
                    "unmodelled": dict(t["unmodelled"].most_common()),
                }
                for name, t in sorted(self.targets.items())
            },
            "top_spillers": top,
            "cannot_launch": self.cannot_launch,
            "some_models_zero": self.some_models_zero,
            "findings": dict(self.findings.most_common()),
            "skipped": dict(self.skipped.most_common()),
            "errors": self.errors,
        }


# Histogram buckets are a quarter of a wave wide: a workgroup of 1024 threads (16 wave64 waves)
# on a CU of 4 SIMDs is 4 waves per SIMD, one wave on that CU is 0.25, and 0.25 is not 0.
BUCKET = 0.25


@cached(maxsize=4096)  # a census has a few dozen values, and every row asks again
def _bucket(waves: float | None) -> str:
    """Waves per SIMD as a histogram bucket: the multiple of BUCKET at or below it, written as
    the shortest number ("3", "0.25", "1.5"); "n/a" when not computed."""
    if waves is None:
        return "n/a"
    low = math.floor(waves / BUCKET) * BUCKET
    return f"{low:g}"


def _bucket_order(item: tuple[str, int]) -> tuple[int, float]:
    key = item[0]
    return (1, 0.0) if key == "n/a" else (0, float(key))


def _most_waves(processor: str | None) -> int | None:
    """The most waves per SIMD HIP's occupancy API counts on ``processor`` (the targets table's
    hip_max_waves_per_simd), the histogram's range; None for a processor the table lacks."""
    from ..targets import find_target

    target = find_target(processor) if processor else None
    return None if target is None else target.hip_max_waves_per_simd
