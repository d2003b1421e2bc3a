"""LLVM IR compiled to an AMDGPU object through LLVM-C's target machine, with the same libLLVM
binding the disassembler uses (:mod:`.libllvm`).

``LLVMParseIRInContext`` reads the IR (text or bitcode), ``LLVMCreateTargetMachine`` makes a
machine for the processor at ``-O3`` (``LLVMCodeGenLevelAggressive``, the default relocation
and code models, as ``llc -O3`` does), and ``LLVMTargetMachineEmitToMemoryBuffer`` writes the
relocatable object. Each call makes and disposes its own context, module and machine.
"""

from __future__ import annotations

import ctypes
import weakref

from ..errors import UsageError
from .libllvm import Library

TARGET_INITIALIZERS = ("LLVMInitializeAMDGPUTarget", "LLVMInitializeAMDGPUAsmPrinter")
CODEGEN_AGGRESSIVE, RELOC_DEFAULT, CODE_MODEL_DEFAULT, OBJECT_FILE = 3, 0, 0, 1
_NEEDED = (
    *TARGET_INITIALIZERS,
    "LLVMContextCreate",
    "LLVMContextDispose",
    "LLVMCreateMemoryBufferWithMemoryRangeCopy",
    "LLVMParseIRInContext",
    "LLVMGetTargetFromTriple",
    "LLVMCreateTargetMachine",
    "LLVMTargetMachineEmitToMemoryBuffer",
    "LLVMGetBufferStart",
    "LLVMGetBufferSize",
    "LLVMDisposeMemoryBuffer",
    "LLVMDisposeModule",
    "LLVMDisposeTargetMachine",
    "LLVMDisposeMessage",
    "LLVMGetTarget",
)


# Library handles whose functions have their signatures set and targets initialised (each CDLL
# object keeps its own function signatures, so it is the object that counts, not the path).
_BOUND: weakref.WeakSet[ctypes.CDLL] = weakref.WeakSet()


class CompileError(UsageError):
    """The IR could not be parsed or compiled (LLVM's message)."""


def _bind(lib: ctypes.CDLL) -> None:
    if lib in _BOUND:
        return
    missing = [n for n in _NEEDED if not hasattr(lib, n)]
    if missing:
        raise UsageError(f"this libLLVM cannot compile for AMDGPU: it does not export {', '.join(missing)}")
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    out = ctypes.POINTER(vp)
    sigs: dict[str, tuple[list[object], object]] = {
        "LLVMContextCreate": ([], vp),
        "LLVMContextDispose": ([vp], None),
        "LLVMCreateMemoryBufferWithMemoryRangeCopy": ([cp, sz, cp], vp),
        "LLVMParseIRInContext": ([vp, vp, out, out], ctypes.c_int),
        "LLVMGetTargetFromTriple": ([cp, out, out], ctypes.c_int),
        "LLVMCreateTargetMachine": ([vp, cp, cp, cp, ctypes.c_int, ctypes.c_int, ctypes.c_int], vp),
        "LLVMTargetMachineEmitToMemoryBuffer": ([vp, vp, ctypes.c_int, out, out], ctypes.c_int),
        "LLVMGetBufferStart": ([vp], vp),
        "LLVMGetBufferSize": ([vp], sz),
        "LLVMDisposeMemoryBuffer": ([vp], None),
        "LLVMDisposeModule": ([vp], None),
        "LLVMDisposeTargetMachine": ([vp], None),
        "LLVMDisposeMessage": ([vp], None),
        "LLVMGetTarget": ([vp], cp),
    }
    for name, (args, result) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = result
    for name in TARGET_INITIALIZERS:
        getattr(lib, name)()
    _BOUND.add(lib)


def _message(lib: ctypes.CDLL, handle: ctypes.c_void_p) -> str:
    if not handle.value:
        return "no message"
    text = ctypes.string_at(handle.value).decode("utf-8", "replace").strip()
    lib.LLVMDisposeMessage(handle)
    return text


def emit_object(library: Library, ir: bytes, processor: str, features: str = "", triple: str | None = None) -> bytes:
    """The relocatable object ``llc -O3 -mcpu=<processor> -filetype=obj`` would write for ``ir``.

    ``triple`` defaults to the module's own, then ``amdgcn-amd-amdhsa``."""
    lib = library.lib
    _bind(lib)
    context = lib.LLVMContextCreate()
    module = ctypes.c_void_p()
    machine = None
    try:
        buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, len(ir), b"<ir>")
        error = ctypes.c_void_p()
        if lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(error)):  # owns the buffer
            raise CompileError(f"the IR does not parse: {_message(lib, error)}")
        own = (lib.LLVMGetTarget(module) or b"").decode()
        chosen = (triple or own or "amdgcn-amd-amdhsa").encode()
        target = ctypes.c_void_p()
        if lib.LLVMGetTargetFromTriple(chosen, ctypes.byref(target), ctypes.byref(error)):
            raise CompileError(f"no target for {chosen.decode()}: {_message(lib, error)}")
        machine = lib.LLVMCreateTargetMachine(
            target, chosen, processor.encode(), features.encode(), CODEGEN_AGGRESSIVE, RELOC_DEFAULT, CODE_MODEL_DEFAULT
        )
        if not machine:
            raise CompileError(f"LLVM made no target machine for {chosen.decode()} {processor}")
        out = ctypes.c_void_p()
        if lib.LLVMTargetMachineEmitToMemoryBuffer(
            machine, module, OBJECT_FILE, ctypes.byref(error), ctypes.byref(out)
        ):
            raise CompileError(f"code generation failed: {_message(lib, error)}")
        try:
            return ctypes.string_at(lib.LLVMGetBufferStart(out), lib.LLVMGetBufferSize(out))
        finally:
            lib.LLVMDisposeMemoryBuffer(out)
    finally:
        if machine:
            lib.LLVMDisposeTargetMachine(machine)
        if module.value:
            lib.LLVMDisposeModule(module)
        lib.LLVMContextDispose(context)
