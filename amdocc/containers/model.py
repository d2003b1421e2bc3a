"""What the container layer hands upward: code-object bytes, skipped entries and failures."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import AmdoccError, Origin

# What may be read: a path (file or directory), "-" for stdin, or the bytes themselves.
Source = str | os.PathLike[str] | bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class Blob:
    """The bytes of one AMDGPU code object and where they came from."""

    data: bytes
    origin: Origin
    entry_id: str | None = None  # bundle entry id or OffloadBinary triple/arch, when wrapped


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry that is not an AMDGPU code object (host entry, bitcode, another vendor's image)."""

    origin: Origin
    reason: str
    entry_id: str | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    """A part of the input that could not be read; the rest of the input is still reported."""

    origin: Origin
    error: AmdoccError


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True, slots=True)
class Limits:
    """Safety bounds for untrusted input. Each can be raised by its environment variable."""

    # Largest payload one compressed bundle may expand to (bytes).
    max_decompressed: int = _env_int("AMDOCC_MAX_DECOMPRESSED", 1 << 30)
    # How many container layers may wrap a code object (bundle in CCOB in section ...).
    max_depth: int = _env_int("AMDOCC_MAX_DEPTH", 8)
    # Entries one bundle or section may declare.
    max_entries: int = _env_int("AMDOCC_MAX_ENTRIES", 1 << 16)
    # Files above this size are mapped instead of read (archive members: spilled to a
    # temporary file, then mapped).
    mmap_threshold: int = _env_int("AMDOCC_MMAP_THRESHOLD", 64 << 20)
    # Bytes one zip archive (a wheel) may expand to, nested archives included.
    max_archive_bytes: int = _env_int("AMDOCC_MAX_ARCHIVE_BYTES", 8 << 30)


DEFAULT_LIMITS = Limits()

# What the scanner yields.
Item = Blob | Skipped | Failed
