"""Errors amdocc raises, and where in a file they happened.

Every error on bad input derives from :class:`AmdoccError` and renders as one line that names the
file and the offset, so the CLI can print it and exit without a traceback. Each class carries
the exit status the command line gives it (``exit_code``): 2 for bad input, bad usage and a bad
table, 3 for a runtime that is needed but missing (``amdocc.runtime.HipUnavailable``). The
table in docs/cli-contract.md lists them.

A message about the caller's arguments names them as Python parameters: its text holds
``{name}`` for each parameter of ``params``, shown as the bare name by ``str()`` and as the
caller's own spelling (the command line's flag) by :meth:`AmdoccError.spelled`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """The command line's exit statuses (as ``pytest.ExitCode``): what ``amdocc.cli.main.main``
    returns and what each error class's ``exit_code`` says. docs/cli-contract.md and the end of
    every ``--help`` list them."""

    OK = 0  # success; for a gate such as check or diff: nothing failed
    GATE_FAILED = 1  # check found a new violation, diff or census --fail-on a regression
    USAGE_ERROR = 2  # bad usage or bad input: an option, an AMDOCC_* value, a file, a table
    RUNTIME_UNAVAILABLE = 3  # a HIP runtime (verify) or libLLVM (isa, tune-regs) is needed but not usable
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


class Origin:
    """Where a buffer of bytes came from.

    ``path`` is what the user gave ("-" for stdin, "<bytes>" for a buffer). ``hops`` names each
    container layer crossed on the way in (a section, a bundle entry, a decompressed payload).
    ``base`` is the absolute file offset of the buffer's first byte, or None once the bytes came
    out of a decompressor and no longer sit at any file offset; ``payload`` is then the offset of
    the buffer's first byte inside the innermost decompressed payload (a deflated wheel member,
    a compressed bundle), which the last decompressing hop names, and None while ``base`` is
    known. Offsets in errors are offsets into the buffer; ``where`` turns them into file offsets
    when it can. Immutable.
    """

    __slots__ = ("base", "hops", "path", "payload")
    path: str
    hops: tuple[str, ...]
    base: int | None
    payload: int | None

    def __init__(self, path: str, hops: tuple[str, ...] = (), base: int | None = 0, payload: int | None = None):
        _set_fields(self, path, tuple(hops), base, None if base is not None else (payload or 0))

    @classmethod
    def _exact(cls, path: str, hops: tuple[str, ...], base: int | None, payload: int | None) -> Origin:
        """An Origin from fields already in normal form (the hops a tuple, payload None while
        base is known): the derivations below make one per container crossed, so they skip
        ``__init__``'s normalising."""
        origin = object.__new__(cls)
        _set_fields(origin, path, hops, base, payload)
        return origin

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Origin is immutable")

    def _key(self) -> tuple[str, tuple[str, ...], int | None, int | None]:
        return self.path, self.hops, self.base, self.payload

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Origin) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        more = f", payload={self.payload!r}" if self.payload else ""
        return f"Origin(path={self.path!r}, hops={self.hops!r}, base={self.base!r}{more})"

    def __reduce__(self) -> tuple[type[Origin], tuple[str, tuple[str, ...], int | None, int | None]]:
        return Origin, self._key()

    def within(self, hop: str) -> Origin:
        """Same buffer, one more layer of context."""
        return Origin._exact(self.path, (*self.hops, hop), self.base, self.payload)

    def at(self, offset: int) -> Origin:
        """The origin of a sub-buffer that starts at ``offset`` of this buffer."""
        if self.base is None:
            return Origin._exact(self.path, self.hops, None, (self.payload or 0) + offset)
        return Origin._exact(self.path, self.hops, self.base + offset, None)

    def within_at(self, hop: str, offset: int) -> Origin:
        """``within(hop).at(offset)`` in one step: where a skipped entry of a container sits."""
        if self.base is None:
            return Origin._exact(self.path, (*self.hops, hop), None, (self.payload or 0) + offset)
        return Origin._exact(self.path, (*self.hops, hop), self.base + offset, None)

    def decompressed(self, hop: str) -> Origin:
        """The origin of a new buffer produced by decompressing part of this one."""
        return Origin._exact(self.path, (*self.hops, hop), None, 0)

    def mark(self, offset: int) -> str:
        """An offset as a label for a hop: absolute when known, relative otherwise."""
        return f"{self.base + offset:#x}" if self.base is not None else f"+{offset:#x}"

    @property
    def chain(self) -> str:
        return " > ".join(self.hops)

    def where(self, offset: int | None = None) -> str:
        """A human location: the absolute file offset when known, and the chain of hops."""
        if offset is None:
            return self.chain
        if self.base is not None:
            here = f"offset {self.base + offset:#x}"
            return f"{here} in {self.chain}" if self.hops else here
        return f"{self.chain} +{offset:#x}"

    def __str__(self) -> str:
        return f"{self.path} [{self.chain}]" if self.hops else self.path


_SLOTS = {name: getattr(Origin, name).__set__ for name in Origin.__slots__}


def _set_fields(origin: Origin, path: str, hops: tuple[str, ...], base: int | None, payload: int | None) -> None:
    """Fill an Origin's slots past its immutability guard (the slot descriptors' own setters,
    about half the cost of ``object.__setattr__``)."""
    _SLOTS["path"](origin, path)
    _SLOTS["hops"](origin, hops)
    _SLOTS["base"](origin, base)
    _SLOTS["payload"](origin, payload)


class AmdoccError(Exception):
    """Base of every error amdocc raises on bad input or bad usage."""

    #: The command line's exit status for this error (a subclass may say otherwise).
    exit_code: ExitCode = ExitCode.USAGE_ERROR

    def __init__(
        self,
        message: str,
        origin: Origin | None = None,
        offset: int | None = None,
        *,
        params: Iterable[str] = (),
    ):
        self.params = tuple(params)  # the caller's parameters the message names, as {name}
        self.template = message
        self.message = name_params(message, self.params)
        super().__init__(self.message)
        self.origin = origin
        self.offset = offset

    def __str__(self) -> str:
        return self._framed(self.message)

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The error as ``str()`` gives it, each parameter named by ``spell`` (the CLI: a flag)."""
        return self._framed(name_params(self.template, self.params, spell))

    def _framed(self, message: str) -> str:
        if self.origin is None:
            return message
        where = self.origin.where(self.offset)
        return f"{self.origin.path}: {where}: {message}" if where else f"{self.origin.path}: {message}"


def name_params(template: str, params: Iterable[str], spell: Callable[[str], str] = str) -> str:
    """``template`` with each ``{name}`` of ``params`` replaced by ``spell(name)`` (by default
    the bare parameter name); other braces are left as they are."""
    for name in params:
        template = template.replace("{" + name + "}", spell(name))
    return template


class AmdoccWarning(UserWarning):
    """Something amdocc did other than asked, said through :mod:`warnings` (the caller decides
    whether and how it is shown; the CLI prints "amdocc: warning: ..."). Its text names the
    caller's parameters as ``{name}``, as :class:`AmdoccError` does."""

    def __init__(self, message: str, *, params: Iterable[str] = ()):
        self.params = tuple(params)
        self.template = message
        self.message = name_params(message, self.params)
        super().__init__(self.message)

    def spelled(self, spell: Callable[[str], str]) -> str:
        return name_params(self.template, self.params, spell)


class FormatError(AmdoccError):
    """The bytes do not follow the format they claim (truncated, lying offsets, bad encoding)."""


class LimitError(FormatError):
    """Decoding would exceed a safety bound (decompressed size, nesting depth, entry count)."""


class UnknownTargetError(AmdoccError):
    """A processor, device or target id that the tables do not describe."""


class UsageError(AmdoccError):
    """The caller asked for something inconsistent (bad flags, missing inputs)."""


class TableError(AmdoccError, ValueError):
    """A table of ``tables/`` (shipped with amdocc, or edited by its user) is missing, is not
    TOML, or holds a row the loader refuses; the message names the table and the row. Also a
    ValueError, as the loaders raised before this class existed."""
