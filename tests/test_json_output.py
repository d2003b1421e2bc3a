"""`inspect --json` / `--json-lines` write one documented compact JSON form, the same bytes
whether the optional orjson or the standard library writes them.

The oracle is the standard library's own encoder: every text must equal
``json.dumps(record, separators=(",", ":"))`` (ASCII only, strict: what cannot be JSON is
written as amdocc.report.dumps always wrote it), and a whole CLI run must print the same bytes
with and without orjson.
"""

from __future__ import annotations

import json
import math

import msgpack
import pytest

import amdocc
from amdocc import report
from amdocc.cli.main import main
from amdocc.codeobject import notes
from amdocc.elf import Note
from conftest import FIXTURES

COMPACT = (",", ":")


@pytest.fixture(params=["orjson", "stdlib"])
def encoder(request, monkeypatch):
    """Run a test once with orjson (when installed) and once with the standard library alone."""
    if request.param == "orjson":
        pytest.importorskip("orjson")
        monkeypatch.setattr(report, "_ORJSON", [])
    else:
        monkeypatch.setattr(report, "_ORJSON", [None])
    return request.param


RECORDS = [
    {"a": 1, "b": [1, -5, True, False, None, "x"], "c": {}, "d": []},
    {"ints": [0, 2**63 - 1, -(2**63), 2**64 - 1]},
    {"big": 2**64, "neg": -(2**63) - 1},  # beyond orjson's 64-bit integers
    {"text": "".join(map(chr, range(128)))},  # every ASCII character, DEL included
    {"text": "caf\u00e9 \u2603 \U0001f600"},  # non-ASCII: escaped
    {"name": "bad\\xffutf8"},  # a symbol name of the bytes b"bad\xffutf8", as it is written (below)
    {"bytes": b"\x00\xffab", "nested": [bytearray(b"\x01")]},
    {1: "int key", "s": "str key"},  # MessagePack allows non-string keys
    {"tuple": (1, 2, (3,))},
    {"ext": msgpack.ExtType(5, b"ab")},  # a tuple subclass
]


@pytest.mark.parametrize("record", RECORDS, ids=range(len(RECORDS)))
def test_compact_text_is_the_standard_librarys(encoder, record):
    expected = json.dumps(record, default=report.jsonable, allow_nan=False, separators=COMPACT)
    assert report.compact_dumps(record, plain=True) == expected
    assert report.compact_dumps(record, plain=False) == expected
    assert expected.isascii()


def test_a_name_that_is_not_utf8_is_written_with_backslash_escapes(encoder):
    # A symbol name of the bytes b"bad\xffutf8", read as Python reads it (PEP 383 surrogates), is
    # written as Python's backslashreplace writes those bytes (docs/cli-contract.md), never as a
    # lone-surrogate escape "\udcff" that JSON readers refuse or replace.
    raw = b"bad\xffutf8"
    record = {"name": raw.decode("utf-8", "surrogateescape"), raw.decode("utf-8", "surrogateescape"): [1]}
    written = raw.decode("utf-8", "backslashreplace")
    expected = json.dumps({"name": written, written: [1]}, separators=COMPACT)
    assert report.compact_dumps(record, plain=True) == expected
    assert report.compact_dumps(record, plain=False) == expected
    assert json.loads(report.dumps(record)) == {"name": written, written: [1]}


@pytest.mark.parametrize("value", [1.5, 1e-05, 1e16, math.nan, math.inf])
def test_floats_are_written_by_the_standard_library(encoder, value):
    # A record that may hold floats is never given to orjson (it writes 1e-5 and NaN as null).
    record = {"x": value}
    text = report.compact_dumps(record, plain=False)
    if math.isfinite(value):
        assert text == json.dumps(record, separators=COMPACT)
    else:
        assert json.loads(text) == {"x": repr(value)}


def test_a_note_without_float_markers_is_plain():
    plain = msgpack.packb({"amdhsa.kernels": [{".name": "k", ".vgpr_count": 4}]})
    with_float = msgpack.packb({"amdhsa.kernels": [{".name": "k", ".vgpr_count": 4.0}]})
    with_float32 = msgpack.packb({"x": 1.5}, use_single_float=True)
    assert notes.without_floats(Note("AMDGPU", 32, plain, 0))
    assert not notes.without_floats(Note("AMDGPU", 32, with_float, 0))
    assert not notes.without_floats(Note("AMDGPU", 32, with_float32, 0))


def _run(argv, capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


FILES = [amdocc.samples_path(), FIXTURES / "containers", FIXTURES / "elf", FIXTURES / "newer"]


@pytest.mark.parametrize(
    "form", [["--json"], ["--json-lines"], ["--json-lines", "--fields", "name,metadata,descriptor"]]
)
def test_inspect_prints_the_same_bytes_with_either_encoder(monkeypatch, capsys, form):
    texts = []
    for fast in ([], [None]):
        monkeypatch.setattr(report, "_ORJSON", list(fast))
        texts.append(_run(["inspect", *form, "--jobs", "1", *map(str, FILES)], capsys))
    assert texts[0] == texts[1]
    _, out = texts[0]
    assert out.count('"name":') > 50  # the inputs were read: many kernels, not errors
    lines = out.splitlines()
    if form == ["--json"]:
        doc = json.loads(out)
        # One code object per line between the brackets, each line compact.
        assert lines[0] == '{"code_objects":[' and lines[-1].startswith('],"skipped":')
        for line, co in zip(lines[1:-1], doc["code_objects"], strict=True):
            assert line.rstrip(",") == json.dumps(co, separators=COMPACT)
    else:
        for line in lines:
            assert line == json.dumps(json.loads(line), separators=COMPACT)


def test_a_metadata_float_reaches_the_output_as_the_standard_library_writes_it(monkeypatch):
    # A code object whose metadata is not plain goes to the standard library whatever is installed.
    co = amdocc.load(amdocc.samples_path())[0]
    co.metadata["amdhsa.version"] = [1, 2.5]
    co.metadata_plain = False
    texts = set()
    for fast in ([], [None]):
        monkeypatch.setattr(report, "_ORJSON", list(fast))
        texts.add(report.compact_dumps(report.code_object_record(co), co.metadata_plain))
    (text,) = texts
    assert '"metadata_version":[1,2]' in text and '"amdhsa.version":[1,2.5]' in text


def test_a_code_object_with_floats_in_its_note_prints_them_as_the_standard_library_does(monkeypatch, capsys, tmp_path):
    from fuzz.formats.elf import note_desc, with_note_desc
    from fuzz.formats.metadata import mp_encode

    data = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
    tree = msgpack.unpackb(note_desc(data, "AMDGPU", 32), raw=False)
    tree["amdhsa.kernels"][0][".odd"] = [1e-05, float("nan"), 2.5]
    path = tmp_path / "floats.hsaco"
    path.write_bytes(with_note_desc(data, "AMDGPU", 32, mp_encode(tree)))
    (co,) = amdocc.load(path)
    assert not co.metadata_plain
    assert amdocc.load(FIXTURES / "elf" / "gfx942_cov4.hsaco")[0].metadata_plain
    texts = set()
    for fast in ([], [None]):
        monkeypatch.setattr(report, "_ORJSON", list(fast))
        texts.add(_run(["inspect", "--json", str(path)], capsys))
    ((code, out),) = texts
    assert code == 0 and '".odd":[1e-05,"nan",2.5]' in out


def test_json_lines_with_a_float_note_value_agree_with_either_encoder(monkeypatch, capsys, tmp_path):
    from fuzz.formats.elf import note_desc, with_note_desc
    from fuzz.formats.metadata import mp_encode

    data = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
    tree = msgpack.unpackb(note_desc(data, "AMDGPU", 32), raw=False)
    tree["amdhsa.kernels"][0][".vgpr_count"] = 1e-05
    tree["amdhsa.kernels"][0][".sgpr_count"] = [float("inf")]
    path = tmp_path / "float_counts.hsaco"
    path.write_bytes(with_note_desc(data, "AMDGPU", 32, mp_encode(tree)))
    texts = set()
    for fast in ([], [None]):
        monkeypatch.setattr(report, "_ORJSON", list(fast))
        texts.add(_run(["inspect", "--json-lines", str(path)], capsys))
    ((code, out),) = texts
    assert code == 0 and '"vgpr_count":1e-05' in out and '"sgpr_count":["inf"]' in out


def test_a_note_with_marker_bytes_by_chance_is_walked_for_floats():
    co = amdocc.load(amdocc.samples_path())[0]
    co.metadata_plain = False  # as if 0xca/0xcb occurred in some integer
    assert report.metadata_plain(co)
    co.metadata["amdhsa.kernels"][-1][".args"] = [{".size": 8, ".odd": [{"deep": 0.5}]}]
    assert not report.metadata_plain(co)
    co.metadata["amdhsa.kernels"][-1][".args"] = [{".size": b"\x01"}]
    assert not report.metadata_plain(co)
