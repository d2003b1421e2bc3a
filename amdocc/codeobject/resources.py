"""Resolve a kernel's resources from metadata, descriptor and resource symbols, keeping both views.

Rules (DESIGN §1, llvm-amdgpu-rules.md §2.4 and §3.6):
- "used" counts come from the metadata note, or from LLVM's ``<fn>.num_*`` symbols when the note
  lacks them; "allocated" counts come from the descriptor.
- ``.vgpr_count`` is already the unified total on gfx90a/gfx94x/gfx950 and max(arch, agpr) on
  gfx908; ``.agpr_count`` is reported beside it and never added to it.
- Without ``.agpr_count`` (hand-written asm) the arch/AGPR split of a unified file comes from the
  descriptor's ACCUM_OFFSET, and that is recorded as a finding.
Every disagreement between the views becomes a finding; nothing is silently corrected.
"""

from __future__ import annotations

from typing import Any

from ..binary import align_up
from ..numbers import is_whole
from ..targets import MAX_WORKGROUP_SIZE, Target
from .descriptor import SGPR_ENCODE_GRANULE, Descriptor
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


def resolve(
    target: Target | None,
    co_version: int,
    metadata: dict[str, Any],
    descriptor: Descriptor | None,
    symbols: dict[str, int],
    findings: list[Finding],
    note: dict[str, Any] | None = None,
) -> Resources:
    md = note if note is not None else note_view(metadata, co_version)
    f: dict[str, int] = descriptor.fields if descriptor is not None else {}
    w: dict[str, Any] = descriptor.words if descriptor is not None else {}

    def add(code: str, severity: str, message: str) -> None:
        findings.append(Finding(code, severity, message))

    # -- wave size and WGP mode --------------------------------------------------------------
    md_wave = _int(md, ".wavefront_size", findings)
    kd_wave = descriptor.wave_size if descriptor is not None and f else None
    if md_wave is not None and kd_wave is not None and md_wave != kd_wave:
        add(
            "wave-size-mismatch",
            WARNING,
            f"metadata .wavefront_size {md_wave} but the descriptor selects wave{kd_wave}",
        )
    wave, wave_source = _pick(md_wave, kd_wave, "descriptor")
    if wave is None and target is not None:
        wave, wave_source = target.default_wave, "target"
    if wave is not None and target is not None and wave not in target.wave_sizes:
        add("out-of-range", ERROR, f"wave{wave} is not supported by {target.name}")

    wgp = None
    if target is not None and target.wgp and "workgroup_processor_mode" in f:
        wgp = bool(f["workgroup_processor_mode"])
        md_wgp = md.get(".workgroup_processor_mode")
        if md_wgp is not None and bool(md_wgp) != wgp:
            add(
                "wgp-mode-mismatch",
                WARNING,
                f"metadata .workgroup_processor_mode {_shown(md_wgp)} but the descriptor WGP_MODE bit is {int(wgp)}",
            )

    # -- VGPRs and AGPRs ----------------------------------------------------------------------
    sym_arch, sym_agpr = symbols.get("num_vgpr"), symbols.get("num_agpr")
    md_vgprs = _int(md, ".vgpr_count", findings)
    md_agprs = _int(md, ".agpr_count", findings)
    allocated = f.get("next_free_vgpr")
    accum = f.get("accum_offset") if target is not None and target.register_file == "unified" else None

    sym_total = None
    if target is not None and sym_arch is not None:
        sym_total = target.total_vgprs(sym_arch, sym_agpr or 0)
    vgprs, vgprs_source = _pick(md_vgprs, sym_total, "symbol")
    if vgprs is None and allocated is not None:
        vgprs, vgprs_source = allocated, "descriptor"
    if md_vgprs is not None and sym_total is not None and md_vgprs != sym_total:
        add(
            "resource-symbol-mismatch",
            WARNING,
            f".vgpr_count {md_vgprs} but the {sym_arch} VGPRs "
            f"and {sym_agpr or 0} AGPRs of the resource symbols give {sym_total}",
        )

    agprs, agprs_source = _pick(md_agprs, sym_agpr, "symbol")
    file_kind = target.register_file if target is not None else None
    if agprs is None:
        if file_kind == "unified" and accum is not None and md_vgprs is not None:
            # The unified total is alignTo(arch, 4) + agpr and ACCUM_OFFSET is alignTo(arch, 4).
            agprs, agprs_source = max(0, md_vgprs - accum), "descriptor"
        elif target is not None and file_kind == "unified" and accum is not None and allocated is not None:
            # Without a total, the allocation bounds the AGPRs (it includes granule slack).
            agprs, agprs_source = min(max(0, allocated - accum), target.agprs), "descriptor"
        elif file_kind == "none":
            agprs, agprs_source = 0, "target"
    if file_kind in ("unified", "separate") and md_agprs is None and md:
        if agprs_source == "descriptor":
            total = f".vgpr_count {md_vgprs}" if md_vgprs is not None else f"an allocation of {allocated}"
            add(
                "agpr-count-missing",
                INFO,
                f"metadata has no .agpr_count; the descriptor's "
                f"ACCUM_OFFSET {accum} splits {total} into {accum} arch VGPRs and {agprs} AGPRs",
            )
        elif agprs_source == "symbol":
            add(
                "agpr-count-missing",
                INFO,
                f"metadata has no .agpr_count; {agprs} AGPRs from the {'num_agpr'} resource symbol",
            )
        else:
            add(
                "agpr-count-missing",
                WARNING,
                "metadata has no .agpr_count and nothing else says how the registers split between VGPRs and AGPRs",
            )

    # The arch count: exact from the symbol, else derived with the precision the views allow.
    arch: int | None
    arch_source: str | None
    if sym_arch is not None:
        arch, arch_source = sym_arch, "symbol"
    elif vgprs is not None and agprs == 0:
        arch, arch_source = vgprs, vgprs_source
    elif file_kind == "unified" and md_vgprs is not None and md_agprs is not None:
        arch, arch_source = md_vgprs - md_agprs, "metadata"  # = alignTo(arch, 4)
    elif file_kind == "unified" and accum is not None:
        arch, arch_source = accum, "descriptor"  # = alignTo(arch, 4)
    elif file_kind == "separate" and vgprs is not None and agprs is not None and agprs < vgprs:
        arch, arch_source = vgprs, vgprs_source  # max(arch, agpr) with agpr smaller
    else:
        arch, arch_source = None, None

    if (
        file_kind == "unified"
        and accum is not None
        and md_vgprs is not None
        and md_agprs
        and md_vgprs - md_agprs != accum
    ):
        add(
            "agpr-split-mismatch",
            WARNING,
            f"ACCUM_OFFSET {accum} but .vgpr_count {md_vgprs} - .agpr_count {md_agprs} = {md_vgprs - md_agprs}",
        )

    if allocated is not None and vgprs is not None and vgprs_source != "descriptor":
        # Padding is judged against the encoding granule of the wave the kernel runs; a wave the
        # processor lacks has none (already an out-of-range finding), so no padding is claimed.
        granule = target.vgpr_encode_granule.get(wave) if target is not None and wave else None
        if allocated < vgprs:
            add("vgpr-below-used", WARNING, f"descriptor allocates {allocated} VGPRs but {vgprs} are used")
        elif granule and allocated > align_up(max(vgprs, 1), granule):
            add(
                "vgpr-padding",
                INFO,
                f"descriptor allocates {allocated} VGPRs for {vgprs} used "
                f"(LLVM pads the allocation up to the occupancy that LDS or workgroup size already fix)",
            )

    # -- SGPRs --------------------------------------------------------------------------------
    md_sgprs = _int(md, ".sgpr_count", findings)
    sgprs, sgprs_source = md_sgprs, "metadata" if md_sgprs is not None else None
    sgprs_allocated = f.get("next_free_sgpr") if target is not None and target.sgprs_limit_occupancy else None
    if sgprs is None and sgprs_allocated is not None:
        sgprs, sgprs_source = sgprs_allocated, "descriptor"
    if sgprs_allocated is not None and md_sgprs is not None:
        if sgprs_allocated < md_sgprs:
            add(
                "sgpr-below-used",
                WARNING,
                f"descriptor allocates {sgprs_allocated} SGPRs but .sgpr_count is {md_sgprs}",
            )
        elif sgprs_allocated > align_up(max(md_sgprs, 1), SGPR_ENCODE_GRANULE):
            add("sgpr-padding", INFO, f"descriptor allocates {sgprs_allocated} SGPRs for .sgpr_count {md_sgprs}")

    # -- memory, kernargs, stack ----------------------------------------------------------------
    lds, lds_source = _segment_size(md, ".group_segment_fixed_size", w, findings)
    scratch, scratch_source = _segment_size(md, ".private_segment_fixed_size", w, findings)
    kernarg = _int(md, ".kernarg_segment_size", findings)
    if kernarg is not None and w and kernarg != w["kernarg_size"]:
        add(
            "kernarg-size-mismatch",
            INFO if w["kernarg_size"] == 0 else WARNING,
            f"metadata .kernarg_segment_size {kernarg} but descriptor kernarg_size {w['kernarg_size']}",
        )
    if kernarg is None:
        kernarg = w.get("kernarg_size")
    stack = md.get(".uses_dynamic_stack")
    kd_stack = f.get("uses_dynamic_stack")
    if stack is not None and kd_stack is not None and bool(stack) != bool(kd_stack) and co_version >= 5:
        add(
            "dynamic-stack-mismatch",
            WARNING,
            f"metadata .uses_dynamic_stack {_shown(stack)} but descriptor says {kd_stack}",
        )
    uses_stack = bool(stack) if stack is not None else (bool(kd_stack) if kd_stack is not None else None)

    max_wg = _int(md, ".max_flat_workgroup_size", findings)

    # -- impossible values ---------------------------------------------------------------------
    if target is not None:
        if vgprs is not None and vgprs > target.addressable_vgprs:
            add(
                "out-of-range",
                ERROR,
                f"{vgprs} VGPRs exceed the {target.addressable_vgprs} a {target.name} wave can address",
            )
        # An AGPR count bounded by the allocation is already capped at target.agprs; one the
        # descriptor's ACCUM_OFFSET splits off .vgpr_count is exact, and can be impossible.
        if agprs is not None and agprs > target.agprs:
            add("out-of-range", ERROR, f"{agprs} AGPRs exceed the {target.agprs} {target.name} has")
        lds_cap = target.max_lds_per_workgroup(bool(wgp))
        if lds is not None and lds > lds_cap:
            add(
                "out-of-range",
                ERROR,
                f"static LDS {lds} B exceeds the {lds_cap} B a {target.name} "
                f"workgroup may use{' in WGP mode' if wgp else ''}",
            )
    if sgprs is not None and sgprs > MAX_ENCODABLE_SGPRS:
        add("out-of-range", ERROR, f"{sgprs} SGPRs exceed the {MAX_ENCODABLE_SGPRS} a descriptor can allocate")
    if max_wg is not None and not 1 <= max_wg <= MAX_WORKGROUP_SIZE:
        add("out-of-range", ERROR, f".max_flat_workgroup_size {max_wg} is outside 1..{MAX_WORKGROUP_SIZE}")

    return Resources(
        wavefront_size=wave,
        wavefront_size_source=wave_source,
        wgp_mode=wgp,
        vgprs=vgprs,
        vgprs_source=vgprs_source,
        vgprs_allocated=allocated,
        arch_vgprs=arch,
        arch_vgprs_source=arch_source,
        agprs=agprs,
        agprs_source=agprs_source,
        accum_offset=accum,
        sgprs=sgprs,
        sgprs_source=sgprs_source,
        sgprs_allocated=sgprs_allocated,
        lds=lds,
        lds_source=lds_source,
        scratch=scratch,
        scratch_source=scratch_source,
        max_flat_workgroup_size=max_wg,
        kernarg_size=kernarg,
        uses_dynamic_stack=uses_stack,
        spills=(_int(md, ".sgpr_spill_count", findings), _int(md, ".vgpr_spill_count", findings)),
    )
