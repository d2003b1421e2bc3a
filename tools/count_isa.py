#!/usr/bin/env python3
"""The `amdocc isa --json` worker (amdocc.app.isa_op.isa_file) over 30 amd-aiter files in this
process, for machine-instruction counts that do not move with the machine's load:

    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        python3 tools/count_isa.py [CORPUS_DIR]

The files are every tenth of the first 300 `.co` under CORPUS_DIR (sorted; all gfx942 in
amd-aiter's wheel), as docs/performance.md counts them. Compile the bytecode first
(`python3 -m compileall -q amdocc`): with PYTHONDONTWRITEBYTECODE set, every run would count
compiling amdocc too.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from amdocc.app import parallel
    from amdocc.app.isa_op import IsaOptions, isa_file, warm_up

    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".cache/aiter/aiter_meta/hsa"
    files = sorted(str(p) for p in corpus.rglob("*.co"))[:300][::10]
    if not files:
        print(f"no .co files under {corpus}", file=sys.stderr)
        return 2
    warm_up()
    written = 0
    for item in parallel.expand(files):
        for kind, value in isa_file(item, IsaOptions(json=True, lines=True)):
            if kind == "kernel":
                written += len(value)
    print(f"{len(files)} files, {written} bytes of JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main())
