"""The code generators a sweep drives. These run in the child process (:mod:`.worker`): a code
generator that crashes or hangs there costs one point, not the run.

Two of them:

- Triton's own AMD code generator (``triton.backends.amd.compiler.compile_amdgpu`` over
  ``libtriton_amd_codegen.so``), called as Triton's ``make_amdgcn`` calls it, then assembled
  and linked as ``make_hsaco`` does (``assemble_amdgcn``, then ``link_hsaco``);
- a libLLVM's target machine through LLVM-C (:mod:`amdocc.isa.targetmachine`), linked with
  ``ld.lld`` into a shared object as ``clang``'s AMDGPU toolchain does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

from ..caches import cached
from ..errors import UsageError


def triton_codegen() -> Any:
    """Triton's AMD compiler module (imported here only)."""
    try:
        import triton
        from triton.backends.amd import compiler
    except ImportError as exc:
        raise UsageError(f"tune-regs on a Triton cache needs triton with its AMD backend: {exc}") from None
    missing = [n for n in ("compile_amdgpu", "assemble_amdgcn", "get_llvm_flags") if not hasattr(compiler, n)]
    if missing:  # Triton before 3.9 compiled through its own LLVM, with other entry points
        raise UsageError(f"Triton {triton.__version__}'s AMD backend has no {', '.join(missing)}: "
                         "tune-regs drives the standalone AMD code generator of Triton 3.9 and later")  # fmt: skip
    return compiler


def triton_describe() -> dict[str, str]:
    """Which Triton and AMD code generator answer: its version and codegen revision."""
    import triton

    compiler = triton_codegen()
    return {"triton_version": triton.__version__, "codegen_revision": compiler.get_amd_codegen_revision()}


def triton_compile(llir: str, arch: str, enable_fp_fusion: bool) -> str:
    """The assembly Triton's ``make_amdgcn`` writes for ``llir`` (default knobs: no disabled
    passes, optimisation on)."""
    c = triton_codegen()
    return str(
        c.compile_amdgpu(
            llir,
            c.get_amd_codegen_target_triple(arch),
            arch,
            "",
            flags=c.get_llvm_flags(arch),
            enable_fp_fusion=enable_fp_fusion,
            disable_optimization=False,
            canonicalize_gep=False,
            disabled_passes="",
            dump_ir=False,
            enable_timing=False,
        )
    )


def triton_assemble(amdgcn: str, arch: str) -> bytes:
    """The relocatable object Triton's ``make_hsaco`` assembles from ``amdgcn`` (before linking)."""
    return bytes(triton_codegen().assemble_amdgcn(amdgcn, arch, ""))


def _link(relocatable: bytes, link: Callable[[str, str], None]) -> bytes:
    with tempfile.TemporaryDirectory(prefix="amdocc-tune-") as tmp:
        src, dst = os.path.join(tmp, "in.o"), os.path.join(tmp, "out.hsaco")
        with open(src, "wb") as f:
            f.write(relocatable)
        link(src, dst)
        with open(dst, "rb") as f:
            return f.read()


def triton_point(llir: str, arch: str, enable_fp_fusion: bool) -> tuple[bytes, bytes]:
    """Compile and assemble one point: (relocatable object, linked code object)."""
    c = triton_codegen()
    from triton._C.libtriton import amd

    relocatable = c.assemble_amdgcn(triton_compile(llir, arch, enable_fp_fusion), arch, "")
    return relocatable, _link(relocatable, lambda src, dst: amd.link_hsaco(src, dst))


@cached(maxsize=8)  # one libLLVM per child process; a few paths at most
def _library(path: str) -> Any:
    """The libLLVM at ``path``, loaded once per child process."""
    from ..isa.libllvm import Candidate, Library, LlvmUnavailable, _load

    loaded = _load(Candidate(path, "--compiler"))
    if not isinstance(loaded, Library):
        raise LlvmUnavailable(f"--compiler {path}: {loaded}")
    return loaded


def llvm_describe(library_path: str) -> dict[str, str | None]:
    return dict(_library(library_path).description)


def linker_for(library_path: str) -> str | None:
    """``ld.lld`` beside the libLLVM (``<prefix>/bin``), else ``ld.lld-<major>`` or ``ld.lld`` on PATH."""
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(library_path)))
    beside = os.path.join(prefix, "bin", "ld.lld")
    if os.access(beside, os.X_OK):
        return beside
    version = _library(library_path).version
    major = version.split(".")[0] if version else None
    for name in ([f"ld.lld-{major}"] if major else []) + ["ld.lld"]:
        found = shutil.which(name)
        if found:
            return found
    return None


def llvm_point(library_path: str, ir: bytes, processor: str, features: str) -> tuple[bytes, bytes]:
    """Compile one point with the libLLVM: (relocatable object, linked code object)."""
    from ..isa.targetmachine import emit_object

    relocatable = emit_object(_library(library_path), ir, processor, features)
    linker = linker_for(library_path)
    if linker is None:
        raise UsageError("no ld.lld to link the object with (install lld-22, or put ld.lld beside the libLLVM)")

    def link(src: str, dst: str) -> None:
        done = subprocess.run([linker, "-shared", src, "-o", dst], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise UsageError(f"{linker} failed: {done.stderr.strip()[:400]}")

    return relocatable, _link(relocatable, link)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "triton_describe": triton_describe,
    "triton_compile": triton_compile,
    "triton_point": triton_point,
    "triton_assemble": triton_assemble,
    "llvm_describe": llvm_describe,
    "llvm_point": llvm_point,
}
