"""The real corpus: every .co of the amd-aiter wheel, against llvm-readelf-22 and llvm-objdump-22.

These are hand-written assembly kernels nobody here wrote (2,501 files in 0.1.7.post2.dev18):
metadata written by hand, no .agpr_count, descriptor kernarg_size 0. .ci/run downloads the wheel
(`pip download --pre --no-deps amd-aiter`) and unpacks it into .cache/aiter.
"""

from __future__ import annotations

import pytest

import amdocc
from oracle.check import check_files

pytestmark = [pytest.mark.corpus, pytest.mark.llvm22, pytest.mark.slow]


def _co_files(root):
    return sorted(str(p) for p in root.rglob("*.co"))


def test_every_aiter_code_object_parses_without_errors(aiter_hsa):
    files = _co_files(aiter_hsa)
    assert len(files) >= 2500, f"expected the wheel's ~2,501 .co files, found {len(files)}"
    loaded = amdocc.load(aiter_hsa, strict=False)
    assert loaded.failed == []
    assert len(loaded) == len(files)
    # Metadata keeps the note's kernels one per file; the descriptor decodes for every kernel.
    assert all(k.descriptor is not None and k.descriptor.fields for k in loaded.kernels)


@pytest.fixture(scope="module")
def llvm_report(aiter_hsa):
    """One comparison of the whole corpus with llvm-readelf-22 and llvm-objdump-22."""
    return check_files(_co_files(aiter_hsa))


def test_every_aiter_field_agrees_with_llvm(llvm_report):
    report = llvm_report
    print(
        f"\naiter corpus: {report.files} files, {report.kernels} kernels, "
        f"{report.metadata_fields} metadata fields and {report.descriptor_fields} descriptor "
        f"fields compared with LLVM 22, {len(report.mismatches)} mismatches, "
        f"{report.kernels_without_descriptor_oracle} kernels without a descriptor oracle"
    )
    assert report.mismatches == []  # includes "compared N of the M values LLVM printed" per kernel
    assert report.kernels >= 2500
    # Every kernel's descriptor was compared (gfx942/gfx950 only: llvm-objdump decodes them all).
    assert report.kernels_without_descriptor_oracle == 0 and report.no_descriptor_oracle == {}
    assert report.kernels_with_descriptor_oracle == report.kernels
    # Each kernel's descriptor is at least the 30-odd directives of a gfx9 descriptor, its note more.
    assert report.descriptor_fields >= 30 * report.kernels
    assert report.metadata_fields >= 10 * report.kernels


def test_missing_agpr_count_is_split_by_the_descriptor_and_reported(aiter_hsa, llvm_report):
    # The rule, from AMDGPUUsage.rst (compute_pgm_rsrc3 for GFX90A/GFX942): in the unified
    # register file the AGPRs start at ACCUM_OFFSET, so the arch VGPRs are ACCUM_OFFSET and the
    # AGPRs the rest of .vgpr_count. Both numbers as LLVM's tools read them, not as amdocc does.
    loaded = amdocc.load(aiter_hsa, strict=False)
    checked = 0
    for co in loaded:
        for k in co.kernels:
            seen = llvm_report.llvm_values[co.origin.path, k.symbol]
            if ".agpr_count" in seen["metadata"]:
                continue
            total, accum = seen["metadata"][".vgpr_count"], seen["descriptor"]["accum_offset"]
            allocated = seen["descriptor"]["next_free_vgpr"]
            r = k.resources
            assert r.agprs_source == "descriptor"
            assert (r.arch_vgprs, r.agprs) == (accum, max(0, total - accum)), k.symbol
            assert r.agprs <= allocated - accum  # the AGPRs fit in what the descriptor allocates
            assert any(f.code == "agpr-count-missing" for f in k.findings)
            checked += 1
    assert checked > 1000, f"only {checked} kernels without .agpr_count were checked"
    print(f"\n{checked} kernels without .agpr_count split by LLVM's ACCUM_OFFSET")


def test_fmha_fwd_hd128_split_matches_the_research_note(aiter_hsa):
    # docs/consumers.md §2, decoded there with llvm-readelf and a separate decoder:
    # rsrc1 0xc031f (256 unified VGPRs), rsrc3 ACCUM_OFFSET field 39 → 160 arch + 96 AGPRs,
    # kernarg_size 0 in the descriptor against 512 in the metadata.
    (co,) = amdocc.load(aiter_hsa / "gfx942" / "fmha_v3_fwd" / "MI300" / "fwd_hd128_bf16.co")
    (k,) = co.kernels
    assert k.descriptor.words["compute_pgm_rsrc1"] == 0xC031F
    assert (k.resources.vgprs, k.resources.arch_vgprs, k.resources.agprs) == (256, 160, 96)
    assert (k.descriptor.words["kernarg_size"], k.metadata[".kernarg_segment_size"]) == (0, 512)
    assert {"agpr-count-missing", "kernarg-size-mismatch"} <= {f.code for f in k.findings}
