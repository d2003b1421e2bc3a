"""How diff and census OLD NEW pair kernels that changed more than their counts
(amdocc.identity, docs/verdicts.md): a release that moved from gfx9-4-generic to gfx942 code,
compared on gfx942 (--target/--device), matches kernel by kernel; a C++ kernel whose parameter
list changed is one kernel changed, not one removed and one added; overloads and other template
instances never pair that way.

The builds are two real compiles by clang-22 of sources that differ as a release does; the
names, targets and register counts every assertion names are read back by llvm-readelf-22."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amdocc.cli.main import main
from amdocc.identity import KernelId, function_of, match
from test_generic_targets import compile_hip, notes

pytestmark = pytest.mark.llvm22

OLD = """
#include "hip_defs.h"
namespace ops {
template <int N>
__global__ __launch_bounds__(256) void scale(float* y, int n) { int i = TID_X() + BID_X() * 256; if (i < n) y[i] *= N; }
template __global__ void scale<2>(float*, int);
}
__global__ __launch_bounds__(256) void axpy(float a, const float* x, float* y, int n) {
  int i = TID_X() + BID_X() * 256; if (i < n) y[i] = a * x[i] + y[i];
}
"""
# The next release: axpy takes a stride (same function, new parameter list).
NEW = OLD.replace("float* y, int n) {\n  int i", "float* y, int n, int stride) {\n  int i").replace(
    "y[i] = a * x[i]", "y[i * stride] = a * x[i]"
)
# axpy overloaded: two kernels hold the function "axpy" in each build.
OVERLOADS = """
__global__ __launch_bounds__(256) void axpy(int a, const int* x, int* y, int n) {
  int i = TID_X() + BID_X() * 256; if (i < n) y[i] = a * x[i] + y[i];
}
"""
AXPY_OLD, AXPY_NEW, SCALE = "_Z4axpyfPKfPfi", "_Z4axpyfPKfPfii", "_ZN3ops5scaleILi2EEEvPfi"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    """Each release as a directory holding lib.co, as a release ships it under one name."""
    work = tmp_path_factory.mktemp("releases")
    made = {}
    for name, source, arch in (
        ("old_generic", OLD, "gfx9-4-generic"),
        ("old_gfx942", OLD, "gfx942"),
        ("new_gfx942", NEW, "gfx942"),
        ("new_generic", NEW, "gfx9-4-generic"),
        ("overloads_old", OLD + OVERLOADS, "gfx942"),
        ("overloads_new", NEW + OVERLOADS, "gfx942"),
        ("old_xnack_on", OLD, "gfx942:xnack+"),
        (
            "wider_gfx942",
            OLD.replace("__launch_bounds__(256) void scale", "__launch_bounds__(1024) void scale"),
            "gfx942",
        ),
    ):
        (work / name).mkdir()
        made[name] = compile_hip(source, arch, work / name / "lib.co")
    # The oracle: what each build holds, as LLVM's reader prints it.
    for name, path in made.items():
        header, kernels = notes(path)
        assert header["processor"] == ("gfx9-4-generic" if "generic" in name else "gfx942")
        assert ("xnack+" in header["features"]) == ("xnack_on" in name)
        axpy = AXPY_NEW if "new" in name else AXPY_OLD
        assert {axpy, SCALE} <= set(kernels)
    return made


def vgprs(path: Path, name: str) -> int:
    return int(notes(path)[1][name][".vgpr_count"])


def test_a_release_moved_from_generic_to_its_member_pairs_when_asked_on_the_member(capsys, builds):
    old, new = builds["old_generic"], builds["new_gfx942"]
    # Not asked for a member: two targets, nothing in common.
    code, out, _ = cli(capsys, "diff", "--json", old.parent, new.parent)
    result = json.loads(out)
    assert code == 0 and result["kernels"] == [] and len(result["added"]) == len(result["removed"]) == 2
    for flag in (("--target", "gfx942"), ("--device", "MI300X")):
        code, out, _ = cli(capsys, "diff", "--json", *flag, old.parent, new.parent)
        result = json.loads(out)
        assert code == 0 and result["added"] == [] and result["removed"] == []
        rows = {r["kernel"]: r for r in result["kernels"]}
        assert set(rows) == {SCALE, AXPY_NEW}
        scale = rows[SCALE]
        assert (scale["matched_by"], scale["target"], scale["was"]["target"]) == (
            "target",
            "gfx942",
            "gfx9-4-generic on gfx942",
        )
        assert (scale["old"]["vgpr"], scale["new"]["vgpr"]) == (vgprs(old, SCALE), vgprs(new, SCALE))
        assert scale["location"] == "lib.co" and scale["old"]["blocks_per_cu"] is not None
        # Retargeted and re-signed at once: still one kernel.
        assert (rows[AXPY_NEW]["matched_by"], rows[AXPY_NEW]["was"]["kernel"]) == ("signature", AXPY_OLD)
        code, out, _ = cli(capsys, "census", "--json", *flag, old.parent, new.parent)
        result = json.loads(out)
        assert code == 0 and result["matched"] == 2 and result["added"] == result["removed"] == []
        assert {(c["kernel"], c["matched_by"]) for c in result["changes"]} == {
            (SCALE, "target"),
            (AXPY_NEW, "signature"),
        }
    code, out, _ = cli(capsys, "diff", "--target", "gfx942", old.parent, new.parent)
    assert code == 0 and "(rebuilt; was gfx9-4-generic on gfx942)" in out and "removed" not in out
    code, out, _ = cli(capsys, "census", "--target", "gfx942", old.parent, new.parent)
    assert "2 kernel(s) matched" in out and "0 added, 0 removed" in out


def test_code_for_two_target_ids_pairs_only_on_a_processor_named(capsys, builds):
    # gfx942:xnack+ code and gfx942 code (xnack "any") are two targets; on gfx942:xnack+, where
    # both run, they are one kernel rebuilt.
    old, new = builds["old_xnack_on"], builds["old_gfx942"]
    code, out, _ = cli(capsys, "diff", "--json", old.parent, new.parent)
    result = json.loads(out)
    assert code == 0 and result["kernels"] == [] and len(result["added"]) == len(result["removed"]) == 2
    code, out, _ = cli(capsys, "census", "--json", old.parent, new.parent)
    result = json.loads(out)
    assert result["matched"] == 0 and len(result["added"]) == len(result["removed"]) == 2
    code, out, _ = cli(capsys, "diff", "--json", "--target", "gfx942:xnack+", old.parent, new.parent)
    result = json.loads(out)
    assert {(r["kernel"], r["matched_by"], r["was"]["target"]) for r in result["kernels"]} == {
        (SCALE, "target", "gfx942:xnack+"),
        (AXPY_OLD, "target", "gfx942:xnack+"),
    }
    assert result["added"] == result["removed"] == []


def test_both_builds_are_evaluated_at_the_new_kernels_block_size(capsys, builds):
    # scale<2> now declares 1024 threads (was 256). HIP on gfx942 with at most 64 VGPRs: 8 waves
    # per SIMD, 4 SIMDs, so 32 wave64s per CU; a 1024-thread workgroup is 16 of them: 2 per CU,
    # for the old build as for the new (at the old 256 it would have been 32 // 4 = 8).
    old, new = builds["old_gfx942"], builds["wider_gfx942"]
    assert max(vgprs(old, SCALE), vgprs(new, SCALE)) <= 64
    assert int(notes(new)[1][SCALE][".max_flat_workgroup_size"]) == 1024
    code, out, _ = cli(capsys, "diff", "--json", old, new)
    scale = next(r for r in json.loads(out)["kernels"] if r["kernel"] == SCALE)
    assert (scale["block_size"], scale["old"]["blocks_per_cu"], scale["new"]["blocks_per_cu"]) == (1024, 2, 2)
    assert code == 0


def test_a_changed_parameter_list_is_one_kernel_changed(capsys, builds):
    old, new = builds["old_gfx942"], builds["new_gfx942"]
    code, out, _ = cli(capsys, "diff", "--json", "--fail-on", "vgpr", old, new)
    result = json.loads(out)
    assert result["added"] == [] and result["removed"] == []
    axpy = next(r for r in result["kernels"] if r["kernel"] == AXPY_NEW)
    assert (axpy["matched_by"], axpy["was"]["kernel"]) == ("signature", AXPY_OLD)
    assert (axpy["old"]["vgpr"], axpy["new"]["vgpr"]) == (vgprs(old, AXPY_OLD), vgprs(new, AXPY_NEW))
    grew = vgprs(new, AXPY_NEW) > vgprs(old, AXPY_OLD)
    assert code == (1 if grew else 0) and ("vgpr" in axpy["fails"]) == grew
    code, out, _ = cli(capsys, "diff", old, new)
    assert "(signature changed; was axpy(float, float const*, float*, int))" in out
    code, out, _ = cli(capsys, "diff", "--mangled", old, new)
    assert f"(signature changed; was {AXPY_OLD})" in out
    code, out, _ = cli(capsys, "census", "--json", old, new)
    (change,) = [c for c in json.loads(out)["changes"] if c["kernel"] == AXPY_NEW]
    assert change["matched_by"] == "signature" and change["was"]["kernel"] == AXPY_OLD
    # Without --target, generic and gfx942 builds of one release are two targets: no signature
    # pairing across them either.
    code, out, _ = cli(capsys, "diff", "--json", builds["old_generic"], new)
    assert json.loads(out)["kernels"] == []


def test_an_overloaded_function_is_never_paired_by_signature(capsys, builds):
    code, out, _ = cli(capsys, "diff", "--json", builds["overloads_old"], builds["overloads_new"])
    result = json.loads(out)
    assert code == 0
    assert [k["kernel"] for k in result["removed"]] == [AXPY_OLD]
    assert [k["kernel"] for k in result["added"]] == [AXPY_NEW]
    assert {r["matched_by"] for r in result["kernels"]} == {"identity"}


def test_the_signature_rule_as_a_function():
    # llvm-cxxfilt-22 prints these as "axpy(float, float const*, float*, int)",
    # "void ops::scale<2>(float*, int)": the function is what comes before the parameters.
    assert function_of(AXPY_OLD) == function_of(AXPY_NEW) == "axpy"
    assert function_of(SCALE) == "ops::scale<2>" != function_of("_ZN3ops5scaleILi3EEEvPfi")
    assert function_of("saxpy") is None and function_of("_Zbogus") is None

    def fn(name: str) -> str | None:
        return function_of(name)

    def ids(*names: str, target: str = "gfx942") -> dict[KernelId, str]:
        return {KernelId("lib", target, n): n for n in names}

    m = match(ids(AXPY_OLD, SCALE), ids(AXPY_NEW, SCALE), function=fn)
    assert [(x.name, y.name) for x, y, *_ in m.resigned] == [(AXPY_OLD, AXPY_NEW)] and not m.added
    # Another target, or another location: not the same kernel.
    m = match(ids(AXPY_OLD), ids(AXPY_NEW, target="gfx950"), function=fn)
    assert not m.resigned and len(m.added) == len(m.removed) == 1
    # Without the rule (function=None) the old behaviour: removed and added.
    m = match(ids(AXPY_OLD), ids(AXPY_NEW))
    assert not m.resigned and len(m.added) == 1
    # Held by a second kernel on one side (an overload): not unique, not paired.
    other = "_Z4axpyiPKiPii"
    m = match(ids(AXPY_OLD, other), ids(AXPY_NEW), function=fn)
    assert not m.resigned and [k.name for k, _ in m.removed] == sorted([AXPY_OLD, other])
    m = match(ids(AXPY_OLD), ids(AXPY_NEW, other), function=fn)
    assert not m.resigned and [k.name for k, _ in m.added] == sorted([AXPY_NEW, other])


def test_retargeting_pairs_only_on_one_processor_and_equal_copies():
    def ids(target: str, n: int = 1, processor: str = "gfx942") -> dict[KernelId, str]:
        return {KernelId("lib", target, "k", c): processor for c in range(n)}

    m = match(ids("gfx9-4-generic on gfx942"), ids("gfx942"), processor=lambda p: p)
    assert [(x.target, y.target) for x, y, *_ in m.retargeted] == [("gfx9-4-generic on gfx942", "gfx942")]
    m = match(ids("gfx9-4-generic", processor="gfx9-4-generic"), ids("gfx942"), processor=lambda p: p)
    assert not m.retargeted and len(m.removed) == 1
    # Two copies came for one that left (xnack+ and xnack- builds): which one? Left unpaired.
    two = {**ids("gfx942:xnack+"), **ids("gfx942:xnack-")}
    m = match(ids("gfx9-4-generic on gfx942"), two, processor=lambda p: p)
    assert not m.retargeted and (len(m.removed), len(m.added)) == (1, 2)
