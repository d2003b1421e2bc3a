"""Per-processor facts, read from ``tables/targets.toml``.

Each processor is one :class:`Target` record. Code asks a Target for a fact ("what is the VGPR
allocation granule in wave32?"), it never tests a processor's name. Small functions here read
the table the way LLVM's AMDGPUBaseInfo reads its feature bits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .caches import cached
from .errors import TableError, UnknownTargetError
from .frozen import FrozenDict, freeze
from .numbers import in_range
from .tabledata import Row, load_table

REGISTER_FILES = ("none", "separate", "unified")
DESCRIPTOR_LAYOUTS = ("gfx6", "gfx90a", "gfx10", "gfx11", "gfx12", "gfx1250", "gfx13")
# The largest workgroup on every AMDGPU processor (LLVM's flat-workgroup-size cap; ROCr's
# HSA_AGENT_INFO_WORKGROUP_MAX_SIZE; HIP's maxThreadsPerBlock).
MAX_WORKGROUP_SIZE = 1024
TABLE = "targets.toml"
TRIPLE = "amdgcn-amd-amdhsa"  # the legacy spelling; see find_triple for the amdgpu<subarch> one
# SGPRs the trap handler reserves per wave on gfx6-9 (rocm-systems PR #10618, llvm PR #201342).
TRAP_HANDLER_SGPRS = 16


# eq=False: targets are singletons, compared and hashed by identity (usable as cache keys).
@dataclass(frozen=True, slots=True, eq=False)
class Target:
    name: str
    mach: int
    isa_version: tuple[int, int, int]
    family: str
    wave_sizes: tuple[int, ...]
    default_wave: int
    register_file: str
    vgprs: dict[int, int]
    vgpr_alloc_granule: dict[int, int]
    vgpr_encode_granule: dict[int, int]
    addressable_vgprs: int
    agprs: int
    max_waves_per_simd: int
    hip_max_waves_per_simd: int
    simds_per_cu: int
    wgp: bool
    sgpr_waves: tuple[tuple[int, int], ...]
    sgpr_waves_beyond: int
    sgprs_per_simd: int
    sgpr_alloc_granule: int
    addressable_sgprs: int
    lds_per_workgroup: int
    lds_per_cu: int
    lds_granule: int
    max_workgroups_per_cu: int
    xnack: bool
    sramecc: bool
    descriptor_layout: str
    source: str
    lds_per_wgp: int | None = None
    max_workgroups_per_wgp: int | None = None
    lds_per_workgroup_wgp: int | None = None  # where WGP mode lets one workgroup use more (gfx13)
    generic_of: tuple[str, ...] = field(default=())
    # Facts no public source pins, each with the reason (a model that needs one refuses; see
    # models/applicable.py). Keys are column names, or "hw_wave_slots" for the physical wave slots.
    unknown: dict[str, str] = field(default_factory=dict)
    since_llvm: int | None = None  # first LLVM release major that knows the processor (None: 22 or older)
    # Columns whose value no public source pins, each with why (the table's `unconfirmed`).
    unconfirmed: dict[str, str] = field(default_factory=dict)
    # Whether a code object records the CU/WGP mode it was built for (the metadata's
    # .workgroup_processor_mode and RSRC1 WGP_MODE meaning what they mean on gfx10-12); where not,
    # the models assume the processor's default mode and say so (models/usage.py).
    mode_recorded: bool = True

    @property
    def major(self) -> int:
        return self.isa_version[0]

    @property
    def is_generic(self) -> bool:
        return bool(self.generic_of)

    @property
    def has_agprs(self) -> bool:
        return self.register_file != "none"

    @property
    def sgprs_limit_occupancy(self) -> bool:
        return bool(self.sgpr_waves)

    @property
    def vgpr_file_in_wave32_units(self) -> bool:
        """Whether the VGPR file is sized in registers of 32 lanes (RDNA, gfx10 on): a wave64 there
        takes two of them per VGPR, so its share of ``vgprs`` and granules halves. It holds exactly
        where the processor runs wave32 (LLVM keys it on FeatureWavefrontSize32; HIP's device.cpp
        table and comgr give the wave32 counts)."""
        return 32 in self.wave_sizes

    def max_lds_per_workgroup(self, wgp: bool) -> int:
        """The largest LDS one workgroup may use: in WGP mode gfx13 lets it take the whole WGP pool."""
        return (self.lds_per_workgroup_wgp or self.lds_per_workgroup) if wgp else self.lds_per_workgroup

    def simds(self, wgp: bool) -> int:
        """SIMDs that share a kernel's resources: a WGP is two CUs."""
        return self.simds_per_cu * (2 if wgp else 1)

    def total_vgprs(self, arch: int, agpr: int) -> int:
        """The metadata ``.vgpr_count`` LLVM writes for ``arch`` VGPRs and ``agpr`` AGPRs."""
        if self.register_file == "unified" and agpr:
            return -(-arch // 4) * 4 + agpr
        return max(arch, agpr)


# How each column of a targets.toml row becomes a Target field.
_INT_COLUMNS = {  # column -> its smallest value
    "mach": 1,
    "default_wave": 1,
    "addressable_vgprs": 1,
    "agprs": 0,
    "max_waves_per_simd": 1,
    "hip_max_waves_per_simd": 1,
    "simds_per_cu": 1,
    "sgpr_waves_beyond": 0,
    "sgprs_per_simd": 0,
    "sgpr_alloc_granule": 1,
    "addressable_sgprs": 1,
    "lds_per_workgroup": 1,
    "lds_per_cu": 1,
    "lds_granule": 1,
    "max_workgroups_per_cu": 1,
}
_BOOL_COLUMNS = ("wgp", "xnack", "sramecc")
_WAVE_COLUMNS = ("vgprs", "vgpr_alloc_granule", "vgpr_encode_granule")  # {w32 = .., w64 = ..}
_WGP_COLUMNS = ("lds_per_wgp", "max_workgroups_per_wgp", "lds_per_workgroup_wgp")  # read only where wgp = true


def _build(name: str, merged: dict[str, Any], source: str) -> Target:
    row = Row(TABLE, name, merged)
    wgp = row.flag("wgp")
    columns: dict[str, Any] = {
        **{column: row.whole(column, low) for column, low in _INT_COLUMNS.items()},
        **{column: row.flag(column) for column in _BOOL_COLUMNS},
        **{column: FrozenDict(row.waves(column)) for column in _WAVE_COLUMNS},
        **{column: row.whole(column, 1, default=None) if wgp else None for column in _WGP_COLUMNS},
    }
    t = Target(
        name=name,
        isa_version=_isa_version(row),
        family=row.text("family"),
        wave_sizes=row.wholes("wave_sizes", 1),
        register_file=row.text("register_file", choices=REGISTER_FILES),
        sgpr_waves=_sgpr_waves(row),
        descriptor_layout=row.text("descriptor_layout", choices=DESCRIPTOR_LAYOUTS),
        source=source,
        generic_of=row.texts("generic_of", ()),
        unknown=FrozenDict(row.named_texts("unknown")),
        since_llvm=row.whole("since_llvm", 1, default=None),
        unconfirmed=freeze(dict(row.value("unconfirmed", {}))),
        mode_recorded=row.flag("mode_recorded", True),
        **columns,
    )
    if t.wgp and (t.lds_per_wgp is None or t.max_workgroups_per_wgp is None):
        raise TableError(f"{TABLE} [{name}]: a row with WGP mode needs lds_per_wgp and max_workgroups_per_wgp")
    if t.default_wave not in t.wave_sizes:
        raise row.error(f"{t.default_wave} is not one of its wave_sizes", "default_wave")
    for wave in t.wave_sizes:
        for column in _WAVE_COLUMNS:
            if wave not in getattr(t, column):
                raise row.error(f"no w{wave} entry", column)
    return t


def _isa_version(row: Row) -> tuple[int, int, int]:
    version = row.wholes("isa_version", 0)
    if len(version) != 3:
        raise row.error(f"{list(version)} is not [major, minor, stepping]", "isa_version")
    return (version[0], version[1], version[2])


def _sgpr_waves(row: Row) -> tuple[tuple[int, int], ...]:
    """[[SGPRs, waves], ...]: the step table of SGPR-limited occupancy (empty where SGPRs do not limit)."""
    steps = row.value("sgpr_waves")
    if not isinstance(steps, list) or not all(
        isinstance(s, list) and len(s) == 2 and all(in_range(v, 1) for v in s) for s in steps
    ):
        raise row.error("is not a list of [SGPRs, waves] pairs of whole numbers >= 1", "sgpr_waves")
    return tuple((a, b) for a, b in steps)


@cached(maxsize=1)
def _targets() -> dict[str, Target]:
    raw = load_table("targets.toml")
    resolved: dict[str, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    out: dict[str, Target] = {}
    for own in Row(TABLE, "", raw).rows():
        name, row = own.key, own.values
        merged: dict[str, Any] = {}
        if own.has("like"):
            parent = own.text("like")
            if parent not in resolved:
                raise TableError(f"targets.toml [{name}] is like {parent!r}, which is not above it")
            merged.update(resolved[parent])
            merged.pop("generic_of", None)
            # A doubt about a value is inherited with the value, not by a row that sets its own.
            merged["unconfirmed"] = {k: why for k, why in merged.get("unconfirmed", {}).items() if k not in row}
        merged.update({k: v for k, v in row.items() if k not in ("like", "source", "unconfirmed")})
        merged["unconfirmed"] = {**merged.get("unconfirmed", {}), **row.get("unconfirmed", {})}
        resolved[name] = merged
        # A row without its own note says which row its facts were copied from.
        if own.has("like"):
            sources[name] = own.text("source", None) or f"as {row['like']}: {sources[row['like']]}"
        else:
            sources[name] = own.text("source")
        out[name] = _row(name, merged, sources[name])
    return out


def _row(name: str, merged: dict[str, Any], source: str) -> Target:
    """One row as a Target; a missing column or a value of the wrong type or out of range is a
    TableError naming the row and the column (amdocc.tabledata.Row)."""
    return _build(name, merged, source)


@cached(maxsize=1)
def _by_mach() -> dict[int, Target]:
    out: dict[int, Target] = {}
    for t in _targets().values():
        if t.mach in out:
            raise TableError(f"targets.toml: mach {t.mach:#x} used by {out[t.mach].name} and {t.name}")
        out[t.mach] = t
    return out


def all_targets() -> list[Target]:
    return list(_targets().values())


def processor_name(text: str) -> str:
    """The bare processor of a target id, triple-prefixed or not: 'amdgcn-amd-amdhsa--gfx90a:xnack-' and
    'amdgpu9.0a-amd-amdhsa-unknown-gfx90a:xnack-' → 'gfx90a'; a bare subarch triple
    'amdgpu9.0a-amd-amdhsa' → 'gfx90a'."""
    return strip_triple(text).split(":", 1)[0].lower()


# The AMDGPU triple as a target id or bundle entry id spells it: the legacy arch "amdgcn", or (LLVM
# main, llvm PRs #206480/#206482, 2026) "amdgpu" with an optional subarch naming the processor.
_TRIPLE_RE = re.compile(r"(?:^|-)(?P<arch>amdgcn|amdgpu(?P<sub>\d+(?:\.[0-9a-z]+)?)?)-amd-amdhsa(?=-|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TripleMatch:
    """Where an AMDGPU HSA triple sits in a text, and what follows it."""

    arch: str  # "amdgcn", "amdgpu" or "amdgpu<subarch>"
    subarch_processor: str | None  # the processor a subarch names ('9.42' → 'gfx942'), else None
    environment: str  # "" or e.g. "unknown" (LLVM main writes "-unknown-" before the processor)
    rest: str  # the target id after the triple (processor and features), maybe ""


# Cached: a fat binary repeats the same few entry ids in each of its thousands of bundles.
@cached(maxsize=256)
def find_triple(text: str) -> TripleMatch | None:
    """The AMDGPU HSA triple in a target id or bundle entry id, or None when it has none.

    Accepts 'amdgcn-amd-amdhsa--gfx942', the 3-field 'amdgcn-amd-amdhsa-gfx906',
    'amdgpu9.42-amd-amdhsa-unknown-gfx942' and an offload-kind prefix ('hipv4-...')."""
    m = _TRIPLE_RE.search(text.strip())
    if m is None:
        return None
    rest = text.strip()[m.end() :]
    rest = rest[1:] if rest.startswith("-") else rest
    environment = ""
    if rest and not rest.lower().startswith("gfx") and "-" in rest:
        environment, rest = rest.split("-", 1)  # processors start with "gfx"; anything else is the environment
    sub = m.group("sub")
    return TripleMatch(m.group("arch").lower(), subarch_processor(sub) if sub else None, environment, rest)


# A major-only subarch names its family's generic target, except where LLVM names another processor
# (TargetParser.cpp AMDGPUSubArchNames, LLVM main: gfx6-8 have no generic target; amdgpu10 is
# gfx10-1-generic).
_FAMILY_SUBARCH = {"6": "gfx600", "7": "gfx700", "8": "gfx801", "10": "gfx10-1-generic"}


def subarch_processor(sub: str) -> str | None:
    """The processor an amdgpu subarch names (llvm/test/CodeGen/AMDGPU/elf-header-flags-mach.ll and
    TargetParser.cpp, LLVM main): '9.42' → gfx942, '9.0a' → gfx90a, '12.50s' → gfx1250-strict,
    '9.4' → gfx9-4-generic, '11' → gfx11-generic. A family subarch may prefix any of its members
    ('amdgpu11-amd-amdhsa-unknown-gfx1101'). None when the text is not a subarch."""
    m = re.fullmatch(r"(\d+)(?:\.(\d)([0-9a-z])?(s)?)?", sub.lower())
    if m is None:
        return None
    major, minor, stepping, strict = m.groups()
    if minor is None:
        return _FAMILY_SUBARCH.get(major, f"gfx{major}-generic")
    if stepping is None:
        return None if strict else f"gfx{major}-{minor}-generic"
    return f"gfx{major}{minor}{stepping}" + ("-strict" if strict else "")


def subarch_admits(subarch_name: str, processor: str) -> bool:
    """Whether a triple whose subarch names ``subarch_name`` may carry ``processor``: the same
    processor, a member of that generic target, or a subarch this table cannot judge."""
    if subarch_name == processor:
        return True
    family = find_target(subarch_name)
    return family is None or processor in family.generic_of


def strip_triple(text: str) -> str:
    """A target id without its triple ('amdgcn-amd-amdhsa--', 'amdgpu9.42-amd-amdhsa-unknown-') or
    offload-kind prefix; a triple with a subarch and nothing after it gives the subarch's processor."""
    text = text.strip()
    found = find_triple(text)
    if found is None:
        return text
    if not found.rest and found.subarch_processor:
        return found.subarch_processor
    return found.rest


# What amdocc says of a processor name or EF_AMDGPU_MACH number that no row describes: it is
# reported by that name or number and never read as a neighbouring processor (Hygon's DCU
# gfx926/928/936/938, kokkos #9403, are such names: neither LLVM nor ROCm defines them).
NOT_KNOWN = "not a processor amdocc knows (tables/targets.toml holds those LLVM and ROCm define)"


def get_target(name: str) -> Target:
    """The Target for a processor name or target id; UnknownTargetError if the table lacks it, or
    if an amdgpu subarch triple names a processor the rest of the id contradicts."""
    proc = processor_name(name)
    triple = find_triple(name)
    if triple and triple.subarch_processor and not subarch_admits(triple.subarch_processor, proc):
        raise UnknownTargetError(
            f"{name.strip()!r} names {triple.subarch_processor} in its triple ({triple.arch}) but {proc} after it"
        )
    try:
        return _targets()[proc]
    except KeyError:
        raise UnknownTargetError(f"unknown processor {proc!r}: {NOT_KNOWN}") from None


def find_target(name: str) -> Target | None:
    return _targets().get(processor_name(name))


def target_by_mach(mach: int) -> Target | None:
    return _by_mach().get(mach)


def target_by_isa_version(version: tuple[int, int, int]) -> Target | None:
    """The non-generic processor with this (major, minor, stepping), for CO v2 ISA notes."""
    for t in _targets().values():
        if t.isa_version == tuple(version) and not t.is_generic:
            return t
    return None
