"""The last survivors (issue 11) in the texts the models and the policy write.

Oracles: the texts and inputs each test builds; the targets table's cited gfx90a values (64 KiB
LDS per CU, 4 SIMDs, 8 waves per SIMD, wave64) worked by hand; the note's value as comgr renders
a YAML/msgpack boolean ("true"/"false", all lower case, what HIP's string compare expects).
"""

from __future__ import annotations

import dataclasses

from amdocc.models import manual
from amdocc.models.hip_profiles import _differences, get_profile
from amdocc.models.hw import hw_occupancy
from amdocc.models.usage import metadata_text
from amdocc.policy.prefill_gate import _codegen_rows
from amdocc.targets import get_target


def _tg_split_answer():
    # gfx90a, 256 threads = 4 waves, 32768 B LDS, TG_SPLIT set. HIP: LDS 65536 // 32768 = 2
    # blocks. hw drops the LDS and barrier limits under TG_SPLIT: wave slots 4 x 8 // 4 = 8, VGPRs
    # 4 x (512 // 8) // 4 = 64, so 8 blocks, limited by wave slots; hw has no LDS limit at all.
    u = manual(get_target("gfx90a"), vgprs=8, lds=32768).with_(tg_split=True)
    return hw_occupancy(u, 256)


def test_a_limit_only_hip_has_reads_any_number_here():
    occ = _tg_split_answer()
    assert occ.blocks_per_cu == 8
    hip = [w for w in occ.warnings if w.startswith("HIP (")]
    assert len(hip) == 1 and " answers 2: " in hip[0]
    assert "LDS allow 2 there, any number here" in hip[0]
    assert "None" not in hip[0]


def test_an_occupancy_repr_separates_its_fields_with_comma_space():
    text = repr(_tg_split_answer())
    assert text.startswith(
        "Occupancy(model='hw', profile='trap-reserve', processor='gfx90a', block_size=256, "
        "dynamic_lds=0, blocks_per_cu=8, per_wgp=False, waves_per_block=4, "
    )
    assert text.endswith(")") and "XX" not in text


def test_profile_differences_are_listed_with_comma_space():
    a = get_profile(None)
    b = dataclasses.replace(a, caller_value="rounded-up", sgpr_granule="8")
    # BEHAVIOUR's order: caller_value comes before sgpr_granule.
    assert _differences(a, b) == "caller_value rounded-up, sgpr_granule 8"
    assert _differences(a, dataclasses.replace(a, sgpr_granule="8")) == "sgpr_granule 8"


def test_metadata_booleans_render_lower_case_as_comgr_does():
    assert metadata_text(False) == "false"
    assert metadata_text(True) == "true"
    assert metadata_text(0) == "0"


def test_a_commented_codegen_line_skips_only_itself():
    s = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128, {mask}, false, false, 0, GPUArch::gfx950>"

    def entry(mask: int, name: str, prefix: str = "") -> list[str]:
        sel = s.format(mask=mask)
        return [
            f'{prefix}template<> struct FmhaFwdV3Name<{sel}> {{ static constexpr const char * n = "{name}"; }};',
            f'{prefix}template<> struct FmhaFwdV3Buf<{sel}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    # The commented entry comes FIRST: the live ones after it are still read.
    text = "\n".join(entry(1, "fwd_dead", "// ") + entry(0, "fwd_a") + entry(2, "fwd_b")) + "\n"
    assert [r["co_name"] for r in _codegen_rows(text)] == ["fwd_a.co", "fwd_b.co"]


def test_a_selector_with_too_few_arguments_skips_only_itself_on_its_line():
    """A specialisation whose selector has fewer than the seven positions AITER's selector takes
    (dtype, hdim, mask, seq pad, hd pad, store LSE, arch) is not an entry, and the entry written
    after it on the same line is still read."""
    full = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128, 0, false, false, 0, GPUArch::gfx950>"
    short = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128>"

    def entry(sel: str, name: str) -> list[str]:
        return [
            f'template<> struct FmhaFwdV3Name<{sel}> {{ static constexpr const char * n = "{name}"; }};',
            f'template<> struct FmhaFwdV3Buf<{sel}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    bad, good = entry(short, "fwd_short"), entry(full, "fwd_a")
    text = f"{bad[0]} {good[0]}\n{bad[1]} {good[1]}\n"
    assert [r["co_name"] for r in _codegen_rows(text)] == ["fwd_a.co"]
