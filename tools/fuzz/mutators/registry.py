"""The mutator registry: each mutator names the layer kinds it edits and how often it is drawn.

A mutator is ``fn(rng, data, ctx) -> (new bytes, description)``; it raises
:class:`fields.Inapplicable` when ``data`` is not the structure it edits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Mutator:
    name: str
    kinds: frozenset
    weight: float
    fn: Callable
    final: bool = False  # ends a stack of mutations (amplifiers: one big structure is enough)


MUTATORS: dict[str, Mutator] = {}
ELF_KINDS = ("co", "host-elf")
ANY = "*"


def mutator(name: str, kinds, weight: float = 3.0, final: bool = False):
    def register(fn):
        MUTATORS[name] = Mutator(name, frozenset(kinds), weight, fn, final)
        return fn

    return register


@dataclass
class Context:
    """What mutators may draw on besides the layer itself."""

    donors: list[bytes]  # other fixtures' bytes, for splicing
