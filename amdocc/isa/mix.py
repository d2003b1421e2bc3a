"""The instruction mix: each instruction's class, from tables/isa_mix.toml's patterns on mnemonics.

The classes are data: ``order`` lists them, ``[common]`` gives each a regular expression, and a
``[family.<NAME>]`` table replaces patterns for one ISA family (the first word of the processor's
``family`` in tables/targets.toml). The first class whose pattern matches wins. A scratch access
(amdocc/isa/spills.py decides which buffer accesses are) is in class "scratch" whatever its
mnemonic says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter, not_

from ..caches import cached
from ..tabledata import Row, load_table
from .model import Instruction

TABLE = "isa_mix.toml"
UNDECODABLE = "undecodable"


@cached(maxsize=64)
def classes_for(family: str | None) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(class, compiled pattern) in matching order, for an ISA family (None: the common set)."""
    order, common, families = _table()
    chosen = {**common, **families.get(family or "", {})}
    return tuple((name, chosen[name]) for name in order)


@cached(maxsize=1)
def _table() -> tuple[tuple[str, ...], dict[str, re.Pattern[str]], dict[str, dict[str, re.Pattern[str]]]]:
    """The table read whole (every family, not only the one asked for) through tabledata.Row, so
    that a damaged entry is one TableError naming the table, the row and the column."""
    table = Row(TABLE, "", load_table(TABLE))
    order: tuple[str, ...] = table.texts("order")
    common_row = table.sub("common")
    common = _patterns(common_row, order)
    for name in order:
        if name not in common:
            common_row.value(name)  # missing: every class of `order` has its pattern here
    families = {row.key: _patterns(row, order) for row in table.sub("family", {}).rows()}
    return order, common, families


def _patterns(row: Row, order: tuple[str, ...]) -> dict[str, re.Pattern[str]]:
    out = {}
    for name in row.columns():
        if name not in order:
            raise row.error(f"is not a class of `order` ({', '.join(order)})", name)
        text = row.text(name)
        try:
            out[name] = re.compile(text)
        except re.error as exc:
            raise row.error(f"{text!r} is not a regular expression: {exc}", name) from None
    return out


def family_of(processor_family: str | None) -> str | None:
    """The table's family key: the first word of targets.toml's family ("CDNA3 (MI300)" → "CDNA3")."""
    return processor_family.split()[0] if processor_family else None


def classify(
    instructions: Sequence[Instruction], family: str | None, scratch: Sequence[bool] | None = None
) -> tuple[str, ...]:
    """Each instruction's class; ``scratch[i]`` True puts instruction i in "scratch"."""
    # Each distinct mnemonic classified once per process, then every instruction looked up, at C level.
    memo = _classes_of_mnemonics(family)
    if len(memo) > _MNEMONICS_BOUND:
        memo.clear()
    out = list(map(memo.__getitem__, map(_MNEMONIC, instructions)))
    decoded = list(map(_DECODED, instructions))
    if not all(decoded):
        for i in compress(range(len(out)), map(not_, decoded)):
            out[i] = UNDECODABLE
    if scratch is not None:
        for i in compress(range(len(scratch)), scratch):
            if decoded[i]:
                out[i] = "scratch"
    return tuple(out)


_MNEMONIC, _DECODED = itemgetter(3), itemgetter(5)  # Instruction's fields, read faster than by name
_MNEMONICS_BOUND = 1 << 14  # mnemonics remembered per family (LLVM's AMDGPU has a few thousand)


class _ClassOfMnemonic(dict[str, str]):
    """Mnemonic -> class for one family, each classified on first sight."""

    def __init__(self, classes: tuple[tuple[str, re.Pattern[str]], ...]) -> None:
        super().__init__()
        self.classes = classes

    def __missing__(self, mnemonic: str) -> str:
        found = self[mnemonic] = next((name for name, rx in self.classes if rx.search(mnemonic)), "other")
        return found


@cached(maxsize=64)
def _classes_of_mnemonics(family: str | None) -> _ClassOfMnemonic:
    return _ClassOfMnemonic(classes_for(family))


_COUNTER = re.compile(r"\b(vmcnt|expcnt|lgkmcnt|vscnt|vm_vsrc|va_vdst|sa_sdst|depctr\w*)\(")
_SPLIT = re.compile(r"^s_wait_(\w+)$|^s_waitcnt_(\w+)$")


def waited_counters(ins: Instruction) -> tuple[str, ...]:
    """The counters one wait names: ``s_waitcnt vmcnt(0) lgkmcnt(0)`` → (vmcnt, lgkmcnt);
    ``s_waitcnt_vscnt null, 0`` → (vscnt,); gfx12's ``s_wait_loadcnt 0`` → (loadcnt,)."""
    m = _SPLIT.match(ins.mnemonic)
    if m:
        return tuple((m.group(1) or m.group(2)).split("_"))
    return tuple(dict.fromkeys(_COUNTER.findall(ins.operands)))
