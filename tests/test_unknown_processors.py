"""Processors by name, never by neighbour: an EF_AMDGPU_MACH number, a target id, a --target or a
bundle entry id that no row of tables/targets.toml describes is reported by that number or name
as "not a processor amdocc knows", and never read as a nearby processor.

Oracles: llvm-readelf-22's own header line for each patched code object (it prints the flags
with no processor when LLVM 22 defines none for the MACH), and clang-offload-bundler-22 --list
for the entry ids of the hand-laid bundle (tools/fixtures/objects.py). The Hygon DCU names
(gfx926, gfx928, gfx936, gfx938: kokkos #9403) are defined by neither LLVM nor ROCm.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

import amdocc
from amdocc.codeobject import TargetId
from amdocc.errors import AmdoccError, UnknownTargetError
from amdocc.targets import all_targets, get_target
from conftest import FIXTURES, ROOT

OBJECTS = FIXTURES / "objects"
MACHS = (0x27, 0x56, 0x60, 0x70, 0x7F, 0xFF)
HYGON = ("gfx926", "gfx928", "gfx936", "gfx938")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )


def _readelf_flags(name: str) -> str:
    text = (OBJECTS / f"{name}.readelf.txt").read_text()
    return re.search(r"Flags:\s+(.*)", text).group(1)


@pytest.mark.parametrize("mach", MACHS)
def test_a_mach_llvm_does_not_name_is_reported_by_its_number(mach):
    name = f"mach_{mach:02x}.co"
    flags = _readelf_flags(name)
    # LLVM 22's own answer: the flags word, the feature bits, and no processor.
    assert flags.startswith(f"0x5{mach:02x},") and "gfx" not in flags
    assert all(t.mach != mach for t in all_targets())
    (co,) = amdocc.load(OBJECTS / name)
    assert co.target is None and co.processor == f"unknown-mach-{mach:#04x}"
    (finding,) = [f for f in co.findings if f.code == "unknown-processor"]
    assert finding.severity == "error"
    assert f"EF_AMDGPU_MACH {mach:#04x} is not a processor amdocc knows" in finding.message
    # The rest of the object is still shown: the kernel's metadata as llvm-readelf-22 reads it.
    notes = (OBJECTS / "globals_gfx942.co.readelf.txt").read_text()
    meta = yaml.safe_load(notes[notes.index("---\n") : notes.index("\n...") + 4])["amdhsa.kernels"][0]
    (kernel,) = co.kernels
    assert (kernel.name, kernel.meta("vgpr_count"), kernel.meta("sgpr_count")) == (
        meta[".name"],
        meta[".vgpr_count"],
        meta[".sgpr_count"],
    )
    assert kernel.target is None


@pytest.mark.parametrize("mach", (0x7F, 0x60))
def test_a_kernel_of_an_unknown_mach_gets_no_occupancy_of_a_neighbour(mach):
    path = str(OBJECTS / f"mach_{mach:02x}.co")
    shown = _cli("inspect", "--json", path)
    assert shown.returncode == 0
    (co,) = json.loads(shown.stdout)["code_objects"]
    assert co["processor"] == f"unknown-mach-{mach:#04x}" and len(co["kernels"]) == 1
    refused = _cli("occupancy", "--block", "64", path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert f"unknown-mach-{mach:#04x}" in refused.stderr
    placed = _cli("occupancy", "--block", "64", "--target", "gfx942", path)
    assert placed.returncode == 2 and f"built for unknown-mach-{mach:#04x}" in placed.stderr
    with pytest.raises(AmdoccError):
        amdocc.occupancy(amdocc.load(path)[0].kernels[0], block_size=64)


@pytest.mark.parametrize("name", HYGON)
def test_a_processor_name_nobody_defines_is_refused_by_name_everywhere(name):
    with pytest.raises(UnknownTargetError, match=f"'{name}': not a processor amdocc knows"):
        get_target(name)
    with pytest.raises(UnknownTargetError, match=name):
        get_target(f"amdgcn-amd-amdhsa--{name}:xnack-")
    with pytest.raises(UnknownTargetError, match=name):
        amdocc.occupancy({"vgprs": 8}, target=name, block_size=64)
    assert TargetId.parse(f"hipv4-amdgcn-amd-amdhsa--{name}").processor == name  # kept as written
    done = _cli("occupancy", "--target", name, "--vgprs", "8", "--block", "64")
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert f"unknown processor '{name}': not a processor amdocc knows" in line


def test_a_subarch_triple_for_an_unknown_processor_is_refused_by_its_name():
    # amdgpu9.38 spells gfx938 as LLVM main's subarch triples spell gfx942 (amdgpu9.42): no row.
    with pytest.raises(UnknownTargetError, match="gfx938"):
        get_target("amdgpu9.38-amd-amdhsa")
    done = _cli("occupancy", "--target", "amdgpu9.38-amd-amdhsa--gfx938", "--vgprs", "8", "--block", "64")
    assert done.returncode == 2 and "gfx938" in done.stderr


def test_an_unknown_generic_family_is_refused_by_its_name():
    with pytest.raises(UnknownTargetError, match="gfx9-3-generic"):
        get_target("gfx9-3-generic")


def test_bundle_entry_ids_naming_gfx938_are_reported_by_name():
    ids = (OBJECTS / "bundle_gfx938.hipfb.list.txt").read_text().split()
    gfx938 = [i for i in ids if "gfx938" in i]
    assert len(gfx938) == 2
    loaded = amdocc.load(OBJECTS / "bundle_gfx938.hipfb")
    by_entry = {co.origin.hops[-1]: co for co in loaded}
    assert set(by_entry) == set(gfx938)
    for entry, co in by_entry.items():
        named = [f for f in co.findings if f.code == "unknown-processor" and entry in f.message]
        assert named and "names gfx938, not a processor amdocc knows" in named[0].message
    # the object under ':xnack-' is a real gfx942 object: read by its own e_flags, not the id
    real = by_entry["hipv4-amdgcn-amd-amdhsa--gfx938:xnack-"]
    flags = _readelf_flags("globals_gfx942.co")
    assert "gfx942" in flags and real.processor == "gfx942"
    assert by_entry["hipv4-amdgcn-amd-amdhsa--gfx938"].target is None


def test_the_bundler_itself_cannot_write_a_gfx938_id():
    # What clang-offload-bundler-22 wrote when asked for gfx938: the processor dropped.
    ids = (OBJECTS / "bundle_gfx938_bundler.hipfb.list.txt").read_text().split()
    assert "hipv4-amdgcn-amd-amdhsa--" in ids and not [i for i in ids if "gfx938" in i]
    loaded = amdocc.load(OBJECTS / "bundle_gfx938_bundler.hipfb")
    assert sorted(co.processor for co in loaded) == ["gfx942", "unknown-mach-0x7f"]


def test_an_entry_id_naming_another_known_processor_is_a_finding():
    from fuzz.formats.bundle import build_bundle

    data = (OBJECTS / "globals_gfx942.co").read_bytes()
    (co,) = amdocc.load(build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx90a", data)]))
    (finding,) = [f for f in co.findings if f.code == "entry-target-mismatch"]
    assert "names gfx90a" in finding.message and co.processor == "gfx942"
    (same,) = amdocc.load(build_bundle([(b"hipv4-amdgcn-amd-amdhsa--gfx942:xnack-", data)]))
    assert not [f for f in same.findings if f.code in ("entry-target-mismatch", "unknown-processor")]
