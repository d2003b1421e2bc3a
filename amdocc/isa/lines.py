"""Source lines: each instruction's file and line from the code object's DWARF ``.debug_line``
(Triton kernels carry it; HIP with ``-g`` or ``-gline-tables-only``), read with pyelftools.

An instruction's line is the line-table row that covers its address: the last row at or before
it in the same sequence, up to the sequence's end. Line 0 (code no source line is attributed to)
is given as null, as are instructions of a code object without ``.debug_line``.
"""

from __future__ import annotations

import bisect
import io
import os
import threading
from collections.abc import Sequence

from .model import Instruction

# (start, end, "file:line" or None) ranges in address order.
LineRanges = list[tuple[int, int, str | None]]


def line_ranges(image: bytes) -> LineRanges:
    """The address ranges of the line table of one code object ([] without ``.debug_line``, or
    when pyelftools cannot read it)."""
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:  # pragma: no cover - a dependency of the package
        return []
    try:
        elf = ELFFile(io.BytesIO(image))
        if elf.get_section_by_name(".debug_line") is None:
            return []
        dwarf = elf.get_dwarf_info(relocate_dwarf_sections=elf["e_type"] == "ET_REL")
        ranges: LineRanges = []
        for cu in dwarf.iter_CUs():
            program = dwarf.line_program_for_CU(cu)
            if program is None:
                continue
            names = _file_names(program, cu)
            previous = None
            for entry in program.get_entries():
                state = entry.state
                if state is None:
                    continue
                if previous is not None and state.address > previous.address:  # rows at one address: the last wins
                    where = _where(names, previous.file, previous.line)
                    ranges.append((previous.address, state.address, where))
                previous = None if state.end_sequence else state
        ranges.sort(key=lambda r: (r[0], r[1]))
        return ranges
    except (ELFError, Exception):  # pyelftools raises its construct library's errors on bad DWARF
        return []  # a damaged line table gives no lines, never a traceback


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _file_names(program: object, cu: object) -> dict[int, str]:
    """File index → path as llvm-objdump prints it: a relative name under its directory, a
    relative directory under the compilation directory."""
    header = program.header  # type: ignore[attr-defined]
    version = header["version"]
    directories = [_text(d) for d in header["include_directory"]]
    if version >= 5:
        comp_dir = directories[0] if directories else ""
    else:  # DWARF 2-4: the compilation directory is the unit's DW_AT_comp_dir, files count from 1
        attribute = cu.get_top_DIE().attributes.get("DW_AT_comp_dir")  # type: ignore[attr-defined]
        comp_dir = _text(attribute.value) if attribute is not None else ""
        directories = [comp_dir, *directories]
    names: dict[int, str] = {}
    for index, entry in enumerate(header["file_entry"]):
        name = _text(entry.name)
        folder = directories[entry.dir_index] if entry.dir_index < len(directories) else ""
        if not os.path.isabs(folder) and comp_dir:
            folder = os.path.join(comp_dir, folder)
        names[index if version >= 5 else index + 1] = os.path.join(folder, name)  # an absolute name stays
    return names


def _where(names: dict[int, str], file: int, line: int) -> str | None:
    if line == 0:
        return None
    return f"{names.get(file, f'<file {file}>')}:{line}"


def lines_for(instructions: Sequence[Instruction], ranges: LineRanges) -> tuple[str | None, ...]:
    """Each instruction's "file:line" (None where the table says nothing)."""
    starts = [r[0] for r in ranges]
    out: list[str | None] = []
    for ins in instructions:
        k = bisect.bisect_right(starts, ins.address) - 1
        out.append(ranges[k][2] if k >= 0 and ins.address < ranges[k][1] else None)
    return tuple(out)


_last: tuple[bytes, LineRanges] | None = None
_lock = threading.Lock()


def cached_line_ranges(image: bytes) -> LineRanges:
    """:func:`line_ranges`, the last code object's kept (its kernels come together)."""
    global _last
    with _lock:
        if _last is not None and _last[0] is image:
            return _last[1]
    made = line_ranges(image)
    with _lock:
        _last = (image, made)
    return made
