#!/usr/bin/env python3
"""A larger run of the HIP property test (tests/test_hip_properties.py) than CI's.

Every runtime .ci/setup-tests.sh laid out under .cache/hip-runtimes/ (or $AMDOCC_HIP_RUNTIMES),
every processor it creates a device for, ``--examples`` Hypothesis examples each (CI: 15), with
the comparisons of amdocc.testing.compare (the seed mixed with the runtime and processor, as
in CI); disagreements are collected, not stopped at, and
printed with the counts per processor x runtime. Exit 1 when any was found.

    nice -n 10 python3 tools/hip_property_campaign.py --examples 300 --seed 1
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from amdocc.testing.compare import Tally  # noqa: E402
from amdocc.testing.oracles import EmulatedHip  # noqa: E402
from amdocc.testing.properties import run_properties  # noqa: E402
from hsa_emulator.client import HipOracle, available_runtimes  # noqa: E402

# What each runtime loads (tests/test_hip_properties.py LOADS, as the runtimes answered).
LOADS = {"rocm-5.2": (4,), "rocm-7.14": (4, 5, 6)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=300, help="examples per runtime x processor")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runtime", action="append", help="only these releases (e.g. rocm-7.14)")
    parser.add_argument("--processor", action="append", help="only these processors")
    args = parser.parse_args(argv)
    root = Path(os.environ.get("AMDOCC_HIP_RUNTIMES", ROOT / ".cache" / "hip-runtimes"))
    found = available_runtimes(root)
    if not found:
        print(f"no runtime laid out in {root} (run .ci/setup-tests.sh)", file=sys.stderr)
        return 2
    tally = Tally()
    start, cpu = time.monotonic(), time.process_time()
    unexpected: dict[str, dict[str, int]] = {}
    for release, directory, processors in found:
        if args.runtime and release not in args.runtime:
            continue
        for processor in processors:
            if args.processor and processor not in args.processor:
                continue
            with HipOracle(directory, processor) as client:
                oracle = EmulatedHip(client, release, processor)
                run_properties(
                    oracle,
                    examples=args.examples,
                    seed_value=(args.seed ^ zlib.crc32(f"{release}/{processor}".encode())) % 2**32,
                    strict=False,
                    tally=tally,
                    code_object_versions=LOADS.get(release, (4, 5, 6)),
                )
                report = client.report()
                if report.get("unexpected"):
                    unexpected[f"{release}/{processor}"] = report["unexpected"]
            print(f"{release} {processor}: {tally.per_runtime().get((processor, release), 0)} comparisons", flush=True)
    print(tally.table())
    print(
        f"seed {args.seed}, {args.examples} examples each; {time.monotonic() - start:.0f} s wall, "
        f"{time.process_time() - cpu:.0f} s CPU in this process"
    )
    print(f"unexpected emulator calls: {unexpected or 'none'}")
    kinds = Counter((d.processor, d.release, d.check) for d in tally.disagreements)
    for key, n in sorted(kinds.items()):
        print(f"  {n} disagreements {key}")
    for d in tally.disagreements[:30]:
        print(f"  {d}")
    return 1 if tally.disagreements or unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
