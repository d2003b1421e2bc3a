"""``amdocc check PATH...``: an absolute gate for kernel-library CI, with a baseline."""
from __future__ import annotations

import argparse
import sys

from .render import table

DESCRIPTION = """Check every kernel in each PATH against rules a kernel library wants to hold in CI:
VGPR and SGPR spills, scratch (or a dynamic stack), an occupancy floor, whether a workgroup of
the kernel's declared size (.reqd_workgroup_size, else .max_flat_workgroup_size) fits on a CU
under every model (hip, llvm, hw), static plus dynamic LDS against the processor's
per-workgroup limit, and kernels amdocc cannot model (unknown processor, dynamic-VGPR mode).

A baseline file records accepted violations by kernel, target and rule, so that only new ones
(or ones worse than accepted) fail; entries nothing matches any more are reported as stale.
Settings may also come from [tool.amdocc.check] in the nearest pyproject.toml.

Exit status: 0 no new violation, 1 new violations (or stale entries with --fail-on-stale),
2 bad usage or unreadable input."""


def typed(parse):
    """An argparse type from a check_config parser: a bad value exits 2 with its reason."""
    def convert(text):
        from ..errors import UsageError
        try:
            return parse(text, "value")
        except UsageError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None
    convert.__name__ = parse.__name__
    return convert


def add_arguments(parser) -> None:
    from ..policy import check_config as cfg
    from ..policy.checks import DEFAULT_RULES, RULE_GROUPS, RULES

    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    r = parser.add_argument_group("rules and thresholds")
    r.add_argument("--rules", type=typed(cfg.rules), metavar="RULE,...",
                   help=f"rules to run: {', '.join(RULES)}, or {', '.join(RULE_GROUPS)} (default: "
                        f"{', '.join(DEFAULT_RULES)}, and occupancy when --min-occupancy is given)")
    r.add_argument("--max-vgpr-spills", type=typed(cfg.count), metavar="N", help="VGPR spills allowed (default 0)")
    r.add_argument("--max-sgpr-spills", type=typed(cfg.count), metavar="N", help="SGPR spills allowed (default 0)")
    r.add_argument("--max-scratch", type=typed(cfg.count), metavar="BYTES",
                   help="scratch bytes per work-item allowed (default 0); a dynamic stack always fails")
    r.add_argument("--min-occupancy", type=typed(cfg.floor), metavar="W",
                   help="occupancy floor in waves per SIMD (turns the occupancy rule on)")
    r.add_argument("--block", type=typed(cfg.block_size), metavar="N",
                   help="block size for the occupancy floor (default: the kernel's declared size)")
    r.add_argument("--model", type=typed(cfg.model), metavar="MODEL",
                   help=f"model of the occupancy floor: {', '.join(cfg.MODELS)} (default hip)")
    r.add_argument("--dynamic-lds", type=typed(cfg.count), metavar="BYTES",
                   help="dynamic LDS per workgroup, for the occupancy, launch and lds rules (default 0)")
    parser.add_argument("--kernel", metavar="REGEX", help="only kernels whose name or symbol matches")
    b = parser.add_argument_group("baseline")
    b.add_argument("--baseline", type=typed(cfg.path), metavar="FILE", help="accepted violations (JSON)")
    b.add_argument("--update-baseline", action="store_true",
                   help="write every violation found into the baseline (drops stale entries)")
    b.add_argument("--fail-on-stale", action="store_true", default=None,
                   help="exit 1 when the baseline has entries nothing matches any more")
    c = parser.add_mutually_exclusive_group()
    c.add_argument("--config", metavar="FILE", help="read [tool.amdocc.check] from this file")
    c.add_argument("--no-config", action="store_true", help="ignore any pyproject.toml")
    o = parser.add_argument_group("output")
    fmt = o.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the result as one JSON object")
    fmt.add_argument("--github", action="store_true", help="print GitHub Actions annotations (::error ...)")
    o.add_argument("--junit", metavar="FILE", help="also write JUnit XML, one test case per kernel ('-': stdout)")
    o.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 ('-': stdout)")
    parser.add_argument("--jobs", type=typed(cfg.positive), default=None, metavar="N",
                        help="processes reading files (default: one per CPU for 32 files or more)")


def settings_of(args):
    """(Settings, baseline path or None, fail on stale) from the flags and the project's file."""
    from pathlib import Path

    from ..policy import check_config as cfg

    flags = {}
    for setting in cfg.SETTINGS:
        value = getattr(args, cfg.attribute(setting))
        if value is not None:
            flags[setting] = value
    config, name = {}, None
    if args.config:
        name = args.config
        config = cfg.read(Path(args.config))
    elif not args.no_config:
        found = cfg.find(Path.cwd())
        if found is not None:
            name, config = str(found), cfg.read(found)
    settings, rest = cfg.resolve(flags, config, name)
    baseline, fail_on_stale = rest.get("baseline"), bool(rest.get("fail_on_stale"))
    from ..errors import UsageError
    if args.update_baseline and baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE (or baseline in [tool.amdocc.check])")
    if fail_on_stale and baseline is None:
        raise UsageError("--fail-on-stale needs a baseline (--baseline FILE)")
    return settings, baseline, fail_on_stale


def run(args) -> int:
    import re

    from .. import __version__, check_report, report
    from ..errors import UsageError
    from ..policy import baseline as bl
    from . import parallel

    to_stdout = [f"--{k}" for k in ("junit", "sarif") if getattr(args, k) == "-"]
    if len(to_stdout) + args.json + args.github > 1:
        raise UsageError("only one of --json, --github, --junit - and --sarif - may use standard output")
    settings, baseline_path, fail_on_stale = settings_of(args)
    try:
        pattern = re.compile(args.kernel) if args.kernel else None
    except re.error as exc:
        raise UsageError(f"--kernel {args.kernel!r} is not a regular expression: {exc}") from None
    entries = []
    if baseline_path is not None and not (args.update_baseline and not baseline_path.exists()):
        entries = bl.read(baseline_path)

    files = parallel.expand(args.paths)
    violations, checked, errors, skipped_rules = [], [], [], {}
    kernels = 0
    for kind, value in parallel.run(files, check_file, (settings.as_dict(), args.kernel),
                                    parallel.jobs_for(args.jobs, len(files))):
        if kind == "error":
            errors.append(value)
            continue
        kernels += 1
        if args.junit:      # JUnit lists every kernel; the other reports only what failed
            checked.append((value["path"], value["origin"], value["kernel"], value["target"]))
        violations += value["violations"]
        for rule, reason in value["not_evaluated"]:
            skipped_rules[(rule, reason)] = skipped_rules.get((rule, reason), 0) + 1

    def in_scope(e) -> bool:
        return e.rule in settings.rules and (pattern is None or bool(pattern.search(e.kernel)))

    found = [bl.Entry(v["kernel"], v["target"], v["rule"], v["value"]) for v in violations]
    statuses, stale = bl.classify(found, entries, in_scope)
    accepted = {e.key: e.value for e in entries}
    for v, f, status in zip(violations, found, statuses):
        v["status"] = status
        v["accepted_value"] = accepted.get(f.key)
    result = {
        "settings": settings.as_dict(),
        "baseline": str(baseline_path) if baseline_path is not None else None,
        "violations": violations,
        "stale": [e.as_dict() for e in stale],
        "not_evaluated": [{"rule": r, "reason": why, "kernels": n} for (r, why), n in skipped_rules.items()],
        "errors": errors,
    }
    failing = sum(v["status"] in check_report.FAILING for v in violations)
    result["summary"] = {"kernels": kernels, "violations": len(violations), "failing": failing,
                         "accepted": len(violations) - failing, "stale": len(stale), "errors": len(errors)}

    if args.junit:
        write_text(args.junit, check_report.junit(result, checked))
    if args.sarif:
        write_text(args.sarif, check_report.sarif_text(result, __version__))
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    elif args.github:
        for line in check_report.github(result):
            print(line)
    elif not to_stdout:
        print(render(result))
    for e in errors:
        print(f"amdocc: {e['error']}", file=sys.stderr)
    if errors:
        if args.update_baseline:
            print("amdocc: the baseline was not updated, since some input could not be read", file=sys.stderr)
        return 2
    if args.update_baseline:
        new = bl.updated(found, entries, in_scope)
        bl.write(baseline_path, new)
        print(f"amdocc: wrote {len(new)} accepted violation(s) to {baseline_path}", file=sys.stderr)
        return 0
    return 1 if failing or (fail_on_stale and stale) else 0


def write_text(path: str, text: str) -> None:
    """Write a report to a file, or to standard output for '-'."""
    from ..errors import UsageError
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc}") from None


def declared_block(kernel) -> tuple[int | None, str]:
    """The workgroup size a kernel declares, and where it says so; (None, why) if it does not."""
    from .occupancy import block_for

    block, source = block_for(kernel, None, "hip")
    if source.startswith("default"):
        return None, "no .reqd_workgroup_size or .max_flat_workgroup_size in the metadata"
    return block, "." + source


def check_file(item, spec):
    """Yield ("kernel", record) per kernel checked and ("error", record) per unreadable part."""
    from ..policy.checks import Settings, evaluate
    from .occupancy import kernel_filter, kernels_in

    path, in_directory = item
    settings_dict, regex = spec
    settings = Settings(**settings_dict)
    _, pattern = kernel_filter(None, None, regex)
    failures: list[str] = []
    for co, kernel, target in kernels_in(path, in_directory, None, pattern, failures):
        yield from (("error", {"path": path, "error": m}) for m in failures)
        failures.clear()
        verdict = evaluate(kernel, settings, target=target, declared=declared_block(kernel))
        where = {"path": co.path, "origin": co.origin.chain, "kernel": kernel.name, "symbol": kernel.symbol,
                 "target": str(co.target_id)}
        yield "kernel", {**where,
                         "violations": [{**where, "rule": v.rule, "value": v.value, "limit": v.limit,
                                         "message": v.message} for v in verdict.violations],
                         "not_evaluated": [(n.rule, n.reason) for n in verdict.not_evaluated]}
    yield from (("error", {"path": path, "error": m}) for m in failures)


STATUS_SHOWN = {"new": "NEW", "worse": "WORSE", "accepted": "accepted"}


def render(result: dict) -> str:
    lines, rows, last = [], [], None

    def flush():
        if rows:
            lines.append(table(rows, ["kernel", "target", "rule", "status", "what"]))
            rows.clear()

    for v in result["violations"]:
        here = (v["path"], v["origin"])
        if here != last:
            flush()
            lines.append(f"{v['path']} [{v['origin']}]" if v["origin"] else v["path"])
            last = here
        note = f" (accepted: {v['accepted_value']})" if v["status"] == "worse" else ""
        rows.append([v["kernel"], v["target"], v["rule"], STATUS_SHOWN[v["status"]], v["message"] + note])
    flush()
    if result["stale"]:
        lines.append(f"stale baseline entries in {result['baseline']} (nothing matches them; "
                     "--update-baseline removes them):")
        lines += [f"  {e['kernel']} ({e['target']}) {e['rule']}" for e in result["stale"]]
    for n in result["not_evaluated"]:
        lines.append(f"not evaluated: {n['rule']} on {n['kernels']} kernel(s): {n['reason']}")
    s = result["summary"]
    rules = ", ".join(result["settings"]["rules"])
    if s["violations"]:
        verdict = (f"{s['violations']} violation(s): {s['failing']} failing, {s['accepted']} accepted by the "
                   "baseline")
    else:
        verdict = "no violations"
    lines.append(f"{s['kernels']} kernel(s) checked ({rules}): {verdict}"
                 + (f"; {s['stale']} stale baseline entr{'y' if s['stale'] == 1 else 'ies'}" if s["stale"] else "")
                 + (f"; {s['errors']} unreadable" if s["errors"] else ""))
    return "\n".join(lines)
