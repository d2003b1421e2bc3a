"""Only mangled names are demangled: kernels named ``a``, ``b``, ``main`` or ``i`` keep their names.

LLVM's Itanium demangler, handed a name that is not mangled, reads it as a type, as
``llvm-cxxfilt -t`` does: ``a`` is ``signed char``, ``b`` is ``bool``, ``i`` is ``int``. The
kernels here are built now by clang-22 from HIP C++ (``extern "C"`` kernels with such names beside
C++ ones, a template among them), their names read back by ``llvm-readelf-22 --notes``, and every
name amdocc shows is compared with what ``llvm-cxxfilt-22`` (without ``-t``) prints for it.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
from pathlib import Path

import pytest

import amdocc
from amdocc.cli.main import main
from amdocc.demangle import demangle, is_mangled

pytestmark = pytest.mark.llvm22

# extern "C" kernels whose names LLVM's demangler would otherwise read as types (a, b, i, St3foo:
# "std::foo" under -t), one whose name only looks mangled (_Zfoo), main (named through an asm
# label: C++ does not let a kernel be called main), and C++ kernels, one a template in a namespace.
SOURCE = r"""
#define __global__ __attribute__((global))
extern "C" __global__ void a(int *p) { *p = 1; }
extern "C" __global__ void b(int *p) { *p = 2; }
extern "C" __global__ void i(int *p) { *p = 3; }
extern "C" __global__ void St3foo(int *p) { *p = 4; }
extern "C" __global__ void _Zfoo(int *p) { *p = 5; }
extern "C" __global__ void main_kernel(int *p) __asm__("main");
extern "C" __global__ void main_kernel(int *p) { *p = 6; }
__global__ void saxpy(float x, const float *in, float *out) { out[0] = x * in[0]; }
template <typename T, int N> __global__ void wave_attn(T *out, int n) { out[n] = N; }
template __global__ void wave_attn<float, 64>(float *, int);
template __global__ void wave_attn<int, 128>(int *, int);
namespace ns { template <typename T> __global__ void gemm(T *out) { out[0] = 1; } }
template __global__ void ns::gemm<double>(double *);
"""
C_NAMES = ("a", "b", "i", "St3foo", "_Zfoo", "main")


def build_named_kernels(out_dir: Path) -> Path:
    """SOURCE compiled by clang-22 for gfx942 into a bare code object."""
    source = out_dir / "named.hip"
    source.write_text(SOURCE)
    co = out_dir / "named.co"
    device_only = ("--offload-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc")
    subprocess.run(
        ["clang-22", "-x", "hip", "--offload-arch=gfx942", *device_only, "-O1", "-o", str(co), str(source)],
        check=True,
        capture_output=True,
    )
    return co


def note_names(co: Path) -> list[str]:
    """The kernels' .name values as llvm-readelf-22 --notes prints them."""
    text = subprocess.run(["llvm-readelf-22", "--notes", str(co)], check=True, capture_output=True, text=True).stdout
    return re.findall(r"^\s+\.name:\s+(\S+)$", text, re.M)


def cxxfilt(names: list[str], *flags: str) -> list[str]:
    out = subprocess.run(
        ["llvm-cxxfilt-22", *flags], input="".join(n + "\n" for n in names), check=True, capture_output=True, text=True
    ).stdout
    lines = out.split("\n")[:-1]
    assert len(lines) == len(names)
    return lines


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> Path:
    return build_named_kernels(tmp_path_factory.mktemp("named"))


def test_the_oracle_keeps_c_names_and_types_them_only_with_t(named):
    names = note_names(named)
    assert set(C_NAMES) <= set(names) and len(names) == len(C_NAMES) + 4
    printed = dict(zip(names, cxxfilt(names), strict=True))
    assert all(printed[n] == n for n in C_NAMES)
    # What the demangler said before only mangled names were demangled: -t reads them as types.
    assert cxxfilt(["a", "b", "i"], "-t") == ["signed char", "bool", "int"]


def test_every_kernel_name_is_shown_as_llvm_cxxfilt_prints_it(named):
    names = note_names(named)
    (co,) = amdocc.load(named)
    assert sorted(k.name for k in co.kernels) == sorted(names)
    assert [demangle(n) for n in names] == cxxfilt(names)
    by_name = {k.name: k for k in co.kernels}
    for name in C_NAMES:
        assert by_name[name].demangled_name is None  # not mangled: nothing to demangle
        assert by_name[name].names() == (name, name + ".kd")


def test_json_text_and_csv_carry_the_names_as_written(named, capsys, tmp_path):
    names = note_names(named)
    want = dict(zip(names, cxxfilt(names), strict=True))
    assert main(["inspect", "--json", str(named)]) == 0
    (record,) = json.loads(capsys.readouterr().out)["code_objects"]
    assert {k["name"]: k["demangled"] for k in record["kernels"]} == want
    assert main(["occupancy", "--block", "64", str(named)]) == 0
    text = capsys.readouterr().out
    # Each row starts with the name, then the block size asked for.
    shown = re.findall(r"^\s+(.+?)\s+64\s+0\s", text, re.M)
    assert sorted(shown) == sorted(want.values())
    table = tmp_path / "census.csv"
    assert main(["census", "--csv", str(table), str(named)]) == 0
    with open(table, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["kernel"]: r["demangled"] for r in rows} == want


@pytest.mark.parametrize("name", ["a", "b", "main"])
def test_a_kernel_pattern_selects_the_c_name_alone(named, capsys, name):
    assert main(["occupancy", "--json", "--block", "64", "--kernel", f"^{name}$", str(named)]) == 0
    assert [r["kernel"] for r in json.loads(capsys.readouterr().out)["results"]] == [name]
    # The type a would have been read as selects nothing any more.
    assert main(["occupancy", "--json", "--block", "64", "--kernel", "^signed char$", str(named)]) == 2
    capsys.readouterr()


# Spellings at the edges of what llvm-cxxfilt-22 demangles without -t: one to four underscores
# before Z (block invocations), a leading dot, a symbol version, a Rust v0 name, an MSVC name
# (not demangled by llvm-cxxfilt's default mode), invalid mangled names, and C names that -t
# would type-demangle.
EDGES = [
    "a",
    "b",
    "c",
    "f",
    "i",
    "main",
    "St3foo",
    "Z1fv",
    "_",
    "__",
    ".",
    "_Z",
    "_Zfoo",
    "_Z1fv",
    "__Z1fv",
    "___Z1fv_block_invoke",
    "____Z1fv_block_invoke_2",
    "_____Z1fv",
    "._Z1fv",
    ".__Z1fv",
    ".._Z1fv",
    ".a",
    "_Z1fv@@VER",
    "_Z1fv@VER",
    "a@b",
    "_Z1fv.cold",
    "_ZN2ns1fEv",
    "_ZTV1A",
    "_RNvC3foo3bar",
    "_RNvC3foo3bar@V",
    "._RNvC3foo3bar",
    "_R3foo",
    "?foo@@YAXXZ",
    "_GLOBAL__sub_I_x",
    "_ZN1a1bEv$",
]


def test_edge_spellings_are_demangled_exactly_when_llvm_cxxfilt_demangles_them():
    assert [demangle(n) for n in EDGES] == cxxfilt(EDGES)


def test_d_names_and_import_thunks_are_kept_as_written_where_llvm_cxxfilt_differs():
    # Documented in docs/cli.md: no GPU kernel is a D function or a Windows import thunk.
    kept = ["_D3fooZ", "__imp__Z1fv", "__imp_a"]
    assert cxxfilt(kept) == ["foo", "import thunk for f()", "import thunk for signed char"]
    assert [demangle(n) for n in kept] == kept
    assert not any(is_mangled(n) for n in kept)
