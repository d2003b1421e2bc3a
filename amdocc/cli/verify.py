"""``amdocc verify``: every kernel × launch shape, amdocc's hip model against the live HIP runtime."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import ExitCode
from . import args as a
from .args import add_kernel_argument

if TYPE_CHECKING:
    from ..models.hip_profiles import HipProfile

DESCRIPTION = """On a machine with a ROCm GPU, ask HIP's own occupancy API for every kernel in PATH
that is built for this device, over a grid of block sizes and dynamic LDS sizes, and compare with
amdocc's hip model under the profile of the runtime's own ROCm release (hipRuntimeGetVersion();
--hip-profile overrides it). Prints the agreement; --record appends HIP's answers (with their
inputs, the device's gcnArchName, the runtime version, the profile and the date) to a
tables/hip_observed/ file. Exit 0 when every answer agrees, 1 when some disagree, 2 on bad usage
or unreadable input, 3 when no HIP runtime is usable."""


def _hip_profiles() -> dict[str, HipProfile]:
    from ..models.hip import profiles

    return profiles()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = DESCRIPTION
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument(
        "--blocks", type=a.ListOf(a.WorkgroupSize()), default=[64, 128, 256, 512, 1024], metavar="N,N,..."
    )
    parser.add_argument("--dynamic-lds", type=a.ListOf(a.LdsSize()), default=[0, 16384], metavar="B,B,...")
    add_kernel_argument(parser)
    parser.add_argument(
        "--hip-profile",
        metavar="NAME",
        type=a.ProfileName(_hip_profiles, "HIP profile"),
        help="the HIP profile to compare with (default: the runtime's own release, from hipRuntimeGetVersion())",
    )
    parser.add_argument(
        "--record", metavar="FILE", type=a.OutputFile((".toml",)), help="append HIP's answers as [[observation]] rows"
    )
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from .. import observed, report
    from ..app.verify_op import verify

    a.check_readable(args.paths)  # a missing file is bad input (2), whatever the runtime
    found = verify(
        args.paths,
        kernel=args.kernel,
        blocks=args.blocks,
        dynamic_lds=args.dynamic_lds,
        hip_profile=args.hip_profile,
        notify=lambda warning: print(f"amdocc: {warning}", file=sys.stderr),
    )
    failures, not_asked, recorded, rows, summary = (
        found.failures,
        found.not_asked,
        found.observations,
        found.results,
        found.summary,
    )
    for message in failures:
        print(f"amdocc: {message}", file=sys.stderr)
    for where in not_asked:
        print(f"amdocc: not asked: {where}: the model says this runtime divides by zero (SIGFPE)", file=sys.stderr)
    if args.record and recorded:
        with open(args.record, "a") as fh:
            for row in recorded:
                fh.write(observed.format_observation({k: v for k, v in row.items() if v is not None}))
    if args.json:
        sys.stdout.write(report.dumps({**summary, "results": rows}) + "\n")
    else:
        for r in rows:
            if r["hip"] != r["model"]:
                print(
                    f"MISMATCH {r['kernel']} block {r['block_size']} dyn {r['dynamic_lds']}: HIP {r['hip']}, "
                    f"amdocc {r['model']} ({r['profile']}, limiter {r['limiter']})"
                )
        print(
            f"{found.device} ({summary['device']}, HIP runtime {summary['runtime_version']}, profile "
            f"{summary['profile'] or 'default'}): {summary['agree']}/{summary['total']} agree"
        )
    return ExitCode.OK if summary["agree"] == summary["total"] and not failures else ExitCode.GATE_FAILED
