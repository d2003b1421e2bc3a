"""Looking a kernel up by name, and how a code object prints: every branch of the refusal.

The kernels are a fixture's (llvm-readelf-22 -s names them) renamed here; demangled names are
what llvm-cxxfilt-22 prints for them (Itanium ABI builtin type codes: i int, f float, d double,
c char, l long, s short, b bool, m unsigned long, j unsigned int).
"""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from amdocc.codeobject.reader import parse_code_object
from amdocc.errors import Origin, UsageError
from conftest import FIXTURES
from test_demangle import ANONYMOUS

GFX942 = parse_code_object((FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes(), Origin("built.co"))
OVERLOADS = ["_Z3fooi", "_Z3foof", "_Z3food", "_Z3fooc", "_Z3fool", "_Z3foos", "_Z3foob", "_Z3foom", "_Z3fooj"]


def _with_kernels(names: list[str], symbols: list[str] | None = None):
    template = GFX942.kernels[0]
    symbols = symbols or [n + ".kd" for n in names]
    kernels = [dataclasses.replace(template, name=n, symbol=s) for n, s in zip(names, symbols, strict=True)]
    return dataclasses.replace(GFX942, kernels=kernels)


def _refusal(co, name) -> str:
    with pytest.raises(UsageError) as caught:
        co.kernel(name)
    return caught.value.message


def test_a_name_near_no_kernel_lists_the_kernels_there():
    far = "q" * 30
    names = [k.name for k in GFX942.kernels]
    assert _refusal(GFX942, far) == f"no kernel {far!r} in built.co (gfx942); its kernels: {', '.join(names)}"
    nine = [f"kernel_{i:02}" for i in range(9)]
    assert _refusal(_with_kernels(nine), far) == (
        f"no kernel {far!r} in built.co (gfx942); its kernels: {', '.join(nine[:8])}, ... (9 in all)"
    )
    assert _refusal(_with_kernels([]), far) == f"no kernel {far!r} in built.co (gfx942); it has no kernels"


def test_a_misspelt_name_is_answered_with_the_nearest_kernels():
    message = _refusal(GFX942, "_Z9saxpy_ldsfPKfPfx")
    assert message.startswith("no kernel '_Z9saxpy_ldsfPKfPfx' in built.co (gfx942); nearest: _Z9saxpy_ldsfPKfPfi")


@pytest.mark.llvm22
def test_a_name_many_overloads_share_lists_eight_and_counts_them():
    demangled = subprocess.run(
        ["llvm-cxxfilt-22"], input="\n".join(OVERLOADS), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    co = _with_kernels(OVERLOADS)
    assert _refusal(co, "foo") == (
        f"'foo' names 9 kernels in built.co: {', '.join(demangled[:8])}, ... (9 in all); "
        "give the whole signature or the mangled name"
    )
    two = _with_kernels(OVERLOADS[:2])
    assert _refusal(two, "foo") == (
        f"'foo' names 2 kernels in built.co: {demangled[0]}, {demangled[1]}; "
        "give the whole signature or the mangled name"
    )
    # Each spelling of one kernel finds it: mangled, symbol, signature.
    for spelling in (OVERLOADS[8], OVERLOADS[8] + ".kd", demangled[8]):
        assert co.kernel(spelling).name == OVERLOADS[8]


def test_repr_lists_forty_kernels_then_counts_the_rest():
    co = _with_kernels([f"kernel_{i:02}" for i in range(41)])
    lines = repr(co).splitlines()
    assert lines[0] == "CodeObject(gfx942, v4, 41 kernels, 'built.co')"
    assert len(lines) == 1 + 40 + 1 and lines[-1] == "  ... 1 more (see .kernels)"
    assert lines[40].startswith("  Kernel('kernel_39', gfx942, ")
    one = _with_kernels(["kernel_00"])
    assert repr(one).splitlines()[0] == "CodeObject(gfx942, v4, 1 kernel, 'built.co')"
    assert len(repr(_with_kernels([f"kernel_{i:02}" for i in range(40)])).splitlines()) == 41


@pytest.mark.llvm22
def test_the_spellings_of_a_kernel_are_its_names_and_the_demangled_signature():
    # llvm-cxxfilt-22: _ZN2ns3fooEi is ns::foo(int).
    (readable,) = subprocess.run(
        ["llvm-cxxfilt-22"], input="_ZN2ns3fooEi", capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert readable == "ns::foo(int)"
    (kernel,) = _with_kernels(["_ZN2ns3fooEi"]).kernels
    assert kernel.demangled_name == readable
    assert kernel.names() == ("_ZN2ns3fooEi", "_ZN2ns3fooEi.kd", readable, "ns::foo", "foo")
    plain = _with_kernels(["plain_kernel"]).kernels[0]
    assert plain.demangled_name is None and plain.names() == ("plain_kernel", "plain_kernel.kd")


def test_anonymous_namespace_kernels_are_found_by_every_spelling_and_never_by_a_fragment():
    co = _with_kernels(list(ANONYMOUS))
    for mangled, (readable, qualified, bare) in ANONYMOUS.items():
        assert co.kernel(mangled).name == mangled
        names = co.kernel(mangled).names()
        assert names == (mangled, mangled + ".kd", readable, qualified, bare)
        for spelling in names:
            assert co.kernel(spelling).name == mangled
    # Fragments of a signature are no kernel's name: the empty string, a return type, the tail
    # of a template argument list.
    for fragment in ("", "void", "1>"):
        assert _refusal(co, fragment).startswith(f"no kernel {fragment!r} in built.co (gfx942); ")


def test_a_symbol_without_the_kd_suffix_is_kept_whole():
    # A v2 code object's kernel symbol is the kernel's name itself: nothing is cut from it.
    co = _with_kernels(["kernel_alpha"], ["kernel_alpha"])
    assert co.kernels[0].names() == ("kernel_alpha",)
    assert _refusal(co, "kernel_al").startswith("no kernel 'kernel_al' in built.co (gfx942); ")


def test_a_misspelling_near_several_kernels_names_each_of_them():
    # difflib ratios to "kernel_alph": 2*11/23 for kernel_alpha, 2*11/24 for kernel_alphxx, the
    # closer first; "zzzz" shares nothing with it.
    co = _with_kernels(["kernel_alphxx", "kernel_alpha", "zzzz"])
    assert _refusal(co, "kernel_alph") == (
        "no kernel 'kernel_alph' in built.co (gfx942); nearest: kernel_alpha, kernel_alphxx"
    )


def test_a_missing_metadata_key_gives_the_callers_default():
    kernel = dataclasses.replace(GFX942.kernels[0], metadata={".sgpr_count": 7})
    assert kernel.meta("sgpr_count", 3) == 7 and kernel.meta(".sgpr_count", 3) == 7
    assert kernel.meta("no_such_key", 3) == 3 and kernel.meta(".no_such_key", "x") == "x"
    assert kernel.meta("no_such_key") is None
