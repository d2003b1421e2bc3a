"""Readable kernel names: Itanium C++ names demangled as ``llvm-cxxfilt`` prints them.

The demangler is pycxxfilt (LLVM's own demangling library, packaged by Christian Heimes). It
was chosen by measurement: on every kernel name of the amd-aiter corpus and of bitsandbytes'
ROCm libraries it prints exactly what llvm-cxxfilt-22 prints (tests/test_demangle.py keeps
checking that). It is imported on the first name asked for, never by ``import amdocc``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .caches import cached


@cached(maxsize=1)
def _demangler() -> Callable[[str], str | None] | None:
    try:
        from pycxxfilt import demangle as engine
    except ImportError:  # Python 3.10 (pycxxfilt needs 3.11) or a trimmed install
        return None
    return engine


@cached(maxsize=1 << 16)
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


def _depth_steps(text: str) -> Iterator[tuple[str, int]]:
    """Each character of ``text`` with the bracket depth (<>, (), {}, []) it sits at."""
    depth = 0
    for ch in text:
        if ch in ">)}]":
            depth = max(depth - 1, 0)
        yield ch, depth
        if ch in "<({[":
            depth += 1


def qualified_name(readable: str) -> str:
    """The qualified name of a demangled signature, without its return type and parameters:
    ``void (anonymous namespace)::gemm<float, 1>(float*)`` → ``(anonymous namespace)::gemm<float, 1>``.

    The parameters are the last parenthesised group (a name's own parentheses, as in
    "(anonymous namespace)", come before it); the return type ends at the last space outside
    any brackets (template arguments such as "<float, 1>" hold spaces of their own)."""
    head = readable
    if head.endswith(")"):
        depth = 0
        for at in range(len(head) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(head[at], 0)
            if depth == 0:
                head = head[:at].rstrip()
                break
    spaces = [at for at, (ch, depth) in enumerate(_depth_steps(head)) if ch == " " and depth == 0]
    return head[spaces[-1] + 1 :] if spaces else head


def base_name(readable: str) -> str:
    """The bare function name of a demangled signature, for finding near names:
    ``void ns::gemm<float, 1>(float*)`` → ``gemm``, ``(anonymous namespace)::saxpy(float*)`` → ``saxpy``."""
    name = qualified_name(readable)
    # Drop template arguments: the characters inside angle brackets and the brackets themselves.
    bare = "".join(ch for ch, depth in _depth_steps(name) if depth == 0 and ch not in "<>")
    return bare.rsplit("::", 1)[-1]
