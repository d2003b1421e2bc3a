"""One file as a worker reads it: the events every operation's per-file worker starts from.

A file of a walk (``parallel.expand``) or a part of a large one (``containers.plan``) is read
into ("code_object", CodeObject), ("skipped", record) and ("error", record) events; the records
are amdocc.report's JSON records, plain dicts, so a worker process can send them back.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Union

# A path an operation is given: text or a path object.
StrPath = Union[str, "os.PathLike[str]"]

if TYPE_CHECKING:
    from typing import TypeAlias

    from ..codeobject import CodeObject, Kernel
    from ..containers import Limits, NotWalked
    from ..containers.pieces import Part

    # One input of a run: a path ("-" for stdin), a part of a large input cut by
    # containers.plan, or an entry a directory walk did not read (reported as it says); and
    # whether it was found by walking a directory.
    FileItem: TypeAlias = tuple[str | Part | NotWalked, bool]
    # What a worker yields: (kind, payload), the payload's type following the kind (see read).
    Event: TypeAlias = tuple[str, Any]
    # A JSON-shaped record (amdocc.report's records, a census row, a check verdict).
    Record: TypeAlias = dict[str, Any]


def read(item: FileItem, limits: Limits | None = None) -> Iterator[Event]:
    """One file of ``expand`` (or a part of a large one), as a worker reports it: ("code_object", CodeObject), and
    ("skipped", record) and ("error", record) for what is passed over or cannot be read (the
    JSON records of amdocc.report, located as their messages say). ``limits`` defaults to the
    environment's (``Limits.from_env``), read for this file."""
    CodeObject, NotWalked, Skipped, AmdoccError, iter_load, error_record, failed_record, skipped_record = (
        _READER or _load_reader()
    )
    path, in_directory = item
    if isinstance(path, NotWalked):  # a walk's entry that is not read: an error or a skip, in its place
        entry = path.item()
        if isinstance(entry, Skipped):
            yield "skipped", skipped_record(entry)
        else:
            yield "error", failed_record(entry)
        return
    try:
        for x in iter_load(path, limits, in_directory=in_directory):
            if isinstance(x, CodeObject):
                yield "code_object", x
            elif isinstance(x, Skipped):
                yield "skipped", skipped_record(x)
            else:
                yield "error", failed_record(x)
    except AmdoccError as exc:
        yield "error", error_record(exc, item_path(item))


# The reader's names, imported on the first file read and then kept: a module that only takes
# paths need not load the reader, and an import statement in a function runs on every call
# (CPython resolves the relative name and asks the module's spec whether it is initializing,
# an AttributeError raised and cleared: ~11 K instructions a statement; the five below were
# 58 K a file, nearly all of read()'s cost).
_READER: tuple[Any, ...] = ()


def _load_reader() -> tuple[Any, ...]:
    global _READER
    from ..codeobject.model import CodeObject
    from ..containers.model import NotWalked, Skipped
    from ..errors import AmdoccError
    from ..loader import iter_load
    from ..report import error_record, failed_record, skipped_record

    _READER = (CodeObject, NotWalked, Skipped, AmdoccError, iter_load, error_record, failed_record, skipped_record)
    return _READER


def item_path(item: FileItem) -> str:
    """The input an item belongs to, as the user named it (a part's whole file, a walk entry's path)."""
    from ..containers import NotWalked, part_path

    where = item[0]
    if isinstance(where, str):
        return where
    return where.path if isinstance(where, NotWalked) else part_path(where)


def kernel_error(co: CodeObject, kernel: Kernel, exc: Exception) -> Record:
    """An error evaluating one kernel, as a record: the rest of its file is still evaluated."""
    from .. import report

    return {**report.origin_record(co.origin), "kernel": kernel.name, "error": f"{co.origin}: {kernel.name}: {exc}"}


def sequence(value: object, name: str, what: str) -> list[Any]:
    """``value``, a list or tuple (any iterable but text) of ``what``, as a list; text or bytes is a
    UsageError naming the parameter: a list of one is written as one (``rules=("scratch",)``),
    and a text taken as a sequence would be read letter by letter."""
    from ..errors import UsageError

    if isinstance(value, (str, bytes)):
        raise UsageError(f"{name} must be a list or tuple of {what}, not the text {value!r} (one: {name}=({value!r},))")
    if not isinstance(value, Iterable):
        raise UsageError(f"{name} must be a list or tuple of {what}, not {type(value).__name__}")
    return list(value)


def path_list(paths: StrPath | Iterable[StrPath]) -> list[str]:
    """The PATHs an operation was given, one or many, as text ("-" is standard input); anything
    else is a UsageError naming ``paths``."""
    from ..errors import UsageError

    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    wanted = "paths must be a path (str or os.PathLike, '-' for standard input) or a list of them"
    given: object = paths  # what a caller passed, whatever the annotation says
    if isinstance(given, bytes) or not isinstance(given, Iterable):
        raise UsageError(f"{wanted}, not {type(given).__name__}")
    out = []
    for p in given:
        if not isinstance(p, (str, os.PathLike)):
            raise UsageError(f"{wanted}, not a list holding {type(p).__name__}")
        out.append(os.fspath(p))
    return out
