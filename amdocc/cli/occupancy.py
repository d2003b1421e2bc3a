"""``amdocc occupancy``: workgroups per CU for each kernel (or for typed-in numbers), explained."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import args as a
from .render import fmt, table
from .selection import (
    add_block_argument,
    add_jobs_argument,
    add_kernel_argument,
    add_mangled_argument,
    add_target_arguments,
)

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel
    from ..models import KernelUsage, Occupancy
    from ..models.hip_profiles import HipProfile
    from .parallel import Event, FileItem
    from .selection import Selection

DESCRIPTION = """How many workgroups of each kernel fit on one CU (one WGP for RDNA kernels in WGP
mode) at a block size and dynamic LDS, which resource limits it, and what to shed for one more.

Models: hip (default) reproduces hipModuleOccupancyMaxActiveBlocksPerMultiprocessor for a ROCm
release (--hip-profile; default rocm-7.14, the newest release a real runtime has confirmed; a
profile that does not run the kernel's processor is an error unless --what-if); llvm reproduces
LLVM's '; Occupancy:' (waves per SIMD; without --block over the flat workgroup range
1..max_flat_workgroup_size) under the rules of the LLVM that built the kernel (--llvm-version);
hw estimates what the hardware does from the descriptor's allocation.

File mode reads PATHs; with --target or --device only the code objects that can run there are
evaluated (a generic code object as the member it stands for); --what-if evaluates the others
there too, labelled as what-ifs. Manual mode (no PATH) takes --target and register counts that
mean what the metadata note means: --vgprs is .vgpr_count (AGPRs already included on
gfx90a/gfx942/gfx950), --agprs is reported, never added; --arch-vgprs A --agprs G forms the
total by the target's rule. Options that would be ignored (another model's options, manual
numbers beside a PATH) are errors."""


def _models() -> tuple[str, ...]:
    from ..models import MODELS

    return MODELS


def _hip_profiles() -> dict[str, HipProfile]:
    from ..models.hip import profiles

    return profiles()


def _check_llvm_version(text: str) -> None:
    from ..models.llvm_rules import parse_version

    parse_version(text)


@dataclass(frozen=True)
class ModelFlag:
    """One model option on the command line: the models it applies to, the amdocc.occupancy
    option it sets, and its argparse settings. Options that do not apply are refused."""

    flag: str
    models: tuple[str, ...]
    option: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


# The one table of model options; a new option is one row (its check and help follow).
MODEL_FLAGS = (
    ModelFlag(
        "--hip-profile",
        ("hip",),
        "profile",
        dict(
            metavar="NAME",
            type=a.ProfileName(_hip_profiles, "HIP profile"),
            help="hip: the HIP runtime release to reproduce (a patch release such as rocm-6.4.1 names its line; "
            "default: the newest release a real runtime has confirmed; develop only by name; see --list-profiles)",
        ),
    ),
    ModelFlag(
        "--llvm-version",
        ("llvm",),
        "llvm_version",
        dict(
            metavar="V",
            type=a.Checked(_check_llvm_version, "22.1.8", ("", "banana", "22.x")),
            help="llvm: apply this LLVM's rules (22, 22.1.8, 24.0.0git, main, or a rule set such as llvm-23; "
            "default: the compiler the code object names in .comment)",
        ),
    ),
    ModelFlag(
        "--lds-granule-rounding",
        ("llvm",),
        "lds_granule_rounding",
        dict(
            action="store_const",
            const=True,
            help="llvm: a spelling of the first LLVM whose rules round LDS to its granule (PR #205637, llvm-23)",
        ),
    ),
    ModelFlag(
        "--sgpr-trap-reserve",
        ("llvm",),
        "sgpr_trap_reserve",
        dict(
            action="store_const",
            const=True,
            help="llvm: a spelling of the first LLVM whose SGPR occupancy inverts the budget (PR #201342, llvm-23)",
        ),
    ),
    ModelFlag(
        "--no-trap-reserve",
        ("hw",),
        "trap_reserve",
        dict(action="store_const", const=False, help="hw: do not charge 16 trap-handler SGPRs per wave"),
    ),
)

# Manual-mode resource numbers: refused beside a PATH, where the kernel's own numbers apply.
# (--wgp/--cu-mode are not among them: with a PATH they choose the mode of kernels whose code object
# does not record it.)
MANUAL_DESTS = ("vgprs", "arch_vgprs", "agprs", "sgprs", "lds", "wave", "max_flat_workgroup_size")
# File-mode options: refused without a PATH, where there is nothing to select or read.
FILE_DESTS = ("kernel", "jobs", "mangled", "what_if")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=a.OneOf(_models, "model"),
        default="hip",
        metavar="{hip,llvm,hw}",
        help="occupancy model (default hip)",
    )
    for f in MODEL_FLAGS:
        parser.add_argument(f.flag, dest=f.dest, default=None, **f.settings)


def add_manual_arguments(parser: argparse.ArgumentParser) -> None:
    m = parser.add_argument_group("manual mode (no PATH)")
    m.add_argument("--vgprs", type=a.integer(0), help=".vgpr_count (the unified total on gfx90a/gfx942/gfx950)")
    m.add_argument(
        "--arch-vgprs", type=a.integer(0), help="arch VGPRs; with --agprs forms the total by the target's rule"
    )
    m.add_argument("--agprs", type=a.integer(0), help=".agpr_count (reported; added only with --arch-vgprs)")
    m.add_argument("--sgprs", type=a.integer(0), help=".sgpr_count (default 0)")
    m.add_argument("--lds", type=a.LdsSize(), metavar="BYTES", help="static LDS (default 0)")
    m.add_argument(
        "--wave",
        type=a.OneOf(("32", "64"), "wave size", int),
        metavar="{32,64}",
        help="wavefront size (default: the target's)",
    )
    mode = m.add_mutually_exclusive_group()
    mode.add_argument(
        "--wgp",
        action="store_true",
        help="WGP mode (the default where it exists); with PATHs: of kernels whose code object does not record it",
    )
    mode.add_argument("--cu-mode", action="store_true", help="CU mode (with PATHs: as --wgp)")
    m.add_argument("--max-flat-workgroup-size", type=a.WorkgroupSize(), metavar="N", help=".max_flat_workgroup_size")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code objects or containers ('-' for stdin)")
    parser.add_argument(
        "--json", action="store_true", help='print {"results": [...], "skipped": [...], "errors": [...]}'
    )
    add_block_argument(
        parser,
        "workgroup size in threads, >= 1 (file mode "
        "default: the kernel's .reqd_workgroup_size, else its .max_flat_workgroup_size)",
    )
    parser.add_argument(
        "--dynamic-lds",
        type=a.LdsSize(),
        default=None,
        metavar="BYTES",
        help="dynamic LDS per workgroup (bytes, or with a K/KiB suffix; default 0, or the launch a Triton "
        "cache or AOTInductor package records)",
    )
    add_kernel_argument(parser)
    add_mangled_argument(parser)
    parser.add_argument("--list-profiles", action="store_true", help="list the HIP runtime profiles and exit")
    add_jobs_argument(parser)
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)


# -- the mode checks ------------------------------------------------------------------------------


def check_model_options(args: argparse.Namespace) -> None:
    """Options of another model would be ignored: refuse them."""
    for f in MODEL_FLAGS:
        if a.given(args, f.dest) and args.model not in f.models:
            models = " and ".join(f.models)
            raise a.UsageError(f"{f.flag} applies to the {models} model, not to --model {args.model}")


def check_mode(args: argparse.Namespace, file_dests: tuple[str, ...] = FILE_DESTS) -> None:
    """Manual numbers beside a PATH, file options without one, --what-if without a processor."""
    check_model_options(args)
    if args.paths:
        a.refuse(args, MANUAL_DESTS, "manual-mode numbers are not used with a PATH (the kernel's own numbers apply)")
        if args.model == "hip":
            a.refuse(
                args,
                ("wgp", "cu_mode"),
                "with a PATH they choose the mode of kernels whose code object does not record it, for the "
                "llvm and hw models; the hip model reads the metadata's .workgroup_processor_mode, as HIP does",
            )
    else:
        # numbers typed in describe the processor named; a what-if can still ask a HIP profile
        # about a processor its runtime does not run
        manual = ("what_if",) if a.given(args, "hip_profile") else ()
        a.refuse(
            args,
            tuple(d for d in file_dests if d not in manual),
            "only applies to kernels read from a PATH, and none is given",
        )
    a.what_if_needs_a_processor(args)


def asked_what_if(args: argparse.Namespace, usage: KernelUsage) -> dict[str, Any]:
    """amdocc.occupancy's what-if keywords for a usage already placed on its processor."""
    return {"target": usage.target, "what_if": True} if getattr(args, "what_if", False) else {}


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    return {f.option: getattr(args, f.dest) for f in MODEL_FLAGS if a.given(args, f.dest)}


def manual_usage(args: argparse.Namespace) -> KernelUsage:
    from ..models import manual
    from ..models.compat import device_id

    named = device_id(args.target, args.device)
    if named is None:
        raise a.UsageError("manual mode needs --target GFX or --device NAME")
    target = named[1]
    if args.cu_mode and not target.wgp:
        raise a.UsageError(f"--cu-mode changes nothing on {target.name}, which has no WGP mode")
    return manual(
        target,
        vgprs=args.vgprs or 0,
        arch_vgprs=args.arch_vgprs,
        agprs=args.agprs,
        sgprs=args.sgprs or 0,
        lds=args.lds or 0,
        wave=args.wave,
        wgp=True if args.wgp else (False if args.cu_mode else None),
        max_flat_workgroup_size=args.max_flat_workgroup_size,
    )


def selection_of(args: argparse.Namespace) -> Selection:
    from .selection import Selection

    return Selection(args.target, args.device, args.kernel, bool(getattr(args, "what_if", False)))


def selected_kernels(
    args: argparse.Namespace, selection: Selection, failures: list[str]
) -> list[tuple[CodeObject, Kernel]]:
    """(code object, kernel) for every kernel the PATHs and the selection keep; what could not
    be read is appended to ``failures`` (one-line messages)."""
    from .parallel import read

    chosen: list[tuple[CodeObject, Kernel]] = []
    for item in _files(args.paths):
        for kind, value in read(item):
            if kind == "error":
                failures.append(value["error"])
            elif kind == "code_object":
                chosen.extend((value, k) for k in selection.kernels_of(value))
    return chosen


def _files(paths: list[str]) -> list[tuple[str, bool]]:
    from . import parallel

    return parallel.expand(paths)


def block_for(kernel: Kernel, given: int | None, model: str) -> tuple[int | None, str]:
    """The block size to evaluate at and where it came from: the given one, none for the llvm
    model (its flat workgroup range), else the size the kernel declares (or the largest)."""
    from ..policy.checks import declared_block
    from ..targets import MAX_WORKGROUP_SIZE

    if given is not None:
        return given, "given"
    if model == "llvm":
        return None, "flat workgroup range"
    size, source = declared_block(kernel)
    if size is None:
        return MAX_WORKGROUP_SIZE, f"default {MAX_WORKGROUP_SIZE}"
    return size, source.lstrip(".")


def result_record(occ: Occupancy, next_step: dict[str, Any] | None, **where: Any) -> dict[str, Any]:
    out = dict(where)
    out.update(occ.as_dict())
    out["next_step"] = next_step
    return out


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..models import occupancy
    from ..models.nextstep import search_next_step

    if args.list_profiles:
        others = [act.dest for act in args._parser._actions if act.dest not in ("help", "list_profiles")]
        a.refuse(args, others, "not used with --list-profiles")
        return _list_profiles()
    check_mode(args)
    options = model_options(args)
    if args.paths:
        return _run_files(args, options)
    if args.vgprs is None and args.arch_vgprs is None:
        raise a.UsageError("give PATHs, or --target (or --device) and --vgprs (or --arch-vgprs) for manual mode")
    if args.block is None and args.model != "llvm":
        raise a.UsageError(f"manual mode needs --block for the {args.model} model")
    usage = manual_usage(args)
    occ = occupancy(
        usage,
        target=args.target,
        device=args.device,
        block_size=args.block,
        dynamic_lds=args.dynamic_lds or 0,
        model=args.model,
        what_if=bool(args.what_if),
        **options,
    )
    results = [
        result_record(
            occ,
            search_next_step(usage, occ, **_step_options(args.model, options)),
            path=None,
            origin=None,
            kernel="manual",
            symbol=None,
            demangled="manual",
            target=usage.target.name,
            block_source="given",
            dynamic_lds_source="default" if args.dynamic_lds is None else "given",
            launch=None,
        )
    ]
    if args.json:
        sys.stdout.write(report.dumps({"results": results, "skipped": [], "errors": []}) + "\n")
    else:
        from .notices import Notices

        notices = Notices()  # diagnostics to standard error
        notices.take_warnings(results)
        print(render(results))
        notices.flush()
    return 0


@dataclass(frozen=True)
class Spec:
    """What a worker process needs to evaluate one file (picklable)."""

    target: str | None
    device: str | None
    kernel: str | None
    what_if: bool
    block: int | None
    dynamic_lds: int | None  # None: not given (0, or the recorded launch's)
    model: str
    options: dict[str, Any]
    as_json: bool
    mode: str | None = None  # --wgp/--cu-mode: for kernels whose code object does not record it


def _run_files(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """File mode: files across processes (--jobs), results printed as each code object is done."""
    import json

    from . import parallel

    selection = selection_of(args)  # --target and --device that disagree: refused up front
    files = parallel.expand(args.paths)
    spec = Spec(
        args.target,
        args.device,
        args.kernel,
        bool(args.what_if),
        args.block,
        args.dynamic_lds,
        args.model,
        options,
        args.json,
        "wgp" if args.wgp else ("cu" if args.cu_mode else None),
    )
    from .notices import Notices

    skipped: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    notices = Notices()  # warnings, once per target and message with a count, on standard error
    shown = 0
    if args.json:
        sys.stdout.write('{"results": [')
    for kind, value in parallel.run(files, occupancy_file, spec, parallel.jobs_for(args.jobs, len(files))):
        if kind == "seen":
            selection.merge(value)
        elif kind == "error":
            errors.append(value)
            print(f"amdocc: {value['error']}", file=sys.stderr)
        elif kind == "skipped":
            skipped.append(value)
            if not args.json and not value["origin"]:  # a whole file with nothing to evaluate
                print(f"skipped {value['path']}: {value['reason']}")
        elif args.json:
            sys.stdout.write(", ".join(value) if not shown else ", " + ", ".join(value))
            shown += len(value)
        else:
            notices.take_warnings(value, args.mangled)
            print(render(value, mangled=args.mangled))
            shown += len(value)
    if args.json:
        sys.stdout.write("], " + json.dumps({"skipped": skipped, "errors": errors})[1:] + "\n")
    notices.flush()
    if not shown:
        if not selection.matched:  # kernels that were selected but failed are already reported
            print(f"amdocc: {selection.nothing_selected()}", file=sys.stderr)
        return 2
    return 2 if errors else 0


def occupancy_file(item: FileItem, spec: Spec) -> Iterator[Event]:
    """Yield ("results", rows of one code object), ("error", record), ("skipped", record) and,
    last, ("seen", what the selection passed over) for one file. Rows are JSON text or dicts
    for the table, so a worker process can send them back."""
    from .. import report
    from ..demangle import demangle
    from ..errors import AmdoccError
    from ..integrations.launches import recorded_launch
    from ..models import occupancy, usage_of
    from ..models.nextstep import search_next_step
    from .parallel import kernel_error, read
    from .selection import Selection

    selection = Selection(spec.target, spec.device, spec.kernel, spec.what_if)
    where = selection.evaluation()
    for kind, co in read(item):
        if kind != "code_object":
            yield kind, co
            continue
        rows: list[str | dict[str, Any]] = []
        for kernel in selection.kernels_of(co):
            block, source = block_for(kernel, spec.block, spec.model)
            try:
                launch = recorded_launch(
                    co.path, co.origin.chain, kernel.name, co.target_id.processor, kernel.resources.wavefront_size
                )
                dynamic_lds = spec.dynamic_lds or 0
                lds_source = "default" if spec.dynamic_lds is None else "given"
                if launch is not None and spec.model != "llvm":  # llvm: the compiler's own view
                    if spec.block is None:
                        block, source = launch.block_size, f"{launch.source} launch"
                    if spec.dynamic_lds is None:
                        dynamic_lds, lds_source = launch.dynamic_lds, f"{launch.source} launch"
                occ = occupancy(
                    kernel,
                    block_size=block,
                    dynamic_lds=dynamic_lds,
                    model=spec.model,
                    mode=spec.mode,
                    **where,
                    **spec.options,
                )
                usage = usage_of(kernel, where.get("target"), where.get("device"), spec.mode)
                step = search_next_step(usage, occ, **_step_options(spec.model, spec.options))
            except AmdoccError as exc:
                yield "error", kernel_error(co, kernel, exc)
                continue
            row = result_record(
                occ,
                step,
                path=co.path,
                origin=co.origin.chain,
                kernel=kernel.name,
                symbol=kernel.symbol,
                demangled=demangle(kernel.name),
                target=str(co.target_id),
                block_source=source,
                dynamic_lds_source=lds_source,
                launch=None if launch is None else launch.as_dict() | {"label": launch.label},
            )
            rows.append(report.dumps(row) if spec.as_json else row)
        if rows:
            yield "results", rows
    yield "seen", selection.summary()


def _step_options(model: str, options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k != "profile"} if model != "hip" else dict(options)


def _list_profiles() -> int:
    from ..models.hip import aliases, default_profile_name, profiles

    default = default_profile_name()
    for name, p in profiles().items():
        if name == p.name:  # aliases are listed once, below
            mark = " (default)" if name == default else ""
            print(f"{name}{mark}  {p.release_name}  {p.dates}\n    {p.unknown or p.changes}\n    source: {p.source}")
            if p.evidence:
                print(f"    evidence: {p.evidence}")
            if p.confirmed:
                print(f"    confirmed: {p.confirmed}")
            reports = p.reports
            if reports is not None and reports != p.release:
                print(f"    hipRuntimeGetVersion(): HIP {reports[0]}.{reports[1]}")
    print("aliases: " + ", ".join(f"{a} = {t}" for a, t in aliases().items()))
    return 0


# -- text -----------------------------------------------------------------------------------------


def where_evaluated(r: dict[str, Any]) -> str:
    """The processor line of a group of results: the code's target, and where it was evaluated
    when that is another processor (a generic family member, or a what-if)."""
    text: str = r["target"]
    built = (r.get("built_for") or r["target"]).split(":", 1)[0]
    if r["processor"] != built:
        text += f" code evaluated on {r['processor']}"
    if r.get("what_if"):
        text = "WHAT-IF: " + text + " (it cannot run there)"
    return text


def render(results: list[dict[str, Any]], mangled: bool = False) -> str:
    if not results:
        return "no kernels selected"
    lines: list[str] = []
    last_where: tuple[object, ...] | None = None
    rows: list[dict[str, Any]] = []
    for r in results:
        where = (
            r["path"],
            r["origin"],
            r["target"],
            r["processor"],
            r["model"],
            r["profile"],
            r["unit"],
            r["block_size"] is None,
        )
        if where != last_where:
            if rows:
                lines.append(_table(rows, mangled))
                rows = []
            head = r["path"] or "manual"
            if r["origin"]:
                head += f" [{r['origin']}]"
            profile = f" ({r['profile']})" if r["profile"] else ""
            lines.append(f"{head}\n  {where_evaluated(r)}  model {r['model']}{profile}")
            last_where = where
        rows.append(r)
    if rows:
        lines.append(_table(rows, mangled))
    return "\n".join(lines)


def _table(results: list[dict[str, Any]], mangled: bool) -> str:
    rows: list[list[str]] = []
    notes: list[str] = []
    unit = results[0]["unit"]
    for r in results:
        name = r["kernel"] if mangled else (r.get("demangled") or r["kernel"])
        limits = " ".join(f"{k}={v}" for k, v in r["limits"].items() if v is not None)
        blocks = "-" if r["blocks_per_cu"] is None else str(r["blocks_per_cu"])
        rows.append(
            [
                name,
                fmt(r["block_size"]),
                fmt(r["dynamic_lds"]),
                blocks,
                fmt(r["waves_per_simd"]),
                "-" if r["occupancy_fraction"] is None else f"{r['occupancy_fraction']:.0%}",
                r["error"] or fmt(r["limiter"]),
                limits,
            ]
        )
        step = r.get("next_step")
        if step:
            shed = ", ".join(
                f"{amount} {'B of LDS' if what == 'lds' else what.upper() + 's'}"
                for what, amount in step["shed"].items()
            )
            what = "workgroup" if step["unit"] == "blocks_per_cu" else "wave"
            where = f"per {r['unit']}" if step["unit"] == "blocks_per_cu" else "per SIMD"
            plural = "s" if step["gain"] != 1 else ""
            notes.append(f"    {name}: shed {shed} for {step['gain']} {what}{plural} {where}")
        for w in r["warnings"]:
            notes.append(f"    {name}: warning: {w}")
        if r.get("launch"):
            notes.append(f"    {name}: {r['launch']['label']}")
    # The llvm model over the flat workgroup range counts its limits in waves per SIMD.
    per = f"workgroups/{unit}" if results[0]["block_size"] is not None else "waves/SIMD"
    text = table(
        rows,
        [
            "kernel",
            "block",
            "dyn LDS",
            f"workgroups/{unit}",
            "waves/SIMD",
            "occupancy",
            "limiter",
            f"limits ({per} each allows)",
        ],
    )
    return text + ("\n" + "\n".join(notes) if notes else "") + "\n"
