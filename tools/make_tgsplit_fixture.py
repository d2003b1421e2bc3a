#!/usr/bin/env python3
"""Build the TG_SPLIT fixtures: tools/fixture_src/tgsplit.ll through llc-22 with and without
``-mattr=+tgsplit`` on gfx90a, gfx942 and gfx950, linked by ld.lld-22, each stored with what
llvm-objdump-22 prints for its descriptor (the oracle for the TG_SPLIT bit) and what
llvm-readelf-22 prints for its notes.

    python tools/make_tgsplit_fixture.py     # rewrites tests/data/fixtures/tgsplit/
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tools" / "fixture_src" / "tgsplit.ll"
OUT = ROOT / "tests" / "data" / "fixtures" / "tgsplit"
CASES = [("gfx90a", True), ("gfx90a", False), ("gfx942", True), ("gfx950", True)]


def run(cmd: list[str]) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def build(arch: str, tgsplit: bool, work: Path) -> dict:
    stem = f"tgsplit_{arch}" if tgsplit else f"no_tgsplit_{arch}"
    llc = ["llc-22", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3", "-filetype=obj",
           *(["-mattr=+tgsplit"] if tgsplit else []), str(SOURCE), "-o", str(work / f"{stem}.o")]
    lld = ["ld.lld-22", "-shared", str(work / f"{stem}.o"), "-o", str(OUT / f"{stem}.hsaco")]
    run(llc)
    run(lld)
    hsaco = OUT / f"{stem}.hsaco"
    kd = run(["llvm-objdump-22", "-D", "--disassemble-symbols=tgsplit_lds.kd", str(hsaco)])
    (OUT / f"{stem}.kd.txt").write_text(kd.replace(str(OUT) + "/", ""))
    (OUT / f"{stem}.notes.txt").write_text(run(["llvm-readelf-22", "-h", "--notes", str(hsaco)]).replace(str(OUT) + "/", ""))
    return {"file": f"tgsplit/{stem}.hsaco", "arch": arch, "tgsplit": tgsplit,
            "sha256": hashlib.sha256(hsaco.read_bytes()).hexdigest(),
            "oracle": {"kd": f"tgsplit/{stem}.kd.txt", "readelf": f"tgsplit/{stem}.notes.txt"},
            "commands": [" ".join(c).replace(str(ROOT) + "/", "").replace(str(work) + "/", "")
                         for c in (llc, lld)]}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fixtures = [build(arch, split, Path(tmp)) for arch, split in CASES]
    manifest = {"generated_by": "tools/make_tgsplit_fixture.py", "llc": next(l.strip() for l in run(["llc-22", "--version"]).splitlines() if "version" in l),
                "fixtures": fixtures}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(fixtures)} fixtures to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
