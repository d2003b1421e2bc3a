"""Adapters from other tools' compiled kernels to amdocc (each imports its tool lazily)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..codeobject import Kernel


def shared(kernels: Iterable[Kernel]) -> tuple[Kernel, ...]:
    """Kernels a cache hands to every caller (the adapters read a compiled kernel's code object
    once): their metadata, findings and symbols read-only (amdocc.frozen), so that one caller
    cannot change what the next one is given."""
    from ..frozen import FrozenList, freeze

    out = tuple(kernels)
    for k in out:
        k.metadata = freeze(k.metadata)
        k.resource_symbols = freeze(k.resource_symbols)
        k.findings = FrozenList(k.findings)
        k.object_linking = freeze(k.object_linking)
    return out
