"""Which HIP runtime the ``hip`` model reproduces: the profiles of ``tables/hip_profiles.toml``.

One profile per ROCm release line (read from that release's tagged source: hipamd and ROCclr up to
ROCm 5.5, CLR from 5.6; or inferred from the develop history around it when the tag was not
readable: ``evidence``) plus two ROCm develop snapshots. A profile says which processors the
runtime runs and with which VGPR file, and how its occupancy function, metadata parse and module
wrapper behave. The default is the newest release whose answers a real runtime has confirmed
(``default`` in the table); ``develop`` is used only when named. A patch release
(``rocm-6.4.1``) names its release line's profile. This module only reads the table and maps a
``hipRuntimeGetVersion()`` value onto a profile; the arithmetic lives in :mod:`.hip`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..caches import cached
from ..errors import TableError, UnknownTargetError, UsageError
from ..frozen import freeze
from ..tabledata import Row, load_table
from ..targets import Target

TABLE = "hip_profiles.toml"
# hipRuntimeGetVersion() = major * 10_000_000 + minor * 100_000 + patch (hipamd/CMakeLists.txt,
# HIP_VERSION; ROCm 6.4.0's runtime reports 6.4.43482 as 60443482).
_MAJOR, _MINOR = 10_000_000, 100_000
# The profile keys that decide an answer.
BEHAVIOUR = (
    "vgpr_table",
    "unknown",
    "vgpr_guard",
    "zero_vgpr_waves",
    "caller_value",
    "sgpr_granule",
    "sgpr_trap_reserve",
    "wgp_parse",
    "wave_size",
    "simd_count",
    "grid_cu_correction",
    "pr9571",
)


@dataclass(frozen=True, slots=True, eq=False)
class HipProfile:
    name: str
    release: tuple[int, int] | None  # ROCm release line; None for develop snapshots
    dates: str
    changes: str
    source: str
    unknown: str | None  # why this release cannot be reproduced (then nothing else is set)
    evidence: str | None = None  # "inferred from ...": not read at the release's own tag
    confirmed: str | None = None  # how the release's own runtime confirmed the profile's answers
    hip_version: tuple[int, int] | None = None  # what its runtime reports, when not `release`
    vgpr_table: dict[str, Any] | None = None  # processor → [VGPRs per SIMD, granule]
    vgpr_guard: str = "vgprs"
    zero_vgpr_waves: str = "hipErrorUnknown"
    caller_value: str = "unchanged"
    sgpr_granule: int | None = 16  # the SGPR granule the runtime rounds by; None: the target's own
    sgpr_trap_reserve: int = 0
    wgp_parse: str = "true-or-1"
    wave_size: str = "metadata"
    simd_count: str = "isa"
    grid_cu_correction: bool = True
    pr9571: bool = False
    pr9571_isa_major: int | None = None  # the ISA major PR #9571 changed (with pr9571 set)

    @property
    def release_name(self) -> str:
        return "develop" if self.release is None else f"ROCm {self.release[0]}.{self.release[1]}"

    @property
    def reports(self) -> tuple[int, int] | None:
        """The HIP major.minor this release's hipRuntimeGetVersion() returns (projects/hip/VERSION of
        its source: TheRock 7.9.0's runtime, for one, reports HIP 7.1)."""
        return self.hip_version or self.release

    def runs(self, target: Target) -> bool:
        """Whether this runtime runs ``target`` at all (its device table lists it). Only for known
        profiles."""
        return self.vgpr_file(target) is not None

    @property
    def inferred(self) -> str | None:
        """The warning every answer of a profile established by inference carries; none once the
        release's own runtime has confirmed its answers (``confirmed``: the evidence stays as data)."""
        return f"HIP profile {self.name} is {self.evidence}" if self.evidence and not self.confirmed else None

    def behaviour(self) -> tuple[object, ...]:
        """Everything that decides an answer (two profiles with equal behaviour answer alike)."""
        return tuple(getattr(self, key) for key in BEHAVIOUR)

    def vgpr_file(self, target: Target) -> tuple[int, int] | None:
        """[VGPRs per SIMD, granule] in HIP's units (wave32 on gfx10+); None when this runtime does
        not run the processor. Only for known profiles."""
        assert self.vgpr_table is not None, f"HIP profile {self.name} is unknown: it has no VGPR table"
        value = self.vgpr_table.get(target.name)
        return None if value is None else (int(value[0]), int(value[1]))

    def parses_wgp(self, metadata_text: str | None) -> bool:
        """Whether HIP reads .workgroup_processor_mode as on. ``metadata_text`` is the note's value
        as comgr renders it (a usage's ``wgp_metadata``): LLVM writes the integer 1, i.e. "1"."""
        if self.wgp_parse == "none":  # ROCm <= 5.5: the key is not read at all
            return False
        return metadata_text == "true" or (self.wgp_parse == "true-or-1" and metadata_text == "1")


# The values each behaviour column may take (amdocc.models.hip reads them).
CHOICES = {
    "vgpr_guard": ("vgprs", "sgprs"),
    "zero_vgpr_waves": ("hipErrorUnknown", "division-by-zero"),
    "caller_value": ("0", "unchanged", "0-or-unchanged"),
    "wgp_parse": ("true-or-1", "true-only", "none"),
    "wave_size": ("metadata", "agent"),
    "simd_count": ("isa", "by-major", "device"),
}


# sgpr_granule: "16" is the literal in the occupancy function; "target" is comgr's SGPRAllocGranule.
_SGPR_GRANULES: dict[str, int | None] = {"16": 16, "target": None}


def _vgpr_tables(raw: Row) -> dict[str, dict[str, Any]]:
    """Resolve `like` (start from an earlier table) and `drop` (processors no longer run)."""
    out: dict[str, dict[str, Any]] = {}
    for rows in raw.rows():
        table: dict[str, Any] = {}
        if rows.has("like"):
            table = dict(out[rows.text("like", choices=tuple(out))])
        for processor in rows.texts("drop", ()):
            if processor not in table:
                raise rows.error(f"{processor!r} is not in the table it is like", "drop")
            table.pop(processor)
        for processor in rows.columns():
            if processor in ("like", "drop"):
                continue
            pair = rows.wholes(processor)
            if len(pair) != 2:
                raise rows.error(f"{list(pair)} is not [VGPRs per SIMD, granule]", processor)
            table[processor] = pair
        out[rows.key] = table
    return {name: freeze(table) for name, table in out.items()}


def _release(row: Row, column: str) -> tuple[int, int] | None:
    text = row.text(column, None)
    if text is None:
        return None
    major, dot, minor = text.partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise row.error(f"{text!r} is not MAJOR.MINOR", column)
    return int(major), int(minor)


def _evidence(name: str, text: str | None) -> str | None:
    if text is not None and not text.startswith("inferred from "):
        raise TableError(
            f'{TABLE}: profile {name!r}: evidence must say what it is inferred from ("inferred from ..."), got {text!r}'
        )
    return text


@cached(maxsize=1)
def _table() -> tuple[dict[str, HipProfile], dict[str, str], str]:
    raw = Row(TABLE, "", load_table(TABLE))
    tables = _vgpr_tables(raw.sub("vgpr_tables"))
    pr9571_isa_major = raw.whole("pr9571_isa_major", 1)
    profiles = {}
    for row in raw.sub("profiles").rows():
        name = row.key
        common = dict(
            name=name,
            release=_release(row, "release"),
            dates=row.text("dates"),
            changes=row.text("changes"),
            source=row.text("source"),
            unknown=row.text("unknown", None),
            evidence=_evidence(name, row.text("evidence", None)),
            confirmed=row.text("confirmed", None),
            hip_version=_release(row, "hip_version"),
        )
        if common["unknown"]:
            profiles[name] = HipProfile(**common)
            continue
        profiles[name] = HipProfile(
            **common,
            vgpr_table=tables[row.text("vgpr_table", choices=tuple(tables))],
            **{column: row.text(column, choices=choices) for column, choices in CHOICES.items()},
            sgpr_granule=_SGPR_GRANULES[row.text("sgpr_granule", choices=tuple(_SGPR_GRANULES))],
            sgpr_trap_reserve=row.whole("sgpr_trap_reserve", 0),
            grid_cu_correction=row.flag("grid_cu_correction"),
            pr9571=row.flag("pr9571"),
            pr9571_isa_major=pr9571_isa_major if row.flag("pr9571") else None,
        )
    aliases = {}
    for alias in (aliased := raw.sub("aliases", {})).columns():
        aliases[alias] = target = aliased.text(alias)
        if target not in profiles or alias in profiles:
            raise TableError(f"{TABLE}: alias {alias!r} -> {target!r} is not a profile of its own")
    return profiles, aliases, raw.text("default", choices=tuple(profiles))


def profiles() -> dict[str, HipProfile]:
    """Every name ``--hip-profile`` accepts (the era aliases included), mapped to its profile;
    a profile's own name is ``profile.name``."""
    own, aliases, _ = _table()
    return {**own, **{alias: own[target] for alias, target in aliases.items()}}


def aliases() -> dict[str, str]:
    return dict(_table()[1])


def default_profile_name() -> str:
    return _table()[2]


# A patch release of a release line: rocm-6.4.1, rocm-7.14.1, rocm-5.2.3.
_PATCH_RELEASE = re.compile(r"rocm-(\d+)\.(\d+)\.\d+")


def canonical_name(name: str) -> str:
    """The profile name ``name`` stands for: a patch release (``rocm-6.4.1``) names the profile of
    its release line (``rocm-6.4``) when there is one; any other name is returned as given."""
    m = _PATCH_RELEASE.fullmatch(name)
    if m is not None and name not in profiles():
        line = f"rocm-{int(m.group(1))}.{int(m.group(2))}"
        if line in _table()[0]:
            return line
    return name


@cached(maxsize=256)
def get_profile(name: str | None) -> HipProfile:
    name = canonical_name(name) if name else default_profile_name()
    try:
        return profiles()[name]
    except KeyError:
        known = ", ".join(_table()[0])
        raise UnknownTargetError(
            f"unknown HIP profile {name!r} (known: {known}; aliases: {', '.join(_table()[1])}; "
            "a patch release such as rocm-6.4.1 names its release line)"
        ) from None


class ProfileDoesNotRun(UsageError):
    """A HIP profile was asked about a processor its runtime does not run."""


def check_runs(profile: HipProfile, target: Target) -> None:
    """Raise :class:`ProfileDoesNotRun` naming both when ``profile``'s runtime does not run
    ``target`` (its device table does not list it)."""
    if profile.unknown is not None or profile.runs(target):
        return
    others = [p.name for p in _table()[0].values() if p.unknown is None and p.release is not None and p.runs(target)]
    which = f"profiles that run it: {', '.join(others)}" if others else "no release profile runs it"
    raise ProfileDoesNotRun(
        f"HIP profile {profile.name} ({profile.release_name}) does not run {target.name}: its runtime's "
        f"device table does not list it ({which}); ask for a what-if (what_if=True, or --what-if) "
        "to see that profile's refusal anyway"
    )


def decode_runtime_version(version: int) -> tuple[int, int, int]:
    """(major, minor, patch) of a hipRuntimeGetVersion() value."""
    return version // _MAJOR, version % _MAJOR // _MINOR, version % _MINOR


@dataclass(frozen=True, slots=True)
class RuntimeProfile:
    """The profile chosen for a runtime, and a warning when its version is not a release amdocc knows
    or is reported by releases that answer differently."""

    profile: HipProfile
    version: int
    warning: str | None


def profile_for_runtime(version: int) -> RuntimeProfile:
    """The profile of the ROCm release whose runtime reports ``version``.

    Several releases may report one HIP version (TheRock 7.10, 7.11 and 7.12 report HIP 7.2 like
    ROCm 7.2): the release named by that version is chosen, with a warning naming the others
    that would answer differently. A version no release reports falls back to the newest known
    release before it (the oldest known one when it predates them all), with a warning saying so.
    """
    # By the version reported, the release named by that version first, then by release.
    releases = sorted(
        (p for p in _table()[0].values() if p.release is not None),
        key=lambda p: (p.reports, p.release != p.reports, p.release),
    )
    if version <= 0:
        oldest = releases[0]
        return RuntimeProfile(
            oldest,
            version,
            f"hipRuntimeGetVersion() returned {version}, which is "
            f"no HIP version; comparing with {oldest.name}, the oldest release known",
        )
    major, minor, patch = decode_runtime_version(version)
    same = [p for p in releases if p.reports == (major, minor)]
    if same:
        chosen = same[0]
        differ = [p for p in same[1:] if p.behaviour() != chosen.behaviour()]
        if not differ:
            return RuntimeProfile(chosen, version, None)
        names = "; ".join(f"{p.name} ({_differences(chosen, p)})" for p in differ)
        return RuntimeProfile(
            chosen,
            version,
            f"HIP {major}.{minor} ({version}) is reported by "
            f"{', '.join(p.release_name for p in same)}; using {chosen.name}. {names} "
            "would answer differently: give its profile if the runtime is that release",
        )
    earlier = [p for p in releases if p.reports is not None and p.reports < (major, minor)]
    # The newest version before it, and of the releases reporting that one, the one it names.
    chosen = next(p for p in earlier if p.reports == earlier[-1].reports) if earlier else releases[0]
    where = "the newest known release before it" if earlier else "the oldest known release"
    return RuntimeProfile(
        chosen,
        version,
        f"HIP runtime {major}.{minor}.{patch} ({version}) is not a ROCm "
        f"release amdocc has a profile for; using {chosen.name}, {where}",
    )


def _differences(a: HipProfile, b: HipProfile) -> str:
    """Which table keys two profiles differ in, e.g. ``caller_value unchanged``."""
    return ", ".join(
        f"{key} {_shown(key, getattr(b, key))}" if key != "vgpr_table" else "its VGPR table"
        for key, x, y in zip(BEHAVIOUR, a.behaviour(), b.behaviour(), strict=True)
        if x != y
    )


def _shown(key: str, value: object) -> str:
    """A behaviour value as the table spells it (an SGPR granule of None is the target's)."""
    return "target" if key == "sgpr_granule" and value is None else str(value)
