"""Property tests against HIP itself (issue 17 item 4): real runtimes on the emulated HSA device.

For every runtime .ci/setup-tests.sh lays out (ROCm 7.14 from the pinned PyPI wheel, Debian's
ROCm 5.2.3) and every processor it creates a device for, Hypothesis draws code objects of
several kernels (VGPR, AGPR and SGPR counts, static LDS, wave size, WGP or CU mode,
.max_flat_workgroup_size, code-object versions 4 to 6, as far as the runtime loads them),
LLVM 22's llvm-mc and ld.lld build each once, the runtime loads it once, and every kernel is
asked 40 questions (block sizes and dynamic LDS with their edges: not a wave multiple, above
1024, LDS that fits exactly or overflows by one byte). amdocc.testing.compare checks each answer:
- hipModuleOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags] against amdocc's hip model
  under the runtime's own profile (picked from hipRuntimeGetVersion()), error codes and the
  processes HIP kills with SIGFPE included;
- hipModuleOccupancyMaxPotentialBlockSize against amdocc.max_potential_block_size's HIP answer;
- hipFuncGetAttribute's register count, shared and local sizes and maximum threads against the
  kernel fields amdocc read;
- HIP's header search (hipOccupancyMaxPotentialBlockSizeVariableSMem) run over the runtime's
  answers against amdocc's block to launch.
The seed is the session's (conftest: AMDOCC_HYPOTHESIS_SEED replays it); the counts per
processor x runtime are printed, at least 10,000 in all; the emulator may see no unexpected call.
AMDOCC_HIP_PROPERTY_EXAMPLES sets the examples per runtime x processor (default 15).
"""

from __future__ import annotations

import zlib

import pytest

from amdocc import env
from amdocc.testing import SynthSpec, synthesize_many
from amdocc.testing.compare import Tally
from amdocc.testing.oracles import EmulatedHip
from amdocc.testing.properties import run_properties
from hip_emulated import RUNTIMES, available_runtimes, record, runtimes

pytestmark = pytest.mark.llvm22
EXAMPLES = int(env.read("AMDOCC_HIP_PROPERTY_EXAMPLES") or 15)  # validated: a whole number >= 1
MIN_COMPARISONS = 10_000
TALLY = Tally()
# What each runtime loads, as the runtimes themselves answered (test below): ROCm 5.2.3's comgr
# reads code-object v4 and older; v5 and v6 fail hipModuleLoadData with hipErrorSharedObjectInitFailed.
LOADS = {"rocm-5.2": (4,), "rocm-7.14": (4, 5, 6)}
CASES = [(release, directory, p) for release, directory, ps in available_runtimes(RUNTIMES) for p in ps] or [None]


def _seed(request, release: str, processor: str) -> int:
    """The session's seed, mixed with the runtime and processor: processors whose strategies have
    the same shape (gfx1100, gfx1201) get different draws, and the session seed still replays."""
    return (int(request.config.getoption("hypothesis_seed")) ^ zlib.crc32(f"{release}/{processor}".encode())) % 2**32


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[2]}" if c else "no-runtime" for c in CASES])
def test_amdocc_equals_the_runtime(request, hip_oracle, case):
    if case is None:
        runtimes()  # skips, or fails in CI: no runtime is laid out
        return
    release, directory, processor = case
    oracle = EmulatedHip(hip_oracle(directory, processor), release, processor)
    tally = Tally()
    run_properties(
        oracle,
        examples=EXAMPLES,
        seed_value=_seed(request, release, processor),
        tally=tally,
        code_object_versions=LOADS.get(release, (4, 5, 6)),
    )
    TALLY.merge(tally)
    record(release, processor, tally.total)
    assert tally.disagreements == []
    assert tally.total >= EXAMPLES * 40  # each example asks at least one kernel 40 questions
    assert tally.counts[processor, release, "launch_block"] > 0


def test_at_least_10000_comparisons(request):
    """Runs after the property tests above (file order): their sum, per processor x runtime."""
    if CASES == [None]:
        runtimes()
    request.config.pluginmanager.get_plugin("terminalreporter").write_line(
        "\nHIP property comparisons per processor x runtime:\n" + TALLY.table()
    )
    assert TALLY.total >= MIN_COMPARISONS * EXAMPLES // 15, (
        "too few comparisons (run the whole file: this test sums the ones above it)\n" + TALLY.table()
    )
    assert {r for _, r in TALLY.per_runtime()} >= {"rocm-7.14", "rocm-5.2"}
    assert {p for p, r in TALLY.per_runtime() if r == "rocm-7.14"} >= {
        "gfx90a",
        "gfx942",
        "gfx950",
        "gfx1100",
        "gfx1201",
    }


@pytest.mark.parametrize("release", sorted(LOADS))
def test_which_code_object_versions_each_runtime_loads(hip_oracle, release):
    found = [(r, d, ps) for r, d, ps in available_runtimes(RUNTIMES) if r == release]
    if not found:
        runtimes()
        pytest.fail(f"{release} is not laid out in {RUNTIMES}")
    (_, directory, processors) = found[0]
    processor = "gfx90a" if "gfx90a" in processors else processors[0]
    client = hip_oracle(directory, processor)
    loaded = {}
    for version in (4, 5, 6):
        answer = client.load(synthesize_many([SynthSpec(processor, 64, code_object_version=version)]))
        loaded[version] = answer.get("ok")
        if answer.get("ok"):
            client.unload(answer["module"])
        else:
            assert answer["error"] == "hipErrorSharedObjectInitFailed", answer
    assert tuple(v for v, ok in loaded.items() if ok) == LOADS[release]
