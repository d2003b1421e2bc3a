"""The rules of ``amdocc check``: small functions over one kernel and its occupancy.

A kernel-library CI gate asks the same questions of every kernel: does it spill, does it use
scratch, does it reach an occupancy floor, can it launch at the size it declares, does its LDS
fit, and can amdocc model it at all. Each rule here answers one of them from a parsed kernel
(and, for the occupancy rules, the models' answers) and returns a :class:`Violation`, nothing,
or a :class:`NotEvaluated` saying why it could not tell. Nothing is guessed: a count the code
object does not carry is "not evaluated", never 0.

Sources of the rules: llama.cpp's HIP VGPR-spill check (ggml-org/llama.cpp #20430) fails on
kernels that spill VGPRs and keeps a hand-written ignore list; XLA (openxla/xla #35211) reads
.vgpr_spill_count/.sgpr_spill_count from the metadata note and rejects a kernel whose stack is
used (.private_segment_fixed_size > 0 or .uses_dynamic_stack), since SGPR spills may go to VGPR
lanes and cost no memory; kokkos/kokkos #9402 is a kernel that could not launch at its own
launch bound.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..caches import Memo
from ..errors import UsageError
from ..models import MODELS, occupancies, occupancy, usage_of
from ..models.applicable import ModelUnavailable, needs_member, refusal
from ..models.compat import device_id
from ..models.dispatch import answer_key
from .budgets import read_machine_code
from .budgets import worse as budget_worse

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..models.record import Occupancy
    from ..targets import Target

# Rule names, in report order. "spills", "defaults" and "all" are accepted as shorthands where
# rules are chosen; "occupancy" needs a floor, so it is on only when one is given;
# "spills-in-loops" disassembles every kernel whose metadata does not rule spills out (seconds
# per thousand kernels, docs/gates.md), so it is on only when named ("defaults,spills-in-loops").
RULES = ("vgpr-spills", "sgpr-spills", "scratch", "occupancy", "launch", "lds", "mode", "spills-in-loops")
OPT_IN = ("occupancy", "spills-in-loops")
DEFAULT_RULES = tuple(r for r in RULES if r not in OPT_IN)
RULE_GROUPS = {"spills": ("vgpr-spills", "sgpr-spills"), "defaults": DEFAULT_RULES, "all": RULES}
RULE_SUMMARY = {
    "vgpr-spills": "VGPR spills (.vgpr_spill_count) above the allowed count",
    "sgpr-spills": "SGPR spills (.sgpr_spill_count) above the allowed count",
    "scratch": "scratch per work-item (.private_segment_fixed_size) above the allowed bytes, or a dynamic stack",
    "occupancy": "waves per SIMD below the floor at the declared or given block size",
    "launch": "a workgroup of the declared size (.reqd_workgroup_size, else .max_flat_workgroup_size) "
    "does not fit on a CU under some occupancy model",
    "lds": "static plus dynamic LDS above the processor's per-workgroup limit",
    "mode": "a kernel amdocc cannot model: unknown processor, dynamic-VGPR mode, unsupported wave "
    "size or missing resource counts",
    "spills-in-loops": "VGPR or SGPR spill instructions inside a loop of the kernel's machine code "
    "(amdocc isa; needs a libLLVM)",
}
# Rules where a smaller value is the worse one (a baseline accepts it down to its recorded value).
LOWER_IS_WORSE = frozenset({"occupancy"})
LAUNCH_MODELS = ("hip", "llvm", "hw")


@dataclass(frozen=True, slots=True)
class Settings:
    """Which rules run and their thresholds. Counts are "at most", the floor is "at least"."""

    rules: tuple[str, ...] = DEFAULT_RULES
    max_vgpr_spills: int = 0
    max_sgpr_spills: int = 0
    max_scratch: int = 0  # bytes per work-item
    min_occupancy: float | None = None  # waves per SIMD
    block: int | None = None  # block size for the occupancy floor (default: declared)
    dynamic_lds: int = 0
    model: str = "hip"  # model of the occupancy floor
    budgets: tuple[str, ...] = ()  # budget expressions (policy/budgets.py), checked as rules budget:...

    def __post_init__(self) -> None:
        unknown = [r for r in self.rules if r not in RULES]
        if unknown:
            raise UsageError(f"unknown rule {', '.join(unknown)} (rules: {', '.join(RULES)})")
        if "occupancy" in self.rules and self.min_occupancy is None:
            raise UsageError("the occupancy rule needs a floor (min-occupancy, in waves per SIMD)")

    @property
    def reads_machine_code(self) -> bool:
        """Whether judging a kernel disassembles it (a rule or a budget field from amdocc.isa)."""
        return "spills-in-loops" in self.rules or read_machine_code(self.budgets)

    def as_dict(self) -> dict[str, Any]:
        # budgets only when given, so that the settings of a run without them read as before
        return {name: getattr(self, name) for name in self.__slots__ if name != "budgets" or self.budgets}


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    value: int | float | str | None  # what the kernel has (compared with a baseline's)
    limit: int | float | str | None  # what the rule allows
    message: str
    line: str | None = None  # "FILE:LINE" in the kernel's source, where the code object says


@dataclass(frozen=True, slots=True)
class NotEvaluated:
    rule: str
    reason: str
    model: str | None = None  # the one model that could not answer (the others did), if so


@dataclass(slots=True)
class Verdict:
    violations: list[Violation] = field(default_factory=list)
    not_evaluated: list[NotEvaluated] = field(default_factory=list)


# What one rule finds: a violation, nothing wrong (None), or why it could not tell.
Outcome = Violation | NotEvaluated | None


def expand_rules(names: Iterable[str]) -> tuple[str, ...]:
    """Rule names with the shorthands spelled out, in report order, without repeats."""
    chosen: set[str] = set()
    for name in names:
        if name in RULE_GROUPS:
            chosen.update(RULE_GROUPS[name])
        elif name in RULES:
            chosen.add(name)
        else:
            raise UsageError(f"unknown rule {name!r} (rules: {', '.join(RULES)}; or {', '.join(RULE_GROUPS)})")
    return tuple(r for r in RULES if r in chosen)


def worse(rule: str, value: object, accepted: object) -> bool:
    """Is ``value`` worse than the ``accepted`` one a baseline recorded? Only numbers compare."""
    if rule.startswith("budget:"):
        return budget_worse(rule, value, accepted)
    numbers = (int, float)
    if not isinstance(value, numbers) or not isinstance(accepted, numbers) or isinstance(value, bool):
        return False
    return value < accepted if rule in LOWER_IS_WORSE else value > accepted


# --------------------------------------------------------------------------- the rules


def spill_rule(kernel: Kernel, rule: str, allowed: int) -> Outcome:
    sgpr, vgpr = kernel.resources.spills
    kind = "VGPR" if rule == "vgpr-spills" else "SGPR"
    count = vgpr if kind == "VGPR" else sgpr
    if count is None:
        return NotEvaluated(rule, f"no .{kind.lower()}_spill_count in the metadata")
    if count > allowed:
        return Violation(rule, count, allowed, f"{count} {kind} spill{'s' if count != 1 else ''} (allowed: {allowed})")
    return None


def scratch_rule(kernel: Kernel, allowed: int) -> Outcome:
    r = kernel.resources
    if r.scratch is None:
        return NotEvaluated("scratch", "no .private_segment_fixed_size in the metadata or descriptor")
    if r.scratch > allowed or r.uses_dynamic_stack:
        dynamic = " and a dynamic stack, whose size is known only at run time" if r.uses_dynamic_stack else ""
        return Violation(
            "scratch", r.scratch, allowed, f"{r.scratch} B of scratch per work-item{dynamic} (allowed: {allowed} B)"
        )
    return None


def loop_spill_rule(kernel: Kernel) -> Outcome:
    """Spill stores or reloads inside a loop (amdocc.policy.loop_spills): the value is the spill
    dwords in loops, the line that of the first one. Not evaluated, with why, when the code or
    its control flow cannot be read or no libLLVM can be loaded."""
    from .loop_spills import SpillsUnknown, loop_spills

    try:
        found = loop_spills(kernel)
    except SpillsUnknown as exc:
        return NotEvaluated("spills-in-loops", exc.message)
    if found.total:
        return Violation("spills-in-loops", found.total, 0, found.describe(), found.line)
    return None


def lds_rule(kernel: Kernel, target: Target, dynamic_lds: int) -> Outcome:
    lds = kernel.resources.lds
    if lds is None:
        return NotEvaluated("lds", "no static LDS size in the metadata or descriptor")
    total, limit = lds + dynamic_lds, target.lds_per_workgroup
    if total > limit:
        dyn = f" + {dynamic_lds} B dynamic" if dynamic_lds else ""
        return Violation(
            "lds", total, limit, f"{lds} B static LDS{dyn} exceeds the {limit} B a {target.name} workgroup may use"
        )
    return None


def mode_problems(kernel: Kernel, target: Target | None) -> list[tuple[str, str]]:
    """(code, explanation) for each reason the models cannot describe this kernel."""
    if target is None:
        return [("unknown-processor", f"processor {kernel.target_id.processor} is not in tables/targets.toml")]
    out = []
    fields = kernel.descriptor.fields if kernel.descriptor is not None else {}
    if fields.get("enable_dynamic_vgpr"):
        out.append(
            (
                "dynamic-vgpr",
                "the descriptor enables dynamic-VGPR mode: waves allocate VGPRs "
                "at run time, so no static occupancy applies",
            )
        )
    wave = kernel.resources.wavefront_size
    if wave is not None and wave not in target.wave_sizes:
        out.append(
            (
                "unsupported-wave",
                f"wave{wave} does not run on {target.name} (it runs "
                f"{', '.join(f'wave{w}' for w in target.wave_sizes)})",
            )
        )
    try:
        usage_of(kernel, target)
    except UsageError as exc:
        out.append(("no-resources", exc.message))
    return out


def mode_rule(problems: list[tuple[str, str]]) -> Outcome:
    if not problems:
        return None
    codes = ",".join(code for code, _ in problems)
    return Violation("mode", codes, None, "; ".join(text for _, text in problems))


def occupancy_rule(occ: Occupancy, floor: float, block: int, source: str) -> Outcome:
    waves = 0 if occ.error else (occ.waves_per_simd or 0)
    if waves < floor:
        why = f"{occ.model} answers {occ.error}" if occ.error else f"{occ.model} model, limited by {occ.limiter}"
        return Violation(
            "occupancy",
            waves,
            floor,
            f"{_number(waves)} waves per SIMD at {block} threads "
            f"({source}; {why}), below the floor of {_number(floor)}",
        )
    return None


def launch_rule(answers: dict[str, Occupancy], block: int, source: str) -> Outcome:
    """``answers``: model → Occupancy at the declared size. Any model fitting no workgroup fails;
    the violation's value names those models, and its message says why each answers 0 and what
    the others fit, per CU or per WGP as the kernel runs."""
    zero = {m: o for m, o in answers.items() if o.error or not o.blocks_per_cu}
    if not zero:
        return None
    fits = {m: o for m, o in answers.items() if m not in zero}
    units = sorted({o.unit for o in zero.values()})
    unit = units[0] if len(units) == 1 else " or ".join(units)

    def why(o: Occupancy) -> str:
        if o.error:
            return f"answers {o.error}"
        return f"answers 0 (limited by {o.limiter})" if o.limiter else "answers 0 (no wave fits)"

    groups: dict[str, list[str]] = {}
    for m, o in zero.items():
        groups.setdefault(why(o), []).append(m)
    said = []
    for reason, models in groups.items():
        names = [_MODEL_NAMES[m] if fits and m in _MODEL_NAMES else m for m in models]
        verb = reason if len(models) == 1 else reason.replace("answers", "answer", 1)
        said.append(f"{_listed(names)} {verb}")
    message = f"a {block}-thread workgroup ({source}) does not fit on a {unit}: " + "; ".join(said)
    if fits:
        counts: dict[str, list[str]] = {}
        for m, o in fits.items():
            counts.setdefault(f"{o.blocks_per_cu} per {o.unit}", []).append(m)
        message += ", while " + "; ".join(
            f"{_listed(models)} fit{'s' if len(models) == 1 else ''} {n}" for n, models in counts.items()
        )
    return Violation("launch", ",".join(zero), None, message)


# How a launch message names a model when the models disagree (HIP's API rounds where the others do not).
_MODEL_NAMES = {
    "hip": "hip (HIP's occupancy API)",
    "llvm": "llvm (the compiler's rule)",
    "hw": "hw (the hardware model)",
}


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# --------------------------------------------------------------------------- one kernel


def declared_block(kernel: Kernel) -> tuple[int | None, str]:
    """The workgroup size a kernel declares and the metadata field that says so: the product of
    .reqd_workgroup_size, else .max_flat_workgroup_size; (None, why) when it declares neither."""
    reqd = kernel.meta("reqd_workgroup_size")
    if isinstance(reqd, list) and reqd and all(type(x) is int and x > 0 for x in reqd):
        return math.prod(reqd), ".reqd_workgroup_size"
    mfw = kernel.resources.max_flat_workgroup_size
    if mfw:
        return mfw, ".max_flat_workgroup_size"
    return None, "no .reqd_workgroup_size or .max_flat_workgroup_size in the metadata"


def evaluate(
    kernel: Kernel,
    settings: Settings,
    *,
    where: dict[str, Any] | None = None,
    declared: tuple[int | None, str] = (None, ""),
    shared: bool = True,
) -> Verdict:
    """Run the chosen rules on one kernel.

    ``where``: amdocc.occupancy's ``target``/``device``/``what_if`` keywords, the processor to
    judge it on (default: its own). ``declared``: the workgroup size the kernel declares and
    where it was read ((None, reason) when it declares none; see :func:`declared_block`).
    ``shared=False`` skips sharing the model rules' outcomes with kernels that differ only in
    name, for a caller that shares its own answers by a key of its own.
    """
    if not isinstance(shared, bool):
        raise UsageError(f"shared must be True or False, not {shared!r}")
    verdict = Verdict()
    rules = settings.rules
    where = where or {}
    named = device_id(where.get("target"), where.get("device"))
    target = named[1] if named else kernel.target

    def add(result: Outcome) -> None:
        if isinstance(result, Violation):
            verdict.violations.append(result)
        elif isinstance(result, NotEvaluated):
            verdict.not_evaluated.append(result)

    for rule, allowed in (("vgpr-spills", settings.max_vgpr_spills), ("sgpr-spills", settings.max_sgpr_spills)):
        if rule in rules:
            add(spill_rule(kernel, rule, allowed))
    if "scratch" in rules:
        add(scratch_rule(kernel, settings.max_scratch))
    if "spills-in-loops" in rules:
        add(loop_spill_rule(kernel))
    outcomes = (
        _model_outcomes(kernel, target, settings, where, declared)
        if shared
        else _model_outcomes_uncached(kernel, target, settings, where, declared)
    )
    for outcome in outcomes:
        add(outcome)
    return verdict


# The occupancy, launch, lds and mode outcomes of kernels that differ only in name are the same
# (no message names the kernel): a library's thousands of instances of one template share them.
_MODEL_OUTCOMES: Memo[Hashable, tuple[Outcome, ...]] = Memo(f"{__name__}._MODEL_OUTCOMES", 1 << 16)


def _model_outcomes(
    kernel: Kernel,
    target: Target | None,
    settings: Settings,
    where: dict[str, Any],
    declared: tuple[int | None, str],
) -> tuple[Outcome, ...]:
    """The outcomes of the rules that read the models, in report order (cached by what they read)."""
    key = model_key(kernel, target, (settings, declared), where)
    if key is not None:
        cached = _MODEL_OUTCOMES.get(key)
        if cached is not None:
            return cached
    out = _model_outcomes_uncached(kernel, target, settings, where, declared)
    if key is not None:
        _MODEL_OUTCOMES.put(key, out)
    return out


def model_key(kernel: Kernel, target: Target | None, question: Hashable, where: dict[str, Any]) -> Hashable | None:
    """What the models' answers about ``kernel`` on ``target`` depend on, asked ``question`` with
    amdocc.occupancy's ``where`` keywords: the kernel's usage without its name, its code object's
    target id (where it may run), whether it is launchable as built, the question and ``where``.
    None, so that nothing is shared, when the kernel has no usage (the mode rule says why, naming
    it), when a model refuses it (a dynamic-VGPR refusal names the kernel), or when ``where``
    cannot be a key."""
    if target is None:
        return None
    places = tuple(sorted(where.items()))
    inputs = kernel.inputs
    if inputs is None:
        return _model_key(kernel, target, question, places)
    # Kernels read from the same inputs have the same usage but for the name: their key is
    # worked out once (building the usage and asking each model whether it refuses it is most
    # of the cost of a cached answer).
    seen = (inputs, kernel.producer, kernel.target_id, kernel.launchable, target, question, places)
    try:
        key = _KEYS.get(seen)
    except TypeError:  # an unhashable question or where
        return None
    if key is None:
        key = _model_key(kernel, target, question, places)
        _KEYS.put(seen, _NOT_SHARED if key is None else key)
    return None if key is _NOT_SHARED else key


_KEYS: Memo[Hashable, Hashable] = Memo(f"{__name__}._KEYS", 1 << 16)
_NOT_SHARED = object()  # in _KEYS: kernels from these inputs share nothing (see model_key)


def _model_key(
    kernel: Kernel, target: Target, question: Hashable, places: tuple[tuple[str, Any], ...]
) -> Hashable | None:
    try:
        usage = usage_of(kernel, target)
        if any(refusal(usage, m) for m in MODELS):
            return None
        # launchable: a relocatable's kernel is refused by amdocc.occupancy (its counts are local).
        key = (answer_key(usage), kernel.target_id, kernel.launchable, question, places)
        hash(key)
    except (UsageError, TypeError):
        return None
    return key


LOCAL_COUNTS = (
    "a relocatable or object-linking object: local counts, not launchable as built (--what-if with "
    "--target evaluates it anyway)"
)


def _model_outcomes_uncached(
    kernel: Kernel,
    target: Target | None,
    settings: Settings,
    where: dict[str, Any],
    declared: tuple[int | None, str],
) -> tuple[Outcome, ...]:
    rules = settings.rules
    out: list[Outcome] = []
    problems = mode_problems(kernel, target)
    modelled = not problems
    block, source = declared
    # A relocatable's counts are its own functions', not its callees' (docs/code-object-format.md
    # §5): no occupancy or launch verdict unless a what-if asks; the other rules read what it holds.
    local = not kernel.launchable and not where.get("what_if")
    # Generic code judged on its family rather than on a member: no device to judge it on.
    family = needs_member(target) if target is not None else None
    if "occupancy" in rules:
        floor_block, floor_source = (settings.block, "given") if settings.block else declared
        if family:
            out.append(NotEvaluated("occupancy", family))
        elif not modelled:
            out.append(NotEvaluated("occupancy", "the kernel cannot be modelled (see the mode rule)"))
        elif local:
            out.append(NotEvaluated("occupancy", LOCAL_COUNTS))
        elif floor_block is None:
            out.append(NotEvaluated("occupancy", f"no block size: {source}; give one"))
        else:
            assert settings.min_occupancy is not None  # Settings refuses the occupancy rule without a floor
            try:
                occ = occupancy(
                    kernel, block_size=floor_block, dynamic_lds=settings.dynamic_lds, model=settings.model, **where
                )
            except ModelUnavailable as exc:
                out.append(NotEvaluated("occupancy", exc.message, exc.model))
            else:
                if occ.no_answer:
                    out.append(NotEvaluated("occupancy", occ.warnings[-1], occ.model))
                else:
                    out.append(occupancy_rule(occ, settings.min_occupancy, floor_block, floor_source))
    if "launch" in rules:
        if family:
            out.append(NotEvaluated("launch", family))
        elif not modelled:
            out.append(NotEvaluated("launch", "the kernel cannot be modelled (see the mode rule)"))
        elif local:
            out.append(NotEvaluated("launch", LOCAL_COUNTS))
        elif block is None:
            out.append(NotEvaluated("launch", source))
        else:
            answers = {}
            asked = occupancies(kernel, LAUNCH_MODELS, block_size=block, dynamic_lds=settings.dynamic_lds, **where)
            for m, answer in asked.items():  # a model that lacks a fact is left out, with why; the others judge
                if isinstance(answer, ModelUnavailable):
                    out.append(NotEvaluated("launch", answer.message, answer.model))
                elif answer.no_answer:  # its runtime does not run the processor: not asked, not "0"
                    out.append(NotEvaluated("launch", answer.warnings[-1], m))
                else:
                    answers[m] = answer
            if answers:
                out.append(launch_rule(answers, block, source))
    if "lds" in rules:
        if target is None:
            out.append(NotEvaluated("lds", "unknown processor (see the mode rule)"))
        else:
            out.append(NotEvaluated("lds", family) if family else lds_rule(kernel, target, settings.dynamic_lds))
    if "mode" in rules:
        out.append(mode_rule(problems))
    return tuple(o for o in out if o is not None)
