"""Files, directories or buffers → parsed code objects (containers, then codeobject)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from .codeobject import CodeObject, Kernel, NotAnHsaCodeObject, parse_code_object
from .containers import (
    NOT_A_WHOLE_IMAGE,
    Blob,
    Failed,
    Limits,
    Members,
    Piece,
    Skipped,
    Source,
    scan,
    scan_file,
    scan_part,
)
from .errors import AmdoccError, FormatError, Origin, UsageError


class Loaded(list[CodeObject]):
    """The code objects found, plus what was skipped and what failed along the way."""

    def __init__(
        self, code_objects: Iterable[CodeObject] = (), skipped: Iterable[Skipped] = (), failed: Iterable[Failed] = ()
    ) -> None:
        super().__init__(code_objects)
        self.skipped: list[Skipped] = list(skipped)
        self.failed: list[Failed] = list(failed)

    @property
    def kernels(self) -> list[Kernel]:
        return [k for co in self for k in co.kernels]


def check_source(source: object, what: str = "source") -> None:
    """A source must be a path, "-", bytes, or a part cut by ``containers.plan``; anything else
    (None, a number) is a UsageError, not the TypeError deeper code would meet."""
    if isinstance(source, (str, os.PathLike, bytes, bytearray, memoryview, Piece, Members)):
        if isinstance(source, str) and not source:
            raise UsageError(f"{what} is an empty path")
        return
    raise UsageError(
        f"{what} must be a path (str or os.PathLike), '-' for standard input, or bytes, not {type(source).__name__}"
    )


def iter_load(
    source: Source | Piece | Members, limits: Limits | None = None, *, in_directory: bool = False
) -> Iterator[CodeObject | Skipped | Failed]:
    """Stream code objects, skipped entries and failures from one source, in file order.

    ``in_directory`` marks a file found by walking a directory: one that starts like nothing
    amdocc reads is then passed over instead of being an error. A part of a large input cut by
    ``containers.plan`` (a Piece of a library, Members of a wheel) gives what the whole input
    gives there. ``limits`` defaults to ``Limits.from_env()``.
    """
    check_source(source)
    if limits is None:
        limits = Limits.from_env()
    elif not isinstance(limits, Limits):
        raise UsageError(f"limits must be an amdocc.containers.Limits, not {type(limits).__name__}")
    if isinstance(source, (Piece, Members)):
        items = scan_part(source, limits)
    elif in_directory:
        if not isinstance(source, (str, os.PathLike)):
            raise UsageError("in_directory marks a file found in a directory: it needs a path, not bytes")
        items = scan_file(os.fspath(source), limits, in_directory=True)
    else:
        items = scan(source, limits)
    for item in items:
        if isinstance(item, Blob):
            try:
                yield parse_code_object(item.data, item.origin, item.entry_id)
            except NotAnHsaCodeObject as exc:
                yield Skipped(item.origin, exc.message, item.entry_id)
            except AmdoccError as exc:
                # Bytes the raw-image scan found in host data are a candidate, not a promise.
                yield Skipped(item.origin, NOT_A_WHOLE_IMAGE) if item.found_in_data else Failed(item.origin, exc)
        else:
            yield item


def load(source: Source, *, strict: bool = True, limits: Limits | None = None) -> Loaded:
    """Every code object in ``source`` (a path, a directory, "-" for stdin, or bytes).

    With ``strict`` (the default) the first unreadable part raises its AmdoccError; otherwise
    failures are collected in ``.failed`` and the readable code objects are still returned,
    a whole file that is no code object or container included (a text file named ``x.co``).
    A path that cannot be opened at all raises either way.
    """
    check_source(source)
    if not isinstance(strict, bool):
        raise UsageError(f"strict must be True or False, not {strict!r}")
    out = Loaded()
    try:
        for item in iter_load(source, limits):
            if isinstance(item, CodeObject):
                out.append(item)
            elif isinstance(item, Skipped):
                out.skipped.append(item)
            else:
                if strict:
                    raise item.error
                out.failed.append(item)
    except FormatError as exc:  # the source itself is unreadable (not opened: AmdoccError)
        if strict or any(exc is f.error for f in out.failed):
            raise
        out.failed.append(Failed(exc.origin or Origin(_shown(source)), exc))
    return out


def _shown(source: Source) -> str:
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<bytes>"
