"""Hypothesis strategies for property tests against HIP: kernels with chosen resources, and the
questions to ask of them, edges included.

Needs Hypothesis (``pip install hypothesis``, in amdocc's ``test`` extra); importing
:mod:`amdocc.testing` alone does not.

- :func:`kernel_specs` draws a :class:`~amdocc.testing.synth.SynthSpec` for one processor: VGPR,
  AGPR and SGPR counts (near allocation-granule edges, and now and then more than a wave can
  address, which the metadata note may claim and HIP must refuse), static LDS (0, the device's
  whole LDS, or anything between), wave size, WGP or CU mode, ``.max_flat_workgroup_size`` and
  code-object versions 4 to 6.
- :func:`kernel_batches` draws several kernels for one code object (one assembler run).
- :func:`block_sizes` and :func:`dynamic_lds_sizes` draw launch shapes with the edges HIP's
  arithmetic turns on: not a multiple of the wave, one wave, 1024 and above it, 0 and negative;
  LDS that fits the device exactly (for 1..8 workgroups) or overflows it by one byte.
- :func:`queries` draws a list of (block, dynamic LDS, flags) for one kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from ..targets import MAX_WORKGROUP_SIZE, get_target
from .synth import CODE_OBJECT_VERSIONS, SynthSpec

__all__ = [
    "Query",
    "block_sizes",
    "dynamic_lds_sizes",
    "kernel_batches",
    "kernel_specs",
    "queries",
]


@dataclass(frozen=True, slots=True)
class Query:
    """One question about a loaded kernel: hipModuleOccupancyMaxActiveBlocksPerMultiprocessor at
    ``block``/``dynamic_lds`` (through its WithFlags variant when ``flags`` is not None), and
    hipModuleOccupancyMaxPotentialBlockSize at ``dynamic_lds`` with ``block_limit``."""

    block: int
    dynamic_lds: int
    flags: int | None = None
    block_limit: int = 0


def _near_multiples(granules: tuple[int, ...], top: int) -> st.SearchStrategy[int]:
    """Counts at, just below and just above multiples of the granules (where rounding turns)."""
    return st.builds(
        lambda g, k, d: min(max(g * k + d, 0), top),
        st.sampled_from(granules),
        st.integers(0, max(top // min(granules), 1)),
        st.sampled_from((-1, 0, 1)),
    )


@st.composite
def kernel_specs(
    draw: st.DrawFn,
    processor: str,
    *,
    name: str = "synth",
    code_object_versions: tuple[int, ...] = CODE_OBJECT_VERSIONS,
    lds_bytes: int | None = None,
    overclaim: bool = True,
) -> SynthSpec:
    """A kernel for ``processor`` whose metadata states drawn resources.

    ``lds_bytes`` is the device's LDS (default: the targets table's LDS per CU), which static LDS
    never exceeds; ``overclaim`` lets the note claim (rarely) more VGPRs or SGPRs than one wave
    can address, as a hand-written note may: HIP reads the note and must then fail or refuse.
    """
    t = get_target(processor)
    wave = draw(st.sampled_from(t.wave_sizes))
    wgp = draw(st.booleans()) if t.wgp else None
    version = draw(st.sampled_from(code_object_versions))
    addressable = t.addressable_vgprs
    granules = tuple(sorted({t.vgpr_alloc_granule[w] for w in t.wave_sizes} | {4, 8, 16, 24}))
    if t.register_file == "unified":
        agprs = draw(st.one_of(st.just(0), st.integers(1, t.agprs // 4).map(lambda n: n * 4)))
        arch_top = min(256, addressable - agprs)
        arch = draw(st.integers(1, arch_top // 4)) * 4 if agprs else draw(_near_multiples(granules, arch_top))
        total = arch + agprs
    else:
        agprs = 0
        top = min(addressable, t.vgprs[wave])
        total = draw(st.one_of(_near_multiples(granules, top), st.integers(0, top)))
    if overclaim and draw(st.integers(0, 24)) == 0:  # the note claims more than a wave can address
        agprs = 0
        total = draw(st.integers(addressable + 1, max(t.vgprs.values()) * 2 + 8))
    sgpr_top = t.addressable_sgprs + 6  # with VCC, FLAT_SCRATCH and XNACK extras
    sgprs = draw(st.one_of(_near_multiples((16,), sgpr_top), st.integers(0, sgpr_top)))
    if overclaim and t.sgprs_per_simd and draw(st.integers(0, 48)) == 0:
        sgprs = draw(st.integers(sgpr_top, t.sgprs_per_simd + 32))
    lds_top = min(t.lds_per_workgroup, lds_bytes if lds_bytes is not None else t.lds_per_cu)
    lds = draw(
        st.one_of(
            st.just(0),
            st.just(lds_top),
            st.integers(1, 16).map(lambda n: lds_top // n),
            st.integers(0, lds_top),
        )
    )
    max_flat = draw(
        st.one_of(
            st.sampled_from((MAX_WORKGROUP_SIZE, 256)),
            st.integers(1, MAX_WORKGROUP_SIZE // wave).map(lambda n: n * wave),
            st.integers(1, MAX_WORKGROUP_SIZE),
        )
    )
    return SynthSpec(
        processor,
        total,
        agprs,
        sgprs,
        lds,
        wave=wave,
        wgp=wgp,
        max_flat_workgroup_size=max_flat,
        name=name,
        code_object_version=version,
    )


@st.composite
def kernel_batches(
    draw: st.DrawFn,
    processor: str,
    *,
    max_kernels: int = 4,
    code_object_versions: tuple[int, ...] = CODE_OBJECT_VERSIONS,
    lds_bytes: int | None = None,
    overclaim: bool = True,
) -> list[SynthSpec]:
    """1..``max_kernels`` kernels for one code object: one processor and code-object version."""
    version = draw(st.sampled_from(code_object_versions))
    count = draw(st.integers(1, max_kernels))
    return [
        draw(
            kernel_specs(
                processor, name=f"k{i}", code_object_versions=(version,), lds_bytes=lds_bytes, overclaim=overclaim
            )
        )
        for i in range(count)
    ]


def block_sizes(wave: int, max_flat_workgroup_size: int = MAX_WORKGROUP_SIZE) -> st.SearchStrategy[int]:
    """Block sizes, edges first: wave multiples and one off them, 1, 1024 and 1025, the kernel's
    .max_flat_workgroup_size and one above, 0 and negative, anything in 1..1024."""
    return st.one_of(
        st.integers(1, MAX_WORKGROUP_SIZE // wave).map(lambda n: n * wave),
        st.builds(lambda n, d: n * wave + d, st.integers(1, MAX_WORKGROUP_SIZE // wave), st.sampled_from((-1, 1))),
        st.sampled_from(
            (1, wave, MAX_WORKGROUP_SIZE, MAX_WORKGROUP_SIZE + 1, max_flat_workgroup_size, max_flat_workgroup_size + 1)
        ),
        st.sampled_from((0, -1, -wave, 4096)),
        st.integers(1, MAX_WORKGROUP_SIZE),
    )


def dynamic_lds_sizes(static_lds: int, lds_bytes: int) -> st.SearchStrategy[int]:
    """Dynamic LDS: none; so that static + dynamic fills the device's ``lds_bytes`` exactly for
    1..8 workgroups, or overflows that by one byte; and anything up to twice the device."""
    fits = [max(lds_bytes // n - static_lds, 0) for n in range(1, 9)]
    return st.one_of(
        st.just(0),
        st.sampled_from(fits),
        st.sampled_from(fits).map(lambda d: d + 1),
        st.integers(0, 2 * lds_bytes),
    )


@st.composite
def queries(
    draw: st.DrawFn, spec: SynthSpec, lds_bytes: int | None = None, *, min_size: int = 1, max_size: int = 40
) -> list[Query]:
    """Questions about the kernel ``spec`` describes, on a device with ``lds_bytes`` of LDS
    (default: the targets table's LDS per CU): blocks, dynamic LDS, flags (None: the plain entry
    point; 0 hipOccupancyDefault; 1 hipOccupancyDisableCachingOverride) and block limits."""
    t = get_target(spec.target)
    wave = spec.wave or t.default_wave
    device_lds = t.lds_per_cu if lds_bytes is None else lds_bytes
    one = st.builds(
        Query,
        block_sizes(wave, spec.max_flat_workgroup_size),
        dynamic_lds_sizes(spec.lds, device_lds),
        st.sampled_from((None, 0, 1)),
        st.one_of(st.just(0), block_sizes(wave, spec.max_flat_workgroup_size)),
    )
    return draw(st.lists(one, min_size=min_size, max_size=max_size))
