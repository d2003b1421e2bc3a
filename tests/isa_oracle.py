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


_LOOP = re.compile(r"^; %bb\.(\d+):.*Loop Header: Depth=(\d+)|^; %bb\.(\d+):.*Depth=(\d+)")


def llc_loop_depths(ir: Path, mcpu: str, mattr: str = "") -> dict[str, dict[int, int]]:
    """Per function, the loop depth llc-22 annotates on each basic block (``; %bb.N: ... Depth=N``);
    blocks outside loops are absent."""
    cmd = ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-O3", "-filetype=asm", str(ir), "-o", "-"]
    if mattr:
        cmd.insert(3, f"-mattr={mattr}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    depths: dict[str, dict[int, int]] = {}
    function = ""
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith((".", ";", " ", "\t")) and not line.startswith("$"):
            function = line[:-1]
            depths.setdefault(function, {})
        m = _LOOP.match(line)
        if m and function:
            block = int(m.group(1) or m.group(3))
            depths[function][block] = int(m.group(2) or m.group(4))
    return depths
