"""Per-kernel budgets for ``amdocc check``: a small expression language over a kernel's record.

A budget is a list of comparisons, each of a field of the kernel's record with a number (or
``true``/``false``), joined by commas ("and"); a pattern before a lone colon scopes them to the
kernels whose name (mangled or demangled) matches it as a shell glob; semicolons separate
scoped groups::

    spills==0, vgprs<=128
    attn_*: waves_per_simd[hip]>=2; *gemm*: lds<=65536, launchable

Fields (:data:`FIELDS`): register and memory counts read from the code object, and, with a
model in brackets (``hip``, ``llvm``, ``hw``), the occupancy the model answers at the kernel's
launch: the launch a Triton cache or AOTInductor package records, else the check's --block
and --dynamic-lds, else the workgroup size the kernel declares. A bare boolean field means
``== true``. The grammar is parsed here by a tokenizer and a recursive-descent parser (no
``eval``); every error names the budget, the column and what is valid there.

Each comparison is its own check rule, ``budget:<comparison>`` (``budget:vgprs<=128``), so a
baseline can accept one budget of one kernel; a value is "worse" than an accepted one in the
direction the comparison forbids.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..caches import cached
from ..errors import AmdoccError, TableError, UsageError
from ..numbers import BYTE_SUFFIXES, BYTE_UNITS, parse_bytes, parse_integer

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..models.record import Occupancy

PREFIX = "budget:"
MODELS = ("hip", "llvm", "hw")
OPERATORS = ("==", "!=", "<=", ">=", "<", ">")


@dataclass(frozen=True)
class Field:
    kind: str  # "number", "bytes" (a number that also takes a K/KiB, M/MiB or G/GiB suffix) or "bool"
    models: str  # "none": no index; "required": [model] needed; "optional": [model] or all models
    help: str
    machine_code: bool = False  # read from the kernel's disassembly (amdocc.isa, LLVM's disassembler)


FIELDS: dict[str, Field] = {
    "spills": Field("number", "none", "VGPR plus SGPR spills (.vgpr_spill_count + .sgpr_spill_count)"),
    "vgpr_spills": Field("number", "none", ".vgpr_spill_count"),
    "sgpr_spills": Field("number", "none", ".sgpr_spill_count"),
    "scratch": Field("bytes", "none", "scratch bytes per work-item (.private_segment_fixed_size)"),
    "dynamic_stack": Field("bool", "none", ".uses_dynamic_stack"),
    "vgprs": Field("number", "none", ".vgpr_count (the unified total on gfx90a/gfx942/gfx950)"),
    "arch_vgprs": Field("number", "none", "architectural VGPRs alone"),
    "agprs": Field("number", "none", ".agpr_count"),
    "sgprs": Field("number", "none", ".sgpr_count"),
    "static_lds": Field("bytes", "none", "static LDS bytes (.group_segment_fixed_size)"),
    "lds": Field("bytes", "none", "static plus dynamic LDS bytes of the launch"),
    "block": Field("number", "none", "threads per workgroup of the launch evaluated"),
    "waves_per_simd": Field("number", "required", "waves per SIMD the model answers at the launch"),
    "blocks_per_cu": Field("number", "required", "workgroups per CU (per WGP in WGP mode) at the launch"),
    "launchable": Field("bool", "optional", "a workgroup of the launch fits (under every model without [model])"),
    "spills_in_loops": Field(
        "number",
        "none",
        "spill traffic inside loops, from the kernel's disassembly (amdocc isa; needs a libLLVM): VGPR "
        "spill and reload dwords plus SGPR lane spills and reloads, where the metadata does not call them "
        "a private array or the program's own lane operations",
        machine_code=True,
    ),
    **{
        f"max_live_{kind}": Field(
            "number",
            "none",
            f"the most {kind.upper()}s live at once in the kernel's machine code (amdocc isa's max_live, "
            "RGA's live-in or live-out convention; needs a libLLVM)",
            machine_code=True,
        )
        for kind in ("vgpr", "agpr", "sgpr")
    },
}


def fields_text() -> str:
    return ", ".join(f"{n}[model]" if f.models == "required" else n for n, f in FIELDS.items())


@dataclass(frozen=True)
class Comparison:
    field: str
    model: str | None
    op: str
    value: float | bool
    text: str  # canonical: "waves_per_simd[hip]>=2"

    @property
    def rule(self) -> str:
        return PREFIX + self.text

    def holds(self, actual: float | bool) -> bool:
        v = self.value
        if self.op == "==":
            return actual == v
        if self.op == "!=":
            return actual != v
        a, b = float(actual), float(v)
        return {"<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[self.op]


@dataclass(frozen=True)
class Group:
    scope: str | None  # a glob over kernel names; None: every kernel
    comparisons: tuple[Comparison, ...]

    def covers(self, names: tuple[str, ...]) -> bool:
        return self.scope is None or any(fnmatch.fnmatchcase(n, self.scope) for n in names)


# --------------------------------------------------------------------------- tokenizer

# A number is decimal (a fraction or exponent allowed) or 0x hex, with any letters written right
# after it kept in the token: a byte suffix ("64K") where the field counts bytes, refused elsewhere.
_TOKEN = re.compile(
    r"\s*(?:(?P<op>==|!=|<=|>=|<|>)"
    r"|(?P<num>(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[A-Za-z]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[\[\],]))"
)
# A number token, or one with its unit written apart ("64 KiB"): the digits and the unit.
_NUMBER = re.compile(r"(?P<digits>0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?) ?(?P<unit>[A-Za-z]*)")


@dataclass(frozen=True)
class Token:
    kind: str  # op, num, name, punct, end
    text: str
    column: int  # 1-based, in the whole budget text


def tokenize(text: str, start: int, budget: str) -> list[Token]:
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            bad = text[pos:].lstrip()
            col = start + len(text) - len(text[pos:]) + (len(text[pos:]) - len(bad)) + 1
            raise _error(budget, col, f"unexpected {bad[:1]!r}")
        kind = m.lastgroup or "end"
        out.append(Token(kind, m.group(kind), start + m.start(kind) + 1))
        pos = m.end()
    out.append(Token("end", "", start + len(text) + 1))
    return out


def _error(budget: str, column: int, what: str) -> UsageError:
    return UsageError(f"budget {budget!r}, column {column}: {what}")


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, tokens: list[Token], budget: str) -> None:
        self.tokens, self.i, self.budget = tokens, 0, budget

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def fail(self, what: str, tok: Token | None = None) -> UsageError:
        t = tok or self.tok
        found = "the end" if t.kind == "end" else repr(t.text)
        return _error(self.budget, t.column, f"{what}, found {found}")

    def take(self, kind: str, text: str | None = None) -> Token | None:
        t = self.tok
        if t.kind == kind and (text is None or t.text == text):
            self.i += 1
            return t
        return None

    def comparisons(self) -> tuple[Comparison, ...]:
        out = [self.comparison()]
        while self.take("punct", ","):
            out.append(self.comparison())
        if self.tok.kind != "end":
            raise self.fail("expected ',' or the end of the budget")
        return tuple(out)

    def comparison(self) -> Comparison:
        name_tok = self.take("name")
        if name_tok is None:
            raise self.fail(f"expected a field ({fields_text()})")
        name = name_tok.text
        spec = FIELDS.get(name)
        if spec is None:
            raise _error(self.budget, name_tok.column, f"unknown field {name!r} (fields: {fields_text()})")
        model = None
        if self.take("punct", "["):
            model_tok = self.take("name")
            if model_tok is None or model_tok.text not in MODELS:
                raise self.fail(f"expected a model ({', '.join(MODELS)})", model_tok)
            if spec.models == "none":
                raise _error(self.budget, model_tok.column, f"{name} takes no [model]")
            model = model_tok.text
            if not self.take("punct", "]"):
                raise self.fail("expected ']'")
        elif spec.models == "required":
            shown = ", ".join(f"{name}[{m}]" for m in MODELS)
            raise _error(self.budget, name_tok.column, f"{name} needs a model: {shown}")
        field_text = name + (f"[{model}]" if model else "")
        op_tok = self.take("op")
        if op_tok is None:
            if spec.kind == "bool" and self.tok.kind in ("end", "punct"):
                return Comparison(name, model, "==", True, field_text)
            raise self.fail(f"expected an operator ({' '.join(OPERATORS)}) after {field_text}")
        op = op_tok.text
        value: float | bool
        if spec.kind == "bool":
            if op not in ("==", "!="):
                raise _error(self.budget, op_tok.column, f"{field_text} is true or false: only == and != compare it")
            v = self.take("name")
            if v is None or v.text not in ("true", "false"):
                raise self.fail(f"expected true or false after {field_text}{op}", v)
            value = v.text == "true"
            shown = v.text
        else:
            num = self.take("num")
            if num is None:
                raise self.fail(f"expected a number after {field_text}{op}")
            text = num.text
            unit = self.tok
            if spec.kind == "bytes" and unit.kind == "name" and unit.text.upper() in BYTE_UNITS and text[-1].isdigit():
                self.i += 1  # "64 KiB": a unit written apart, as the byte options take it
                text += " " + unit.text
            value = self.number(Token("num", text, num.column), field_text, spec.kind == "bytes")
            shown = str(value)
        return Comparison(name, model, op, value, f"{field_text}{op}{shown}")

    def number(self, num: Token, field_text: str, bytes_field: bool) -> float:
        """A number token's value: a byte count as every byte option takes it (amdocc.numbers:
        ``64K``, ``1MiB``, ``0x100``) where the field counts bytes; elsewhere a plain number."""
        m = _NUMBER.fullmatch(num.text)
        assert m is not None  # the tokenizer matched the same pattern
        digits, unit = m.group("digits"), m.group("unit")
        if digits[:2].lower() == "0x" or unit:
            value = parse_bytes(num.text) if bytes_field else (None if unit else parse_integer(digits))
            if value is not None:
                return value
            if not bytes_field:
                byte_fields = ", ".join(n for n, f in FIELDS.items() if f.kind == "bytes")
                raise _error(
                    self.budget,
                    num.column,
                    f"{field_text} is a count, not bytes: {num.text!r} is not a number "
                    f"(byte suffixes such as 64K are for {byte_fields})",
                )
            raise _error(
                self.budget,
                num.column,
                f"{field_text} is a byte count: {num.text!r} is not one (a whole number or 0x hex, "
                f"with an optional {BYTE_SUFFIXES} suffix)",
            )
        f = float(digits)
        return int(f) if f.is_integer() and abs(f) < 2**53 else f


_LONE_COLON = re.compile(r"(?<!:):(?!:)")


@cached(maxsize=256)
def parse(budget: str) -> tuple[Group, ...]:
    """The scoped groups of one budget text; UsageError naming the column on a bad one."""
    if not isinstance(budget, str) or not budget.strip():
        raise UsageError(f"budget {budget!r} is empty (write comparisons such as 'spills==0, vgprs<=128')")
    groups: list[Group] = []
    offset = 0
    for part in budget.split(";"):
        colons = [m.start() for m in _LONE_COLON.finditer(part)]
        if len(colons) > 1:
            raise _error(budget, offset + colons[1] + 1, "more than one ':' in one group (separate groups with ';')")
        scope = None
        body, body_at = part, offset
        if colons:
            scope = part[: colons[0]].strip()
            if not scope:
                raise _error(budget, offset + colons[0] + 1, "empty kernel pattern before ':'")
            body, body_at = part[colons[0] + 1 :], offset + colons[0] + 1
        if not body.strip():
            raise _error(budget, body_at + len(body) + 1, "expected a comparison, found the end")
        groups.append(Group(scope, _Parser(tokenize(body, body_at, budget), budget).comparisons()))
        offset += len(part) + 1
    return tuple(groups)


def normalize(budgets: object, name: str) -> tuple[str, ...]:
    """``budget`` as a setting: one text or a list of them (TOML), each parsed now so that a bad
    one is refused before any file is read. Returned as given (stripped), in order."""
    items = [budgets] if isinstance(budgets, str) else budgets
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(b, str) for b in items):
        raise UsageError(f"{name} must be a budget text or a list of them, not {budgets!r}")
    out = []
    for b in items:
        try:
            parse(b.strip())
        except UsageError as exc:
            raise UsageError(f"{name}: {exc.message}") from None
        out.append(b.strip())
    return tuple(out)


# --------------------------------------------------------------------------- rules and baselines


def is_rule(rule: str) -> bool:
    return rule.startswith(PREFIX) and len(rule) > len(PREFIX)


def rules_of(budgets: tuple[str, ...]) -> tuple[str, ...]:
    """The check rule names of the budgets' comparisons, in order, without repeats."""
    seen: dict[str, None] = {}
    for b in budgets:
        for g in parse(b):
            for c in g.comparisons:
                seen[c.rule] = None
    return tuple(seen)


def read_machine_code(budgets: tuple[str, ...]) -> bool:
    """Whether any comparison of the budgets reads a field from the kernels' machine code."""
    return any(FIELDS[c.field].machine_code for b in budgets for g in parse(b) for c in g.comparisons)


def worse(rule: str, value: object, accepted: object) -> bool:
    """Is ``value`` past an ``accepted`` one in the direction ``rule``'s comparison forbids?"""
    numbers = (int, float)
    if not isinstance(value, numbers) or not isinstance(accepted, numbers) or isinstance(value, bool):
        return False
    m = re.search(r"(<=|>=|<|>|==|!=)", rule)
    op = m.group(1) if m else "=="
    if op in ("<=", "<"):
        return value > accepted
    if op in (">=", ">"):
        return value < accepted
    return False


def summary(rule: str) -> str:
    return f"the budget {rule[len(PREFIX) :]} does not hold"


# --------------------------------------------------------------------------- evaluation


class NotKnown(AmdoccError):
    """A field the kernel's record does not give (the reason is the message); caught where a
    budget is evaluated, and inside the one hierarchy should one ever escape."""


@dataclass
class Facts:
    """The record's fields for one kernel, computed on demand (each model's answer once)."""

    kernel: Kernel
    where: dict[str, Any]
    block: int | None
    block_source: str
    dynamic_lds: int
    occupancy: Callable[..., Occupancy]
    _answers: dict[str, Occupancy] | None = None
    # The kernel's max_live per class and the source line of each peak (or why not known), once.
    _live: tuple[dict[str, int], dict[str, str]] | str | None = None
    lines: dict[str, str] = field(default_factory=dict)  # field name -> "FILE:LINE" where it was read

    def max_live(self, kind: str) -> int:
        if self._live is None:
            try:
                self._live = max_live(self.kernel)
            except NotKnown as exc:
                self._live = exc.message
        if isinstance(self._live, str):
            raise NotKnown(self._live)
        counts, lines = self._live
        if kind in lines:
            self.lines[f"max_live_{kind}"] = lines[kind]
        return counts[kind]

    def answer(self, model: str) -> Occupancy:
        if self._answers is None:
            self._answers = {}
        if model not in self._answers:
            if self.block is None:
                raise NotKnown(f"no block size: {self.block_source}; give --block")
            self._answers[model] = self.occupancy(
                self.kernel, block_size=self.block, dynamic_lds=self.dynamic_lds, model=model, **self.where
            )
        return self._answers[model]

    def value(self, c: Comparison) -> float | bool:
        r = self.kernel.resources
        name = c.field

        def known(v: int | bool | None, what: str) -> int | bool:
            if v is None:
                raise NotKnown(f"the code object does not record {what}")
            return v

        if name in ("spills", "vgpr_spills", "sgpr_spills"):
            sgpr, vgpr = r.spills
            if name == "vgpr_spills":
                return known(vgpr, ".vgpr_spill_count")
            if name == "sgpr_spills":
                return known(sgpr, ".sgpr_spill_count")
            return int(known(vgpr, ".vgpr_spill_count")) + int(known(sgpr, ".sgpr_spill_count"))
        if name == "spills_in_loops":
            return spills_in_loops(self.kernel)
        if name.startswith("max_live_"):
            return self.max_live(name.removeprefix("max_live_"))
        simple = {
            "scratch": (r.scratch, ".private_segment_fixed_size"),
            "dynamic_stack": (r.uses_dynamic_stack, ".uses_dynamic_stack"),
            "vgprs": (r.vgprs, ".vgpr_count"),
            "arch_vgprs": (r.arch_vgprs, "the architectural VGPR count"),
            "agprs": (r.agprs, ".agpr_count"),
            "sgprs": (r.sgprs, ".sgpr_count"),
            "static_lds": (r.lds, ".group_segment_fixed_size"),
        }
        if name in simple:
            return known(*simple[name])
        if name == "lds":
            return int(known(r.lds, ".group_segment_fixed_size")) + self.dynamic_lds
        if name == "block":
            return known(self.block, f"a block size ({self.block_source})")
        if name == "launchable":
            models = (c.model,) if c.model else MODELS
            return all(not (o := self.answer(m)).error and bool(o.blocks_per_cu) for m in models)
        assert c.model is not None  # the parser requires one for these
        occ = self.answer(c.model)
        if occ.error:
            raise NotKnown(f"{c.model} answers {occ.error}")
        v = occ.waves_per_simd if name == "waves_per_simd" else occ.blocks_per_cu
        if v is None:
            raise NotKnown(f"{c.model} gives no {name}")
        return v


def spills_in_loops(kernel: Kernel) -> int:
    """The ``spills_in_loops`` field: spill traffic at loop depth > 0 (amdocc.isa). The VGPR part
    counts unless the metadata makes the scratch traffic a private array, the SGPR part unless it
    makes the lane operations the program's own; NotKnown when the code or its control flow
    cannot be read."""
    from .loop_spills import SpillsUnknown, loop_spills

    try:
        return loop_spills(kernel, trust_metadata=False).total
    except SpillsUnknown as exc:
        raise NotKnown(exc.message) from None


def max_live(kernel: Kernel) -> tuple[dict[str, int], dict[str, str]]:
    """The ``max_live_*`` fields: the most registers of each class live at once (amdocc.isa's
    liveness), and the source line where each peak first is, where the code object has one;
    NotKnown when the code, its control flow or its liveness cannot be read."""
    from ..isa.analysis import analyse

    try:
        isa = analyse(kernel)
    except (UsageError, TableError):  # a bad setting or a damaged ISA table: not this kernel's fault
        raise
    except AmdoccError as exc:
        raise NotKnown(f"its machine code cannot be analysed: {exc.message}") from None
    live = isa.liveness
    if live is None or live.unknown is not None or live.max_live is None:
        raise NotKnown(f"its register liveness is not known: {live.unknown if live else 'not computed'}")
    index = {ins.address: i for i, ins in enumerate(isa.instructions)}
    lines: dict[str, str] = {}
    for peak in live.peaks:
        found = [x for s in peak.stretches if isa.lines and (x := isa.lines[index[s.first]])]
        if found:
            lines[peak.register_class] = found[0]
    return dict(live.max_live._asdict()), lines


@dataclass(frozen=True)
class Outcome:
    rule: str
    value: float | str | None  # "true"/"false" for a boolean field; None: not evaluated
    limit: str
    message: str
    violated: bool
    line: str | None = None  # "FILE:LINE" of what the field was read at (max_live_*: the peak)


def evaluate(budgets: tuple[str, ...], names: tuple[str, ...], facts: Facts) -> list[Outcome]:
    """Each comparison of the budgets that scope the kernel ``names``: violated, or not
    evaluated (value None, with the reason), or held (left out)."""
    out: list[Outcome] = []
    seen: set[str] = set()
    for b in budgets:
        for g in parse(b):
            if not g.covers(names):
                continue
            for c in g.comparisons:
                if c.rule in seen:
                    continue
                seen.add(c.rule)
                try:
                    actual = facts.value(c)
                except NotKnown as exc:
                    out.append(Outcome(c.rule, None, c.text, str(exc), False))
                    continue
                except UsageError as exc:
                    out.append(Outcome(c.rule, None, c.text, exc.message, False))
                    continue
                if not c.holds(actual):
                    shown = str(actual).lower() if isinstance(actual, bool) else f"{actual:g}"
                    where = f" at {facts.block} threads ({facts.block_source})" if c.model else ""
                    scope = f" (scope {g.scope})" if g.scope else ""
                    out.append(
                        Outcome(
                            c.rule,
                            actual if not isinstance(actual, bool) else str(actual).lower(),
                            c.text,
                            f"{c.field}{f'[{c.model}]' if c.model else ''} is {shown}{where}: budget {c.text}{scope}",
                            True,
                            facts.lines.get(c.field),
                        )
                    )
    return out
