"""The 64-byte kernel descriptor (CO v3+), declared once and decoded field by field.

The byte layout is the same on every target; what the bits of ``compute_pgm_rsrc1/2/3`` mean
depends on the generation, which the targets table names as ``descriptor_layout``. Field names
follow the ``.amdhsa_*`` directive names that ``llvm-objdump`` prints for a ``.kd`` symbol, so a
user can compare the two directly (docs/code-object-format.md §3).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..binary import Layout, need_bytes
from ..caches import cached, register
from ..errors import Origin
from ..targets import DESCRIPTOR_LAYOUTS, Target

KERNEL_DESCRIPTOR = Layout(
    "KernelDescriptor",
    [
        ("group_segment_fixed_size", "I"),
        ("private_segment_fixed_size", "I"),
        ("kernarg_size", "I"),
        ("reserved0", "4s"),
        ("kernel_code_entry_byte_offset", "q"),
        ("reserved1", "20s"),
        ("compute_pgm_rsrc3", "I"),
        ("compute_pgm_rsrc1", "I"),
        ("compute_pgm_rsrc2", "I"),
        ("kernel_code_properties", "H"),
        ("kernarg_preload", "H"),
        ("reserved3", "4s"),
    ],
)
assert KERNEL_DESCRIPTOR.size == 64

ALL = frozenset(DESCRIPTOR_LAYOUTS)
GFX10_PLUS = frozenset({"gfx10", "gfx11", "gfx12", "gfx1250", "gfx13"})
UP_TO_GFX11 = ALL - {"gfx12", "gfx1250", "gfx13"}
GFX12_PLUS = frozenset({"gfx12", "gfx1250", "gfx13"})
# gfx13 (gfx1310, LLVM 23+): the GFX12+ fields, plus what Triton 3.9's LLVM 24.0.0git assembler
# encodes (measured with tools/triton_llc.py): a 6-bit USER_SGPR_COUNT as on gfx1250, NAMED_BAR_CNT
# in RSRC3 bits 14-16, and WGP mode. Bits whose gfx13 meaning no source gives (RSRC1 bit 27, RSRC3
# bits 17-21) stay undeclared, so a kernel setting them is reported, not decoded by guess.
SIX_BIT_USER_SGPRS = frozenset({"gfx1250", "gfx13"})


@dataclass(frozen=True, slots=True)
class BitField:
    name: str
    word: str
    lo: int
    hi: int
    layouts: frozenset[str] = ALL


def _f(name: str, word: str, lo: int, hi: int | None = None, layouts: Iterable[str] = ALL) -> BitField:
    return BitField(name, word, lo, lo if hi is None else hi, frozenset(layouts))


def _flags(word: str, first_bit: int, *names: str) -> tuple[BitField, ...]:
    """One-bit fields on consecutive bits from ``first_bit``, meaning the same on every generation."""
    return tuple(_f(name, word, bit) for bit, name in enumerate(names, first_bit))


R1, R2, R3 = "compute_pgm_rsrc1", "compute_pgm_rsrc2", "compute_pgm_rsrc3"
KCP, PRELOAD = "kernel_code_properties", "kernarg_preload"

# Every named bit range, with the generations in which it has that meaning.
BIT_FIELDS: tuple[BitField, ...] = (
    _f("granulated_workitem_vgpr_count", R1, 0, 5),
    _f("granulated_wavefront_sgpr_count", R1, 6, 9),
    _f("priority", R1, 10, 11),
    _f("float_round_mode_32", R1, 12, 13),
    _f("float_round_mode_16_64", R1, 14, 15),
    _f("float_denorm_mode_32", R1, 16, 17),
    _f("float_denorm_mode_16_64", R1, 18, 19),
    _f("priv", R1, 20),
    _f("dx10_clamp", R1, 21, layouts=UP_TO_GFX11),
    _f("round_robin_scheduling", R1, 21, layouts=GFX12_PLUS),
    _f("debug_mode", R1, 22),
    _f("ieee_mode", R1, 23, layouts=UP_TO_GFX11),
    _f("disable_perf", R1, 23, layouts=GFX12_PLUS),
    _f("bulky", R1, 24),
    _f("cdbg_user", R1, 25),
    _f("fp16_overflow", R1, 26),
    _f("flat_scratch_is_nv", R1, 27, layouts={"gfx1250"}),
    _f("workgroup_processor_mode", R1, 29, layouts={"gfx10", "gfx11", "gfx12", "gfx13"}),
    _f("memory_ordered", R1, 30, layouts=GFX10_PLUS),
    _f("forward_progress", R1, 31, layouts=GFX10_PLUS),
    _f("enable_private_segment", R2, 0),
    _f("user_sgpr_count", R2, 1, 5, layouts=ALL - SIX_BIT_USER_SGPRS),
    _f("user_sgpr_count", R2, 1, 6, layouts=SIX_BIT_USER_SGPRS),
    _f("enable_trap_handler", R2, 6, layouts=UP_TO_GFX11),
    _f("enable_dynamic_vgpr", R2, 6, layouts={"gfx12"}),
    *_flags(
        R2,
        7,
        "system_sgpr_workgroup_id_x",
        "system_sgpr_workgroup_id_y",
        "system_sgpr_workgroup_id_z",
        "system_sgpr_workgroup_info",
    ),
    _f("system_vgpr_workitem_id", R2, 11, 12),
    *_flags(R2, 13, "enable_exception_address_watch", "enable_exception_memory"),
    _f("granulated_lds_size", R2, 15, 23),
    *_flags(
        R2,
        24,
        "exception_fp_ieee_invalid_op",
        "exception_fp_denorm_src",
        "exception_fp_ieee_div_zero",
        "exception_fp_ieee_overflow",
        "exception_fp_ieee_underflow",
        "exception_fp_ieee_inexact",
        "exception_int_div_zero",
    ),
    _f("accum_offset_granules", R3, 0, 5, layouts={"gfx90a"}),
    _f("tg_split", R3, 16, layouts={"gfx90a"}),
    _f("shared_vgpr_count", R3, 0, 3, layouts={"gfx10", "gfx11"}),
    _f("inst_pref_size", R3, 4, 9, layouts={"gfx11"}),
    _f("inst_pref_size", R3, 4, 11, layouts=GFX12_PLUS),
    _f("trap_on_start", R3, 10, layouts={"gfx11"}),
    _f("trap_on_end", R3, 11, layouts={"gfx11"}),
    _f("glg_en", R3, 13, layouts=GFX12_PLUS),
    _f("named_barrier_count", R3, 14, 16, layouts={"gfx1250", "gfx13"}),
    _f("enable_dynamic_vgpr", R3, 17, layouts={"gfx1250"}),
    _f("tcp_split", R3, 18, 20, layouts={"gfx1250"}),
    _f("enable_didt_throttle", R3, 21, layouts={"gfx1250"}),
    _f("image_op", R3, 31, layouts={"gfx11", "gfx12", "gfx1250", "gfx13"}),
    *_flags(
        KCP,
        0,
        "user_sgpr_private_segment_buffer",
        "user_sgpr_dispatch_ptr",
        "user_sgpr_queue_ptr",
        "user_sgpr_kernarg_segment_ptr",
        "user_sgpr_dispatch_id",
        "user_sgpr_flat_scratch_init",
        "user_sgpr_private_segment_size",
    ),
    _f("wavefront_size32", KCP, 10, layouts=GFX10_PLUS),
    _f("uses_dynamic_stack", KCP, 11),
    _f("user_sgpr_kernarg_preload_length", PRELOAD, 0, 6, layouts=ALL - {"gfx6"}),
    _f("user_sgpr_kernarg_preload_offset", PRELOAD, 7, 15, layouts=ALL - {"gfx6"}),
)

RSRC_WORDS = (R1, R2, R3, KCP, PRELOAD)  # the words the bit fields live in, in this order

# Fields that keep their place in the word but must be zero on some generations: LLVM's
# disassembler refuses such a descriptor ("reserved bits in range (9:6) set, must be zero on
# gfx10+"), and tensorflow-rocm 2.14 ships about 25,000 gfx1030/gfx1100 kernels that set them.
# (field, layouts where it must be zero, why)
MUST_BE_ZERO = (("granulated_wavefront_sgpr_count", GFX10_PLUS, "SGPRs are not allocated per wave from gfx10 on"),)


def _fields_by_layout() -> dict[str, tuple[tuple[BitField, ...], dict[str, int]]]:
    """Per layout: the applicable fields, and the mask of defined bits in each word."""
    out: dict[str, tuple[tuple[BitField, ...], dict[str, int]]] = {}
    for layout in ALL:
        fields = tuple(f for f in BIT_FIELDS if layout in f.layouts)
        masks = {w: 0 for w in RSRC_WORDS}
        for f in fields:
            masks[f.word] |= ((1 << (f.hi - f.lo + 1)) - 1) << f.lo
        out[layout] = (fields, masks)
    return out


_BY_LAYOUT = _fields_by_layout()
# Fields that hold a count in "granules"; the decoded value is what the directives print.
SGPR_ENCODE_GRANULE = 8  # LLVM writes ceil(n/8)-1 on every generation (docs/code-object-format.md §3.3)


@dataclass(slots=True)
class Descriptor:
    """One decoded kernel descriptor."""

    offset: int  # byte offset of the descriptor inside the code object
    # The raw record (sizes, entry offset, rsrc words), all ints; a v2 amd_kernel_code_t adds its
    # version pair and a wave size that may be None.
    words: dict[str, Any]
    fields: dict[str, int]  # named bit fields and decoded directive values
    wave_size: int | None  # from ENABLE_WAVEFRONT_SIZE32 (gfx10+), else 64
    problems: list[str] = field(default_factory=list)  # reserved bits set, undecodable parts

    def as_dict(self) -> dict[str, Any]:
        return {"offset": self.offset, **self.words, **self.fields}


def decode_descriptor(data: bytes, offset: int, target: Target | None, origin: Origin) -> Descriptor:
    """Decode the v3+ descriptor at ``offset``; without a known target only the raw words decode."""
    need_bytes(data, offset, KERNEL_DESCRIPTOR.size, origin, "kernel descriptor")
    raw = KERNEL_DESCRIPTOR.struct.unpack_from(data, offset)
    words = dict(zip(WORDS, _WORD_VALUES(raw), strict=True))
    problems: list[str] = []
    if _RESERVED_VALUES(raw) != _RESERVED_ZERO:
        problems.append("descriptor reserved bytes (12-15, 24-43 or 60-63) are not zero")
    return _decode_words(offset, words, target, problems)


# The raw words every descriptor form is described by, named as in the v3+ record.
WORDS = (
    "group_segment_fixed_size",
    "private_segment_fixed_size",
    "kernarg_size",
    "kernel_code_entry_byte_offset",
    R1,
    R2,
    R3,
    KCP,
    PRELOAD,
)
# Positions in KERNEL_DESCRIPTOR's record of the words, and of the reserved bytes (all zero).
_WORD_VALUES = operator.itemgetter(*(KERNEL_DESCRIPTOR.fields.index(w) for w in WORDS))
_RESERVED = ("reserved0", "reserved1", "reserved3")
_RESERVED_VALUES = operator.itemgetter(*(KERNEL_DESCRIPTOR.fields.index(r) for r in _RESERVED))
_RESERVED_ZERO = _RESERVED_VALUES(KERNEL_DESCRIPTOR.struct.unpack(bytes(KERNEL_DESCRIPTOR.size)))


# CO v2 kept a 256-byte amd_kernel_code_t in front of the kernel's code (docs/code-object-format.md
# §3.4). Only the fields that matter for resources are declared; the rest of the record is skipped.
AMD_KERNEL_CODE = Layout(
    "AmdKernelCode",
    [
        ("version_major", "I"),
        ("version_minor", "I"),
        ("machine_kind", "H"),
        ("machine_version_major", "H"),
        ("machine_version_minor", "H"),
        ("machine_version_stepping", "H"),
        ("kernel_code_entry_byte_offset", "q"),
        ("kernel_code_prefetch_byte_offset", "q"),
        ("kernel_code_prefetch_byte_size", "Q"),
        ("max_scratch_backing_memory_byte_size", "Q"),
        ("compute_pgm_rsrc1", "I"),
        ("compute_pgm_rsrc2", "I"),
        ("code_properties", "I"),
        ("workitem_private_segment_byte_size", "I"),
        ("workgroup_group_segment_byte_size", "I"),
        ("gds_segment_byte_size", "I"),
        ("kernarg_segment_byte_size", "Q"),
        ("workgroup_fbarrier_count", "I"),
        ("wavefront_sgpr_count", "H"),
        ("workitem_vgpr_count", "H"),
        ("debug_fields", "12s"),
        ("kernarg_segment_alignment", "B"),
        ("group_segment_alignment", "B"),
        ("private_segment_alignment", "B"),
        ("wavefront_size_log2", "B"),
        ("call_convention", "i"),
        ("reserved", "12s"),
        ("runtime_loader_kernel_symbol", "Q"),
        ("control_directives", "128s"),
    ],
)
assert AMD_KERNEL_CODE.size == 256
# v3+ word name -> the amd_kernel_code_t field that holds it; R3, KCP and PRELOAD have no twin.
AMD_KERNEL_CODE_WORDS = {
    "group_segment_fixed_size": "workgroup_group_segment_byte_size",
    "private_segment_fixed_size": "workitem_private_segment_byte_size",
    "kernarg_size": "kernarg_segment_byte_size",
    "kernel_code_entry_byte_offset": "kernel_code_entry_byte_offset",
    R1: "compute_pgm_rsrc1",
    R2: "compute_pgm_rsrc2",
}


def decode_amd_kernel_code(data: bytes, offset: int, target: Target | None, origin: Origin) -> Descriptor:
    """Decode a CO v2 amd_kernel_code_t into the same field names as a v3+ descriptor."""
    raw = AMD_KERNEL_CODE.read(data, offset, origin, "amd_kernel_code_t")
    words = {name: getattr(raw, v2_name) for name, v2_name in AMD_KERNEL_CODE_WORDS.items()}
    words.update(
        {
            R3: 0,
            # Bits 0-6 of code_properties match kernel_code_properties; the rest differ in v2.
            KCP: raw.code_properties & 0x7F,
            PRELOAD: 0,
            "amd_kernel_code_version": (raw.version_major, raw.version_minor),
            "code_properties": raw.code_properties,
            "wavefront_sgpr_count": raw.wavefront_sgpr_count,
            "workitem_vgpr_count": raw.workitem_vgpr_count,
            "wavefront_size": 1 << raw.wavefront_size_log2 if raw.wavefront_size_log2 < 16 else None,
        }
    )
    problems: list[str] = []
    if raw.version_major != 1:
        problems.append(f"amd_kernel_code_t version {raw.version_major}.{raw.version_minor} is not 1.x")
    desc = _decode_words(offset, words, target, problems)
    if words["wavefront_size"] in (32, 64):
        desc.wave_size = words["wavefront_size"]
    return desc


class _CompiledLayout:
    """One layout's bit fields as a generated function: every field of the five words decoded
    in one dict display of shifts and masks (built from BIT_FIELDS, not written by hand), with
    the stray-bit masks and the must-be-zero fields that apply to it."""

    __slots__ = ("extract", "must_be_zero", "stray_masks")
    extract: Callable[..., dict[str, int]]  # (the five words) -> {field: value}
    stray_masks: tuple[tuple[str, int], ...]  # (word, bits no field of the layout defines)
    must_be_zero: tuple[tuple[str, BitField, str], ...]  # (field, its bit range, why)

    def __init__(self, layout: str) -> None:
        fields, masks = _BY_LAYOUT[layout]
        position = {word: i for i, word in enumerate(RSRC_WORDS)}
        items = []
        for f in fields:
            word = f"w{position[f.word]}"
            shifted = f"({word} >> {f.lo})" if f.lo else word
            items.append(f"{f.name!r}: {shifted} & {(1 << (f.hi - f.lo + 1)) - 1:#x}")
        source = (
            f"def extract({', '.join(f'w{i}' for i in range(len(RSRC_WORDS)))}):\n    return {{{', '.join(items)}}}\n"
        )
        namespace: dict[str, Any] = {}
        code = compile(source, f"<descriptor fields of {layout}>", "exec")
        exec(code, namespace)  # the source is generated from BIT_FIELDS, never from input
        self.extract = namespace["extract"]
        self.stray_masks = tuple((word, ~masks[word]) for word in RSRC_WORDS)
        self.must_be_zero = tuple(
            (name, next(f for f in fields if f.name == name), why)
            for name, layouts, why in MUST_BE_ZERO
            if layout in layouts and any(f.name == name for f in fields)
        )


_COMPILED: dict[str, _CompiledLayout] = {}  # one per layout name of targets.toml: bounded by the table
register(f"{__name__}._COMPILED", lambda: _COMPILED.clear())
_RSRC_VALUES = operator.itemgetter(*RSRC_WORDS)


def _compiled(layout: str) -> _CompiledLayout:
    compiled = _COMPILED.get(layout)
    if compiled is None:
        compiled = _COMPILED[layout] = _CompiledLayout(layout)
    return compiled


def _decode_words(offset: int, words: dict[str, Any], target: Target | None, problems: list[str]) -> Descriptor:
    if target is None:
        return Descriptor(offset, words, {}, None, [*problems, "processor unknown: bit fields not decoded"])
    fields, wave, found = _decode_fields(target, _RSRC_VALUES(words))
    if found:
        problems.extend(found)
    return Descriptor(offset, words, dict(fields), wave, problems)


# A library repeats the same few hundred descriptor words across thousands of kernels, so each
# combination of target and words is decoded once (the fields are copied by the caller).
@cached(maxsize=1024)
def _decode_fields(target: Target, rsrc: tuple[int, ...]) -> tuple[dict[str, int], int, tuple[str, ...]]:
    """(fields, wave size, problems) of the words ``rsrc`` (in RSRC_WORDS order) on ``target``."""
    layout = target.descriptor_layout
    compiled = _compiled(layout)
    fields = compiled.extract(*rsrc)
    problems = []
    for value, (word, outside) in zip(rsrc, compiled.stray_masks, strict=True):
        stray = value & outside
        if stray:
            problems.append(f"{word} has reserved bits {stray:#x} set for {layout}")
    for name, f, why in compiled.must_be_zero:
        if fields[name]:
            problems.append(
                f"{f.word} bits {f.hi}:{f.lo} ({name.upper()}) are reserved on "
                f"{layout} and must be zero ({why}), but hold "
                f"{fields[name]}; llvm-objdump refuses this descriptor"
            )

    wave = 32 if fields.get("wavefront_size32") else 64
    if wave in target.wave_sizes:
        fields["next_free_vgpr"] = (fields["granulated_workitem_vgpr_count"] + 1) * target.vgpr_encode_granule[wave]
    else:
        # The VGPR granule depends on the wave size, and the table has none for a wave the
        # processor cannot run (llvm-objdump-22 decodes gfx1250 wave64 with a granule of 8,
        # wave32's being 16): the allocation is left undecoded rather than guessed.
        problems.append(
            f"descriptor asks for wave{wave}, which {target.name} does not support: its VGPR allocation is not decoded"
        )
    fields["next_free_sgpr"] = (fields["granulated_wavefront_sgpr_count"] + 1) * SGPR_ENCODE_GRANULE
    if "accum_offset_granules" in fields:
        fields["accum_offset"] = (fields["accum_offset_granules"] + 1) * 4
    return fields, wave, tuple(problems)
