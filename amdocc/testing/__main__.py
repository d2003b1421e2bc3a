"""``python3 -m amdocc.testing``: the HIP property test against the runtime installed here.

On a machine with a ROCm GPU (gfx942, gfx950, ... : whatever device HIP makes current), with
hip-python and Hypothesis (``pip install 'amdocc[hip,test]'``; in a clone ``pip install -e
'.[hip,test]'``) and LLVM's llvm-mc and ld.lld (Debian's *-22, or
ROCm's /opt/rocm/llvm/bin), this draws kernels for the device's processor, loads each code
object into the runtime and compares every answer with amdocc's hip model under the profile of
the runtime's own release (or --profile). Queries amdocc says would make HIP divide by zero are
not asked (they would kill this process). Prints the comparisons per check and the disagreements;
exit 0 when there are none, 1 when there are, 2 on bad usage or without the test extra
(Hypothesis), 3 when no HIP runtime is usable.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..errors import ExitCode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m amdocc.testing", description=__doc__.split("\n\n")[1])
    parser.add_argument("--examples", type=int, default=100, help="Hypothesis examples (code objects), default 100")
    parser.add_argument("--seed", type=int, default=None, help="Hypothesis seed (replays a run)")
    parser.add_argument("--profile", default=None, help="HIP profile to compare with (default: the runtime's release)")
    parser.add_argument("--queries", type=int, default=40, help="questions per kernel (default 40)")
    parser.add_argument(
        "--code-object-versions", default="4,5,6", help="versions to draw, those the runtime loads (default 4,5,6)"
    )
    parser.add_argument("--json", action="store_true", help="print the counts and disagreements as JSON")
    args = parser.parse_args(argv)
    if args.examples < 1 or args.queries < 1:
        parser.error("--examples and --queries must be at least 1")
    try:
        versions = tuple(int(v) for v in args.code_object_versions.split(","))
    except ValueError:
        parser.error(f"--code-object-versions {args.code_object_versions!r}: expected numbers from 4 to 6")
    if not versions or not set(versions) <= {4, 5, 6}:
        parser.error(f"--code-object-versions {args.code_object_versions!r}: expected numbers from 4 to 6")

    missing = _missing_extra()
    if missing:  # bad setup, not a verdict: one line naming the extra (exit 2, as --plot without matplotlib)
        print(f"amdocc.testing: {missing}", file=sys.stderr)
        return ExitCode.USAGE_ERROR

    from ..errors import AmdoccError
    from ..runtime.hip import HipUnavailable
    from .compare import profile_of
    from .oracles import LiveHip
    from .properties import run_properties

    try:
        oracle = LiveHip()
        profile = profile_of(oracle, args.profile)
    except HipUnavailable as exc:
        print(f"amdocc.testing: {exc}", file=sys.stderr)
        return ExitCode.RUNTIME_UNAVAILABLE
    except AmdoccError as exc:
        print(f"amdocc.testing: {exc}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    seed = args.seed if args.seed is not None else _random_seed()
    print(
        f"HIP {oracle.release} ({oracle.runtime_version}) on {oracle.processor}: profile {profile}, "
        f"{args.examples} examples, seed {seed}",
        file=sys.stderr,
    )
    tally = run_properties(
        oracle,
        examples=args.examples,
        seed_value=seed,
        profile=profile,
        queries_per_kernel=args.queries,
        strict=False,
        code_object_versions=versions,
    )
    if args.json:
        record = {
            "processor": oracle.processor,
            "runtime_version": oracle.runtime_version,
            "profile": profile,
            "seed": seed,
            "comparisons": {check: n for (_, _, check), n in sorted(tally.counts.items())},
            "not_asked": sum(tally.skipped.values()),
            "disagreements": [str(d) for d in tally.disagreements],
        }
        print(json.dumps(record, indent=1))
    else:
        print(tally.table())
        for d in tally.disagreements[:50]:
            print(f"  {d}")
    return ExitCode.GATE_FAILED if tally.disagreements else ExitCode.OK


def _missing_extra() -> str | None:
    """What the property test needs from amdocc's ``test`` extra and cannot import (Hypothesis
    draws the kernels), said as one line with the command that installs it; None when present."""
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        pass
    else:
        return None
    from ..install_hint import install_hint

    return f"needs Hypothesis, from amdocc's test extra, which is not installed: {install_hint('hip', 'test')}"


def _random_seed() -> int:
    import random

    return random.randrange(1 << 32)


if __name__ == "__main__":
    sys.exit(main())
