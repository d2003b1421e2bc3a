"""Plain records for one kernel's machine code: decoded instructions and its control flow.

These are the contract between the rooms of ``amdocc.isa``: the disassembler and the control-flow
graph produce them; liveness, spills and the instruction mix read them. Nothing here decodes or
computes; every record is immutable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Instruction(NamedTuple):
    """One instruction as LLVM's disassembler decodes it (a named tuple: a kernel has tens of
    thousands, and a tuple is made several times faster than a frozen dataclass).

    Attributes:
        address: the virtual address ``llvm-objdump`` prints for it.
        size: its length in bytes (4 for an undecodable word).
        text: LLVM's text for it, whitespace-normalised as ``llvm-objdump`` prints it; an
            undecodable word is shown as ``llvm-objdump`` shows it.
        mnemonic: the first token of ``text`` (``""`` for an undecodable word).
        operands: the rest of ``text`` after the mnemonic.
        decoded: False for a word LLVM could not decode.
        encoding: its bytes as the code object holds them (the control-flow graph reads branch
            offsets from them, never from the text).
    """

    address: int
    size: int
    text: str
    mnemonic: str
    operands: str
    decoded: bool = True
    encoding: bytes = b""


@dataclass(frozen=True, slots=True)
class Block:
    """A basic block: the instructions ``[start, end)`` of the kernel's instruction tuple.

    Attributes:
        index: the block's position in ``ControlFlow.blocks`` (blocks are in address order).
        start: index of its first instruction.
        end: index one past its last instruction.
        successors: indices of the blocks control may reach next, in no particular order.
        reachable: whether the kernel's entry reaches it.
        loop_depth: how many natural loops contain it (0 outside every loop).
    """

    index: int
    start: int
    end: int
    successors: tuple[int, ...]
    reachable: bool
    loop_depth: int


@dataclass(frozen=True, slots=True)
class Loop:
    """A natural loop.

    Attributes:
        header: the index of its header block (the one block every entry into it passes).
        blocks: the indices of its blocks, the header included, in address order.
        depth: how many natural loops contain its header, itself included (1 for an outermost loop).
    """

    header: int
    blocks: tuple[int, ...]
    depth: int


@dataclass(frozen=True, slots=True)
class ControlFlow:
    """A kernel's control-flow graph, or why it is not known.

    Attributes:
        blocks: the basic blocks in address order; block 0 is the entry.
        unknown: None when every edge is known; otherwise the reason (an indirect branch, a
            call, an undecodable word), and then no figure built on the graph may be given.
        loops: the natural loops, by header in address order.
        idom: each block's immediate dominator (the entry's is 0, itself; None when unreachable).
    """

    blocks: tuple[Block, ...]
    unknown: str | None = None
    loops: tuple[Loop, ...] = ()
    idom: tuple[int | None, ...] = ()

    def block_of(self) -> tuple[int, ...]:
        """The block index of every instruction, by instruction index."""
        out: list[int] = []
        for block in self.blocks:
            out.extend([block.index] * (block.end - block.start))
        return tuple(out)
