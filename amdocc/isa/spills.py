"""Scratch traffic and SGPR lane spills, per instruction, reconciled with the metadata.

What is a scratch access:
- ``scratch_*`` (flat scratch, gfx9.4 and gfx10+): always;
- ``buffer_*`` through the private segment's buffer resource: the user SGPRs the descriptor's
  ``user_sgpr_private_segment_buffer`` loads (``s[0:3]``), followed through the plain copies
  (``s_mov_b64``/``s_mov_b32``) a compiler makes of them (``s[8:11]``); a buffer access through
  any other resource is global memory (Triton and CK use buffer loads for global memory);
- ``flat_*`` may reach the private segment through a generic address: not knowable from the
  code, so never counted here (LLVM does not spill through flat instructions).

SGPRs spill into VGPR lanes: ``v_writelane_b32`` stores one SGPR, ``v_readlane_b32`` reloads it,
on a spill VGPR: one that lane writes fill and lane reads empty (or, where lanes themselves go to
memory, one that a scratch access stores or loads). A lane read of any other VGPR reads a value
the program computed (a broadcast or a reduction's last step), and a lane write to a VGPR no lane
read or scratch store empties builds a vector: neither is a spill, and neither is marked.

The text cannot tell a spill from a private array; the metadata can, in totals:
- VGPR: the dwords the scratch stores write equal ``.vgpr_spill_count`` → "spill"; the count is
  0 and ``.private_segment_fixed_size`` is not → "private" (the stores are the program's own
  private arrays); no scratch stores and no spills → "none"; anything else "ambiguous", stated
  (a kernel with both spills and a private array; spills to AGPRs on gfx908, which write no
  scratch; a count the metadata does not carry).
- SGPR: the lane writes equal ``.sgpr_spill_count`` → "spill"; the count is 0 → "none" (lane
  writes, if any, are the program's); otherwise "ambiguous".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter
from typing import Any

from .model import Instruction

VGPR_STORE, VGPR_RELOAD, SGPR_STORE, SGPR_RELOAD = "vgpr", "vgpr_reload", "sgpr", "sgpr_reload"
_WIDTH = re.compile(r"_(dwordx(\d)|dword|b(32|64|96|128)|byte|ubyte|sbyte|short|ushort|sshort|[iu]?8|[iu]?16|b8|b16)")
_SREG = re.compile(r"^s\[(\d+):(\d+)\]$|^s(\d+)$")
_VREG = re.compile(r"^v\[(\d+):(\d+)\]$|^v(\d+)$")
PRIVATE_BUFFER = (0, 3)  # the private segment buffer's user SGPRs, s[0:3], when the descriptor asks
_COPIES = frozenset(("s_mov_b64", "s_mov_b32"))  # the plain copies followed from the private buffer
_MNEMONIC = itemgetter(3)  # Instruction.mnemonic, read faster than by name


def dwords(mnemonic: str) -> int:
    """32-bit words one load or store moves, from its suffix (a byte or short access counts as
    one: it writes part of one dword)."""
    found = list(_WIDTH.finditer(mnemonic))
    if not found:
        return 1
    m = found[-1]
    if m.group(2):
        return int(m.group(2))
    if m.group(3):
        return int(m.group(3)) // 32
    return 1


def _sgprs(operand: str) -> tuple[int, int] | None:
    m = _SREG.match(operand.strip())
    if not m:
        return None
    if m.group(3) is not None:
        n = int(m.group(3))
        return n, n
    return int(m.group(1)), int(m.group(2))


def private_resources(instructions: Sequence[Instruction], private_segment_buffer: bool) -> set[tuple[int, int]]:
    """The SGPR quads that hold the private segment's buffer resource: s[0:3] when the
    descriptor loads it, and every quad made of plain copies of its dwords."""
    if not private_segment_buffer:
        return set()
    # Where each SGPR's value came from, as the index of the private-buffer dword it copies.
    holds: dict[int, int] = {n: n for n in range(PRIVATE_BUFFER[0], PRIVATE_BUFFER[1] + 1)}
    quads = {PRIVATE_BUFFER}
    for ins in compress(instructions, map(_COPIES.__contains__, map(_MNEMONIC, instructions))):
        dst_text, _, src_text = ins.operands.partition(",")
        dst, src = _sgprs(dst_text), _sgprs(src_text)
        if dst is None:
            continue
        for k in range(dst[1] - dst[0] + 1):
            if src is not None and src[0] + k in holds:
                holds[dst[0] + k] = holds[src[0] + k]
            else:
                holds.pop(dst[0] + k, None)
        for start in range(max(0, dst[0] - 3), dst[1] + 1):
            if all(holds.get(start + k) == k for k in range(4)):
                quads.add((start, start + 3))
    return quads


def scratch_access(ins: Instruction, resources: set[tuple[int, int]]) -> str | None:
    """ "store", "load" or None: whether ``ins`` writes or reads the private segment."""
    m = ins.mnemonic
    if m.startswith("scratch_"):
        kind = m.split("_")[1]
    elif m.startswith("buffer_") and resources:
        parts = [p.strip() for p in ins.operands.split(",")]
        rsrc = next((_sgprs(p) for p in parts if p.startswith("s[")), None)
        if rsrc not in resources:
            return None
        kind = m.split("_")[1]
    else:
        return None
    return {"store": "store", "load": "load"}.get(kind)


@dataclass(frozen=True, slots=True)
class Spills:
    """Per instruction, its spill mark; in totals, the dwords and the reconciliation.

    Attributes:
        marks: by instruction index, "vgpr" (a scratch store), "vgpr_reload" (a scratch load),
            "sgpr" (a lane write), "sgpr_reload" (a lane read), or None.
        dwords: by instruction index, the dwords a marked instruction moves (SGPR marks: 1).
        totals: {"vgpr", "vgpr_reload", "sgpr", "sgpr_reload"} summed over the kernel (dwords).
        classification: {"vgpr": ..., "sgpr": ...}: "spill", "private", "none" or "ambiguous".
        reasons: {"vgpr": why, "sgpr": why}, one line each.
    """

    marks: tuple[str | None, ...]
    dwords: tuple[int, ...]
    totals: dict[str, int] = field(default_factory=dict)
    classification: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def in_loops(self, loop_depths: Sequence[int]) -> dict[str, int]:
        """The totals over instructions inside a loop (depth > 0)."""
        if len(loop_depths) != len(self.marks):
            raise ValueError(f"{len(self.marks)} spill marks for {len(loop_depths)} loop depths")
        out = dict.fromkeys((VGPR_STORE, VGPR_RELOAD, SGPR_STORE, SGPR_RELOAD), 0)
        # Only marked instructions count, and few are: they are found at C level (a mark is a
        # non-empty string, an unmarked instruction None).
        for i in compress(range(len(self.marks)), self.marks):
            mark = self.marks[i]
            if mark is not None and loop_depths[i] > 0:
                out[mark] += self.dwords[i]
        return out


def find_spills(
    instructions: Sequence[Instruction],
    *,
    private_segment_buffer: bool,
    vgpr_spill_count: int | None,
    sgpr_spill_count: int | None,
    private_segment_fixed_size: int | None,
) -> Spills:
    """Mark each instruction and reconcile the totals with the metadata (module docstring)."""
    resources = private_resources(instructions, private_segment_buffer)
    count = len(instructions)
    marks: list[str | None] = [None] * count
    counts: list[int] = [0] * count
    totals = dict.fromkeys((VGPR_STORE, VGPR_RELOAD, SGPR_STORE, SGPR_RELOAD), 0)
    # Most mnemonics are never a spill: each distinct one is looked at once, and only the
    # instructions whose mnemonic may be one are visited (found at C level).
    mnemonics = list(map(_MNEMONIC, instructions))
    kinds = {m: kind for m in set(mnemonics) if (kind := _kind(m)) is not None}
    lanes: list[tuple[int, str, str]] = []  # (index, mark, its VGPR) of each lane write and read
    # VGPRs by what touches them: lane writes and reads, scratch stores and loads.
    touched: dict[str, set[str]] = {SGPR_STORE: set(), SGPR_RELOAD: set(), VGPR_STORE: set(), VGPR_RELOAD: set()}
    for i in compress(range(count), map(kinds.__contains__, mnemonics)):
        kind = kinds[mnemonics[i]]
        if kind == "memory":
            access = scratch_access(instructions[i], resources)
            if access is None:
                continue
            mark = marks[i] = VGPR_STORE if access == "store" else VGPR_RELOAD
            n = counts[i] = dwords(mnemonics[i])
            totals[mark] += n
            touched[mark].update(_data_vgprs(instructions[i]))
            continue
        vgpr = _lane_vgpr(instructions[i], kind)
        lanes.append((i, kind, vgpr))
        touched[kind].add(vgpr)
    # A lane write spills to a VGPR that is read back by lane or stored to scratch; a lane read
    # reloads from a VGPR that lane writes filled or a scratch load brought back.
    spill_vgprs = {
        SGPR_STORE: touched[SGPR_STORE] & (touched[SGPR_RELOAD] | touched[VGPR_STORE]),
        SGPR_RELOAD: touched[SGPR_RELOAD] & (touched[SGPR_STORE] | touched[VGPR_RELOAD]),
    }
    for i, mark, vgpr in lanes:
        if vgpr in spill_vgprs[mark]:
            marks[i] = mark
            counts[i] = 1
            totals[mark] += 1
    vgpr, vgpr_why = _classify_vgpr(totals[VGPR_STORE], vgpr_spill_count, private_segment_fixed_size)
    sgpr, sgpr_why = _classify_sgpr(totals[SGPR_STORE], sgpr_spill_count)
    return Spills(
        tuple(marks), tuple(counts), totals, {"vgpr": vgpr, "sgpr": sgpr}, {"vgpr": vgpr_why, "sgpr": sgpr_why}
    )


def _kind(mnemonic: str) -> str | None:
    """The kind "memory" for a scratch or buffer access, the SGPR mark of a lane write or read, else None."""
    if mnemonic.startswith(("scratch_", "buffer_")):
        return "memory"
    if mnemonic == "v_writelane_b32":
        return SGPR_STORE
    if mnemonic == "v_readlane_b32":
        return SGPR_RELOAD
    return None


def _lane_vgpr(ins: Instruction, kind: str) -> str:
    """The VGPR a lane write fills (its first operand) or a lane read reads (its second)."""
    operands = ins.operands.split(",")
    which = 0 if kind == SGPR_STORE else 1
    return operands[which].strip() if len(operands) > which else ""


def _data_vgprs(ins: Instruction) -> set[str]:
    """The VGPRs a scratch access stores from or loads into, one name each (``v[4:5]``: v4, v5)."""
    out: set[str] = set()
    for operand in ins.operands.split(","):
        m = _VREG.match(operand.strip())
        if m:
            first = int(m.group(1) or m.group(3))
            last = int(m.group(2) or first)
            out.update(f"v{n}" for n in range(first, last + 1))
    return out


def _classify_vgpr(stored: int, spill_count: int | None, private_size: int | None) -> tuple[str, str]:
    if spill_count is None:
        if stored == 0:
            return "none", "no scratch stores (the metadata has no .vgpr_spill_count)"
        return "ambiguous", f"{stored} dwords stored to scratch; the metadata has no .vgpr_spill_count"
    if stored == spill_count == 0:
        if private_size:
            return "none", (
                f"no scratch stores and .vgpr_spill_count 0; .private_segment_fixed_size {private_size} is "
                "reached some other way (flat addresses, or loads only)"
            )
        return "none", "no scratch stores and .vgpr_spill_count 0"
    if stored == spill_count:
        return "spill", f"the {stored} dwords stored to scratch equal .vgpr_spill_count"
    if spill_count == 0 and (private_size or 0) > 0:
        return "private", (
            f"{stored} dwords stored to scratch, .vgpr_spill_count 0 and .private_segment_fixed_size "
            f"{private_size}: a private array"
        )
    return "ambiguous", (
        f"{stored} dwords stored to scratch but .vgpr_spill_count is {spill_count} "
        f"(.private_segment_fixed_size {private_size}): spills and private data mixed, or spills to AGPRs"
    )


def _classify_sgpr(written: int, spill_count: int | None) -> tuple[str, str]:
    if spill_count is None:
        if written == 0:
            return "none", "no lane writes (the metadata has no .sgpr_spill_count)"
        return "ambiguous", f"{written} lane writes; the metadata has no .sgpr_spill_count"
    if written == spill_count == 0:
        return "none", "no lane writes and .sgpr_spill_count 0"
    if written == spill_count:
        return "spill", f"the {written} lane writes equal .sgpr_spill_count"
    if spill_count == 0:
        return "none", f".sgpr_spill_count 0: the {written} lane writes are the program's own"
    return "ambiguous", f"{written} lane writes but .sgpr_spill_count is {spill_count}"


def as_summary(spills: Spills, in_loops: dict[str, int] | None) -> dict[str, Any]:
    """The JSON summary's ``spills`` object."""
    return {**spills.totals, "in_loops": in_loops, "classification": dict(spills.classification),
            "reasons": dict(spills.reasons)}  # fmt: skip
