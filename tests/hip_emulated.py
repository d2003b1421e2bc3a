"""The real HIP runtimes on the emulated HSA device, for tests (tools/hsa_emulator, docs/hsa-emulator.md).

    from hip_emulated import runtimes, record

    def test_x(hip_oracle):                       # the conftest fixture
        for release, directory, processors in runtimes():
            for processor in processors:
                hip = hip_oracle(directory, processor)  # a started HipOracle, shared per session
                ...
                record(release, processor)            # one comparison, counted in the summary

``hip_oracle`` starts one worker per (runtime, processor) for the whole session and, at the end
of the test that used it, asserts that the emulator saw no unexpected call or attribute. The
comparisons each test records are printed per release and processor when the session ends.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from hsa_emulator.client import HipOracle, available_runtimes, runtime_env

__all__ = ["COMPARISONS", "HipOracle", "available_runtimes", "record", "runtime_dir", "runtime_env", "runtimes"]

ROOT = Path(__file__).resolve().parent.parent
RUNTIMES = Path(os.environ.get("AMDOCC_HIP_RUNTIMES", ROOT / ".cache" / "hip-runtimes"))
COMPARISONS: Counter[tuple[str, str]] = Counter()  # (release, processor) -> comparisons made


def runtimes() -> list[tuple[str, str, list[str]]]:
    """(release, folder, processors) laid out by .ci/setup-tests.sh; skips (fails in CI) when none."""
    from conftest import skip_unless_required

    found = available_runtimes(RUNTIMES)
    if not found:
        skip_unless_required(f"no HIP runtime laid out in {RUNTIMES} (run .ci/setup-tests.sh)")
    return found


def runtime_dir(release: str) -> str:
    """The folder of one release ("rocm-7.14", "rocm-5.2"); skips (fails in CI) when absent."""
    from conftest import skip_unless_required

    for name, directory, _ in available_runtimes(RUNTIMES):
        if name == release:
            return directory
    skip_unless_required(f"HIP runtime {release} is not laid out in {RUNTIMES} (run .ci/setup-tests.sh)")
    raise AssertionError("unreachable")


def record(release: str, processor: str, n: int = 1) -> None:
    """Count ``n`` comparisons of amdocc against HIP on this release and processor."""
    COMPARISONS[(release, processor)] += n


class Oracles:
    """One started HipOracle per (runtime folder, processor), kept for the session."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], HipOracle] = {}

    def get(self, directory: str, processor: str) -> HipOracle:
        key = (str(directory), processor)
        if key not in self.open:
            oracle = HipOracle(directory, processor)
            oracle.start()
            self.open[key] = oracle
        return self.open[key]

    def unexpected(self) -> dict[str, dict[str, int]]:
        """Unexpected emulator calls so far, per worker that saw any."""
        seen = {}
        for (directory, processor), oracle in self.open.items():
            report = oracle.report()
            if report.get("unexpected"):
                seen[f"{Path(directory).name}/{processor}"] = report["unexpected"]
        return seen

    def close(self) -> None:
        for oracle in self.open.values():
            oracle.close()
        self.open.clear()
