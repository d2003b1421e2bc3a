"""tune-regs on LLVM IR through Debian's libLLVM-22 (LLVM-C's target machine), against llc-22.

The oracle: for every point, ``llc-22 -O3 -filetype=obj`` on the same IR with the same
attributes written in by this test; its ``.text`` (``llvm-objcopy-22 -O binary
--only-section=.text``) must be byte for byte the one amdocc compiled (``text_sha256``), and its
metadata (``llvm-readelf-22 --notes``) the counts amdocc reports. A code object given beside the
IR must be reproduced before any sweep.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from amdocc.app import tune_regs
from conftest import ROOT, skip_unless_required

pytestmark = pytest.mark.llvm22

LIBLLVM = Path("/usr/lib/llvm-22/lib/libLLVM.so.22.1")
# A kernel that keeps 96 floats live across a loop: it spills once the budget is cut.
SOURCE = r"""
__global__ void keep96(float* out, const float* in, int n) {
  float acc[96];
  for (int i = 0; i < 96; ++i) acc[i] = in[TID_X() + i * n];
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < 96; ++i) acc[i] = acc[i] * acc[(i * 7 + r) % 96] + in[r + i];
  float s = 0;
  for (int i = 0; i < 96; ++i) s += acc[i];
  out[TID_X()] = s;
}
"""


@pytest.fixture(scope="module")
def ir(tmp_path_factory) -> Path:
    if not LIBLLVM.is_file():
        skip_unless_required(f"{LIBLLVM} (package libllvm22) is not installed")
    folder = tmp_path_factory.mktemp("tune-llvm")
    (folder / "k.hip").write_text(SOURCE)
    out = folder / "k.ll"
    subprocess.run(["clang-22", "-x", "hip", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "-S",
                    "-emit-llvm", "--offload-arch=gfx942", "-include", str(ROOT / "tools/fixture_src/hip_defs.h"),
                    str(folder / "k.hip"), "-o", str(out)], check=True)  # fmt: skip
    return out


def _llc(ir_text: str, tmp: Path, name: str, *extra: str) -> Path:
    src, obj = tmp / f"{name}.ll", tmp / f"{name}.o"
    src.write_text(ir_text)
    subprocess.run(["llc-22", "-O3", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", *extra,
                    str(src), "-o", str(obj)], check=True)  # fmt: skip
    return obj


def _text(obj: Path) -> bytes:
    out = obj.with_suffix(".text")
    subprocess.run(["llvm-objcopy-22", "-O", "binary", "--only-section=.text", str(obj), str(out)], check=True)
    return out.read_bytes()


def _notes(obj: Path) -> dict[str, int]:
    text = subprocess.run(["llvm-readelf-22", "--notes", str(obj)], check=True, capture_output=True, text=True).stdout
    return {
        k: int(v) for k, v in re.findall(r"^\s+(?:- )?\.(\w+_count|private_segment_fixed_size):\s+(\d+)$", text, re.M)
    }


def _with(ir_text: str, attrs: dict[str, str]) -> str:
    """The test's own edit: the kernel's attribute group (#0) with these attributes set."""
    line = re.search(r"^attributes #0 = \{(.*)\}$", ir_text, re.M)
    assert line is not None
    body = line.group(1)
    for name, value in attrs.items():
        body = re.sub(rf' "{name}"="[^"]*"', "", body)
        body = f' "{name}"="{value}"' + body
    return ir_text[: line.start(1)] + body + ir_text[line.end(1) :]


def test_each_point_equals_llc_with_the_same_attribute(ir, tmp_path):
    (result,) = tune_regs(ir, compiler=str(LIBLLVM), waves=[4, 6, 8], agpr_alloc=[32])["results"]
    assert result["exact"] is False and result["error"] is None  # no code object beside it
    assert result["compiler"]["name"] == "libLLVM" and result["compiler"]["version"].startswith("22.")
    text = ir.read_text()
    settings = [(p["waves_per_eu"], p["agpr_alloc"]) for p in result["points"]]
    assert settings == [(None, None), (4, None), (6, None), (8, None), (4, 32), (6, 32), (8, 32)]
    spills = []
    for n, point in enumerate(result["points"]):
        assert point["error"] is None
        attrs = {}
        if point["waves_per_eu"] is not None:
            attrs["amdgpu-waves-per-eu"] = f"{point['waves_per_eu']},{point['waves_per_eu']}"
        if point["agpr_alloc"] is not None:
            attrs["amdgpu-agpr-alloc"] = str(point["agpr_alloc"])
        obj = _llc(_with(text, attrs), tmp_path, f"p{n}")
        assert point["text_sha256"] == hashlib.sha256(_text(obj)).hexdigest(), settings[n]
        notes = _notes(obj)
        for key, note in (("vgprs", "vgpr_count"), ("agprs", "agpr_count"), ("sgprs", "sgpr_count"),
                          ("vgpr_spill_count", "vgpr_spill_count"),
                          ("private_segment_fixed_size", "private_segment_fixed_size")):  # fmt: skip
            assert point[key] == notes[note], (settings[n], key)
        spills.append(notes["vgpr_spill_count"])
    assert max(spills) > 0  # a real trade: the budget at 8 waves spills


def test_a_code_object_beside_the_ir_must_be_reproduced(ir, tmp_path):
    beside = ir.with_suffix(".o")
    beside.write_bytes(_llc(ir.read_text(), tmp_path, "same").read_bytes())
    (ok,) = tune_regs([ir, beside], compiler=str(LIBLLVM), waves=[8], agpr_alloc=[])["results"]
    assert ok["exact"] is True and ok["error"] is None and len(ok["points"]) == 2
    # Built at -O1: not what -O3 through this library gives.
    beside.write_bytes(_llc(ir.read_text(), tmp_path, "other", "-O1").read_bytes())
    (refused,) = tune_regs([ir, beside], compiler=str(LIBLLVM), waves=[8])["results"]
    assert (
        refused["exit_status"] == 3 and refused["points"] == [] and "is not the one that built it" in refused["error"]
    )
    beside.unlink()
