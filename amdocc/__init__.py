"""amdocc: read AMD GPU code objects and compute kernel resources and occupancy, offline.

    >>> import amdocc
    >>> cos = amdocc.load("kernels.hsaco")
    >>> cos[0].kernels[0].resources.vgprs

Importing the package is cheap: submodules (CLI, tables, HIP) load on first use.
"""
from __future__ import annotations

from .errors import AmdoccError, FormatError, LimitError, UnknownTargetError, UsageError

__version__ = "0.1.0"
__all__ = ["AmdoccError", "FormatError", "LimitError", "UnknownTargetError", "UsageError",
           "__version__", "iter_load", "load", "max_blocks_per_cu", "occupancy"]


def load(source, *, strict: bool = True, limits=None):
    """Every code object in ``source``: a path, a directory, "-" for stdin, or bytes.

    Returns a list of CodeObject (each with ``.kernels``) that also carries ``.skipped`` and
    ``.failed``. See :func:`amdocc.loader.load`.
    """
    from .loader import load as _load
    from .containers import DEFAULT_LIMITS

    return _load(source, strict=strict, limits=limits or DEFAULT_LIMITS)


def iter_load(source, limits=None):
    """Stream CodeObject, Skipped and Failed items from ``source`` in file order."""
    from .loader import iter_load as _iter_load
    from .containers import DEFAULT_LIMITS

    return _iter_load(source, limits or DEFAULT_LIMITS)


def occupancy(kernel_or_resources, *, target=None, device=None, block_size=None, dynamic_lds=0,
              model="hip", **options):
    """How many workgroups fit on a CU, which resource limits it, and what to shed for one more.

    See :func:`amdocc.models.occupancy`; models are "hip" (default), "llvm" and "hw".
    """
    global _occupancy
    if _occupancy is None:
        from .models import occupancy as _occupancy   # first call only: keeps `import amdocc` light
    return _occupancy(kernel_or_resources, target=target, device=device, block_size=block_size,
                      dynamic_lds=dynamic_lds, model=model, **options)


_occupancy = None


def max_blocks_per_cu(code_object_or_kernel, block_size, dynamic_lds=0, *, stream=None, device=None, **kwargs):
    """Workgroups per CU: HIP's answer when the runtime is usable and the stream is not capturing,
    amdocc's static model otherwise; an int carrying ``.source`` ("hip" or "model").

    The drop-in for FlyDSL's ``CompiledFunction.max_blocks_per_cu()``; see :mod:`amdocc.runtime`.
    """
    from .runtime import max_blocks_per_cu as _max_blocks_per_cu

    return _max_blocks_per_cu(code_object_or_kernel, block_size, dynamic_lds, stream=stream, device=device, **kwargs)


def samples_path():
    """The path of the code object shipped with amdocc (see ``amdocc sample``)."""
    from .samples import path

    return path()
