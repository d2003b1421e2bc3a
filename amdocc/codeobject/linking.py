"""``.amdgpu.info``: the per-function resource records of an object-linking relocatable.

With ``-amdgpu-enable-object-linking`` (llvm #191645) LLVM leaves the call-graph maximum of a
kernel's resources to the linker: each function's descriptor, metadata and ``<fn>.num_*``
symbols then hold *local* counts (llvm #192594, "Report only local per-function resource usage
when object linking is enabled"), and the relocatable carries, for the linker, a section
``.amdgpu.info`` of tagged entries plus a companion string table ``.amdgpu.strtab`` (llvm
#192384). The layout, as llvm/include/llvm/Support/AMDGPUObjLinkingInfo.h defines it (llvm
main at 183681c1fab6, 2026):

* every entry is ``[kind: u8] [len: u8] [payload: len bytes]``; a kind the reader does not
  know is skipped by its length (the header's forward-compatibility rule);
* ``INFO_FUNC`` (1) opens a function's scope; the entries after it, up to the next INFO_FUNC,
  describe that function. Its payload is an 8-byte symbol reference that a relocation
  (``.rela.amdgpu.info``, R_AMDGPU_ABS64) fills in: the bytes themselves are zero in a ``.o``;
* u32 payloads: ``INFO_FLAGS`` (2, the bits of FuncInfoFlags), ``INFO_NUM_SGPR`` (3),
  ``INFO_NUM_VGPR`` (4, architectural VGPRs), ``INFO_NUM_AGPR`` (5, written only when AGPRs are
  used), ``INFO_PRIVATE_SEGMENT_SIZE`` (6, bytes per lane), ``INFO_OCCUPANCY`` (11);
* symbol payloads: ``INFO_USE`` (7, an LDS variable or named barrier the function uses) and
  ``INFO_CALL`` (8, a direct callee);
* ``.amdgpu.strtab`` offsets (u32): ``INFO_INDIRECT_CALL`` (9, the type id an indirect call
  expects) and ``INFO_TYPEID`` (10, the type id of an address-taken function).

FuncInfoFlags: bit 0 uses VCC, bit 1 uses flat scratch, bit 2 dynamic stack, bit 3 WGP mode,
bit 4 wave32. The header changed while the feature was being built (a draft of #192384 put
INFO_NUM_VGPR at 2 and INFO_FLAGS at 7, with a FUNC_IS_KERNEL bit): this module reads the
numbering of the merged header, which is also what Triton 3.9's LLVM (24.0.0git 6bc4aaf6641c)
emits, measured (tests/test_object_linking.py).

The transitive maximum is the rule LLVM itself applies inside one module when object linking
is off (AMDGPUMCResourceInfo: ``num_vgpr = max(local, callees...)``, booleans ``or(...)``,
``private_seg_size = local + max(callees...)``), and the one the linker is to apply across
objects (#192384: "the linker ... compute[s] whole-program resource requirements"): registers
are the maximum over every function the kernel reaches, flags the union, the private segment
the kernel's own plus the deepest callee chain's, LDS the variables reachable. A call to a
function this object does not describe, an indirect call, or recursion leaves the total a
lower bound, and says so.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError, Origin

INFO_SECTION, STRTAB_SECTION = ".amdgpu.info", ".amdgpu.strtab"
SHN_AMDGPU_LDS = 0xFF00  # the section index of an LDS variable symbol (.amdgpu_lds), AMDGPUUsage

# kind → (name, payload): "symbol" (8 bytes, relocated), "u32", "string" (u32 .amdgpu.strtab offset)
KINDS: dict[int, tuple[str, str]] = {
    1: ("func", "symbol"),
    2: ("flags", "u32"),
    3: ("num_sgpr", "u32"),
    4: ("num_vgpr", "u32"),
    5: ("num_agpr", "u32"),
    6: ("private_segment_size", "u32"),
    7: ("use", "symbol"),
    8: ("call", "symbol"),
    9: ("indirect_call", "string"),
    10: ("typeid", "string"),
    11: ("occupancy", "u32"),
}
PAYLOAD_SIZE = {"symbol": 8, "u32": 4, "string": 4}
FLAG_BITS = ("uses_vcc", "uses_flat_scratch", "has_dyn_stack", "wgp_mode", "wave32")
COUNTS = ("num_vgpr", "num_agpr", "num_sgpr")
# Most functions one section may describe (a bound on the walk; real objects hold a few hundred).
MAX_FUNCTIONS = 1 << 16


@dataclass(slots=True)
class FunctionInfo:
    """One function's local record from ``.amdgpu.info``."""

    name: str
    offset: int  # file offset of its INFO_FUNC entry
    counts: dict[str, int] = field(default_factory=dict)  # num_vgpr/num_agpr/num_sgpr as written
    flags: int | None = None
    private_segment_size: int | None = None
    occupancy: int | None = None
    uses: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    indirect_calls: list[str] = field(default_factory=list)
    typeids: list[str] = field(default_factory=list)

    def flag_names(self) -> list[str]:
        return [name for bit, name in enumerate(FLAG_BITS) if (self.flags or 0) >> bit & 1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "num_vgpr": self.counts.get("num_vgpr"),
            "num_agpr": self.counts.get("num_agpr", 0 if self.counts else None),
            "num_sgpr": self.counts.get("num_sgpr"),
            "private_segment_size": self.private_segment_size,
            "flags": self.flag_names() if self.flags is not None else None,
            "occupancy": self.occupancy,
            "uses": list(self.uses),
            "calls": list(self.calls),
            "indirect_calls": list(self.indirect_calls),
            "typeids": list(self.typeids),
        }


@dataclass(slots=True)
class LinkingInfo:
    """What ``.amdgpu.info`` says, by function name, plus the kinds it skipped."""

    functions: dict[str, FunctionInfo]
    lds: dict[str, tuple[int, int]]  # LDS variable → (size, alignment), from SHN_AMDGPU_LDS symbols
    unknown_kinds: dict[int, int]  # kind → how many entries were skipped
    offset: int  # file offset of the section

    def transitive(self, name: str) -> dict[str, Any]:
        """The resources ``name`` needs with everything it calls (see the module docstring)."""
        return _transitive(self, name)


def decode(
    data: bytes,
    offset: int,
    size: int,
    relocations: dict[int, str],
    strtab: bytes | None,
    lds: dict[str, tuple[int, int]],
    origin: Origin,
) -> LinkingInfo:
    """Decode the ``.amdgpu.info`` section ``data[offset:offset+size]``. ``relocations`` maps a
    section-relative offset to the symbol a relocation there names. Raises FormatError naming the
    file offset of the first entry that does not follow the layout."""
    functions: dict[str, FunctionInfo] = {}
    unknown: dict[int, int] = {}
    current: FunctionInfo | None = None
    pos, end = offset, offset + size
    while pos < end:
        if end - pos < 2:
            raise FormatError(f"{INFO_SECTION}: truncated entry header (1 byte left)", origin, pos)
        kind, length = data[pos], data[pos + 1]
        payload = pos + 2
        if payload + length > end:
            raise FormatError(
                f"{INFO_SECTION}: entry of kind {kind} says {length} payload bytes, "
                f"only {end - payload} remain in the section",
                origin,
                pos,
            )
        known = KINDS.get(kind)
        if known is None:
            unknown[kind] = unknown.get(kind, 0) + 1
            pos = payload + length
            continue
        what, shape = known
        if length != PAYLOAD_SIZE[shape]:
            raise FormatError(
                f"{INFO_SECTION}: INFO_{what.upper()} entry has {length} payload bytes, not {PAYLOAD_SIZE[shape]}",
                origin,
                pos,
            )
        if shape == "symbol":
            value: Any = relocations.get(payload - offset)
            if value is None:
                raise FormatError(
                    f"{INFO_SECTION}: INFO_{what.upper()} entry names no symbol (no relocation at its payload)",
                    origin,
                    pos,
                )
        elif shape == "string":
            value = _string(strtab, struct.unpack_from("<I", data, payload)[0], what, origin, pos)
        else:
            value = struct.unpack_from("<I", data, payload)[0]
        if what == "func":
            if value in functions:
                raise FormatError(f"{INFO_SECTION}: function {value} is described twice", origin, pos)
            if len(functions) >= MAX_FUNCTIONS:
                raise FormatError(f"{INFO_SECTION}: more than {MAX_FUNCTIONS} functions", origin, pos)
            current = functions[value] = FunctionInfo(value, pos)
        elif current is None:
            raise FormatError(f"{INFO_SECTION}: INFO_{what.upper()} entry before any INFO_FUNC", origin, pos)
        elif what in COUNTS:
            current.counts[what] = value
        elif what in ("flags", "private_segment_size", "occupancy"):
            setattr(current, what, value)
        else:
            {"use": current.uses, "call": current.calls, "indirect_call": current.indirect_calls}.get(
                what, current.typeids
            ).append(value)
        pos = payload + length
    return LinkingInfo(functions, lds, unknown, offset)


def _string(strtab: bytes | None, at: int, what: str, origin: Origin, pos: int) -> str:
    if strtab is None:
        raise FormatError(f"{INFO_SECTION}: INFO_{what.upper()} needs {STRTAB_SECTION}, which is absent", origin, pos)
    stop = strtab.find(b"\0", at)
    if at >= len(strtab) or stop < 0:
        raise FormatError(
            f"{INFO_SECTION}: INFO_{what.upper()} string offset {at} is outside {STRTAB_SECTION} "
            f"({len(strtab)} bytes) or unterminated",
            origin,
            pos,
        )
    return strtab[at:stop].decode("utf-8", "surrogateescape")


def _transitive(info: LinkingInfo, root: str) -> dict[str, Any]:
    functions = info.functions
    if root not in functions:
        return {"complete": False, "reason": f"{root} has no {INFO_SECTION} record"}
    # Reachable functions, in a bounded iterative walk (no recursion on the call graph).
    reached: list[str] = []
    seen = {root}
    stack = [root]
    unresolved: set[str] = set()
    while stack:
        name = stack.pop()
        reached.append(name)
        for callee in functions[name].calls:
            if callee not in functions:
                unresolved.add(callee)
            elif callee not in seen:
                seen.add(callee)
                stack.append(callee)
    counts = {c: max(functions[n].counts.get(c, 0) for n in reached) for c in COUNTS}
    flags = 0
    for n in reached:
        flags |= functions[n].flags or 0
    recursion, stack_bytes = _deepest_stack(functions, root)
    lds_names = sorted({u for n in reached for u in functions[n].uses if u in info.lds})
    lds_bytes = 0
    for u in lds_names:
        size, align = info.lds[u]
        lds_bytes = -(-lds_bytes // max(align, 1)) * max(align, 1) + size
    indirect = sorted({t for n in reached for t in functions[n].indirect_calls})
    reasons = []
    if unresolved:
        reasons.append(f"calls functions this object does not describe: {', '.join(sorted(unresolved))}")
    if indirect:
        reasons.append(f"makes indirect calls (type ids {', '.join(indirect)})")
    if recursion:
        reasons.append("reaches a call-graph cycle (recursion): the stack has no static bound")
    return {
        **counts,
        "private_segment_size": stack_bytes,
        "flags": [name for bit, name in enumerate(FLAG_BITS) if flags >> bit & 1],
        "lds_uses": lds_names,
        "lds_bytes": lds_bytes,
        "functions": sorted(reached),
        "has_recursion": recursion,
        "complete": not reasons,
        "reason": "; ".join(reasons) if reasons else None,
    }


def _deepest_stack(functions: dict[str, FunctionInfo], root: str) -> tuple[bool, int]:
    """(a cycle is reachable, the largest sum of private segment sizes along a call chain from
    ``root``, each function counted once per chain). Iterative depth-first search."""
    best: dict[str, int] = {}
    on_path: set[str] = set()
    cycle = False
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        name, index = stack.pop()
        fn = functions[name]
        callees = [c for c in fn.calls if c in functions]
        if index == 0:
            on_path.add(name)
        if index < len(callees):
            stack.append((name, index + 1))
            callee = callees[index]
            if callee in on_path:
                cycle = True
            elif callee not in best:
                stack.append((callee, 0))
            continue
        deepest = max((best.get(c, 0) for c in callees if c not in on_path), default=0)
        best[name] = (fn.private_segment_size or 0) + deepest
        on_path.discard(name)
    return cycle, best.get(root, 0)
