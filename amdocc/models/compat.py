"""Where a kernel may be evaluated: the processors its code object can run on.

The target-id rules (docs/code-object-format.md §1.2-1.3, §4): code runs on its own processor when each
of its xnack/sramecc settings is "any" or matches the device's mode; code for a generic processor
(gfx11-generic, ...) runs on the members listed in the targets table's ``generic_of``, and is
then evaluated as the member it stands for. Anywhere else an evaluation is refused, unless the
caller asks for a what-if by name, and then the result says so.

LLVM 22 writes every generic code object as generic version 1, and the table does not record
in which version a member joined its family, so the version is not checked here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..codeobject.target_id import TargetId
from ..errors import UsageError
from ..targets import Target, get_target

if TYPE_CHECKING:
    from ..devices import Device

WHAT_IF_HINT = "ask for a what-if (what_if=True, or --what-if) to evaluate it there anyway"


class IncompatibleTarget(UsageError):
    """A kernel asked about a processor its code object cannot run on."""


@dataclass(frozen=True, slots=True)
class Place:
    """The processor to evaluate on, and how the code object relates to it."""

    target: Target
    device: TargetId  # the processor with the feature modes the caller named
    built_for: str | None  # the code object's target id; None for numbers typed in
    what_if: bool = False  # evaluated where the code cannot run, as asked
    reason: str | None = None  # why it cannot run there (what-ifs only)


def device_id(target: Target | str | None = None, device: Device | str | None = None) -> tuple[TargetId, Target] | None:
    """The processor (with the feature modes given, if any) that ``target``/``device`` name;
    None when neither is given. A target id and a device must name the same processor."""
    named: tuple[TargetId, Target] | None = None
    if target is not None:
        if isinstance(target, Target):
            named = TargetId(target.name), target
        else:
            tid, t = TargetId.parse(str(target)), get_target(str(target))
            named = TargetId(t.name, tid.sramecc, tid.xnack), t
    if device is not None:
        from ..devices import Device, get_device

        dev = device if isinstance(device, Device) else get_device(str(device))
        if named is not None and named[1] is not dev.target:
            raise UsageError(f"device {dev.name} is a {dev.target.name}, not {named[1].name}")
        if named is None:
            named = TargetId(dev.target.name), dev.target
    return named


def why_not(code: TargetId, code_target: Target | None, device: TargetId, device_target: Target) -> str | None:
    """None when code built for ``code`` runs on ``device``; otherwise the reason, in words."""
    shown = str(code)
    if code_target is None:
        return f"{shown} code is for a processor amdocc does not know, so it cannot be placed on {device}"
    family = code_target is not device_target
    if family and device_target.name not in code_target.generic_of:
        members = f" (it runs on {', '.join(code_target.generic_of)})" if code_target.generic_of else ""
        return f"{shown} code cannot run on {device_target.name}{members}"
    for name in ("sramecc", "xnack"):
        mine, theirs = getattr(code, name), getattr(device, name)
        if mine in ("on", "off") and theirs in ("on", "off") and mine != theirs:
            return (
                f"{shown} code is built with {name} {mine}; it cannot run on {device}, which runs with {name} {theirs}"
            )
    return None


def place(
    code: TargetId | None,
    code_target: Target | None,
    target: Target | str | None = None,
    device: Device | str | None = None,
    *,
    what_if: bool = False,
) -> Place | None:
    """Where to evaluate code built for ``code``: None when no target or device is named (the
    code's own processor); an :class:`IncompatibleTarget` error when it cannot run there and
    ``what_if`` is false."""
    named = device_id(target, device)
    if named is None:
        return None
    tid, t = named
    if code is None:  # numbers typed in: they describe the target named
        return Place(t, tid, None)
    reason = why_not(code, code_target, tid, t)
    if reason is not None and not what_if:
        raise IncompatibleTarget(f"{reason}; {WHAT_IF_HINT}")
    return Place(t, tid, str(code), what_if=reason is not None, reason=reason)
