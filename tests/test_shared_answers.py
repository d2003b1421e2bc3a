"""Kernels that differ only in name share the models' answers (docs/performance.md), and nothing a
user reads changes for it.

A library holds thousands of instances of one template: the same registers, LDS and workgroup
size under different names. amdocc evaluates the models once per distinct usage and hands the
answer to every kernel that has it. The oracle for "the same answer" is the uncached computation
(``amdocc.models.compute``, the models as pure functions) and, for the numbers, HIP's occupancy
formula worked by hand (docs/hip-occupancy.md §2: waves per SIMD = 512 //
alignUp(vgprs, 8) on gfx942, capped at 8; four SIMDs per CU). What must stay per kernel: the
record's query (its next step re-asks with the kernel's own usage), every message that names a
kernel, and the census row's and check verdict's names.
"""

from __future__ import annotations

import dataclasses

import pytest

import amdocc
from amdocc import UsageError
from amdocc.app.census_op import kernel_row
from amdocc.models import compute, from_kernel, manual, occupancy
from amdocc.policy.checks import Settings, declared_block, evaluate
from amdocc.targets import get_target


def _twins():
    """Two kernels of the sample: one as shipped and a copy under another name."""
    co = next(co for co in amdocc.load(amdocc.samples_path()) if co.processor == "gfx942")
    k = co.kernels[0]
    twin = dataclasses.replace(k, name=k.name + "_twin", symbol=k.symbol + "_twin")
    return co, k, twin


def test_twins_get_the_uncached_answer_and_keep_their_own_query():
    _co, k, twin = _twins()
    for model, block in (("hip", 256), ("hw", 256), ("llvm", None)):
        a = occupancy(k, block_size=block, model=model)
        b = occupancy(twin, block_size=block, model=model)
        expected = compute(from_kernel(twin), model, block, 0)
        assert b[:-1] == expected[:-1]
        assert a.query[0].name == k.name and b.query[0].name == twin.name


@pytest.mark.parametrize(("vgprs", "blocks"), [(128, 4), (256, 2), (136, 3)])
def test_usages_that_differ_in_a_count_do_not_share(vgprs, blocks):
    # gfx942, wave64, block 256 = 4 waves = one per SIMD: blocks = 512 // alignUp(vgprs, 8) per SIMD.
    t = get_target("gfx942")
    first = occupancy(manual(t, vgprs=128, name="same"), block_size=256)
    other = occupancy(manual(t, vgprs=vgprs, name="same"), block_size=256)
    assert first.blocks_per_cu == 4 and other.blocks_per_cu == blocks


def test_a_refusal_names_each_kernel_that_shares_a_usage():
    t = get_target("gfx1200")
    for name in ("first_kernel", "second_kernel"):
        u = manual(t, vgprs=64, name=name).with_(dynamic_vgpr=True, from_file=True)
        with pytest.raises(UsageError, match=f"kernel {name} enables dynamic VGPRs"):
            occupancy(u, block_size=64)


def test_census_rows_and_verdicts_of_twins_differ_only_in_their_names():
    co, k, twin = _twins()
    rows = [kernel_row(co, x, "", {}, None, 0, {}) for x in (k, twin)]
    assert rows[0]["kernel"] == k.name and rows[1]["kernel"] == twin.name
    assert {c: v for c, v in rows[0].items() if c not in ("kernel", "demangled", "symbol")} == {
        c: v for c, v in rows[1].items() if c not in ("kernel", "demangled", "symbol")
    }
    settings = Settings(rules=("launch", "lds", "mode"))
    verdicts = [evaluate(x, settings, declared=declared_block(x)) for x in (k, twin)]
    assert verdicts[0] == verdicts[1]


def test_a_kernel_missing_a_count_is_named_in_its_own_verdict():
    # No usage can be formed, so nothing is shared: the mode rule names each kernel.
    _co, k, _ = _twins()
    for name in ("lost_a", "lost_b"):
        broken = dataclasses.replace(
            k, name=name, resources=dataclasses.replace(k.resources, vgprs=None, vgprs_allocated=None)
        )
        verdict = evaluate(broken, Settings(rules=("launch", "mode")), declared=(256, ".max_flat_workgroup_size"))
        (mode,) = [v for v in verdict.violations if v.rule == "mode"]
        assert f"kernel {name}:" in mode.message


def test_a_relocatable_twin_of_a_launchable_kernel_never_shares_its_answers(capsys):
    # Same usage, but the twin's code object is a relocatable: its counts are local
    # (codeobject/linking.py), so census leaves its hip columns out and check its launch rule,
    # each saying why, where the launchable twin gets the models' answers.
    co, k, twin = _twins()
    local = dataclasses.replace(twin, launchable=False)
    row = kernel_row(co, k, "", {}, None, 0, {})
    assert row["blocks_per_cu"] is not None and row["unmodelled"] is None
    local_row = kernel_row(co, local, "", {}, None, 0, {})
    assert local_row["blocks_per_cu"] is None and "local counts" in local_row["unmodelled"]
    settings = Settings(rules=("launch", "mode"))
    assert not [n for n in evaluate(k, settings, declared=declared_block(k)).not_evaluated if n.rule == "launch"]
    (why,) = [n for n in evaluate(local, settings, declared=declared_block(local)).not_evaluated if n.rule == "launch"]
    assert "local counts" in why.reason


def _inputs_twin(k, **changes):
    """A copy of ``k`` under another name that keeps the inputs its resources were read from
    (Kernel.inputs), as every kernel of a library read from the same note values does."""
    assert k.inputs is not None
    twin = dataclasses.replace(k, name=k.name + "_twin", symbol=k.symbol + "_twin", **changes)
    twin.inputs = k.inputs  # a copy has none of its own (only the reader sets it)
    return twin


def test_a_census_row_shared_by_inputs_is_the_row_worked_out_alone():
    # The oracle is the same kernel without its inputs key, whose row nothing shares.
    co, k, _ = _twins()
    twin = _inputs_twin(k, findings=[*k.findings, amdocc.Finding("own-finding", "warning", "only the twin's")])
    kernel_row(co, k, "", {}, None, 0, {})  # the first of the inputs: its body is kept
    shared = kernel_row(co, twin, "", {}, None, 0, {})
    alone = kernel_row(co, dataclasses.replace(twin), "", {}, None, 0, {})
    assert shared == alone
    assert shared["kernel"] == twin.name and "own-finding" in shared["findings"]


def test_a_relocatable_with_a_launchable_kernels_inputs_gets_its_own_row():
    co, k, _ = _twins()
    kernel_row(co, k, "", {}, None, 0, {})
    local = kernel_row(co, _inputs_twin(k, launchable=False), "", {}, None, 0, {})
    assert local["blocks_per_cu"] is None and "local counts" in local["unmodelled"]


def test_rows_asked_at_other_sizes_or_lds_do_not_share():
    # The sample's gfx942 saxpy_lds, worked by hand: 16384 B of static LDS in a 65536 B CU allow 4
    # workgroups (3 with 4096 B more, 65536 // 20480); 512 threads are 8 wave64 waves, and 4 SIMDs x
    # 8 slots hold 4 such groups, a tie the wave slots win (LIMITERS order).
    co, k, _ = _twins()
    assert (k.resources.lds, k.resources.vgprs, k.resources.wavefront_size) == (16384, 6, 64)
    twin = _inputs_twin(k)
    for block, lds, blocks, limiter in ((256, 0, 4, "lds"), (512, 0, 4, "waves"), (256, 4096, 3, "lds")):
        row = kernel_row(co, twin, "", {}, block, lds, {})
        assert (row["block_size"], row["blocks_per_cu"], row["limiter"]) == (block, blocks, limiter)
