"""Occupancy of kernels compiled by Triton's AMD backend.

A Triton AMD kernel declares no static LDS: all of its shared memory is passed at launch as
*dynamic* LDS (``metadata.shared``), and its launcher runs ``num_warps × warp_size`` threads per
workgroup. Reading the code object alone therefore misses both launch numbers; this module takes
them from the compiled kernel's metadata and hands them to :func:`amdocc.occupancy`::

    import amdocc.integrations.triton as at
    k = at.compile_offline(add_kernel, {"x": "*fp32", "n": "i32"}, {"BLOCK": 1024}, "gfx942",
                           num_warps=4)
    at.launch_of(k)                      # Launch(block_size=256, dynamic_lds=0)
    at.occupancy(k).blocks_per_cu        # HIP's answer for that launch
    at.occupancy(k, model="llvm").waves_per_simd   # equals the compiler's "; Occupancy:"

``compiled`` is what ``triton.compile`` (or a launch) returns, or any object with
``.asm["hsaco"]`` (code object bytes) and ``.metadata`` (attributes or a mapping) holding
``shared``, ``num_warps`` and ``warp_size`` (or ``target.warp_size``); ``name`` picks the kernel
when the code object holds several. Nothing is guessed: a missing or inconsistent value raises
:class:`amdocc.UsageError`. Triton itself is imported only by :func:`compile_offline`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..caches import cached
from ..errors import UsageError
from ..numbers import in_range

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..models.record import Occupancy

__all__ = ["Launch", "compile_offline", "kernel_of", "launch_of", "occupancy", "warp_size_of"]

_MISSING = object()


class Launch(NamedTuple):
    """How Triton's HIP launcher starts the kernel: threads per workgroup and dynamic LDS bytes."""

    block_size: int
    dynamic_lds: int


def _get(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """``obj.name`` or ``obj[name]`` (Triton's metadata is a namedtuple; its cache JSON a dict)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _metadata(compiled: Any) -> Any:
    meta = _get(compiled, "metadata", None)
    if meta is None:
        raise UsageError(f"{type(compiled).__name__} has no .metadata: not a compiled Triton kernel")
    return meta


def _count(meta: Any, name: str, *, minimum: int) -> int:
    value = _get(meta, name, None)
    if value is None:
        raise UsageError(f"Triton metadata has no {name!r}")
    if not in_range(value, minimum):
        raise UsageError(f"Triton metadata {name!r} is {value!r}, not an integer >= {minimum}")
    return value


def _hsaco(compiled: Any) -> bytes:
    asm = _get(compiled, "asm", None)
    if asm is None:
        raise UsageError(f"{type(compiled).__name__} has no .asm: not a compiled Triton kernel")
    try:
        data = asm["hsaco"]
    except (KeyError, TypeError):
        raise UsageError("compiled kernel has no asm['hsaco']: not compiled for the HIP backend") from None
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UsageError(f"asm['hsaco'] is a {type(data).__name__}, not bytes")
    return bytes(data)


@cached(maxsize=64)
def _kernels(hsaco: bytes) -> tuple[Kernel, ...]:
    from ..loader import load
    from . import shared

    return shared(k for co in load(hsaco) for k in co.kernels)


def warp_size_of(compiled: Any) -> int:
    """The wave size Triton's launcher multiplies ``num_warps`` by (``metadata.warp_size``)."""
    meta = _metadata(compiled)
    if _get(meta, "warp_size", None) is not None:
        return _count(meta, "warp_size", minimum=1)
    target = _get(meta, "target", None)
    if target is None:
        raise UsageError("Triton metadata has neither 'warp_size' nor 'target'")
    return _count(target, "warp_size", minimum=1)


def kernel_of(compiled: Any) -> Kernel:
    """The amdocc Kernel inside ``compiled.asm["hsaco"]`` (the one named ``metadata.name``)."""
    kernels = _kernels(_hsaco(compiled))
    name = _get(_metadata(compiled), "name", None)
    if name is not None:
        found = [k for k in kernels if name in (k.name, k.symbol)]
        if len(found) != 1:
            have = ", ".join(k.name for k in kernels) or "none"
            raise UsageError(f"the hsaco has {len(found)} kernels named {name!r} (kernels: {have})")
        return found[0]
    if len(kernels) != 1:
        raise UsageError(f"Triton metadata has no 'name' and the hsaco holds {len(kernels)} kernels")
    return kernels[0]


def launch_of(compiled: Any) -> Launch:
    """``(num_warps × warp_size, metadata.shared)``: the block size and dynamic LDS of a launch."""
    meta = _metadata(compiled)
    block = _count(meta, "num_warps", minimum=1) * warp_size_of(compiled)
    return Launch(block, _count(meta, "shared", minimum=0))


def occupancy(
    compiled: Any, model: str = "hip", *, block_size: int | None = None, dynamic_lds: int | None = None, **opts: Any
) -> Occupancy:
    """:func:`amdocc.occupancy` of a compiled Triton kernel, as Triton launches it.

    ``hip`` and ``hw``: the block size and dynamic LDS default to :func:`launch_of`. ``llvm``: they
    default to the compiler's own view (no block size, no dynamic LDS), whose ``waves_per_simd`` is
    the ``; Occupancy:`` of ``compiled.asm["amdgcn"]``; pass them to ask LLVM's rules about the
    launch instead. Other keywords (``target``, ``device``, ``profile``, ...) pass through.
    """
    from ..models import occupancy as _occupancy

    kernel = kernel_of(compiled)
    launch = launch_of(compiled)
    warp, wave = warp_size_of(compiled), kernel.resources.wavefront_size
    if wave is not None and wave != warp:
        raise UsageError(f"Triton metadata warp_size {warp} but the kernel {kernel.name} was compiled for wave{wave}")
    if model != "llvm":
        block_size = launch.block_size if block_size is None else block_size
        dynamic_lds = launch.dynamic_lds if dynamic_lds is None else dynamic_lds
    return _occupancy(kernel, block_size=block_size, dynamic_lds=dynamic_lds or 0, model=model, **opts)


def compile_offline(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None,
    arch: str,
    warp_size: int | None = None,
    **options: Any,
) -> Any:  # triton's CompiledKernel
    """``triton.compile`` for ``arch`` with no GPU (``fn`` is a ``@triton.jit`` function).

    ``signature`` maps argument names to Triton types (``"*fp16"``, ``"i32"``); ``constexprs``
    gives the ``tl.constexpr`` values; ``options`` are HIP backend options (``num_warps``,
    ``num_stages``, ``waves_per_eu``, ...). ``warp_size`` defaults to the wave size Triton's HIP
    backend uses on ``arch``: 64 through gfx9, 32 from gfx10 on.
    """
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as exc:
        from ..install_hint import install_hint

        raise UsageError(f"compile_offline needs triton ({install_hint('triton')}): {exc}") from None
    if warp_size is None:
        from ..targets import get_target

        warp_size = get_target(arch.removesuffix("-strict")).default_wave
    source = triton.compiler.ASTSource(fn, signature=dict(signature), constexprs=dict(constexprs or {}))
    return triton.compile(source, target=GPUTarget("hip", arch, warp_size), options=options)
