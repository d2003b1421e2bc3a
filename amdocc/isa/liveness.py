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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

from .model import ControlFlow, Instruction
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
    count_classes,
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
    distinct, which = _accesses(instructions, semantics)
    if any(a.unknown for a in distinct):  # the first unknown access in reachable code
        for block in flow.blocks:
            if not block.reachable:
                continue
            for i in range(block.start, block.end):
                a = distinct[which[i]]
                if a.unknown:
                    return Liveness(f"{a.unknown} ({instructions[i].text!r} at {instructions[i].address:#x})")
    layout = _Layout.for_sets([a.defs | a.uses for a in distinct], initialised or 0)
    pack = layout.pack
    distinct_defs = [pack(a.defs) for a in distinct]
    distinct_uses = [pack(a.uses) for a in distinct]
    defs = [distinct_defs[k] for k in which]
    uses = [distinct_uses[k] for k in which]
    if initialised is not None:
        initialised = pack(initialised)
    counted = layout.counts

    blocks = flow.blocks
    n_blocks = len(blocks)
    # Each block as one transfer function: live_in = (live_out & ~kill) | gen. ``(x | d) ^ d`` is
    # ``x & ~d`` without a negative int (slower for Python's big ints).
    gen = [0] * n_blocks
    kill = [0] * n_blocks
    used = [0] * n_blocks  # every register the block reads
    preds: list[list[int]] = [[] for _ in range(n_blocks)]
    for b in blocks:
        g = k = every = 0
        for i in range(b.end - 1, b.start - 1, -1):
            d = defs[i]
            if d:
                g = (g | d) ^ d
                k |= d
            u = uses[i]
            if u:
                g |= u
                every |= u
        gen[b.index], kill[b.index], used[b.index] = g, k, every
        for s in b.successors:
            preds[s].append(b.index)

    block_in = [0] * n_blocks
    block_out = [0] * n_blocks
    pending = list(range(n_blocks))
    queued = [True] * n_blocks
    while pending:
        bi = pending.pop()
        queued[bi] = False
        out = 0
        for s in blocks[bi].successors:
            out |= block_in[s]
        block_out[bi] = out
        k = kill[bi]
        new_in = ((out | k) ^ k) | gen[bi]
        if new_in != block_in[bi]:
            block_in[bi] = new_in
            for p in preds[bi]:
                if not queued[p]:
                    queued[p] = True
                    pending.append(p)

    maydef_in = _may_be_defined(flow, kill, preds, initialised)

    # Per instruction, going back through each block; the count is of live_in | live_out, which
    # is live_out | uses (live_in is live_out less defs, plus uses), counted once per distinct set.
    count = len(instructions)
    live_in = [0] * count
    live_out = [0] * count
    live_counts: list[Counts] = [_NONE] * count
    memo: dict[int, Counts] = {}
    get = memo.get
    for b in blocks:
        live = block_out[b.index]
        for i in range(b.end - 1, b.start - 1, -1):
            live_out[i] = live
            u = uses[i]
            both = live | u if u else live
            found = get(both)
            if found is None:
                found = memo[both] = counted(both)
            live_counts[i] = found
            d = defs[i]
            if d:
                live = (live | d) ^ d
            if u:
                live |= u
            live_in[i] = live

    # The refined figure: forward through each block, what may have been written by then.
    refined_counts: list[Counts] = live_counts
    if initialised is not None:
        refined_counts = [_NONE] * count
        for b in blocks:
            defined = maydef_in[b.index]
            # Every register live in a block is live at its exit or read in it: when all of those
            # may be written before the block, nothing is left out of any of its counts.
            every = block_out[b.index] | used[b.index]
            if not (every | defined) ^ defined:
                refined_counts[b.start : b.end] = live_counts[b.start : b.end]
                continue
            for i in range(b.start, b.end):
                d = defs[i]
                after = defined | d if d else defined
                out = live_out[i]
                refined = (live_in[i] & defined) | (out & after)
                u = uses[i]
                if refined == (out | u if u else out):  # nothing left out: the plain count
                    refined_counts[i] = live_counts[i]
                else:
                    found = get(refined)
                    if found is None:
                        found = memo[refined] = counted(refined)
                    refined_counts[i] = found
                defined = after

    max_live = _maximum(live_counts)
    peaks = tuple(_peak(k, max_live[k], live_counts, instructions, flow) for k in range(len(CLASSES)))
    return Liveness(
        None,
        layout.unpacked(live_in),
        layout.unpacked(live_out),
        tuple(live_counts),
        tuple(refined_counts),
        tuple(layout.unpack(x) for x in block_in),
        max_live,
        _maximum(refined_counts),
        peaks,
    )


_new_counts = tuple.__new__


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
    def for_sets(cls, sets: Sequence[int], seed: int) -> _Layout:
        touched = seed
        for x in sets:
            touched |= x
        if not touched >> AGPR_BASE:
            return _IDENTITY  # no AGPRs: nothing to move
        vgprs = (touched & VGPR_MASK) >> VGPR_BASE
        return cls(VGPR_BASE + vgprs.bit_length() + (vgprs.bit_length() & 1))

    def pack(self, regs: int) -> int:
        return (regs & self.low) | ((regs >> AGPR_BASE) << self.top)

    def unpack(self, regs: int) -> int:
        return (regs & self.low) | ((regs >> self.top) << AGPR_BASE)

    def unpacked(self, sets: list[int]) -> Sequence[int]:
        return tuple(sets) if self is _IDENTITY else Unpacked(tuple(sets), self)

    def counts(self, regs: int) -> Counts:
        """Counts of a packed set, as count_classes counts the unpacked one."""
        if self is _IDENTITY:
            return _new_counts(Counts, count_classes(regs))
        halves = regs | (regs >> 1)
        agprs = (halves & self.agpr_even).bit_count() if regs >> self.top else 0
        return _new_counts(Counts, ((halves & self.vgpr_even).bit_count(), agprs, (regs & SGPR_MASK).bit_count()))


class _Identity(_Layout):
    def pack(self, regs: int) -> int:
        return regs

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


def _maximum(counts: Sequence[Counts]) -> Counts:
    if not counts:
        return _NONE
    distinct = set(counts)
    return Counts(*(max(c[k] for c in distinct) for k in range(3)))


def _peak(k: int, top: int, counts: Sequence[Counts], instructions: Sequence[Instruction], flow: ControlFlow) -> Peak:
    """The stretches of consecutive instructions (in one loop depth) where class ``k`` is at ``top``.
    A stretch goes on across a block boundary when the next block has the same depth."""
    stretches: list[Stretch] = []
    if top == 0:
        return Peak(CLASSES[k], 0, ())
    at_top = bytes([c[k] == top for c in counts])  # one byte per instruction: runs found by find()
    blocks = flow.blocks
    starts = [b.start for b in blocks]
    end = len(counts)
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
