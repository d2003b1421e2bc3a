"""Whether a static occupancy model can answer for a kernel at all; if not, the reason.

Two cases are refused rather than guessed:
- a dynamic-VGPR kernel (gfx12 RSRC2 bit 6 on GFX120, gfx1250 RSRC3 ENABLE_DYNAMIC_VGPR;
  AMDHSAKernelDescriptor.h): its VGPRs are allocated in blocks while it runs, so no VGPR count
  bounds its waves (llvm PR #185981), and none of the models has a rule for it;
- a processor fact no public source pins (tables/targets.toml ``unknown``), which a model needs;
- a generic target (gfx11-generic, ...: tables/targets.toml ``generic_of``) under a model that
  answers for one device: its members differ in what those models read (gfx11-generic's have
  1024 or 1536 VGPRs per SIMD, gfx9-4-generic's 64 or 160 KiB of LDS), and no runtime runs a
  device by the family's name. The llvm model still answers: it is what the compiler printed
  for the generic target it built for.
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


# The models that answer for one device (a runtime's answer, the hardware's), not for a compiler's target.
DEVICE_MODELS = ("hip", "hw")


def needs_member(t: Target, model: str | None = None) -> str | None:
    """Why code evaluated on the generic target ``t`` gets no answer from ``model`` (None: from
    any verdict about a device: a launch, an occupancy floor, an LDS limit), said after "not
    evaluated". None when ``t`` is one processor, or ``model`` answers for a compiler target."""
    if not t.is_generic or (model is not None and model not in DEVICE_MODELS):
        return None
    return _member_hint(t)


@cached(maxsize=64)
def _member_hint(t: Target) -> str:
    return (
        f"{t.name} is a family of processors, not one device: name a member with --target ({', '.join(t.generic_of)})"
    )


def refusal(usage: KernelUsage, model: str) -> str | None:
    """Why ``model`` cannot answer for ``usage``, or None when it can."""
    t = usage.target
    if usage.dynamic_vgpr:
        return (
            f"kernel {usage.name} enables dynamic VGPRs (descriptor ENABLE_DYNAMIC_VGPR): its VGPRs "
            f"are allocated while it runs, so no static {model} model can count its waves"
        )
    # A fact unknown for the whole family is unknown for its members too: said first.
    return _unknown_fact(t, model) or needs_member(t, model)


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
