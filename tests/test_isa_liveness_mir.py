"""Register def/use and liveness held to LLVM 22's own final machine IR.

llc-22 compiles seeded kernels from tools/livegen.py (loops, divergent and uniform branches, early
returns, LDS, atomics with and without a used result, wide tuples, SGPR-heavy scalar chains,
64-bit arithmetic, MFMA with AGPRs, forced spills) for gfx908, gfx90a, gfx942, gfx950, gfx1030,
gfx1100 in wave32 and wave64, gfx1201 and gfx1250, and Triton's own ``.llir`` for gfx942, gfx950
and gfx1100, printing the machine IR after its last machine pass. Every instruction's defs and
uses from tables/isa_semantics.toml must equal the MIR's at 32-bit granularity, and every block's
live-ins from amdocc's liveness must equal MIR's ``liveins:``; each difference must be explained by
a named rule (tests/isa_mir_cases.py, each rule pinned by a test below). The oracle is LLVM's MIR;
nothing here compares amdocc with itself.
"""

from __future__ import annotations

import collections
import dataclasses
import re

import pytest

import isa_mir_cases as cases
from amdocc.isa import semantics as S
from oracle import mir

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]

SEEDS = range(4)  # 9 configurations x 4 modules x 10 kernels = 360 kernels


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[cases.Case]:
    return cases.generated(tmp_path_factory.mktemp("livegen"), SEEDS)


def test_corpus_covers_every_configuration_with_300_kernels(corpus):
    by_family = collections.Counter(c.family for c in corpus)
    assert len(corpus) >= 300
    assert set(by_family) == {f"{t}{'-w64' if w else ''}" for t, w in cases.CONFIGS}
    mnemonics = collections.Counter(ins.mnemonic.split("_e")[0] for c in corpus for ins in c.instructions)
    # The shapes the table must get right occur in the corpus (so the agreement below covers them).
    for needed in ("v_fmac_f32", "v_cmpx_", "v_add_co_u32", "v_mad_u64_u32", "v_writelane_b32", "v_mfma_",
                   "v_accvgpr_write_b32", "global_atomic_", "ds_add_rtn", "v_mov_b32_dpp", "_d16", "v_dual_",
                   "v_permlane16_b32", "v_permlane32_swap", "global_load_lds", "v_div_scale_f32"):  # fmt: skip
        assert any(m.startswith(needed) or needed in m for m in mnemonics), needed
    assert sum(1 for c in corpus for mi, _ in c.mapped.pairs if mi.stack_load) > 0, "no kernel spilled"


def test_every_instruction_defines_and_uses_what_mir_says(corpus):
    unexplained = []
    for case in corpus:
        differences, _ = cases.instruction_differences(case)
        unexplained += [d for d in differences if d.rule is None]
    assert not unexplained, "\n".join(map(str, unexplained[:20]))


def test_every_block_live_in_equals_mir_or_a_named_rule(corpus):
    unexplained = []
    for case in corpus:
        assert case.liveness.unknown is None, (case.name, case.liveness.unknown)
        unexplained += [d for d in cases.block_differences(case) if d.rule is None]
    assert not unexplained, "\n".join(map(str, unexplained[:20]))


def test_every_spill_reload_writes_a_register_live_after_it(corpus):
    reloads = [r for case in corpus for r in cases.spill_reloads(case)]
    assert reloads
    dead = [r for r in reloads if not r[2]]
    assert not dead, dead[:10]


def test_max_live_vgprs_never_exceed_the_descriptor_allocation(corpus):
    from amdocc.isa.liveness import allocation_breaches

    for case in corpus:
        assert case.liveness.max_live is not None
        assert allocation_breaches(case.liveness.max_live, case.fields) == [], case.name


@pytest.fixture(scope="module")
def triton_corpus(tmp_path_factory) -> list[cases.Case]:
    """Triton 3.9's own LLVM IR (its cache's ``.llir``) for gfx942, gfx950 and gfx1100, through llc-22."""
    import triton_cache_fixture as tcf  # skips (or, in CI, fails) without Triton

    _, made = tcf.session_cache(tmp_path_factory)
    work = tmp_path_factory.mktemp("triton-llir")
    out = []
    for (name, arch), meta in sorted(made.items()):
        ll = work / f"{name}_{arch}.ll"
        ll.write_text(mir.for_llc22(meta["hsaco"].with_suffix(".llir").read_text()))
        out += cases.build(ll, arch, False, work)
    return out


def _rules_seen(kernels: list[cases.Case]) -> tuple[collections.Counter[str], list[cases.Difference]]:
    seen: collections.Counter[str] = collections.Counter()
    unexplained = []
    for case in kernels:
        differences, _ = cases.instruction_differences(case)
        for d in differences + cases.block_differences(case):
            if d.rule is None:
                unexplained.append(d)
            else:
                seen.update(d.rule.split("+"))  # a block may need several rules: "rule+rule"
    return seen, unexplained


def test_triton_kernels_agree_with_mir_instruction_by_instruction_and_block_by_block(triton_corpus):
    assert {c.target for c in triton_corpus} == {"gfx942", "gfx950", "gfx1100"}
    for case in triton_corpus:
        assert case.liveness.unknown is None, (case.name, case.liveness.unknown)
        assert cases.L.allocation_breaches(case.liveness.max_live, case.fields) == [], case.name
    seen, unexplained = _rules_seen(triton_corpus)
    assert not unexplained, "\n".join(map(str, unexplained[:20]))
    assert seen["kernarg-preload-prologue"], seen  # gfx942/gfx950 preload kernel arguments
    # vcc spilled into VGPR lanes (gfx942 matmul): MIR's implicit $vcc beside vcc_lo is set apart
    assert any(mi.special_bookkeeping for c in triton_corpus for mi, _ in c.mapped.pairs)


def test_the_reserved_scratch_descriptor_and_the_entrys_abi_inputs_are_explained(tmp_path):
    # gfx908 kernels that spill through a buffer resource: the prologue copies s[0:3] into s[12:15],
    # which MIR then lists whole in every block, and MIR lists the ABI inputs at the entry even
    # where that copy overwrites s14 first.
    ll = tmp_path / "gfx908_4.ll"
    ll.write_text(cases.livegen.module("gfx908", 4, 10))
    seen, unexplained = _rules_seen(cases.build(ll, "gfx908", False, tmp_path))
    assert not unexplained, unexplained
    assert seen["reserved-scratch-resource"] and seen["entry-abi-inputs"], seen


# -- the table broken on purpose: the comparison must notice ---------------------------------------


def _broken(rule_name: str, **change) -> S.Table:
    table = S.table()
    rules = tuple(dataclasses.replace(r, **change) if r.name == rule_name else r for r in table.rules)
    return dataclasses.replace(table, rules=rules)


def _disagreements(corpus, table: S.Table, mnemonic: re.Pattern[str]) -> int:
    count = 0
    for case in corpus:
        broken = S.Semantics(case.semantics.isa_major, case.semantics.wave_size, table)
        differences, _ = cases.instruction_differences(case, broken)
        count += sum(1 for d in differences if d.rule is None and mnemonic.match(d.text))
    return count


def test_fmac_taken_as_a_plain_def_is_caught(corpus):
    table = _broken("tied-accumulator", roles=("def",))
    assert _disagreements(corpus, table, re.compile(r"v_(dual_)?fmac")) > 0


def test_cmpx_writing_an_sgpr_on_gfx11_is_caught(corpus):
    table = _broken("cmpx-exec-only", roles=("def",))
    gfx11_up = [c for c in corpus if c.semantics.isa_major >= 11]
    assert _disagreements(gfx11_up, table, re.compile(r"v_cmpx")) > 0


# -- each rule that explains a difference, pinned on the case that needs it ------------------------


def test_rules_that_explain_differences_are_the_documented_ones(corpus):
    seen, unexplained = _rules_seen(corpus)
    assert not unexplained
    assert set(seen) <= set(cases.RULES), seen
    assert seen["exec-masked-def"] and seen["implicit-def"] and seen["never-written"], seen
