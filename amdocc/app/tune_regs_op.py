"""tune-regs: what a register budget would cost, from the kernel's own compiler
(``amdocc tune-regs``, docs/tune-regs.md).

For each kernel, the unmodified LLVM IR is first recompiled and must reproduce what was built
(a Triton cache entry's ``.amdgcn`` byte for byte; a code object given beside the IR, its
``.text``); then ``amdgpu-waves-per-eu`` ("N,N") is swept and, where the IR carries it,
``amdgpu-agpr-alloc``, each point compiled in a child process (a crash or a timeout costs that
point) and read with amdocc's own reader. The points no other point beats on both occupancy
and spilled dwords are marked as the frontier.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .reading import StrPath, path_list

if TYPE_CHECKING:
    from ..targets import Target
    from ..tuning.ir_attributes import KernelDefinition
    from ..tuning.worker import Codegen

WAVES_ATTRIBUTE, AGPR_ATTRIBUTE = "amdgpu-waves-per-eu", "amdgpu-agpr-alloc"
IR_SUFFIXES = (".ll",)
OBJECT_SUFFIXES = (".o", ".co", ".hsaco")
NOT_THE_BUILDER = 3  # exit status of an entry the installed compiler does not reproduce
FRONTIER_MODEL = "hip"  # the runtime's answer at the launch: what the hardware will run


@dataclass(frozen=True)
class TuneOptions:
    """``waves``: the waves-per-EU values to compile (None: from what the kernel reaches to the
    processor's maximum); ``agpr_alloc``: the AGPR counts to try where the IR carries
    ``amdgpu-agpr-alloc`` (None: half the budget at each waves value; () for none); ``kernel``: a
    regex on kernel names; ``compiler``: a libLLVM for LLVM IR input; ``target``: the processor
    of IR with no ``target-cpu``; ``timeout``: seconds one compile may take."""

    waves: tuple[int, ...] | None = None
    agpr_alloc: tuple[int, ...] | None = None
    kernel: str | None = None
    compiler: str | None = None
    target: str | None = None
    timeout: float = 300.0


def _first_difference(a: str, b: str) -> str:
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False), 1):
        if x != y:
            return f"first difference at line {n}"
    return f"one is a prefix of the other ({len(a.splitlines())} and {len(b.splitlines())} lines)"


def vgpr_budget(target: Target, wave: int, waves: int) -> int:
    """The VGPRs (AGPRs included on a unified file) one wave may have at ``waves`` per SIMD."""
    granule = target.vgpr_alloc_granule.get(wave, 4)
    per_wave = target.vgprs.get(wave, 256) // max(waves, 1) // granule * granule
    limit = target.addressable_vgprs + (target.agprs if target.register_file == "unified" else 0)
    return min(per_wave, limit)


def plan(
    target: Target, wave: int, reach: int, own_waves: int | None, carries_agpr: bool, options: TuneOptions
) -> list[tuple[int | None, int | None]]:
    """The (waves_per_eu, agpr_alloc) points to compile after the one as built."""
    waves = list(options.waves) if options.waves else list(range(max(reach, 1), target.max_waves_per_simd + 1))
    out: list[tuple[int | None, int | None]] = [(w, None) for w in waves if w != own_waves]
    if carries_agpr and target.has_agprs:
        for w in waves:
            values = options.agpr_alloc if options.agpr_alloc is not None else (vgpr_budget(target, wave, w) // 2,)
            out += [(w, a) for a in values]
    return out


def _changes(waves: int | None, agpr: int | None) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    if waves is not None:
        out[WAVES_ATTRIBUTE] = f"{waves},{waves}"
    if agpr is not None:
        out[AGPR_ATTRIBUTE] = str(agpr)
    return out


def _point(waves: int | None, agpr: int | None, figures: dict[str, Any] | None, error: str | None) -> dict[str, Any]:
    from ..tuning.points import METADATA

    blank: dict[str, Any] = {key: None for key in METADATA}
    blank.update(spills_in_loops=None, accvgpr_copies=None, main_loop_instructions=None, text_sha256=None,
                 waves_per_simd={"llvm": None, "hip": None, "compiler": None})  # fmt: skip
    return {"waves_per_eu": waves, "agpr_alloc": agpr, **blank, **(figures or {}), "frontier": False, "error": error}


def _sweep(
    compile_point: Any,
    ir: str,
    kernel: KernelDefinition,
    name: str,
    where: str,
    target: Target,
    wave: int,
    launch: tuple[int, int],
    as_built: dict[str, Any],
    own_waves: int | None,
    options: TuneOptions,
) -> list[dict[str, Any]]:
    from ..errors import AmdoccError
    from ..tuning.ir_attributes import attributes, with_attributes
    from ..tuning.points import mark_frontier, read_point
    from ..tuning.worker import PointFailed

    reach = int(as_built["waves_per_simd"]["llvm"] or 1)
    carries_agpr = AGPR_ATTRIBUTE in attributes(ir, kernel)
    points = [as_built]
    for waves, agpr in plan(target, wave, reach, own_waves, carries_agpr, options):
        label = f"{where} [{WAVES_ATTRIBUTE}={waves},{waves}" + (
            f", {AGPR_ATTRIBUTE}={agpr}]" if agpr is not None else "]"
        )
        try:
            relocatable, image = compile_point(with_attributes(ir, kernel, _changes(waves, agpr)))
            figures = read_point(image, name, label, *launch)
            figures["text_sha256"] = text_digest(relocatable, label)
            points.append(_point(waves, agpr, figures, None))
        except PointFailed as exc:
            points.append(_point(waves, agpr, None, f"{exc.kind}: {exc}"))
        except AmdoccError as exc:
            points.append(_point(waves, agpr, None, f"unreadable: {exc}"))
    mark_frontier(points, FRONTIER_MODEL)
    return points


def _result(path: str, name: str, target: str, compiler: dict[str, Any], launch: tuple[int, int]) -> dict[str, Any]:
    return {
        "path": path,
        "kernel": name,
        "target": target,
        "compiler": compiler,
        "exact": False,
        "launch": {"block_size": launch[0], "dynamic_lds": launch[1]},
        "points": [],
        "error": None,
        "exit_status": 0,
        "seconds": None,
    }


def tune_triton_entry(
    codegen: Codegen, llir_path: str, options: TuneOptions, described: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """The result for one Triton cache entry (nothing when ``options.kernel`` passes it over)."""
    from ..targets import get_target
    from ..tuning.ir_attributes import kernels
    from ..tuning.points import read_point
    from ..tuning.triton_entry import read_entry
    from ..tuning.worker import PointFailed

    entry = read_entry(llir_path)
    if options.kernel and not re.search(options.kernel, entry.name):
        return
    started = time.perf_counter()
    launch = (entry.block_size, entry.shared)
    compiler = {"name": "triton", **described, "entry_triton_version": entry.triton_version}
    out = _result(llir_path, entry.name, entry.arch, compiler, launch)
    llir = entry.text(".llir")
    defined = [k for k in kernels(llir) if k.name == entry.name]
    if len(defined) != 1:
        out["error"] = f"{llir_path}: the IR defines {len(defined)} amdgpu_kernel named {entry.name!r}"
        out["exit_status"] = 2
        yield out
        return
    cached = entry.text(".amdgcn")
    installed = f"{described.get('triton_version')}, AMD codegen {described.get('codegen_revision')}"
    refusal = (f"this Triton ({installed}) is not the one that built it "
               f"(the entry says triton_version {entry.triton_version or 'unknown'})")  # fmt: skip
    try:
        again = codegen.call("triton_compile", llir, entry.arch, entry.enable_fp_fusion)
    except PointFailed as exc:
        out["error"] = f"{llir_path}: {refusal}: recompiling the unmodified .llir failed ({exc.kind}: {exc})"
        out["exit_status"] = NOT_THE_BUILDER
        yield out
        return
    if again != cached:
        out["error"] = (f"{llir_path}: {refusal}: recompiling the unmodified .llir with the entry's options "
                        f"(arch {entry.arch}, enable_fp_fusion {entry.enable_fp_fusion}) does not give its .amdgcn "
                        f"byte for byte ({_first_difference(again, cached)})")  # fmt: skip
        out["exit_status"] = NOT_THE_BUILDER
        yield out
        return
    out["exact"] = True
    target = get_target(entry.arch.removesuffix("-strict"))
    as_built = _point(None, None, read_point(entry.read(".hsaco"), entry.name, entry.file(".hsaco"), *launch), None)
    try:
        as_built["text_sha256"] = text_digest(codegen.call("triton_assemble", cached, entry.arch), llir_path)
    except PointFailed as exc:
        as_built["error"] = f"the cached .amdgcn does not assemble ({exc.kind}: {exc})"
    own = entry.metadata.get("waves_per_eu")

    def compile_point(ir: str) -> tuple[bytes, bytes]:
        objects: tuple[bytes, bytes] = codegen.call("triton_point", ir, entry.arch, entry.enable_fp_fusion)
        return objects

    out["points"] = _sweep(compile_point, llir, defined[0], entry.name, llir_path, target, entry.warp_size, launch,
                           as_built, own if isinstance(own, int) and own > 0 else None, options)  # fmt: skip
    out["seconds"] = round(time.perf_counter() - started, 3)
    yield out


def _text_section(image: bytes, where: str) -> bytes:
    from ..elf import ElfFile
    from ..errors import FormatError, Origin

    elf = ElfFile(image, Origin(where))
    found = [s for s in elf.sections if s.name == ".text"]
    if len(found) != 1:
        raise FormatError(f"{where}: {len(found)} .text sections", Origin(where), 0)
    return elf.section_bytes(found[0])


def text_digest(image: bytes, where: str) -> str:
    """sha256 of the object's ``.text`` (as the compiler emitted it, before linking)."""
    import hashlib

    return hashlib.sha256(_text_section(image, where)).hexdigest()


def _beside(ir_path: str, given: list[str]) -> str | None:
    stem = os.path.splitext(ir_path)[0]
    for path in given:
        if os.path.splitext(path)[0] == stem and path.endswith(OBJECT_SUFFIXES):
            return path
    for suffix in OBJECT_SUFFIXES:
        if os.path.isfile(stem + suffix):
            return stem + suffix
    return None


def tune_llvm_ir(
    codegen: Codegen, ir_path: str, options: TuneOptions, described: dict[str, Any], objects: list[str]
) -> Iterator[dict[str, Any]]:
    """One result per kernel of an LLVM IR file, compiled by ``options.compiler``."""
    from ..elf import ElfFile
    from ..errors import FormatError, Origin, UsageError
    from ..loader import load
    from ..targets import get_target
    from ..tuning.ir_attributes import attributes, kernels
    from ..tuning.points import read_point
    from ..tuning.worker import PointFailed

    assert options.compiler is not None
    try:
        with open(ir_path, "rb") as f:
            raw = f.read()
        ir = raw.decode("utf-8")
    except OSError as exc:
        raise UsageError(f"{ir_path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise FormatError(f"{ir_path}: offset {exc.start}: not LLVM IR text (give the .ll, not bitcode)") from None
    defined = [k for k in kernels(ir) if not options.kernel or re.search(options.kernel, k.name)]
    beside = _beside(ir_path, objects)
    compiler = {"name": "libLLVM", **described}
    for kernel in defined:
        started = time.perf_counter()
        attrs = attributes(ir, kernel)
        processor = attrs.get("target-cpu") or options.target
        if not processor:
            raise UsageError(f"{ir_path}: kernel {kernel.name} names no target-cpu; give --target GFX")
        target = get_target(processor)
        features = attrs.get("target-features") or ""
        wave = 32 if "+wavefrontsize32" in features else 64 if "+wavefrontsize64" in features else target.default_wave
        try:
            relocatable, image = codegen.call("llvm_point", options.compiler, raw, processor, "")
        except PointFailed as exc:
            out = _result(ir_path, kernel.name, processor, compiler, (0, 0))
            out["error"] = f"{ir_path}: the unmodified IR does not compile ({exc.kind}: {exc})"
            out["exit_status"] = 2
            yield out
            continue
        declared = [k for co in load(image) for k in co.kernels if kernel.name in (k.name, k.symbol)]
        block = int(declared[0].metadata.get(".max_flat_workgroup_size") or 1024) if declared else 1024
        launch = (block, 0)
        out = _result(ir_path, kernel.name, processor, compiler, launch)
        if beside is not None:
            with open(beside, "rb") as f:
                shipped = f.read()
            relocatable_given = ElfFile(shipped, Origin(beside)).header.e_type == 1
            ours = _text_section(relocatable if relocatable_given else image, f"<{ir_path} compiled>")
            if _text_section(shipped, beside) != ours:
                who = f"{described.get('library')}, LLVM {described.get('version')}"
                out["error"] = (f"{beside}: this compiler ({who}) is not the one that built it: "
                                f"its .text is not reproduced from {ir_path}")  # fmt: skip
                out["exit_status"] = NOT_THE_BUILDER
                yield out
                continue
            out["exact"] = True
            out["built"] = beside
        as_built = _point(None, None, read_point(image, kernel.name, ir_path, *launch), None)
        as_built["text_sha256"] = text_digest(relocatable, ir_path)

        def compile_point(text: str, processor: str = processor) -> tuple[bytes, bytes]:
            objects: tuple[bytes, bytes] = codegen.call("llvm_point", options.compiler, text.encode(), processor, "")
            return objects

        out["points"] = _sweep(
            compile_point, ir, kernel, kernel.name, ir_path, target, wave, launch, as_built, None, options
        )
        out["seconds"] = round(time.perf_counter() - started, 3)
        yield out


def tune_regs_iter(paths: StrPath | Iterable[StrPath], options: TuneOptions) -> Iterator[dict[str, Any]]:
    """Each kernel's result as it is finished (what the command line prints as it goes)."""
    from ..errors import AmdoccError, UsageError
    from ..tuning.triton_entry import find_entries
    from ..tuning.worker import Codegen, PointFailed

    given = path_list(paths)
    irs = [p for p in given if p.endswith(IR_SUFFIXES)]
    objects = [p for p in given if p.endswith(OBJECT_SUFFIXES) and os.path.splitext(p)[0] + ".ll" in irs]
    caches = [p for p in given if p not in irs and p not in objects]
    if irs and not options.compiler:
        raise UsageError(f"{irs[0]}: LLVM IR needs --compiler LIB (the libLLVM to compile it with)")
    entries = [e for p in caches for e in find_entries(p)]
    if caches and not entries:
        raise UsageError(f"no Triton cache entry (<name>.llir beside <name>.json) under {', '.join(caches)}")
    with Codegen(options.timeout) as codegen:
        if entries:
            try:
                described = codegen.call("triton_describe")
            except PointFailed as exc:
                raise UsageError(f"Triton's AMD code generator cannot be used: {exc}") from None
            for llir in entries:
                try:
                    yield from tune_triton_entry(codegen, llir, options, described)
                except AmdoccError as exc:  # an unreadable entry: reported, the others still run
                    out = _result(llir, os.path.basename(llir).removesuffix(".llir"), "", {"name": "triton"}, (0, 0))
                    out["error"] = str(exc)
                    out["exit_status"] = exc.exit_code
                    yield out
        if irs:
            try:
                described = codegen.call("llvm_describe", options.compiler)
            except PointFailed as exc:
                raise UsageError(f"--compiler {options.compiler}: {exc}") from None
            for ir in irs:
                try:
                    yield from tune_llvm_ir(codegen, ir, options, described, objects)
                except AmdoccError as exc:  # an unreadable IR file: reported, the others still run
                    out = _result(ir, "", options.target or "", {"name": "libLLVM", **described}, (0, 0))
                    out["error"] = str(exc)
                    out["exit_status"] = exc.exit_code
                    yield out


def tune_regs(
    paths: StrPath | Iterable[StrPath],
    *,
    waves: Iterable[int] | None = None,
    agpr_alloc: Iterable[int] | None = None,
    kernel: str | None = None,
    compiler: str | None = None,
    target: str | None = None,
    timeout: float = 300.0,
) -> dict[str, list[dict[str, Any]]]:
    """``amdocc tune-regs --json``: ``{"results": [...]}``, one per kernel (docs/tune-regs.md).

    ``paths``: Triton cache directories, entries or entry files, and LLVM IR files (``.ll``, with
    ``compiler`` naming a libLLVM; a code object with the same stem beside it must be reproduced
    first). A result the installed compiler cannot reproduce has ``exact`` false, no points, its
    ``error`` and ``exit_status`` 3."""
    from ..errors import UsageError

    if kernel is not None:
        try:
            re.compile(kernel)
        except re.error as exc:
            raise UsageError(f"kernel pattern {kernel!r} is not a regular expression: {exc}") from None
    options = TuneOptions(
        waves=tuple(waves) if waves is not None else None,
        agpr_alloc=tuple(agpr_alloc) if agpr_alloc is not None else None,
        kernel=kernel,
        compiler=compiler,
        target=target,
        timeout=timeout,
    )
    return {"results": list(tune_regs_iter(paths, options))}
