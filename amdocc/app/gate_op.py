"""gate: would FlashInfer route this prefill to AITER's asm kernel, and why (not) (``amdocc
gate``): amdocc.policy.prefill_gate.decide, which takes a device's CU count and LDS from
tables/devices.toml itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..policy.prefill_gate import GateDecision


def gate(arch: str, qo_len: int, kv_len: int, **decision: Any) -> GateDecision:
    """amdocc.policy.prefill_gate.decide with the launch's processor and lengths in order: the
    route (``decision.route``) and every check behind it (``decision.checks``;
    ``decision.as_dict()`` is what ``amdocc gate --json`` prints). The other parameters are
    decide's, documented there (``dtype``, ``head_dim_qk``, ``device``, ``cu_count``, ...)."""
    from ..policy.prefill_gate import decide

    return decide(arch=arch, qo_len=qo_len, kv_len=kv_len, **decision)
