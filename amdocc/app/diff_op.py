"""diff: two builds of a kernel library compared kernel by kernel (``amdocc diff OLD NEW``), the
regressions named as amdocc.app.compare decides them.

Each build is read once, file by file (in worker processes with ``jobs``), and each kernel is kept
as a small :class:`Seen` record: its identity, its counts, its declared block size and its usage
(what the models read), never its code object. The occupancy of a pair is asked last, at the NEW
kernel's block size for both sides, from the usages: a wheel's two builds then cost no more
memory than the census of the pair.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from ..models.usage import KernelUsage
from .compare import facts, failed_kinds, kinds_named, live_asked, loop_spill_figure, loop_spills_asked, regressions

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..identity import KernelId
    from .reading import Event, FileItem
    from .selection import Selection

# A KernelUsage as plain values, its target by name (a processor row is the table's one object,
# which a worker process cannot send back as itself).
PortableUsage = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Seen:
    """One kernel of one build as diff keeps it: where it is, the counts it compares, its
    declared block size, and what the models read (or why they cannot: a refusal in words)."""

    location: str
    target: str  # the identity's target: the code's target id, or "... on PROCESSOR" (Selection.evaluated_as)
    processor: str  # the processor it is evaluated on
    origin: str
    name: str
    counts: tuple[int | None, int | None, int | None, int | None, int | None, tuple[int | None, int | None]]
    block: tuple[int | None, str]  # block_for(kernel, given, "hip")
    usage: PortableUsage | None
    refused: str | None  # why it has no usage (no counts, an unknown processor, a relocatable)
    in_loops: int | None = None  # spill dwords in loops (compare.loop_spill_figure), None: not read
    in_loops_unknown: str | None = None  # why they could not be read, where they were asked for
    live: tuple[int | None, str | None] = (None, None)  # max live VGPRs and where (census_op.live_columns)
    live_unknown: str | None = None  # why they could not be read, where they were asked for


@dataclass(frozen=True, slots=True)
class DiffSpec:
    """What a diff worker needs (picklable): the tree's root or None, the given block, and the
    Selection's arguments."""

    root: str | None
    block: int | None
    chosen: tuple[str | None, str | None, str | None, bool]
    loops: str = "spilling"  # which kernels' spills in loops are read (compare.loop_spills_asked)
    live: bool = False  # whether every kernel's live VGPRs are read (compare.live_asked)


# The fields of a KernelUsage, in order, as portable() lists them.
_USAGE_FIELDS = tuple(f.name for f in fields(KernelUsage))


def portable(usage: KernelUsage) -> PortableUsage:
    """``usage`` as plain values, its target by name and without its kernel name (the
    identity holds it)."""
    return tuple(
        usage.target.name if f == "target" else ("" if f == "name" else getattr(usage, f)) for f in _USAGE_FIELDS
    )


def restored(values: PortableUsage) -> KernelUsage:
    """The KernelUsage ``portable`` made ``values`` of, on the table's own processor row."""
    from ..targets import get_target

    given = dict(zip(_USAGE_FIELDS, values, strict=True))
    given["target"] = get_target(given["target"])
    return KernelUsage(**given)


def diff_file(item: FileItem, spec: DiffSpec) -> Iterator[Event]:
    """One file of a build: ("kernel", Seen) per selected kernel, ("error", record) and
    ("skipped", record) as read, and last ("seen", what the selection passed over)."""
    from ..errors import AmdoccError
    from ..identity import location_of
    from ..models import usage_of
    from ..policy.checks import LOCAL_COUNTS
    from .occupancy_op import block_for
    from .reading import item_path
    from .selection import Selection, selected_in

    selection = Selection(*spec.chosen)
    where = selection.evaluation()
    source = item_path(item)  # a large file is cut into parts
    relative = os.path.relpath(source, spec.root).replace(os.sep, "/") if spec.root else ""
    head: tuple[str, str, str, str] = ("", "", "", "")
    for kind, value in selected_in(item, selection):
        if kind == "code_object":
            co: CodeObject = value
            place = selection.evaluated_as(co.target_id, co.target)
            head = (location_of(relative, co.origin.hops), place["target"], place["processor"], co.origin.chain)
        elif kind == "kernel":
            kernel: Kernel = value[1]
            usage, refused = None, None
            try:
                if not kernel.launchable and not where.get("what_if"):
                    raise AmdoccError(f"kernel {kernel.name}: {LOCAL_COUNTS}")
                usage = portable(usage_of(kernel, where.get("target"), where.get("device")))
            except AmdoccError as exc:
                refused = str(exc)
            r = kernel.resources
            counts = (r.vgprs, r.agprs, r.sgprs, r.lds, r.scratch, r.spills)
            location, target, processor, origin = head
            block = block_for(kernel, spec.block, "hip")
            live: tuple[int | None, str | None] = (None, None)
            live_unknown = None
            if spec.live:  # one analysis gives both the spills in loops and the live VGPRs
                from .census_op import isa_columns

                read = isa_columns(kernel, "all")
                stores, reloads = read["spill_stores_in_loops"], read["spill_reloads_in_loops"]
                in_loops = None if stores is None or reloads is None else stores + reloads
                unknown = read["spills_in_loops_unknown"]
                live, live_unknown = (read["max_live_vgpr"], read["max_live_vgpr_at"]), read["max_live_unknown"]
            else:
                in_loops, unknown = loop_spill_figure(kernel, spec.loops)
            yield (
                "kernel",
                Seen(
                    location,
                    target,
                    processor,
                    origin,
                    kernel.name,
                    counts,
                    block,
                    usage,
                    refused,
                    in_loops,
                    unknown,
                    live,
                    live_unknown,
                ),
            )
        else:
            yield kind, value


def _snapshot(
    path: str, spec: DiffSpec, jobs: int | None, selection: Selection, failures: list[str]
) -> dict[KernelId, Seen]:
    """Every selected kernel of ``path`` by its identity (amdocc.identity)."""
    from ..identity import Numbering
    from . import parallel

    number = Numbering()
    out: dict[KernelId, Seen] = {}
    files = parallel.expand([path])
    # Isolated: a diff disassembles the kernels that spill (all with live registers asked), and
    # LLVM's disassembler may crash on some bytes (docs/isa.md).
    for kind, value in parallel.run(files, diff_file, spec, parallel.jobs_for(jobs, files), isolated=True):
        if kind == "kernel":
            out[number(value.location, value.target, value.name)] = value
        elif kind == "seen":
            selection.merge(value)
        elif kind == "error":
            failures.append(value["error"])
    return out


def _facts(seen: Seen, block: int | None, dynamic_lds: int, device: str | None) -> tuple[dict[str, Any], str | None]:
    """The compared facts of one side at ``block``, and why its occupancy is not known (or None)."""
    from ..errors import UsageError
    from ..models import occupancy

    vgpr, agpr, sgpr, lds, scratch, spills = seen.counts
    occ, why = None, seen.refused
    if seen.usage is not None and why is None:
        try:
            occ = occupancy(restored(seen.usage), block_size=block, dynamic_lds=dynamic_lds, device=device)
        except UsageError as exc:  # a fact the model needs is unknown, dynamic VGPRs
            why = exc.message
    return (
        facts(
            vgpr=vgpr,
            agpr=agpr,
            sgpr=sgpr,
            lds=lds,
            scratch=scratch,
            spills=spills,
            blocks_per_cu=None if occ is None else occ.blocks_per_cu,
            unit=None if occ is None else occ.unit,
            limiter=None if occ is None else occ.limiter,
            spills_in_loops=seen.in_loops,
            max_live_vgpr=seen.live[0],
            max_live_vgpr_at=seen.live[1],
        ),
        why,
    )


def diff(
    old_path: str | os.PathLike[str],
    new_path: str | os.PathLike[str],
    *,
    kernel: str | None = None,
    target: str | None = None,
    device: str | None = None,
    block: int | None = None,
    dynamic_lds: int = 0,
    fail_on: Iterable[str] = ("occupancy",),
    what_if: bool = False,
    jobs: int | None = 1,
    isa: bool = False,
) -> dict[str, Any]:
    """Two builds compared kernel by kernel: the record ``amdocc diff --json`` prints
    ({"kernels": [...], "added", "removed", "moved", "failing", "failed_kinds", "errors"}).
    Each kernel is evaluated under the hip model at ``block`` (default: the NEW kernel's
    declared size, for both sides) and ``dynamic_lds``, on its own processor or, with
    ``target``/``device``, on the one named (a generic code object as that member, so that it
    pairs with the member's code: amdocc.identity); ``fail_on`` names the regression kinds
    (amdocc.app.compare.KINDS, or "all") that count as failing. Spill dwords inside loops
    (``old``/``new`` "spills_in_loops") are read from the machine code of kernels whose metadata
    counts a spill, and of every kernel when ``fail_on`` names "spills-in-loops" (needs a
    libLLVM; where they cannot be read, "spills_in_loops_unknown" says why). The most VGPRs live
    at once (``old``/``new`` "max_live_vgpr", and "max_live_vgpr_at" where) are read from every
    kernel when ``fail_on`` names "live-vgpr" or ``isa`` asks ("max_live_unknown" says why where
    they cannot be); ``isa`` reads the spills in loops of every kernel too.
    Nothing selected in
    either build raises UsageError."""
    from ..demangle import demangle
    from ..errors import UsageError
    from ..identity import match
    from .selection import Selection

    old_path, new_path = os.fspath(old_path), os.fspath(new_path)
    fail_on = kinds_named(fail_on)
    if what_if and target is None and device is None:
        raise UsageError("what_if needs target= or device=: the processor to evaluate on")
    selection = Selection(target, device, kernel, what_if)
    failures: list[str] = []
    built = []
    for path in (old_path, new_path):
        root = path if path != "-" and os.path.isdir(path) else None
        built.append(
            _snapshot(
                path,
                DiffSpec(
                    root,
                    block,
                    (target, device, kernel, what_if),
                    loop_spills_asked(fail_on, isa),
                    live_asked(fail_on, isa),
                ),
                jobs,
                selection,
                failures,
            )
        )
    old, new = built
    if not old and not new:
        if failures:
            raise UsageError("; ".join(failures[:3]))
        raise selection.nothing_selected_error(f"{old_path} and {new_path}")
    named = target is not None or device is not None
    paired = match(old, new, processor=(lambda s: s.processor) if named else None, function=_function)
    copies = {
        side: Counter((k.location, k.target, k.name) for k in build) for side, build in (("old", old), ("new", new))
    }

    def _identity(k: KernelId, seen: Seen, side: str) -> dict[str, Any]:
        """The identity keys of a record (amdocc.identity), how many copies its build holds,
        and where the code object is."""
        return {
            **k.as_dict(),
            "copies": copies[side][k.location, k.target, k.name],
            "processor": seen.processor,
            "origin": seen.origin,
        }

    rows: list[dict[str, Any]] = []
    unevaluated: Counter[str] = Counter()
    failing = 0
    for pair in paired.pairs():
        was, now, a, b = pair.old, pair.new, pair.old_value, pair.new_value
        size, source = b.block
        before, why_old = _facts(a, size, dynamic_lds, device)
        after, why_new = _facts(b, size, dynamic_lds, device)
        for why in dict.fromkeys((why_old, why_new)):
            if why:
                unevaluated[why] += 1
        worse = regressions(before, after)
        gate = [k for k in worse if k in fail_on]
        failing += bool(gate)
        rows.append(
            {
                "kernel": now.name,
                "demangled": demangle(now.name),
                "target": now.target,
                **_identity(now, b, "new"),
                "moved_from": {**was.as_dict(), "copies": copies["old"][was.location, was.target, was.name]}
                if pair.by == "moved"
                else None,
                "matched_by": pair.by,
                "was": None if pair.by == "identity" else {**was.as_dict(), "demangled": demangle(was.name)},
                "block_size": size,
                "block_source": source,
                "old": before,
                "new": after,
                "not_evaluated": why_new or why_old,
                "spills_in_loops_unknown": b.in_loops_unknown or a.in_loops_unknown,
                "max_live_unknown": b.live_unknown or a.live_unknown,
                "regressions": worse,
                "fails": gate,
            }
        )
    added = [{"kernel": k.name, "demangled": demangle(k.name), **_identity(k, s, "new")} for k, s in paired.added]
    removed = [{"kernel": k.name, "demangled": demangle(k.name), **_identity(k, s, "old")} for k, s in paired.removed]
    return {
        "old": old_path,
        "new": new_path,
        "fail_on": fail_on,
        "kernels": rows,
        "added": added,
        "removed": removed,
        "moved": sum(r["matched_by"] == "moved" for r in rows),
        "failing": failing,
        "failed_kinds": failed_kinds(rows),
        "not_evaluated": [{"reason": why, "kernels": n} for why, n in unevaluated.items()],
        "errors": failures,
    }


def _function(seen: Seen) -> str | None:
    """The kernel's qualified function name without its parameters (amdocc.identity's
    signature rule), or None when its name is not a mangled C++ function."""
    from ..identity import function_of

    return function_of(seen.name)
