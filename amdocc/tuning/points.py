"""A compiled point read with amdocc's own reader, and the frontier of a sweep.

A point's register counts, spill counts and scratch size are the compiled object's metadata
values (``.vgpr_count``, ``.agpr_count``, ``.sgpr_count``, ``.vgpr_spill_count``,
``.sgpr_spill_count``, ``.private_segment_fixed_size``); the spills in loops, the AGPR↔VGPR
copies and the main loop's size come from its machine code (:mod:`amdocc.isa`); the waves per
SIMD from the llvm and hip models at the entry's launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import FormatError, Origin

# Copies between the two register files: AGPR → VGPR and VGPR → AGPR.
ACCVGPR_COPIES = ("v_accvgpr_read_b32", "v_accvgpr_write_b32", "v_accvgpr_read", "v_accvgpr_write")
METADATA = {
    "vgprs": ".vgpr_count",
    "agprs": ".agpr_count",
    "sgprs": ".sgpr_count",
    "vgpr_spill_count": ".vgpr_spill_count",
    "sgpr_spill_count": ".sgpr_spill_count",
    "private_segment_fixed_size": ".private_segment_fixed_size",
}


def kernel_in(image: bytes, name: str, where: str) -> Any:
    """The kernel ``name`` of the code object ``image`` (``where`` names it in errors)."""
    from ..loader import load

    objects = load(image)
    found = [k for co in objects for k in co.kernels if name in (k.name, k.symbol)]
    if len(found) != 1:
        have = ", ".join(k.name for co in objects for k in co.kernels) or "none"
        raise FormatError(f"{where}: {len(found)} kernels named {name!r} (kernels: {have})", Origin(where), 0)
    return found[0]


def _main_loop_instructions(isa: Any) -> int | None:
    """Instructions in the largest innermost loop (None: no loop, or the graph is not known)."""
    flow = isa.flow
    if flow.unknown is not None or not flow.loops:
        return None
    inner = [lp for lp in flow.loops if not any(o is not lp and o.header in lp.blocks for o in flow.loops)]
    sizes = [sum(flow.blocks[b].end - flow.blocks[b].start for b in lp.blocks) for lp in inner]
    return max(sizes, default=None)


def read_point(image: bytes, name: str, where: str, block_size: int, dynamic_lds: int) -> dict[str, Any]:
    """One point's figures from its linked code object. The waves per SIMD are what the object's
    registers and the launch allow; the ``amdgpu-waves-per-eu`` the point was compiled with is not
    in the object, and LLVM may (or may not) lower its own ``; Occupancy:`` to that attribute's
    maximum (docs/tune-regs.md)."""
    from ..isa.analysis import analyse
    from ..models import occupancy

    kernel = kernel_in(image, name, where)
    meta = kernel.metadata
    point: dict[str, Any] = {key: meta.get(note) for key, note in METADATA.items()}
    isa = analyse(kernel, Origin(where))
    known = isa.flow.unknown is None
    point["spills_in_loops"] = isa.spills.in_loops(isa.loop_depth) if known else None
    point["accvgpr_copies"] = sum(i.mnemonic in ACCVGPR_COPIES for i in isa.instructions)
    point["main_loop_instructions"] = _main_loop_instructions(isa)
    waves: dict[str, Any] = {}
    for model in ("llvm", "hip"):
        occ = occupancy(kernel, block_size=block_size, dynamic_lds=dynamic_lds, model=model)
        waves[model] = occ.waves_per_simd
    # The compiler's own figure (its "; Occupancy:"): no launch, so no dynamic LDS.
    waves["compiler"] = occupancy(kernel, model="llvm").waves_per_simd
    point["waves_per_simd"] = waves
    return point


def spilled_dwords(point: dict[str, Any]) -> int:
    return int(point.get("vgpr_spill_count") or 0) + int(point.get("sgpr_spill_count") or 0)


def mark_frontier(points: Sequence[dict[str, Any]], model: str) -> None:
    """Set each point's ``frontier``: True when no other point has at least its occupancy (waves
    per SIMD under ``model``) and at most its spilled dwords, better in one of the two. A point
    that failed to compile is never on it; among equal points every one is."""
    good = [p for p in points if p.get("error") is None and p["waves_per_simd"][model] is not None]
    for p in points:
        p["frontier"] = False
    for p in good:
        waves, spills = p["waves_per_simd"][model], spilled_dwords(p)
        p["frontier"] = not any(
            q["waves_per_simd"][model] >= waves
            and spilled_dwords(q) <= spills
            and (q["waves_per_simd"][model] > waves or spilled_dwords(q) < spills)
            for q in good
        )
