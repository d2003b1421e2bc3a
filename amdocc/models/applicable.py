"""Whether a static occupancy model can answer for a kernel at all; if not, the reason.

Two cases are refused rather than guessed:
- a dynamic-VGPR kernel (gfx12 RSRC2 bit 6 on GFX120, gfx1250 RSRC3 ENABLE_DYNAMIC_VGPR;
  AMDHSAKernelDescriptor.h): its VGPRs are allocated in blocks while it runs, so no VGPR count
  bounds its waves (llvm PR #185981), and none of the models has a rule for it;
- a processor fact no public source pins (tables/targets.toml ``unknown``), which a model needs.
"""

from __future__ import annotations

from ..caches import cached
from ..errors import UsageError
from ..targets import Target
from .usage import KernelUsage

# The targets.toml facts each model reads. "hw_wave_slots" is the physical number of wave slots per
# SIMD, which the hw model otherwise takes to be LLVM's max_waves_per_simd.
MODEL_FACTS = {
    "hip": (
        "vgprs",
        "vgpr_alloc_granule",
        "hip_max_waves_per_simd",
        "simds_per_cu",
        "sgprs_per_simd",
        "sgpr_alloc_granule",
        "lds_per_cu",
        "lds_per_wgp",
    ),
    "llvm": (
        "vgprs",
        "vgpr_alloc_granule",
        "max_waves_per_simd",
        "simds_per_cu",
        "sgprs_per_simd",
        "sgpr_alloc_granule",
        "addressable_sgprs",
        "lds_per_workgroup",
        "lds_granule",
        "max_workgroups_per_cu",
        "max_workgroups_per_wgp",
    ),
    "hw": (
        "vgprs",
        "vgpr_alloc_granule",
        "max_waves_per_simd",
        "hw_wave_slots",
        "simds_per_cu",
        "sgprs_per_simd",
        "sgpr_alloc_granule",
        "lds_per_cu",
        "lds_per_wgp",
        "lds_granule",
        "max_workgroups_per_cu",
        "max_workgroups_per_wgp",
    ),
}


def refusal(usage: KernelUsage, model: str) -> str | None:
    """Why ``model`` cannot answer for ``usage``, or None when it can."""
    t = usage.target
    if usage.dynamic_vgpr:
        return (
            f"kernel {usage.name} enables dynamic VGPRs (descriptor ENABLE_DYNAMIC_VGPR): its VGPRs "
            f"are allocated while it runs, so no static {model} model can count its waves"
        )
    return _unknown_fact(t, model)


@cached(maxsize=1 << 10)
def _unknown_fact(t: Target, model: str) -> str | None:
    """Why ``model`` cannot answer on processor ``t`` whatever the kernel (a fact it needs is
    unknown there), or None: asked once per processor and model, not once per kernel."""
    for fact in MODEL_FACTS.get(model, ()):
        reason = t.unknown.get(fact)
        if reason:
            return f"the {model} model needs {t.name}'s {fact}, which no public source pins: {reason}"
    return None


class ModelUnavailable(UsageError):
    """A model cannot answer for this kernel (a fact it needs is unknown, or dynamic VGPRs):
    the other models may still answer, and callers that ask several keep their answers."""

    def __init__(self, message: str, model: str) -> None:
        super().__init__(message)
        self.model = model


def check(usage: KernelUsage, model: str) -> None:
    why = refusal(usage, model)
    if why:
        raise ModelUnavailable(why, model)
