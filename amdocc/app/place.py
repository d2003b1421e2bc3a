"""Where a register next step bites: the stretch of code where the most registers of the shed
class are live (``next_step_where`` of ``amdocc occupancy --where``).

The next step (amdocc.models.nextstep) says how many VGPRs, AGPRs or SGPRs to shed; this says
where they are needed: the address ranges at which the liveness pass of amdocc.isa.liveness
reaches that class's maximum, their loop depth and source lines. The models stay pure: the place
is worked out here, from the kernel's machine code, and sits beside the model's record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..codeobject import Kernel
    from ..errors import Origin
    from ..isa.analysis import KernelIsa

# The next step's limiters that are a register class the liveness pass counts.
REGISTER_CLASSES = ("vgpr", "agpr", "sgpr")


def shed_class(step: dict[str, Any] | None) -> str | None:
    """The register class a next step sheds (the first, when it sheds several), or None."""
    if not step:
        return None
    return next((what for what in step["shed"] if what in REGISTER_CLASSES), None)


def unknown_place(register_class: str, reason: str) -> dict[str, Any]:
    return {"class": register_class, "live": None, "ranges": None, "unknown": reason}


def next_step_where(kernel: Kernel, origin: Origin | None, step: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"class", "live", "ranges": [{"first", "last", "loop_depth", "lines"}], "unknown": None}``
    for a next step that sheds registers: the most registers of that class live at once (RGA's
    live-in ∪ live-out count; class "vgpr+agpr", both together, where the VGPR limiter counts a
    file the two share and AGPRs are live) and every stretch of consecutive instructions where that many are
    live (first and last instruction's address, loop depth, the sorted "file:line"s of its
    instructions, empty without .debug_line). When it cannot be said (no libLLVM, unknown control
    flow, register indexing), ``live`` and ``ranges`` are null and ``unknown`` says why. None when
    the step sheds no register (or there is no step)."""
    from ..errors import AmdoccError, TableError, UsageError
    from ..isa.libllvm import LlvmUnavailable

    register_class = shed_class(step)
    if register_class is None:
        return None
    try:
        from ..isa.analysis import analyse

        isa = analyse(kernel, origin)
    except LlvmUnavailable as exc:
        return unknown_place(register_class, f"no libLLVM to disassemble with: {exc}")
    except (UsageError, TableError):  # a bad setting (AMDOCC_LIBLLVM naming no file), a damaged table
        raise
    except AmdoccError as exc:
        return unknown_place(register_class, f"the code cannot be read: {exc}")
    live = isa.liveness
    if live is None or live.unknown is not None or live.max_live is None:
        return unknown_place(register_class, f"liveness unknown: {live.unknown if live else 'not computed'}")
    fields = kernel.descriptor.fields if kernel.descriptor else {}
    # One file for both classes (the descriptor splits it at accum_offset): the VGPR limiter
    # counts AGPRs too, so the place is where the most of both are live together.
    if register_class == "vgpr" and "accum_offset" in fields and live.max_live.agpr:
        register_class = "vgpr+agpr"
        counts = [c.vgpr + c.agpr for c in live.live]
    else:
        counts = [c.get(register_class) for c in live.live]
    top = max(counts, default=0)
    return {"class": register_class, "live": top, "ranges": _stretches(isa, counts, top), "unknown": None}


def _stretches(isa: KernelIsa, counts: list[int], top: int) -> list[dict[str, Any]]:
    """Runs of consecutive instructions at ``top``, split where the loop depth changes (as
    amdocc.isa.liveness splits a class's peak), with their source lines."""
    out: list[dict[str, Any]] = []
    run: list[int] = []

    def close() -> None:
        if run:
            lines = sorted({line for i in run if isa.lines and (line := isa.lines[i])})
            first, last = isa.instructions[run[0]].address, isa.instructions[run[-1]].address
            out.append({"first": first, "last": last, "loop_depth": isa.loop_depth[run[0]], "lines": lines})
            run.clear()

    if top == 0:
        return out
    for block in isa.flow.blocks:
        for i in range(block.start, block.end):
            if counts[i] != top or (run and isa.loop_depth[i] != isa.loop_depth[run[0]]):
                close()
            if counts[i] == top:
                run.append(i)
    close()
    return out


def source_span(lines: list[str]) -> str:
    """``file:first–last`` per file of "file:line"s (the file's base name), comma-separated."""
    import os

    by_file: dict[str, list[int]] = {}
    for where in lines:
        name, _, number = where.rpartition(":")
        if number.isdigit():
            by_file.setdefault(os.path.basename(name), []).append(int(number))
    parts = []
    for name, numbers in by_file.items():
        low, high = min(numbers), max(numbers)
        parts.append(f"{name}:{low}" if low == high else f"{name}:{low}–{high}")
    return ", ".join(parts)


def describe(place: dict[str, Any]) -> str:
    """The place in words: "184 VGPRs are live at 0x1a40–0x1b20 (attn.py:142–150, loop depth 1)",
    the first range and how many more; or why it is not known."""
    what = "VGPRs and AGPRs" if place["class"] == "vgpr+agpr" else place["class"].upper() + "s"
    if place["unknown"] is not None:
        return f"where the {what} are live is not known: {place['unknown']}"
    ranges = place["ranges"]
    if not ranges:
        return f"no {what} are live"
    first = ranges[0]
    at = f"{first['first']:#x}" if first["first"] == first["last"] else f"{first['first']:#x}–{first['last']:#x}"
    span = source_span(first["lines"])
    detail = f"{span}, loop depth {first['loop_depth']}" if span else f"loop depth {first['loop_depth']}"
    more = f" and {len(ranges) - 1} more range{'s' if len(ranges) > 2 else ''}" if len(ranges) > 1 else ""
    return f"{place['live']} {what} are live at {at} ({detail}){more}"
