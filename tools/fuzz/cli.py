"""The command line: run a campaign, replay one input, or check one file."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from . import __doc__ as OVERVIEW
from .campaign import Stats, run_campaign
from .contract import MODES, run_one
from .corpus import fixtures
from .inputs import generate
from .limits import AS_LIMIT_MIB, HANG_TIMEOUT, RSS_LIMIT_MIB, TIME_LIMIT
from .minimize import write_reproducers
from .mutators import MUTATORS


def _print_summary(stats: Stats, out=sys.stdout) -> None:
    s = stats.summary()
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(
        f"seed {s['seed']}: {s['inputs']} inputs in {s['wall_seconds']:.1f} s on {s['jobs']} jobs "
        f"({s['inputs'] / max(s['wall_seconds'], 1e-9):.0f}/s)"
    )
    p("outcomes:    " + ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items())))
    p("layers:      " + ", ".join(f"{k} {v}" for k, v in s["layer_kinds"].items()))
    p("mutators:")
    names = sorted(MUTATORS)
    for i in range(0, len(names), 4):
        p("  " + "  ".join(f"{n:<16} {s['mutators'].get(n, 0):>6}" for n in names[i : i + 4]))
    p(
        f"slowest:     {s['slowest_seconds'] * 1000:.1f} ms CPU (input {s['slowest_index']}; limit "
        f"{s['time_limit_seconds'] * 1000:.0f} ms; "
        f"slowest wall clock {s['slowest_wall_seconds'] * 1000:.0f} ms); next: "
        + ", ".join(f"{t * 1000:.0f} ms ({i}: {'+'.join(m)})" for t, i, m in s["slowest_five"][1:])
    )
    who = (
        f"input {s['peak_rss_index']}" if s["peak_rss_index"] >= 0 else "a worker's lifetime, input generation included"
    )
    p(
        f"peak RSS:    {s['peak_rss_mib']:.1f} MiB ({who}; bound {s['rss_limit_mib']:.0f} MiB "
        f"per process; largest input {s['largest_input_bytes'] / 1048576:.2f} MiB)"
    )
    p(
        f"failures:    {s['failures']}"
        + (" — " + ", ".join(f"{k} {v}" for k, v in s["failure_kinds"].items()) if s["failures"] else "")
    )
    for sig, count in s["failure_signatures"].items():
        p(f"  {count:>5}  {sig}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=OVERVIEW.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--inputs", type=int, default=20000, help="inputs to try (default 20000)")
    ap.add_argument("--seed", default=None, help="campaign seed (default: random, printed)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("fuzz-failures"),
        help="where minimized reproducers go (default ./fuzz-failures, only if something fails)",
    )
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per input (default 1)")
    ap.add_argument(
        "--hang-timeout",
        type=float,
        default=HANG_TIMEOUT,
        help="CPU seconds one input may take before the watchdog kills its worker (default 10)",
    )
    ap.add_argument("--rss-limit-mib", type=float, default=RSS_LIMIT_MIB, help="peak RSS bound (default 1024)")
    ap.add_argument(
        "--as-limit-mib", type=int, default=AS_LIMIT_MIB, help="address-space cap per worker, 0 for none (default 4096)"
    )
    ap.add_argument("--minimize-seconds", type=float, default=60.0, help="time to shrink each distinct failure")
    ap.add_argument("--summary-json", type=Path, help="also write the counts as JSON here")
    ap.add_argument("--replay", metavar="SEED:INDEX", help="regenerate one input, describe it and run it")
    ap.add_argument("--write", type=Path, help="with --replay: write the input's bytes here")
    ap.add_argument("--check", type=Path, metavar="FILE", help="run one file through the contract and report")
    ap.add_argument("--mode", choices=list(MODES), default="bytes", help="with --check: how to load the file")
    args = ap.parse_args(argv)

    if args.check:
        outcome, elapsed, wall, failure = run_one(args.check.read_bytes(), args.mode)
        print(f"{args.check}: {outcome} in {elapsed * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall")
        if failure:
            print(failure["traceback"])
        return 1 if failure or elapsed > args.time_limit else 0
    if args.replay:
        seed, _, index = args.replay.rpartition(":")
        case = generate(seed, int(index))
        print(f"input {seed}:{index}: {case.fixture} [{case.layer_path}] ({len(case.data)} bytes)")
        for name, detail in case.mutations:
            print(f"  {name}: {detail}")
        if args.write:
            args.write.write_bytes(case.data)
        print(f"  mode: {case.mode}")
        outcome, elapsed, wall, failure = run_one(case.data, case.mode)
        print(f"{outcome} in {elapsed * 1000:.1f} ms CPU, {wall * 1000:.1f} ms wall")
        if failure:
            print(failure["traceback"])
        return 1 if failure or elapsed > args.time_limit else 0

    seed = args.seed if args.seed is not None else str(random.SystemRandom().randrange(1 << 32))
    print(
        f"amdocc fuzz: seed {seed}, {args.inputs} inputs, {args.jobs} jobs, {len(fixtures())} fixtures, "
        f"{len(MUTATORS)} mutators; limits {args.time_limit:g} s/input, {args.rss_limit_mib:g} MiB peak RSS",
        flush=True,
    )

    def progress(stats):
        print(
            f"  ... {stats.inputs} inputs, {len(stats.failures)} failures, "
            f"slowest {stats.slowest[0] * 1000:.0f} ms, peak RSS {stats.peak_rss_mib:.0f} MiB",
            flush=True,
        )

    stats = run_campaign(
        seed,
        args.inputs,
        args.jobs,
        time_limit=args.time_limit,
        hang_timeout=args.hang_timeout,
        rss_limit_mib=args.rss_limit_mib,
        as_limit_mib=args.as_limit_mib,
        progress=progress,
    )
    _print_summary(stats)
    if args.summary_json:
        args.summary_json.write_text(json.dumps(stats.summary(), indent=1))
    if stats.failures:
        written = write_reproducers(
            stats, args.out, args.minimize_seconds, args.hang_timeout, as_limit_mib=args.as_limit_mib
        )
        print(f"reproducers: {len(written)} in {args.out}/")
        for path in written:
            print(f"  {path}")
        return 1
    return 0
