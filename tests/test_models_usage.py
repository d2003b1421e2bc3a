"""Usage from hand-given counts (``models.manual``) and the metadata text HIP would read: the
register-file rule for a total (alignTo(arch, 4) + agpr on unified targets, max on gfx908), what
cannot be refused, the defaults each target implies, and booleans rendered as comgr renders a
YAML/msgpack boolean ("true"/"false", all lower case, what HIP's string compare expects).
"""

from __future__ import annotations

import pytest

from amdocc import UsageError
from amdocc.models import manual
from amdocc.models.usage import metadata_text
from amdocc.targets import get_target

GFX942 = get_target("gfx942")


def test_arch_vgprs_form_the_total_by_the_register_file_rule():
    # Unified (gfx90a/942/950): alignTo(41, 4) + 64 = 108. Separate (gfx908): max(41, 64) = 64.
    assert manual(GFX942, arch_vgprs=41, agprs=64).vgprs == 108
    assert manual(get_target("gfx908"), arch_vgprs=41, agprs=64).vgprs == 64
    assert manual(GFX942, arch_vgprs=41).vgprs == 41
    with pytest.raises(UsageError, match="not both"):
        manual(GFX942, vgprs=10, arch_vgprs=41, agprs=64)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"vgprs": -1}, "VGPRs cannot be negative"),
        ({"sgprs": -1}, "SGPRs cannot be negative"),
        ({"lds": -1}, "LDS cannot be negative"),
        ({"agprs": -1}, "AGPRs cannot be negative"),
        ({"wave": 32}, "does not run wave32"),
        ({"wgp": True}, "has no WGP mode"),
    ],
)
def test_manual_refuses_what_cannot_be(kwargs, message):
    with pytest.raises(UsageError, match=message):
        manual(GFX942, **kwargs)


def test_manual_defaults_follow_the_target():
    gfx1100 = get_target("gfx1100")
    u = manual(gfx1100)
    # Compilers default to WGP mode and LLVM writes the integer 1, which comgr hands HIP as "1".
    assert (u.wave, u.wgp_mode, u.wgp_metadata) == (32, True, "1")
    u = manual(gfx1100, wgp=False, wave=64)
    assert (u.wave, u.wgp_mode, u.wgp_metadata) == (64, False, "0")
    u = manual(GFX942)
    assert (u.wave, u.wgp_mode, u.wgp_metadata, u.vgprs, u.sgprs, u.lds) == (64, False, None, 0, 0, 0)
    with pytest.raises(UsageError, match="has no AGPRs"):
        manual(gfx1100, agprs=4)
    assert manual(gfx1100, agprs=0).agprs == 0


def test_metadata_booleans_render_lower_case_as_comgr_does():
    assert metadata_text(False) == "false"
    assert metadata_text(True) == "true"
    assert metadata_text(0) == "0"
