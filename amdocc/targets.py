"""Per-processor facts, read from ``tables/targets.toml``.

Each processor is one :class:`Target` record. Code asks a Target for a fact ("what is the VGPR
allocation granule in wave32?"), it never tests a processor's name. Small functions here read
the table the way LLVM's AMDGPUBaseInfo reads its feature bits.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .errors import UnknownTargetError
from .tabledata import load_table

REGISTER_FILES = ("none", "separate", "unified")
DESCRIPTOR_LAYOUTS = ("gfx6", "gfx90a", "gfx10", "gfx11", "gfx12", "gfx1250")
# The largest workgroup on every AMDGPU processor (LLVM's flat-workgroup-size cap; ROCr's
# HSA_AGENT_INFO_WORKGROUP_MAX_SIZE; HIP's maxThreadsPerBlock).
MAX_WORKGROUP_SIZE = 1024
TRIPLE = "amdgcn-amd-amdhsa"
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
    generic_of: tuple[str, ...] = field(default=())
    # Columns whose value no public source pins, each with why (the table's `unconfirmed`).
    unconfirmed: dict[str, str] = field(default_factory=dict)

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

    def simds(self, wgp: bool) -> int:
        """SIMDs that share a kernel's resources: a WGP is two CUs."""
        return self.simds_per_cu * (2 if wgp else 1)

    def total_vgprs(self, arch: int, agpr: int) -> int:
        """The metadata ``.vgpr_count`` LLVM writes for ``arch`` VGPRs and ``agpr`` AGPRs."""
        if self.register_file == "unified" and agpr:
            return -(-arch // 4) * 4 + agpr
        return max(arch, agpr)


def _wave_map(value: dict, key: str, row: str) -> dict[int, int]:
    out = {}
    for k, v in value.items():
        if not k.startswith("w") or not k[1:].isdigit():
            raise ValueError(f"targets.toml [{row}] {key}: bad wave key {k!r}")
        out[int(k[1:])] = int(v)
    return out


def _build(name: str, row: dict, source: str) -> Target:
    t = Target(
        name=name,
        mach=int(row["mach"]),
        isa_version=tuple(row["isa_version"]),
        family=row["family"],
        wave_sizes=tuple(row["wave_sizes"]),
        default_wave=int(row["default_wave"]),
        register_file=row["register_file"],
        vgprs=_wave_map(row["vgprs"], "vgprs", name),
        vgpr_alloc_granule=_wave_map(row["vgpr_alloc_granule"], "vgpr_alloc_granule", name),
        vgpr_encode_granule=_wave_map(row["vgpr_encode_granule"], "vgpr_encode_granule", name),
        addressable_vgprs=int(row["addressable_vgprs"]),
        agprs=int(row["agprs"]),
        max_waves_per_simd=int(row["max_waves_per_simd"]),
        hip_max_waves_per_simd=int(row["hip_max_waves_per_simd"]),
        simds_per_cu=int(row["simds_per_cu"]),
        wgp=bool(row["wgp"]),
        sgpr_waves=tuple((int(a), int(b)) for a, b in row["sgpr_waves"]),
        sgpr_waves_beyond=int(row["sgpr_waves_beyond"]),
        sgprs_per_simd=int(row["sgprs_per_simd"]),
        sgpr_alloc_granule=int(row["sgpr_alloc_granule"]),
        addressable_sgprs=int(row["addressable_sgprs"]),
        lds_per_workgroup=int(row["lds_per_workgroup"]),
        lds_per_cu=int(row["lds_per_cu"]),
        lds_granule=int(row["lds_granule"]),
        max_workgroups_per_cu=int(row["max_workgroups_per_cu"]),
        xnack=bool(row["xnack"]),
        sramecc=bool(row["sramecc"]),
        descriptor_layout=row["descriptor_layout"],
        source=source,
        lds_per_wgp=row.get("lds_per_wgp") if row["wgp"] else None,
        max_workgroups_per_wgp=row.get("max_workgroups_per_wgp") if row["wgp"] else None,
        generic_of=tuple(row.get("generic_of", ())),
        unconfirmed=dict(row.get("unconfirmed", {})),
    )
    if t.register_file not in REGISTER_FILES:
        raise ValueError(f"targets.toml [{name}]: register_file {t.register_file!r}")
    if t.descriptor_layout not in DESCRIPTOR_LAYOUTS:
        raise ValueError(f"targets.toml [{name}]: descriptor_layout {t.descriptor_layout!r}")
    for wave in t.wave_sizes:
        for table in (t.vgprs, t.vgpr_alloc_granule, t.vgpr_encode_granule):
            if wave not in table:
                raise ValueError(f"targets.toml [{name}]: no wave{wave} entry in a VGPR table")
    return t


@functools.lru_cache(maxsize=None)
def _targets() -> dict[str, Target]:
    raw = load_table("targets.toml")
    resolved: dict[str, dict] = {}
    sources: dict[str, str] = {}
    out: dict[str, Target] = {}
    for name, row in raw.items():
        merged = {}
        if "like" in row:
            parent = row["like"]
            if parent not in resolved:
                raise ValueError(f"targets.toml [{name}] is like {parent!r}, which is not above it")
            merged.update(resolved[parent])
            merged.pop("generic_of", None)
            # A doubt about a value is inherited with the value, not by a row that sets its own.
            merged["unconfirmed"] = {k: why for k, why in merged.get("unconfirmed", {}).items() if k not in row}
        merged.update({k: v for k, v in row.items() if k not in ("like", "source", "unconfirmed")})
        merged["unconfirmed"] = {**merged.get("unconfirmed", {}), **row.get("unconfirmed", {})}
        resolved[name] = merged
        # A row without its own note says which row its facts were copied from.
        sources[name] = row.get("source") or f"as {row['like']}: {sources[row['like']]}"
        out[name] = _build(name, merged, sources[name])
    return out


@functools.lru_cache(maxsize=None)
def _by_mach() -> dict[int, Target]:
    out: dict[int, Target] = {}
    for t in _targets().values():
        if t.mach in out:
            raise ValueError(f"targets.toml: mach {t.mach:#x} used by {out[t.mach].name} and {t.name}")
        out[t.mach] = t
    return out


def all_targets() -> list[Target]:
    return list(_targets().values())


def processor_name(text: str) -> str:
    """The bare processor of a target id, triple-prefixed or not: 'amdgcn-amd-amdhsa--gfx90a:xnack-' → 'gfx90a'."""
    return strip_triple(text).split(":", 1)[0].lower()


def strip_triple(text: str) -> str:
    """A target id without its 'amdgcn-amd-amdhsa--' (or offload-kind) prefix."""
    text = text.strip()
    if TRIPLE in text:
        text = text.split(TRIPLE, 1)[1].lstrip("-")
    return text


def get_target(name: str) -> Target:
    """The Target for a processor name or target id; UnknownTargetError if the table lacks it."""
    proc = processor_name(name)
    try:
        return _targets()[proc]
    except KeyError:
        raise UnknownTargetError(f"unknown processor {proc!r} (not in tables/targets.toml)") from None


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
