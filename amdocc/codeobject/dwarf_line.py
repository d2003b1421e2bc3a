"""DWARF ``.debug_line`` line programs (versions 2-5), read one address range at a time.

A code object's line table can hold millions of rows (vllm 0.6.3's paged-attention code object
for gfx1100: 1.8 million), while a caller wants the rows of one kernel. :class:`LineTable` walks every line
program once when it is made, keeping no rows: per sequence (one per function with LLVM's
function sections), where its opcodes start and the lowest and highest address a row range of it
starts at. :meth:`LineTable.ranges` then runs only the sequences that can cover the addresses
asked for, and stops a sequence whose addresses only rise once it has passed them.

The ranges are those of the line table as a whole: a row covers the addresses from its own up to
the next row's in its sequence; of several rows at one address the last one counts; line 0 (code
no source line is attributed to) is None. :meth:`LineTable.ranges` gives the ranges starting in
the asked span plus, from every sequence starting below it, its range that starts last below it,
so that "the last range starting at or before an address" is what it would be over the whole table.

Damage (a unit or operand past the section's end, an unknown form or opcode length, a
``line_range`` of 0 where it is needed, a LEB128 longer than any value a producer writes) raises
:class:`DwarfLineError` while the table is made: the caller gives no lines for the code object.
The units are those the compilation units name (``DW_AT_stmt_list``); pyelftools reads those
units' top DIEs, this module the line programs.
"""

from __future__ import annotations

import bisect
import io
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import FormatError

# (start, end, "file:line" or None) address ranges.
LineRanges = list[tuple[int, int, str | None]]

_MAX_LEB = 20  # bytes; a 64-bit value takes 10, padding a few more
_ADDRESS_LIMIT = 1 << 64  # ranges starting at or above this cover no instruction

# DW_LNS_* standard opcodes and DW_LNE_* extended opcodes (DWARF 5, section 6.2.5.2-3).
_COPY, _ADVANCE_PC, _ADVANCE_LINE, _SET_FILE, _SET_COLUMN = 1, 2, 3, 4, 5
_NEGATE_STMT, _SET_BASIC_BLOCK, _CONST_ADD_PC, _FIXED_ADVANCE_PC = 6, 7, 8, 9
_SET_PROLOGUE_END, _SET_EPILOGUE_BEGIN, _SET_ISA = 10, 11, 12
_END_SEQUENCE, _SET_ADDRESS, _DEFINE_FILE, _SET_DISCRIMINATOR = 1, 2, 3, 4
# The standard opcodes are read by their meaning, not by the header's operand counts (as
# pyelftools and LLVM read them); the header's counts serve for opcodes past DWARF 5's.
_NO_OPERAND = frozenset((_COPY, _NEGATE_STMT, _SET_BASIC_BLOCK, _CONST_ADD_PC, _SET_PROLOGUE_END,
                         _SET_EPILOGUE_BEGIN))  # fmt: skip

# DW_LNCT_* content types and the DW_FORM_* forms of DWARF 5 entry formats.
_LNCT_PATH, _LNCT_DIRECTORY_INDEX = 1, 2
_FORM_BLOCK2, _FORM_BLOCK4, _FORM_DATA2, _FORM_DATA4, _FORM_DATA8 = 0x03, 0x04, 0x05, 0x06, 0x07
_FORM_STRING, _FORM_BLOCK, _FORM_BLOCK1, _FORM_DATA1, _FORM_FLAG = 0x08, 0x09, 0x0A, 0x0B, 0x0C
_FORM_SDATA, _FORM_STRP, _FORM_UDATA, _FORM_SEC_OFFSET, _FORM_DATA16, _FORM_LINE_STRP = (
    0x0D, 0x0E, 0x0F, 0x17, 0x1E, 0x1F)  # fmt: skip
_FIXED_FORMS = {_FORM_DATA1: 1, _FORM_DATA2: 2, _FORM_DATA4: 4, _FORM_DATA8: 8, _FORM_DATA16: 16, _FORM_FLAG: 1}


class DwarfLineError(FormatError):
    """A line program that cannot be read (the message says where in ``.debug_line``); its one
    caller, :func:`read_line_table`, turns it into no lines."""


@dataclass(frozen=True, slots=True)
class UnitRef:
    """A compilation unit's line program: ``DW_AT_stmt_list``, ``DW_AT_comp_dir`` (bytes or
    None) and the unit's address size (the size of ``DW_LNE_set_address``'s operand)."""

    offset: int
    comp_dir: bytes | None
    address_size: int


@dataclass(frozen=True, slots=True)
class _Header:
    version: int
    program_start: int
    program_end: int
    min_inst_length: int
    max_ops: int
    line_base: int
    line_range: int
    opcode_base: int
    standard_lengths: tuple[int, ...]
    names: dict[int, str]  # file index -> path as llvm-objdump prints it
    address_size: int


# The state of the machine just after a row that ended a range: (address, offset of the next
# opcode, op_index, file, line, and the range's start, file and line).
_Checkpoint = tuple[int, int, int, int, int, int, int, int]
CHECKPOINT_EVERY = 4096  # ranges; a kernel in a long sequence is read from the checkpoint before it


class _Sequences:
    """The sequences of one unit that have at least one range: where their opcodes start, the
    lowest and highest start of their ranges, whether their row addresses never fall, and for
    a long sequence that never falls a checkpoint every :data:`CHECKPOINT_EVERY` ranges."""

    __slots__ = ("checkpoints", "highest", "lowest", "monotonic", "offsets")

    def __init__(self) -> None:
        self.offsets = array("Q")
        self.lowest = array("Q")
        self.highest = array("Q")
        self.monotonic = array("B")
        self.checkpoints: dict[int, tuple[list[int], list[_Checkpoint]]] = {}


class LineTable:
    """The line programs of one code object, indexed by sequence (see the module docstring)."""

    def __init__(self, line: bytes, line_str: bytes, debug_str: bytes, units: Sequence[UnitRef]) -> None:
        self._data = line
        self._units: list[tuple[_Header, _Sequences]] = []
        scanned: dict[tuple[int, int], _Sequences] = {}
        for ref in units:
            header = _header(line, line_str, debug_str, ref)
            key = (ref.offset, ref.address_size)
            if key not in scanned:
                scanned[key] = _scan(line, header)
            self._units.append((header, scanned[key]))

    def ranges(self, lo: int, hi: int) -> LineRanges:
        """The ranges that decide the line of every address in [lo, hi), in address order (ties
        in the order the table gives them)."""
        # Of the sequences wholly below lo only those whose last range starts highest can hold the
        # range that starts last below lo; sequences starting at hi or above cannot matter.
        below_best = max(
            (h for _, seqs in self._units for h in seqs.highest if h < lo),
            default=-1,
        )
        out: LineRanges = []
        for header, seqs in self._units:
            for s, offset in enumerate(seqs.offsets):
                highest = seqs.highest[s]
                if seqs.lowest[s] >= hi or (highest < lo and highest != below_best):
                    continue
                resume = None
                if s in seqs.checkpoints:  # start at the last checkpoint below lo
                    addresses, states = seqs.checkpoints[s]
                    k = bisect.bisect_left(addresses, lo) - 1
                    resume = states[k] if k >= 0 else None
                _guarded(self._data, header, offset, lo, hi, bool(seqs.monotonic[s]), out, None, resume)
        out.sort(key=lambda r: (r[0], r[1]))
        return out


def _uleb(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    start = i
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if i - start >= _MAX_LEB:
            raise DwarfLineError(f"a LEB128 longer than {_MAX_LEB} bytes at .debug_line+{start:#x}")


def _sleb(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    start = i
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return (value - (1 << shift) if b & 0x40 else value), i
        if i - start >= _MAX_LEB:
            raise DwarfLineError(f"a LEB128 longer than {_MAX_LEB} bytes at .debug_line+{start:#x}")


def _int(data: bytes, i: int, size: int) -> int:
    if i + size > len(data):
        raise IndexError
    return int.from_bytes(data[i : i + size], "little")


def _cstring(data: bytes, i: int) -> tuple[bytes, int]:
    end = data.find(b"\0", i)
    if end < 0 or i > len(data):
        raise IndexError
    return data[i:end], end + 1


def _text(value: bytes | int) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _header(data: bytes, line_str: bytes, debug_str: bytes, ref: UnitRef) -> _Header:
    """The unit header at ``ref.offset`` and its file names."""
    try:
        return _read_header(data, line_str, debug_str, ref)
    except IndexError:
        raise DwarfLineError(f"the line program header at .debug_line+{ref.offset:#x} runs past its section") from None


def _read_header(data: bytes, line_str: bytes, debug_str: bytes, ref: UnitRef) -> _Header:
    i = ref.offset
    length = _int(data, i, 4)
    i += 4
    offset_size = 4
    if length == 0xFFFFFFFF:  # 64-bit DWARF
        length = _int(data, i, 8)
        i += 8
        offset_size = 8
    end = i + length
    if end > len(data):
        raise DwarfLineError(f"the line program at .debug_line+{ref.offset:#x} says it is {length} bytes, "
                             f"past the section's end ({len(data)} bytes)")  # fmt: skip
    version = _int(data, i, 2)
    i += 2
    if version >= 5:
        i += 2  # address_size, segment_selector_size
    header_length = _int(data, i, offset_size)
    i += offset_size
    program_start = i + header_length
    min_inst_length = data[i]
    i += 1
    max_ops = 1
    if version >= 4:
        max_ops = data[i]
        i += 1
    line_base, line_range, opcode_base = data[i + 1], data[i + 2], data[i + 3]  # data[i]: default_is_stmt
    line_base = line_base - 256 if line_base >= 128 else line_base
    i += 4
    if opcode_base == 0:
        raise DwarfLineError(f"the line program at .debug_line+{ref.offset:#x} has opcode_base 0")
    standard_lengths = tuple(data[i : i + opcode_base - 1])
    if len(standard_lengths) != opcode_base - 1:
        raise IndexError
    i += opcode_base - 1
    if version >= 5:
        strings = (line_str, debug_str)
        directories, i = _entries(data, i, offset_size, strings, ref.offset)
        files, i = _entries(data, i, offset_size, strings, ref.offset)
        try:
            folders = [_text(d[_LNCT_PATH]) for d in directories]
            entries = [(_text(f[_LNCT_PATH]), int(f[_LNCT_DIRECTORY_INDEX])) for f in files]
        except KeyError:
            raise DwarfLineError(f"a DWARF 5 file without a path or directory at .debug_line+{ref.offset:#x}") from None
        if not folders or not entries:  # DWARF 5 always names directory 0 and file 0
            raise DwarfLineError(f"DWARF 5 line program without directories or files at .debug_line+{ref.offset:#x}")
        comp_dir = folders[0]
    else:  # DWARF 2-4: the compilation directory is the unit's DW_AT_comp_dir, files count from 1
        comp_dir = _text(ref.comp_dir) if ref.comp_dir is not None else ""
        folders = [comp_dir]
        while True:
            directory, i = _cstring(data, i)
            if not directory:
                break
            folders.append(_text(directory))
        entries = []
        while True:
            file_name, i = _cstring(data, i)
            if not file_name:
                break
            in_folder, i = _uleb(data, i)
            _, i = _uleb(data, i)  # modification time
            _, i = _uleb(data, i)  # length
            entries.append((_text(file_name), in_folder))
    names: dict[int, str] = {}
    for index, (name, folder_index) in enumerate(entries):
        folder = folders[folder_index] if folder_index < len(folders) else ""
        # Directory 0 is the compilation directory itself: a relative one (clang's
        # -fdebug-compilation-dir=.) is not joined to itself, as llvm-objdump prints "./a.hip".
        if folder_index and not os.path.isabs(folder) and comp_dir:
            folder = os.path.join(comp_dir, folder)
        names[index if version >= 5 else index + 1] = os.path.join(folder, name)  # an absolute name stays
    return _Header(version, program_start, end, min_inst_length, max_ops, line_base, line_range,
                   opcode_base, standard_lengths, names, ref.address_size)  # fmt: skip


def _entries(
    data: bytes, i: int, offset_size: int, strings: tuple[bytes, bytes], unit: int
) -> tuple[list[dict[int, bytes | int]], int]:
    """A DWARF 5 directory or file name table: its entry format, then its entries."""
    count = data[i]
    i += 1
    formats = []
    for _ in range(count):
        content, i = _uleb(data, i)
        form, i = _uleb(data, i)
        formats.append((content, form))
    n, i = _uleb(data, i)
    if n > len(data) - i:  # every entry takes a byte at least (an empty format takes none)
        if formats:
            raise IndexError
        n = 0
    out = []
    for _ in range(n):
        entry: dict[int, bytes | int] = {}
        for content, form in formats:
            value: bytes | int
            if form == _FORM_STRING:
                value, i = _cstring(data, i)
            elif form in (_FORM_LINE_STRP, _FORM_STRP):
                at = _int(data, i, offset_size)
                i += offset_size
                value, _ = _cstring(strings[0] if form == _FORM_LINE_STRP else strings[1], at)
            elif form == _FORM_UDATA:
                value, i = _uleb(data, i)
            elif form == _FORM_SDATA:
                value, i = _sleb(data, i)
            elif form in _FIXED_FORMS:
                value = _int(data, i, _FIXED_FORMS[form])
                i += _FIXED_FORMS[form]
            elif form == _FORM_SEC_OFFSET:
                value = _int(data, i, offset_size)
                i += offset_size
            elif form in (_FORM_BLOCK, _FORM_BLOCK1, _FORM_BLOCK2, _FORM_BLOCK4):
                if form == _FORM_BLOCK:
                    size, i = _uleb(data, i)
                else:
                    width = {_FORM_BLOCK1: 1, _FORM_BLOCK2: 2, _FORM_BLOCK4: 4}[form]
                    size = _int(data, i, width)
                    i += width
                if i + size > len(data):
                    raise IndexError
                value = data[i : i + size]
                i += size
            else:
                raise DwarfLineError(f"form {form:#x} in the line program header at .debug_line+{unit:#x}")
            entry[content] = value
        out.append(entry)
    return out, i


def _scan(data: bytes, h: _Header) -> _Sequences:
    """Every sequence of one unit's program, run without keeping rows."""
    seqs = _Sequences()
    _guarded(data, h, h.program_start, 0, 0, False, None, seqs, None)
    return seqs


def _guarded(
    data: bytes,
    h: _Header,
    i: int,
    lo: int,
    hi: int,
    rises: bool,
    out: LineRanges | None,
    seqs: _Sequences | None,
    resume: _Checkpoint | None,
) -> None:
    try:
        _execute(data, h, i, lo, hi, rises, out, seqs, resume)
    except IndexError:
        raise DwarfLineError(f"the line program ending at .debug_line+{h.program_end:#x} runs past its end") from None
    except ZeroDivisionError:
        raise DwarfLineError(f"line_range or maximum_operations_per_instruction 0 in the line program ending at "
                             f".debug_line+{h.program_end:#x}") from None  # fmt: skip


def _execute(  # one loop over the opcodes, both jobs: it is what keeps the reader fast
    data: bytes,
    h: _Header,
    i: int,
    lo: int,
    hi: int,
    rises: bool,
    out: LineRanges | None,
    seqs: _Sequences | None,
    resume: _Checkpoint | None,
) -> None:
    """Run the line program from ``i``.

    With ``seqs`` (the scan): to the program's end, noting in ``seqs`` every sequence that has a
    range. With ``out``: one sequence, appending to ``out`` its ranges that start in [lo, hi)
    and its last-starting range below lo; a sequence whose row addresses never fall (``rises``,
    as the scan found) stops once a range starts at hi or above (none after it can start lower);
    ``resume`` starts it at a checkpoint of the scan instead, the range that ended there being
    the last one below lo so far."""
    opcode_base, min_len, max_ops, line_range = h.opcode_base, h.min_inst_length, h.max_ops, h.line_range
    simple = max_ops == 1 and line_range != 0
    advance = [0] * 256
    line_step = [0] * 256
    if line_range:
        for op in range(opcode_base, 256):
            advance[op] = ((op - opcode_base) // line_range) * min_len
            line_step[op] = h.line_base + (op - opcode_base) % line_range
    end = h.program_end
    names = h.names
    collect = out is not None
    address = op_index = 0
    file = line = 1
    previous = -1  # the address of the sequence's last row, -1 before its first
    previous_file = previous_line = 0
    lowest = highest = -1
    monotonic = True
    best: tuple[int, int, int, int] | None = None  # the last-starting range below lo
    start = i
    ranges = 0  # since the last checkpoint
    marks: list[int] = []
    states: list[_Checkpoint] = []
    if resume is not None:
        address, i, op_index, file, line, range_start, range_file, range_line = resume
        previous, previous_file, previous_line = address, file, line
        best = (range_start, address, range_file, range_line)
    while i < end:
        op = data[i]
        i += 1
        if op >= opcode_base:
            if simple:
                address += advance[op]
            else:
                step = (op - opcode_base) // line_range
                address += min_len * ((op_index + step) // max_ops)
                op_index = (op_index + step) % max_ops
            line += line_step[op]
        elif op == _SET_COLUMN:  # the standard opcodes most common first; one-byte LEB128s inline
            if data[i] < 0x80:
                i += 1
            else:
                _, i = _uleb(data, i)
            continue
        elif op == _ADVANCE_LINE:
            b = data[i]
            if b < 0x80:
                line += b - 0x80 if b & 0x40 else b
                i += 1
            else:
                value, i = _sleb(data, i)
                line += value
            continue
        elif op == _NEGATE_STMT:
            continue
        elif op == _SET_FILE:
            b = data[i]
            if b < 0x80:
                file = b
                i += 1
            else:
                file, i = _uleb(data, i)
            continue
        elif op == 0:
            length, i = _uleb(data, i)
            sub = data[i]
            i += 1
            if sub != _END_SEQUENCE:
                if sub == _SET_ADDRESS:
                    address = _int(data, i, h.address_size)
                    i += h.address_size
                elif sub == _DEFINE_FILE:  # a name not in the header's table: given as "<file N>", as before
                    if h.version >= 5:
                        raise DwarfLineError(f"DW_LNE_define_file in a DWARF 5 line program at .debug_line+{i:#x}")
                    name, i = _cstring(data, i)
                    if name:
                        for _ in range(3):
                            _, i = _uleb(data, i)
                elif sub == _SET_DISCRIMINATOR:
                    _, i = _uleb(data, i)
                else:
                    i += length - 1
                continue
        elif op == _CONST_ADD_PC:
            address += ((255 - opcode_base) // line_range) * min_len
            continue
        elif op == _ADVANCE_PC:
            value, i = _uleb(data, i)
            address += value * min_len
            continue
        elif op == _FIXED_ADVANCE_PC:
            address += _int(data, i, 2)
            i += 2
            continue
        elif op == _SET_ISA:
            _, i = _uleb(data, i)
            continue
        elif op != _COPY:
            if op not in _NO_OPERAND:  # an opcode this reader does not know: skip its operands
                for _ in range(h.standard_lengths[op - 1]):
                    _, i = _uleb(data, i)
            continue
        # A row (a special opcode, DW_LNS_copy or DW_LNE_end_sequence): the range from the last
        # row to this one; of rows at one address the last counts.
        if previous >= 0:
            if address > previous:
                if collect:
                    if previous >= lo:
                        if previous < hi:
                            out.append((previous, address, _where(names, previous_file, previous_line)))  # type: ignore[union-attr]
                        elif rises:
                            break
                    elif best is None or (previous, address) >= best[:2]:
                        best = (previous, address, previous_file, previous_line)
                else:
                    if lowest < 0 or previous < lowest:
                        lowest = previous
                    if previous > highest:
                        highest = previous
                    ranges += 1
                    if ranges >= CHECKPOINT_EVERY and monotonic and op != 0:
                        ranges = 0
                        marks.append(address)
                        states.append((address, i, op_index, file, line, previous, previous_file, previous_line))
            elif address < previous:
                monotonic = False
        if op != 0:
            previous, previous_file, previous_line = address, file, line
            continue
        # DW_LNE_end_sequence
        if collect:
            break
        _note(seqs, start, lowest, highest, monotonic, marks, states)  # type: ignore[arg-type]
        address = op_index = ranges = 0
        file = line = 1
        previous = lowest = highest = -1
        monotonic = True
        start = i
        marks, states = [], []
    if collect:
        if best is not None:
            out.append((best[0], best[1], _where(names, best[2], best[3])))  # type: ignore[union-attr]
    else:
        _note(seqs, start, lowest, highest, monotonic, marks, states)  # type: ignore[arg-type]  # left unended


def _note(
    seqs: _Sequences,
    start: int,
    lowest: int,
    highest: int,
    monotonic: bool,
    marks: list[int],
    states: list[_Checkpoint],
) -> None:
    if 0 <= lowest < _ADDRESS_LIMIT:
        if monotonic and states:
            seqs.checkpoints[len(seqs.offsets)] = (marks, states)
        seqs.offsets.append(start)
        seqs.lowest.append(lowest)
        seqs.highest.append(min(highest, _ADDRESS_LIMIT - 1))
        seqs.monotonic.append(monotonic)


def _where(names: dict[int, str], file: int, line: int) -> str | None:
    if line == 0:
        return None
    return f"{names.get(file, f'<file {file}>')}:{line}"


def read_line_table(image: bytes) -> LineTable | None:
    """The line table of one code object (an ELF image), or None without ``.debug_line`` or
    when it cannot be read (damage gives no lines, never an error)."""
    try:
        from elftools.elf.elffile import ELFFile
    except ImportError:  # pragma: no cover - a dependency of the package
        return None
    try:
        elf = ELFFile(io.BytesIO(image))
        if elf.get_section_by_name(".debug_line") is None:
            return None
        dwarf = elf.get_dwarf_info(relocate_dwarf_sections=elf["e_type"] == "ET_REL")
        if dwarf.debug_line_sec is None:
            return None
        units = []
        for cu in dwarf.iter_CUs():  # the units the compilation units name, in their order
            attributes = cu.get_top_DIE().attributes
            stmt_list = attributes.get("DW_AT_stmt_list")
            if stmt_list is None:
                continue
            comp_dir = attributes.get("DW_AT_comp_dir")
            address_size = 4 if cu["address_size"] == 4 else 8  # the two pyelftools reads
            units.append(UnitRef(int(stmt_list.value), _bytes(comp_dir.value) if comp_dir else None, address_size))
        return LineTable(
            _section(dwarf.debug_line_sec), _section(dwarf.debug_line_str_sec), _section(dwarf.debug_str_sec), units
        )
    except Exception:  # pyelftools raises its construct library's errors on bad DWARF; ours DwarfLineError
        return None


def _section(descriptor: object) -> bytes:
    stream = getattr(descriptor, "stream", None)
    return stream.getvalue() if isinstance(stream, io.BytesIO) else b""


def _bytes(value: object) -> bytes | None:
    if isinstance(value, bytes):
        return value
    return str(value).encode()
