"""The operations a user runs, callable from Python: options in, plain records out.

Each operation returns what the command of the same name prints with ``--json`` (as plain
dicts and lists), so a script gets the CLI's answers without going through argv:

- :func:`inspect` — code objects, kernels, resources and findings;
- :func:`occupancy` — workgroups per CU for each kernel of some files, explained;
- :func:`sweep` — one kernel over a grid of block sizes × dynamic LDS;
- :func:`check` — the CI gate: rules and budgets per kernel, against a baseline;
- :func:`census` and :func:`census_compare` — a whole tree or wheel, and two releases;
- :func:`diff` — two builds kernel by kernel, with the regressions;
- :func:`verify` — the hip model against the live HIP runtime;
- :func:`split` and :func:`split_by_cost` — AITER's KV split count;
- :func:`gate` — FlashInfer's asm-prefill route;
- :func:`best_block` — HIP's potential block size beside the block to launch;
- :func:`isa` and :func:`isa_kernel` — each kernel's machine code decoded by LLVM, with control
  flow, loops, spills and instruction mix;
- :func:`tune_regs` — a register budget's cost: the waves-per-EU sweep and its frontier, compiled
  by the kernel's own compiler.

``amdocc.cli`` parses arguments, calls these (or their per-file workers) and renders what they
return; the scheduler (:mod:`amdocc.app.parallel`) and the kernel selection
(:mod:`amdocc.app.selection`) live beside them, one module per operation (``*_op``). This
package imports the models, policy, codeobject and containers layers, never the CLI, and
``import amdocc`` does not import it: ``amdocc.app`` and each operation load on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "best_block",
    "census",
    "census_compare",
    "check",
    "diff",
    "gate",
    "inspect",
    "isa",
    "isa_kernel",
    "occupancy",
    "split",
    "split_by_cost",
    "sweep",
    "tune_regs",
    "verify",
]

# operation -> the module that holds it (imported on first use)
_OPERATIONS = {
    "best_block": "best_block_op",
    "census": "census_op",
    "census_compare": "census_op",
    "check": "check_op",
    "diff": "diff_op",
    "gate": "gate_op",
    "inspect": "inspect_op",
    "isa": "isa_op",
    "isa_kernel": "isa_op",
    "occupancy": "occupancy_op",
    "split": "split_op",
    "split_by_cost": "split_op",
    "sweep": "sweep_op",
    "tune_regs": "tune_regs_op",
    "verify": "verify_op",
}


def __getattr__(name: str) -> Any:
    if name in _OPERATIONS:
        import importlib

        value = getattr(importlib.import_module(f".{_OPERATIONS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'amdocc.app' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_OPERATIONS))
