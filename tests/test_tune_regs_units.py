"""tune-regs' pieces on their own: the frontier on a worked example, the IR attribute edit, the
child process's timeout and crash recovery."""

from __future__ import annotations

import os

import pytest

from amdocc.tuning.ir_attributes import attributes, kernels, with_attributes
from amdocc.tuning.points import mark_frontier
from amdocc.tuning.worker import Codegen, PointFailed


def _p(label, waves, spilled, error=None, sgpr_spilled=0):
    return {"label": label, "waves_per_simd": {"hip": waves}, "vgpr_spill_count": spilled,
            "sgpr_spill_count": sgpr_spilled, "error": error}  # fmt: skip


def test_the_frontier_of_the_research_sweep():
    # docs research isa-analysis §4.1: a 256x256x64 fp16 matmul on gfx942 (occupancy, spilled
    # dwords). By hand: "2,2" spills more than as built at the same occupancy; agpr-alloc
    # removed spills more at the same occupancy; agpr-alloc=256 has less occupancy and more
    # spills than all. The frontier is as built, 3 and 4.
    points = [_p("as built", 2, 164), _p("1,1", 2, 164), _p("2,2", 2, 170), _p("3,3", 3, 682), _p("4,4", 4, 914),
              _p("agpr removed", 2, 444), _p("agpr 256", 1, 1491), _p("failed", 8, 0, error="crash: died")]  # fmt: skip
    mark_frontier(points, "hip")
    assert [p["label"] for p in points if p["frontier"]] == ["as built", "1,1", "3,3", "4,4"]


def test_a_point_better_in_one_and_equal_in_the_other_dominates():
    # a: b spills less at the same waves; d: b has more waves at the same spills.
    points = [_p("a", 4, 10), _p("b", 4, 9), _p("c", 5, 10), _p("d", 3, 9)]
    mark_frontier(points, "hip")
    assert [p["frontier"] for p in points] == [False, True, True, False]


def test_spilled_dwords_count_sgpr_lanes_too():
    # 9 VGPR + 5 SGPR dwords is more than 10 VGPR dwords at the same waves.
    points = [_p("vgpr only", 5, 10), _p("both", 5, 9, sgpr_spilled=5)]
    mark_frontier(points, "hip")
    assert [p["frontier"] for p in points] == [True, False]


IR = """define amdgpu_kernel void @k(ptr %0) local_unnamed_addr #0 {
  ret void
}
define void @helper() #0 {
  ret void
}
attributes #0 = { nounwind "amdgpu-agpr-alloc"="0" "amdgpu-flat-work-group-size"="1,256" "uniform-work-group-size" }
attributes #1 = { nounwind }
"""


def test_the_kernel_gets_its_own_changed_attribute_group():
    (k,) = kernels(IR)
    assert (k.name, k.group) == ("k", 0)
    changed = with_attributes(IR, k, {"amdgpu-waves-per-eu": "4,4", "amdgpu-agpr-alloc": None})
    assert "define amdgpu_kernel void @k(ptr %0) local_unnamed_addr #2 {" in changed
    assert "define void @helper() #0 {" in changed  # the shared group is left to the helper
    assert 'attributes #0 = { nounwind "amdgpu-agpr-alloc"="0"' in changed
    (k2,) = kernels(changed)
    assert attributes(changed, k2) == {"amdgpu-waves-per-eu": "4,4", "amdgpu-flat-work-group-size": "1,256",
                                       "uniform-work-group-size": None}  # fmt: skip


class _DiesWhenUnpickled:
    """An argument whose unpickling in the child ends the child, as a code generator's abort would."""

    def __reduce__(self):
        return (os._exit, (7,))


def test_a_timeout_and_a_dead_child_cost_one_request():
    with Codegen(timeout=60) as codegen:
        with pytest.raises(PointFailed) as slow:
            codegen.call("llvm_describe", "/nonexistent/libLLVM.so", timeout=0.0)
        assert slow.value.kind == "timeout"
        with pytest.raises(PointFailed) as refused:
            codegen.call("llvm_describe", "/nonexistent/libLLVM.so")
        assert refused.value.kind == "error" and "/nonexistent/libLLVM.so" in str(refused.value)
        with pytest.raises(PointFailed) as died:  # the child dies in the middle of a request
            codegen.call("llvm_describe", _DiesWhenUnpickled())
        assert died.value.kind == "crash" and "exit status 7" in str(died.value)
        with pytest.raises(PointFailed) as again:  # a fresh child answers the next one
            codegen.call("llvm_describe", "/nonexistent/libLLVM.so")
        assert again.value.kind == "error"
