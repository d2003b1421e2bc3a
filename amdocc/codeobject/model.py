"""Plain records for a parsed code object: CodeObject → Kernel → (metadata, descriptor, resources, findings)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import Origin
from ..targets import Target
from .descriptor import Descriptor
from .target_id import TargetId

INFO, WARNING, ERROR = "info", "warning", "error"


@dataclass(frozen=True, slots=True)
class Finding:
    """Something a reader of this kernel should know: a disagreement, an odd or impossible value.

    Findings are reported, never silently fixed. ``code`` is stable (scripts may match on it),
    ``message`` is for people.
    """

    code: str
    severity: str
    message: str

    def as_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(slots=True)
class Resources:
    """What a kernel uses and what the hardware allocates for it, with both views kept.

    "Used" counts come from the metadata note (or LLVM's ``<fn>.num_*`` symbols), "allocated"
    counts from the kernel descriptor. Each ``*_source`` names where a value came from:
    "metadata", "symbol", "descriptor" or "target" (the processor's default).
    """

    wavefront_size: int | None
    wavefront_size_source: str | None
    wgp_mode: bool | None            # descriptor rsrc1 WGP_MODE; None where the target has no WGPs
    vgprs: int | None                # .vgpr_count: the unified total on gfx90a/gfx94x/gfx950
    vgprs_source: str | None
    vgprs_allocated: int | None      # descriptor next_free_vgpr
    arch_vgprs: int | None
    arch_vgprs_source: str | None
    agprs: int | None
    agprs_source: str | None
    accum_offset: int | None         # first AGPR in the unified file (descriptor)
    sgprs: int | None                # .sgpr_count, including VCC/flat-scratch/xnack extras
    sgprs_source: str | None
    sgprs_allocated: int | None      # descriptor next_free_sgpr where SGPRs are allocated per wave
    lds: int | None                  # static LDS bytes (group segment)
    lds_source: str | None
    scratch: int | None              # private segment bytes per work-item
    scratch_source: str | None
    max_flat_workgroup_size: int | None
    kernarg_size: int | None
    uses_dynamic_stack: bool | None
    spills: tuple[int | None, int | None] = (None, None)  # (.sgpr_spill_count, .vgpr_spill_count)

    def as_dict(self) -> dict:
        out = {}
        for name in self.__slots__:
            out[name] = getattr(self, name)
        out["sgpr_spill_count"], out["vgpr_spill_count"] = out.pop("spills")
        return out


@dataclass(slots=True)
class Kernel:
    name: str
    symbol: str
    metadata: dict[str, Any]                 # this kernel's map from the metadata note ({} if none)
    descriptor: Descriptor | None
    resource_symbols: dict[str, int]         # e.g. {"num_vgpr": 41, "num_agpr": 11, ...}
    resources: Resources
    findings: list[Finding]
    target_id: TargetId
    target: Target | None                    # None when the processor is unknown
    code_object_version: int
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # derived values, computed once
    # The metadata under v3 note names (v2 CodeProps translated), built once by the reader.
    note: dict | None = field(default=None, repr=False, compare=False)

    def meta(self, key: str, default=None):
        """A metadata value by its note name, with or without the leading dot."""
        return self.metadata.get(key if key.startswith(".") else "." + key, default)


@dataclass(slots=True)
class CodeObject:
    origin: Origin
    size: int
    target_id: TargetId
    target: Target | None
    code_object_version: int
    elf_type: str                            # "rel", "exec" or "dyn"
    e_flags: int
    generic_version: int
    metadata: dict[str, Any] | None          # the whole decoded note (v3+ msgpack, v2 YAML subset)
    metadata_version: tuple[int, ...] | None
    kernels: list[Kernel] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    data: bytes = field(default=b"", repr=False)   # the code object's bytes (to load it into HIP)

    @property
    def processor(self) -> str:
        return self.target_id.processor

    @property
    def path(self) -> str:
        return self.origin.path
