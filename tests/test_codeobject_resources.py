"""Resource resolution: which view wins, and when a disagreement is a finding.

The rules are docs/code-object-format.md §2.3 and §3.3: "used" counts from the metadata
note (else LLVM's ``<fn>.num_*`` resource symbols), "allocated" from the descriptor;
``.vgpr_count`` is the unified total on gfx90a/gfx94x/gfx950 (alignTo(arch, 4) + agpr) and
max(arch, agpr) on gfx908; HIP reads the metadata's LDS. The descriptor encodes VGPRs as
ceil(n / granule) - 1 (granule 8 on gfx90a+) and SGPRs as ceil(n / 8) - 1, so an allocation above
the used count rounded to that granule is padding. Each case feeds resolve() hand-made views and
checks the numbers worked out here from those rules.
"""

from __future__ import annotations

import struct

import pytest

from amdocc.codeobject.descriptor import decode_descriptor
from amdocc.codeobject.resources import resolve
from amdocc.errors import Origin
from amdocc.targets import MAX_WORKGROUP_SIZE, get_target

GFX942, GFX908, GFX1100 = get_target("gfx942"), get_target("gfx908"), get_target("gfx1100")


def descriptor(target, *, vgpr_blocks=0, sgpr_blocks=0, lds=0, kernarg=0, accum_granules=None, wave32=False, scratch=0):
    """A 64-byte kernel descriptor with the given fields (AMDGPUUsage.rst layout)."""
    rsrc1 = vgpr_blocks | (sgpr_blocks << 6)
    rsrc3 = accum_granules if accum_granules is not None else 0
    kcp = 1 << 10 if wave32 else 0
    data = struct.pack(
        "<III4sq20sIIIHH4s", lds, scratch, kernarg, b"\0" * 4, 0, b"\0" * 20, rsrc3, rsrc1, 0, kcp, 0, b"\0" * 4
    )
    return decode_descriptor(data, 0, target, Origin("test"))


def resolved(target, metadata, kd=None, symbols=None, co_version=5):
    findings = []
    r = resolve(target, co_version, metadata, kd, symbols or {}, findings)
    return r, {f.code: f for f in findings}


def test_vgpr_count_wins_over_the_resource_symbols_and_the_disagreement_is_a_finding():
    # Symbols 41 arch + 64 AGPRs on gfx942 make alignTo(41, 4) + 64 = 108; the note says 100.
    r, found = resolved(GFX942, {".vgpr_count": 100}, symbols={"num_vgpr": 41, "num_agpr": 64})
    assert (r.vgprs, r.vgprs_source) == (100, "metadata")
    assert (r.arch_vgprs, r.arch_vgprs_source) == (41, "symbol")
    assert (r.agprs, r.agprs_source) == (64, "symbol")
    assert "108" in found["resource-symbol-mismatch"].message
    assert found["agpr-count-missing"].severity == "info"
    # Without the note the symbols' total is used, by the target's rule: 108 here, max = 64 on gfx908.
    r, found = resolved(GFX942, {}, symbols={"num_vgpr": 41, "num_agpr": 64})
    assert (r.vgprs, r.vgprs_source) == (108, "symbol") and "resource-symbol-mismatch" not in found
    r, _ = resolved(GFX908, {}, symbols={"num_vgpr": 41, "num_agpr": 64})
    assert r.vgprs == 64


def test_unified_arch_vgprs_are_the_total_minus_the_agprs():
    # .vgpr_count 108 with .agpr_count 64: arch = 108 - 64 = 44 = alignTo(41, 4).
    r, found = resolved(GFX942, {".vgpr_count": 108, ".agpr_count": 64})
    assert (r.arch_vgprs, r.arch_vgprs_source, r.agprs) == (44, "metadata", 64)
    assert "agpr-count-missing" not in found
    # gfx908 keeps two files: .vgpr_count = max(arch, agpr) says nothing exact about arch when
    # the AGPRs are the larger; with fewer AGPRs it is the arch count.
    r, _ = resolved(GFX908, {".vgpr_count": 64, ".agpr_count": 64})
    assert r.arch_vgprs is None
    r, _ = resolved(GFX908, {".vgpr_count": 64, ".agpr_count": 10})
    assert (r.arch_vgprs, r.arch_vgprs_source) == (64, "metadata")


def test_without_agpr_count_accum_offset_splits_the_total():
    # ACCUM_OFFSET field 10 -> (10 + 1) x 4 = 44 arch VGPRs; .vgpr_count 108 -> 64 AGPRs.
    kd = descriptor(GFX942, vgpr_blocks=13, accum_granules=10)
    r, found = resolved(GFX942, {".vgpr_count": 108}, kd)
    assert (r.accum_offset, r.arch_vgprs, r.agprs, r.agprs_source) == (44, 44, 64, "descriptor")
    assert found["agpr-count-missing"].severity == "info"
    # A note that disagrees with ACCUM_OFFSET: 108 - 60 = 48, not 44.
    r, found = resolved(GFX942, {".vgpr_count": 108, ".agpr_count": 60}, kd)
    assert "agpr-split-mismatch" in found and r.arch_vgprs == 48
    # No total at all: the allocation (13 + 1) x 8 = 112 bounds the AGPRs: 112 - 44 = 68.
    r, _ = resolved(GFX942, {".sgpr_count": 10}, kd)
    assert (r.vgprs, r.vgprs_source, r.agprs) == (112, "descriptor", 68)


@pytest.mark.parametrize(
    "allocated_blocks,code",
    [
        (5, None),  # (5 + 1) x 8 = 48 = alignTo(41, 8): exactly the granule, no finding
        (6, "vgpr-padding"),  # 56 > 48: LLVM padded the allocation
        (4, "vgpr-below-used"),  # 40 < 41
    ],
)
def test_the_vgpr_padding_threshold_is_the_encoding_granule(allocated_blocks, code):
    r, found = resolved(GFX942, {".vgpr_count": 41, ".agpr_count": 0}, descriptor(GFX942, vgpr_blocks=allocated_blocks))
    assert r.vgprs_allocated == (allocated_blocks + 1) * 8
    assert ({"vgpr-padding", "vgpr-below-used"} & set(found)) == ({code} if code else set())


@pytest.mark.parametrize(
    "sgpr_blocks,code",
    [
        (3, None),  # (3 + 1) x 8 = 32 = alignTo(30, 8)
        (4, "sgpr-padding"),  # 40
        (2, "sgpr-below-used"),  # 24 < 30
    ],
)
def test_the_sgpr_padding_threshold(sgpr_blocks, code):
    r, found = resolved(GFX942, {".sgpr_count": 30}, descriptor(GFX942, sgpr_blocks=sgpr_blocks))
    assert (r.sgprs, r.sgprs_source, r.sgprs_allocated) == (30, "metadata", (sgpr_blocks + 1) * 8)
    assert ({"sgpr-padding", "sgpr-below-used"} & set(found)) == ({code} if code else set())


def test_gfx10_plus_sgprs_are_not_allocated_per_wave():
    # GRANULATED_WAVEFRONT_SGPR_COUNT is reserved on gfx10+: no allocation is read from it.
    r, found = resolved(
        GFX1100, {".sgpr_count": 30, ".wavefront_size": 32}, descriptor(GFX1100, sgpr_blocks=4, wave32=True)
    )
    assert r.sgprs_allocated is None and "sgpr-padding" not in found
    # Without .sgpr_count there is nothing to fall back on there either.
    r, _ = resolved(GFX1100, {".wavefront_size": 32}, descriptor(GFX1100, wave32=True))
    assert r.sgprs is None


def test_metadata_lds_wins_over_the_descriptors_and_the_difference_is_a_warning():
    r, found = resolved(GFX942, {".group_segment_fixed_size": 16384}, descriptor(GFX942, lds=32768))
    assert (r.lds, r.lds_source) == (16384, "metadata")
    assert found["lds-mismatch"].severity == "warning"
    r, found = resolved(GFX942, {}, descriptor(GFX942, lds=32768))
    assert (r.lds, r.lds_source) == (32768, "descriptor") and "lds-mismatch" not in found
    r, found = resolved(GFX942, {".group_segment_fixed_size": 0}, descriptor(GFX942, lds=0))
    assert r.lds == 0 and "lds-mismatch" not in found


def test_scratch_and_kernarg_disagreements():
    r, found = resolved(
        GFX942,
        {".private_segment_fixed_size": 16, ".kernarg_segment_size": 512},
        descriptor(GFX942, scratch=32, kernarg=0),
    )
    assert (r.scratch, r.kernarg_size) == (16, 512)
    assert found["scratch-mismatch"].severity == "warning"
    assert found["kernarg-size-mismatch"].severity == "info"  # hand-written asm leaves KD 0
    r, found = resolved(GFX942, {".kernarg_segment_size": 512}, descriptor(GFX942, kernarg=256))
    assert found["kernarg-size-mismatch"].severity == "warning"
    r, _ = resolved(GFX942, {}, descriptor(GFX942, kernarg=256, scratch=8))
    assert (r.kernarg_size, r.scratch, r.scratch_source) == (256, 8, "descriptor")


def test_wave_size_from_metadata_over_the_descriptor():
    r, found = resolved(GFX1100, {".wavefront_size": 64}, descriptor(GFX1100, wave32=True))
    assert (r.wavefront_size, r.wavefront_size_source) == (64, "metadata")
    assert "wave-size-mismatch" in found
    r, _ = resolved(GFX1100, {}, descriptor(GFX1100, wave32=True))
    assert (r.wavefront_size, r.wavefront_size_source) == (32, "descriptor")
    r, _ = resolved(GFX1100, {})
    assert (r.wavefront_size, r.wavefront_size_source) == (32, "target")
    r, found = resolved(GFX942, {".wavefront_size": 32})
    assert found["out-of-range"].severity == "error"


@pytest.mark.parametrize(
    "metadata,needle",
    [
        ({".vgpr_count": 513}, "513 VGPRs exceed the 512"),
        ({".agpr_count": 257, ".vgpr_count": 300}, "257 AGPRs exceed the 256"),
        ({".group_segment_fixed_size": 65537}, "65537 B exceeds the 65536"),
        ({".sgpr_count": 129}, "129 SGPRs exceed the 128"),
        ({".max_flat_workgroup_size": 1025}, "outside 1..1024"),
        ({".max_flat_workgroup_size": 0}, "outside 1..1024"),
        ({".vgpr_count": -1}, "negative"),
        ({".vgpr_count": "8"}, "not an integer"),
        ({".vgpr_count": True}, "not an integer"),
    ],
)
def test_impossible_values_are_error_findings(metadata, needle):
    _, found = resolved(GFX942, metadata)
    errors = [f.message for f in found.values() if f.severity == "error"]
    assert any(needle in m for m in errors), errors


def test_the_largest_possible_values_are_not_findings():
    _, found = resolved(
        GFX942,
        {
            ".vgpr_count": 512,
            ".agpr_count": 256,
            ".group_segment_fixed_size": 65536,
            ".sgpr_count": 128,
            ".max_flat_workgroup_size": 1024,
        },
    )
    assert "out-of-range" not in found


def test_spill_counts_are_reported_under_their_note_names():
    r, _ = resolved(GFX942, {".sgpr_spill_count": 3, ".vgpr_spill_count": 5})
    d = r.as_dict()
    assert (d["sgpr_spill_count"], d["vgpr_spill_count"]) == (3, 5) and "spills" not in d


def test_v2_code_props_are_read_under_their_note_names():
    # CO v2 keeps CodeProps (NumVGPRs, NumSGPRs, ...) in YAML; they mean .vgpr_count etc.
    md = {
        "Name": "k",
        "SymbolName": "k@kd",
        "CodeProps": {"NumVGPRs": 41, "NumSGPRs": 30, "WavefrontSize": 64, "GroupSegmentFixedSize": 512},
    }
    r, _ = resolved(get_target("gfx906"), md, co_version=2)
    assert (r.vgprs, r.sgprs, r.wavefront_size, r.lds) == (41, 30, 64, 512)


def test_wave_and_wgp_disagreements_only_when_both_views_speak():
    r, found = resolved(GFX1100, {}, descriptor(GFX1100, wave32=True))
    assert "wave-size-mismatch" not in found
    wgp_bit = 1 << 29
    _, found = resolved(
        GFX1100,
        {".workgroup_processor_mode": 1, ".wavefront_size": 32},
        descriptor(GFX1100, vgpr_blocks=wgp_bit, wave32=True),
    )
    assert "wgp-mode-mismatch" not in found
    r, found = resolved(
        GFX1100,
        {".workgroup_processor_mode": 0, ".wavefront_size": 32},
        descriptor(GFX1100, vgpr_blocks=wgp_bit, wave32=True),
    )
    assert "wgp-mode-mismatch" in found and r.wgp_mode is True  # the descriptor's bit is what runs


def _findings(metadata: dict) -> tuple[object, list]:
    findings: list = []
    return resolve(GFX942, 5, metadata, None, {}, findings), findings


@pytest.mark.parametrize("size, legal", [(0, False), (1, True), (MAX_WORKGROUP_SIZE, True), (1025, False)])
def test_max_flat_workgroup_size_is_legal_from_1_to_1024(size, legal):
    r, findings = _findings({".max_flat_workgroup_size": size})
    assert r.max_flat_workgroup_size == size
    bad = [f for f in findings if f.code == "out-of-range"]
    if legal:
        assert bad == []
    else:
        assert [f.message for f in bad] == [f".max_flat_workgroup_size {size} is outside 1..1024"]


@pytest.mark.parametrize("key", [".sgpr_spill_count", ".vgpr_spill_count"])
def test_a_spill_count_that_is_not_an_integer_is_a_finding(key):
    r, findings = _findings({key: "7"})
    assert r.spills == (None, None)
    assert [(f.code, f.severity, f.message) for f in findings if f.code == "metadata-type"] == [
        ("metadata-type", "error", f"{key} is '7', not an integer")
    ]
    r, findings = _findings({key: -2})
    assert [f.message for f in findings if f.code == "out-of-range"] == [f"{key} is negative (-2)"]


def test_findings_come_in_the_order_of_the_steps():
    # inspect --json lists a kernel's findings in the order resolve() raises them: wave size and
    # WGP mode, VGPRs, SGPRs, segments, the workgroup limit's type, the impossible values, spills.
    # One finding from each step, worked from the rules above: the note says wave32 where the
    # descriptor selects wave64 (and gfx942 runs wave64 only); (5 + 1) x 8 = 48 VGPRs allocated for
    # 600 used, (2 + 1) x 8 = 24 SGPRs for 30; 16384 B of LDS against the descriptor's 32768 B;
    # 600 VGPRs exceed gfx942's 512; a spill count of -1.
    findings: list = []
    resolve(
        GFX942,
        5,
        {
            ".wavefront_size": 32,
            ".vgpr_count": 600,
            ".agpr_count": 0,
            ".sgpr_count": 30,
            ".group_segment_fixed_size": 16384,
            ".max_flat_workgroup_size": "x",
            ".vgpr_spill_count": -1,
        },
        descriptor(GFX942, vgpr_blocks=5, sgpr_blocks=2, lds=32768),
        {},
        findings,
    )
    assert [(f.code, f.message.split(" ")[0]) for f in findings] == [
        ("wave-size-mismatch", "metadata"),
        ("out-of-range", "wave32"),
        ("vgpr-below-used", "descriptor"),
        ("sgpr-below-used", "descriptor"),
        ("lds-mismatch", "metadata"),
        ("metadata-type", ".max_flat_workgroup_size"),
        ("out-of-range", "600"),
        ("out-of-range", ".vgpr_spill_count"),
    ]


def test_kernels_with_equal_inputs_get_the_same_resources_and_each_its_own_findings():
    # A library repeats a few templates thousands of times: the second kernel is answered from
    # the first, with the same numbers and a copy of the same findings in its own list.
    md = {".vgpr_count": 100, ".agpr_count": 64, ".sgpr_count": 30, ".name": "a"}
    kd = descriptor(
        GFX942, vgpr_blocks=15, sgpr_blocks=3, accum_granules=8
    )  # 128 VGPRs and 32 SGPRs allocated, ACCUM_OFFSET 36
    first, first_found = [], []
    r1 = resolve(GFX942, 5, md, kd, {}, first_found)
    r2 = resolve(
        GFX942, 5, {**md, ".name": "b"}, descriptor(GFX942, vgpr_blocks=15, sgpr_blocks=3, accum_granules=8), {}, first
    )
    assert r1 == r2 and (r2.vgprs, r2.agprs, r2.vgprs_allocated, r2.accum_offset) == (100, 64, 128, 36)
    assert first == first_found and first is not first_found
    # 128 allocated for 100 used is past align_up(100, 8) = 104; 100 - 64 = 36 = ACCUM_OFFSET.
    assert [f.code for f in first] == ["vgpr-padding"]


def test_values_python_calls_equal_but_the_note_writes_differently_are_not_shared():
    # True == 1 in Python, but the finding quotes the note as written, so each keeps its own.
    wgp_bit = 1 << 29
    kd = descriptor(GFX1100, wave32=True)
    assert kd.fields["workgroup_processor_mode"] == 0 and wgp_bit  # the descriptor runs CU mode
    messages = []
    for written in (1, True, 1, True):
        _, found = resolved(GFX1100, {".workgroup_processor_mode": written, ".wavefront_size": 32}, kd)
        messages.append(found["wgp-mode-mismatch"].message)
    assert messages == [
        f"metadata .workgroup_processor_mode {w} but the descriptor WGP_MODE bit is 0"
        for w in ("1", "True", "1", "True")
    ]
    r, found = resolved(GFX942, {".vgpr_count": 41.5})
    assert r.vgprs is None and "41.5" in found["metadata-type"].message


def test_a_note_value_that_is_a_list_or_map_is_a_finding_not_a_crash_of_the_shared_answers():
    for written in ([41], {"a": 1}):
        r, found = resolved(GFX942, {".vgpr_count": written})
        assert r.vgprs is None and found["metadata-type"].message.startswith(f".vgpr_count is {written!r}")
