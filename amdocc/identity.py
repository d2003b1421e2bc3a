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

Kernels of two builds match when all four agree. What is left over is then paired in three
explicit steps, each reported as such (never merged into a copy that stayed):

1. **moved**: a (target, name) left over on both sides, once in each, at two locations (a
   library renamed, or the kernel moved to another library); or every copy of one location now
   at one other location, paired in copy order.
2. **retargeted**, only when the caller evaluates both builds on one named processor
   (``--target``/``--device``): a (location, processor evaluated on, name) left over with as
   many copies on each side, paired in copy order. A release that moved from gfx9-4-generic to
   gfx942 code, compared on gfx942, matches kernel by kernel.
3. **signature**: a C++ kernel whose parameter list changed (same function, new parameters).
   Its qualified function name without parameters or return type (``ns::gemm<float, 1>`` for
   ``void ns::gemm<float, 1>(float*, int)``, as llvm-cxxfilt prints it) must be left over once
   on each side at the same location and target (processor, in step 2's case), and held by no
   other kernel there in either build. Overloads, template instances with other template
   arguments, and names that are not mangled C++ never pair this way.

Anything more ambiguous is left as removed and added.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
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


@dataclass(frozen=True, slots=True)
class Pair(Generic[T]):
    """A kernel of OLD paired with one of NEW, and by which rule (see the module's text):
    "identity", "moved", "target" or "signature"."""

    old: KernelId
    new: KernelId
    old_value: T
    new_value: T
    by: str


@dataclass(slots=True)
class Matching(Generic[T]):
    """Two builds' kernels paired: ``same`` (identical identity), ``moved`` (same target and
    name at another location), ``retargeted`` (same location and name, another target, one
    processor evaluated on), ``resigned`` (same function, another parameter list), and the
    rest ``removed`` (OLD only) and ``added`` (NEW only), each in identity order."""

    same: list[tuple[KernelId, T, T]] = field(default_factory=list)
    moved: list[tuple[KernelId, KernelId, T, T]] = field(default_factory=list)
    removed: list[tuple[KernelId, T]] = field(default_factory=list)
    added: list[tuple[KernelId, T]] = field(default_factory=list)
    retargeted: list[tuple[KernelId, KernelId, T, T]] = field(default_factory=list)
    resigned: list[tuple[KernelId, KernelId, T, T]] = field(default_factory=list)

    def pairs(self) -> Iterator[Pair[T]]:
        """Every pair, same identities first, then moved, retargeted and resigned ones."""
        for k, a, b in self.same:
            yield Pair(k, k, a, b, "identity")
        for by, found in (("moved", self.moved), ("target", self.retargeted), ("signature", self.resigned)):
            for was, now, a, b in found:
                yield Pair(was, now, a, b, by)


def function_of(name: str) -> str | None:
    """The qualified function name of a mangled C++ kernel name without its parameters and
    return type (``_ZN2ns4gemmILi1EEEvPf`` → ``ns::gemm<1>``); None for a name that is not
    mangled C++ (``_Z…``), or when no demangler is installed."""
    from .demangle import demangle, qualified_name

    if not name.startswith("_Z"):
        return None
    readable = demangle(name)
    if readable is None or readable == name or not readable.endswith(")"):
        return None
    return qualified_name(readable)


def match(
    old: Mapping[KernelId, T],
    new: Mapping[KernelId, T],
    *,
    processor: Callable[[T], str] | None = None,
    function: Callable[[T], str | None] | None = None,
) -> Matching[T]:
    """Pair the kernels of two builds (see the module's text for the rule). ``processor``: the
    processor a kernel is evaluated on, when the caller named one for both builds (then kernels
    rebuilt for another target of it pair); ``function``: a kernel's qualified function name
    without parameters (:func:`function_of` of its name), for pairing changed signatures."""
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
    left_old = sorted(k for ks in gone.values() for k in ks)
    left_new = sorted(k for ks in came.values() for k in ks)
    if processor is not None:
        left_old, left_new = _pair_by(
            old, new, left_old, left_new, lambda k, v: (k.location, processor(v), k.name), out.retargeted
        )
    if function is not None and left_old and left_new:
        left_old, left_new = _resigned(old, new, left_old, left_new, processor, function, out.resigned)
    out.removed = [(k, old[k]) for k in left_old]
    out.added = [(k, new[k]) for k in left_new]
    return out


def _pair_by(
    old: Mapping[KernelId, T],
    new: Mapping[KernelId, T],
    left_old: list[KernelId],
    left_new: list[KernelId],
    key: Callable[[KernelId, T], Any],
    into: list[tuple[KernelId, KernelId, T, T]],
) -> tuple[list[KernelId], list[KernelId]]:
    """Pair leftovers with equal ``key`` when each side holds as many of them, in identity
    order; return what is still left on each side."""
    gone: dict[Any, list[KernelId]] = {}
    came: dict[Any, list[KernelId]] = {}
    for k in left_old:
        gone.setdefault(key(k, old[k]), []).append(k)
    for k in left_new:
        came.setdefault(key(k, new[k]), []).append(k)
    paired: set[KernelId] = set()
    for shared in gone.keys() & came.keys():
        a, b = gone[shared], came[shared]
        if len(a) == len(b):
            for x, y in zip(a, b, strict=True):
                into.append((x, y, old[x], new[y]))
            paired.update(a, b)
    into.sort(key=lambda p: (p[1], p[0]))
    return [k for k in left_old if k not in paired], [k for k in left_new if k not in paired]


def _resigned(
    old: Mapping[KernelId, T],
    new: Mapping[KernelId, T],
    left_old: list[KernelId],
    left_new: list[KernelId],
    processor: Callable[[T], str] | None,
    function: Callable[[T], str | None],
    into: list[tuple[KernelId, KernelId, T, T]],
) -> tuple[list[KernelId], list[KernelId]]:
    """Pair leftovers whose function is the same and is held by one kernel only at their
    location and target (or processor) in each build (step 3 of the module's text)."""

    def where(k: KernelId, v: T) -> tuple[str, str]:
        return k.location, processor(v) if processor is not None else k.target

    def leftover_functions(left: list[KernelId], build: Mapping[KernelId, T]) -> dict[tuple[str, str, str], KernelId]:
        found: dict[tuple[str, str, str], KernelId] = {}
        for k in left:
            fn = function(build[k])
            if fn is not None:
                location, place = where(k, build[k])
                found[location, place, fn] = k
        return found

    gone, came = leftover_functions(left_old, old), leftover_functions(left_new, new)
    shared = gone.keys() & came.keys()
    if not shared:
        return left_old, left_new
    # The function must be unique there in each build: count it among all kernels of those places.
    places = {s[:2] for s in shared}

    def held(build: Mapping[KernelId, T]) -> Counter[tuple[str, str, str | None]]:
        return Counter((*where(k, v), function(v)) for k, v in build.items() if where(k, v) in places)

    in_old, in_new = held(old), held(new)
    paired: set[KernelId] = set()
    for s in sorted(shared):
        if in_old[s] == 1 and in_new[s] == 1:
            x, y = gone[s], came[s]
            into.append((x, y, old[x], new[y]))
            paired.update((x, y))
    into.sort(key=lambda p: (p[1], p[0]))
    return [k for k in left_old if k not in paired], [k for k in left_new if k not in paired]


__all__ = ["KernelId", "Matching", "Numbering", "Pair", "function_of", "location_of", "match", "relative_path"]
