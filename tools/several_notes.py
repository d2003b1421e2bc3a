"""Build a HIP library whose code objects carry several NT_AMDGPU_METADATA notes.

clang-22's device link of relocatable device code splits the link into LTO partitions (the
driver passes ``--lto-partitions=8`` to lld, or ``-flto-partitions=8`` through
clang-linker-wrapper with ``--offload-new-driver``), and each partition writes its own metadata
note: ``llvm-readelf-22 --notes`` shows one NT_AMDGPU_METADATA per partition. Two translation
units (fixture_src/notes_a.hip, notes_b.hip) with seven kernels are compiled with ``-fgpu-rdc``
for three processors and device-linked into a host shared library, by either driver:

    python3 tools/several_notes.py OUT_DIR        # builds OUT_DIR/<driver>/libnotes.so for both

Used at test time by tests/test_codeobject_several_notes.py (inputs built into tmp_path).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLANG = "clang-22"
SOURCES = Path(__file__).resolve().parent / "fixture_src"
UNITS = ("notes_a.hip", "notes_b.hip")
PROCESSORS = ("gfx942", "gfx1100", "gfx1201")
# The two drivers that device-link relocatable device code.
DRIVERS: dict[str, list[str]] = {"rdc": ["-fgpu-rdc"], "new-driver": ["--offload-new-driver", "-fgpu-rdc"]}
COMPILE = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "-g0", "-fPIC", f"-I{SOURCES}"]


def build(out_dir: Path, driver: str) -> tuple[Path, list[str]]:
    """The host library ``out_dir/libnotes.so`` built by ``driver``, and the commands run."""
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    arches = [f"--offload-arch={p}" for p in PROCESSORS]
    commands: list[list[str]] = []
    objects = []
    for unit in UNITS:
        obj = out_dir / unit.replace(".hip", ".o")
        commands.append([CLANG, *COMPILE, *arches, *DRIVERS[driver], "-c", str(SOURCES / unit), "-o", str(obj)])
        objects.append(str(obj))
    library = out_dir / "libnotes.so"
    # -no-hip-rt: link without libamdhip64 (the library is only read, never loaded here).
    commands.append([CLANG, "--hip-link", *DRIVERS[driver], *arches, "-no-hip-rt", "-shared", "-fPIC", *objects,
                     "-o", str(library)])  # fmt: skip
    for cmd in commands:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=out_dir)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()}")
    return library, [" ".join(c) for c in commands]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: several_notes.py OUT_DIR", file=sys.stderr)
        return 2
    for driver in DRIVERS:
        library, _ = build(Path(argv[0]) / driver, driver)
        print(library)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
