"""The best block size: what HIP's ``hipOccupancyMaxPotentialBlockSize`` answers, and what to launch.

Two answers, kept apart and labelled (docs/hip-occupancy.md §3):

- ``hip``: what ``hipOccupancyMaxPotentialBlockSize`` / ``hipModuleOccupancyMaxPotentialBlockSize``
  return under a named runtime profile (:func:`.hip.max_potential_block_size`). The C API does not
  search: its block is ``min(aluThreads, alignUp(limit or 1024, wave))``. It ignores LDS for the
  block (LDS caps only the grid, which may then be 0) and ignores the kernel's
  ``.max_flat_workgroup_size``, so its block may be one the kernel cannot be launched with.
- ``launch``: the block a user should launch: among the sizes from the limit (at most the
  kernel's ``.max_flat_workgroup_size``) down to one wave, in wave steps, the one with the most
  resident threads per CU (``block × blocks_per_cu``), the largest on ties. This is the search of
  HIP's header template ``hipOccupancyMaxPotentialBlockSizeVariableSMem`` with a constant dynamic
  LDS, evaluated with the same profile's occupancy answers (:func:`.hip.max_potential_block_size_search`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..targets import MAX_WORKGROUP_SIZE
from .hip import hip_occupancy, max_potential_block_size, max_potential_block_size_search
from .hip_profiles import get_profile

if TYPE_CHECKING:
    from ..devices import Device
    from .usage import KernelUsage

HIP_API = "hipModuleOccupancyMaxPotentialBlockSize"
LAUNCH_RULE = (
    "the most resident threads per CU (block x blocks_per_cu), largest block on ties, searched "
    "from the limit (at most .max_flat_workgroup_size) down in wave steps, as "
    "hipOccupancyMaxPotentialBlockSizeVariableSMem searches"
)


@dataclass(frozen=True, slots=True)
class BlockSizeAnswer:
    """HIP's potential block size and the block to launch, for one kernel under one profile.

    Attributes:
        processor: where it was evaluated; profile: the HIP runtime profile reproduced.
        dynamic_lds, block_limit: as asked (a limit of 0 means none: 1024 for HIP, the kernel's
            .max_flat_workgroup_size for the launch block).
        max_flat_workgroup_size: the kernel's (None when the note lacks it: then 1024).
        compute_units: the CU count HIP reports (multiProcessorCount: WGPs on RDNA in a
            WGP-mode runtime); None when neither a device nor a count was given, and then the
            grid sizes are None.
        hip_block_size, hip_grid_size: hipModuleOccupancyMaxPotentialBlockSize's *blockSize and
            *gridSize. The block may exceed .max_flat_workgroup_size and may not fit the LDS.
        block_size: the block to launch (0 when not even one wave's worth fits, e.g. LDS);
            blocks_per_cu: workgroups resident per CU (per WGP where ``per_wgp``) at that size;
            min_grid_size: blocks_per_cu × compute_units.
        error: HIP's error or the model's refusal (then the sizes are None); warnings: notes.
    """

    processor: str
    profile: str
    dynamic_lds: int
    block_limit: int
    max_flat_workgroup_size: int | None
    compute_units: int | None
    hip_block_size: int | None
    hip_grid_size: int | None
    block_size: int | None
    blocks_per_cu: int | None
    min_grid_size: int | None
    per_wgp: bool
    error: str | None
    warnings: tuple[str, ...]

    @property
    def hip_exceeds_max_flat_workgroup_size(self) -> bool:
        """Whether HIP's block is larger than the kernel may be launched with."""
        limit = self.max_flat_workgroup_size or MAX_WORKGROUP_SIZE
        return self.hip_block_size is not None and self.hip_block_size > limit

    def as_dict(self) -> dict[str, Any]:
        """The JSON record: HIP's answer under "hip", the block to launch under "launch"."""
        return {
            "target": self.processor,
            "model": "hip",
            "profile": self.profile,
            "dynamic_lds": self.dynamic_lds,
            "block_limit": self.block_limit,
            "max_flat_workgroup_size": self.max_flat_workgroup_size,
            "compute_units": self.compute_units,
            "hip": {
                "api": HIP_API,
                "block_size": self.hip_block_size,
                "grid_size": self.hip_grid_size,
                "exceeds_max_flat_workgroup_size": self.hip_exceeds_max_flat_workgroup_size,
            },
            "launch": {
                "rule": LAUNCH_RULE,
                "block_size": self.block_size,
                "blocks_per_cu": self.blocks_per_cu,
                "per_wgp": self.per_wgp,
                "min_grid_size": self.min_grid_size,
            },
            "error": self.error,
            "warnings": list(self.warnings),
        }


def hip_compute_units(device: Device, runtime_wgp: bool) -> int:
    """multiProcessorCount as HIP reports it for ``device``: its CUs, halved (WGPs) when the
    runtime runs in WGP mode (docs/hip-occupancy.md §1, maxComputeUnits_; tables/devices.toml)."""
    return device.compute_units // 2 if runtime_wgp else device.compute_units


def best_block_size(
    usage: KernelUsage,
    dynamic_lds: int = 0,
    block_limit: int = 0,
    *,
    profile: str | None = None,
    device: Device | None = None,
    compute_units: int | None = None,
    runtime_wgp: bool | None = None,
    lds_bytes: int | None = None,
) -> BlockSizeAnswer:
    """HIP's potential block size and the block to launch (see the module's docstring).

    ``compute_units`` is multiProcessorCount as HIP reports it; by default the device's (halved
    on RDNA in a WGP-mode runtime). ``runtime_wgp``: whether the runtime runs in WGP mode
    (default: where the processor has it, as GPU_ENABLE_WGP_MODE defaults). ``lds_bytes``: the
    device's LDS when no ``device`` gives it (default: the targets table's). ``block_limit`` 0
    (or, for HIP, anything outside 1..1024) means no limit.
    """
    for name, value in (("dynamic_lds", dynamic_lds), ("block_limit", block_limit)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"{name} must be a whole number, not {value!r}")
    if dynamic_lds < 0:
        raise UsageError("dynamic LDS cannot be negative")
    if compute_units is not None and (
        isinstance(compute_units, bool) or not isinstance(compute_units, int) or compute_units < 1
    ):
        raise UsageError(f"compute_units must be a whole number >= 1, not {compute_units!r}")
    p = get_profile(profile)
    t = usage.target
    wgp_runtime = t.wgp if runtime_wgp is None else runtime_wgp
    if wgp_runtime and not t.wgp:
        raise UsageError(f"{t.name} has no WGP mode, so no runtime runs it in WGP mode")
    cus = compute_units if compute_units is not None else (hip_compute_units(device, wgp_runtime) if device else None)
    if device is not None:
        lds_bytes = device.lds
    hip = max_potential_block_size(
        usage,
        dynamic_lds,
        block_limit,
        compute_units=cus or 0,
        runtime_wgp=wgp_runtime,
        profile=p.name,
        lds_bytes=lds_bytes,
    )
    common: dict[str, Any] = dict(
        processor=t.name,
        profile=p.name,
        dynamic_lds=dynamic_lds,
        block_limit=block_limit,
        max_flat_workgroup_size=usage.max_flat_workgroup_size,
        compute_units=cus,
    )
    inferred = (p.inferred,) if p.inferred else ()
    if hip["error"]:
        return BlockSizeAnswer(
            **common,
            hip_block_size=None,
            hip_grid_size=None,
            block_size=None,
            blocks_per_cu=None,
            min_grid_size=None,
            per_wgp=False,
            error=str(hip["error"]),
            warnings=(*inferred, f"HIP answers {hip['error']} for this kernel (see amdocc occupancy for why)"),
        )
    # The launch search never asks above .max_flat_workgroup_size, and a block limit the C API
    # would take as "none" (negative) is none for it too.
    launch = max_potential_block_size_search(
        usage,
        lambda block: dynamic_lds,
        max(block_limit, 0),
        compute_units=cus or 0,
        max_threads_per_cu=0,  # no early stop: the argmax itself, largest on ties
        profile=p.name,
        lds_bytes=lds_bytes,
    )
    assert launch["error"] is None  # the budget HIP answered with has no error at any block size
    block = int(launch["block_size"] or 0)
    at_block = hip_occupancy(usage, block or 1, dynamic_lds, profile=p.name, lds_bytes=lds_bytes)
    blocks = at_block.blocks_per_cu if block else 0
    warnings = list(inferred)
    answer = BlockSizeAnswer(
        **common,
        hip_block_size=int(hip["block_size"] or 0),
        hip_grid_size=int(hip["grid_size"] or 0) if cus else None,
        block_size=block,
        blocks_per_cu=blocks,
        min_grid_size=(blocks or 0) * cus if cus else None,
        per_wgp=at_block.per_wgp,
        error=None,
        warnings=(),
    )
    if answer.hip_exceeds_max_flat_workgroup_size:
        warnings.append(
            f"HIP's block size {answer.hip_block_size} exceeds the kernel's .max_flat_workgroup_size "
            f"{usage.max_flat_workgroup_size}: a launch with it fails; launch {block} instead"
        )
    if answer.hip_grid_size == 0:
        warnings.append("HIP's grid size is 0: not one workgroup of its block size fits the LDS")
    if block == 0:
        warnings.append(
            f"no block size fits: {usage.lds + dynamic_lds} B of LDS per workgroup is more than the "
            "device has, whatever the block size"
        )
    if cus is None:
        warnings.append("no device or CU count given: grid sizes are not computed")
    return _with_warnings(answer, tuple(warnings))


def _with_warnings(answer: BlockSizeAnswer, warnings: tuple[str, ...]) -> BlockSizeAnswer:
    from dataclasses import replace

    return replace(answer, warnings=warnings)


def potential_block_size(
    kernel_or_resources: Any,
    dynamic_lds: int = 0,
    block_limit: int = 0,
    *,
    target: str | None = None,
    device: Device | str | None = None,
    profile: str | None = None,
    compute_units: int | None = None,
    runtime_wgp: bool | None = None,
    what_if: bool = False,
) -> BlockSizeAnswer:
    """:func:`best_block_size` of a Kernel, a KernelUsage or a dict of manual numbers, placed as
    :func:`amdocc.occupancy` places it (``target``/``device``, ``what_if``)."""
    from . import _built_for, _usage
    from .compat import place

    if what_if and target is None and device is None:
        raise UsageError("what_if needs target= or device=: the processor to evaluate on")
    code, code_target = _built_for(kernel_or_resources)
    where = place(code, code_target, target, device, what_if=what_if)
    dev = None
    if device is not None:
        from ..devices import Device, get_device

        dev = device if isinstance(device, Device) else get_device(device)
    usage = _usage(kernel_or_resources, where.target if where else None)
    answer = best_block_size(
        usage,
        dynamic_lds,
        block_limit,
        profile=profile,
        device=dev,
        compute_units=compute_units,
        runtime_wgp=runtime_wgp,
    )
    if where is not None and where.what_if:
        return _with_warnings(answer, (*answer.warnings, f"what-if: {where.reason}"))
    return answer
