"""check: the CI gate over every selected kernel (``amdocc check``): rules and budgets judged per
kernel, violations classified against an accepted baseline.

``check_file`` is the per-file worker; :func:`run_check` gathers a run into the record
``check --json`` prints; :func:`check` is the same from Python with keyword settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from pathlib import Path

    from ..codeobject.model import Kernel
    from ..policy.baseline import Entry
    from ..policy.budgets import Outcome
    from ..policy.checks import Settings
    from .reading import Event, FileItem
    from .selection import Selection


@dataclass(frozen=True)
class CheckRun:
    """A check over some files: ``result`` as ``check --json`` prints it (its "baseline" and
    "config_overrides" left for the caller to fill), the violations found as baseline entries,
    the kernels checked (path, origin, kernel, target; with ``with_checked``, for JUnit) and
    which baseline entries the run could have matched (``in_scope``)."""

    result: dict[str, Any]
    found: list[Entry]
    checked: list[tuple[str, str, str, str]]
    in_scope: Callable[[Entry], bool]


def run_check(
    paths: list[str],
    settings: Settings,
    selection: Selection,
    entries: list[Entry],
    jobs: int | None = 1,
    *,
    with_checked: bool = False,
) -> CheckRun:
    """Check every kernel of ``paths`` that ``selection`` keeps under ``settings``, and classify
    each violation against the baseline ``entries`` (new, worse, accepted)."""
    from .. import check_report
    from ..identity import Numbering
    from ..policy import baseline as bl
    from . import parallel

    files = parallel.expand(paths)
    roots = [p for p in paths if p != "-" and os.path.isdir(p)]
    spec = (settings.as_dict(), (selection.target, selection.device, selection.pattern, bool(selection.what_if)), roots)
    violations: list[dict[str, Any]] = []
    checked: list[tuple[str, str, str, str]] = []  # (path, origin, kernel, target) for JUnit
    errors: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    not_evaluated: dict[tuple[str, str, str | None], int] = {}  # (rule, reason, model) → kernels
    kernels = 0
    number = Numbering()
    # Each file's kernels are gathered where they are read; what comes back is its violations,
    # numbered within the file, and counts (a wheel's 80,000 verdicts do not cross processes).
    jobs = parallel.jobs_for(jobs, files)
    isolated = settings.reads_machine_code  # LLVM's disassembler, which may crash on some bytes
    for kind, value in parallel.run(files, gathered_file, (spec, with_checked), jobs, isolated=isolated):
        if kind == "gathered":
            part = value
            kernels += part.kernels
            for v in part.violations:  # numbered after the copies read before this file
                v["copy"] += number.copies(v["location"], v["target"], v["kernel"])
            number.add(part.copies)
            violations += part.violations
            checked += part.checked
            for key, n in part.not_evaluated.items():
                not_evaluated[key] = not_evaluated.get(key, 0) + n
        elif kind == "seen":
            selection.merge(value)
        else:
            (errors if kind == "error" else skipped).append(value)
    from ..policy.budgets import rules_of

    budget_rules = set(rules_of(settings.budgets))

    def in_scope(e: Entry) -> bool:
        return (e.rule in settings.rules or e.rule in budget_rules) and selection.covers(e.kernel, e.target)

    found = [bl.Entry(v["kernel"], v["target"], v["rule"], v["value"], v["location"], v["copy"]) for v in violations]
    statuses, stale = bl.classify(found, entries, in_scope)
    by_key = bl.entries_by_key(entries)
    for v, f, status in zip(violations, found, statuses, strict=True):  # classify keeps found's order
        v["status"] = status
        entry = bl.accepted_by(f, by_key)
        v["accepted_value"] = None if entry is None else entry.value
    result: dict[str, Any] = {
        "settings": settings.as_dict(),
        "baseline": None,  # the caller names its file
        "config_overrides": [],  # the caller says what its flags overrode
        "violations": violations,
        "stale": [e.as_dict() for e in stale],
        "not_evaluated": [
            {"rule": r, "reason": why, "kernels": n, "model": model} for (r, why, model), n in not_evaluated.items()
        ],
        "skipped": skipped,
        "errors": errors,
    }
    failing = sum(v["status"] in check_report.FAILING for v in violations)
    result["summary"] = {
        "kernels": kernels,
        "violations": len(violations),
        "failing": failing,
        "accepted": len(violations) - failing,
        "stale": len(stale),
        "errors": len(errors),
    }

    return CheckRun(result, found, checked, in_scope)


@dataclass
class Gathered:
    """One file's kernels checked: how many, their violations (each with its kernel's "copy"
    within the file), the kernels each (rule, reason, model) was not evaluated for, the kernels
    checked as (path, origin, kernel, target) when asked (for JUnit), and how many kernels each
    (location, target, kernel) has (amdocc.identity.Numbering.counts)."""

    kernels: int = 0
    violations: list[dict[str, Any]] = field(default_factory=list)
    not_evaluated: dict[tuple[str, str, str | None], int] = field(default_factory=dict)
    checked: list[tuple[str, str, str, str]] = field(default_factory=list)
    copies: dict[tuple[str, str, str], int] = field(default_factory=dict)


def gathered_file(
    item: FileItem, spec: tuple[tuple[dict[str, Any], tuple[str | None, str | None, str | None, bool], list[str]], bool]
) -> Iterator[Event]:
    """check_file's events for one file with its kernels gathered: every other event as it
    comes, then ("gathered", Gathered). ``spec``: check_file's, and whether to list the kernels."""
    from ..identity import Numbering

    check_spec, with_checked = spec
    part = Gathered()
    number = Numbering()
    for kind, value in check_file(item, check_spec):
        if kind != "kernel":
            yield kind, value
            continue
        part.kernels += 1
        copy = number.copy(value["location"], value["target"], value["kernel"])
        if with_checked:  # JUnit lists every kernel; the other reports only what failed
            part.checked.append((value["path"], value["origin"], value["kernel"], value["target"]))
        for v in value["violations"]:
            v["copy"] = copy
        part.violations += value["violations"]
        for key in value["not_evaluated"]:
            part.not_evaluated[key] = part.not_evaluated.get(key, 0) + 1
    part.copies = number.counts()
    yield "gathered", part


def check_file(
    item: FileItem, spec: tuple[dict[str, Any], tuple[str | None, str | None, str | None, bool], list[str]]
) -> Iterator[Event]:
    """Yield ("kernel", record) per kernel checked, ("skipped", record) and ("error", record)
    per part passed over or unreadable, and last ("seen", what the selection passed over)."""
    import dataclasses

    from ..demangle import demangle
    from ..errors import AmdoccError, TableError
    from ..identity import location_of, relative_path
    from ..integrations.launches import recorded_launch
    from ..policy.checks import Settings, declared_block, evaluate
    from .reading import kernel_error
    from .selection import Selection, selected_in

    settings_dict, chosen, roots = spec
    settings = Settings(**settings_dict)
    selection = Selection(*chosen)
    where = selection.evaluation()
    for kind, value in selected_in(item, selection):
        if kind == "code_object":
            place = selection.evaluated_as(value.target_id, value.target)
            location = location_of(relative_path(value.path, roots), value.origin.hops)
            continue
        if kind != "kernel":
            yield kind, value
            continue
        co, kernel = value
        ident = {
            "path": co.path,
            "origin": co.origin.chain,
            "kernel": kernel.name,
            "symbol": kernel.symbol,
            "demangled": demangle(kernel.name),
            **place,
            "location": location,  # with "copy", numbered by run(): amdocc.identity
        }
        try:
            judged, declared, launch = settings, declared_block(kernel), None
            if item_path := co.path:  # a launch a Triton cache or .pt2 records: judged at it
                launch = recorded_launch(
                    item_path, co.origin.chain, kernel.name, co.target_id.processor, kernel.resources.wavefront_size
                )
            if launch is not None:
                declared = (launch.block_size, f"{launch.source} launch")
                if not settings.dynamic_lds:
                    judged = dataclasses.replace(settings, dynamic_lds=launch.dynamic_lds)
            verdict = evaluate(kernel, judged, where=where, declared=declared)
            budget_outcomes = budget_check(kernel, judged, where, declared, ident["demangled"])
        except TableError:  # a damaged table is no kernel's fault: the whole run stops
            raise
        except AmdoccError as exc:
            yield "error", kernel_error(co, kernel, exc)
            continue
        yield (
            "kernel",
            {
                **ident,
                "violations": [
                    {**ident, "rule": v.rule, "value": v.value, "limit": v.limit, "message": v.message, "line": v.line}
                    for v in verdict.violations
                ]
                + [
                    {**ident, "rule": b.rule, "value": b.value, "limit": b.limit, "message": b.message, "line": b.line}
                    for b in budget_outcomes
                    if b.violated
                ],
                "not_evaluated": [(n.rule, n.reason, n.model) for n in verdict.not_evaluated]
                + [(b.rule, b.message, None) for b in budget_outcomes if not b.violated],
                "launch": None if launch is None else launch.as_dict(),
            },
        )


def budget_check(
    kernel: Kernel,
    settings: Settings,
    where: dict[str, Any],
    declared: tuple[int | None, str],
    demangled: str | None,
) -> list[Outcome]:
    """The budgets' comparisons on one kernel, at the --block given, else the declared (or
    recorded) launch. A budget's pattern is matched against each of the kernel's
    ``pattern_names`` (mangled, demangled, without return type, qualified name)."""
    if not settings.budgets:
        return []
    from ..demangle import pattern_names
    from ..models import occupancy
    from ..policy.budgets import Facts, evaluate

    block, source = (settings.block, "given") if settings.block else declared
    facts = Facts(kernel, where, block, source, settings.dynamic_lds, occupancy)
    return evaluate(settings.budgets, pattern_names(kernel.name, demangled), facts)


@dataclass(frozen=True)
class CheckSetup:
    """What a check runs with, once the caller's settings met the project's file: the rule
    ``settings``, the ``baseline`` file (or None), whether stale entries fail, and one line per
    file setting the caller's values replaced or made unused (``check --json``'s
    "config_overrides")."""

    settings: Settings
    baseline: Path | None
    fail_on_stale: bool
    overrides: list[str]


def setup(
    given: dict[str, Any],
    config: str | os.PathLike[str] | bool = False,
    *,
    update_baseline: bool = False,
    name_of: Callable[[str], str] = lambda setting: f"--{setting}",
) -> CheckSetup:
    """The caller's settings (keyed as [tool.amdocc.check] keys them, None: not given) over the
    project's: ``config`` True looks for the nearest pyproject.toml with a [tool.amdocc.check]
    table from the current directory up (as the command does), a path reads that file, False
    reads none. ``name_of`` names a setting as the caller gave it (the command: its flag), in
    messages; ``update_baseline`` says the baseline is about to be rewritten."""
    from pathlib import Path

    from ..errors import UsageError
    from ..policy import check_config as cfg

    flags: dict[str, Any] = {}
    for setting, value in given.items():
        if value is not None:
            flags[setting] = cfg.SETTINGS[setting][0](value, name_of(setting))
    file: dict[str, Any] = {}
    name: str | None = None
    if config is True:
        found = cfg.find(Path.cwd())
        if found is not None:
            name, file = str(found), cfg.read(found)
    elif config is not False:
        name = os.fspath(config)
        file = cfg.read(Path(config))
    settings, rest = cfg.resolve(flags, file, name, flag_name=name_of)
    baseline: Path | None = rest.get("baseline")
    fail_on_stale = bool(rest.get("fail_on_stale"))
    params = ("update_baseline", "baseline", "fail_on_stale")
    if update_baseline and baseline is None:
        raise UsageError("{update_baseline} needs {baseline} FILE (or baseline in [tool.amdocc.check])", params=params)
    if fail_on_stale and baseline is None:
        raise UsageError("{fail_on_stale} needs a baseline ({baseline} FILE)", params=params)
    if update_baseline and fail_on_stale:
        raise UsageError(
            "{fail_on_stale}: {update_baseline} drops stale entries and accepts every violation, "
            "so nothing would fail on them",
            params=params,
        )
    return CheckSetup(settings, baseline, fail_on_stale, cfg.overrides(flags, file, name))


def baseline_entries(chosen: CheckSetup, update_baseline: bool = False) -> tuple[list[Entry], str | None]:
    """The accepted violations of ``chosen``'s baseline (none when there is no file yet to
    update), and a notice when the file is in an older form."""
    from ..policy import baseline as bl

    path = chosen.baseline
    if path is None or (update_baseline and not path.exists()):
        return [], None
    entries = bl.read(path)
    return entries, bl.upgrade_notice(path, entries)


def rewrite_baseline(run: CheckRun, entries: list[Entry], path: Path) -> int:
    """Rewrite the baseline ``path`` to accept every violation ``run`` found (dropping the
    entries it could have matched and did not); the number of entries written."""
    from ..policy import baseline as bl

    new = bl.updated(run.found, entries, run.in_scope)
    bl.write(path, new)
    return len(new)


def check(
    paths: StrPath | Iterable[StrPath],
    *,
    target: str | None = None,
    device: str | None = None,
    kernel: str | None = None,
    what_if: bool = False,
    baseline: str | os.PathLike[str] | None = None,
    update_baseline: bool = False,
    config: str | os.PathLike[str] | bool = False,
    jobs: int | None = 1,
    **settings: Any,
) -> dict[str, Any]:
    """Check every selected kernel of ``paths``: the record ``amdocc check --json`` prints
    ({"settings", "violations", "stale", "not_evaluated", "summary", ...}). ``settings`` are
    the command's rules and thresholds under their Python names, read as the command reads its
    flags: ``rules`` (names as ``--rules`` spells them, "spills", "defaults" and "all" included,
    a list, never one text; ``rules=("defaults", "spills-in-loops")`` adds the opt-in rule that
    disassembles the kernels), ``max_vgpr_spills``, ``max_sgpr_spills``, ``max_scratch``,
    ``min_occupancy`` (which turns the occupancy rule on), ``block``, ``dynamic_lds``, ``model``,
    ``budgets``; None means "not given". ``config`` brings the project's [tool.amdocc.check]
    under them (True: found from the current directory up, as the command does; or a file),
    ``baseline`` (else the file's) classifies accepted violations, and ``update_baseline``
    rewrites the baseline to accept what was found (not when an input could not be read: an AmdoccWarning says so). A
    violation counts as failing when ``result["summary"]["failing"]`` is not 0."""
    import warnings

    from ..errors import AmdoccWarning
    from ..policy import check_config as cfg
    from .selection import Selection

    given = _given(settings)
    given["baseline"] = None if baseline is None else os.fspath(baseline)
    chosen = setup(given, config, update_baseline=update_baseline, name_of=_PYTHON_NAMES.__getitem__)
    selection = Selection(target, device, kernel, what_if)
    if selection.named is not None:
        cfg.floor_on(chosen.settings, selection.named[1], selection.target_text or "")
    entries, _notice = baseline_entries(chosen, update_baseline)
    run = run_check(path_list(paths), chosen.settings, selection, entries, jobs)
    if not selection.matched and not selection.nothing_to_evaluate():
        raise selection.nothing_selected_error()
    run.result["config_overrides"] = chosen.overrides
    run.result["baseline"] = None if chosen.baseline is None else str(chosen.baseline)
    if update_baseline and chosen.baseline is not None:
        if run.result["errors"] or not selection.matched:
            why = "some input could not be read" if run.result["errors"] else "no kernel was checked"
            warnings.warn(AmdoccWarning(f"the baseline was not updated, since {why}"), stacklevel=2)
        else:
            rewrite_baseline(run, entries, chosen.baseline)
    return run.result


# check()'s keyword settings → the [tool.amdocc.check] / flag setting each one is.
_SETTING_NAMES = {
    "rules": "rules",
    "max_vgpr_spills": "max-vgpr-spills",
    "max_sgpr_spills": "max-sgpr-spills",
    "max_scratch": "max-scratch",
    "min_occupancy": "min-occupancy",
    "block": "block",
    "dynamic_lds": "dynamic-lds",
    "model": "model",
    "budgets": "budget",
}
_PYTHON_NAMES = {
    **{setting: name for name, setting in _SETTING_NAMES.items()},
    "baseline": "baseline",
    "fail-on-stale": "fail_on_stale",
}


def _given(given: dict[str, Any]) -> dict[str, Any]:
    """check()'s keyword settings keyed as the command's settings (lists checked as lists)."""
    from ..errors import UsageError
    from .reading import sequence

    out: dict[str, Any] = {}
    for name, value in given.items():
        setting = _SETTING_NAMES.get(name)
        if setting is None:
            raise UsageError(f"check: unknown setting {name!r} (settings: {', '.join(_SETTING_NAMES)})")
        if value is not None and name in ("rules", "budgets"):
            value = sequence(value, name, "rule names" if name == "rules" else "budget expressions")
        out[setting] = value
    return out


def settings_of(given: dict[str, Any]) -> Settings:
    """check()'s keyword settings as amdocc.policy.checks.Settings, through the parsers and the
    resolution the command's flags go through (amdocc.policy.check_config), so that the same
    words mean the same thing: rule names and groups as ``--rules`` takes them (a list, never
    one text: ``rules=("scratch",)``), the occupancy rule on when ``min_occupancy`` is given,
    a threshold of a rule that is off refused. None means "not given"."""
    return setup(_given(given), name_of=_PYTHON_NAMES.__getitem__).settings
