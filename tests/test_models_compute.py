"""Choosing what to evaluate: a target and a device must agree (tables/devices.toml), a model must
be one the package has, and an ordinary evaluation carries no what-if words while one asked by
name does (generic code on a member of its family is no what-if).
"""

from __future__ import annotations

import pytest

import amdocc
from amdocc import UsageError
from amdocc.models import manual
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = get_target("gfx942")


def test_target_and_device_must_agree():
    # MI300X is a gfx942 (tables/devices.toml).
    occ = amdocc.occupancy({"vgprs": 8}, target="gfx942", device="MI300X", block_size=256)
    assert occ.processor == "gfx942"
    with pytest.raises(UsageError, match="is a gfx942, not gfx90a"):
        amdocc.occupancy({"vgprs": 8}, target="gfx90a", device="MI300X", block_size=256)


def test_an_ordinary_evaluation_carries_no_what_if_words():
    kernel = amdocc.load(amdocc.samples_path())[3].kernels[0]  # saxpy_lds for gfx942
    assert str(kernel.target_id) == "gfx942"
    for model in ("hip", "llvm", "hw"):
        occ = amdocc.occupancy(kernel, block_size=256, model=model)
        assert not occ.what_if and not any(w.startswith("what-if") for w in occ.warnings), occ.warnings
    asked = amdocc.occupancy(kernel, block_size=256, target="gfx950", what_if=True)
    assert asked.what_if and any(w.startswith("what-if: ") for w in asked.warnings)
    # Generic code on a member of its family is no what-if: the record names what it was built for.
    generic = amdocc.load(FIXTURES / "elf" / "gfx9-4-generic_cov6.hsaco")[0].kernels[0]
    member = amdocc.occupancy(generic, block_size=64, target="gfx942")
    assert str(member.built_for) == "gfx9-4-generic" and not member.what_if
    assert not any(w.startswith("what-if") for w in member.warnings), member.warnings


def test_compute_refuses_a_model_it_does_not_have():
    from amdocc.models import compute

    with pytest.raises(UsageError, match=r"unknown model 'hw2' \(choose from hip, llvm, hw\)"):
        compute(manual(GFX942, vgprs=8), "hw2", 256)


def test_several_models_asked_at_once_answer_as_each_asked_alone():
    # gfx1250's hw_wave_slots is unknown (tables/targets.toml): hw cannot answer there, and says why,
    # while hip and llvm do. 64 VGPRs on gfx1250 (wave32): LLVM's own count is 16 waves per SIMD.
    from amdocc.models import ModelUnavailable, occupancies

    u = manual(get_target("gfx1250"), vgprs=64)
    got = occupancies(u, ("hip", "llvm", "hw"), block_size=256)
    assert list(got) == ["hip", "llvm", "hw"]
    assert isinstance(got["hw"], ModelUnavailable) and "hw_wave_slots, which no public source pins" in str(got["hw"])
    assert got["llvm"].waves_per_simd == 16 and got["llvm"].block_size == 256
    assert got["hip"] == amdocc.occupancy(u, block_size=256)
    # HIP's rule worked by hand (docs/hip-occupancy.md §2; comgr gives gfx1250 1024 VGPRs
    # per SIMD, granule 16, hip_profiles.toml f3494e3): 1024 // 64 = 16 waves, the gfx10+ cap; 4 SIMDs x 32 x 16 =
    # 2048 threads, 8 workgroups of 256, a tie the wave slots win (LIMITERS order).
    assert (got["hip"].blocks_per_cu, got["hip"].limiter) == (8, "waves")
    # The arguments are checked once, for every model, as occupancy checks them.
    for bad, words in (("hip", "not the string 'hip'"), ((), "no model asked")):
        with pytest.raises(UsageError, match=words):
            occupancies(u, bad, block_size=256)
    with pytest.raises(UsageError, match="unknown model 'cuda'"):
        occupancies(u, ("hip", "cuda"), block_size=256)
    with pytest.raises(UsageError, match="dynamic LDS cannot be negative"):
        occupancies(u, ("llvm",), block_size=256, dynamic_lds=-1)
    kernel = amdocc.load(amdocc.samples_path())[3].kernels[0]  # saxpy_lds for gfx942
    with pytest.raises(amdocc.AmdoccError, match="cannot run on gfx90a"):
        occupancies(kernel, ("hip",), block_size=256, target="gfx90a")
