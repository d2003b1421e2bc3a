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
           "__version__", "iter_load", "load"]


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
