"""Code objects from LLVM main (tests/data/fixtures/newer, made by python tools/fixtures newer).

Built by the LLVM Triton 3.9 bundles (24.0.0git): amdgpu<subarch> triples, processors LLVM 22 does
not know, LLVM 24's occupancy rules. The oracles are stored beside them: llvm-readelf-22's header and
metadata, the .comment strings, and the compiler's own account of each kernel ("; Kernel info:" and
the .amdhsa_* directives it assembled the descriptor from). Hand-assembled pieces (a bundle spelled
with amdgpu ids, dynamic-VGPR descriptors) are checked against the documented layouts their manifest
entries name, and against clang-offload-bundler-22 / llvm-objdump-22 where those can read them.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest

import amdocc
from amdocc.codeobject.producer import parse_producer
from conftest import FIXTURES
from oracle.llvm22 import header_flags, metadata_documents, parse_descriptor_dump

NEWER = FIXTURES / "newer"
MANIFEST = json.loads((NEWER / "manifest.json").read_text())["fixtures"]
OBJECTS = [f for f in MANIFEST if f["kind"] == "elf" and not f.get("hand_assembled")]
DYNAMIC = [f for f in MANIFEST if "patch" in f]
BUNDLE = next(f for f in MANIFEST if f["kind"] == "bundle")
NOTE_KEYS = (
    "vgpr_count",
    "sgpr_count",
    "agpr_count",
    "group_segment_fixed_size",
    "wavefront_size",
    "max_flat_workgroup_size",
    "kernarg_segment_size",
    "private_segment_fixed_size",
)


def _text(fixture, kind):
    return (FIXTURES / fixture["oracle"][kind]).read_text()


def _per_kernel(text: str, opens: str, value: str) -> dict[str, dict[str, int]]:
    """{kernel: {key: int}}: lines matching ``opens`` start a kernel (its name is the last word),
    lines matching ``value`` give (key, number)."""
    out, current = {}, None
    for line in text.splitlines():
        if line.startswith(opens):
            current = out.setdefault(line.split()[-1], {})
        m = re.match(value, line)
        if current is not None and m:
            current[m.group(1)] = int(m.group(2))
    return out


def _kernel_info(fixture) -> dict[str, dict[str, int]]:
    """The compiler's '; Kernel info:' comments."""
    return _per_kernel(_text(fixture, "kernel-info"), "# kernel ", r"; ([\w:]+)\s*[:=]\s*(\d+)")


def _directives(fixture) -> dict[str, dict[str, int]]:
    """The descriptor as the compiler wrote it (directives without .amdhsa_)."""
    return _per_kernel(_text(fixture, "amdhsa"), ".amdhsa_kernel ", r"\.amdhsa_(\w+) (\d+)$")


def _load(fixture):
    (co,) = amdocc.load(str(FIXTURES / fixture["file"]))
    return co


@pytest.mark.parametrize("fixture", OBJECTS, ids=[f["target"] for f in OBJECTS])
def test_identity_from_llvm_24_output(fixture):
    co = _load(fixture)
    readelf = _text(fixture, "readelf")
    (doc,) = metadata_documents(readelf)
    assert co.e_flags == header_flags(readelf)["e_flags"]
    assert co.processor == fixture["target"]
    # amdhsa.target spells the triple LLVM main's way, and amdocc reads it without complaint.
    declared = doc["amdhsa.target"]
    assert declared.startswith(fixture["triple"] + "-") and declared.endswith("-" + fixture["target"])
    assert co.metadata["amdhsa.target"] == declared
    assert not [f for f in co.findings if f.code in ("target-mismatch", "unknown-processor", "e-flags")]
    # The compiler named in .comment, read back the way llvm-readelf prints it.
    line = re.search(r"\]\s+(Linker: .*)$", _text(fixture, "comment"), re.M).group(1)
    assert co.producer == parse_producer(line) and co.producer.version == (24, 0, 0) and co.producer.snapshot


@pytest.mark.parametrize("fixture", OBJECTS, ids=[f["target"] for f in OBJECTS])
def test_kernels_match_readelf_and_the_compiler(fixture):
    co = _load(fixture)
    (doc,) = metadata_documents(_text(fixture, "readelf"))
    notes = {k[".name"]: k for k in doc["amdhsa.kernels"]}
    info, directives = _kernel_info(fixture), _directives(fixture)
    assert sorted(k.name for k in co.kernels) == sorted(fixture["kernels"]) == sorted(notes) == sorted(info)
    compared = 0
    for k in co.kernels:
        for key in NOTE_KEYS:
            if "." + key in notes[k.name]:
                assert k.meta(key) == notes[k.name]["." + key], (k.name, key)
                compared += 1
        fields = k.descriptor.fields
        assert fields["granulated_workitem_vgpr_count"] == info[k.name]["VGPRBlocks"], k.name
        # next_free_* are the counts before rounding to the granule (VGPRBlocks is checked above).
        same = {d: v for d, v in directives[k.name].items() if d in fields and not d.startswith("next_free")}
        assert same and all(fields[d] == v for d, v in same.items()), (k.name, same)
        compared += 1 + len(same)
    assert compared >= 12 * len(co.kernels)


@pytest.mark.parametrize("fixture", OBJECTS, ids=[f["target"] for f in OBJECTS])
def test_llvm_model_follows_the_llvm_that_built_it(fixture):
    """'; Occupancy:' of LLVM 24.0.0git, with the rules read from .comment (no version given); a
    kernel compiled for one fixed block size is asked at that size."""
    info = _kernel_info(fixture)
    for k in _load(fixture).kernels:
        low, high = fixture["flat_workgroup_size"][k.name]
        occ = amdocc.occupancy(k, model="llvm", block_size=high if low == high else None)
        assert occ.waves_per_simd == info[k.name]["Occupancy"], k.name
        assert occ.profile == "llvm-23" and occ.details["llvm_rules"]["chosen_by"].startswith("code object")
        # Triton 3.9's linker commit (b010a18d2b64, the .comment's only line) is one of the compilers
        # tables/llvm_rules.toml has measured (tests/test_llvm_differential.py): no version is
        # guessed, so not even gfx13, where the snapshot's version alone is ambiguous, is warned about.
        assert "commit b010a18d2b64" in occ.details["llvm_rules"]["chosen_by"]
        assert not any("PR #222615" in w for w in occ.warnings)


def test_the_2026_rules_show_in_these_kernels():
    """Hand-worked from docs/llvm-occupancy.md §2 and the PRs, against LLVM 22's rules on the same
    numbers: PR #201342 (SGPRs), #205637 (LDS granule), the SGPR padding, #222615 (gfx13 VGPRs)."""
    gfx942 = {k.name: k for k in _load(next(f for f in OBJECTS if f["target"] == "gfx942")).kernels}

    def waves(k, version=None):
        block = k.meta("max_flat_workgroup_size") if k.name.startswith("fixed") else None
        return amdocc.occupancy(k, model="llvm", llvm_version=version, block_size=block).waves_per_simd

    # 91 SGPRs (.sgpr_count: 85 numbered + 6): step table <=100 -> 8; inverse 800 // (96 + 16) = 7.
    assert gfx942["sgpr85"].meta("sgpr_count") == 91
    assert (waves(gfx942["sgpr85"], "22"), waves(gfx942["sgpr85"])) == (8, 7)
    # 20000 B on 64 KiB, range 1..256 (4 waves, 16 groups): 65536 // 20000 = 3 groups -> 12 waves -> 3;
    # rounded to 512 B (20480) still 3 groups: the same 3 under both rule sets.
    assert (waves(gfx942["lds20000"], "22"), waves(gfx942["lds20000"])) == (3, 3)
    # 320 lanes = 5 waves: 32 slots // 5 = 6 groups -> 30 waves / 4 SIMDs -> 8, the cap: no padding.
    assert (waves(gfx942["fixed320"], "22"), waves(gfx942["fixed320"])) == (8, 8)
    # gfx906 (10 waves per SIMD), 384 lanes = 6 waves: 40 // 6 = 6 groups -> 36 / 4 = 9 waves. LLVM pads
    # the 6 SGPRs to getMinNumSGPRs(9) = alignDown(800 / 10 - 16, 16) + 1 = 65; the step table gives
    # 65 SGPRs 10 waves (9 stands), the inverse 800 // (80 + 16) = 8.
    (fixed384,) = _load(next(f for f in OBJECTS if f["target"] == "gfx906")).kernels
    assert (waves(fixed384, "22"), waves(fixed384)) == (9, 8)
    assert amdocc.occupancy(fixed384, model="llvm", block_size=384).details["sgprs_padded_to"] == 65
    gfx1310 = {k.name: k for k in _load(next(f for f in OBJECTS if f["target"] == "gfx1310")).kernels}
    # 100 VGPRs, wave32: LLVM 23 (1536, granule 24): 1536 // 120 = 12; PR #222615 (1024, granule 16):
    # 1024 // 112 = 9.
    assert (waves(gfx1310["v100_wgp"]), waves(gfx1310["v100_wgp"], "llvm-24")) == (12, 9)
    with pytest.raises(amdocc.UsageError, match="did not know gfx1310"):
        waves(gfx1310["v100_wgp"], "22")


def test_bundle_with_amdgpu_entry_ids():
    """Entries spelled 'hipv4-amdgpu9.42-amd-amdhsa--gfx942' are read like amdgcn ones: the bytes are
    those clang-offload-bundler-22 unbundles from the amdgcn-spelled twin (and, for gfx1310, which
    that bundler cannot name, the standalone fixture's)."""
    items = amdocc.load(str(FIXTURES / BUNDLE["file"]))
    assert [co.origin.hops[-1] for co in items] == [e["id"] for e in BUNDLE["entries"]]
    assert [co.processor for co in items] == [e["target"] for e in BUNDLE["entries"]]
    twin = BUNDLE["twin"]["unbundled_sha256"]
    for co, entry in zip(items, BUNDLE["entries"], strict=True):
        digest = hashlib.sha256(co.data).hexdigest()
        assert digest == entry["sha256"]
        amdgcn_id = entry["id"].split("amdgpu", 1)[0] + "amdgcn-amd-amdhsa--" + entry["target"]
        if amdgcn_id in twin:
            assert digest == twin[amdgcn_id]
    assert len(twin) == 2
    assert sorted(BUNDLE["twin"]["bundler_list"]) == sorted(["host-x86_64-unknown-linux-gnu-", *twin])


@pytest.mark.parametrize("fixture", DYNAMIC, ids=[f["target"] for f in DYNAMIC])
def test_dynamic_vgpr_kernels_are_reported_and_refused(fixture):
    (kernel,) = _load(fixture).kernels
    patch = fixture["patch"]
    # The documented bit (manifest: AMDHSAKernelDescriptor.h) is set in the word amdocc read.
    assert kernel.descriptor.words[patch["word"]] == int(patch["after"], 16)
    assert int(patch["after"], 16) ^ int(patch["before"], 16) == 1 << patch["bit"]
    assert kernel.descriptor.fields["enable_dynamic_vgpr"] == 1
    assert "dynamic-vgpr" in [f.code for f in kernel.findings]
    if fixture["target"] == "gfx1250":  # llvm-objdump-22 decodes the gfx1250 bit itself
        assert "; ENABLE_DYNAMIC_VGPR 1" in _text(fixture, "kd")
    for model in ("hip", "llvm", "hw"):
        with pytest.raises(amdocc.UsageError, match="dynamic VGPRs"):
            amdocc.occupancy(kernel, model=model, block_size=256)


def test_objdump_reads_the_unpatched_fields_of_dynamic_vgpr_kernels():
    """The bit set by hand is the only change: llvm-objdump-22 still decodes every other field the
    same as amdocc (its dump is stored beside each fixture)."""
    compared = 0
    for fixture in DYNAMIC:
        (kernel,) = _load(fixture).kernels
        dump = parse_descriptor_dump(_text(fixture, "kd"))
        (symbols,) = dump.values()
        for directive, value in symbols["dvgpr.kd"].items():
            if directive in kernel.descriptor.fields:
                assert kernel.descriptor.fields[directive] == value, (fixture["target"], directive)
                compared += 1
    assert compared >= 20


def test_a_wgp_mode_workgroup_may_use_more_lds_on_gfx13():
    # Triton's LLVM 24 compiled lds150000_wgp (150,000 B of static LDS, WGP mode) for gfx1310:
    # the compiler itself admits more than the 98,304 B a CU-mode workgroup may use, so the
    # launch check must not call it unlaunchable; the same LDS in CU mode cannot launch.
    co = amdocc.load(NEWER / "amdgpu_gfx1310.hsaco")[0]
    k = co.kernel("lds150000_wgp")
    assert k.resources.lds == 150000 and k.resources.wgp_mode
    occ = amdocc.occupancy(k, model="llvm", block_size=64)
    assert occ.launchable and not any("exceed" in w for w in occ.warnings), occ.warnings
    cu_mode = amdocc.models.manual(co.target, vgprs=8, lds=150000, wgp=False)
    refused = amdocc.models.compute(cu_mode, "llvm", 64)
    assert not refused.launchable and refused.blocks_per_cu == 0
    assert "150000 B of LDS exceed the 98304 B one workgroup may use: a launch fails" in refused.warnings
