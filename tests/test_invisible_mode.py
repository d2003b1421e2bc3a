"""When the code object does not say CU or WGP mode.

Fixtures (tests/data/fixtures/rocm10_mode, made by ``python3 tools/fixtures rocm10_mode``): the same
kernels built by ROCm 10.0's compiler for gfx1310 and gfx1250 by default, with +cumode and (gfx1250)
with -cumode; ``listing.json`` is the compiler's own account of each build (its ``; Occupancy:``,
its ``.amdhsa_workgroup_processor_mode``, the metadata's ``.workgroup_processor_mode``). The objects
are read here by independent tools too: llvm-readelf-22 for the metadata note, pyelftools for the
kernel descriptor's RSRC1 word (AMDGPUUsage.rst: bytes 48..51 of the 64-byte descriptor, WGP_MODE at
bit 29 on gfx10-12).

What is pinned: the builds write the same mode fields and still print different occupancies; amdocc
then answers the processor's default mode and says so (a warning and ``details.workgroup_mode``),
and ``mode=`` / ``--cu-mode`` / ``--wgp`` choose, with every answer equal to the compiler's listing.
Where the object does record its mode (Triton's LLVM on gfx1310, llc-22 on gfx11), nothing is
assumed and a mode cannot be chosen.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

import amdocc
from amdocc.errors import AmdoccError
from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.llvm22

HERE = FIXTURES / "rocm10_mode"
LISTING = json.loads((HERE / "listing.json").read_text())
BUILDS = sorted(k for k in LISTING if not k.startswith("_"))
WGP_MODE_BIT = 1 << 29  # COMPUTE_PGM_RSRC1 WGP_MODE (AMDGPUUsage.rst, GFX10-GFX12)


def _kernels(stem):
    return {k.name: k for co in amdocc.load(HERE / f"{stem}.hsaco") for k in co.kernels}


def _block(name):
    """The fixed workgroup size of a "fixed_N" kernel (its note keeps only the range's maximum, so
    the compiler's "N,N" range is asked as block_size=N, as tests/test_llvm_differential.py does)."""
    return int(name.split("_")[1]) if name.startswith("fixed_") else None


def _listing(stem):
    return {name: v for name, v in LISTING[stem].items() if not name.startswith("_")}


def _rsrc1_words(path):
    """{kernel: RSRC1} read by pyelftools from each NAME.kd symbol's bytes."""
    out = {}
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        symtab = elf.get_section_by_name(".symtab")
        for sym in symtab.iter_symbols():
            if not sym.name.endswith(".kd"):
                continue
            sec = elf.get_section(sym["st_shndx"])
            offset = sec["sh_offset"] + sym["st_value"] - sec["sh_addr"]
            fh.seek(offset + 48)
            out[sym.name[:-3]] = int.from_bytes(fh.read(4), "little")
    return out


def _note_has_mode_key(path):
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(path)], capture_output=True, text=True, check=True)
    assert "amdhsa.kernels" in notes.stdout
    return ".workgroup_processor_mode" in notes.stdout


def test_the_fixtures_name_rocm10s_compiler():
    for stem in BUILDS:
        comment = subprocess.run(
            ["llvm-readelf-22", "-p", ".comment", str(HERE / f"{stem}.hsaco")], capture_output=True, text=True
        ).stdout
        assert "AMD clang version 23.0.0git (https://github.com/ROCm/llvm-project.git 8f497e0992fb" in comment


@pytest.mark.parametrize("target", ["gfx1310", "gfx1250"])
def test_the_builds_write_the_same_mode_fields_and_print_different_occupancies(target):
    stems = [s for s in BUILDS if s.startswith(target)]
    bits, directives = set(), set()
    for stem in stems:
        assert not _note_has_mode_key(HERE / f"{stem}.hsaco"), stem
        assert not LISTING[stem]["_asm_has_mode_key"]
        words = _rsrc1_words(HERE / f"{stem}.hsaco")
        assert set(words) == set(_listing(stem))
        bits |= {(name, bool(w & WGP_MODE_BIT)) for name, w in words.items()}
        directives |= {(name, v["amdhsa_workgroup_processor_mode"]) for name, v in _listing(stem).items()}
    # one value of each mode field per kernel across the builds (WGP_MODE clear; the directive 0 on
    # gfx1310, absent on gfx1250) ...
    n = len(_listing(stems[0]))
    assert bits == {(name, False) for name in _listing(stems[0])}, bits
    assert len(directives) == n and {d for _, d in directives} == ({0} if target == "gfx1310" else {None})
    # ... and yet the compiler's answers differ between two of them
    answers = {stem: {n: v["Occupancy"] for n, v in _listing(stem).items()} for stem in stems}
    assert len({json.dumps(a, sort_keys=True) for a in answers.values()}) >= 2, answers


def test_gfx1250s_default_and_cumode_builds_are_the_same_bytes():
    assert (HERE / "gfx1250_default.hsaco").read_bytes() == (HERE / "gfx1250_cumode.hsaco").read_bytes()


@pytest.mark.parametrize("stem", BUILDS)
def test_every_answer_is_labelled_with_the_assumed_mode(stem):
    for name, k in _kernels(stem).items():
        occ = amdocc.occupancy(k, model="llvm")
        mode = occ.details["workgroup_mode"]
        assert mode["recorded"] is False and mode["why"] in occ.warnings, name
        target = stem.split("_")[0]
        assert mode["wgp"] is (target == "gfx1310")  # each processor's default: WGP on gfx1310, CU on gfx1250
        # HIP reads only the metadata, which has no .workgroup_processor_mode: CU mode, its own
        # parse, nothing assumed (and no mode to choose). (The hw model refuses both processors:
        # their wave slots per SIMD are unknown.)
        hip = amdocc.occupancy(k, model="hip", block_size=64)
        assert "workgroup_mode" not in hip.details and mode["why"] not in hip.warnings
        if target == "gfx1310":  # no HIP release's device table runs gfx1310 (tables/hip_profiles.toml)
            assert hip.error == "unsupported-processor"
        else:
            assert hip.details["isWGPMode"] is False
        with pytest.raises(AmdoccError, match="the hip model reads only the metadata"):
            amdocc.occupancy(k, model="hip", block_size=64, mode="cu")


@pytest.mark.parametrize("stem", [s for s in BUILDS if not s.endswith("nocumode")])
def test_the_default_or_the_chosen_mode_gives_the_compilers_occupancy(stem):
    mode = "cu" if stem.endswith("_cumode") else None
    for name, k in _kernels(stem).items():
        occ = amdocc.occupancy(k, model="llvm", mode=mode, block_size=_block(name))
        assert occ.profile == "rocm-10.0"
        assert occ.details["llvm_occupancy"] == _listing(stem)[name]["Occupancy"], (stem, name)


def test_a_wrong_mode_disagrees_with_the_compiler():
    """The default build asked in CU mode (and the +cumode build in its default) miss the listing:
    the mode is what the fixtures discriminate."""
    wrong = 0
    for stem, mode in (("gfx1310_default", "cu"), ("gfx1310_cumode", None)):
        for name, k in _kernels(stem).items():
            occ = amdocc.occupancy(k, model="llvm", mode=mode, block_size=_block(name))
            wrong += occ.details["llvm_occupancy"] != _listing(stem)[name]["Occupancy"]
    assert wrong >= 4


def test_gfx1250_has_no_wgp_mode_to_choose():
    """A -cumode build prints more than the CU-mode answer (the compiler then counts per WGP, which
    gfx1250 lacks); amdocc answers CU mode, says so, and refuses to be asked for WGP mode."""
    kernels = _kernels("gfx1250_nocumode")
    listing = _listing("gfx1250_nocumode")
    answers = {
        n: amdocc.occupancy(k, model="llvm", block_size=_block(n)).details["llvm_occupancy"] for n, k in kernels.items()
    }
    assert answers != {n: v["Occupancy"] for n, v in listing.items()}
    assert answers == {n: v["Occupancy"] for n, v in _listing("gfx1250_default").items()}
    with pytest.raises(AmdoccError, match="gfx1250 has no WGP mode"):
        amdocc.occupancy(kernels["fixed_96"], model="llvm", mode="wgp")


def test_a_recorded_mode_is_read_and_cannot_be_chosen():
    triton_gfx1310 = amdocc.load(FIXTURES / "newer" / "amdgpu_gfx1310.hsaco")[0].kernels[0]
    occ = amdocc.occupancy(triton_gfx1310, model="llvm")
    assert "workgroup_mode" not in occ.details and not any("does not record" in w for w in occ.warnings)
    with pytest.raises(AmdoccError, match="records its mode"):
        amdocc.occupancy(triton_gfx1310, model="llvm", mode="cu")
    gfx942 = amdocc.load(FIXTURES / "elf" / "gfx942_cov4.hsaco")[0].kernels[0]
    with pytest.raises(AmdoccError, match="gfx942 has no WGP mode"):
        amdocc.occupancy(gfx942, model="llvm", mode="wgp")
    with pytest.raises(AmdoccError, match="typed-in numbers take wgp="):
        amdocc.occupancy({"vgprs": 8}, target="gfx1310", model="llvm", mode="cu")


def _cli(*argv):
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *argv], capture_output=True, text=True, cwd=ROOT, check=False
    )


def test_the_cli_chooses_the_mode_of_files_with_cu_mode_and_wgp():
    for flag, stem in (("--cu-mode", "gfx1310_cumode"), ("--wgp", "gfx1310_default"), (None, "gfx1310_default")):
        # the +cumode build's answers from the default build's bytes, and the reverse
        path = HERE / ("gfx1310_default.hsaco" if flag == "--cu-mode" else "gfx1310_cumode.hsaco")
        # (the fixed_96 kernel needs its block size, which the note cannot give: not selected)
        p = _cli(
            "occupancy", "--model", "llvm", "--json", "--kernel", "^(lds|vgprs)", *([flag] if flag else []), str(path)
        )
        assert p.returncode == 0, p.stderr
        results = json.loads(p.stdout)["results"]
        assert {r["kernel"]: r["waves_per_simd"] for r in results} == {
            n: v["Occupancy"] for n, v in _listing(stem).items() if _block(n) is None
        }
        assert all(r["details"]["workgroup_mode"]["recorded"] is False for r in results)
        assert all("does not record CU or WGP mode" in w for r in results for w in r["warnings"][-1:])


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--wgp", "tests/data/fixtures/rocm10_mode/gfx1250_default.hsaco"], "gfx1250 has no WGP mode"),
        (["--cu-mode", "tests/data/fixtures/elf/gfx942_cov4.hsaco"], "gfx942 has no WGP mode"),
        (["--wgp", "--cu-mode", "tests/data/fixtures/rocm10_mode/gfx1310_default.hsaco"], "not allowed with"),
        (
            ["--model", "hip", "--block", "64", "--cu-mode", "tests/data/fixtures/rocm10_mode/gfx1310_default.hsaco"],
            "the hip model reads the metadata",
        ),
    ],
)
def test_a_mode_that_cannot_apply_is_a_usage_error(argv, message):
    p = _cli("occupancy", "--model", "llvm", *argv)
    assert p.returncode == 2
    assert message in p.stderr and "Traceback" not in p.stderr


def test_which_compilers_record_the_mode_as_the_tables_say():
    """targets.toml's mode_recorded (gfx1250 false, gfx1310 true) and rocm-10.0's override (gfx1310
    false), against what each compiler writes: Triton 3.9's LLVM (the newer/ fixtures) keeps the key
    on gfx1310 and has none on gfx1250; llc-22 writes none for gfx1250, default or +cumode, and
    prints the same occupancy for both; ROCm 10.0 (above) writes none on either."""
    import kernelgen
    from amdocc.models.llvm_rules import rules_named
    from amdocc.targets import get_target

    assert _note_has_mode_key(FIXTURES / "newer" / "amdgpu_gfx1310.hsaco")
    assert not _note_has_mode_key(FIXTURES / "newer" / "amdgpu_gfx1250.hsaco")
    assert get_target("gfx1310").mode_recorded and not get_target("gfx1250").mode_recorded
    assert not rules_named("rocm-10.0").target_view(get_target("gfx1310")).mode_recorded
    listings = []
    for cumode in (None, True):
        spec = kernelgen.KernelSpec("k", "gfx1250", cumode=cumode, lds=100000, min_wg=96, max_wg=96)
        r = kernelgen.run_llc(kernelgen.render_module([spec]), "gfx1250")
        assert r.rc == 0, r.stderr
        asm = r.output.decode()
        assert "workgroup_processor_mode" not in asm
        listings.append(kernelgen.parse_asm(asm)["k"]["Occupancy"])
    assert listings[0] == listings[1]


def test_inspect_shows_an_assumed_mode_as_assumed():
    """inspect's mode column reads WGP_MODE only where the object records its mode: the ROCm 10.0
    gfx1310 build shows its default, WGP, marked as assumed; Triton's shows what it recorded."""
    p = _cli("inspect", str(HERE / "gfx1310_cumode.hsaco"), str(FIXTURES / "newer" / "amdgpu_gfx1310.hsaco"))
    assert p.returncode == 0, p.stderr
    rows = {
        line.split()[0]: line.split()[-1] for line in p.stdout.splitlines() if line.startswith("  ") and line.split()
    }
    assert [rows[n] for n in ("lds_40000", "fixed_96", "vgprs_129")] == ["WGP*"] * 3
    notes = subprocess.run(
        ["llvm-readelf-22", "--notes", str(FIXTURES / "newer" / "amdgpu_gfx1310.hsaco")], capture_output=True, text=True
    ).stdout
    keys = re.findall(r"\.name:\s+(\S+).*?\.workgroup_processor_mode:\s+(\d)", notes, re.S)
    assert len(keys) == 3 and all(rows[name] == ("WGP" if bit == "1" else "CU") for name, bit in keys), keys
    assert p.stdout.count("does not record CU or WGP mode on gfx1310") == 1
