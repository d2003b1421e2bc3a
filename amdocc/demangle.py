"""Readable kernel names: mangled names demangled as ``llvm-cxxfilt`` prints them.

Only a name that is mangled is demangled; any other name is shown as written. What counts as
mangled is what llvm-cxxfilt-22 demangles without ``-t`` (``--types``): an Itanium C++ name,
``_Z`` after one to four underscores (``___Z`` names a block invocation), optionally after one
leading ``.``; and a Rust v0 name, ``_R``. A kernel named ``a``, ``b`` or ``main`` keeps its
name: LLVM's demangler read without that gate would type-demangle it, as ``-t`` does, into
``signed char``, ``bool`` or ``main``. Names llvm-cxxfilt-22 also demangles but a GPU kernel
never has are left as written (documented in docs/cli.md): D names (``_D``) and the Windows
import thunks (``__imp_``).

The demangler is pycxxfilt (LLVM's own demangling library, packaged by Christian Heimes). It
was chosen by measurement: on every kernel name of the amd-aiter corpus and of bitsandbytes'
ROCm libraries it prints exactly what llvm-cxxfilt-22 prints (tests/test_demangle.py keeps
checking that). It is imported on the first name asked for, never by ``import amdocc``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from .caches import cached

# What llvm-cxxfilt-22 demangles without --types: one to four underscores then "Z" (Itanium,
# block invocations included), or "_R" (Rust v0). A leading "." (a local copy) is kept in front.
_MANGLED = re.compile(r"\.?(?:_{1,4}Z|_R)")


@cached(maxsize=1)
def _demangler() -> Callable[[str], str | None] | None:
    try:
        from pycxxfilt import demangle as engine
    except ImportError:  # Python 3.10 (pycxxfilt needs 3.11) or a trimmed install
        return None
    return engine


@cached(maxsize=1 << 16)
def demangle(name: str) -> str | None:
    """The demangled form of ``name``. A name that is not mangled (a C or asm kernel, ``a``,
    ``main``) or that does not demangle comes back unchanged, as llvm-cxxfilt prints it; None
    only when no demangler is installed."""
    engine = _demangler()
    if engine is None:
        return None
    if not is_mangled(name):
        return name
    dot = "." if name.startswith(".") else ""
    # A GNU symbol version ("@VER", "@@VER") is kept as written after the demangled name.
    head, at, version = name[len(dot) :].partition("@")
    try:
        out = engine(head)
    except ValueError:  # looks mangled but is not valid (or not text): llvm-cxxfilt keeps it as is
        return name
    return name if out is None else dot + out + at + version


def is_mangled(name: str) -> bool:
    """Whether ``name`` is spelt as a mangled name llvm-cxxfilt-22 demangles without ``-t``."""
    return _MANGLED.match(name) is not None


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


def _name_span(readable: str) -> tuple[int, int]:
    """Where the qualified name of a demangled signature starts and ends: after its return type,
    before its parameters.

    The parameters are the last parenthesised group (a name's own parentheses, as in
    "(anonymous namespace)", come before it); the return type ends at the last space outside
    any brackets (template arguments such as "<float, 1>" hold spaces of their own)."""
    end = len(readable)
    if readable.endswith(")"):
        depth = 0
        for at in range(len(readable) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(readable[at], 0)
            if depth == 0:
                end = len(readable[:at].rstrip())
                break
    head = readable[:end]
    spaces = [at for at, (ch, depth) in enumerate(_depth_steps(head)) if ch == " " and depth == 0]
    return (spaces[-1] + 1 if spaces else 0), end


def qualified_name(readable: str) -> str:
    """The qualified name of a demangled signature, without its return type and parameters:
    ``void (anonymous namespace)::gemm<float, 1>(float*)`` → ``(anonymous namespace)::gemm<float, 1>``."""
    start, end = _name_span(readable)
    return readable[start:end]


def without_return_type(readable: str) -> str:
    """A demangled signature without its return type (a template function's demangled name
    starts with one): ``void ns::gemm<float, 1>(float*)`` → ``ns::gemm<float, 1>(float*)``."""
    return readable[_name_span(readable)[0] :]


def pattern_names(name: str, readable: str | None) -> tuple[str, ...]:
    """The spellings of a kernel a name pattern (a budget's glob) is matched against: the stored
    (mangled) name; and, for a mangled one, the demangled signature as llvm-cxxfilt prints it,
    that signature without its return type, and the qualified name alone (no return type, no
    parameters). ``void ns::wave_attn<float, 64>(float*, int)`` is thus matched by
    ``ns::wave_attn*``, ``ns::wave_attn<float, 64>`` and ``*wave_attn<float*``."""
    if not readable or readable == name:
        return (name,)
    return tuple(dict.fromkeys((name, readable, without_return_type(readable), qualified_name(readable))))


def base_name(readable: str) -> str:
    """The bare function name of a demangled signature, for finding near names:
    ``void ns::gemm<float, 1>(float*)`` → ``gemm``, ``(anonymous namespace)::saxpy(float*)`` → ``saxpy``."""
    name = qualified_name(readable)
    # Drop template arguments: the characters inside angle brackets and the brackets themselves.
    bare = "".join(ch for ch, depth in _depth_steps(name) if depth == 0 and ch not in "<>")
    return bare.rsplit("::", 1)[-1]
