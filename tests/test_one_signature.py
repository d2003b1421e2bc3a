"""One operation, one signature: a parameter is declared (and documented) in one place.

The facade's occupancy is the models' function itself; the gate and the split pass the policy's
parameters through rather than re-declaring them, so an option added to the policy reaches the
operation (and a renamed one cannot drift).
"""

from __future__ import annotations

import inspect

import pytest

from amdocc import UsageError, app
from amdocc.policy.prefill_gate import decide
from amdocc.policy.splits import auto_num_splits


def test_the_facade_occupancy_is_the_models_function():
    import amdocc.models

    assert amdocc.occupancy is amdocc.models.occupancy
    assert "Args:" in (amdocc.models.occupancy.__doc__ or "")
    assert not hasattr(amdocc.models, "evaluate")  # the runtime's variant is internal (_evaluate)


def _own(function) -> set[str]:
    return {p.name for p in inspect.signature(function).parameters.values() if p.kind is not p.VAR_KEYWORD}


def test_the_gate_declares_nothing_the_policy_does_not():
    assert _own(app.gate) <= set(inspect.signature(decide).parameters)
    assert inspect.signature(app.gate).parameters["decision"].kind is inspect.Parameter.VAR_KEYWORD


def test_the_split_declares_only_how_it_finds_its_kernel_beside_the_policy():
    selection = {"paths", "kernel"}  # kernel: a regex here, the Kernel found for the policy
    assert _own(app.split) - selection <= set(inspect.signature(auto_num_splits).parameters)
    assert inspect.signature(app.split).parameters["decision"].kind is inspect.Parameter.VAR_KEYWORD


def test_the_gate_policy_takes_a_device_and_holds_the_launch_to_it():
    # tables/devices.toml: the MI300X is a gfx942 with 304 CUs (AMD's CDNA3 product page).
    launch = {"qo_len": 4096, "kv_len": 4096, "env": {}}
    with pytest.raises(UsageError) as wrong_processor:
        decide(arch="gfx90a", device="MI300X", **launch)
    assert str(wrong_processor.value) == "device MI300X is a gfx942, but arch says gfx90a"
    with pytest.raises(UsageError) as wrong_count:
        decide(arch="gfx942", device="MI300X", cu_count=100, **launch)
    assert str(wrong_count.value) == "cu_count 100 contradicts device MI300X, which has 304 CUs (give one of them)"
    assert decide(arch="gfx942", device="MI300X", cu_count=304, **launch).route == "ck_tile"  # agrees: decided
    assert app.gate("gfx942", 4096, 4096, device="MI300X", env={}).as_dict() == (
        decide(arch="gfx942", device="MI300X", **launch).as_dict()
    )
