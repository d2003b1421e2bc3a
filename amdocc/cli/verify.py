"""``amdocc verify``: every kernel × launch shape, amdocc's hip model against the live HIP runtime."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

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
    from ..app.occupancy_op import selected_kernels
    from ..app.selection import Selection
    from ..models import occupancy
    from ..runtime import HipError, HipUnavailable, choose_profile, runtime, unavailable_reason

    a.check_readable(args.paths)  # a missing file is bad input (2), whatever the runtime
    rt = runtime()
    if rt is None:
        raise HipUnavailable(f"amdocc verify needs a ROCm GPU: {unavailable_reason()}")
    dev = rt.properties()
    choice = choose_profile(rt, args.hip_profile)
    if choice.warning:
        print(f"amdocc: {choice.warning}", file=sys.stderr)
    profile: dict[str, Any] = {"profile": choice.profile} if choice.profile else {}
    selection = Selection(dev.gcn_arch_name or dev.processor, None, args.kernel)
    failures: list[str] = []
    rows: list[dict[str, Any]] = []
    agree = total = 0
    recorded: list[dict[str, Any]] = []
    not_asked: list[str] = []
    chosen = selected_kernels(args.paths, selection, failures)
    if not chosen and not failures:
        raise a.UsageError(selection.nothing_selected())
    for co, kernel in chosen:
        target = selection.target
        for block in args.blocks:
            for dyn in args.dynamic_lds:
                occ = occupancy(kernel, target=target, block_size=block, dynamic_lds=dyn, **profile)
                model = occ.error or occ.blocks_per_cu
                if model == "division-by-zero":  # asking would kill this process with SIGFPE
                    not_asked.append(f"{kernel.name} block {block} dyn {dyn}")
                    continue
                hip: int | str  # HIP's answer, or the name of its error
                try:
                    hip = rt.occupancy_of(co.data, kernel.name, block, dyn)
                except HipError as exc:
                    hip = exc.code
                total += 1
                agree += hip == model
                rows.append(
                    {
                        "path": co.path,
                        "origin": co.origin.chain,
                        "kernel": kernel.name,
                        "block_size": block,
                        "dynamic_lds": dyn,
                        "hip": hip,
                        "model": model,
                        "profile": occ.profile,
                        "limiter": occ.limiter,
                    }
                )
                note = {f"{k}": kernel.meta(k) for k in observed.NOTE_KEYS}
                recorded.append(
                    {
                        "id": f"{kernel.name}-{block}-{dyn}",
                        "source": f"amdocc verify on {dev.name}",
                        "kind": "measured",
                        "profile": occ.profile,
                        "processor": dev.processor,
                        "gcn_arch_name": dev.gcn_arch_name,
                        "runtime_version": dev.runtime_version,
                        "date": observed.today(),
                        **note,
                        "block_size": block,
                        "dynamic_lds": dyn,
                        **({"error": hip} if isinstance(hip, str) else {"blocks_per_cu": hip}),
                    }
                )
    for message in failures:
        print(f"amdocc: {message}", file=sys.stderr)
    for where in not_asked:
        print(f"amdocc: not asked: {where}: the model says this runtime divides by zero (SIGFPE)", file=sys.stderr)
    if args.record and recorded:
        with open(args.record, "a") as fh:
            for row in recorded:
                fh.write(observed.format_observation({k: v for k, v in row.items() if v is not None}))
    summary = {
        "device": dev.gcn_arch_name,
        "runtime_version": dev.runtime_version,
        "profile": rows[0]["profile"] if rows else choice.profile,
        "profile_reason": choice.reason,
        "agree": agree,
        "total": total,
        "not_asked": len(not_asked),
    }
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
            f"{dev.name} ({dev.gcn_arch_name}, HIP runtime {dev.runtime_version}, profile "
            f"{summary['profile'] or 'default'}): {agree}/{total} agree"
        )
    return 0 if agree == total and not failures else 1
