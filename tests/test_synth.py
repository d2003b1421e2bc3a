"""Synthesized code objects read back, through amdocc and through LLVM 22, to exactly the
intended values (the objects the live-HIP property test loads)."""

from __future__ import annotations

import json

import pytest

import amdocc
from amdocc.targets import get_target
from amdocc.testing import SynthSpec, synthesize
from conftest import ROOT
from oracle import llvm22
from oracle.check import check_files

pytestmark = pytest.mark.llvm22
# LLVM 22's descriptor VGPR encoding granule per processor and wave size (tools/probe_targets.py).
PROBE = json.loads((ROOT / "tests" / "data" / "llvm22_target_probe.json").read_text())

SPECS = [
    SynthSpec("gfx90a", 128, 0, 92, 0),
    SynthSpec("gfx90a", 200, 72, 40, 32768),
    SynthSpec("gfx942", 452, 200, 40, 49152),
    SynthSpec("gfx942", 256, 96, 96, 65536, max_flat_workgroup_size=512),
    SynthSpec("gfx950", 112, 32, 22, 163840),
    SynthSpec("gfx1100", 100, 0, 10, 8192, wave=32, wgp=True),
    SynthSpec("gfx1100", 61, 0, 10, 0, wave=64, wgp=False),
    SynthSpec("gfx1201", 60, 0, 10, 65536, wave=64, wgp=True),
    SynthSpec("gfx1201", 130, 0, 10, 1024, wave=32, wgp=False, code_object_version=6),
]


@pytest.mark.parametrize("spec", SPECS, ids=[f"{s.target}-v{s.vgpr_count}-a{s.agpr_count}-w{s.wave}" for s in SPECS])
def test_synthesized_object_reads_back_exactly(tmp_path, spec):
    path = tmp_path / "k.co"
    synthesize(spec, path)
    t = get_target(spec.target)
    wave = spec.wave or t.default_wave
    wgp = t.wgp if spec.wgp is None else spec.wgp

    # LLVM's reading of the metadata note and the descriptor.
    seen = llvm22.readelf([str(path)])[str(path)]
    (kernel_md,) = seen["metadata"][0]["amdhsa.kernels"]
    expected = {
        ".vgpr_count": spec.vgpr_count,
        ".sgpr_count": spec.sgpr_count,
        ".group_segment_fixed_size": spec.lds,
        ".wavefront_size": wave,
        ".max_flat_workgroup_size": spec.max_flat_workgroup_size,
    }
    if t.has_agprs:
        expected[".agpr_count"] = spec.agpr_count
    if t.wgp:
        expected[".workgroup_processor_mode"] = int(wgp)
    assert {k: kernel_md.get(k) for k in expected} == expected
    kd = llvm22.objdump_descriptors([str(path)], [f"{spec.name}.kd"])[str(path)][f"{spec.name}.kd"]
    assert kd["group_segment_fixed_size"] == spec.lds
    granule = PROBE[spec.target]["vgpr"][str(wave)]["encoding_granule"]
    assert kd["next_free_vgpr"] == -(-spec.vgpr_count // granule) * granule
    if t.sgprs_limit_occupancy:  # gfx10+ allocate a fixed SGPR block: the field is reserved
        assert kd["next_free_sgpr"] >= spec.sgpr_count
    if t.register_file == "unified":
        assert kd["accum_offset"] == max(4, spec.vgpr_count - spec.agpr_count)
    if t.major >= 10:
        assert kd["wavefront_size32"] == int(wave == 32) and kd["workgroup_processor_mode"] == int(wgp)

    # amdocc's reading, field by field against LLVM's, and its resolved resources.
    assert check_files([str(path)]).mismatches == []
    (co,) = amdocc.load(path)
    (k,) = co.kernels
    r = k.resources
    assert (r.vgprs, r.sgprs, r.lds, r.wavefront_size) == (spec.vgpr_count, spec.sgpr_count, spec.lds, wave)
    assert r.agprs == (spec.agpr_count if t.has_agprs else 0)
    assert r.wgp_mode == (wgp if t.wgp else None)
