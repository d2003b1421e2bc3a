"""The model and manual-mode options that ``occupancy`` and ``sweep`` share: one table of model
options (each refused under a model it does not apply to), the manual-mode numbers, and the
checks that refuse an option which would be ignored."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import args as a

if TYPE_CHECKING:
    from ..app.selection import Selection
    from ..models import KernelUsage
    from ..models.hip_profiles import HipProfile


def _models() -> tuple[str, ...]:
    from ..models import MODELS

    return MODELS


def _hip_profiles() -> dict[str, HipProfile]:
    from ..models.hip import profiles

    return profiles()


def _check_llvm_version(text: str) -> None:
    from ..models.llvm_rules import parse_version

    parse_version(text)


@dataclass(frozen=True)
class ModelFlag:
    """One model option on the command line: the models it applies to, the amdocc.occupancy
    option it sets, and its argparse settings. Options that do not apply are refused."""

    flag: str
    models: tuple[str, ...]
    option: str
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


# The one table of model options; a new option is one row (its check and help follow).
MODEL_FLAGS = (
    ModelFlag(
        "--hip-profile",
        ("hip",),
        "profile",
        dict(
            metavar="NAME",
            type=a.ProfileName(_hip_profiles, "HIP profile"),
            help="hip: the HIP runtime release to reproduce (a patch release such as rocm-6.4.1 names its line; "
            "default: the newest release a real runtime has confirmed; develop only by name; see --list-profiles)",
        ),
    ),
    ModelFlag(
        "--llvm-version",
        ("llvm",),
        "llvm_version",
        dict(
            metavar="V",
            type=a.Checked(_check_llvm_version, "22.1.8", ("", "banana", "22.x")),
            help="llvm: apply this LLVM's rules (22, 22.1.8, 24.0.0git, main, or a rule set such as llvm-23; "
            "default: the compiler the code object names in .comment)",
        ),
    ),
    ModelFlag(
        "--lds-granule-rounding",
        ("llvm",),
        "lds_granule_rounding",
        dict(
            action="store_const",
            const=True,
            help="llvm: a spelling of the first LLVM whose rules round LDS to its granule (PR #205637, llvm-23)",
        ),
    ),
    ModelFlag(
        "--sgpr-trap-reserve",
        ("llvm",),
        "sgpr_trap_reserve",
        dict(
            action="store_const",
            const=True,
            help="llvm: a spelling of the first LLVM whose SGPR occupancy inverts the budget (PR #201342, llvm-23)",
        ),
    ),
    ModelFlag(
        "--no-trap-reserve",
        ("hw",),
        "trap_reserve",
        dict(action="store_const", const=False, help="hw: do not charge 16 trap-handler SGPRs per wave"),
    ),
)


# Manual-mode resource numbers: refused beside a PATH, where the kernel's own numbers apply.
# (--wgp/--cu-mode are not among them: with a PATH they choose the mode of kernels whose code object
# does not record it.)
MANUAL_DESTS = ("vgprs", "arch_vgprs", "agprs", "sgprs", "lds", "wave", "max_flat_workgroup_size")


# File-mode options: refused without a PATH, where there is nothing to select or read.
FILE_DESTS = ("kernel", "jobs", "mangled", "what_if")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=a.OneOf(_models, "model"),
        default="hip",
        metavar="{hip,llvm,hw}",
        help="occupancy model (default hip)",
    )
    for f in MODEL_FLAGS:
        parser.add_argument(f.flag, dest=f.dest, default=None, **f.settings)


def add_manual_arguments(parser: argparse.ArgumentParser) -> None:
    m = parser.add_argument_group("manual mode (no PATH)")
    m.add_argument("--vgprs", type=a.integer(0), help=".vgpr_count (the unified total on gfx90a/gfx942/gfx950)")
    m.add_argument(
        "--arch-vgprs", type=a.integer(0), help="arch VGPRs; with --agprs forms the total by the target's rule"
    )
    m.add_argument("--agprs", type=a.integer(0), help=".agpr_count (reported; added only with --arch-vgprs)")
    m.add_argument("--sgprs", type=a.integer(0), help=".sgpr_count (default 0)")
    m.add_argument("--lds", type=a.LdsSize(), metavar="BYTES", help="static LDS (default 0)")
    m.add_argument(
        "--wave",
        type=a.OneOf(("32", "64"), "wave size", int),
        metavar="{32,64}",
        help="wavefront size (default: the target's)",
    )
    mode = m.add_mutually_exclusive_group()
    mode.add_argument(
        "--wgp",
        action="store_true",
        help="WGP mode (the default where it exists); with PATHs: of kernels whose code object does not record it",
    )
    mode.add_argument("--cu-mode", action="store_true", help="CU mode (with PATHs: as --wgp)")
    m.add_argument("--max-flat-workgroup-size", type=a.WorkgroupSize(), metavar="N", help=".max_flat_workgroup_size")


def check_model_options(args: argparse.Namespace) -> None:
    """Options of another model would be ignored: refuse them."""
    for f in MODEL_FLAGS:
        if a.given(args, f.dest) and args.model not in f.models:
            models = " and ".join(f.models)
            raise a.UsageError(f"{f.flag} applies to the {models} model, not to --model {args.model}")


def check_mode(args: argparse.Namespace, file_dests: tuple[str, ...] = FILE_DESTS) -> None:
    """Manual numbers beside a PATH, file options without one, --what-if without a processor."""
    check_model_options(args)
    if args.paths:
        a.refuse(args, MANUAL_DESTS, "manual-mode numbers are not used with a PATH (the kernel's own numbers apply)")
        if args.model == "hip":
            a.refuse(
                args,
                ("wgp", "cu_mode"),
                "with a PATH they choose the mode of kernels whose code object does not record it, for the "
                "llvm and hw models; the hip model reads the metadata's .workgroup_processor_mode, as HIP does",
            )
    else:
        # numbers typed in describe the processor named; a what-if can still ask a HIP profile
        # about a processor its runtime does not run
        manual = ("what_if",) if a.given(args, "hip_profile") else ()
        a.refuse(
            args,
            tuple(d for d in file_dests if d not in manual),
            "only applies to kernels read from a PATH, and none is given",
        )
    a.what_if_needs_a_processor(args)


def asked_what_if(args: argparse.Namespace, usage: KernelUsage) -> dict[str, Any]:
    """amdocc.occupancy's what-if keywords for a usage already placed on its processor."""
    return {"target": usage.target, "what_if": True} if getattr(args, "what_if", False) else {}


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    return {f.option: getattr(args, f.dest) for f in MODEL_FLAGS if a.given(args, f.dest)}


def manual_usage(args: argparse.Namespace) -> KernelUsage:
    from ..models import manual
    from ..models.compat import device_id

    named = device_id(args.target, args.device)
    if named is None:
        raise a.UsageError("manual mode needs --target GFX or --device NAME")
    target = named[1]
    if args.cu_mode and not target.wgp:
        raise a.UsageError(f"--cu-mode changes nothing on {target.name}, which has no WGP mode")
    return manual(
        target,
        vgprs=args.vgprs or 0,
        arch_vgprs=args.arch_vgprs,
        agprs=args.agprs,
        sgprs=args.sgprs or 0,
        lds=args.lds or 0,
        wave=args.wave,
        wgp=True if args.wgp else (False if args.cu_mode else None),
        max_flat_workgroup_size=args.max_flat_workgroup_size,
    )


def selection_of(args: argparse.Namespace) -> Selection:
    from ..app.selection import Selection

    return Selection(args.target, args.device, args.kernel, bool(getattr(args, "what_if", False)))
