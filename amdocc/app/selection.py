"""Which code objects and kernels an operation looks at, and what to say when that is nothing.

A target or device keeps the code objects that can run on that processor (its own processor
with matching xnack/sramecc modes, or a generic family it belongs to); ``what_if`` keeps the
others too, to be evaluated there as labelled what-ifs (``what_if=None``: the command has no
what-if, so the hint is left out of the messages). The kernel pattern matches the stored
(mangled) name, the symbol or the demangled name. A selection remembers what it passed over, so
an empty result can name the processors that are there and the nearest kernel names. Summaries
are plain dicts: worker processes send theirs back to be merged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..containers.scan import RELOCATABLE_DEVICE_CODE
from ..demangle import base_name, display
from ..errors import UsageError, name_params

if TYPE_CHECKING:
    from ..codeobject import CodeObject, Kernel, TargetId
    from ..targets import Target
    from .reading import Event, FileItem

MAX_NAMES = 20_000  # kernel names remembered for suggestions (bounded memory on huge trees)


class Selection:
    def __init__(
        self,
        target: str | None = None,
        device: str | None = None,
        kernel: str | None = None,
        what_if: bool | None = False,
        target_param: str = "target",
    ) -> None:
        from ..models.compat import device_id

        self.target, self.device = target, device
        self.target_text = target or device
        self.named = device_id(target, device)  # (TargetId, Target) or None; checks they agree
        self.pattern = kernel
        self.regex = re.compile(kernel) if kernel else None
        self.what_if = what_if
        self.target_param = target_param  # the caller's name for the processor parameter
        self.code_objects = 0
        self.placed = 0  # code objects kept by --target/--device
        self.kernels = 0  # kernels in the code objects kept
        self.matched = 0  # kernels kept by --kernel too
        self.processors: set[str] = set()  # target ids of code objects passed over
        self.names: set[str] = set()  # readable names of kernels passed over by --kernel
        self.relocatable = 0  # entries of relocatable device code (-fgpu-rdc -c) passed over

    # -- choosing -----------------------------------------------------------------------------

    def runs_here(self, co: CodeObject) -> bool:
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

    def passed_over(self, record: dict[str, Any]) -> None:
        """Note a skipped entry: relocatable device code is what an empty result then names."""
        if record["reason"] == RELOCATABLE_DEVICE_CODE:
            self.relocatable += 1

    def matches(self, name: str, symbol: str = "") -> bool:
        """Whether --kernel matches the stored name, the symbol or the demangled name (or there
        is no --kernel). The name is demangled only when the others do not match."""
        r = self.regex
        return r is None or bool(r.search(name) or (symbol and r.search(symbol)) or r.search(display(name)))

    def wants(self, kernel: Kernel) -> bool:
        self.kernels += 1
        if self.matches(kernel.name, kernel.symbol):
            self.matched += 1
            return True
        if len(self.names) < MAX_NAMES:
            self.names.add(display(kernel.name))
        return False

    def kernels_of(self, co: CodeObject) -> list[Kernel]:
        """The kernels of ``co`` this selection keeps."""
        if not self.runs_here(co):
            return []
        return [k for k in co.kernels if self.wants(k)]

    def evaluated_as(self, target_id: TargetId, target: Target | None) -> dict[str, Any]:
        """Where code built for ``target_id`` (its Target, or None) is evaluated. "target" names
        it as reports and baselines key it: the code's target id, then " on PROCESSOR" when it is
        evaluated on another processor (a member of its generic family, or a what-if), and
        " (what-if)" when it cannot run there; "processor" and "what_if" say the same apart."""
        from ..models.compat import place

        code = str(target_id)
        where = place(target_id, target, self.target, self.device, what_if=True) if self.named else None
        if where is None or (where.target is target and not where.what_if):
            processor = target.name if target is not None else target_id.processor
            return {"target": code, "built_for": code, "processor": processor, "what_if": False}
        label = f"{code} on {where.device}" + (" (what-if)" if where.what_if else "")
        return {"target": label, "built_for": code, "processor": where.target.name, "what_if": where.what_if}

    def covers(self, kernel: str, target: str) -> bool:
        """Whether this selection evaluates kernel ``kernel`` under the ``target`` label of
        :meth:`evaluated_as` (so that a baseline entry out of its reach is not called stale)."""
        from ..codeobject.target_id import TargetId
        from ..targets import find_target

        if not self.matches(kernel):
            return False
        built = target.split(" on ", 1)[0]
        seen = self.evaluated_as(TargetId.parse(built), find_target(built))
        return seen["target"] == target and (bool(self.what_if) or not seen["what_if"])

    def nothing_to_evaluate(self) -> bool:
        """Whether the PATHs held no code object but relocatable device code: read cleanly, with
        no kernel to evaluate before the device link. A gate (check, census) says so and passes;
        this is not a selection that matches nothing."""
        return not self.code_objects and self.relocatable > 0

    def evaluation(self) -> dict[str, Any]:
        """Keyword arguments for amdocc.occupancy: where to evaluate, and whether as a what-if."""
        if self.named is None:
            return {}
        return {"target": self.target, "device": self.device, "what_if": self.what_if}

    # -- reporting ------------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        return {
            "code_objects": self.code_objects,
            "placed": self.placed,
            "kernels": self.kernels,
            "matched": self.matched,
            "relocatable": self.relocatable,
            "processors": sorted(self.processors),
            "names": sorted(self.names),
        }

    def merge(self, summary: dict[str, Any]) -> None:
        for key in ("code_objects", "placed", "kernels", "matched", "relocatable"):
            setattr(self, key, getattr(self, key) + summary[key])
        self.processors.update(summary["processors"])
        room = MAX_NAMES - len(self.names)
        if room > 0:
            self.names.update(summary["names"][:room])

    def nothing_selected(self, paths: str = "the PATHs", spell: Callable[[str], str] = str) -> str:
        """Why nothing was selected, naming what is there (and each parameter as ``spell``
        names it: by default the Python parameter, the CLI gives its flag)."""
        return name_params(self._nothing_selected(paths), self.params, spell)

    def nothing_selected_error(self, paths: str = "the PATHs") -> UsageError:
        """:meth:`nothing_selected` as the error an operation raises (the CLI spells it in flags)."""
        return UsageError(self._nothing_selected(paths), params=self.params)

    @property
    def params(self) -> tuple[str, ...]:
        """The parameters a selection's messages name."""
        return (self.target_param, "what_if", "kernel")

    def _nothing_selected(self, paths: str) -> str:
        if not self.code_objects and self.relocatable:
            entries = f"{self.relocatable} entr{'ies' if self.relocatable != 1 else 'y'}"
            return (
                f"no kernel in {paths}: only relocatable device code ({entries}), nothing to evaluate "
                "before the device link; give amdocc the linked library or executable"
            )
        if not self.code_objects:
            return f"no code object found in {paths}"
        if not self.placed:
            there = ", ".join(sorted(self.processors))
            hint = "" if self.what_if is None else f"; {{what_if}} evaluates them on {self.target_text} anyway"
            return (
                f"no code object in {paths} can run on {self.target_text}: they are built for {there} "
                f"({{{self.target_param}}} names one of those{hint})"
            )
        if not self.kernels:
            return f"the code objects selected in {paths} hold no kernels"
        near = self.nearest()
        if near:
            return f"no kernel matches {{kernel}} {self.pattern!r} in {paths}; nearest: {', '.join(near)}"
        some = sorted(self.names)[:3]
        return (
            f"no kernel matches {{kernel}} {self.pattern!r} in {paths}, which hold {self.kernels} "
            f"kernel{'s' if self.kernels != 1 else ''}" + (f", e.g. {', '.join(some)}" if some else "")
        )

    def nearest(self, n: int = 5) -> list[str]:
        """Kernel names closest to the --kernel pattern (by their bare function names)."""
        if not self.names or not self.pattern:
            return []
        by_base: dict[str, list[str]] = {}
        for name in sorted(self.names):
            by_base.setdefault(base_name(name), []).append(name)
        pattern = self.pattern.lower()
        import difflib  # only when a --kernel pattern matched nothing: a selection never needs it

        def likeness(base: str) -> float:
            # A pattern is often the start of a name typed with a slip ("saxpi" for saxpy_lds):
            # compare it with the whole name and with the name's start of the same length.
            lowered = base.lower()
            return max(
                difflib.SequenceMatcher(None, pattern, lowered).ratio(),
                difflib.SequenceMatcher(None, pattern, lowered[: len(pattern)]).ratio(),
            )

        scored = sorted(((likeness(b), b) for b in by_base), key=lambda pair: (-pair[0], pair[1]))
        return [by_base[b][0] for score, b in scored[:n] if score >= 0.6]


def selected_in(item: FileItem, selection: Selection) -> Iterator[Event]:
    """One file of a walk (see parallel.expand) through ``selection``: ("code_object", co) for
    each code object kept, then ("kernel", (co, kernel)) for each of its kernels kept;
    ("skipped", record) and ("error", record) for what is passed over or unreadable; and last
    ("seen", what the selection passed over), for a worker process to send back."""
    from .reading import read

    for kind, value in read(item):
        if kind != "code_object":
            if kind == "skipped":
                selection.passed_over(value)
            yield kind, value
        elif selection.runs_here(value):
            yield kind, value
            for kernel in value.kernels:
                if selection.wants(kernel):
                    yield "kernel", (value, kernel)
    yield "seen", selection.summary()


def require_one_kernel(chosen: list[tuple[CodeObject, Kernel]], what: str, selection: Selection) -> None:
    """``chosen`` must hold exactly one kernel; otherwise say what is there."""
    if len(chosen) == 1:
        return
    if not chosen:
        raise selection.nothing_selected_error()
    names = ", ".join(f"{display(k.name)} ({co.processor})" for co, k in chosen[:8])
    more = f" and {len(chosen) - 8} more" if len(chosen) > 8 else ""
    raise UsageError(
        f"{what} needs exactly one kernel, {len(chosen)} selected: {names}{more} "
        f"(narrow it with {{kernel}} and {{{selection.target_param}}})",
        params=("kernel", selection.target_param),
    )
