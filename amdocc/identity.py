"""Which kernel is which: the one rule ``diff``, ``census OLD NEW`` and ``check``'s baseline
use to say that a kernel of one build is a kernel of another.

A kernel is identified by

- its **location**: the path of its container chain inside what the user gave, as a release
  would name it: the file's path within a directory tree, then each archive member on the way
  in (a wheel's ``torch/lib/libtorch_hip.so``, a ``.a`` member). Hops that only say how the
  code was packed (an ELF section, an offload bundle, its compression, a bundle entry id, an
  offset) are left out, because two builds of one library pack it differently and at other
  offsets. A file given directly has the empty location: OLD and NEW are different files.
- its **target**: the target id of the code object it is in (``gfx942:sramecc+:xnack-``), so
  ``xnack+`` and ``xnack-`` copies are two kernels;
- its **name** (the mangled symbol name the metadata note gives);
- its **copy**: how many kernels with the same location, target and name came before it in
  reading order (0 for the first). Two bundles of one ``.hip_fatbin`` may both hold a kernel of
  one name for one target; the order of the bundles tells them apart where offsets do not.

Kernels of two builds match when all four agree. A kernel whose (target, name) is left over on
both sides, once in each, at two locations (a library renamed, or the kernel moved to another
library) is matched explicitly as **moved**: reported as such, compared, never merged into the
copy that stayed. Anything more ambiguous is left as removed and added.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

# Hops that only say how a code object was packed: a section, a bundle, its compression, an
# OffloadBinary or AKS2 entry, and bundle entry ids (offload kind, then the triple).
_PACKING = re.compile(r"^(section |bundle|CCOB|OffloadBinary|AKS|hip[v0-9]*-|hipv4-|openmp-|host-)|amdgcn-")
_MARK = re.compile(r"@(0x[0-9a-fA-F]+|\+0x[0-9a-fA-F]+)$")


def location_of(relative_path: str, hops: Iterable[str]) -> str:
    """The location of a code object: the file's path within what was given (``''`` for a file
    given directly), then any hop that names a file inside it (an archive member), joined by
    ``!``, with packing hops and offsets left out."""
    parts = [relative_path] if relative_path else []
    for hop in hops:
        hop = _MARK.sub("", hop).strip()
        if hop and not _PACKING.search(hop):
            parts.append(hop)
    return "!".join(parts)


def relative_path(path: str, roots: Iterable[str]) -> str:
    """``path`` within the first directory of ``roots`` that holds it, or ``''`` (a file given
    directly, or standard input)."""
    if path == "-":
        return ""
    for root in roots:
        if root == "-" or not os.path.isdir(root):
            continue
        rel = os.path.relpath(path, root)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return rel.replace(os.sep, "/")
    return ""


@dataclass(frozen=True, slots=True, order=True)
class KernelId:
    """One kernel of one build (see the module's text)."""

    location: str
    target: str
    name: str
    copy: int = 0

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.location, self.target, self.name, self.copy

    def as_dict(self) -> dict[str, Any]:
        """The identity as JSON records carry it, beside their other keys."""
        return {"location": self.location, "target": self.target, "kernel": self.name, "copy": self.copy}

    def where(self, copies: int = 1) -> str:
        """Location and copy as a reader needs them: ``in lib/a.so`` and, when the build holds
        ``copies`` of it, ``copy 2 of 3``; empty for the one copy of a file given directly."""
        parts = []
        if self.location:
            parts.append(f"in {self.location}")
        if copies > 1 or self.copy:
            parts.append(f"copy {self.copy + 1} of {max(copies, self.copy + 1)}")
        return " ".join(parts)


class Numbering:
    """Gives each kernel of one build its :class:`KernelId`, counting copies in reading order."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str, str], int] = {}

    def __call__(self, location: str, target: str, name: str) -> KernelId:
        return KernelId(location, target, name, self.copy(location, target, name))

    def copy(self, location: str, target: str, name: str) -> int:
        """The next kernel's copy number alone (a census numbers every row and keeps few)."""
        key = (location, target, name)
        n = self._seen.get(key, 0)
        self._seen[key] = n + 1
        return n

    def copies(self, location: str, target: str, name: str) -> int:
        """How many kernels with this location, target and name were numbered."""
        return self._seen.get((location, target, name), 0)

    def counts(self) -> dict[tuple[str, str, str], int]:
        """How many kernels each (location, target, name) numbered has."""
        return dict(self._seen)

    def add(self, counts: dict[tuple[str, str, str], int]) -> None:
        """Count ``counts`` (another Numbering's, of kernels read after these) as numbered here."""
        seen = self._seen
        for key, n in counts.items():
            seen[key] = seen.get(key, 0) + n


T = TypeVar("T")


@dataclass(slots=True)
class Matching(Generic[T]):
    """Two builds' kernels paired: ``same`` (identical identity), ``moved`` (same target and
    name at another location), and the rest ``removed`` (OLD only) and ``added`` (NEW only),
    each in identity order."""

    same: list[tuple[KernelId, T, T]] = field(default_factory=list)
    moved: list[tuple[KernelId, KernelId, T, T]] = field(default_factory=list)
    removed: list[tuple[KernelId, T]] = field(default_factory=list)
    added: list[tuple[KernelId, T]] = field(default_factory=list)


def match(old: Mapping[KernelId, T], new: Mapping[KernelId, T]) -> Matching[T]:
    """Pair the kernels of two builds (see the module's text for the rule)."""
    out: Matching[T] = Matching()
    for k in sorted(old.keys() & new.keys()):
        out.same.append((k, old[k], new[k]))
    gone: dict[tuple[str, str], list[KernelId]] = {}
    came: dict[tuple[str, str], list[KernelId]] = {}
    for k in sorted(old.keys() - new.keys()):
        gone.setdefault((k.target, k.name), []).append(k)
    for k in sorted(new.keys() - old.keys()):
        came.setdefault((k.target, k.name), []).append(k)
    for pair in sorted(gone.keys() & came.keys()):
        a, b = gone[pair], came[pair]
        # One copy left each side, or every copy of one location now at one other location
        # (a library renamed): pair them in copy order. Anything else stays unpaired.
        if len(a) == len(b) and len({k.location for k in a}) == 1 and len({k.location for k in b}) == 1:
            for x, y in zip(a, b, strict=True):
                out.moved.append((x, y, old[x], new[y]))
            del gone[pair], came[pair]
    out.removed = sorted(((k, old[k]) for ks in gone.values() for k in ks), key=lambda kv: kv[0])
    out.added = sorted(((k, new[k]) for ks in came.values() for k in ks), key=lambda kv: kv[0])
    return out


__all__ = ["KernelId", "Matching", "Numbering", "location_of", "match", "relative_path"]
