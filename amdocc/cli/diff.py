"""``amdocc diff OLD NEW``: kernel-by-kernel comparison of two builds, and a CI gate on regressions."""
from __future__ import annotations

import sys

from .render import fmt, table

DESCRIPTION = """Compare two builds of a kernel library kernel by kernel (matched by name and target
processor): VGPRs, AGPRs, SGPRs, static LDS, scratch, spills, and workgroups per CU under the
hip model at --block and --dynamic-lds (default block: the kernel's .reqd_workgroup_size, else its
.max_flat_workgroup_size). Exit 1 when a change listed in --fail-on gets worse, 0 otherwise, 2 on
unreadable input: a gate for kernel-library CI."""

KINDS = ("occupancy", "spills", "scratch", "vgpr", "lds")


def add_arguments(parser) -> None:
    from . import args as a

    parser.description = DESCRIPTION
    parser.add_argument("old", metavar="OLD")
    parser.add_argument("new", metavar="NEW")
    parser.add_argument("--block", type=a.integer(1), help="threads per block for the occupancy comparison")
    parser.add_argument("--dynamic-lds", type=a.byte_size(), default=0)
    parser.add_argument("--fail-on", type=a.Kinds(KINDS), default=["occupancy"], metavar="KIND,...",
                        help=f"regressions that fail the gate: {', '.join(KINDS)}, all or none (default: occupancy)")
    parser.add_argument("--kernel", metavar="REGEX", type=a.Pattern(),
                        help="only kernels whose name (mangled or demangled) or symbol matches")
    parser.add_argument("--mangled", action="store_true", help="show kernel names as stored, not demangled")
    parser.add_argument("--json", action="store_true")


def _snapshot(path, selection) -> dict:
    import amdocc

    out = {}
    for co in amdocc.load(path):
        for k in selection.kernels_of(co):
            out[(k.name, co.processor)] = k
    return out


def _facts(kernel, block, dynamic_lds) -> dict:
    import amdocc

    r = kernel.resources
    occ = amdocc.occupancy(kernel, block_size=block, dynamic_lds=dynamic_lds)
    spills = [x for x in r.spills if x is not None]
    return {"vgpr": r.vgprs, "agpr": r.agprs, "sgpr": r.sgprs, "lds": r.lds, "scratch": r.scratch,
            "spills": sum(spills) if spills else None, "blocks_per_cu": occ.blocks_per_cu,
            "blocks_per_wgp": occ.blocks_per_cu if occ.per_wgp else None, "unit": occ.unit,
            "limiter": occ.limiter}


def _regressions(old: dict, new: dict) -> list[str]:
    out = []
    if (old["blocks_per_cu"] or 0) > (new["blocks_per_cu"] or 0):
        out.append("occupancy")
    for kind, key in (("spills", "spills"), ("scratch", "scratch"), ("vgpr", "vgpr"), ("lds", "lds")):
        if (new[key] or 0) > (old[key] or 0):
            out.append(kind)
    return out


def run(args) -> int:
    from ..demangle import demangle
    from ..errors import UsageError
    from .occupancy import block_for
    from .selection import Selection
    from .. import report

    selection = Selection(kernel=args.kernel)
    old, new = _snapshot(args.old, selection), _snapshot(args.new, selection)
    if not old and not new:
        raise UsageError(selection.nothing_selected(f"{args.old} and {args.new}"))
    rows, failing = [], 0
    for key in sorted(set(old) & set(new)):
        block, source = block_for(new[key], args.block, "hip")
        before, after = _facts(old[key], block, args.dynamic_lds), _facts(new[key], block, args.dynamic_lds)
        worse = _regressions(before, after)
        gate = [k for k in worse if k in args.fail_on]
        failing += bool(gate)
        rows.append({"kernel": key[0], "demangled": demangle(key[0]), "target": key[1], "block_size": block,
                     "block_source": source, "old": before, "new": after, "regressions": worse, "fails": gate})
    added = [{"kernel": k, "demangled": demangle(k), "target": t} for k, t in sorted(set(new) - set(old))]
    removed = [{"kernel": k, "demangled": demangle(k), "target": t} for k, t in sorted(set(old) - set(new))]
    failed_kinds = [k for k in KINDS if any(k in r["fails"] for r in rows)]
    result = {"old": args.old, "new": args.new, "fail_on": args.fail_on, "kernels": rows,
              "added": added, "removed": removed, "failing": failing, "failed_kinds": failed_kinds}
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    else:
        print(render(result, args.mangled))
    return 1 if failing else 0


def _change(a, b) -> str:
    if a == b:
        return fmt(a)
    if isinstance(a, int) and isinstance(b, int):
        return f"{a}->{b} ({b - a:+d})"
    return f"{fmt(a)}->{fmt(b)}"


def render(result: dict, mangled: bool = False) -> str:
    def name(r):
        return r["kernel"] if mangled else (r.get("demangled") or r["kernel"])

    lines = [f"{result['old']} -> {result['new']}"]
    rows = []
    for r in result["kernels"]:
        o, n = r["old"], r["new"]
        unit = o["unit"] if o["unit"] == n["unit"] else f"{o['unit']}->{n['unit']}"
        rows.append([name(r), r["target"], _change(o["vgpr"], n["vgpr"]), _change(o["sgpr"], n["sgpr"]),
                     _change(o["lds"], n["lds"]), _change(o["scratch"], n["scratch"]),
                     _change(o["spills"], n["spills"]),
                     f"{_change(o['blocks_per_cu'], n['blocks_per_cu'])} @{r['block_size']} per {unit}",
                     ", ".join(("FAIL " if k in r["fails"] else "") + k for k in r["regressions"]) or "-"])
    if rows:
        lines.append(table(rows, ["kernel", "target", "VGPR", "SGPR", "LDS", "scratch", "spills",
                                  "workgroups (hip)", "worse"]))
    for label in ("added", "removed"):
        for k in result[label]:
            lines.append(f"  {label}: {name(k)} ({k['target']})")
    if result["failing"]:
        verdict = f"{result['failing']} kernel(s) regress on {', '.join(result['failed_kinds'])}"
    elif result["fail_on"]:
        verdict = f"no regression on {', '.join(result['fail_on'])}"
    else:
        verdict = "no regression gate (--fail-on none)"
    lines.append(verdict)
    return "\n".join(lines)
