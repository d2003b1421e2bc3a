"""Kernel argument lists decoded once per run by their bytes (codeobject/notes.py): every code
object still gets the metadata MessagePack gives, and its own maps to keep or change.

Oracles: llvm-readelf-22 --notes (the metadata LLVM reads from the file) and the msgpack
library's own decoding of the whole note (the MessagePack reference decoder amdocc wraps).
"""

from __future__ import annotations

import msgpack
import pytest

import amdocc
from amdocc.codeobject.notes import decode_msgpack_metadata
from amdocc.elf import Note
from amdocc.errors import FormatError, Origin
from oracle import llvm22
from oracle.compare import compare_metadata, count_leaves

# Two amd-aiter kernels with one argument list (llvm-readelf-22 prints the same 72 maps for both).
SAME_SIGNATURE = ("gfx942/bf16gemm/bf16gemm_outf32_tn_32x64_pf3.co", "gfx942/bf16gemm/bf16gemm_outf32_tn_48x64_pf3.co")


@pytest.mark.corpus
@pytest.mark.llvm22
def test_kernels_sharing_a_signature_each_own_the_argument_maps_llvm_reads(aiter_hsa):
    paths = [str(aiter_hsa / p) for p in SAME_SIGNATURE]
    llvm = {path: doc["metadata"][0]["amdhsa.kernels"][0] for path, doc in llvm22.readelf(paths).items()}
    assert llvm[paths[0]][".args"] == llvm[paths[1]][".args"]  # the premise: one signature
    first, second, again = (amdocc.load(p)[0].kernels[0].metadata for p in (*paths, paths[0]))
    for path, metadata in zip((*paths, paths[0]), (first, second, again), strict=True):
        found, compared = compare_metadata(metadata, llvm[path])
        assert not found and compared == count_leaves(llvm[path])
    # Changing one code object's list or maps changes no other's, nor what the next load reads.
    first[".args"][0][".name"] = "changed"
    first[".args"].append({".name": "added"})
    fresh = amdocc.load(paths[0])[0].kernels[0].metadata
    for path, metadata in ((paths[1], second), (paths[0], again), (paths[0], fresh)):
        found, _ = compare_metadata(metadata, llvm[path])
        assert not found, found


def _note(value_or_bytes) -> Note:
    data = value_or_bytes if isinstance(value_or_bytes, bytes) else msgpack.packb(value_or_bytes)
    return Note("AMDGPU", 32, data, 0x200)


def _whole(data: bytes):
    """What the msgpack library gives for the whole note: (value, bytes after it) or the error."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False), 0
    except msgpack.exceptions.ExtraData as extra:
        return extra.unpacked, len(extra.extra)


ARGS = [{".name": "a", ".offset": 0, ".size": 8, ".value_kind": "global_buffer", ".address_space": "global"}]
SHAPES = {
    "usual": {"amdhsa.version": [1, 2], "amdhsa.kernels": [{".name": "k", ".args": ARGS, ".sgpr_count": 9}]},
    "empty values": {"amdhsa.printf": [], "amdhsa.kernels": [{".name": "", ".args": ARGS, ".language": None}]},
    "a nested value in an argument": {"amdhsa.kernels": [{".args": [{".name": "a", ".x": [1, {"y": 2}]}]}]},
    "arguments not a list": {"amdhsa.kernels": [{".args": {".name": "a"}}]},
    "a kernel that is not a map": {"amdhsa.kernels": [[1, 2], {".args": ARGS}]},
    "kernels not a list": {"amdhsa.kernels": {".args": ARGS}},
    "a key twice": {"amdhsa.kernels": [{".args": ARGS}], "amdhsa.version": [1, 1]},
    "no kernels": {"amdhsa.version": [1, 2], "amdhsa.printf": ["1:1:4:%d"]},
    "floats and bytes": {"amdhsa.kernels": [{".args": [{".name": "f", ".v": 1.5, ".b": b"\x00\x01"}]}]},
}


def _argument_lists(metadata) -> list[list]:
    kernels = metadata.get("amdhsa.kernels") if isinstance(metadata, dict) else None
    kernels = kernels if isinstance(kernels, list) else []
    return [k[".args"] for k in kernels if isinstance(k, dict) and isinstance(k.get(".args"), list)]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_metadata_shape_decodes_as_msgpack_decodes_it_twice_over(shape):
    data = msgpack.packb(SHAPES[shape])
    if shape == "a key twice":  # MessagePack allows it; the later value is the one kept
        data = b"\x83" + data[1:] + msgpack.packb("amdhsa.kernels") + msgpack.packb([{".args": []}])
    expected, extra = _whole(data + b"\xc0\xc0")
    assert extra == 2
    for _ in range(2):  # the second time from what the first remembered
        value, problems = decode_msgpack_metadata(_note(data + b"\xc0\xc0"), Origin("m.co"))
        assert value == expected
        assert problems == ["2 bytes after the metadata map were ignored"]
        for args in _argument_lists(value):  # a caller changing its maps changes no later answer
            for argument in args:
                if isinstance(argument, dict):
                    argument.clear()
            args.append("changed")
    assert decode_msgpack_metadata(_note(data), Origin("m.co")) == (_whole(data)[0], [])


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (msgpack.packb({"amdhsa.kernels": [{".args": ARGS}]})[:-3], "malformed MessagePack in the AMDGPU metadata"),
        (msgpack.packb([{"amdhsa.kernels": []}]), "AMDGPU metadata note holds a list, not a map"),
        (msgpack.packb({"amdhsa.kernels": [{".args": ARGS}]}).replace(b"global_buffer", b"global\xffbuffer"),
         "malformed MessagePack in the AMDGPU metadata"),
    ],
    ids=["truncated in the arguments", "a list at the top", "invalid UTF-8 in an argument"],
)  # fmt: skip
def test_a_damaged_note_is_refused_at_the_note_as_before(data, words):
    with pytest.raises(FormatError) as caught:
        decode_msgpack_metadata(_note(data), Origin("m.co"))
    assert words in str(caught.value) and caught.value.offset == 0x200


def test_an_argument_list_met_again_is_not_decoded_again(monkeypatch):
    """The point of remembering: over amd-aiter's 2,501 kernels 33 argument lists are 94% of the
    metadata bytes (docs/performance.md); a list met again costs a copy, not a decode."""
    from amdocc import caches

    caches.clear("amdocc.codeobject.notes._ARGS")
    data = msgpack.packb(SHAPES["usual"])
    expected = _whole(data)[0]
    decoded = []
    unpackb = msgpack.unpackb
    monkeypatch.setattr(msgpack, "unpackb", lambda data, **kw: decoded.append(data) or unpackb(data, **kw))
    for _ in range(3):
        assert decode_msgpack_metadata(_note(data), Origin("m.co")) == (expected, [])
    assert decoded == [msgpack.packb(ARGS)]  # the list alone, once
