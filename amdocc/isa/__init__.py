"""One kernel's machine code, read with LLVM's own disassembler: instructions, control flow,
loops, liveness, spills, instruction mix and source lines.

Sits between the code object and the models (containers → codeobject → isa → models → app →
cli). Loaded only when asked: ``import amdocc`` does not import it, and it loads libLLVM only
when an instruction is first decoded.
"""
