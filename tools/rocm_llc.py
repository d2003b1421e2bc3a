#!/usr/bin/env python3
"""An ``llc``-shaped driver for ROCm 10.0's compiler backend, as PyPI's rocm-bindings-compiler ships it.

``rocm-bindings-compiler==10.0.0.0.1.2`` bundles ``rocm/bindings/llvm/libLLVM.so``: "LLVM version
23.0.0git", built from ROCm/llvm-project 8f497e0992fb (the amd-llvm commit TheRock's
``release/therock-10.0`` pins), with the AMDGPU target. This script reaches its code generator
through the LLVM-C API (llvm-c/Core.h, IRReader.h, TargetMachine.h) and wraps it in llc's command
line, so tools/kernelgen.py can use ROCm 10.0's compiler as a third oracle::

    rocm_llc.py -mtriple=amdgcn-amd-amdhsa -mcpu=gfx1310 -filetype=asm -o - - < kernel.ll
    rocm_llc.py -mtriple=... -mcpu=gfx942 -filetype=obj -o kernel.o - < kernel.ll
    rocm_llc.py ... -filetype=hsaco -o kernel.hsaco -     # the object linked by ld.lld-22 -shared
    rocm_llc.py ... -filetype=asm --hsaco-dir=DIR         # also DIR/<sha256 of the IR>.hsaco
    rocm_llc.py --version

Asm verbosity is on (``LLVMSetTargetMachineAsmVerbosity``), so the assembly carries the
``; Kernel info:`` comments with ``; Occupancy:``. Every module it compiles is stamped with ROCm
10.0's own producer line (``!llvm.ident``, which the asm printer writes to ``.comment`` as clang
does), copied exactly from a ROCm 10.0 code object: so a reader of the linked object sees the
compiler that built it, as it would in a ROCm 10.0 binary (tests/test_rocm10_compiler.py checks
the string against bitsandbytes 0.50.2's ROCm 10.0 library with llvm-readelf-22).

The library needs ``librocm_sysdeps_z.so.1`` and ``librocm_sysdeps_zstd.so.1`` (TheRock's renamed
zlib and zstd, symbol version AMDROCM_SYSDEPS_1.0), which no package ships:
tools/rocm_sysdeps/build.sh builds forwarding libraries over the system ones into
.cache/rocm-sysdeps (AMDOCC_ROCM_SYSDEPS overrides), and they are loaded first, so the dynamic
linker finds them by soname. AMDOCC_ROCM_LLVM names the libLLVM.so to use.

Like llc it exits 1 when LLVM reports an error, with the diagnostics on stderr (``error: ...
in function 'NAME'``), and keeps going past errors as llc does, so that every failing function is
named in one run. Options llc has and this driver does not use are accepted and ignored.
Standalone: it imports nothing from amdocc.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from llc_args import parse_llc_arguments, write_llc_output  # tools/ is on the path when these run

# The first string of ROCm 10.0's .comment that names the compiler, exactly as bitsandbytes
# 0.50.2's libbitsandbytes_rocm715.so (built by ROCm 10.0) carries it in every device code object.
PRODUCER = (
    "AMD clang version 23.0.0git (https://github.com/ROCm/llvm-project.git 8f497e0992fb7513f7f78a6f6b6f1056c375e961)"
)
COMMIT = "8f497e0992fb7513f7f78a6f6b6f1056c375e961"
LLD = os.environ.get("AMDOCC_LLD", "ld.lld-22")
ROOT = Path(__file__).resolve().parent.parent

_CODEGEN_LEVEL_DEFAULT, _RELOC_DEFAULT, _CODE_MODEL_DEFAULT = 2, 0, 0  # llvm-c/TargetMachine.h enums
_ASSEMBLY_FILE, _OBJECT_FILE = 0, 1  # LLVMCodeGenFileType
_DS_ERROR, _DS_WARNING = 0, 1  # LLVMDiagnosticSeverity: LLVMDSError, LLVMDSWarning


def library_path() -> Path | None:
    """The libLLVM.so of the installed rocm-bindings-compiler (AMDOCC_ROCM_LLVM overrides)."""
    given = os.environ.get("AMDOCC_ROCM_LLVM")
    if given:
        return Path(given)
    try:
        spec = importlib.util.find_spec("rocm.bindings")
    except ModuleNotFoundError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = Path(base) / "llvm" / "libLLVM.so"
        if path.exists():
            return path
    return None


def sysdeps_dir() -> Path:
    return Path(os.environ.get("AMDOCC_ROCM_SYSDEPS") or ROOT / ".cache" / "rocm-sysdeps")


_DIAG_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


class Backend:
    """ROCm 10.0's AMDGPU code generator, loaded once per process."""

    def __init__(self, path: Path) -> None:
        mode = getattr(os, "RTLD_GLOBAL", 0) | getattr(os, "RTLD_NOW", 0)
        for name in ("librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1"):
            shim = sysdeps_dir() / name
            if not shim.exists():
                raise FileNotFoundError(f"{shim} is missing: run tools/rocm_sysdeps/build.sh")
            ctypes.CDLL(str(shim), mode=mode)
        lib = self.lib = ctypes.CDLL(str(path), mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 0))
        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        sigs = {
            "LLVMContextCreate": ([], vp),
            "LLVMContextDispose": ([vp], None),
            "LLVMContextSetDiagnosticHandler": ([vp, _DIAG_HANDLER, vp], None),
            "LLVMGetDiagInfoDescription": ([vp], vp),
            "LLVMGetDiagInfoSeverity": ([vp], ctypes.c_int),
            "LLVMCreateMemoryBufferWithMemoryRangeCopy": ([cp, ctypes.c_size_t, cp], vp),
            "LLVMParseIRInContext": ([vp, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)], ctypes.c_int),
            "LLVMGetTargetFromTriple": ([cp, ctypes.POINTER(vp), ctypes.POINTER(vp)], ctypes.c_int),
            "LLVMCreateTargetMachine": ([vp, cp, cp, cp, ctypes.c_int, ctypes.c_int, ctypes.c_int], vp),
            "LLVMSetTargetMachineAsmVerbosity": ([vp, ctypes.c_int], None),
            "LLVMCreateTargetDataLayout": ([vp], vp),
            "LLVMSetModuleDataLayout": ([vp, vp], None),
            "LLVMSetTarget": ([vp, cp], None),
            "LLVMTargetMachineEmitToMemoryBuffer": (
                [vp, vp, ctypes.c_int, ctypes.POINTER(vp), ctypes.POINTER(vp)],
                ctypes.c_int,
            ),
            "LLVMGetBufferStart": ([vp], vp),
            "LLVMGetBufferSize": ([vp], ctypes.c_size_t),
            "LLVMDisposeMemoryBuffer": ([vp], None),
            "LLVMDisposeMessage": ([vp], None),
            "LLVMDisposeModule": ([vp], None),
            "LLVMDisposeTargetMachine": ([vp], None),
            "LLVMDisposeTargetData": ([vp], None),
        }
        for name, (args, res) in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, res
        for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser"):
            getattr(lib, f"LLVMInitializeAMDGPU{part}")()
        self.diagnostics: list[str] = []
        self._handler = _DIAG_HANDLER(self._diagnose)  # kept alive as long as the backend

    def _message(self, pointer: int | None) -> str:
        if not pointer:
            return ""
        try:
            return ctypes.string_at(pointer).decode(errors="replace")
        finally:
            self.lib.LLVMDisposeMessage(pointer)

    def _diagnose(self, info: int, _context: int) -> None:
        severity = self.lib.LLVMGetDiagInfoSeverity(info)
        text = self._message(self.lib.LLVMGetDiagInfoDescription(info))
        if severity in (_DS_ERROR, _DS_WARNING):  # remarks and notes are llc's -pass-remarks output
            self.diagnostics.append(f"{'error' if severity == _DS_ERROR else 'warning'}: {text}")

    def emit(self, ir: bytes, triple: str, cpu: str, features: str, object_file: bool) -> bytes:
        """Assembly (verbose) or a relocatable object of the IR module ``ir``; RuntimeError on an
        error (the diagnostics are in ``self.diagnostics``)."""
        lib, vp = self.lib, ctypes.c_void_p
        ctx = lib.LLVMContextCreate()
        lib.LLVMContextSetDiagnosticHandler(ctx, self._handler, None)
        try:
            buf = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, len(ir), b"kernel.ll")
            module, err = vp(), vp()
            if lib.LLVMParseIRInContext(ctx, buf, ctypes.byref(module), ctypes.byref(err)):
                raise RuntimeError(self._message(err.value) or "the IR does not parse")
            target = vp()
            if lib.LLVMGetTargetFromTriple(triple.encode(), ctypes.byref(target), ctypes.byref(err)):
                raise RuntimeError(self._message(err.value))
            tm = lib.LLVMCreateTargetMachine(
                target,
                triple.encode(),
                cpu.encode(),
                features.encode(),
                _CODEGEN_LEVEL_DEFAULT,
                _RELOC_DEFAULT,
                _CODE_MODEL_DEFAULT,
            )
            lib.LLVMSetTargetMachineAsmVerbosity(tm, 1)
            layout = lib.LLVMCreateTargetDataLayout(tm)
            lib.LLVMSetModuleDataLayout(module, layout)
            lib.LLVMSetTarget(module, triple.encode())
            out = vp()
            kind = _OBJECT_FILE if object_file else _ASSEMBLY_FILE
            failed = lib.LLVMTargetMachineEmitToMemoryBuffer(tm, module, kind, ctypes.byref(err), ctypes.byref(out))
            lib.LLVMDisposeTargetData(layout)
            lib.LLVMDisposeModule(module)
            lib.LLVMDisposeTargetMachine(tm)
            if failed:
                raise RuntimeError(self._message(err.value) or "code generation failed")
            try:
                return ctypes.string_at(lib.LLVMGetBufferStart(out), lib.LLVMGetBufferSize(out))
            finally:
                lib.LLVMDisposeMemoryBuffer(out)
        finally:
            lib.LLVMContextDispose(ctx)


def stamp(ir: bytes) -> bytes:
    """The module with ROCm 10.0's producer line as its ``!llvm.ident`` (what clang adds)."""
    if b"!llvm.ident" in ir:
        raise ValueError("the module already names its producer (!llvm.ident)")
    return ir + b'\n!llvm.ident = !{!9000}\n!9000 = !{!"' + PRODUCER.encode() + b'"}\n'


def link(obj: bytes) -> bytes:
    with tempfile.TemporaryDirectory(prefix="rocm-llc-") as tmp:
        Path(tmp, "k.o").write_bytes(obj)
        p = subprocess.run(
            [LLD, "-shared", str(Path(tmp, "k.o")), "-o", str(Path(tmp, "k.hsaco"))],
            capture_output=True,
            text=True,
            check=False,
        )
        if p.returncode:
            raise RuntimeError(f"{LLD} failed: {p.stderr.strip()}")
        return Path(tmp, "k.hsaco").read_bytes()


def _checked(action):
    """Run ``action`` with file descriptor 2 captured: LLVM prints "'X' is not a recognized processor
    for this target (ignoring processor)" there itself, and goes on for a generic processor; here
    that is an error, as it would be for a compiler asked for a processor it does not have."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            result = action()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        printed = capture.read().decode(errors="replace")
    sys.stderr.write(printed)
    if "is not a recognized processor" in printed:
        raise RuntimeError(printed.strip().splitlines()[0])
    return result


def main(argv: list[str]) -> int:
    path = library_path()
    if path is None:
        print("rocm_llc: rocm-bindings-compiler (rocm/bindings/llvm/libLLVM.so) is not installed", file=sys.stderr)
        return 2
    try:
        backend = Backend(path)
    except (OSError, AttributeError) as exc:
        print(f"rocm_llc: cannot load {path}: {exc}", file=sys.stderr)
        return 2
    if argv == ["--version"]:
        print(f"LLVM version 23.0.0git-{COMMIT[:12]} (ROCm 10.0, rocm-bindings-compiler {path})")
        return 0
    opts = {"-mtriple": "amdgcn-amd-amdhsa", "-mcpu": "", "-filetype": "asm", "-mattr": "", "-o": "-"}
    opts["--hsaco-dir"] = ""
    source = parse_llc_arguments(argv, opts)
    ir = stamp(sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes())
    triple, cpu, features = opts["-mtriple"], opts["-mcpu"], opts["-mattr"]
    try:
        result = _checked(lambda: backend.emit(ir, triple, cpu, features, object_file=opts["-filetype"] != "asm"))
        failed = any(d.startswith("error:") for d in backend.diagnostics)
        if not failed and opts["-filetype"] == "hsaco":
            result = link(result)
        elif not failed and opts["--hsaco-dir"] and opts["-filetype"] == "asm":
            # The linked object of the same IR, so a caller that wants both starts one process.
            obj = backend.emit(ir, triple, cpu, features, object_file=True)
            name = hashlib.sha256(ir[: -len(stamp(b""))]).hexdigest() + ".hsaco"
            Path(opts["--hsaco-dir"], name).write_bytes(link(obj))
    except RuntimeError as exc:
        sys.stderr.write("".join(d + "\n" for d in backend.diagnostics))
        sys.stderr.write(f"error: {exc}\n")
        return 1
    sys.stderr.write("".join(d + "\n" for d in backend.diagnostics))
    if any(d.startswith("error:") for d in backend.diagnostics):
        return 1
    write_llc_output(opts["-o"], result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
