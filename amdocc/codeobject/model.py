"""Plain records for a parsed code object: CodeObject → Kernel → (metadata, descriptor, resources, findings)."""

from __future__ import annotations

import operator
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from ..errors import Origin, UsageError
from ..targets import Target
from .descriptor import Descriptor
from .linking import LinkingInfo
from .producer import Producer
from .target_id import TargetId

INFO, WARNING, ERROR = "info", "warning", "error"
KERNEL_DESCRIPTOR_SUFFIX = ".kd"  # a code-object v3+ kernel's symbol is "<name>.kd"
REPR_KERNELS = 40  # kernels listed by repr(CodeObject) before "... N more"


@dataclass(frozen=True, slots=True)
class Finding:
    """Something a reader of this kernel should know: a disagreement, an odd or impossible value.

    Findings are reported, never silently fixed.

    Attributes:
        code: a stable identifier scripts may match on (e.g. "vgpr-count-mismatch").
        severity: "info", "warning" or "error".
        message: one line for people.
    """

    code: str
    severity: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(frozen=True, slots=True)
class Resources:
    """What a kernel uses and what the hardware allocates for it, with both views kept.

    "Used" counts come from the metadata note (or LLVM's ``<fn>.num_*`` symbols), "allocated"
    counts from the kernel descriptor. Each ``*_source`` names where a value came from:
    "metadata", "symbol", "descriptor" or "target" (the processor's default). None means the
    code object does not say.

    Attributes:
        wavefront_size: lanes per wave the kernel runs with (32 or 64).
        wavefront_size_source: where ``wavefront_size`` came from.
        wgp_mode: the descriptor's WGP_MODE bit; None where the processor has no WGPs.
        vgprs: ``.vgpr_count``, the VGPRs HIP and LLVM count: on gfx90a/gfx94x/gfx950 the unified
            total, AGPRs already included (never add ``agprs`` to it).
        vgprs_source: where ``vgprs`` came from.
        vgprs_allocated: VGPRs the descriptor makes the hardware allocate (next_free_vgpr).
        arch_vgprs: architectural VGPRs alone (without AGPRs).
        arch_vgprs_source: where ``arch_vgprs`` came from.
        agprs: ``.agpr_count``, accumulation registers (reported, already inside ``vgprs``).
        agprs_source: where ``agprs`` came from.
        accum_offset: the first AGPR in the unified register file (descriptor).
        sgprs: ``.sgpr_count``, including the VCC, flat-scratch and XNACK extras.
        sgprs_source: where ``sgprs`` came from.
        sgprs_allocated: SGPRs the descriptor allocates per wave (next_free_sgpr, gfx6-9).
        lds: static LDS bytes per workgroup (``.group_segment_fixed_size``).
        lds_source: where ``lds`` came from.
        scratch: private (scratch) bytes per work-item (``.private_segment_fixed_size``).
        scratch_source: where ``scratch`` came from.
        max_flat_workgroup_size: the largest block the kernel may be launched with.
        kernarg_size: bytes of kernel arguments.
        uses_dynamic_stack: whether the kernel's stack size is not known at compile time.
        spills: (``.sgpr_spill_count``, ``.vgpr_spill_count``); None where not recorded.
    """

    wavefront_size: int | None
    wavefront_size_source: str | None
    wgp_mode: bool | None  # descriptor rsrc1 WGP_MODE; None where the target has no WGPs
    vgprs: int | None  # .vgpr_count: the unified total on gfx90a/gfx94x/gfx950
    vgprs_source: str | None
    vgprs_allocated: int | None  # descriptor next_free_vgpr
    arch_vgprs: int | None
    arch_vgprs_source: str | None
    agprs: int | None
    agprs_source: str | None
    accum_offset: int | None  # first AGPR in the unified file (descriptor)
    sgprs: int | None  # .sgpr_count, including VCC/flat-scratch/xnack extras
    sgprs_source: str | None
    sgprs_allocated: int | None  # descriptor next_free_sgpr where SGPRs are allocated per wave
    lds: int | None  # static LDS bytes (group segment)
    lds_source: str | None
    scratch: int | None  # private segment bytes per work-item
    scratch_source: str | None
    max_flat_workgroup_size: int | None
    kernarg_size: int | None
    uses_dynamic_stack: bool | None
    spills: tuple[int | None, int | None] = (None, None)  # (.sgpr_spill_count, .vgpr_spill_count)

    def as_dict(self) -> dict[str, Any]:
        out = dict(zip(_RESOURCE_FIELDS, _resource_values(self), strict=True))
        out["sgpr_spill_count"], out["vgpr_spill_count"] = out.pop("spills")
        return out


# Every field of a Resources, in order, read in one call (a record is written per kernel).
_RESOURCE_FIELDS: tuple[str, ...] = Resources.__slots__
_resource_values = operator.attrgetter(*_RESOURCE_FIELDS)


@dataclass(slots=True, repr=False)
class Kernel:
    """One kernel of a code object: its metadata, descriptor, resources and findings.

    Pass it to :func:`amdocc.occupancy` or :func:`amdocc.max_blocks_per_cu`.

    Attributes:
        name: the kernel's name (``.name`` in the metadata note), usually C++-mangled.
        symbol: its ELF symbol, the kernel descriptor ("<name>.kd" from code-object v3 on).
        metadata: this kernel's map from the metadata note, keys with their leading dot ({} if none).
        descriptor: the decoded kernel descriptor, or None when the code object has none.
        resource_symbols: LLVM's ``<fn>.num_*`` resource symbols, e.g. {"num_vgpr": 41}.
        resources: what the kernel uses and allocates (:class:`Resources`).
        findings: disagreements and odd values found while reading it (:class:`Finding`).
        target_id: the processor and xnack/sramecc states of its code object.
        target: the processor's row of tables/targets.toml, None when the processor is unknown.
        code_object_version: 2 to 6.
        image: the bytes of the code object the kernel lives in, as HIP would load them
            (empty when not at hand).
        producer: the compiler its code object's ``.comment`` names, or None (see CodeObject).
        note: the metadata under v3 note names (a v2 code object's CodeProps translated), built
            once by the reader; None for a kernel made by hand (see :meth:`meta`).
        demangled_name: the name as C++ source spells it (a property; None when not mangled or
            when no demangler is available).
        launchable: False when its code object is a relocatable or carries ``.amdgpu.info``
            (local counts); models then answer only a what-if.
        inputs: what the reader resolved its resources from, as a key (None when made by hand);
            kernels equal in it, their producer, target id and launchability differ only in name.
        object_linking: for such a kernel with an ``.amdgpu.info`` record, {"local": its own
            counts, "transitive": with every function it reaches}; None otherwise.
    """

    name: str
    symbol: str
    metadata: dict[str, Any]  # this kernel's map from the metadata note ({} if none)
    descriptor: Descriptor | None
    resource_symbols: dict[str, int]  # e.g. {"num_vgpr": 41, "num_agpr": 11, ...}
    resources: Resources
    findings: list[Finding]
    target_id: TargetId
    target: Target | None  # None when the processor is unknown
    code_object_version: int
    image: bytes = field(default=b"", compare=False)  # the code object's bytes, for the runtime bridge
    producer: Producer | None = None  # the compiler its code object names (.comment)
    # What the reader resolved the resources from (resources.inputs_key; None for a kernel made by
    # hand or values that cannot be a key): kernels equal there (and in their code object's
    # producer, target id and launchability) differ at most in name, so answers are shared by it.
    # Set by the reader only: a copy (dataclasses.replace) has none, since its values may differ.
    inputs: Hashable | None = field(default=None, init=False, compare=False, repr=False)
    # The metadata under v3 note names (v2 CodeProps translated), built once by the reader.
    note: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    launchable: bool = True
    object_linking: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    def meta(self, key: str, default: Any = None) -> Any:
        """A metadata value by its note name, with or without the leading dot."""
        return self.metadata.get(key if key.startswith(".") else "." + key, default)

    @property
    def demangled_name(self) -> str | None:
        """The name as C++ source spells it; None when it is not mangled or no demangler is at hand."""
        return demangle(self.name)  # cached by name (amdocc.demangle)

    def names(self) -> tuple[str, ...]:
        """Every spelling :meth:`CodeObject.kernel` accepts for this kernel."""
        out = [self.name, self.symbol, _without_kd(self.symbol)]
        readable = self.demangled_name
        if readable:
            # The signature, the qualified name without it, and the bare function name
            # ("saxpy_lds"): a short spelling that several kernels share is refused as ambiguous.
            from ..demangle import base_name, qualified_name

            out += [readable, qualified_name(readable), base_name(readable)]
        return tuple(dict.fromkeys(out))

    def __repr__(self) -> str:
        r = self.resources
        return (
            f"Kernel({self.name!r}, {self.target_id.processor}, vgprs={r.vgprs}, agprs={r.agprs}, "
            f"sgprs={r.sgprs}, lds={r.lds}, scratch={r.scratch}, wave={r.wavefront_size})"
        )


@dataclass(slots=True, repr=False)
class CodeObject:
    """One AMDGPU code object (an ELF) and its kernels.

    Attributes:
        origin: where its bytes came from (file, container layers, offset); ``path`` and
            ``processor`` are shortcuts.
        size: its size in bytes.
        target_id: the processor and xnack/sramecc states it was built for.
        target: the processor's row of tables/targets.toml, None when the processor is unknown.
        code_object_version: 2 to 6.
        elf_type: "rel", "exec" or "dyn".
        e_flags: the ELF header's flags word.
        generic_version: the generic code-object version (v6 generic targets), else 0.
        metadata: the whole decoded metadata note, or None.
        metadata_version: the note's ``amdhsa.version``, or None.
        kernels: its kernels (:class:`Kernel`); look one up with :meth:`kernel`.
        findings: what was found about the code object as a whole.
        data: its bytes (what HIP would load).
        producer: the compiler its ``.comment`` section names (clang's line, else the linker's),
            or None; the llvm model picks its rules by it.
        metadata_plain: True when the metadata note is known to hold no floating-point values.
        launchable: False for a relocatable (ET_REL) or an object-linking object (one with
            ``.amdgpu.info``): its counts are local, and occupancy is answered only as a what-if.
        linking: the decoded ``.amdgpu.info`` (:class:`amdocc.codeobject.linking.LinkingInfo`),
            or None.
    """

    origin: Origin
    size: int
    target_id: TargetId
    target: Target | None
    code_object_version: int
    elf_type: str  # "rel", "exec" or "dyn"
    e_flags: int
    generic_version: int
    metadata: dict[str, Any] | None  # the whole decoded note (v3+ msgpack, v2 YAML subset)
    metadata_version: tuple[int, ...] | None
    kernels: list[Kernel] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    data: bytes = field(default=b"")  # the code object's bytes (to load it into HIP)
    producer: Producer | None = None  # the compiler its .comment names (clang's, else the linker's)
    # True when the metadata note is known to hold no floating-point values (MessagePack float
    # markers absent), so JSON writers may take a fast path; False when unknown.
    metadata_plain: bool = field(default=False, repr=False, compare=False)
    launchable: bool = True
    linking: LinkingInfo | None = field(default=None, repr=False, compare=False)

    @property
    def processor(self) -> str:
        return self.target_id.processor

    @property
    def path(self) -> str:
        return self.origin.path

    def kernel(self, name: str) -> Kernel:
        """The kernel called ``name``.

        Args:
            name: the kernel's name or its symbol ("<name>.kd"), mangled or demangled.

        Returns:
            the :class:`Kernel`.

        Raises:
            UsageError (an AmdoccError): no kernel has that name (the message lists the nearest
                names), or the name is ambiguous (the message lists the kernels it matches).
        """
        if not isinstance(name, str):
            raise UsageError(f"a kernel name is a str, not {type(name).__name__}")
        found = [k for k in self.kernels if name in k.names()]
        if len(found) == 1:
            return found[0]
        if found:
            raise UsageError(
                f"{name!r} names {len(found)} kernels in {self.origin}: "
                + ", ".join(k.demangled_name or k.name for k in found[:8])
                + (f", ... ({len(found)} in all)" if len(found) > 8 else "")
                + "; give the whole signature or the mangled name"
            )
        import difflib  # only when a name matches nothing: reading never needs it

        spelled = {s: k for k in self.kernels for s in k.names()}
        near = difflib.get_close_matches(name, spelled, n=12, cutoff=0.5)
        # The nearest spelling of each kernel, in the form the caller used (mangled or not).
        nearest: dict[int, str] = {}
        for spelling in near:
            nearest.setdefault(id(spelled[spelling]), spelling)
        if nearest:
            hint = f"nearest: {', '.join(list(nearest.values())[:5])}"
        elif self.kernels:
            listed = ", ".join(k.name for k in self.kernels[:8])
            hint = f"its kernels: {listed}" + (f", ... ({len(self.kernels)} in all)" if len(self.kernels) > 8 else "")
        else:
            hint = "it has no kernels"
        raise UsageError(f"no kernel {name!r} in {self.origin} ({self.target_id}); {hint}")

    def __repr__(self) -> str:
        lines = [
            f"CodeObject({self.target_id}, v{self.code_object_version}, {len(self.kernels)} kernel"
            f"{'' if len(self.kernels) == 1 else 's'}, {str(self.origin)!r})"
        ]
        lines += [f"  {k!r}" for k in self.kernels[:REPR_KERNELS]]
        if len(self.kernels) > REPR_KERNELS:
            lines.append(f"  ... {len(self.kernels) - REPR_KERNELS} more (see .kernels)")
        return "\n".join(lines)


def _without_kd(symbol: str) -> str:
    return symbol[: -len(KERNEL_DESCRIPTOR_SUFFIX)] if symbol.endswith(KERNEL_DESCRIPTOR_SUFFIX) else symbol


def demangle(name: str) -> str | None:
    """``name`` demangled, or None when it is not a mangled C++ name or no demangler is installed
    (amdocc.demangle, loaded on first use)."""
    from ..demangle import demangle as _demangle

    text = _demangle(name)
    return text if text and text != name else None
