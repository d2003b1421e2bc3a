"""tune-regs on a Triton cache, against Triton's own ``waves_per_eu`` compile option.

The oracle: for every point amdocc reports, ``triton.compile(..., options={"waves_per_eu": N})``
(and ``llvm_fn_attrs`` for an ``amdgpu-agpr-alloc`` point) builds the kernel from source with
that option, and its code object, read by ``llvm-readelf-22 --notes``, and its ``.amdgcn``'s
``; Occupancy:`` comment must say what the point says. The byte-identity gate must refuse an
entry whose ``.llir`` was edited, and one whose recorded options did not build it.

Kernels are built here (small, to keep the test cheap) for gfx942, gfx950 and gfx1100: a
128x128x32 fp16 matmul (no spills as built, spills from 3 waves per SIMD on), a softmax and an
elementwise a*x+y.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import needs

triton = needs("triton", "tune-regs recompiles with Triton's AMD code generator (pip install 'amdocc[triton]')")
tl = needs("triton.language", "the kernels are Triton kernels")

import test_triton as tt  # noqa: E402 - the matmul and softmax kernels
from amdocc.app import tune_regs  # noqa: E402
from amdocc.integrations import triton as at  # noqa: E402

pytestmark = pytest.mark.llvm22


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * x + y, mask=mask)


AXPY = (axpy_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "a": "fp32", "n": "i32"},
        {"BLOCK": 1024}, {"num_warps": 4})  # fmt: skip
KERNELS = {"matmul": tt.KERNELS["matmul"], "softmax": tt.KERNELS["softmax"], "axpy": AXPY}
NAMES = {"matmul": "matmul_kernel", "softmax": "softmax_kernel", "axpy": "axpy_kernel"}
# (kernel, arch) -> the waves-per-EU values swept (None: amdocc's default range) and the AGPR
# counts tried. The gfx942 matmul gets the full default sweep (2..8 and an agpr-alloc point per
# value would be 14 compiles; two agpr points keep the test cheap); the others a few values.
SWEEPS = {
    ("matmul", "gfx942"): dict(waves=None, agpr_alloc=()),
    ("softmax", "gfx942"): dict(waves=None, agpr_alloc=()),
    ("matmul", "gfx950"): dict(waves=[3, 4], agpr_alloc=[64]),
    ("axpy", "gfx950"): dict(waves=None, agpr_alloc=()),
    ("matmul", "gfx1100"): dict(waves=[3, 4], agpr_alloc=()),
    ("softmax", "gfx1100"): dict(waves=[10, 16], agpr_alloc=()),
    ("axpy", "gfx1100"): dict(waves=[16], agpr_alloc=()),
}


def _compile(cache: Path, name: str, arch: str, monkeypatch, **extra):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    monkeypatch.setenv("TRITON_DISABLE_LINE_INFO", "1")
    fn, signature, constexprs, options = KERNELS[name]
    return at.compile_offline(fn, signature, constexprs, arch, **{**options, **extra})


def _entry_of(cache: Path, compiled) -> Path:
    found = [p for p in cache.rglob(f"{compiled.metadata.name}.hsaco") if p.read_bytes() == compiled.asm["hsaco"]]
    assert len(found) == 1
    return found[0].with_suffix(".llir")


def _readelf(hsaco: bytes, tmp_path: Path) -> dict[str, int | None]:
    path = tmp_path / "oracle.hsaco"
    path.write_bytes(hsaco)
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(path)], check=True, capture_output=True, text=True).stdout

    def key(k: str) -> int | None:
        found = re.findall(rf"^\s+(?:- )?\.{k}:\s+(\S+)$", notes, re.M)
        assert len(found) <= 1, k
        return int(found[0]) if found else None

    return {
        "vgprs": key("vgpr_count"),
        "agprs": key("agpr_count"),
        "sgprs": key("sgpr_count"),
        "vgpr_spill_count": key("vgpr_spill_count"),
        "private_segment_fixed_size": key("private_segment_fixed_size"),
    }


def _occupancy_comment(amdgcn: str) -> int:
    found = re.findall(r"^; Occupancy: (\d+)$", amdgcn, re.M)
    assert len(found) == 1
    return int(found[0])


@pytest.mark.parametrize("name,arch", sorted(SWEEPS))
def test_each_point_equals_tritons_own_waves_per_eu(name, arch, tmp_path, monkeypatch):
    built = _compile(tmp_path / "cache", name, arch, monkeypatch)
    sweep = SWEEPS[name, arch]
    (result,) = tune_regs(_entry_of(tmp_path / "cache", built), **sweep)["results"]
    assert result["error"] is None and result["exact"] is True
    meta = built.metadata
    assert result["launch"] == {"block_size": meta.num_warps * meta.warp_size, "dynamic_lds": meta.shared}
    points = result["points"]
    assert points[0]["waves_per_eu"] is None and points[0]["agpr_alloc"] is None
    # amdocc's default range: from what the kernel reaches as built to the processor's maximum.
    if sweep["waves"] is None:
        reach = _occupancy_comment(built.asm["amdgcn"])
        top = {"gfx942": 8, "gfx950": 8, "gfx1100": 16}[arch]  # max waves per SIMD (ISA guides)
        assert [p["waves_per_eu"] for p in points[1:]] == [w for w in range(reach, top + 1)]
    else:
        assert [p["waves_per_eu"] for p in points[1:] if p["agpr_alloc"] is None] == sweep["waves"]
    for point in points:
        assert point["error"] is None, point
        extra = {}
        if point["waves_per_eu"] is not None:
            extra["waves_per_eu"] = point["waves_per_eu"]
        if point["agpr_alloc"] is not None:
            extra["llvm_fn_attrs"] = f"amdgpu-agpr-alloc={point['agpr_alloc']}"
        oracle = _compile(tmp_path / "oracle", name, arch, monkeypatch, **extra) if extra else built
        want = _readelf(oracle.asm["hsaco"], tmp_path)
        assert {k: point[k] for k in want} == want, (point["waves_per_eu"], point["agpr_alloc"])
        comment = _occupancy_comment(oracle.asm["amdgcn"])
        waves = point["waves_per_simd"]
        if point["waves_per_eu"] is None:  # no attribute: the compiler's figure is the object's
            assert waves["compiler"] == comment
        else:  # LLVM may lower its figure to the attribute's maximum; the registers bound it
            assert min(waves["compiler"], point["waves_per_eu"]) <= comment <= waves["compiler"]
        # At the launch, dynamic LDS can only lower it (Triton's LDS is invisible to the compiler).
        assert waves["llvm"] == waves["compiler"] if meta.shared == 0 else waves["llvm"] <= waves["compiler"]


def test_the_matmul_frontier_trades_occupancy_for_spills(tmp_path, monkeypatch):
    """From Triton's own compiles at 2, 3 and 4 waves per SIMD: more waves cost spilled dwords, so
    each of those points is on the frontier, and a point that spills more at no more waves is not."""
    built = _compile(tmp_path / "cache", "matmul", "gfx942", monkeypatch)
    (result,) = tune_regs(_entry_of(tmp_path / "cache", built), waves=[3, 4], agpr_alloc=[64])["results"]
    by_setting = {(p["waves_per_eu"], p["agpr_alloc"]): p for p in result["points"]}
    spills = {}
    for w in (3, 4):
        oracle = _compile(tmp_path / "oracle", "matmul", "gfx942", monkeypatch, waves_per_eu=w)
        spills[w] = _readelf(oracle.asm["hsaco"], tmp_path)["vgpr_spill_count"]
        assert by_setting[w, None]["vgpr_spill_count"] == spills[w]
    assert 0 < spills[3] < spills[4]
    assert [by_setting[k]["frontier"] for k in ((None, None), (3, None), (4, None))] == [True, True, True]
    # agpr-alloc=64 at 4 waves: Triton's own compile spills more than 4,4 alone, so it is dominated
    with_agprs = _compile(tmp_path / "oracle", "matmul", "gfx942", monkeypatch, waves_per_eu=4,
                          llvm_fn_attrs="amdgpu-agpr-alloc=64")  # fmt: skip
    assert _readelf(with_agprs.asm["hsaco"], tmp_path)["vgpr_spill_count"] > spills[4]
    assert by_setting[4, 64]["frontier"] is False


def test_the_gate_refuses_an_edited_llir(tmp_path, monkeypatch):
    built = _compile(tmp_path / "cache", "axpy", "gfx942", monkeypatch)
    llir = _entry_of(tmp_path / "cache", built)
    text = llir.read_text()
    assert text.count("fmul") >= 1
    llir.write_text(text.replace("fmul", "fadd", 1))
    (result,) = tune_regs(llir)["results"]
    assert result["exact"] is False and result["points"] == [] and result["exit_status"] == 3
    assert "is not the one that built it" in result["error"] and "triton_version 3.9.0" in result["error"]


def test_the_gate_refuses_options_that_did_not_build_it(tmp_path, monkeypatch):
    # Built without FP fusion; the JSON made to say it was built with it.
    built = _compile(tmp_path / "cache", "axpy", "gfx942", monkeypatch, enable_fp_fusion=False)
    llir = _entry_of(tmp_path / "cache", built)
    (ok,) = tune_regs(llir, waves=[8])["results"]
    assert ok["exact"] is True and ok["error"] is None  # as recorded, it is reproduced
    meta_path = llir.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["enable_fp_fusion"] = True
    meta_path.write_text(json.dumps(meta))
    (refused,) = tune_regs(llir)["results"]
    assert refused["exit_status"] == 3 and "enable_fp_fusion True" in refused["error"]
    # And an entry whose .amdgcn came from a build with another waves_per_eu.
    meta["enable_fp_fusion"] = False
    meta_path.write_text(json.dumps(meta))
    other = _compile(tmp_path / "other", "axpy", "gfx942", monkeypatch, enable_fp_fusion=False, waves_per_eu=2)
    assert other.asm["amdgcn"] != built.asm["amdgcn"]
    llir.with_suffix(".amdgcn").write_text(other.asm["amdgcn"])
    (swapped,) = tune_regs(llir)["results"]
    assert swapped["exit_status"] == 3 and swapped["points"] == []


def test_kernel_filter_and_a_directory_of_entries(tmp_path, monkeypatch):
    for name in ("axpy", "softmax"):
        _compile(tmp_path / "cache", name, "gfx1100", monkeypatch)
    out = tune_regs(tmp_path / "cache", kernel="axpy", waves=[16])["results"]
    assert [r["kernel"] for r in out] == ["axpy_kernel"]
    assert shutil.which("llvm-readelf-22")
