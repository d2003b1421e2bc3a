"""Relocatable device code (``-fgpu-rdc -c``): LLVM bitcode where a code object would be.

clang-22 compiles each processor's device code to bitcode and leaves the device link for later:
the old offload driver puts one ``__CLANG_OFFLOAD_BUNDLE__<entry id>`` section per bundle entry
in the host object (the host entry one byte long), the new one (``--offload-new-driver``) an
OffloadBinary of "llvm ir" images in ``.llvm.offloading``. Nothing can be evaluated before the
device link, so each such entry is a skipped entry with one reason, and the file reads cleanly.

Oracles: llvm-readelf-22's section table and llvm-dis-22's reading of each dumped section (its
triple and target-cpu) for the old driver, llvm-objdump-22 --offloading's image list for the
new one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import amdocc
from amdocc.containers import Failed, Skipped, scan
from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.llvm22

ARCHS = ("gfx942", "gfx1100")
SOURCE = ROOT / "tools" / "fixture_src" / "tu_a.hip"
RDC = "relocatable device code: nothing to evaluate before the device link"


def build_rdc(tmp_path: Path, name: str, driver: str, archs: tuple[str, ...] = ARCHS) -> Path:
    """A -fgpu-rdc host object of tools/fixture_src/tu_a.hip built by clang-22 (``driver`` is
    --offload-new-driver or --no-offload-new-driver)."""
    out = tmp_path / name
    subprocess.run(
        ["clang-22", "-x", "hip", "-fgpu-rdc", "-c", driver, "-nogpulib", "-nogpuinc", "-O3", "-fPIC",
         "-I", str(SOURCE.parent), *[f"--offload-arch={a}" for a in archs], str(SOURCE), "-o", str(out)],
        check=True, capture_output=True,
    )  # fmt: skip
    return out


def _bundle_sections(path: Path) -> list[str]:
    text = subprocess.run(["llvm-readelf-22", "-S", "-W", str(path)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"__CLANG_OFFLOAD_BUNDLE__(\S+)", text)


def _amdocc(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "amdocc", *args], capture_output=True, text=True, env=env, timeout=120)


def test_old_driver_rdc_bitcode_entries_are_skipped_as_relocatable_device_code(tmp_path):
    obj = build_rdc(tmp_path, "old.o", "--no-offload-new-driver")
    entries = _bundle_sections(obj)
    device = [e for e in entries if not e.startswith("host-")]
    assert sorted(device) == sorted(f"hip-amdgcn-amd-amdhsa--{a}" for a in ARCHS)
    for entry in device:  # the oracle: each device section is bitcode for its processor
        dumped = tmp_path / f"{entry}.bc"
        section = f"__CLANG_OFFLOAD_BUNDLE__{entry}"
        subprocess.run(["llvm-objcopy-22", f"--dump-section={section}={dumped}", str(obj), os.devnull], check=True)
        ir = subprocess.run(["llvm-dis-22", str(dumped), "-o", "-"], capture_output=True, text=True, check=True).stdout
        assert 'target triple = "amdgcn-amd-amdhsa"' in ir and f'"target-cpu"="{entry.rsplit("-", 1)[1]}"' in ir
    items = list(scan(str(obj)))
    assert not [i for i in items if isinstance(i, Failed)] and all(isinstance(i, Skipped) for i in items)
    got = {(i.entry_id, i.reason) for i in items}
    host = next(e for e in entries if e.startswith("host-"))
    assert got == {(e, RDC) for e in device} | {(host, "host entry")}
    for item in items:  # each named at its section
        assert item.origin.hops == (f"section __CLANG_OFFLOAD_BUNDLE__{item.entry_id}",)


def test_new_driver_rdc_bitcode_images_are_skipped_as_relocatable_device_code(tmp_path):
    obj = build_rdc(tmp_path, "new.o", "--offload-new-driver")
    listing = subprocess.run(
        ["llvm-objdump-22", "--offloading", str(obj)], capture_output=True, text=True, check=True
    ).stdout
    images = re.findall(r"kind\s+(.+?)\n\s*arch\s+(\S+)\n\s*triple\s+(\S+)\n\s*producer\s+(\S+)", listing)
    assert sorted(a for _, a, _, _ in images) == sorted(ARCHS) and {k for k, _, _, _ in images} == {"llvm ir"}
    items = list(scan(str(obj)))
    assert all(isinstance(i, Skipped) for i in items)
    assert sorted((i.entry_id, i.reason) for i in items) == sorted(
        (f"{producer}-{triple}-{arch}", RDC) for _, arch, triple, producer in images
    )


@pytest.mark.parametrize("driver", ["--offload-new-driver", "--no-offload-new-driver"])
def test_inspect_reads_an_rdc_object_cleanly_and_says_why_nothing_is_listed(tmp_path, driver):
    obj = build_rdc(tmp_path, "k.o", driver, ("gfx942",))
    run = _amdocc("inspect", str(obj))
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith(f"amdocc: skipped entries: 1 {RDC}") and "error" not in run.stderr
    loaded = amdocc.load(obj)
    assert list(loaded) == [] and [s.reason for s in loaded.skipped if s.entry_id and "gfx942" in s.entry_id] == [RDC]


def test_the_stored_new_driver_rdc_fixture_is_relocatable_device_code_too():
    # tools/fixtures/offload.py's newdriver_rdc.o (gfx942 and gfx1100), built by clang-22.
    items = list(scan(str(FIXTURES / "containers" / "newdriver_rdc.o")))
    assert len(items) == 2 and {i.reason for i in items if isinstance(i, Skipped)} == {RDC}


def _device_entries(obj: Path, driver: str) -> int:
    """How many device-code entries the oracle lists: llvm-readelf-22's bundle sections (old
    driver) or llvm-objdump-22 --offloading's "llvm ir" images (new driver)."""
    if driver == "--no-offload-new-driver":
        return len([e for e in _bundle_sections(obj) if not e.startswith("host-")])
    listing = subprocess.run(["llvm-objdump-22", "--offloading", str(obj)], capture_output=True, text=True, check=True)
    return len(re.findall(r"kind\s+llvm ir\n", listing.stdout))


@pytest.mark.parametrize("driver", ["--offload-new-driver", "--no-offload-new-driver"])
def test_check_and_census_of_rdc_alone_say_there_is_nothing_to_evaluate_and_pass(tmp_path, driver):
    # Relocatable device code is read cleanly and holds no kernel before the device link: the
    # gates say so in one line and pass (exit 0), as the skipped entries do not change a status.
    obj = build_rdc(tmp_path, "k.o", driver)
    entries = _device_entries(obj, driver)
    assert entries == len(ARCHS)
    said = f"only relocatable device code ({entries} entries), nothing to evaluate before the device link"
    check = _amdocc("check", str(obj))
    assert check.returncode == 0, check.stderr
    assert check.stderr.splitlines()[-1].startswith("amdocc: nothing to check: no kernel in the PATHs: " + said)
    assert "0 kernel(s) checked" in check.stdout
    checked = json.loads(_amdocc("check", "--json", str(obj)).stdout)
    assert checked["summary"]["kernels"] == 0 and checked["errors"] == []
    assert sum(s["reason"] == RDC for s in checked["skipped"]) == entries
    census = _amdocc("census", "--json", str(obj))
    assert census.returncode == 0, census.stderr
    assert (
        census.stderr.strip()
        == f"amdocc: nothing to census: no kernel in {obj}: {said}; give amdocc the linked library or executable"
    )
    assert json.loads(census.stdout)["skipped"][RDC] == entries
    compared = _amdocc("census", str(obj), str(obj))
    assert compared.returncode == 0 and "nothing to census" in compared.stderr
    # Python answers as the command line does.
    assert amdocc.app.check(obj)["summary"]["kernels"] == 0
    assert amdocc.app.census(obj)["skipped"] == {RDC: entries, **({"host entry": 1} if "no-" in driver else {})}


def test_rdc_beside_a_code_object_is_skipped_and_the_kernels_are_checked(tmp_path):
    obj = build_rdc(tmp_path, "k.o", "--offload-new-driver")
    linked = FIXTURES / "elf" / "gfx942_cov4.hsaco"
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(linked)], capture_output=True, text=True, check=True)
    kernels = len(re.findall(r"\.symbol:\s+\S+\.kd\n", notes.stdout))
    run = _amdocc("check", "--json", str(obj), str(linked))
    assert json.loads(run.stdout)["summary"]["kernels"] == kernels > 0 and "nothing to check" not in run.stderr


def test_update_baseline_on_rdc_alone_writes_nothing_and_says_why(tmp_path):
    obj = build_rdc(tmp_path, "k.o", "--offload-new-driver", ("gfx942",))
    baseline = tmp_path / "baseline.json"
    run = _amdocc("check", "--no-config", "--baseline", str(baseline), "--update-baseline", str(obj))
    assert run.returncode == 2 and "the baseline was not updated, since no kernel was checked" in run.stderr
    assert not baseline.exists()


def test_a_host_library_without_device_code_is_still_no_code_object(tmp_path):
    # Not relocatable device code: a host library holds no device code at all, so a gate given
    # it alone was given the wrong file (exit 2, as before).
    run = _amdocc("check", str(FIXTURES / "objects" / "host_plain.so"))
    assert run.returncode == 2 and "no code object found" in run.stderr


@pytest.mark.parametrize("driver", ["--offload-new-driver", "--no-offload-new-driver"])
@pytest.mark.parametrize(
    "command", [["occupancy", "--block", "256"], ["best-block"], ["isa", "--summary"], ["isa"], ["isa", "--json"]]
)
def test_questions_about_kernels_of_rdc_alone_say_why_there_is_none(tmp_path, driver, command):
    # occupancy, best-block and isa answer about kernels: with only relocatable device code there
    # is none to answer about, which is an error (exit 2) worded as what it is, not "no code
    # object found" (isa said nothing at all and passed).
    obj = build_rdc(tmp_path, "k.o", driver)
    entries = _device_entries(obj, driver)
    assert entries == len(ARCHS)
    run = _amdocc(*command, str(obj))
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines()[-1] == (
        f"amdocc: no kernel in the PATHs: only relocatable device code ({entries} entries), nothing to "
        "evaluate before the device link; give amdocc the linked library or executable"
    )


def test_isa_of_a_host_library_alone_says_no_code_object_was_found():
    run = _amdocc("isa", "--summary", str(FIXTURES / "objects" / "host_plain.so"))
    assert run.returncode == 2
    assert run.stderr.splitlines() == [
        f"amdocc: skipped {FIXTURES / 'objects' / 'host_plain.so'}: host ELF (machine 62) without device code",
        "amdocc: no code object found in the PATHs",
    ]


def test_python_isa_and_occupancy_of_rdc_alone_raise_the_same_words(tmp_path):
    obj = build_rdc(tmp_path, "k.o", "--offload-new-driver")
    for call in (amdocc.app.isa, amdocc.app.occupancy):
        with pytest.raises(amdocc.UsageError, match=r"only relocatable device code \(2 entries\)"):
            call(obj)
