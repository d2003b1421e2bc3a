"""One MessagePack value read from untrusted bytes: whatever msgpack raises on malformed input
becomes a :class:`FormatError` naming the file and offset.

Shared by the readers of MessagePack a code object or its container carries (the AMDGPU metadata
note, kpack's reference section and table of contents).
"""

from __future__ import annotations

from typing import Any

import msgpack

from .errors import FormatError, Origin

# What msgpack raises on bytes that are not MessagePack (a truncated value, an invalid UTF-8
# string, a map key of the wrong type, an integer out of range, nesting deeper than the stack).
MSGPACK_ERRORS = (
    ValueError,
    TypeError,
    UnicodeDecodeError,
    OverflowError,
    msgpack.exceptions.UnpackException,
    RecursionError,
)


def unpack(data: bytes, origin: Origin, offset: int, what: str, *, strict_map_key: bool = True) -> tuple[Any, int]:
    """The value ``data`` starts with and how many bytes follow it (left to the caller to report
    or ignore).

    Raises:
        FormatError: "malformed MessagePack in the {what}", at ``offset`` of ``origin``.
    """
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=strict_map_key), 0
    except msgpack.exceptions.ExtraData as extra:
        return extra.unpacked, len(extra.extra)
    except MSGPACK_ERRORS as exc:
        raise FormatError(f"malformed MessagePack in the {what}: {exc}", origin, offset) from None
