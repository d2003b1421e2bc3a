"""``amdocc inspect``: code objects, kernels, resources (both views) and findings."""
from __future__ import annotations

import json
import sys

from .render import error, fmt, table

DESCRIPTION = """Show every code object found in each PATH (a code object, an offload bundle, a
compressed bundle, a host .so/executable, a PE .dll, a directory, or '-' for stdin), with its
target, code-object version and kernels. For each kernel: registers used (metadata) and
allocated (kernel descriptor), the arch VGPR / AGPR split, SGPRs, static LDS, scratch, the
largest workgroup size, and findings where metadata and descriptor disagree."""


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    parser.add_argument("--json", action="store_true", help="print one JSON object: "
                        '{"code_objects": [...], "skipped": [...], "errors": [...]}')
    parser.add_argument("--findings", choices=("all", "warnings", "none"), default="all",
                        help="which findings the table shows (default: all; JSON always has all)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes reading files (default: one per CPU for 32 files or more)")


def run(args) -> int:
    from . import parallel

    files = parallel.expand(args.paths)
    jobs = parallel.jobs_for(args.jobs, files)
    failed = 0
    skipped, errors = [], []
    first = True
    if args.json:
        sys.stdout.write('{"code_objects": [')
    for kind, value in parallel.run(files, inspect_file, (args.json, args.findings), jobs):
        if kind == "code_object":
            if args.json:
                sys.stdout.write(("\n" if first else ",\n") + value)
                first = False
            else:
                print(value)
        elif kind == "skipped":
            if args.json:
                skipped.append(value)
            else:
                origin = f" [{value['origin']}]" if value["origin"] else ""
                print(f"skipped {value['path']}{origin}: {value['reason']}\n")
        else:
            failed += 1
            errors.append(value)
            error(value["error"])
    if args.json:
        sys.stdout.write("\n], " + json.dumps({"skipped": skipped, "errors": errors})[1:] + "\n")
    return 2 if failed else 0


def inspect_file(item, options):
    """Yield ("code_object", text), ("skipped", record) and ("error", record) for one file.

    Text, not objects, so a worker process can send them back; in one process they stream, so
    a multi-GB file is printed as it is read.
    """
    from ..codeobject import CodeObject
    from ..containers import Skipped
    from ..errors import AmdoccError
    from ..loader import iter_load
    from .. import report

    path, in_directory = item
    as_json, which_findings = options
    try:
        for x in iter_load(path, in_directory=in_directory):
            if isinstance(x, CodeObject):
                yield "code_object", (report.dumps(report.code_object_record(x)) if as_json
                                      else render_code_object(x, which_findings))
            elif isinstance(x, Skipped):
                yield "skipped", report.skipped_record(x)
            else:
                yield "error", report.failed_record(x)
    except AmdoccError as exc:
        yield "error", {"path": getattr(path, "path", path), "origin": "", "offset": None, "error": str(exc)}


def render_code_object(co, which_findings: str = "all") -> str:
    lines = [str(co.origin)]
    md = f", metadata v{'.'.join(map(str, co.metadata_version))}" if co.metadata_version else ""
    generic = f", generic v{co.generic_version}" if co.generic_version else ""
    family = f" ({co.target.family})" if co.target else ""
    lines.append(f"  {co.target_id}{family}  code object v{co.code_object_version} ({co.elf_type}){md}"
                 f"{generic}, {len(co.kernels)} kernel{'s' if len(co.kernels) != 1 else ''}")
    lines += _findings(co.findings, which_findings, "  ")
    if co.kernels:
        rows = []
        for k in co.kernels:
            r = k.resources
            split = f"{fmt(r.arch_vgprs, '?')}+{fmt(r.agprs, '?')}" if co.target and co.target.has_agprs else "-"
            rows.append([k.name, fmt(r.wavefront_size), f"{fmt(r.vgprs, '?')}/{fmt(r.vgprs_allocated)}",
                         split, f"{fmt(r.sgprs, '?')}/{fmt(r.sgprs_allocated)}", fmt(r.lds),
                         fmt(r.scratch), fmt(r.max_flat_workgroup_size),
                         {True: "WGP", False: "CU", None: "-"}[r.wgp_mode]])
        lines.append(table(rows, ["kernel", "wave", "VGPR used/alloc", "arch+AGPR", "SGPR used/alloc",
                                  "LDS", "scratch", "max WG", "mode"]))
        for k in co.kernels:
            shown = _findings(k.findings, which_findings, "      ")
            if shown:
                lines.append(f"    {k.name}:")
                lines += shown
    return "\n".join(lines) + "\n"


def _findings(findings, which, indent):
    if which == "none":
        return []
    keep = [f for f in findings if which == "all" or f.severity != "info"]
    return [f"{indent}{f.severity}: {f.code}: {f.message}" for f in keep]
