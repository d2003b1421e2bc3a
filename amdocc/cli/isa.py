"""``amdocc isa``: each kernel's machine code, decoded by LLVM, with loops, spills and mix."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ExitCode
from .output import binary_stdout
from .render import error, fmt, skipped_lines, table

DESCRIPTION = """Disassemble every kernel in each PATH with LLVM's own AMDGPU disassembler (a libLLVM
found at run time: AMDOCC_LIBLLVM, ROCm's, Debian's libllvm22, or rocm-bindings-compiler's) and
show, per instruction, its address, loop depth and spill mark; or with --summary one row per
kernel: instructions, bytes, loops, VGPR and SGPR spills (in loops), and the instruction mix.
Exit 3 when no libLLVM with the AMDGPU disassembler is installed."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .args import add_jobs_argument, add_kernel_argument, add_target_arguments

    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object: {"kernels": [...], "skipped": [...], "errors": [...]} (docs/isa.md)',
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="one row per kernel instead of the listing (with --json: each kernel's instructions are null)",
    )
    add_target_arguments(parser, "only code objects that can run on this processor (or target id)", device=False)
    add_kernel_argument(parser)
    add_jobs_argument(parser)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..app import parallel
    from ..app.isa_op import IsaOptions, isa_file, warm_up
    from ..app.selection import Selection
    from ..isa.libllvm import library
    from .args import as_flag

    library()  # no libLLVM: exit 3 before reading anything
    selection = Selection(args.target, None, args.kernel, what_if=None)
    files = parallel.expand(args.paths)
    jobs = parallel.jobs_for(args.jobs, files)
    if jobs > 1:
        parallel.warm_up()
        warm_up()
    out: dict[str, list[dict[str, Any]]] = {"kernels": [], "skipped": [], "errors": []}
    rows: list[list[str]] = []
    # The text summary prints no source line: its records are made without reading line tables.
    options = IsaOptions(args.target, args.kernel, args.summary, json=args.json, lines=args.json or not args.summary)
    write = binary_stdout()
    if args.json:
        write(b'{"kernels":[')
    # In worker processes even for one job: LLVM 22 crashes on some bytes (docs/isa.md), and a
    # file that kills its worker is then one error entry while the rest is read.
    for kind, value in parallel.run(files, isa_file, options, jobs, isolated=True):
        if kind == "seen":
            selection.merge(value)
            continue
        if kind == "error":
            error(value["error"])
            out["errors"].append(value)
        elif kind == "skipped":
            out["skipped"].append(value)
        elif args.json:
            write(b"\n" if not out["kernels"] else b",\n")  # apart: a kernel's JSON is not copied to join them
            write(value)
            out["kernels"].append({})
        elif args.summary:
            rows.append(summary_row(value))
            out["kernels"].append({})
        else:
            print(render_listing(value))
            out["kernels"].append({})
    if args.json:
        rest = report.compact_json({"skipped": out["skipped"], "errors": out["errors"]}, plain=True)
        write(b"\n]," + rest[1:] + b"\n")
    elif args.summary and rows:
        print(table(rows, SUMMARY_HEADERS, indent=""))
    if not args.json:
        for line in skipped_lines(out["skipped"]):
            error(line)
    if not out["kernels"] and not out["errors"]:
        error(selection.nothing_selected(spell=as_flag))
        return ExitCode.USAGE_ERROR
    return ExitCode.USAGE_ERROR if out["errors"] else ExitCode.OK


SUMMARY_HEADERS = ["kernel", "target", "instr", "bytes", "loops", "depth", "vgpr spill", "in loops", "sgpr spill",
                   "in loops", "spills are", "mix"]  # fmt: skip


def _mix_text(mix: dict[str, dict[str, int | None]], most: int = 4) -> str:
    top = sorted(mix.items(), key=lambda kv: -(kv[1]["all"] or 0))[:most]
    return " ".join(f"{name} {counts['all']}" for name, counts in top)


def summary_row(k: dict[str, Any]) -> list[str]:
    s = k["summary"]
    sp = s["spills"]
    inside = sp["in_loops"] or {}
    cls = sp["classification"]
    return [
        k["kernel"],
        k["target"],
        str(s["instructions"]),
        str(s["bytes"]),
        fmt(s["loops"]),
        fmt(s["max_loop_depth"]),
        f"{sp['vgpr']}/{sp['vgpr_reload']}",
        fmt(inside.get("vgpr") if inside else None),
        f"{sp['sgpr']}/{sp['sgpr_reload']}",
        fmt(inside.get("sgpr") if inside else None),
        f"vgpr {cls['vgpr']}, sgpr {cls['sgpr']}",
        _mix_text(s["mix"]),
    ]


def _live_header(s: dict[str, Any]) -> str:
    """The maximum of each register class and where it is reached (columns V A S of the listing:
    VGPRs, AGPRs, SGPRs live before or after each instruction)."""
    if s.get("max_live") is None:
        return f"  live registers (V A S): unknown: {s.get('liveness_unknown')}"
    m, r = s["max_live"], s["max_live_refined"]
    where = []
    for cls in ("vgpr", "agpr", "sgpr"):
        p = s["peak"][cls]
        if p["count"] and p["at"]:
            first = p["at"][0]
            more = f" (+{len(p['at']) - 1} more)" if len(p["at"]) > 1 else ""
            lines = f", {first['lines'][0]}" if first["lines"] else ""
            where.append(
                f"{cls} {p['count']} at {first['first']:#x}-{first['last']:#x} "
                f"(loop depth {first['loop_depth']}{lines}){more}"
            )
    text = f"  live registers (V A S): max vgpr {m['vgpr']}, agpr {m['agpr']}, sgpr {m['sgpr']}"
    if r != m:
        text += f" (never-written registers left out: vgpr {r['vgpr']}, agpr {r['agpr']}, sgpr {r['sgpr']})"
    text += "".join(f"\n  peak {w}" for w in where)
    text += "".join(f"\n  finding: {f}" for f in s.get("live_findings", []))
    return text


def render_listing(k: dict[str, Any]) -> str:
    """One kernel's listing: a header, then each instruction with its loop depth and spill mark;
    a blank line and the block's number start each block."""
    s = k["summary"]
    d = k["disassembler"]
    ext = k["extent"]
    lines = [
        f"{k['path']}{' [' + k['origin'] + ']' if k['origin'] else ''}",
        f"  {k['kernel']}  {k['target']}  wave{k['wavefront_size']}  {s['instructions']} instructions, "
        f"{s['bytes']} bytes at {ext['address']:#x}",
        f"  disassembler: {d['library']} (LLVM {d['version'] or '?'}; {d['processor']}"
        f"{' ' + d['features'] if d['features'] else ''})",
    ]
    if ext["inferred"]:
        lines.append(f"  extent inferred: {ext['inferred']}")
    lines += [f"  note: {n}" for n in ext["notes"]]
    if s["unknown"]:
        lines.append(f"  control flow unknown: {s['unknown']} (no loop depths)")
    sp = s["spills"]
    cls, why = sp["classification"], sp["reasons"]
    inside = sp["in_loops"]
    # Each line says what the marked instructions are (the classification and its reason):
    # scratch traffic of a private array is not a spill, and the header does not call it one.
    lines.append(
        f"  scratch: {sp['vgpr']} dwords stored / {sp['vgpr_reload']} loaded"
        + (f" ({inside['vgpr']} / {inside['vgpr_reload']} in loops)" if inside else "")
        + f": {cls['vgpr']}, {why['vgpr']}"
    )
    lines.append(
        f"  SGPR lanes: {sp['sgpr']} written / {sp['sgpr_reload']} read"
        + (f" ({inside['sgpr']} / {inside['sgpr_reload']} in loops)" if inside else "")
        + f": {cls['sgpr']}, {why['sgpr']}"
    )
    lines.append(_live_header(s))
    block = None
    for ins in k["instructions"] or []:
        if ins["block"] != block:
            block = ins["block"]
            where = "" if ins["reachable"] is not False else ", unreachable"
            depth = f"loop depth {ins['loop_depth']}" if ins["loop_depth"] is not None else "loop depth ?"
            lines.append(f"\n  ; block {block} ({depth}{where})")
        mark = ins["spill"] or ""
        line = f"  {ins['line']}" if ins["line"] else ""
        live = ins.get("live")
        cols = f"{live['vgpr']:>3} {live['agpr']:>3} {live['sgpr']:>3}" if live else "  -   -   -"
        lines.append(f"  {ins['address']:>12x}  {fmt(ins['loop_depth'])}  {cols}  {mark:<11} {ins['text']}{line}")
    return "\n".join(lines) + "\n"
