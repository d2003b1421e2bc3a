"""``amdocc occupancy``: workgroups per CU for each kernel (or for typed-in numbers), explained."""
from __future__ import annotations

import re
import sys

from .render import fmt, table

DESCRIPTION = """How many workgroups of each kernel fit on one CU (one WGP for RDNA kernels in WGP
mode) at a block size and dynamic LDS, which resource limits it, and what to shed for one more.

Models: hip (default) reproduces hipModuleOccupancyMaxActiveBlocksPerMultiprocessor for a named
runtime era (--hip-profile); llvm reproduces LLVM 22's '; Occupancy:' (waves per SIMD; without
--block over the flat workgroup range 1..max_flat_workgroup_size); hw estimates what the
hardware does from the descriptor's allocation.

File mode reads PATHs. Manual mode (no PATH) takes --target and register counts that mean what
the metadata note means: --vgprs is .vgpr_count (AGPRs already included on gfx90a/gfx942/gfx950),
--agprs is reported, never added; --arch-vgprs A --agprs G forms the total by the target's rule."""


def add_model_arguments(parser) -> None:
    parser.add_argument("--model", choices=("hip", "llvm", "hw"), default="hip", help="occupancy model (default hip)")
    parser.add_argument("--hip-profile", metavar="NAME", help="HIP runtime era to reproduce (default: newest; "
                        "see `amdocc occupancy --list-profiles`)")
    parser.add_argument("--lds-granule-rounding", action="store_true",
                        help="llvm: round LDS to its allocation granule (llvm PR #205637, 2026)")
    parser.add_argument("--sgpr-trap-reserve", action="store_true",
                        help="llvm: SGPR occupancy as the exact inverse with the trap reserve (llvm PR #201342, 2026)")
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
    add_target_arguments(parser)
    add_model_arguments(parser)
    add_manual_arguments(parser)


def model_options(args) -> dict:
    if args.model == "hip":
        return {"profile": args.hip_profile} if args.hip_profile else {}
    if args.model == "llvm":
        return {"lds_granule_rounding": args.lds_granule_rounding, "sgpr_trap_reserve": args.sgpr_trap_reserve}
    return {"trap_reserve": not args.no_trap_reserve}


def manual_usage(args):
    from ..errors import UsageError
    from ..models import manual
    from ..targets import get_target

    if not (args.target or args.device):
        raise UsageError("manual mode needs --target GFX or --device NAME")
    if args.device:
        from ..devices import get_device
        target = get_device(args.device).target
    else:
        target = get_target(args.target)
    return manual(target, vgprs=args.vgprs or 0, arch_vgprs=args.arch_vgprs, agprs=args.agprs,
                  sgprs=args.sgprs, lds=args.lds, wave=args.wave,
                  wgp=True if args.wgp else (False if args.cu_mode else None),
                  max_flat_workgroup_size=args.max_flat_workgroup_size)


def selected_kernels(args, failures: list):
    """(code object, kernel, target) for every kernel the PATHs and filters select; what could
    not be read is appended to ``failures`` (as one-line messages)."""
    from ..codeobject import CodeObject
    from ..containers import Failed
    from ..errors import AmdoccError, UsageError
    from ..loader import iter_load
    from ..targets import get_target

    want = None
    if args.device:
        from ..devices import get_device
        want = get_device(args.device).target
    elif args.target:
        want = get_target(args.target)
    try:
        pattern = re.compile(args.kernel) if args.kernel else None
    except re.error as exc:
        raise UsageError(f"--kernel {args.kernel!r} is not a regular expression: {exc}") from None
    for path in args.paths:
        try:
            for item in iter_load(path):
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
    return (mfw or 1024), "max_flat_workgroup_size" if mfw else "default 1024"


def result_record(occ, next_step, **where) -> dict:
    out = dict(where)
    out.update(occ.as_dict())
    out["next_step"] = next_step
    return out


def run(args) -> int:
    from ..errors import UsageError
    from ..models import occupancy, usage_of
    from ..models.nextstep import next_step
    from .. import report

    if args.list_profiles:
        return _list_profiles()
    options = model_options(args)
    results, failed = [], 0
    manual_mode = not args.paths
    if manual_mode:
        if args.vgprs is None and args.arch_vgprs is None:
            raise UsageError("give PATHs, or --target and --vgprs (or --arch-vgprs) for manual mode")
        if args.block is None and args.model != "llvm":
            raise UsageError(f"manual mode needs --block for the {args.model} model")
        usage = manual_usage(args)
        occ = occupancy(usage, device=args.device, block_size=args.block, dynamic_lds=args.dynamic_lds,
                        model=args.model, **options)
        results.append(result_record(occ, next_step(usage, occ, **_step_options(args.model, options)),
                                     path=None, origin=None, kernel="manual", symbol=None,
                                     target=usage.target.name, block_source="given"))
    else:
        failures: list[str] = []
        for co, kernel, target in selected_kernels(args, failures):
            block, source = block_for(kernel, args.block, args.model)
            try:
                occ = occupancy(kernel, target=target, device=args.device, block_size=block,
                                dynamic_lds=args.dynamic_lds, model=args.model, **options)
            except UsageError as exc:
                failed += 1
                print(f"amdocc: {co.origin}: {kernel.name}: {exc}", file=sys.stderr)
                continue
            usage = usage_of(kernel, target)
            results.append(result_record(occ, next_step(usage, occ, **_step_options(args.model, options)),
                                         path=co.path, origin=co.origin.chain, kernel=kernel.name,
                                         symbol=kernel.symbol, target=str(co.target_id), block_source=source))
        for message in failures:
            failed += 1
            print(f"amdocc: {message}", file=sys.stderr)
    if args.json:
        sys.stdout.write(report.dumps({"results": results}) + "\n")
    else:
        print(render(results))
    return 2 if failed else 0


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
