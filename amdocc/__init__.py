"""amdocc: read AMD GPU code objects and compute kernel resources and occupancy, offline.

No GPU and no launch: amdocc reads the code object (a .co/.hsaco, an offload bundle, a host
.so/.dll with embedded device code) and answers what each kernel uses and how many of its
workgroups fit on a CU, with the limiting resource and what to shed for one more.

Main entry points:
    load(source)                  -> [CodeObject]: every code object in a file, directory, "-" or bytes
    CodeObject.kernels            -> [Kernel]; CodeObject.kernel(name) looks one up by name or symbol
    Kernel.resources              -> Resources: VGPRs, AGPRs, SGPRs, LDS, scratch, wave size (used
                                     from metadata, allocated from the descriptor)
    occupancy(kernel, block_size=256, dynamic_lds=0, model="hip")
                                  -> Occupancy: blocks_per_cu, waves_per_simd, occupancy_fraction,
                                     limiter, limits, warnings; .as_dict() is the JSON record
    next_step(occ)                -> what to shed for one more workgroup (the JSON's next_step)
    occupancy({"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942", block_size=256)
                                  -> the same from numbers that mean what the metadata note means
    max_blocks_per_cu(kernel, 256, dynamic_lds=0, stream=None)
                                  -> int: HIP's answer when a GPU runtime can be asked, else the model's
    max_potential_block_size(kernel, dynamic_lds=0, block_limit=0, device="MI300X")
                                  -> BlockSizeAnswer: hipOccupancyMaxPotentialBlockSize's block and
                                     grid (labelled hip_*), and the block to launch, which respects
                                     .max_flat_workgroup_size (HIP's does not)
    iter_load(source)             -> the same code objects as a stream, with what was skipped or failed
    samples_path()                -> a code object shipped with amdocc, to try things on

Example (16 KiB of static LDS on gfx1100: 65536 // 16384 = 4 workgroups per WGP; five need
at most 65536 // 5 = 13107 bytes):
    >>> import amdocc
    >>> co = amdocc.load(amdocc.samples_path())[0]
    >>> co.processor
    'gfx1100'
    >>> k = co.kernel("_Z9saxpy_ldsfPKfPfi")
    >>> occ = amdocc.occupancy(k, block_size=256)
    >>> occ.blocks_per_cu, occ.per_wgp, occ.limiter, amdocc.next_step(occ)["shed"]
    (4, True, 'lds', {'lds': 3277})

Models: "hip" (default) is what hipModuleOccupancyMaxActiveBlocksPerMultiprocessor returns, for
a named ROCm release (profile=; default rocm-7.14); "llvm" is what the compiler that built the
kernel prints as '; Occupancy:' (its rule set: an LLVM release, an AMD fork or Triton's LLVM, as
the code object's producer names it; llvm_version= chooses another); "hw" is the best physical
estimate from what the descriptor allocates.

Errors: every error amdocc raises on bad input or bad arguments derives from AmdoccError
(FormatError for bytes that break their format, LimitError past a safety bound,
UnknownTargetError for a processor, device or profile the tables do not know, UsageError for
arguments that are wrong or inconsistent, such as load(None); TableError for a bad table of
tables/); its message is one line, and its exit_code is the status the CLI gives it.

Environment: AMDOCC_MAX_DECOMPRESSED, AMDOCC_MAX_DEPTH, AMDOCC_MAX_ENTRIES,
AMDOCC_MMAP_THRESHOLD and AMDOCC_MAX_ARCHIVE_BYTES change the safety bounds of load and
iter_load (containers.Limits.from_env(), read at each call; a bad value is a UsageError naming
the variable). docs/cli-contract.md lists every variable.

Importing the package is cheap: submodules (CLI, tables, HIP) load on first use.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .errors import AmdoccError, FormatError, LimitError, UnknownTargetError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from .codeobject.model import CodeObject, Kernel
    from .containers.model import Failed, Limits, Skipped, Source
    from .devices import Device
    from .loader import Loaded
    from .models import occupancy as occupancy  # (at run time: _LAZY, on first access)
    from .models.best_block import BlockSizeAnswer
    from .models.record import Occupancy
    from .models.usage import KernelUsage
    from .runtime import max_blocks_per_cu

__version__ = "0.1.0"
__all__ = [
    "AmdoccError",
    "CodeObject",
    "Finding",
    "FormatError",
    "Kernel",
    "LimitError",
    "Occupancy",
    "Resources",
    "UnknownTargetError",
    "UsageError",
    "__version__",
    "iter_load",
    "load",
    "max_blocks_per_cu",
    "max_potential_block_size",
    "next_step",
    "occupancy",
    "samples_path",
]

# Result types and the runtime's entry point, imported on first access so that `import amdocc`
# stays light.
_LAZY = {
    "CodeObject": "codeobject.model",
    "Kernel": "codeobject.model",
    "Resources": "codeobject.model",
    "Finding": "codeobject.model",
    "Occupancy": "models.record",
    "max_blocks_per_cu": "runtime",
    "occupancy": "models",  # amdocc.occupancy is amdocc.models.occupancy, one function
}


def __getattr__(name: str) -> Any:
    if name == "app":  # the operations (amdocc.app.census(...)), loaded on first use
        import importlib

        return importlib.import_module(".app", __name__)
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'amdocc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def load(source: Source, *, strict: bool = True, limits: Limits | None = None) -> Loaded:
    """Every code object in ``source``.

    Args:
        source: a path (file or directory, searched recursively), "-" for standard input, or
            bytes. Any container amdocc reads: bare ELF, offload bundles (compressed too), host
            .so/executables, Windows .dll, .llvm.offloading objects.
        strict: if True (default), the first unreadable part raises; if False, unreadable parts
            are listed in ``.failed`` and the rest is still returned, a whole file that is no
            code object or container included (a text file named ``x.co``).
        limits: safety bounds (amdocc.containers.Limits); default: ``Limits.from_env()``, the
            built-in bounds with each AMDOCC_* variable that is set (read at this call).

    Returns:
        A list of :class:`CodeObject` (each with ``.kernels``) that also carries ``.skipped``
        (files or entries that are not AMDGPU code) and ``.failed`` (what could not be read).

    Raises:
        UsageError: ``source`` is not a path, "-" or bytes (None, a number), ``strict`` is not a
            bool, or an AMDOCC_* bound is set to a value that is not a whole number >= 0.
        AmdoccError: the source cannot be opened; when ``strict``, also a source that is not a
            code object or container at all, or any part that cannot be read (FormatError, or
            LimitError past a safety bound).
    """
    from .loader import load as _load

    return _load(source, strict=strict, limits=limits)


def iter_load(source: Source, limits: Limits | None = None) -> Iterator[CodeObject | Skipped | Failed]:
    """Stream what ``source`` holds, in file order, without keeping it all in memory.

    Args:
        source: as for :func:`load`.
        limits: as for :func:`load`.

    Returns:
        An iterator of :class:`CodeObject`, ``amdocc.containers.Skipped`` and
        ``amdocc.containers.Failed`` items (a failure is yielded, not raised).

    Raises:
        UsageError: as for :func:`load`.
        AmdoccError: the source itself cannot be opened.
    """
    from .loader import iter_load as _iter_load

    return _iter_load(source, limits)


def next_step(occ: Occupancy) -> dict[str, Any] | None:
    """What to shed for one more workgroup (or wave): the ``next_step`` of the JSON record.

    Args:
        occ: a record made by :func:`occupancy` (it carries how it was asked).

    Returns:
        ``{"gain": value after the cut, "unit": "blocks_per_cu" or "waves_per_simd",
        "shed": {limiter: amount}}`` (VGPRs/SGPRs per work-item, bytes of LDS: static and
        dynamic together), or None when no kernel resource can help (a cap such as wave
        slots or the block size binds) or there is no answer. Computed on first call by
        bisection over the same model and inputs (about 0.2 ms), then cached.

    Raises:
        UsageError: the record was not made by :func:`occupancy`.
    """
    from .models.nextstep import next_step as _next_step

    return _next_step(occ)


def max_potential_block_size(
    kernel_or_resources: Kernel | KernelUsage | dict[str, Any],
    dynamic_lds: int = 0,
    block_limit: int = 0,
    *,
    target: str | None = None,
    device: str | Device | None = None,
    profile: str | None = None,
    compute_units: int | None = None,
    what_if: bool = False,
) -> BlockSizeAnswer:
    """The best block size: HIP's answer, and the block to launch, both labelled.

    ``hip_block_size``/``hip_grid_size`` are what hipOccupancyMaxPotentialBlockSize
    (hipModuleOccupancyMaxPotentialBlockSize) returns under the HIP ``profile``: no search,
    ``min(threads one CU holds, block_limit or 1024 rounded up to a wave)``; LDS caps only the
    grid, and .max_flat_workgroup_size is ignored. ``block_size`` is the block to launch: the
    most resident threads per CU (largest on ties) among sizes up to the limit and the kernel's
    .max_flat_workgroup_size, as HIP's header template hipOccupancyMaxPotentialBlockSizeVariableSMem
    searches; ``blocks_per_cu`` and ``min_grid_size`` go with it.

    Args:
        kernel_or_resources: as for :func:`occupancy`.
        dynamic_lds: dynamic LDS bytes per workgroup.
        block_limit: HIP's blockSizeLimit (0: none).
        target: the processor to evaluate on (required for a dict, unless ``device``).
        device: a product from tables/devices.toml: its processor, its LDS, and the CU count
            HIP reports for it (halved on RDNA, whose runtime counts WGPs), for the grid sizes.
        profile: the HIP runtime profile (default: the newest release a runtime confirmed).
        compute_units: multiProcessorCount as HIP reports it, instead of the device's.
        what_if: evaluate a kernel on a processor its code object cannot run on, labelled.

    Returns:
        A :class:`amdocc.models.best_block.BlockSizeAnswer`; ``.as_dict()`` is its JSON record.

    Raises:
        UsageError: bad arguments; UnknownTargetError: an unknown target, device or profile.
    """
    from .models.best_block import potential_block_size

    return potential_block_size(
        kernel_or_resources,
        dynamic_lds,
        block_limit,
        target=target,
        device=device,
        profile=profile,
        compute_units=compute_units,
        what_if=what_if,
    )


def samples_path() -> Path:
    """The code object shipped with amdocc (the path ``amdocc sample`` prints).

    Returns:
        A pathlib.Path to an offload bundle with one code object each for gfx90a, gfx942,
        gfx950, gfx1100 and gfx1201 (a saxpy kernel with LDS and a register-heavy kernel each).

    Raises:
        Nothing.
    """
    from .samples import path

    return path()
