"""Machine code → :class:`~amdocc.isa.model.Instruction` records, decoded by LLVM (libllvm.py).

Every byte of the extent is accounted for: a word LLVM cannot decode is shown as
``llvm-objdump`` shows it (``.long 0x%08x``) and flagged (``decoded=False``), and decoding goes
on at the next word, never skipping silently.
"""

from __future__ import annotations

from typing import Any

from ..caches import cached, register
from ..codeobject.model import Kernel
from ..errors import AmdoccError, ExitCode, Origin, TableError, UsageError
from .extent import KernelCode, kernel_code
from .libllvm import WINDOW, Library, library
from .model import Instruction

WORD = 4


class ProcessorNotDecodable(AmdoccError):
    """The loaded libLLVM is older than the first LLVM release that knows the processor, or newer
    than the last (asked anyway, LLVM stops the whole process: "disassembly not yet supported for
    subtarget")."""

    exit_code = ExitCode.RUNTIME_UNAVAILABLE


def require_decodable(lib: Library, processor: str, origin: Origin | None = None, offset: int | None = None) -> None:
    """Refuse a processor the loaded libLLVM cannot know: tables/targets.toml's ``since_llvm``
    (the first LLVM release that defines it) and ``until_llvm`` (the last, for a processor LLVM
    removed) against the library's LLVMGetVersion."""
    from ..targets import get_target

    try:
        target = get_target(processor)
    except AmdoccError:
        return  # not in the tables: kernel_code refuses such a kernel unless it was asked for by name
    since, until = target.since_llvm, target.until_llvm
    first = _first_decodable_isa_major()
    if target.isa_version[0] < first:
        raise ProcessorNotDecodable(
            f"{processor} (ISA {target.isa_version[0]}) has an encoding LLVM's AMDGPU disassembler does not "
            f"decode (gfx{first} and later only): its machine code cannot be read",
            origin,
            offset,
        )
    major = _major(lib)
    if until is not None and major is not None and major > until:
        raise ProcessorNotDecodable(
            f"{processor} was last known to LLVM {until}, and {lib.path} is LLVM {lib.version}: it cannot "
            f"decode it; set AMDOCC_LIBLLVM to a libLLVM of LLVM {until} or older",
            origin,
            offset,
        )
    if since is not None and major is not None and major < since:
        raise ProcessorNotDecodable(
            f"{processor} is first known to LLVM {since}, and {lib.path} is LLVM {lib.version}: it cannot "
            f"decode it; set AMDOCC_LIBLLVM to a libLLVM of LLVM {since} or later (a newer ROCm's own)",
            origin,
            offset,
        )


def _first_decodable_isa_major() -> int:
    """tables/isa_decoding.toml: the oldest ISA major LLVM's disassembler decodes."""
    from ..tabledata import Row, load_table

    row = Row("isa_decoding.toml", "disassembler", load_table("isa_decoding.toml").get("disassembler"))
    first: int = row.whole("first_isa_major", 1)
    return first


def read_at_most(lib: Library, processor: str) -> int:
    """The bytes of a window LLVM's answer for ``processor`` depends on: tables/isa_decoding.toml's
    ``read_at_most`` where it holds for this library's LLVM release, else the whole window."""
    (first, last), per_processor = _read_at_most_table()
    major = _major(lib)
    if major is None or not first <= major <= last:
        return WINDOW
    return per_processor.get(processor, WINDOW)


@cached(maxsize=1)
def _read_at_most_table() -> tuple[tuple[int, int], dict[str, int]]:
    from ..tabledata import Row, load_table

    row = Row("isa_decoding.toml", "read_at_most", load_table("isa_decoding.toml").get("read_at_most"))
    majors = row.wholes("llvm_majors", 1)
    if len(majors) != 2 or majors[0] > majors[1]:
        raise row.error(f"{list(majors)} is not [first, last] LLVM majors", "llvm_majors")
    table = row.sub("bytes")
    return (majors[0], majors[1]), {name: table.whole(name, WORD, WINDOW) for name in table.columns()}


def _major(lib: Library) -> int | None:
    head = (lib.version or "").split(".")[0]
    return int(head) if head.isdigit() else None


def undecodable(address: int, chunk: bytes) -> Instruction:
    """A word (or the last 1-3 bytes) LLVM could not decode, spelled as llvm-objdump spells it."""
    if len(chunk) == WORD:
        text = f".long 0x{int.from_bytes(chunk, 'little'):08x}"
    else:
        text = ".byte " + ", ".join(f"0x{b:02x}" for b in chunk)
    return Instruction(address, len(chunk), text, "", "", False, chunk)


# Per (library, processor, features): the instruction decoded from each window of bytes (its first
# read_at_most bytes), as Instruction fields after the address. Kernels repeat their instructions
# (and a library's kernels one another's): of 300 amd-aiter gfx942 files' 1,287,883 instructions,
# 117,520 start with a 32-byte window not seen before, 39,368 with 8 bytes not seen before; a
# hit costs a dict look-up instead of a call into LLVM.
_DECODED: dict[tuple[str, str | None, str, str], dict[bytes, tuple[int, str, str, str, bool, bytes]]] = {}
_DECODED_BOUND = 1 << 16  # windows remembered (all processors together) before starting afresh
register("amdocc.isa.decode._DECODED", _DECODED.clear)
_new_instruction = tuple.__new__


def decode_bytes(
    code: bytes,
    address: int,
    processor: str,
    features: str = "",
    lib: Library | None = None,
    origin: Origin | None = None,
    offset: int | None = None,
) -> tuple[Instruction, ...]:
    """Decode ``code`` (starting at virtual ``address``) for ``processor`` with LLVM ``features``;
    ``origin`` and ``offset`` locate the code for an error (ProcessorNotDecodable).

    LLVM is offered :data:`~amdocc.isa.libllvm.WINDOW` bytes per instruction, and reads at most
    :func:`read_at_most` of them, so its answer depends on those bytes only (AMDGPU's text names
    no address: branch targets are printed as the encoded offset), and is remembered by them."""
    lib = lib or library()
    require_decodable(lib, processor, origin, offset)
    reads = read_at_most(lib, processor)
    key = (lib.path, lib.version, processor, features)
    if sum(map(len, _DECODED.values())) >= _DECODED_BOUND:
        _DECODED.clear()
    seen = _DECODED.setdefault(key, {})
    # A step is the size, also for an undecodable word: there it is WORD, or the 1-3 bytes
    # left at the end, after which the loop ends either way.
    out: list[Instruction] = []
    append = out.append
    get = seen.get
    new = _new_instruction
    llvm = None
    at = 0
    end = len(code)
    while at < end:
        fields = get(code[at : at + reads])
        if fields is None:
            window = code[at : at + WINDOW]
            llvm = llvm or lib.window_decoder(processor, features)
            fields = _fields(llvm(window, address + at), window, address + at)
            if fields[0] > reads:  # LLVM read more than the table says it can: the table is wrong
                raise TableError(
                    f"isa_decoding.toml [read_at_most] says LLVM reads at most {reads} bytes for {processor}, "
                    f"but {lib.path} (LLVM {lib.version}) decoded a {fields[0]}-byte instruction at {address + at:#x}"
                )
            if len(seen) >= _DECODED_BOUND:
                seen.clear()
            seen[window[:reads]] = fields
        append(new(Instruction, (address + at,) + fields))  # noqa: RUF005 - no list made on the way
        at += fields[0]
    return tuple(out)


def _fields(decoded: tuple[int, str], window: bytes, address: int) -> tuple[int, str, str, str, bool, bytes]:
    """Instruction's fields after its address, from LLVM's ``(size, text)`` for the start of ``window``."""
    size, raw = decoded
    if size == 0:
        bad = undecodable(address, window[:WORD])
        return bad.size, bad.text, bad.mnemonic, bad.operands, False, bad.encoding
    text = raw.strip()
    mnemonic, _, operands = text.partition(" ")
    return size, text, mnemonic, operands.strip(), True, window[:size]


def disassemble(
    kernel_or_code: Kernel | KernelCode | bytes,
    *,
    processor: str | None = None,
    features: str = "",
    address: int = 0,
    origin: Origin | None = None,
) -> tuple[Instruction, ...]:
    """One kernel's instructions, as LLVM's disassembler decodes them.

    Args:
        kernel_or_code: a :class:`~amdocc.codeobject.Kernel` (its extent, processor, features and
            wave size are read from its code object), a :class:`KernelCode`, or raw bytes.
        processor: for a kernel, decode for this processor instead of its own (a what-if); for
            raw bytes, required.
        features: LLVM features for raw bytes (``+wavefrontsize64``); ignored for a kernel.
        address: the virtual address of the first raw byte.
        origin: where the kernel's code object came from, for errors.
    """
    if isinstance(kernel_or_code, Kernel):
        code = kernel_code(kernel_or_code, origin, processor)
        where = origin or Origin(f"<code object of {kernel_or_code.name}>")
        return decode_bytes(code.code, code.address, code.processor, code.features, None, where, code.file_offset)
    if isinstance(kernel_or_code, KernelCode):
        c = kernel_or_code
        return decode_bytes(c.code, c.address, processor or c.processor, c.features)
    if isinstance(kernel_or_code, (bytes, bytearray, memoryview)):
        if not processor:
            raise UsageError("disassembling raw bytes needs processor= (e.g. 'gfx942')")
        return decode_bytes(bytes(kernel_or_code), address, processor, features)
    raise UsageError(f"disassemble takes a Kernel, a KernelCode or bytes, not {type(kernel_or_code).__name__}")


def describe_disassembler() -> dict[str, Any]:
    """The library and version that decode (reported with every answer)."""
    return dict(library().description)
