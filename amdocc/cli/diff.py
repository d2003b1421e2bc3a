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


def _kinds(text: str) -> list[str]:
    from ..errors import UsageError
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    if kinds == ["none"]:
        return []
    if kinds == ["all"]:
        return list(KINDS)
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise UsageError(f"--fail-on takes {', '.join(KINDS)}, all or none, not {', '.join(bad)}")
    return kinds


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("old", metavar="OLD")
    parser.add_argument("new", metavar="NEW")
    parser.add_argument("--block", type=int, help="threads per block for the occupancy comparison")
    parser.add_argument("--dynamic-lds", type=int, default=0)
    parser.add_argument("--fail-on", type=_kinds, default=["occupancy"], metavar="KIND,...",
                        help=f"regressions that fail the gate: {', '.join(KINDS)}, all or none (default: occupancy)")
    parser.add_argument("--kernel", metavar="REGEX", help="only kernels whose name matches")
    parser.add_argument("--json", action="store_true")


def _snapshot(path, pattern) -> dict:
    import amdocc

    out = {}
    for co in amdocc.load(path):
        for k in co.kernels:
            if pattern and not pattern.search(k.name):
                continue
            out[(k.name, co.processor)] = k
    return out


def _facts(kernel, block, dynamic_lds) -> dict:
    import amdocc

    r = kernel.resources
    occ = amdocc.occupancy(kernel, block_size=block, dynamic_lds=dynamic_lds)
    spills = [x for x in r.spills if x is not None]
    return {"vgpr": r.vgprs, "agpr": r.agprs, "sgpr": r.sgprs, "lds": r.lds, "scratch": r.scratch,
            "spills": sum(spills) if spills else None, "blocks_per_cu": occ.blocks_per_cu,
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
    import re

    from .occupancy import block_for
    from .. import report

    pattern = re.compile(args.kernel) if args.kernel else None
    old, new = _snapshot(args.old, pattern), _snapshot(args.new, pattern)
    rows, failing = [], 0
    for key in sorted(set(old) & set(new)):
        block, source = block_for(new[key], args.block, "hip")
        before, after = _facts(old[key], block, args.dynamic_lds), _facts(new[key], block, args.dynamic_lds)
        worse = _regressions(before, after)
        gate = [k for k in worse if k in args.fail_on]
        failing += bool(gate)
        rows.append({"kernel": key[0], "target": key[1], "block_size": block, "block_source": source,
                     "old": before, "new": after, "regressions": worse, "fails": gate})
    added = [{"kernel": k, "target": t} for k, t in sorted(set(new) - set(old))]
    removed = [{"kernel": k, "target": t} for k, t in sorted(set(old) - set(new))]
    result = {"old": args.old, "new": args.new, "fail_on": args.fail_on, "kernels": rows,
              "added": added, "removed": removed, "failing": failing}
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    else:
        print(render(result))
    return 1 if failing else 0


def _change(a, b) -> str:
    if a == b:
        return fmt(a)
    if isinstance(a, int) and isinstance(b, int):
        return f"{a}->{b} ({b - a:+d})"
    return f"{fmt(a)}->{fmt(b)}"


def render(result: dict) -> str:
    lines = [f"{result['old']} -> {result['new']}"]
    rows = []
    for r in result["kernels"]:
        o, n = r["old"], r["new"]
        rows.append([r["kernel"], r["target"], _change(o["vgpr"], n["vgpr"]), _change(o["sgpr"], n["sgpr"]),
                     _change(o["lds"], n["lds"]), _change(o["scratch"], n["scratch"]),
                     _change(o["spills"], n["spills"]), f"{_change(o['blocks_per_cu'], n['blocks_per_cu'])} @{r['block_size']}",
                     ", ".join(("FAIL " if k in r["fails"] else "") + k for k in r["regressions"]) or "-"])
    if rows:
        lines.append(table(rows, ["kernel", "target", "VGPR", "SGPR", "LDS", "scratch", "spills", "blocks/CU (hip)",
                                  "worse"]))
    for label in ("added", "removed"):
        for k in result[label]:
            lines.append(f"  {label}: {k['kernel']} ({k['target']})")
    verdict = (f"{result['failing']} kernel(s) regress on {', '.join(result['fail_on'])}" if result["failing"]
               else "no regression" + (f" on {', '.join(result['fail_on'])}" if result["fail_on"] else " gate (--fail-on none)"))
    lines.append(verdict)
    return "\n".join(lines)
