"""tests/test_hip_live.py, for real, in every CI run: hip-python over ROCm 7.14 on the emulated device.

The live tests need a process whose HIP sees a device, so each processor gets a child pytest of
``-m hip tests/test_hip_live.py`` with the environment that points hip-python at the laid-out
runtime (ROCM_PATH: hip-python opens $ROCM_PATH/lib/libamdhip64.so; LD_LIBRARY_PATH: FlyDSL's JIT
runtime links libamdhip64.so.7; HSAEMU_DEVICE: the processor). In the child nothing may skip
(AMDOCC_REQUIRE_ORACLES=1 and a check of its summary), the emulator must have seen no call or
attribute it does not model (its HSAEMU_REPORT file), and its comparison counts are added to this
session's summary. On a machine with a ROCm GPU, ``pytest -m hip`` runs test_hip_live.py against
the installed runtime as before.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import amdocc
from hip_emulated import ROOT, record, runtime_dir, runtime_env

pytestmark = pytest.mark.slow  # a child pytest per processor (about 30 s each)

FLYDSL_TEST = "tests/test_hip_live.py::test_flydsls_own_max_blocks_per_cu_answers_through_the_same_runtime"
FLYDSL_PROCESSORS = {"gfx942", "gfx950"}  # the FlyDSL cases (tools/fixtures/flydsl_cases.py) compile for these


@pytest.mark.parametrize("processor", ["gfx942", "gfx950", "gfx90a", "gfx1100", "gfx1201"])
def test_the_live_hip_tests_pass_on_the_emulated_device(processor, tmp_path, request):
    directory = runtime_dir("rocm-7.14")
    report = tmp_path / "hsaemu.json"
    env = {
        **os.environ,
        **runtime_env(directory, processor),
        "LD_LIBRARY_PATH": ":".join(p for p in (directory, os.environ.get("LD_LIBRARY_PATH")) if p),
        "HSAEMU_REPORT": str(report),
        "AMDOCC_REQUIRE_ORACLES": "1",
        "AMDOCC_HIP_LIVE_EXAMPLES": "60",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    env.pop("AMDOCC_HIP_PROFILE", None)  # the profile is picked from hipRuntimeGetVersion()
    seed = request.config.getoption("hypothesis_seed", None)
    if seed is not None:
        env["AMDOCC_HYPOTHESIS_SEED"] = str(seed)
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "hip", "tests/test_hip_live.py"]
    if processor not in FLYDSL_PROCESSORS:
        args += ["--deselect", FLYDSL_TEST]
    run = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    tail = run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    summary = run.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary and "failed" not in summary, tail
    counts = json.loads(report.read_text())
    assert counts["device"] == processor
    assert counts["unexpected"] == {}, counts["unexpected"]
    assert counts["calls"]["hsa_executable_load_agent_code_object"] > 0  # HIP really loaded modules
    (line,) = [entry for entry in run.stdout.splitlines() if entry.startswith("HIP comparisons: ")]
    for release, proc, n in re.findall(r"([\w.-]+)/(\w+) (\d+)", line):
        assert proc == processor and release == "rocm-7.14", line
        record(release, proc, int(n))
    assert int(line.split()[2]) >= 100, line


def test_the_bridge_on_rocm52_through_hip_python(hip_oracle, tmp_path):
    """Debian's ROCm 5.2.3 through hip-python 10 (bindings for HIP 7): the occupancy bridge works
    and the profile follows hipRuntimeGetVersion() (50221153; until amdocc has a rocm-5.2 profile,
    the nearest known one, with a warning); device properties cannot be read, since 5.2 has no
    hipGetDevicePropertiesR0600 (the symbol hip-python 10 binds), so `amdocc verify` needs 6.0+."""
    from amdocc.testing import SynthSpec, synthesize

    directory = runtime_dir("rocm-5.2")
    image = tmp_path / "k.co"
    image.write_bytes(synthesize(SynthSpec("gfx90a", 128, 0, 40, 16384, code_object_version=4)))
    code = f"""
import json
import amdocc
from amdocc.runtime import HipUnavailable, choose_profile, max_blocks_per_cu, runtime
rt = runtime()
out = {{"version": rt.runtime_version(), "profile": choose_profile(rt).profile}}
got = max_blocks_per_cu({str(image)!r}, 256, 4096)
out.update(value=int(got), source=got.source, model=got.model)
try:
    rt.properties()
except HipUnavailable as exc:
    out["properties"] = str(exc)
print(json.dumps(out))
"""
    env = {**os.environ, **runtime_env(directory, "gfx90a")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    out = json.loads(run.stdout.splitlines()[-1])
    hip = hip_oracle(directory, "gfx90a")
    module = hip.load(image)["module"]
    (kernel,) = amdocc.load(image)[0].kernels
    expected = hip.occupancy(module, kernel.name, 256, 4096)
    record("rocm-5.2", "gfx90a")
    assert out["version"] == 50221153
    assert out["source"] == "hip" and out["value"] == expected["value"], (out, expected)
    assert "hipGetDevicePropertiesR0600" in out["properties"]
    from amdocc.models.hip import profile_for_runtime

    assert out["profile"] == profile_for_runtime(50221153).profile.name
