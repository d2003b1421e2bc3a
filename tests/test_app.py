"""The operations of amdocc.app, called from Python.

Each returns the records its command prints with --json (the CLI's outputs are pinned by their
own oracle tests), and the values that reach a Python caller agree with the oracles next to the
fixtures: llvm-readelf-22's metadata, llc-22's "; Occupancy:" and the HIP reference.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import FIXTURES, ROOT
from oracle.hip_reference import hip_blocks
from oracle.llvm22 import metadata_documents

DIFF = FIXTURES / "diff"
BASE, MORE_VGPR, MORE_LDS = (str(DIFF / f"diff_{n}.hsaco") for n in ("base", "more_vgpr", "more_lds"))


def llvm_kernels(path: str) -> dict[str, dict]:
    """The kernels of a fixture as llvm-readelf-22 --notes printed them, by name."""
    (doc,) = metadata_documents(Path(f"{path}.readelf.txt").read_text())
    return {k[".name"]: k for k in doc["amdhsa.kernels"]}


def llc_occupancy(path: str) -> dict[str, int]:
    """llc-22's "; Occupancy:" (waves per SIMD) of each kernel of a fixture."""
    text = Path(f"{path}.kernel-info.txt").read_text()
    names = re.findall(r"^# kernel (\S+)", text, re.M)
    return dict(zip(names, map(int, re.findall(r"^; Occupancy: (\d+)", text, re.M)), strict=True))


def cli_json(capsys, *argv: str) -> tuple[int, dict]:
    status = main(list(argv))
    return status, json.loads(capsys.readouterr().out)


def plain(value: object) -> object:
    """A record as its JSON text reads back (tuples become lists)."""
    return json.loads(json.dumps(value))


# -- the operations return what their commands print --------------------------------------------


@pytest.mark.parametrize(
    ("operation", "kwargs", "argv"),
    [
        ("inspect", {}, ["inspect", "--json", str(DIFF)]),
        (
            "inspect",
            {"target": "gfx942", "kernel": "main"},
            ["inspect", "--json", "--target", "gfx942", "--kernel", "main", str(DIFF)],
        ),
        ("occupancy", {}, ["occupancy", "--json", str(DIFF)]),
        ("occupancy", {"model": "llvm"}, ["occupancy", "--json", "--model", "llvm", str(DIFF)]),
        (
            "occupancy",
            {"block": 256, "dynamic_lds": 4096, "device": "MI300X"},
            ["occupancy", "--json", "--block", "256", "--dynamic-lds", "4096", "--device", "MI300X", str(DIFF)],
        ),
        ("check", {}, ["check", "--json", "--no-config", str(FIXTURES / "check")]),
        ("census", {}, ["census", "--json", str(DIFF)]),
    ],
)
def test_a_file_operation_returns_the_records_its_command_prints(capsys, operation, kwargs, argv):
    _, printed = cli_json(capsys, *argv)
    paths = argv[-1] if operation == "census" else [argv[-1]]
    assert plain(getattr(amdocc.app, operation)(paths, **kwargs)) == printed


def test_diff_and_census_compare_return_what_their_commands_print(capsys):
    status, printed = cli_json(capsys, "diff", "--json", "--fail-on", "all", BASE, MORE_VGPR)
    assert status == 1
    assert plain(amdocc.app.diff(BASE, MORE_VGPR, fail_on=printed["fail_on"])) == printed
    _, printed = cli_json(capsys, "census", "--json", "--fail-on", "vgpr", BASE, MORE_VGPR)
    assert plain(amdocc.app.census_compare(BASE, MORE_VGPR, fail_on=["vgpr"])) == printed


def test_sweep_split_and_gate_return_what_their_commands_print(capsys):
    _, printed = cli_json(capsys, "sweep", "--json", "--kernel", "k_main", "--blocks", "64,256", BASE)
    swept = amdocc.app.sweep(amdocc.load(BASE)[0].kernel("k_main"), blocks=[64, 256])
    assert plain(swept["grid"]) == printed["grid"] and swept["unit"] == printed["unit"]
    shape = ["--arch", "gfx942", "--seq-len", "1", "--seq-len-kv", "65536", "--rows-per-block", "4", "--block-kv", "64"]
    _, printed = cli_json(capsys, "split", "--json", *shape, "--kernel", "k_main", "--block", "256", BASE)
    split = amdocc.app.split(1, 65536, 4, 64, arch="gfx942", paths=[BASE], kernel="k_main", block_size=256)
    assert plain(split) == printed
    _, printed = cli_json(capsys, "split", "--json", "--grid-x", "8", "--effective-cus", "304", "--window-tiles",
                          "1024", "--max-splits", "64", "--overhead", "2")  # fmt: skip
    assert plain(amdocc.app.split_by_cost(8, 304, 1024, 64, 2)) == printed
    _, printed = cli_json(capsys, "gate", "--json", "--arch", "gfx942", "--device", "MI300X", "--qo-len", "4096",
                          "--kv-len", "4096")  # fmt: skip
    assert plain(amdocc.app.gate("gfx942", 4096, 4096, device="MI300X").as_dict()) == printed


# -- what a Python caller gets agrees with the oracles --------------------------------------------


def test_inspect_from_python_reports_the_metadata_llvm_readelf_prints():
    llvm = llvm_kernels(MORE_VGPR)
    (co,) = amdocc.app.inspect(MORE_VGPR)["code_objects"]
    assert {k["name"] for k in co["kernels"]} == set(llvm)
    for k in co["kernels"]:
        note = llvm[k["name"]]
        for key in ("vgpr_count", "sgpr_count", "agpr_count", "group_segment_fixed_size", "wavefront_size"):
            assert k[key] == note[f".{key}"], (k["name"], key)


def test_occupancy_from_python_matches_llc_and_the_hip_reference():
    for path in (BASE, MORE_VGPR, MORE_LDS):
        llc = llc_occupancy(path)
        results = amdocc.app.occupancy(path, model="llvm")["results"]
        assert {r["kernel"]: r["waves_per_simd"] for r in results} == llc
        notes = llvm_kernels(path)
        for r in amdocc.app.occupancy(path, block=256)["results"]:
            n = notes[r["kernel"]]
            want = hip_blocks(
                "gfx942", n[".vgpr_count"], 256, sgprs=n[".sgpr_count"], lds=n[".group_segment_fixed_size"]
            )
            assert r["blocks_per_cu"] == want, (path, r["kernel"])


def test_diff_from_python_names_the_regressions_the_metadata_shows():
    old, new = llvm_kernels(BASE), llvm_kernels(MORE_VGPR)
    result = amdocc.app.diff(BASE, MORE_VGPR, fail_on=["vgpr"])
    worse = {r["kernel"]: r["regressions"] for r in result["kernels"]}
    for name in old:
        assert ("vgpr" in worse[name]) == (new[name][".vgpr_count"] > old[name][".vgpr_count"]), name
    assert result["failing"] == sum(new[n][".vgpr_count"] > old[n][".vgpr_count"] for n in old) == 1


def test_census_rows_from_python_carry_the_metadata_llvm_readelf_prints():
    rows: list[dict] = []
    summary = amdocc.app.census(str(DIFF), rows=rows)
    notes = {(p, name): k for p in (BASE, MORE_VGPR, MORE_LDS) for name, k in llvm_kernels(p).items()}
    assert summary["kernels"] == len(rows) == len(notes)
    for r in rows:
        n = notes[str(DIFF / r["member"]), r["kernel"]]
        assert (r["vgprs"], r["sgprs"], r["lds"]) == (
            n[".vgpr_count"],
            n[".sgpr_count"],
            n[".group_segment_fixed_size"],
        )


def test_check_from_python_takes_its_settings_as_keywords():
    # diff_more_lds's k_main holds 32 KiB of static LDS (llvm-readelf): a floor of 3 waves per
    # SIMD at its declared 256 threads cannot be met where llc counts 2.
    loose = amdocc.app.check(MORE_LDS, rules=("launch",))
    strict = amdocc.app.check(MORE_LDS, rules=("occupancy",), min_occupancy=llc_occupancy(MORE_LDS)["k_main"] + 1)
    assert loose["summary"]["failing"] == 0
    assert [v["kernel"] for v in strict["violations"]] == ["k_main"]


def test_a_selection_that_matches_nothing_is_a_usage_error_naming_what_is_there():
    for operation in ("inspect", "occupancy", "check"):
        with pytest.raises(amdocc.UsageError, match="nearest: k_main"):
            getattr(amdocc.app, operation)(BASE, kernel="k_mian")
    with pytest.raises(amdocc.UsageError, match="built for gfx942"):
        amdocc.app.census(BASE, target="gfx1100")


# -- the layering ------------------------------------------------------------------------------


def imports_of(path) -> set[str]:
    """Every module a file imports, deferred and TYPE_CHECKING imports included (absolute names)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            module = f"{base}.{node.module}" if node.level and node.module else (node.module or base)
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
    return out


def test_the_application_never_imports_the_cli():
    for path in (ROOT / "amdocc" / "app").glob("*.py"):
        assert not {m for m in imports_of(path) if m.startswith("amdocc.cli")}, path.name


def test_a_cli_command_imports_only_the_shared_cli_helpers():
    shared = {
        "amdocc.cli.args",
        "amdocc.cli.render",
        "amdocc.cli.output",
        "amdocc.cli.notices",
        "amdocc.cli.model_args",
    }
    for path in (ROOT / "amdocc" / "cli").glob("*.py"):
        if path.stem in ("main", "__init__"):  # main dispatches to the commands
            continue
        own = {f"amdocc.cli.{path.stem}"}
        others = {m for m in imports_of(path) if m.startswith("amdocc.cli.") and m.count(".") == 2} - shared - own
        if path.stem in ("sweep", "tune_regs", "plot_tune"):
            # the sweep's and tune-regs' drawings, matplotlib imported only for --plot
            others -= {"amdocc.cli.plot", "amdocc.cli.plot_tune"}
        assert not others, (path.name, others)


def test_import_amdocc_does_not_load_the_application_and_amdocc_app_loads_on_use():
    code = (
        "import sys, amdocc; assert not [m for m in sys.modules if m.startswith('amdocc.app')]; "
        "f = amdocc.app.census; assert 'amdocc.app.census_op' in sys.modules and callable(f); "
        "assert 'amdocc.cli' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_an_operation_takes_a_path_object_as_it_takes_text():
    assert amdocc.app.occupancy(Path(BASE)) == amdocc.app.occupancy(BASE) == amdocc.app.occupancy([BASE])
    assert amdocc.app.diff(Path(BASE), Path(MORE_LDS)) == amdocc.app.diff(BASE, MORE_LDS)
    assert amdocc.app.census(DIFF) == amdocc.app.census(str(DIFF))
