"""One kernel's machine code analysed: instructions, control flow, spills, mix, waits, size.

:func:`analyse` is what ``amdocc isa`` and :func:`amdocc.app.isa` report for one kernel; the
record is plain, and :func:`summary` and :func:`instruction_rows` turn it into the JSON
contract's objects (docs/isa.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import itemgetter, not_
from typing import Any

from ..caches import register
from ..codeobject.model import Kernel
from ..errors import Origin
from .decode import decode_bytes
from .extent import KernelCode, code_map, kernel_code
from .flow import control_flow
from .libllvm import library
from .lines import kernel_lines
from .liveness import Liveness, allocation_breaches, hardware_initialised
from .liveness import analyse as analyse_liveness
from .mix import classify, family_of, waited_counters
from .model import ControlFlow, Instruction
from .spills import Spills, as_summary, find_spills

_SCRATCH_MARKS = frozenset(("vgpr", "vgpr_reload"))  # the spill marks of scratch loads and stores


@dataclass(frozen=True, slots=True)
class KernelIsa:
    """Everything ``amdocc isa`` knows about one kernel's code.

    Attributes:
        kernel: the kernel.
        code: its extent and decoding settings.
        instructions: the decoded instructions, in address order.
        flow: the control-flow graph (``flow.unknown``: why it is not known).
        block: each instruction's block index.
        loop_depth: each instruction's loop depth.
        spills: scratch and lane spills, reconciled with the metadata.
        classes: each instruction's mix class (tables/isa_mix.toml).
        disassembler: the libLLVM that decoded it (path, version, where found).
        lines: each instruction's "file:line" from DWARF .debug_line (None where there is none).
        liveness: registers live at each instruction (docs/liveness.md), or why not known.
    """

    kernel: Kernel
    code: KernelCode
    instructions: tuple[Instruction, ...]
    flow: ControlFlow
    block: tuple[int, ...]
    loop_depth: tuple[int, ...]
    spills: Spills
    classes: tuple[str, ...]
    disassembler: dict[str, Any]
    lines: tuple[str | None, ...] = ()
    liveness: Liveness | None = None


def analyse(
    kernel: Kernel, origin: Origin | None = None, processor: str | None = None, lines: bool = True
) -> KernelIsa:
    """Decode ``kernel`` and work out its control flow, spills and mix; ``lines`` False leaves the
    source lines out (``KernelIsa.lines`` empty, as for code without a line table)."""
    code = kernel_code(kernel, origin, processor)
    lib = library()
    where = origin or Origin(f"<code object of {kernel.name}>")
    instructions = decode_bytes(code.code, code.address, code.processor, code.features, lib, where, code.file_offset)
    flow = control_flow(instructions)
    block = flow.block_of()
    depth_of_block = [b.loop_depth for b in flow.blocks]
    loop_depth = tuple(map(depth_of_block.__getitem__, block))
    descriptor = kernel.descriptor
    private_buffer = bool(descriptor and descriptor.fields.get("user_sgpr_private_segment_buffer"))
    sgpr_spills, vgpr_spills = kernel.resources.spills
    spills = find_spills(
        instructions,
        private_segment_buffer=private_buffer,
        vgpr_spill_count=vgpr_spills,
        sgpr_spill_count=sgpr_spills,
        private_segment_fixed_size=kernel.resources.scratch,
    )
    target = kernel.target
    scratch = list(map(_SCRATCH_MARKS.__contains__, spills.marks))
    family = family_of(target.family if target and not processor else _family(processor))
    classes = classify(instructions, family, scratch)
    # The DWARF reader is asked only when amdocc's own ELF reader sees a line table (most code has none).
    sections = code_map(kernel.image, where).elf.sections
    has_lines = lines and any(s.name == ".debug_line" for s in sections)
    source = kernel_lines(instructions, kernel.image) if has_lines else ()
    liveness = kernel_liveness(kernel, code, instructions, flow)
    return KernelIsa(
        kernel, code, instructions, flow, block, loop_depth, spills, classes, dict(lib.description), source, liveness
    )


def kernel_liveness(
    kernel: Kernel, code: KernelCode, instructions: Sequence[Instruction], flow: ControlFlow
) -> Liveness:
    """Liveness of one kernel's decoded code, with the def/use rules of the processor it was
    decoded for and the registers its descriptor says the hardware initialises."""
    from ..errors import AmdoccError
    from ..targets import get_target
    from .semantics import semantics

    try:
        target = get_target(code.processor)
    except AmdoccError:
        return Liveness(f"no def/use rules for processor {code.processor!r}")
    fields = kernel.descriptor.fields if kernel.descriptor else None
    seed = hardware_initialised(fields, code.processor) if fields else None
    return analyse_liveness(instructions, flow, semantics(target.isa_version[0], code.wavefront_size), seed)


def _family(processor: str | None) -> str | None:
    from ..errors import AmdoccError
    from ..targets import get_target

    if not processor:
        return None
    try:
        return get_target(processor).family
    except AmdoccError:
        return None


def _count(classes: Sequence[str], depths: Sequence[int], known: bool) -> dict[str, dict[str, int | None]]:
    total = Counter(classes)
    if len(classes) != len(depths):
        raise ValueError(f"{len(classes)} classes for {len(depths)} loop depths")
    inside = Counter(compress(classes, depths))  # depth > 0 (a depth is never negative): in a loop
    return {c: {"all": n, "in_loops": inside.get(c, 0) if known else None} for c, n in sorted(total.items())}


def summary(isa: KernelIsa) -> dict[str, Any]:
    """The JSON contract's ``summary`` object. Figures built on the control-flow graph (loops,
    depths, "in_loops") are null when the graph is not known."""
    known = isa.flow.unknown is None
    if not len(isa.instructions) == len(isa.classes) == len(isa.loop_depth):
        raise ValueError(f"{len(isa.instructions)} instructions, {len(isa.classes)} classes")
    is_wait = list(map("waitcnt".__eq__, isa.classes))
    waits = list(compress(isa.instructions, is_wait))
    wait_depths = list(compress(isa.loop_depth, is_wait))
    counters: Counter[str] = Counter()
    one_of = dict(zip(map(_TEXT, waits), waits, strict=True))  # the counters are read once per distinct text
    for text, n in Counter(map(_TEXT, waits)).items():
        for counter in waited_counters(one_of[text]):
            counters[counter] += n
    loops = isa.flow.loops
    return {
        "instructions": len(isa.instructions),
        "bytes": len(isa.code.code),
        "blocks": len(isa.flow.blocks),
        "unreachable_blocks": sum(not b.reachable for b in isa.flow.blocks) if known else None,
        "loops": len(loops) if known else None,
        "max_loop_depth": max((b.loop_depth for b in isa.flow.blocks if b.reachable), default=0) if known else None,
        "unknown": isa.flow.unknown,
        "undecodable": len(isa.instructions) - sum(map(_DECODED, isa.instructions)),
        "spills": as_summary(isa.spills, isa.spills.in_loops(isa.loop_depth) if known else None),
        "mix": _count(isa.classes, isa.loop_depth, known),
        "waitcnt": {
            "all": len(waits),
            "in_loops": sum(d > 0 for d in wait_depths) if known else None,
            "counters": dict(sorted(counters.items())),
        },
        **live_summary(isa),
    }


def live_summary(isa: KernelIsa) -> dict[str, Any]:
    """``max_live`` (and the refined figure), ``peak`` with the stretches where each class is at
    its maximum (addresses, loop depth, source lines), the reason when liveness is unknown, and
    findings when more registers are live than the descriptor allocates."""
    live = isa.liveness
    if live is None or live.unknown is not None or live.max_live is None or live.max_refined is None:
        reason = live.unknown if live is not None else "liveness not computed"
        return {"max_live": None, "max_live_refined": None, "peak": None, "liveness_unknown": reason,
                "live_findings": []}  # fmt: skip
    index = {ins.address: i for i, ins in enumerate(isa.instructions)} if isa.lines else {}
    peak = {}
    for p in live.peaks:
        stretches = []
        for s in p.stretches:
            lines = isa.lines[index[s.first] : index[s.last] + 1] if isa.lines else ()
            stretches.append({"first": s.first, "last": s.last, "loop_depth": s.loop_depth,
                              "lines": sorted({x for x in lines if x})})  # fmt: skip
        peak[p.register_class] = {"count": p.count, "at": stretches}
    descriptor = isa.kernel.descriptor
    return {
        "max_live": live.max_live._asdict(),
        "max_live_refined": live.max_refined._asdict(),
        "peak": peak,
        "liveness_unknown": None,
        "live_findings": allocation_breaches(live.max_live, descriptor.fields) if descriptor else [],
    }


def instruction_rows(isa: KernelIsa) -> list[dict[str, Any]]:
    """The JSON contract's ``instructions`` list (``amdocc isa --json`` writes the same rows as
    text with :func:`instruction_rows_json`)."""
    known = isa.flow.unknown is None
    count = len(isa.instructions)
    reachable = [b.reachable if known else None for b in isa.flow.blocks]
    depths: Sequence[int | None] = isa.loop_depth if known else [None] * count
    lines: Sequence[str | None] = isa.lines if isa.lines else [None] * count
    live: Sequence[dict[str, int] | None] = [None] * count
    if isa.liveness is not None and isa.liveness.unknown is None and isa.liveness.live:
        live = [{"vgpr": v, "agpr": a, "sgpr": s} for v, a, s in isa.liveness.live]
    return [
        {
            "address": ins.address,
            "size": ins.size,
            "text": ins.text,
            "decoded": ins.decoded,
            "block": b,
            "reachable": reachable[b],
            "loop_depth": depth,
            "line": line,
            "spill": mark,
            "class": cls,
            "live": counts,
        }
        for ins, b, depth, line, mark, cls, counts in zip(
            isa.instructions, isa.block, depths, lines, isa.spills.marks, isa.classes, live, strict=True
        )
    ]


def instruction_rows_json(isa: KernelIsa) -> str | None:
    """The ``instructions`` list as compact JSON text, the same characters that
    ``instruction_rows`` turned into compact JSON gives, written straight from the columns
    without a dict per row. None when a text or a source line is not plain printable ASCII
    (nothing escaped): the JSON encoders differ on such strings, so the caller turns the rows
    into JSON itself."""
    instructions = isa.instructions
    count = len(instructions)
    if not count:
        return "[]"
    lines = isa.lines
    # The instructions' columns, transposed once: cheaper than an itemgetter map per column, for
    # an iterator per instruction held while it runs (about 50 bytes each).
    addresses, sizes, texts, _, _, decoded, _ = zip(*instructions, strict=True)
    if not _known_plain(texts) or (lines and not _plain(filter(None, lines))):
        return None
    marks, classes, blocks = isa.spills.marks, isa.classes, isa.block
    if not len(marks) == len(classes) == len(blocks) == count or (lines and len(lines) != count):
        raise ValueError(f"{count} instructions, {len(marks)} spill marks, {len(classes)} classes")
    known = isa.flow.unknown is None
    # The rows are one "".join of pieces, k a row, laid out column by column with slice
    # assignments (no Python loop, no tuple per row): the address; the size with the keys
    # around it; the text; decoded and the block's fields up to "line":; the line (only when
    # there are lines); spill and class; the live counts, ending with the next row's key.
    # A piece that repeats is one string, looked up: one per size, block, class, live count.
    where = [
        f',"block":{b},"reachable":{_json_bool(block.reachable) if known else "null"},'
        f'"loop_depth":{block.loop_depth if known else "null"},"line":{"" if lines else "null"}'
        for b, block in enumerate(isa.flow.blocks)
    ]
    k = 7 if lines else 6
    pieces = [""] * (k * count)
    pieces[0::k] = map(str, addresses)
    pieces[1::k] = map(_SIZE_PIECE.__getitem__, sizes)
    pieces[2::k] = texts
    decoded_where = ['","decoded":true' + w for w in where]
    pieces[3::k] = map(decoded_where.__getitem__, blocks)
    if not all(decoded):
        for i in compress(range(count), map(not_, decoded)):
            pieces[i * k + 3] = '","decoded":false' + where[blocks[i]]
    if lines:
        quoted = {x: "null" if x is None else f'"{x}"' for x in set(lines)}
        pieces[4::k] = map(quoted.__getitem__, lines)
    pieces[k - 2 :: k] = map(_CLASS_PIECE.__getitem__, classes)
    if any(marks):
        for i in compress(range(count), marks):
            pieces[i * k + k - 2] = f',"spill":{json.dumps(marks[i])},"class":{json.dumps(classes[i])},"live":'
    live = isa.liveness
    if live is not None and live.unknown is None and live.live:
        if len(live.live) != count:
            raise ValueError(f"{count} instructions, {len(live.live)} live counts")
        if len(_LIVE_PIECE) > _PIECES_BOUND:
            _LIVE_PIECE.clear()
        pieces[k - 1 :: k] = map(_LIVE_PIECE.__getitem__, live.live)
    else:
        pieces[k - 1 :: k] = repeat(_NEXT_ROW_AFTER_NULL, count)
    pieces[-1] = pieces[-1][: -len(_NEXT_ROW)] + "]"
    pieces.insert(0, "[" + _NEXT_ROW[1:])
    return "".join(pieces)


# Instruction's fields, read faster than by name
_TEXT, _DECODED = itemgetter(2), itemgetter(5)
_NEXT_ROW = ',{"address":'
_NEXT_ROW_AFTER_NULL = "null}" + _NEXT_ROW


def _json_bool(value: bool) -> str:
    return "true" if value else "false"


class _Pieces(dict[Any, str]):
    """Row pieces made on first use from a key (a class name, a live count), kept for the process."""

    def __init__(self, name: str, make: Callable[[Any], str]) -> None:
        super().__init__()
        self.make = make
        register(name, self.clear)

    def __missing__(self, key: Any) -> str:
        value = self[key] = self.make(key)
        return value


_PIECES_BOUND = 1 << 16  # live-count pieces kept before starting afresh (classes are a table's few)
_SIZE_PIECE = _Pieces("amdocc.isa.analysis._SIZE_PIECE", lambda size: f',"size":{size},"text":"')
_CLASS_PIECE = _Pieces("amdocc.isa.analysis._CLASS_PIECE", lambda c: f',"spill":null,"class":{json.dumps(c)},"live":')
_LIVE_PIECE = _Pieces(
    "amdocc.isa.analysis._LIVE_PIECE", lambda c: f'{{"vgpr":{c[0]},"agpr":{c[1]},"sgpr":{c[2]}}}}}{_NEXT_ROW}'
)

# Texts already found plain (a kernel's texts are mostly those of kernels read before): each
# text is checked once, and a kernel's texts are then one set look-up each.
_PLAIN_TEXTS: set[str] = set()
register("amdocc.isa.analysis._PLAIN_TEXTS", _PLAIN_TEXTS.clear)


def _known_plain(texts: Sequence[str]) -> bool:
    """Whether every text is plain (:func:`_plain`), remembering those that are."""
    if _PLAIN_TEXTS.issuperset(texts):
        return True
    new = set(texts).difference(_PLAIN_TEXTS)
    if not _plain(new):
        return False
    if len(_PLAIN_TEXTS) + len(new) > _PIECES_BOUND:
        _PLAIN_TEXTS.clear()
    _PLAIN_TEXTS.update(new)
    return True


_PLAIN_BYTES = bytes(range(0x20, 0x7F))  # printable ASCII: DEL and control characters are not


def _plain(values: Iterable[str]) -> bool:
    """Whether every one of ``values`` stands as it is between the quotes of a JSON string:
    printable ASCII with nothing to escape (no quote, backslash, control character or DEL)."""
    joined = "".join(values)
    if not joined.isascii() or '"' in joined or "\\" in joined:
        return False
    return not joined.encode("ascii").translate(None, _PLAIN_BYTES)
