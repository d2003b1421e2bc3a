"""Against the live HIP runtime, through hip-python (marked `hip`).

One command on an MI300/MI355 machine (README, "Checking against HIP on a GPU"):

    pip install -e '.[hip,test]' && python3 -m pytest -m hip -q

Without a GPU these tests skip with the reason, except where the environment points hip-python at a
real runtime on the emulated HSA device (docs/hsa-emulator.md): tests/test_hip_emulated_live.py
runs this file that way, in a child pytest per processor, in every CI run (nothing may skip there).

AMDOCC_HIP_PROFILE names the runtime behaviour expected (default: the profile of the runtime's
own release, from hipRuntimeGetVersion()); the property test synthesizes kernels with chosen resources
for the device's own processor and compares HIP's answer with the model's over random block sizes and
dynamic LDS.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amdocc
from amdocc.runtime import HipError, choose_profile, max_blocks_per_cu, runtime
from hip_emulated import record

pytestmark = pytest.mark.hip
PROFILE = os.environ.get("AMDOCC_HIP_PROFILE")
# Examples of the property test (200 on a GPU; tests/test_hip_emulated_live.py asks for fewer per
# processor, as the emulated CI run covers five, and the wide property tests live elsewhere).
EXAMPLES = int(os.environ.get("AMDOCC_HIP_LIVE_EXAMPLES", "200"))


@pytest.fixture(scope="module")
def hip():
    rt = runtime()
    assert rt is not None
    choice = choose_profile(rt, PROFILE)
    return rt, rt.properties(), {"profile": choice.profile} if choice.profile else {}


def model(k, block, dyn, profile):
    occ = amdocc.occupancy(k, block_size=block, dynamic_lds=dyn, **profile)
    assert occ.error != "unknown-runtime-values", f"{occ.warnings[0]} (set AMDOCC_HIP_PROFILE)"
    return occ


def counted(rt, dev):
    record(choose_profile(rt, PROFILE).profile or "default", dev.processor)


def test_shipped_sample_agrees_with_hip(hip):
    rt, dev, profile = hip
    cos = [co for co in amdocc.load(amdocc.samples_path()) if co.processor == dev.processor]
    assert cos, f"the sample has no code object for {dev.processor}"
    for co in cos:
        for k in co.kernels:
            for block in (64, 128, 256, 512, 1024):
                for dyn in (0, 4096, 16384):
                    occ = model(k, block, dyn, profile)
                    expected = rt.occupancy_of(co.data, k.name, block, dyn)
                    counted(rt, dev)
                    assert occ.blocks_per_cu == expected, (k.name, block, dyn, occ.limits)


@st.composite
def kernels(draw, processor):
    from amdocc.targets import get_target
    from amdocc.testing import SynthSpec

    t = get_target(processor)
    wave = draw(st.sampled_from(t.wave_sizes))
    agprs = draw(st.integers(0, 64)) * 4 if t.register_file == "unified" else 0
    arch = draw(st.integers(1, 64)) * 4
    total = arch + agprs if agprs else draw(st.integers(1, 256))
    return SynthSpec(
        processor,
        total,
        agprs,
        draw(st.integers(1, 100)),
        draw(st.integers(0, t.lds_per_workgroup // 256)) * 256,
        wave=wave,
        wgp=draw(st.booleans()) if t.wgp else None,
    )


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_model_equals_hip(hip, data, tmp_path):
    from amdocc.testing import synthesize

    rt, dev, profile = hip
    spec = data.draw(kernels(dev.processor))
    block = data.draw(st.integers(1, 1024))
    dyn = data.draw(st.integers(0, 65536))
    image = synthesize(spec)
    (co,) = amdocc.load(image)
    (k,) = co.kernels
    occ = model(k, block, dyn, profile)
    if occ.error == "division-by-zero":  # asking would kill this process with SIGFPE
        return
    counted(rt, dev)
    try:
        expected = rt.occupancy_of(image, k.name, block, dyn)
    except HipError as exc:
        assert occ.error == exc.code
        return
    assert occ.blocks_per_cu == expected, (spec, block, dyn, occ.limits, occ.details)


# -- the bridge, end to end ------------------------------------------------------------------------


def sample_of(processor):
    cos = [co for co in amdocc.load(amdocc.samples_path()) if co.processor == processor]
    assert cos, f"the sample has no code object for {processor}"
    return cos[0]


def test_max_blocks_per_cu_answers_from_hip_with_the_runtimes_profile(hip):
    rt, dev, _ = hip
    co = sample_of(dev.processor)
    choice = choose_profile(rt, PROFILE)
    for k in co.kernels:
        for block in (64, 256, 1024):
            got = max_blocks_per_cu(co, block, 4096, kernel_name=k.name)
            counted(rt, dev)
            assert got.source == "hip", got.reason
            assert int(got) == got.hip == rt.occupancy_of(co.data, k.name, block, 4096)
            assert got.model == int(got), (k.name, block)
            assert got.profile == (choice.profile or got.profile)
            assert got.runtime_version == rt.runtime_version()


def test_verify_and_record_end_to_end(hip, tmp_path):
    """`amdocc verify --record` in a fresh process: every answer agrees, and every recorded row
    holds what HIP answers for its inputs when asked again here."""
    import json
    import subprocess
    import sys

    import tomllib

    rt, dev, _ = hip
    record_file = tmp_path / "observed.toml"
    sample = amdocc.samples_path()
    run = subprocess.run(
        [sys.executable, "-m", "amdocc", "verify", "--json", "--record", str(record_file), str(sample)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["total"] > 0 and report["agree"] == report["total"], report
    assert report["runtime_version"] == rt.runtime_version()
    assert report["device"] == dev.gcn_arch_name
    if PROFILE is None:
        assert report["profile"] == choose_profile(rt).profile
    rows = tomllib.loads(record_file.read_text())["observation"]
    assert len(rows) == report["total"]
    co = sample_of(dev.processor)
    names = {k.name for k in co.kernels}
    for row in rows:
        kernel = row["id"].rsplit("-", 2)[0]
        assert kernel in names, row
        assert row["runtime_version"] == rt.runtime_version() and row["processor"] == dev.processor
        assert row["blocks_per_cu"] == rt.occupancy_of(co.data, kernel, row["block_size"], row["dynamic_lds"])
        counted(rt, dev)


def test_verify_from_python_returns_hips_answers(hip):
    """amdocc.app.verify in this process: every shape asked is HIP's own answer, and the hip
    model agrees with each."""
    rt, dev, _ = hip
    co = sample_of(dev.processor)
    found = amdocc.app.verify(amdocc.samples_path(), blocks=[64, 256], dynamic_lds=[0, 4096])
    assert found.summary["device"] == dev.gcn_arch_name and found.failures == []
    assert found.summary["total"] == len(found.results) == len(co.kernels) * 4 - len(found.not_asked) > 0
    for r in found.results:
        assert r["hip"] == rt.occupancy_of(co.data, r["kernel"], r["block_size"], r["dynamic_lds"]) == r["model"], r
        counted(rt, dev)
    assert found.summary["agree"] == found.summary["total"]


# What the runtime does when a module is loaded, asked and unloaded (FlyDSL's max_blocks_per_cu
# wrapper) while a stream captures in global mode, as measured on the emulated device:
# ROCm 7.14 loads and answers, then refuses the unload and invalidates the capture.
CAPTURE_FACTS = {
    71460850: {
        "load": "hipSuccess",
        "occupancy": "hipSuccess",
        "unload": "hipErrorStreamCaptureUnsupported",
        "status_after": "hipStreamCaptureStatusInvalidated",
        "end_capture": "hipErrorStreamCaptureInvalidated",
    }
}


def test_graph_capture_falls_back_to_the_model_and_leaves_the_capture_intact(hip):
    """On a really capturing stream (hipStreamBeginCapture): amdocc answers from the model and the
    capture survives; what the runtime itself does to a capture when asked directly is recorded."""
    from hip import hip as hp

    rt, dev, _ = hip
    co = sample_of(dev.processor)
    (k, *_) = co.kernels
    err, stream = hp.hipStreamCreate()
    assert err == hp.hipError_t.hipSuccess
    status = hp.hipStreamCaptureStatus
    mode = hp.hipStreamCaptureMode.hipStreamCaptureModeGlobal

    assert hp.hipStreamBeginCapture(stream, mode)[0] == hp.hipError_t.hipSuccess
    assert rt.is_capturing(stream)
    got = max_blocks_per_cu(co, 256, kernel_name=k.name, stream=stream)
    assert got.source == "model" and "capturing" in got.reason
    assert (
        int(got)
        == amdocc.occupancy(k, block_size=256, **({"profile": got.profile} if got.profile else {})).blocks_per_cu
    )
    assert hp.hipStreamIsCapturing(stream)[1] == status.hipStreamCaptureStatusActive  # untouched
    err, graph = hp.hipStreamEndCapture(stream)
    assert err == hp.hipError_t.hipSuccess
    hp.hipGraphDestroy(graph)
    assert not rt.is_capturing(stream)
    after = max_blocks_per_cu(co, 256, kernel_name=k.name, stream=stream)
    assert after.source == "hip" and int(after) == int(got)
    counted(rt, dev)

    # The runtime asked directly during a capture (what the fallback avoids):
    assert hp.hipStreamBeginCapture(stream, mode)[0] == hp.hipError_t.hipSuccess
    seen = {}
    err, module = hp.hipModuleLoadData(co.data)
    seen["load"] = err.name
    if err == hp.hipError_t.hipSuccess:
        err, fn = hp.hipModuleGetFunction(module, k.name.encode())
        seen["occupancy"] = hp.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(fn, 256, 0)[0].name
        seen["unload"] = hp.hipModuleUnload(module)[0].name
    seen["status_after"] = hp.hipStreamIsCapturing(stream)[1].name
    err, graph = hp.hipStreamEndCapture(stream)
    seen["end_capture"] = err.name
    if graph is not None:
        hp.hipGraphDestroy(graph)
    hp.hipStreamDestroy(stream)
    print(f"HIP {rt.runtime_version()} during a global-mode capture: {seen}")
    if rt.runtime_version() in CAPTURE_FACTS:
        assert seen == CAPTURE_FACTS[rt.runtime_version()]


def test_flydsls_own_max_blocks_per_cu_answers_through_the_same_runtime(hip, tmp_path, monkeypatch):
    """FlyDSL 0.5.0's CompiledFunction.max_blocks_per_cu() (the seed's API: load the module, ask
    hipModuleOccupancyMaxActiveBlocks, unload) against amdocc's answer for the same launch.
    FlyDSL's libfly_jit_runtime.so links libamdhip64.so.7 (NEEDED; RPATH /opt/rocm/lib), so on the
    emulated device LD_LIBRARY_PATH must name the runtime folder, as test_hip_emulated_live sets it."""
    import os
    import shutil

    from conftest import needs, skip_unless_required

    needs("torch", "FlyDSL needs the CPU build of torch to compile")
    needs("flydsl", "FlyDSL's own max_blocks_per_cu is compared (pip install flydsl torch numpy)")
    if not (shutil.which("ld.lld-22") or shutil.which("ld.lld")):
        skip_unless_required("FlyDSL links with ld.lld: install lld-22")
    from amdocc.integrations import flydsl as af
    from fixtures import flydsl_cases as mf

    rt, dev, _ = hip
    cases = [case for case, (kind, arch, _) in mf.CASES.items() if arch == dev.processor and kind in ("vadd", "lds")]
    if not cases:
        skip_unless_required(f"no FlyDSL case compiles for {dev.processor}")
    rocm = os.environ.get("ROCM_PATH")
    for case in cases:
        env = mf.offline_env(tmp_path / "fakerocm", dev.processor)
        if rocm and Path(rocm, "lib", "libamdhip64.so").exists() and not Path(tmp_path, "fakerocm", "lib").exists():
            Path(tmp_path, "fakerocm", "lib").mkdir()
            Path(tmp_path, "fakerocm", "lib", "libamdhip64.so").symlink_to(Path(rocm, "lib", "libamdhip64.so"))
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        compiled = mf.compile_case(case)
        theirs = compiled.max_blocks_per_cu()
        ours = af.max_blocks_per_cu(compiled)
        counted(rt, dev)
        assert ours.source == "hip"
        assert int(ours) == theirs == ours.model, (case, theirs, ours.model)
