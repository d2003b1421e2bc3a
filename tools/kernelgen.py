"""Synthetic AMDGPU kernel generator and llc-22 oracle driver.

This module builds LLVM IR kernels whose register, LDS, scratch and launch-bound
properties are chosen exactly, compiles many of them per ``llc-22`` invocation,
links them into a ``.hsaco`` with ``ld.lld-22`` and parses what LLVM itself
printed about every kernel (the ``; Kernel info:`` asm comment block, the
``NAME.num_vgpr``-style resource symbols, the ``.amdhsa_*`` descriptor
directives and the scalar keys of the code-object metadata).

It is deliberately independent of the ``amdocc`` package: it is the *oracle*
side of the differential tests and must never import it.

Two compilers (:class:`Compiler`): ``LLC22`` (Debian's llc-22 + ld.lld-22, the default) and
``TRITON_LLVM``, the AMD code generator Triton 3.9 bundles (LLVM 24.0.0git), driven through
tools/triton_llc.py with LLVM main's ``amdgpu<subarch>`` triples and linked by Triton's own LLD;
every compile function takes ``compiler=``.

How register pressure is created (measured on LLVM 22.1.8):

* one empty inline-asm statement per register class, clobbering only the
  highest register wanted, e.g. ``call void asm sideeffect "", "~{v40}"()``.
  LLVM counts "highest register index + 1", so ``~{v40}`` gives exactly
  ``NumVgprs: 41`` (``~{a31}`` -> ``NumAgprs: 32``, ``~{s40}`` ->
  ``numbered_sgpr 41``).  Listing every register is unnecessary.
* Register names the target does not have are **silently ignored** (``~{a0}``
  on gfx906/gfx1100, ``~{v256}`` everywhere including gfx1250, ``~{s106}``), so
  the generator never emits them.  SGPR clobbers above the limit are an error:
  gfx8/9 ``addressable scalar registers (103) exceeds limit (102) in function 'k'``;
  gfx6/7 (and gfx802/805: limit 96) ``scalar registers (105) exceeds limit (104)``,
  where that count includes VCC/FLAT_SCRATCH.
* Tuple clobbers that are not a real register class crash llc-22
  (``~{v[0:40]}`` -> SIGSEGV in ``FunctionLoweringInfo::set``); unaligned
  tuples on gfx90a (``~{v[39:40]}``) are silently ignored.  Don't use tuples.
* ``TotalNumSgprs`` = numbered SGPRs + extras (VCC, FLAT_SCRATCH, XNACK); the
  measured extras per target are in ``tests/data/llvm22_target_probe.json``
  (``sgpr.extra*``).  On gfx802/gfx805 (SGPR init bug) TotalNumSgprs is always 96,
  and clobbering s84..s86 reports ``numbered_sgpr`` 88 (:func:`check_counts` knows).
* ``"target-features"="-xnack"`` on one function changes the target ID of the
  whole module, so ``xnack``/``sramecc`` are part of :attr:`KernelSpec.group`.
* A wave size the target lacks is not an error: llc silently deletes the
  kernel (remark ``removing function 'k': +wavefrontsize32 is not supported on
  the current target``, shown only with ``-pass-remarks=amdgpu-remove-incompatible-functions``);
  :func:`compile_batch` reports such kernels in ``errors``.

Static LDS is an ``addrspace(3)`` global passed to an inline-asm ``"s"``
operand (emitted first in the body), which keeps it alive but costs one SGPR
(``s0``: the numbered SGPR count becomes ``max(sgprs, 1)``) and no VGPR.
Scratch is a private ``alloca`` with a volatile store (costs one VGPR plus the
scratch setup SGPRs on some targets; ``ScratchSize`` is what LLVM reports).

Public API::

    KernelSpec(...)                          # one kernel
    render_module(specs) -> str              # IR text for specs of one KernelSpec.group
    compile_batch(specs, workdir) -> BatchResult   # unpacks as (hsaco_path, infos); .errors
    compile_many(specs, workdir, jobs=2) -> list[BatchResult]
    compile_asm(specs, cache_dir=None) -> (infos, errors, llc_calls)
    random_specs(rng, targets, n) -> list[KernelSpec]
    parse_asm(text) -> {kernel_name: info_dict}
    check_counts(spec, info) -> [mismatch, ...]
    target_caps(target) -> TargetCaps        # legal-input envelope (from the probe JSON)

Throughput (2-core machine, ``python tools/kernelgen.py --bench``, 1,000 random
kernels over 18 targets, ~31 modules): ~410 kernels/s with a second llc run for
the object (the default, ~2.4 s), ~600/s with ``--obj-via mc`` (llvm-mc
assembles the asm; notes, descriptors and code are byte-identical, only the
symbol table keeps more ``NAME.*`` resource symbols and an empty
``.AMDGPU.csdata`` section appears), ~660/s for 5,000 kernels.  Per-module
overhead dominates, so keep the number of (target, cov, xnack) groups small.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

LLC = os.environ.get("AMDOCC_LLC", "llc-22")
LLD = os.environ.get("AMDOCC_LLD", "ld.lld-22")
LLVM_MC = os.environ.get("AMDOCC_LLVM_MC", "llvm-mc-22")
TRIPLE = "amdgcn-amd-amdhsa"


def subarch_triple(mcpu: str) -> str:
    """The ``amdgpu<subarch>-amd-amdhsa`` triple LLVM main (llvm PR #206480/#206482) spells for a
    processor: gfx942 -> amdgpu9.42, gfx90a -> amdgpu9.0a, gfx1250-strict -> amdgpu12.50s,
    gfx9-4-generic -> amdgpu9.4, gfx11-generic -> amdgpu11 (checked against Triton's
    ``amd.get_target_triple`` by tests/test_llvm_differential.py)."""
    strict = mcpu.endswith("-strict")
    name = mcpu.removesuffix("-strict")
    m = re.fullmatch(r"gfx(\d+)(?:-(\d+))?-generic", name)
    if m:
        sub = m.group(1) + (f".{m.group(2)}" if m.group(2) else "")
    else:
        m = re.fullmatch(r"gfx(\d+)(\d)([0-9a-z])", name)
        if not m:
            raise ValueError(f"no subarch triple for {mcpu!r}")
        sub = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
    return f"amdgpu{sub}{'s' if strict else ''}-amd-amdhsa"


@dataclass(frozen=True)
class Compiler:
    """An llc-shaped compiler: ``command`` takes llc's -mtriple/-mcpu/-filetype/-o arguments.

    ``llc-22`` is Debian's LLVM 22.1; ``triton-llvm`` is the AMD code generator Triton 3.9 bundles
    (LLVM 24.0.0git), run through tools/triton_llc.py and given the subarch triples it asks for."""

    name: str
    command: tuple[str, ...]
    link: tuple[str, ...] | None  # links an object: [*link, OBJ, "-o", HSACO]; None: -filetype=hsaco links
    subarch_triples: bool = False

    def triple(self, mcpu: str) -> str:
        return subarch_triple(mcpu) if self.subarch_triples else TRIPLE

    def version(self) -> str:
        return _compiler_version(self)

    def available(self) -> bool:
        return self.version() != "unknown"


LLC22 = Compiler("llc-22", (LLC,), (LLD, "-shared"))
_TRITON_LLC = (sys.executable, str(Path(__file__).resolve().with_name("triton_llc.py")))
# One process compiles, assembles and links (with Triton's LLD): process start-up is most of the cost.
TRITON_LLVM = Compiler("triton-llvm", _TRITON_LLC, None, subarch_triples=True)
# ROCm 10.0's compiler backend (rocm-bindings-compiler's libLLVM.so, through tools/rocm_llc.py): one
# process compiles, assembles and links (ld.lld-22), and stamps ROCm 10.0's producer line.
ROCM10 = Compiler("rocm-10.0", (sys.executable, str(Path(__file__).resolve().with_name("rocm_llc.py"))), None)
COMPILERS = {c.name: c for c in (LLC22, TRITON_LLVM, ROCM10)}

# --------------------------------------------------------------------------------------
# Target capabilities used by the generator (what is *legal* to ask llc for).
# Measured with tools/probe_targets.py on llc-22 (see tests/data/llvm22_target_probe.json);
# the occupancy-relevant numbers are NOT here on purpose -- the generator only needs to
# know which inputs compile.
# --------------------------------------------------------------------------------------

GENERIC_TARGETS = (
    "gfx9-generic",
    "gfx9-4-generic",
    "gfx10-1-generic",
    "gfx10-3-generic",
    "gfx11-generic",
    "gfx12-generic",
)


@dataclass(frozen=True)
class TargetCaps:
    name: str
    major: int
    waves: tuple[int, ...]  # wave sizes llc accepts
    default_wave: int
    has_agprs: bool
    wgp: bool  # gfx10+: has WGP mode and +cumode is meaningful
    max_sgprs: int  # addressable SGPRs: s0..s(max_sgprs-1) may be clobbered
    max_vgprs: int  # highest clobberable arch VGPR + 1
    lds_max: int  # largest static LDS per workgroup llc accepts
    generic: bool
    xnack: bool  # xnack supported (default "any")
    sramecc: bool  # sramecc supported (default "any")

    @property
    def covs(self) -> tuple[int, ...]:
        return (6,) if self.generic else (4, 5, 6)


_ALIASES = {  # llc-22 processor aliases -> the gfx name whose e_flags they produce (measured)
    "tahiti": "gfx600",
    "pitcairn": "gfx601",
    "verde": "gfx601",
    "hainan": "gfx602",
    "oland": "gfx602",
    "kaveri": "gfx700",
    "hawaii": "gfx701",
    "kabini": "gfx703",
    "mullins": "gfx703",
    "bonaire": "gfx704",
    "carrizo": "gfx801",
    "iceland": "gfx802",
    "tonga": "gfx802",
    "fiji": "gfx803",
    "polaris10": "gfx803",
    "polaris11": "gfx803",
    "tongapro": "gfx805",
    "stoney": "gfx810",
    # llc's pseudo processors (e_flags mach 0; they behave like gfx600 / a gfx700 with 32 KiB LDS)
    "generic": "gfx600",
    "generic-hsa": "gfx700",
}


def _major_of(target: str) -> int:
    """gfx<major><minor><stepping> (stepping is one hex digit), maybe -strict; gfxN-...-generic."""
    target = _ALIASES.get(target, target).removesuffix("-strict")
    m = re.match(r"gfx(\d+)-", target)
    if m:
        return int(m.group(1))
    m = re.match(r"gfx(\d+)(\d)([0-9a-f])$", target)
    if not m:
        raise ValueError(f"not a gfx processor name: {target!r}")
    return int(m.group(1))


_XNACK = {
    "gfx801",
    "gfx810",
    "gfx900",
    "gfx902",
    "gfx904",
    "gfx906",
    "gfx908",
    "gfx909",
    "gfx90a",
    "gfx90c",
    "gfx942",
    "gfx950",
    "gfx9-generic",
    "gfx9-4-generic",
    "gfx1010",
    "gfx1011",
    "gfx1012",
    "gfx1013",
    "gfx10-1-generic",
    "gfx1250",
    "gfx1251",
}
_SRAMECC = {"gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx9-4-generic", "gfx1250", "gfx1251"}


def _builtin_caps(target: str) -> TargetCaps:
    base = _ALIASES.get(target, target)
    major = _major_of(target)
    if base in ("gfx1250", "gfx1251"):
        waves, default = (32,), 32
    elif target in ("generic", "generic-hsa"):  # measured oddity: llc-22 accepts +wavefrontsize32 here
        waves, default = (32, 64), 64
    elif major >= 10:
        waves, default = (32, 64), 32
    else:
        waves, default = (64,), 64
    if major >= 10:
        max_sgprs = 106
    elif base in ("gfx802", "gfx805"):  # SGPR init bug: fixed 96 SGPRs
        max_sgprs = 96
    elif major >= 8:
        max_sgprs = 102
    else:
        max_sgprs = 104
    if base == "gfx950":
        lds_max = 163840
    elif base in ("gfx1250", "gfx1251"):
        lds_max = 327680
    elif major == 6 or target == "generic-hsa":
        lds_max = 32768
    else:
        lds_max = 65536
    return TargetCaps(
        name=target,
        major=major,
        waves=waves,
        default_wave=default,
        has_agprs=base in ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx9-4-generic"),
        wgp=major >= 10 and base not in ("gfx1250", "gfx1251"),
        max_sgprs=max_sgprs,
        max_vgprs=256,
        lds_max=lds_max,
        generic=base in GENERIC_TARGETS,
        xnack=base in _XNACK,
        sramecc=base in _SRAMECC,
    )


PROBE_JSON = Path(__file__).resolve().parent.parent / "tests" / "data" / "llvm22_target_probe.json"
# What tools/probe_targets.py --compiler triton-llvm measured: the processors LLVM 22 does not know,
# and gfx1250/gfx1251 as LLVM 24 sees them (no xnack).
TRITON_PROBE_JSON = PROBE_JSON.with_name("triton_llvm_target_probe.json")
_PROBES: dict[str, dict] = {}


def _read_json(path: Path) -> dict:
    try:
        import json

        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _probe_data(compiler: Compiler | None = None) -> dict:
    """The measured facts for ``compiler``'s processors: llc-22's probe, overlaid for triton-llvm
    with what that LLVM measured."""
    name = compiler.name if compiler is not None else "llc-22"
    if name not in _PROBES:
        data = dict(_read_json(PROBE_JSON))
        if name == TRITON_LLVM.name:
            data.update({k: v for k, v in _read_json(TRITON_PROBE_JSON).items() if not k.startswith("_")})
        _PROBES[name] = data
    return _PROBES[name]


def _caps_from_probe(target: str, p: dict) -> TargetCaps:
    major = _major_of(target)
    lds = p["lds"]["max_per_workgroup"]
    return TargetCaps(
        name=target,
        major=major,
        waves=tuple(p["wave_sizes"]),
        default_wave=p["default_wave"],
        has_agprs=bool(p["agprs"]),
        wgp="wgp" in p["modes"],
        max_sgprs=p["sgpr"]["addressable"],
        max_vgprs=256,
        lds_max=min(lds.values()),
        generic=p["kind"] == "generic",
        xnack=p["xnack"] != "unsupported",
        sramecc=p["sramecc"] != "unsupported",
    )


def target_caps(target: str, source: str = "auto", compiler: Compiler | None = None) -> TargetCaps:
    """Legal-input envelope of one processor.

    ``source="probe"`` reads tests/data/llvm22_target_probe.json (measured by
    tools/probe_targets.py; for ``compiler`` triton-llvm, triton_llvm_target_probe.json first),
    ``"builtin"`` uses the table in this file (same values, kept so the generator works without
    the JSON), ``"auto"`` prefers the probe."""
    if source in ("auto", "probe"):
        data = _probe_data(compiler)
        p = data.get(target)
        if p is not None and p.get("kind") == "alias":
            p = data.get(p["alias_of"])
        if p is not None:
            return _caps_from_probe(target, p)
        if source == "probe":
            raise KeyError(f"{target} not in {PROBE_JSON}")
    return _builtin_caps(target)


# --------------------------------------------------------------------------------------
# Kernel spec and IR rendering
# --------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@dataclass(frozen=True)
class KernelSpec:
    """One synthetic kernel.

    Register counts are "registers used" = highest index + 1 (0 = none).
    ``lds`` is static LDS bytes; ``scratch`` private bytes (an alloca).
    ``max_wg``/``min_wg`` give ``"amdgpu-flat-work-group-size"="min_wg,max_wg"``.
    ``waves_per_eu`` is ``(min,)`` or ``(min, max)`` for ``"amdgpu-waves-per-eu"``.
    ``wave`` None = target default; ``cumode`` None = target default (WGP mode on gfx10+).
    ``vcc`` adds a VCC clobber, ``flat_scratch`` a FLAT_SCRATCH clobber (both exercise the
    extra SGPRs).  ``xnack``/``sramecc`` None = target default ("any"), else +/- feature;
    llc applies them to the whole module's target ID, so they are part of :attr:`group`.
    ``cov`` is the code-object version (module flag).  One module per :attr:`group`.
    """

    name: str
    target: str
    wave: int | None = None
    cumode: bool | None = None
    vgprs: int = 0
    agprs: int = 0
    sgprs: int = 0
    lds: int = 0
    max_wg: int = 256
    min_wg: int = 1
    waves_per_eu: tuple[int, ...] | None = None
    scratch: int = 0
    vcc: bool = False
    flat_scratch: bool = False
    xnack: bool | None = None
    sramecc: bool | None = None
    cov: int = 6

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name):
            raise ValueError(f"bad kernel name {self.name!r}")
        if not (1 <= self.min_wg <= self.max_wg <= 1024):
            raise ValueError(f"bad flat workgroup size {self.min_wg},{self.max_wg}")
        if self.wave not in (None, 32, 64):
            raise ValueError(f"bad wave size {self.wave}")
        if self.cov not in (4, 5, 6):
            raise ValueError(f"bad code object version {self.cov}")
        for f in ("vgprs", "agprs", "sgprs", "lds", "scratch"):
            if getattr(self, f) < 0:
                raise ValueError(f"negative {f}")

    @property
    def group(self) -> tuple:
        """Specs with the same group can share one IR module."""
        return (self.target, self.cov, self.xnack, self.sramecc)

    def features(self) -> str:
        feats = []
        if self.wave is not None:
            feats.append(f"+wavefrontsize{self.wave}")
        if self.cumode is True:
            feats.append("+cumode")
        elif self.cumode is False:
            feats.append("-cumode")
        if self.xnack is not None:
            feats.append("+xnack" if self.xnack else "-xnack")
        if self.sramecc is not None:
            feats.append("+sramecc" if self.sramecc else "-sramecc")
        return ",".join(feats)

    def attributes(self) -> str:
        attrs = [f'"amdgpu-flat-work-group-size"="{self.min_wg},{self.max_wg}"']
        if self.waves_per_eu:
            waves = ",".join(str(w) for w in self.waves_per_eu)
            attrs.append(f'"amdgpu-waves-per-eu"="{waves}"')
        feats = self.features()
        if feats:
            attrs.append(f'"target-features"="{feats}"')
        return " ".join(attrs)

    def expected_symbols(self) -> dict[str, int]:
        """What the ``NAME.num_vgpr``/``num_agpr``/``numbered_sgpr`` symbols must be
        when the clobbers are exact (scratch may add one VGPR and setup SGPRs)."""
        exp = {"num_agpr": self.agprs, "numbered_sgpr": max(self.sgprs, 1 if self.lds else 0)}
        exp["num_vgpr"] = max(self.vgprs, 1) if self.scratch else self.vgprs
        if self.scratch or self.flat_scratch:
            del exp["numbered_sgpr"]  # scratch / flat-scratch setup SGPRs vary per target
        return exp


def render_kernel(spec: KernelSpec, attr_id: int) -> tuple[str, str]:
    """Return (globals, function) IR text for one kernel."""
    glob = ""
    body = []
    if spec.scratch:
        body.append(f"  %p = alloca [{spec.scratch} x i8], align 4, addrspace(5)")
        body.append("  store volatile i8 0, ptr addrspace(5) %p")
    if spec.vgprs:
        body.append(f'  call void asm sideeffect "", "~{{v{spec.vgprs - 1}}}"()')
    if spec.agprs:
        body.append(f'  call void asm sideeffect "", "~{{a{spec.agprs - 1}}}"()')
    if spec.sgprs:
        body.append(f'  call void asm sideeffect "", "~{{s{spec.sgprs - 1}}}"()')
    if spec.vcc:
        body.append('  call void asm sideeffect "", "~{vcc}"()')
    if spec.flat_scratch:
        body.append('  call void asm sideeffect "", "~{flat_scratch}"()')
    if spec.lds:
        # First, so the SGPR holding the address is dead before any clobber (else gfx10+
        # may hoist the s_mov above an s0 clobber and use s1).
        glob = f"@{spec.name}.lds = internal addrspace(3) global [{spec.lds} x i8] poison, align 4\n"
        body.insert(0, f'  call void asm sideeffect "; lds $0", "s"(ptr addrspace(3) @{spec.name}.lds)')
    body.append("  ret void")
    fn = f"define amdgpu_kernel void @{spec.name}() #{attr_id} {{\n" + "\n".join(body) + "\n}\n"
    return glob, fn


def render_module(specs: Sequence[KernelSpec]) -> str:
    """IR module text for specs that all share one :attr:`KernelSpec.group`."""
    if not specs:
        raise ValueError("no specs")
    groups = {s.group for s in specs}
    if len(groups) != 1:
        raise ValueError(f"specs span several (target, cov, xnack, sramecc) groups: {sorted(groups, key=str)}")
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError("duplicate kernel names in one module")
    cov = specs[0].cov
    attr_ids: dict[str, int] = {}
    globs, fns = [], []
    for s in specs:
        a = s.attributes()
        aid = attr_ids.setdefault(a, len(attr_ids))
        g, f = render_kernel(s, aid)
        if g:
            globs.append(g)
        fns.append(f)
    attrs = "".join(f"attributes #{i} = {{ {a} }}\n" for a, i in attr_ids.items())
    flags = f'!llvm.module.flags = !{{!0}}\n!0 = !{{i32 1, !"amdhsa_code_object_version", i32 {cov * 100}}}\n'
    return "".join(globs) + "\n" + "\n".join(fns) + "\n" + attrs + flags


# --------------------------------------------------------------------------------------
# Parsing llc asm output
# --------------------------------------------------------------------------------------

_INT_RE = re.compile(r"^-?\d+$")


def _num(v: str):
    v = v.strip()
    if _INT_RE.match(v):
        return int(v)
    if re.match(r"^0x[0-9a-fA-F]+$", v):
        return int(v, 16)
    return v


def parse_asm(text: str) -> dict[str, dict]:
    """Parse llc ``-filetype=asm`` output into ``{kernel: info}``.

    ``info`` holds every ``; Kernel info:`` line (``TotalNumSgprs``, ``NumVgprs``,
    ``NumAgprs``, ``TotalNumVgprs``, ``ScratchSize``, ``LDSByteSize`` (bytes),
    ``SGPRBlocks``, ``VGPRBlocks``, ``NumSGPRsForWavesPerEU``,
    ``NumVGPRsForWavesPerEU``, ``AccumOffset``, ``Occupancy``,
    ``COMPUTE_PGM_RSRC2:*``, ``COMPUTE_PGM_RSRC3_*:*``, ...) as ints, plus
    ``"amdhsa"`` (the ``.amdhsa_*`` directives without prefix), ``"sym"`` (the
    ``NAME.num_vgpr`` etc. resource symbols) and ``"md"`` (scalar keys of the
    kernel's metadata map, without the leading dot).
    """
    infos: dict[str, dict] = {}
    lines = text.splitlines()
    cur: str | None = None
    i = 0
    n = len(lines)
    md_section = False
    md_entry: dict | None = None
    md_entries: list[dict] = []
    while i < n:
        line = lines[i]
        s = line.strip()
        if md_section:
            if s.startswith(".end_amdgpu_metadata"):
                md_section = False
                md_entry = None
            elif line.startswith("  - ."):
                md_entry = {}
                md_entries.append(md_entry)
                k, _, v = line[4:].partition(":")
                if v.strip():
                    md_entry[k.strip()[1:]] = _num(v)
            elif md_entry is not None and line.startswith("    ."):
                k, _, v = line[4:].partition(":")
                v = v.strip()
                if v:
                    md_entry[k.strip()[1:]] = _num(v)
            elif not line.startswith("    ") and not line.startswith("  - "):
                md_entry = None
            i += 1
            continue
        if s.startswith(".amdhsa_kernel "):
            cur = s.split(None, 1)[1].strip()
            info = infos.setdefault(cur, {})
            amd = info.setdefault("amdhsa", {})
            i += 1
            while i < n and not lines[i].strip().startswith(".end_amdhsa_kernel"):
                parts = lines[i].split()
                if len(parts) >= 2 and parts[0].startswith(".amdhsa_"):
                    amd[parts[0][len(".amdhsa_") :]] = _num(parts[1])
                i += 1
            i += 1
            continue
        if s.startswith(".set ") and cur is not None:
            m = re.match(r"\.set\s+([^,\s]+)\s*,\s*(.+)$", s)
            if m:
                sym, val = m.group(1), m.group(2)
                sym = sym[2:] if sym.startswith(".L" + cur + ".") else sym  # LLVM 24 makes them local
                if sym.startswith(cur + "."):
                    infos[cur].setdefault("sym", {})[sym[len(cur) + 1 :]] = _num(val)
            i += 1
            continue
        if s == "; Kernel info:" and cur is not None:
            info = infos[cur]
            i += 1
            while i < n and lines[i].startswith(";"):
                body = lines[i][1:].strip()
                if " = " in body:
                    k, _, v = body.partition(" = ")
                else:
                    k, _, v = body.rpartition(":")
                k = k.strip()
                v = v.strip()
                if k in ("LDSByteSize", "ScratchSize"):
                    v = v.split()[0]
                info[k] = _num(v)
                i += 1
            continue
        if s.startswith(".amdgpu_metadata"):
            md_section = True
        i += 1
    for e in md_entries:
        name = e.get("name")
        if isinstance(name, str) and name in infos:
            infos[name]["md"] = e
    return infos


# --------------------------------------------------------------------------------------
# Running llc / lld
# --------------------------------------------------------------------------------------


@dataclass
class LlcResult:
    rc: int
    stderr: str
    output: bytes | None  # asm text bytes or object bytes (None on failure)


def _cache_key(ir: str, args: Sequence[str], compiler: Compiler = LLC22) -> str:
    h = hashlib.sha256()
    h.update(compiler.version().encode())
    h.update(b"\0".join(a.encode() for a in args))
    h.update(b"\0\0")
    h.update(ir.encode())
    return h.hexdigest()


_VERSIONS: dict[str, str] = {}


def _compiler_version(compiler: Compiler) -> str:
    """llc's "LLVM version X", or the Triton code generator's revision; "unknown" if it cannot run."""
    if compiler.name not in _VERSIONS:
        flag = "--revision" if compiler is TRITON_LLVM else "--version"
        try:
            out = subprocess.run([*compiler.command, flag], capture_output=True, text=True, check=False).stdout
        except FileNotFoundError:
            out = ""
        m = re.search(r"LLVM version (\S+)", out) or re.fullmatch(r"\s*([0-9a-f]{40}\S*)\s*", out)
        _VERSIONS[compiler.name] = m.group(1) if m else "unknown"
    return _VERSIONS[compiler.name]


def llc_version() -> str:
    return _compiler_version(LLC22)


def run_llc(
    ir: str,
    mcpu: str,
    filetype: str = "asm",
    *,
    extra_args: Sequence[str] = (),
    cache_dir: str | os.PathLike | None = None,
    timeout: float = 600,
    compiler: Compiler = LLC22,
) -> LlcResult:
    """Compile IR text with ``compiler`` (llc-22 by default; stdin -> stdout), optionally memoised
    on disk (key: compiler version + arguments + IR; outputs stored zlib-compressed)."""
    args = [
        *compiler.command,
        f"-mtriple={compiler.triple(mcpu)}",
        f"-mcpu={mcpu}",
        f"-filetype={filetype}",
        *extra_args,
        "-o",
        "-",
        "-",
    ]
    cpath = None
    if cache_dir is not None:
        key = _cache_key(ir, args[len(compiler.command) :], compiler)
        cpath = Path(cache_dir) / key[:2] / key
        if cpath.with_suffix(".rc").exists():
            rc = int(cpath.with_suffix(".rc").read_text())
            err = cpath.with_suffix(".err").read_text()
            out = zlib.decompress(cpath.with_suffix(".out.z").read_bytes()) if rc == 0 else None
            return LlcResult(rc, err, out)
    p = subprocess.run(args, input=ir.encode(), capture_output=True, timeout=timeout, check=False)
    res = LlcResult(p.returncode, p.stderr.decode(errors="replace"), p.stdout if p.returncode == 0 else None)
    if cpath is not None:
        cpath.parent.mkdir(parents=True, exist_ok=True)
        tmp = cpath.with_suffix(f".tmp{os.getpid()}_{threading.get_ident()}")
        if res.rc == 0:
            tmp.write_bytes(zlib.compress(res.output or b"", 1))
            os.replace(tmp, cpath.with_suffix(".out.z"))
        tmp.write_text(res.stderr)
        os.replace(tmp, cpath.with_suffix(".err"))
        tmp.write_text(str(res.rc))
        os.replace(tmp, cpath.with_suffix(".rc"))
    return res


_FN_ERR_RE = re.compile(r"error: [^\n]*?in function '([^']+)'")
_FN_ERR2_RE = re.compile(r"error: [^\n]*?'([^']+)'")
_REMOVED_RE = re.compile(r"remark: [^\n]*removing function '([^']+)': ([^\n]*)")
_REMARK_ARGS = ("-pass-remarks=amdgpu-remove-incompatible-functions",)


def failing_functions(stderr: str) -> dict[str, str]:
    """``{function: error line}`` for every ``error: ... in function 'F'`` diagnostic."""
    out: dict[str, str] = {}
    for line in stderr.splitlines():
        m = _FN_ERR_RE.search(line)
        if m:
            out.setdefault(m.group(1), line.strip())
    return out


def removed_functions(stderr: str) -> dict[str, str]:
    """Kernels llc silently dropped as incompatible with the subtarget (e.g. wave32 on gfx942)."""
    return {m.group(1): m.group(2).strip() for m in _REMOVED_RE.finditer(stderr)}


@dataclass
class BatchResult:
    """Result of one module.  Iterates as ``(hsaco_path, infos)``."""

    hsaco: Path | None
    infos: dict[str, dict]
    errors: dict[str, str] = field(default_factory=dict)  # kernel -> reason (dropped specs)
    target: str = ""
    cov: int = 6
    asm_path: Path | None = None
    llc_calls: int = 0
    seconds: float = 0.0

    def __iter__(self) -> Iterator:
        return iter((self.hsaco, self.infos))


def _compile_asm_robust(
    specs: list[KernelSpec],
    mcpu: str,
    cache_dir,
    errors: dict[str, str],
    counter: list[int],
    compiler: Compiler = LLC22,
    extra: tuple[str, ...] = (),
) -> tuple[list[KernelSpec], str | None]:
    """Compile to asm, dropping specs that make llc fail; return (kept specs, asm text)."""
    pending = list(specs)
    while pending:
        ir = render_module(pending)
        counter[0] += 1
        r = run_llc(ir, mcpu, "asm", extra_args=_REMARK_ARGS + extra, cache_dir=cache_dir, compiler=compiler)
        if r.rc == 0:
            asm = (r.output or b"").decode()
            for fn, why in removed_functions(r.stderr).items():
                errors[fn] = "removed by llc: " + why
            kept = [s for s in pending if s.name not in errors]
            return kept, asm
        bad = failing_functions(r.stderr)
        bad = {k: v for k, v in bad.items() if any(s.name == k for s in pending)}
        if bad:
            errors.update(bad)
            pending = [s for s in pending if s.name not in bad]
            continue
        # A module-level failure (LLVM ERROR / crash) that names no function.
        msg = _first_error(r.stderr, r.rc)
        if len(pending) == 1:
            errors[pending[0].name] = msg
            return [], None
        half = len(pending) // 2
        a, asm_a = _compile_asm_robust(pending[:half], mcpu, cache_dir, errors, counter, compiler, extra)
        b, _asm_b = _compile_asm_robust(pending[half:], mcpu, cache_dir, errors, counter, compiler, extra)
        pending = a + b
        if not pending:
            return [], None
        # both halves compile on their own; compile them together again (cheap, rare)
        ir = render_module(pending)
        counter[0] += 1
        r = run_llc(ir, mcpu, "asm", extra_args=_REMARK_ARGS + extra, cache_dir=cache_dir, compiler=compiler)
        if r.rc == 0:
            return pending, (r.output or b"").decode()
        # give up on joint compilation: keep the first half only
        for s in b:
            errors[s.name] = "dropped: compiles alone but not together: " + _first_error(r.stderr, r.rc)
        return a, asm_a
    return [], None


def _first_error(stderr: str, rc: int) -> str:
    for line in stderr.splitlines():
        if "error" in line.lower() or "LLVM ERROR" in line:
            return line.strip()
    if rc < 0 or rc > 128:
        return f"llc crashed (rc={rc}): " + " | ".join(stderr.splitlines()[:3])
    return f"llc failed (rc={rc}): " + " | ".join(stderr.splitlines()[:3])


def compile_asm(
    specs: Sequence[KernelSpec],
    cache_dir: str | os.PathLike | None = None,
    compiler: Compiler = LLC22,
) -> tuple[dict[str, dict], dict[str, str], int]:
    """Asm-only compile of one :attr:`KernelSpec.group`: ``(infos, errors, llc_calls)``.

    Like :func:`compile_batch` without writing files, object code or linking
    (used by ``tools/probe_targets.py``)."""
    specs = list(specs)
    if not specs:
        return {}, {}, 0
    errors: dict[str, str] = {}
    counter = [0]
    kept, asm = _compile_asm_robust(specs, specs[0].target, cache_dir, errors, counter, compiler)
    infos = parse_asm(asm) if asm else {}
    want = {s.name for s in kept}
    infos = {k: v for k, v in infos.items() if k in want}
    for s in kept:
        if s.name not in infos:
            errors.setdefault(s.name, "kernel missing from llc output")
    return infos, errors, counter[0]


def compile_batch(
    specs: Sequence[KernelSpec],
    workdir: str | os.PathLike,
    *,
    link: bool = True,
    obj_via: str = "llc",
    cache_dir: str | os.PathLike | None = None,
    stem: str | None = None,
    compiler: Compiler = LLC22,
) -> BatchResult:
    """Compile specs of one :attr:`KernelSpec.group` in a single module.

    Returns a :class:`BatchResult`; ``hsaco, infos = compile_batch(...)`` works.
    Specs llc rejects are dropped (``result.errors[name]`` holds the reason,
    e.g. ``error: <unknown>:0:0: local memory (65540) exceeds limit (65536) in
    function 'k1'``) and the rest is recompiled.  ``obj_via="mc"`` assembles the
    asm with llvm-mc instead of a second llc run (faster, same bytes modulo
    section order details).
    """
    t0 = time.perf_counter()
    specs = list(specs)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    target, cov = specs[0].target, specs[0].cov
    stem = stem or f"{target}_v{cov}_{hashlib.sha1(','.join(s.name for s in specs).encode()).hexdigest()[:10]}"
    errors: dict[str, str] = {}
    counter = [0]
    # A compiler that links (link None) leaves the linked object of each IR it compiled beside it.
    extra = (f"--hsaco-dir={workdir}",) if link and compiler.link is None else ()
    kept, asm = _compile_asm_robust(specs, target, cache_dir, errors, counter, compiler, extra)
    res = BatchResult(None, {}, errors, target, cov, llc_calls=0)
    if asm is None or not kept:
        res.llc_calls = counter[0]
        res.seconds = time.perf_counter() - t0
        return res
    asm_path = workdir / f"{stem}.s"
    asm_path.write_text(asm)
    res.asm_path = asm_path
    infos = parse_asm(asm)
    want = {s.name for s in kept}
    res.infos = {k: v for k, v in infos.items() if k in want}
    for s in kept:
        if s.name not in res.infos:
            errors.setdefault(s.name, "kernel missing from llc output")
    if link and compiler.link is None:
        ir = render_module(kept)
        linked = workdir / (hashlib.sha256(ir.encode()).hexdigest() + ".hsaco")
        if not linked.exists():  # the asm came from a cache or a partial compile
            counter[0] += 1
            r = run_llc(ir, target, "hsaco", cache_dir=cache_dir, compiler=compiler)
            if r.rc != 0:
                raise RuntimeError(f"{compiler.name} failed to link what it compiled ({target}): {r.stderr[:500]}")
            linked.write_bytes(r.output or b"")
        res.hsaco = workdir / f"{stem}.hsaco"
        os.replace(linked, res.hsaco)
    elif link:
        obj_path = workdir / f"{stem}.o"
        if obj_via == "mc" and compiler is LLC22:
            s0 = kept[0]
            mattr = ",".join(
                f"{'+' if v else '-'}{k}" for k, v in (("xnack", s0.xnack), ("sramecc", s0.sramecc)) if v is not None
            )
            p = subprocess.run(
                [
                    LLVM_MC,
                    f"-triple={TRIPLE}",
                    f"-mcpu={target}",
                    *([f"-mattr={mattr}"] if mattr else []),
                    "-filetype=obj",
                    str(asm_path),
                    "-o",
                    str(obj_path),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            ok, err = p.returncode == 0, p.stderr
        else:
            counter[0] += 1
            r = run_llc(render_module(kept), target, "obj", cache_dir=cache_dir, compiler=compiler)
            ok, err = r.rc == 0, r.stderr
            if ok:
                obj_path.write_bytes(r.output or b"")
        if not ok:
            raise RuntimeError(f"object compile failed after asm succeeded ({target}): {err[:500]}")
        hsaco = workdir / f"{stem}.hsaco"
        p = subprocess.run(
            [*compiler.link, str(obj_path), "-o", str(hsaco)], capture_output=True, text=True, check=False
        )
        if p.returncode != 0:
            raise RuntimeError(f"{compiler.name} link failed ({target}): {p.stderr[:500]}")
        res.hsaco = hsaco
    res.llc_calls = counter[0]
    res.seconds = time.perf_counter() - t0
    return res


def _chunks(specs: Sequence[KernelSpec], size: int) -> list[list[KernelSpec]]:
    by_group: dict[tuple, list[KernelSpec]] = {}
    for s in specs:
        by_group.setdefault(s.group, []).append(s)
    out = []
    for g in sorted(by_group, key=str):
        lst = by_group[g]
        nchunks = max(1, -(-len(lst) // size))
        step = -(-len(lst) // nchunks)
        out.extend(lst[i : i + step] for i in range(0, len(lst), step))
    return out


def compile_many(
    specs: Sequence[KernelSpec],
    workdir: str | os.PathLike,
    *,
    jobs: int | None = None,
    chunk: int = 400,
    link: bool = True,
    obj_via: str = "llc",
    cache_dir: str | os.PathLike | None = None,
    compiler: Compiler = LLC22,
) -> list[BatchResult]:
    """Group specs by :attr:`KernelSpec.group`, split into modules of <= ``chunk`` kernels and
    compile them on a thread pool (each worker runs its own llc processes)."""
    jobs = jobs or os.cpu_count() or 1
    batches = _chunks(specs, chunk)
    # biggest first for better packing
    batches.sort(key=len, reverse=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [
            ex.submit(
                compile_batch,
                b,
                workdir,
                link=link,
                obj_via=obj_via,
                cache_dir=cache_dir,
                stem=f"{compiler.name}_b{i:04d}_{b[0].target}_v{b[0].cov}",
                compiler=compiler,
            )
            for i, b in enumerate(batches)
        ]
        return [f.result() for f in futs]


def check_counts(spec: KernelSpec, info: dict) -> list[str]:
    """Differences between the registers the spec asked for and what LLVM counted."""
    sym = info.get("sym", {})
    bad = []
    exp = spec.expected_symbols()
    if "numbered_sgpr" in exp:
        # measured quirk (SGPR-init-bug targets gfx802/gfx805): clobbering s84..s86 reports 88
        p = _probe_data().get(spec.target, {})
        if p.get("kind") == "alias":
            p = _probe_data().get(p["alias_of"], {})
        anom = p.get("sgpr", {}).get("numbered_sgpr_anomalies", {})
        exp["numbered_sgpr"] = anom.get(str(exp["numbered_sgpr"]), exp["numbered_sgpr"])
    for k, v in exp.items():
        if k == "num_agpr" and "num_agpr" not in sym:
            continue
        if sym.get(k) != v:
            bad.append(f"{k}: wanted {v}, llc has {sym.get(k)}")
    if info.get("LDSByteSize") != spec.lds:
        bad.append(f"LDSByteSize: wanted {spec.lds}, llc has {info.get('LDSByteSize')}")
    return bad


# --------------------------------------------------------------------------------------
# Random specs
# --------------------------------------------------------------------------------------

DEFAULT_TARGETS = (
    "gfx803",
    "gfx900",
    "gfx906",
    "gfx908",
    "gfx90a",
    "gfx942",
    "gfx950",
    "gfx1010",
    "gfx1030",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1151",
    "gfx1200",
    "gfx1201",
    "gfx9-4-generic",
    "gfx11-generic",
    "gfx12-generic",
)

_WG_EDGES = (
    1,
    2,
    31,
    32,
    33,
    63,
    64,
    65,
    96,
    127,
    128,
    129,
    160,
    192,
    255,
    256,
    257,
    320,
    384,
    448,
    512,
    513,
    576,
    640,
    704,
    768,
    832,
    896,
    960,
    1000,
    1023,
    1024,
)


def _pick_regs(rng: random.Random, hi: int, granules: Sequence[int], zero_p: float = 0.1) -> int:
    r = rng.random()
    if r < zero_p:
        return 0
    if r < 0.55:
        g = rng.choice(granules)
        k = rng.randint(1, max(1, hi // g))
        v = k * g + rng.choice((-1, 0, 0, 1))
        return max(1, min(hi, v))
    if r < 0.7:
        return rng.randint(1, min(hi, 24))
    return rng.randint(1, hi)


def _pick_lds(rng: random.Random, caps: TargetCaps) -> int:
    a = caps.lds_max
    r = rng.random()
    if r < 0.35:
        return 0
    if r < 0.65:  # pool/k boundaries (pool = A, or 2A in WGP mode)
        pool = a * rng.choice((1, 2) if caps.wgp else (1,))
        k = rng.randint(1, 40)
        v = pool // k + rng.choice((-1, 0, 1, 1))
        return max(1, min(a, v))
    if r < 0.75:  # just over a multiple of the allocation granule
        g = rng.choice((512, 1280, 2048))
        return max(1, min(a, rng.randint(1, a // g) * g + rng.choice((1, 0, -1))))
    if r < 0.8:
        return a - rng.randint(0, 3)
    if r < 0.9:
        return rng.randint(1, 4096)
    return rng.randint(1, a)


def random_spec(
    rng: random.Random,
    target: str,
    name: str,
    variant: tuple[int, bool | None] | None = None,
    compiler: Compiler | None = None,
) -> KernelSpec:
    """One random kernel.  ``variant`` = (cov, xnack) fixes the module-level choices; ``compiler``
    chooses whose measured envelope applies (llc-22's by default)."""
    caps = target_caps(target, compiler=compiler)
    if variant is None:
        variant = _random_variant(rng, caps)
    cov, xnack = variant
    wave = rng.choice((*caps.waves, None))
    cumode = rng.choice((None, True, False)) if caps.wgp else None
    max_wg = rng.choice(_WG_EDGES) if rng.random() < 0.6 else rng.randint(1, 1024)
    r = rng.random()
    if r < 0.7:
        min_wg = 1
    elif r < 0.85:
        min_wg = max_wg
    else:
        min_wg = rng.randint(1, max_wg)
    vgprs = _pick_regs(rng, caps.max_vgprs, (4, 8, 12, 16, 24))
    agprs = 0
    if caps.has_agprs and rng.random() < 0.5:
        agprs = _pick_regs(rng, 256, (4, 8, 16), zero_p=0.0)
    sg_r = rng.random()
    if sg_r < 0.15:
        sgprs = 0
    elif sg_r < 0.6:
        edge = rng.choice((48, 56, 64, 72, 80, 88, 96, 100, 102, 104))
        sgprs = edge - rng.choice((0, 2, 4, 6)) + rng.choice((-1, 0, 1))
    else:
        sgprs = rng.randint(1, caps.max_sgprs)
    sgprs = max(0, min(caps.max_sgprs, sgprs))
    if caps.major < 8 or caps.max_sgprs < 100:
        # there the limit error counts VCC/FLAT_SCRATCH too ("scalar registers (105) exceeds limit (104)")
        sgprs = min(sgprs, caps.max_sgprs - 6)
    lds = _pick_lds(rng, caps)
    wpe = None
    if rng.random() < 0.1:
        lo = rng.randint(1, 10)
        wpe = (lo,) if rng.random() < 0.5 else (lo, rng.randint(lo, 20))
    scratch = rng.choice((4, 16, 64, 260, 1024)) if rng.random() < 0.05 else 0
    vcc = rng.random() < 0.15
    flat_scratch = rng.random() < 0.05
    return KernelSpec(
        name=name,
        target=target,
        wave=wave,
        cumode=cumode,
        vgprs=vgprs,
        agprs=agprs,
        sgprs=sgprs,
        lds=lds,
        max_wg=max_wg,
        min_wg=min_wg,
        waves_per_eu=wpe,
        scratch=scratch,
        vcc=vcc,
        flat_scratch=flat_scratch,
        xnack=xnack,
        cov=cov,
    )


def _random_variant(rng: random.Random, caps: TargetCaps) -> tuple[int, bool | None]:
    cov = 6 if caps.generic else rng.choice((6, 5, 4))
    xnack = rng.choice((None, False, True)) if caps.xnack else None
    return cov, xnack


def random_specs(
    rng: random.Random,
    targets: Sequence[str] = DEFAULT_TARGETS,
    n: int = 1000,
    prefix: str = "k",
    compiler: Compiler | None = None,
) -> list[KernelSpec]:
    """``n`` random specs spread round-robin over ``targets`` (names ``{prefix}{i}``).

    Module-level choices (code-object version, xnack) are drawn once per target: 75% of a
    target's kernels use (v6, default xnack), the rest one random other variant, so a run
    needs at most two modules per target (compile throughput is dominated by per-module cost)."""
    targets = list(targets)
    extra = {t: _random_variant(rng, target_caps(t, compiler=compiler)) for t in targets}
    out = []
    for i in range(n):
        t = targets[i % len(targets)]
        v = (6, None) if rng.random() < 0.75 else extra[t]
        out.append(random_spec(rng, t, f"{prefix}{i}", v, compiler))
    return out


# --------------------------------------------------------------------------------------
# CLI: benchmark / smoke test
# --------------------------------------------------------------------------------------


def _bench(n: int, jobs: int, obj_via: str, seed: int, chunk: int) -> None:
    rng = random.Random(seed)
    specs = random_specs(rng, DEFAULT_TARGETS, n)
    with tempfile.TemporaryDirectory(prefix="kernelgen-") as td:
        t0 = time.perf_counter()
        results = compile_many(specs, td, jobs=jobs, obj_via=obj_via, chunk=chunk)
        dt = time.perf_counter() - t0
        ok = sum(len(r.infos) for r in results)
        errs = {k: v for r in results for k, v in r.errors.items()}
        calls = sum(r.llc_calls for r in results)
        bad = 0
        by_name = {s.name: s for s in specs}
        for r in results:
            for k, info in r.infos.items():
                if check_counts(by_name[k], info):
                    bad += 1
        print(
            f"{n} specs, {len(DEFAULT_TARGETS)} targets, {len(results)} modules, {calls} llc calls, "
            f"jobs={jobs}, obj via {obj_via}"
        )
        print(
            f"compiled {ok} kernels in {dt:.2f}s -> {ok / dt:.0f} kernels/s; {len(errs)} dropped; "
            f"{bad} count mismatches"
        )
        for k, v in list(errs.items())[:10]:
            print(f"  dropped {k}: {v}")


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", action="store_true", help="compile random kernels and report throughput")
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--obj-via", choices=("llc", "mc"), default="llc")
    ap.add_argument("--chunk", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--emit-ir", metavar="TARGET", help="print the IR of a few random specs for TARGET")
    ap.add_argument("--check-caps", action="store_true", help="compare the built-in caps with the probe JSON")
    a = ap.parse_args(argv)
    if a.check_caps:
        bad = 0
        for t in _probe_data():
            if t.startswith("_"):
                continue
            b, q = _builtin_caps(t), target_caps(t, "probe")
            if b != q:
                bad += 1
                print(f"{t}: builtin {b}\n{' ' * len(t)}  probe   {q}")
        print(f"{bad} mismatches")
        return 1 if bad else 0
    if a.emit_ir:
        specs = [dataclasses.replace(s, cov=6) for s in random_specs(random.Random(a.seed), [a.emit_ir], 5)]
        print(render_module(specs))
        return 0
    _bench(a.n, a.jobs, a.obj_via, a.seed, a.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
