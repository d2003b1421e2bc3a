"""Register liveness per instruction over a kernel's control-flow graph, and where it peaks.

A backward dataflow over the blocks of a :class:`~amdocc.isa.model.ControlFlow`, on the register
sets of :mod:`amdocc.isa.semantics` (Python ints: SGPRs s0..s105, special registers apart, and each
VGPR and AGPR as two 16-bit halves). The figure at an instruction is the number of 32-bit registers
live before or after it (live-in ∪ live-out), the convention of RGA's livereg view; a register counts
when either of its halves is live.

A second, refined figure keeps only the registers something may have written by then: a forward
"may be defined" pass seeded with the registers the hardware initialises (the kernel descriptor's
user and system SGPRs, preloaded kernel arguments, the work-item id VGPRs). Spill code that stores
a whole pair of which only one half was ever written (``scratch_store_dwordx2 off, v[2:3]`` after
writing only ``v3``) makes the other half look live back to the entry in the first figure, as the
ISA cannot say what LLVM's machine IR marks ``undef``; the refined figure drops it.

Fails closed: an unknown control-flow graph, GPR indexing, an indirect call, or an undecodable word
in reachable code gives ``unknown`` with the reason, and no figure.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from operator import attrgetter, itemgetter, or_
from typing import NamedTuple, overload

from ..caches import register
from .model import Block, ControlFlow, Instruction
from .semantics import (
    AGPR_BASE,
    AGPR_LOW_BITS,
    SGPR_MASK,
    SGPRS,
    SPECIAL_MASK,
    VGPR_BASE,
    VGPR_LOW_BITS,
    VGPR_MASK,
    Access,
    Semantics,
    count_agprs,
    count_sgprs,
    count_vgprs,
    sgpr_bits,
    table,
    vgpr_bits,
)

CLASSES = ("vgpr", "agpr", "sgpr")  # the order of Counts' fields


class Counts(NamedTuple):
    """Registers live at one point, by class (32-bit registers; special registers not counted)."""

    vgpr: int
    agpr: int
    sgpr: int

    @classmethod
    def of(cls, regs: int) -> Counts:
        return cls(count_vgprs(regs), count_agprs(regs), count_sgprs(regs))

    def get(self, register_class: str) -> int:
        return self[CLASSES.index(register_class)]


@dataclass(frozen=True, slots=True)
class Stretch:
    """Consecutive instructions at which one class reaches its maximum."""

    first: int  # address of the first instruction
    last: int  # address of the last instruction
    loop_depth: int


@dataclass(frozen=True, slots=True)
class Peak:
    """The maximum of one class and every stretch of code where it is reached."""

    register_class: str
    count: int
    stretches: tuple[Stretch, ...]


@dataclass(frozen=True, slots=True)
class Liveness:
    """Liveness of one kernel, or why it is not known.

    Attributes:
        unknown: None when known; else the reason, and every other field is empty.
        live_in / live_out: the register set live before / after each instruction (immutable
            sequences, a tuple or an :class:`Unpacked` equal to one).
        live: per instruction, the counts of ``live_in | live_out`` (RGA's convention).
        refined: the same restricted to registers that may have been written by then (seeded
            with what the hardware initialises); equal to ``live`` without a seed.
        block_live_in: the register set live at each block's entry.
        max_live / max_refined: the largest count of each class over all instructions.
        peaks: per class, the stretches where ``live`` reaches ``max_live``.
    """

    unknown: str | None
    live_in: Sequence[int] = ()
    live_out: Sequence[int] = ()
    live: tuple[Counts, ...] = ()
    refined: tuple[Counts, ...] = ()
    block_live_in: tuple[int, ...] = ()
    max_live: Counts | None = None
    max_refined: Counts | None = None
    peaks: tuple[Peak, ...] = ()


def accesses(instructions: Sequence[Instruction], semantics: Semantics) -> list[Access]:
    """Each instruction's register access (an undecodable word is ``unknown``)."""
    distinct, which = _accesses(instructions, semantics)
    return [distinct[k] for k in which]


def _accesses(instructions: Sequence[Instruction], semantics: Semantics) -> tuple[list[Access], list[int]]:
    """The distinct accesses of the instructions, and each instruction's index among them. Asked
    once per distinct text: an instruction's mnemonic and operands are its text's words."""
    distinct: list[Access] = []
    which: list[int] = []
    append = which.append
    seen: dict[str, int] = {}
    for ins in instructions:
        k = seen.get(ins.text)
        if k is None:
            k = len(distinct)
            if ins.decoded:
                seen[ins.text] = k
                distinct.append(semantics.access(ins.mnemonic, ins.operands))
            else:
                distinct.append(Access(0, 0, "undecodable", f"undecodable word at {ins.address:#x}"))
        append(k)
    return distinct, which


# One instruction's access in a kernel's packed layout: (defs, uses, du, dnu), with the two masks
# of its transfer function live_in = (live_out | du) ^ dnu, du = defs | uses and dnu = defs less
# uses: two big-int operations an instruction, not three. A plain tuple: the loops unpack it, and
# a named tuple is unpacked through an iterator.
_Transfer = tuple[int, int, int, int]


def _transfer(access: Access, layout: _Layout) -> _Transfer:
    defs, uses = layout.pack(access.defs), layout.pack(access.uses)
    return defs, uses, defs | uses, (defs | uses) ^ uses


# Each text's _Transfer, per Semantics and packed layout (kernels of one build share most texts
# and layouts): a kernel's are then looked up in one pass over its texts.
_TRANSFERS: dict[tuple[Semantics, int], dict[str, _Transfer]] = {}
_TRANSFERS_BOUND = 1 << 16  # texts remembered over all the tables
register("amdocc.isa.liveness._TRANSFERS", _TRANSFERS.clear)


def _transfers(
    instructions: Sequence[Instruction], semantics: Semantics, seed: int
) -> tuple[list[_Transfer], _Layout] | str:
    """Each instruction's transfer and the kernel's layout, or why its registers are not known
    (the first unknown access in reachable code is found by the caller)."""
    texts = list(map(_TEXT, instructions))
    if not all(map(_DECODED, instructions)):
        return "undecodable"
    first = dict(zip(texts, instructions, strict=True))  # one instruction per distinct text
    distinct = semantics.text_accesses(first)
    if any(map(_UNKNOWN, distinct)):
        return "unknown"
    layout = _Layout.for_sets(map(or_, map(_DEFS, distinct), map(_USES, distinct)), seed)
    table = _TRANSFERS.setdefault((semantics, layout.top), {})
    if None in map(table.get, first):
        if sum(map(len, _TRANSFERS.values())) + len(first) > _TRANSFERS_BOUND:
            _TRANSFERS.clear()
            table = _TRANSFERS[(semantics, layout.top)] = {}
        for text, access in zip(first, distinct, strict=True):
            if text not in table:
                table[text] = _transfer(access, layout)
    return list(map(table.__getitem__, texts)), layout


# Fields by position: itemgetter reads a named tuple's field several times faster than attrgetter.
_TEXT, _DECODED = itemgetter(Instruction._fields.index("text")), itemgetter(Instruction._fields.index("decoded"))
_TRANSFER_DEFS, _TRANSFER_USES = itemgetter(0), itemgetter(1)
_UNKNOWN = attrgetter("unknown")


def analyse(
    instructions: Sequence[Instruction],
    flow: ControlFlow,
    semantics: Semantics,
    initialised: int | None = None,
) -> Liveness:
    """Liveness of one kernel. ``initialised`` is the register set the hardware writes before the
    first instruction (:func:`hardware_initialised`); without it the refined figure equals the plain one."""
    if flow.unknown:
        return Liveness(f"control flow unknown: {flow.unknown}")
    fast = _transfers(instructions, semantics, initialised or 0)
    if isinstance(fast, tuple):
        transfers, layout = fast
    else:  # an undecodable word or an unknown access somewhere: is one in reachable code?
        distinct, which = _accesses(instructions, semantics)
        for block in flow.blocks:
            if not block.reachable:
                continue
            for i in range(block.start, block.end):
                a = distinct[which[i]]
                if a.unknown:
                    return Liveness(f"{a.unknown} ({instructions[i].text!r} at {instructions[i].address:#x})")
        layout = _Layout.for_sets([a.defs | a.uses for a in distinct], initialised or 0)
        transfers = list(map([_transfer(a, layout) for a in distinct].__getitem__, which))
    if initialised is not None:
        initialised = layout.pack(initialised)

    blocks = flow.blocks
    n_blocks = len(blocks)
    preds: list[list[int]] = [[] for _ in range(n_blocks)]
    for b in blocks:
        for s in b.successors:
            preds[s].append(b.index)

    # Per instruction, going back through each block; the figure is of live_in | live_out, which
    # is live_out | uses (live_in is live_out less defs, plus uses), counted once per distinct set.
    # An instruction keeps the index of its Counts among the kernel's distinct ones. The blocks
    # go by strongly connected components, each after the components it reaches: a block in no
    # cycle then has its live-out from its successors' live-ins, and its walk gives its own; only
    # the blocks of a cycle are first solved together as transfer functions (_solve_cycle).
    count = len(instructions)
    live_in = [0] * count
    live_out = [0] * count
    figures = [0] * count
    counts: list[Counts] = []
    figure_of: dict[int, int] = {}
    get = figure_of.get
    figure = layout.counter(counts)
    block_in = [0] * n_blocks
    for component in _components([b.successors for b in blocks]):
        if len(component) > 1 or component[0] in blocks[component[0]].successors:
            _solve_cycle(component, blocks, transfers, preds, block_in)
        for bi in component:
            b = blocks[bi]
            live = 0
            for s in b.successors:
                live |= block_in[s]
            i = b.end
            for _, uses, du, dnu in reversed(transfers[b.start : b.end]):
                i -= 1
                live_out[i] = live
                both = live | uses
                f = get(both)
                if f is None:
                    f = figure_of[both] = figure(both)
                figures[i] = f
                live = (live | du) ^ dnu
            # An instruction's live_in is the live_out of the one before it; the block's first has the block's.
            live_in[b.start + 1 : b.end] = live_out[b.start : b.end - 1]
            if b.start < b.end:
                live_in[b.start] = live
            block_in[bi] = live

    max_live = _maximum(counts)  # before the refined pass adds its own
    peaks = _peaks(max_live, counts, figures, instructions, flow)

    # The refined figure: forward through each block, what may have been written by then.
    def figure_at(regs: int) -> int:
        f = get(regs)
        if f is None:
            f = figure_of[regs] = figure(regs)
        return f

    refined = figures
    if initialised is not None:
        refined = _refined(figures, transfers, live_in, live_out, block_in, preds, flow, initialised, figure_at)

    live_counts = tuple(map(counts.__getitem__, figures))
    return Liveness(
        None,
        layout.unpacked(live_in),
        layout.unpacked(live_out),
        live_counts,
        live_counts if refined is figures else tuple(map(counts.__getitem__, refined)),
        tuple(map(layout.unpack, block_in)),
        max_live,
        max_live if refined is figures else _maximum(map(counts.__getitem__, set(refined))),
        peaks,
    )


_DEFS, _USES = attrgetter("defs"), attrgetter("uses")


def _components(successors: Sequence[Sequence[int]]) -> list[list[int]]:
    """The strongly connected components of a graph, each listed after every component it
    reaches (Tarjan's algorithm, without recursion)."""
    n = len(successors)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            if i < len(successors[v]):
                work[-1] = (v, i + 1)
                w = successors[v][i]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work and low[v] < low[work[-1][0]]:
                low[work[-1][0]] = low[v]
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                out.append(component)
    return out


def _solve_cycle(
    component: list[int],
    blocks: Sequence[Block],
    transfers: list[_Transfer],
    preds: list[list[int]],
    block_in: list[int],
) -> None:
    """The live-in of each block of one cyclic component (``block_in`` already holds those of
    the blocks it reaches outside it): each block as one transfer function,
    live_in = (live_out & ~kill) | gen, iterated to the least fixpoint. ``(x | k) ^ k`` is
    ``x & ~k`` without a negative int (slower for Python's big ints)."""
    gen: dict[int, int] = {}
    kill: dict[int, int] = {}
    for bi in component:
        b = blocks[bi]
        g = 0
        for _, _, du, dnu in reversed(transfers[b.start : b.end]):
            g = (g | du) ^ dnu
        gen[bi] = g
        kill[bi] = reduce(or_, map(_TRANSFER_DEFS, transfers[b.start : b.end]), 0)
    pending = list(component)
    queued = dict.fromkeys(component, True)
    while pending:
        bi = pending.pop()
        queued[bi] = False
        out = 0
        for s in blocks[bi].successors:
            out |= block_in[s]
        k = kill[bi]
        new_in = ((out | k) ^ k) | gen[bi]
        if new_in != block_in[bi]:
            block_in[bi] = new_in
            for p in preds[bi]:
                if queued.get(p) is False:  # in the component and not queued
                    queued[p] = True
                    pending.append(p)


class _Layout:
    """One kernel's register sets with the AGPRs moved down to just above the highest VGPR it
    names. In the semantics' layout AGPRs start after all 1,024 VGPRs, so a kernel with AGPRs
    has sets of 2,600 bits or more, nearly all of them zero; packed, its sets are a third of
    that, and every operation of the dataflow is faster. Counting works on packed sets; the
    sets handed out are unpacked (per instruction only when read: :class:`Unpacked`)."""

    def __init__(self, top: int) -> None:
        self.top = top  # first bit above the kernel's VGPRs, where packed AGPRs start
        self.low = (1 << top) - 1
        self.vgpr_even = VGPR_LOW_BITS & self.low
        self.agpr_even = (AGPR_LOW_BITS >> AGPR_BASE) << top

    @classmethod
    def for_sets(cls, sets: Iterable[int], seed: int) -> _Layout:
        touched = reduce(or_, sets, seed)
        if not touched >> AGPR_BASE:
            return _IDENTITY  # no AGPRs: nothing to move
        vgprs = (touched & VGPR_MASK) >> VGPR_BASE
        return cls(VGPR_BASE + vgprs.bit_length() + (vgprs.bit_length() & 1))

    def pack(self, regs: int) -> int:
        return (regs & self.low) | ((regs >> AGPR_BASE) << self.top)

    def packed(self, sets: Iterable[int]) -> list[int]:
        low, top = self.low, self.top
        return [(x & low) | ((x >> AGPR_BASE) << top) for x in sets]

    def unpack(self, regs: int) -> int:
        return (regs & self.low) | ((regs >> self.top) << AGPR_BASE)

    def unpacked(self, sets: list[int]) -> Sequence[int]:
        return tuple(sets) if self is _IDENTITY else Unpacked(tuple(sets), self)

    def counter(self, counts: list[Counts]) -> Callable[[int], int]:
        """A function giving a packed set's figure: the index in ``counts`` of its Counts (as
        count_classes counts the unpacked set), appended when first met. Instructions keep the
        index: a small int is hashed as itself, and no tuple is made per distinct set."""
        vgpr_even, agpr_even, top = self.vgpr_even, self.agpr_even, self.top
        index: dict[tuple[int, int, int], int] = {}

        def figure(regs: int) -> int:
            halves = regs | (regs >> 1)
            agprs = (halves & agpr_even).bit_count() if regs >> top else 0
            key = ((halves & vgpr_even).bit_count(), agprs, (regs & SGPR_MASK).bit_count())
            found = index.get(key)
            if found is None:
                found = index[key] = len(counts)
                counts.append(Counts._make(key))
            return found

        return figure


class _Identity(_Layout):
    def pack(self, regs: int) -> int:
        return regs

    def packed(self, sets: Iterable[int]) -> list[int]:
        return list(sets)

    def unpack(self, regs: int) -> int:
        return regs


_IDENTITY = _Identity(AGPR_BASE)


class Unpacked(Sequence[int]):
    """Register sets per instruction, kept packed (:class:`_Layout`) and unpacked when read: an
    immutable sequence equal to the tuple of the unpacked sets."""

    __slots__ = ("_layout", "_packed")

    def __init__(self, packed: tuple[int, ...], layout: _Layout) -> None:
        self._packed = packed
        self._layout = layout

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, index: int) -> int: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[int, ...]: ...
    def __getitem__(self, index: int | slice) -> int | tuple[int, ...]:
        if isinstance(index, slice):
            return tuple(map(self._layout.unpack, self._packed[index]))
        return self._layout.unpack(self._packed[index])

    def __iter__(self) -> Iterator[int]:
        return map(self._layout.unpack, self._packed)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Unpacked | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


def _refined(
    figures: list[int],
    transfers: list[_Transfer],
    live_in: list[int],
    live_out: list[int],
    block_in: list[int],
    preds: list[list[int]],
    flow: ControlFlow,
    initialised: int,
    count: Callable[[int], int],
) -> list[int]:
    """Each instruction's figure of the registers live there that may have been written by then
    (``figures`` where all of them may; ``initialised`` packed). A register live in reachable code
    that no path from the entry writes is live back to the entry: only the registers live at the
    entry that the hardware does not initialise can be left out there, so the forward pass runs
    on those alone (small ints), and not at all when there are none. Unreachable blocks, which no
    path from the entry reaches, are asked about every register."""
    blocks = flow.blocks
    if not blocks:
        return figures
    seed = initialised | SPECIAL_MASK  # exec, m0, ... are never the question
    undefined = (block_in[0] | seed) ^ seed
    unreachable = [b for b in blocks if not b.reachable]
    if not undefined and not unreachable:
        return figures
    refined = figures.copy()
    if undefined:
        may_define = undefined.__and__
        kill = [reduce(or_, map(may_define, map(_TRANSFER_DEFS, transfers[b.start : b.end])), 0) for b in blocks]
        maydef_in = _may_be_defined(flow, kill, preds, initialised & undefined)
        for b in blocks:
            defined = maydef_in[b.index]
            if not b.reachable or not (undefined | defined) ^ defined:
                continue  # every undefined register may be written before the block
            for i in range(b.start, b.end):
                before = live_in[i] & undefined
                after_ = live_out[i] & undefined
                after = defined | (transfers[i][0] & undefined)
                left = (before | after_) ^ ((before & defined) | (after_ & after))
                if left:  # live there but written on no path yet: count what is kept
                    refined[i] = count((live_in[i] | live_out[i]) ^ left)
                defined = after
    if unreachable:
        # Only unreachable blocks reach an unreachable block: their kills decide what it may have.
        kill = [0] * len(blocks)
        for b in unreachable:
            kill[b.index] = reduce(or_, map(_TRANSFER_DEFS, transfers[b.start : b.end]), 0)
        maydef_in = _may_be_defined(flow, kill, preds, initialised)
        for b in unreachable:
            defined = maydef_in[b.index]
            for i in range(b.start, b.end):
                defs, uses, _, _ = transfers[i]
                after = defined | defs
                kept = (live_in[i] & defined) | (live_out[i] & after)
                if kept != live_out[i] | uses:  # something left out: count what is kept
                    refined[i] = count(kept)
                defined = after
    return refined


def _may_be_defined(flow: ControlFlow, kill: list[int], preds: list[list[int]], seed: int | None) -> list[int]:
    """Per block, the registers some path from the entry may have written before it (forward)."""
    n_blocks = len(flow.blocks)
    if seed is None:
        return [-1] * n_blocks  # every bit: no restriction
    seed |= SPECIAL_MASK  # exec, m0, ... are never the question
    din = [0] * n_blocks
    dout = [0] * n_blocks
    if n_blocks:
        din[0] = seed
    pending = list(range(n_blocks - 1, -1, -1))
    queued = [True] * n_blocks
    while pending:
        bi = pending.pop()
        queued[bi] = False
        new_in = seed if bi == 0 else 0
        for p in preds[bi]:
            new_in |= dout[p]
        din[bi] = new_in
        new_out = new_in | kill[bi]
        if new_out != dout[bi]:
            dout[bi] = new_out
            for s in flow.blocks[bi].successors:
                if not queued[s]:
                    queued[s] = True
                    pending.append(s)
    return din


def may_be_defined_before(
    instructions: Sequence[Instruction], flow: ControlFlow, semantics: Semantics, initialised: int
) -> list[int]:
    """Per instruction, the registers some path from the entry may have written before it (with
    ``initialised`` written before the first): what the refined figure keeps."""
    acc = accesses(instructions, semantics)
    kill = [0] * len(flow.blocks)
    preds: list[list[int]] = [[] for _ in flow.blocks]
    for b in flow.blocks:
        for i in range(b.start, b.end):
            kill[b.index] |= acc[i].defs
        for s in b.successors:
            preds[s].append(b.index)
    din = _may_be_defined(flow, kill, preds, initialised)
    out = [0] * len(instructions)
    for b in flow.blocks:
        defined = din[b.index]
        for i in range(b.start, b.end):
            out[i] = defined
            defined |= acc[i].defs
    return out


_NONE = Counts(0, 0, 0)


def _maximum(counts: Iterable[Counts]) -> Counts:
    distinct = set(counts)
    if not distinct:
        return _NONE
    return Counts(*(max(c[k] for c in distinct) for k in range(len(CLASSES))))


def _peaks(
    top: Counts,
    counts: Sequence[Counts],
    figures: Sequence[int],
    instructions: Sequence[Instruction],
    flow: ControlFlow,
) -> tuple[Peak, ...]:
    """Per class, the stretches where it is at its maximum ``top``. One byte per instruction
    says which classes are at their maximum (bit k for class k), decided once per distinct count
    (``figures``: each instruction's index in ``counts``)."""
    flag_of = [(c[0] == top[0]) | (c[1] == top[1]) << 1 | (c[2] == top[2]) << 2 for c in counts]
    flags = bytes(map(flag_of.__getitem__, figures))
    return tuple(_peak(k, top[k], flags.translate(_CLASS_AT_TOP[k]), instructions, flow) for k in range(len(CLASSES)))


# For class k, a bytes.translate table turning an instruction's flags into 1 when bit k is set.
_CLASS_AT_TOP = tuple(bytes((flags >> k) & 1 for flags in range(256)) for k in range(len(CLASSES)))


def _peak(k: int, top: int, at_top: bytes, instructions: Sequence[Instruction], flow: ControlFlow) -> Peak:
    """The stretches of consecutive instructions (in one loop depth) where class ``k`` is at ``top``
    (``at_top``: one byte an instruction, 1 there). A stretch goes on across a block boundary
    when the next block has the same depth."""
    stretches: list[Stretch] = []
    if top == 0:
        return Peak(CLASSES[k], 0, ())
    blocks = flow.blocks
    starts = [b.start for b in blocks]
    end = len(at_top)
    i = at_top.find(1)
    while i != -1:
        run_end = at_top.find(0, i)
        if run_end == -1:
            run_end = end
        # Cut the run where the loop depth changes from one block to the next.
        b = bisect_right(starts, i) - 1
        first = i
        depth = blocks[b].loop_depth
        while blocks[b].end < run_end:
            b += 1
            if blocks[b].loop_depth != depth:
                stretches.append(Stretch(instructions[first].address, instructions[blocks[b].start - 1].address, depth))
                first, depth = blocks[b].start, blocks[b].loop_depth
        stretches.append(Stretch(instructions[first].address, instructions[run_end - 1].address, depth))
        i = at_top.find(1, run_end)
    return Peak(CLASSES[k], top, tuple(stretches))


# -- what the hardware initialises ---------------------------------------------------------------

_SYSTEM_SGPRS = (
    "system_sgpr_workgroup_id_x",
    "system_sgpr_workgroup_id_y",
    "system_sgpr_workgroup_id_z",
    "system_sgpr_workgroup_info",
    "enable_private_segment",  # the private segment wave offset
)


def hardware_initialised(fields: Mapping[str, int], processor: str) -> int:
    """The registers the hardware writes before a kernel's first instruction, from its decoded
    descriptor fields (AMDGPUUsage, "Initial Kernel Execution State"): the user SGPRs (preloaded
    kernel arguments among them), then one system SGPR per enabled system value, and the work-item
    id VGPRs (all three packed into v0 on the processors the table lists)."""
    user = fields.get("user_sgpr_count", 0)
    system = sum(1 for name in _SYSTEM_SGPRS if fields.get(name))
    sgprs = min(user + system, SGPRS)
    workitem = fields.get("system_vgpr_workitem_id", 0)
    vgprs = 1 if processor in table().packed_workitem_ids else workitem + 1
    return sgpr_bits(0, sgprs) | vgpr_bits(0, vgprs)


def allocation_breaches(max_live: Counts, fields: Mapping[str, int]) -> list[str]:
    """Findings when more registers are live than the descriptor allocates: the architectural
    VGPRs against ``accum_offset`` where AGPRs share the file (else the VGPR allocation), and the
    AGPRs against what is left of it."""
    allocated = fields.get("next_free_vgpr")
    if allocated is None:
        return []
    out = []
    accum = fields.get("accum_offset")
    arch_budget = accum if accum else allocated
    agpr_budget = allocated - accum if accum else allocated
    if max_live.vgpr > arch_budget:
        out.append(
            f"{max_live.vgpr} VGPRs are live at once but the descriptor allocates {arch_budget} architectural VGPRs"
        )
    if max_live.agpr > agpr_budget:
        out.append(f"{max_live.agpr} AGPRs are live at once but the descriptor leaves {agpr_budget} for AGPRs")
    return out
