"""One AMDGPU ELF → :class:`CodeObject` with every kernel decoded and cross-checked.

The reader decodes (ELF header, notes, symbols, descriptors) and then resolves each kernel's
resources from all the views it has, recording a finding wherever the views disagree.
"""

from __future__ import annotations

import struct
from typing import Any

from ..caches import cached
from ..elf import (
    EM_AMDGPU,
    ET_DYN,
    ET_EXEC,
    ET_REL,
    SHN_ABS,
    SHT_DYNSYM,
    SHT_NOBITS,
    SHT_RELA,
    SHT_SYMTAB,
    ElfFile,
    Note,
    Symbol,
    SymbolRow,
)
from ..errors import AmdoccError, FormatError, Origin
from ..targets import NOT_KNOWN, Target, find_triple, get_target, strip_triple, subarch_admits, target_by_isa_version
from . import linking as L
from . import notes as N
from .descriptor import AMD_KERNEL_CODE, KERNEL_DESCRIPTOR, Descriptor, decode_amd_kernel_code, decode_descriptor
from .model import ERROR, INFO, WARNING, CodeObject, Finding, Kernel
from .note_merge import merge_notes
from .producer import MAX_COMMENT_BYTES, Producer, comment_strings, producers
from .resources import inputs_key, note_view, resolve
from .target_id import EF_V2_XNACK, TargetId, decode_e_flags

ELFOSABI_AMDGPU_HSA, ELFOSABI_AMDGPU_PAL, ELFOSABI_AMDGPU_MESA3D = 64, 65, 66
# EI_ABIVERSION under ELFOSABI_AMDGPU_HSA → code-object version
HSA_ABI_VERSIONS = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}
STT_AMDGPU_HSA_KERNEL = 10
ELF_TYPES = {ET_REL: "rel", ET_EXEC: "exec", ET_DYN: "dyn"}

# Resource symbols LLVM 20+ emits per function as "<fn>.<suffix>" (MCResourceInfo).
RESOURCE_SUFFIXES = (
    "num_vgpr",
    "num_agpr",
    "numbered_sgpr",
    "num_named_barrier",
    "private_seg_size",
    "uses_vcc",
    "uses_flat_scratch",
    "has_dyn_sized_stack",
    "has_recursion",
    "has_indirect_call",
)

Metadata = dict[str, Any]  # a decoded metadata map (the whole note, or one kernel's entry)


class NotAnHsaCodeObject(FormatError):
    """An AMDGPU ELF that is not an HSA code object (PAL or Mesa graphics); containers skip it."""


def parse_code_object(data: bytes, origin: Origin, entry_id: str | None = None) -> CodeObject:
    """Parse one AMDGPU code object held entirely in ``data``; ``entry_id``: the bundle entry id
    (or OffloadBinary label) it came under, checked against what its e_flags say."""
    elf = ElfFile(data, origin)
    h, ident = elf.header, elf.ident
    if h.e_machine != EM_AMDGPU:
        raise FormatError(f"ELF machine {h.e_machine} is not EM_AMDGPU (224)", origin, 0x12)
    if elf.elf_class != 2:
        raise FormatError("32-bit AMDGPU ELF (r600) is not supported", origin, 4)
    if ident.osabi in (ELFOSABI_AMDGPU_PAL, ELFOSABI_AMDGPU_MESA3D):
        kind = "PAL" if ident.osabi == ELFOSABI_AMDGPU_PAL else "Mesa3D"
        raise NotAnHsaCodeObject(f"AMDGPU {kind} graphics object, not an HSA code object", origin, 7)

    all_notes = elf.notes()
    findings: list[Finding] = []
    if ident.osabi == ELFOSABI_AMDGPU_HSA:
        if ident.abiversion not in HSA_ABI_VERSIONS:
            raise FormatError(
                f"unsupported HSA ABI version {ident.abiversion} (code-object versions 2-6 are known)", origin, 8
            )
        co_version = HSA_ABI_VERSIONS[ident.abiversion]
    elif any(n.owner == "AMD" and n.type == N.NT_AMD_HSA_ISA_VERSION for n in all_notes):
        co_version = 2  # early v2 objects left EI_OSABI at 0 and said who they were in notes
        findings.append(
            Finding(
                "elf-osabi",
                INFO,
                f"EI_OSABI is {ident.osabi}, not HSA (64); "
                "treated as code-object v2 because it carries an AMD ISA note",
            )
        )
    else:
        raise FormatError(f"EI_OSABI {ident.osabi} is not AMDGPU HSA (64)", origin, 7)

    entry_findings: dict[int, list[Finding]] = {}
    if co_version == 2:
        target_id, target, generic_version, metadata, md_version = _v2_identity(elf, all_notes, origin, findings)
        plain = False
    else:
        flags = decode_e_flags(h.e_flags, co_version)
        target_id, target, generic_version = flags.target_id, flags.target, flags.generic_version
        for problem in flags.problems:
            code = "unknown-processor" if flags.target is None and "MACH" in problem else "e-flags"
            findings.append(Finding(code, ERROR if code == "unknown-processor" else WARNING, problem))
        metadata, md_version, plain, entry_findings = _v3_metadata(all_notes, origin, findings)
        _check_declared_target(metadata, target_id, findings)

    if entry_id is not None:
        findings.extend(_entry_findings(entry_id, target_id))
    producer = _producer(elf, findings)
    co = CodeObject(
        origin=origin,
        size=len(data),
        target_id=target_id,
        target=target,
        code_object_version=co_version,
        elf_type=ELF_TYPES.get(h.e_type, f"type-{h.e_type}"),
        e_flags=h.e_flags,
        generic_version=generic_version,
        metadata=metadata,
        metadata_version=md_version,
        findings=findings,
        data=data,
        producer=producer,
        metadata_plain=plain,
    )
    symbols = _symbols(elf)
    co.linking = _linking_info(elf, origin)
    if h.e_type == ET_REL or co.linking is not None:
        co.launchable = False
        co.findings.append(Finding("local-counts", WARNING, _local_counts_message(h.e_type == ET_REL, co.linking)))
    if co_version == 2:
        co.kernels = _v2_kernels(elf, data, co, symbols)
    else:
        co.kernels = _v3_kernels(elf, data, co, symbols, entry_findings)
    return co


# -- object linking ------------------------------------------------------------------------


def _local_counts_message(relocatable: bool, info: L.LinkingInfo | None) -> str:
    what = "a relocatable object (ET_REL)" if relocatable else f"an object with {L.INFO_SECTION}"
    why = (
        f"; {L.INFO_SECTION} describes {len(info.functions)} function(s) for the linker, and the call-graph "
        "maximum is reported beside each kernel's local counts"
        if info is not None
        else ""
    )
    return (
        f"local counts, not launchable as built: {what}, whose registers, LDS and scratch may leave out "
        f"what its callees need until it is linked{why}; occupancy only as a what-if"
    )


def _linking_info(elf: ElfFile, origin: Origin) -> L.LinkingInfo | None:
    """The object's ``.amdgpu.info``, decoded with its relocations and LDS symbols, or None."""
    section = next((s for s in elf.sections if s.name == L.INFO_SECTION and s.type != SHT_NOBITS), None)
    if section is None:
        return None
    start, end = elf.section_range(section)
    strtab_section = next((s for s in elf.sections if s.name == L.STRTAB_SECTION), None)
    strtab = elf.section_bytes(strtab_section) if strtab_section is not None else None
    relocations: dict[int, str] = {}
    lds: dict[str, tuple[int, int]] = {}
    for rel in elf.sections:
        if rel.type != SHT_RELA or rel.info != section.index:
            continue
        if rel.link >= len(elf.sections):
            raise FormatError(f"{rel.name} links to missing symbol table {rel.link}", origin, rel.offset)
        table = elf.symbols(elf.sections[rel.link])
        body = elf.section_bytes(rel)
        if rel.entsize != RELA64.size or len(body) % RELA64.size:
            raise FormatError(f"{rel.name}: entries of {rel.entsize} bytes, not {RELA64.size}", origin, rel.offset)
        for i, (r_offset, r_info, _addend) in enumerate(RELA64.iter_unpack(body)):
            index = r_info >> 32
            if index >= len(table):
                raise FormatError(
                    f"{rel.name}: relocation {i} names symbol {index} of {len(table)}", origin, rel.offset + i * 24
                )
            relocations[r_offset] = table[index].name
    symtab = next((s for s in elf.sections if s.type == SHT_SYMTAB), None)
    if symtab is not None:
        for sym in elf.symbols(symtab, lambda info, shndx: shndx == L.SHN_AMDGPU_LDS):
            lds[sym.name] = (sym.size, sym.value)  # an LDS symbol's value is its alignment
    return L.decode(elf.data, start, end - start, relocations, strtab, lds, origin)


RELA64 = struct.Struct("<QQq")  # r_offset, r_info (symbol << 32 | type), r_addend


# -- identity and metadata -----------------------------------------------------------------


def _v3_metadata(
    all_notes: list[Note], origin: Origin, findings: list[Finding]
) -> tuple[Metadata | None, tuple[int, ...] | None, bool, dict[int, list[Finding]]]:
    """The metadata map (every note's kernels merged, note_merge.py), its version, whether it
    certainly holds no float, and findings per entry of the merged kernel list."""
    notes = [n for n in all_notes if n.owner == "AMDGPU" and n.type == N.NT_AMDGPU_METADATA]
    if not notes:
        findings.append(
            Finding("no-metadata", WARNING, "no NT_AMDGPU_METADATA note: kernels are known only from their descriptors")
        )
        return None, None, True, {}
    decoded = []
    for number, note in enumerate(notes, start=1):
        metadata, problems = N.decode_msgpack_metadata(note, origin)
        where = f"metadata note {number}: " if len(notes) > 1 else ""
        for p in problems:
            findings.append(Finding("metadata-trailing-bytes", WARNING, where + p))
        decoded.append((note.desc_offset, metadata))
    kernel_findings: dict[int, list[Finding]] = {}
    if len(decoded) > 1:
        merged = merge_notes(decoded)
        metadata, kernel_findings = merged.metadata, merged.kernel_findings
        findings.extend(merged.findings)
    version = metadata.get("amdhsa.version")
    md_version = tuple(version) if isinstance(version, list) and all(isinstance(v, int) for v in version) else None
    return metadata, md_version, all(N.without_floats(n) for n in notes), kernel_findings


def _check_declared_target(metadata: Metadata | None, target_id: TargetId, findings: list[Finding]) -> None:
    declared = metadata.get("amdhsa.target") if metadata else None
    if isinstance(declared, str) and declared:
        findings.extend(_declared_target_findings(declared, target_id))


@cached(maxsize=512)  # a library names a few targets thousands of times
def _declared_target_findings(declared: str, target_id: TargetId) -> tuple[Finding, ...]:
    found = []
    if str(TargetId.parse(declared)) != str(target_id):  # "any" is absent from both strings
        found.append(
            Finding("target-mismatch", WARNING, f"metadata amdhsa.target says {declared!r} but e_flags say {target_id}")
        )
    triple = find_triple(declared)
    # LLVM main's amdgpu<subarch> triple names the processor a second time ('amdgpu9.42-...-gfx942').
    if triple and triple.subarch_processor and not subarch_admits(triple.subarch_processor, target_id.processor):
        found.append(
            Finding(
                "target-mismatch",
                WARNING,
                f"metadata amdhsa.target's triple "
                f"{triple.arch!r} names {triple.subarch_processor}, but e_flags say "
                f"{target_id.processor}",
            )
        )
    return tuple(found)


@cached(maxsize=512)
def _entry_findings(entry_id: str, target_id: TargetId) -> tuple[Finding, ...]:
    """A bundle entry id that names a processor amdocc does not know, or another processor than
    the code object's e_flags (the loader goes by the id; amdocc reads the object by its own)."""
    if find_triple(entry_id) is None:
        return ()  # a kpack or OffloadBinary label, not a target id
    named = TargetId.parse(entry_id)
    if not named.processor:
        return ()
    try:
        known = get_target(strip_triple(entry_id))
    except AmdoccError:
        return (
            Finding(
                "unknown-processor",
                ERROR,
                f"bundle entry {entry_id!r} names {named.processor}, {NOT_KNOWN}; the code object is read by "
                f"its own e_flags ({target_id})",
            ),
        )
    if known.name != target_id.processor:
        return (
            Finding(
                "entry-target-mismatch",
                WARNING,
                f"bundle entry {entry_id!r} names {known.name}, but the code object's e_flags say {target_id}",
            ),
        )
    return ()


def _producer(elf: ElfFile, findings: list[Finding]) -> Producer | None:
    """The compiler named in ``.comment`` (producer.py), or None; a damaged section is a finding."""
    # A loop, not next() of a generator: closing a generator left unfinished raises a
    # GeneratorExit in it, and this runs once a file.
    for section in elf.sections:
        if section.name == ".comment":
            break
    else:
        return None
    try:
        start, end = elf.section_range(section)
    except FormatError as exc:
        findings.append(Finding("comment-section", WARNING, f".comment cannot be read: {exc.message}"))
        return None
    comment = bytes(elf.data[start : min(end, start + MAX_COMMENT_BYTES)])
    chosen, notes = (_producers_of if len(comment) <= MAX_CACHED_COMMENT else _producers_of.__wrapped__)(comment)
    for note in notes:
        findings.append(Finding("producer", INFO, note))
    return chosen


MAX_CACHED_COMMENT = 4096


@cached(maxsize=256)  # the same few compiler lines in every object of a library
def _producers_of(comment: bytes) -> tuple[Producer | None, tuple[str, ...]]:
    chosen, notes = producers(comment_strings(comment))
    return chosen, tuple(notes)


def _v2_identity(
    elf: ElfFile, all_notes: list[Note], origin: Origin, findings: list[Finding]
) -> tuple[TargetId, Target | None, int, Metadata | None, tuple[int, ...] | None]:
    isa_notes = [n for n in all_notes if n.owner == "AMD" and n.type == N.NT_AMD_HSA_ISA_VERSION]
    if not isa_notes:
        raise FormatError(
            "code-object v2 without an NT_AMD_HSA_ISA_VERSION note: its processor cannot be known",
            origin,
            min((n.desc_offset for n in all_notes), default=0),
        )
    version, vendor, arch = N.decode_v2_isa(isa_notes[0], origin)
    target = target_by_isa_version(version)
    if target is None:
        processor = f"unknown-isa-{version[0]}.{version[1]}.{version[2]}"
        findings.append(Finding("unknown-processor", ERROR, f"ISA version {version} ({vendor}:{arch}) is {NOT_KNOWN}"))
    else:
        processor = target.name
    xnack = ("on" if elf.header.e_flags & EF_V2_XNACK else "off") if target and target.xnack else None
    metadata = None
    md_notes = [n for n in all_notes if n.owner == "AMD" and n.type == N.NT_AMD_HSA_METADATA]
    if md_notes:
        metadata = N.decode_v2_metadata(md_notes[0], origin)
    else:
        findings.append(Finding("no-metadata", WARNING, "no NT_AMD_HSA_METADATA note"))
    md_version = None
    if metadata and isinstance(metadata.get("Version"), list):
        md_version = tuple(v for v in metadata["Version"] if isinstance(v, int))
    return TargetId(processor, None, xnack), target, 0, metadata, md_version


# -- symbols -------------------------------------------------------------------------------


class _Symbols:
    """A code object's symbols: ``all`` in table order, the first of each name by ``lookup``,
    and LLVM's resource symbols by function. A resource symbol (absolute, "<fn>.<suffix>") is
    kept only as its row: it is never a kernel or a descriptor, and there are a dozen per kernel."""

    __slots__ = ("_resource_rows", "all", "by_name", "resources")

    def __init__(self, rows: list[SymbolRow]) -> None:
        self.all: list[Symbol] = []
        self.by_name: dict[str, Symbol] = {}
        self.resources: dict[str, dict[str, int]] = {}
        self._resource_rows: dict[str, SymbolRow] = {}
        for row in rows:
            name, value, shndx = row[0], row[1], row[5]
            if name and shndx == SHN_ABS:
                fn, dot, suffix = name.rpartition(".")
                if dot and suffix in RESOURCE_SUFFIXES:
                    self.resources.setdefault(fn, {})[suffix] = value
                    if row[3] & 0xF != STT_AMDGPU_HSA_KERNEL:
                        self._resource_rows.setdefault(name, row)
                        continue
            s = Symbol(*row)
            self.all.append(s)
            if name:
                self.by_name.setdefault(name, s)

    def lookup(self, name: str) -> Symbol | None:
        """The first symbol of this name in the table."""
        s = self.by_name.get(name)
        row = self._resource_rows.get(name)
        if row is None:
            return s
        if s is None or (s.entry_offset is not None and row[6] < s.entry_offset):
            return Symbol(*row)
        return s


STT_OBJECT, STT_FUNC = 1, 2


# The symbols a reader asks about: descriptors (objects), kernels (functions, v2 HSA kernels), and
# resource counts (absolute, whatever their type).
INTERESTING_TYPES = frozenset({STT_OBJECT, STT_FUNC, STT_AMDGPU_HSA_KERNEL})


def _symbols(elf: ElfFile) -> _Symbols:
    # .symtab is a superset of .dynsym when both exist; stripped images only have .dynsym. (A
    # loop, as in _producer: an unfinished generator's close raises a GeneratorExit.)
    table = dynsym = None
    for s in elf.sections:
        if s.type == SHT_SYMTAB:
            table = s
            break
        if s.type == SHT_DYNSYM and dynsym is None:
            dynsym = s
    table = table or dynsym
    return _Symbols(elf.symbol_rows(table, types=INTERESTING_TYPES, shndx=SHN_ABS) if table else [])


# -- kernels -------------------------------------------------------------------------------


def _v3_kernels(
    elf: ElfFile, data: bytes, co: CodeObject, symbols: _Symbols, entry_findings: dict[int, list[Finding]]
) -> list[Kernel]:
    """The kernels of the metadata's list (``entry_findings``: what merging the notes found about
    each entry, by index), then those only a descriptor names."""
    kernels: list[Kernel] = []
    entries = co.metadata.get("amdhsa.kernels") if co.metadata else None
    if co.metadata is not None and not isinstance(entries, list):
        co.findings.append(Finding("metadata-type", ERROR, "amdhsa.kernels is missing or not a list"))
        entries = []
    seen: set[str] = set()
    for index, md in enumerate(entries or []):
        findings: list[Finding] = list(entry_findings.get(index, ()))
        if not isinstance(md, dict):
            co.findings.append(Finding("metadata-type", ERROR, f"amdhsa.kernels[{index}] is not a map"))
            continue
        symbol = md.get(".symbol")
        name = md.get(".name")
        if not isinstance(symbol, str):
            findings.append(Finding("metadata-missing-key", ERROR, "kernel entry has no .symbol string"))
            symbol = f"{name}.kd" if isinstance(name, str) else f"<kernel {index}>"
        if not isinstance(name, str):
            findings.append(Finding("metadata-missing-key", WARNING, "kernel entry has no .name string"))
            name = symbol[:-3] if symbol.endswith(".kd") else symbol
        seen.add(symbol)
        descriptor = _descriptor_for(elf, data, co, symbols, symbol, findings)
        kernels.append(_kernel(co, name, symbol, md, descriptor, symbols, findings, data))
    # Descriptors the metadata does not describe still name kernels the loader can find.
    for s in symbols.all:
        if s.name not in seen and s.name.endswith(".kd") and s.size == KERNEL_DESCRIPTOR.size:
            seen.add(s.name)
            findings = [
                Finding(
                    "metadata-missing",
                    WARNING,
                    "kernel descriptor without a metadata entry: resources come from the descriptor alone",
                )
            ]
            descriptor = _descriptor_for(elf, data, co, symbols, s.name, findings)
            kernels.append(_kernel(co, s.name[:-3], s.name, {}, descriptor, symbols, findings, data))
    return kernels


def _descriptor_for(
    elf: ElfFile, data: bytes, co: CodeObject, symbols: _Symbols, symbol: str, findings: list[Finding]
) -> Descriptor | None:
    sym = symbols.lookup(symbol)
    if sym is None:
        findings.append(Finding("descriptor-missing", ERROR, f"descriptor symbol {symbol} is not in the symbol table"))
        return None
    if sym.size not in (0, KERNEL_DESCRIPTOR.size):
        findings.append(
            Finding(
                "descriptor-size",
                WARNING,
                f"descriptor symbol {symbol} has size {sym.size}, not {KERNEL_DESCRIPTOR.size}",
            )
        )
    offset = elf.symbol_file_offset(sym, KERNEL_DESCRIPTOR.size)
    return decode_descriptor(data, offset, co.target, co.origin)


def _v2_kernels(elf: ElfFile, data: bytes, co: CodeObject, symbols: _Symbols) -> list[Kernel]:
    listed: dict[str, Metadata] = {}
    if co.metadata and isinstance(co.metadata.get("Kernels"), list):
        for md in co.metadata["Kernels"]:
            if isinstance(md, dict) and isinstance(md.get("SymbolName"), str):
                # v2 named the descriptor "<kernel>@kd"; the ELF symbol is the kernel itself.
                name = md["SymbolName"]
                listed[name[:-3] if name.endswith("@kd") else name] = md
    kernels: list[Kernel] = []
    for s in symbols.all:
        if s.type != STT_AMDGPU_HSA_KERNEL:
            continue
        findings: list[Finding] = []
        md = listed.pop(s.name, None)
        if md is None:
            findings.append(Finding("metadata-missing", WARNING, "v2 kernel symbol without a metadata entry"))
        offset = elf.symbol_file_offset(s, AMD_KERNEL_CODE.size)
        descriptor = decode_amd_kernel_code(data, offset, co.target, co.origin)
        named = md.get("Name") if md else None
        name = named if isinstance(named, str) else s.name
        kernels.append(_kernel(co, name, s.name, md or {}, descriptor, symbols, findings, data))
    for symbol in listed:
        co.findings.append(Finding("descriptor-missing", ERROR, f"v2 metadata kernel {symbol} has no kernel symbol"))
    return kernels


def _kernel(
    co: CodeObject,
    name: str,
    symbol: str,
    md: Metadata,
    descriptor: Descriptor | None,
    symbols: _Symbols,
    findings: list[Finding],
    data: bytes = b"",
) -> Kernel:
    if descriptor is not None:
        for problem in descriptor.problems:
            findings.append(Finding("descriptor-bits", WARNING, problem))
        if descriptor.fields.get("enable_dynamic_vgpr"):
            findings.append(
                Finding(
                    "dynamic-vgpr",
                    WARNING,
                    "the descriptor enables dynamic VGPRs "
                    "(ENABLE_DYNAMIC_VGPR): VGPRs are allocated in blocks while the kernel "
                    "runs, so its VGPR count bounds no occupancy; the static models refuse it",
                )
            )
    fn = symbol[:-3] if symbol.endswith(".kd") else symbol
    resource_symbols = symbols.resources.get(fn, {})
    note = note_view(md, co.code_object_version)
    key = inputs_key(co.target, co.code_object_version, note, descriptor, resource_symbols)
    resources = resolve(co.target, co.code_object_version, md, descriptor, resource_symbols, findings, note, key=key)
    kernel = Kernel(
        name=name,
        symbol=symbol,
        metadata=md,
        descriptor=descriptor,
        resource_symbols=resource_symbols,
        resources=resources,
        findings=findings,
        target_id=co.target_id,
        target=co.target,
        code_object_version=co.code_object_version,
        image=data,
        producer=co.producer,
        note=note,
        launchable=co.launchable,
    )
    kernel.inputs = key
    if co.linking is not None:
        fn_info = co.linking.functions.get(fn)
        total = co.linking.transitive(fn)
        kernel.object_linking = {"local": fn_info.as_dict() if fn_info else None, "transitive": total}
        findings.append(Finding("call-graph-maximum", INFO, _call_graph_message(total)))
    return kernel


def _call_graph_message(total: dict[str, Any]) -> str:
    """The transitive maximum in words (codeobject/linking.py)."""
    if "functions" not in total:
        return f"no call-graph maximum: {total['reason']}"
    bound = "at least " if not total["complete"] else ""
    reached = total["functions"]
    text = (
        f"with the {len(reached)} function(s) it reaches, the kernel needs {bound}{total['num_vgpr']} VGPRs"
        + (f" + {total['num_agpr']} AGPRs" if total["num_agpr"] else "")
        + f", {total['num_sgpr']} numbered SGPRs, {total['lds_bytes']} B of LDS and "
        f"{total['private_segment_size']} B of scratch per work-item (from {L.INFO_SECTION}, combined as a "
        "linker would)"
    )
    return text + (f"; a lower bound: {total['reason']}" if total["reason"] else "")
