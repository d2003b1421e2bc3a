"""Decoding of the AMDGPU and AMD notes (docs/code-object-format.md §2).

CO v3+ keep all metadata in one ``NT_AMDGPU_METADATA`` note (owner "AMDGPU", type 32) holding a
MessagePack map. CO v2 spread it over several "AMD" notes: the code-object version, the ISA
(the only place a v2 object names its processor) and YAML metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

from ..binary import Layout
from ..caches import Memo
from ..elf import Note
from ..errors import FormatError, Origin
from ..msgpack_value import MSGPACK_ERRORS, unpack
from . import yaml_subset

NT_AMDGPU_METADATA = 32
NT_AMD_HSA_ISA_VERSION = 3
NT_AMD_HSA_METADATA = 10
NT_AMD_HSA_ISA_NAME = 11

V2_ISA = Layout(
    "IsaVersion", [("vendor_size", "H"), ("arch_size", "H"), ("major", "I"), ("minor", "I"), ("stepping", "I")]
)

# Real metadata nests five levels (map, kernel list, kernel map, argument list, argument map);
# MessagePack allows a thousand. Walking every note to bound that would cost more than decoding
# it, so the consumers that recurse (JSON, repr in findings) bound their own depth instead.


def decode_msgpack_metadata(note: Note, origin: Origin) -> tuple[dict[Any, Any], list[str]]:
    """The metadata map of an NT_AMDGPU_METADATA note, and any problems met while decoding it."""
    walked = _walk_metadata(note.desc)
    if walked is None:  # not the usual shape, or malformed: decoded whole, errors and all
        walked = unpack(note.desc, origin, note.desc_offset, "AMDGPU metadata note", strict_map_key=False)
    value, extra = walked
    problems = [f"{extra} bytes after the metadata map were ignored"] if extra else []
    if not isinstance(value, dict):
        raise FormatError(f"AMDGPU metadata note holds a {type(value).__name__}, not a map", origin, note.desc_offset)
    return value, problems


# A kernel's argument list is most of its metadata (94% of the bytes over amd-aiter's 2,501
# kernels) and libraries repeat a few signatures (33 distinct lists there): each list is decoded
# once per run by its bytes, and every code object gets its own copy of the decoded maps.
_ARGS: Memo[bytes, list[dict[Any, Any]]] = Memo("amdocc.codeobject.notes._ARGS", 256)
_ARGS_BYTES = 1 << 16  # a longer list is decoded where it stands, not remembered
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _walk_metadata(data: bytes) -> tuple[dict[Any, Any], int] | None:
    """What ``msgpack.unpackb`` gives for a metadata map with ``amdhsa.kernels`` (and how many
    bytes follow it), each kernel's ``.args`` taken from :data:`_ARGS`; None for anything else
    (not a map at the top, a kernel that is not a map, malformed bytes), left to the whole decode."""
    try:
        reader = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=max(len(data), 1))
        reader.feed(data)

        def arguments() -> Any:
            start = reader.tell()
            reader.skip()
            return _arguments(data[start : reader.tell()])

        def kernels() -> list[dict[Any, Any]]:
            return [_map(reader, ".args", arguments) for _ in range(reader.read_array_header())]

        return _map(reader, "amdhsa.kernels", kernels), len(data) - reader.tell()
    except MSGPACK_ERRORS:
        return None


def _map(reader: msgpack.Unpacker, key: str, read: Callable[[], Any]) -> dict[Any, Any]:
    """The map ``reader`` is at, ``key``'s value read by ``read`` and every other by msgpack."""
    out: dict[Any, Any] = {}
    for _ in range(reader.read_map_header()):
        name = reader.unpack()
        out[name] = read() if name == key else reader.unpack()
    return out


def _arguments(encoded: bytes) -> Any:
    """One ``.args`` value decoded, a fresh list of fresh maps however often it is met (a list
    of maps of plain values is remembered; anything else is decoded each time)."""
    known = _ARGS.get(encoded)
    if known is None:
        value = msgpack.unpackb(encoded, raw=False, strict_map_key=False)
        plain = (
            len(encoded) <= _ARGS_BYTES
            and type(value) is list
            and all(type(a) is dict and _SCALARS.issuperset(map(type, a.values())) for a in value)
        )
        if not plain:
            return value
        _ARGS.put(encoded, value)
        known = value
    return list(map(dict, known))


# MessagePack's float 32 and float 64 markers: a value of either kind starts with one of them.
FLOAT_MARKERS = (b"\xca", b"\xcb")


def without_floats(note: Note) -> bool:
    """Whether the note's MessagePack certainly holds no floating-point value: neither marker
    byte occurs anywhere in it (an occurrence inside a string or integer only costs certainty)."""
    return not any(marker in note.desc for marker in FLOAT_MARKERS)


def decode_v2_isa(note: Note, origin: Origin) -> tuple[tuple[int, int, int], str, str]:
    """(major, minor, stepping), vendor and architecture names of an NT_AMD_HSA_ISA_VERSION note."""
    where = origin.at(note.desc_offset).within("NT_AMD_HSA_ISA_VERSION note")
    isa = V2_ISA.read(note.desc, 0, where)
    names = note.desc[V2_ISA.size :]
    if isa.vendor_size + isa.arch_size > len(names):
        raise FormatError("ISA note names run past the note", where, V2_ISA.size)
    vendor = names[: isa.vendor_size].rstrip(b"\0").decode("latin-1")
    arch = names[isa.vendor_size : isa.vendor_size + isa.arch_size].rstrip(b"\0").decode("latin-1")
    return (isa.major, isa.minor, isa.stepping), vendor, arch


def decode_v2_metadata(note: Note, origin: Origin) -> dict[str, Any]:
    """The YAML metadata of a v2 code object, as a map (only the YAML subset LLVM emitted)."""
    where = origin.at(note.desc_offset).within("NT_AMD_HSA_METADATA note")
    try:
        text = note.desc.rstrip(b"\0").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"v2 metadata is not UTF-8 text: {exc}", where, exc.start) from None
    try:
        value = yaml_subset.loads(text)
    except yaml_subset.YamlSubsetError as exc:
        raise FormatError(f"v2 metadata YAML: {exc}", where, _line_offset(text, exc.line)) from None
    if not isinstance(value, dict):
        raise FormatError("v2 metadata is not a YAML map", where, 0)
    return value


def _line_offset(text: str, line: int | None) -> int:
    """Byte offset of the start of 1-based ``line`` in the UTF-8 ``text`` (0 when unknown)."""
    if not line:
        return 0
    lines = text.splitlines(keepends=True)
    return sum(len(part.encode("utf-8", "surrogateescape")) for part in lines[: line - 1])
