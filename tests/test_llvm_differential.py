"""LLVM differential tier: random kernels compiled by llc-22, amdocc's ``llvm`` model read from
the linked code object against the ``; Occupancy:`` comment llc printed for the same kernel.

Kernels come from tools/kernelgen.py (IR whose inline asm clobbers chosen VGPR/AGPR/SGPR counts,
LDS globals, "amdgpu-flat-work-group-size"="1,N", wave32/64, CU/WGP mode, CO v4-v6) over 15+
processors. The seed differs per run unless AMDOCC_DIFF_SEED is set; it is printed, as is the
count. AMDOCC_DIFF_KERNELS sets the number (default 1200; at least 1,000 must be compared).
"""
from __future__ import annotations

import dataclasses
import os
import random
import time

import pytest

import amdocc

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]

TARGETS = ("gfx803", "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010", "gfx1030",
           "gfx1100", "gfx1101", "gfx1102", "gfx1151", "gfx1200", "gfx1201", "gfx9-4-generic",
           "gfx11-generic", "gfx12-generic")


def test_llvm_model_equals_llc_occupancy_on_random_kernels(tmp_path):
    import kernelgen

    seed = int(os.environ.get("AMDOCC_DIFF_SEED", time.time_ns() % 2**32))
    wanted = int(os.environ.get("AMDOCC_DIFF_KERNELS", 1200))
    rng = random.Random(seed)
    specs = [dataclasses.replace(s, min_wg=1, waves_per_eu=None)   # the note keeps only the maximum
             for s in kernelgen.random_specs(rng, TARGETS, wanted)]
    results = kernelgen.compile_many(specs, tmp_path, jobs=2)

    compared, mismatches, dropped = 0, [], 0
    per_target: dict[str, int] = {}
    for batch in results:
        dropped += len(batch.errors)
        if batch.hsaco is None:
            continue
        kernels = {k.name: k for co in amdocc.load(batch.hsaco) for k in co.kernels}
        for name, info in batch.infos.items():
            k = kernels.get(name)
            if k is None:
                mismatches.append(f"{batch.hsaco.name}: amdocc found no kernel {name}")
                continue
            got = amdocc.occupancy(k, model="llvm").waves_per_simd
            compared += 1
            per_target[batch.target] = per_target.get(batch.target, 0) + 1
            if got != info["Occupancy"]:
                r = k.resources
                mismatches.append(
                    f"{batch.target} {name}: llc Occupancy {info['Occupancy']}, amdocc {got} "
                    f"(vgpr {r.vgprs} sgpr {r.sgprs} lds {r.lds} wave {r.wavefront_size} "
                    f"wgp {r.wgp_mode} maxwg {r.max_flat_workgroup_size})")
    print(f"\nLLVM differential: seed {seed}, {compared} kernels compared over {len(per_target)} "
          f"targets, {len(mismatches)} mismatches, {dropped} specs llc rejected")
    assert mismatches == []
    assert compared >= 1000 and len(per_target) >= 12, (compared, per_target)
