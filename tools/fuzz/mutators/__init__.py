"""Every mutator, registered in ``MUTATORS``: one module per container layer.

The registration order is part of the seed contract: an input chooses among the mutators that
apply to its layer by position. So the modules are imported in the order below, not
alphabetically, and each registers its mutators top to bottom.
"""

from __future__ import annotations

import importlib

from .registry import ANY, ELF_KINDS, MUTATORS, Context, Mutator, mutator

__all__ = ["ANY", "ELF_KINDS", "MUTATORS", "Context", "Mutator", "mutator"]

LAYER_MODULES = (
    "elf",
    "metadata",
    "elf_tables",  # ELF headers and notes; metadata; tables, amplifiers
    "bundle",
    "ccob",
    "offload",
    "coff",
    "region",
    "generic",  # byte mutators for any layer
    "linking",  # .amdgpu.info (added after the others, so older seeds keep their mutators)
    "archives",  # ar and tar member headers (after linking, for the same reason)
)
for _module in LAYER_MODULES:
    importlib.import_module(f"{__name__}.{_module}")
