"""``amdocc inspect``: code objects, kernels, resources (both views) and findings."""
from __future__ import annotations

import json
import sys

from .render import error, fmt, table

DESCRIPTION = """Show every code object found in each PATH (a code object, an offload bundle, a
compressed bundle, a host .so/executable, a PE .dll, a wheel or zip, a .kpack archive, a
directory, or '-' for stdin), with its
target, code-object version and kernels. For each kernel: registers used (metadata) and
allocated (kernel descriptor), the arch VGPR / AGPR split, SGPRs, static LDS, scratch, the
largest workgroup size, and findings where metadata and descriptor disagree."""


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    parser.add_argument("--json", action="store_true", help="print one JSON object: "
                        '{"code_objects": [...], "skipped": [...], "errors": [...]}')
    parser.add_argument("--json-lines", action="store_true", help="print one JSON object per line: "
                        "one per kernel (path, origin, offset, target, processor and the kernel's "
                        "fields), and one per skipped entry or error; for corpora of 100,000s of kernels")
    parser.add_argument("--fields", metavar="F,...", help="kernel fields to print with --json or "
                        "--json-lines (default: all with --json; with --json-lines name, the note's "
                        "numbers and findings): name, symbol, vgpr_count and the other note keys, "
                        "descriptor, resources, resource_symbols, findings, metadata")
    parser.add_argument("--findings", choices=("all", "warnings", "none"), default="all",
                        help="which findings the table shows (default: all; JSON always has all)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes reading files (default: one per CPU for 32 files or more)")


def _kernel_fields():
    from ..report import KERNEL_FIELDS
    return list(KERNEL_FIELDS)


def _output_mode(args):
    """("text" | "json" | "lines", kernel fields or None), refusing options that would be ignored."""
    from ..errors import UsageError
    from ..report import COMPACT_FIELDS

    if args.json and args.json_lines:
        raise UsageError("--json and --json-lines are two output forms: give one")
    fields = None
    if args.fields is not None:
        if not (args.json or args.json_lines):
            raise UsageError("--fields chooses JSON kernel fields: give it with --json or --json-lines")
        fields = tuple(f.strip() for f in args.fields.split(",") if f.strip())
        unknown = [f for f in fields if f not in _kernel_fields()]
        if unknown or not fields:
            raise UsageError(f"--fields: unknown field {', '.join(unknown) or '(none given)'}; "
                             f"valid: {', '.join(_kernel_fields())}")
    if args.json_lines:
        return "lines", fields or COMPACT_FIELDS
    return ("json" if args.json else "text"), fields


def run(args) -> int:
    from . import parallel

    mode, fields = _output_mode(args)
    files = parallel.expand(args.paths)
    jobs = parallel.jobs_for(args.jobs, files)
    if jobs > 1:
        parallel.warm_up()
    failed = 0
    skipped, errors = [], []
    first = True
    if mode == "json":
        sys.stdout.write('{"code_objects": [')
    for kind, value in parallel.run(files, inspect_file, (mode, args.findings, fields), jobs):
        if mode == "lines":
            failed += kind == "error"
            if kind == "error":
                error(value["error"])
            sys.stdout.write(value if kind == "code_object" else json.dumps({kind: value}) + "\n")
            continue
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
    mode, which_findings, fields = options
    try:
        for x in iter_load(path, in_directory=in_directory):
            if isinstance(x, CodeObject):
                if mode == "lines":
                    text = "".join(line + "\n" for line in report.kernel_lines(x, fields))
                elif mode == "json":
                    text = report.dumps(report.code_object_record(x, fields))
                else:
                    text = render_code_object(x, which_findings)
                yield "code_object", text
            elif isinstance(x, Skipped):
                yield "skipped", report.skipped_record(x)
            else:
                yield "error", report.failed_record(x)
    except AmdoccError as exc:
        from ..containers import part_path
        yield "error", {"path": path if isinstance(path, str) else part_path(path), "origin": "",
                        "offset": None, "error": str(exc)}


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
