"""LLVM's own pipeline for a host library: dump the fat-binary section, unbundle every entry.

This is the pipeline a user would script (llvm-objcopy-22 --dump-section, then
clang-offload-bundler-22 --list/--unbundle per target, then llvm-readelf-22 --notes). One fix is
needed, and one workaround: clang-offload-bundler reads only the first bundle of a section that
holds several back to back (one per translation unit), so the section is cut at every bundle
magic first and each piece is handed to the bundler on its own; and LLVM 22's bundler refuses
every entry listed after an old three-part host id ("host-x86_64-unknown-linux": "invalid bundle
id read from the bundle"), so such an entry is cut out by ``entry_bytes`` below, which reads the
uncompressed bundle header as LLVM's ClangOffloadBundler documents it (magic, u64 entry count,
then per entry u64 offset, u64 size, u64 id length, id). Nothing here imports amdocc.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

OBJCOPY = "llvm-objcopy-22"
BUNDLER = "clang-offload-bundler-22"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
AMDGPU_ENTRY = "-amdgcn-amd-amdhsa-"


UNBUNDLED_BY_HAND: list[str] = []  # entries the bundler refused, cut out by entry_bytes


def entry_bytes(bundle: bytes, entry_id: str) -> bytes:
    """The payload of ``entry_id`` in one uncompressed offload bundle."""
    assert bundle.startswith(BUNDLE_MAGIC)
    count = int.from_bytes(bundle[24:32], "little")
    pos = 32
    for _ in range(count):
        offset, size, length = (int.from_bytes(bundle[pos + i : pos + i + 8], "little") for i in (0, 8, 16))
        ident = bundle[pos + 24 : pos + 24 + length].decode()
        pos += 24 + length
        if ident == entry_id:
            return bundle[offset : offset + size]
    raise KeyError(entry_id)


def _run(cmd: list[str]) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace").stdout


def unbundle_library(library: Path, work: Path, section: str = ".hip_fatbin") -> list[Path]:
    """Every AMDGPU code object LLVM's tools extract from ``library``'s fat-binary section."""
    work.mkdir(parents=True, exist_ok=True)
    dumped = work / "section.bin"
    _run([OBJCOPY, f"--dump-section={section}={dumped}", str(library), "/dev/null"])
    data = dumped.read_bytes()
    starts = [m.start() for m in re.finditer(re.escape(BUNDLE_MAGIC), data)]
    out = []
    for index, (lo, hi) in enumerate(zip(starts, [*starts[1:], len(data)], strict=True)):
        piece = work / f"bundle{index}.bin"
        piece.write_bytes(data[lo:hi])
        for entry in _run([BUNDLER, "--list", "--type=o", f"--input={piece}"]).split():
            if AMDGPU_ENTRY not in entry:
                continue
            target = entry.split("--", 1)[1].replace(":", "_")
            co = work / f"bundle{index}-{target}.co"
            proc = subprocess.run(
                [BUNDLER, "--unbundle", "--type=o", f"--input={piece}", f"--targets={entry}", f"--output={co}"],
                capture_output=True,
                text=True,
            )
            if proc.returncode:
                assert "invalid bundle id" in proc.stderr, proc.stderr
                co.write_bytes(entry_bytes(data[lo:hi], entry))
                UNBUNDLED_BY_HAND.append(f"{library.name}: {entry}")
            out.append(co)
    dumped.unlink()
    return out


CCOB_MAGIC = b"CCOB"


def compressed_bundles(data: bytes) -> list[bytes]:
    """The compressed bundles (CCOB v2/v3) of a fat-binary section, each cut to the total size its
    header gives (u16 version, u16 method, then for v2 a u32 and for v3 a u64 total size, as LLVM's
    ClangOffloadBundler.rst documents them): clang-offload-bundler-22 refuses a CCOB followed by
    the zero padding that separates them in a section ("Src size is incorrect", measured)."""
    out = []
    for match in re.finditer(re.escape(CCOB_MAGIC), data):
        pos = match.start()
        version = int.from_bytes(data[pos + 4 : pos + 6], "little")
        if version == 3:
            total = int.from_bytes(data[pos + 8 : pos + 16], "little")
        elif version == 2:
            total = int.from_bytes(data[pos + 8 : pos + 12], "little")
        else:
            raise ValueError(f"CCOB v{version} at {pos:#x}: no total size in its header")
        out.append(data[pos : pos + total])
    return out


def unbundle_compressed(
    library: Path, work: Path, targets: set[str] | None = None, section: str = ".hip_fatbin"
) -> list[tuple[int, Path]]:
    """(bundle index, code object) for every AMDGPU entry LLVM's tools extract from the CCOBs of
    ``library``'s fat-binary section (only the processors in ``targets`` when given)."""
    work.mkdir(parents=True, exist_ok=True)
    dumped = work / "section.bin"
    _run([OBJCOPY, f"--dump-section={section}={dumped}", str(library), "/dev/null"])
    data = dumped.read_bytes()
    dumped.unlink()
    out = []
    for index, blob in enumerate(compressed_bundles(data)):
        out += [(index, p) for p in unbundle_one(blob, index, work, targets)]
    return out


def unbundle_one(blob: bytes, index: int, work: Path, targets: set[str] | None = None) -> list[Path]:
    """The AMDGPU entries clang-offload-bundler-22 extracts from one CCOB ``blob`` (bundle number
    ``index`` of its section) into ``work`` (only the processors in ``targets`` when given)."""
    piece = work / f"ccob{index}.bin"
    piece.write_bytes(blob)
    entries = [e for e in _run([BUNDLER, "--list", "--type=o", f"--input={piece}"]).split() if AMDGPU_ENTRY in e]
    if targets is not None:
        entries = [e for e in entries if e.split("--", 1)[1].split(":")[0] in targets]
    paths = [work / f"ccob{index}-{e.split('--', 1)[1].replace(':', '_')}.co" for e in entries]
    if entries:
        _run(
            [
                BUNDLER,
                "--unbundle",
                "--type=o",
                f"--input={piece}",
                f"--targets={','.join(entries)}",
                *[f"--output={p}" for p in paths],
            ]
        )
    piece.unlink()
    return paths
