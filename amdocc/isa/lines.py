"""Source lines: each instruction's file and line from the code object's DWARF ``.debug_line``
(Triton kernels carry it; HIP with ``-g`` or ``-gline-tables-only``), read by
:mod:`amdocc.codeobject.dwarf_line` for the kernel's addresses only.

An instruction's line is the line-table row that covers its address: the last row at or before
it in the same sequence, up to the sequence's end. Line 0 (code no source line is attributed to)
is given as null, as are instructions of a code object without ``.debug_line``.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence

from ..codeobject.dwarf_line import DwarfLineError, LineRanges, LineTable, read_line_table
from .model import Instruction


def lines_for(instructions: Sequence[Instruction], ranges: LineRanges) -> tuple[str | None, ...]:
    """Each instruction's "file:line" (None where the table says nothing); ``ranges`` in address
    order, as :meth:`LineTable.ranges` gives them."""
    starts = [r[0] for r in ranges]
    out: list[str | None] = []
    for ins in instructions:
        k = bisect.bisect_right(starts, ins.address) - 1
        out.append(ranges[k][2] if k >= 0 and ins.address < ranges[k][1] else None)
    return tuple(out)


def kernel_lines(instructions: Sequence[Instruction], image: bytes) -> tuple[str | None, ...]:
    """Each instruction's "file:line", the line table of ``image`` read for these instructions'
    addresses only."""
    table = cached_line_table(image)
    if table is None or not instructions:
        return (None,) * len(instructions)
    addresses = [ins.address for ins in instructions]
    try:
        ranges = table.ranges(min(addresses), max(addresses) + 1)
    except DwarfLineError:  # the table was read whole when it was made; this is belt and braces
        return (None,) * len(instructions)
    return lines_for(instructions, ranges)


_last: tuple[bytes, LineTable | None] | None = None
_lock = threading.Lock()


def cached_line_table(image: bytes) -> LineTable | None:
    """:func:`~amdocc.codeobject.dwarf_line.read_line_table`, the last code object's kept (its
    kernels come together)."""
    global _last
    with _lock:
        if _last is not None and _last[0] is image:
            return _last[1]
    made = read_line_table(image)
    with _lock:
        _last = (image, made)
    return made
