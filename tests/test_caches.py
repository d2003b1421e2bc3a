"""Caches with owners: every module-level cache of amdocc is made through amdocc.caches (a named,
bounded lru_cache, or a hand-made dict registered with its clear function), keyed by content,
and emptied together by clear_all()."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from collections import Counter
from pathlib import Path

import pytest

import amdocc
from amdocc import caches

PACKAGE = Path(amdocc.__file__).parent


def _sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def _all_modules():
    for info in pkgutil.walk_packages([str(PACKAGE)], "amdocc."):
        if info.name.startswith("amdocc.samples") or info.name == "amdocc.__main__":
            continue
        importlib.import_module(info.name)
        yield info.name


def test_no_cache_is_made_outside_the_registry():
    # functools.cache / lru_cache written anywhere but amdocc/caches.py is a cache nobody clears.
    found = []
    for path, tree in _sources():
        if path.name == "caches.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("cache", "lru_cache", "cached_property")
                and isinstance(node.value, ast.Name)
                and node.value.id == "functools"
            ):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "functools":
                names = {a.name for a in node.names} & {"cache", "lru_cache", "cached_property"}
                if names:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []


def test_every_cached_function_is_registered_and_bounded():
    for name in _all_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", "") == name:
                assert f"{name}.{value.__qualname__}" in caches.names(), (name, attr)
                maxsize = value.cache_info().maxsize
                assert isinstance(maxsize, int) and maxsize >= 1, (name, attr, maxsize)
    # Everything once imported: the registry names the hand-made caches too, and the models' two.
    importlib.import_module("amdocc.app.census_op")
    registered = set(caches.names())
    for name in (
        "amdocc.models.dispatch._ANSWERS",
        "amdocc.policy.checks._MODEL_OUTCOMES",
        "amdocc.app.census_op._MODEL_COLUMNS",
        "amdocc.app.census_op._BODIES",
        "amdocc.models.nextstep._cached_next_step",
        "amdocc.codeobject.descriptor._decode_fields",
        "amdocc.codeobject.descriptor._COMPILED",
        "amdocc.report._record_builder",
        "amdocc.runtime._hip_answers",
        "amdocc.models.usage._USAGES",
    ):
        assert name in registered, name


def test_no_cache_is_keyed_by_an_object_id():
    # id() is reused once an object is collected: an answer keyed by it can be another's. The
    # id()s left are of objects held alive beside the key: the spellings of one kernel in a local
    # dict (codeobject/model.py), and the loaded module held in the value of the oracle's function
    # handles (testing/oracles.py).
    calls = Counter(
        str(path.relative_to(PACKAGE.parent))
        for path, tree in _sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"
    )
    assert calls == {"amdocc/codeobject/model.py": 1, "amdocc/testing/oracles.py": 2}


def test_clear_all_empties_every_cache(fresh_caches):
    from amdocc.codeobject import descriptor
    from amdocc.models import dispatch, nextstep

    co = next(c for c in amdocc.load(amdocc.samples_path()) if c.processor == "gfx942")
    occ = amdocc.occupancy(co.kernels[0], block_size=256)
    amdocc.next_step(occ)
    assert dispatch._ANSWERS
    assert nextstep._cached_next_step.cache_info().currsize >= 1
    assert descriptor._decode_fields.cache_info().currsize >= 1
    caches.clear_all()
    assert not dispatch._ANSWERS
    assert nextstep._cached_next_step.cache_info().currsize == 0
    assert descriptor._decode_fields.cache_info().currsize == 0
    # And the answers afterwards are the same answers, worked again.
    assert amdocc.occupancy(co.kernels[0], block_size=256) == occ


def test_a_cache_needs_a_positive_bound():
    for bad in (None, 0, -1, True, 2.0):
        with pytest.raises(ValueError, match="a cache needs a bound"):
            caches.cached(bad)  # type: ignore[arg-type]


def test_the_registry_clears_one_cache_by_name():
    calls = []

    @caches.cached(maxsize=2)
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    name = f"{__name__}.{square.__qualname__}"
    assert name in caches.names()
    assert [square(3), square(3)] == [9, 9] and calls == [3]
    caches.clear(name)
    assert square(3) == 9 and calls == [3, 3]
    # Bounded: a third key drops the least recently used.
    square(4), square(5)
    assert square.cache_info().currsize == 2
    with pytest.raises(KeyError):
        caches.clear("amdocc.no.such.cache")


def test_import_amdocc_stays_light():
    # The registry is standard library only, and importing the package imports no cache owner.
    import subprocess
    import sys

    code = "import sys, amdocc; print(sorted(m for m in sys.modules if m.startswith('amdocc')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['amdocc', 'amdocc.errors']"
    tree = ast.parse((PACKAGE / "caches.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "functools", "collections.abc", "typing"}


def test_the_models_leave_no_state_on_a_kernel(fresh_caches):
    # Kernel.memo is gone: a kernel holds only what the reader resolved it from (inputs), and the
    # models' usages live in a registered cache keyed by content, emptied with the rest.
    from amdocc.models import usage

    assert "memo" not in {f.name for f in dataclasses.fields(amdocc.Kernel)}
    co = next(c for c in amdocc.load(amdocc.samples_path()) if c.processor == "gfx942")
    k = co.kernels[0]
    before = {f.name: getattr(k, f.name) for f in dataclasses.fields(k)}
    amdocc.occupancy(k, block_size=256)
    assert {f.name: getattr(k, f.name) for f in dataclasses.fields(k)} == before
    assert len(usage._USAGES) >= 1
    caches.clear_all()
    assert len(usage._USAGES) == 0
