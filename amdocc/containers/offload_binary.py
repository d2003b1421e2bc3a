"""LLVM OffloadBinary (the new offload driver's ``.llvm.offloading`` payload), version 1.

Layout (docs/code-object-format.md §4.3, all LE, 8-byte aligned): a 32-byte header (magic 10 FF 10 AD,
version, total size, entry offset, entry size), one 40-byte entry (image kind, offload kind,
flags, string map offset and count, image offset and size), and a string map of key/value
offsets to NUL-terminated strings such as ``triple`` and ``arch``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..binary import Buffer, Layout, StringBudget, cstring
from ..errors import FormatError, LimitError, Origin
from .magic import OFFLOAD_MAGIC as OFFLOAD_MAGIC
from .model import Limits

HEADER = Layout(
    "OffloadHeader", [("magic", "4s"), ("version", "I"), ("size", "Q"), ("entry_offset", "Q"), ("entry_size", "Q")]
)
ENTRY = Layout(
    "OffloadEntry",
    [
        ("image_kind", "H"),
        ("offload_kind", "H"),
        ("flags", "I"),
        ("string_offset", "Q"),
        ("num_strings", "Q"),
        ("image_offset", "Q"),
        ("image_size", "Q"),
    ],
)
STRING = Layout("OffloadString", [("key", "Q"), ("value", "Q")])
IMAGE_KINDS = {0: "none", 1: "object", 2: "bitcode", 3: "cubin", 4: "fatbinary", 5: "ptx", 6: "spirv"}
OFFLOAD_KINDS = {0: "none", 1: "openmp", 2: "cuda", 4: "hip", 8: "sycl"}


@dataclass(frozen=True, slots=True)
class OffloadImage:
    image_kind: str
    offload_kind: str
    strings: dict[str, str]
    start: int  # absolute offset of the image in the buffer
    size: int
    extent: int  # offset just past this OffloadBinary (8-aligned)

    @property
    def label(self) -> str:
        return f"{self.offload_kind}-{self.strings.get('triple', '?')}-{self.strings.get('arch', '?')}"


def parse_offload_binary(buf: Buffer, start: int, end: int, origin: Origin, limits: Limits) -> OffloadImage:
    h = HEADER.read(buf, start, origin, "OffloadBinary header")
    if h.version != 1:
        raise FormatError(f"OffloadBinary version {h.version} is not supported (only 1 is known)", origin, start + 4)
    if h.size < HEADER.size or start + h.size > end:
        raise FormatError(
            f"OffloadBinary size {h.size} runs past the end of its data ({end - start} bytes left)", origin, start + 8
        )
    blob_end = start + h.size
    if h.entry_size < ENTRY.size or h.entry_offset + ENTRY.size > h.size:
        raise FormatError("OffloadBinary entry lies outside the binary", origin, start + 16)
    e = ENTRY.read(buf, start + h.entry_offset, origin, "OffloadBinary entry")
    if e.num_strings > limits.max_entries:
        raise LimitError(f"OffloadBinary declares {e.num_strings} strings", origin, start + h.entry_offset)
    if e.string_offset + e.num_strings * STRING.size > h.size:
        raise FormatError("OffloadBinary string map lies outside the binary", origin, start + h.entry_offset)
    if e.image_offset + e.image_size > h.size:
        raise FormatError(
            f"OffloadBinary image ({e.image_size} bytes at {e.image_offset:#x}) lies outside the binary",
            origin,
            start + h.entry_offset,
        )
    budget = StringBudget(h.size, "the OffloadBinary string map")

    def string(offset: int, what: str, ref_at: int) -> str:
        # Offsets count from the binary's start: the whole binary is the string table.
        return cstring(
            buf,
            offset,
            origin,
            f"OffloadBinary string {what}",
            ref_at,
            budget,
            start=start,
            end=blob_end,
            errors="replace",
        )

    strings = {}
    table_at = start + e.string_offset
    for i, s in enumerate(STRING.read_many(buf, table_at, e.num_strings, origin, "OffloadBinary strings")):
        at = table_at + i * STRING.size
        strings[string(s.key, f"{i} key", at)] = string(s.value, f"{i} value", at + 8)
    extent = start + -(-h.size // 8) * 8
    return OffloadImage(
        IMAGE_KINDS.get(e.image_kind, f"kind-{e.image_kind}"),
        "+".join(v for k, v in OFFLOAD_KINDS.items() if k and e.offload_kind & k) or "none",
        strings,
        start + e.image_offset,
        e.image_size,
        min(extent, end),
    )
