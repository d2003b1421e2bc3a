"""Occupancy-aware KV split count for AITER's FlyDSL fp8_mqa_logits (docs/consumers.md §1).

Upstream kept a hand-measured occupancy table. Here the occupancy comes from the kernel's own code
object (amdocc's HIP-exact model: it works before the first launch and inside graph capture),
then HIP when usable, then a recorded table, then the conservative default of 2 — and the source
of the number travels with the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from ..caches import cached
from ..errors import UsageError
from ..numbers import whole_number, whole_value
from ..tabledata import Row, load_table
from ..targets import processor_name

if TYPE_CHECKING:
    from ..codeobject.model import Kernel

DEFAULT_OCCUPANCY = 2  # AITER: under-estimating costs some parallelism, over-estimating a whole wave


@dataclass(frozen=True, slots=True)
class SplitPolicy:
    arch: str
    min_seq_len_kv: int
    min_tiles_per_split: int
    cu_oversub: int
    fallback_cu: int
    occupancy_aware: bool
    block_overhead_tiles: int
    streaming_lowh_cu_oversub: int
    streaming_lowh_residency: int
    source: str


# Each column's smallest value (a processor row of tables/split_policies.toml).
_MINIMUM = {
    "min_seq_len_kv": 0,
    "min_tiles_per_split": 1,
    "cu_oversub": 1,
    "fallback_cu": 1,
    "block_overhead_tiles": 0,
    "streaming_lowh_cu_oversub": 0,
    "streaming_lowh_residency": 0,
}


@cached(maxsize=1)
def _policies() -> tuple[dict[str, SplitPolicy], str, int]:
    table = Row("split_policies.toml", "", load_table("split_policies.toml"))
    out = {
        row.key: SplitPolicy(
            row.key,
            **{column: row.whole(column, low) for column, low in _MINIMUM.items()},
            occupancy_aware=row.flag("occupancy_aware"),
            source=row.text("source"),
        )
        for row in table.rows(skip=("default", "max_split_search"))
    }
    default = table.text("default", choices=tuple(out))
    return out, default, table.whole("max_split_search", 1)


def policy_for(arch: str) -> SplitPolicy:
    """The policy of an architecture (its bare processor name). A processor without a row gets
    the default row's policy, as AITER does (see :func:`policy_fallback`); a processor that is
    not in tables/targets.toml is an UnknownTargetError."""
    from ..targets import get_target

    get_target(arch)
    policies, default, _ = _policies()
    return policies.get(processor_name(arch), policies[default])


def policy_fallback(arch: str) -> str | None:
    """Why ``arch`` uses another processor's policy (AITER's documented fallback), or None."""
    policies, default, _ = _policies()
    proc = processor_name(arch)
    if proc in policies:
        return None
    return (
        f"no split policy for {proc}: AITER falls back to {default}'s "
        f"(tables/split_policies.toml has {', '.join(policies)})"
    )


def streaming_case(seq_len: int, seq_len_kv: int, num_heads: int | None, aggressive: bool | None) -> bool:
    """AITER's streaming low-head case: forced by ``aggressive``, else few heads
    (``num_heads <= 32``) over a KV sequence more than twice the query's."""
    if aggressive is not None:
        return bool(aggressive)
    return num_heads is not None and num_heads <= 32 and seq_len_kv > 2 * seq_len


def unused_inputs(
    arch: str, seq_len: int, seq_len_kv: int, *, num_heads: int | None = None, aggressive: bool | None = None
) -> dict[str, str]:
    """The inputs of :func:`auto_num_splits` that ``arch``'s policy row does not use for this
    launch, each with why: "num_heads", "aggressive", and "occupancy" (a given number or the
    kernel to take it from). An occupancy-aware row has no streaming low-head case; a
    fixed-oversubscription row uses occupancy only in that case, and only when it counts
    residency rather than CUs."""
    policy = policy_for(arch)
    row = f"{processor_name(arch)}'s split policy (the {policy.arch} row of tables/split_policies.toml)"
    if policy.occupancy_aware:
        why = f"{row} is occupancy-aware: it has no streaming low-head case for a head count or a forcing to decide"
        return {"num_heads": why, "aggressive": why}
    out = {}
    if not (policy.streaming_lowh_residency or policy.streaming_lowh_cu_oversub):
        why = f"{row} keeps a fixed oversubscription with no streaming low-head case"
        out = {"num_heads": why, "aggressive": why}
    elif aggressive is not None:  # forced either way: on, or off (aggressive=False)
        forced = "forced (aggressive)" if aggressive else "forced off (aggressive=False)"
        out["num_heads"] = f"the streaming low-head case is {forced}, so the head count decides nothing"
    if not policy.streaming_lowh_residency:
        out["occupancy"] = f"{row} keeps a fixed oversubscription counted in CUs: it never uses occupancy"
    elif not streaming_case(seq_len, seq_len_kv, num_heads, aggressive):
        out["occupancy"] = (
            f"{row} keeps a fixed oversubscription and uses occupancy only in the streaming "
            "low-head case (forced, or at most 32 heads over a KV length above twice the query "
            "length), which this launch is not"
        )
    return out


def max_split_search() -> int:
    return _policies()[2]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _whole_numbers(optional: bool = False, **inputs: tuple[object, int]) -> None:
    """Refuse an input (name=(value, minimum)) that is not a whole number at least its minimum (None
    allowed when ``optional``): a count of 0 CUs, a negative head count or a bool would otherwise be
    used as given, or, for 0, be taken for "not given" and silently replaced by a fallback."""
    for name, (value, minimum) in inputs.items():
        if not (optional and value is None):
            whole_number(value, name, minimum)


def splits_by_wave_cost(grid_x: int, effective_cus: int, window_tiles: int, max_splits: int, overhead: int) -> int:
    """The split count s minimising ceil(grid_x*s / effective_cus) * (ceil(W/s) + overhead) over
    s in [1, min(max_splits, 64)], ties to fewer splits (less duplicated KV traffic)."""
    # AITER's own vectors for this function pass whole floats (1e6): they are taken, as there;
    # a fraction or a bool is not a count.
    values = [whole_value(v, floats=True) for v in (grid_x, effective_cus, window_tiles, max_splits, overhead)]
    for given, value in zip((grid_x, effective_cus, window_tiles, max_splits, overhead), values, strict=True):
        if value is None:
            raise UsageError(f"splits_by_wave_cost takes whole numbers, got {given}")
    grid_x, effective_cus, window_tiles, max_splits, overhead = (v or 0 for v in values)
    if grid_x < 1 or effective_cus < 1 or window_tiles < 1 or max_splits < 1 or overhead < 0:
        raise UsageError("grid_x, effective_cus, window_tiles and max_splits must be positive, overhead >= 0")

    def cost(s: int) -> int:
        return _ceil_div(grid_x * s, effective_cus) * (_ceil_div(window_tiles, s) + overhead)

    return min(range(1, min(max_splits, max_split_search()) + 1), key=cost)  # the first (fewest) of equals


@dataclass(frozen=True, slots=True)
class OccupancyAnswer:
    blocks_per_cu: int
    source: str  # "given", "model", "hip", "recorded" or "default"
    detail: str = ""
    unit: str = "CU"  # "WGP" when the model counted per WGP (RDNA kernels in WGP mode)


def resolve_occupancy(
    *,
    occupancy: int | None = None,
    kernel: Kernel | None = None,
    block_size: int | None = None,
    dynamic_lds: int = 0,
    hip: Callable[[], int | None] | None = None,
    recorded: Callable[[], int | None] | None = None,
    arch: str | None = None,
    what_if: bool = False,
) -> OccupancyAnswer:
    """Blocks per CU from the first source that answers, in this order: a value the caller gives;
    the static HIP model on the kernel's code object (evaluated on ``arch`` when given: an
    AmdoccError when the code object cannot run there, unless ``what_if``); HIP itself when
    usable (``hip()`` returns None when it is not); a recorded answer; the default of 2."""
    if occupancy is not None:
        return OccupancyAnswer(int(occupancy), "given")
    if kernel is not None:
        if block_size is None:
            raise UsageError("the kernel's occupancy needs the launch block size")
        from ..models import occupancy as evaluate

        where: dict[str, Any] = {"target": arch, "what_if": what_if} if arch is not None else {}
        occ = evaluate(kernel, block_size=block_size, dynamic_lds=dynamic_lds, **where)
        if occ.error is None and occ.blocks_per_cu:
            label = " (what-if: its code object cannot run there)" if occ.what_if else ""
            return OccupancyAnswer(
                occ.blocks_per_cu,
                "model",
                f"hip model ({occ.profile}) on {_kernel_label(kernel)}, limited by {occ.limiter}{label}",
                occ.unit,
            )
    for source, ask in (("hip", hip), ("recorded", recorded)):
        if ask is not None:
            value = ask()
            if value:
                return OccupancyAnswer(int(value), source)
    return OccupancyAnswer(DEFAULT_OCCUPANCY, "default", "no code object, runtime or record answered")


def _kernel_label(kernel: Kernel) -> str:
    """The kernel as C++ source names it (as the CLI's text shows kernels), else as stored."""
    return str(getattr(kernel, "demangled_name", None) or kernel.name)  # a KernelUsage has no demangled name


class _Common(TypedDict):
    """The fields of :class:`SplitDecision` every path of :func:`auto_num_splits` fills alike."""

    arch_policy: str
    grid_x: int
    cu_count: int
    cu_source: str
    max_splits: int
    policy_fallback: bool
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SplitDecision:
    splits: int
    reason: str
    arch_policy: str
    grid_x: int
    cu_count: int
    cu_source: str  # "given" or "fallback"
    max_splits: int
    occupancy: OccupancyAnswer | None = None
    target: int | None = None  # fixed path: the oversubscription target in blocks
    effective_cus: int | None = None
    window_tiles: int | None = None
    notes: tuple[str, ...] = field(default=())
    policy_fallback: bool = False  # the arch has no policy row: AITER's fallback to the default row
    warnings: tuple[str, ...] = field(default=())  # every fallback taken, in words

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in self.__slots__}
        if self.occupancy is not None:
            out["occupancy"] = {
                "blocks_per_cu": self.occupancy.blocks_per_cu,
                "unit": self.occupancy.unit,
                "source": self.occupancy.source,
                "detail": self.occupancy.detail,
            }
        out["notes"] = list(self.notes)
        out["warnings"] = list(self.warnings)
        return out


def auto_num_splits(
    seq_len: int,
    seq_len_kv: int,
    rows_per_block: int,
    block_kv: int,
    *,
    arch: str,
    cu_count: int | None = None,
    num_heads: int | None = None,
    aggressive: bool | None = None,
    occupancy: int | None = None,
    kernel: Kernel | None = None,
    block_size: int | None = None,
    dynamic_lds: int = 0,
    hip: Callable[[], int | None] | None = None,
    recorded: Callable[[], int | None] | None = None,
    what_if: bool = False,
) -> SplitDecision:
    """AITER's _auto_num_splits, with occupancy from amdocc (see resolve_occupancy).

    ``aggressive`` is the streaming low-head case; when not given it is derived as AITER does:
    ``num_heads <= 32 and seq_len_kv > 2 * seq_len``. The kernel is evaluated on ``arch``: an
    AmdoccError naming both processors when its code object cannot run there, unless ``what_if``.
    Every fallback taken (another arch's policy, the policy's CU count, the default occupancy)
    is in ``warnings``.
    """
    _whole_numbers(seq_len=(seq_len, 0), seq_len_kv=(seq_len_kv, 0), rows_per_block=(rows_per_block, 1))
    _whole_numbers(block_kv=(block_kv, 1), dynamic_lds=(dynamic_lds, 0))
    _whole_numbers(cu_count=(cu_count, 1), num_heads=(num_heads, 1), occupancy=(occupancy, 1), optional=True)
    _whole_numbers(block_size=(block_size, 1), optional=True)
    policy = policy_for(arch)
    warnings = [w for w in (policy_fallback(arch),) if w]
    grid_x = _ceil_div(seq_len, rows_per_block)
    cus, cu_source = (cu_count, "given") if cu_count else (policy.fallback_cu, "fallback")
    if cu_source == "fallback":
        warnings.append(f"CU count not given: the {policy.arch} policy's fallback of {cus} CUs is used")
    max_splits = max(1, (seq_len_kv // block_kv) // policy.min_tiles_per_split)
    common = _Common(
        arch_policy=policy.arch,
        grid_x=grid_x,
        cu_count=cus,
        cu_source=cu_source,
        max_splits=max_splits,
        policy_fallback=bool(policy_fallback(arch)),
        warnings=tuple(warnings),
    )
    if grid_x == 0:
        return SplitDecision(1, "empty grid", **common)
    if seq_len_kv < policy.min_seq_len_kv:
        return SplitDecision(1, f"seq_len_kv {seq_len_kv} below the policy's minimum {policy.min_seq_len_kv}", **common)

    def occupancy_answer() -> OccupancyAnswer:
        return resolve_occupancy(
            occupancy=occupancy,
            kernel=kernel,
            block_size=block_size,
            dynamic_lds=dynamic_lds,
            hip=hip,
            recorded=recorded,
            arch=arch,
            what_if=what_if,
        )

    if not policy.occupancy_aware:
        target = policy.cu_oversub * cus
        occ = None
        aggressive = streaming_case(seq_len, seq_len_kv, num_heads, aggressive)
        if aggressive:
            if policy.streaming_lowh_residency:
                occ = occupancy_answer()
                common = _noting_default(common, occ)
                streaming = policy.streaming_lowh_residency * occ.blocks_per_cu * cus
            else:
                streaming = policy.streaming_lowh_cu_oversub * cus
            target = max(target, streaming)  # never below the conservative target
        if grid_x >= target:
            return SplitDecision(
                1,
                f"grid of {grid_x} blocks already reaches the target {target}",
                occupancy=occ,
                target=target,
                **common,
            )
        splits = min(max(_ceil_div(target, grid_x), 1), max_splits)
        return SplitDecision(
            splits,
            "fixed oversubscription" + (" (streaming low-head)" if aggressive else ""),
            occupancy=occ,
            target=target,
            **common,
        )
    occ = occupancy_answer()
    common = _noting_default(common, occ)
    effective = cus * occ.blocks_per_cu
    window = max(1, seq_len_kv // block_kv)
    splits = splits_by_wave_cost(grid_x, effective, window, max_splits, policy.block_overhead_tiles)
    return SplitDecision(
        splits,
        "wave-quantized cost over CUs x occupancy",
        occupancy=occ,
        effective_cus=effective,
        window_tiles=window,
        **common,
    )


def _noting_default(common: _Common, occ: OccupancyAnswer) -> _Common:
    """Add a warning when the occupancy is the conservative default rather than an answer."""
    if occ.source != "default":
        return common
    text = (
        f"occupancy unknown ({occ.detail}): AITER's conservative default of {occ.blocks_per_cu} blocks per CU is used"
    )
    return {**common, "warnings": (*common["warnings"], text)}
