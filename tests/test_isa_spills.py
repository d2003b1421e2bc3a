"""Spills found in the code against two oracles: the metadata (llvm-readelf-22 --notes:
``.vgpr_spill_count``, ``.sgpr_spill_count``, ``.private_segment_fixed_size``) for the totals, and
llc-22's own asm comments (``N-byte Folded Spill`` / ``Folded Reload``) for which instructions
they are. The kernels come from tools/fixture_src/isa_kernels.hip: isa_spill has a 24-VGPR
budget, isa_sgpr_spill a 24-SGPR one, isa_private a dynamically indexed private array."""

from __future__ import annotations

import pytest

import amdocc
from amdocc.isa.analysis import analyse, summary
from isa_oracle import BUILDS, align, asm_loop_depths, build, readelf_notes
from test_isa_disassembly import _library
from test_isa_flow import compiled  # noqa: F401 - the llc-22 builds, shared fixture

pytestmark = pytest.mark.llvm22
NAMES = [b[0] for b in BUILDS]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    _library()
    out = tmp_path_factory.mktemp("isa-spills")
    return {name: build(out, name, arch, flags) for name, arch, flags in BUILDS}


def _kernels(path):
    (co,) = amdocc.load(path)
    notes = readelf_notes(path)
    return {k.name: (summary(analyse(k, co.origin)), notes[k.name]) for k in co.kernels}


@pytest.mark.parametrize("name", NAMES)
def test_vgpr_spill_dwords_equal_the_metadata_count(built, name):
    kernels = _kernels(built[name])
    s, note = kernels["_Z9isa_spillPKfPfi"]
    assert note["vgpr_spill_count"] > 0
    assert s["spills"]["vgpr"] == note["vgpr_spill_count"]
    assert s["spills"]["classification"]["vgpr"] == "spill"
    assert s["spills"]["in_loops"]["vgpr"] > 0  # the values live across the loop are spilled in it
    for kernel, (s, note) in kernels.items():  # every kernel classified "spill" agrees exactly
        if s["spills"]["classification"]["vgpr"] == "spill":
            assert s["spills"]["vgpr"] == note["vgpr_spill_count"], kernel


@pytest.mark.parametrize("name", NAMES)
def test_sgpr_lane_spills_equal_the_metadata_count(built, name):
    s, note = _kernels(built[name])["_Z14isa_sgpr_spillPKiPii"]
    assert note["sgpr_spill_count"] > 0
    assert s["spills"]["sgpr"] == note["sgpr_spill_count"]
    assert s["spills"]["classification"]["sgpr"] == "spill"


@pytest.mark.parametrize("name", NAMES)
def test_a_private_array_is_not_called_a_spill(built, name):
    s, note = _kernels(built[name])["_Z11isa_privatePKiPfi"]
    assert note["vgpr_spill_count"] == 0 and note["private_segment_fixed_size"] > 0
    assert s["spills"]["vgpr"] > 0
    assert s["spills"]["classification"]["vgpr"] == "private"


def test_the_listing_says_a_private_arrays_scratch_traffic_is_no_spill(built, capsys):
    # The text listing's header names what the marked scratch instructions are; for a kernel
    # whose metadata has no spills and a private segment, that is a private array.
    import re
    import subprocess

    from amdocc.cli.main import main

    path = built["gfx942"]
    note = readelf_notes(path)["_Z11isa_privatePKiPfi"]
    assert note["vgpr_spill_count"] == 0 and note["private_segment_fixed_size"] > 0
    assert main(["isa", "--kernel", "isa_private", str(path)]) == 0
    out = capsys.readouterr().out
    (header,) = [line for line in out.splitlines() if line.startswith("  scratch:")]
    dump = subprocess.run(["llvm-objdump-22", "-d", "--mcpu=gfx942", str(path)], capture_output=True, text=True)
    body = dump.stdout.split("<_Z11isa_privatePKiPfi>:", 1)[1].split("\n\n", 1)[0]
    stores = len(re.findall(r"^\s+scratch_store_dword ", body, re.M))
    assert stores > 0 and header.startswith(f"  scratch: {stores} dwords stored /"), header
    assert "private array" in header and "spill," not in header.replace(".vgpr_spill_count", ""), header


@pytest.mark.parametrize("name", NAMES)
def test_spill_and_reload_instructions_are_the_ones_llc_comments(compiled, name):  # noqa: F811
    hsaco, asm = compiled[name]
    expected = asm_loop_depths(asm)
    (co,) = amdocc.load(hsaco)
    marked = 0
    for kernel in co.kernels:
        isa = analyse(kernel, co.origin)
        theirs = expected[kernel.name]
        for i, j in align([ins.mnemonic for ins in isa.instructions], theirs):
            mark = isa.spills.marks[i]
            ours = {"vgpr": "spill", "vgpr_reload": "reload"}.get(mark or "")
            if kernel.name == "_Z11isa_privatePKiPfi":  # its private array is not commented
                continue
            expected_mark = theirs[j][2]
            if expected_mark == "spill or reload":  # inside a commented s_clause
                assert ours in ("spill", "reload"), (kernel.name, hex(isa.instructions[i].address), theirs[j])
            else:
                assert ours == expected_mark, (kernel.name, hex(isa.instructions[i].address), mark, theirs[j])
            marked += ours is not None
    assert marked > 0


@pytest.mark.parametrize(
    ("stored", "spill_count", "private_size", "expected"),
    [
        (38, 38, 84, "spill"),  # the stores write exactly what the metadata calls spilled
        (3, 0, 400, "private"),  # no spills, a private segment: the program's own array
        (0, 0, 0, "none"),
        (0, 0, 272, "none"),  # a private segment reached through flat addresses
        (0, None, None, "none"),  # hand-written code without the key, and nothing stored
        (41, 38, 400, "ambiguous"),  # spills and a private array together
        (0, 43, 0, "ambiguous"),  # spills the stores do not show (to AGPRs on gfx908)
        (5, None, 64, "ambiguous"),  # no count to reconcile with
    ],
)
def test_vgpr_classification_follows_the_issues_rules(stored, spill_count, private_size, expected):
    from amdocc.isa.spills import _classify_vgpr

    assert _classify_vgpr(stored, spill_count, private_size)[0] == expected


@pytest.mark.parametrize(
    ("written", "spill_count", "expected"),
    [(80, 80, "spill"), (0, 0, "none"), (6, 0, "none"), (0, None, "none"), (7, 5, "ambiguous"), (3, None, "ambiguous")],
)
def test_sgpr_classification_follows_the_issues_rules(written, spill_count, expected):
    from amdocc.isa.spills import _classify_sgpr

    assert _classify_sgpr(written, spill_count)[0] == expected


def test_in_loops_counts_the_dwords_of_marked_instructions_at_depth_one_or_more_only():
    # Worked by hand: a 4-dword store and a 1-dword reload inside loops, a 2-dword store and a
    # lane write outside any loop; unmarked instructions count nothing wherever they are.
    from amdocc.isa.spills import Spills

    spills = Spills(("vgpr", None, "vgpr_reload", "vgpr", "sgpr", None), (4, 0, 1, 2, 1, 0))
    assert spills.in_loops((1, 2, 2, 0, 0, 3)) == {"vgpr": 4, "vgpr_reload": 1, "sgpr": 0, "sgpr_reload": 0}
    with pytest.raises(ValueError):
        spills.in_loops((1, 2))


# Lane reads and writes the program makes itself (a broadcast, a lane set), beside SGPRs that
# spill to VGPR lanes under a 24-SGPR budget. llc-22's assembly names each VGPR it spills SGPRs
# to ("; implicit-def: $vgprN : SGPR spill to VGPR lane"): the oracle for which lane
# instructions are spills, and llvm-readelf-22's .sgpr_spill_count for how many SGPRs spilled.
LANES = """
#include "hip_defs.h"
__global__ void lanes_program(const int* x, int* y, int n) {
  int t = TID_X(), v = x[t], acc = 0;
  for (int r = 0; r < n; ++r) {
    acc += __builtin_amdgcn_readlane(v + r, 5) + __builtin_amdgcn_readlane(v * r, 17);
    asm volatile("v_writelane_b32 %0, %1, 9" : "+v"(v) : "s"(__builtin_amdgcn_readfirstlane(acc)));
  }
  y[t] = acc + v;
}
__global__ __attribute__((amdgpu_num_sgpr(24))) void lanes_spilled(const int* __restrict__ c, int* y, int n) {
  int u[24];
#pragma unroll
  for (int i = 0; i < 24; ++i) u[i] = c[i];
  int t = TID_X(), acc = 0;
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < 24; ++i) acc += (t ^ r) * u[i] + u[(i + 5) % 24];
    acc += __builtin_amdgcn_readlane(acc, 17);
  }
  y[t] = acc;
}
"""


def _lane_oracle(asm: str, function: str) -> tuple[int, int, int, int]:
    """(spill lane writes, spill lane reads, other lane writes, other lane reads) in llc's
    assembly of ``function``, by the VGPRs it says it spills SGPRs to."""
    import re

    body = asm.split(f"{function}:", 1)[1].split(".Lfunc_end", 1)[0]
    spill_vgprs = {f"v{n}" for n in re.findall(r"\$vgpr(\d+) : SGPR spill to VGPR lane", body)}
    counts = [0, 0, 0, 0]
    for m in re.finditer(r"^\s+v_(writelane|readlane)_b32 ([^,]+), ([^,]+),", body, re.M):
        vgpr = m.group(2) if m.group(1) == "writelane" else m.group(3)
        counts[(0 if vgpr.strip() in spill_vgprs else 2) + (m.group(1) == "readlane")] += 1
    return counts[0], counts[1], counts[2], counts[3]


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_only_lane_reads_and_writes_of_a_spill_vgpr_are_sgpr_spills(tmp_path, arch):
    from isa_oracle import llc_from_source

    _library()
    hsaco, asm = llc_from_source(tmp_path, "lanes", LANES, arch)
    notes = readelf_notes(hsaco)
    (co,) = amdocc.load(hsaco)
    seen = {}
    for kernel in co.kernels:
        isa = analyse(kernel, co.origin)
        spill_writes, spill_reads, own_writes, own_reads = _lane_oracle(asm, kernel.name)
        marks = [isa.spills.marks[i] for i, ins in enumerate(isa.instructions) if "lane_b32" in ins.mnemonic]
        assert len(marks) == spill_writes + spill_reads + own_writes + own_reads, kernel.name
        assert (marks.count("sgpr"), marks.count("sgpr_reload")) == (spill_writes, spill_reads), kernel.name
        assert isa.spills.totals["sgpr"] == notes[kernel.name]["sgpr_spill_count"]
        seen[kernel.name] = (spill_writes, spill_reads, own_writes, own_reads)
    # The program's own lane instructions are there to be left unmarked, and the spills to be marked.
    assert seen["_Z13lanes_programPKiPii"][:2] == (0, 0) and min(seen["_Z13lanes_programPKiPii"][2:]) > 0
    assert min(seen["_Z13lanes_spilledPKiPii"][:2]) > 0 and seen["_Z13lanes_spilledPKiPii"][3] > 0
