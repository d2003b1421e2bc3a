"""Triton and Inductor caches as inputs: every kernel at the launch its cache records.

The cache is made in the session by Triton 3.9 compiling test_triton.py's kernels for gfx942,
gfx950 and gfx1100 offline (tests/triton_cache_fixture.py). Oracles:

* Triton's own ``CompiledKernel.metadata`` (from the compile, not from the files amdocc reads):
  the kernel's name, and the launch ``num_warps × warp_size`` threads with ``shared`` bytes of
  dynamic LDS;
* LLVM's ``; Occupancy:`` comment in the ``.amdgcn`` Triton wrote into the cache;
* HIP's answer at that launch worked out by hand (test_triton.HIP_BY_HAND, from
  docs/hip-occupancy.md), and the LDS bound by hand: the CU's LDS (64 KiB on
  gfx942, 160 KiB on gfx950, docs/llvm-occupancy.md §1) divided by the recorded dynamic LDS.

torch.compile cannot make an Inductor cache here: the CPU wheel of torch 2.13 has no HIP device
(``torch.version.hip`` is None, so Inductor would pick Triton's CUDA backend), and Inductor's
pattern setup runs real tensor ops on the device ("PyTorch is not linked with support for cuda
devices" from torch/_inductor/fx_passes/misc_patterns.py). Inductor keeps Triton's cache under
``<cache>/triton/<device>/``; the tree test lays Triton's real cache out that way.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from amdocc.cli.main import main
from triton_cache_fixture import CASES, HIP_BY_HAND, session_cache

LDS_PER_CU = {"gfx942": 65536, "gfx950": 163840}  # docs/llvm-occupancy.md §1


@pytest.fixture(scope="session")
def triton_cache(tmp_path_factory):
    return session_cache(tmp_path_factory)


def occupancy_json(capsys, *argv):
    code = main(["occupancy", "--json", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def by_case(results, made):
    """Results keyed by (kernel, arch) through the cache entry's path."""
    where = {str(v["hsaco"]): k for k, v in made.items()}
    out = {}
    for r in results:
        key = where[r["path"]]
        assert key not in out
        out[key] = r
    return out


def test_every_kernel_at_its_recorded_launch(capsys, triton_cache):
    cache, made = triton_cache
    code, doc, err = occupancy_json(capsys, cache)
    assert code == 0, err
    results = by_case(doc["results"], made)
    assert set(results) == set(CASES)
    for case, r in results.items():
        m = made[case]
        assert r["kernel"] == m["name"]  # the Triton name
        assert r["processor"] == m["arch"]
        assert r["block_size"] == m["num_warps"] * m["warp_size"]
        assert r["dynamic_lds"] == m["shared"]
        assert r["blocks_per_cu"] == HIP_BY_HAND[case]["blocks"], case
        launch = r["launch"]
        assert launch["source"] == "triton-cache" and r["block_source"] == "triton-cache launch"
        assert r["dynamic_lds_source"] == "triton-cache launch"
        assert launch["file"] == str(m["hsaco"].with_suffix(".json"))
        assert launch["fields"] == {k: m[k] for k in ("num_warps", "warp_size", "shared", "arch")}
        assert launch["derived"] == {"block_size": "num_warps * warp_size", "dynamic_lds": "shared"}


def test_the_lds_bound_is_the_recorded_dynamic_lds(capsys, triton_cache):
    cache, made = triton_cache
    _, doc, _ = occupancy_json(capsys, cache)
    checked = 0
    for (name, arch), r in by_case(doc["results"], made).items():
        shared = made[name, arch]["shared"]
        if arch in LDS_PER_CU and shared:
            assert r["limits"]["lds"] == LDS_PER_CU[arch] // shared, (name, arch)
            checked += 1
    assert checked == 6  # matmul, matmul_agpr, softmax on gfx942 and gfx950


def test_llvm_model_equals_the_cached_amdgcn_comment(capsys, triton_cache):
    cache, made = triton_cache
    code, doc, err = occupancy_json(capsys, "--model", "llvm", cache)
    assert code == 0, err
    for case, r in by_case(doc["results"], made).items():
        amdgcn = made[case]["hsaco"].with_suffix(".amdgcn").read_text()
        assert amdgcn == made[case]["amdgcn_in_memory"]
        (comment,) = re.findall(r"^; Occupancy: (\d+)$", amdgcn, re.M)
        assert r["waves_per_simd"] == int(comment), case
        assert r["launch"]["block_size"] == made[case]["num_warps"] * made[case]["warp_size"]


def test_the_text_names_the_launch_record(capsys, triton_cache):
    _, made = triton_cache
    m = made["matmul", "gfx942"]
    assert main(["occupancy", str(m["hsaco"])]) == 0
    out = capsys.readouterr().out
    assert (
        f"launch from Triton metadata matmul_kernel.json: num_warps {m['num_warps']} x warp_size 64 = "
        f"{m['num_warps'] * 64} threads, shared {m['shared']} B dynamic LDS"
    ) in out


def test_given_values_win_over_the_record(capsys, triton_cache):
    _, made = triton_cache
    m = made["matmul", "gfx942"]
    _, doc, _ = occupancy_json(capsys, "--block", 64, "--dynamic-lds", 0, m["hsaco"])
    (r,) = doc["results"]
    assert (r["block_size"], r["dynamic_lds"], r["block_source"], r["dynamic_lds_source"]) == (64, 0, "given", "given")
    assert r["limits"]["lds"] is None  # no LDS at all: the record's 8192 B were not used
    _, doc, _ = occupancy_json(capsys, "--dynamic-lds", 16384, m["hsaco"])
    (r,) = doc["results"]
    assert (r["block_size"], r["dynamic_lds"]) == (256, 16384)
    assert r["limits"]["lds"] == 65536 // 16384


def test_inductor_cache_tree(capsys, triton_cache, tmp_path):
    """Inductor's cache: Triton's entries under triton/<device>/, beside Inductor's own files."""
    cache, made = triton_cache
    root = tmp_path / "torchinductor_user"
    shutil.copytree(cache, root / "triton" / "0")
    (root / "fxgraph" / "ab").mkdir(parents=True)
    (root / "fxgraph" / "ab" / "fabcdef").write_bytes(b"\x80\x04\x95 not a code object")
    (root / "ab").mkdir()
    (root / "ab" / "cabcdef.py").write_text("# kernel source\nimport triton\n")
    code, doc, err = occupancy_json(capsys, root)
    assert code == 0, err
    assert len(doc["results"]) == len(CASES)
    for r in doc["results"]:
        rel = r["path"].split("/triton/0/", 1)[1]
        (case,) = [k for k, v in made.items() if str(v["hsaco"]).endswith(rel)]
        m = made[case]
        assert (r["kernel"], r["block_size"], r["dynamic_lds"]) == (
            m["name"],
            m["num_warps"] * m["warp_size"],
            m["shared"],
        )
        assert r["blocks_per_cu"] == HIP_BY_HAND[case]["blocks"]


def _copy_entry(made, case, tmp_path):
    src = made[case]["hsaco"]
    dst = tmp_path / src.parent.name
    shutil.copytree(src.parent, dst)
    return dst / src.name


@pytest.mark.parametrize(
    "change,message",
    [
        ({"target": {"backend": "hip", "arch": "gfx950", "warp_size": 64}}, "Triton metadata is for gfx950"),
        ({"warp_size": 32}, "Triton metadata warp_size 32"),
        ({"num_warps": 0}, "num_warps is 0, not an integer >= 1"),
        ({"shared": -1}, "shared is -1, not an integer >= 0"),
    ],
)
def test_an_inconsistent_record_is_refused_naming_the_file(capsys, triton_cache, tmp_path, change, message):
    hsaco = _copy_entry(triton_cache[1], ("add", "gfx942"), tmp_path)
    side = hsaco.with_suffix(".json")
    meta = json.loads(side.read_text())
    if "target" in change:
        meta["target"] = change["target"]
    else:
        meta.update(change)
        meta["target"].pop("warp_size", None) if "warp_size" in change else None
    side.write_text(json.dumps(meta))
    code = main(["occupancy", str(hsaco)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(side) in err and message in err


def test_a_json_that_is_not_tritons_is_not_a_launch(capsys, triton_cache, tmp_path):
    hsaco = _copy_entry(triton_cache[1], ("matmul", "gfx942"), tmp_path)
    hsaco.with_suffix(".json").write_text(json.dumps({"something": "else"}))
    _, doc, _ = occupancy_json(capsys, hsaco)
    (r,) = doc["results"]
    assert r["launch"] is None and r["dynamic_lds"] == 0 and r["dynamic_lds_source"] == "default"
    assert r["block_source"] == "max_flat_workgroup_size"


def test_check_judges_lds_at_the_recorded_launch(capsys, triton_cache, tmp_path):
    """A record whose shared memory exceeds the processor fails the lds rule, named by size."""
    hsaco = _copy_entry(triton_cache[1], ("matmul", "gfx942"), tmp_path)
    side = hsaco.with_suffix(".json")
    meta = json.loads(side.read_text())
    meta["shared"] = 65537
    side.write_text(json.dumps(meta))
    code = main(["check", "--no-config", "--json", "--rules", "lds", str(hsaco)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    (v,) = doc["violations"]
    assert (v["rule"], v["value"], v["limit"]) == ("lds", 65537, 65536)
