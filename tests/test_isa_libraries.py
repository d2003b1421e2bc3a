"""amdocc.isa on libraries nobody here wrote, against llvm-objdump-22 on the code objects LLVM's
own pipeline extracts (llvm-objcopy-22 + clang-offload-bundler-22, tests/oracle/unbundle.py):
bitsandbytes 0.50.2's ROCm 10.0 library (gfx942, gfx1100, gfx1201, gfx1250) and a seeded sample
of jax-rocm10-pjrt 0.12.0's gfx1250 code objects (the only public gfx1250 corpus)."""

from __future__ import annotations

import random
import zipfile

import pytest

import amdocc
from amdocc.isa.analysis import analyse
from conftest import ROOT, skip_unless_required
from isa_oracle import branch_label_agrees, objdump
from oracle.unbundle import unbundle_compressed
from test_isa_corpus import _seed
from test_isa_disassembly import _library

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]
JAX_WHEEL = ROOT / ".cache" / "jax-rocm10" / "jax_rocm10_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl"
JAX_MEMBER = "jax_plugins/xla_rocm10/xla_rocm_plugin.so"


def _compare(paths) -> tuple[int, int, int]:
    """(kernels, instructions, instructions objdump names by label): every instruction of every
    kernel of ``paths`` equals objdump's text at its address."""
    kernels = instructions = labelled = 0
    for path in paths:
        (co,) = amdocc.load(path)
        listing = None
        for kernel in co.kernels:
            isa = analyse(kernel, co.origin)
            if listing is None:
                listing = objdump(path, isa.code.processor, "+wavefrontsize64" in isa.code.features)
            kernels += 1
            for ins in isa.instructions:
                theirs = listing.text.get(ins.address)
                instructions += 1
                if theirs != ins.text:
                    assert branch_label_agrees(ins.text, theirs or "", ins.address, listing), (
                        str(path), kernel.name, hex(ins.address), ins.text, theirs)  # fmt: skip
                    labelled += 1
    return kernels, instructions, labelled


@pytest.mark.bitsandbytes
def test_bitsandbytes_rocm10_library_decodes_as_objdump_decodes_it(bitsandbytes_rocm, tmp_path):
    _library()
    library = bitsandbytes_rocm / "libbitsandbytes_rocm715.so"
    targets = {"gfx942", "gfx1100", "gfx1201", "gfx1250"}
    extracted = [p for _, p in unbundle_compressed(library, tmp_path, targets=targets)]
    assert extracted
    kernels, instructions, labelled = _compare(extracted)
    print(f"bitsandbytes rocm715 ({', '.join(sorted(targets))}): {len(extracted)} code objects, {kernels} kernels, "
          f"{instructions} instructions identical to llvm-objdump-22 ({labelled} by label)")  # fmt: skip
    assert kernels > 100


def test_jax_rocm10_gfx1250_sample_decodes_as_objdump_decodes_it(tmp_path):
    _library()
    if not JAX_WHEEL.exists():
        skip_unless_required("jax-rocm10-pjrt 0.12.0 is not in .cache/jax-rocm10 (run .ci/setup-tests.sh)")
    with zipfile.ZipFile(JAX_WHEEL) as wheel:
        wheel.extract(JAX_MEMBER, tmp_path)
    extracted = [p for _, p in unbundle_compressed(tmp_path / JAX_MEMBER, tmp_path / "co", targets={"gfx1250"})]
    sample = random.Random(_seed()).sample(extracted, 3)
    kernels, instructions, labelled = _compare(sample)
    print(f"jax-rocm10 gfx1250: {len(sample)} of {len(extracted)} code objects, {kernels} kernels, "
          f"{instructions} instructions identical to llvm-objdump-22 ({labelled} by label)")  # fmt: skip
    assert kernels > 0
