"""Several ``NT_AMDGPU_METADATA`` notes of one code object, merged into one metadata map the way
the runtime's code-object manager (comgr) merges them (docs/code-object-format.md §2.4).

A device link that LLVM's LTO splits into partitions (clang's ``-fgpu-rdc`` and
``--offload-new-driver`` links; lld's ``--lto-partitions``) writes one note per partition, and
the linker keeps them all. HIP reads its metadata through comgr, which takes the first note as
the base and appends the kernels of every later note that it can merge. The rules, in our words:

- a later note is merged when it and the base both carry an ``amdhsa.version`` list, the two
  lists are equal, both carry an ``amdhsa.kernels`` list, and not both carry ``amdhsa.printf``;
  a printf table only the later note carries is adopted. A note comgr does not merge is left out
  whole: HIP does not find its kernels (ROCm 7.14 answers hipErrorNotFound on the emulated device);
- the base's other top-level values are the code object's. comgr does not compare them; amdocc
  does, and a later note that says otherwise is a finding;
- a kernel (by ``.symbol``) described in two merged notes is answered by HIP from the later entry
  (ROCm 7.14's hipFuncGetAttribute on the emulated device), so amdocc keeps that one, at the place
  of the first, and says so.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from typing import Any

from .model import ERROR, INFO, WARNING, Finding

KERNELS, VERSION, PRINTF = "amdhsa.kernels", "amdhsa.version", "amdhsa.printf"
LEFT_OUT = "metadata-note-left-out"

# Values quoted in findings are cut short: a note may hold a printf table of any size.
_BRIEF = reprlib.Repr()  # (keyword arguments need Python 3.12)
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict, _BRIEF.maxstring, _BRIEF.maxother = 3, 6, 6, 60, 60


@dataclass(slots=True)
class Merged:
    """The merged metadata map, findings on the code object, and findings per kernel entry
    (by index in the merged ``amdhsa.kernels`` list)."""

    metadata: dict[Any, Any]
    findings: list[Finding] = field(default_factory=list)
    kernel_findings: dict[int, list[Finding]] = field(default_factory=dict)


@dataclass(slots=True)
class _Placed:
    """Where a kernel's entry sits in the merged list, and every note that describes it."""

    index: int  # in the merged list
    note: int  # 1-based number of the note whose entry is kept
    visible: bool  # that note is one comgr merges
    notes: list[tuple[int, bool]]  # (note, merged by comgr) of every description, in note order
    differs: bool = False  # two descriptions differ
    visible_differ: bool = False  # two descriptions in notes comgr merges differ


def merge_notes(notes: list[tuple[int, dict[Any, Any]]]) -> Merged:
    """Merge decoded metadata maps, each with the offset of its note's descriptor in the code
    object, in note order. Linear in the notes' size: a kernel described in thousands of notes
    gets one finding."""
    first = notes[0][1]
    out = Merged(dict(first))
    base = first.get(KERNELS)
    entries: list[Any] = list(base) if isinstance(base, list) else []
    placed: dict[str, _Placed] = {}
    for index, entry in enumerate(entries):
        symbol = _symbol(entry)
        if symbol is not None and symbol not in placed:
            placed[symbol] = _Placed(index, 1, True, [(1, True)])
    for number, (offset, md) in enumerate(notes[1:], start=2):
        where = f"metadata note {number} (at {offset:#x} in the code object)"
        refusal = _comgr_refusal(out.metadata, md)
        _compare_top_level(out, md, where, refusal is None)
        listed = md.get(KERNELS)
        listed = listed if isinstance(listed, list) else []
        if refusal is not None:
            out.findings.append(
                Finding(
                    LEFT_OUT,
                    ERROR,
                    f"{where} {refusal}: comgr, through which HIP reads metadata, leaves the whole note out, "
                    f"so HIP does not find the {len(listed)} kernel(s) it describes",
                )
            )
        for entry in listed:
            _place(out, entries, placed, entry, number, where, refusal is None)
    for kept in placed.values():
        if len(kept.notes) > 1:
            out.kernel_findings.setdefault(kept.index, []).append(_twice(kept))
    if isinstance(base, list) or entries:
        out.metadata[KERNELS] = entries
    out.findings.insert(
        0,
        Finding(
            "metadata-notes",
            INFO,
            f"{len(notes)} metadata notes (a device link writes one per LTO partition); "
            f"their amdhsa.kernels are merged as comgr merges them: {len(entries)} kernel entries",
        ),
    )
    return out


def _comgr_refusal(base: dict[Any, Any], md: dict[Any, Any]) -> str | None:
    """Why comgr would not merge ``md`` into ``base``, or None when it would."""
    if PRINTF in base and PRINTF in md:
        return "carries an amdhsa.printf table, as an earlier note does"
    mine, theirs = md.get(VERSION), base.get(VERSION)
    if not isinstance(mine, list) or not isinstance(theirs, list):
        return "has no amdhsa.version list" if not isinstance(mine, list) else "follows a note without amdhsa.version"
    if not same_value(mine, theirs):
        return f"says amdhsa.version {_BRIEF.repr(mine)}, note 1 {_BRIEF.repr(theirs)}"
    if not isinstance(md.get(KERNELS), list):
        return "has no amdhsa.kernels list"
    if not isinstance(base.get(KERNELS), list):
        return "follows a note without an amdhsa.kernels list"
    return None


def _compare_top_level(out: Merged, md: dict[Any, Any], where: str, merged: bool) -> None:
    """A later note's top-level values against the base's; one only it carries is adopted when
    comgr merges the note (comgr adopts a printf table this way; other keys it ignores)."""
    for key, value in md.items():
        if key == KERNELS:
            continue
        if key not in out.metadata:
            if merged:
                out.metadata[key] = value
            continue
        if key in (VERSION, PRINTF) and not merged:
            continue  # what kept comgr from merging the note: said in the note's own finding
        if not same_value(out.metadata[key], value):
            out.findings.append(
                Finding(
                    "metadata-notes-disagree",
                    WARNING,
                    f"{where} says {key} {_BRIEF.repr(value)}, note 1 {_BRIEF.repr(out.metadata[key])}; "
                    "note 1's is the code object's, as comgr keeps it",
                )
            )


def _place(
    out: Merged, entries: list[Any], placed: dict[str, _Placed], entry: Any, number: int, where: str, visible: bool
) -> None:
    """Put one kernel entry of note ``number`` into the merged list. Of several entries for one
    kernel, the one HIP reads is kept: the last in a note comgr merges (ROCm 7.14 answers from
    it on the emulated device), else the first."""
    symbol = _symbol(entry)
    prior = placed.get(symbol) if symbol is not None else None
    if symbol is None or prior is None:
        index = len(entries)
        entries.append(entry)
        if symbol is not None:
            placed[symbol] = _Placed(index, number, visible, [(number, visible)])
        if not visible:
            out.kernel_findings.setdefault(index, []).append(_left_out(where))
        return
    prior.notes.append((number, visible))
    if not same_value(entries[prior.index], entry):
        prior.differs = True
        prior.visible_differ |= visible and prior.visible
    if visible:
        if not prior.visible:  # HIP finds the kernel after all: the left-out finding no longer holds
            found = out.kernel_findings.get(prior.index, [])
            found[:] = [f for f in found if f.code != LEFT_OUT]
        entries[prior.index] = entry
        prior.note, prior.visible = number, True


def _twice(kept: _Placed) -> Finding:
    """One finding for a kernel several notes describe: which entry is used, and why."""
    numbers = [n for n, _ in kept.notes]
    left_out = [n for n, visible in kept.notes if not visible]
    shown = ", ".join(map(str, numbers[:6])) + (", ..." if len(numbers) > 6 else "")
    which = f"notes {numbers[0]} and {numbers[1]}" if len(numbers) == 2 else f"{len(numbers)} notes ({shown})"
    kind = "with different values" if kept.differs else "identically"
    severity = ERROR if kept.visible_differ else WARNING
    if sum(visible for _, visible in kept.notes) > 1:
        why = "HIP answers from the later entry" if len(numbers) == 2 else "HIP answers from the last merged entry"
    elif left_out and kept.visible:
        why = f"comgr leaves note {left_out[0]} out" if len(left_out) == 1 else "comgr leaves the others out"
    else:
        why = "comgr leaves out both notes" if len(numbers) == 2 else "comgr leaves out all of them"
    return Finding(
        "kernel-described-twice", severity, f"described in {which} {kind}; note {kept.note}'s entry is used: {why}"
    )


def _left_out(where: str) -> Finding:
    return Finding(
        LEFT_OUT,
        ERROR,
        f"described only in {where}, which comgr leaves out: HIP does not find this kernel",
    )


def _symbol(entry: Any) -> str | None:
    symbol = entry.get(".symbol") if isinstance(entry, dict) else None
    return symbol if isinstance(symbol, str) else None


def same_value(a: Any, b: Any) -> bool:
    """Equality of decoded MessagePack values where a boolean never equals an integer, walked
    without recursion (a note may nest as deep as MessagePack allows)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if len(x) != len(y) or any(k not in y for k in x):
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True
