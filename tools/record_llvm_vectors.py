#!/usr/bin/env python3
"""Record llc-22's own occupancy for random kernels, so that the fast tests can check the llvm
model against the compiler without compiling (tests/data/llvm22_occupancy_vectors.json).

Kernels come from tools/kernelgen.py (random register, LDS and wave/mode choices on every
generation llc-22 knows); half have the flat workgroup range "1,N", half a fixed "B,B"; then
kernels with few registers and random ranges, where LDS and the range decide. For
each, what the compiler wrote (the metadata note's .vgpr_count, .sgpr_count,
.group_segment_fixed_size, .wavefront_size, .max_flat_workgroup_size, the descriptor's
WGP mode) and what it printed (``; Occupancy:``, ``; NumSGPRsForWavesPerEU:``). Nothing here
imports amdocc: the vectors are LLVM's answers.

    python tools/record_llvm_vectors.py [--kernels 480] [--lds-kernels 360] [--seed 11]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernelgen

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "llvm22_occupancy_vectors.json"


def lds_bound(rng: random.Random, n: int) -> list[kernelgen.KernelSpec]:
    """Kernels few registers leave LDS- or slot-bound: where the workgroup range decides (how many
    waves the smallest and largest groups leave, getOccupancyWithWorkGroupSizes)."""
    out = []
    for i in range(n):
        target = kernelgen.DEFAULT_TARGETS[i % len(kernelgen.DEFAULT_TARGETS)]
        caps = kernelgen.target_caps(target)
        wave = rng.choice(caps.waves)
        pool = caps.lds_max * (2 if caps.wgp else 1)
        lds = (
            0 if rng.random() < 0.15 else max(1, min(caps.lds_max, pool // rng.randint(1, 40) + rng.choice((-1, 0, 1))))
        )
        hi = rng.choice((wave, 2 * wave, 3 * wave, rng.randint(1, 1024)))
        lo = rng.choice((1, hi))  # the note keeps only the maximum: a range starts at 1 or is fixed
        cumode = rng.choice((True, False)) if caps.wgp else None
        out.append(
            kernelgen.KernelSpec(
                f"l{i}",
                target,
                wave=wave,
                cumode=cumode,
                vgprs=rng.randint(0, 24),
                sgprs=rng.randint(0, 30),
                lds=lds,
                min_wg=lo,
                max_wg=hi,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=480)
    ap.add_argument("--lds-kernels", type=int, default=360)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    specs = kernelgen.random_specs(rng, kernelgen.DEFAULT_TARGETS, args.kernels, prefix="k")
    specs = [dataclasses.replace(s, min_wg=s.max_wg if i % 2 else 1, waves_per_eu=None) for i, s in enumerate(specs)]
    specs += lds_bound(rng, args.lds_kernels)
    groups: dict[tuple, list] = defaultdict(list)
    for s in specs:
        groups[s.group].append(s)
    vectors = []
    for group in groups.values():
        infos, _errors, _calls = kernelgen.compile_asm(group)
        for s in group:
            info = infos.get(s.name)
            if info is None:  # a wave size the target lacks: llc drops the kernel
                continue
            md, kd = info["md"], info["amdhsa"]
            vectors.append(
                {
                    "target": s.target,
                    "wave": md["wavefront_size"],
                    "wgp": bool(kd.get("workgroup_processor_mode", 0)),
                    "vgpr_count": md["vgpr_count"],
                    "sgpr_count": md["sgpr_count"],
                    "lds": md["group_segment_fixed_size"],
                    "max_flat_workgroup_size": md["max_flat_workgroup_size"],
                    "block": s.max_wg if s.min_wg == s.max_wg else None,
                    "Occupancy": info["Occupancy"],
                    "NumSGPRsForWavesPerEU": info["NumSGPRsForWavesPerEU"],
                }
            )
    doc = {
        "compiler": kernelgen.llc_version(),
        "generator": (
            f"tools/record_llvm_vectors.py --kernels {args.kernels} --lds-kernels {args.lds_kernels} --seed {args.seed}"
        ),
        "vectors": vectors,
    }
    lines = ",\n".join(json.dumps(v, sort_keys=True) for v in vectors)  # one vector a line: short diffs
    head = json.dumps({k: v for k, v in doc.items() if k != "vectors"}, sort_keys=True)[:-1]
    OUT.write_text(f'{head}, "vectors": [\n{lines}\n]}}\n')
    print(f"{len(vectors)} vectors -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
