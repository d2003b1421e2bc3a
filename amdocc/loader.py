"""Files, directories or buffers → parsed code objects (containers, then codeobject)."""
from __future__ import annotations

from collections.abc import Iterator

from .codeobject import CodeObject, NotAnHsaCodeObject, parse_code_object
from .containers import DEFAULT_LIMITS, Blob, Failed, Limits, Members, Piece, Skipped, scan, scan_file, scan_part
from .errors import AmdoccError


class Loaded(list):
    """The code objects found, plus what was skipped and what failed along the way."""

    def __init__(self, code_objects=(), skipped=(), failed=()):
        super().__init__(code_objects)
        self.skipped: list[Skipped] = list(skipped)
        self.failed: list[Failed] = list(failed)

    @property
    def kernels(self):
        return [k for co in self for k in co.kernels]


def iter_load(source, limits: Limits = DEFAULT_LIMITS, *,
              in_directory: bool = False) -> Iterator[CodeObject | Skipped | Failed]:
    """Stream code objects, skipped entries and failures from one source, in file order.

    ``in_directory`` marks a file found by walking a directory: one that starts like nothing
    amdocc reads is then passed over instead of being an error. A part of a large input cut by
    ``containers.plan`` (a Piece of a library, Members of a wheel) gives what the whole input
    gives there.
    """
    if isinstance(source, (Piece, Members)):
        items = scan_part(source, limits)
    else:
        items = scan_file(source, limits, in_directory=True) if in_directory else scan(source, limits)
    for item in items:
        if isinstance(item, Blob):
            try:
                yield parse_code_object(item.data, item.origin)
            except NotAnHsaCodeObject as exc:
                yield Skipped(item.origin, exc.message, item.entry_id)
            except AmdoccError as exc:
                yield Failed(item.origin, exc)
        else:
            yield item


def load(source, *, strict: bool = True, limits: Limits = DEFAULT_LIMITS) -> Loaded:
    """Every code object in ``source`` (a path, a directory, "-" for stdin, or bytes).

    With ``strict`` (the default) the first unreadable part raises its AmdoccError; otherwise
    failures are collected in ``.failed`` and the readable code objects are still returned.
    """
    out = Loaded()
    for item in iter_load(source, limits):
        if isinstance(item, CodeObject):
            out.append(item)
        elif isinstance(item, Skipped):
            out.skipped.append(item)
        else:
            if strict:
                raise item.error
            out.failed.append(item)
    return out
