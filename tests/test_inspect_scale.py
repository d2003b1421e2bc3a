"""inspect at library scale: JSON lines and --fields, and a large library cut across workers.

The values are checked against LLVM 22's own readelf output stored beside each fixture (the
same oracle as test_fixtures.py); the parallel runner must print exactly what one process prints.
"""

from __future__ import annotations

import json

import pytest

from amdocc.app import parallel
from amdocc.cli.main import main
from amdocc.containers import pieces, plan
from conftest import FIXTURES
from oracle.llvm22 import metadata_documents

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
BARE = [f for f in MANIFEST["fixtures"] if f["kind"] == "elf"]
TWO_TU = FIXTURES / "containers" / "libhip_two_tu_plain.so"


def _inspect(capsys, *argv) -> tuple[int, str]:
    code = main(["inspect", *map(str, argv)])
    return code, capsys.readouterr().out


def test_json_lines_carry_llvms_numbers_for_every_kernel(capsys):
    for fixture in BARE:
        code, out = _inspect(capsys, "--json-lines", FIXTURES / fixture["file"])
        assert code == 0
        lines = [json.loads(line) for line in out.splitlines()]
        (doc,) = metadata_documents((FIXTURES / fixture["oracle"]["readelf"]).read_text())
        if "amdhsa.kernels" not in doc:
            continue  # CO v2 YAML names its keys differently; test_fixtures.py covers it
        llvm = doc["amdhsa.kernels"]
        assert [line["name"] for line in lines] == [k[".name"] for k in llvm]
        for line, k in zip(lines, llvm, strict=True):
            for key in (
                "vgpr_count",
                "agpr_count",
                "sgpr_count",
                "group_segment_fixed_size",
                "private_segment_fixed_size",
                "kernarg_segment_size",
                "wavefront_size",
                "max_flat_workgroup_size",
                "sgpr_spill_count",
                "vgpr_spill_count",
            ):
                assert line[key] == k.get("." + key), (fixture["file"], line["name"], key)
            assert "descriptor" not in line and "metadata" not in line


def test_fields_choose_the_kernel_keys_in_json_and_json_lines(capsys):
    path = FIXTURES / BARE[-1]["file"]
    _, full = _inspect(capsys, "--json", path)
    _, some = _inspect(capsys, "--json", "--fields", "name,vgpr_count,descriptor", path)
    full, some = json.loads(full), json.loads(some)
    for a, b in zip(full["code_objects"][0]["kernels"], some["code_objects"][0]["kernels"], strict=True):
        assert b == {"name": a["name"], "vgpr_count": a["vgpr_count"], "descriptor": a["descriptor"]}
    _, lines = _inspect(capsys, "--json-lines", "--fields", "symbol,metadata", path)
    assert [json.loads(x)["metadata"] for x in lines.splitlines()] == [
        k["metadata"] for k in full["code_objects"][0]["kernels"]
    ]


def test_json_lines_report_skipped_entries_and_errors(tmp_path, capsys):
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"\x7fELF" + b"\0" * 10)
    code, out = _inspect(capsys, "--json-lines", TWO_TU, bad)
    assert code == 2
    kinds = [next(iter(json.loads(line))) if "name" not in json.loads(line) else "kernel" for line in out.splitlines()]
    assert "skipped" in kinds and kinds[-1] == "error" and kinds.count("kernel") > 0


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--fields", "name"], "give it with --json or --json-lines"),
        (["--json", "--fields", "name,nope"], "unknown field 'nope'"),
        (["--json", "--json-lines"], "give one"),
    ],
)
def test_inspect_output_options_are_checked(capsys, argv, needle):
    assert main(["inspect", *argv, str(TWO_TU)]) == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("library", ["libhip_two_tu_plain.so", "libhip_two_tu_ccob.so"])
def test_a_library_cut_into_pieces_prints_what_one_process_prints(capsys, monkeypatch, library):
    path = FIXTURES / "containers" / library
    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # one container per piece
    cut = plan(str(path))
    assert cut is not None and len(cut) == 2  # the fixture's two translation units
    for form in (["--json"], [], ["--json-lines"]):
        _, serial = _inspect(capsys, *form, "--jobs", "1", path)
        code, pooled = _inspect(capsys, *form, "--jobs", "2", path)
        assert code == 0 and pooled == serial


def test_a_wheel_cut_into_parts_prints_what_one_process_prints(capsys, monkeypatch, tmp_path):
    import zipfile

    wheel = tmp_path / "w-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("w/__init__.py", b"")
        for name in ("libhip_two_tu_ccob.so", "hip_win.dll", "libhip_plain.so"):
            z.writestr(f"w/{name}", (FIXTURES / "containers" / name).read_bytes())
    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    monkeypatch.setattr(pieces, "SPILL_BYTES", 0)  # every library member is cut
    parts = plan(str(wheel), spill_dir=str(tmp_path))
    assert parts is not None and {type(p).__name__ for p in parts} == {"Piece", "Members"}
    _, serial = _inspect(capsys, "--json", "--jobs", "1", wheel)
    code, pooled = _inspect(capsys, "--json", "--jobs", "2", wheel)
    assert code == 0 and pooled == serial


def test_files_that_are_not_plain_libraries_are_not_cut(tmp_path):
    assert plan(str(FIXTURES / "containers" / "hip_win.dll")) is None  # PE
    assert plan(str(FIXTURES / "elf" / BARE[0]["file"].split("/")[-1])) is None  # a code object
    assert plan(str(tmp_path / "missing.so")) is None


def test_a_large_file_that_cannot_be_cut_streams_in_the_main_process(capsys, monkeypatch):
    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)  # every file counts as large
    tasks = list(parallel.tasks_for(parallel.expand([str(FIXTURES / "containers")]), "/nonexistent"))
    local = [t for (t, role) in tasks if role == "local"]
    assert any(str(t[0]).endswith("hip_win.dll") for t in local)  # a PE is never cut
    _, serial = _inspect(capsys, "--json", "--jobs", "1", FIXTURES / "containers")
    _, pooled = _inspect(capsys, "--json", "--jobs", "2", FIXTURES / "containers")
    assert pooled == serial


@pytest.mark.parametrize(
    "running, load, expected",
    [
        ("1/90", 3.5, 4),  # only this process runs now: a busy minute that has ended does not count
        ("2/90", 0.0, 3),
        ("3/90", 9.0, 2),
        ("9/90", 0.0, 1),
        (None, 0.4, 4),
        (None, 1.6, 2),
        (None, 3.5, 1),
        (None, 9.0, 1),
        (None, None, 4),
    ],
)
def test_the_default_pool_takes_only_idle_cpus(monkeypatch, tmp_path, running, load, expected):
    import os

    def loadavg():
        if load is None:
            raise OSError("no load average here")
        return (load, load, load)

    proc = tmp_path / "loadavg"
    if running is not None:
        proc.write_text(f"{load} {load} {load} {running} 12345\n")
    real = parallel.running_elsewhere
    monkeypatch.setattr(parallel, "running_elsewhere", lambda: real(str(proc)))  # missing: no /proc
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(os, "getloadavg", loadavg)
    assert parallel.idle_cpus() == expected
    assert parallel.jobs_for(None, 100) == expected  # many files: a pool of the idle CPUs
    assert parallel.jobs_for(None, 3) == 1  # a few small files: one process
    assert parallel.jobs_for(3, 100) == 3  # asked for: given
