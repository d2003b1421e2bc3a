"""``amdocc diff OLD NEW``: kernel-by-kernel comparison of two builds, and a CI gate on regressions."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..app.compare import HEADERS, KINDS, cells, facts, failed_kinds, regressions, verdict
from .render import table

if TYPE_CHECKING:
    from ..app.selection import Selection
    from ..codeobject import CodeObject, Kernel
    from ..identity import KernelId

DESCRIPTION = """Compare two builds of a kernel library kernel by kernel: VGPRs, AGPRs, SGPRs,
static LDS, scratch, spills, and workgroups per CU under the hip model at --block and
--dynamic-lds (default block: the kernel's .reqd_workgroup_size, else its
.max_flat_workgroup_size). Exit 1 when a change listed in --fail-on gets worse, 0 otherwise, 2 on
unreadable input: a gate for kernel-library CI.

A kernel is matched by its location (the file within a directory, the archive member), its
code's target id, its name and, where one file holds several copies (two bundles), which copy:
a name that occurs twice is two kernels, each compared with its own counterpart. A kernel whose
target and name are now at another location is reported as moved (and compared), never merged
with another copy."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import args as a
    from .args import add_block_argument, add_kernel_argument, add_mangled_argument

    parser.description = DESCRIPTION
    parser.add_argument("old", metavar="OLD")
    parser.add_argument("new", metavar="NEW")
    add_block_argument(parser, "threads per block for the occupancy comparison")
    parser.add_argument("--dynamic-lds", type=a.LdsSize(), default=0)
    parser.add_argument(
        "--fail-on",
        type=a.Kinds(KINDS),
        default=["occupancy"],
        metavar="KIND,...",
        help=f"regressions that fail the gate: {', '.join(KINDS)}, all or none (default: occupancy)",
    )
    add_kernel_argument(parser)
    add_mangled_argument(parser)
    parser.add_argument("--json", action="store_true")


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


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.occupancy_op import block_for
    from ..app.selection import Selection
    from ..demangle import demangle
    from ..errors import UsageError
    from ..identity import match

    selection = Selection(kernel=args.kernel)
    old, new = _snapshot(args.old, selection), _snapshot(args.new, selection)
    if not old and not new:
        raise UsageError(selection.nothing_selected(f"{args.old} and {args.new}"))
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
        block, source = block_for(b, args.block, "hip")
        before, after = _facts(a, block, args.dynamic_lds), _facts(b, block, args.dynamic_lds)
        worse = regressions(before, after)
        gate = [k for k in worse if k in args.fail_on]
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
                "block_size": block,
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
        "old": args.old,
        "new": args.new,
        "fail_on": args.fail_on,
        "kernels": rows,
        "added": added,
        "removed": removed,
        "moved": sum(r["moved_from"] is not None for r in rows),
        "failing": failing,
        "failed_kinds": failed_kinds(rows),
    }
    # The verdict is decided before anything is written (a closed standard output keeps it).
    status = 1 if failing else 0
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    else:
        print(render(result, args.mangled))
    return status


def render(result: dict[str, Any], mangled: bool = False) -> str:
    def name(r: dict[str, Any]) -> str:
        shown: str = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
        return shown

    lines = [f"{result['old']} -> {result['new']}"]
    rows = [
        [
            name(r),
            r["target"],
            _where(r),
            *cells(r["old"], r["new"], r["block_size"], r["block_size"], r["regressions"], r["fails"]),
        ]
        for r in result["kernels"]
    ]
    if rows and all(row[2] == "-" for row in rows):  # every kernel is the one copy of a file given
        rows = [row[:2] + row[3:] for row in rows]
        lines.append(table(rows, ["kernel", "target", *HEADERS]))
    elif rows:
        lines.append(table(rows, ["kernel", "target", "where", *HEADERS]))
    for label in ("added", "removed"):
        for k in result[label]:
            where = _where(k)
            lines.append(f"  {label}: {name(k)} ({k['target']})" + (f" {where}" if where != "-" else ""))
    lines.append(verdict(result["failing"], result["failed_kinds"], result["fail_on"]))
    return "\n".join(lines)


def _where(r: dict[str, Any]) -> str:
    """Location and copy of a record (amdocc.identity.KernelId.where), and where it moved from."""
    from ..identity import KernelId

    here = KernelId(r["location"], r["target"], r["kernel"], r["copy"]).where(r["copies"])
    was = r.get("moved_from")
    if was:
        before = KernelId(was["location"], was["target"], was["kernel"], was["copy"]).where(was["copies"])
        before = before or "the file itself"
        here = f"{here or 'the file itself'} (moved; was {before})"
    return here or "-"
