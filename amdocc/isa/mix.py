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

from ..caches import cached
from ..errors import TableError
from ..tabledata import load_table
from .model import Instruction

TABLE = "isa_mix.toml"
UNDECODABLE = "undecodable"


@cached(maxsize=64)
def classes_for(family: str | None) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(class, compiled pattern) in matching order, for an ISA family (None: the common set)."""
    table = load_table(TABLE)
    order = table.get("order")
    common = table.get("common")
    if not isinstance(order, list) or not isinstance(common, dict):
        raise TableError(f"{TABLE}: needs an `order` list and a [common] table")
    chosen = dict(common)
    families = table.get("family", {})
    if family and isinstance(families, dict) and isinstance(families.get(family), dict):
        chosen.update(families[family])
    out = []
    for name in order:
        pattern = chosen.get(name)
        if not isinstance(pattern, str):
            raise TableError(f"{TABLE}: class {name!r} of `order` has no pattern in [common]")
        try:
            out.append((name, re.compile(pattern)))
        except re.error as exc:
            raise TableError(f"{TABLE}: class {name!r}: {exc}") from None
    unknown = set(chosen) - set(order)
    if unknown:
        raise TableError(f"{TABLE}: classes {sorted(unknown)} are not in `order`")
    return tuple(out)


def family_of(processor_family: str | None) -> str | None:
    """The table's family key: the first word of targets.toml's family ("CDNA3 (MI300)" → "CDNA3")."""
    return processor_family.split()[0] if processor_family else None


def classify(
    instructions: Sequence[Instruction], family: str | None, scratch: Sequence[bool] | None = None
) -> tuple[str, ...]:
    """Each instruction's class; ``scratch[i]`` True puts instruction i in "scratch"."""
    classes = classes_for(family)
    # Each distinct mnemonic classified once, then every instruction looked up.
    memo = {
        m: next((name for name, rx in classes if rx.search(m)), "other")
        for m in {ins.mnemonic for ins in instructions if ins.decoded}
    }
    out = [memo[ins.mnemonic] if ins.decoded else UNDECODABLE for ins in instructions]
    if scratch is not None:
        for i in [i for i, s in enumerate(scratch) if s]:
            if instructions[i].decoded:
                out[i] = "scratch"
    return tuple(out)


_COUNTER = re.compile(r"\b(vmcnt|expcnt|lgkmcnt|vscnt|vm_vsrc|va_vdst|sa_sdst|depctr\w*)\(")
_SPLIT = re.compile(r"^s_wait_(\w+)$|^s_waitcnt_(\w+)$")


def waited_counters(ins: Instruction) -> tuple[str, ...]:
    """The counters one wait names: ``s_waitcnt vmcnt(0) lgkmcnt(0)`` → (vmcnt, lgkmcnt);
    ``s_waitcnt_vscnt null, 0`` → (vscnt,); gfx12's ``s_wait_loadcnt 0`` → (loadcnt,)."""
    m = _SPLIT.match(ins.mnemonic)
    if m:
        return tuple((m.group(1) or m.group(2)).split("_"))
    return tuple(dict.fromkeys(_COUNTER.findall(ins.operands)))
