"""``amdocc isa --json`` writes each kernel's instruction rows as JSON text straight from the
columns (amdocc.isa.analysis.instruction_rows_json), without a dict per row. Held to the standard
library's JSON encoder on the rows as dicts: the same bytes, with and without source lines, and
None (the encoder then writes them) whenever a string would need escaping."""

from __future__ import annotations

import dataclasses
import json

import pytest

import amdocc
from amdocc.app import isa_op
from amdocc.isa import analysis
from isa_oracle import build
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22


def _encoded(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("ascii")


@pytest.fixture(scope="module")
def code_objects(tmp_path_factory):
    _library()
    work = tmp_path_factory.mktemp("isa-json-rows")
    built = [
        build(work, "gfx942", "gfx942", []),
        build(work, "gfx942_lines", "gfx942", ["-gline-tables-only"]),
        build(work, "gfx1100_w64", "gfx1100", ["-mwavefrontsize64"]),
    ]
    return [co for path in built for co in amdocc.load(path)]


def test_each_kernels_json_is_the_encoders_text_of_its_record(code_objects):
    kernels = with_lines = 0
    for co in code_objects:
        for kernel in co.kernels:
            record = isa_op.kernel_record(co, kernel)
            assert isa_op.kernel_json(co, kernel) == _encoded(record)
            assert isa_op.kernel_json(co, kernel, summary_only=True) == _encoded({**record, "instructions": None})
            kernels += 1
            with_lines += any(row["line"] for row in record["instructions"])
    assert kernels >= 6 and with_lines >= 2  # both kinds seen: rows with and without source lines


def _a_kernel(code_objects, with_lines: bool) -> analysis.KernelIsa:
    for co in code_objects:
        for kernel in co.kernels:
            isa = analysis.analyse(kernel, co.origin)
            if bool(isa.lines) == with_lines and isa.instructions:
                return isa
    raise AssertionError("no kernel of that kind was built")


@pytest.mark.parametrize("odd", ['say "hi"', "back\\slash", "tab\there", "del\x7f", "caf\u00e9"])
def test_a_string_to_escape_leaves_the_rows_to_the_encoder(code_objects, odd):
    isa = _a_kernel(code_objects, with_lines=True)
    first = isa.instructions[0]
    odd_text = dataclasses.replace(isa, instructions=(first._replace(text=odd), *isa.instructions[1:]))
    assert analysis.instruction_rows_json(odd_text) is None
    odd_line = dataclasses.replace(isa, lines=(odd, *isa.lines[1:]))
    assert analysis.instruction_rows_json(odd_line) is None


def test_plain_strings_and_an_empty_line_are_written_as_the_encoder_writes_them(code_objects):
    isa = _a_kernel(code_objects, with_lines=False)
    assert analysis.instruction_rows_json(isa) == _encoded(analysis.instruction_rows(isa)).decode()
    lines = tuple(("" if i % 3 == 0 else None if i % 3 == 1 else f"k.hip:{i}") for i in range(len(isa.instructions)))
    with_lines = dataclasses.replace(isa, lines=lines)
    assert analysis.instruction_rows_json(with_lines) == _encoded(analysis.instruction_rows(with_lines)).decode()
    empty = dataclasses.replace(isa, instructions=(), block=(), loop_depth=(), classes=(), lines=())
    assert analysis.instruction_rows_json(empty) == "[]"


def test_rows_of_a_graph_not_known_have_null_reachability_and_depth(code_objects):
    isa = _a_kernel(code_objects, with_lines=False)
    unknown = dataclasses.replace(isa, flow=dataclasses.replace(isa.flow, unknown="an indirect branch"))
    text = analysis.instruction_rows_json(unknown)
    assert text == _encoded(analysis.instruction_rows(unknown)).decode()
    assert '"reachable":null,"loop_depth":null' in text


def test_an_undecodable_word_is_written_as_the_encoder_writes_it(code_objects):
    isa = _a_kernel(code_objects, with_lines=False)
    first = isa.instructions[0]
    word = dataclasses.replace(isa, instructions=(first._replace(decoded=False), *isa.instructions[1:]))
    assert analysis.instruction_rows_json(word) == _encoded(analysis.instruction_rows(word)).decode()
