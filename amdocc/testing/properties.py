"""The property test against HIP, as a function: the one CI runs on the emulated device, and the
one ``python -m amdocc.testing`` runs against the runtime installed on a real GPU.

Each Hypothesis example draws a code object of 1..``kernels_per_object`` kernels for the oracle's
processor (:func:`~amdocc.testing.strategies.kernel_batches`), synthesizes it once with LLVM's
assembler and linker, loads it once, and asks ``queries_per_kernel`` questions of each kernel
(:func:`~amdocc.testing.strategies.queries`), every answer compared by
:func:`~amdocc.testing.compare.check_code_object`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ..errors import AmdoccError, ExitCode
from .compare import HipAnswers, Tally, check_code_object, profile_of
from .strategies import kernel_batches, queries


class PropertyFailure(AmdoccError, AssertionError):
    """amdocc and the runtime disagreed (the message lists the disagreements of the example). A
    verdict like a failing gate's, so its exit status is 1; an AssertionError too, so pytest
    reports it as a failed test."""

    exit_code = ExitCode.GATE_FAILED


def run_properties(
    oracle: HipAnswers,
    *,
    examples: int = 50,
    seed_value: int | None = None,
    profile: str | None = None,
    kernels_per_object: int = 4,
    queries_per_kernel: int = 40,
    strict: bool = True,
    tally: Tally | None = None,
    code_object_versions: tuple[int, ...] = (4, 5, 6),
    shrink: bool = False,
) -> Tally:
    """Run ``examples`` Hypothesis examples against ``oracle`` and return the tally.

    ``strict``: a disagreement fails the example (Hypothesis then shrinks it and raises
    :class:`PropertyFailure` naming the smallest kernel and query it found); otherwise the
    disagreements are only collected in the tally (a campaign). ``seed_value`` fixes
    Hypothesis's seed (replays a run). ``profile`` overrides the runtime's own release profile.
    ``shrink``: let Hypothesis look for a smaller failing example (it may take minutes, each
    step asking the runtime again); without it the first failing example is reported as drawn.
    ``code_object_versions``: the versions to draw (those the runtime loads).
    """
    tally = tally if tally is not None else Tally()
    name = profile_of(oracle, profile)
    lds = oracle.lds_bytes

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
        phases=[Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else []),
    )
    @given(
        batch=kernel_batches(
            oracle.processor, max_kernels=kernels_per_object, code_object_versions=code_object_versions, lds_bytes=lds
        ),
        data=st.data(),
    )
    def example(batch: list[Any], data: st.DataObject) -> None:
        asked = [
            data.draw(queries(spec, lds, min_size=queries_per_kernel, max_size=queries_per_kernel), label=spec.name)
            for spec in batch
        ]
        found = check_code_object(oracle, batch, asked, tally, profile=name)
        if found and strict:
            shown = "\n  ".join(str(d) for d in found[:10])
            raise PropertyFailure(f"{len(found)} disagreement(s) with the runtime:\n  {shown}")

    run = seed(seed_value)(example) if seed_value is not None else example
    run()
    return tally
