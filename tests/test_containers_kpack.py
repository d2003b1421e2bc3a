"""rocm-kpack archives and the references that point into them, built by the test from
rocm-kpack's layout (a ``KPAK`` header, the blobs, a MessagePack table of contents), so the
expected offsets and labels are facts of what the test wrote.
"""

from __future__ import annotations

import struct

import msgpack
import pytest

from amdocc.containers.kpack import kpack_entries, parse_ref
from amdocc.containers.model import Limits
from amdocc.errors import FormatError, Origin
from test_containers_bundle import AT, CODE_OBJECT, LEAD, ORIGIN


def test_a_kpack_table_without_a_compression_scheme_stores_its_blobs_uncompressed():
    # rocm-kpack's reader (python/rocm_kpack/compression.py) takes a missing
    # "compression_scheme" as "none".
    toc = {
        "blobs": [{"offset": 64, "size": len(CODE_OBJECT)}],
        "toc": {"lib.so": {"gfx942": {"type": "hsaco", "ordinal": 0}}},
    }
    head = b"KPAK" + struct.pack("<IQ", 1, 64 + len(CODE_OBJECT))
    data = LEAD + head + b"\0" * (64 - len(head)) + CODE_OBJECT + msgpack.packb(toc, use_bin_type=True)
    (entry,) = kpack_entries(data, AT, len(data), ORIGIN, Limits())
    assert not isinstance(entry, FormatError), entry
    assert (entry.label, entry.start, entry.end) == ("kpack lib.so [gfx942]", AT + 64, AT + 64 + len(CODE_OBJECT))
    assert bytes(entry.buf[entry.start : entry.end]) == CODE_OBJECT


def test_a_malformed_kpack_reference_names_the_kpack_reference():
    with pytest.raises(FormatError) as info:
        parse_ref(b"\xc1", Origin("lib.so", ("section .rocm_kpack_ref",), 0x200))  # 0xc1: never used
    assert info.value.offset == 0
    assert info.value.message.startswith("malformed MessagePack in the kpack reference: ")
