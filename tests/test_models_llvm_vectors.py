"""The llvm model against llc-22's recorded answers for 840 random kernels, without compiling.

tests/data/llvm22_occupancy_vectors.json (tools/record_llvm_vectors.py, which does not import
amdocc) keeps, per kernel, what llc-22 wrote into the code object (.vgpr_count, .sgpr_count,
static LDS, wave size, WGP mode, .max_flat_workgroup_size) and what it printed: ``; Occupancy:``
and ``; NumSGPRsForWavesPerEU:``. Half the kernels have the range "1,N" (the model is asked with
no block size), half a fixed "B,B" (asked at ``block_size=B``, the per-block path). The numbers
typed into :func:`amdocc.models.manual` are the metadata's, and the model is asked for LLVM 22's
rules; it must print the compiler's numbers.

The full differential (tests/test_llvm_differential.py, slow tier) compiles fresh kernels each
run; these vectors keep the same oracle in the fast tier, where mutation testing runs.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import amdocc
from amdocc.models import manual
from amdocc.targets import get_target
from conftest import TESTS

DOC = json.loads((TESTS / "data" / "llvm22_occupancy_vectors.json").read_text())
VECTORS = DOC["vectors"]


def test_the_vectors_cover_both_paths_every_generation_and_every_limit():
    assert DOC["compiler"].startswith("22.") and len(VECTORS) == 840
    fixed = Counter(v["block"] is not None for v in VECTORS)
    assert fixed[True] > 200 and fixed[False] > 200
    assert {get_target(v["target"]).major for v in VECTORS} == {8, 9, 10, 11, 12}
    assert sum(v["wgp"] for v in VECTORS) > 50 and sum(v["lds"] > 0 for v in VECTORS) > 100
    assert sum(v["NumSGPRsForWavesPerEU"] > v["sgpr_count"] for v in VECTORS) > 20  # LLVM padded SGPRs


def _ask(v):
    t = get_target(v["target"])
    u = manual(
        t,
        vgprs=v["vgpr_count"],
        sgprs=v["sgpr_count"],
        lds=v["lds"],
        wave=v["wave"],
        wgp=v["wgp"] if t.wgp else None,
        max_flat_workgroup_size=v["max_flat_workgroup_size"],
    )
    return u, amdocc.occupancy(u, model="llvm", block_size=v["block"], llvm_version="22")


def test_the_llvm_model_prints_llc_22s_occupancy_for_every_vector():
    wrong = []
    for i, v in enumerate(VECTORS):
        u, occ = _ask(v)
        padded = occ.details.get("sgprs_padded_to", u.sgprs)
        pads = bool(get_target(v["target"]).sgpr_waves)  # gfx10+: SGPRs never bound, no padding modelled
        want_padded = v["NumSGPRsForWavesPerEU"] if pads else u.sgprs
        if (occ.details["llvm_occupancy"], padded) != (v["Occupancy"], want_padded):
            wrong.append((i, v, occ.details["llvm_occupancy"], padded))
    assert wrong == [], f"{len(wrong)} of {len(VECTORS)} differ, e.g. {wrong[:3]}"


@pytest.mark.parametrize("path", ["range", "fixed"])
def test_the_record_of_each_path_follows_the_printed_number(path):
    # Without a block size the record's waves per SIMD is LLVM's number itself; at a fixed block
    # it is what the whole workgroups that fit make of it (never more than LLVM's number).
    for v in VECTORS:
        if (v["block"] is None) != (path == "range"):
            continue
        _, occ = _ask(v)
        if path == "range":
            assert (occ.waves_per_simd, occ.blocks_per_cu) == (v["Occupancy"], None)
        else:
            assert occ.waves_per_simd <= v["Occupancy"] and occ.blocks_per_cu is not None
