#!/usr/bin/env python3
"""Mutation testing of amdocc's core: plant small bugs one at a time, count the ones the tests miss.

Two campaigns, one report:
- Python: mutmut 3 (``pip install 'amdocc[mutation]'``) mutates amdocc/models, codeobject,
  containers, policy and targets.py (``[tool.mutmut]`` in pyproject.toml names them and the fast
  test tier), and runs, for each mutant, only the fast-tier tests that reach the mutated function.
- Tables: no Python tool mutates TOML, so this script perturbs one number of tables/*.toml at a
  time (n -> n+1; a float x -> 2x) and runs the table tier (TABLE_TIER) on a copy of the tree.

A mutant that survives is either a gap in the tests or equivalent (no test can tell it apart,
because it changes nothing observable). tools/mutation_equivalents.toml lists the equivalent
ones, each with its reason; they are reported apart and left out of the score. An entry that no
longer matches any mutant is reported as stale.

    python tools/mutation.py                        # everything, 2 workers, at nice 15
    python tools/mutation.py --area models --area tables
    python tools/mutation.py --sample 400 --seed 1  # a random sample of the Python mutants
    python tools/mutation.py --report-only          # re-read the last run's results

The score is killed / (mutants - equivalent); a timeout counts as killed (the mutant hung the
tier), a mutant no fast-tier test reaches counts as survived.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
EQUIVALENTS = ROOT / "tools" / "mutation_equivalents.toml"
NICE = ["nice", "-n", "15"]

# Area -> the mutmut name globs of its functions.
PYTHON_AREAS = {
    "models": ["amdocc.models.*"],
    "codeobject": ["amdocc.codeobject.*"],
    "containers": ["amdocc.containers.*"],
    "policy": ["amdocc.policy.*"],
    "targets": ["amdocc.targets.*"],
}
AREAS = (*PYTHON_AREAS, "tables")
# Tables whose numbers are facts the code reads. tables/hip_observed/ holds recorded HIP answers:
# oracle data, not facts, so perturbing it would test the oracle rather than the code.
TABLES = ("targets.toml", "devices.toml", "hip_profiles.toml", "split_policies.toml", "prefill_gate.toml")
# The tests that read the tables, fast (no compiler, no corpus): each table mutant runs these.
TABLE_TIER = [
    "tests/test_targets_table.py",
    "tests/test_table_sources.py",
    "tests/test_hw_sources.py",
    "tests/test_devices.py",
    "tests/test_occupancy_hip.py",
    "tests/test_hip_observed.py",
    "tests/test_hip_releases.py",
    "tests/test_hip_source_tables.py",
    "tests/test_policy_splits.py",
    "tests/test_policy_gate.py",
    "tests/test_models_nextstep.py",
    "tests/test_models_record.py",
    "tests/test_models_usage.py",
    "tests/test_models_hw.py",
    "tests/test_models_llvm.py",
    "tests/test_models_hip.py",
    "tests/test_models_compute.py",
    "tests/test_policy_splits_boundaries.py",
    "tests/test_fixtures.py",
    "tests/test_tables_cited_values.py",
    "tests/test_models_llc_listings.py",
    "-m",
    "not hip and not slow",
]
KILLED, SURVIVED, TIMEOUT, NO_TESTS = "killed", "survived", "timeout", "no tests"


@dataclass
class Mutant:
    name: str  # mutmut's name, or tables/<file>:<line>:<column>
    area: str
    status: str
    diff: str = ""  # the changed line(s): "- old" / "+ new"
    equivalent: str | None = None  # the reason, when listed as equivalent


@dataclass
class Campaign:
    mutants: list[Mutant] = field(default_factory=list)
    seconds: float = 0.0
    stale_equivalents: list[dict] = field(default_factory=list)


# -- Python: mutmut --------------------------------------------------------------------------


def _env(**more) -> dict:
    """The tiers' environment: one Hypothesis seed, and the corpus where .ci/run unpacks it."""
    env = dict(os.environ, AMDOCC_HYPOTHESIS_SEED=os.environ.get("AMDOCC_HYPOTHESIS_SEED", "0"), **more)
    corpus = ROOT / ".cache" / "aiter" / "aiter_meta" / "hsa"
    if "AMDOCC_AITER_DIR" not in env and (corpus / "gfx942").is_dir():
        env["AMDOCC_AITER_DIR"] = str(corpus)
    return env


def _mutmut(args: list[str], jobs: int) -> None:
    env = _env()
    cmd = [*NICE, sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = MUTANTS / "mutation-run.log"
    log.parent.mkdir(exist_ok=True)
    with open(log, "a") as fh:
        fh.write(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit(f"mutmut failed (exit {proc.returncode}); its output is in {log}")


def _python_results() -> dict[str, int | None]:
    codes: dict[str, int | None] = {}
    for meta in (MUTANTS / "amdocc").rglob("*.meta"):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def _area_of(name: str, areas) -> str | None:
    import fnmatch

    for area in areas:
        if any(fnmatch.fnmatch(name, g) for g in PYTHON_AREAS[area]):
            return area
    return None


def _status(code) -> str:
    from mutmut.stats import status_by_exit_code

    status = status_by_exit_code[code]
    return {"segfault": KILLED, "suspicious": KILLED}.get(status, status)


def _diff(name: str) -> str:
    """The mutant's changed lines, as '- old' / '+ new' (mutmut's own diff, in-process)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        text = get_diff_for_mutant(name)
    finally:
        os.chdir(cwd)
    return "\n".join(line for line in text.splitlines() if line[:1] in "-+" and not line.startswith(("---", "+++")))


def run_python(areas: list[str], jobs: int, sample: int | None, seed: int, fresh: bool) -> list[Mutant]:
    globs = [g for a in areas for g in PYTHON_AREAS[a]]
    if fresh and MUTANTS.exists():
        shutil.rmtree(MUTANTS)
    if sample:
        # Generate every mutant (and the test map) by running one cheap mutant, then the sample.
        _mutmut(["amdocc.targets.x_strip_triple__mutmut_1"], jobs)
        names = sorted(n for n in _python_results() if _area_of(n, areas))
        picked = sorted(random.Random(seed).sample(names, min(sample, len(names))))
        for i in range(0, len(picked), 200):
            _mutmut(picked[i : i + 200], jobs)
        wanted = set(picked)
    else:
        _mutmut(globs, jobs)
        wanted = None
    return python_mutants(areas, wanted)


def python_mutants(areas: list[str], wanted: set[str] | None = None) -> list[Mutant]:
    out = []
    for name, code in sorted(_python_results().items()):
        area = _area_of(name, areas)
        if area is None or (wanted is not None and name not in wanted) or code is None:
            continue
        m = Mutant(name, area, _status(code))
        if m.status not in (KILLED, TIMEOUT):
            m.diff = _diff(name)
        out.append(m)
    return out


# -- Tables: one number at a time ------------------------------------------------------------

_SKIP = re.compile(r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|#[^\n]*')
_NUMBER = re.compile(r"(?<![\w.\-+])[-+]?(?:0x[0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])")


def _leaves(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def _perturb(token: str) -> str:
    text = token.replace("_", "")
    if text.lower().lstrip("+-").startswith("0x"):
        return hex(int(text, 16) + 1)
    if re.fullmatch(r"[-+]?\d+", text):
        return str(int(text) + 1)
    return repr(float(text) * 2)


def table_mutants(tables=TABLES) -> list[tuple[str, int, str, str, tuple]]:
    """(file, offset, old token, new token, leaf path) for every number that is a table value."""
    out = []
    for name in tables:
        text = (ROOT / "tables" / name).read_text()
        original = dict(_leaves(tomllib.loads(text)))
        masked = _SKIP.sub(lambda m: " " * len(m.group()), text)
        for match in _NUMBER.finditer(masked):
            new = _perturb(match.group())
            mutated = text[: match.start()] + new + text[match.end() :]
            try:
                leaves = dict(_leaves(tomllib.loads(mutated)))
            except tomllib.TOMLDecodeError:
                continue
            if leaves.keys() != original.keys():
                continue  # a number used as a key, not a value
            changed = [p for p in leaves if leaves[p] != original[p] or type(leaves[p]) is not type(original[p])]
            if len(changed) == 1:
                out.append((name, match.start(), match.group(), new, changed[0]))
    return out


def _copy_tree(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for part in ("amdocc", "tables", "tests", "tools"):
        shutil.copytree(ROOT / part, dest / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def _run_tier(tree: Path, timeout: float) -> int:
    env = _env(PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    tier = [t for t in TABLE_TIER if not t.startswith("tests/") or (tree / t).exists()]
    try:
        return subprocess.run(
            [*NICE, sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tier],
            cwd=tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
        ).returncode
    except subprocess.TimeoutExpired:
        return -1


def run_tables(jobs: int, sample: int | None = None, seed: int = 0) -> list[Mutant]:
    cases = table_mutants()
    if sample:
        cases = sorted(random.Random(seed).sample(cases, min(sample, len(cases))))
    trees = [MUTANTS / f"tables-{i}" for i in range(jobs)]
    for tree in trees:
        _copy_tree(tree)
    started = time.monotonic()
    if _run_tier(trees[0], 600) != 0:
        raise SystemExit("the table tier fails on the unmutated tables: fix that first")
    timeout = max(60.0, 10 * (time.monotonic() - started))
    free = list(trees)

    def one(case):
        name, offset, old, new, path = case
        tree = free.pop()
        target = tree / "tables" / name
        text = target.read_text()
        try:
            target.write_text(text[:offset] + new + text[offset + len(old) :])
            code = _run_tier(tree, timeout)
        finally:
            target.write_text(text)
            free.append(tree)
        line = text.count("\n", 0, offset) + 1
        label = ".".join(str(p) for p in path)
        status = TIMEOUT if code == -1 else SURVIVED if code == 0 else NO_TESTS if code == 5 else KILLED
        return Mutant(f"tables/{name}:{line}:{label}", "tables", status, f"- {label} = {old}\n+ {label} = {new}")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, cases))


# -- Equivalent mutants and the report ---------------------------------------------------------


def _function_of(name: str) -> str:
    return re.sub(r"__mutmut_\d+$", "", name)


def _lines(diff: str) -> tuple[str, ...]:
    """The changed lines, sign kept, whitespace-insensitive."""
    return tuple(line[0] + " ".join(line[1:].split()) for line in diff.splitlines() if line.strip())


def apply_equivalents(mutants: list[Mutant], path: Path = EQUIVALENTS) -> list[dict]:
    """Mark the listed equivalent mutants; return the entries that matched no mutant.

    An entry names the function (mutmut's name without ``__mutmut_N``; a table file for table
    mutants), the changed lines exactly as the report prints them, and the reason."""
    entries = tomllib.loads(path.read_text()).get("equivalent", []) if path.exists() else []
    used = set()
    for m in mutants:
        if m.status == KILLED or m.status == TIMEOUT:
            continue
        for i, e in enumerate(entries):
            where = e["function"]
            if (where == _function_of(m.name) or m.name.startswith(where + ":")) and _lines(e["diff"]) == _lines(
                m.diff
            ):
                m.equivalent = e["reason"]
                used.add(i)
                break
    areas = {m.area for m in mutants}
    return [e for i, e in enumerate(entries) if i not in used and _entry_area(e) in areas]


def _entry_area(entry: dict) -> str:
    if entry["function"].startswith("tables/"):
        return "tables"
    return _area_of(entry["function"] + ".x", PYTHON_AREAS) or ""


def summary(mutants: list[Mutant]) -> dict:
    by_area: dict[str, dict] = {}
    for m in mutants:
        row = by_area.setdefault(
            m.area, {"mutants": 0, KILLED: 0, TIMEOUT: 0, SURVIVED: 0, NO_TESTS: 0, "equivalent": 0}
        )
        row["mutants"] += 1
        if m.equivalent is not None:
            row["equivalent"] += 1
        else:
            row[m.status if m.status in row else SURVIVED] += 1
    total = {
        k: sum(r[k] for r in by_area.values()) for k in ("mutants", KILLED, TIMEOUT, SURVIVED, NO_TESTS, "equivalent")
    }
    for row in (*by_area.values(), total):
        counted = row["mutants"] - row["equivalent"]
        row["score"] = round(100 * (row[KILLED] + row[TIMEOUT]) / counted, 1) if counted else None
    return {"areas": by_area, "total": total}


def report(c: Campaign, out) -> None:
    s = summary(c.mutants)
    print(
        f"{'area':<12}{'mutants':>8}{'killed':>8}{'timeout':>8}{'survived':>9}{'no tests':>9}"
        f"{'equiv.':>7}{'score %':>9}",
        file=out,
    )
    for area, row in [*sorted(s["areas"].items()), ("total", s["total"])]:
        print(
            f"{area:<12}{row['mutants']:>8}{row[KILLED]:>8}{row[TIMEOUT]:>8}{row[SURVIVED]:>9}"
            f"{row[NO_TESTS]:>9}{row['equivalent']:>7}{row['score'] if row['score'] is not None else '-':>9}",
            file=out,
        )
    survivors = [m for m in c.mutants if m.status in (SURVIVED, NO_TESTS) and m.equivalent is None]
    print(f"\nsurviving mutants ({len(survivors)}):", file=out)
    for m in survivors:
        print(f"  {m.name} [{m.status}]\n" + "\n".join("      " + line for line in m.diff.splitlines()), file=out)
    equivalent = [m for m in c.mutants if m.equivalent is not None]
    print(f"\nequivalent mutants ({len(equivalent)}, not scored):", file=out)
    for m in equivalent:
        print(f"  {m.name}: {m.equivalent}", file=out)
    if c.stale_equivalents:
        print(f"\nstale entries in {EQUIVALENTS.name} (no such surviving mutant any more):", file=out)
        for e in c.stale_equivalents:
            print(f"  {e['function']}: {e['diff']!r}", file=out)
    if c.seconds:
        print(f"\nwall time {c.seconds / 60:.1f} min", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--area", action="append", choices=AREAS, help="limit to an area (repeatable; default all)")
    ap.add_argument("--jobs", type=int, default=2, help="workers (default 2: the machine's cores)")
    ap.add_argument("--sample", type=int, help="test a random sample of this many Python mutants")
    ap.add_argument("--table-sample", type=int, help="test a random sample of this many table mutants")
    ap.add_argument("--seed", type=int, default=0, help="seed of the samples")
    ap.add_argument("--resume", action="store_true", help="keep mutants/ from the last run (mutmut's cache)")
    ap.add_argument("--report-only", action="store_true", help="report the last run without running anything")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    areas = args.area or list(AREAS)
    py_areas = [a for a in areas if a in PYTHON_AREAS]
    started = time.monotonic()
    c = Campaign()
    saved = MUTANTS / "tables-results.json"
    if args.report_only:
        c.mutants = python_mutants(py_areas) if py_areas else []
        if "tables" in areas and saved.exists():
            c.mutants += [Mutant(**m) for m in json.loads(saved.read_text())]
    else:
        if py_areas:
            c.mutants += run_python(py_areas, args.jobs, args.sample, args.seed, fresh=not args.resume)
        if "tables" in areas:
            tables = run_tables(args.jobs, args.table_sample, args.seed)
            saved.parent.mkdir(exist_ok=True)
            saved.write_text(json.dumps([m.__dict__ for m in tables], indent=1))
            c.mutants += tables
        c.seconds = time.monotonic() - started
    stale = apply_equivalents(c.mutants)
    # A sampled run cannot tell a stale entry from one whose mutant was not drawn.
    c.stale_equivalents = [] if args.sample or args.table_sample else stale
    report(c, sys.stdout)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summary": summary(c.mutants),
                    "seconds": c.seconds,
                    "mutants": [m.__dict__ for m in c.mutants],
                    "stale_equivalents": c.stale_equivalents,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
