"""TG_SPLIT, on kernels llc-22 compiled with the gfx90a+ ``tgsplit`` feature.

The oracle is what llvm-objdump-22 printed for each descriptor when the fixture was made
(python tools/fixtures tgsplit): ``.amdhsa_tg_split`` and every other directive. Then the hw model
on the same kernels: TG_SPLIT lets a workgroup's waves run on different CUs (AMDGPUUsage.rst,
compute_pgm_rsrc3 bit 16), so one CU's LDS and barriers no longer bound it.
"""

from __future__ import annotations

import hashlib
import json

import pytest

import amdocc
from conftest import FIXTURES
from oracle.compare import descriptor_mismatches, metadata_mismatches
from oracle.llvm22 import metadata_documents, parse_descriptor_dump

MANIFEST = json.loads((FIXTURES / "tgsplit" / "manifest.json").read_text())
CASES = MANIFEST["fixtures"]


def _kernel(fx):
    data = (FIXTURES / fx["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == fx["sha256"]
    (co,) = amdocc.load(data)
    (k,) = co.kernels
    return co, k


@pytest.mark.parametrize("fx", CASES, ids=[f["file"] for f in CASES])
def test_tg_split_bit_and_every_descriptor_field_match_llvm_objdump(fx):
    co, k = _kernel(fx)
    (dumped,) = parse_descriptor_dump((FIXTURES / fx["oracle"]["kd"]).read_text()).values()
    seen = dumped["tgsplit_lds.kd"]
    assert seen["tg_split"] == int(fx["tgsplit"])  # the build asked for it, objdump reads it
    assert k.descriptor.fields["tg_split"] == seen["tg_split"]
    assert descriptor_mismatches(k.descriptor.as_dict(), seen) == []
    assert len(seen) >= 30, "llvm-objdump printed fewer directives than a gfx90a descriptor has"
    (doc,) = metadata_documents((FIXTURES / fx["oracle"]["readelf"]).read_text())
    assert metadata_mismatches(co.metadata, doc) == []
    assert co.processor == fx["arch"]


def test_four_fixtures_three_with_tg_split():
    assert [(f["arch"], f["tgsplit"]) for f in CASES] == [
        ("gfx90a", True),
        ("gfx90a", False),
        ("gfx942", True),
        ("gfx950", True),
    ]


def test_hw_model_lifts_the_per_cu_lds_limit_under_tg_split():
    # 4096 B static + 28672 B dynamic = 32 KiB per block, 256 threads = 4 waves on gfx90a
    # (64 KiB per CU, 8 waves x 4 SIMDs): without TG_SPLIT 65536 // 32768 = 2 blocks (LDS);
    # with it the slots alone bound: 32 // 4 = 8.
    _, split = _kernel(CASES[0])
    _, plain = _kernel(CASES[1])
    assert split.resources.lds == plain.resources.lds == 4096
    with_split = amdocc.occupancy(split, block_size=256, dynamic_lds=28672, model="hw")
    without = amdocc.occupancy(plain, block_size=256, dynamic_lds=28672, model="hw")
    assert (without.blocks_per_cu, without.limiter) == (2, "lds")
    assert (with_split.blocks_per_cu, with_split.limiter) == (8, "waves")
    assert any("TG_SPLIT" in item for item in with_split.details["unconfirmed"])
