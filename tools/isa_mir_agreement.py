"""Agreement of amdocc's def/use table and liveness with LLVM 22's final machine IR, counted.

Runs what tests/test_isa_liveness_mir.py checks on the same seeded kernels (tools/livegen.py) and
prints, per configuration, how many instructions agree with MIR exactly or by a named rule, how
many block live-ins equal MIR's, and how often each rule explains a difference; then the
instruction agreement by table family (the rule of tables/isa_semantics.toml that decided it).

    python3 tools/isa_mir_agreement.py [--seeds 4] [--per-module 10]
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tools"), str(ROOT)]

import isa_mir_cases as cases  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--per-module", type=int, default=10)
    args = ap.parse_args()
    families: collections.Counter[str] = collections.Counter()
    rules: collections.Counter[str] = collections.Counter()
    heads = ("kernels", "instr", "exact", "by rule", "blocks", "equal", "by rule")
    print(f"{'configuration':<14}" + "".join(f"{h:>8}" for h in heads))
    with tempfile.TemporaryDirectory() as work:
        for target, wave64 in cases.CONFIGS:
            row = collections.Counter()
            sub = Path(work) / f"{target}{'_w64' if wave64 else ''}"
            sub.mkdir()
            for seed in range(args.seeds):
                ll = sub / f"{seed}.ll"
                ll.write_text(cases.livegen.module(target, seed, args.per_module))
                for case in cases.build(ll, target, wave64, sub):
                    row["kernels"] += 1
                    differences, agreed = cases.instruction_differences(case)
                    families.update(agreed)
                    by_text = {d.text for d in differences}
                    row["instr"] += len(case.mapped.pairs)
                    row["by rule"] += len(by_text)
                    rules.update(d.rule or "UNEXPLAINED" for d in differences)
                    blocks = sum(1 for s, e in case.mapped.block_ranges if e > s)
                    diff_blocks = cases.block_differences(case)
                    row["blocks"] += blocks
                    row["block rule"] += len(diff_blocks)
                    for d in diff_blocks:
                        rules.update((d.rule or "UNEXPLAINED").split("+"))
            name = f"{target}{'-w64' if wave64 else ''}"
            print(
                f"{name:<14}{row['kernels']:>8}{row['instr']:>8}{row['instr'] - row['by rule']:>8}{row['by rule']:>8}"
                f"{row['blocks']:>8}{row['blocks'] - row['block rule']:>8}{row['block rule']:>8}"
            )
    print("\ndifferences explained, by rule:")
    for rule, n in rules.most_common():
        print(f"  {rule:<28}{n:>7}")
    print("\ninstructions agreeing, by table family (rule that decided them):")
    for family, n in families.most_common():
        print(f"  {family:<48}{n:>7}")


if __name__ == "__main__":
    main()
