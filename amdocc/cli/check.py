"""``amdocc check PATH...``: an absolute gate for kernel-library CI, with a baseline."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..errors import ExitCode
from .render import skipped_lines, table

if TYPE_CHECKING:
    from ..app.check_op import CheckSetup

DESCRIPTION = """Check every kernel in each PATH against rules a kernel library wants to hold in CI:
VGPR and SGPR spills, scratch (or a dynamic stack), an occupancy floor, whether a workgroup of
the kernel's declared size (.reqd_workgroup_size, else .max_flat_workgroup_size) fits on a CU
under every model (hip, llvm, hw), static plus dynamic LDS against the processor's
per-workgroup limit, and kernels amdocc cannot model (unknown processor, dynamic-VGPR mode).
Opt-in: spill instructions inside a loop of the kernel's machine code (--rules
defaults,spills-in-loops; disassembles the kernels, needs a libLLVM).

A baseline file records accepted violations by kernel identity (location: the file within a
directory and the archive member; target id; name; which copy, where a file holds several) and
rule, so that only new ones (or ones worse than accepted) fail, and an accepted violation in one
library accepts nothing in another; entries nothing matches any more are reported as stale.
A baseline of the previous format (no locations) is read, with a notice, and rewritten with
locations by --update-baseline.
Settings may also come from [tool.amdocc.check] in the nearest pyproject.toml, with the same
names and spellings (max-scratch = "1K"); an option given on the command line overrides the
file's value, and each override is said on stderr (and under "config_overrides" in --json).

--kernel, --target, --device and --what-if select as in every command: kernels are judged on
the processor named (code that cannot run there only with --what-if, labelled so), and a
selection that matches nothing exits 2 naming what is there.

Exit status: 0 no new violation, 1 new violations (or stale entries with --fail-on-stale),
2 bad usage, unreadable input or nothing selected."""


def _check_budget(text: str) -> None:
    from ..policy.budgets import parse

    parse(text.strip())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..policy import check_config as cfg
    from ..policy.checks import DEFAULT_RULES, RULE_GROUPS, RULES
    from . import args as a

    parser.description = DESCRIPTION
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or '-' for stdin")
    r = parser.add_argument_group("rules and thresholds")
    r.add_argument(
        "--rules",
        type=a.Kinds(RULES, tuple(RULE_GROUPS.items()), none=False, what="rule"),
        metavar="RULE,...",
        help=f"rules to run: {', '.join(RULES)}, or {', '.join(RULE_GROUPS)} (default: "
        f"{', '.join(DEFAULT_RULES)}, and occupancy when --min-occupancy is given; spills-in-loops only "
        "when named: it disassembles the kernels)",
    )
    r.add_argument("--max-vgpr-spills", type=a.integer(0), metavar="N", help="VGPR spills allowed (default 0)")
    r.add_argument("--max-sgpr-spills", type=a.integer(0), metavar="N", help="SGPR spills allowed (default 0)")
    r.add_argument(
        "--max-scratch",
        type=a.byte_size(),
        metavar="BYTES",
        help="scratch bytes per work-item allowed (default 0); a dynamic stack always fails",
    )
    r.add_argument(
        "--min-occupancy",
        type=a.WaveFloor(),
        metavar="W",
        help="occupancy floor in waves per SIMD (turns the occupancy rule on)",
    )
    a.add_block_argument(r, "block size for the occupancy floor (default: the kernel's declared size)")
    r.add_argument(
        "--model",
        type=a.OneOf(cfg.MODELS, "model"),
        metavar="{" + ",".join(cfg.MODELS) + "}",
        help="model of the occupancy floor (default hip)",
    )
    r.add_argument(
        "--dynamic-lds",
        type=a.LdsSize(),
        metavar="BYTES",
        help="dynamic LDS per workgroup, for the occupancy, launch and lds rules (default 0)",
    )
    r.add_argument(
        "--budget",
        action="append",
        type=a.Checked(_check_budget, "spills==0, vgprs<=128", ("", "vgpr<=1", "spills==")),
        metavar="EXPR",
        help="per-kernel budget, e.g. 'spills==0, vgprs<=128' or 'attn_*: waves_per_simd[hip]>=2' "
        "(repeatable; fields and grammar: docs/caches-and-budgets.md)",
    )
    s = parser.add_argument_group("selection")
    a.add_kernel_argument(s)
    a.add_target_arguments(s)
    b = parser.add_argument_group("baseline")
    b.add_argument("--baseline", type=a.OutputFile(), metavar="FILE", help="accepted violations (JSON)")
    b.add_argument(
        "--update-baseline",
        action="store_true",
        help="write every violation found into the baseline (drops stale entries)",
    )
    b.add_argument(
        "--fail-on-stale",
        action="store_true",
        default=None,
        help="exit 1 when the baseline has entries nothing matches any more",
    )
    c = parser.add_mutually_exclusive_group()
    c.add_argument(
        "--config",
        metavar="FILE",
        type=a.ExistingPath(stdin=False, directory=False),
        help="read [tool.amdocc.check] from this file",
    )
    c.add_argument("--no-config", action="store_true", help="ignore any pyproject.toml")
    o = parser.add_argument_group("output")
    fmt = o.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the result as one JSON object")
    fmt.add_argument("--github", action="store_true", help="print GitHub Actions annotations (::error ...)")
    o.add_argument(
        "--junit",
        metavar="FILE",
        type=a.OutputFile(stdout=True),
        help="also write JUnit XML, one test case per kernel ('-': stdout)",
    )
    o.add_argument(
        "--sarif", metavar="FILE", type=a.OutputFile(stdout=True), help="also write SARIF 2.1.0 ('-': stdout)"
    )
    a.add_mangled_argument(o, "text and --github")
    a.add_jobs_argument(parser)


def setup_of(args: argparse.Namespace) -> CheckSetup:
    """The check's settings from the flags and the project's file (amdocc.app.check_op.setup);
    what the flags overrode is said on standard error (and in --json)."""
    from pathlib import Path

    from ..app.check_op import setup
    from ..policy import check_config as cfg

    given = {setting: getattr(args, cfg.attribute(setting)) for setting in cfg.SETTINGS}
    config = Path(args.config) if args.config else not args.no_config
    chosen = setup(given, config, update_baseline=bool(args.update_baseline))
    for line in chosen.overrides:
        print(f"amdocc: {line}", file=sys.stderr)
    return chosen


def check_outputs(args: argparse.Namespace) -> None:
    """At most one report on standard output, and --mangled only where names are shown."""
    from . import args as a

    to_stdout = [f"--{k} -" for k in ("junit", "sarif") if getattr(args, k) == "-"]
    if len(to_stdout) + args.json + args.github > 1:
        raise a.UsageError("only one of --json, --github, --junit - and --sarif - may use standard output")
    if args.json or to_stdout:
        a.refuse(
            args,
            ("mangled",),
            f"names are shown only in the text and --github output, and "
            f"{(to_stdout or ['--json'])[0]} replaces them (JSON carries both names)",
        )


def run(args: argparse.Namespace) -> int:
    from .. import __version__, check_report, report
    from ..app.check_op import baseline_entries, rewrite_baseline, run_check
    from ..app.selection import Selection
    from ..policy import check_config as cfg
    from . import args as a
    from .render import write_report

    check_outputs(args)
    a.what_if_needs_a_processor(args)
    chosen = setup_of(args)
    baseline_path = chosen.baseline
    selection = Selection(args.target, args.device, args.kernel, args.what_if)
    if selection.named is not None:
        cfg.floor_on(chosen.settings, selection.named[1], selection.target_text or "")
    entries, notice = baseline_entries(chosen, bool(args.update_baseline))
    if notice:
        print(f"amdocc: {notice}", file=sys.stderr)

    run = run_check(args.paths, chosen.settings, selection, entries, args.jobs, with_checked=bool(args.junit))
    result, checked = run.result, run.checked
    result["config_overrides"] = chosen.overrides
    result["baseline"] = str(baseline_path) if baseline_path is not None else None
    errors, stale, failing = result["errors"], result["stale"], result["summary"]["failing"]

    if args.junit:
        write_report(args.junit, check_report.junit(result, checked))
    if args.sarif:
        write_report(args.sarif, check_report.sarif_text(result, __version__))
    if args.json:
        sys.stdout.write(report.dumps(result) + "\n")
    elif args.github:
        for line in check_report.github(result, args.mangled):
            print(line)
    elif "-" not in (args.junit, args.sarif):
        print(render(result, args.mangled))
    for e in errors:
        print(f"amdocc: {e['error']}", file=sys.stderr)
    if not selection.matched:  # relocatable device code alone is said, and passes (nothing to gate)
        said = "nothing to check: " if selection.nothing_to_evaluate() else ""
        print(f"amdocc: {said}{selection.nothing_selected(spell=a.as_flag)}", file=sys.stderr)
    unmatched = not selection.matched and not selection.nothing_to_evaluate()
    if errors or unmatched or (args.update_baseline and not selection.matched):
        if args.update_baseline:
            print(
                "amdocc: the baseline was not updated, since "
                + ("some input could not be read" if errors else "no kernel was checked"),
                file=sys.stderr,
            )
        return ExitCode.USAGE_ERROR
    if args.update_baseline:
        assert baseline_path is not None, "setup refuses --update-baseline without a baseline"
        written = rewrite_baseline(run, entries, baseline_path)
        print(f"amdocc: wrote {written} accepted violation(s) to {baseline_path}", file=sys.stderr)
        return ExitCode.OK
    return ExitCode.GATE_FAILED if failing or (chosen.fail_on_stale and stale) else ExitCode.OK


STATUS_SHOWN = {"new": "NEW", "worse": "WORSE", "accepted": "accepted"}


def render(result: dict[str, Any], mangled: bool = False) -> str:
    from ..demangle import display

    lines: list[str] = []
    rows: list[list[str]] = []
    last: tuple[str, str] | None = None

    def flush() -> None:
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
        rows.append(
            [display(v["kernel"], mangled), v["target"], v["rule"], STATUS_SHOWN[v["status"]], v["message"] + note]
        )
    flush()
    if result["stale"]:
        lines.append(
            f"stale baseline entries in {result['baseline']} (nothing matches them; --update-baseline removes them):"
        )
        lines += [f"  {display(e['kernel'], mangled)} ({e['target']}) {e['rule']}" for e in result["stale"]]
    for n in result["not_evaluated"]:
        by = f" by the {n['model']} model (the others judged)" if n.get("model") else ""
        lines.append(f"not evaluated{by}: {n['rule']} on {n['kernels']} kernel(s): {n['reason']}")
    lines += skipped_lines(result["skipped"])
    s = result["summary"]
    rules = ", ".join(result["settings"]["rules"])
    if result["settings"].get("budgets"):
        rules += f"; budgets {'; '.join(result['settings']['budgets'])}"
    if s["violations"]:
        verdict = f"{s['violations']} violation(s): {s['failing']} failing, {s['accepted']} accepted by the baseline"
    else:
        verdict = "no violations"
    lines.append(
        f"{s['kernels']} kernel(s) checked ({rules}): {verdict}"
        + (f"; {s['stale']} stale baseline entr{'y' if s['stale'] == 1 else 'ies'}" if s["stale"] else "")
        + (f"; {s['errors']} unreadable" if s["errors"] else "")
    )
    return "\n".join(lines)
