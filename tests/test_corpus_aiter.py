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


def test_every_aiter_field_agrees_with_llvm(aiter_hsa):
    report = check_files(_co_files(aiter_hsa))
    print(f"\naiter corpus: {report.files} files, {report.kernels} kernels, "
          f"{report.metadata_fields} metadata fields and {report.descriptor_fields} descriptor "
          f"fields compared with LLVM 22, {len(report.mismatches)} mismatches")
    assert report.mismatches == []
    assert report.kernels >= 2500


def test_missing_agpr_count_is_split_by_the_descriptor_and_reported(aiter_hsa):
    loaded = amdocc.load(aiter_hsa, strict=False)
    without = [k for k in loaded.kernels if ".agpr_count" not in k.metadata]
    assert without, "the corpus has kernels without .agpr_count"
    for k in without:
        r = k.resources
        assert r.agprs_source == "descriptor"
        # The unified total splits at ACCUM_OFFSET: arch VGPRs before it, AGPRs after.
        assert r.arch_vgprs == k.descriptor.fields["accum_offset"]
        assert r.agprs == max(0, k.metadata[".vgpr_count"] - k.descriptor.fields["accum_offset"])
        assert any(f.code == "agpr-count-missing" for f in k.findings)


def test_fmha_fwd_hd128_split_matches_the_research_note(aiter_hsa):
    # consumers-and-anchors.md §1.3, decoded there with llvm-readelf and a separate decoder:
    # rsrc1 0xc031f (256 unified VGPRs), rsrc3 ACCUM_OFFSET field 39 → 160 arch + 96 AGPRs,
    # kernarg_size 0 in the descriptor against 512 in the metadata.
    (co,) = amdocc.load(aiter_hsa / "gfx942" / "fmha_v3_fwd" / "MI300" / "fwd_hd128_bf16.co")
    (k,) = co.kernels
    assert k.descriptor.words["compute_pgm_rsrc1"] == 0xC031F
    assert (k.resources.vgprs, k.resources.arch_vgprs, k.resources.agprs) == (256, 160, 96)
    assert (k.descriptor.words["kernarg_size"], k.metadata[".kernarg_segment_size"]) == (0, 512)
    assert {"agpr-count-missing", "kernarg-size-mismatch"} <= {f.code for f in k.findings}
