"""diff: two builds of a kernel library compared kernel by kernel (``amdocc diff OLD NEW``), the
regressions named as amdocc.app.compare decides them."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .compare import facts, failed_kinds, kinds_named, regressions

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..identity import KernelId
    from .selection import Selection


def _snapshot(path: str, selection: Selection) -> dict[KernelId, tuple[CodeObject, Kernel]]:
    """Every selected kernel of ``path`` by its identity (amdocc.identity)."""
    from ..identity import Numbering, location_of, relative_path
    from ..loader import load

    number = Numbering()
    out = {}
    for co in load(path):
        location = location_of(relative_path(co.path, [path]), co.origin.hops)
        for k in selection.kernels_of(co):
            out[number(location, str(co.target_id), k.name)] = (co, k)
    return out


def _facts(kernel: Kernel, block: int | None, dynamic_lds: int) -> dict[str, Any]:
    from ..models import occupancy

    r = kernel.resources
    occ = occupancy(kernel, block_size=block, dynamic_lds=dynamic_lds)
    return facts(
        vgpr=r.vgprs,
        agpr=r.agprs,
        sgpr=r.sgprs,
        lds=r.lds,
        scratch=r.scratch,
        spills=r.spills,
        blocks_per_cu=occ.blocks_per_cu,
        unit=occ.unit,
        limiter=occ.limiter,
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
) -> dict[str, Any]:
    """Two builds compared kernel by kernel: the record ``amdocc diff --json`` prints
    ({"kernels": [...], "added", "removed", "moved", "failing", "failed_kinds"}). Each kernel is
    evaluated under the hip model at ``block`` (default: its declared size) and ``dynamic_lds``;
    ``fail_on`` names the regression kinds (amdocc.app.compare.KINDS, or "all") that count as
    failing. ``target``/``device`` keep the code objects that can run on that processor, as
    every command's selection does. Nothing selected in either build raises UsageError."""
    from ..demangle import demangle
    from ..errors import UsageError
    from ..identity import match
    from .occupancy_op import block_for
    from .selection import Selection

    old_path, new_path = os.fspath(old_path), os.fspath(new_path)
    fail_on = kinds_named(fail_on)
    selection = Selection(target, device, kernel)
    old, new = _snapshot(old_path, selection), _snapshot(new_path, selection)
    if not old and not new:
        raise UsageError(selection.nothing_selected(f"{old_path} and {new_path}"))
    paired = match(old, new)
    copies = {
        side: Counter((k.location, k.target, k.name) for k in build) for side, build in (("old", old), ("new", new))
    }

    def _identity(k: KernelId, co: CodeObject, side: str) -> dict[str, Any]:
        """The identity keys of a record (amdocc.identity), how many copies its build holds,
        and where the code object is."""
        return {
            **k.as_dict(),
            "copies": copies[side][k.location, k.target, k.name],
            "processor": co.processor,  # what "target" said before identities (now the full target id)
            "origin": co.origin.chain,
        }

    rows: list[dict[str, Any]] = []
    failing = 0
    pairs = [(k, k, a, b) for k, a, b in paired.same] + list(paired.moved)
    for was, now, (_, a), (co, b) in pairs:
        size, source = block_for(b, block, "hip")
        before, after = _facts(a, size, dynamic_lds), _facts(b, size, dynamic_lds)
        worse = regressions(before, after)
        gate = [k for k in worse if k in fail_on]
        failing += bool(gate)
        rows.append(
            {
                "kernel": now.name,
                "demangled": demangle(now.name),
                "target": now.target,
                **_identity(now, co, "new"),
                "moved_from": None
                if was == now
                else {**was.as_dict(), "copies": copies["old"][was.location, was.target, was.name]},
                "block_size": size,
                "block_source": source,
                "old": before,
                "new": after,
                "regressions": worse,
                "fails": gate,
            }
        )
    added = [
        {"kernel": k.name, "demangled": demangle(k.name), **_identity(k, co, "new")} for k, (co, _) in paired.added
    ]
    removed = [
        {"kernel": k.name, "demangled": demangle(k.name), **_identity(k, co, "old")} for k, (co, _) in paired.removed
    ]
    result = {
        "old": old_path,
        "new": new_path,
        "fail_on": fail_on,
        "kernels": rows,
        "added": added,
        "removed": removed,
        "moved": sum(r["moved_from"] is not None for r in rows),
        "failing": failing,
        "failed_kinds": failed_kinds(rows),
    }
    return result
