"""``amdocc diff OLD NEW``: kernel-by-kernel comparison of two builds, and a CI gate on regressions."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..app.compare import KINDS, cells
from .render import HEADERS, table, verdict

DESCRIPTION = """Compare two builds of a kernel library kernel by kernel: VGPRs, AGPRs, SGPRs,
static LDS, scratch, spills, and workgroups per CU under the hip model at --block and
--dynamic-lds (default block: the kernel's .reqd_workgroup_size, else its
.max_flat_workgroup_size). Exit 1 when a change listed in --fail-on gets worse, 0 otherwise, 2 on
unreadable input: a gate for kernel-library CI.

A kernel is matched by its location (the file within a directory, the archive member), its
code's target id, its name and, where one file holds several copies (two bundles), which copy:
a name that occurs twice is two kernels, each compared with its own counterpart. A kernel whose
target and name are now at another location is reported as moved (and compared), never merged
with another copy. With --target or --device both builds are evaluated on that processor, and a
kernel rebuilt for another target of it (gfx9-4-generic code, now gfx942's) is paired with its
counterpart; without one, generic code objects are compared by their counts only (occupancy:
not evaluated, name a member with --target). A C++ kernel whose parameter list changed (the same
function, held by no other kernel there) is compared with its old self, not removed and added
(docs/cli.md, "How diff and census pair kernels")."""


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
    parser.add_argument(
        "--isa",
        action="store_true",
        help="read every kernel's machine code (needs a libLLVM; slower): spill dwords inside loops "
        "and the most VGPRs live at once, whatever --fail-on names",
    )
    add_kernel_argument(parser)
    a.add_target_arguments(parser)
    add_mangled_argument(parser)
    parser.add_argument("--json", action="store_true")
    a.add_jobs_argument(parser)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app.diff_op import diff
    from . import args as a

    a.what_if_needs_a_processor(args)
    result = diff(
        args.old,
        args.new,
        kernel=args.kernel,
        block=args.block,
        dynamic_lds=args.dynamic_lds,
        fail_on=args.fail_on,
        target=args.target,
        device=args.device,
        what_if=args.what_if,
        jobs=args.jobs,
        isa=args.isa,
    )
    # The verdict is decided before anything is written (a closed standard output keeps it).
    status = 2 if result["errors"] else (1 if result["failing"] else 0)
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    else:
        print(render(result, args.mangled))
    for n in result["not_evaluated"]:
        print(f"amdocc: occupancy not evaluated for {n['kernels']} kernel(s): {n['reason']}", file=sys.stderr)
    for error in result["errors"]:
        print(f"amdocc: {error}", file=sys.stderr)
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
            _where(r, mangled),
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


def _where(r: dict[str, Any], mangled: bool = False) -> str:
    """Location and copy of a record (amdocc.identity.KernelId.where), and where it moved from
    (or which target or signature it had, when it was paired by them)."""
    from ..identity import KernelId

    here = KernelId(r["location"], r["target"], r["kernel"], r["copy"]).where(r["copies"])
    was = r.get("moved_from")
    if was:
        before = KernelId(was["location"], was["target"], was["kernel"], was["copy"]).where(was["copies"])
        before = before or "the file itself"
        here = f"{here or 'the file itself'} (moved; was {before})"
    elif r.get("matched_by") == "target":
        here = f"{here} (rebuilt; was {r['was']['target']})".strip()
    elif r.get("matched_by") == "signature":
        old_name = r["was"]["kernel"] if mangled else (r["was"]["demangled"] or r["was"]["kernel"])
        here = f"{here} (signature changed; was {old_name})".strip()
    return here or "-"
