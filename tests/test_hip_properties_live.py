"""The users' one command, ``python3 -m amdocc.testing``, run as a user on a GPU machine would run
it: a fresh process whose hip-python finds a real runtime and one device (here ROCm 7.14 and
Debian's 5.2.3 on the emulated HSA device, pointed at by tools/hsa_emulator's runtime_env), and
the comparison helper shown to fail when the runtime's answer differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from amdocc.testing import SynthSpec, Tally, check_code_object
from amdocc.testing.oracles import EmulatedHip
from amdocc.testing.strategies import Query
from hip_emulated import ROOT, record, runtime_dir, runtime_env

pytestmark = pytest.mark.llvm22


# The hip-python here (10.x) needs a runtime with hipGetDevicePropertiesR0600 (HIP 6+): Debian's
# 5.2.3 is checked through the oracle worker instead (test_hip_properties.py), as a 5.x user would
# need a hip-python of that release.
@pytest.mark.parametrize(
    "release,processor,versions", [("rocm-7.14", "gfx942", "4,5,6"), ("rocm-7.14", "gfx950", "4,5,6")]
)
def test_the_one_command_against_an_installed_runtime(tmp_path, request, release, processor, versions):
    directory = runtime_dir(release)
    report = tmp_path / "hsaemu.json"
    env = {
        **os.environ,
        **runtime_env(directory, processor),
        "HSAEMU_REPORT": str(report),
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    seed = str(request.config.getoption("hypothesis_seed"))
    args = [sys.executable, "-m", "amdocc.testing", "--examples", "4", "--seed", seed, "--json"]
    run = subprocess.run(
        [*args, "--code-object-versions", versions], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    answer = json.loads(run.stdout)
    assert answer["processor"] == processor and answer["disagreements"] == []
    assert answer["profile"] == release  # picked from hipRuntimeGetVersion()
    counts = answer["comparisons"]
    assert set(counts) == {"occupancy", "potential_block_size", "attributes", "launch_block"}
    assert counts["occupancy"] >= 4 * 40
    record(release, processor, sum(counts.values()))
    emulator = json.loads(report.read_text())
    assert emulator["unexpected"] == {}, emulator["unexpected"]


class Tampered(EmulatedHip):
    """The runtime, but one answer in a hundred off by one block: the comparison must see each."""

    def __init__(self, *args):
        super().__init__(*args)
        self.changed = 0

    def occupancy(self, module, kernel, block, dynamic_lds, flags):
        value = super().occupancy(module, kernel, block, dynamic_lds, flags)
        if isinstance(value, int) and block == 192 and flags == 1:
            self.changed += 1
            return value + 1
        return value


def test_a_runtime_answer_that_differs_is_a_disagreement(hip_oracle):
    oracle = Tampered(hip_oracle(runtime_dir("rocm-7.14"), "gfx942"), "rocm-7.14", "gfx942")
    spec = SynthSpec("gfx942", 96, 0, 30, 8192, name="k")
    asked = [Query(b, d, f) for b in (64, 192, 256) for d in (0, 8192) for f in (None, 1)]
    tally = Tally()
    found = check_code_object(oracle, [spec], [asked], tally)
    assert oracle.changed == 2 and len(found) == 2
    assert {(d.check, d.query.block, d.runtime - d.amdocc) for d in found} == {("occupancy", 192, 1)}
    assert tally.counts["gfx942", "rocm-7.14", "occupancy"] == len(asked)
    assert tally.disagreements == found
