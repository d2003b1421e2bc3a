"""LLVM 22's final machine IR and disassembly, read as the oracle for register def/use and liveness.

``llc-22 ... -filetype=obj -o k.o -print-after=amdgpu-preload-kern-arg-prolog`` prints (to stderr)
the machine IR after the last machine pass that changes it: every instruction's explicit and
implicit defs and uses (with ``undef``/``dead`` flags) and every block's ``liveins:`` with lane
masks. ``llvm-objdump-22 -d`` of the same object gives each instruction's text. Without the meta
instructions (KILL, IMPLICIT_DEF, BUNDLE, ...) the machine IR maps one to one, in order, onto the
disassembly; the disassembly has more only where the printer pads with ``s_nop`` (code alignment
after the last instruction, and after a kernel-argument preload prologue).

Nothing here imports amdocc: registers are named as 32-bit registers (``v12``, ``a3``, ``s5``,
``vcc_lo``, ``exec_hi``, ``scc``, ``m0``) so that a test can compare the two sides by name.
"""

from __future__ import annotations

import re
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

LLC = "llc-22"
OBJDUMP = "llvm-objdump-22"
LAST_MACHINE_PASS = "amdgpu-preload-kern-arg-prolog"

# Machine instructions that emit no machine code.
META_OPCODES = frozenset(
    {
        "KILL",
        "IMPLICIT_DEF",
        "BUNDLE",
        "CFI_INSTRUCTION",
        "DBG_VALUE",
        "DBG_VALUE_LIST",
        "DBG_INSTR_REF",
        "DBG_PHI",
        "DBG_LABEL",
        "EH_LABEL",
        "GC_LABEL",
        "ANNOTATION_LABEL",
        "LIFETIME_START",
        "LIFETIME_END",
        "PSEUDO_PROBE",
        "FAKE_USE",
        "SCHED_BARRIER",
        "SCHED_GROUP_BARRIER",
        "IGLP_OPT",
        "WAVE_BARRIER",
        "ATOMIC_FENCE",
        "SI_MASKED_UNREACHABLE",
        "SI_ILLEGAL_COPY",
        "MEMBARRIER",
        "INLINEASM",
    }
)

COUNTED = re.compile(r"^[vas]\d+$")


def counted(names: set[str]) -> set[str]:
    """The VGPR, AGPR and SGPR (s0..s105) names of a set: the registers liveness counts."""
    return {n for n in names if COUNTED.match(n) and not (n[0] == "s" and int(n[1:]) > 105)}


# -- register names --------------------------------------------------------------------------------

_PART = re.compile(r"(vgpr|agpr|sgpr|ttmp)(\d+)(?:_(lo16|hi16))?$")
_INF = re.compile(r"(?<![\w.])(-?)inf\b")


def for_llc22(ir: str) -> str:
    """IR written by a newer LLVM (Triton's), spelled so that llc-22 parses it: the generic triple
    (the subarch triple ``amdgpu9.42-amd-amdhsa`` is newer than LLVM 22), infinities and float bit
    patterns as LLVM 22's hex doubles."""
    ir = re.sub(r'^target triple = ".*"$', 'target triple = "amdgcn-amd-amdhsa"', ir, flags=re.M)
    ir = _INF.sub(lambda m: "0xFFF0000000000000" if m.group(1) else "0x7FF0000000000000", ir)
    return _FLOAT_BITS.sub(_float_as_double, ir)


# LLVM main writes a float constant by its own bits (``f0x3FB8AA3B``); LLVM 22 wants the double
# that holds the same value, in hex.
_FLOAT_BITS = re.compile(r"(?<![\w.])f0x([0-9A-Fa-f]{8})\b")


def _float_as_double(m: re.Match[str]) -> str:
    (value,) = struct.unpack(">f", bytes.fromhex(m.group(1)))
    return "0x" + struct.pack(">d", value).hex().upper()


_SPECIAL = {
    "vcc": ("vcc_lo", "vcc_hi"),
    "vcc_lo": ("vcc_lo",),
    "vcc_hi": ("vcc_hi",),
    "exec": ("exec_lo", "exec_hi"),
    "exec_lo": ("exec_lo",),
    "exec_hi": ("exec_hi",),
    "scc": ("scc",),
    "m0": ("m0",),
    "m0_lo16": ("m0",),
}
# Registers that are not state the liveness pass tracks (the hardware mode, constants, null).
_IGNORED = re.compile(
    r"^(mode|sgpr_null|sgpr_null64|src_.*|private_rsrc_reg|lds_direct|pops_exiting_wave_id|"
    r"flat_scr.*|xnack_mask.*|tba.*|tma.*|vcc_lo_lo16|vcc_lo_hi16|exec_lo_lo16|exec_lo_hi16|"
    r"sgpr_null_lo16|sgpr_null_hi16|src_scc|scc_lo16|vccz|execz|.*_hi16_.*|mode_.*)$"
)


def register_names(mir_name: str) -> tuple[str, ...]:
    """``$vgpr0_vgpr1`` -> ("v0", "v1"); ``$vgpr3_lo16`` -> ("v3",); ``$vcc`` -> ("vcc_lo", "vcc_hi")."""
    name = mir_name.lstrip("$")
    if name in _SPECIAL:
        return _SPECIAL[name]
    if _IGNORED.match(name):
        return ()
    # a tuple: parts joined by "_" where each part starts with a class name
    parts = re.findall(r"(?:vgpr|agpr|sgpr|ttmp)\d+(?:_lo16|_hi16)?", name)
    if not parts or "".join(p + "_" for p in parts).rstrip("_") != name:
        raise ValueError(f"unknown MIR register {mir_name!r}")
    out = []
    for p in parts:
        m = _PART.match(p)
        assert m
        cls = {"vgpr": "v", "agpr": "a", "sgpr": "s", "ttmp": "ttmp"}[m.group(1)]
        out.append(f"{cls}{m.group(2)}")
    return tuple(out)


def lanemask_names(mir_name: str, mask: int | None) -> set[str]:
    """The 32-bit registers of a live-in whose lane mask has any of their lanes (two lanes, the
    16-bit halves, per 32-bit register; no mask means all)."""
    names = register_names(mir_name)
    if mask is None or len(names) == 1:
        return set(names) if mask != 0 else set()
    return {n for i, n in enumerate(names) if mask >> (2 * i) & 3}


# -- machine IR -----------------------------------------------------------------------------------


@dataclass
class MirInstruction:
    opcode: str
    defs: set[str] = field(default_factory=set)  # explicit defs
    uses: set[str] = field(default_factory=set)  # explicit uses, without undef ones
    undef_uses: set[str] = field(default_factory=set)
    implicit_defs: set[str] = field(default_factory=set)
    implicit_uses: set[str] = field(default_factory=set)
    text: str = ""
    # Implicit operands naming VGPRs, AGPRs or SGPRs: LLVM's liveness bookkeeping after it splits a
    # copy or a spill of a tuple into 32/64-bit pieces (``$vgpr4 = V_MOV_B32 $sgpr8, implicit-def
    # $vgpr4_vgpr5, implicit $sgpr8_sgpr9``; a spill store of v23 carrying ``implicit
    # $agpr0_..._agpr15``; ``implicit-def $vgpr2`` on the write of v3 that forms v[2:3]), not
    # registers the hardware reads or writes (no AMDGPU instruction reads or writes a numbered
    # register it does not name, but for calls and register indexing, which fail closed). Kept
    # apart: rule "super-register-bookkeeping".
    bookkeeping_defs: set[str] = field(default_factory=set)
    bookkeeping_uses: set[str] = field(default_factory=set)
    # Implicit vcc/exec beside an explicit half of it (``V_WRITELANE_B32 $vcc_lo, ..., implicit $vcc``).
    special_bookkeeping: set[str] = field(default_factory=set)
    half_defs: set[str] = field(default_factory=set)  # defined as a 16-bit half ($vgpr1_lo16)
    stack_load: bool = False  # a reload: its memory operand loads from a stack slot
    stack_store: bool = False  # a spill: its memory operand stores into a stack slot


@dataclass
class MirBlock:
    number: int
    successors: list[int] = field(default_factory=list)
    liveins: set[str] = field(default_factory=set)
    instructions: list[MirInstruction] = field(default_factory=list)
    # Registers given an undefined value here by IMPLICIT_DEF (which emits no code).
    undefined: set[str] = field(default_factory=set)
    # Each ``liveins:`` entry naming a register tuple: (its registers, those its lane mask keeps).
    livein_tuples: list[tuple[tuple[str, ...], set[str]]] = field(default_factory=list)


@dataclass
class MirFunction:
    name: str
    blocks: list[MirBlock] = field(default_factory=list)

    def instructions(self) -> list[MirInstruction]:
        return [i for b in self.blocks for i in b.instructions]


_FLAGS = {
    "renamable",
    "killed",
    "dead",
    "undef",
    "implicit",
    "implicit-def",
    "def",
    "internal",
    "early-clobber",
    "debug-use",
    "debug-def",
}
_INSTR_FLAGS = {
    "frame-setup",
    "frame-destroy",
    "nnan",
    "ninf",
    "nsz",
    "arcp",
    "contract",
    "afn",
    "reassoc",
    "nuw",
    "nsw",
    "exact",
    "nofpexcept",
    "nomerge",
    "unpredictable",
    "noconvergent",
    "nusw",
    "disjoint",
    "samesign",
    "inbounds",
}


def _split_top(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _operand(token: str) -> tuple[set[str], str | None]:
    """(flags, register) of one MIR operand; register None for an immediate, block, symbol..."""
    words = token.split()
    flags = set()
    while words and words[0] in _FLAGS:
        flags.add(words.pop(0))
    if not words:
        return flags, None
    m = re.match(r"^(\$[\w]+)", words[0])
    return flags, m.group(1) if m else None


def parse_instruction(line: str) -> MirInstruction:
    body, _, memory = line.partition(" :: ")
    body = re.sub(
        r",?\s*(debug-location|pcsections|mmra|heap-alloc-marker|pre-instr-symbol|post-instr-symbol)\s.*$", "", body
    )
    left, right = body.split(" = ", 1) if " = " in body else ("", body)
    words = right.split()
    while words and words[0] in _INSTR_FLAGS:
        words.pop(0)
    opcode = words[0]
    rest = right.split(opcode, 1)[1]
    ins = MirInstruction(opcode, text=line.strip())
    ins.stack_load = bool(re.search(r"\bload\b[^,]*? from %(fixed-)?stack\.", memory))
    ins.stack_store = bool(re.search(r"\bstore\b[^,]*? into %(fixed-)?stack\.", memory))
    for token in _split_top(left):
        _, reg = _operand(token)
        if reg:
            ins.defs.update(register_names(reg))
            if reg.endswith(("_lo16", "_hi16")):
                ins.half_defs.update(register_names(reg))
    implicit: list[tuple[set[str], tuple[str, ...]]] = []
    for token in _split_top(rest):
        flags, reg = _operand(token)
        if not reg:
            continue
        names = register_names(reg)
        if "implicit-def" in flags or "implicit" in flags:
            if "undef" not in flags or "implicit-def" in flags:
                implicit.append((flags, names))
        elif "def" in flags:
            ins.defs.update(names)
        elif "undef" in flags:
            ins.undef_uses.update(names)
        else:
            ins.uses.update(names)
    explicit = ins.defs | ins.uses | ins.undef_uses
    for flags, names in implicit:
        is_def = "implicit-def" in flags
        if names and COUNTED.match(names[0]):
            (ins.bookkeeping_defs if is_def else ins.bookkeeping_uses).update(names)
        elif len(names) == 2 and explicit.intersection(names) and names[0] in ("vcc_lo", "exec_lo"):
            ins.special_bookkeeping.update(names)
        else:
            (ins.implicit_defs if is_def else ins.implicit_uses).update(names)
    return ins


_FUNCTION = re.compile(r"^# Machine code for function ([^:]+):")
_BLOCK = re.compile(r"^bb\.(\d+)")
_LIVEIN = re.compile(r"(\$\w+)(?::(0x[0-9A-Fa-f]+))?")


def parse_mir(text: str) -> dict[str, MirFunction]:
    """Every function of one ``-print-after`` dump."""
    functions: dict[str, MirFunction] = {}
    fn: MirFunction | None = None
    block: MirBlock | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = _FUNCTION.match(line)
        if m:
            fn = functions.setdefault(m.group(1), MirFunction(m.group(1)))
            block = None
            continue
        if fn is None or not line or line.startswith(("#", ";")):
            if line.startswith("# End machine code"):
                fn = None
            continue
        m = _BLOCK.match(line)
        if m:
            block = MirBlock(int(m.group(1)))
            fn.blocks.append(block)
            continue
        if block is None:
            continue
        if line.startswith("successors:"):
            block.successors = [int(x) for x in re.findall(r"%bb\.(\d+)\(", line.split(";")[0])]
            continue
        if line.startswith("liveins:"):
            for reg, mask in _LIVEIN.findall(line[len("liveins:") :]):
                live = lanemask_names(reg, int(mask, 16) if mask else None)
                block.liveins |= live
                names = register_names(reg)
                if len(names) > 1:
                    block.livein_tuples.append((names, live))
            continue
        if line in ("{", "}") or line.startswith("}"):
            continue
        ins = parse_instruction(line.rstrip("{").strip())
        if ins.opcode == "IMPLICIT_DEF":
            block.undefined |= ins.defs | ins.implicit_defs | ins.bookkeeping_defs
        if ins.opcode in META_OPCODES:
            continue
        block.instructions.append(ins)
    return functions


# -- disassembly ----------------------------------------------------------------------------------

_OBJDUMP_LINE = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s+[0-9A-Fa-f]{8})+)")
_SYMBOL = re.compile(r"^[0-9a-fA-F]+ <([^>]+)>:$")


@dataclass(frozen=True)
class AsmLine:
    address: int
    size: int
    text: str
    encoding: bytes = b""


def parse_objdump(text: str) -> dict[str, list[AsmLine]]:
    """Each function's instructions from ``llvm-objdump-22 -d`` text."""
    out: dict[str, list[AsmLine]] = {}
    current: list[AsmLine] | None = None
    for line in text.splitlines():
        m = _SYMBOL.match(line.strip())
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        m = _OBJDUMP_LINE.match(line)
        if m and current is not None:
            words = m.group(3).split()
            encoding = b"".join(int(w, 16).to_bytes(4, "little") for w in words)
            current.append(AsmLine(int(m.group(2), 16), 4 * len(words), " ".join(m.group(1).split()), encoding))
    return out


def compile_with_mir(ll: Path, mcpu: str, wave64: bool, out_dir: Path) -> tuple[Path, str]:
    """(object, MIR dump) of one IR file; ``wave64`` asks gfx10+ for wave64."""
    obj = out_dir / (ll.stem + ".o")
    cmd = [LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-O3", str(ll), "-filetype=obj", "-o", str(obj)]
    if wave64:
        cmd.append("-mattr=+wavefrontsize64")
    cmd.append(f"-print-after={LAST_MACHINE_PASS}")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"llc-22 failed on {ll} for {mcpu}: {done.stderr[-2000:]}")
    return obj, done.stderr


def disassemble(obj: Path, mcpu: str, wave64: bool) -> dict[str, list[AsmLine]]:
    cmd = [OBJDUMP, "-d", f"--mcpu={mcpu}", str(obj)]
    if wave64:
        cmd.append("--mattr=+wavefrontsize64")
    return parse_objdump(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


# -- the two sides side by side -------------------------------------------------------------------


@dataclass
class Mapped:
    """One function with its MIR instructions matched to disassembled ones."""

    function: MirFunction
    asm: list[AsmLine]  # the instructions that carry MIR ones, in order
    pairs: list[tuple[MirInstruction, AsmLine]]
    block_ranges: list[tuple[int, int]]  # per MIR block, [start, end) into asm
    padding: list[AsmLine]  # s_nop words the printer added that MIR does not have


def _family(opcode: str) -> str:
    return opcode.lower().split("_", 1)[0]


def map_function(fn: MirFunction, lines: list[AsmLine]) -> Mapped:
    """Pair MIR instructions with disassembled ones in order, skipping the printer's s_nop padding."""
    pairs: list[tuple[MirInstruction, AsmLine]] = []
    ranges: list[tuple[int, int]] = []
    kept: list[AsmLine] = []
    padding: list[AsmLine] = []
    j = 0
    for block in fn.blocks:
        start = len(kept)
        for ins in block.instructions:
            while j < len(lines) and lines[j].text.startswith("s_nop") and ins.opcode != "S_NOP":
                padding.append(lines[j])
                j += 1
            if j >= len(lines):
                raise AssertionError(f"{fn.name}: disassembly ends before MIR instruction {ins.text!r}")
            line = lines[j]
            mnemonic = line.text.split()[0]
            if _family(ins.opcode) != mnemonic.split("_", 1)[0]:
                raise AssertionError(f"{fn.name}: MIR {ins.text!r} faces {line.text!r} at {line.address:#x}")
            pairs.append((ins, line))
            kept.append(line)
            j += 1
        ranges.append((start, len(kept)))
    rest = lines[j:]
    bad = [x for x in rest if not x.text.startswith(("s_nop", "s_code_end"))]
    if bad:
        raise AssertionError(f"{fn.name}: disassembly has instructions MIR lacks: {bad[:3]}")
    padding.extend(rest)
    return Mapped(fn, kept, pairs, ranges, padding)


def reachable_blocks(fn: MirFunction) -> set[int]:
    by_number = {b.number: b for b in fn.blocks}
    seen = {fn.blocks[0].number} if fn.blocks else set()
    todo = list(seen)
    while todo:
        for s in by_number[todo.pop()].successors:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


def live_per_instruction(fn: MirFunction) -> list[list[set[str]]]:
    """Per block, per machine instruction, the registers MIR has live before or after it (live-in
    ∪ live-out, RGA's convention): backward from the union of the successors' ``liveins:``
    through each instruction's explicit and implicit defs and uses (a 16-bit half def keeps its
    register live; undef reads and LLVM's super-register bookkeeping are not reads)."""
    by_number = {b.number: b for b in fn.blocks}
    out = []
    for block in fn.blocks:
        live: set[str] = set()
        for s in block.successors:
            live |= by_number[s].liveins
        rows: list[set[str]] = []
        for ins in reversed(block.instructions):
            after = set(live)
            live = (live - (ins.defs - ins.half_defs) - ins.implicit_defs) | ins.uses | ins.implicit_uses
            rows.append(after | live)
        out.append(rows[::-1])
    return out
