"""``amdocc inspect``: code objects, kernels, resources (both views) and findings."""

from __future__ import annotations

import argparse
import functools
from typing import TYPE_CHECKING, Any

from ..errors import AmdoccError, ExitCode
from .output import binary_stdout
from .render import error, fmt, table

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Finding


DESCRIPTION = """Show every code object found in each PATH (a code object, an offload bundle, a
compressed bundle, a host .so/executable, a PE .dll, a wheel or zip, a .kpack archive, a
directory, or '-' for stdin), with its
target, code-object version and kernels. For each kernel: registers used (metadata) and
allocated (kernel descriptor), the arch VGPR / AGPR split, SGPRs, static LDS, scratch, the
largest workgroup size, and findings where metadata and descriptor disagree."""


FINDINGS = ("all", "warnings", "errors", "none")
# Spellings users give --findings (a severity rather than the level's name): each means its level and above.
FINDINGS_SYNONYMS = (("info", "all"), ("warning", "warnings"), ("warn", "warnings"), ("error", "errors"))
SEVERITY_SHOWN: dict[str, set[str]] = {
    "all": {"info", "warning", "error"},
    "warnings": {"warning", "error"},
    "errors": {"error"},
    "none": set(),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from . import args as a
    from .args import add_jobs_argument, add_kernel_argument, add_mangled_argument, add_target_arguments

    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    parser.add_argument(
        "--json",
        action="store_true",
        help='print one JSON object: {"code_objects": [...], "skipped": [...], "errors": [...]}',
    )
    parser.add_argument(
        "--json-lines",
        action="store_true",
        help="print one JSON object per line: "
        "one per kernel (path, origin, offset, target, processor and the kernel's "
        "fields), and one per skipped entry or error; for corpora of 100,000s of kernels",
    )
    parser.add_argument(
        "--fields",
        metavar="F,...",
        type=a.Kinds(_kernel_fields, none=False, what="field"),
        help="kernel fields to print with --json or --json-lines (default: all with --json; "
        "with --json-lines name, the note's numbers and findings): name, symbol, "
        "vgpr_count and the other note keys, descriptor, resources, resource_symbols, "
        "findings, metadata",
    )
    parser.add_argument(
        "--findings",
        type=a.OneOf(FINDINGS, "findings level", synonyms=FINDINGS_SYNONYMS),
        default=None,
        metavar="{" + ",".join(FINDINGS) + "}",
        help="which findings the table shows: all (info too), warnings (and errors; the "
        "default), errors, none. JSON always has all",
    )
    add_target_arguments(parser, "only code objects that can run on this processor (or target id)", device=False)
    add_kernel_argument(parser)
    add_mangled_argument(parser)
    add_jobs_argument(parser)


def _kernel_fields() -> list[str]:
    from ..report import KERNEL_FIELDS

    return list(KERNEL_FIELDS)


def _output_mode(args: argparse.Namespace) -> tuple[str, tuple[str, ...] | None]:
    """("text" | "json" | "lines", kernel fields or None), refusing options that would be ignored."""
    from ..errors import UsageError
    from ..report import COMPACT_FIELDS

    if args.json and args.json_lines:
        raise UsageError("--json and --json-lines are two output forms: give one")
    fields = tuple(args.fields) if args.fields else None
    if fields and not (args.json or args.json_lines):
        raise UsageError("--fields chooses JSON kernel fields: give it with --json or --json-lines")
    if args.json or args.json_lines:
        from . import args as a

        a.refuse(
            args,
            ("findings", "mangled"),
            "shape the text table only; JSON always carries every finding and both the stored and the demangled name",
        )
    if args.json_lines:
        return "lines", fields or COMPACT_FIELDS
    return ("json" if args.json else "text"), fields


def run(args: argparse.Namespace) -> int:
    from ..app import parallel
    from ..app.inspect_op import InspectOptions, inspect_file
    from ..app.selection import Selection

    mode, fields = _output_mode(args)
    filtered = args.target or args.kernel
    selection = Selection(args.target, None, args.kernel, what_if=None) if filtered else None
    files = parallel.expand(args.paths)
    jobs = parallel.jobs_for(args.jobs, files)
    if jobs > 1:
        parallel.warm_up()
    failed = shown = 0
    skipped: list[dict[str, Any]] = []
    passed_over: dict[str, int] = {}  # entries inside files skipped, by why (text mode)
    errors: list[dict[str, Any]] = []
    first = True
    written, warned = 0, False  # --json bytes so far, and whether the note on size was given
    if mode != "text":
        from ..report import compact_json

        write = binary_stdout()
    if mode == "json":
        write(b'{"code_objects":[')
    text = functools.partial(render_code_object, which_findings=args.findings or "warnings", mangled=args.mangled)
    options = InspectOptions(mode, fields, args.target, args.kernel, text if mode == "text" else None)
    for kind, value in parallel.run(files, inspect_file, options, jobs):
        if kind == "seen":
            assert selection is not None, "only a filtering worker reports what it passed over"
            selection.merge(value)
            continue
        if mode == "lines":
            if kind == "error":
                failed += 1
                error(value["error"])
            shown += kind == "code_object"
            write(value if kind == "code_object" else compact_json({kind: value}, plain=True) + b"\n")
            continue
        if kind == "code_object":
            shown += 1
            if args.json:
                write((b"\n" if first else b",\n") + value)
                first = False
                written += len(value)
                if written > HUGE_JSON_BYTES and not warned:
                    warned = True
                    error(HUGE_JSON_NOTE.format(HUGE_JSON_BYTES >> 20))
            else:
                print(value)
        elif kind == "skipped":
            if args.json:
                skipped.append(value)
            elif not value["origin"]:  # a whole file amdocc does not read: part of the listing
                print(f"skipped {value['path']}: {value['reason']}\n")
            else:  # an entry inside a file (a bundle's host entry): counted, said once at the end
                passed_over[value["reason"]] = passed_over.get(value["reason"], 0) + 1
        else:
            failed += 1
            errors.append(value)
            error(value["error"])
    if args.json:
        write(b"\n]," + compact_json({"skipped": skipped, "errors": errors}, plain=True)[1:] + b"\n")
    if selection is not None and not shown:  # filtered, and nothing was
        from .args import as_flag

        error(selection.nothing_selected(spell=as_flag))
        return ExitCode.USAGE_ERROR
    if passed_over and not failed:  # on failure, stderr holds the errors alone
        error("skipped entries: " + "; ".join(f"{n} {why}" for why, n in passed_over.items()))
    return ExitCode.USAGE_ERROR if failed else ExitCode.OK


# Past this much --json output (one object a user must parse whole), stderr says once what reads
# better: a library such as jax's xla_rocm_plugin.so (409,773 kernels) gives 3 GB of --json.
HUGE_JSON_BYTES = 256 << 20
HUGE_JSON_NOTE = (
    "note: --json output has passed {} MiB and is one JSON object, read only whole; for an input "
    "this large, --json-lines prints one object per kernel (read line by line, e.g. with jq -c or "
    "pandas.read_json(lines=True)) and --fields name,vgpr_count,sgpr_count,... keeps only the fields "
    "named. The output continues unchanged"
)


def _mode_shown(k: Any, co: CodeObject, recorded: bool) -> str:
    """The mode column: the descriptor's WGP_MODE where the code object records its mode
    (``recorded``: models.usage.mode_recorded); where it does not, the default the models assume
    (the processor's), marked '*', for a kernel they can describe."""
    r = k.resources
    if not recorded and None not in (r.wavefront_size, r.vgprs, r.sgprs, r.lds):
        assert co.target is not None  # recorded is True where the processor is unknown
        return ("WGP" if co.target.wgp else "CU") + "*"
    return {True: "WGP", False: "CU", None: "-"}[r.wgp_mode]


def _recorded(co: CodeObject) -> bool:
    """Whether ``co`` records its mode (an unknown processor: its descriptor bit is all there is)."""
    from ..models.usage import mode_recorded

    if co.target is None:
        return True
    try:
        return mode_recorded(co.producer, co.target)
    except AmdoccError:
        return True


def render_code_object(co: CodeObject, which_findings: str = "warnings", mangled: bool = False) -> str:
    from ..demangle import display

    lines = [str(co.origin)]
    md = f", metadata v{'.'.join(map(str, co.metadata_version))}" if co.metadata_version else ""
    generic = f", generic v{co.generic_version}" if co.generic_version else ""
    family = f" ({co.target.family})" if co.target else ""
    lines.append(
        f"  {co.target_id}{family}  code object v{co.code_object_version} ({co.elf_type}){md}"
        f"{generic}, {len(co.kernels)} kernel{'s' if len(co.kernels) != 1 else ''}"
    )
    lines += _findings(co.findings, which_findings, "  ")
    if co.kernels:
        rows = []
        recorded = _recorded(co)
        for k in co.kernels:
            r = k.resources
            split = f"{fmt(r.arch_vgprs, '?')}+{fmt(r.agprs, '?')}" if co.target and co.target.has_agprs else "-"
            spills = "-" if r.spills == (None, None) else f"{fmt(r.spills[0], '?')}/{fmt(r.spills[1], '?')}"
            rows.append(
                [
                    display(k.name, mangled),
                    fmt(r.wavefront_size),
                    f"{fmt(r.vgprs, '?')}/{fmt(r.vgprs_allocated)}",
                    split,
                    f"{fmt(r.sgprs, '?')}/{fmt(r.sgprs_allocated)}",
                    spills,
                    fmt(r.lds),
                    fmt(r.scratch),
                    fmt(r.max_flat_workgroup_size),
                    _mode_shown(k, co, recorded),
                ]
            )
        lines.append(
            table(
                rows,
                [
                    "kernel",
                    "wave",
                    "VGPR used/alloc",
                    "arch+AGPR",
                    "SGPR used/alloc",
                    "spills SGPR/VGPR",
                    "LDS",
                    "scratch B/lane",
                    "max WG",
                    "mode",
                ],
            )
        )
        if any(row[-1].endswith("*") for row in rows):
            lines.append(
                f"    * the code object does not record CU or WGP mode on {co.target.name if co.target else '?'}: "
                "the processor's default is assumed (occupancy --wgp/--cu-mode chooses)"
            )
        for k in co.kernels:
            shown = _findings(k.findings, which_findings, "      ")
            if shown:
                lines.append(f"    {display(k.name, mangled)}:")
                lines += shown
    return "\n".join(lines) + "\n"


def _findings(findings: list[Finding], which: str, indent: str) -> list[str]:
    keep = [f for f in findings if f.severity in SEVERITY_SHOWN[which]]
    return [f"{indent}{f.severity}: {f.code}: {f.message}" for f in keep]
