"""Plain JSON-ready records of parsed code objects (the v1 ``inspect --json`` contract).

Kept apart from the parsers, as pyelftools keeps descriptions apart from structs: the parsers
decide what a file says, this module decides how it is written down.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import msgpack

from .caches import cached
from .codeobject import CodeObject, Kernel
from .codeobject.resources import note_view
from .containers import Failed, Skipped
from .demangle import demangle
from .errors import AmdoccError, Origin
from .printable import printable

# Metadata keys every kernel record carries at top level (null when the note lacks them).
KERNEL_NOTE_KEYS = (
    "vgpr_count",
    "agpr_count",
    "sgpr_count",
    "group_segment_fixed_size",
    "private_segment_fixed_size",
    "kernarg_segment_size",
    "wavefront_size",
    "max_flat_workgroup_size",
    "workgroup_processor_mode",
    "sgpr_spill_count",
    "vgpr_spill_count",
    "uses_dynamic_stack",
)

# A kernel's note under v3 names, and a function of (kernel, note) that gives one record or field.
Note = dict[str, Any]
KernelField = Callable[[Kernel, Note], Any]
RecordBuilder = Callable[[Kernel, Note], dict[str, Any]]


def jsonable(value: Any) -> Any:
    """A ``json.dumps`` default for what MessagePack metadata may hold besides JSON's types.

    Binary values are written as hex. An extension value is a (type, data) tuple, which JSON
    writes as ``[type, "hex"]``; a timestamp (extension -1) is written the same way. Anything
    else is written as its ``repr``: a record must always be written, never crash the dump.
    """
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, msgpack.Timestamp):
        return [-1, value.to_bytes().hex()]
    return repr(value)


def dumps(record: dict[str, Any]) -> str:
    """One record as strict JSON: map keys that are not strings become strings, floats JSON
    cannot hold (NaN, infinities: MessagePack can carry them) become strings, and a byte of a
    name that is not UTF-8 is written as ``\\xNN`` (amdocc.printable)."""
    try:
        # Records are trees built here or decoded from MessagePack: never circular, so the
        # encoder's cycle bookkeeping is skipped (a nesting too deep still raises RecursionError).
        text = json.dumps(record, default=jsonable, allow_nan=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):  # rare, so the record is sanitised only then
        return json.dumps(_sanitised(record), default=jsonable, allow_nan=False)
    return json.dumps(_sanitised(record), default=jsonable, allow_nan=False) if _SURROGATE in text else text


# How an ASCII-only JSON text writes a surrogate: only a string that is not UTF-8 (a path of
# undecodable bytes, amdocc.printable) or a character beyond U+FFFF (rare, and then rewritten
# to the same text) holds one, and the record is then sanitised and written again.
_SURROGATE = "\\ud"


# `inspect --json` and `--json-lines` write compact JSON: no space after "," or ":", ASCII only
# (anything else as \uXXXX escapes). The standard library writes it; orjson, an optional extra,
# writes it too, faster, for the records it renders byte for byte as the standard library does.
COMPACT_SEPARATORS = (",", ":")


def compact_json(record: dict[str, Any], plain: bool = False) -> bytes:
    """One record as compact strict JSON (see :func:`dumps` for what is made strict), ASCII
    bytes, the same whichever encoder writes them. ``plain`` says the record holds no
    floating-point values (orjson writes floats, NaN included, its own way); orjson is then
    tried, and its text kept only when it is ASCII without DEL and nothing in the record needed
    more than bytes written as hex. Anything else is written by the standard library."""
    if plain:
        fast = _orjson_dumps()
        if fast is not None:
            try:
                out = fast(record, default=_bytes_as_hex)
            except TypeError:  # a type, key, integer or nesting orjson leaves to us
                pass
            else:
                if out.isascii() and b"\x7f" not in out:  # the standard library escapes DEL
                    return out
    try:
        text = json.dumps(
            record, default=jsonable, allow_nan=False, check_circular=False, separators=COMPACT_SEPARATORS
        )
    except (TypeError, ValueError, RecursionError):
        text = ""
    if not text or _SURROGATE in text:  # see dumps: the record sanitised, paths made printable
        text = json.dumps(_sanitised(record), default=jsonable, allow_nan=False, separators=COMPACT_SEPARATORS)
    return text.encode("ascii")


def compact_dumps(record: dict[str, Any], plain: bool = False) -> str:
    """:func:`compact_json` as text."""
    return compact_json(record, plain).decode("ascii")


_ORJSON: list[Callable[..., bytes] | None] = []  # [orjson.dumps or None], looked up on first use


def _orjson_dumps() -> Callable[..., bytes] | None:
    if not _ORJSON:
        try:
            import orjson
        except ImportError:
            _ORJSON.append(None)
        else:
            _ORJSON.append(orjson.dumps)
    return _ORJSON[0]


def _bytes_as_hex(value: Any) -> str:
    """orjson's hook: bytes as :func:`jsonable` writes them; anything else goes back to the
    standard library (a TypeError makes :func:`compact_json` fall back)."""
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    raise TypeError(type(value).__name__)


MAX_DEPTH = 64  # real metadata nests five levels; a malformed note may nest a thousand


def _sanitised(value: Any, depth: int = 0) -> Any:
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_DEPTH:
        return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else _key(k): _sanitised(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitised(v, depth + 1) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    return value


def _key(key: Any) -> str:
    try:
        return repr(key)
    except RecursionError:
        return f"<{type(key).__name__}>"


def origin_record(origin: Origin) -> dict[str, Any]:
    """Where a code object sits: ``offset`` its absolute file offset, or null when it came out
    of a decompressor (a deflated wheel member, a compressed bundle); then ``payload_offset``
    is its offset inside the payload the last decompressing hop of ``origin`` names."""
    return {"path": origin.path, "origin": origin.chain, "offset": origin.base, "payload_offset": origin.payload}


def _note(kernel: Kernel) -> Note:
    return kernel.note if kernel.note is not None else note_view(kernel.metadata, kernel.code_object_version)


def _note_field(key: str) -> KernelField:
    dotted = "." + key
    return lambda kernel, note: note.get(dotted)


# Every field of a kernel record, in output order, each built only when asked for.
KERNEL_FIELDS: dict[str, KernelField] = {
    "name": lambda kernel, note: kernel.name,
    "symbol": lambda kernel, note: kernel.symbol,
    "demangled": lambda kernel, note: demangle(kernel.name),
    **{key: _note_field(key) for key in KERNEL_NOTE_KEYS},
    "descriptor": lambda kernel, note: kernel.descriptor.as_dict() if kernel.descriptor is not None else None,
    "resources": lambda kernel, note: kernel.resources.as_dict(),
    "resource_symbols": lambda kernel, note: dict(kernel.resource_symbols),
    "findings": lambda kernel, note: [f.as_dict() for f in kernel.findings],
    "metadata": lambda kernel, note: kernel.metadata,
    # False for a relocatable's kernel (local counts, not launchable as built); see codeobject/linking.py
    "launchable": lambda kernel, note: kernel.launchable,
    "object_linking": lambda kernel, note: kernel.object_linking,
}
ALL_FIELDS = tuple(KERNEL_FIELDS)
# What one JSON line per kernel carries unless --fields says otherwise: the note's numbers.
COMPACT_FIELDS = ("name", *KERNEL_NOTE_KEYS, "findings")


def kernel_record(kernel: Kernel, fields: Iterable[str] | None = None) -> dict[str, Any]:
    """A kernel as JSON-ready values; ``fields`` (names of KERNEL_FIELDS) keeps only those."""
    return _record_builder(ALL_FIELDS if fields is None else tuple(fields))(kernel, _note(kernel))


# One generated builder per choice of fields; a process that asks for many choices keeps the
# last 64.
@cached(maxsize=64)
def _record_builder(fields: tuple[str, ...]) -> RecordBuilder:
    """A function (kernel, note) -> the record of ``fields``, generated once per choice of fields
    from KERNEL_FIELDS: a note key becomes ``note.get(".key")`` in one dict display, any other
    field a call of its KERNEL_FIELDS entry. Unknown names raise KeyError, as a lookup would."""
    items = []
    for name in fields:
        if name not in KERNEL_FIELDS:
            raise KeyError(name)
        value = (
            f"note.get({'.' + name!r})"
            if name in KERNEL_NOTE_KEYS
            else "kernel.name"
            if name == "name"
            else f"FIELDS[{name!r}](kernel, note)"
        )
        items.append(f"{name!r}: {value}")
    namespace: dict[str, Any] = {"FIELDS": KERNEL_FIELDS}
    source = f"def build(kernel, note):\n    return {{{', '.join(items)}}}\n"
    exec(compile(source, "<kernel record>", "exec"), namespace)  # generated from KERNEL_FIELDS
    build: RecordBuilder = namespace["build"]
    return build


def json_lines(co: CodeObject, fields: Iterable[str] = COMPACT_FIELDS) -> bytes:
    """One compact strict-JSON line per kernel (ASCII, each ending in a newline): where it came
    from, its target, and ``fields``."""
    where = {**origin_record(co.origin), "target": str(co.target_id), "processor": co.processor}
    # The location is written once and each kernel's fields joined to it: the same text as
    # writing the two maps merged, since their keys differ.
    head = compact_json(where)[:-1]
    joined, alone = head + b",", head + b"}\n"
    fields = tuple(fields)
    build = _record_builder(fields)
    # Only the note's values can be floats. When the note as a whole cannot say it has none (a
    # large note holds the marker bytes somewhere by chance), a record of note numbers alone is
    # still plain when each of them is a plain scalar.
    whole = co.metadata_plain or ("metadata" in fields and metadata_plain(co))
    note_keys = [f for f in fields if f in KERNEL_NOTE_KEYS] if not whole and "metadata" not in fields else None
    out: list[bytes] = []
    for k in co.kernels:
        record = build(k, _note(k))
        plain = whole or (
            note_keys is not None and _PLAIN_SCALARS.issuperset(map(type, map(record.__getitem__, note_keys)))
        )
        body = compact_json(record, plain)
        out += (joined, body[1:], b"\n") if body != b"{}" else (alone,)
    return b"".join(out)


_PLAIN_SCALARS = frozenset({int, bool, str, type(None)})


def metadata_plain(co: CodeObject) -> bool:
    """Whether the code object's metadata holds no floating-point value: as the reader found
    it (no float marker in the note), or, when the note could not vouch for itself, by a walk
    of the decoded maps and lists (far cheaper than writing them with the standard library)."""
    if co.metadata_plain:
        return True
    if co.code_object_version == 2:
        return False  # YAML metadata: left to the standard library
    stack: list[Any] = [co.metadata]
    seen = 0
    while stack:
        value = stack.pop()
        seen += 1
        if seen > _MOST_WALKED:
            return False
        if value.__class__ is dict:
            stack.extend(value.values())
        elif value.__class__ is list:
            stack.extend(value)
        elif value.__class__ not in _PLAIN_SCALARS:
            return False  # a float, bytes, an extension value: the standard library
    return True


_MOST_WALKED = 1 << 24  # a bound on the walk, far above any real note


def code_object_record(co: CodeObject, fields: Iterable[str] | None = None) -> dict[str, Any]:
    top = {k: v for k, v in (co.metadata or {}).items() if k not in ("amdhsa.kernels", "Kernels")}
    return {
        **origin_record(co.origin),
        "target": str(co.target_id),
        "processor": co.processor,
        "code_object_version": co.code_object_version,
        "generic_version": co.generic_version or None,
        "elf_type": co.elf_type,
        "e_flags": co.e_flags,
        "size": co.size,
        "metadata_version": list(co.metadata_version) if co.metadata_version else None,
        "metadata": top,
        "launchable": co.launchable,
        "object_linking": _linking_record(co),
        "findings": [f.as_dict() for f in co.findings],
        "kernels": [kernel_record(k, fields) for k in co.kernels],
    }


def _linking_record(co: CodeObject) -> dict[str, Any] | None:
    """The ``.amdgpu.info`` section as a whole: every function it describes, with its local record."""
    info = co.linking
    if info is None:
        return None
    return {
        "offset": info.offset,
        "functions": {name: fn.as_dict() for name, fn in info.functions.items()},
        "lds": {name: {"size": size, "align": align} for name, (size, align) in info.lds.items()},
        "unknown_kinds": {str(kind): count for kind, count in sorted(info.unknown_kinds.items())},
    }


def skipped_record(item: Skipped) -> dict[str, Any]:
    return {**origin_record(item.origin), "entry_id": item.entry_id, "reason": item.reason}


def failed_record(item: Failed) -> dict[str, Any]:
    return error_record(item.error, item.origin)


def error_record(error: AmdoccError, where: Origin | str) -> dict[str, Any]:
    """An error as JSON, located exactly where its message says: ``offset`` is the absolute file
    offset the message names (null when it names none), ``payload_offset`` the offset inside a
    decompressed payload, which sits at no file offset."""
    fallback = where if isinstance(where, Origin) else Origin(where)
    origin = error.origin or fallback
    offset = payload_offset = None
    if error.origin is not None and error.offset is not None:
        if origin.base is not None:
            offset = origin.base + error.offset
        else:
            payload_offset = error.offset
    message = str(error) if error.origin is not None else f"{fallback}: {error}"
    return {
        "path": origin.path,
        "origin": origin.chain,
        "offset": offset,
        "payload_offset": payload_offset,
        "error": message,
    }
