"""The ISA layer's oracles: HIP kernels built by clang-22, llvm-objdump-22's text, llc-22's loop
annotations. Nothing here imports amdocc: these are the independent side of tests/test_isa_*.py.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tools" / "fixture_src" / "isa_kernels.hip"
HIP_FLAGS = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "-g0", "--offload-device-only", "--no-gpu-bundle-output"]
# (name, --offload-arch, extra flags): the processors the issue names, wave32 and wave64 on gfx1100.
BUILDS = (
    ("gfx908", "gfx908", []),
    ("gfx90a", "gfx90a", []),
    ("gfx942", "gfx942", []),
    ("gfx950", "gfx950", []),
    ("gfx1030", "gfx1030", []),
    ("gfx1100", "gfx1100", []),
    ("gfx1100-w64", "gfx1100", ["-mwavefrontsize64"]),
    ("gfx1201", "gfx1201", []),
    ("gfx1250", "gfx1250", []),
)


def build(out_dir: Path, name: str, arch: str, flags: list[str], extra: list[str] | None = None) -> Path:
    """clang-22 builds tools/fixture_src/isa_kernels.hip into a bare code object."""
    out = out_dir / f"isa_{name}.co"
    cmd = ["clang-22", *HIP_FLAGS, f"--offload-arch={arch}", *flags, *(extra or [])]
    subprocess.run([*cmd, f"-I{SOURCE.parent}", str(SOURCE), "-o", str(out)], check=True, capture_output=True)
    return out


def build_ir(out_dir: Path, name: str, arch: str, flags: list[str]) -> Path:
    """The device IR of the same source (what llc-22 compiles for the loop annotations)."""
    out = out_dir / f"isa_{name}.ll"
    cmd = ["clang-22", *HIP_FLAGS, f"--offload-arch={arch}", *flags, "-S", "-emit-llvm"]
    subprocess.run([*cmd, f"-I{SOURCE.parent}", str(SOURCE), "-o", str(out)], check=True, capture_output=True)
    return out


@dataclass
class Listing:
    """llvm-objdump's disassembly: text by address, and its local label addresses."""

    text: dict[int, str]
    labels: dict[str, int]


_LINE = re.compile(r"^\s+(?P<text>\S.*?)\s*// (?P<addr>[0-9A-F]+):(?P<hex>[0-9A-F ]+?)(?:\s+<.*>)?\s*$")
_LABEL = re.compile(r"^(?P<addr>[0-9a-f]+) <(?P<name>[^>]+)>:$")


def objdump(path: Path, mcpu: str, wave64: bool = False) -> Listing:
    """``llvm-objdump-22 -d --mcpu=<mcpu> [--mattr=+wavefrontsize64]``, parsed from its
    ``// ADDRESS: ENCODING`` comments."""
    cmd = ["llvm-objdump-22", "-d", f"--mcpu={mcpu}", *(["--mattr=+wavefrontsize64"] if wave64 else []), str(path)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    text: dict[int, str] = {}
    labels: dict[str, int] = {}
    for line in out.splitlines():
        m = _LINE.match(line)
        if m:
            text[int(m["addr"], 16)] = m["text"]
            continue
        m = _LABEL.match(line)
        if m:
            labels[m["name"]] = int(m["addr"], 16)
    return Listing(text, labels)


def branch_label_agrees(ours: str, theirs: str, address: int, listing: Listing) -> bool:
    """objdump names a branch target by a local label (``s_cbranch_scc1 label_02DC``) where the
    code object has one; LLVM-C prints the raw offset. Same instruction if the label's address is
    pc + 4 + 4 * offset."""
    mnemonic, _, operand = ours.partition(" ")
    their_mnemonic, _, label = theirs.partition(" ")
    if mnemonic != their_mnemonic or label not in listing.labels or not operand.isdigit():
        return False
    offset = int(operand)
    offset -= 0x10000 if offset & 0x8000 else 0
    return listing.labels[label] == address + 4 + 4 * offset


_HEADER_DEPTH = re.compile(r"Loop Header: Depth=(\d+)")
_IN_LOOP_DEPTH = re.compile(r"in Loop: Header=\S+ Depth=(\d+)")
_BLOCK_LABEL = re.compile(r"^(\.LBB\d+_\d+:|; %bb\.\d+:)")


def asm_loop_depths(asm: str) -> dict[str, list[tuple[str, int, str | None]]]:
    """Per function of LLVM's assembly, each instruction's mnemonic and the loop depth of its
    block, from the asm printer's comments (``; =>This Inner Loop Header: Depth=N``, ``; in Loop:
    Header=BB1_3 Depth=N``; a block with neither is outside every loop), and "spill" or "reload"
    where the instruction's comment says ``N-byte Folded Spill`` or ``Reload`` (on gfx10+ an
    ``s_clause`` carries one comment for the instructions of its clause: "spill or reload").

    A machine block may end in a conditional branch and then an ``s_branch``: that last branch
    runs only on the not-taken edge, which the object's control flow sees as a block of its own.
    It belongs to the loops that hold both ends of that edge: in a nest, the shallower of the
    two blocks' depths (its target label's depth and its own block's)."""
    out: dict[str, list[tuple[str, int, str | None]]] = {}
    function: str | None = None
    depth = 0
    annotating = False  # inside a block label's comment lines
    functions = set(re.findall(r"^\s*\.type\s+([\w$.]+),@function", asm, re.M))
    label_depth: dict[str, int] = {}
    pending: list[tuple[str, int, str]] = []  # (function, instruction index, target label)
    label = ""
    after_conditional = False
    clause_note: str | None = None
    clause_left = 0
    for line in asm.splitlines():
        if function is None:
            m = re.match(r"^([\w$.]+):(\s*;.*)?$", line)
            if m and m.group(1) in functions:
                function, depth = m.group(1), 0
                out[function] = []
            continue
        if line.startswith(".Lfunc_end"):
            function = None
            continue
        if _BLOCK_LABEL.match(line):
            depth, annotating, after_conditional = 0, True, False
            label = line.split(":")[0]
        elif annotating and not line.lstrip().startswith(";"):
            annotating = False
            label_depth[label] = depth
        if annotating:
            m = _HEADER_DEPTH.search(line) or _IN_LOOP_DEPTH.search(line)
            if m:
                depth = int(m.group(1))
            continue
        stripped = line.strip()
        if line.startswith("\t") and stripped and stripped[0].isalpha():
            code, _, comment = stripped.partition(";")
            words = code.split()
            mnemonic = words[0]
            if mnemonic == "s_branch" and after_conditional and len(words) > 1:
                pending.append((function, len(out[function]), words[1]))
            after_conditional = mnemonic.startswith("s_cbranch_")
            note = "spill" if "Folded Spill" in comment else "reload" if "Folded Reload" in comment else None
            if mnemonic == "s_clause" and note:
                # A clause's comment sums the spills of the s_clause N + 1 instructions it holds,
                # named after one of them (gfx1250 mixes spills and reloads in one clause).
                clause_note, clause_left, note = "spill or reload", int(words[1], 0) + 1, None
            elif clause_left:
                note, clause_left = clause_note, clause_left - 1
            out[function].append((mnemonic, depth, note))
    for name, index, target in pending:
        mnemonic, own, note = out[name][index]
        out[name][index] = (mnemonic, min(own, label_depth.get(target, own)), note)
    return out


def llc_from_source(
    out_dir: Path, name: str, text: str, arch: str = "gfx942", defines: tuple[str, ...] = ()
) -> tuple[Path, str]:
    """HIP ``text`` built by clang-22 to IR (with the fixtures' header) and by llc-22 to a code
    object and its assembly (:func:`llc`)."""
    src, ir = out_dir / f"{name}.hip", out_dir / f"{name}.ll"
    src.write_text(text)
    cmd = ["clang-22", *HIP_FLAGS, f"--offload-arch={arch}", "-S", "-emit-llvm", *defines, f"-I{SOURCE.parent}"]
    subprocess.run([*cmd, str(src), "-o", str(ir)], check=True, capture_output=True)
    return llc(ir, arch, out_dir)


def llc(ir: Path, mcpu: str, out_dir: Path) -> tuple[Path, str]:
    """llc-22 on the same IR: the linked code object (ld.lld-22) and the verbose assembly."""
    base = ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-O3", str(ir)]
    obj = out_dir / (ir.stem + ".o")
    hsaco = out_dir / (ir.stem + ".hsaco")
    subprocess.run([*base, "-filetype=obj", "-o", str(obj)], check=True, capture_output=True)
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(hsaco)], check=True, capture_output=True)
    asm = subprocess.run([*base, "-filetype=asm", "-o", "-"], check=True, capture_output=True, text=True).stdout
    return hsaco, asm


PADDING = ("s_nop", "s_code_end")


def align(ours: list[str], theirs: list[tuple[str, int, str | None]]) -> list[tuple[int, int]]:
    """Pair each asm instruction with the disassembled one it became, skipping the alignment
    padding the object has and the asm does not; returns (our index, their index) pairs.
    AssertionError when the two do not line up."""
    pairs = []
    j = 0
    for k, (mnemonic, _, _) in enumerate(theirs):
        while j < len(ours) and ours[j] != mnemonic:
            assert ours[j] in PADDING, f"asm {mnemonic} (#{k}) meets {ours[j]} (#{j}) in the object"
            j += 1
        assert j < len(ours), f"asm {mnemonic} (#{k}) has no instruction left in the object"
        pairs.append((j, k))
        j += 1
    return pairs


def readelf_notes(path: Path) -> dict[str, dict[str, int]]:
    """Per kernel (.name), the integer keys of llvm-readelf-22 --notes' metadata listing (the
    kernel-level keys: an entry starts at "  - ." and its keys sit four spaces in)."""
    out = subprocess.run(["llvm-readelf-22", "--notes", str(path)], check=True, capture_output=True, text=True).stdout
    kernels: dict[str, dict[str, int]] = {}
    entries: list[dict[str, str]] = []
    for line in out.splitlines():
        m = re.match(r"^(  - |    )\.(\w+):\s*(\S*)$", line)
        if not m:
            continue
        if m.group(1) == "  - ":
            entries.append({})
        if entries:
            entries[-1][m.group(2)] = m.group(3)
    for entry in entries:
        kernels[entry["name"]] = {k: int(v) for k, v in entry.items() if v.isdigit()}
    return kernels


_SOURCE_LINE = re.compile(r"^; (?P<where>.+:\d+)$")


def objdump_lines(path: Path, mcpu: str) -> dict[int, str | None]:
    """``llvm-objdump-22 -d -l``: the source location it last printed (``; FILE:LINE``) before
    each instruction, by address; None before any is printed in a function."""
    cmd = ["llvm-objdump-22", "-d", "-l", f"--mcpu={mcpu}", str(path)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    lines: dict[int, str | None] = {}
    where: str | None = None
    for line in out.splitlines():
        if _LABEL.match(line):
            where = None
            continue
        m = _SOURCE_LINE.match(line)
        if m:
            where = m["where"]
            continue
        m = _LINE.match(line)
        if m:
            lines[int(m["addr"], 16)] = where
    return lines
