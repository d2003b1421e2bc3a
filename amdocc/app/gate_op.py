"""gate: would FlashInfer route this prefill to AITER's asm kernel, and why (not) (``amdocc
gate``): amdocc.policy.prefill_gate, with a device's CU count and LDS from tables/devices.toml."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..policy.prefill_gate import GateDecision


def gate(
    arch: str,
    qo_len: int,
    kv_len: int,
    *,
    dtype: str = "bf16",
    head_dim_qk: int = 128,
    head_dim_v: int = 128,
    logits_soft_cap: float = 0.0,
    window_left: int = -1,
    causal: bool = False,
    group_mode: bool = False,
    bf16_cvt: int = 0,
    capturing: bool = False,
    asm_dir: str | None = None,
    device: str | None = None,
    cu_count: int | None = None,
) -> GateDecision:
    """The route (``decision.route``) and every check behind it (``decision.checks``;
    ``decision.as_dict()`` is what ``amdocc gate --json`` prints). ``device`` (a product of
    tables/devices.toml, a processor of ``arch``) gives the CU count and LDS; a ``cu_count``
    that contradicts it is a UsageError."""
    from ..errors import UsageError
    from ..policy.prefill_gate import decide
    from ..targets import processor_name

    lds = None
    if device:
        from ..devices import get_device

        proc = processor_name(arch)
        dev = get_device(device)
        if dev.processor != proc:
            raise UsageError(
                f"{{device}} {dev.name} is a {dev.processor}, but {{arch}} says {arch}", params=("device", "arch")
            )
        if cu_count is not None and cu_count != dev.compute_units:
            raise UsageError(
                f"{{cu_count}} {cu_count} contradicts {{device}} {dev.name}, which has "
                f"{dev.compute_units} CUs (give one of them)",
                params=("cu_count", "device"),
            )
        cu_count, lds = dev.compute_units, dev.lds
    return decide(
        arch=arch,
        qo_len=qo_len,
        kv_len=kv_len,
        dtype=dtype,
        head_dim_qk=head_dim_qk,
        head_dim_v=head_dim_v,
        logits_soft_cap=logits_soft_cap,
        window_left=window_left,
        causal=causal,
        group_mode=group_mode,
        bf16_cvt=bf16_cvt,
        capturing=capturing,
        asm_dir=asm_dir,
        cu_count=cu_count,
        lds_bytes=lds,
    )
