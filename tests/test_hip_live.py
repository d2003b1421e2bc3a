"""Against the live HIP runtime (marked `hip`: skipped, with the reason, without a ROCm GPU).

One command on an MI300/MI355 machine (README, "Checking against HIP on a GPU"):

    pip install -e '.[hip,test]' && python3 -m pytest -m hip -q

AMDOCC_HIP_PROFILE names the runtime behaviour expected (default: the profile of the runtime's
own release, from hipRuntimeGetVersion()); the property test synthesizes kernels with chosen resources
for the device's own processor and compares HIP's answer with the model's over random block sizes and
dynamic LDS.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amdocc
from amdocc.runtime import HipError, choose_profile, runtime

pytestmark = pytest.mark.hip
PROFILE = os.environ.get("AMDOCC_HIP_PROFILE")


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


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
    try:
        expected = rt.occupancy_of(image, k.name, block, dyn)
    except HipError as exc:
        assert occ.error == exc.code
        return
    assert occ.blocks_per_cu == expected, (spec, block, dyn, occ.limits, occ.details)
