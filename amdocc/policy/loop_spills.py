"""Spills inside loops: the figure ``check`` (rule ``spills-in-loops``, budget ``spills_in_loops``),
``census --isa`` and ``diff``/``census OLD NEW`` (kind ``spills-in-loops``) report, from the kernel's
own machine code (amdocc.isa).

A spill store or reload in a loop runs once per iteration: the slowdown Triton and AITER reviews
hunt for. Which instructions are spills and how deep in loops they sit is amdocc.isa's answer
(docs/isa.md); this module sums it the one way every command reports it:

- the VGPR part (scratch stores and reloads, in dwords) counts unless the metadata makes that
  traffic the program's own private array, the SGPR part (lane writes and reads) unless the
  metadata makes the lane operations the program's own (``Spills.classification``);
- a kernel whose metadata records 0 VGPR and 0 SGPR spills is not disassembled: the compiler
  says it spills nothing, so nothing spills in a loop (the cheap filter that keeps the figure
  affordable on a library of thousands of kernels; hand-written assembly without the counts is
  always disassembled);
- the figure is not known (:class:`SpillsUnknown`, with the reason) when the kernel's code or its
  control flow cannot be read (an indirect call hides edges), or when no libLLVM with the AMDGPU
  disassembler can be loaded: never a guessed 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import AmdoccError, TableError, UsageError

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..isa.analysis import KernelIsa


class SpillsUnknown(AmdoccError):
    """The spills in loops of a kernel cannot be known; the message says why."""


@dataclass(frozen=True, slots=True)
class LoopSpills:
    """A kernel's spill traffic inside loops (loop depth > 0), in dwords as amdocc.isa counts.

    Attributes:
        vgpr, vgpr_reload: scratch stores/reloads in loops counted as spills (0 when the metadata
            makes the scratch traffic a private array).
        sgpr, sgpr_reload: SGPR lane writes/reads in loops counted as spills.
        max_depth: the deepest loop a counted spill sits in (0: none in a loop).
        address: the first counted spill in a loop, as ``llvm-objdump`` prints its address.
        line: that spill's "FILE:LINE" from the code object's line table, or None.
        analysed: False when the metadata's spill counts of 0 decided without disassembly.
    """

    vgpr: int = 0
    vgpr_reload: int = 0
    sgpr: int = 0
    sgpr_reload: int = 0
    max_depth: int = 0
    address: int | None = None
    line: str | None = None
    analysed: bool = False

    @property
    def total(self) -> int:
        """Every counted spill dword in a loop: stores and reloads, VGPR and SGPR."""
        return self.vgpr + self.vgpr_reload + self.sgpr + self.sgpr_reload

    @property
    def stores(self) -> int:
        return self.vgpr + self.sgpr

    @property
    def reloads(self) -> int:
        return self.vgpr_reload + self.sgpr_reload

    def describe(self) -> str:
        """ "12 spill dwords inside loops (VGPR 4 stored, 8 reloaded; deepest loop 2; first at
        0x1a0, k.hip:14)" """
        parts = []
        if self.vgpr or self.vgpr_reload:
            parts.append(f"VGPR {self.vgpr} stored, {self.vgpr_reload} reloaded")
        if self.sgpr or self.sgpr_reload:
            parts.append(f"SGPR lanes {self.sgpr} written, {self.sgpr_reload} read")
        parts.append(f"deepest loop {self.max_depth}")
        if self.address is not None:
            parts.append(f"first at {self.address:#x}" + (f", {self.line}" if self.line else ""))
        n = self.total
        return f"{n} spill dword{'s' if n != 1 else ''} inside loops ({'; '.join(parts)})"


NONE = LoopSpills()


def spills_metadata_free(kernel: Kernel) -> bool:
    """Whether the metadata records 0 VGPR and 0 SGPR spills (both counts present): the cheap
    filter, no disassembly needed."""
    sgpr, vgpr = kernel.resources.spills
    return sgpr == 0 and vgpr == 0


def asked(kernel: Kernel, which: str) -> bool:
    """Whether a comparison or census reading kernels as ``which`` says reads this one: "all",
    or "spilling": a kernel whose metadata counts a spill, or records 0 of both (answered 0
    without disassembly); not one whose counts are missing (hand-written assembly)."""
    if which == "all":
        return True
    sgpr, vgpr = kernel.resources.spills
    return (sgpr or 0) > 0 or (vgpr or 0) > 0 or (sgpr == 0 and vgpr == 0)


def analysed(kernel: Kernel) -> KernelIsa:
    """``kernel``'s machine code analysed (amdocc.isa.analysis), or SpillsUnknown saying why it
    cannot be; a bad AMDOCC_LIBLLVM (not an existing file) stays a UsageError."""
    from ..isa.analysis import analyse

    try:
        return analyse(kernel)
    except (UsageError, TableError):  # a bad setting or a damaged ISA table: not this kernel's fault
        raise
    except AmdoccError as exc:  # no libLLVM (amdocc.isa.LlvmUnavailable), unreadable code, too new a processor
        raise SpillsUnknown(f"its machine code cannot be analysed: {exc.message}") from None


def loop_spills(kernel: Kernel, *, trust_metadata: bool = True, isa: KernelIsa | None = None) -> LoopSpills:
    """``kernel``'s spills inside loops (module docstring). Raises SpillsUnknown with the reason
    when they cannot be known; a bad AMDOCC_LIBLLVM (not an existing file) stays a UsageError.
    ``trust_metadata=False`` disassembles a kernel whose metadata records no spills too (the
    ``spills_in_loops`` budget's rule since it was added: its control flow must be known).
    ``isa``: the kernel already analysed (a caller reading its liveness too), so it is not
    disassembled twice."""
    if trust_metadata and spills_metadata_free(kernel):
        return NONE
    if isa is None:
        isa = analysed(kernel)
    if isa.flow.unknown is not None:
        raise SpillsUnknown(f"its control flow is not known: {isa.flow.unknown}")
    kinds = isa.spills.classification
    counted: set[str] = set()
    if kinds["vgpr"] in ("spill", "ambiguous"):
        counted |= {"vgpr", "vgpr_reload"}
    if kinds["sgpr"] in ("spill", "ambiguous"):
        counted |= {"sgpr", "sgpr_reload"}
    totals = dict.fromkeys(("vgpr", "vgpr_reload", "sgpr", "sgpr_reload"), 0)
    deepest, first, line = 0, None, None
    for i, (mark, n, depth) in enumerate(zip(isa.spills.marks, isa.spills.dwords, isa.loop_depth, strict=True)):
        if mark is not None and mark in counted and depth > 0:
            totals[mark] += n
            deepest = max(deepest, depth)
            if first is None:
                first = isa.instructions[i].address
                line = isa.lines[i] if isa.lines else None
    return LoopSpills(**totals, max_depth=deepest, address=first, line=line, analysed=True)
