"""The v1 CLI contracts (docs/cli.md), with values from oracles: the compiler's own ``; Occupancy:``
comments stored beside the fixtures, LLVM's metadata readings, and HIP's worked examples."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest

from amdocc.cli.main import COMMANDS, main
from conftest import FIXTURES, ROOT


def run_cli(capsys, *argv, stdin: bytes | None = None):
    if stdin is not None:
        old = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = main(list(argv))
    finally:
        if stdin is not None:
            sys.stdin = old
    out = capsys.readouterr()
    return code, out.out, out.err


def _kernel_infos():
    """(fixture file, {kernel: '; Occupancy:' value}) for every stored compiler listing."""
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    out = []
    for f in manifest["fixtures"]:
        info = f.get("oracle", {}).get("kernel_info")
        if info:
            out.append((f["file"], info))
    return out


def _occupancy_lines(text: str) -> dict[str, int]:
    values, kernel = {}, None
    for line in text.splitlines():
        if line.startswith("# kernel "):
            kernel = line.split(" ", 2)[2].strip()
        m = re.match(r"; Occupancy: (\d+)", line)
        if m and kernel:
            values[kernel] = int(m.group(1))
    return values


KERNEL_INFOS = _kernel_infos()
_RECORDS = {f["file"]: f for f in json.loads((FIXTURES / "manifest.json").read_text())["fixtures"]}


@pytest.mark.parametrize("file,info", KERNEL_INFOS, ids=[f for f, _ in KERNEL_INFOS])
def test_occupancy_llvm_json_equals_the_compilers_comment(capsys, file, info):
    expected = _occupancy_lines((FIXTURES / info).read_text())
    # A relocatable (kind elf-rel) holds local counts: answered only as a what-if on its processor
    # (docs/code-object-format.md); asked plainly, it is refused.
    relocatable = _RECORDS[file]["kind"] == "elf-rel"
    where = ["--what-if", "--target", *_RECORDS[file]["targets"]] if relocatable else []
    if relocatable:
        refused, _, said = run_cli(capsys, "occupancy", "--json", "--model", "llvm", str(FIXTURES / file))
        assert refused == 2 and "local counts, not launchable as built" in said
    code, out, err = run_cli(capsys, "occupancy", "--json", "--model", "llvm", *where, str(FIXTURES / file))
    assert code == 0, err
    results = json.loads(out)["results"]
    got = {r["kernel"]: r["waves_per_simd"] for r in results}
    assert got == expected
    for r in results:
        for key in (
            "path",
            "kernel",
            "target",
            "model",
            "block_size",
            "dynamic_lds",
            "blocks_per_cu",
            "waves_per_simd",
            "limiter",
        ):
            assert key in r
        assert r["model"] == "llvm" and r["block_size"] is None and r["blocks_per_cu"] is None


def test_occupancy_manual_mode_seed_case(capsys):
    code, out, _ = run_cli(
        capsys, "occupancy", "--json", "--target", "gfx950", "--vgprs", "452", "--agprs", "200", "--block", "128"
    )
    assert code == 0
    (r,) = json.loads(out)["results"]
    assert (r["blocks_per_cu"], r["model"], r["target"], r["block_size"], r["limiter"]) == (
        2,
        "hip",
        "gfx950",
        128,
        "vgpr",
    )


def test_occupancy_manual_arch_vgprs_form_the_total_by_the_target_rule(capsys):
    # gfx950 example 3: 78 arch + 32 AGPRs → .vgpr_count 112 → 4 blocks; gfx908 keeps max(78, 32).
    code, out, _ = run_cli(
        capsys, "occupancy", "--json", "--target", "gfx950", "--arch-vgprs", "78", "--agprs", "32", "--block", "256"
    )
    assert json.loads(out)["results"][0]["blocks_per_cu"] == 4
    code, out, _ = run_cli(
        capsys, "occupancy", "--json", "--target", "gfx950", "--vgprs", "78", "--arch-vgprs", "78", "--block", "256"
    )
    assert code == 2


def test_occupancy_device_and_profile_flags(capsys):
    _, out, _ = run_cli(
        capsys,
        "occupancy",
        "--json",
        "--device",
        "MI300X",
        "--vgprs",
        "32",
        "--sgprs",
        "92",
        "--block",
        "64",
        "--hip-profile",
        "2025",
    )
    assert json.loads(out)["results"][0]["blocks_per_cu"] == 32
    # rocm-systems PR #10618's figures: 32 before the trap reserve (the default, rocm-7.14), 28 with it.
    _, out, _ = run_cli(
        capsys, "occupancy", "--json", "--device", "MI300X", "--vgprs", "32", "--sgprs", "92", "--block", "64"
    )
    assert json.loads(out)["results"][0]["blocks_per_cu"] == 32
    _, out, _ = run_cli(
        capsys,
        "occupancy",
        "--json",
        "--device",
        "MI300X",
        "--vgprs",
        "32",
        "--sgprs",
        "92",
        "--block",
        "64",
        "--hip-profile",
        "develop",
    )
    assert json.loads(out)["results"][0]["blocks_per_cu"] == 28


def test_occupancy_file_mode_defaults_to_the_required_workgroup_size(capsys):
    # Without --block a kernel runs at its .reqd_workgroup_size, else its .max_flat_workgroup_size.
    # The OpenCL fixture has one kernel of each kind; the expected sizes come from LLVM's reading.
    from oracle.llvm22 import metadata_documents

    fixture = FIXTURES / "elf" / "opencl_gfx942_cov6.hsaco"
    (doc,) = metadata_documents((FIXTURES / "elf" / "opencl_gfx942_cov6.hsaco.readelf.txt").read_text())
    expected = {}
    for k in doc["amdhsa.kernels"]:
        reqd = k.get(".reqd_workgroup_size")
        expected[k[".name"]] = (
            (reqd[0] * reqd[1] * reqd[2], "reqd_workgroup_size")
            if reqd
            else (k[".max_flat_workgroup_size"], "max_flat_workgroup_size")
        )
    assert {source for _, source in expected.values()} == {"reqd_workgroup_size", "max_flat_workgroup_size"}
    code, out, err = run_cli(capsys, "occupancy", "--json", str(fixture))
    assert code == 0, err
    got = {r["kernel"]: (r["block_size"], r["block_source"]) for r in json.loads(out)["results"]}
    assert got == expected


def test_occupancy_file_mode_on_the_aiter_style_kernel(capsys):
    # The AITER-style fixture has .max_flat_workgroup_size 512 and no .reqd_workgroup_size: 256
    # unified VGPRs → 2 waves per SIMD → 8 waves per CU, one 512-thread block
    # (docs/consumers.md §2).
    _, out, _ = run_cli(capsys, "occupancy", "--json", str(FIXTURES / "elf" / "hand_aiter_gfx942.hsaco"))
    (r,) = json.loads(out)["results"]
    assert (r["block_size"], r["blocks_per_cu"]) == (512, 1)


def test_occupancy_target_filter_on_a_fat_binary(capsys):
    sample = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
    _, out, _ = run_cli(capsys, "occupancy", "--json", "--block", "256", "--target", "gfx942", str(sample))
    results = json.loads(out)["results"]
    # The gfx942 entry's kernels, as LLVM read them when the sample was built (manifest.json).
    manifest = json.loads((FIXTURES / "manifest.json").read_text())["sample"]
    (entry,) = [e for b in manifest["bundles"] for e in b["entries"] if e.get("target") == "gfx942"]
    assert {r["target"] for r in results} == {"gfx942"}
    assert sorted(r["kernel"] for r in results) == sorted(k[".name"] for k in entry["llvm_reported"]["kernels"])


def test_inspect_json_contract_on_stdin(capsys):
    data = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
    code, out, _ = run_cli(capsys, "inspect", "--json", "-", stdin=data)
    assert code == 0
    doc = json.loads(out)
    (co,) = doc["code_objects"]
    assert (co["path"], co["target"], co["processor"], co["code_object_version"]) == ("-", "gfx942", "gfx942", 4)
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    reported = next(f for f in manifest["fixtures"] if f["file"] == "elf/gfx942_cov4.hsaco")["llvm_reported"]
    by_name = {k["name"]: k for k in co["kernels"]}
    for llvm in reported["kernels"]:
        k = by_name[llvm[".name"]]
        for key, value in llvm.items():
            assert k[key.lstrip(".")] == value, key
        assert k["descriptor"]["next_free_vgpr"] > 0 and isinstance(k["findings"], list)


def test_usage_errors_exit_2(capsys):
    assert run_cli(capsys, "occupancy", "--vgprs", "8", "--block", "64")[0] == 2  # no target
    assert run_cli(capsys, "occupancy", "--target", "gfx999", "--vgprs", "8", "--block", "64")[0] == 2
    assert run_cli(capsys, "occupancy", "--target", "gfx942", "--vgprs", "8")[0] == 2  # hip needs --block
    code, _, err = run_cli(capsys, "occupancy", "--kernel", "(", str(FIXTURES / "elf" / "gfx942_cov4.hsaco"))
    assert code == 2 and "regular expression" in err


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_is_complete(command):
    args = [sys.executable, "-m", "amdocc"] + ([command] if command else []) + ["--help"]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "usage: amdocc" in proc.stdout
    if command is None:
        for name in COMMANDS:
            assert name in proc.stdout


@pytest.fixture
def tree_with_a_bad_file(tmp_path):
    """Every fixture with a compiler listing, in a nested tree, plus one truncated code object."""
    expected = {}
    for i, (file, info) in enumerate(KERNEL_INFOS):
        if _RECORDS[file]["kind"] == "elf-rel":
            continue  # local counts: no plain answer (test_occupancy_llvm_json_equals_the_compilers_comment)
        dest = tmp_path / f"d{i % 3}" / f"{i:02d}_{file.replace('/', '_')}"
        dest.parent.mkdir(exist_ok=True)
        dest.write_bytes((FIXTURES / file).read_bytes())
        expected[str(dest)] = _occupancy_lines((FIXTURES / info).read_text())
    bad = tmp_path / "d1" / "zz_truncated.co"
    bad.write_bytes((FIXTURES / KERNEL_INFOS[0][0]).read_bytes()[:300])
    return tmp_path, expected, bad


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_occupancy_over_a_tree_keeps_every_good_file_when_one_is_bad(capsys, tree_with_a_bad_file, jobs):
    root, expected, bad = tree_with_a_bad_file
    code, out, err = run_cli(capsys, "occupancy", "--json", "--model", "llvm", "--jobs", jobs, str(root))
    assert code == 2
    assert str(bad) in err and len(err.strip().splitlines()) == 1
    got = {}
    for r in json.loads(out)["results"]:
        got.setdefault(r["path"], {})[r["kernel"]] = r["waves_per_simd"]
    assert got == expected


def test_inspect_and_occupancy_print_the_same_with_one_or_two_processes(capsys, tree_with_a_bad_file):
    root = str(tree_with_a_bad_file[0])
    for argv in (["inspect"], ["inspect", "--json"], ["occupancy", "--block", "256"]):
        serial = run_cli(capsys, *argv, "--jobs", "1", root)
        pooled = run_cli(capsys, *argv, "--jobs", "2", root)
        assert serial == pooled and serial[0] == 2
