"""Resolve a kernel's resources from metadata, descriptor and resource symbols, keeping both views.

Rules (docs/code-object-format.md §2.3 and §3.3):
- "used" counts come from the metadata note, or from LLVM's ``<fn>.num_*`` symbols when the note
  lacks them; "allocated" counts come from the descriptor.
- ``.vgpr_count`` is already the unified total on gfx90a/gfx94x/gfx950 and max(arch, agpr) on
  gfx908; ``.agpr_count`` is reported beside it and never added to it.
- Without ``.agpr_count`` (hand-written asm) the arch/AGPR split of a unified file comes from the
  descriptor's ACCUM_OFFSET, and that is recorded as a finding.
Every disagreement between the views becomes a finding; nothing is silently corrected.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..binary import align_up
from ..caches import Memo
from ..numbers import is_whole
from ..targets import MAX_WORKGROUP_SIZE, Target
from .descriptor import RSRC_WORDS, SGPR_ENCODE_GRANULE, Descriptor
from .model import ERROR, INFO, WARNING, Finding, Resources

# CO v2 YAML CodeProps → the v3 note names used everywhere else.
V2_CODE_PROPS = {
    "KernargSegmentSize": ".kernarg_segment_size",
    "KernargSegmentAlign": ".kernarg_segment_align",
    "GroupSegmentFixedSize": ".group_segment_fixed_size",
    "PrivateSegmentFixedSize": ".private_segment_fixed_size",
    "WavefrontSize": ".wavefront_size",
    "NumSGPRs": ".sgpr_count",
    "NumVGPRs": ".vgpr_count",
    "MaxFlatWorkGroupSize": ".max_flat_workgroup_size",
    "NumSpilledSGPRs": ".sgpr_spill_count",
    "NumSpilledVGPRs": ".vgpr_spill_count",
    "IsDynamicCallStack": ".uses_dynamic_stack",
}

MAX_ENCODABLE_SGPRS = 16 * SGPR_ENCODE_GRANULE  # a 4-bit granule count: the largest the field says


def note_view(metadata: dict[str, Any], co_version: int) -> dict[str, Any]:
    """The kernel's metadata under v3 note names (v2 CodeProps are translated)."""
    if co_version != 2:
        return metadata
    props = metadata.get("CodeProps")
    out = {".name": metadata.get("Name"), ".symbol": metadata.get("SymbolName")}
    if isinstance(props, dict):
        for old, new in V2_CODE_PROPS.items():
            if old in props:
                out[new] = props[old]
    return out


def _int(md: dict[str, Any], key: str, findings: list[Finding]) -> int | None:
    value = md.get(key)
    if value.__class__ is int and value >= 0:  # the usual case, first (bool is not int here)
        return value
    if value is None:
        return None
    if not is_whole(value):
        findings.append(Finding("metadata-type", ERROR, f"{key} is {_shown(value)}, not an integer"))
        return None
    if value < 0:
        findings.append(Finding("out-of-range", ERROR, f"{key} is negative ({value})"))
        return None
    return value


def _shown(value: object, limit: int = 80) -> str:
    """A metadata value as a finding quotes it: repr, cut short so a finding stays one line."""
    try:
        text = repr(value)
    except RecursionError:  # a malformed note may nest a thousand levels
        return f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= limit else f"{text[: limit - 3]}... ({type(value).__name__}, {len(text)} characters)"


def _pick(metadata_value: int | None, other_value: int | None, other_source: str) -> tuple[int | None, str | None]:
    if metadata_value is not None:
        return metadata_value, "metadata"
    if other_value is not None:
        return other_value, other_source
    return None, None


# The segment sizes both the metadata and the descriptor state: metadata key → (descriptor word,
# the finding when they differ, its message with the metadata's and the descriptor's values).
_SEGMENTS = {
    ".group_segment_fixed_size": (
        "group_segment_fixed_size",
        "lds-mismatch",
        "metadata static LDS {} B but the descriptor says {} B (HIP uses the metadata value)",
    ),
    ".private_segment_fixed_size": (
        "private_segment_fixed_size",
        "scratch-mismatch",
        "metadata scratch {} B per work-item but the descriptor says {} B",
    ),
}


def _segment_size(
    md: dict[str, Any], key: str, w: dict[str, Any], findings: list[Finding]
) -> tuple[int | None, str | None]:
    """A segment size and its source: the metadata's, else the descriptor's; a warning when
    both state one and they differ."""
    word, code, message = _SEGMENTS[key]
    from_metadata = _int(md, key, findings)
    from_descriptor = w.get(word)
    if from_metadata is not None and from_descriptor is not None and from_metadata != from_descriptor:
        findings.append(Finding(code, WARNING, message.format(from_metadata, from_descriptor)))
    return _pick(from_metadata, from_descriptor, "descriptor")


@dataclass(frozen=True, slots=True)
class Wave:
    """The wave size a kernel runs with, where it came from, and the descriptor's WGP mode."""

    size: int | None
    source: str | None
    wgp_mode: bool | None
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class Vgprs:
    """The VGPR counts of a kernel: the total (``.vgpr_count``), what the descriptor allocates,
    the arch/AGPR split, each with its source."""

    total: int | None
    source: str | None
    allocated: int | None
    arch: int | None
    arch_source: str | None
    agprs: int | None
    agprs_source: str | None
    accum_offset: int | None
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class Sgprs:
    """The SGPRs a kernel uses (``.sgpr_count``), their source, and what the descriptor allocates."""

    count: int | None
    source: str | None
    allocated: int | None
    findings: list[Finding]


@dataclass(frozen=True, slots=True)
class Segments:
    """Static LDS and scratch with their sources, the kernel-argument size and the dynamic stack."""

    lds: int | None
    lds_source: str | None
    scratch: int | None
    scratch_source: str | None
    kernarg_size: int | None
    uses_dynamic_stack: bool | None
    findings: list[Finding]


def resolve_wave(target: Target | None, md: dict[str, Any], descriptor: Descriptor | None) -> Wave:
    """The wave size: the metadata's, else the descriptor's, else the target's default; a warning
    when metadata and descriptor disagree, an error when the processor cannot run it. WGP mode is
    the descriptor's bit (what runs), with a warning when the metadata says otherwise."""
    found: list[Finding] = []
    f: dict[str, int] = descriptor.fields if descriptor is not None else {}
    md_wave = _int(md, ".wavefront_size", found)
    kd_wave = descriptor.wave_size if descriptor is not None and f else None
    if md_wave is not None and kd_wave is not None and md_wave != kd_wave:
        found.append(
            Finding(
                "wave-size-mismatch",
                WARNING,
                f"metadata .wavefront_size {md_wave} but the descriptor selects wave{kd_wave}",
            )
        )
    wave, wave_source = _pick(md_wave, kd_wave, "descriptor")
    if wave is None and target is not None:
        wave, wave_source = target.default_wave, "target"
    if wave is not None and target is not None and wave not in target.wave_sizes:
        found.append(Finding("out-of-range", ERROR, f"wave{wave} is not supported by {target.name}"))

    wgp = None
    if target is not None and target.wgp and "workgroup_processor_mode" in f:
        wgp = bool(f["workgroup_processor_mode"])
        md_wgp = md.get(".workgroup_processor_mode")
        if md_wgp is not None and bool(md_wgp) != wgp:
            found.append(
                Finding(
                    "wgp-mode-mismatch",
                    WARNING,
                    f"metadata .workgroup_processor_mode {_shown(md_wgp)} "
                    f"but the descriptor WGP_MODE bit is {int(wgp)}",
                )
            )
    return Wave(wave, wave_source, wgp, found)


class _VgprViews(NamedTuple):
    """What each view says about the VGPRs, before any is chosen."""

    md_vgprs: int | None  # .vgpr_count
    md_agprs: int | None  # .agpr_count
    sym_arch: int | None  # the <fn>.num_vgpr resource symbol
    sym_agpr: int | None  # the <fn>.num_agpr resource symbol
    allocated: int | None  # the descriptor's next_free_vgpr
    accum: int | None  # the descriptor's ACCUM_OFFSET, on a unified register file


def _agprs(
    target: Target | None, md: dict[str, Any], v: _VgprViews, found: list[Finding]
) -> tuple[int | None, str | None]:
    """The AGPRs: the metadata's, else the resource symbol's, else split off by ACCUM_OFFSET (or
    bounded by the allocation), else none where the target has none; how the split was made is a
    finding when the metadata lacks ``.agpr_count``."""
    agprs, agprs_source = _pick(v.md_agprs, v.sym_agpr, "symbol")
    file_kind = target.register_file if target is not None else None
    if agprs is None:
        if file_kind == "unified" and v.accum is not None and v.md_vgprs is not None:
            # The unified total is alignTo(arch, 4) + agpr and ACCUM_OFFSET is alignTo(arch, 4).
            agprs, agprs_source = max(0, v.md_vgprs - v.accum), "descriptor"
        elif target is not None and file_kind == "unified" and v.accum is not None and v.allocated is not None:
            # Without a total, the allocation bounds the AGPRs (it includes granule slack).
            agprs, agprs_source = min(max(0, v.allocated - v.accum), target.agprs), "descriptor"
        elif file_kind == "none":
            agprs, agprs_source = 0, "target"
    if file_kind in ("unified", "separate") and v.md_agprs is None and md:
        if agprs_source == "descriptor":
            total = f".vgpr_count {v.md_vgprs}" if v.md_vgprs is not None else f"an allocation of {v.allocated}"
            found.append(
                Finding(
                    "agpr-count-missing",
                    INFO,
                    f"metadata has no .agpr_count; the descriptor's "
                    f"ACCUM_OFFSET {v.accum} splits {total} into {v.accum} arch VGPRs and {agprs} AGPRs",
                )
            )
        elif agprs_source == "symbol":
            found.append(
                Finding(
                    "agpr-count-missing",
                    INFO,
                    f"metadata has no .agpr_count; {agprs} AGPRs from the {'num_agpr'} resource symbol",
                )
            )
        else:
            found.append(
                Finding(
                    "agpr-count-missing",
                    WARNING,
                    "metadata has no .agpr_count and nothing else says how the registers split between VGPRs and AGPRs",
                )
            )
    return agprs, agprs_source


def _arch_vgprs(
    file_kind: str | None, v: _VgprViews, vgprs: int | None, vgprs_source: str | None, agprs: int | None
) -> tuple[int | None, str | None]:
    """The arch count: exact from the symbol, else derived with the precision the views allow."""
    if v.sym_arch is not None:
        return v.sym_arch, "symbol"
    if vgprs is not None and agprs == 0:
        return vgprs, vgprs_source
    if file_kind == "unified" and v.md_vgprs is not None and v.md_agprs is not None:
        return v.md_vgprs - v.md_agprs, "metadata"  # = alignTo(arch, 4)
    if file_kind == "unified" and v.accum is not None:
        return v.accum, "descriptor"  # = alignTo(arch, 4)
    if file_kind == "separate" and vgprs is not None and agprs is not None and agprs < vgprs:
        return vgprs, vgprs_source  # max(arch, agpr) with agpr smaller
    return None, None


def resolve_vgprs(
    target: Target | None, md: dict[str, Any], f: dict[str, int], symbols: dict[str, int], wave: int | None
) -> Vgprs:
    """The VGPR total (metadata, else the resource symbols by the target's register-file rule, else
    the descriptor's allocation), the AGPRs and the arch count; each disagreement between the views
    and any allocation below the used count or above its encoding granule is a finding."""
    found: list[Finding] = []
    sym_arch, sym_agpr = symbols.get("num_vgpr"), symbols.get("num_agpr")
    md_vgprs = _int(md, ".vgpr_count", found)
    md_agprs = _int(md, ".agpr_count", found)
    allocated = f.get("next_free_vgpr")
    accum = f.get("accum_offset") if target is not None and target.register_file == "unified" else None

    sym_total = None
    if target is not None and sym_arch is not None:
        sym_total = target.total_vgprs(sym_arch, sym_agpr or 0)
    vgprs, vgprs_source = _pick(md_vgprs, sym_total, "symbol")
    if vgprs is None and allocated is not None:
        vgprs, vgprs_source = allocated, "descriptor"
    if md_vgprs is not None and sym_total is not None and md_vgprs != sym_total:
        found.append(
            Finding(
                "resource-symbol-mismatch",
                WARNING,
                f".vgpr_count {md_vgprs} but the {sym_arch} VGPRs "
                f"and {sym_agpr or 0} AGPRs of the resource symbols give {sym_total}",
            )
        )

    views = _VgprViews(md_vgprs, md_agprs, sym_arch, sym_agpr, allocated, accum)
    agprs, agprs_source = _agprs(target, md, views, found)
    file_kind = target.register_file if target is not None else None
    arch, arch_source = _arch_vgprs(file_kind, views, vgprs, vgprs_source, agprs)

    if (
        file_kind == "unified"
        and accum is not None
        and md_vgprs is not None
        and md_agprs
        and md_vgprs - md_agprs != accum
    ):
        found.append(
            Finding(
                "agpr-split-mismatch",
                WARNING,
                f"ACCUM_OFFSET {accum} but .vgpr_count {md_vgprs} - .agpr_count {md_agprs} = {md_vgprs - md_agprs}",
            )
        )

    if allocated is not None and vgprs is not None and vgprs_source != "descriptor":
        # Padding is judged against the encoding granule of the wave the kernel runs; a wave the
        # processor lacks has none (already an out-of-range finding), so no padding is claimed.
        granule = target.vgpr_encode_granule.get(wave) if target is not None and wave else None
        if allocated < vgprs:
            found.append(
                Finding("vgpr-below-used", WARNING, f"descriptor allocates {allocated} VGPRs but {vgprs} are used")
            )
        elif granule and allocated > align_up(max(vgprs, 1), granule):
            found.append(
                Finding(
                    "vgpr-padding",
                    INFO,
                    f"descriptor allocates {allocated} VGPRs for {vgprs} used "
                    f"(LLVM pads the allocation up to the occupancy that LDS or workgroup size already fix)",
                )
            )
    return Vgprs(vgprs, vgprs_source, allocated, arch, arch_source, agprs, agprs_source, accum, found)


def resolve_sgprs(target: Target | None, md: dict[str, Any], f: dict[str, int]) -> Sgprs:
    """The SGPRs: the metadata's, else the descriptor's allocation (gfx6-9 only: from gfx10 on SGPRs
    are not allocated per wave); an allocation below the count or above its granule is a finding."""
    found: list[Finding] = []
    md_sgprs = _int(md, ".sgpr_count", found)
    sgprs, sgprs_source = md_sgprs, "metadata" if md_sgprs is not None else None
    sgprs_allocated = f.get("next_free_sgpr") if target is not None and target.sgprs_limit_occupancy else None
    if sgprs is None and sgprs_allocated is not None:
        sgprs, sgprs_source = sgprs_allocated, "descriptor"
    if sgprs_allocated is not None and md_sgprs is not None:
        if sgprs_allocated < md_sgprs:
            found.append(
                Finding(
                    "sgpr-below-used",
                    WARNING,
                    f"descriptor allocates {sgprs_allocated} SGPRs but .sgpr_count is {md_sgprs}",
                )
            )
        elif sgprs_allocated > align_up(max(md_sgprs, 1), SGPR_ENCODE_GRANULE):
            found.append(
                Finding(
                    "sgpr-padding", INFO, f"descriptor allocates {sgprs_allocated} SGPRs for .sgpr_count {md_sgprs}"
                )
            )
    return Sgprs(sgprs, sgprs_source, sgprs_allocated, found)


def resolve_segments(md: dict[str, Any], descriptor: Descriptor | None, co_version: int) -> Segments:
    """Static LDS and scratch (metadata, else descriptor; a warning when they differ), the
    kernel-argument size (a descriptor's 0 beside the metadata's size is only noted: hand-written
    asm leaves it 0) and the dynamic stack (compared only from code-object v5 on, which brought the
    note's key)."""
    found: list[Finding] = []
    f: dict[str, int] = descriptor.fields if descriptor is not None else {}
    w: dict[str, Any] = descriptor.words if descriptor is not None else {}
    lds, lds_source = _segment_size(md, ".group_segment_fixed_size", w, found)
    scratch, scratch_source = _segment_size(md, ".private_segment_fixed_size", w, found)
    kernarg = _int(md, ".kernarg_segment_size", found)
    if kernarg is not None and w and kernarg != w["kernarg_size"]:
        found.append(
            Finding(
                "kernarg-size-mismatch",
                INFO if w["kernarg_size"] == 0 else WARNING,
                f"metadata .kernarg_segment_size {kernarg} but descriptor kernarg_size {w['kernarg_size']}",
            )
        )
    if kernarg is None:
        kernarg = w.get("kernarg_size")
    stack = md.get(".uses_dynamic_stack")
    kd_stack = f.get("uses_dynamic_stack")
    if stack is not None and kd_stack is not None and bool(stack) != bool(kd_stack) and co_version >= 5:
        found.append(
            Finding(
                "dynamic-stack-mismatch",
                WARNING,
                f"metadata .uses_dynamic_stack {_shown(stack)} but descriptor says {kd_stack}",
            )
        )
    uses_stack = bool(stack) if stack is not None else (bool(kd_stack) if kd_stack is not None else None)
    return Segments(lds, lds_source, scratch, scratch_source, kernarg, uses_stack, found)


def check_ranges(
    target: Target | None, vgprs: Vgprs, sgprs: Sgprs, segments: Segments, wgp: bool | None, max_wg: int | None
) -> list[Finding]:
    """Error findings for values no kernel can have: more VGPRs, AGPRs or static LDS than the
    processor has, more SGPRs than a descriptor can allocate, a workgroup limit outside 1..1024."""
    found: list[Finding] = []
    if target is not None:
        if vgprs.total is not None and vgprs.total > target.addressable_vgprs:
            found.append(
                Finding(
                    "out-of-range",
                    ERROR,
                    f"{vgprs.total} VGPRs exceed the {target.addressable_vgprs} a {target.name} wave can address",
                )
            )
        # An AGPR count bounded by the allocation is already capped at target.agprs; one the
        # descriptor's ACCUM_OFFSET splits off .vgpr_count is exact, and can be impossible.
        if vgprs.agprs is not None and vgprs.agprs > target.agprs:
            found.append(
                Finding("out-of-range", ERROR, f"{vgprs.agprs} AGPRs exceed the {target.agprs} {target.name} has")
            )
        lds_cap = target.max_lds_per_workgroup(bool(wgp))
        if segments.lds is not None and segments.lds > lds_cap:
            found.append(
                Finding(
                    "out-of-range",
                    ERROR,
                    f"static LDS {segments.lds} B exceeds the {lds_cap} B a {target.name} "
                    f"workgroup may use{' in WGP mode' if wgp else ''}",
                )
            )
    if sgprs.count is not None and sgprs.count > MAX_ENCODABLE_SGPRS:
        found.append(
            Finding(
                "out-of-range", ERROR, f"{sgprs.count} SGPRs exceed the {MAX_ENCODABLE_SGPRS} a descriptor can allocate"
            )
        )
    if max_wg is not None and not 1 <= max_wg <= MAX_WORKGROUP_SIZE:
        found.append(
            Finding("out-of-range", ERROR, f".max_flat_workgroup_size {max_wg} is outside 1..{MAX_WORKGROUP_SIZE}")
        )
    return found


# The note keys the steps below read; with the descriptor's words and the resource symbols they
# are everything a kernel's resources and findings depend on (no finding names the kernel).
_NOTE_KEYS = (
    ".wavefront_size",
    ".workgroup_processor_mode",
    ".vgpr_count",
    ".agpr_count",
    ".sgpr_count",
    ".group_segment_fixed_size",
    ".private_segment_fixed_size",
    ".kernarg_segment_size",
    ".uses_dynamic_stack",
    ".max_flat_workgroup_size",
    ".sgpr_spill_count",
    ".vgpr_spill_count",
)
# The descriptor words the steps read, its bit fields being decoded from the rsrc words and the
# processor alone (descriptor.py); the entry offset, which differs per kernel, is not one.
_DESCRIPTOR_WORDS = operator.itemgetter(
    "group_segment_fixed_size", "private_segment_fixed_size", "kernarg_size", *RSRC_WORDS
)

# A library is thousands of instances of a few templates: jax's xla_rocm_plugin.so has 409,773
# kernels, most of them sharing their counts with another. Resolved once per distinct input.
_RESOLVED: Memo[tuple[Any, ...], tuple[Resources, tuple[Finding, ...]]] = Memo(f"{__name__}._RESOLVED", 1 << 16)


_PLAIN = frozenset((int, bool, type(None)))


class _Unset:
    """The default of resolve's ``key``: not given (None is a key meaning "not shared")."""


_UNSET = _Unset()


def inputs_key(
    target: Target | None, co_version: int, md: dict[str, Any], descriptor: Descriptor | None, symbols: dict[str, int]
) -> tuple[Any, ...] | None:
    """What ``resolve`` reads, as a key (with the code object's producer, target id and
    launchability, it is everything the models read of a kernel but its name): each note value
    with its type (True == 1 == 1.0 in Python, and a finding quotes the value as written); None
    for a value that is not a plain integer (a float, string, list or map: rare, unhashable or
    not, and resolved each time)."""
    values = tuple(map(md.get, _NOTE_KEYS))
    kinds = tuple(map(type, values))
    if not _PLAIN.issuperset(kinds):
        return None
    words = (descriptor.wave_size, *_DESCRIPTOR_WORDS(descriptor.words)) if descriptor is not None else ()
    return (target, co_version, bool(md), values, kinds, words, tuple(sorted(symbols.items())) if symbols else ())


def resolve(
    target: Target | None,
    co_version: int,
    metadata: dict[str, Any],
    descriptor: Descriptor | None,
    symbols: dict[str, int],
    findings: list[Finding],
    note: dict[str, Any] | None = None,
    *,
    key: tuple[Any, ...] | _Unset | None = _UNSET,
) -> Resources:
    """A kernel's resources from its note (``note``, or ``metadata`` under v3 names), descriptor and
    resource symbols; every finding the steps raise is appended to ``findings``, in step order.
    Kernels with equal inputs share one (frozen) Resources; ``key`` is their :func:`inputs_key`
    when the caller has it already."""
    md = note if note is not None else note_view(metadata, co_version)
    if isinstance(key, _Unset):
        key = inputs_key(target, co_version, md, descriptor, symbols)
    if key is not None:
        hit = _RESOLVED.get(key)
        if hit is not None:
            findings.extend(hit[1])
            return hit[0]
    found: list[Finding] = []
    resources = _resolve(target, co_version, md, descriptor, symbols, found)
    if key is not None:
        _RESOLVED.put(key, (resources, tuple(found)))
    findings.extend(found)
    return resources


def _resolve(
    target: Target | None,
    co_version: int,
    md: dict[str, Any],
    descriptor: Descriptor | None,
    symbols: dict[str, int],
    findings: list[Finding],
) -> Resources:
    f: dict[str, int] = descriptor.fields if descriptor is not None else {}
    wave = resolve_wave(target, md, descriptor)
    vgprs = resolve_vgprs(target, md, f, symbols, wave.size)
    sgprs = resolve_sgprs(target, md, f)
    segments = resolve_segments(md, descriptor, co_version)
    for step in (wave, vgprs, sgprs, segments):
        findings.extend(step.findings)
    max_wg = _int(md, ".max_flat_workgroup_size", findings)
    findings.extend(check_ranges(target, vgprs, sgprs, segments, wave.wgp_mode, max_wg))
    return Resources(
        wavefront_size=wave.size,
        wavefront_size_source=wave.source,
        wgp_mode=wave.wgp_mode,
        vgprs=vgprs.total,
        vgprs_source=vgprs.source,
        vgprs_allocated=vgprs.allocated,
        arch_vgprs=vgprs.arch,
        arch_vgprs_source=vgprs.arch_source,
        agprs=vgprs.agprs,
        agprs_source=vgprs.agprs_source,
        accum_offset=vgprs.accum_offset,
        sgprs=sgprs.count,
        sgprs_source=sgprs.source,
        sgprs_allocated=sgprs.allocated,
        lds=segments.lds,
        lds_source=segments.lds_source,
        scratch=segments.scratch,
        scratch_source=segments.scratch_source,
        max_flat_workgroup_size=max_wg,
        kernarg_size=segments.kernarg_size,
        uses_dynamic_stack=segments.uses_dynamic_stack,
        spills=(_int(md, ".sgpr_spill_count", findings), _int(md, ".vgpr_spill_count", findings)),
    )
