"""Hostile input, fuzzed and bounded: only AmdoccError escapes, nothing hangs or balloons.

Two tiers. Hypothesis drives the mutations of tools/fuzz/ (tests/fuzz_strategies.py) in this
process: a few hundred examples, each run through ``amdocc.load`` and both renderers. The
campaign runs the fuzzer itself (``python tools/fuzz``) for 20,000 seeded inputs on two watched
worker processes and fails on any escaped exception, any input taking over 1 s of CPU, any input
on which a worker spends 10 s of CPU (a hang), or a worker's peak RSS over 1 GiB while it handles
one input. Every bound is CPU time or a count, never wall time, so a busy machine cannot fail
it: the worker's process_time() for the time limit, its /proc/<pid>/stat CPU time for the hang
watchdog, and in this process a CPU-time timer (ITIMER_PROF) per Hypothesis example. It takes
about 25 s on two cores. Its seed is new on every
run and printed; ``AMDOCC_FUZZ_SEED`` fixes it and ``AMDOCC_FUZZ_INPUTS`` sets the count, e.g.
to replay a failure seen in CI:

    AMDOCC_FUZZ_SEED=1234 python3 -m pytest -q -s tests/test_fuzz.py -k campaign
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from fuzz.contract import exercise
from fuzz.inputs import generate, mutate
from fuzz.limits import RSS_LIMIT_MIB, TIME_LIMIT
from fuzz.mutators import MUTATORS
from fuzz_strategies import (
    container_header_edits,
    elf_header_edits,
    metadata_edits,
    mutated_inputs,
    section_header_edits,
)

HANG_SECONDS = 10  # CPU seconds: an example that costs this much is a hang, not a slow input
CAMPAIGN_CPU_SECONDS = 1800  # RLIMIT_CPU of each campaign process: a runaway is killed, not waited for
PROPERTY = settings(
    deadline=None,
    max_examples=400,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@contextmanager
def hang_alarm(seconds: float = HANG_SECONDS):
    """Turn a hang into a failure of this example instead of a stuck test run. The timer counts
    this process's CPU time (user + system: ITIMER_PROF, delivered as SIGPROF), not wall time, so
    an example that waits for a core on a loaded machine is not charged for the wait."""

    def expire(signum, frame):
        raise TimeoutError(f"no answer within {seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _cpu_bounded():
    """In the campaign's process (before exec; inherited by its workers): at most
    CAMPAIGN_CPU_SECONDS of CPU each, so a runaway ends the run instead of stalling CI."""
    resource.setrlimit(resource.RLIMIT_CPU, (CAMPAIGN_CPU_SECONDS, CAMPAIGN_CPU_SECONDS))


def only_amdocc_errors(data: bytes, mode: str = "bytes") -> None:
    """fuzz.contract.exercise raises whatever is not an AmdoccError (and breaches of the contract)."""
    with hang_alarm():
        exercise(data, mode)


@PROPERTY
@given(mutated_inputs())
def test_mutated_fixtures_only_raise_amdocc_errors(case):
    note = f"{case.fixture} [{case.layer_path}] " + "; ".join(f"{n}: {d}" for n, d in case.mutations)
    try:
        only_amdocc_errors(case.data, case.mode)
    except BaseException:
        print(f"input: {note} (mode {case.mode}, {len(case.data)} bytes)")
        raise


FIELD_EDITS = {
    "elf header": elf_header_edits,
    "section headers": section_header_edits,
    "metadata values": metadata_edits,
    "container headers": container_header_edits,
}


@pytest.mark.parametrize("edits", FIELD_EDITS.values(), ids=FIELD_EDITS.keys())
@settings(PROPERTY, max_examples=200)
@given(draw=st.data())
def test_hostile_field_values_only_raise_amdocc_errors(edits, draw):
    data, _note = draw.draw(edits(), label="edit")
    only_amdocc_errors(data)


def test_inputs_depend_on_seed_and_index_only():
    a, b = generate(7, 123), generate(7, 123)
    assert a.data == b.data and a.mutations == b.mutations and a.mode == b.mode
    assert generate(8, 123).data != a.data or generate(8, 123).mutations != a.mutations


def test_every_mutator_applies_to_some_fixture():
    for name in MUTATORS:
        changed = 0
        for i in range(12):
            case = mutate(random.Random(f"{name}:{i}"), only=name)
            changed += bool(case.mutations) and case.data != case.layer_before and case.layer_after != case.layer_before
        assert changed, f"mutator {name} never changed an input"


def _campaign_settings():
    seed = os.environ.get("AMDOCC_FUZZ_SEED") or str(random.SystemRandom().randrange(1 << 32))
    inputs = int(os.environ.get("AMDOCC_FUZZ_INPUTS", "20000"))
    return seed, inputs


@pytest.mark.slow
def test_fuzz_campaign(tmp_path):
    """20,000 seeded inputs, two workers: no escaped exception, no input over 1 s, RSS under 1 GiB."""
    # The bound on memory: 1 GiB of peak RSS for a worker process handling any one input (its own
    # footprint, about 70 MiB, included); inputs are at most a few MiB.
    seed, inputs = _campaign_settings()
    print(f"\nfuzz campaign: seed {seed}, {inputs} inputs (AMDOCC_FUZZ_SEED={seed} replays it)", flush=True)
    summary_path = tmp_path / "summary.json"
    out_dir = tmp_path / "reproducers"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "fuzz"),
            "--inputs",
            str(inputs),
            "--seed",
            seed,
            "--jobs",
            "2",
            "--out",
            str(out_dir),
            "--summary-json",
            str(summary_path),
            "--time-limit",
            str(TIME_LIMIT),
            "--rss-limit-mib",
            str(RSS_LIMIT_MIB),
            "--minimize-seconds",
            "20",
        ],
        capture_output=True,
        text=True,
        preexec_fn=_cpu_bounded,
        cwd=ROOT,
    )
    print(proc.stdout)
    print(proc.stderr[-4000:], file=sys.stderr)
    summary = json.loads(summary_path.read_text())
    reproducers = sorted(out_dir.glob("*.txt")) if out_dir.exists() else []
    for path in reproducers:  # what failed and how, in the test's output
        print(f"--- {path.name}\n" + "\n".join(path.read_text().splitlines()[:40]))
    assert summary["inputs"] == inputs, "the campaign did not try every input"
    assert summary["failures"] == 0, (
        f"seed {seed}: {summary['failures']} failing inputs {summary['failure_kinds']} "
        f"{summary['failure_signatures']}; reproducers in {out_dir}"
    )
    assert summary["slowest_seconds"] <= TIME_LIMIT
    assert summary["peak_rss_mib"] < RSS_LIMIT_MIB
    assert proc.returncode == 0


def test_the_hang_timer_counts_cpu_time_not_waiting():
    # Sleeping costs no CPU: half a second of it under a 0.1 s CPU bound is no hang however
    # loaded the machine is; spinning is, once it has used 0.1 s of CPU (process_time, the oracle).
    with hang_alarm(0.1):
        time.sleep(0.5)
    start = time.process_time()
    with pytest.raises(TimeoutError, match="of CPU time"), hang_alarm(0.1):
        for _ in range(10**10):  # a bound in steps, far beyond 0.1 s of CPU
            pass
    assert time.process_time() - start >= 0.1 - 0.02  # the kernel's CPU accounting is in ticks


def test_the_campaign_watchdog_reads_a_workers_cpu_time():
    # /proc/<pid>/stat's utime + stime against the child's own process_time(), which it prints
    # after spinning for 0.3 s of CPU and before it sleeps; a sleeping child adds nothing.
    from fuzz.campaign import cpu_seconds

    code = "import time\nwhile time.process_time() < 0.3: pass\nprint(time.process_time(), flush=True)\ntime.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        own = float(child.stdout.readline())
        seen = cpu_seconds(child.pid)
        assert seen is not None and abs(seen - own) <= 0.05, (seen, own)  # clock ticks are 10 ms
        time.sleep(0.3)
        assert cpu_seconds(child.pid) - seen < 0.05  # waiting is not charged
    finally:
        child.kill()
        child.wait()
    assert cpu_seconds(child.pid) is None  # gone


def _slow_failure(index: int) -> dict:
    return {"index": index, "fixture": "", "elapsed": 2.0, "kind": "slow", "signature": "slow", "message": "slow"}


def test_a_slow_input_is_a_failure_only_if_a_fresh_process_is_slow_too():
    # Input 0 of any seed costs far less than 60 s of CPU in a fresh child, so a worker's "slow"
    # is dropped (and its time counted as the fresh one); under a limit of 0 s no run can be fast
    # enough, so the failure stays, with the fresh time beside the worker's.
    from fuzz.campaign import Stats, _confirm_slow

    fast = Stats("7", time_limit=60.0)
    fast.failures = [_slow_failure(0)]
    fast.slow_list = [(2.0, 0, ())]
    _confirm_slow(fast, hang_timeout=60.0, as_limit_mib=4096)
    assert fast.failures == []
    assert [index for _worker, _fresh, index in fast.slow_in_worker_only] == [0]
    assert fast.slowest[0] < 2.0 and fast.slowest[1] == 0

    slow = Stats("7", time_limit=0.0)
    slow.failures = [_slow_failure(0)]
    _confirm_slow(slow, hang_timeout=60.0, as_limit_mib=4096)
    assert [f["index"] for f in slow.failures] == [0]
    assert "in a fresh process" in slow.failures[0]["message"]


def test_a_child_that_dies_is_signed_as_the_campaign_signs_a_dead_worker(monkeypatch):
    # The minimizer re-runs a "died" input in a fresh child and compares signatures: the child's
    # must read as the campaign's ("died: worker exited with status -11"), or a crash that does
    # reproduce is reported "NOT reproduced in a fresh process" (as a SIGSEGV in LLVM 22 was).
    import fuzz.campaign as campaign

    def crash(data, mode):
        import faulthandler

        faulthandler.disable()  # the child's death is the point: no dump of its stack in the log
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(campaign, "run_one", crash)
    signature, _elapsed, _rss = campaign.check_in_child(b"", timeout=60.0)
    assert signature == f"died: worker exited with status {-signal.SIGSEGV}"
