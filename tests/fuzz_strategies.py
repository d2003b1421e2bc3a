"""Hypothesis strategies for hostile input: the mutations of tools/fuzz/, driven by Hypothesis.

``mutated_inputs`` draws one of the fuzzer's mutators, a real fixture that has a layer it applies
to, and lets Hypothesis make every random choice the mutator makes (through ``st.randoms()``),
so a failing example shrinks towards fewer and simpler choices. The targeted strategies draw the
hostile values themselves, where Hypothesis' own generators reach further than a list of edge
cases: an ELF header or section-header field and its value, a MessagePack value (any type, any
nesting, non-string and unhashable keys, extension types) spliced into a kernel's metadata, a
bundle, CCOB or OffloadBinary header field.
"""

from __future__ import annotations

import msgpack
from hypothesis import strategies as st

# tools/fuzz (conftest puts tools/ on sys.path)
from fuzz.corpus import fixtures
from fuzz.fields import Inapplicable, put
from fuzz.formats.bundle import bundle_entries
from fuzz.formats.elf import EHDR, SHDR, ElfView, elf_set, note_desc, with_note_desc
from fuzz.formats.metadata import Raw, mp_encode
from fuzz.formats.offload import OFFLOAD_HEADER
from fuzz.inputs import mutate
from fuzz.mutators import MUTATORS
from fuzz.mutators.metadata import KERNEL_KEYS, TOP_KEYS, short

FIXTURES = fixtures()
# The amplifiers and the bomb build MiB-sized inputs: the campaign runs them; here they would
# only slow every example down.
MUTATOR_NAMES = sorted(name for name, m in MUTATORS.items() if not m.final)


def _layers(*kinds):
    return [(fx, layer) for fx in FIXTURES for layer in fx.layers if layer.kind in kinds]


CODE_OBJECT_LAYERS = _layers("co")
ELF_LAYERS = _layers("co", "host-elf")


def _has_note(data: bytes, owner: str = "AMDGPU", note_type: int = 32) -> bool:
    try:
        note_desc(data, owner, note_type)
        return True
    except Inapplicable:
        return False


METADATA_LAYERS = [(fx, layer) for fx, layer in CODE_OBJECT_LAYERS if _has_note(layer.data)]


@st.composite
def mutated_inputs(draw, names=MUTATOR_NAMES):
    """A fuzz.inputs.Case: one mutator, applied one to four times, Hypothesis choosing everything."""
    name = draw(st.sampled_from(names))
    rng = draw(st.randoms(use_true_random=False))
    return mutate(rng, only=name)


def field_values(size: int):
    """Values for a ``size``-byte unsigned field: edge cases first, then anything."""
    top = (1 << (8 * size)) - 1
    edges = sorted(
        {
            v & top
            for v in (
                0,
                1,
                2,
                4,
                7,
                8,
                0x40,
                0x7F,
                0x80,
                0xFF,
                0x100,
                0xFFFF,
                0x10000,
                0x7FFFFFFF,
                0x80000000,
                0xFFFFFFFF,
                1 << 32,
                1 << 63,
                top,
            )
        }
    )
    return st.one_of(st.sampled_from(edges), st.integers(0, top))


@st.composite
def elf_header_edits(draw):
    """(input bytes, description): one ELF header field of a fixture layer set to a drawn value."""
    fx, layer = draw(st.sampled_from(ELF_LAYERS))
    elf = ElfView(layer.data)
    name = draw(st.sampled_from(sorted(EHDR[elf.cls])))
    _offset, size = EHDR[elf.cls][name]
    value = draw(field_values(size))
    data = elf_set(layer.data, 0, EHDR[elf.cls], name, value)
    return layer.wrap(data), f"{fx.name} [{layer.path}] {name}={value:#x}"


@st.composite
def section_header_edits(draw):
    """(input bytes, description): one field of one section header set to a drawn value."""
    fx, layer = draw(st.sampled_from(ELF_LAYERS))
    elf = ElfView(layer.data)
    section = draw(st.sampled_from(elf.sections))
    _size, layout = SHDR[elf.cls]
    name = draw(st.sampled_from(sorted(layout)))
    value = draw(
        st.one_of(
            field_values(layout[name][1]), st.sampled_from([s.f["sh_offset"] for s in elf.sections] + [len(layer.data)])
        )
    )
    data = elf_set(layer.data, section.at, layout, name, value)
    return layer.wrap(data), f"{fx.name} [{layer.path}] section {section.index} {name}={value:#x}"


def _ext():
    return st.one_of(
        st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=8)),
        st.builds(msgpack.Timestamp, st.integers(0, (1 << 34) - 1), st.integers(0, 999_999_999)),
    )


def _keys():
    return st.one_of(
        st.text(max_size=12),
        st.sampled_from(KERNEL_KEYS),
        st.integers(-(1 << 63), (1 << 64) - 1),
        st.none(),
        st.booleans(),
        st.binary(max_size=6),
        st.floats(allow_nan=False),
    )


def msgpack_values():
    """Any value MessagePack can carry, nested, with maps keyed by anything hashable."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(1 << 63), (1 << 64) - 1),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=40),
        st.binary(max_size=16),
        _ext(),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys(), inner, max_size=4)),
        max_leaves=24,
    )


def raw_fragments():
    """Encoded fragments msgpack.packb would never write: deep nesting, lying lengths, bad UTF-8,
    unhashable keys, reserved bytes."""
    deep = st.builds(
        lambda n, kind: Raw((b"\x91" if kind else b"\x81\xa1k") * n + b"\x01"), st.integers(1, 3000), st.booleans()
    )
    fixed = st.sampled_from(
        [
            b"\xdd\xff\xff\xff\xff\x01",
            b"\xdb\xff\xff\xff\xf0abc",
            b"\xa2\xff\xfe",
            b"\xa3\xed\xa0\x80",
            b"\x81\x92\x01\x02\x03",
            b"\x81\x81\x01\x02\x03",
            b"\xc1",
            b"\xd6\xff\xff\xff\xff\xff",
            b"\xd7\xff" + b"\xff" * 8,
            b"\xc7\x00\x07",
        ]
    )
    return st.one_of(deep, fixed.map(Raw))


@st.composite
def metadata_edits(draw):
    """(input bytes, description): a kernel's (or the root's) metadata key set to a drawn value."""
    fx, layer = draw(st.sampled_from(METADATA_LAYERS))
    tree = msgpack.unpackb(note_desc(layer.data, "AMDGPU", 32), raw=False, strict_map_key=False)
    value = draw(st.one_of(msgpack_values(), raw_fragments()))
    kernels = tree.get("amdhsa.kernels") or []
    if kernels and draw(st.booleans()):
        index = draw(st.integers(0, len(kernels) - 1))
        key = draw(st.sampled_from(KERNEL_KEYS))
        kernels[index][key] = value
        where = f"amdhsa.kernels[{index}][{key}]"
    else:
        key = draw(st.sampled_from(TOP_KEYS))
        tree[key] = value
        where = key
    data = with_note_desc(layer.data, "AMDGPU", 32, mp_encode(tree))
    return layer.wrap(data), f"{fx.name} [{layer.path}] {where}={short(value)}"


CONTAINER_FIELDS = {
    "bundle": {"count": (24, 8)},
    "ccob": {
        "version": (4, 2),
        "method": (6, 2),
        "size-1": (8, 4),
        "size-2": (12, 4),
        "size-3": (16, 8),
        "hash": (24, 8),
    },
    "offload": {name: spec for name, spec in OFFLOAD_HEADER.items()},
}


@st.composite
def container_header_edits(draw):
    """(input bytes, description): a field of a bundle, CCOB or OffloadBinary header, or of a bundle
    entry, set to a drawn value."""
    layers = _layers("bundle", "ccob", "offload")
    fx, layer = draw(st.sampled_from(layers))
    data = bytearray(layer.data)
    fields = dict(CONTAINER_FIELDS[layer.kind])
    if layer.kind == "bundle":
        entries, _ = bundle_entries(layer.data)
        for e in entries:
            for name, off in (("offset", 0), ("size", 8), ("id_length", 16)):
                fields[f"entry {e.index} {name}"] = (e.at + off, 8)
    name = draw(st.sampled_from(sorted(fields)))
    offset, size = fields[name]
    if offset + size > len(data):
        return layer.wrap(bytes(data)), f"{fx.name} [{layer.path}] unchanged"
    value = draw(st.one_of(field_values(size), st.integers(0, len(data) + 64)))
    put(data, offset, size, value)
    return layer.wrap(bytes(data)), f"{fx.name} [{layer.path}] {name}={value:#x}"
