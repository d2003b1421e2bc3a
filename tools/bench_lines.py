"""CPU time and memory of reading source lines (DWARF .debug_line) for every kernel of some files.

    PYTHONPATH=. python3 tools/bench_lines.py [--pyelftools] PATH...

Per code object with a line table: the CPU time amdocc.codeobject.dwarf_line takes to index it
(one pass, no rows kept), then to read every kernel's ranges (the kernel's symbol extent), its
sequences and the peak of traced memory; with ``--pyelftools`` also the whole-table decode by
pyelftools that amdocc used before (every row of every sequence, as (start, end, "file:line")
tuples), for comparison. Any container amdocc reads is opened (wheels, fat libraries, caches).
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import tracemalloc
from pathlib import Path


def pyelftools_rows(image: bytes) -> int:
    """The rows pyelftools decodes for the whole table (what the previous reader kept)."""
    from elftools.elf.elffile import ELFFile

    dwarf = ELFFile(io.BytesIO(image)).get_dwarf_info()
    rows = 0
    for cu in dwarf.iter_CUs():
        program = dwarf.line_program_for_CU(cu)
        if program is not None:
            rows += sum(1 for e in program.get_entries() if e.state is not None)
    return rows


def measure(image: bytes, extents: list[tuple[int, int]], old: bool) -> dict[str, float | int]:
    from amdocc.codeobject.dwarf_line import read_line_table

    t0 = time.process_time()
    table = read_line_table(image)
    t1 = time.process_time()
    ranges = sum(len(table.ranges(lo, hi)) for lo, hi in extents) if table else 0
    t2 = time.process_time()
    tracemalloc.start()  # a second time, traced: tracing slows it
    traced = read_line_table(image)
    for lo, hi in extents:
        traced.ranges(lo, hi) if traced else None
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    out: dict[str, float | int] = {
        "index_s": t1 - t0,
        "kernels_s": t2 - t1,
        "ranges": ranges,
        "sequences": sum(len(s.offsets) for _, s in table._units) if table else 0,
        "peak_mib": peak / 2**20,
    }
    if old:
        t3 = time.process_time()
        out["pyelftools_rows"] = pyelftools_rows(image)
        out["pyelftools_s"] = time.process_time() - t3
        tracemalloc.start()
        pyelftools_rows(image)
        out["pyelftools_peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pyelftools", action="store_true", help="also time pyelftools' whole-table decode")
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    import elftools.elf.elffile  # noqa: F401 - imported before any clock starts

    import amdocc
    from amdocc.isa.extent import kernel_code

    for path in args.paths:
        for co in amdocc.load(path):
            if b".debug_line" not in co.data:
                continue
            extents = []
            for kernel in co.kernels:
                try:
                    code = kernel_code(kernel, co.origin)
                except amdocc.AmdoccError:
                    continue
                extents.append((code.address, code.address + len(code.code)))
            m = measure(co.data, extents, args.pyelftools)
            figures = " ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in m.items())
            print(f"{co.origin}: {len(co.data)} bytes, {len(extents)} kernels: {figures}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
