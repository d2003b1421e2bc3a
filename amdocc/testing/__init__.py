"""Helpers for testing amdocc against HIP: synthesized code objects with chosen resources."""

from .synth import SynthSpec, find_llvm_tool, synthesize

__all__ = ["SynthSpec", "find_llvm_tool", "synthesize"]
