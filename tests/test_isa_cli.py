"""``amdocc isa`` and ``amdocc.app.isa``: the JSON contract (docs/isa.md), the listing and the
summary, filters, and every container amdocc reads (each kernel's text against llvm-objdump-22 on
the code object the container holds)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import FIXTURES, ROOT
from isa_oracle import build, objdump
from test_isa_disassembly import _library

pytestmark = pytest.mark.llvm22

KERNEL_KEYS = {"path", "origin", "target", "processor", "kernel", "symbol", "wavefront_size", "disassembler",
               "instructions", "summary"}  # fmt: skip
INSTRUCTION_KEYS = {"address", "size", "text", "block", "reachable", "loop_depth", "line", "spill"}
SUMMARY_KEYS = {"instructions", "bytes", "blocks", "loops", "max_loop_depth", "unknown", "spills", "mix", "waitcnt"}
SPILL_KEYS = {"vgpr", "vgpr_reload", "sgpr", "sgpr_reload", "in_loops", "classification"}


@pytest.fixture(scope="module")
def gfx942(tmp_path_factory):
    _library()
    return build(tmp_path_factory.mktemp("isa-cli"), "gfx942", "gfx942", [])


def _json(capsys, *argv):
    code = main(["isa", "--json", *argv])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


def test_the_json_contract_and_objdumps_addresses(gfx942, capsys):
    code, d, err = _json(capsys, str(gfx942))
    assert (code, err) == (0, "")
    listing = objdump(gfx942, "gfx942").text
    assert len(d["kernels"]) == 7
    for k in d["kernels"]:
        assert set(k) >= KERNEL_KEYS
        assert set(k["summary"]) >= SUMMARY_KEYS and set(k["summary"]["spills"]) >= SPILL_KEYS
        assert k["disassembler"]["library"] and k["disassembler"]["version"]
        assert k["wavefront_size"] == 64 and k["processor"] == "gfx942"
        for ins in k["instructions"]:
            assert set(ins) >= INSTRUCTION_KEYS
            assert listing[ins["address"]] == ins["text"]
        assert k["summary"]["instructions"] == len(k["instructions"])
        assert k["summary"]["bytes"] == sum(i["size"] for i in k["instructions"])
    assert d == {**amdocc.app.isa(gfx942), "kernels": d["kernels"]}
    assert amdocc.app.isa(gfx942)["kernels"] == d["kernels"]


def test_summary_leaves_the_instructions_out(gfx942, capsys):
    code, d, _ = _json(capsys, "--summary", "--kernel", "spill", str(gfx942))
    assert code == 0
    assert [k["kernel"] for k in d["kernels"]] == ["_Z9isa_spillPKfPfi", "_Z14isa_sgpr_spillPKiPii"]
    assert {k["instructions"] is None for k in d["kernels"]} == {True}
    assert main(["isa", "--summary", str(gfx942)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["kernel", "target", "instr"] and len(lines) == 1 + 7
    spill_row = next(line for line in lines if line.startswith("_Z9isa_spillPKfPfi"))
    assert "vgpr spill" in spill_row


def test_the_listing_marks_loop_depth_and_spills(gfx942, capsys):
    assert main(["isa", "--kernel", "isa_spill", str(gfx942)]) == 0
    out = capsys.readouterr().out
    assert "_Z9isa_spillPKfPfi" in out and "disassembler: " in out
    assert any(" vgpr " in line and "scratch_store" in line for line in out.splitlines())
    assert "; block 0 (loop depth 0)" in out and "(loop depth 1)" in out


def test_filters_that_match_nothing_say_so(gfx942, capsys):
    assert main(["isa", "--kernel", "no_such_kernel", str(gfx942)]) == 2
    assert "no_such_kernel" in capsys.readouterr().err
    assert main(["isa", "--target", "gfx1100", str(gfx942)]) == 2
    assert "gfx942" in capsys.readouterr().err


def test_import_amdocc_does_not_load_the_isa_layer():
    code = "import amdocc, sys; print([m for m in sys.modules if m.startswith('amdocc.isa')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


CONTAINERS = [
    "containers/bundle_5arch.hipfb",
    "containers/ccob_v3_zstd.hipfb",
    "containers/libhip_ccob_v3.so",
    "containers/hip_win.dll",
    "containers/offload_binary_2arch.bin",
    "objects/linking_calls.o",
]


@pytest.mark.parametrize("name", CONTAINERS)
def test_every_container_decodes_as_objdump_decodes_its_code_object(name, tmp_path, capsys):
    _library()
    path = FIXTURES / name
    code, d, _ = _json(capsys, str(path))
    assert code == 0 and d["kernels"]
    objects = {(co.origin.chain, co.origin.base): co for co in amdocc.load(path)}
    compared = 0
    for k in d["kernels"]:
        co = objects[k["origin"], k["offset"]]
        image = tmp_path / "co.elf"
        image.write_bytes(co.data)
        wave64 = "+wavefrontsize64" in k["disassembler"]["features"]
        listing = objdump(image, k["disassembler"]["processor"], wave64).text
        for ins in k["instructions"]:
            assert listing[ins["address"]] == ins["text"], (k["kernel"], hex(ins["address"]))
            compared += 1
    assert compared > 0
