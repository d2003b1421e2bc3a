"""Write a minimal loadable code object whose metadata says exactly what we choose.

One kernel (:func:`synthesize`) or several in one code object (:func:`synthesize_many`: one
assembler and one linker run for them all, which is what makes a property test of thousands of
queries cheap), for code-object versions 4, 5 and 6.

The object is produced by LLVM's own assembler and linker (llvm-mc, ld.lld: Debian's *-22 tools,
or ROCm's /opt/rocm/llvm/bin), from assembly that states the kernel descriptor with .amdhsa_*
directives and the metadata note with .amdgpu_metadata. So it is as loadable as compiler output,
and HIP's occupancy query on it reads exactly the chosen .vgpr_count, .agpr_count, .sgpr_count,
.group_segment_fixed_size, .wavefront_size and .workgroup_processor_mode. The descriptor allocates
what the metadata claims (a kernel that does nothing but end).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..binary import align_up
from ..codeobject.descriptor import GFX10_PLUS
from ..errors import UsageError
from ..targets import MAX_WORKGROUP_SIZE, Target, get_target

CODE_OBJECT_VERSIONS = (4, 5, 6)
# amdhsa.version of the metadata note per code-object version (what llc-22 writes for
# --amdhsa-code-object-version=4/5/6: [1, 1], [1, 2], [1, 2]).
_NOTE_VERSION = {4: "[1, 1]", 5: "[1, 2]", 6: "[1, 2]"}
ROCM_LLVM = Path(os.environ.get("ROCM_PATH", "/opt/rocm")) / "llvm" / "bin"


def find_llvm_tool(name: str) -> str:
    """AMDOCC_LLVM_BIN/<name>, <name>-22, ROCm's copy, or <name> on PATH."""
    from .. import env

    candidates = []
    given = env.read("AMDOCC_LLVM_BIN")  # an existing directory, or a UsageError naming the variable
    if given is not None:
        candidates.append(str(Path(str(given)) / name))
    candidates += [f"{name}-22", str(ROCM_LLVM / name), name]
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    raise UsageError(f"no {name} found (tried {', '.join(candidates)}); install llvm-22/lld-22 or ROCm")


@dataclass(frozen=True, slots=True)
class SynthSpec:
    target: str  # processor, e.g. "gfx942"
    vgpr_count: int  # .vgpr_count (the unified total on gfx90a/gfx942/gfx950)
    agpr_count: int = 0  # .agpr_count (unified: the last agpr_count registers are AGPRs)
    sgpr_count: int = 16  # .sgpr_count
    lds: int = 0  # .group_segment_fixed_size
    wave: int | None = None  # .wavefront_size (default: the target's)
    wgp: bool | None = None  # .workgroup_processor_mode (gfx10+; default WGP)
    max_flat_workgroup_size: int = 1024  # .max_flat_workgroup_size (1..1024)
    name: str = "synth"
    code_object_version: int = 5  # 4, 5 or 6 (.amdhsa_code_object_version)
    # The descriptor's next_free_vgpr when it is not .vgpr_count (default: .vgpr_count, at most
    # what one wave addresses; likewise next_free_sgpr is .sgpr_count, at most addressable).
    descriptor_vgprs: int | None = None

    def resolved(self) -> tuple[Target, int, bool]:
        t = get_target(self.target)
        if self.code_object_version not in CODE_OBJECT_VERSIONS:
            raise UsageError(
                f"code-object version {self.code_object_version} cannot be synthesized "
                f"(choose from {', '.join(map(str, CODE_OBJECT_VERSIONS))})"
            )
        if not 1 <= self.max_flat_workgroup_size <= MAX_WORKGROUP_SIZE:
            raise UsageError(
                f".max_flat_workgroup_size {self.max_flat_workgroup_size} is outside 1..{MAX_WORKGROUP_SIZE}"
            )
        for label, value in (
            (".vgpr_count", self.vgpr_count),
            (".agpr_count", self.agpr_count),
            (".sgpr_count", self.sgpr_count),
            (".group_segment_fixed_size", self.lds),
        ):
            if value < 0:
                raise UsageError(f"{label} cannot be negative: {value}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.name):
            raise UsageError(f"kernel name {self.name!r} is not an assembler symbol")
        wave = self.wave or t.default_wave
        if wave not in t.wave_sizes:
            raise UsageError(f"{t.name} does not run wave{wave}")
        wgp = t.wgp if self.wgp is None else self.wgp
        if wgp and not t.wgp:
            raise UsageError(f"{t.name} has no WGP mode")
        if self.agpr_count and not t.has_agprs:
            raise UsageError(f"{t.name} has no AGPRs")
        return t, wave, wgp


def _kernel_parts(spec: SynthSpec) -> tuple[list[str], list[str]]:
    """(the kernel's text, descriptor and code; its entry of the metadata note's kernel list)."""
    t, wave, wgp = spec.resolved()
    v, a = spec.vgpr_count, spec.agpr_count
    directives = [
        f".amdhsa_group_segment_fixed_size {spec.lds}",
        ".amdhsa_private_segment_fixed_size 0",
        ".amdhsa_kernarg_size 0",
        ".amdhsa_user_sgpr_kernarg_segment_ptr 0",
    ]
    if t.register_file == "unified":
        arch = v - a if a else v
        if a and (arch % 4 or arch < 4):
            raise UsageError(f"on {t.name} .vgpr_count - .agpr_count must be a multiple of 4 (at least 4): {arch}")
        # At most 256 arch VGPRs (a note claiming more, with no AGPRs, gets the largest offset).
        directives.append(f".amdhsa_accum_offset {max(4, align_up(min(max(arch, 1), 256), 4))}")
    # A note may claim more registers than a wave addresses (HIP reads only the note); the
    # descriptor cannot, so it says at most what one wave may address.
    described = min(v, t.addressable_vgprs) if spec.descriptor_vgprs is None else spec.descriptor_vgprs
    directives.append(f".amdhsa_next_free_vgpr {max(described, 1)}")
    directives.append(f".amdhsa_next_free_sgpr {max(min(spec.sgpr_count, t.addressable_sgprs), 1)}")
    # VCC is not reserved; xnack and flat-scratch reserves follow the target id, so the
    # descriptor may allocate a few SGPRs more than .sgpr_count says (never fewer).
    directives.append(".amdhsa_reserve_vcc 0")
    if t.descriptor_layout in GFX10_PLUS:  # the descriptor has the wave32 bit
        directives.append(f".amdhsa_wavefront_size32 {int(wave == 32)}")
        if t.wgp:
            directives.append(f".amdhsa_workgroup_processor_mode {int(wgp)}")
    md = [
        f"  - .name: {spec.name}",
        f"    .symbol: {spec.name}.kd",
        "    .args: []",
        f"    .vgpr_count: {v}",
        f"    .sgpr_count: {spec.sgpr_count}",
        f"    .group_segment_fixed_size: {spec.lds}",
        "    .private_segment_fixed_size: 0",
        "    .kernarg_segment_size: 0",
        "    .kernarg_segment_align: 8",
        f"    .wavefront_size: {wave}",
        f"    .max_flat_workgroup_size: {spec.max_flat_workgroup_size}",
    ]
    if t.has_agprs:
        md.append(f"    .agpr_count: {a}")
    if t.wgp and spec.code_object_version >= 5:  # LLVM writes the key from v5 on
        md.append(f"    .workgroup_processor_mode: {int(wgp)}")
    text = [
        ".text",
        f".globl {spec.name}",
        ".p2align 8",
        f".type {spec.name},@function",
        f"{spec.name}:",
        "  s_endpgm",
        "",
        ".rodata",
        ".p2align 6",
        f".amdhsa_kernel {spec.name}",
        *("  " + d for d in directives),
        ".end_amdhsa_kernel",
        "",
    ]
    return text, md


def assembly_many(specs: Sequence[SynthSpec]) -> str:
    """The assembly text of one code object holding every kernel of ``specs``: they must share
    the processor and the code-object version, and have distinct names."""
    if not specs:
        raise UsageError("no kernels to synthesize")
    first = specs[0]
    for spec in specs[1:]:
        if (spec.target, spec.code_object_version) != (first.target, first.code_object_version):
            raise UsageError(
                "the kernels of one code object share its processor and code-object version: "
                f"{first.target} v{first.code_object_version} and {spec.target} v{spec.code_object_version}"
            )
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise UsageError(f"kernel names repeat: {sorted(n for n in set(names) if names.count(n) > 1)}")
    t, _, _ = first.resolved()
    texts, notes = [], []
    for spec in specs:
        text, md = _kernel_parts(spec)
        texts += text
        notes += md
    return "\n".join(
        [
            f'.amdgcn_target "amdgcn-amd-amdhsa--{t.name}"',
            f".amdhsa_code_object_version {first.code_object_version}",
            *texts,
            ".amdgpu_metadata",
            "---",
            f"amdhsa.version: {_NOTE_VERSION[first.code_object_version]}",
            f"amdhsa.target: amdgcn-amd-amdhsa--{t.name}",
            "amdhsa.kernels:",
            *notes,
            "...",
            ".end_amdgpu_metadata",
            "",
        ]
    )


def assembly(spec: SynthSpec) -> str:
    """The assembly text for one kernel."""
    return assembly_many([spec])


def synthesize(spec: SynthSpec, out: str | os.PathLike[str] | None = None) -> bytes:
    """Assemble and link ``spec``; returns the code object's bytes (also written to ``out``)."""
    return synthesize_many([spec], out)


def synthesize_many(specs: Sequence[SynthSpec], out: str | os.PathLike[str] | None = None) -> bytes:
    """Assemble and link the kernels of ``specs`` into one code object (see :func:`assembly_many`);
    returns its bytes (also written to ``out``)."""
    text = assembly_many(specs)
    t, _, _ = specs[0].resolved()
    with tempfile.TemporaryDirectory(prefix="amdocc-synth-") as tmp:
        src, obj, co = Path(tmp, "k.s"), Path(tmp, "k.o"), Path(tmp, "k.co")
        src.write_text(text)
        for cmd in (
            [
                find_llvm_tool("llvm-mc"),
                "-triple=amdgcn-amd-amdhsa",
                f"-mcpu={t.name}",
                "-filetype=obj",
                str(src),
                "-o",
                str(obj),
            ],
            [find_llvm_tool("ld.lld"), "-shared", str(obj), "-o", str(co)],
        ):
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode:
                raise UsageError(
                    f"{Path(cmd[0]).name} rejected the synthesized kernel: "
                    f"{proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else proc.returncode}"
                )
        data = co.read_bytes()
    if out is not None:
        Path(out).write_bytes(data)
    return data
