"""Read-only containers for records that amdocc shares: an answer handed out from a cache (an
occupancy record, a processor's row) is the same object for every caller, so a caller that
changed it would change every later answer.

:class:`FrozenDict` and :class:`FrozenList` are a ``dict`` and a ``list`` that refuse to be
changed (``TypeError``, as ``types.MappingProxyType`` does). They stay a dict and a list, so
``json.dumps`` writes them byte for byte as before, ``==`` compares them with plain ones, they
pickle (worker processes send records back) and ``dict(x)``/``list(x)`` is a caller's own
mutable copy (one level; ``copy.deepcopy(x)`` is a plain dict or list all the way down).
:func:`freeze` makes a value read-only all the way down.

This module imports only the standard library, so that any room of the package may use it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, NoReturn, TypeVar

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


def _refuse(self: object, *_args: object, **_kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is read-only: an answer amdocc shares; change a copy (dict(x), list(x))")


class FrozenDict(dict[K, V]):
    """A dict that cannot be changed once built (hashable when its values are)."""

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        # dict's own reduce would rebuild it through __setitem__
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict[K, V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[K, V]:
        return {k: copy.deepcopy(v, memo) for k, v in self.items()}  # a deep copy is the caller's to change

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[T]):
    """A list that cannot be changed once built (hashable when its items are)."""

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __iadd__ = _refuse
    __imul__ = _refuse
    append = _refuse
    clear = _refuse
    extend = _refuse
    insert = _refuse
    pop = _refuse
    remove = _refuse
    reverse = _refuse
    sort = _refuse

    def __init__(self, items: Iterable[T] = ()) -> None:
        list.extend(self, items)  # list.__init__ would go through the refused extend on some paths

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList[T]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> list[T]:
        return [copy.deepcopy(v, memo) for v in self]

    def __repr__(self) -> str:
        return list.__repr__(self)


def freeze(value: Any) -> Any:
    """``value`` read-only all the way down: dicts become FrozenDicts, lists FrozenLists, sets
    frozensets, and tuples keep their type with frozen items. Other values are returned as they
    are (numbers, text, frozen dataclasses and named tuples the caller built immutable)."""
    if isinstance(value, (FrozenDict, FrozenList)):
        return value  # built by freeze: already frozen all the way down
    if isinstance(value, dict):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return FrozenList(freeze(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    if type(value) is tuple:
        return tuple(freeze(v) for v in value)
    return value
