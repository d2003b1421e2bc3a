"""The settings of ``amdocc check``: a rule that needs a value says which option gives it and in
what unit (the occupancy rule's floor is min-occupancy, in waves per SIMD, as the policy module
documents it).
"""

from __future__ import annotations

import pytest

from amdocc import UsageError
from amdocc.policy.checks import Settings


def test_the_occupancy_rule_without_a_floor_names_the_option_and_its_unit():
    with pytest.raises(UsageError) as err:
        Settings(rules=("occupancy",))
    assert str(err.value) == "the occupancy rule needs a floor (min-occupancy, in waves per SIMD)"
