"""Which registers one instruction defines and uses, from LLVM's text and tables/isa_semantics.toml.

Registers are bits of one Python int (a register set), laid out so each class is one slice:
SGPRs s0..s105 are bits 0..105; the special registers (vcc, exec, m0, scc, flat_scratch,
xnack_mask, tba, tma, ttmp0..15) follow at 106..; each VGPR and each AGPR has two bits, its low and
its high 16-bit half, so that a true16 write of ``v1.l`` leaves ``v1.h`` as it was. Counting folds
the halves back to 32-bit registers (:func:`count_vgprs`).

The table names the roles of the operands by instruction family; this module parses LLVM's operand
text (``v5``, ``v[2:3]``, ``s[4:7]``, ``a[0:15]``, ``v1.l``, ``vcc_lo``, ``ttmp[4:5]``, ``off``,
literals, modifiers) and applies the roles. It knows nothing about control flow.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..caches import cached, register
from ..errors import AmdoccError
from ..tabledata import Row, load_table
from .model import Instruction

TABLE = "isa_semantics.toml"

SGPRS = 106  # s0..s105: the SGPRs a wave may address and RGA counts
SPECIAL_BASE = SGPRS
VGPR_BASE = 256
VGPRS = 1024  # gfx1250 addresses v0..v1023 (the others stop at v255 or v511)
AGPR_BASE = VGPR_BASE + 2 * VGPRS
AGPRS = 256

_SPECIALS = (
    "vcc_lo",
    "vcc_hi",
    "exec_lo",
    "exec_hi",
    "m0",
    "scc",
    "flat_scratch_lo",
    "flat_scratch_hi",
    "xnack_mask_lo",
    "xnack_mask_hi",
    "tba_lo",
    "tba_hi",
    "tma_lo",
    "tma_hi",
)
SPECIAL_BIT = {name: SPECIAL_BASE + i for i, name in enumerate(_SPECIALS)}
TTMP_BASE = SPECIAL_BASE + len(_SPECIALS)
TTMPS = 16
_PAIRS = ("vcc", "exec", "flat_scratch", "xnack_mask", "tba", "tma")
for _pair in _PAIRS:
    SPECIAL_BIT[_pair] = SPECIAL_BIT[_pair + "_lo"]  # the pair's low half; the high one is +1

SGPR_MASK = (1 << SGPRS) - 1
SPECIAL_MASK = ((1 << (TTMP_BASE + TTMPS)) - 1) & ~SGPR_MASK
_EVEN = int("01" * VGPRS, 2)  # the low-half bit of every VGPR, relative to VGPR_BASE
VGPR_MASK = ((1 << (2 * VGPRS)) - 1) << VGPR_BASE
AGPR_MASK = ((1 << (2 * AGPRS)) - 1) << AGPR_BASE
_LOW_HALVES = (_EVEN << VGPR_BASE) | ((_EVEN & ((1 << (2 * AGPRS)) - 1)) << AGPR_BASE)
_AGPR_EVEN = (_EVEN & ((1 << (2 * AGPRS)) - 1)) << AGPR_BASE
_VGPR_EVEN = _EVEN << VGPR_BASE
VGPR_LOW_BITS, AGPR_LOW_BITS = _VGPR_EVEN, _AGPR_EVEN  # each register's low-half bit


def count_sgprs(regs: int) -> int:
    """SGPRs s0..s105 in the set (special registers apart)."""
    return (regs & SGPR_MASK).bit_count()


def count_vgprs(regs: int) -> int:
    """Architectural VGPRs in the set, a register counting once if either half is in it."""
    return ((regs | (regs >> 1)) & _VGPR_EVEN).bit_count()


def count_agprs(regs: int) -> int:
    """AGPRs in the set, a register counting once if either half is in it."""
    if not regs >> AGPR_BASE:
        return 0
    return ((regs | (regs >> 1)) & _AGPR_EVEN).bit_count()


def count_classes(regs: int) -> tuple[int, int, int]:
    """(VGPRs, AGPRs, SGPRs) in the set: :func:`count_vgprs`, :func:`count_agprs` and
    :func:`count_sgprs` at once (liveness counts every distinct set it meets)."""
    halves = regs | (regs >> 1)
    agprs = (halves & _AGPR_EVEN).bit_count() if regs >> AGPR_BASE else 0
    return (halves & _VGPR_EVEN).bit_count(), agprs, (regs & SGPR_MASK).bit_count()


def vgpr_bits(first: int, count: int = 1) -> int:
    """Both halves of VGPRs ``first .. first+count-1``."""
    return ((1 << (2 * count)) - 1) << (VGPR_BASE + 2 * first)


def agpr_bits(first: int, count: int = 1) -> int:
    return ((1 << (2 * count)) - 1) << (AGPR_BASE + 2 * first)


def sgpr_bits(first: int, count: int = 1) -> int:
    return ((1 << count) - 1) << first


def register_names(regs: int) -> list[str]:
    """The registers of a set at 32-bit granularity, by class (for messages and tests)."""
    names = [f"s{i}" for i in range(SGPRS) if regs >> i & 1]
    names += [
        name for name, bit in SPECIAL_BIT.items() if name.endswith(("_lo", "_hi", "m0", "scc")) and regs >> bit & 1
    ]
    names += [f"ttmp{i}" for i in range(TTMPS) if regs >> (TTMP_BASE + i) & 1]
    names += [f"v{i}" for i in range(VGPRS) if regs >> (VGPR_BASE + 2 * i) & 3]
    names += [f"a{i}" for i in range(AGPRS) if regs >> (AGPR_BASE + 2 * i) & 3]
    return names


# -- LLVM's operand text -------------------------------------------------------------------------

_REGISTER = re.compile(
    r"(?<![\w.])(?:"
    r"(?P<cls>[vsa])(?P<num>\d+)(?:\.(?P<half>[lh]))?"
    r"|(?P<tcls>[vsa])\[(?P<lo>\d+):(?P<hi>\d+)\]"
    r"|ttmp(?P<tnum>\d+)|ttmp\[(?P<tlo>\d+):(?P<thi>\d+)\]"
    r"|(?P<special>vcc_lo|vcc_hi|vcc|exec_lo|exec_hi|exec|m0|scc|flat_scratch_lo|flat_scratch_hi|flat_scratch"
    r"|xnack_mask_lo|xnack_mask_hi|xnack_mask|tba_lo|tba_hi|tba|tma_lo|tma_hi|tma)"
    r")(?![\w\[])"
)


class OperandError(AmdoccError, ValueError):
    """A register the text names that lies outside every register file amdocc models (its one
    caller turns it into an "unknown" access with the reason)."""


# Operand texts repeat far more than instructions do (``v5``, ``s[4:7]``, ``off``): each one's
# register set, parsed once. Only sets are remembered; a text that raises is parsed every time.
_OPERANDS: dict[str, int] = {}
_OPERANDS_BOUND = 1 << 16
register("amdocc.isa.semantics._OPERANDS", _OPERANDS.clear)


def operand_registers(text: str) -> int:
    """The register set one operand's text names (0 for a literal, ``off``, ``null``, ...)."""
    regs = _OPERANDS.get(text)
    if regs is None:
        regs = _parse_operand(text)
        if len(_OPERANDS) >= _OPERANDS_BOUND:
            _OPERANDS.clear()
        _OPERANDS[text] = regs
    return regs


def _parse_operand(text: str) -> int:
    regs = 0
    for m in _REGISTER.finditer(text):
        if m.group("cls"):
            cls, num = m.group("cls"), int(m.group("num"))
            if m.group("half"):
                bit = 1 if m.group("half") == "l" else 2
                regs |= _file_bits(cls, num, 1, text) & (bit * _half_unit(cls, num))
            else:
                regs |= _file_bits(cls, num, 1, text)
        elif m.group("tcls"):
            lo, hi = int(m.group("lo")), int(m.group("hi"))
            if hi < lo:
                raise OperandError(f"register range {m.group(0)!r} runs backwards")
            regs |= _file_bits(m.group("tcls"), lo, hi - lo + 1, text)
        elif m.group("tnum") is not None or m.group("tlo") is not None:
            lo = int(m.group("tnum") or m.group("tlo"))
            hi = int(m.group("tnum") or m.group("thi"))
            if hi < lo or hi >= TTMPS:
                raise OperandError(f"trap register {m.group(0)!r} outside ttmp0..ttmp{TTMPS - 1}")
            regs |= ((1 << (hi - lo + 1)) - 1) << (TTMP_BASE + lo)
        else:
            name = m.group("special")
            bit = SPECIAL_BIT[name]
            regs |= (3 if name in _PAIRS else 1) << bit
    return regs


def _half_unit(cls: str, num: int) -> int:
    base = VGPR_BASE if cls == "v" else AGPR_BASE
    return 1 << (base + 2 * num)


def _file_bits(cls: str, first: int, count: int, text: str) -> int:
    if cls == "s":
        if first + count > SGPRS:
            raise OperandError(f"SGPR operand {text!r} lies beyond s{SGPRS - 1}")
        return sgpr_bits(first, count)
    if cls == "v":
        if first + count > VGPRS:
            raise OperandError(f"VGPR operand {text!r} lies beyond v{VGPRS - 1}")
        return vgpr_bits(first, count)
    if first + count > AGPRS:
        raise OperandError(f"AGPR operand {text!r} lies beyond a{AGPRS - 1}")
    return agpr_bits(first, count)


# A comma or a space outside brackets and parentheses (LLVM's text never nests them):
# ``op_sel:[0,1,0]`` and ``hwreg(HW_REG_MODE, 0, 4)`` stay whole.
_TOP_COMMA = re.compile(r",\s*(?![^\[(]*[\])])")
_TOP_SPACE = re.compile(r"\s+(?![^\[(]*[\])])")


def split_operands(text: str) -> tuple[list[str], list[str]]:
    """(operands, modifiers) of the text after a mnemonic: operands are separated by commas outside
    brackets; the modifiers are the space-separated words after the last operand."""
    if not text:
        return [], []
    items = _TOP_COMMA.split(text.strip())
    words = _TOP_SPACE.split(items[-1])
    items[-1] = words[0]
    return items, words[1:]


# -- the table -----------------------------------------------------------------------------------

ROLES = ("def", "use", "both", "skip", "use-lo", "use-hi", "def-lo", "def-hi")


@dataclass(frozen=True, slots=True)
class _Condition:
    min_major: int | None
    max_major: int | None
    with_any: tuple[str, ...]
    without_any: tuple[str, ...]
    unless_all: tuple[str, ...]
    max_operands: int | None = None

    def holds(self, major: int, modifiers: frozenset[str], operands: int = 0) -> bool:
        if self.max_operands is not None and operands > self.max_operands:
            return False
        if self.min_major is not None and major < self.min_major:
            return False
        if self.max_major is not None and major > self.max_major:
            return False
        # Set operations in C: asked for every rule a new instruction text's mnemonic matches.
        if self.with_any and modifiers.isdisjoint(self.with_any):
            return False
        if not modifiers.isdisjoint(self.without_any):
            return False
        return not (self.unless_all and modifiers.issuperset(self.unless_all))


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of the table: its name, the mnemonics it covers, when, and what it says."""

    kind: str  # "rule", "adjust" or "implicit"
    name: str
    match: re.Pattern[str]
    condition: _Condition
    roles: tuple[str, ...] = ()
    rest: str = "use"
    first: str | None = None
    unknown: str | None = None
    defs: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()


_IMPLICIT = ("vcc", "exec", "scc", "m0")
_COLUMNS = frozenset(
    {"name", "match", "roles", "rest", "first", "unknown", "defs", "uses", "min_major", "max_major"}
    | {"with_any", "without_any", "unless_all", "max_operands"}
)


def _rules(kind: str, entries: object) -> tuple[Rule, ...]:
    """The [[kind]] entries, each read through a Row named "KIND N (its name)", so that a damaged
    one is a TableError naming the table, the entry and the column."""
    if not isinstance(entries, list):
        raise Row(TABLE, "", {}).error(f"is not a list of tables ([[{kind}]] entries)", kind)
    out = []
    for i, values in enumerate(entries):
        name = values.get("name") if isinstance(values, dict) else None
        row = Row(TABLE, f"{kind} {i + 1}" + (f" ({name})" if isinstance(name, str) else ""), values)
        for column in row.columns():
            if column not in _COLUMNS:
                raise row.error(f"is not a column of [[{kind}]] (columns: {', '.join(sorted(_COLUMNS))})", column)
        text = row.text("match")
        try:
            pattern = re.compile(text)
        except re.error as exc:
            raise row.error(f"{text!r} is not a regular expression: {exc}", "match") from None
        roles = row.texts("roles", ())
        for role in roles:
            if role not in ROLES:
                raise row.error(f"role {role!r} is not one of {', '.join(ROLES)}", "roles")
        for column in ("defs", "uses"):
            for reg in row.texts(column, ()):
                if reg not in _IMPLICIT:
                    raise row.error(f"implicit register {reg!r} is not one of {', '.join(_IMPLICIT)}", column)
        condition = _Condition(
            row.whole("min_major", 1, default=None),
            row.whole("max_major", 1, default=None),
            row.texts("with_any", ()),
            row.texts("without_any", ()),
            row.texts("unless_all", ()),
            row.whole("max_operands", 0, default=None),
        )
        out.append(
            Rule(
                kind,
                row.text("name", f"{kind}-{i + 1}"),
                pattern,
                condition,
                roles,
                row.text("rest", "use", ROLES),
                row.text("first", None, ROLES),
                row.text("unknown", None),
                row.texts("defs", ()),
                row.texts("uses", ()),
            )
        )
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Table:
    rules: tuple[Rule, ...]
    adjusts: tuple[Rule, ...]
    implicits: tuple[Rule, ...]
    packed_workitem_ids: frozenset[str]


@cached(maxsize=1)
def table() -> Table:
    """tables/isa_semantics.toml, checked and compiled once."""
    raw = Row(TABLE, "", load_table(TABLE))
    return Table(
        _rules("rule", raw.value("rule")),
        _rules("adjust", raw.value("adjust")),
        _rules("implicit", raw.value("implicit")),
        frozenset(raw.sub("abi").texts("packed_workitem_ids")),
    )


# -- one instruction -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Access:
    """What one instruction does to the registers.

    Attributes:
        defs: the register bits it writes whole (their old value is dead before it).
        uses: the register bits it reads (a ``both`` operand is in both sets).
        rule: the names of the table entries that decided it, ``default`` when none did.
        unknown: why its registers cannot be known (GPR indexing, a call), else None.
    """

    defs: int
    uses: int
    rule: str
    unknown: str | None = None


_DEFAULT = ("def",)
_HALF_ROLES = frozenset({"use-lo", "use-hi", "def-lo", "def-hi"})
_CACHE_BOUND = 1 << 16  # distinct instruction texts remembered per Semantics


class Semantics:
    """The table applied for one processor generation and wave size; answers are cached per
    instruction text, since kernels repeat their instructions."""

    def __init__(self, isa_major: int, wave_size: int, rules: Table | None = None) -> None:
        self.isa_major = isa_major
        self.wave_size = wave_size
        self._table = rules or table()
        self._by_mnemonic: dict[str, tuple[list[Rule], list[Rule], list[Rule]]] = {}
        self._cache: dict[tuple[str, str], Access] = {}
        self._by_text: dict[str, Access] = {}
        self._plans: dict[tuple[str | int, ...], _Plan] = {}
        lo_only = wave_size == 32
        self._implicit_bits = {
            "vcc": (1 if lo_only else 3) << SPECIAL_BIT["vcc"],
            "exec": (1 if lo_only else 3) << SPECIAL_BIT["exec"],
            "scc": 1 << SPECIAL_BIT["scc"],
            "m0": 1 << SPECIAL_BIT["m0"],
        }

    def access(self, mnemonic: str, operands: str) -> Access:
        key = (mnemonic, operands)
        found = self._cache.get(key)
        if found is None:
            if "::" in operands:  # VOPD: two instructions issued as one, each with its own operands
                first_ops, second = operands.split("::", 1)
                second_mnemonic, _, second_ops = second.strip().partition(" ")
                a = self._single(mnemonic, first_ops)
                b = self._single(second_mnemonic, second_ops)
                found = Access(a.defs | b.defs, a.uses | b.uses, f"vopd({a.rule};{b.rule})", a.unknown or b.unknown)
            else:
                found = self._single(mnemonic, operands)
            if len(self._cache) >= _CACHE_BOUND:
                self._cache.clear()
            self._cache[key] = found
        return found

    def text_accesses(self, by_text: Mapping[str, Instruction]) -> list[Access]:
        """:meth:`access` of each decoded instruction of ``by_text`` (one per distinct text),
        remembered by its text (its mnemonic and operands are the text's words): liveness asks
        for every distinct text of every kernel, and most were asked before."""
        known = self._by_text
        found = list(map(known.get, by_text))
        if None not in found:
            return found  # type: ignore[return-value]
        out = []
        for access, (text, instruction) in zip(found, by_text.items(), strict=True):
            if access is None:
                access = self.access(instruction.mnemonic, instruction.operands)
                if len(known) >= _CACHE_BOUND:
                    known.clear()
                known[text] = access
            out.append(access)
        return out

    def _candidates(self, mnemonic: str) -> tuple[list[Rule], list[Rule], list[Rule]]:
        found = self._by_mnemonic.get(mnemonic)
        if found is None:
            t = self._table
            found = tuple(
                [r for r in rules if r.match.fullmatch(mnemonic)] for rules in (t.rules, t.adjusts, t.implicits)
            )  # type: ignore[assignment]
            self._by_mnemonic[mnemonic] = found  # type: ignore[assignment]
        return found  # type: ignore[return-value]

    def _plan(self, mnemonic: str, modifier_list: list[str], operands: int) -> _Plan:
        """What the table says for one mnemonic with these modifiers and this many operands:
        decided once, as texts that differ only in their registers share it."""
        rules, adjusts, implicits = self._candidates(mnemonic)
        modifiers = frozenset(modifier_list)
        rule = next((r for r in rules if r.condition.holds(self.isa_major, modifiers)), None)
        names = [rule.name if rule else "default"]
        if rule is not None and rule.unknown:
            return _Plan(names[0], (), "", 0, 0, "", Access(0, 0, rule.name, rule.unknown))
        roles = list(rule.roles if rule else _DEFAULT)
        rest = rule.rest if rule else "use"
        for adjust in adjusts:
            if adjust.condition.holds(self.isa_major, modifiers) and roles and adjust.first:
                if roles[0] == "def":
                    roles[0] = adjust.first
                names.append(adjust.name)
        implicit_defs = implicit_uses = 0
        for implicit in implicits:
            if implicit.condition.holds(self.isa_major, modifiers, operands):
                for reg in implicit.defs:
                    implicit_defs |= self._implicit_bits[reg]
                for reg in implicit.uses:
                    implicit_uses |= self._implicit_bits[reg]
        return _Plan(names[0], tuple(roles), rest, implicit_defs, implicit_uses, "+".join(names), None)

    def _single(self, mnemonic: str, operands: str) -> Access:
        items, modifier_list = split_operands(operands)
        key: tuple[str | int, ...] = (mnemonic, len(items), *modifier_list)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= _CACHE_BOUND:
                self._plans.clear()
            plan = self._plans[key] = self._plan(mnemonic, modifier_list, len(items))
        if plan.unknown is not None:
            return plan.unknown
        roles, rest = plan.roles, plan.rest
        defs = uses = 0
        for i, item in enumerate(items):
            try:
                regs = operand_registers(item)
            except OperandError as exc:
                return Access(0, 0, plan.first, str(exc))
            if not regs:
                continue
            role = roles[i] if i < len(roles) else rest
            if role in _HALF_ROLES:  # one half of each register it names
                low = (regs | (regs >> 1)) & _LOW_HALVES
                regs = low if role.endswith("-lo") else low << 1
                role = role[:3]
            if role in ("def", "both"):
                defs |= regs
            if role in ("use", "both"):
                uses |= regs
        return Access(defs | plan.implicit_defs, uses | plan.implicit_uses, plan.rule)


class _Plan(NamedTuple):
    """The table's answer for one mnemonic, modifiers and operand count (:meth:`Semantics._plan`)."""

    first: str  # the deciding rule's name ("default" when none): an operand error's rule
    roles: tuple[str, ...]
    rest: str
    implicit_defs: int
    implicit_uses: int
    rule: str  # the names of the entries that decided it
    unknown: Access | None  # the whole answer when the rule says the registers are unknown


@cached(maxsize=64)
def semantics(isa_major: int, wave_size: int) -> Semantics:
    """The semantics for one ISA major version and wave size (shared: answers are cached)."""
    return Semantics(isa_major, wave_size)
