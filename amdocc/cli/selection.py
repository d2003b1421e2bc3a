"""Which code objects and kernels a command looks at, and what to say when that is nothing.

``--target``/``--device`` keep the code objects that can run on that processor (its own
processor with matching xnack/sramecc modes, or a generic family it belongs to); ``--what-if``
keeps the others too, to be evaluated there as labelled what-ifs (``what_if=None``: the command
has no --what-if, so the hint is left out of the messages). ``--kernel`` matches the
stored (mangled) name, the symbol or the demangled name. A selection remembers what it passed
over, so an empty result can name the processors that are there and the nearest kernel names.
Summaries are plain dicts: worker processes send theirs back to be merged.
"""
from __future__ import annotations

import difflib
import re

from ..demangle import base_name, display

MAX_NAMES = 20_000        # kernel names remembered for suggestions (bounded memory on huge trees)


class Selection:
    def __init__(self, target: str | None = None, device: str | None = None, kernel: str | None = None,
                 what_if: bool | None = False, flag: str = "--target"):
        from ..models.compat import device_id

        self.target, self.device = target, device
        self.target_text = target or device
        self.named = device_id(target, device)           # (TargetId, Target) or None; checks they agree
        self.pattern = kernel
        self.regex = re.compile(kernel) if kernel else None
        self.what_if = what_if
        self.flag = flag                # how the command names the processor option
        self.code_objects = 0
        self.placed = 0                 # code objects kept by --target/--device
        self.kernels = 0                # kernels in the code objects kept
        self.matched = 0                # kernels kept by --kernel too
        self.processors: set[str] = set()   # target ids of code objects passed over
        self.names: set[str] = set()        # readable names of kernels passed over by --kernel

    # -- choosing -----------------------------------------------------------------------------

    def runs_here(self, co) -> bool:
        """Whether ``co`` is kept: it runs on the named processor, or a what-if was asked for."""
        self.code_objects += 1
        if self.named is not None and not self.what_if:
            from ..models.compat import why_not
            tid, t = self.named
            if why_not(co.target_id, co.target, tid, t) is not None:
                self.processors.add(str(co.target_id))
                return False
        self.placed += 1
        return True

    def wants(self, kernel) -> bool:
        self.kernels += 1
        if self.regex is None or any(self.regex.search(n) for n in (kernel.name, kernel.symbol, display(kernel.name))):
            self.matched += 1
            return True
        if len(self.names) < MAX_NAMES:
            self.names.add(display(kernel.name))
        return False

    def kernels_of(self, co) -> list:
        """The kernels of ``co`` this selection keeps."""
        if not self.runs_here(co):
            return []
        return [k for k in co.kernels if self.wants(k)]

    def evaluation(self) -> dict:
        """Keyword arguments for amdocc.occupancy: where to evaluate, and whether as a what-if."""
        if self.named is None:
            return {}
        return {"target": self.target, "device": self.device, "what_if": self.what_if}

    # -- reporting ------------------------------------------------------------------------------

    def summary(self) -> dict:
        return {"code_objects": self.code_objects, "placed": self.placed, "kernels": self.kernels,
                "matched": self.matched, "processors": sorted(self.processors), "names": sorted(self.names)}

    def merge(self, summary: dict) -> None:
        for key in ("code_objects", "placed", "kernels", "matched"):
            setattr(self, key, getattr(self, key) + summary[key])
        self.processors.update(summary["processors"])
        room = MAX_NAMES - len(self.names)
        if room > 0:
            self.names.update(summary["names"][:room])

    def nothing_selected(self, paths: str = "the PATHs") -> str:
        """Why nothing was selected, naming what is there."""
        if not self.code_objects:
            return f"no code object found in {paths}"
        if not self.placed:
            there = ", ".join(sorted(self.processors))
            hint = "" if self.what_if is None else f"; --what-if evaluates them on {self.target_text} anyway"
            return (f"no code object in {paths} can run on {self.target_text}: they are built for {there} "
                    f"({self.flag} names one of those{hint})")
        if not self.kernels:
            return f"the code objects selected in {paths} hold no kernels"
        near = self.nearest()
        if near:
            return f"no kernel matches --kernel {self.pattern!r} in {paths}; nearest: {', '.join(near)}"
        some = sorted(self.names)[:3]
        return (f"no kernel matches --kernel {self.pattern!r} in {paths}, which hold {self.kernels} "
                f"kernel{'s' if self.kernels != 1 else ''}" + (f", e.g. {', '.join(some)}" if some else ""))

    def nearest(self, n: int = 5) -> list[str]:
        """Kernel names closest to the --kernel pattern (by their bare function names)."""
        if not self.names or not self.pattern:
            return []
        by_base: dict[str, list[str]] = {}
        for name in sorted(self.names):
            by_base.setdefault(base_name(name), []).append(name)
        lowered = {b.lower(): b for b in by_base}
        picks = difflib.get_close_matches(self.pattern.lower(), list(lowered), n=n, cutoff=0.6)
        return [by_base[lowered[p]][0] for p in picks]
