"""Readable kernel names: Itanium C++ names demangled as ``llvm-cxxfilt`` prints them.

The demangler is pycxxfilt (LLVM's own demangling library, packaged by Christian Heimes). It
was chosen by measurement: on every kernel name of the amd-aiter corpus and of bitsandbytes'
ROCm libraries it prints exactly what llvm-cxxfilt-22 prints (tests/test_demangle.py keeps
checking that). It is imported on the first name asked for, never by ``import amdocc``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable


@functools.lru_cache(maxsize=1)
def _demangler() -> Callable[[str], str | None] | None:
    try:
        from pycxxfilt import demangle as engine
    except ImportError:  # Python 3.10 (pycxxfilt needs 3.11) or a trimmed install
        return None
    return engine


@functools.lru_cache(maxsize=1 << 16)
def demangle(name: str) -> str | None:
    """The demangled form of ``name``. A name that is not mangled (a C or asm kernel) or that
    does not demangle comes back unchanged, as llvm-cxxfilt prints it; None only when no
    demangler is installed."""
    engine = _demangler()
    if engine is None:
        return None
    try:
        out = engine(name)
    except ValueError:  # looks mangled but is not valid: llvm-cxxfilt keeps it as is
        return name
    return name if out is None else out


def display(name: str, mangled: bool = False) -> str:
    """The name to show a person: demangled unless ``mangled`` asks for the stored name."""
    return name if mangled else (demangle(name) or name)


def base_name(readable: str) -> str:
    """The bare function name of a demangled signature, for finding near names:
    ``void ns::gemm<float, 1>(float*)`` → ``gemm``."""
    head = readable.split("(", 1)[0].split("<", 1)[0].strip()
    return head.rsplit(" ", 1)[-1].rsplit("::", 1)[-1]
