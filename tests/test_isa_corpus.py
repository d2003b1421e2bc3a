"""Real code objects nobody here wrote, decoded by amdocc.isa and by llvm-objdump-22: a seeded
sample of the amd-aiter wheel's hand-written .co files (size-0 symbols: extents inferred), and
Triton 3.9's kernels for gfx942, gfx950 and gfx1100 with their own ``.amdgcn`` as the oracle for
loop depth and spill sites."""

from __future__ import annotations

import os
import random

import pytest

import amdocc
from amdocc.isa.analysis import analyse
from conftest import aiter_dir, skip_unless_required
from isa_oracle import align, asm_loop_depths, branch_label_agrees, objdump
from test_isa_disassembly import _library

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]


def _seed() -> int:
    given = os.environ.get("AMDOCC_DIFF_SEED")
    seed = int(given) if given else random.randrange(1 << 32)
    print(f"isa corpus sample seed {seed} (AMDOCC_DIFF_SEED={seed} replays it)")
    return seed


@pytest.mark.corpus
def test_aiter_kernels_decode_as_objdump_decodes_them():
    _library()
    root = aiter_dir()
    if root is None:
        skip_unless_required("the amd-aiter corpus is not downloaded (.ci/setup-tests.sh)")
    files = sorted(root.rglob("*.co"))
    count = int(os.environ.get("AMDOCC_ISA_CORPUS") or 100)
    sample = files if count >= len(files) else random.Random(_seed()).sample(files, count)
    kernels = instructions = same = labelled = inferred = 0
    for path in sample:
        for co in amdocc.load(path):
            for kernel in co.kernels:
                isa = analyse(kernel, co.origin)
                listing = objdump(path, isa.code.processor, "+wavefrontsize64" in isa.code.features)
                kernels += 1
                inferred += isa.code.inferred is not None
                for ins in isa.instructions:
                    theirs = listing.text.get(ins.address)
                    instructions += 1
                    if theirs == ins.text:
                        same += 1
                    else:  # objdump names a target by the object's local label where there is one
                        assert branch_label_agrees(ins.text, theirs or "", ins.address, listing), (
                            path, kernel.name, hex(ins.address), ins.text, theirs)  # fmt: skip
                        labelled += 1
    print(f"aiter: {len(sample)} files, {kernels} kernels ({inferred} extents inferred), {instructions} "
          f"instructions: {same} identical, {labelled} branches objdump names by label")  # fmt: skip
    assert kernels >= len(sample) and same > 0.99 * instructions


def test_triton_kernels_decode_loop_and_spill_as_their_amdgcn_says(tmp_path_factory):
    _library()
    from triton_cache_fixture import session_cache

    _, cases = session_cache(tmp_path_factory)
    compared = 0
    for (name, arch), case in cases.items():
        (co,) = amdocc.load(case["hsaco"])
        listing = objdump(case["hsaco"], arch, case["warp_size"] == 64 and not arch.startswith("gfx9"))
        expected = asm_loop_depths(case["amdgcn_in_memory"])
        for kernel in co.kernels:
            isa = analyse(kernel, co.origin)
            assert isa.flow.unknown is None
            for ins in isa.instructions:
                assert listing.text[ins.address] == ins.text, (name, arch, hex(ins.address))
            theirs = expected[kernel.name]
            for i, j in align([ins.mnemonic for ins in isa.instructions], theirs):
                assert isa.loop_depth[i] == theirs[j][1], (name, arch, hex(isa.instructions[i].address))
                mark = {"vgpr": "spill", "vgpr_reload": "reload"}.get(isa.spills.marks[i] or "")
                if theirs[j][2] == "spill or reload":
                    assert mark in ("spill", "reload")
                else:
                    assert mark == theirs[j][2]
            compared += len(isa.instructions)
    assert compared > 0
