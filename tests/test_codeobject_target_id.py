"""Target ids from e_flags, checked word by word against llvm-readelf-22.

``llvm-readelf-22 -h`` prints the e_flags word as "Flags: 0x54c, gfx942, xnack, sramecc": the
processor, then each feature the word speaks of. From code-object v4 on (EI_ABIVERSION 2+) a
feature's two-bit selector prints as "name" (any), "name-" (off) or "name+" (on) and nothing when
it is 0 (unsupported); v3 (EI_ABIVERSION 1) prints the names of the single bits that are set.
v6 generic processors add "generic_vN" (AMDGPUUsage.rst "AMDGPU ELF Header e_flags").
"""

from __future__ import annotations

import itertools
import re
import struct
import subprocess

import pytest

from amdocc.codeobject.target_id import TargetId, decode_e_flags
from conftest import FIXTURES

BASE = (FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes()
E_FLAGS, EI_ABIVERSION = 0x30, 8
CO_VERSION_ABI = {3: 1, 4: 2, 5: 3, 6: 4}
# Processors with both features, one with neither (gfx1100), and a v6 generic one (mach values
# from AMDGPUUsage.rst "AMDGPU EF_AMDGPU_MACH Values").
MACHS = {"gfx906": 0x2F, "gfx90a": 0x3F, "gfx942": 0x4C, "gfx1100": 0x41, "gfx9-4-generic": 0x5F}
SELECTOR_WORDS = {0: None, 1: "any", 2: "off", 3: "on"}
READELF_STATE = {"": "any", "-": "off", "+": "on"}


def _words():
    for name, mach in MACHS.items():
        for co_version in (4, 5, 6):
            if name.endswith("generic") and co_version != 6:
                continue  # generic processors came with v6
            generic = 1 << 24 if name.endswith("generic") else 0
            for xnack, sramecc in itertools.product(SELECTOR_WORDS, repeat=2):
                yield co_version, mach | xnack << 8 | sramecc << 10 | generic
        if not name.endswith("generic"):
            for xnack, sramecc in itertools.product((0, 1), repeat=2):
                yield 3, mach | xnack << 8 | sramecc << 9


def _readelf(tmp_path, words):
    paths = []
    for i, (co_version, flags) in enumerate(words):
        data = bytearray(BASE)
        data[EI_ABIVERSION] = CO_VERSION_ABI[co_version]
        struct.pack_into("<I", data, E_FLAGS, flags)
        path = tmp_path / f"{i}.hsaco"
        path.write_bytes(bytes(data))
        paths.append(str(path))
    out = subprocess.run(["llvm-readelf-22", "-h", *paths], capture_output=True, text=True, check=True).stdout
    return re.findall(r"^\s*Flags:\s*(.*)$", out, re.M)


def _from_readelf(line: str, co_version: int):
    """(processor, sramecc, xnack, generic version) as llvm-readelf-22 names them."""
    _, processor, *features = [part.strip() for part in line.split(",")]
    states = {}
    generic = 0
    for feature in features:
        if feature.startswith("generic_v"):
            generic = int(feature[len("generic_v") :])
            continue
        m = re.fullmatch(r"(xnack|sramecc)([+-]?)", feature)
        assert m, line
        states[m.group(1)] = "on" if co_version == 3 else READELF_STATE[m.group(2)]
    return processor, states.get("sramecc"), states.get("xnack"), generic


@pytest.mark.llvm22
def test_every_selector_of_every_version_reads_as_llvm_readelf_22_prints_it(tmp_path):
    words = list(_words())
    lines = _readelf(tmp_path, words)
    assert len(lines) == len(words) == 4 * 3 * 16 + 16 + 4 * 4  # every word was printed
    for (co_version, flags), line in zip(words, lines, strict=True):
        decoded = decode_e_flags(flags, co_version)
        processor, sramecc, xnack, generic = _from_readelf(line, co_version)
        if co_version == 3:
            # v3 prints only the bits that are set; amdocc says "off" for a clear bit the processor has.
            # A set bit for a feature the processor lacks is a problem, and the feature stays unstated.
            target = decoded.target
            for name, state, has in (("sramecc", sramecc, target.sramecc), ("xnack", xnack, target.xnack)):
                if state and not has:
                    assert f"e_flags sets {name} on, but {target.name} has no {name}" in decoded.problems
            sramecc = (sramecc or "off") if target.sramecc else None
            xnack = (xnack or "off") if target.xnack else None
        else:
            for name, state, has in (
                ("sramecc", sramecc, decoded.target.sramecc),
                ("xnack", xnack, decoded.target.xnack),
            ):
                said = f"e_flags sets {name} {state}, but {decoded.target.name} has no {name}"
                assert (said in decoded.problems) == (state is not None and not has), (hex(flags), decoded.problems)
        got = decoded.target_id
        assert (got.processor, got.sramecc, got.xnack, decoded.generic_version) == (
            processor,
            sramecc,
            xnack,
            generic,
        ), (
            co_version,
            hex(flags),
            line,
        )


def test_problems_of_an_e_flags_word():
    # gfx1100 (mach 0x41) has neither feature: a v4 selector of "on" for xnack is a lie.
    assert decode_e_flags(0x41 | 3 << 8, 4).problems == ("e_flags sets xnack on, but gfx1100 has no xnack",)
    assert decode_e_flags(0x41 | 1 << 10, 5).problems == ("e_flags sets sramecc any, but gfx1100 has no sramecc",)
    # v3 has one bit per feature: a clear bit says nothing, a set one claims the feature.
    assert decode_e_flags(0x41, 3).problems == ()
    assert decode_e_flags(0x41 | 0x100, 3).problems == ("e_flags sets xnack on, but gfx1100 has no xnack",)
    assert decode_e_flags(0x41, 3).target_id == TargetId("gfx1100")
    # Generic processors carry their version in bits 24-31 (v6); others must leave it 0.
    assert decode_e_flags(0x5F, 6).problems == (
        "generic processor gfx9-4-generic without a generic version in e_flags",
    )
    assert decode_e_flags(0x4C | 2 << 24, 6).problems == ("generic version 2 set for non-generic gfx942",)
    # Before v6 those bits are undefined.
    assert decode_e_flags(0x4C | 1 << 24, 5).problems == ("unknown e_flags bits 0x1000000 for code-object v5",)
    assert decode_e_flags(0x4C | 1 << 24, 5).generic_version == 0


@pytest.mark.parametrize(
    "text,expected",
    [
        ("gfx942:sramecc+:xnack-", TargetId("gfx942", "on", "off")),
        ("amdgcn-amd-amdhsa--gfx90a:xnack+", TargetId("gfx90a", None, "on")),
        ("GFX906:SRAM-ECC-", TargetId("gfx906", "off", None)),
        ("gfx906+xnack+sram-ecc", TargetId("gfx906", "on", "on")),  # the v2/v3 spelling
        ("gfx1100", TargetId("gfx1100")),
        ("gfx942:xnack", TargetId("gfx942")),  # no state: not a feature setting
    ],
)
def test_target_id_text(text, expected):
    # AMDGPUUsage.rst "Target ID": processor, then ":feature+" or ":feature-", in any order.
    assert TargetId.parse(text) == expected


def test_target_id_canonical_text_and_matching():
    assert str(TargetId("gfx942", "on", "off")) == "gfx942:sramecc+:xnack-"
    assert str(TargetId("gfx942", "any", "any")) == "gfx942"
    code, device = TargetId("gfx90a", None, "any"), TargetId("gfx90a", "on", "on")
    assert code.matches(device)
    assert not TargetId("gfx90a", None, "off").matches(device)
    assert not TargetId("gfx90a", "off", None).matches(device)
    assert not TargetId("gfx942").matches(TargetId("gfx90a"))
