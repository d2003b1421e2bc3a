"""Where one kernel's machine code is, and how to decode it.

The extent comes from the kernel's function symbol (``<name>`` beside the descriptor
``<name>.kd``): its value and size. Hand-written assembly often leaves the size 0 (no ``.size``
directive): the extent then runs to the next function symbol of the section or to the section's
end, and that is stated. Without a function symbol the descriptor's ``kernel_code_entry_byte_offset``
gives the start. The processor and xnack/sramecc come from the code object's target id; the wave
size from the descriptor (``ENABLE_WAVEFRONT_SIZE32``), so wave64 code on gfx10+ decodes as wave64.

Everything read from the file is checked: a symbol outside its section, a section past the end
of the file, are :class:`~amdocc.errors.FormatError` naming the file and the offset.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

from ..codeobject.model import Kernel
from ..elf import ET_REL, SHN_LORESERVE, SHT_DYNSYM, SHT_NOBITS, SHT_SYMTAB, ElfFile, Section
from ..errors import AmdoccError, FormatError, Origin, UnknownTargetError

SHF_EXECINSTR = 0x4
STT_OBJECT, STT_FUNC = 1, 2
STT_AMDGPU_HSA_KERNEL = 10  # code-object v2: the symbol is the amd_kernel_code_t, the code follows


@dataclass(frozen=True, slots=True)
class KernelCode:
    """One kernel's code bytes and what the disassembler needs to read them.

    Attributes:
        address: the virtual address of its first byte, as ``llvm-objdump`` prints it.
        code: its bytes.
        processor: the processor to decode for (the code object's, or the one asked for).
        features: LLVM feature string (``+wavefrontsize64``, ``+xnack``, ...), "" for none.
        wavefront_size: from the descriptor (or the processor's only wave size).
        file_offset: where ``code`` starts in the code object.
        inferred: None when the symbol gave the size; otherwise how the extent was found.
        notes: what a reader should know about the extent (an overlap with another kernel).
    """

    address: int
    code: bytes
    processor: str
    features: str
    wavefront_size: int
    file_offset: int
    inferred: str | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Function:
    name: str
    start: int  # virtual address (section-relative in a relocatable object, as objdump prints it)
    size: int
    section: int
    entry_offset: int | None


class CodeMap:
    """The executable sections of one code object and the function symbols in them."""

    def __init__(self, image: bytes, origin: Origin) -> None:
        self.elf = ElfFile(image, origin)
        self.origin = origin
        self.relocatable = self.elf.header.e_type == ET_REL
        table = next((s for s in self.elf.sections if s.type == SHT_SYMTAB), None) or next(
            (s for s in self.elf.sections if s.type == SHT_DYNSYM), None
        )
        functions: list[_Function] = []
        self.objects: dict[str, int] = {}  # descriptors: name -> address
        wanted = (STT_FUNC, STT_AMDGPU_HSA_KERNEL, STT_OBJECT)
        if table is not None:
            for sym in self.elf.symbols(table, lambda info, shndx: (info & 0xF) in wanted):
                if sym.shndx == 0 or sym.shndx >= SHN_LORESERVE or sym.shndx >= len(self.elf.sections):
                    continue
                if sym.type == STT_OBJECT:
                    self.objects.setdefault(sym.name, sym.value)
                else:
                    functions.append(_Function(sym.name, sym.value, sym.size, sym.shndx, sym.entry_offset))
        self.by_name: dict[str, _Function] = {}
        for f in functions:
            self.by_name.setdefault(f.name, f)
        # Per section, function starts in address order, for "up to the next function symbol".
        self.starts: dict[int, list[int]] = {}
        for f in functions:
            self.starts.setdefault(f.section, []).append(f.start)
        for starts in self.starts.values():
            starts.sort()
        self.functions = functions

    def section_at(self, address: int) -> Section | None:
        """The executable section holding ``address`` (linked images: by virtual address)."""
        for s in self.elf.sections:
            if s.flags & SHF_EXECINSTR and s.type != SHT_NOBITS and s.addr <= address < s.addr + s.size:
                return s
        return None

    def extent(
        self, name: str, entry: int | None, at: int | None = None
    ) -> tuple[int, int, Section, str | None, int | None]:
        """(start, size, section, how it was inferred or None, symbol table offset) of function
        ``name``; ``entry`` is the descriptor's code address when no symbol names the code, ``at``
        where the descriptor is (for errors)."""
        f = self.by_name.get(name)
        if f is not None:
            section = self.elf.sections[f.section]
            start, size, inferred = f.start, f.size, None
            if size == 0:
                size, inferred = self._to_next(f.section, section, start), "the symbol's size is 0"
            return start, size, section, inferred, f.entry_offset
        if entry is None:
            raise FormatError(
                f"no function symbol {name} and no code address in its descriptor: its code cannot be found",
                self.origin,
                at if at is not None else 0,
            )
        found = self.section_at(entry)
        if found is None:
            raise FormatError(
                f"the descriptor of {name} puts its code at {entry:#x}, outside every executable section",
                self.origin,
                at if at is not None else 0,
            )
        return entry, self._to_next(found.index, found, entry), found, "no function symbol names it", None

    def _to_next(self, index: int, section: Section, start: int) -> int:
        """Bytes from ``start`` to the next function symbol of the section, or to its end."""
        base = 0 if self.relocatable else section.addr
        starts = self.starts.get(index, [])
        later = bisect.bisect_right(starts, start)
        end = starts[later] if later < len(starts) else base + section.size
        return max(0, end - start)

    def read(self, name: str, start: int, size: int, section: Section, at: int | None) -> tuple[int, bytes]:
        """(file offset, bytes) of ``size`` bytes at ``start`` in ``section``, checked."""
        if section.type == SHT_NOBITS:
            raise FormatError(f"function {name} lies in {section.name}, which has no bytes", self.origin, at)
        delta = start - (0 if self.relocatable else section.addr)
        if delta < 0 or delta + size > section.size:
            raise FormatError(
                f"function {name} ({size} bytes at {start:#x}) lies outside its section {section.name} "
                f"({section.size} bytes at {section.addr:#x})",
                self.origin,
                at if at is not None else section.offset,
            )
        begin, _ = self.elf.section_range(section)  # checks the section lies inside the file
        offset = begin + delta
        return offset, bytes(self.elf.data[offset : offset + size])

    def overlaps(self, name: str, start: int, size: int, section: int) -> list[str]:
        """Other function symbols whose own extents overlap ``[start, start + size)``."""
        out = []
        for f in self.functions:
            if f.name == name or f.section != section or f.size == 0:
                continue
            if f.start < start + size and start < f.start + f.size:
                theirs = f"[{f.start:#x}, {f.start + f.size:#x})"
                out.append(f"its code [{start:#x}, {start + size:#x}) overlaps {f.name} {theirs}")
        return out


_last: tuple[bytes, Origin, CodeMap] | None = None
_last_lock = threading.Lock()


def code_map(image: bytes, origin: Origin) -> CodeMap:
    """The CodeMap of one image; the last one is kept, as kernels of one object come together."""
    global _last
    with _last_lock:
        if _last is not None and _last[0] is image and _last[1] == origin:
            return _last[2]
    made = CodeMap(image, origin)
    with _last_lock:
        _last = (image, origin, made)
    return made


def features_for(kernel: Kernel, wavefront_size: int, processor_default_wave: int | None) -> str:
    """LLVM's feature string for decoding: the wave size when it is not the disassembler's
    default for the processor, and the target id's xnack/sramecc states."""
    parts = []
    if processor_default_wave is not None and wavefront_size != processor_default_wave:
        parts.append(f"+wavefrontsize{wavefront_size}")
    tid = kernel.target_id
    for feature, state in (("xnack", tid.xnack), ("sramecc", tid.sramecc)):
        if state in ("on", "off"):
            parts.append(f"{'+' if state == 'on' else '-'}{feature}")
    return ",".join(parts)


def kernel_code(kernel: Kernel, origin: Origin | None = None, processor: str | None = None) -> KernelCode:
    """The code bytes of ``kernel`` and how to decode them.

    Args:
        kernel: a kernel read by :func:`amdocc.load` (its ``image`` holds the code object).
        origin: where the code object came from, for errors (default: a label naming the kernel).
        processor: decode for this processor instead of the code object's (a what-if).
    """
    where = origin or Origin(f"<code object of {kernel.name}>")
    kd_at = kernel.descriptor.offset if kernel.descriptor else None  # where errors point
    if not kernel.image:
        raise FormatError(f"kernel {kernel.name} carries no code-object bytes to disassemble", where, 0)
    if processor is None and kernel.target is None:
        raise UnknownTargetError(
            f"kernel {kernel.name}: processor {kernel.target_id.processor} is not in amdocc's tables, so the "
            "disassembler is not asked to guess how to decode it",
            where,
            kd_at or 0,
        )
    cmap = code_map(kernel.image, where)
    symbol = kernel.symbol
    v2 = kernel.code_object_version == 2  # the kernel symbol itself holds header and code
    name = symbol if v2 or not symbol.endswith(".kd") else symbol[:-3]
    entry = _descriptor_entry(kernel, cmap)
    start, size, section, inferred, at = cmap.extent(name, entry, kd_at)
    if v2:
        # The v2 symbol is the 256-byte amd_kernel_code_t; the instructions start after it.
        skip = kernel.descriptor.words.get("kernel_code_entry_byte_offset", 256) if kernel.descriptor else 256
        start, size = start + skip, max(0, size - skip)
    offset, code = cmap.read(name, start, size, section, at)
    notes = cmap.overlaps(name, start, size, section.index)
    if entry is not None and entry != start and not v2:
        notes.append(f"the descriptor's code entry {entry:#x} is not the symbol's address {start:#x}")
    if section.index and inferred:
        notes.append(f"extent inferred ({inferred}): up to the next function symbol or the end of {section.name}")
    target = kernel.target
    # The descriptor decides (ENABLE_WAVEFRONT_SIZE32); the metadata only where there is none.
    wave = (kernel.descriptor.wave_size if kernel.descriptor else None) or kernel.resources.wavefront_size
    if wave is None:
        wave = target.default_wave if target else 64
    if wave not in (32, 64):
        raise FormatError(f"kernel {kernel.name}: wave size {wave} is neither 32 nor 64", where, kd_at or 0)
    chosen = processor or kernel.target_id.processor
    default_wave = _disassembler_default_wave(chosen)
    return KernelCode(
        address=start,
        code=code,
        processor=chosen,
        features=features_for(kernel, wave, default_wave),
        wavefront_size=wave,
        file_offset=offset,
        inferred=inferred,
        notes=tuple(notes),
    )


def _disassembler_default_wave(processor: str) -> int | None:
    """The wave size LLVM's disassembler assumes for a processor: wave32 wherever the processor
    runs wave32 (gfx10 and later), else wave64; None for a processor the tables do not know."""
    from ..targets import get_target

    try:
        known = get_target(processor)
    except AmdoccError:  # an unknown processor: decode with LLVM's own default
        return None
    return 32 if 32 in known.wave_sizes else 64


def _descriptor_entry(kernel: Kernel, cmap: CodeMap) -> int | None:
    """The code address the descriptor names (its address + kernel_code_entry_byte_offset), or
    None when it cannot say (no descriptor, a relocatable object whose offset is relocated)."""
    if kernel.descriptor is None or cmap.relocatable or kernel.code_object_version == 2:
        return None
    relative = kernel.descriptor.words.get("kernel_code_entry_byte_offset")
    kd = cmap.objects.get(kernel.symbol)
    if not isinstance(relative, int) or kd is None or relative == 0:
        return None
    return kd + relative
