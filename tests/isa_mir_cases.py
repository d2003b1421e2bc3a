"""Kernels compiled by llc-22 with their final machine IR, and amdocc's liveness set beside it.

The oracle side (tests/oracle/mir.py) reads what LLVM printed; this module runs amdocc's def/use
table and liveness pass on the same instructions (the disassembly llvm-objdump-22 printed, with its
encodings, so both sides read identical code) and lists every place where the two disagree, each
with the named rule that explains it or ``None``.

Rules for a block's live-ins (amdocc's live set at the block's first instruction against MIR's
``liveins:``, VGPRs, AGPRs and SGPRs s0..s105 at 32-bit granularity):

- ``never-written``: amdocc has a register live that nothing may have written by then (not in
  the refined figure, seeded with what the hardware initialises): the ISA reads a tuple half that
  LLVM's IR marks undef (spill code storing ``v[2:3]`` with only ``v3`` defined), or a value that
  is undefined along some path (a PHI with an undef input: Triton's matmul reads v[104:107] after a
  join one of whose paths never wrote them).
- ``tuple-half-undef``: amdocc has a register that MIR lists in a live-in tuple whose lane mask
  leaves it out: the tuple is read whole by the ISA with that half undefined.
- ``spill-tuple-half``: amdocc has a register whose next access is a spill store of a tuple that
  holds it (``scratch_store_dwordx2 off, v[4:5]`` saving a pair of which only ``v4`` is live): the
  ISA reads the whole pair, LLVM's IR only the live half.
- ``undef-read``: amdocc has a register whose next access is a read that MIR marks ``undef`` (the
  old value of a d16 load's destination, a DPP old operand): the ISA reads it, LLVM knows it holds
  nothing.
- ``implicit-def``: amdocc has a register to which LLVM gave an undefined value on some path
  (IMPLICIT_DEF, which emits no code); the ISA sees the older value flow through.
- ``exec-masked-def``: MIR has a register live that amdocc finds fully written (by a vector
  instruction, after an instruction that writes exec, from the one before the block on) before
  any read from the block on: the write happens under a narrower exec mask in one arm of a
  divergent branch (lanes of the other arm keep their value), which LLVM's structured
  CFG keeps and the ISA's fall-through blocks do not show. amdocc treats exec-masked writes as full
  writes, as RGA does.
- ``tuple-livein-overstated``: MIR has a register only through a live-in tuple listed without a
  lane mask that also holds a register amdocc finds live.
- ``reserved-scratch-resource``: MIR has a register of an SGPR quad that it lists whole in the
  live-ins of every block but the entry (the reserved scratch resource descriptor).
- ``entry-abi-inputs``: MIR has, at the entry block, a register the hardware initialises (the
  function's ABI inputs, listed even when the prologue overwrites them first).
- ``kernarg-preload-prologue``: the block is the kernel-argument preload prologue (the first block
  of a kernel whose descriptor preloads arguments), whose MIR live-ins name only the kernel-argument
  pointer; amdocc also has the hardware-initialised registers that pass through it (workgroup and
  work-item ids).

Rules for one instruction's defs and uses (after the oracle sets LLVM's super-register bookkeeping
operands apart):

- ``undef-read``: amdocc reads a register that MIR marks ``undef`` at that instruction.
- ``super-register-bookkeeping`` (special registers): MIR's ``implicit $vcc`` / ``implicit-def
  $vcc`` beside an explicit ``vcc_lo`` or ``vcc_hi`` (an SGPR spill of vcc into VGPR lanes); the
  oracle sets these apart as it reads the MIR (``MirInstruction.special_bookkeeping``), as it does
  implicit numbered-register operands.
- ``true16-d16-half-def``: amdocc reads a d16 load's destination (the half it keeps); LLVM's true16
  form defines only the half it writes and reads nothing. At a block's live-ins: amdocc has a
  register whose next access is such a load.
- ``wave32-high-halves``: in wave32, exec_hi and vcc_hi are not compared.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import amdocc
import livegen
from amdocc.isa import liveness as L
from amdocc.isa import semantics as S
from amdocc.isa.flow import control_flow
from amdocc.isa.model import ControlFlow, Instruction
from oracle import mir

CONFIGS = (
    ("gfx908", False),
    ("gfx90a", False),
    ("gfx942", False),
    ("gfx950", False),
    ("gfx1030", False),
    ("gfx1100", False),
    ("gfx1100", True),
    ("gfx1201", False),
    ("gfx1250", False),
)
# Every rule that may explain a difference (documented above).
RULES = (
    "never-written",
    "tuple-half-undef",
    "spill-tuple-half",
    "undef-read",
    "implicit-def",
    "exec-masked-def",
    "tuple-livein-overstated",
    "reserved-scratch-resource",
    "entry-abi-inputs",
    "kernarg-preload-prologue",
    "true16-d16-half-def",
    "super-register-bookkeeping",
)
SPECIALS = frozenset({"vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "scc", "m0"})


def names(regs: int) -> set[str]:
    return set(S.register_names(regs))


@dataclass
class Case:
    """One kernel: both sides' views of it."""

    name: str
    target: str
    wave64: bool
    wave: int
    mir: mir.MirFunction
    mapped: mir.Mapped
    instructions: tuple[Instruction, ...]
    index: dict[int, int]  # address -> instruction index
    flow: ControlFlow
    semantics: S.Semantics
    initialised: int
    fields: dict[str, int]
    liveness: L.Liveness
    prologue_blocks: set[int] = field(default_factory=set)  # MIR blocks of a kernarg preload prologue

    @property
    def family(self) -> str:
        return f"{self.target}{'-w64' if self.wave64 else ''}"


def instructions_of(lines: Iterable[mir.AsmLine]) -> tuple[Instruction, ...]:
    out = []
    for line in lines:
        mnemonic, _, operands = line.text.partition(" ")
        out.append(Instruction(line.address, line.size, line.text, mnemonic, operands.strip(), True, line.encoding))
    return tuple(out)


def build(ll: Path, target: str, wave64: bool, work: Path) -> list[Case]:
    """Compile one IR file and pair each kernel's two views."""
    obj, text = mir.compile_with_mir(ll, target, wave64, work)
    functions = mir.parse_mir(text)
    disassembly = mir.disassemble(obj, target, wave64)
    (code_object,) = amdocc.load(str(obj))
    major = code_object.target.isa_version[0]
    cases = []
    for kernel in code_object.kernels:
        fn = functions[kernel.name]
        mapped = mir.map_function(fn, disassembly[kernel.name])
        instructions = instructions_of(disassembly[kernel.name])
        flow = control_flow(instructions)
        wave = kernel.descriptor.wave_size or 64
        semantics = S.semantics(major, wave)
        fields = dict(kernel.descriptor.fields)
        initialised = L.hardware_initialised(fields, code_object.processor)
        live = L.analyse(instructions, flow, semantics, initialised)
        prologue = set()
        if fields.get("user_sgpr_kernarg_preload_length") and fn.blocks:
            prologue.add(fn.blocks[0].number)
        cases.append(
            Case(
                kernel.name,
                target,
                wave64,
                wave,
                fn,
                mapped,
                instructions,
                {ins.address: i for i, ins in enumerate(instructions)},
                flow,
                semantics,
                initialised,
                fields,
                live,
                prologue,
            )
        )
    return cases


def generated(work: Path, seeds: Iterable[int], per_module: int = 10) -> list[Case]:
    cases = []
    for target, wave64 in CONFIGS:
        for seed in seeds:
            ll = work / f"{target}{'_w64' if wave64 else ''}_{seed}.ll"
            ll.write_text(livegen.module(target, seed, per_module))
            cases += build(ll, target, wave64, work)
    return cases


# -- one instruction ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    case: str
    text: str
    mir: str
    what: str  # "defs", "uses", "special defs", "special uses", "live-in"
    amdocc_only: tuple[str, ...]
    mir_only: tuple[str, ...]
    rule: str | None


def instruction_differences(
    case: Case, semantics: S.Semantics | None = None
) -> tuple[list[Difference], collections.Counter[str]]:
    """Every disagreement on one kernel's defs and uses, and agreements counted by table rule."""
    semantics = semantics or case.semantics
    out: list[Difference] = []
    agreed: collections.Counter[str] = collections.Counter()
    for mi, line in case.mapped.pairs:
        ins = case.instructions[case.index[line.address]]
        access = semantics.access(ins.mnemonic, ins.operands)
        defs, uses = names(access.defs), names(access.uses)
        their_defs = mi.defs | mi.implicit_defs
        their_uses = mi.uses | mi.implicit_uses
        found = []
        for what, mine, theirs in (
            ("defs", mir.counted(defs), mir.counted(their_defs)),
            ("uses", mir.counted(uses), mir.counted(their_uses)),
            ("special defs", defs & SPECIALS, their_defs & SPECIALS),
            ("special uses", uses & SPECIALS, (their_uses | mi.undef_uses) & SPECIALS),
        ):
            if case.wave == 32 and what.startswith("special"):
                mine, theirs = mine - {"exec_hi", "vcc_hi"}, theirs - {"exec_hi", "vcc_hi"}  # wave32-high-halves
            if mine == theirs:
                continue
            rule = _instruction_rule(what, mine - theirs, theirs - mine, mi, ins)
            found.append(Difference(case.name, ins.text, mi.text, what, tuple(sorted(mine - theirs)),
                                    tuple(sorted(theirs - mine)), rule))  # fmt: skip
        out += found
        if not found or all(d.rule for d in found):
            agreed[access.rule] += 1
    return out, agreed


def _instruction_rule(
    what: str, mine_only: set[str], theirs_only: set[str], mi: mir.MirInstruction, ins: Instruction
) -> str | None:
    if what == "uses" and not theirs_only and mine_only <= mi.undef_uses:
        return "undef-read"
    if what.startswith("special") and (mine_only | theirs_only) <= mi.special_bookkeeping:
        return "super-register-bookkeeping"
    if what == "uses" and not theirs_only and mine_only <= mi.half_defs and "D16" in mi.opcode:
        return "true16-d16-half-def"
    return None


# -- block live-ins -------------------------------------------------------------------------------


def _first_access(case: Case, start: int, reg: str) -> tuple[str | None, int]:
    """The first read or write of ``reg`` from instruction ``start`` on, in address order."""
    for j in range(start, len(case.instructions)):
        ins = case.instructions[j]
        access = case.semantics.access(ins.mnemonic, ins.operands)
        if reg in names(access.uses):
            return "use", j
        if reg in names(access.defs):
            return "def", j
    return None, -1


_EXEC = S.SPECIAL_BIT["exec"]


def _exec_narrowed(case: Case, start: int, def_at: int) -> bool:
    """Whether exec is written between the instruction before ``start`` and ``def_at`` (the write
    then runs in an arm of a divergent branch, under a narrower mask)."""
    for k in range(max(start - 1, 0), def_at):
        ins = case.instructions[k]
        if case.semantics.access(ins.mnemonic, ins.operands).defs >> _EXEC & 3:
            return True
    return False


def _reserved_quads(fn: mir.MirFunction) -> set[str]:
    common: set[tuple[str, ...]] | None = None
    for b in fn.blocks[1:]:
        quads = {n for n, live in b.livein_tuples if len(n) == 4 and n[0].startswith("s") and set(n) == live}
        common = quads if common is None else common & quads
    return {r for quad in common or () for r in quad}


def block_differences(case: Case) -> list[Difference]:
    """Every block whose live-ins differ from MIR's, each with its rule (None if unexplained)."""
    live = case.liveness
    assert live.unknown is None, f"{case.name}: {live.unknown}"
    maydef = L.may_be_defined_before(case.instructions, case.flow, case.semantics, case.initialised)
    undefined = set().union(*(b.undefined for b in case.mir.blocks))
    reserved = _reserved_quads(case.mir)
    initialised = mir.counted(names(case.initialised))
    mir_at = {case.index[line.address]: mi for mi, line in case.mapped.pairs}
    spill_stores = {i for i, mi in mir_at.items() if mi.stack_store}
    out = []
    for position, (block, (start, end)) in enumerate(zip(case.mir.blocks, case.mapped.block_ranges, strict=True)):
        if start == end:
            continue
        i = case.index[case.mapped.asm[start].address]
        mine = mir.counted(names(live.live_in[i]))
        theirs = mir.counted(block.liveins)
        if mine == theirs:
            continue
        mine_only, theirs_only = mine - theirs, theirs - mine
        rules: list[str] = []
        refined = mir.counted(names(live.live_in[i] & maydef[i]))
        step = {r for r in mine_only if r not in refined}
        if step:
            rules.append("never-written")
            mine_only -= step
        masked = {r for n, kept in block.livein_tuples for r in n if r not in kept and r in mine_only}
        if masked:
            rules.append("tuple-half-undef")
            mine_only -= masked
        step = mine_only & undefined
        if step:
            rules.append("implicit-def")
            mine_only -= step
        step, undef_read, half_def = set(), set(), set()
        for r in mine_only:
            kind, j = _first_access(case, i, r)
            if kind == "use" and j in spill_stores:
                step.add(r)
            elif kind == "use" and j in mir_at and r in mir_at[j].undef_uses:
                undef_read.add(r)
            elif kind == "use" and j in mir_at and r in mir_at[j].half_defs and "D16" in mir_at[j].opcode:
                half_def.add(r)
        if step:
            rules.append("spill-tuple-half")
            mine_only -= step
        if undef_read:
            rules.append("undef-read")
            mine_only -= undef_read
        if half_def:
            rules.append("true16-d16-half-def")
            mine_only -= half_def
        if block.number in case.prologue_blocks and mine_only and mine_only <= initialised:
            rules.append("kernarg-preload-prologue")
            mine_only = set()
        if position == 0 and theirs_only & initialised:
            rules.append("entry-abi-inputs")
            theirs_only -= initialised
        step = theirs_only & reserved
        if step:
            rules.append("reserved-scratch-resource")
            theirs_only -= step
        step = {
            r
            for r in theirs_only
            if any(r in kept for _, kept in block.livein_tuples)
            and all(len(n) > 1 and set(n) & mine for n, kept in block.livein_tuples if r in kept)
        }
        if step:
            rules.append("tuple-livein-overstated")
            theirs_only -= step
        step = set()
        for r in theirs_only:
            kind, j = _first_access(case, i, r)
            if kind == "def" and case.instructions[j].mnemonic.startswith("v_") and _exec_narrowed(case, i, j):
                step.add(r)
        if step:
            rules.append("exec-masked-def")
            theirs_only -= step
        rule = "+".join(rules) if not (mine_only or theirs_only) else None
        out.append(
            Difference(case.name, f"bb.{block.number} at {case.mapped.asm[start].address:#x}", "", "live-in",
                       tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine)), rule)
        )  # fmt: skip
    return out


def spill_reloads(case: Case) -> list[tuple[str, set[str], set[str]]]:
    """Each reload (MIR: a load from a stack slot): (text, registers it writes, those live after it)."""
    out = []
    for mi, line in case.mapped.pairs:
        if not mi.stack_load:
            continue
        i = case.index[line.address]
        access = case.semantics.access(case.instructions[i].mnemonic, case.instructions[i].operands)
        written = mir.counted(names(access.defs))
        out.append((line.text, written, written & mir.counted(names(case.liveness.live_out[i]))))
    return out
