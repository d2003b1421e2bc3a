"""LLVM differential tier: random kernels compiled by two real LLVMs, amdocc's ``llvm`` model read from
the linked code object against the ``; Occupancy:`` comment the compiler printed for the same kernel.

Compilers (tools/kernelgen.py): llc-22 (Debian LLVM 22.1.8), the AMD code generator Triton 3.9
bundles (LLVM 24.0.0git 6bc4aaf6641c, through tools/triton_llc.py, linked by Triton's own LLD), and
ROCm 10.0's compiler backend (rocm-bindings-compiler 10.0.0.0.1.2's libLLVM.so, AMD's 23.0.0git
8f497e0992fb, through tools/rocm_llc.py, which stamps ROCm 10.0's own .comment line). The model is
given no version: it must find the rules in the code object's ``.comment`` (llc-22's objects name
LLD 22.1.8 → llvm-22; Triton's name its LLD's commit → llvm-23; ROCm 10.0's name AMD clang's commit
→ rocm-10.0, whose gfx1310 differs from every other set's). Where ROCm 10.0 does not record the
CU/WGP mode (gfx1250, gfx1310), a +cumode kernel is asked with mode="cu" and the others get the
processor's default: both must agree with the compiler.

Kernels come from tools/kernelgen.py (IR whose inline asm clobbers chosen VGPR/AGPR/SGPR counts,
LDS globals, wave32/64, CU/WGP mode, CO v4-v6). Half the kernels have
"amdgpu-flat-work-group-size"="1,N" and are compared with the model's own range
(1, .max_flat_workgroup_size); the other half have "B,B", a fixed block size, and are compared with
the model asked at ``block_size=B``, which checks the per-block path (WGP SIMD count, the barrier
limit per CU or WGP); a few fixed blocks of two and three waves on RDNA parts make sure the WGP's
barrier limit binds in every run. Deliberately broken per-block paths are then run over the same
compiled kernels and must disagree with the compiler.

The seed differs per run unless AMDOCC_DIFF_SEED is set; it is printed, as are the counts per
compiler and path. AMDOCC_DIFF_KERNELS sets the llc-22 count (default 1200), AMDOCC_DIFF_TRITON
the Triton count (default 800), AMDOCC_DIFF_ROCM10 the ROCm 10.0 count (default 1500). Each run prints
its agreement per processor.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from collections import Counter

import pytest

import amdocc
import kernelgen
from amdocc.models import compute, from_kernel
from amdocc.models import llvm as llvm_model
from conftest import REQUIRE

pytestmark = [pytest.mark.llvm22, pytest.mark.slow]

TARGETS = kernelgen.DEFAULT_TARGETS  # the processors llc-22 compiles for, every generation
# Triton's LLVM also knows the processors LLVM 22 does not.
TRITON_TARGETS = (
    *TARGETS,
    "gfx1154",
    "gfx1170",
    "gfx1172",
    "gfx1250",
    "gfx1251",
    "gfx1250-strict",
    "gfx1310",
    "gfx11-7-generic",
    "gfx12-5-generic",
    "gfx13-generic",
)
# ROCm 10.0's compiler knows the processors LLVM 22 does, and these (measured: not gfx1154,
# gfx11-7-generic, gfx1250-strict or gfx13-generic).
ROCM10_TARGETS = (*TARGETS, "gfx1170", "gfx1172", "gfx1250", "gfx1251", "gfx12-5-generic", "gfx1310")
SEED = int(os.environ.get("AMDOCC_DIFF_SEED", time.time_ns() % 2**32))


def _wrong_simds(t, wave, wgp, wg_size):
    """Mutant: the per-block path counting a CU's SIMDs in WGP mode."""
    slots = t.max_waves_per_simd * t.simds_per_cu
    waves = -(-wg_size // wave)
    return slots if waves == 1 else min(slots // waves, t.max_workgroups_per_wgp if wgp else t.max_workgroups_per_cu)


def _fixed_barriers(t, wave, wgp, wg_size):
    """Mutant: one barrier limit (a CU's 16) whatever the mode."""
    slots = t.max_waves_per_simd * t.simds(wgp)
    waves = -(-wg_size // wave)
    return slots if waves == 1 else min(slots // waves, t.max_workgroups_per_cu)


MUTANTS = {"WGP mode with a CU's SIMD count": _wrong_simds, "a fixed barrier limit": _fixed_barriers}


@dataclasses.dataclass
class Compared:
    usage: object
    block: int | None
    want: int


def _missing(reason):
    """A missing oracle skips with its reason, or fails where oracles are required (.ci/run)."""
    if REQUIRE:
        pytest.fail(reason)
    pytest.skip(reason)


def _draw(compiler, targets, n, prefix):
    rng = random.Random(f"{SEED}-{compiler.name}")
    specs = kernelgen.random_specs(rng, targets, n, prefix=prefix, compiler=compiler)
    # The note keeps only the range's maximum, so a range must start at 1 or be one fixed size.
    return [dataclasses.replace(s, min_wg=s.max_wg if rng.random() < 0.5 else 1, waves_per_eu=None) for s in specs]


def _barrier_edges(targets):
    """Fixed blocks of two and three waves in both modes on RDNA parts: where up to 32 groups fit a
    WGP, so the WGP's barrier limit (32, not a CU's 16) binds (getMaxWorkGroupsPerCU)."""
    out = []
    for target in [t for t in targets if kernelgen.target_caps(t).wgp][:4]:
        for wave in (32, 64):
            for waves in (2, 3):
                for cumode in (False, True):
                    out.append(
                        kernelgen.KernelSpec(
                            f"e{len(out)}", target, wave=wave, cumode=cumode, min_wg=waves * wave, max_wg=waves * wave
                        )
                    )
    return out


def _compile_and_compare(compiler, targets, n, tmp_path, choose_mode=False):
    if not compiler.available():
        _missing(f"{compiler.name} cannot run (is triton 3.9 installed?)")
    specs = _draw(compiler, targets, n, prefix="k") + _barrier_edges(targets)
    by_name = {s.name: s for s in specs}
    results = kernelgen.compile_many(specs, tmp_path / compiler.name, jobs=2, compiler=compiler)
    compared: list[Compared] = []
    mismatches, dropped, rules = [], 0, Counter()
    per_target: Counter = Counter()
    wrong_on: Counter = Counter()
    modes: Counter = Counter()  # where the object does not record the mode: how it was chosen
    for batch in results:
        dropped += len(batch.errors)
        if batch.hsaco is None:
            continue
        kernels = {k.name: k for co in amdocc.load(batch.hsaco) for k in co.kernels}
        for name, info in batch.infos.items():
            k, spec = kernels.get(name), by_name[name]
            if k is None:
                mismatches.append(f"{batch.hsaco.name}: amdocc found no kernel {name}")
                continue
            block = spec.max_wg if spec.min_wg == spec.max_wg else None
            mode = None
            if from_kernel(k).mode_assumed is not None:
                if spec.cumode is False and not k.target.wgp:
                    # A -cumode build for a processor without WGPs (gfx1250's family): ROCm 10.0
                    # then counts per WGP, a mode the hardware lacks; amdocc refuses to model it.
                    with pytest.raises(amdocc.AmdoccError, match="has no WGP mode"):
                        amdocc.occupancy(k, model="llvm", block_size=block, mode="wgp")
                    modes[f"{batch.target} -cumode refused"] += 1
                    continue
                mode = "cu" if choose_mode and spec.cumode else None
                modes[f"{batch.target} {mode or 'default'}"] += 1
            occ = amdocc.occupancy(k, model="llvm", block_size=block, mode=mode)
            rules[occ.profile] += 1
            compared.append(Compared(from_kernel(k, None, mode), block, info["Occupancy"]))
            per_target[batch.target] += 1
            # The compiler's number; where no workgroup of a fixed size fits, the record itself
            # says 0 workgroups and 0 waves, and must then say so consistently.
            if (
                occ.details["llvm_occupancy"] != info["Occupancy"]
                or (occ.blocks_per_cu == 0 and occ.waves_per_simd != 0)
                or (block is None and occ.waves_per_simd != info["Occupancy"])
            ):
                r = k.resources
                wrong_on[batch.target] += 1
                mismatches.append(
                    f"{batch.target} {name}: {compiler.name} Occupancy {info['Occupancy']}, amdocc "
                    f"{occ.details['llvm_occupancy']} ({occ.waves_per_simd} waves/SIMD, {occ.blocks_per_cu} "
                    f"workgroups; block {block} vgpr {r.vgprs} sgpr {r.sgprs} lds {r.lds} wave "
                    f"{r.wavefront_size} wgp {r.wgp_mode} maxwg {r.max_flat_workgroup_size} rules {occ.profile})"
                )
    fixed = sum(c.block is not None for c in compared)
    print(
        f"\nLLVM differential ({compiler.name} {compiler.version()}): seed {SEED}, {len(compared)} kernels "
        f"compared over {len(per_target)} targets ({len(compared) - fixed} over a flat range 1..N, {fixed} at "
        f"a fixed block size), {len(compared) - len(mismatches)} agree, {len(mismatches)} mismatches, "
        f"{dropped} specs the compiler rejected; rules {dict(rules)}"
    )
    agree = {t: f"{per_target[t] - wrong_on[t]}/{per_target[t]}" for t in sorted(per_target)}
    print(f"agreement per processor ({compiler.name}): {agree}")
    if modes:
        print(f"kernels whose object does not record the mode, by how it was chosen: {dict(modes)}")
    assert mismatches == [], mismatches[:20]
    return compared, per_target, rules


def _mutant_kills(compared, monkeypatch) -> dict[str, int]:
    """For each broken per-block path, how many fixed-block kernels it gets wrong."""
    kills = {}
    for label, mutant in MUTANTS.items():
        with monkeypatch.context() as m:
            m.setattr(llvm_model, "max_workgroups_per_cu", mutant)
            kills[label] = sum(
                compute(c.usage, "llvm", c.block).details["llvm_occupancy"] != c.want
                for c in compared
                if c.block is not None
            )
    print(f"broken per-block paths, fixed-block kernels they get wrong: {kills}")
    return kills


def test_llvm_model_equals_llc22_occupancy_on_random_kernels(tmp_path, monkeypatch):
    wanted = int(os.environ.get("AMDOCC_DIFF_KERNELS", 1200))
    compared, per_target, rules = _compile_and_compare(kernelgen.LLC22, TARGETS, wanted, tmp_path)
    assert len(compared) >= 0.8 * wanted and len(per_target) >= 15, (len(compared), per_target)
    assert set(rules) == {"llvm-22"}  # read from .comment: "Linker: Debian LLD 22.1.8"
    fixed = [c for c in compared if c.block is not None]
    assert len(fixed) >= 0.3 * wanted
    assert {c.usage.wgp_mode for c in fixed} == {True, False} and {c.usage.wave for c in fixed} == {32, 64}
    assert all(kills > 0 for kills in _mutant_kills(compared, monkeypatch).values())


def test_llvm_model_equals_triton_llvm_occupancy_on_random_kernels(tmp_path, monkeypatch):
    wanted = int(os.environ.get("AMDOCC_DIFF_TRITON", 800))
    compared, per_target, rules = _compile_and_compare(kernelgen.TRITON_LLVM, TRITON_TARGETS, wanted, tmp_path)
    assert len(compared) >= 0.8 * wanted and len(per_target) >= 20, (len(compared), per_target)
    # Triton's LLD says "LLD 24.0.0": a snapshot of LLVM main, which has llvm-23's rules (llvm-24's
    # change, PR #222615, is later than this snapshot and is warned about on gfx13 only).
    assert set(rules) == {"llvm-23"}, rules
    assert all(kills > 0 for kills in _mutant_kills(compared, monkeypatch).values())


def test_subarch_triples_are_the_ones_triton_asks_for():
    """kernelgen's amdgpu<subarch> spelling against Triton's own (amd.get_target_triple)."""
    try:
        from triton._C.libtriton import amd
    except ImportError as exc:
        _missing(f"triton is not installed: {exc}")
    for target in TRITON_TARGETS:
        if target.endswith("-strict"):
            continue  # Triton's core LLVM does not know it (backends/amd/compiler.py hard-codes it)
        assert kernelgen.subarch_triple(target) == amd.get_target_triple(target), target


def test_llvm_model_equals_rocm10_compiler_occupancy_on_random_kernels(tmp_path, monkeypatch):
    wanted = int(os.environ.get("AMDOCC_DIFF_ROCM10", 1500))
    compared, per_target, rules = _compile_and_compare(
        kernelgen.ROCM10, ROCM10_TARGETS, wanted, tmp_path, choose_mode=True
    )
    assert len(compared) >= 0.8 * wanted and len(per_target) == len(ROCM10_TARGETS), (len(compared), per_target)
    # Every object names "AMD clang version 23.0.0git (... 8f497e0992fb...)": the commit, not the
    # version, chooses the rules (the version alone would give llvm-22, wrong on gfx1310).
    assert set(rules) == {"rocm-10.0"}, rules
    assert per_target["gfx1310"] >= 20
    gfx1310 = [c for c in compared if c.usage.target.name == "gfx1310"]
    assert {c.usage.wgp_mode for c in gfx1310} == {True, False}  # the default and the chosen mode both ran
    assert all(kills > 0 for kills in _mutant_kills(compared, monkeypatch).values())
