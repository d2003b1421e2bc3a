"""A census keeps "cannot launch" for kernels no model fits a workgroup of; a kernel only HIP's
occupancy API answers 0 for (its bit-mask round-up) is listed apart, under a heading that says it
is HIP's arithmetic and that the hardware fits one.

Kernels are made by llvm-mc-22/ld.lld-22 (amdocc.testing.synth) with the metadata chosen and read
back by llvm-readelf-22; the answers are HIP's rule and true rounding worked by hand:

- k_hip_only: gfx1100, wave32, CU mode (.workgroup_processor_mode 0), .vgpr_count 88, a 1024-thread
  workgroup = 32 waves on the CU's 2 SIMDs. HIP: (88 + 23) & ~23 = 104, 1536 // 104 = 14 waves per
  SIMD, 2 x 14 = 28 < 32: 0. True rounding: 88 -> 96, 1536 // 96 = 16, 2 x 16 = 32: 1 workgroup,
  as LLVM's rule and the hw model count it.
- k_none: gfx942, .vgpr_count 256, 1024 threads = 16 wave64 waves; 512 // 256 = 2 waves per SIMD,
  4 x 2 = 8 < 16 under every model (granule 8: the mask is true rounding): 0.
- k_fits: gfx942, 64 VGPRs, 64 threads: 8 waves per SIMD, nothing to list.
"""

from __future__ import annotations

import json

import pytest

from amdocc.testing import SynthSpec, synthesize
from oracle import llvm22
from test_census import census

pytestmark = pytest.mark.llvm22

HIP_ONLY = SynthSpec("gfx1100", 88, 0, 10, 0, wave=32, wgp=False, max_flat_workgroup_size=1024, name="k_hip_only")
NONE = SynthSpec("gfx942", 256, 0, 16, 0, max_flat_workgroup_size=1024, name="k_none")
FITS = SynthSpec("gfx942", 64, 0, 16, 0, max_flat_workgroup_size=64, name="k_fits")
HIP_HEADING = "HIP's occupancy API answers 0 at their declared size; the hardware fits at least 1 (HIP's arithmetic)"


def hip_blocks_cu_mode(vgprs: int, block: int) -> int:
    allocated = (vgprs + 23) & ~23  # amd::alignUp, a bit mask (docs/hip-occupancy.md section 4)
    return 2 * min(16, 1536 // allocated) * 32 // block


def true_blocks_cu_mode(vgprs: int, block: int) -> int:
    allocated = -(-vgprs // 24) * 24
    return 2 * min(16, 1536 // allocated) * 32 // block


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    for spec in (HIP_ONLY, NONE, FITS):
        path = root / f"{spec.name}.hsaco"
        synthesize(spec, path)
        (note,) = llvm22.readelf([str(path)])[str(path)]["metadata"][0]["amdhsa.kernels"]
        assert (note[".name"], note[".vgpr_count"], note[".max_flat_workgroup_size"]) == (
            spec.name,
            spec.vgpr_count,
            spec.max_flat_workgroup_size,
        )
        if spec is HIP_ONLY:
            assert (note[".wavefront_size"], note[".workgroup_processor_mode"]) == (32, 0)
    assert (hip_blocks_cu_mode(88, 1024), true_blocks_cu_mode(88, 1024)) == (0, 1)
    return root


def test_cannot_launch_is_kept_for_what_no_model_fits(capsys, tree):
    code, out, _ = census(capsys, "--json", tree)
    s = json.loads(out)
    assert code == 0
    assert [(r["kernel"], r["cannot_launch"]) for r in s["cannot_launch"]] == [("k_none", "hip,llvm,hw")]
    assert [(r["kernel"], r["cannot_launch"]) for r in s["some_models_zero"]] == [("k_hip_only", "hip")]
    assert s["targets"]["gfx942"]["cannot_launch"] == 1 and s["targets"]["gfx942"]["some_models_zero"] == 0
    assert s["targets"]["gfx1100"]["cannot_launch"] == 0 and s["targets"]["gfx1100"]["some_models_zero"] == 1
    # The row itself still names the model that answers 0, as the CSV column always has.
    (row,) = s["some_models_zero"]
    assert (row["blocks_per_cu"], row["block_size"]) == (hip_blocks_cu_mode(88, 1024), 1024)


def test_the_text_heads_hips_zeros_as_its_arithmetic(capsys, tree):
    code, out, _ = census(capsys, tree)
    assert code == 0
    blocked = out.split("cannot launch at their declared size:\n", 1)[1]
    blocked = blocked.split("\n\n", 1)[0].split(HIP_HEADING, 1)[0]
    assert "k_none" in blocked and "k_hip_only" not in blocked
    _, listed = out.split(f"{HIP_HEADING}:\n", 1)
    first = listed.splitlines()[1]  # under the table's header
    assert first.split()[:3] == ["k_hip_only", "gfx1100", "k_hip_only.hsaco"] and first.split()[-2:] == [
        "hip",
        "llvm,hw",
    ]


def test_the_html_lists_them_apart(capsys, tree, tmp_path):
    html = tmp_path / "census.html"
    code, _, _ = census(capsys, "--html", html, tree)
    page = html.read_text()
    assert code == 0
    launch = page.split('<section id="launch">', 1)[1].split("</section>", 1)[0]
    blocked, disputed = launch.split(f"<h3>{HIP_HEADING.replace(chr(39), '&#x27;')}</h3>", 1)
    assert "k_none" in blocked and "k_hip_only" not in blocked
    assert "k_hip_only" in disputed and "llvm,hw" in disputed
