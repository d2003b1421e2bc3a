"""The last codeobject survivors of the final mutation sample, each pinned by a fact of its own.

Names: kernels in an anonymous namespace, mangled as clang-22 mangles them (built with
``clang-22 -x hip --offload-arch=gfx942 -nogpulib -nogpuinc --cuda-device-only`` and read with
``llvm-readelf-22 -s``); the demangled forms are what llvm-cxxfilt-22 prints, which the Itanium
ABI fixes (``_GLOBAL__N_1`` is "(anonymous namespace)", a template's return type is spelt, a
plain function's is not). The other pins are bytes the tests build and the messages the house
promises (an error names what is wrong and where).
"""

from __future__ import annotations

import dataclasses
import struct
import subprocess

import pytest

from amdocc.codeobject.descriptor import _BY_LAYOUT, KERNEL_DESCRIPTOR, _CompiledLayout, decode_descriptor
from amdocc.codeobject.notes import decode_v2_isa
from amdocc.codeobject.reader import parse_code_object
from amdocc.demangle import base_name, qualified_name
from amdocc.elf import Note
from amdocc.errors import FormatError, Origin, UsageError
from amdocc.targets import get_target
from conftest import FIXTURES

GFX942 = parse_code_object((FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes(), Origin("built.co"))

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


def _with_kernels(names: list[str], symbols: list[str] | None = None):
    template = GFX942.kernels[0]
    symbols = symbols or [n + ".kd" for n in names]
    kernels = [dataclasses.replace(template, name=n, symbol=s, memo={}) for n, s in zip(names, symbols, strict=True)]
    return dataclasses.replace(GFX942, kernels=kernels)


def _refusal(co, name) -> str:
    with pytest.raises(UsageError) as caught:
        co.kernel(name)
    return caught.value.message


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


def test_a_truncated_descriptor_is_named_with_its_offset():
    data = bytes(KERNEL_DESCRIPTOR.size + 8)
    with pytest.raises(FormatError) as caught:
        decode_descriptor(data, 16, get_target("gfx942"), Origin("built.co"))
    assert caught.value.offset == 16
    assert caught.value.message == (
        "truncated or out-of-range kernel descriptor: needs 64 bytes at 0x10, but only 0x48 bytes are available"
    )


def test_a_set_sgpr_granule_on_gfx10_plus_names_rsrc1_bits_9_to_6():
    # AMDGPUUsage.rst: COMPUTE_PGM_RSRC1 bits 9:6 are GRANULATED_WAVEFRONT_SGPR_COUNT, reserved
    # from gfx10 on; rsrc1 is the descriptor's word at byte 48.
    data = bytearray(KERNEL_DESCRIPTOR.size)
    struct.pack_into("<I", data, 48, 5 << 6)
    descriptor = decode_descriptor(bytes(data), 0, get_target("gfx1100"), Origin("built.co"))
    assert [p for p in descriptor.problems if "reserved on" in p] == [
        "compute_pgm_rsrc1 bits 9:6 (GRANULATED_WAVEFRONT_SGPR_COUNT) are reserved on gfx11 and must be zero "
        "(SGPRs are not allocated per wave from gfx10 on), but hold 5; llvm-objdump refuses this descriptor"
    ]


def test_each_layout_compiles_the_sgpr_granule_as_its_only_must_be_zero_field_from_gfx10_on():
    # Built afresh here: decoding caches each layout's compiled form once per process, so a
    # decode alone may never build it.
    for layout in _BY_LAYOUT:
        found = [(name, f.name, f.word, f.hi, f.lo) for name, f, _ in _CompiledLayout(layout).must_be_zero]
        gfx10_on = layout not in ("gfx6", "gfx90a")
        assert (
            found
            == [("granulated_wavefront_sgpr_count", "granulated_wavefront_sgpr_count", "compute_pgm_rsrc1", 9, 6)]
            * gfx10_on
        )


def test_isa_names_past_the_note_are_refused_in_those_words():
    desc = struct.pack("<HHIII", 4, 8, 9, 0, 6) + b"AMD\0AMDGPU\0"  # 8 + 4 > 11 name bytes
    with pytest.raises(FormatError) as caught:
        decode_v2_isa(Note("AMD", 1, desc, 0x40), Origin("built.co", base=0))
    assert caught.value.message == "ISA note names run past the note"
    assert caught.value.offset == 16  # the names start after the 16-byte header
