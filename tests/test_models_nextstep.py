"""The next step (what to shed for one more block or wave), worked by hand from the rules of each
model: HIP's occupancy function (VgprWaves = vgprsPerSimd / alignUp(vgprs, granule), limits =
simdPerCU x wavefrontSize x waves / alignUp(block, wavefrontSize), LDS = localMemSize / lds), LLVM
22's getNumWavesPerEUWithNumVGPRs, the hw model's trap-handler SGPR reserve, and the targets
table's cited values (gfx942: 512 VGPRs granule 8 since ROCm 6.1, 256/4 in the rocm-6.0 profile;
4 SIMDs; 64 KiB LDS). The answer's HIP profile is the one a next step is computed under.
"""

from __future__ import annotations

import amdocc
from amdocc.models import manual
from amdocc.models.nextstep import search_next_step
from amdocc.targets import get_target

GFX942 = get_target("gfx942")


def step(usage, model="hip", block=256, dynamic_lds=0, **options):
    occ = amdocc.occupancy(usage, block_size=block, dynamic_lds=dynamic_lds, model=model, **options)
    return occ, search_next_step(usage, occ, **options)


def test_vgpr_bound_hip_kernel_sheds_down_to_the_next_granule_step():
    # gfx942, 128 VGPRs, 256 threads (4 waves): VgprWaves 512 // 128 = 4; 256 x 4 // 256 = 4 blocks.
    # 5 blocks need VgprWaves >= 5: alignUp(v, 8) <= 102 -> v <= 96: shed 128 - 96 = 32.
    occ, s = step(manual(GFX942, vgprs=128))
    assert (occ.blocks_per_cu, occ.limiter) == (4, "vgpr")
    assert s == {"gain": 5, "unit": "blocks_per_cu", "shed": {"vgpr": 32}}


def test_the_next_step_keeps_the_hip_profile_of_the_answer():
    # rocm-6.0 counted gfx942 as 256 VGPRs granule 4: 256 // 128 = 2 waves -> 2 blocks. 3 blocks
    # need alignUp(v, 4) <= 85 -> v <= 84: shed 44 (under the newest profile it would be 32).
    occ, s = step(manual(GFX942, vgprs=128), profile="rocm-6.0")
    assert (occ.profile, occ.blocks_per_cu) == ("rocm-6.0", 2)
    assert s == {"gain": 3, "unit": "blocks_per_cu", "shed": {"vgpr": 44}}
    # Asked without options, the next step still follows the answer's profile.
    assert search_next_step(manual(GFX942, vgprs=128), occ) == s


def test_lds_bound_kernel_sheds_static_and_dynamic_lds_together():
    # 10000 static + 10000 dynamic = 20000 B, 64 threads: 65536 // 20000 = 3 blocks. 4 need
    # lds <= 16384: shed 3616 B of the two together.
    occ, s = step(manual(GFX942, vgprs=8, lds=10000), block=64, dynamic_lds=10000)
    assert (occ.blocks_per_cu, occ.limiter) == (3, "lds")
    assert s == {"gain": 4, "unit": "blocks_per_cu", "shed": {"lds": 3616}}


def test_two_binding_resources_must_both_shrink():
    # 128 VGPRs -> 4 blocks and 16384 B LDS -> 65536 // 16384 = 4 blocks: both bind at 4.
    # 5 blocks: VGPRs <= 96 (shed 32) and LDS <= 13107 (shed 3277).
    occ, s = step(manual(GFX942, vgprs=128, lds=16384))
    assert occ.limiters == ("lds", "vgpr") and occ.blocks_per_cu == 4
    assert s == {"gain": 5, "unit": "blocks_per_cu", "shed": {"lds": 3277, "vgpr": 32}}


def test_no_step_when_a_cap_binds_or_shedding_all_would_not_gain():
    # 1024 threads = 16 waves: wave slots 8 x 4 x 64 // 1024 = 2 and 4 VGPRs allow 2 as well
    # (512 // 8 = 64 -> capped... the slots bind): no kernel resource can help.
    occ, s = step(manual(GFX942, vgprs=4), block=1024)
    assert occ.limiter == "waves" and s is None
    # 256 VGPRs at 1024 threads: 512 // 256 = 2 waves -> 256 x 2 // 1024 = 0 blocks ... shed to
    # 128 -> 4 waves -> 1 block: a gain from 0.
    occ, s = step(manual(GFX942, vgprs=256), block=1024)
    assert occ.blocks_per_cu == 0
    assert s == {"gain": 1, "unit": "blocks_per_cu", "shed": {"vgpr": 128}}


def test_llvm_next_step_is_in_waves_per_simd():
    # LLVM 22: 128 VGPRs on gfx942 -> 512 // 128 = 4 waves per EU (no block: range 1..1024).
    # 5 waves need alignTo(v, 8) <= 102 -> v <= 96: shed 32.
    usage = manual(GFX942, vgprs=128)
    occ = amdocc.occupancy(usage, model="llvm")
    assert occ.waves_per_simd == 4 and occ.details["flat_workgroup_size"] == [1, 1024]
    assert search_next_step(usage, occ) == {"gain": 5, "unit": "waves_per_simd", "shed": {"vgpr": 32}}


def test_hw_next_step_with_the_trap_reserve_option():
    # hw, gfx942, 92 SGPRs, 1024 threads: (96 + 16) -> 800 // 112 = 7 waves -> 4 x 7 // 16 = 1.
    # 2 blocks need 8 waves: 800 // 8 = 100 >= alignUp(s, 16) + 16 -> s <= 80: shed 12.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024)
    assert (occ.blocks_per_cu, occ.limiter) == (1, "sgpr")
    assert s == {"gain": 2, "unit": "blocks_per_cu", "shed": {"sgpr": 12}}
    # Without the reserve 800 // 96 = 8 already: 2 blocks, bound by the wave slots.
    occ, s = step(manual(GFX942, vgprs=8, sgprs=92), model="hw", block=1024, trap_reserve=False)
    assert occ.blocks_per_cu == 2 and s is None


# --------------------------------------------------------------------------- a hip step the hardware does not share
# HIP's answer by its own rules (tests/oracle/hip_reference.py: docs/hip-occupancy.md §2, the
# bit-mask alignUp of §4); the hardware's by true rounding worked here, from the targets table's
# cited values: RDNA3/4 wave32 has 1536 VGPRs per SIMD in granules of 24, at most 16 waves, 4
# SIMDs per WGP; GFX9 allocates LDS in blocks of 128 dwords (512 B) out of 64 KiB per CU.

import json  # noqa: E402

from amdocc.cli.main import main  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from oracle.hip_reference import hip_blocks  # noqa: E402
from oracle.llvm22 import metadata_documents  # noqa: E402

SAMPLE = str(amdocc.samples_path())
SAMPLE_NOTES = FIXTURES / "sample"


def notes_of(processor: str) -> dict[str, dict]:
    """The sample's kernels for one processor, as llvm-readelf-22 --notes printed them."""
    (path,) = SAMPLE_NOTES.glob(f"{processor}-*.co.readelf.txt")
    return {k[".name"]: k for d in metadata_documents(path.read_text()) for k in d["amdhsa.kernels"]}


def rdna_hw_blocks(vgprs: int, block: int = 256) -> int:
    """Workgroups per WGP on gfx11/gfx12 wave32 by true rounding: 4 SIMDs x min(16, 1536 //
    (vgprs rounded up to 24)) waves, over the block's waves."""
    allocated = -(-max(vgprs, 1) // 24) * 24
    return 4 * min(16, 1536 // allocated) // (block // 32)


def gfx9_lds_blocks(lds: int) -> int:
    return 65536 // (-(-lds // 512) * 512)


def results(capsys, *argv) -> dict[tuple[str, str], dict]:
    """``occupancy --json`` of ``argv``: (processor, kernel) → result."""
    assert main(["occupancy", "--json", *map(str, argv)]) == 0
    return {(r["target"].split(":")[0], r["kernel"]): r for r in json.loads(capsys.readouterr().out)["results"]}


def test_the_quickstart_step_on_gfx1201_says_it_rests_on_hips_bit_mask(capsys):
    v = notes_of("gfx1201")["_Z9reg_heavyPKfPf"][".vgpr_count"]
    assert v == 105
    # HIP: alignUp(105, 24) = 128 -> 12 waves -> 6 per WGP; 104 -> 104 -> 14 waves -> 7.
    hip_now, hip_less = (
        hip_blocks("gfx1201", v, 256, wave=32, wgp=True),
        hip_blocks("gfx1201", v - 1, 256, wave=32, wgp=True),
    )
    assert (hip_now, hip_less) == (6, 7)
    # The hardware: 105 and 104 both take 120 registers (12 waves, 6 per WGP); 8 need 96.
    keep = max(x for x in range(v) if rdna_hw_blocks(x) > rdna_hw_blocks(v))
    assert (rdna_hw_blocks(v), rdna_hw_blocks(v - 1), keep, rdna_hw_blocks(keep)) == (6, 6, 96, 8)
    r = results(capsys, "--block", 256, "--target", "gfx1201", SAMPLE)[("gfx1201", "_Z9reg_heavyPKfPf")]
    assert r["next_step"] == {"gain": hip_less, "unit": "blocks_per_cu", "shed": {"vgpr": 1}}
    hw = r["next_step_hardware"]
    assert {k: hw[k] for k in ("fits", "fits_after", "gains", "hip_only")} == {
        "fits": rdna_hw_blocks(v),
        "fits_after": rdna_hw_blocks(v - 1),
        "gains": False,
        "hip_only": True,
    }
    assert "bit-mask" in hw["why"] and "24" in hw["why"]
    assert hw["next_step"] == {"gain": rdna_hw_blocks(keep), "unit": "blocks_per_cu", "shed": {"vgpr": v - keep}}
    # The quickstart's own words
    assert main(["occupancy", "--block", "256", SAMPLE]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "reg_heavy" in ln and "shed 1 VGPRs" in ln)
    assert line.endswith(
        "shed 1 VGPRs for 7 workgroups per WGP: HIP's occupancy API only (its bit-mask round-up of VGPRs to a "
        "granule of 24); the hardware fits 6 per WGP either way, 8 with 9 VGPRs shed (hw model)"
    ), line


def test_a_hip_step_the_hardware_shares_is_not_labelled(capsys):
    # gfx1100: 101 VGPRs; HIP rounds to 104 (7 per WGP), the hardware to 120 (6); both reach 8 at 96.
    v = notes_of("gfx1100")["_Z9reg_heavyPKfPf"][".vgpr_count"]
    r = results(capsys, "--block", 256, SAMPLE)[("gfx1100", "_Z9reg_heavyPKfPf")]
    shed = r["next_step"]["shed"]["vgpr"]
    assert hip_blocks("gfx1100", v - shed, 256, wave=32, wgp=True) == r["next_step"]["gain"] == 8
    assert rdna_hw_blocks(v - shed) > rdna_hw_blocks(v)
    hw = r["next_step_hardware"]
    assert (hw["fits"], hw["fits_after"], hw["gains"], hw["hip_only"], hw["why"]) == (
        rdna_hw_blocks(v),
        rdna_hw_blocks(v - shed),
        True,
        False,
        None,
    )
    # gfx942's granule of 8 is a power of two: the mask is true rounding; other models: no view.
    rows = results(capsys, "--block", 256, SAMPLE)
    assert rows[("gfx942", "_Z9reg_heavyPKfPf")]["next_step_hardware"]["hip_only"] is False
    assert all(
        r["next_step_hardware"] is None for r in results(capsys, "--block", 256, "--model", "hw", SAMPLE).values()
    )
    assert main(["occupancy", "--block", "256", "--target", "gfx942", SAMPLE]) == 0
    assert "HIP's occupancy API only" not in "\n".join(
        ln for ln in capsys.readouterr().out.splitlines() if "reg_heavy" in ln
    )


def test_an_lds_step_hip_takes_without_the_granule_is_labelled(capsys):
    lds = notes_of("gfx942")["_Z9saxpy_ldsfPKfPfi"][".group_segment_fixed_size"]
    assert lds == 16384
    r = results(capsys, "--block", 256, "--target", "gfx942", SAMPLE)[("gfx942", "_Z9saxpy_ldsfPKfPfi")]
    # HIP: 65536 // 16384 = 4; 5 need at most 65536 // 5 = 13107 B: shed 3277, no granule.
    assert r["next_step"] == {"gain": 5, "unit": "blocks_per_cu", "shed": {"lds": lds - 65536 // 5}}
    # The hardware: 13107 B take 26 blocks of 512 B (13312): still 4; 5 need 12800 B.
    keep = max(x for x in range(1, lds) if gfx9_lds_blocks(x) > gfx9_lds_blocks(lds))
    hw = r["next_step_hardware"]
    assert (hw["fits"], hw["fits_after"], hw["hip_only"]) == (4, gfx9_lds_blocks(65536 // 5), True)
    assert hw["next_step"]["shed"] == {"lds": lds - keep} and keep == 12800
    assert "does not round LDS" in hw["why"]


def test_hip_only_is_exactly_where_true_rounding_gains_nothing_for_every_vgpr_count():
    """Every .vgpr_count on gfx1100 and gfx1201 wave32 at 256 threads: the hip step is labelled
    HIP-only exactly when the hardware, rounding truly, fits no more after the shed."""
    from amdocc.models.nextstep import next_step_view

    for processor in ("gfx1100", "gfx1201"):
        for v in range(1, 257):
            occ = amdocc.occupancy({"vgprs": v, "wave": 32}, target=processor, block_size=256)
            step = amdocc.next_step(occ)
            view = next_step_view(occ)
            if step is None:
                assert view is None
                continue
            after = v - step["shed"]["vgpr"]
            assert view["hip_only"] == (rdna_hw_blocks(after) <= rdna_hw_blocks(v)), (processor, v)
            assert (view["fits"], view["fits_after"]) == (rdna_hw_blocks(v), rdna_hw_blocks(after))
            assert (view["why"] == "its bit-mask round-up of VGPRs to a granule of 24") == view["hip_only"]


def test_an_sgpr_step_without_the_trap_handlers_reserve_is_labelled():
    """gfx942, 100 SGPRs, 512 threads (8 waves). The hardware allocates SGPRs in 16s plus the
    trap handler's 16 (AMDGPUUsage; tests/test_hw_sources.py): 112 + 16 = 128 → 800 // 128 = 6
    waves per SIMD → 4 x 6 // 8 = 3 workgroups; 96 + 16 = 112 → 7 waves → still 3; 4 need 8
    waves, at most 100 per wave: 80 + 16 = 96, so shed 100 - 80 = 20. HIP's step sheds fewer."""
    from amdocc.models.nextstep import next_step_view

    occ = amdocc.occupancy({"vgprs": 1, "sgprs": 100}, target="gfx942", block_size=512)
    step = amdocc.next_step(occ)
    view = next_step_view(occ)
    assert step["shed"]["sgpr"] < 20 and step["gain"] == 4
    assert (view["fits"], view["fits_after"], view["hip_only"]) == (3, 3, True)
    assert view["next_step"] == {"gain": 4, "unit": "blocks_per_cu", "shed": {"sgpr": 20}}
    assert "SGPRs per wave where the hardware allocates 128" in view["why"] and "bit-mask" not in view["why"]


def test_a_step_the_hardware_gains_from_otherwise_gives_the_hardwares_numbers(capsys):
    # gfx1100 reg_heavy, 101 VGPRs: HIP 7 -> 8 per WGP by shedding 5; the hardware 6 -> 8.
    v = notes_of("gfx1100")["_Z9reg_heavyPKfPf"][".vgpr_count"]
    assert main(["occupancy", "--block", "256", "--target", "gfx1100", "--kernel", "reg_heavy", SAMPLE]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "shed" in ln)
    assert line.endswith(
        f"shed 5 VGPRs for 8 workgroups per WGP; the hardware fits {rdna_hw_blocks(v)} per WGP now, "
        f"{rdna_hw_blocks(v - 5)} with this shed (hw model)"
    ), line
    # Where both count the same, nothing is added (gfx942: granule 8, the mask is true rounding).
    r = results(capsys, "--block", 256, "--target", "gfx942", SAMPLE)[("gfx942", "_Z9reg_heavyPKfPf")]
    assert r["next_step_hardware"]["agrees"] is True


def test_a_kernel_hip_reads_in_cu_mode_is_counted_per_wgp_by_the_hardware():
    """gfx1100 wave32, 88 VGPRs, 256 threads, WGP mode in the descriptor but no
    .workgroup_processor_mode in the metadata, which HIP then reads as CU mode (2 SIMDs):
    alignUp(88, 24) = 104 -> 14 waves -> 2 x 14 x 32 // 256 = 3 per CU; shedding 8 gives 80 ->
    (80 + 23) & ~23 = 96 -> 16 waves -> 4. The hardware, per WGP (4 SIMDs): 88 and 80 both take
    96 -> 16 waves -> 4 x 16 // 8 = 8 either way, and the wave slots cap it: no step of its own."""
    from amdocc.models.nextstep import next_step_view

    usage = manual(get_target("gfx1100"), vgprs=88, wave=32).with_(wgp_mode=True, wgp_metadata=None)
    occ = amdocc.occupancy(usage, block_size=256)
    assert (occ.blocks_per_cu, occ.unit) == (3, "CU")
    assert amdocc.next_step(occ) == {"gain": 4, "unit": "blocks_per_cu", "shed": {"vgpr": 8}}
    view = next_step_view(occ)
    assert (view["fits"], view["unit"], view["fits_after"], view["hip_only"], view["next_step"]) == (
        8,
        "WGP",
        8,
        True,
        None,
    )
    assert view["why"] == (
        "its bit-mask round-up of VGPRs to a granule of 24; it counts per CU where the kernel runs per WGP"
    )


def test_an_lds_step_hip_takes_with_64_kib_per_wgp_is_labelled(capsys):
    # gfx1100 saxpy_lds, 16384 B: HIP 65536 // 16384 = 4 per WGP, 5 at 13107 B. The hardware pools
    # 128 KiB per WGP: 131072 // 16384 = 8, and 4 SIMDs x 16 waves x 32 // 256 = 8 wave slots.
    lds = notes_of("gfx1100")["_Z9saxpy_ldsfPKfPfi"][".group_segment_fixed_size"]
    r = results(capsys, "--block", 256, "--target", "gfx1100", SAMPLE)[("gfx1100", "_Z9saxpy_ldsfPKfPfi")]
    assert r["next_step"] == {"gain": 5, "unit": "blocks_per_cu", "shed": {"lds": lds - 65536 // 5}}
    hw = r["next_step_hardware"]
    assert (hw["fits"], hw["fits_after"], hw["hip_only"]) == (min(131072 // lds, 8), 8, True)
    assert hw["why"] == "it counts 65536 B of LDS per WGP, less than the hardware"
