"""Test amdocc against HIP: synthesized code objects, Hypothesis strategies, HIP oracles, and the
comparison that CI runs on the emulated device and users run on a real GPU.

- :func:`synthesize` / :func:`synthesize_many`, :class:`SynthSpec`: code objects whose metadata
  says exactly what is chosen, assembled and linked by LLVM's own tools (no Hypothesis needed).
- :mod:`amdocc.testing.strategies`: Hypothesis strategies for kernels and queries, edges included.
- :mod:`amdocc.testing.oracles`: :class:`~amdocc.testing.oracles.LiveHip` (the installed runtime)
  and :class:`~amdocc.testing.oracles.EmulatedHip` (a runtime on the emulated HSA device).
- :mod:`amdocc.testing.compare`: :func:`check_code_object` compares every answer, counted in a
  :class:`Tally`; :func:`run_properties` is the whole property test.

One command on a machine with a ROCm GPU (docs/hip-property-tests.md):

    python3 -m amdocc.testing --examples 200

The strategies and the property runner need Hypothesis (``pip install 'amdocc[test]'``); they
are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from .synth import SynthSpec, find_llvm_tool, synthesize, synthesize_many

__all__ = [
    "Disagreement",
    "EmulatedHip",
    "LiveHip",
    "SynthSpec",
    "Tally",
    "check_code_object",
    "find_llvm_tool",
    "run_properties",
    "synthesize",
    "synthesize_many",
]

_LAZY = {
    "Disagreement": "compare",
    "Tally": "compare",
    "check_code_object": "compare",
    "EmulatedHip": "oracles",
    "LiveHip": "oracles",
    "run_properties": "properties",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'amdocc.testing' has no attribute {name!r}")
