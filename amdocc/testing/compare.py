"""Compare amdocc with a HIP runtime, answer by answer, and count the comparisons.

A :class:`HipAnswers` is anything that loads a code object and answers HIP's queries about its
kernels: :class:`amdocc.testing.oracles.LiveHip` (the installed runtime, on a real GPU) or
:class:`amdocc.testing.oracles.EmulatedHip` (a real runtime library on the emulated HSA device).
For one kernel and one :class:`~amdocc.testing.strategies.Query` the checks are:

- ``occupancy``: hipModuleOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags] equals amdocc's
  hip model under the runtime's profile, error codes included (a model answer of
  "division-by-zero" means the runtime dies with SIGFPE: "crashed:SIGFPE");
- ``potential_block_size``: hipModuleOccupancyMaxPotentialBlockSize's (grid, block) equals
  :func:`amdocc.max_potential_block_size`'s ``hip_grid_size``/``hip_block_size``;
- ``attributes``: hipFuncGetAttribute's register count, static shared size, local (scratch)
  size and maximum threads per block equal the kernel's ``.vgpr_count``,
  ``.group_segment_fixed_size``, ``.private_segment_fixed_size`` and
  ``.max_flat_workgroup_size`` as amdocc read them;
- ``launch_block``: HIP's own header search (hipOccupancyMaxPotentialBlockSizeVariableSMem:
  from the limit, at most the kernel's maximum threads per block, down in wave steps, asking the
  runtime at each size) picks the block :func:`amdocc.max_potential_block_size` calls the one to
  launch, with the same workgroups per CU.

Every comparison is counted per (processor, runtime release, check) in a :class:`Tally`; every
disagreement is kept with what was asked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..targets import MAX_WORKGROUP_SIZE, get_target
from .strategies import Query
from .synth import SynthSpec, synthesize_many

CRASH = "crashed:SIGFPE"
CHECKS = ("occupancy", "potential_block_size", "attributes", "launch_block")
# hipFuncGetAttribute's answers and the kernel fields amdocc holds them in (docs/hip-occupancy.md §1:
# numRegs is .vgpr_count, sharedSizeBytes .group_segment_fixed_size, localSizeBytes
# .private_segment_fixed_size, maxThreadsPerBlock .max_flat_workgroup_size).
# Names are hipFunction_attribute's without the HIP_FUNC_ATTRIBUTE_ prefix.
ATTRIBUTES = {
    "NUM_REGS": "vgprs",
    "SHARED_SIZE_BYTES": "lds",
    "LOCAL_SIZE_BYTES": "scratch",
    "MAX_THREADS_PER_BLOCK": "max_flat_workgroup_size",
}

Answer = Any  # an int, a (grid, block) pair, a dict of attributes, or an error's name (str)


class HipAnswers(Protocol):
    """A HIP runtime to compare with (see :mod:`amdocc.testing.oracles`)."""

    release: str  # the runtime's ROCm release, e.g. "7.14"
    runtime_version: int  # hipRuntimeGetVersion()
    processor: str  # the device's processor, e.g. "gfx942"
    compute_units: int  # multiProcessorCount as HIP reports it
    lds_bytes: int  # the device's LDS (HIP's localMemSize_)
    runtime_wgp: bool  # whether the runtime runs in WGP mode
    max_threads_per_cu: int  # hipDeviceAttributeMaxThreadsPerMultiProcessor
    can_crash: bool  # True when a query that kills the runtime's process may be asked

    def load(self, image: bytes) -> Any: ...

    def unload(self, module: Any) -> None: ...

    def occupancy(self, module: Any, kernel: str, block: int, dynamic_lds: int, flags: int | None) -> int | str: ...

    def potential_block_size(
        self, module: Any, kernel: str, dynamic_lds: int, block_limit: int
    ) -> tuple[int, int] | str: ...

    def attributes(self, module: Any, kernel: str) -> dict[str, int] | str: ...


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One answer where amdocc and the runtime differ."""

    check: str
    processor: str
    release: str
    profile: str
    kernel: SynthSpec | str
    query: Query | None
    runtime: Answer
    amdocc: Answer

    def __str__(self) -> str:
        asked = f" {self.query}" if self.query is not None else ""
        return (
            f"{self.check} on {self.processor} (ROCm {self.release}, profile {self.profile}): {self.kernel}{asked}: "
            f"runtime {self.runtime!r}, amdocc {self.amdocc!r}"
        )


@dataclass
class Tally:
    """Comparisons per (processor, release, check), and the disagreements found."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    disagreements: list[Disagreement] = field(default_factory=list)
    skipped: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # asked nothing: would crash

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def per_runtime(self) -> dict[tuple[str, str], int]:
        out: Counter[tuple[str, str]] = Counter()
        for (processor, release, _), n in self.counts.items():
            out[processor, release] += n
        return dict(sorted(out.items()))

    def merge(self, other: Tally) -> None:
        self.counts.update(other.counts)
        self.skipped.update(other.skipped)
        self.disagreements.extend(other.disagreements)

    def table(self) -> str:
        """Comparisons per processor × runtime release and check, as text."""
        rows = sorted({(p, r) for p, r, _ in self.counts})
        width = max([len(c) for c in CHECKS] + [8])
        lines = ["processor  ROCm    " + "  ".join(c.rjust(width) for c in CHECKS) + "  " + "total".rjust(7)]
        for processor, release in rows:
            cells = [self.counts[processor, release, c] for c in CHECKS]
            lines.append(
                f"{processor:<9}  {release:<6}  "
                + "  ".join(str(n).rjust(width) for n in cells)
                + "  "
                + str(sum(cells)).rjust(7)
            )
        lines.append(f"all: {self.total} comparisons, {len(self.disagreements)} disagreements")
        if self.skipped:
            lines.append(f"not asked (the model says the runtime would die): {sum(self.skipped.values())}")
        return "\n".join(lines)


def profile_of(oracle: HipAnswers, profile: str | None = None) -> str:
    """The HIP profile to compare ``oracle`` with: ``profile``, else its runtime's own release."""
    from ..models.hip_profiles import get_profile, profile_for_runtime

    if profile is not None:
        return get_profile(profile).name
    return profile_for_runtime(oracle.runtime_version).profile.name


# -- what amdocc answers --------------------------------------------------------------------------


def _usage(kernel: Any, oracle: HipAnswers) -> Any:
    from ..models import usage_of

    return usage_of(kernel, oracle.processor)


def model_occupancy(kernel: Any, oracle: HipAnswers, profile: str, block: int, dynamic_lds: int) -> int | str:
    """amdocc's hip model, in the runtime's terms: blocks per CU, an error's name, or CRASH."""
    from ..models.hip import hip_occupancy

    occ = hip_occupancy(_usage(kernel, oracle), block, dynamic_lds, profile=profile, lds_bytes=oracle.lds_bytes)
    if occ.error == "division-by-zero":
        return CRASH
    if occ.error:
        return occ.error
    assert occ.blocks_per_cu is not None
    return occ.blocks_per_cu


def model_best_block(kernel: Any, oracle: HipAnswers, profile: str, dynamic_lds: int, block_limit: int) -> Any:
    """:func:`amdocc.max_potential_block_size` on the oracle's device."""
    from ..models.best_block import best_block_size

    return best_block_size(
        _usage(kernel, oracle),
        dynamic_lds,
        block_limit,
        profile=profile,
        compute_units=oracle.compute_units,
        runtime_wgp=oracle.runtime_wgp,
        lds_bytes=oracle.lds_bytes,
    )


def model_potential(kernel: Any, oracle: HipAnswers, profile: str, dynamic_lds: int, block_limit: int) -> Any:
    """hipModuleOccupancyMaxPotentialBlockSize as amdocc answers it: (grid, block), or an error."""
    answer = model_best_block(kernel, oracle, profile, dynamic_lds, block_limit)
    if answer.error == "division-by-zero":
        return CRASH
    if answer.error:
        return answer.error
    return (answer.hip_grid_size, answer.hip_block_size)


def model_attributes(kernel: Any) -> dict[str, int | None]:
    r = kernel.resources
    return {name: getattr(r, field_) for name, field_ in ATTRIBUTES.items()}


# -- what the runtime answers through HIP's own header search ---------------------------------------


def runtime_launch_block(
    ask: Callable[[int], int | str], limit: int, max_threads_per_block: int, wave: int, max_threads_per_cu: int
) -> tuple[int, int] | str:
    """hipOccupancyMaxPotentialBlockSizeVariableSMem's search (ROCm/HIP hip_runtime_api.h, as
    docs/hip-occupancy.md §3 describes it) over the runtime's answers ``ask(block)``: (block, blocks
    per CU), or the first error the runtime gave. ``max_threads_per_cu`` is the header's early stop
    (the device's hipDeviceAttributeMaxThreadsPerMultiProcessor); 0 searches every size."""
    limit = max_threads_per_block if limit <= 0 else min(limit, max_threads_per_block)
    best_threads, best_block, best_blocks = 0, 0, 0
    start = -(-limit // wave) * wave
    for bs in range(start, 0, -wave):
        check = min(limit, bs)
        n = ask(check)
        if isinstance(n, str):
            return n
        if check * n > best_threads:
            best_threads, best_block, best_blocks = check * n, check, n
            if best_threads == max_threads_per_cu:
                break
    return best_block, best_blocks


# -- one code object, many questions ---------------------------------------------------------------


class _Loaded:
    """A code object loaded into the oracle (an oracle whose process may die on a query keeps
    its modules usable: the emulator's client loads them again in the process it restarts)."""

    def __init__(self, oracle: HipAnswers, image: bytes) -> None:
        self.oracle, self.image = oracle, image
        self.module = oracle.load(image)

    def after(self, answer: Any) -> Any:
        return answer

    def close(self) -> None:
        self.oracle.unload(self.module)


def check_code_object(
    oracle: HipAnswers,
    specs: Sequence[SynthSpec],
    questions: Sequence[Sequence[Query]],
    tally: Tally,
    *,
    profile: str | None = None,
    image: bytes | None = None,
    crashes_per_kernel: int = 1,
) -> list[Disagreement]:
    """Synthesize ``specs`` into one code object (or take ``image``), load it once, ask every
    query of ``questions[i]`` about kernel ``specs[i]``, and compare each answer with amdocc's.
    A query the model says kills the runtime's process is asked at most ``crashes_per_kernel``
    times per kernel and check (each costs a new process), and never of an oracle that cannot
    survive it. Returns the disagreements found here (also added to ``tally``)."""
    from ..loader import load

    name = profile_of(oracle, profile)
    image = synthesize_many(specs) if image is None else image
    (co,) = load(image)
    found: list[Disagreement] = []
    release, processor = oracle.release, oracle.processor

    def compare(check: str, spec: SynthSpec, query: Query | None, runtime: Answer, model: Answer) -> None:
        tally.counts[processor, release, check] += 1
        if runtime != model:
            found.append(Disagreement(check, processor, release, name, spec, query, runtime, model))

    crashes: Counter[tuple[str, str]] = Counter()

    def would_crash(check: str, model: Answer, kernel: str) -> bool:
        """Whether not to ask: the model says the process dies, and the oracle cannot survive
        that, or has already died this way ``crashes_per_kernel`` times for this kernel."""
        if model != CRASH:
            return False
        if oracle.can_crash and crashes[kernel, check] < crashes_per_kernel:
            crashes[kernel, check] += 1
            return False
        tally.skipped[processor, release, check] += 1
        return True

    loaded = _Loaded(oracle, image)
    try:
        for spec, asked in zip(specs, questions, strict=True):
            kernel = co.kernel(spec.name)
            attrs = oracle.attributes(loaded.module, spec.name)
            expected = model_attributes(kernel)
            got = {k: attrs.get(k) for k in expected} if isinstance(attrs, dict) else attrs
            compare("attributes", spec, None, got, expected)
            for q in asked:
                model = model_occupancy(kernel, oracle, name, q.block, q.dynamic_lds)
                if not would_crash("occupancy", model, spec.name):
                    runtime = loaded.after(oracle.occupancy(loaded.module, spec.name, q.block, q.dynamic_lds, q.flags))
                    compare("occupancy", spec, q, runtime, model)
                model = model_potential(kernel, oracle, name, q.dynamic_lds, q.block_limit)
                if not would_crash("potential_block_size", model, spec.name):
                    runtime = loaded.after(
                        oracle.potential_block_size(loaded.module, spec.name, q.dynamic_lds, q.block_limit)
                    )
                    compare("potential_block_size", spec, q, _pair(runtime), model)
            if asked:
                found += _check_launch(oracle, loaded, kernel, spec, asked[0], name, tally, compare, would_crash)
    finally:
        loaded.close()
    tally.disagreements.extend(found)
    return found


def _pair(answer: Any) -> Any:
    return tuple(answer) if isinstance(answer, (list, tuple)) else answer


def _check_launch(
    oracle: HipAnswers,
    loaded: _Loaded,
    kernel: Any,
    spec: SynthSpec,
    q: Query,
    profile: str,
    tally: Tally,
    compare: Callable[[str, SynthSpec, Query | None, Answer, Answer], None],
    would_crash: Callable[[str, Answer, str], bool],
) -> list[Disagreement]:
    """The block to launch against HIP's header search over the runtime's answers."""
    answer = model_best_block(kernel, oracle, profile, q.dynamic_lds, max(q.block_limit, 0))
    if answer.error:
        return []  # the occupancy checks already compared the error at every block size asked
    t = get_target(oracle.processor)
    wave = spec.wave or t.default_wave
    max_threads = spec.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
    # Without the header's early stop: it stops once a block holds hipDeviceAttributeMaxThreadsPerMultiProcessor
    # threads, which counts wave32 slots on RDNA (2048 on gfx1100), so for a wave64 kernel in WGP mode
    # it can stop short of the block that holds the most (measured: gfx1100, .vgpr_count 81, wave64,
    # 10,923 B dynamic LDS, limit 512: the header keeps 512 x 4, 448 x 5 holds more). amdocc's
    # block to launch is the block that holds the most; the runtime's answers are the oracle for it.
    runtime = runtime_launch_block(
        lambda block: loaded.after(oracle.occupancy(loaded.module, spec.name, block, q.dynamic_lds, None)),
        max(q.block_limit, 0),
        max_threads,
        wave,
        0,
    )
    compare("launch_block", spec, q, runtime, (answer.block_size, answer.blocks_per_cu))
    return []
