"""Compressed offload bundles (CCOB v1-v3, zlib or zstd): parse, compress, rebuild with MD5.

Rebuilding recompresses the payload and recomputes the hash, so a mutation deep inside a
compressed bundle still reaches the parser behind the hash check.
"""

from __future__ import annotations

import hashlib
import struct
import zlib

import zstandard

from ..fields import Inapplicable, get

CCOB_MAGIC = b"CCOB"


CCOB_HEADER = {1: ("<4sHHIQ", 20), 2: ("<4sHHIIQ", 24), 3: ("<4sHHQQQ", 32)}
CCOB_FIELDS = {  # field -> (offset, size) per version
    1: {"version": (4, 2), "method": (6, 2), "uncompressed_size": (8, 4), "hash": (12, 8)},
    2: {"version": (4, 2), "method": (6, 2), "total_size": (8, 4), "uncompressed_size": (12, 4), "hash": (16, 8)},
    3: {"version": (4, 2), "method": (6, 2), "total_size": (8, 8), "uncompressed_size": (16, 8), "hash": (24, 8)},
}


def compress(method: int, payload: bytes) -> bytes:
    return zlib.compress(payload, 6) if method == 0 else zstandard.ZstdCompressor(level=3).compress(payload)


def md5_low64(payload: bytes) -> int:
    return int.from_bytes(hashlib.md5(payload).digest()[:8], "little")


def build_ccob(
    version: int,
    method: int,
    payload: bytes,
    *,
    declared: int | None = None,
    digest: int | None = None,
    total_delta: int = 0,
    stream: bytes | None = None,
) -> bytes:
    body = compress(method, payload) if stream is None else stream
    declared = len(payload) if declared is None else declared
    digest = md5_low64(payload) if digest is None else digest
    fmt, size = CCOB_HEADER[version]
    mask = (1 << 32) - 1 if version < 3 else (1 << 64) - 1
    if version == 1:
        head = struct.pack(fmt, CCOB_MAGIC, 1, method, declared & mask, digest)
    else:
        head = struct.pack(
            fmt, CCOB_MAGIC, version, method, (size + len(body) + total_delta) & mask, declared & mask, digest
        )
    return head + body


def ccob_parse(data: bytes, start: int = 0) -> tuple[int, int, bytes, int]:
    """(version, method, payload, extent) of a well-formed CCOB at ``start``."""
    version, method = get(data, start + 4, 2), get(data, start + 6, 2)
    if version not in CCOB_HEADER or method not in (0, 1):
        raise Inapplicable("unknown CCOB version or method")
    fmt, size = CCOB_HEADER[version]
    fields = struct.unpack_from(fmt, data, start)
    if version == 1:
        stream_end = len(data)
    else:
        stream_end = start + fields[3]
        if stream_end > len(data) or fields[3] < size:
            raise Inapplicable("CCOB total size lies")
    stream = data[start + size : stream_end]
    try:
        if method == 0:
            d = zlib.decompressobj()
            payload = d.decompress(stream, 256 << 20)
            unused = len(d.unused_data) + len(d.unconsumed_tail)
        else:
            d = zstandard.ZstdDecompressor().decompressobj()
            payload = d.decompress(stream)
            unused = len(d.unused_data)
    except (zlib.error, zstandard.ZstdError) as exc:
        raise Inapplicable(f"corrupt stream: {exc}") from None
    extent = stream_end if version > 1 else start + size + len(stream) - unused
    return version, method, payload, extent
