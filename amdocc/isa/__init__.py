"""One kernel's machine code, read with LLVM's own disassembler: instructions, control flow,
loops, liveness, spills, instruction mix and source lines.

Sits between the code object and the models (containers → codeobject → isa → models → app →
cli). Loaded only when asked: ``import amdocc`` does not import it, and it loads libLLVM only
when an instruction is first decoded.

Entry points (stable; other rooms build on them):

- ``disassemble(kernel_or_code, *, processor=None, features="", address=0, origin=None)``
  → ``tuple[Instruction, ...]``: a :class:`~amdocc.codeobject.Kernel` (extent, processor,
  xnack/sramecc and wave size from its code object) or raw bytes (``processor=`` required);
  undecodable words are ``Instruction(decoded=False)``, shown as ``.long 0x…``.
- ``control_flow(instructions)`` → :class:`ControlFlow`: blocks (instruction index ranges,
  successors, reachability, loop depth), natural loops, immediate dominators, and ``unknown``
  (the reason) when an indirect jump, a call or a reachable undecodable word hides edges.
- ``kernel_code(kernel, origin=None, processor=None)`` → :class:`KernelCode`: the extent and the
  decoding settings (how a size-0 symbol's extent was inferred, overlaps).
- ``library()`` → the loaded libLLVM (``.description``: path, ``LLVMGetVersion``, where it was
  found); :class:`LlvmUnavailable` (exit status 3) when there is none.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "Block",
    "ControlFlow",
    "Instruction",
    "KernelCode",
    "LlvmUnavailable",
    "Loop",
    "control_flow",
    "disassemble",
    "kernel_code",
    "library",
]

# name -> submodule holding it; loaded on first use so that importing amdocc.isa stays cheap.
_NAMES = {
    "Block": "model",
    "ControlFlow": "model",
    "Instruction": "model",
    "Loop": "model",
    "KernelCode": "extent",
    "kernel_code": "extent",
    "LlvmUnavailable": "libllvm",
    "library": "libllvm",
    "control_flow": "flow",
    "disassemble": "decode",
}


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        import importlib

        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'amdocc.isa' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_NAMES))
