"""A kernel's control-flow graph: basic blocks, successors, reachability, dominators, natural loops.

Branch targets come from the instruction's encoding, never from its text: a SOPP branch's
target is ``pc + 4 + 4 * sext(simm16)``, simm16 being the low half of its first word. ``s_branch``
and the ``s_endpgm`` family end a block without falling through; conditional branches fall
through and jump. ``s_endpgm`` does not end the kernel: code after it may be reached by a branch
(Triton kernels have tail blocks after an early ``s_endpgm``).

Loops are natural loops found with dominators, as LLVM's LoopInfo finds them (a retreating edge
into a block that does not dominate its source, an irreducible loop, is no natural loop and adds
no depth). Where the graph cannot be known, ``ControlFlow.unknown`` says why: an indirect jump or
a call (``s_setpc``, ``s_swappc``, ``s_call``, ``s_cbranch_join``, ``s_rfe``), a branch out of the
kernel or into the middle of an instruction, an undecodable word that control reaches, or code
that runs off the end of the kernel. Blocks are still given (from the edges that are known), but
no figure built on the graph may be reported then.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter

from .model import Block, ControlFlow, Instruction, Loop

UNCONDITIONAL = frozenset({"s_branch"})
# Branches that take a register, or fork/join the exec mask through the stack (gfx6-9): targets
# that are not in the encoding.
INDIRECT = frozenset(
    {"s_setpc_b64", "s_swappc_b64", "s_call_b64", "s_cbranch_join", "s_cbranch_g_fork", "s_cbranch_i_fork",
     "s_rfe_b64", "s_rfe_restore_b64"}
)  # fmt: skip
ENDS_PROGRAM = frozenset({"s_endpgm", "s_endpgm_saved", "s_endpgm_ordered_ps_done"})


def is_direct_branch(mnemonic: str) -> bool:
    """A SOPP branch whose target is in its simm16."""
    return mnemonic == "s_branch" or (mnemonic.startswith("s_cbranch_") and mnemonic not in INDIRECT)


def branch_target(instruction: Instruction) -> int:
    """The address a direct branch jumps to, from its encoding."""
    word = int.from_bytes(instruction.encoding[:4], "little")
    simm16 = word & 0xFFFF
    offset = simm16 - 0x10000 if simm16 & 0x8000 else simm16
    return instruction.address + 4 + 4 * offset


# What an instruction does to control flow, by mnemonic (decided once per distinct mnemonic).
_STRAIGHT, _DIRECT, _INDIRECT, _ENDS = 0, 1, 2, 3


def _flow_kind(mnemonic: str) -> int:
    if is_direct_branch(mnemonic):
        return _DIRECT
    if mnemonic in INDIRECT:
        return _INDIRECT
    return _ENDS if mnemonic in ENDS_PROGRAM else _STRAIGHT


_ADDRESS, _MNEMONIC, _DECODED = (itemgetter(Instruction._fields.index(f)) for f in ("address", "mnemonic", "decoded"))


def control_flow(instructions: Sequence[Instruction]) -> ControlFlow:
    """The control-flow graph of one kernel's instructions (in address order, entry first)."""
    if not instructions:
        return ControlFlow((), None)
    addresses = list(map(_ADDRESS, instructions))  # ascending: a branch target is found by bisection
    problems: list[tuple[int, str]] = []  # (instruction index, reason): reported only if reachable
    leaders = {0}
    targets: dict[int, int] = {}  # branch instruction index -> target instruction index
    mnemonics = list(map(_MNEMONIC, instructions))
    kind_of = {m: _flow_kind(m) for m in set(mnemonics)}
    kinds = bytes(map(kind_of.__getitem__, mnemonics))
    for i in compress(range(len(kinds)), kinds):  # the instructions that branch or end the program
        ins = instructions[i]
        m = ins.mnemonic
        kind = kinds[i]
        if kind == _DIRECT:
            target = branch_target(ins)
            at = bisect_left(addresses, target)
            if at == len(addresses) or addresses[at] != target:
                inside = instructions[0].address <= target < instructions[-1].address + instructions[-1].size
                where = "into the middle of an instruction" if inside else "outside the kernel"
                problems.append((i, f"{m} at {ins.address:#x} jumps to {target:#x}, {where}"))
            else:
                targets[i] = at
                leaders.add(at)
            leaders.add(i + 1)
        elif kind == _INDIRECT:
            problems.append((i, f"{m} at {ins.address:#x}: an indirect jump or call, its target is not in the code"))
            leaders.add(i + 1)
        else:
            leaders.add(i + 1)
    if not all(map(_DECODED, instructions)):
        for i, ins in enumerate(instructions):
            if not ins.decoded:
                problems.append((i, f"an undecodable word at {ins.address:#x}"))
    starts = sorted(x for x in leaders if x < len(instructions))
    block_at = {s: b for b, s in enumerate(starts)}  # every branch target and block end is a leader
    spans = list(zip(starts, [*starts[1:], len(instructions)], strict=True))
    successors: list[tuple[int, ...]] = []
    for _, e in spans:
        last = instructions[e - 1]
        out: list[int] = []
        if e - 1 in targets:
            out.append(block_at[targets[e - 1]])
        falls = last.mnemonic not in UNCONDITIONAL and last.mnemonic not in ENDS_PROGRAM
        if falls and last.mnemonic not in INDIRECT and e < len(instructions):
            out.append(block_at[e])
        elif falls and e == len(instructions) and last.mnemonic not in INDIRECT:
            problems.append((e - 1, f"control runs off the end of the kernel after {last.address:#x}"))
        successors.append(tuple(dict.fromkeys(out)))
    reachable = _reachable(successors)
    reasons = [why for i, why in sorted(problems) if reachable[bisect_right(starts, i) - 1]]
    idom = _dominators(successors, reachable)
    loops = _natural_loops(successors, reachable, idom)
    depth = [0] * len(spans)
    for loop in loops:
        for b in loop.blocks:
            depth[b] += 1
    blocks = tuple(Block(b, s, e, successors[b], reachable[b], depth[b]) for b, (s, e) in enumerate(spans))
    unknown = None
    if reasons:
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        unknown = reasons[0] + more
    return ControlFlow(blocks, unknown, tuple(_with_depth(loops, depth)), tuple(idom))


def _reachable(successors: list[tuple[int, ...]]) -> list[bool]:
    seen = [False] * len(successors)
    stack = [0]
    seen[0] = True
    while stack:
        for s in successors[stack.pop()]:
            if not seen[s]:
                seen[s] = True
                stack.append(s)
    return seen


def _reverse_postorder(successors: list[tuple[int, ...]]) -> list[int]:
    order: list[int] = []
    visited = {0}
    stack: list[tuple[int, int]] = [(0, 0)]
    while stack:
        node, child = stack[-1]
        if child < len(successors[node]):
            stack[-1] = (node, child + 1)
            nxt = successors[node][child]
            if nxt not in visited:
                visited.add(nxt)
                stack.append((nxt, 0))
        else:
            stack.pop()
            order.append(node)
    order.reverse()
    return order


def _dominators(successors: list[tuple[int, ...]], reachable: list[bool]) -> list[int | None]:
    """Immediate dominator of each reachable block (the entry's is itself), None if unreachable:
    the iterative algorithm of Cooper, Harvey and Kennedy over reverse postorder."""
    order = _reverse_postorder(successors)
    position = {b: i for i, b in enumerate(order)}
    predecessors: list[list[int]] = [[] for _ in successors]
    for b, outs in enumerate(successors):
        if reachable[b]:
            for s in outs:
                predecessors[s].append(b)
    idom: list[int | None] = [None] * len(successors)
    idom[0] = 0

    def intersect(a: int, b: int) -> int:
        while a != b:
            while position[a] > position[b]:
                a = idom[a]  # type: ignore[assignment]
            while position[b] > position[a]:
                b = idom[b]  # type: ignore[assignment]
        return a

    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            done = [p for p in predecessors[b] if idom[p] is not None]
            if not done:
                continue
            new = done[0]
            for p in done[1:]:
                new = intersect(p, new)
            if idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def dominates(idom: Sequence[int | None], a: int, b: int) -> bool:
    """Whether block ``a`` dominates block ``b`` (both reachable)."""
    while True:
        if b == a:
            return True
        parent = idom[b]
        if parent is None or parent == b:
            return False
        b = parent


def _natural_loops(successors: list[tuple[int, ...]], reachable: list[bool], idom: list[int | None]) -> list[Loop]:
    """One loop per header: the header and every block that reaches a back edge's source
    without passing the header (back edges into the same header merge, as in LLVM)."""
    predecessors: list[list[int]] = [[] for _ in successors]
    for b, outs in enumerate(successors):
        if reachable[b]:
            for s in outs:
                predecessors[s].append(b)
    bodies: dict[int, set[int]] = {}
    for b, outs in enumerate(successors):
        if not reachable[b]:
            continue
        for h in outs:
            if dominates(idom, h, b):  # a back edge b -> h
                body = bodies.setdefault(h, {h})
                stack = [b]
                while stack:
                    n = stack.pop()
                    if n not in body:
                        body.add(n)
                        stack.extend(predecessors[n])
    return [Loop(h, tuple(sorted(body)), 0) for h, body in sorted(bodies.items())]


def _with_depth(loops: list[Loop], depth: list[int]) -> list[Loop]:
    """Each loop's depth is its header's: the loops that contain the header, itself included."""
    return [Loop(loop.header, loop.blocks, depth[loop.header]) for loop in loops]
