"""LLVM's own AMDGPU disassembler, reached through LLVM-C (``llvm-c/Disassembler.h``) with ctypes.

No compiled extension: a libLLVM found at run time is loaded on first use and asked, one
instruction at a time, what ``llvm-objdump`` would print. Where the library comes from, in order:

1. ``AMDOCC_LIBLLVM`` (a file; when set, nothing else is tried);
2. the ROCm installation's own: ``$ROCM_PATH/lib/llvm/lib/libLLVM*.so*``, then ``/opt/rocm``'s;
3. Debian's ``libLLVM.so.22*`` (package libllvm22), then other installed libLLVMs, newest first,
   that export the AMDGPU disassembler;
4. ``rocm-bindings-compiler``'s bundled libLLVM, after the zlib/zstd forwarding shims it needs
   (tools/rocm_sysdeps/build.sh builds them; ``AMDOCC_ROCM_SYSDEPS`` names their folder).

Which library answered, and its ``LLVMGetVersion``, goes with every answer
(:attr:`Library.description`). None usable is :class:`LlvmUnavailable` (exit status 3).
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import env
from ..errors import AmdoccError, ExitCode

TRIPLE = b"amdgcn-amd-amdhsa"
INITIALIZERS = ("LLVMInitializeAMDGPUTargetInfo", "LLVMInitializeAMDGPUTargetMC", "LLVMInitializeAMDGPUDisassembler")
NEEDED = (*INITIALIZERS, "LLVMCreateDisasmCPUFeatures", "LLVMDisasmInstruction", "LLVMDisasmDispose")
HOW_TO_GET_ONE = "apt-get install libllvm22, or install ROCm (ROCM_PATH), or set AMDOCC_LIBLLVM to a libLLVM.so"
TEXT_BUFFER = 1024  # bytes LLVM may write one instruction's text into
# Bytes offered to LLVM for one instruction: more than the longest AMDGPU encoding (20 bytes, a
# gfx10+ NSA image instruction), so LLVM sees every byte it could read, and what it answers is a
# function of these bytes alone (decode.py caches it by them).
WINDOW = 32
SYSDEPS_SHIMS = ("librocm_sysdeps_z.so.1", "librocm_sysdeps_zstd.so.1")
_CHECKOUT = Path(__file__).resolve().parents[2]


class LlvmUnavailable(AmdoccError):
    """No libLLVM with the AMDGPU disassembler could be loaded."""

    exit_code = ExitCode.RUNTIME_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Candidate:
    """A library to try: its path, where the search found it, and shims to load first."""

    path: str
    source: str  # "AMDOCC_LIBLLVM", "ROCm", "system", "rocm-bindings-compiler"
    preload: tuple[str, ...] = ()


@dataclass(slots=True)
class Library:
    """A loaded libLLVM that can disassemble AMDGPU code."""

    path: str
    source: str
    version: str | None  # LLVMGetVersion, None for a library too old to say
    lib: ctypes.CDLL = field(repr=False)
    _contexts: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def description(self) -> dict[str, str | None]:
        """What every answer reports about the disassembler that produced it."""
        return {"library": self.path, "version": self.version, "source": self.source}

    def context(self, processor: str, features: str) -> int:
        """A disassembler for one processor and feature string (``+wavefrontsize64,+xnack``),
        created once and kept for the process."""
        key = (processor, features)
        with self._lock:
            handle = self._contexts.get(key)
            if handle is None:
                handle = self.lib.LLVMCreateDisasmCPUFeatures(
                    TRIPLE, processor.encode(), features.encode(), None, 0, None, None
                )
                if not handle:
                    raise LlvmUnavailable(
                        f"{self.path} (LLVM {self.version or '?'}) has no disassembler for {processor} "
                        f"(features {features or 'none'}); a newer libLLVM may know it: {HOW_TO_GET_ONE}"
                    )
                self._contexts[key] = handle
            return handle

    def window_decoder(self, processor: str, features: str) -> Callable[[bytes, int], tuple[int, str]]:
        """A function giving ``(size, text)`` of the one instruction at the start of a window
        (at most :data:`WINDOW` bytes, at a virtual address); size 0 where LLVM could not decode it."""
        # The arguments that never change are made ctypes values once: ctypes then passes them
        # as they are instead of converting a Python int on every call (most of a call's cost
        # outside LLVM).
        handle = ctypes.c_void_p(self.context(processor, features))
        window_size = ctypes.c_uint64(WINDOW)
        out = ctypes.create_string_buffer(TEXT_BUFFER)
        out_size = ctypes.c_size_t(TEXT_BUFFER)
        step = self.lib.LLVMDisasmInstruction
        lock = self._lock

        def decode(window: bytes, address: int) -> tuple[int, str]:
            # LLVM 22 crashes (a dangling Twine in its error path) on an instruction whose literal
            # runs past the bytes it is given: llvm-mc-22 --disassemble of "0xff 0x3e 0x0c 0x26"
            # (v_and_b32 with a literal, at the end of a cut-short kernel) dies the same way.
            # So LLVM always sees a whole window, zeros after the code; an instruction that
            # needs bytes beyond the code is undecodable there, as LLVM cannot be asked.
            padded = window if len(window) == WINDOW else window + bytes(WINDOW - len(window))
            with lock:
                size = step(handle, padded, window_size, address, out, out_size)
                if not size or size > len(window):
                    return 0, ""
                return size, out.value.decode("utf-8", "replace")

        return decode


def _load(candidate: Candidate) -> Library | str:
    """The library, or why it cannot be used."""
    mode = getattr(os, "RTLD_NOW", 0)
    try:
        for shim in candidate.preload:
            ctypes.CDLL(shim, mode=mode | getattr(os, "RTLD_GLOBAL", 0))
        lib = ctypes.CDLL(candidate.path, mode=mode | getattr(os, "RTLD_LOCAL", 0))
    except OSError as exc:
        return f"cannot be loaded ({exc})"
    missing = [name for name in NEEDED if not hasattr(lib, name)]
    if missing:
        return f"does not export {', '.join(missing)} (not a libLLVM with the AMDGPU disassembler)"
    vp, size_t = ctypes.c_void_p, ctypes.c_size_t
    lib.LLVMCreateDisasmCPUFeatures.argtypes = [ctypes.c_char_p] * 3 + [vp, ctypes.c_int, vp, vp]
    lib.LLVMCreateDisasmCPUFeatures.restype = vp
    lib.LLVMDisasmInstruction.argtypes = [vp, vp, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_char_p, size_t]
    lib.LLVMDisasmInstruction.restype = size_t
    lib.LLVMDisasmDispose.argtypes = [vp]
    lib.LLVMDisasmDispose.restype = None
    for name in INITIALIZERS:
        getattr(lib, name)()
    version = None
    if hasattr(lib, "LLVMGetVersion"):  # LLVM 16 and later
        parts = [ctypes.c_uint() for _ in range(3)]
        lib.LLVMGetVersion.argtypes = [ctypes.POINTER(ctypes.c_uint)] * 3
        lib.LLVMGetVersion.restype = None
        lib.LLVMGetVersion(*(ctypes.byref(p) for p in parts))
        version = ".".join(str(p.value) for p in parts)
    return Library(candidate.path, candidate.source, version, lib)


def _version_key(path: str) -> tuple[int, ...]:
    """Newest first: the version numbers in the file name, compared as numbers."""
    return tuple(int(n) for n in re.findall(r"\d+", os.path.basename(path)))


def _libraries_in(pattern: str) -> list[str]:
    """Real files matching ``pattern``, newest version first, one path per file."""
    seen: dict[str, str] = {}
    for path in sorted(glob.glob(pattern), key=_version_key, reverse=True):
        real = os.path.realpath(path)
        if os.path.isfile(real) and real not in seen:
            seen[real] = path
    return list(seen.values())


def _rocm_bindings(environ: dict[str, str]) -> Candidate | str | None:
    """rocm-bindings-compiler's libLLVM with its shims, why it cannot be used, or None."""
    try:
        spec = importlib.util.find_spec("rocm.bindings")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = next(
        (str(Path(base) / "llvm" / "libLLVM.so") for base in spec.submodule_search_locations
         if (Path(base) / "llvm" / "libLLVM.so").is_file()),
        None,
    )  # fmt: skip
    if path is None:
        return None
    named = env.read("AMDOCC_ROCM_SYSDEPS", environ)
    folder = Path(named) if isinstance(named, str) else _CHECKOUT / ".cache" / "rocm-sysdeps"
    shims = tuple(str(folder / name) for name in SYSDEPS_SHIMS)
    if not all(os.path.isfile(s) for s in shims):
        return f"{path}: needs {' and '.join(SYSDEPS_SHIMS)} in {folder} (tools/rocm_sysdeps/build.sh builds them)"
    return Candidate(path, "rocm-bindings-compiler", shims)


def candidates(environ: dict[str, str] | None = None) -> list[Candidate | str]:
    """Every library to try, in order; a string is one found but unusable before loading."""
    environ = dict(os.environ) if environ is None else environ
    given = env.read("AMDOCC_LIBLLVM", environ)
    if isinstance(given, str):
        return [Candidate(given, "AMDOCC_LIBLLVM")]
    found: list[Candidate | str] = []
    prefixes = [p for p in (environ.get("ROCM_PATH"), "/opt/rocm") if p]
    for prefix in dict.fromkeys(prefixes):
        found += [Candidate(p, "ROCm") for p in _libraries_in(f"{prefix}/lib/llvm/lib/libLLVM*.so*")]
    system = [
        *_libraries_in("/usr/lib/*-linux-gnu/libLLVM.so.22*"),
        *_libraries_in("/usr/lib/llvm-22/lib/libLLVM*.so*"),
    ]
    others = _libraries_in("/usr/lib/*-linux-gnu/libLLVM*.so*") + _libraries_in("/usr/lib/llvm-*/lib/libLLVM*.so*")
    for path in dict.fromkeys([*system, *sorted(others, key=_version_key, reverse=True)]):
        found.append(Candidate(path, "system"))
    bindings = _rocm_bindings(environ)
    if bindings is not None:
        found.append(bindings)
    return found


_loaded: Library | None = None
_load_lock = threading.Lock()


def library() -> Library:
    """The first usable libLLVM of :func:`candidates`, loaded once per process."""
    global _loaded
    with _load_lock:
        if _loaded is None:
            _loaded = find()
        return _loaded


def find(environ: dict[str, str] | None = None) -> Library:
    """Search and load afresh (no caching): :func:`library` without the memo."""
    refused: list[str] = []
    seen: set[str] = set()
    for candidate in candidates(environ):
        if isinstance(candidate, str):
            refused.append(candidate)
            continue
        real = os.path.realpath(candidate.path)
        if real in seen:
            continue
        seen.add(real)
        loaded = _load(candidate)
        if isinstance(loaded, Library):
            return loaded
        if candidate.source == "AMDOCC_LIBLLVM":
            raise LlvmUnavailable(f"AMDOCC_LIBLLVM={candidate.path}: {loaded}; {HOW_TO_GET_ONE}")
        refused.append(f"{candidate.path}: {loaded}")
    tried = f" (tried {'; '.join(refused)})" if refused else ""
    raise LlvmUnavailable(f"no libLLVM with the AMDGPU disassembler was found{tried}; {HOW_TO_GET_ONE}")


def forget() -> None:
    """Drop the loaded library so the next :func:`library` searches again (tests)."""
    global _loaded
    with _load_lock:
        _loaded = None
