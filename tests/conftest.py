"""Shared test setup: where fixtures live, and when oracle-dependent tests may skip.

Tests that need LLVM 22's tools (marker ``llvm22``) or the amd-aiter corpus (marker ``corpus``)
skip with their reason when those are missing, unless ``AMDOCC_REQUIRE_ORACLES=1`` is set, as
``.ci/run`` does: there a missing oracle is a failure, never a silent pass. The same holds for the
optional packages some tests compare against (triton, FlyDSL, torch, matplotlib): tests take them
through :func:`needs`, which skips only when oracles are not required. Tests marked ``hip`` need
a HIP runtime with a device: without one they skip with their reason, or, when
tests/test_hip_emulated_live.py is in the session, are deselected because it runs them in child
sessions on the emulated HSA device (docs/hsa-emulator.md).

Hypothesis runs with one seed per session, printed at the end of the run: ``AMDOCC_HYPOTHESIS_SEED``
(or pytest's own ``--hypothesis-seed``) replays it; without either a seed is drawn.
"""

from __future__ import annotations

import importlib
import os
import random
import shutil
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "data" / "fixtures"
# The attention shape the split tests ask about (README's `amdocc split` example).
SPLIT_SHAPE = ("--seq-len", "256", "--seq-len-kv", "65536", "--rows-per-block", "4", "--block-kv", "128")
sys.path.insert(0, str(TESTS))  # the oracle package
sys.path.insert(0, str(ROOT / "tools"))  # kernelgen and friends

REQUIRE = os.environ.get("AMDOCC_REQUIRE_ORACLES") == "1"
LLVM_TOOLS = ("llvm-readelf-22", "llvm-objdump-22", "llc-22", "clang-22", "ld.lld-22")


def needs(module: str, why: str):
    """Import an optional package a test compares against. Missing, it skips the caller (at
    module level too) with ``why``; with AMDOCC_REQUIRE_ORACLES=1 it fails instead."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if REQUIRE:
            pytest.fail(
                f"{module} is required (AMDOCC_REQUIRE_ORACLES=1) but cannot be imported: {exc}; {why}", pytrace=False
            )
        pytest.skip(f"{module} is not installed: {why}", allow_module_level=True)


def skip_unless_required(reason: str):
    """Skip for a reason that, in CI (AMDOCC_REQUIRE_ORACLES=1), means a lost check: fail there."""
    if REQUIRE:
        pytest.fail(f"{reason} (AMDOCC_REQUIRE_ORACLES=1 does not allow this skip)", pytrace=False)
    pytest.skip(reason)


def pytest_sessionstart(session):
    # Under mutation testing (tools/mutation.py) each mutant's tests run in a process forked from
    # one that already imported amdocc and the test modules: import-time work (tables cached by
    # lru_cache, layouts built at import, module-level test data) would keep the unmutated
    # results. Importing both afresh lets every mutant reach them.
    if "MUTANT_UNDER_TEST" not in os.environ:
        return
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if (
            name == "amdocc"
            or name.startswith("amdocc.")
            or (name != "conftest" and path.startswith(str(TESTS) + os.sep))
        ):
            del sys.modules[name]


@pytest.fixture(autouse=os.environ.get("MUTANT_UNDER_TEST") == "stats")
def _mutmut_sees_every_table_load():
    # mutmut's stats pass records which tests reach each function, and runs only those against its
    # mutants. Tables are read once and cached (amdocc.caches), so the code that builds them would
    # be credited to the first test alone; emptying the caches before each test credits every test
    # that uses a table. Only in that pass: a normal run keeps its caches.
    from amdocc import caches

    caches.clear_all()
    yield


@pytest.fixture
def fresh_caches():
    """Every cache of amdocc (amdocc.caches) empty before the test and again after it: for a test
    that changes a table or what a cached function reads."""
    from amdocc import caches

    caches.clear_all()
    yield caches
    caches.clear_all()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # The suite's own AMDOCC_* variables are checked like the package's (amdocc/env.py): a value
    # such as AMDOCC_REQUIRE_ORACLES=true would otherwise mean "not required" in silence.
    from amdocc import env
    from amdocc.errors import UsageError

    try:
        unknown = env.check("tests")
    except UsageError as exc:
        pytest.exit(f"amdocc tests: {exc}", returncode=2)
    for line in unknown:
        print(f"amdocc tests: warning: {line}", file=sys.stderr)
    # Before Hypothesis's own hook reads the option: one reproducible seed for the session.
    if config.pluginmanager.hasplugin("hypothesispytest") and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = os.environ.get("AMDOCC_HYPOTHESIS_SEED") or str(random.randrange(1 << 32))
        # Hypothesis loads its "ci" profile when it sees a CI variable (CI, GITHUB_ACTIONS, ...), and
        # that profile derandomizes: every seed would draw the same examples and the printed seed
        # would replay nothing. Keep the rest of whichever profile is active, but let the seed rule.
        from hypothesis import settings

        settings.register_profile("amdocc-seeded", parent=settings.default, derandomize=False)
        settings.load_profile("amdocc-seeded")


def pytest_terminal_summary(terminalreporter, config):
    seed = config.getoption("hypothesis_seed", None)
    if seed is not None:
        terminalreporter.write_line(f"hypothesis seed {seed} (AMDOCC_HYPOTHESIS_SEED={seed} replays this run)")
    hip_emulated = sys.modules.get("hip_emulated")
    if hip_emulated is not None and hip_emulated.COMPARISONS:
        counts = hip_emulated.COMPARISONS
        per = ", ".join(f"{release}/{processor} {n}" for (release, processor), n in sorted(counts.items()))
        terminalreporter.write_line(f"HIP comparisons: {sum(counts.values())} ({per})")


@pytest.fixture(scope="session")
def _hip_oracles():
    from hip_emulated import Oracles

    oracles = Oracles()
    yield oracles
    oracles.close()


@pytest.fixture
def hip_oracle(_hip_oracles):
    """``hip_oracle(runtime_dir, processor)``: a started HipOracle (tools/hsa_emulator/client.py),
    the real HIP runtime in that folder on the emulated processor, shared over the session. At
    the end of the test, no worker may have seen an emulator call or attribute it does not model."""
    yield _hip_oracles.get
    unexpected = _hip_oracles.unexpected()
    assert not unexpected, f"the emulated HSA device was asked for what it does not model: {unexpected}"


def aiter_dir() -> Path | None:
    """The unpacked amd-aiter wheel's hsa/ tree (AMDOCC_AITER_DIR, or the CI download spot)."""
    for candidate in (os.environ.get("AMDOCC_AITER_DIR"), ROOT / ".cache" / "aiter" / "aiter_meta" / "hsa"):
        if candidate and Path(candidate, "gfx942").is_dir():
            return Path(candidate)
    return None


def _wheels_present() -> bool:
    from test_wheels import WHEELS, wheels_dir

    return all((wheels_dir() / name).is_file() for name, _ in WHEELS.values())


def pytest_collection_modifyitems(config, items):
    # Markers, not keywords: a keyword also matches the checkout's directory name (a worktree
    # called "hip" would otherwise skip every test).
    hip_items = [item for item in items if item.get_closest_marker("hip")]
    if hip_items:
        # Live-HIP tests always skip, with the reason, on machines without a ROCm GPU.
        from amdocc.runtime import runtime, unavailable_reason

        if runtime() is None:
            runner = [item for item in items if item.path.name == "test_hip_emulated_live.py"]
            if runner:
                # tests/test_hip_emulated_live.py runs them, on the emulated device, in child
                # sessions whose HIP has a device: here they are deselected, not skipped.
                items[:] = [item for item in items if not item.get_closest_marker("hip")]
                config.hook.pytest_deselected(items=hip_items)
            else:
                for item in hip_items:
                    item.add_marker(pytest.mark.skip(reason=f"needs a ROCm GPU: {unavailable_reason()}"))
    if REQUIRE:
        return  # a missing oracle must fail the run, so nothing is skipped here
    missing_llvm = [t for t in LLVM_TOOLS if not shutil.which(t)]
    for item in items:
        if item.get_closest_marker("llvm22") and missing_llvm:
            item.add_marker(pytest.mark.skip(reason=f"LLVM 22 tools not installed: {', '.join(missing_llvm)}"))
        if item.get_closest_marker("bitsandbytes") and bitsandbytes_dir() is None:
            item.add_marker(pytest.mark.skip(reason="bitsandbytes ROCm libraries not found (run .ci/setup-tests.sh)"))
        if item.get_closest_marker("wheels") and not _wheels_present():
            item.add_marker(
                pytest.mark.skip(
                    reason="pinned ROCm wheels not found in .cache/rocm-wheels "
                    "(set AMDOCC_WHEELS_DIR or run .ci/setup-tests.sh)"
                )
            )
        if item.get_closest_marker("corpus") and aiter_dir() is None:
            item.add_marker(pytest.mark.skip(reason="amd-aiter corpus not found (set AMDOCC_AITER_DIR or run .ci/run)"))


BITSANDBYTES_VERSION = "0.50.2"  # pinned in .ci/setup-tests.sh


def bitsandbytes_dir() -> Path | None:
    """The bitsandbytes wheel's ROCm libraries, unpacked by .ci/setup-tests.sh."""
    path = ROOT / ".cache" / "bitsandbytes" / BITSANDBYTES_VERSION / "bitsandbytes"
    return path if any(path.glob("libbitsandbytes_rocm*.so")) else None


@pytest.fixture(scope="session")
def bitsandbytes_rocm():
    path = bitsandbytes_dir()
    assert path is not None, "run .ci/setup-tests.sh to unpack bitsandbytes' ROCm libraries"
    return path


@pytest.fixture(scope="session")
def aiter_hsa():
    path = aiter_dir()
    assert path is not None
    return path
