"""``amdocc occupancy``: workgroups per CU for each kernel (or for typed-in numbers), explained."""
from __future__ import annotations

import re
import sys

from .render import fmt, table

DESCRIPTION = """How many workgroups of each kernel fit on one CU (one WGP for RDNA kernels in WGP
mode) at a block size and dynamic LDS, which resource limits it, and what to shed for one more.

Models: hip (default) reproduces hipModuleOccupancyMaxActiveBlocksPerMultiprocessor for a named
runtime era (--hip-profile); llvm reproduces LLVM's '; Occupancy:' (waves per SIMD; without
--block over the flat workgroup range 1..max_flat_workgroup_size) under the rules of the LLVM
that built the kernel (--llvm-version); hw estimates what the
hardware does from the descriptor's allocation.

File mode reads PATHs. Manual mode (no PATH) takes --target and register counts that mean what
the metadata note means: --vgprs is .vgpr_count (AGPRs already included on gfx90a/gfx942/gfx950),
--agprs is reported, never added; --arch-vgprs A --agprs G forms the total by the target's rule."""


def add_model_arguments(parser) -> None:
    parser.add_argument("--model", choices=("hip", "llvm", "hw"), default="hip", help="occupancy model (default hip)")
    parser.add_argument("--hip-profile", metavar="NAME", help="HIP runtime era to reproduce (default: newest; "
                        "see `amdocc occupancy --list-profiles`)")
    parser.add_argument("--llvm-version", metavar="V",
                        help="llvm: apply this LLVM's rules (22, 22.1.8, 24.0.0git, main, or llvm-22/llvm-23; "
                             "default: the compiler the code object names in .comment)")
    parser.add_argument("--lds-granule-rounding", action="store_true",
                        help="llvm: same as --llvm-version llvm-23, whose rules round LDS to its granule "
                             "(llvm PR #205637) and invert the SGPR budget (PR #201342)")
    parser.add_argument("--sgpr-trap-reserve", action="store_true",
                        help="llvm: same as --llvm-version llvm-23 (see --lds-granule-rounding)")
    parser.add_argument("--no-trap-reserve", action="store_true", help="hw: do not charge 16 trap-handler SGPRs per wave")


def add_target_arguments(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--target", metavar="GFX", help="processor (file mode: only code objects for it, generic ones run on it)")
    group.add_argument("--device", metavar="NAME", help="product from tables/devices.toml (e.g. MI300X, MI355X, RX7900XTX)")


def add_manual_arguments(parser) -> None:
    m = parser.add_argument_group("manual mode (no PATH)")
    m.add_argument("--vgprs", type=int, help=".vgpr_count (the unified total on gfx90a/gfx942/gfx950)")
    m.add_argument("--arch-vgprs", type=int, help="arch VGPRs; with --agprs forms the total by the target's rule")
    m.add_argument("--agprs", type=int, help=".agpr_count (reported; added only with --arch-vgprs)")
    m.add_argument("--sgprs", type=int, default=0, help=".sgpr_count (default 0)")
    m.add_argument("--lds", type=int, default=0, metavar="BYTES", help="static LDS (default 0)")
    m.add_argument("--wave", type=int, choices=(32, 64), help="wavefront size (default: the target's)")
    mode = m.add_mutually_exclusive_group()
    mode.add_argument("--wgp", action="store_true", help="WGP mode (the default where it exists)")
    mode.add_argument("--cu-mode", action="store_true", help="CU mode")
    m.add_argument("--max-flat-workgroup-size", type=int, metavar="N", help=".max_flat_workgroup_size")


def add_arguments(parser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="*", metavar="PATH", help="code objects or containers ('-' for stdin)")
    parser.add_argument("--json", action="store_true", help='print {"results": [...]}')
    parser.add_argument("--block", type=int, metavar="N", help="workgroup size in threads (file mode default: "
                        "the kernel's .reqd_workgroup_size, else its .max_flat_workgroup_size)")
    parser.add_argument("--dynamic-lds", type=int, default=0, metavar="BYTES", help="dynamic LDS per workgroup")
    parser.add_argument("--kernel", metavar="REGEX", help="only kernels whose name or symbol matches")
    parser.add_argument("--list-profiles", action="store_true", help="list the HIP runtime profiles and exit")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes reading files (default: one per CPU for 32 files or more)")
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)


def model_options(args) -> dict:
    if args.model == "hip":
        return {"profile": args.hip_profile} if args.hip_profile else {}
    if args.model == "llvm":
        from ..models.llvm_rules import version_option
        version = version_option(args.llvm_version, args.lds_granule_rounding, args.sgpr_trap_reserve)
        return {"llvm_version": version} if version else {}
    return {"trap_reserve": not args.no_trap_reserve}


def manual_usage(args):
    from ..errors import UsageError
    from ..models import manual

    if not (args.target or args.device):
        raise UsageError("manual mode needs --target GFX or --device NAME")
    target, _ = kernel_filter(args.target, args.device, None)
    return manual(target, vgprs=args.vgprs or 0, arch_vgprs=args.arch_vgprs, agprs=args.agprs,
                  sgprs=args.sgprs, lds=args.lds, wave=args.wave,
                  wgp=True if args.wgp else (False if args.cu_mode else None),
                  max_flat_workgroup_size=args.max_flat_workgroup_size)


def selected_kernels(args, failures: list):
    """(code object, kernel, target) for every kernel the PATHs and filters select; what could
    not be read is appended to ``failures`` (as one-line messages)."""
    want, pattern = kernel_filter(args.target, args.device, args.kernel)
    for path in args.paths:
        yield from kernels_in(path, False, want, pattern, failures)


def kernel_filter(target_name: str | None, device_name: str | None, regex: str | None):
    """(target every code object must run on, or None; compiled --kernel pattern, or None)."""
    from ..errors import UsageError
    from ..targets import get_target

    want = None
    if device_name:
        from ..devices import get_device
        want = get_device(device_name).target
    elif target_name:
        want = get_target(target_name)
    try:
        pattern = re.compile(regex) if regex else None
    except re.error as exc:
        raise UsageError(f"--kernel {regex!r} is not a regular expression: {exc}") from None
    return want, pattern


def kernels_in(path: str, in_directory: bool, want, pattern, failures: list):
    """The selected (code object, kernel, target) of one PATH, streamed; failures appended."""
    from ..codeobject import CodeObject
    from ..containers import Failed
    from ..errors import AmdoccError
    from ..loader import iter_load

    try:
        for item in iter_load(path, in_directory=in_directory):
            if isinstance(item, Failed):
                failures.append(str(item.error))
                continue
            if not isinstance(item, CodeObject):
                continue
            target = item.target
            if want is not None:
                if target is want or (target is not None and want.name in target.generic_of):
                    target = want
                else:
                    continue
            for k in item.kernels:
                if pattern and not (pattern.search(k.name) or pattern.search(k.symbol)):
                    continue
                yield item, k, target
    except AmdoccError as exc:
        failures.append(str(exc))


def block_for(kernel, given: int | None, model: str) -> tuple[int | None, str]:
    if given is not None:
        return given, "given"
    if model == "llvm":
        return None, "flat workgroup range"
    reqd = kernel.meta("reqd_workgroup_size")
    if isinstance(reqd, list) and reqd and all(isinstance(x, int) and x > 0 for x in reqd):
        size = 1
        for x in reqd:
            size *= x
        return size, "reqd_workgroup_size"
    mfw = kernel.resources.max_flat_workgroup_size
    from ..targets import MAX_WORKGROUP_SIZE

    return (mfw or MAX_WORKGROUP_SIZE), "max_flat_workgroup_size" if mfw else f"default {MAX_WORKGROUP_SIZE}"


def result_record(occ, next_step, **where) -> dict:
    out = dict(where)
    out.update(occ.as_dict())
    out["next_step"] = next_step
    return out


def run(args) -> int:
    from ..errors import UsageError
    from ..models import occupancy
    from ..models.nextstep import next_step
    from .. import report

    if args.list_profiles:
        return _list_profiles()
    options = model_options(args)
    if args.paths:
        return _run_files(args, options)
    if args.vgprs is None and args.arch_vgprs is None:
        raise UsageError("give PATHs, or --target and --vgprs (or --arch-vgprs) for manual mode")
    if args.block is None and args.model != "llvm":
        raise UsageError(f"manual mode needs --block for the {args.model} model")
    usage = manual_usage(args)
    occ = occupancy(usage, device=args.device, block_size=args.block, dynamic_lds=args.dynamic_lds,
                    model=args.model, **options)
    results = [result_record(occ, next_step(usage, occ, **_step_options(args.model, options)),
                             path=None, origin=None, kernel="manual", symbol=None,
                             target=usage.target.name, block_source="given")]
    if args.json:
        sys.stdout.write(report.dumps({"results": results}) + "\n")
    else:
        print(render(results))
    return 0


def _run_files(args, options) -> int:
    """File mode: files across processes (--jobs), results printed as each code object is done."""
    from . import parallel

    kernel_filter(args.target, args.device, args.kernel)   # bad --target/--kernel: usage error up front
    files = parallel.expand(args.paths)
    spec = (args.target, args.device, args.kernel, args.block, args.dynamic_lds, args.model, options, args.json)
    failed = shown = 0
    if args.json:
        sys.stdout.write('{"results": [')
    for kind, value in parallel.run(files, occupancy_file, spec, parallel.jobs_for(args.jobs, len(files))):
        if kind == "error":
            failed += 1
            print(f"amdocc: {value}", file=sys.stderr)
        elif args.json:
            sys.stdout.write(", ".join(value) if not shown else ", " + ", ".join(value))
            shown += len(value)
        else:
            print(render(value))
            shown += len(value)
    if args.json:
        sys.stdout.write("]}\n")
    elif not shown:
        print(render([]))
    return 2 if failed else 0


def occupancy_file(item, spec):
    """Yield ("results", rows of one code object) and ("error", message) for one file. Rows are
    JSON text or dicts for the table, so a worker process can send them back."""
    from ..errors import UsageError
    from ..models import occupancy, usage_of
    from ..models.nextstep import next_step
    from .. import report

    target_name, device, regex, given_block, dynamic_lds, model, options, as_json = spec
    want, pattern = kernel_filter(target_name, device, regex)
    failures: list[str] = []
    rows, current = [], None
    for co, kernel, target in kernels_in(item[0], item[1], want, pattern, failures):
        yield from (("error", m) for m in failures)
        failures.clear()
        if co is not current and rows:
            yield "results", rows
            rows = []
        current = co
        block, source = block_for(kernel, given_block, model)
        try:
            occ = occupancy(kernel, target=target, device=device, block_size=block,
                            dynamic_lds=dynamic_lds, model=model, **options)
        except UsageError as exc:
            yield "error", f"{co.origin}: {kernel.name}: {exc}"
            continue
        usage = usage_of(kernel, target)
        row = result_record(occ, next_step(usage, occ, **_step_options(model, options)),
                            path=co.path, origin=co.origin.chain, kernel=kernel.name,
                            symbol=kernel.symbol, target=str(co.target_id), block_source=source)
        rows.append(report.dumps(row) if as_json else row)
    if rows:
        yield "results", rows
    yield from (("error", m) for m in failures)


def _step_options(model, options):
    return {k: v for k, v in options.items() if k != "profile"} if model != "hip" else dict(options)


def _list_profiles() -> int:
    from ..models.hip import default_profile_name, profiles

    default = default_profile_name()
    for name, p in profiles().items():
        print(f"{name}{' (default)' if name == default else ''}: {p.summary}")
    return 0


def render(results: list[dict]) -> str:
    if not results:
        return "no kernels selected"
    lines, last_where = [], None
    rows = []
    for r in results:
        where = (r["path"], r["origin"], r["target"], r["model"], r["profile"])
        if where != last_where:
            if rows:
                lines.append(_table(rows))
                rows = []
            head = r["path"] or "manual"
            if r["origin"]:
                head += f" [{r['origin']}]"
            lines.append(f"{head}\n  {r['target']}  model {r['model']}" + (f" ({r['profile']})" if r["profile"] else ""))
            last_where = where
        rows.append(r)
    if rows:
        lines.append(_table(rows))
    return "\n".join(lines)


def _table(results) -> str:
    rows, notes = [], []
    for r in results:
        limits = " ".join(f"{k}={v}" for k, v in r["limits"].items() if v is not None)
        unit = "WGP" if r["per_wgp"] else "CU"
        blocks = "-" if r["blocks_per_cu"] is None else f"{r['blocks_per_cu']}/{unit}"
        rows.append([r["kernel"], fmt(r["block_size"]), fmt(r["dynamic_lds"]), blocks,
                     fmt(r["waves_per_simd"]), "-" if r["occupancy_fraction"] is None else f"{r['occupancy_fraction']:.0%}",
                     r["error"] or fmt(r["limiter"]), limits])
        step = r.get("next_step")
        if step:
            shed = ", ".join(f"{amount} {'B of LDS' if name == 'lds' else name.upper() + 's'}"
                             for name, amount in step["shed"].items())
            notes.append(f"    {r['kernel']}: shed {shed} for {step['gain']} "
                         f"{'blocks per ' + unit if step['unit'] == 'blocks_per_cu' else 'waves per SIMD'}")
        for w in r["warnings"]:
            notes.append(f"    {r['kernel']}: warning: {w}")
    text = table(rows, ["kernel", "block", "dyn LDS", "blocks", "waves/SIMD", "occupancy", "limiter", "limits (blocks each allows)"])
    return text + ("\n" + "\n".join(notes) if notes else "") + "\n"
