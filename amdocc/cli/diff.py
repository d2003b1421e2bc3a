"""``amdocc diff OLD NEW``: kernel-by-kernel comparison of two builds, and a CI gate on regressions."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .compare import HEADERS, KINDS, cells, facts, failed_kinds, regressions, verdict
from .render import table

if TYPE_CHECKING:
    from ..codeobject import Kernel
    from .selection import Selection

DESCRIPTION = """Compare two builds of a kernel library kernel by kernel (matched by name and target
processor): VGPRs, AGPRs, SGPRs, static LDS, scratch, spills, and workgroups per CU under the
hip model at --block and --dynamic-lds (default block: the kernel's .reqd_workgroup_size, else its
.max_flat_workgroup_size). Exit 1 when a change listed in --fail-on gets worse, 0 otherwise, 2 on
unreadable input: a gate for kernel-library CI."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import args as a
    from .selection import add_block_argument, add_kernel_argument, add_mangled_argument

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


def _snapshot(path: str, selection: Selection) -> dict[tuple[str, str], Kernel]:
    from ..loader import load

    out = {}
    for co in load(path):
        for k in selection.kernels_of(co):
            out[(k.name, co.processor)] = k
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
    from ..demangle import demangle
    from ..errors import UsageError
    from .occupancy import block_for
    from .selection import Selection

    selection = Selection(kernel=args.kernel)
    old, new = _snapshot(args.old, selection), _snapshot(args.new, selection)
    if not old and not new:
        raise UsageError(selection.nothing_selected(f"{args.old} and {args.new}"))
    rows: list[dict[str, Any]] = []
    failing = 0
    for key in sorted(set(old) & set(new)):
        block, source = block_for(new[key], args.block, "hip")
        before, after = _facts(old[key], block, args.dynamic_lds), _facts(new[key], block, args.dynamic_lds)
        worse = regressions(before, after)
        gate = [k for k in worse if k in args.fail_on]
        failing += bool(gate)
        rows.append(
            {
                "kernel": key[0],
                "demangled": demangle(key[0]),
                "target": key[1],
                "block_size": block,
                "block_source": source,
                "old": before,
                "new": after,
                "regressions": worse,
                "fails": gate,
            }
        )
    added = [{"kernel": k, "demangled": demangle(k), "target": t} for k, t in sorted(set(new) - set(old))]
    removed = [{"kernel": k, "demangled": demangle(k), "target": t} for k, t in sorted(set(old) - set(new))]
    result = {
        "old": args.old,
        "new": args.new,
        "fail_on": args.fail_on,
        "kernels": rows,
        "added": added,
        "removed": removed,
        "failing": failing,
        "failed_kinds": failed_kinds(rows),
    }
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    else:
        print(render(result, args.mangled))
    return 1 if failing else 0


def render(result: dict[str, Any], mangled: bool = False) -> str:
    def name(r: dict[str, Any]) -> str:
        shown: str = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
        return shown

    lines = [f"{result['old']} -> {result['new']}"]
    rows = [
        [
            name(r),
            r["target"],
            *cells(r["old"], r["new"], r["block_size"], r["block_size"], r["regressions"], r["fails"]),
        ]
        for r in result["kernels"]
    ]
    if rows:
        lines.append(table(rows, ["kernel", "target", *HEADERS]))
    for label in ("added", "removed"):
        for k in result[label]:
            lines.append(f"  {label}: {name(k)} ({k['target']})")
    lines.append(verdict(result["failing"], result["failed_kinds"], result["fail_on"]))
    return "\n".join(lines)
