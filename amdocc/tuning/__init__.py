"""What a register budget would cost: recompiling a kernel's own LLVM IR with another
``amdgpu-waves-per-eu`` (or ``amdgpu-agpr-alloc``) and reading what comes out.

Sits between the models and the application (containers → codeobject → isa → models → tuning →
app → cli): it reads Triton cache entries and LLVM IR, drives a code generator (Triton's own AMD
code generator, or a libLLVM's target machine through LLVM-C) in a child process, and turns each
compiled object into a plain point record with amdocc's own reader, ISA analysis and models.
Triton and libLLVM are imported only in the child process (:mod:`.worker`), never by
``import amdocc``.

- :mod:`.ir_attributes` — a kernel's function attributes in LLVM IR text, read and rewritten;
- :mod:`.triton_entry` — one Triton cache entry: its files and the options it was built with;
- :mod:`.codegen` — the code generators (run in the child process);
- :mod:`.worker` — the child process, with a timeout, a crash reported for one point;
- :mod:`.points` — a compiled object read into a point, and the frontier.
"""
