"""What the container layer hands upward: code-object bytes, skipped entries and failures."""

from __future__ import annotations

import os
from collections.abc import Mapping
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
    # Found by the raw-image scan of a host binary's data, where no container vouches for it:
    # bytes that do not parse as a whole code object are then passed over (NOT_A_WHOLE_IMAGE).
    found_in_data: bool = False


@dataclass(frozen=True, slots=True)
class Skipped:
    """An entry that is not an AMDGPU code object (host entry, bitcode, another vendor's image)."""

    origin: Origin
    reason: str
    entry_id: str | None = None


# Why an AMDGPU ELF header found in a host binary's data is passed over: its tables do not fit
# its section, or the image it begins does not parse. Such headers are coincidences or images
# their own tools cannot read either (ROCr's HSA code-object v1 blit kernels); one reason for
# all, so a report counts them in one line.
NOT_A_WHOLE_IMAGE = "AMDGPU ELF header(s) in host data that do not begin a whole code object"


@dataclass(frozen=True, slots=True)
class Failed:
    """A part of the input that could not be read; the rest of the input is still reported."""

    origin: Origin
    error: AmdoccError


@dataclass(frozen=True, slots=True)
class NotWalked:
    """An entry of a directory walk that is not read, and why. ``error``: a directory that
    cannot be listed (or a link that cannot be followed), reported as an unreadable file is;
    otherwise passed over on purpose and said so: a directory already walked (a second link to
    it, or a link that loops back), a link to nothing, a file that is not a regular file."""

    path: str
    reason: str
    error: bool

    def item(self) -> Skipped | Failed:
        """This entry as the scanner reports it: a Failed or a Skipped for the path."""
        origin = Origin(self.path)
        return Failed(origin, AmdoccError(self.reason, origin)) if self.error else Skipped(origin, self.reason)


@dataclass(frozen=True, slots=True)
class Limits:
    """Safety bounds for untrusted input. ``Limits()`` holds the built-in defaults;
    :meth:`from_env` reads each bound's environment variable when it is called."""

    # Largest payload one compressed bundle may expand to (bytes).
    max_decompressed: int = 1 << 30
    # How many container layers may wrap a code object (bundle in CCOB in section ...).
    max_depth: int = 8
    # Entries one bundle or section may declare.
    max_entries: int = 1 << 16
    # Files above this size are mapped instead of read (archive members: spilled to a
    # temporary file, then mapped).
    mmap_threshold: int = 64 << 20
    # Bytes one zip archive (a wheel) or gzip-compressed tar may expand to, nested archives included.
    max_archive_bytes: int = 8 << 30
    # Check each compressed bundle's MD5 against its header. Off by default, as in the tools
    # that load these files: clang-offload-bundler and comgr (which HIP unbundles through)
    # compute it only with -verbose, and even then only print whether it matches, so a file
    # they load is read here too. The declared size and every structure inside are checked
    # either way; the MD5 costs about 1.7 s per decompressed GiB.
    verify_hashes: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, each replaced by its variable when that is set (``AMDOCC_MAX_DEPTH`` for
        ``max_depth``, and so on; byte bounds take K/M/G suffixes, ``AMDOCC_VERIFY_HASHES`` 0 or
        1). A value its variable does not take is a UsageError naming the variable (amdocc.env)."""
        # Asked once per file read: when none is set (the usual case) the defaults are shared.
        source = os.environ if environ is None else environ
        if not any(source.get(name) for name in _LIMIT_VARIABLES.values()):
            return DEFAULT_LIMITS
        from .. import env

        given = {field: env.read(name, environ) for field, name in _LIMIT_VARIABLES.items()}
        return cls(**{k: v for k, v in given.items() if v is not None})  # type: ignore[arg-type]


DEFAULT_LIMITS = Limits()  # the built-in bounds, whatever the environment says
_LIMIT_VARIABLES = {field: f"AMDOCC_{field.upper()}" for field in Limits.__slots__}

# What the scanner yields.
Item = Blob | Skipped | Failed
