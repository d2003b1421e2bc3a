"""A real Triton cache, made in the test session by Triton 3.9's AMD compiler with no GPU.

test_triton.py's kernels (add, matmul, matmul_agpr, softmax) are compiled for gfx942, gfx950
and gfx1100 with ``TRITON_CACHE_DIR`` pointing at a fresh directory, so Triton itself writes the
cache layout (``<hash>/<name>.hsaco`` beside ``<name>.json``, ``<name>.amdgcn`` and the IRs).
Beside the directory the fixture keeps, per case, what Triton's own ``CompiledKernel`` said
(``metadata.name``, ``num_warps``, ``warp_size``, ``shared``): the oracle the cache reader is
checked against, taken from Triton's Python objects, not from the JSON files amdocc reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs

needs("triton", "the Triton cache tests compile with it (pip install 'amdocc[triton]')")

import test_triton as tt  # noqa: E402 - its kernels and hand-worked HIP answers
from amdocc.integrations import triton as at  # noqa: E402

CASES = tt.CASES
HIP_BY_HAND = tt.HIP_BY_HAND


def build(cache: Path) -> dict[tuple[str, str], dict]:
    """Compile every case into ``cache``; return Triton's own metadata per case."""
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_CACHE_DIR", str(cache))
        mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        mp.setenv("TRITON_DISABLE_LINE_INFO", "1")
        for name, arch in CASES:
            fn, signature, constexprs, options = tt.KERNELS[name]
            k = at.compile_offline(fn, signature, constexprs, arch, **options)
            m = k.metadata
            hsaco = [p for p in cache.rglob(f"{m.name}.hsaco") if p.read_bytes() == k.asm["hsaco"]]
            assert len(hsaco) == 1, f"Triton wrote no single cache entry for {name} on {arch}"
            out[name, arch] = {
                "name": m.name,
                "num_warps": m.num_warps,
                "warp_size": m.warp_size,
                "shared": m.shared,
                "arch": m.target.arch,
                "hsaco": hsaco[0],
                "amdgcn_in_memory": k.asm["amdgcn"],
            }
    return out


_made: list[tuple[Path, dict[tuple[str, str], dict]]] = []


def session_cache(tmp_path_factory) -> tuple[Path, dict[tuple[str, str], dict]]:
    """(cache directory, {(kernel, arch): Triton's metadata and the cache entry's path}), made
    once per session for every test module that asks."""
    if not _made:
        cache = tmp_path_factory.mktemp("triton-cache-session")
        _made.append((cache, build(cache)))
    return _made[0]
