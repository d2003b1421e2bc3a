"""Clang offload bundles: ``__CLANG_OFFLOAD_BUNDLE__`` and the compressed ``CCOB`` form.

Uncompressed layout (all u64 LE; docs/code-object-format.md §4.1): magic, entry count, then per entry
offset (from the bundle start), size, id length and id; the payloads follow at their offsets.
Compressed layout (docs/code-object-format.md §4.2): "CCOB", u16 version, u16 method (0 zlib,
1 zstd), then sizes whose widths depend on the version, then the low 64 bits of the MD5 of the uncompressed bundle.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NamedTuple

from ..binary import Buffer, Layout, first_overlap, out_of_range
from ..errors import FormatError, LimitError, Origin
from ..targets import find_triple
from .magic import BUNDLE_MAGIC as BUNDLE_MAGIC
from .magic import CCOB_MAGIC as CCOB_MAGIC
from .model import Limits

BUNDLE_HEADER = Layout("BundleHeader", [("magic", "24s"), ("count", "Q")])
ENTRY_HEADER = Layout("BundleEntry", [("offset", "Q"), ("size", "Q"), ("id_length", "Q")])
_COUNT = struct.Struct("<Q")  # the header's entry count, after the magic

CCOB_PREFIX = Layout("CcobPrefix", [("magic", "4s"), ("version", "H"), ("method", "H")])
CCOB_HEADERS = {
    1: Layout(
        "CcobV1", [("magic", "4s"), ("version", "H"), ("method", "H"), ("uncompressed_size", "I"), ("hash", "Q")]
    ),
    2: Layout(
        "CcobV2",
        [
            ("magic", "4s"),
            ("version", "H"),
            ("method", "H"),
            ("total_size", "I"),
            ("uncompressed_size", "I"),
            ("hash", "Q"),
        ],
    ),
    3: Layout(
        "CcobV3",
        [
            ("magic", "4s"),
            ("version", "H"),
            ("method", "H"),
            ("total_size", "Q"),
            ("uncompressed_size", "Q"),
            ("hash", "Q"),
        ],
    ),
}
METHODS = {0: "zlib", 1: "zstd"}
_CHUNK = 1 << 20


class BundleEntry(NamedTuple):
    """One entry of a bundle's table (a NamedTuple: a region can hold tens of thousands)."""

    entry_id: str
    offset: int  # from the start of the bundle
    size: int

    @property
    def kind(self) -> str:
        """The offload kind: 'host', 'hip', 'hipv4', 'openmp', ..."""
        return offload_kind(self.entry_id)

    @property
    def is_amdgpu(self) -> bool:
        """True for an AMDGPU HSA entry: 'hipv4-amdgcn-amd-amdhsa--gfx942', or LLVM main's subarch
        spelling 'hipv4-amdgpu9.42-amd-amdhsa--gfx942' (llvm PR #206482; ROCm/llvm-project #214841)."""
        return is_amdgpu_triple(self.entry_id)


def offload_kind(entry_id: str) -> str:
    """A bundle entry id's offload kind, the part before its first '-' (a function, so a reader
    going through thousands of entries asks it without building a BundleEntry property call)."""
    return entry_id.partition("-")[0]


def is_amdgpu_triple(text: str) -> bool:
    """Whether a bundle id or an OffloadBinary ``triple`` string names the AMDGPU HSA target."""
    return find_triple(text) is not None


def parse_bundle(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits) -> tuple[list[BundleEntry], int]:
    """The entries of the bundle at ``start`` and the offset just past its last payload."""
    # Bounds are checked inline (not through Layout.read): a region can hold tens of thousands of
    # bundles, and this is the per-bundle cost.
    available = len(buf)
    if start < 0 or start + BUNDLE_HEADER.size > available:
        raise out_of_range(buf, start, BUNDLE_HEADER.size, origin, "offload bundle header")
    count = _COUNT.unpack_from(buf, start + len(BUNDLE_MAGIC))[0]
    if count > limits.max_entries:
        raise LimitError(f"offload bundle declares {count} entries (limit {limits.max_entries})", origin, start + 24)
    pos = start + BUNDLE_HEADER.size
    entries: list[BundleEntry] = []
    headers: list[int] = []
    extent = pos
    unpack, entry_size = ENTRY_HEADER.struct.unpack_from, ENTRY_HEADER.size
    for index in range(count):
        # Bounds checked here, so an entry's description is formatted only if it is cut short.
        if pos + entry_size > available:
            raise out_of_range(buf, pos, entry_size, origin, f"offload bundle entry {index}")
        offset, size, id_length = unpack(buf, pos)
        headers.append(pos)
        pos += entry_size
        if id_length > 4096:
            raise FormatError(f"bundle entry {index} id length {id_length} is implausible", origin, pos - 8)
        after = pos + id_length
        if after > available:
            raise out_of_range(buf, pos, id_length, origin, f"bundle entry {index} id")
        entry_id = str(buf[pos:after], "utf-8", "replace")
        pos = after
        if size:
            if offset < BUNDLE_HEADER.size or start + offset + size > end:
                raise FormatError(
                    f"bundle entry {entry_id!r} claims {size} bytes at bundle offset "
                    f"{offset:#x}, past the end of its data ({end - start:#x} bytes)",
                    origin,
                    pos - id_length - entry_size,
                )
            # An empty entry's offset is never checked (it owns no bytes), so only an entry with
            # bytes can carry the extent past its header: a lying empty one would carry it past
            # the data (and a piece past its section).
            if start + offset + size > extent:
                extent = start + offset + size
        entries.append(BundleEntry(entry_id, offset, size))
    extent = max(extent, pos)
    if len(entries) < 2:
        return entries, extent
    # Entries own their bytes: the bundler never shares them, and a table of thousands of entries
    # over one payload would have that payload parsed thousands of times.
    spans = [(e.offset, e.offset + e.size) for e in entries]
    clash = first_overlap(spans)
    if clash is not None:
        first, second = clash
        raise FormatError(
            f"bundle entries {entries[first].entry_id!r} and {entries[second].entry_id!r} "
            f"overlap: the second starts at bundle offset {spans[second][0]:#x}, before the "
            f"first ends at {spans[first][1]:#x}",
            origin,
            headers[second],
        )
    return entries, extent


@dataclass(frozen=True, slots=True)
class Ccob:
    version: int
    method: str
    payload: bytes  # the decompressed bundle
    extent: int  # offset just past the compressed data

    @property
    def label(self) -> str:
        return f"CCOB v{self.version} {self.method}"


def ccob_extent(buf: Buffer, start: int, end: int, origin: Origin) -> tuple[int | None, int]:
    """Where the compressed bundle at ``start`` ends, from its header alone (None for v1, which
    has no total size, or a header that does not say), and the size it expands to."""
    prefix = CCOB_PREFIX.read(buf, start, origin, "compressed bundle header")
    layout = CCOB_HEADERS.get(prefix.version)
    if layout is None:
        return None, 0
    h = layout.read(buf, start, origin, f"CCOB v{prefix.version} header")
    total = getattr(h, "total_size", 0)
    extent = start + total if layout.size <= total and start + total <= end else None
    return extent, h.uncompressed_size


def decompress_ccob(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits) -> Ccob:
    prefix = CCOB_PREFIX.read(buf, start, origin, "compressed bundle header")
    layout = CCOB_HEADERS.get(prefix.version)
    if layout is None:
        raise FormatError(f"compressed bundle version {prefix.version} is not 1, 2 or 3", origin, start + 4)
    if prefix.method not in METHODS:
        raise FormatError(
            f"compressed bundle method {prefix.method} is neither zlib (0) nor zstd (1)", origin, start + 6
        )
    h = layout.read(buf, start, origin, f"CCOB v{prefix.version} header")
    if h.uncompressed_size > limits.max_decompressed:
        raise LimitError(
            f"compressed bundle declares {h.uncompressed_size} uncompressed bytes, over the "
            f"limit of {limits.max_decompressed} (AMDOCC_MAX_DECOMPRESSED)",
            origin,
            start,
        )
    data_start = start + layout.size
    if prefix.version >= 2:
        if h.total_size < layout.size or start + h.total_size > end:
            raise FormatError(
                f"compressed bundle total size {h.total_size} runs past the end of its data ({end - start} bytes left)",
                origin,
                start + 8,
            )
        data_end = start + h.total_size
    else:
        data_end = end  # v1 has no total size: the stream ends where the decompressor says
    payload, consumed = _decompress(
        buf, data_start, data_end, METHODS[prefix.method], h.uncompressed_size, origin, start, whole=prefix.version >= 2
    )
    if len(payload) != h.uncompressed_size:
        raise FormatError(
            f"compressed bundle expands to {len(payload)} bytes, not the declared {h.uncompressed_size}", origin, start
        )
    digest = _md5_word(payload) if limits.verify_hashes else h.hash
    if digest != h.hash:
        raise FormatError(
            f"compressed bundle hash mismatch: header {h.hash:#018x}, MD5 of the payload gives {digest:#018x}",
            origin,
            start + layout.size - 8,
        )
    extent = data_end if prefix.version >= 2 else data_start + consumed
    return Ccob(prefix.version, METHODS[prefix.method], payload, extent)


def decompress_bounded(
    buf: Buffer, start: int, end: int, method: str, declared: int, origin: Origin, header_at: int, exact: bool = True
) -> bytes:
    """``buf[start:end]`` decompressed to at most ``declared`` bytes (exactly that many when
    ``exact``); for payloads that carry their size beside them (kpack frames)."""
    payload, _ = _decompress(buf, start, end, method, declared, origin, header_at, whole=exact)
    if exact and len(payload) != declared:
        raise FormatError(
            f"{method} data expands to {len(payload)} bytes, not the declared {declared}", origin, header_at
        )
    return payload


def _zstd_whole(zstandard: ModuleType, data: bytes, declared: int) -> bytes | None:
    """One zstd frame that says it expands to exactly ``declared`` bytes, in one C call (the
    streaming loop below costs seconds on a 100 MB bundle); None to take the bounded loop."""
    try:
        if zstandard.frame_content_size(data) != declared:
            return None  # unknown or different: only the bounded loop may be trusted
        out: bytes = zstandard.ZstdDecompressor().decompress(data, max_output_size=declared, allow_extra_data=False)
    except zstandard.ZstdError:
        return None  # the loop reports what is wrong, with its usual message
    return out if len(out) == declared else None


# zstd's streaming decompressor has no output bound, so input is fed in pieces small enough that
# one piece can overshoot the declared size by a bounded amount (a 4-byte RLE block expands to at
# most 128 KiB, so 1 KiB of input yields at most 32 MiB).
_ZSTD_PIECE = 1024


def _decompress(
    buf: Buffer, start: int, end: int, method: str, declared: int, origin: Origin, header_at: int, whole: bool = False
) -> tuple[bytes, int]:
    """Decompress at most ``declared`` bytes; more than that is an error, never an allocation.
    ``whole``: the input is exactly one compressed stream (its size was declared)."""
    import zstandard  # only compressed bundles need it; keeps `import amdocc` light

    if whole and method == "zstd":
        fast = _zstd_whole(zstandard, bytes(buf[start:end]), declared)
        if fast is not None:
            return fast, end - start
    out = bytearray()
    # zlib's or zstandard's streaming decompressor: both have eof, unused_data and decompress;
    # only zlib's has unconsumed_tail and takes an output bound.
    d: Any
    feed: Callable[[bytes], bytes]
    if method == "zlib":
        d = inflate = zlib.decompressobj()

        def feed(piece: bytes) -> bytes:
            return inflate.decompress(piece, declared + 1 - len(out))
    else:
        d = zstandard.ZstdDecompressor().decompressobj()
        feed = d.decompress
    pos = start
    try:
        while pos < end and not d.eof and len(out) <= declared:
            chunk = bytes(buf[pos : min(end, pos + _CHUNK)])
            pos += len(chunk)
            step = _ZSTD_PIECE if method == "zstd" else len(chunk)
            for at in range(0, len(chunk), step):
                out += feed(chunk[at : at + step])
                while method == "zlib" and d.unconsumed_tail and len(out) <= declared:
                    out += d.decompress(d.unconsumed_tail, declared + 1 - len(out))
                if d.eof or len(out) > declared:
                    pos -= len(chunk) - min(len(chunk), at + step)
                    break
    except (zlib.error, zstandard.ZstdError) as exc:
        raise FormatError(f"corrupt {method} data in compressed bundle: {exc}", origin, header_at) from None
    if len(out) > declared:
        raise LimitError(f"compressed bundle expands beyond its declared {declared} bytes", origin, header_at)
    if not d.eof:
        raise FormatError(f"{method} stream of compressed bundle is truncated", origin, header_at)
    # What follows the stream is in unused_data; zlib's unconsumed tail was drained above (or the
    # output passed the declared size and was refused), so it is empty here.
    return bytes(out), pos - start - len(d.unused_data)


def _md5_word(payload: bytes) -> int:
    """The first eight bytes of the payload's MD5, as the header stores its hash. hashlib loads
    OpenSSL (~10 M instructions), so it is imported only when a hash is checked: rarely."""
    import hashlib

    return int.from_bytes(hashlib.md5(payload).digest()[:8], "little")
