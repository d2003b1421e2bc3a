"""Which LLVM's occupancy rules to apply: tables/llvm_rules.toml, chosen by compiler version.

The version comes from ``--llvm-version`` / ``llvm_version=`` when given, else from the compiler
the code object names (``Producer``, read from ``.comment``), else the oldest rule set is used
and the answer says why. A compiler is first looked up by the commit its ``.comment`` names
(``[compilers]`` of the table: AMD fork commits and Triton's LLVM, each measured against its own
oracle); only a commit not there falls back to the rule set its version implies, with a warning
that names that assumption. Every choice that is not exact (a development snapshot from the cycle in
which the rules changed, a version older or newer than any rule set, AMD's fork, no version at
all) comes back with a warning; nothing is chosen silently.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from ..caches import cached
from ..codeobject.producer import Producer, is_snapshot
from ..errors import UsageError
from ..frozen import FrozenDict
from ..tabledata import Row, load_table
from ..targets import Target

SGPR_RULES = ("step-table", "budget-inverse")
TABLE = "llvm_rules.toml"
# An LLVM's view of some processors' targets.toml columns: ((column, value), ...), where a value is
# a wave map as ((wave, value), ...), an int or a bool (hashable, so a Target view can be cached).
Columns = tuple[tuple[str, Any], ...]
MIN_COMMIT_DIGITS = 12  # the short hashes AMD's .comment lines use (ROCm 10.1: d6f6cb691863)
_VERSION_RE = re.compile(r"(?P<major>\d+)(?:\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?)?(?P<git>git)?")


@dataclass(frozen=True, slots=True)
class LlvmRules:
    name: str
    summary: str
    releases: tuple[int, ...]
    snapshots: tuple[int, ...]
    partial_snapshots: tuple[int, ...]
    sgpr_occupancy: str
    lds_granule_rounding: bool
    changes: tuple[str, ...]
    oracle: str
    source: str
    # processor → ((column, ((wave, value), ...)), ...): hashable, so a view of a Target can be cached
    overrides: tuple[tuple[str, Columns], ...] = ()

    @property
    def first_release(self) -> int:
        return min(self.releases)

    @property
    def versioned(self) -> bool:
        """Whether an LLVM version chooses these rules (False: one compiler build's, by commit)."""
        return bool(self.releases or self.snapshots or self.partial_snapshots)

    def columns_for(self, processor: str) -> dict[str, Any]:
        """The targets.toml columns this LLVM computes differently for ``processor``."""
        return {
            column: FrozenDict(value) if isinstance(value, tuple) else value
            for column, value in dict(self.overrides).get(processor, ())
        }

    def target_view(self, t: Target) -> Target:
        """``t`` as this LLVM sees it (its overrides applied)."""
        return _target_view(self, t)

    def differs_for(self, other: LlvmRules, t: Target) -> bool:
        return (self.sgpr_occupancy, self.lds_granule_rounding, self.columns_for(t.name)) != (
            other.sgpr_occupancy,
            other.lds_granule_rounding,
            other.columns_for(t.name),
        )


@cached(maxsize=4096)
def _target_view(rules: LlvmRules, t: Target) -> Target:
    # Only the wave-map columns of _OVERRIDABLE, each a Target field of that type.
    columns: dict[str, Any] = rules.columns_for(t.name)
    return dataclasses.replace(t, **columns) if columns else t


@dataclass(frozen=True, slots=True)
class RulesChoice:
    """The rules applied and why: ``chosen_by`` and ``warnings`` go into the occupancy record."""

    rules: LlvmRules
    chosen_by: str
    warnings: tuple[str, ...] = ()
    major: int | None = None  # the LLVM major the choice stands for (None: the rules' newest release)

    @property
    def llvm_major(self) -> int:
        return self.major if self.major is not None else max(self.rules.releases)

    def as_dict(self) -> dict[str, str]:
        return {"rules": self.rules.name, "summary": self.rules.summary, "chosen_by": self.chosen_by}


@dataclass(frozen=True, slots=True)
class KnownCompiler:
    """A compiler build identified by its commit ([compilers] of tables/llvm_rules.toml)."""

    commit: str
    compiler: str
    rules: LlvmRules
    oracle: str
    source: str

    def matches(self, commit: str) -> bool:
        return len(commit) >= MIN_COMMIT_DIGITS and (self.commit.startswith(commit) or commit.startswith(self.commit))


@cached(maxsize=1)
def known_compilers() -> tuple[KnownCompiler, ...]:
    return _read()[1]


def compiler_of(commit: str | None) -> KnownCompiler | None:
    """The table's compiler for a commit from a .comment line, or None."""
    if not commit:
        return None
    return next((c for c in known_compilers() if c.matches(commit.lower())), None)


@cached(maxsize=1)
def version_sets() -> tuple[LlvmRules, ...]:
    """The rule sets an LLVM version chooses, oldest first."""
    return tuple(r for r in rule_sets() if r.versioned)


@cached(maxsize=1)
def rule_sets() -> tuple[LlvmRules, ...]:
    return _read()[0]


def _read() -> tuple[tuple[LlvmRules, ...], tuple[KnownCompiler, ...]]:
    """The rule sets and the compilers known by commit, the whole table checked at once."""
    table = Row(TABLE, "", load_table(TABLE))
    sets = {
        row.key: LlvmRules(
            row.key,
            row.text("summary"),
            row.wholes("releases", 1),
            row.wholes("snapshots", 1),
            row.wholes("partial_snapshots", 1, ()),
            row.text("sgpr_occupancy", choices=SGPR_RULES),
            row.flag("lds_granule_rounding"),
            row.texts("changes", ()),
            row.text("oracle"),
            row.text("source"),
            _overrides(row.sub("overrides", {})),
        )
        for row in table.rows(skip=("compilers",))
    }
    compilers = []
    for row in table.sub("compilers", {}).rows():
        commit = row.key
        rules = sets[row.text("rules", choices=tuple(sets))]
        if len(commit) < MIN_COMMIT_DIGITS or not all(c in "0123456789abcdef" for c in commit):
            raise row.error("is not a commit of 12+ hex digits", None)
        compilers.append(KnownCompiler(commit, row.text("compiler"), rules, row.text("oracle"), row.text("source")))
    return tuple(sets.values()), tuple(compilers)


def _wave_items(row: Row, column: str) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(row.waves(column).items()))


def _whole(row: Row, column: str) -> int:
    value: int = row.whole(column, 1)  # amdocc.numbers' one rule
    return value


def _flag(row: Row, column: str) -> bool:
    value: bool = row.flag(column)
    return value


# Columns a compiler may see differently from the table, and how to read them (each a Target field).
_OVERRIDABLE = {
    "vgprs": _wave_items,
    "vgpr_alloc_granule": _wave_items,
    "lds_per_workgroup": _whole,
    "lds_per_workgroup_wgp": _whole,
    "lds_per_cu": _whole,
    "lds_per_wgp": _whole,
    "mode_recorded": _flag,
}


def _overrides(table: Row) -> tuple[tuple[str, Columns], ...]:
    out = []
    for row in table.rows():
        read: list[tuple[str, Any]] = []
        for column in row.columns():
            if column == "cite":
                continue
            if column not in _OVERRIDABLE:
                raise row.error(f"cannot be overridden (only {', '.join(_OVERRIDABLE)})", column)
            read.append((column, _OVERRIDABLE[column](row, column)))
        out.append((row.key, tuple(read)))
    return tuple(out)


def rules_named(name: str) -> LlvmRules | None:
    return next((r for r in rule_sets() if r.name == name), None)


def rules_for_version(
    major: int, snapshot: bool, label: str, target: Target | None = None
) -> tuple[LlvmRules, list[str]]:
    """The rule set of LLVM ``major`` (a release, or a development snapshot of main), and the
    warnings that go with an inexact choice. ``label`` names the version in those warnings; a
    snapshot from the cycle in which a set's changes landed is warned about only when those
    changes matter for ``target``."""
    sets = version_sets()
    for rules in sets:
        if major in (rules.snapshots if snapshot else rules.releases):
            return rules, []
    for i, rules in enumerate(sets):
        if snapshot and major in rules.partial_snapshots:
            earlier = sets[i - 1] if i else rules
            if target is not None and earlier is not rules and not rules.differs_for(earlier, target):
                return earlier, []
            return earlier, [
                f"{label} is a development snapshot from the cycle in which {rules.name}'s "
                f"changes landed ({'; '.join(rules.changes)}); {earlier.name} rules used "
                "(--llvm-version chooses)"
            ]
    if major < sets[0].first_release:
        return sets[0], [
            f"{label} predates every modelled rule set: before LLVM {sets[0].first_release} "
            "occupancy came from getOccupancyWithLocalMemSize (largest workgroup only), which "
            f"is not modelled; {sets[0].name} rules used and may differ for LDS-bound kernels "
            "and restricted workgroup ranges"
        ]
    newest = sets[-1]
    return newest, [
        f"{label} is newer than the newest rule set, {newest.name} ({newest.summary}); {newest.name} rules used"
    ]


def parse_version(text: str, target: Target | None = None) -> RulesChoice:
    """``--llvm-version``: a rule set name ('llvm-23'), 'main' (the newest), or a version such as
    '22', '22.1.8' or '24.0.0git'."""
    spec = text.strip().lower()
    named = rules_named(spec)
    if named is not None:
        return RulesChoice(named, f"--llvm-version {text}")
    if spec == "main":
        return RulesChoice(version_sets()[-1], "--llvm-version main")
    m = _VERSION_RE.fullmatch(spec)
    if m is None:
        names = ", ".join(r.name for r in rule_sets())
        raise UsageError(
            f"{{llvm_version}} {text!r} is not a version: give e.g. 22, 22.1.8, 24.0.0git, main, or a rule set "
            f"({names})",
            params=("llvm_version",),
        )
    version = tuple(int(x) for x in (m.group("major"), m.group("minor"), m.group("patch")) if x is not None)
    rules, warnings = rules_for_version(version[0], is_snapshot(version, bool(m.group("git"))), f"LLVM {text}", target)
    return RulesChoice(rules, f"--llvm-version {text}", tuple(warnings), version[0])


@cached(maxsize=1024)
def rules_for_producer(producer: Producer | None, from_file: bool, target: Target | None = None) -> RulesChoice:
    """The rules for the compiler a code object names; the oldest set for typed-in numbers."""
    if producer is None:
        oldest = version_sets()[0]
        if not from_file:
            return RulesChoice(oldest, "default (no code object)")
        return RulesChoice(
            oldest,
            "default",
            (
                f"the code object does not name the compiler that built it (no LLVM version in .comment); "
                f"{oldest.name} rules used (--llvm-version chooses)",
            ),
        )
    via = (
        "clang's .comment line"
        if producer.tool == "clang"
        else ".comment linker line (the compiler is taken to be the linker's LLVM)"
    )
    known = compiler_of(producer.commit)
    if known is not None:
        return RulesChoice(
            known.rules,
            f"code object: {producer.text!r} ({via}; commit {known.commit[:12]}: {known.compiler})",
            (),
            producer.major,
        )
    label = f"{producer.tool} {producer.version_text}" + (f" ({producer.vendor})" if producer.vendor else "")
    rules, warnings = rules_for_version(producer.major, producer.snapshot, f"the code object's {label}", target)
    if producer.vendor.upper().startswith("AMD"):
        which = (
            f"whose commit {producer.commit[:12]} is not among the compilers tables/llvm_rules.toml has measured"
            if producer.commit
            else "which names no commit"
        )
        warnings.append(
            f"built by AMD's LLVM fork ({producer.text!r}), {which}: the rules its version "
            f"{producer.version_text} implies ({rules.name}) are assumed, and AMD's fork may carry "
            f"occupancy changes upstream LLVM {producer.version_text} lacks"
        )
    return RulesChoice(rules, f"code object: {producer.text!r} ({via})", tuple(warnings), producer.major)


def version_option(llvm_version: str | None, lds_granule_rounding: bool, sgpr_trap_reserve: bool) -> str | None:
    """The llvm model's ``llvm_version`` from it and the old switches that are spellings of a version;
    contradicting them is an error."""
    alias = alias_version(bool(lds_granule_rounding), bool(sgpr_trap_reserve))
    if alias is None:
        return llvm_version
    if llvm_version is not None and parse_version(llvm_version).rules.name != alias:
        raise UsageError(
            f"{{lds_granule_rounding}}/{{sgpr_trap_reserve}} mean {alias} rules, but "
            f"{{llvm_version}} {llvm_version} chooses {parse_version(llvm_version).rules.name}",
            params=("lds_granule_rounding", "sgpr_trap_reserve", "llvm_version"),
        )
    return llvm_version or alias


def alias_version(lds_granule_rounding: bool, sgpr_trap_reserve: bool) -> str | None:
    """The old switches are spellings of the version that brought them: either one selects the first
    rule set that rounds LDS or inverts the SGPR budget (both arrived together, in LLVM 23)."""
    if not (lds_granule_rounding or sgpr_trap_reserve):
        return None
    for rules in rule_sets():
        if (lds_granule_rounding and rules.lds_granule_rounding) or (
            sgpr_trap_reserve and rules.sgpr_occupancy == "budget-inverse"
        ):
            return rules.name
    raise UsageError("no rule set rounds LDS or inverts the SGPR budget")
