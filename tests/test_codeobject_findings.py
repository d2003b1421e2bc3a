"""Every finding resource resolution can raise: its code, its severity and the numbers it quotes.

Findings are part of the JSON contract (``code`` is what scripts match on; ``severity`` says
whether a value is impossible (error), two views disagree (warning) or the reader only notes how
it split a count (info)). Each case feeds resolve() views built here and states every finding it
must produce, with the numbers worked out by hand from the rules (docs/code-object-format.md §2.3/§3.3,
AMDGPUUsage.rst "Kernel Descriptor"):
- the descriptor's VGPR field holds ceil(n / granule) - 1 (granule 8 on gfx90a/gfx942, 4 on
  gfx908 wave64), its SGPR field ceil(n / 8) - 1 in 4 bits (so at most 16 x 8 = 128 SGPRs);
- ACCUM_OFFSET (rsrc3 bits 0-5 on gfx90a+) is (field + 1) x 4, the unified total is
  alignTo(arch, 4) + agpr;
- gfx942 addresses 512 VGPRs and 256 AGPRs, 64 KiB of LDS per workgroup; no block exceeds 1024.
"""

from __future__ import annotations

import struct

import pytest

from amdocc.codeobject.descriptor import decode_descriptor
from amdocc.codeobject.resources import note_view, resolve
from amdocc.errors import Origin
from amdocc.targets import get_target

GFX942, GFX1100 = get_target("gfx942"), get_target("gfx1100")
WGP_MODE = 1 << 29  # compute_pgm_rsrc1 bit 29 (gfx10+)
WAVE32, DYNAMIC_STACK = 1 << 10, 1 << 11  # kernel_code_properties bits 10 and 11
ERR, WARN, NOTE = "error", "warning", "info"


def kd(target, *, rsrc1=0, rsrc3=0, kcp=0, lds=0, scratch=0, kernarg=0):
    """A 64-byte descriptor (AMDGPUUsage.rst layout) with the given words, the rest zero."""
    data = struct.pack(
        "<III4sq20sIIIHH4s", lds, scratch, kernarg, bytes(4), 0, bytes(20), rsrc3, rsrc1, 0, kcp, 0, bytes(4)
    )
    return decode_descriptor(data, 0, target, Origin("built"))


def findings(target, metadata, descriptor=None, symbols=None, co_version=5):
    found: list = []
    resolve(target, co_version, metadata, descriptor, symbols or {}, found)
    return sorted((f.code, f.severity, f.message) for f in found)


NO_AGPR_COUNT = (
    "agpr-count-missing",
    WARN,
    "metadata has no .agpr_count and nothing else says how the registers split between VGPRs and AGPRs",
)


CASES = {
    "wave from both views": (
        GFX1100,
        {".wavefront_size": 64},
        kd(GFX1100, kcp=WAVE32),
        [("wave-size-mismatch", WARN, "metadata .wavefront_size 64 but the descriptor selects wave32")],
    ),
    "a wave the processor lacks": (
        GFX942,
        {".wavefront_size": 32},
        None,
        [NO_AGPR_COUNT, ("out-of-range", ERR, "wave32 is not supported by gfx942")],
    ),
    # The descriptor (gfx9 layout) selects wave64; wave32's granule gfx942 has none, so its
    # VGPR field 6 -> 56 allocated is not judged as padding; below the count it still is.
    "a wave the processor lacks, with an allocation": (
        GFX942,
        {".wavefront_size": 32, ".vgpr_count": 41, ".agpr_count": 0},
        kd(GFX942, rsrc1=6),
        [
            ("out-of-range", ERR, "wave32 is not supported by gfx942"),
            ("wave-size-mismatch", WARN, "metadata .wavefront_size 32 but the descriptor selects wave64"),
        ],
    ),
    "a wave the processor lacks, allocated below the count": (
        GFX942,
        {".wavefront_size": 32, ".vgpr_count": 41, ".agpr_count": 0},
        kd(GFX942, rsrc1=4),
        [
            ("out-of-range", ERR, "wave32 is not supported by gfx942"),
            ("vgpr-below-used", WARN, "descriptor allocates 40 VGPRs but 41 are used"),
            ("wave-size-mismatch", WARN, "metadata .wavefront_size 32 but the descriptor selects wave64"),
        ],
    ),
    "WGP mode from both views": (
        GFX1100,
        {".workgroup_processor_mode": 0, ".wavefront_size": 32},
        kd(GFX1100, rsrc1=WGP_MODE, kcp=WAVE32),
        [("wgp-mode-mismatch", WARN, "metadata .workgroup_processor_mode 0 but the descriptor WGP_MODE bit is 1")],
    ),
    # alignTo(41, 4) + 64 = 108 from the symbols; the note says 100.
    "vgpr_count against the resource symbols": (
        GFX942,
        {".vgpr_count": 100},
        None,
        [
            ("agpr-count-missing", NOTE, "metadata has no .agpr_count; 64 AGPRs from the num_agpr resource symbol"),
            (
                "resource-symbol-mismatch",
                WARN,
                ".vgpr_count 100 but the 41 VGPRs and 64 AGPRs of the resource symbols give 108",
            ),
        ],
    ),
    # ACCUM_OFFSET field 10 -> 44; VGPR field 13 -> 112 allocated >= alignTo(108, 8) = 112.
    "ACCUM_OFFSET splits the total": (
        GFX942,
        {".vgpr_count": 108},
        kd(GFX942, rsrc1=13, rsrc3=10),
        [
            (
                "agpr-count-missing",
                NOTE,
                "metadata has no .agpr_count; the descriptor's ACCUM_OFFSET 44 splits .vgpr_count 108 "
                "into 44 arch VGPRs and 64 AGPRs",
            )
        ],
    ),
    "ACCUM_OFFSET splits the allocation": (
        GFX942,
        {".kernarg_segment_size": 0},
        kd(GFX942, rsrc1=13, rsrc3=10),
        [
            (
                "agpr-count-missing",
                NOTE,
                "metadata has no .agpr_count; the descriptor's ACCUM_OFFSET 44 splits an allocation of 112 "
                "into 44 arch VGPRs and 68 AGPRs",
            )
        ],
    ),
    "agpr_count against ACCUM_OFFSET": (
        GFX942,
        {".vgpr_count": 108, ".agpr_count": 60},
        kd(GFX942, rsrc1=13, rsrc3=10),
        [("agpr-split-mismatch", WARN, "ACCUM_OFFSET 44 but .vgpr_count 108 - .agpr_count 60 = 48")],
    ),
    # VGPR field 4 -> 40 allocated < 41 used; field 6 -> 56 > alignTo(41, 8) = 48.
    "VGPRs allocated below the count": (
        GFX942,
        {".vgpr_count": 41, ".agpr_count": 0},
        kd(GFX942, rsrc1=4),
        [("vgpr-below-used", WARN, "descriptor allocates 40 VGPRs but 41 are used")],
    ),
    "VGPRs allocated above the granule": (
        GFX942,
        {".vgpr_count": 41, ".agpr_count": 0},
        kd(GFX942, rsrc1=6),
        [
            (
                "vgpr-padding",
                NOTE,
                "descriptor allocates 56 VGPRs for 41 used (LLVM pads the allocation up to the occupancy "
                "that LDS or workgroup size already fix)",
            )
        ],
    ),
    # SGPR field 2 -> 24 < 30; field 4 -> 40 > alignTo(30, 8) = 32. VGPR field 0 -> 8 >= alignTo(8, 8).
    "SGPRs allocated below the count": (
        GFX942,
        {".sgpr_count": 30, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942, rsrc1=2 << 6),
        [("sgpr-below-used", WARN, "descriptor allocates 24 SGPRs but .sgpr_count is 30")],
    ),
    "SGPRs allocated above the granule": (
        GFX942,
        {".sgpr_count": 30, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942, rsrc1=4 << 6),
        [("sgpr-padding", NOTE, "descriptor allocates 40 SGPRs for .sgpr_count 30")],
    ),
    "segment sizes from both views": (
        GFX942,
        {".group_segment_fixed_size": 16384, ".private_segment_fixed_size": 16, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942, lds=32768, scratch=32),
        [
            (
                "lds-mismatch",
                WARN,
                "metadata static LDS 16384 B but the descriptor says 32768 B (HIP uses the metadata value)",
            ),
            ("scratch-mismatch", WARN, "metadata scratch 16 B per work-item but the descriptor says 32 B"),
        ],
    ),
    "kernarg size the descriptor left zero": (
        GFX942,
        {".kernarg_segment_size": 512, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942, kernarg=0),
        [("kernarg-size-mismatch", NOTE, "metadata .kernarg_segment_size 512 but descriptor kernarg_size 0")],
    ),
    "kernarg size from both views": (
        GFX942,
        {".kernarg_segment_size": 512, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942, kernarg=256),
        [("kernarg-size-mismatch", WARN, "metadata .kernarg_segment_size 512 but descriptor kernarg_size 256")],
    ),
    "dynamic stack from both views": (
        GFX942,
        {".uses_dynamic_stack": True, ".vgpr_count": 8, ".agpr_count": 0},
        kd(GFX942),
        [("dynamic-stack-mismatch", WARN, "metadata .uses_dynamic_stack True but descriptor says 0")],
    ),
    "too many VGPRs": (
        GFX942,
        {".vgpr_count": 513, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, "513 VGPRs exceed the 512 a gfx942 wave can address")],
    ),
    "too many AGPRs": (
        GFX942,
        {".vgpr_count": 300, ".agpr_count": 257},
        None,
        [("out-of-range", ERR, "257 AGPRs exceed the 256 gfx942 has")],
    ),
    "too much LDS": (
        GFX942,
        {".group_segment_fixed_size": 65537, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, "static LDS 65537 B exceeds the 65536 B a gfx942 workgroup may use")],
    ),
    "too much LDS in WGP mode": (
        GFX1100,
        {".group_segment_fixed_size": 65537, ".wavefront_size": 32},
        kd(GFX1100, rsrc1=WGP_MODE, kcp=WAVE32, lds=65537),
        [("out-of-range", ERR, "static LDS 65537 B exceeds the 65536 B a gfx1100 workgroup may use in WGP mode")],
    ),
    "too many SGPRs": (
        GFX942,
        {".sgpr_count": 129, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, "129 SGPRs exceed the 128 a descriptor can allocate")],
    ),
    "a block above 1024": (
        GFX942,
        {".max_flat_workgroup_size": 1025, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, ".max_flat_workgroup_size 1025 is outside 1..1024")],
    ),
    "an empty block": (
        GFX942,
        {".max_flat_workgroup_size": 0, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, ".max_flat_workgroup_size 0 is outside 1..1024")],
    ),
    "a count that is not an integer": (
        GFX942,
        {".sgpr_count": "8", ".agpr_count": 0},
        None,
        [("metadata-type", ERR, ".sgpr_count is '8', not an integer")],
    ),
    "a count that is a boolean": (
        GFX942,
        {".sgpr_count": True, ".agpr_count": 0},
        None,
        [("metadata-type", ERR, ".sgpr_count is True, not an integer")],
    ),
    "a negative count": (
        GFX942,
        {".sgpr_count": -1, ".agpr_count": 0},
        None,
        [("out-of-range", ERR, ".sgpr_count is negative (-1)")],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_each_finding_of_resolution_with_its_severity_and_numbers(case):
    target, metadata, descriptor, expected = CASES[case]
    assert findings(target, metadata, descriptor, _symbols(case)) == sorted(expected)


def _symbols(case):
    return {"num_vgpr": 41, "num_agpr": 64} if case == "vgpr_count against the resource symbols" else None


def test_a_dynamic_stack_disagreement_before_code_object_v5_is_not_a_finding():
    # .uses_dynamic_stack came with code-object v5 (AMDGPUUsage.rst); a v4 note cannot disagree.
    metadata = {".uses_dynamic_stack": True, ".vgpr_count": 8, ".agpr_count": 0}
    assert findings(GFX942, metadata, kd(GFX942), co_version=4) == []
    assert findings(GFX942, metadata, kd(GFX942, kcp=DYNAMIC_STACK)) == []


@pytest.mark.parametrize("length", [79, 80, 81, 200])
def test_a_quoted_value_is_cut_only_beyond_80_characters(length):
    # A string whose repr is `length` characters long (the quotes count): up to 80 it is quoted
    # whole; longer, its first 77 characters and what was cut.
    value = "a" * (length - 2)
    (found,) = findings(GFX942, {".sgpr_count": value, ".agpr_count": 0})
    shown = repr(value) if length <= 80 else f"{repr(value)[:77]}... (str, {length} characters)"
    assert found == ("metadata-type", ERR, f".sgpr_count is {shown}, not an integer")


def test_a_processor_without_agprs_has_none_by_the_target():
    # gfx906 and gfx1100 have no accumulation registers (AGPRs came with gfx908's MFMA).
    for target in (get_target("gfx906"), GFX1100):
        r = resolve(target, 5, {".vgpr_count": 10}, None, {}, [])
        assert (r.agprs, r.agprs_source, r.arch_vgprs, r.arch_vgprs_source) == (0, "target", 10, "metadata")


def test_a_value_nested_too_deep_to_print_is_named_by_its_type():
    value: list = []
    for _ in range(20000):  # far past the interpreter's recursion limit for repr
        value = [value]
    (found,) = findings(GFX942, {".sgpr_count": value, ".agpr_count": 0})
    assert found == ("metadata-type", ERR, ".sgpr_count is a list nested too deep to show, not an integer")


def test_v2_code_props_under_their_v3_note_names():
    # AMDGPUUsage.rst "Code Object V2 Metadata" (CodeProps) against "Code Object V3 Metadata"
    # (kernel keys): the same quantities under their v3 names; the rest of CodeProps is not read.
    props = {
        "KernargSegmentSize": 1,
        "KernargSegmentAlign": 2,
        "GroupSegmentFixedSize": 3,
        "PrivateSegmentFixedSize": 4,
        "WavefrontSize": 5,
        "NumSGPRs": 6,
        "NumVGPRs": 7,
        "MaxFlatWorkGroupSize": 8,
        "NumSpilledSGPRs": 9,
        "NumSpilledVGPRs": 10,
        "IsDynamicCallStack": 11,
        "IsXNACKEnabled": 12,
    }
    metadata = {"Name": "k", "SymbolName": "k@kd", "CodeProps": props}
    assert note_view(metadata, 2) == {
        ".name": "k",
        ".symbol": "k@kd",
        ".kernarg_segment_size": 1,
        ".kernarg_segment_align": 2,
        ".group_segment_fixed_size": 3,
        ".private_segment_fixed_size": 4,
        ".wavefront_size": 5,
        ".sgpr_count": 6,
        ".vgpr_count": 7,
        ".max_flat_workgroup_size": 8,
        ".sgpr_spill_count": 9,
        ".vgpr_spill_count": 10,
        ".uses_dynamic_stack": 11,
    }
    assert note_view({"Name": "k", "CodeProps": "not a map"}, 2) == {".name": "k", ".symbol": None}
    assert note_view(metadata, 3) is metadata  # v3 and later already use the note names


def test_without_a_processor_an_allocation_is_compared_but_no_padding_is_judged():
    # resolve() told no processor (the reader's unknown-processor case passes an undecoded
    # descriptor; here the descriptor was decoded for gfx942): no granule, so no padding claim.
    assert findings(None, {".vgpr_count": 41, ".wavefront_size": 64}, kd(GFX942, rsrc1=6)) == []
    assert findings(None, {".vgpr_count": 41, ".wavefront_size": 64}, kd(GFX942, rsrc1=4)) == [
        ("vgpr-below-used", WARN, "descriptor allocates 40 VGPRs but 41 are used")
    ]


def test_an_int_subclass_is_read_by_its_value():
    # bool is the one int subclass refused; any other (an IntEnum, say) counts as its value.
    class Count(int):
        pass

    for value in (0, 7):
        r = resolve(GFX942, 5, {".sgpr_count": Count(value), ".agpr_count": 0}, None, {}, found := [])
        assert (r.sgprs, found) == (value, [])
    r = resolve(GFX942, 5, {".sgpr_count": Count(-1), ".agpr_count": 0}, None, {}, found := [])
    assert r.sgprs is None and [(f.code, f.message) for f in found] == [
        ("out-of-range", ".sgpr_count is negative (-1)")
    ]


def test_an_impossible_split_of_the_total_is_an_error():
    # .vgpr_count 400 with ACCUM_OFFSET 44 (field 10): 400 - 44 = 356 AGPRs, past gfx942's 256.
    found = findings(GFX942, {".vgpr_count": 400}, kd(GFX942, rsrc1=49, rsrc3=10))
    assert ("out-of-range", ERR, "356 AGPRs exceed the 256 gfx942 has") in found
    # Bounded by an allocation instead, the count is capped: (63 + 1) x 8 = 512 - 44 = 468 -> 256.
    r = resolve(GFX942, 5, {".sgpr_count": 8}, kd(GFX942, rsrc1=63, rsrc3=10), {}, found := [])
    assert (r.agprs, r.agprs_source) == (256, "descriptor") and "out-of-range" not in [f.code for f in found]


def test_sgprs_and_the_dynamic_stack_fall_back_on_the_descriptor():
    # No .sgpr_count: gfx942's SGPR field 3 allocates (3 + 1) x 8 = 32; KERNEL_CODE_PROPERTIES
    # bit 11 is USES_DYNAMIC_STACK.
    r = resolve(GFX942, 5, {".agpr_count": 0}, kd(GFX942, rsrc1=3 << 6, kcp=DYNAMIC_STACK), {}, [])
    assert (r.sgprs, r.sgprs_source, r.sgprs_allocated, r.uses_dynamic_stack) == (32, "descriptor", 32, True)
    r = resolve(GFX942, 5, {".agpr_count": 0}, kd(GFX942), {}, [])
    assert r.uses_dynamic_stack is False
    r = resolve(GFX942, 5, {".agpr_count": 0, ".uses_dynamic_stack": 1}, kd(GFX942), {}, [])
    assert r.uses_dynamic_stack is True
    assert resolve(GFX942, 5, {".agpr_count": 0}, None, {}, []).uses_dynamic_stack is None
