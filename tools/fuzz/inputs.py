"""Inputs: a fixture, one of its layers, one to four mutations, and the way amdocc reads it.

Input ``i`` of seed ``S`` depends on (S, i) only, so it can be regenerated whatever the number
of jobs. Each mutation records the random state it started from, so the minimizer can replay
any subset of them with the same choices.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .contract import MODES
from .corpus import Fixture, fixtures
from .layers import Layer
from .mutators import ANY, MUTATORS, Context


@dataclass
class Case:
    """One generated input and how it was made."""

    seed: str
    index: int
    fixture: str
    layer_path: str
    layer_kind: str
    mutations: list[tuple[str, str]]
    mode: str
    data: bytes
    layer_before: bytes
    layer_after: bytes
    wrap: Callable[[bytes], bytes] = field(repr=False)
    steps: list = field(default_factory=list, repr=False)  # (mutator, random state) per mutation

    @property
    def mutators(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.mutations)


# How often each kind of layer is picked, relative to the others in the same fixture: the code
# objects inside a container are many, the container headers few but just as worth breaking.
LAYER_WEIGHTS = {
    "co": 1.0,
    "region": 1.5,
    "bundle": 2.0,
    "ccob": 3.0,
    "offload": 2.0,
    "host-elf": 1.5,
    "coff": 3.0,
    "bitcode": 0.2,
    "ar": 3.0,
    "tar": 3.0,
    "tgz": 2.0,
    "raw": 0.2,
}


def generate(seed, index: int) -> Case:
    """Input ``index`` of campaign ``seed``: a function of the two alone."""
    rng = random.Random(f"amdocc-fuzz:{seed}:{index}")
    return mutate(rng, seed=str(seed), index=index)


def mutate(
    rng: random.Random, *, seed: str = "-", index: int = -1, fixture: str | None = None, only: str | None = None
) -> Case:
    """Pick a fixture and a layer, mutate the layer one to four times, put it back."""
    all_fixtures = fixtures()
    usable = (
        (lambda layer: True)
        if only is None
        else (lambda layer: ANY in MUTATORS[only].kinds or layer.kind in MUTATORS[only].kinds)
    )
    if fixture is not None:
        fx = next(f for f in all_fixtures if f.name == fixture)
    else:
        pool = [f for f in all_fixtures if any(usable(layer) for layer in f.layers)]
        fx = rng.choices(pool, [1.5 if f.layers[0].kind != "co" else 1.0 for f in pool])[0]
    for _attempt in range(1 if only is None else 24):
        layers = [layer for layer in fx.layers if usable(layer)] or fx.layers
        weights = [LAYER_WEIGHTS.get(layer.kind, 1.0) for layer in layers]
        layer = rng.choices(layers, weights)[0]
        case = _mutate_layer(rng, fx, layer, seed, index, only)
        if case.mutations or only is None or fixture is not None:
            return case
        fx = rng.choices(pool, weights=[1.0] * len(pool))[0]  # that mutator found nothing here
    return case


def _mutate_layer(rng, fx: Fixture, layer: Layer, seed: str, index: int, only: str | None) -> Case:
    ctx = _context()
    count = 1 if rng.random() < 0.6 else rng.randint(2, 4)
    data, applied, steps = layer.data, [], []
    for _ in range(count):
        candidates = [
            m
            for m in MUTATORS.values()
            if (ANY in m.kinds or layer.kind in m.kinds) and (only is None or m.name == only)
        ]
        for _attempt in range(8):
            m = rng.choices(candidates, [c.weight for c in candidates])[0]
            state = rng.getstate()
            try:
                new, detail = m.fn(rng, data, ctx)
            except Exception:  # a mutator that cannot apply here; try another
                continue
            data = new
            applied.append((m.name, detail))
            steps.append((m.name, state))
            break
        else:
            m = None
            if only is not None:
                continue
            state = rng.getstate()
            new, detail = MUTATORS["bytes.flip"].fn(rng, data, ctx) if data else (b"\0", "empty layer")
            data = new
            applied.append(("bytes.flip", detail))
            steps.append(("bytes.flip", state))
        if m is not None and m.final:
            break
    out = layer.wrap(data)
    mode = rng.choices(list(MODES), list(MODES.values()))[0]
    return Case(seed, index, fx.name, layer.path, layer.kind, applied, mode, out, layer.data, data, layer.wrap, steps)


_CONTEXT: Context | None = None


def _context() -> Context:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = Context([f.data for f in fixtures()])
    return _CONTEXT


def replay_steps(layer_data: bytes, steps) -> tuple[bytes, list[tuple[str, str]]] | None:
    """Apply recorded mutation steps (mutator, random state) to ``layer_data`` again: each
    mutator makes the same choices as when the input was generated. None if one cannot apply."""
    data, applied = layer_data, []
    for name, state in steps:
        r = random.Random()
        r.setstate(state)
        try:
            data, detail = MUTATORS[name].fn(r, data, _context())
        except Exception:  # without the earlier steps this one may not apply
            return None
        applied.append((name, detail))
    return data, applied
