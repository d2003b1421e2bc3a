"""Every cache amdocc keeps at module level, registered by name: one place to list them and to
empty them all (tests do, between cases that change a table or a module under test).

A cache here is keyed by the content of its arguments (hashable values: names, numbers, frozen
records), never by an object's ``id()``, which Python reuses once the object is collected; and
each has a bound, so that a long-running process cannot grow it without limit.

    @cached(maxsize=256)
    def parse(word: str) -> Thing: ...

    register("amdocc.module._TABLE", _TABLE.clear)   # a hand-made cache (a dict with its own bound)
    _SEEN = Memo("amdocc.module._SEEN", 1 << 16)     # a bounded, registered dict for keys computed by hand
    clear_all()                                      # empties every registered cache

This module imports only the standard library, so that any room of the package may use it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

# name -> the function that empties that cache
_REGISTRY: dict[str, Callable[[], None]] = {}


def register(name: str, clear: Callable[[], None]) -> None:
    """Register a cache under ``name`` (its module and attribute) with the function that empties it.
    A module imported afresh (mutation testing re-imports amdocc) registers its new cache under
    the old name, and the new one replaces the old."""
    _REGISTRY[name] = clear


def cached(maxsize: int) -> Callable[[Callable[..., T]], functools._lru_cache_wrapper[T]]:
    """``functools.lru_cache(maxsize)`` that registers the cache under the function's module and
    name. ``maxsize`` is required and must be a positive int: every cache is bounded."""
    if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"a cache needs a bound: maxsize must be a positive int, not {maxsize!r}")

    def wrap(fn: Callable[..., T]) -> functools._lru_cache_wrapper[T]:
        wrapped = functools.lru_cache(maxsize=maxsize)(fn)
        register(f"{fn.__module__}.{fn.__qualname__}", wrapped.cache_clear)
        return wrapped

    return wrap


def names() -> list[str]:
    """The registered caches' names, sorted (those of the modules imported so far)."""
    return sorted(_REGISTRY)


def clear_all() -> None:
    """Empty every registered cache."""
    for clear in list(_REGISTRY.values()):
        clear()


def clear(name: str) -> None:
    """Empty one registered cache by name (KeyError naming it when none is registered so)."""
    _REGISTRY[name]()


__all__ = ["cached", "clear", "clear_all", "names", "register"]


K = TypeVar("K")
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A dict of answers keyed by a key the caller builds (for a key that is not the arguments'
    tuple: the models' name-free usage, a check's question), registered under ``name`` and
    emptied when it reaches ``maxsize`` entries."""

    def __init__(self, name: str, maxsize: int) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError(f"a cache needs a bound: maxsize must be a positive int, not {maxsize!r}")
        self._data: dict[K, V] = {}
        self.maxsize = maxsize
        register(name, self._data.clear)

    def get(self, key: K) -> V | None:
        return self._data.get(key)

    def put(self, key: K, value: V) -> None:
        if len(self._data) >= self.maxsize:
            self._data.clear()
        self._data[key] = value

    def __len__(self) -> int:
        return len(self._data)
