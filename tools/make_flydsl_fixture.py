#!/usr/bin/env python3
"""Regenerate the FlyDSL fixtures: real final MLIR modules from offline FlyDSL compiles.

    python tools/make_flydsl_fixture.py [--python VENV/bin/python]

FlyDSL (PyPI ``flydsl``, tested with 0.5.0) compiles with no GPU when it is given CPU torch
tensors as placeholders and an ``ld.lld`` under ``$ROCM_PATH/llvm/bin`` for its final link; a
directory holding a symlink to Debian's ``ld.lld-22`` is enough. ``--python`` names an
interpreter that has ``flydsl``, ``torch`` and ``numpy`` (default: ``$FLYDSL_PYTHON``, else this
one); each case compiles in a fresh process of it (``--worker``) with ``FLYDSL_GPU_ARCH`` set.

Writes into tests/data/fixtures/flydsl/:

    <case>.mlir          the final MLIR text (``CompiledArtifact.ir``), whole: a few KB each
    <case>.readelf.txt   ``llvm-readelf-22 -h --notes`` of object #0 of each gpu.binary
    manifest.json        versions, and per case: the launches and binaries as FlyDSL's own MLIR
                         Python bindings read them (kernel, block, dynamic shared memory, sha256
                         and size of the code object), and the kernels' metadata as llvm-readelf
                         prints it

amdocc is deliberately NOT imported: the oracles are FlyDSL's MLIR parser and LLVM's readelf.
The kernels below are also what tests/test_flydsl.py compiles live when flydsl is importable.
"""
# No "from __future__ import annotations": FlyDSL reads the kernels' annotations as objects.
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "fixtures" / "flydsl"
READELF, LLD = "llvm-readelf-22", "ld.lld-22"

BLOCK = 256             # threads per workgroup of every launch
GRID = 4                # workgroups launched
N = BLOCK * GRID        # elements of the placeholder tensors
STATIC_FLOATS = 1024    # the LDS kernel's static shared array: 4096 bytes
DYNAMIC_LDS = 28672     # dynamic shared memory the LDS kernel is launched with

# case -> (launcher, arch, extra launcher arguments after the tensors)
CASES = {
    "vadd-gfx942": ("vadd", "gfx942", ()),
    "vadd-gfx950": ("vadd", "gfx950", ()),
    "lds-gfx942": ("lds", "gfx942", (DYNAMIC_LDS,)),
    "lds-gfx950": ("lds", "gfx950", (DYNAMIC_LDS,)),
    "lds_smem_arg-gfx942": ("lds_smem_arg", "gfx942", (DYNAMIC_LDS,)),   # smem: a run-time Int32
    "lds_block_arg-gfx942": ("lds_block_arg", "gfx942", (BLOCK,)),      # block x: a run-time Int32
    "two_launches-gfx942": ("two_launches", "gfx942", ()),
}


def launchers() -> dict:
    """The ``@flyc.jit`` launchers of the fixtures (imports flydsl; call it after the env is set)."""
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    @flyc.kernel
    def vadd(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, WG: fx.Constexpr[int]):
        i = fx.block_idx.x * fx.Int32(WG) + fx.thread_idx.x
        a = fx.ptr_load(fx.get_iter(A) + i)
        b = fx.ptr_load(fx.get_iter(B) + i)
        fx.ptr_store(a + b, fx.get_iter(C) + i)

    @flyc.kernel
    def lds(A: fx.Tensor, C: fx.Tensor, WG: fx.Constexpr[int], FLOATS: fx.Constexpr[int]):
        # A round trip through a static shared array and the dynamic shared memory, each read
        # back reversed after a barrier so that neither can be optimised away.
        tid = fx.thread_idx.x
        i = fx.block_idx.x * fx.Int32(WG) + tid
        static = fx.SharedAllocator().allocate(fx.Array[fx.Float32, FLOATS]).peek()
        dynamic = fx.get_dyn_shared(fx.Float32)
        fx.ptr_store(fx.ptr_load(fx.get_iter(A) + i), static.ptr + tid)
        fx.gpu.barrier()
        fx.ptr_store(fx.ptr_load(static.ptr + (fx.Int32(WG - 1) - tid)), dynamic + tid)
        fx.gpu.barrier()
        fx.ptr_store(fx.ptr_load(dynamic + (fx.Int32(WG - 1) - tid)), fx.get_iter(C) + i)

    @flyc.jit
    def run_vadd(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        vadd(A, B, C, BLOCK).launch(grid=(GRID, 1, 1), block=(BLOCK, 1, 1), stream=stream)

    @flyc.jit
    def run_lds(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, smem: fx.Constexpr[int],
                stream: fx.Stream = fx.Stream(None)):
        lds(A, C, BLOCK, STATIC_FLOATS).launch(grid=(GRID, 1, 1), block=(BLOCK, 1, 1), smem=smem, stream=stream)

    @flyc.jit
    def run_lds_smem_arg(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, smem: fx.Int32,
                         stream: fx.Stream = fx.Stream(None)):
        lds(A, C, BLOCK, STATIC_FLOATS).launch(grid=(GRID, 1, 1), block=(BLOCK, 1, 1), smem=smem, stream=stream)

    @flyc.jit
    def run_lds_block_arg(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, threads: fx.Int32,
                          stream: fx.Stream = fx.Stream(None)):
        lds(A, C, BLOCK, STATIC_FLOATS).launch(grid=(GRID, 1, 1), block=(threads, 1, 1), smem=DYNAMIC_LDS,
                                               stream=stream)

    @flyc.jit
    def run_two_launches(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        vadd(A, B, C, BLOCK).launch(grid=(GRID, 1, 1), block=(BLOCK, 1, 1), stream=stream)
        lds(A, C, BLOCK, STATIC_FLOATS).launch(grid=(GRID, 1, 1), block=(BLOCK, 1, 1), smem=DYNAMIC_LDS,
                                               stream=stream)

    return {"vadd": run_vadd, "lds": run_lds, "lds_smem_arg": run_lds_smem_arg,
            "lds_block_arg": run_lds_block_arg, "two_launches": run_two_launches}


def offline_env(fake_rocm: Path, arch: str) -> dict[str, str]:
    """Environment variables for an offline compile for ``arch`` (creates the fake ROCm tree)."""
    lld = shutil.which(LLD) or shutil.which("ld.lld")
    if lld is None:
        raise RuntimeError(f"FlyDSL links with ld.lld: install {LLD} (Debian lld-22)")
    bindir = Path(fake_rocm, "llvm", "bin")
    bindir.mkdir(parents=True, exist_ok=True)
    link = bindir / "ld.lld"
    if not link.exists():
        link.symlink_to(lld)
    return {"ROCM_PATH": str(fake_rocm), "FLYDSL_GPU_ARCH": arch, "FLYDSL_RUNTIME_ENABLE_CACHE": "0"}


def compile_case(case: str):
    """``flyc.compile`` of one case, with CPU tensors as placeholders (env from offline_env)."""
    import flydsl.compiler as flyc
    import torch

    launcher, _arch, extra = CASES[case]
    a, b, c = (torch.zeros(N, dtype=torch.float32) for _ in range(3))
    return flyc.compile(launchers()[launcher], a, b, c, *extra)


def oracle(ir_text: str) -> dict:
    """Launches and binaries of a final module, as FlyDSL's bundled MLIR Python bindings read it.

    Block sizes and dynamic shared memory are the ``value`` attribute of the defining
    ``llvm.mlir.constant``; anything else is reported by the name of its defining op (or
    "argument"). Object #0 of each gpu.binary is returned as bytes under ``objects``.
    """
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import gpu
    from flydsl.compiler.jit_function import _create_mlir_context

    binaries, launches = {}, []

    def operand(value):
        owner = value.owner
        if isinstance(owner, ir.Block):
            return {"constant": None, "defined_by": "argument"}
        owner = getattr(owner, "operation", owner)
        if owner.name != "llvm.mlir.constant":
            return {"constant": None, "defined_by": owner.name}
        return {"constant": ir.IntegerAttr(owner.attributes["value"]).value}

    def visit(op):
        if op.name == "gpu.binary":
            objs = ir.ArrayAttr(op.attributes["objects"])
            first = gpu.ObjectAttr(objs[0])
            binaries[ir.StringAttr(op.attributes["sym_name"]).value] = {
                "objects": len(objs), "object0": bytes(first.object)}
        elif op.name == "gpu.launch_func":
            view = op.opview
            module, kernel = ir.SymbolRefAttr(view.kernel).value
            smem = view.dynamicSharedMemorySize
            launches.append({
                "module": module, "kernel": kernel,
                "block": [operand(v) for v in (view.blockSizeX, view.blockSizeY, view.blockSizeZ)],
                "grid": [operand(v) for v in (view.gridSizeX, view.gridSizeY, view.gridSizeZ)],
                "dynamic_shared_memory_size": None if smem is None else operand(smem)})
        return ir.WalkResult.ADVANCE

    with _create_mlir_context():
        ir.Module.parse(ir_text).operation.walk(visit)
    return {"binaries": binaries, "launches": launches}


def _worker(case: str, out: Path) -> None:
    t0 = time.perf_counter()
    import flydsl
    import torch
    t1 = time.perf_counter()
    compiled = compile_case(case)
    t2 = time.perf_counter()
    text = compiled._keepalive.ir
    out.write_text(text)
    found = oracle(text)
    for name, binary in found["binaries"].items():
        data = binary.pop("object0")
        Path(f"{out}.{name}.co").write_bytes(data)
        binary.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
    print(json.dumps({"flydsl": flydsl.__version__, "torch": torch.__version__, "import_seconds": t1 - t0,
                      "compile_seconds": t2 - t1, **found}))


def _readelf_metadata(text: str) -> list[dict]:
    """The amdhsa.kernels entries of one llvm-readelf --notes output (a YAML subset)."""
    import yaml

    m = re.search(r"AMDGPU Metadata:\s*\n\s*---\n(.*?)\n\.\.\.\s*$", text, re.S | re.M)
    if not m:
        raise RuntimeError("llvm-readelf printed no AMDGPU metadata")
    doc = yaml.safe_load("---\n" + m.group(1) + "\n...\n")
    keep = (".name", ".symbol", ".vgpr_count", ".agpr_count", ".sgpr_count", ".group_segment_fixed_size",
            ".private_segment_fixed_size", ".wavefront_size", ".max_flat_workgroup_size",
            ".reqd_workgroup_size", ".kernarg_segment_size", ".vgpr_spill_count", ".sgpr_spill_count")
    return [{k.lstrip("."): kernel[k] for k in keep if k in kernel} for kernel in doc["amdhsa.kernels"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=os.environ.get("FLYDSL_PYTHON", sys.executable),
                    help="an interpreter with flydsl, torch and numpy (default: $FLYDSL_PYTHON or this one)")
    ap.add_argument("--worker", nargs=2, metavar=("CASE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker[0], Path(args.worker[1]))
        return 0

    OUT.mkdir(parents=True, exist_ok=True)
    manifest = {"generator": "tools/make_flydsl_fixture.py", "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for case, (_launcher, arch, _extra) in CASES.items():
            env = dict(os.environ, **offline_env(Path(tmp, "fakerocm"), arch))
            start = time.perf_counter()
            proc = subprocess.run([args.python, __file__, "--worker", case, str(Path(tmp, case + ".mlir"))],
                                  env=env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if proc.returncode:
                sys.stderr.write(proc.stderr)
                raise SystemExit(f"{case}: the FlyDSL compile failed")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{case}: flydsl {result['flydsl']}, import {result['import_seconds']:.2f} s, compile "
                  f"{result['compile_seconds']:.2f} s, process {wall:.2f} s")
            manifest["flydsl"], manifest["torch"] = result["flydsl"], result["torch"]
            text = Path(tmp, case + ".mlir").read_text()
            (OUT / f"{case}.mlir").write_text(text)
            readelf_parts = []
            for name, binary in result["binaries"].items():
                co = Path(tmp, f"{case}.mlir.{name}.co")
                notes = subprocess.run([READELF, "-h", "--notes", co.name], cwd=tmp, check=True,
                                       capture_output=True, text=True).stdout
                readelf_parts.append(notes)
                binary["readelf"] = _readelf_metadata(notes)
            (OUT / f"{case}.readelf.txt").write_text("".join(readelf_parts))
            manifest["cases"][case] = {"mlir": f"{case}.mlir", "readelf": f"{case}.readelf.txt", "arch": arch,
                                       "mlir_bytes": len(text.encode()), "binaries": result["binaries"],
                                       "launches": result["launches"]}
    version = re.search(r"LLVM version (\S+)", subprocess.run([READELF, "--version"], capture_output=True,
                                                              text=True).stdout)
    manifest["readelf_version"] = version.group(1) if version else None
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} cases to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
