"""Readable kernel names, with llvm-cxxfilt-22 as the oracle.

The demangler was chosen by this measurement: every kernel name of the amd-aiter corpus and of
bitsandbytes' ROCm libraries must come out exactly as llvm-cxxfilt-22 prints it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.demangle import base_name, demangle, qualified_name
from conftest import FIXTURES, ROOT

GFX942 = FIXTURES / "elf" / "gfx942_cov4.hsaco"


def cxxfilt(names: list[str]) -> list[str]:
    out = subprocess.run(
        ["llvm-cxxfilt-22"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True
    ).stdout
    lines = out.split("\n")[:-1]
    assert len(lines) == len(names)
    return lines


def kernel_names(*roots) -> list[str]:
    names = set()
    for root in roots:
        for co in amdocc.load(root):
            names.update(k.name for k in co.kernels)
    return sorted(names)


def differences(names: list[str]) -> list[tuple[str, str, str]]:
    return [(n, want, demangle(n)) for n, want in zip(names, cxxfilt(names), strict=True) if demangle(n) != want]


@pytest.mark.llvm22
def test_every_fixture_kernel_name_as_llvm_cxxfilt_prints_it():
    names = kernel_names(FIXTURES / "elf", FIXTURES / "containers", ROOT / "amdocc" / "samples")
    assert len(names) > 10 and any(n.startswith("_Z") for n in names)
    assert differences(names) == []


@pytest.mark.llvm22
@pytest.mark.corpus
@pytest.mark.bitsandbytes
def test_every_aiter_and_bitsandbytes_kernel_name_as_llvm_cxxfilt_prints_it(aiter_hsa, bitsandbytes_rocm):
    aiter = kernel_names(aiter_hsa)
    bnb = kernel_names(bitsandbytes_rocm)
    # Measured with bitsandbytes 0.50.2 and amd-aiter 0.1.7.post2.dev18: 1,470 + 175 distinct names,
    # 1,547 of them mangled; pycxxfilt 1.2.0 (LLVM 23.1's demangler) differs on none.
    assert len(aiter) > 1000 and len(bnb) > 100
    names = sorted(set(aiter) | set(bnb))
    assert sum(n.startswith("_Z") for n in names) > 1000
    assert differences(names) == []


def test_import_amdocc_does_not_load_the_demangler():
    code = (
        "import sys, amdocc; cos = amdocc.load(sys.argv[1]); "
        "assert 'pycxxfilt' not in sys.modules, 'demangler imported'"
    )
    subprocess.run([sys.executable, "-c", code, str(GFX942)], check=True, cwd=ROOT)


@pytest.mark.llvm22
def test_text_shows_demangled_names_json_carries_both(capsys):
    (co,) = amdocc.load(GFX942)
    mangled = [k.name for k in co.kernels]
    readable = cxxfilt(mangled)
    assert main(["inspect", str(GFX942)]) == 0
    out = capsys.readouterr().out
    assert all(r in out for r in readable) and not any(m in out for m in mangled)
    assert main(["inspect", "--mangled", str(GFX942)]) == 0
    out = capsys.readouterr().out
    assert all(m in out for m in mangled)
    assert main(["inspect", "--json", str(GFX942)]) == 0
    (record,) = json.loads(capsys.readouterr().out)["code_objects"]
    assert [(k["name"], k["demangled"]) for k in record["kernels"]] == list(zip(mangled, readable, strict=True))
    assert main(["occupancy", "--json", "--block", "256", str(GFX942)]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [(r["kernel"], r["demangled"]) for r in results] == list(zip(mangled, readable, strict=True))
    assert main(["occupancy", "--block", "256", str(GFX942)]) == 0
    out = capsys.readouterr().out
    assert all(r in out for r in readable)


@pytest.mark.llvm22
def test_kernel_matches_the_mangled_or_the_demangled_name(capsys):
    (co,) = amdocc.load(GFX942)
    (saxpy,) = [k for k in co.kernels if "saxpy" in k.name]
    (readable,) = cxxfilt([saxpy.name])  # saxpy_lds(float, float const*, float*, int)
    for pattern in (re.escape(readable), re.escape(saxpy.name), r"^saxpy_lds\(float,", "_Z9saxpy"):
        assert main(["occupancy", "--json", "--block", "256", "--kernel", pattern, str(GFX942)]) == 0
        assert [r["kernel"] for r in json.loads(capsys.readouterr().out)["results"]] == [saxpy.name]
        assert main(["inspect", "--json", "--kernel", pattern, str(GFX942)]) == 0
        (record,) = json.loads(capsys.readouterr().out)["code_objects"]
        assert [k["name"] for k in record["kernels"]] == [saxpy.name]


def test_names_that_are_not_mangled_stay_as_they_are():
    # AITER's asm kernels carry C names (llvm-cxxfilt prints them unchanged), and a name that
    # only looks mangled comes back as it is, as llvm-cxxfilt prints it.
    for name in ("fmoe_int8_g1u0_subGU_128_gelu", "aiter_like_fwd", "_Zinvalid"):
        assert demangle(name) == name


# mangled name -> (what llvm-cxxfilt-22 prints, the qualified name without return type and
# parameters, the bare name), worked by hand from the Itanium ABI.
ANONYMOUS = {
    "_ZN12_GLOBAL__N_16anon_kEPi": ("(anonymous namespace)::anon_k(int*)", "(anonymous namespace)::anon_k", "anon_k"),
    "_ZN12_GLOBAL__N_16anon_tIiEEvPT_": (
        "void (anonymous namespace)::anon_t<int>(int*)",
        "(anonymous namespace)::anon_t<int>",
        "anon_t",
    ),
    "_Z4gemmIfLi1EEvPT_": ("void gemm<float, 1>(float*)", "gemm<float, 1>", "gemm"),
}


@pytest.mark.llvm22
def test_the_hand_worked_demangled_names_are_llvm_cxxfilts():
    printed = subprocess.run(
        ["llvm-cxxfilt-22"], input="\n".join(ANONYMOUS), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert printed == [spelt for spelt, _, _ in ANONYMOUS.values()]


@pytest.mark.parametrize(("readable", "qualified", "bare"), list(ANONYMOUS.values()))
def test_the_qualified_and_bare_names_keep_the_anonymous_namespace_and_template_arguments(readable, qualified, bare):
    assert qualified_name(readable) == qualified
    assert base_name(readable) == bare
