"""An answer amdocc hands out cannot be changed by its caller (issue 26, item 7).

The models' answers are cached and shared (docs/performance.md): the occupancy record of one
usage is the same object for every later identical question, and a processor's, device's or HIP
profile's row is one object for the whole process. A caller that could write into one would
change every later answer: ``occ.limits["vgpr"] = 0`` once made every later identical query
answer 0. So every dict and list inside them, all the way down, refuses to change.

The oracle for "the same answer" is the first answer itself, taken apart into plain dicts and
lists before anything is tried (``copy.deepcopy``), and its JSON text: after every attempted
change, the same question must give an equal record and the same JSON. Each attempted change
must raise TypeError, as ``types.MappingProxyType`` does.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import amdocc
from amdocc.devices import get_device
from amdocc.frozen import FrozenDict, FrozenList, freeze
from amdocc.models import manual
from amdocc.models.hip_profiles import get_profile
from amdocc.targets import get_target


def _sample_kernel() -> amdocc.Kernel:
    co = next(co for co in amdocc.load(amdocc.samples_path()) if co.processor == "gfx942")
    return co.kernels[0]


def _containers(value: Any, where: str) -> Iterator[tuple[str, Any]]:
    """Every dict and list inside ``value`` (a record, a dict, a list, a tuple), with its path."""
    if isinstance(value, dict):
        yield where, value
        for k, v in value.items():
            yield from _containers(v, f"{where}[{k!r}]")
    elif isinstance(value, list):
        yield where, value
        for i, v in enumerate(value):
            yield from _containers(v, f"{where}[{i}]")
    elif isinstance(value, tuple) and not hasattr(value, "_fields"):
        for i, v in enumerate(value):
            yield from _containers(v, f"{where}[{i}]")


def _fields(record: Any) -> Iterator[tuple[str, Any]]:
    if hasattr(record, "_fields"):  # a named tuple (Occupancy)
        yield from zip(record._fields, record, strict=True)
    else:  # a dataclass (Target, Device, HipProfile, Resources)
        for f in dataclasses.fields(record):
            yield f.name, getattr(record, f.name)


def _dict_changes(d: dict[Any, Any]) -> list[tuple[str, Callable[[], object]]]:
    key = next(iter(d), "new")
    return [
        ("d[k] = 0", lambda: d.__setitem__(key, 0)),
        ("d[new] = 0", lambda: d.__setitem__("a key nobody uses", 0)),
        ("del d[k]", lambda: d.__delitem__(key)),
        ("d.clear()", d.clear),
        ("d.pop(k)", lambda: d.pop(key)),
        ("d.popitem()", d.popitem),
        ("d.setdefault(new, 0)", lambda: d.setdefault("a key nobody uses", 0)),
        ("d.update(k=0)", lambda: d.update({key: 0})),
        ("d |= {k: 0}", lambda: d.__ior__({key: 0})),
    ]


def _list_changes(lst: list[Any]) -> list[tuple[str, Callable[[], object]]]:
    return [
        ("l[0] = 0", lambda: lst.__setitem__(0, 0)),
        ("del l[0]", lambda: lst.__delitem__(0)),
        ("l.append(0)", lambda: lst.append(0)),
        ("l.extend([0])", lambda: lst.extend([0])),
        ("l.insert(0, 0)", lambda: lst.insert(0, 0)),
        ("l.pop()", lst.pop),
        ("l.remove(l[0])", lambda: lst.remove(lst[0] if lst else 0)),
        ("l.clear()", lst.clear),
        ("l.reverse()", lst.reverse),
        ("l.sort()", lst.sort),
        ("l += [0]", lambda: lst.__iadd__([0])),
        ("l *= 2", lambda: lst.__imul__(2)),
    ]


def _plain(value: Any) -> Any:
    """A copy of ``value`` with its dicts and lists plain (other objects kept: a Target is compared by identity)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if type(value) is tuple:
        return tuple(_plain(v) for v in value)
    return value


def _as_json(record: Any) -> str:
    plain = record.as_dict() if hasattr(record, "as_dict") else dict(_fields(record))
    return json.dumps(plain, sort_keys=True, default=repr)


def _try_every_change(ask: Callable[[], Any]) -> int:
    """Ask, then try every change on every dict and list of the answer (each must raise
    TypeError), and ask again: the answer must equal the first. Returns the changes tried."""
    first = ask()
    snapshot = [(name, _plain(value)) for name, value in _fields(first)]
    text = _as_json(first)
    tried = 0
    for name, value in _fields(first):
        for where, container in _containers(value, name):
            changes = _dict_changes(container) if isinstance(container, dict) else _list_changes(container)
            for words, change in changes:
                with pytest.raises(TypeError, match="read-only"):
                    change()
                tried += 1
                again = ask()
                assert [(n, v) for n, v in _fields(again)] == snapshot, f"{where}: {words} changed the answer"
                assert _as_json(again) == text, f"{where}: {words} changed the JSON"
    return tried


@pytest.mark.parametrize(("model", "block"), [("hip", 256), ("hw", 256), ("llvm", None), ("llvm", 256)])
def test_an_occupancy_record_cannot_be_changed_all_the_way_down(model, block):
    kernel = _sample_kernel()
    tried = _try_every_change(lambda: amdocc.occupancy(kernel, block_size=block, model=model))
    # limits, allocated and details are dicts (details nests the compiler's record for llvm)
    assert tried >= 3 * len(_dict_changes({"k": 0}))


def test_the_issues_example_limits_vgpr_is_refused_and_the_next_answer_unchanged():
    kernel = _sample_kernel()
    occ = amdocc.occupancy(kernel, block_size=256)
    before = occ.limits["vgpr"]
    with pytest.raises(TypeError):
        occ.limits["vgpr"] = 0
    assert amdocc.occupancy(kernel, block_size=256).limits["vgpr"] == before != 0


def test_a_manual_usages_record_and_a_wgp_kernels_cannot_be_changed():
    for processor, wave in (("gfx942", 64), ("gfx1100", 32)):
        usage = manual(get_target(processor), vgprs=128, sgprs=40, lds=4096, wave=wave)
        assert _try_every_change(lambda usage=usage: amdocc.occupancy(usage, block_size=128)) > 0


@pytest.mark.parametrize("processor", ["gfx908", "gfx942", "gfx1100", "gfx1201"])
def test_a_processor_row_cannot_be_changed(processor):
    assert _try_every_change(lambda: get_target(processor)) > 0


def test_a_device_row_and_a_hip_profile_cannot_be_changed():
    _try_every_change(lambda: get_device("MI300X"))
    assert _try_every_change(lambda: get_profile(None)) > 0  # its VGPR table by processor


def test_a_kernels_resources_cannot_be_changed():
    kernel = _sample_kernel()
    with pytest.raises(dataclasses.FrozenInstanceError):
        kernel.resources.vgprs = 0  # type: ignore[misc]
    _try_every_change(lambda: kernel.resources)


def test_a_shared_record_still_pickles_writes_the_same_json_and_copies_to_a_plain_one():
    occ = amdocc.occupancy(_sample_kernel(), block_size=256, model="llvm")
    back = pickle.loads(pickle.dumps(occ))  # worker processes send records back
    assert back[:-1] == occ[:-1]  # the query holds the Target, compared by identity
    assert type(back.limits) is FrozenDict and type(back.details) is FrozenDict
    plain = copy.deepcopy(occ.as_dict())
    assert type(plain["limits"]) is dict  # a deep copy is the caller's to change
    plain["limits"]["vgpr"] = 0
    assert json.dumps(occ.as_dict()) != json.dumps(plain)
    fresh = copy.deepcopy(occ.as_dict())
    assert json.dumps(occ.as_dict()) == json.dumps(fresh)
    own = dict(occ.limits)
    own["vgpr"] = 0
    assert occ.limits["vgpr"] != 0


def test_freeze_reaches_every_level_and_keeps_equality_and_json():
    value = {"a": [1, {"b": [2, 3]}], "c": (4, {"d": 5}), "e": {6}}
    frozen = freeze(value)
    assert frozen == value and json.dumps(frozen, default=sorted) == json.dumps(value, default=sorted)
    assert type(frozen["a"]) is FrozenList and type(frozen["a"][1]) is FrozenDict
    assert type(frozen["a"][1]["b"]) is FrozenList and type(frozen["c"][1]) is FrozenDict
    assert frozen["e"] == frozenset({6})
    assert pickle.loads(pickle.dumps(frozen)) == value


@pytest.mark.parametrize("adapter", ["triton", "flydsl"])
def test_kernels_an_adapter_caches_cannot_be_changed_by_one_caller(adapter):
    # The Triton and FlyDSL adapters read a compiled kernel's code object once and hand the same
    # Kernel objects to every later question about it.
    import importlib

    module = importlib.import_module(f"amdocc.integrations.{adapter}")
    data = amdocc.samples_path().read_bytes()
    first = module._kernels(data)
    snapshot = [(k.name, _plain(k.metadata), list(k.findings), _plain(k.resource_symbols)) for k in first]
    tried = 0
    for k in first:
        for name, value in (("metadata", k.metadata), ("findings", k.findings), ("symbols", k.resource_symbols)):
            for where, container in _containers(value, name):
                changes = _dict_changes(container) if isinstance(container, dict) else _list_changes(container)
                for words, change in changes:
                    with pytest.raises(TypeError, match="read-only"):
                        change()
                    tried += 1
                    assert module._kernels(data) is first, f"{k.name} {where}: {words}"
    again = module._kernels(data)
    assert again is first and tried > 100
    assert [(k.name, k.metadata, list(k.findings), k.resource_symbols) for k in again] == snapshot
