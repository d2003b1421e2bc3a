"""A kernel's function attributes in LLVM IR text: read them, and give the kernel a changed copy.

LLVM IR names a function's attributes through an attribute group (``define ... @k(...) #0 {`` and
``attributes #0 = { ... "amdgpu-waves-per-eu"="2,2" ... }``). A group may be shared by several
functions, so a change is made on a new group that only the kernel points at; every other line of
the module is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError

_DEFINE = re.compile(r'^define\b[^\n@]*\bamdgpu_kernel\b[^\n@]*@("(?:[^"\\]|\\.)*"|[-\w$.]+)\(', re.M)
_GROUP_REF = re.compile(r"\)[^\n(]*?#(\d+)[^\n]*\{\s*$")
_ATTRIBUTE = re.compile(r'"((?:[^"\\]|\\.)*)"(?:="((?:[^"\\]|\\.)*)")?')


@dataclass(frozen=True, slots=True)
class KernelDefinition:
    """Where one kernel is defined: its name, the offsets of its ``define`` line, and its group."""

    name: str
    line_start: int
    line_end: int
    group: int | None


def kernels(ir: str) -> list[KernelDefinition]:
    """Every ``amdgpu_kernel`` defined in ``ir``, in order."""
    out = []
    for m in _DEFINE.finditer(ir):
        end = ir.find("\n", m.start())
        end = len(ir) if end < 0 else end
        line = ir[m.start() : end]
        name = m.group(1).strip('"')
        ref = _GROUP_REF.search(line)
        out.append(KernelDefinition(name, m.start(), end, int(ref.group(1)) if ref else None))
    return out


def _group_span(ir: str, group: int) -> tuple[int, int]:
    m = re.search(rf"^attributes #{group} = \{{([^\n]*)\}}\s*$", ir, re.M)
    if m is None:
        raise UsageError(f"the IR refers to attribute group #{group} but does not define it")
    return m.start(1), m.end(1)


def attributes(ir: str, kernel: KernelDefinition) -> dict[str, str | None]:
    """The kernel's string attributes (``"name"="value"``; a bare ``"name"`` maps to None)."""
    if kernel.group is None:
        return {}
    start, end = _group_span(ir, kernel.group)
    return {m.group(1): m.group(2) for m in _ATTRIBUTE.finditer(ir[start:end])}


def with_attributes(ir: str, kernel: KernelDefinition, changes: dict[str, str | None]) -> str:
    """``ir`` with the kernel's attributes changed: each name set to its value, or removed where the
    value is None. The kernel gets a new attribute group; nothing else moves."""
    if kernel.group is not None:
        start, end = _group_span(ir, kernel.group)
        body = ir[start:end]
    else:
        body = " "
    for name in changes:
        body = re.sub(rf'\s"{re.escape(name)}"(?:="(?:[^"\\]|\\.)*")?(?=[\s}}])', "", body)
    added = " ".join(f'"{name}"="{value}"' for name, value in changes.items() if value is not None)
    body = (" " + added + body) if added else body
    used = [int(n) for n in re.findall(r"^attributes #(\d+) =", ir, re.M)]
    fresh = max(used, default=-1) + 1
    line = ir[kernel.line_start : kernel.line_end]
    if kernel.group is not None:
        ref = _GROUP_REF.search(line)
        assert ref is not None, "a kernel with a group has a reference to it"
        line = line[: ref.start(1)] + str(fresh) + line[ref.end(1) :]
    else:
        brace = line.rstrip().rfind("{")
        line = line[:brace] + f"#{fresh} " + line[brace:]
    out = ir[: kernel.line_start] + line + ir[kernel.line_end :]
    return out.rstrip("\n") + f"\nattributes #{fresh} = {{{body.rstrip()} }}\n"
