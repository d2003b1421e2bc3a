"""split: the KV split count for AITER's FlyDSL fp8_mqa_logits, with its occupancy's source
(``amdocc split``): amdocc.policy.splits, with the kernel read from files."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..codeobject import Kernel


def split(
    seq_len: int,
    seq_len_kv: int,
    rows_per_block: int,
    block_kv: int,
    *,
    arch: str,
    paths: Iterable[str] = (),
    kernel: str | None = None,
    what_if: bool = False,
    **decision: Any,
) -> dict[str, Any]:
    """amdocc.policy.splits.auto_num_splits as ``amdocc split --json`` prints it ({"splits",
    "reason", "occupancy", ...}), its kernel the one of ``paths`` that ``kernel`` (a regex)
    selects and that can run on ``arch`` (or ``what_if``). The other parameters are
    auto_num_splits's, documented there (``cu_count``, ``num_heads``, ``aggressive``,
    ``occupancy``, ``block_size``, ``dynamic_lds``, ...)."""
    from ..policy.splits import auto_num_splits

    paths = list(paths)
    chosen = kernel_in(paths, arch, kernel, what_if) if paths else None
    answer = auto_num_splits(
        seq_len, seq_len_kv, rows_per_block, block_kv, arch=arch, kernel=chosen, what_if=what_if, **decision
    )
    return answer.as_dict()


def split_by_cost(grid_x: int, effective_cus: int, window_tiles: int, max_splits: int, overhead: int) -> dict[str, Any]:
    """The split count of the wave-quantized cost model from its inputs directly, as ``amdocc
    split --grid-x ... --json`` prints it."""
    from ..policy.splits import splits_by_wave_cost

    inputs = (grid_x, effective_cus, window_tiles, max_splits, overhead)
    return {
        "splits": splits_by_wave_cost(*inputs),
        "reason": "wave-quantized cost",
        "inputs": dict(zip(("grid_x", "effective_cus", "window_tiles", "max_splits", "overhead"), inputs, strict=True)),
    }


def kernel_in(paths: list[str], arch: str, kernel: str | None, what_if: bool) -> Kernel:
    """The one kernel of ``paths`` that ``kernel`` selects and that can run on ``arch`` (or
    ``what_if``); a UsageError naming what is there otherwise."""
    from ..errors import UsageError
    from .occupancy_op import selected_kernels
    from .selection import Selection, require_one_kernel

    selection = Selection(arch, None, kernel, bool(what_if), target_param="arch")
    failures: list[str] = []
    chosen = selected_kernels(paths, selection, failures)
    if failures:
        raise UsageError("; ".join(failures))
    require_one_kernel(chosen, "split", selection)
    return chosen[0][1]
