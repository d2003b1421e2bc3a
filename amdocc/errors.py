"""Errors amdocc raises, and where in a file they happened.

Every error on bad input derives from :class:`AmdoccError` and renders as one line that names the
file and the offset, so the CLI can print it and exit 2 without a traceback.
"""

from __future__ import annotations


class Origin:
    """Where a buffer of bytes came from.

    ``path`` is what the user gave ("-" for stdin, "<bytes>" for a buffer). ``hops`` names each
    container layer crossed on the way in (a section, a bundle entry, a decompressed payload).
    ``base`` is the absolute file offset of the buffer's first byte, or None once the bytes came
    out of a decompressor and no longer sit at any file offset. Offsets in errors are offsets into
    the buffer; ``where`` turns them into file offsets when it can. Immutable.
    """

    __slots__ = ("base", "hops", "path")
    path: str
    hops: tuple[str, ...]
    base: int | None

    def __init__(self, path: str, hops: tuple[str, ...] = (), base: int | None = 0):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "hops", tuple(hops))
        object.__setattr__(self, "base", base)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Origin is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Origin) and (self.path, self.hops, self.base) == (other.path, other.hops, other.base)

    def __hash__(self) -> int:
        return hash((self.path, self.hops, self.base))

    def __repr__(self) -> str:
        return f"Origin(path={self.path!r}, hops={self.hops!r}, base={self.base!r})"

    def __reduce__(self) -> tuple[type[Origin], tuple[str, tuple[str, ...], int | None]]:
        return Origin, (self.path, self.hops, self.base)

    def within(self, hop: str) -> Origin:
        """Same buffer, one more layer of context."""
        return Origin(self.path, (*self.hops, hop), self.base)

    def at(self, offset: int) -> Origin:
        """The origin of a sub-buffer that starts at ``offset`` of this buffer."""
        return Origin(self.path, self.hops, None if self.base is None else self.base + offset)

    def decompressed(self, hop: str) -> Origin:
        """The origin of a new buffer produced by decompressing part of this one."""
        return Origin(self.path, (*self.hops, hop), None)

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


class AmdoccError(Exception):
    """Base of every error amdocc raises on bad input or bad usage."""

    def __init__(self, message: str, origin: Origin | None = None, offset: int | None = None):
        super().__init__(message)
        self.message = message
        self.origin = origin
        self.offset = offset

    def __str__(self) -> str:
        if self.origin is None:
            return self.message
        where = self.origin.where(self.offset)
        return f"{self.origin.path}: {where}: {self.message}" if where else f"{self.origin.path}: {self.message}"


class FormatError(AmdoccError):
    """The bytes do not follow the format they claim (truncated, lying offsets, bad encoding)."""


class LimitError(FormatError):
    """Decoding would exceed a safety bound (decompressed size, nesting depth, entry count)."""


class UnknownTargetError(AmdoccError):
    """A processor, device or target id that the tables do not describe."""


class UsageError(AmdoccError):
    """The caller asked for something inconsistent (bad flags, missing inputs)."""
