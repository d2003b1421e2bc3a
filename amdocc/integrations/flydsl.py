"""Occupancy of kernels compiled by FlyDSL, read from FlyDSL's final MLIR module.

FlyDSL (``flyc.compile``) lowers a ``@flyc.jit`` launcher to an MLIR module in which every GPU
module has become a ``gpu.binary`` op holding the code object as a string literal, and every
launch is a ``gpu.launch_func`` op whose grid, block and dynamic shared-memory sizes are SSA
values. FlyDSL's own ``CompiledFunction.max_blocks_per_cu()`` walks that module and asks HIP,
so it needs a GPU and cannot run inside graph capture. This module reads the same text with no
MLIR, FlyDSL or torch import and answers with :func:`amdocc.max_blocks_per_cu` (HIP when a ROCm
runtime is usable, amdocc's static model otherwise)::

    import amdocc.integrations.flydsl as af
    compiled = flyc.compile(launcher, a, b, c, 4)       # CPU tensors: compiles offline
    af.launches(compiled)          # [Launch(kernel='vadd_0', block_size=256, dynamic_lds=0, ...)]
    af.kernel_of(compiled).resources.vgprs
    af.max_blocks_per_cu(compiled)                       # BlocksPerCU(.., source='model')

Every function takes either the MLIR text (``str``) or a compiled FlyDSL object: a
``CompiledArtifact`` (its ``.ir``), a ``CompiledFunction`` (its artifact), or anything with a
string ``.ir``. As FlyDSL does, the binary of a launch is object #0 of its ``gpu.binary``.

Nothing is guessed: the block size and dynamic shared memory of a launch must be SSA values
defined by ``llvm.mlir.constant`` or ``arith.constant`` in the launching function; a launch whose
block or shared-memory operand is a function argument or computed at run time raises
:class:`amdocc.UsageError` naming that operand. An absent ``dynamic_shared_memory_size`` is 0
bytes, as in MLIR and FlyDSL. The module must be printed in MLIR's custom (pretty) form, which is
what ``str(module)`` and ``CompiledArtifact.ir`` give.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from ..caches import cached
from ..errors import UsageError

if TYPE_CHECKING:
    from ..codeobject.model import Kernel
    from ..runtime import BlocksPerCU

__all__ = ["Launch", "binaries", "ir_text_of", "kernel_of", "launches", "max_blocks_per_cu"]


class Launch(NamedTuple):
    """One ``gpu.launch_func`` of the module, with every size it needs resolved to an integer."""

    kernel: str  # the kernel's symbol in the code object
    module: str  # the gpu.binary it is launched from
    block: tuple[int, int, int]  # threads per workgroup, x, y, z
    block_size: int  # x * y * z
    dynamic_lds: int  # dynamic_shared_memory_size in bytes (0 when absent)
    grid: tuple[int | None, int | None, int | None]  # workgroups per dimension; None where not constant
    binary: bytes  # object #0 of the gpu.binary (the code object HIP loads)
    target: str | None  # chip of that object's #rocdl.target, e.g. "gfx942"

    def __repr__(self) -> str:  # the binary is too long to print
        return (
            f"Launch(kernel={self.kernel!r}, module={self.module!r}, block={self.block}, "
            f"block_size={self.block_size}, dynamic_lds={self.dynamic_lds}, grid={self.grid}, "
            f"binary=<{len(self.binary)} bytes>, target={self.target!r})"
        )


# --------------------------------------------------------------------------------------------
# Getting the text
# --------------------------------------------------------------------------------------------


def ir_text_of(obj: Any) -> str:
    """The final MLIR text of a FlyDSL compile result, or ``obj`` itself when it is the text.

    Accepts a ``str`` (or UTF-8 ``bytes``), a ``CompiledArtifact`` (``.ir``), a
    ``CompiledFunction`` (the artifact it keeps in ``._keepalive``) or an MLIR ``Module``.
    """
    if isinstance(obj, str):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        data = bytes(obj)
        if data[:4] == b"\x7fELF":
            raise UsageError("these bytes are an ELF file, not MLIR text: pass them to amdocc.load()")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"MLIR text bytes are not UTF-8: {exc}") from None
    kind = type(obj).__name__
    if kind == "JitFunction":
        raise UsageError("this is a @flyc.jit function, not a compiled one: pass flyc.compile(fn, *args)")
    for holder in (obj, getattr(obj, "_keepalive", None)):
        if holder is None:
            continue
        text = _attr(holder, "ir")
        if isinstance(text, str):
            return text
        text = _attr(holder, "_ir_text")
        if isinstance(text, str):
            return text
    if hasattr(obj, "operation") and hasattr(obj, "body"):  # an MLIR ir.Module
        return str(obj)
    raise UsageError(
        f"cannot get FlyDSL's final MLIR from a {kind}: pass the MLIR text, the "
        "CompiledFunction that flyc.compile() returns, or its CompiledArtifact"
    )


def _attr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name, None)
    except Exception:  # a property that fails (e.g. an artifact whose IR was dropped)
        return None


# --------------------------------------------------------------------------------------------
# MLIR string literals
# --------------------------------------------------------------------------------------------

_ESCAPE_SPLIT = re.compile(r"(\\(?:[0-9A-Fa-f]{2}|.|$))", re.S)
_HEX_DIGITS = "0123456789abcdefABCDEF"
_ESCAPES = {"\\" + a + b: bytes((int(a + b, 16),)) for a in _HEX_DIGITS for b in _HEX_DIGITS}
_ESCAPES.update({"\\\\": b"\\", '\\"': b'"', "\\'": b"'", "\\n": b"\n", "\\t": b"\t"})


def _decode_string(body: str) -> bytes:
    """The bytes of an MLIR string literal's body (without its quotes).

    MLIR's lexer reads ``\\\\``, ``\\"``, ``\\'``, ``\\n``, ``\\t`` and ``\\XX`` (two hex digits,
    one byte); every other character stands for its own UTF-8 bytes. The printer writes a
    backslash as ``\\\\`` and every non-printable byte and ``"`` as ``\\XX``.
    """
    if "\\" not in body:
        return body.encode("utf-8")
    parts = _ESCAPE_SPLIT.split(body)  # literal, escape, literal, escape, ..., literal
    try:
        escapes = [_ESCAPES[e] for e in parts[1::2]]
    except KeyError as exc:  # the first escape MLIR does not define
        raise UsageError(f"invalid escape {exc.args[0]!r} in an MLIR string literal") from None
    out = [b""] * len(parts)
    out[0::2] = [p.encode("utf-8") for p in parts[0::2]]
    out[1::2] = escapes
    return b"".join(out)


def _string_end(text: str, i: int) -> int:
    """Index just past the string literal that starts with the quote at ``text[i]``."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
        elif c == '"':
            return j + 1
        elif c == "\n":
            break
        else:
            j += 1
    raise UsageError(f"unterminated MLIR string literal at offset {i}")


# --------------------------------------------------------------------------------------------
# A small cursor over one op's text
# --------------------------------------------------------------------------------------------

_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSERS = {")", "]", "}", ">"}
_BARE_ID = re.compile(r"[A-Za-z_$.0-9-]+")
_SSA = re.compile(r"%[A-Za-z_$.0-9-]+(?:#[0-9]+)?")


class _Cursor:
    def __init__(self, text: str, pos: int, what: str) -> None:
        self.text, self.pos, self.what = text, pos, what

    def fail(self, expected: str) -> NoReturn:
        snippet = self.text[self.pos : self.pos + 60]
        raise UsageError(f"cannot read {self.what}: expected {expected} at {snippet!r}")

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.ws()
        return self.text.startswith(token, self.pos)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def keyword(self, word: str) -> bool:
        """Consume ``word`` when it stands as a whole word here."""
        self.ws()
        end = self.pos + len(word)
        if self.text.startswith(word, self.pos) and (
            end >= len(self.text) or not (self.text[end].isalnum() or self.text[end] in "_$.")
        ):
            self.pos = end
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            self.fail(repr(token))

    def expect_keyword(self, word: str) -> None:
        if not self.keyword(word):
            self.fail(repr(word))

    def symbol(self) -> str:
        """``@name`` or ``@"quoted name"``: the name."""
        self.expect("@")
        if self.text.startswith('"', self.pos):
            end = _string_end(self.text, self.pos)
            raw = _decode_string(self.text[self.pos + 1 : end - 1])
            self.pos = end
            return raw.decode("utf-8", "surrogateescape")
        m = _BARE_ID.match(self.text, self.pos)
        if not m:
            self.fail("a symbol name")
        self.pos = m.end()
        return m.group()

    def ssa(self) -> str:
        self.ws()
        m = _SSA.match(self.text, self.pos)
        if not m:
            self.fail("an SSA value (%name)")
        self.pos = m.end()
        return m.group()

    def ssa_tuple(self) -> tuple[str, str, str]:
        self.expect("(")
        x = self.ssa()
        self.expect(",")
        y = self.ssa()
        self.expect(",")
        z = self.ssa()
        self.expect(")")
        return x, y, z

    def balanced(self) -> tuple[int, int]:
        """Skip one bracketed group starting here; its (start, end) span, brackets included."""
        self.ws()
        start = self.pos
        if self.pos >= len(self.text) or self.text[self.pos] not in _OPENERS:
            self.fail("an opening bracket")
        _, end = _items(self.text, self.pos + 1, self.text[self.pos], self.what)
        self.pos = end
        return start, end


def _items(text: str, pos: int, opener: str, what: str) -> tuple[list[tuple[int, int]], int]:
    """Split the bracketed group whose ``opener`` sits just before ``pos`` at its top-level commas.

    Returns the (start, end) spans of its items (whitespace-trimmed, empty ones dropped) and the
    index just past the closing bracket. String literals are skipped, and ``->`` is not a bracket.
    """
    stack = [_OPENERS[opener]]
    spans: list[tuple[int, int]] = []
    item_start = pos
    n = len(text)
    i = pos
    while i < n:
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        if c in _OPENERS:
            stack.append(_OPENERS[c])
        elif c in _CLOSERS:
            if c == ">" and i > 0 and text[i - 1] == "-":
                i += 1
                continue
            if c != stack[-1]:
                raise UsageError(f"cannot read {what}: unbalanced {c!r} at offset {i}")
            stack.pop()
            if not stack:
                spans.append((item_start, i))
                return [_trim(text, s, e) for s, e in spans if text[s:e].strip()], i + 1
        elif c == "," and len(stack) == 1:
            spans.append((item_start, i))
            item_start = i + 1
        i += 1
    raise UsageError(f"cannot read {what}: {opener!r} at offset {pos - 1} is never closed")


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --------------------------------------------------------------------------------------------
# Parsing the module
# --------------------------------------------------------------------------------------------


class _Object(NamedTuple):
    format: str  # "bin", "fatbin", "offload" or "assembly"
    data: bytes
    target: str | None


class _Operand(NamedTuple):
    name: str  # the SSA name as written
    value: int | None  # the constant, when it is one
    why: str  # when it is not: what defines it


class _RawLaunch(NamedTuple):
    module: str
    kernel: str
    grid: tuple[_Operand, _Operand, _Operand]
    block: tuple[_Operand, _Operand, _Operand]
    smem: _Operand | None
    function: str | None
    line: int


class _Parsed(NamedTuple):
    binaries: dict[str, tuple[_Object, ...]]
    launches: tuple[_RawLaunch, ...]


# A function op's first line: its SSA names are its own (visibility and linkage words may precede @).
_FUNC = re.compile(r"\s*(?:llvm\.func|func\.func|gpu\.func)\b(?:\s+\w+)*?\s*@(\"(?:[^\"\\]|\\.)*\"|[A-Za-z_$.0-9-]+)")
_DEF = re.compile(r"\s*(%[A-Za-z_$.0-9-]+)(:[0-9]+)?\s*=\s*(\"[^\"]*\"|[A-Za-z_][\w.$]*)")
_LLVM_CONST = re.compile(r"\s*llvm\.mlir\.constant\s*\(\s*(-?[0-9]+)\s*(?::\s*[\w.]+\s*)?\)")
_ARITH_CONST = re.compile(r"\s*arith\.constant\s+(-?[0-9]+)\s*:")
_GENERIC_CONST = re.compile(
    r'\s*"(?:llvm\.mlir\.constant|arith\.constant)"\s*\(\s*\)\s*<?\{\s*value\s*=\s*'
    r"(-?[0-9]+)\s*(?::\s*[\w.]+\s*)?\}"
)
_OP_AT = re.compile(r"\s*(?:%[^=]*=\s*)?(\"[\w.$]+\"|[A-Za-z_][\w.$]*)")


def _constant_of(rest: str) -> int | None:
    """The integer an ``llvm.mlir.constant``/``arith.constant`` defines (``rest`` follows ``=``)."""
    for pattern in (_LLVM_CONST, _ARITH_CONST, _GENERIC_CONST):
        m = pattern.match(rest)
        if m:
            return int(m.group(1))
    return None


def _parse_binary(line: str, pos: int, lineno: int) -> tuple[str, tuple[_Object, ...]]:
    cur = _Cursor(line, pos, f"gpu.binary at line {lineno}")
    name = cur.symbol()
    if cur.peek("<"):  # offloading handler, e.g. <#gpu.select_object<1>>
        cur.balanced()
    if cur.peek("{"):  # attribute dictionary
        cur.balanced()
    if not cur.take("["):
        cur.fail("'[' and the list of objects")
    spans, _ = _items(line, cur.pos, "[", cur.what)
    objects = tuple(
        _parse_object(line, s, e, f"object #{k} of gpu.binary @{name} (line {lineno})")
        for k, (s, e) in enumerate(spans)
    )
    if not objects:
        raise UsageError(f"gpu.binary @{name} at line {lineno} holds no object")
    return name, objects


def _parse_object(text: str, start: int, end: int, what: str) -> _Object:
    if not text.startswith("#gpu.object<", start):
        raise UsageError(f"cannot read {what}: it is not a #gpu.object<...> ({text[start : start + 40]!r})")
    spans, stop = _items(text, start + len("#gpu.object<"), "<", what)
    if stop != end:
        raise UsageError(f"cannot read {what}: text after its closing '>'")
    target = None
    for s, e in spans:
        field = text[s:e]
        if field.startswith("#rocdl.target"):
            m = re.search(r'\bchip\s*=\s*"([^"\\]*)"', field)
            target = m.group(1) if m else None
    s, e = spans[-1]  # the object itself is the last field
    field = text[s:e]
    m = re.match(r'(?:(bin|fatbin|offload|assembly)\s*=\s*)?"', field)
    if not m or _string_end(text, s + m.end() - 1) != e:
        raise UsageError(f"cannot read {what}: its last field is not the object's string literal")
    fmt = m.group(1) or "fatbin"  # MLIR omits the keyword for the default format, fatbin
    return _Object(fmt, _decode_string(text[s + m.end() : e - 1]), target)


def _parse_launch(line: str, pos: int, lineno: int, defs: dict[str, Any], function: str | None) -> _RawLaunch:
    cur = _Cursor(line, pos, f"gpu.launch_func at line {lineno}")
    cur.keyword("async")
    if cur.peek("["):  # async dependencies
        cur.balanced()
    if cur.peek("<"):  # the async object (stream), e.g. <%arg4 : !llvm.ptr>
        cur.balanced()
    module = cur.symbol()
    cur.expect("::")
    kernel = cur.symbol()
    if cur.keyword("clusters"):
        cur.expect_keyword("in")
        cur.ssa_tuple()
    cur.expect_keyword("blocks")
    cur.expect_keyword("in")
    grid = cur.ssa_tuple()
    cur.expect_keyword("threads")
    cur.expect_keyword("in")
    block = cur.ssa_tuple()
    # The dimension types (": i64"), then optionally the dynamic shared memory, then args(...).
    tail = line[cur.pos :]
    stop = min((i for i in (tail.find(" args("), tail.find("{")) if i >= 0), default=len(tail))
    head = tail[:stop]
    m = re.fullmatch(r"\s*(?::[^%\"]*?)?\s*(?:dynamic_shared_memory_size\s+(%[A-Za-z_$.0-9-]+(?:#[0-9]+)?))?\s*", head)
    if not m:
        raise UsageError(
            f"cannot read gpu.launch_func at line {lineno}: unexpected {head.strip()[:60]!r} after its thread counts"
        )
    smem = m.group(1)

    def operand(name: str) -> _Operand:
        return _resolve(name, defs, function)

    def operands(names: tuple[str, str, str]) -> tuple[_Operand, _Operand, _Operand]:
        x, y, z = names
        return operand(x), operand(y), operand(z)

    return _RawLaunch(
        module, kernel, operands(grid), operands(block), None if smem is None else operand(smem), function, lineno
    )


def _resolve(name: str, defs: dict[str, Any], function: str | None) -> _Operand:
    base, _, index = name.partition("#")
    where = f"@{function}" if function else "the launching function"
    entry = defs.get(base)
    if entry is None:
        if re.fullmatch(r"%arg[0-9]+", base):
            return _Operand(name, None, f"an argument of {where} (a run-time value)")
        return _Operand(name, None, f"not defined by any op of {where} (a block or function argument)")
    if entry == "ambiguous":
        return _Operand(name, None, f"defined more than once in {where}")
    op, results, value = entry
    if index not in ("", "0") or results != 1:
        return _Operand(name, None, f"a result of the multi-result op {op}")
    if value is None:
        return _Operand(name, None, f"defined by {op}, not by llvm.mlir.constant or arith.constant")
    return _Operand(name, value, "")


@cached(maxsize=16)
def _parse(text: str) -> _Parsed:
    binaries: dict[str, tuple[_Object, ...]] = {}
    pending: list[tuple[str, int, int]] = []  # launch lines of the current function
    launches: list[_RawLaunch] = []
    defs: dict[str, Any] = {}
    function: str | None = None

    def flush() -> None:
        for line, pos, lineno in pending:
            launches.append(_parse_launch(line, pos, lineno, defs, function))
        pending.clear()

    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("//"):
            continue
        m = _FUNC.match(line)
        if m:
            flush()  # SSA names are scoped to the function: resolve what came before
            defs = {}
            name = m.group(1)
            function = _decode_string(name[1:-1]).decode("utf-8", "surrogateescape") if name[0] == '"' else name
            continue
        m = _DEF.match(line)
        if m:
            name, count, op = m.group(1), m.group(2), m.group(3).strip('"')
            results = int(count[1:]) if count else 1
            value = _constant_of(line[m.start(3) :]) if results == 1 else None
            defs[name] = "ambiguous" if name in defs else (op, results, value)
            if op == "gpu.launch_func":  # %token = gpu.launch_func async [...] ...
                pending.append((line, m.end(), lineno))
            continue
        m = _OP_AT.match(line)
        if not m:
            continue
        op = m.group(1)
        if op == "gpu.binary":
            name, objects = _parse_binary(line, m.end(), lineno)
            if name in binaries:
                raise UsageError(f"two gpu.binary ops are named @{name}")
            binaries[name] = objects
        elif op == "gpu.launch_func":
            pending.append((line, m.end(), lineno))
        elif op in ('"gpu.launch_func"', '"gpu.binary"'):
            raise UsageError(
                f"line {lineno}: {op} is printed in MLIR's generic form; pass the module "
                "printed in its custom form (str(module), or CompiledArtifact.ir)"
            )
    flush()
    return _Parsed(binaries, tuple(launches))


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def binaries(mlir_text_or_compiled: Any) -> dict[str, bytes]:
    """Object #0 of every ``gpu.binary`` of the module, by symbol: the code objects FlyDSL loads."""
    parsed = _parse(ir_text_of(mlir_text_or_compiled))
    return {name: _binary(name, objs) for name, objs in parsed.binaries.items()}


def _binary(name: str, objects: tuple[_Object, ...]) -> bytes:
    obj = objects[0]
    if obj.format in ("offload", "assembly"):
        what = "LLVM IR" if obj.format == "offload" else "assembly text"
        raise UsageError(f"object #0 of gpu.binary @{name} is {what} ({obj.format}), not a code object")
    return obj.data


def _describe(op: _Operand) -> str:
    return f"{op.name} is {op.why}"


def _strict(raw: _RawLaunch, parsed: _Parsed) -> Launch:
    where = f"gpu.launch_func @{raw.module}::@{raw.kernel} (line {raw.line})"
    block = []
    for axis, op in zip("xyz", raw.block, strict=True):
        if op.value is None:
            raise UsageError(
                f"{where}: block size {axis} (threads in, operand {axis}) {_describe(op)}; "
                "the block size must be a constant to know the occupancy"
            )
        if op.value < 1:
            raise UsageError(f"{where}: block size {axis} is {op.value}")
        block.append(op.value)
    if raw.smem is None:
        smem = 0
    elif raw.smem.value is None:
        raise UsageError(
            f"{where}: dynamic_shared_memory_size {_describe(raw.smem)}; the dynamic "
            "shared memory must be a constant to know the occupancy"
        )
    else:
        smem = raw.smem.value
        if smem < 0:
            raise UsageError(f"{where}: dynamic_shared_memory_size is {smem}")
    objects = parsed.binaries.get(raw.module)
    if objects is None:
        have = ", ".join("@" + n for n in parsed.binaries) or "none"
        raise UsageError(
            f"{where}: the module has no gpu.binary @{raw.module} (gpu.binary ops: {have}); "
            "pass FlyDSL's final MLIR, after gpu-module-to-binary"
        )
    gx, gy, gz = raw.grid
    grid = (gx.value, gy.value, gz.value)
    x, y, z = block
    return Launch(
        raw.kernel, raw.module, (x, y, z), x * y * z, smem, grid, _binary(raw.module, objects), objects[0].target
    )


def launches(mlir_text_or_compiled: Any) -> list[Launch]:
    """Every ``gpu.launch_func`` of FlyDSL's final module, in text order, sizes resolved.

    Raises :class:`amdocc.UsageError` when a block size or the dynamic shared memory of any
    launch is not a constant, or when a launch names a ``gpu.binary`` the module lacks.
    """
    parsed = _parse(ir_text_of(mlir_text_or_compiled))
    return [_strict(raw, parsed) for raw in parsed.launches]


@cached(maxsize=64)
def _kernels(data: bytes) -> tuple[Kernel, ...]:
    from ..loader import load
    from . import shared

    return shared(k for co in load(data) for k in co.kernels)


def _find(data: bytes, name: str, where: str) -> Kernel:
    kernels = _kernels(data)
    found = [k for k in kernels if name in (k.name, k.symbol)]
    if len(found) != 1:
        have = ", ".join(k.name for k in kernels) or "none"
        raise UsageError(f"{where} holds {len(found)} kernels named {name!r} (kernels: {have})")
    return found[0]


def kernel_of(mlir_text_or_compiled: Any, name: str | None = None) -> Kernel:
    """The amdocc Kernel a launch runs: the one named ``name``, else the only kernel launched.

    Only the code object is read, so a launch with a run-time block size or shared memory still
    has a kernel. With no launch in the module, the only kernel of its code objects is returned.
    """
    parsed = _parse(ir_text_of(mlir_text_or_compiled))
    launched = list(dict.fromkeys((raw.module, raw.kernel) for raw in parsed.launches))
    if name is not None:
        picks = [(m, k) for m, k in launched if k == name]
        if not picks:  # not launched: look in every binary
            picks = [
                (m, name)
                for m, objs in parsed.binaries.items()
                if any(name in (k.name, k.symbol) for k in _kernels(_binary(m, objs)))
            ]
        if len(picks) != 1:
            where = ", ".join(f"@{m}" for m, _ in picks) or "none"
            raise UsageError(f"{len(picks)} gpu.binary ops hold a kernel named {name!r} (found in: {where})")
    elif launched:
        picks = launched
        if len(picks) != 1:
            names = ", ".join(f"@{m}::@{k}" for m, k in picks)
            raise UsageError(f"the module launches {len(picks)} kernels ({names}); pass name=")
    else:
        picks = [(m, k.name) for m, objs in parsed.binaries.items() for k in _kernels(_binary(m, objs))]
        if len(picks) != 1:
            names = ", ".join(k for _, k in picks) or "none"
            raise UsageError(f"the module has no gpu.launch_func and {len(picks)} kernels ({names}); pass name=")
    module, kernel = picks[0]
    objects = parsed.binaries.get(module)
    if objects is None:
        raise UsageError(
            f"the module has no gpu.binary @{module} for kernel {kernel!r}; pass FlyDSL's "
            "final MLIR, after gpu-module-to-binary"
        )
    return _find(_binary(module, objects), kernel, f"object #0 of gpu.binary @{module}")


def max_blocks_per_cu(
    compiled_or_mlir_text: Any, *, stream: Any = None, device: Any = None, **kwargs: Any
) -> BlocksPerCU:
    """FlyDSL's ``CompiledFunction.max_blocks_per_cu()``, with no GPU needed.

    As FlyDSL does, the module must have exactly one distinct launch (kernel, block size and
    dynamic shared memory) with constant sizes. The answer is :func:`amdocc.max_blocks_per_cu`
    for that kernel at that block size and dynamic LDS: HIP's when a ROCm runtime is usable and
    ``stream`` is not capturing, the static ``hip`` model's otherwise (see ``.source``).
    ``device`` names the product or processor for the model; other keywords (``profile``,
    ``hip``) pass through.
    """
    from ..runtime import max_blocks_per_cu

    found = launches(compiled_or_mlir_text)
    distinct = list(dict.fromkeys((x.module, x.kernel, x.block_size, x.dynamic_lds) for x in found))
    if len(distinct) != 1:
        listed = "; ".join(f"@{m}::@{k} block {b} smem {s}" for m, k, b, s in distinct) or "none"
        raise UsageError(f"max_blocks_per_cu() needs exactly one kernel launch, found {len(distinct)} ({listed})")
    launch = next(x for x in found if (x.module, x.kernel, x.block_size, x.dynamic_lds) == distinct[0])
    kernel = _find(launch.binary, launch.kernel, f"object #0 of gpu.binary @{launch.module}")
    return max_blocks_per_cu(kernel, launch.block_size, launch.dynamic_lds, stream=stream, device=device, **kwargs)
