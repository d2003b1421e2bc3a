"""The data of the sweep's occupancy graphs (amdocc.cli.plot draws them): three panels that vary
one input each — block size, dynamic LDS, VGPRs — holding the others where ``amdocc occupancy``
evaluates the kernel, and that point itself (the star).

A curve is exact at every integer input: block sizes and VGPR counts are evaluated one by one
(HIP's bit-mask round-up makes VGPR steps irregular), and the dynamic-LDS curve at every byte
where the answer changes, found by bisection (the answer never rises as LDS grows). The star is
evaluated by the same function at the same inputs and its input is one of the curve's points,
so it always sits on its curve.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models import KernelUsage, Occupancy
    from .sweep_op import Subject


@dataclass
class Panel:
    """One graph: the input varied (``xs``), the answer at each, and the kernel's own point."""

    name: str  # "block", "lds" or "vgpr" (also the axes' gid)
    xlabel: str
    held: str  # the inputs held fixed, for the title
    xs: list[int]
    records: list[Occupancy]  # Occupancy at each x
    star_x: int | None  # None: the kernel has no single point on this axis
    star: Occupancy | None  # the Occupancy at star_x (the same as amdocc occupancy's)
    reference: Occupancy | None = None  # llvm without a block: the flat-range answer, as a line


@dataclass(frozen=True)
class Point:
    """The kernel and where ``amdocc occupancy`` evaluates it: the star drawn on the panels, and
    the inputs each curve holds while it varies one. ``block`` None is the llvm model's flat
    workgroup range."""

    usage: KernelUsage
    model: str
    options: dict[str, Any]
    block: int | None
    dynamic_lds: int = 0
    device: str | None = None
    what_if: bool = False  # --what-if: a HIP profile named may answer with its refusal

    def at(self, usage: KernelUsage, block: int | None, dynamic_lds: int) -> Occupancy:
        """The model's answer for ``usage`` at ``block`` and ``dynamic_lds`` on this device."""
        from ..models import occupancy

        where: dict[str, Any] = {"target": usage.target, "what_if": True} if self.what_if else {}
        return occupancy(
            usage,
            device=self.device,
            block_size=block,
            dynamic_lds=dynamic_lds,
            model=self.model,
            **where,
            **self.options,
        )


def _vgpr_field(usage: KernelUsage, model: str) -> str:
    """The VGPR count the model reads: hw the descriptor's allocation when there is one."""
    return "vgprs_allocated" if model == "hw" and usage.vgprs_allocated is not None else "vgprs"


def _lds_changes(value_at: Callable[[int], Hashable], lo: int, hi: int) -> list[int]:
    """Inputs in [lo, hi] that pin a monotone step function exactly: both ends, and for every
    step the last input before it and the first after (bisection; equal ends mean no step)."""
    known = {lo: value_at(lo), hi: value_at(hi)}
    todo = [(lo, hi)]
    while todo:
        a, b = todo.pop()
        if b - a <= 1 or known[a] == known[b]:
            continue
        mid = (a + b) // 2
        known[mid] = value_at(mid)
        todo += [(a, mid), (mid, b)]
    return sorted(known)


def _key(occ: Occupancy) -> tuple[int | None, float | None, str | None, str | None]:
    return occ.blocks_per_cu, occ.waves_per_simd, occ.limiter, occ.error


def curves(point: Point) -> list[Panel]:
    """The three panels' data."""
    from ..targets import MAX_WORKGROUP_SIZE

    usage, model, block, dynamic_lds, at = point.usage, point.model, point.block, point.dynamic_lds, point.at
    t = usage.target
    star = at(usage, block, dynamic_lds)
    vfield = _vgpr_field(usage, model)
    vgprs: int = getattr(usage, vfield)  # not None: _vgpr_field picks an allocation only when known
    held_block = block_text(usage, block)

    limit = min(usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE)
    block_xs = sorted(set(range(1, limit + 1)) | ({block} if block else set()))
    block_panel = Panel(
        "block",
        "threads per block",
        f"held: dynamic LDS {dynamic_lds} B, VGPRs {vgprs}",
        block_xs,
        [at(usage, b, dynamic_lds) for b in block_xs],
        block,
        star if block is not None else None,
        reference=star if block is None else None,
    )

    room = max(t.lds_per_workgroup - usage.lds, dynamic_lds, 0)
    lds_records: dict[int, Occupancy] = {}

    def lds_key(d: int) -> Hashable:
        lds_records[d] = at(usage, block, d)
        return _key(lds_records[d])

    lds_xs = sorted(set(_lds_changes(lds_key, 0, room)) | {dynamic_lds})
    lds_label = "dynamic LDS per block (KiB)" + (
        "" if room else f": none fits beside {usage.lds} B of static LDS ({t.lds_per_workgroup} B per workgroup)"
    )
    lds_panel = Panel(
        "lds",
        lds_label,
        f"held: {held_block}, VGPRs {vgprs}",
        lds_xs,
        [lds_records.get(d) or at(usage, block, d) for d in lds_xs],
        dynamic_lds,
        star,
    )

    vgpr_xs = sorted(set(range(1, max(t.addressable_vgprs, vgprs) + 1)) | {vgprs})
    vlabel = "VGPRs per work-item (" + ("descriptor-allocated" if vfield == "vgprs_allocated" else ".vgpr_count") + ")"
    vgpr_panel = Panel(
        "vgpr",
        vlabel,
        f"held: {held_block}, dynamic LDS {dynamic_lds} B",
        vgpr_xs,
        [at(usage if v == vgprs else usage.with_(**{vfield: v}), block, dynamic_lds) for v in vgpr_xs],
        vgprs,
        star,
    )
    return [block_panel, lds_panel, vgpr_panel]


def block_text(usage: KernelUsage, block: int | None) -> str:
    from ..targets import MAX_WORKGROUP_SIZE

    if block is not None:
        return f"block {block}"
    return f"the flat workgroup range 1..{usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE}"


def max_waves_per_simd(usage: KernelUsage, occ: Occupancy) -> int:
    """Wave slots per SIMD in the model that answered (HIP caps gfx9 at 8, for instance)."""
    simds = usage.target.simds(occ.per_wgp)
    return occ.max_waves_per_cu // simds if occ.max_waves_per_cu else usage.target.max_waves_per_simd


_METADATA_KEY = {"reqd_workgroup_size": ".reqd_workgroup_size", "max_flat_workgroup_size": ".max_flat_workgroup_size"}


def star_of(
    chosen: Subject,
    block: int | None,
    model: str,
    options: dict[str, Any],
    dynamic_lds: int = 0,
    device: str | None = None,
    what_if: bool = False,
) -> tuple[Point, str]:
    """Where ``amdocc occupancy`` evaluates the sweep's kernel (``block`` given, else its
    declared block), and where that block came from: "given", ".reqd_workgroup_size",
    ".max_flat_workgroup_size", "max_flat_workgroup_size" (manual numbers) or "default N"."""
    from ..targets import MAX_WORKGROUP_SIZE
    from .occupancy_op import block_for

    usage = chosen.usage
    if chosen.kernel is not None:
        block, source = block_for(chosen.kernel, block, model)
        source = {
            "reqd_workgroup_size": ".reqd_workgroup_size",
            "max_flat_workgroup_size": ".max_flat_workgroup_size",
        }.get(source, source)
    elif block is not None or model == "llvm":
        source = "given"
    else:
        block = usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
        source = "max_flat_workgroup_size" if usage.max_flat_workgroup_size else f"default {MAX_WORKGROUP_SIZE}"
    return Point(usage, model, options, block, dynamic_lds, device, what_if), source
