"""The kernels the HIP property test draws, read back by LLVM 22 exactly as drawn.

amdocc.testing.strategies draws code objects of several kernels (kernel_batches: code-object
versions 4 to 6, VGPR/AGPR/SGPR counts near granule edges and beyond what a wave addresses,
static LDS up to the device's, wave size, WGP or CU mode, .max_flat_workgroup_size);
amdocc.testing.synthesize_many assembles each with llvm-mc-22 and links it with ld.lld-22. Here
llvm-readelf-22's reading of every metadata note and ELF header is the oracle: each kernel's
note says what the strategy drew, and amdocc reads the same kernel fields (the ones the property
test compares with hipFuncGetAttribute).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amdocc
from amdocc.errors import UsageError
from amdocc.targets import get_target
from amdocc.testing import SynthSpec, synthesize_many
from amdocc.testing.strategies import kernel_batches
from oracle import llvm22

pytestmark = pytest.mark.llvm22
PROCESSORS = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx908", "gfx1030")
# e_ident[EI_ABIVERSION] per code-object version (AMDGPUUsage.rst, ELFABIVERSION_AMDGPU_HSA_V4..V6).
ABI_VERSION = {4: 2, 5: 3, 6: 4}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_drawn_code_objects_say_what_was_drawn(tmp_path_factory, data):
    processor = data.draw(st.sampled_from(PROCESSORS))
    specs = data.draw(kernel_batches(processor, max_kernels=4))
    path = tmp_path_factory.mktemp("synth") / "k.co"
    synthesize_many(specs, path)
    seen = llvm22.readelf([str(path)])[str(path)]
    (doc,) = seen["metadata"]
    t = get_target(processor)
    version = specs[0].code_object_version
    assert seen["header"]["abi_version"] == ABI_VERSION[version]
    assert doc["amdhsa.version"] == ([1, 1] if version == 4 else [1, 2])
    by_name = {k[".name"]: k for k in doc["amdhsa.kernels"]}
    assert sorted(by_name) == sorted(s.name for s in specs)
    (co,) = amdocc.load(path)
    assert co.code_object_version == version
    for spec in specs:
        md = by_name[spec.name]
        wave = spec.wave or t.default_wave
        assert (md[".vgpr_count"], md[".sgpr_count"], md[".group_segment_fixed_size"]) == (
            spec.vgpr_count,
            spec.sgpr_count,
            spec.lds,
        )
        assert (md[".wavefront_size"], md[".max_flat_workgroup_size"]) == (wave, spec.max_flat_workgroup_size)
        assert md.get(".agpr_count", 0) == spec.agpr_count
        if t.wgp and version >= 5:
            assert md[".workgroup_processor_mode"] == int(spec.wgp)
        else:  # LLVM writes the key from v5 on, and only where WGP mode exists
            assert ".workgroup_processor_mode" not in md
        r = co.kernel(spec.name).resources
        assert (r.vgprs, r.lds, r.scratch, r.max_flat_workgroup_size) == (
            md[".vgpr_count"],
            md[".group_segment_fixed_size"],
            md[".private_segment_fixed_size"],
            md[".max_flat_workgroup_size"],
        )


def test_one_code_object_holds_one_processor_and_version_with_distinct_names():
    a = SynthSpec("gfx942", 64, name="a")
    with pytest.raises(UsageError, match="share its processor"):
        synthesize_many([a, SynthSpec("gfx950", 64, name="b")])
    with pytest.raises(UsageError, match="share its processor"):
        synthesize_many([a, SynthSpec("gfx942", 64, name="b", code_object_version=4)])
    with pytest.raises(UsageError, match="repeat"):
        synthesize_many([a, a])
    with pytest.raises(UsageError, match="version 3 cannot"):
        synthesize_many([SynthSpec("gfx942", 64, code_object_version=3)])
    with pytest.raises(UsageError, match=r"outside 1\.\.1024"):
        synthesize_many([SynthSpec("gfx942", 64, max_flat_workgroup_size=1025)])
    with pytest.raises(UsageError, match="not an assembler symbol"):
        synthesize_many([SynthSpec("gfx942", 64, name="a b")])
