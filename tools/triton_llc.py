#!/usr/bin/env python3
"""An ``llc``-shaped driver for the AMDGPU code generator bundled with Triton (3.9+).

Triton 3.9 ships its AMD code generation as a separate library,
``triton/backends/amd/lib/libtriton_amd_codegen.so``, built from an independently pinned LLVM
(``triton_amdgpu_revision()``; Triton 3.9.0 pins LLVM 24.0.0git 6bc4aaf6641c). Its two entry
points take LLVM IR and give AMDGPU assembly (the same asm printer as llc, with the
``; Kernel info:`` comments), and take assembly and give a relocatable object. This script wraps
them in llc's command line so tools/kernelgen.py can use that LLVM as a second oracle::

    triton_llc.py -mtriple=amdgpu9.42-amd-amdhsa -mcpu=gfx942 -filetype=asm -o - - < kernel.ll
    triton_llc.py -mtriple=... -mcpu=gfx942 -filetype=hsaco -o kernel.hsaco - < kernel.ll
    triton_llc.py ... -filetype=asm --hsaco-dir=DIR    # also DIR/<sha256 of the IR>.hsaco, on success
    triton_llc.py --revision
    triton_llc.py --link kernel.o -o kernel.hsaco     # Triton's own link step (amd.link_hsaco)

Like llc it exits 1 when LLVM reports an error, with the diagnostics on stderr (the library
prints a diagnostic and carries on, so the exit status is decided from what it printed).
Options llc has and this library does not (``-pass-remarks=...``, ``-O3``) are accepted and
ignored. Standalone: it imports neither amdocc nor, except to link, triton (only its library is
loaded).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

from llc_args import parse_llc_arguments, write_llc_output  # tools/ is on the path when these run

ABI_VERSION = 1  # the version of the options struct the library checks (amdgpu_codegen.cc)


class _Options(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_uint32),
        ("triple", ctypes.c_char_p),
        ("processor", ctypes.c_char_p),
        ("features", ctypes.c_char_p),
        ("abi", ctypes.c_char_p),
        ("flags", ctypes.c_char_p),
        ("disabled_passes", ctypes.c_char_p),
        ("enable_fp_fusion", ctypes.c_uint8),
        ("disable_optimization", ctypes.c_uint8),
        ("canonicalize_gep", ctypes.c_uint8),
        ("dump_ir", ctypes.c_uint8),
        ("enable_timing", ctypes.c_uint8),
    ]


def library_path() -> Path | None:
    """Where the installed Triton keeps its AMD code generator (AMDOCC_TRITON_CODEGEN overrides)."""
    given = os.environ.get("AMDOCC_TRITON_CODEGEN")
    if given:
        return Path(given)
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "backends" / "amd" / "lib" / "libtriton_amd_codegen.so"
    return path if path.exists() else None


def _load(path: Path):
    lib = ctypes.CDLL(str(path), mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 0))
    out = ctypes.POINTER(ctypes.c_void_p)
    lib.triton_amdgpu_compile.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.POINTER(_Options),
        out,
        ctypes.POINTER(ctypes.c_size_t),
        out,
    ]
    lib.triton_amdgpu_compile.restype = ctypes.c_int
    lib.triton_amdgpu_assemble.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        out,
        ctypes.POINTER(ctypes.c_size_t),
        out,
    ]
    lib.triton_amdgpu_assemble.restype = ctypes.c_int
    lib.triton_amdgpu_free.argtypes = [ctypes.c_void_p]
    lib.triton_amdgpu_revision.restype = ctypes.c_char_p
    return lib


def _take(lib, pointer, size=None) -> bytes:
    try:
        return ctypes.string_at(pointer, size) if size is not None else ctypes.string_at(pointer)
    finally:
        lib.triton_amdgpu_free(pointer)


def compile_ir(lib, ir: bytes, triple: str, cpu: str, features: str, flags: str = "") -> bytes:
    """IR to assembly. ``flags``: LLVM command-line options for the library, named without their
    leading dash (measured: "amdgpu-enable-object-linking" turns on object linking; "-amdgpu-..."
    is silently ignored)."""
    opts = _Options(
        ABI_VERSION, triple.encode(), cpu.encode(), features.encode(), b"", flags.encode(), b"", 0, 0, 0, 0, 0
    )
    text, size, error = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
    if lib.triton_amdgpu_compile(
        ir, len(ir), ctypes.byref(opts), ctypes.byref(text), ctypes.byref(size), ctypes.byref(error)
    ):
        raise RuntimeError(_take(lib, error).decode(errors="replace") if error.value else "compile failed")
    return _take(lib, text, size.value)


def assemble(lib, asm: bytes, triple: str, cpu: str, features: str) -> bytes:
    obj, size, error = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
    if lib.triton_amdgpu_assemble(
        asm,
        len(asm),
        triple.encode(),
        cpu.encode(),
        features.encode(),
        ctypes.byref(obj),
        ctypes.byref(size),
        ctypes.byref(error),
    ):
        raise RuntimeError(_take(lib, error).decode(errors="replace") if error.value else "assembly failed")
    return _take(lib, obj, size.value)


def _captured_stderr(action):
    """Run ``action`` with file descriptor 2 sent to a file (LLVM prints diagnostics there
    directly); return (result or exception, the text printed)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            result = action()
        except RuntimeError as exc:
            result = exc
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        return result, capture.read().decode(errors="replace")


def link(argv: list[str]) -> int:
    """``--link OBJ -o HSACO``: link as Triton does, with the LLD in Triton's core library (its
    .comment then names that LLVM, as a Triton-built code object's does)."""
    if len(argv) != 3 or argv[1] != "-o":
        print("usage: triton_llc.py --link OBJ -o HSACO", file=sys.stderr)
        return 2
    link_file(argv[0], argv[2])
    return 0


def link_file(obj: str, hsaco: str) -> None:
    from triton._C.libtriton import amd  # imported only here: it loads all of Triton's core

    amd.link_hsaco(obj, hsaco)


def link_bytes(obj: bytes) -> bytes:
    with tempfile.TemporaryDirectory(prefix="triton-llc-") as tmp:
        Path(tmp, "k.o").write_bytes(obj)
        link_file(str(Path(tmp, "k.o")), str(Path(tmp, "k.hsaco")))
        return Path(tmp, "k.hsaco").read_bytes()


def main(argv: list[str]) -> int:
    path = library_path()
    if path is None:
        print("triton_llc: Triton's AMD code generator (libtriton_amd_codegen.so) is not installed", file=sys.stderr)
        return 2
    lib = _load(path)
    if argv == ["--revision"]:
        print(lib.triton_amdgpu_revision().decode())
        return 0
    if argv[:1] == ["--link"]:
        return link(argv[1:])
    opts = {"-mtriple": "", "-mcpu": "", "-filetype": "asm", "-mattr": "", "-o": "-", "--hsaco-dir": ""}
    source = parse_llc_arguments(argv, opts)
    ir = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    triple, cpu, features = opts["-mtriple"], opts["-mcpu"], opts["-mattr"]

    def build():
        asm = compile_ir(lib, ir, triple, cpu, features)
        if opts["-filetype"] == "asm":
            return asm
        obj = assemble(lib, asm, triple, cpu, features)
        return obj if opts["-filetype"] == "obj" else link_bytes(obj)  # "hsaco": linked as Triton links

    result, printed = _captured_stderr(build)
    sys.stderr.write(printed)
    if isinstance(result, RuntimeError):
        sys.stderr.write(f"error: {result}\n")
        return 1
    if "error:" in printed:
        return 1
    if opts["--hsaco-dir"] and opts["-filetype"] == "asm":
        # The linked object of the same IR, so a caller that wants both starts one process, not two.
        obj = assemble(lib, result, triple, cpu, features)
        Path(opts["--hsaco-dir"], hashlib.sha256(ir).hexdigest() + ".hsaco").write_bytes(link_bytes(obj))
    write_llc_output(opts["-o"], result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
