"""The campaign driver: inputs run in watched worker processes, failures grouped by signature.

Inputs run in worker processes fed through one pipe each. A watchdog in the parent kills a worker
that has spent ``hang_timeout`` seconds of its own CPU time on one input (after asking faulthandler
for its stack), records a hang and carries on with a fresh worker, so a hang cannot stall the
campaign. CPU time, read from /proc/<pid>/stat, is what the input costs: a worker that waits for
a core on a loaded machine is not charged for the wait, so load cannot fail the campaign. A slow
input is timed twice and the faster run counts, and it is a failure only if a child forked from
the coordinator (no worker's accumulated heap) is over the limit too. Failures are grouped by signature (exception
type and the innermost amdocc frame).
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import multiprocessing as mp
import os
import re
import resource
import signal
import tempfile
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from multiprocessing.connection import wait as wait_connections
from pathlib import Path

from . import ROOT
from .contract import exercise, run_one
from .corpus import fixtures
from .inputs import generate
from .limits import (
    AS_LIMIT_MIB,
    HANG_TIMEOUT,
    RSS_LIMIT_MIB,
    TIME_LIMIT,
    current_rss_mib,
    limit_address_space,
    maxrss_mib,
    reset_peak_rss,
)


def _worker(conn, slot, seed, as_limit_mib, stack_file, time_limit):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_address_space(as_limit_mib)
    stack = open(stack_file, "w")  # noqa: SIM115 - faulthandler writes to it until the worker exits
    faulthandler.register(signal.SIGUSR1, file=stack, all_threads=False)
    baseline = current_rss_mib()
    bloated = False
    while not bloated:
        task = conn.recv()
        if task is None:
            break
        for index in task:
            case = generate(seed, index)
            # What an input costs is its own work: earlier inputs' garbage is collected before the
            # clock starts, and what they left alive (bounded caches, loaded tables) is frozen so the
            # collector does not walk it again and again while this input runs.
            gc.collect()
            gc.freeze()
            per_input = reset_peak_rss()
            slot[0] = index
            slot[2] = time.process_time()  # this process's CPU seconds when the input starts
            slot[1] = 1.0  # busy: the watchdog charges the CPU time from slot[2] to this input
            outcome, elapsed, wall, failure = run_one(case.data, case.mode)
            if elapsed > time_limit and failure is None:
                # A slow input is timed twice and the faster run counts (caches, allocator, GC).
                slot[2] = time.process_time()
                again = run_one(case.data, case.mode)
                elapsed, wall = min(elapsed, again[1]), min(wall, again[2])
            slot[1] = 0.0
            gc.unfreeze()
            conn.send(
                (
                    "result",
                    index,
                    case.fixture,
                    case.layer_kind,
                    case.mutators,
                    outcome,
                    elapsed,
                    wall,
                    maxrss_mib(),
                    per_input,
                    len(case.data),
                    failure,
                )
            )
            del case
            # Memory the allocator keeps after a big input would be charged to the next ones:
            # hand the rest of the chunk back and let a fresh worker take over.
            if current_rss_mib() > baseline + 256:
                bloated = True
                break
        conn.send(("done", bloated))
    conn.close()


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used, from /proc/<pid>/stat; None when it
    cannot be read (the process is gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # After "pid (comm)": state is field 3, utime and stime are fields 14 and 15 (proc(5)).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spent(w: Worker) -> float:
    """CPU seconds worker ``w`` has spent on the input it is on (0 when that cannot be read)."""
    now = cpu_seconds(w.proc.pid)
    return 0.0 if now is None else max(0.0, now - w.slot[2])


@dataclass
class Worker:
    proc: mp.Process
    conn: object
    slot: object
    stack_file: str
    chunk: list = field(default_factory=list)
    done: set = field(default_factory=set)
    retire: bool = False


@dataclass
class Stats:
    seed: str
    inputs: int = 0
    outcomes: Counter = field(default_factory=Counter)
    mutators: Counter = field(default_factory=Counter)
    layer_kinds: Counter = field(default_factory=Counter)
    fixtures: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)
    slowest: tuple = (0.0, -1)  # CPU seconds, input index
    slowest_wall: float = 0.0
    slow_list: list = field(default_factory=list)  # the five slowest: (seconds, index, mutators)
    # Over the limit in a worker, under it in a fresh process: (worker s, fresh s, index).
    slow_in_worker_only: list = field(default_factory=list)
    largest_input: int = 0
    peak_rss_mib: float = 0.0
    peak_rss_index: int = -1
    wall: float = 0.0
    jobs: int = 1
    time_limit: float = TIME_LIMIT
    rss_limit_mib: float = RSS_LIMIT_MIB

    def summary(self) -> dict:
        groups = Counter(f["signature"] for f in self.failures)
        return {
            "seed": self.seed,
            "inputs": self.inputs,
            "jobs": self.jobs,
            "wall_seconds": round(self.wall, 2),
            "outcomes": dict(self.outcomes),
            "mutators": dict(sorted(self.mutators.items())),
            "layer_kinds": dict(sorted(self.layer_kinds.items())),
            "failures": len(self.failures),
            "failure_kinds": dict(Counter(f["kind"] for f in self.failures)),
            "failure_signatures": dict(groups),
            "slowest_seconds": round(self.slowest[0], 4),
            "slowest_index": self.slowest[1],
            "slowest_five": [[round(t, 4), i, list(m)] for t, i, m in self.slow_list],
            "slowest_wall_seconds": round(self.slowest_wall, 4),
            "slow_in_worker_only": self.slow_in_worker_only,
            "largest_input_bytes": self.largest_input,
            "peak_rss_mib": round(self.peak_rss_mib, 1),
            "peak_rss_index": self.peak_rss_index,
            "time_limit_seconds": self.time_limit,
            "rss_limit_mib": self.rss_limit_mib,
        }


def run_campaign(
    seed,
    inputs: int,
    jobs: int = 2,
    *,
    time_limit: float = TIME_LIMIT,
    hang_timeout: float = HANG_TIMEOUT,
    rss_limit_mib: float = RSS_LIMIT_MIB,
    as_limit_mib: int = AS_LIMIT_MIB,
    chunk: int = 64,
    progress=None,
) -> Stats:
    """Run inputs 0..inputs-1 of ``seed`` on ``jobs`` watched worker processes."""
    seed = str(seed)
    fixtures()  # parse the fixtures once, before forking
    _warm_up()
    ctx = mp.get_context("fork")
    stats = Stats(seed, jobs=jobs, time_limit=time_limit, rss_limit_mib=rss_limit_mib)
    stats.peak_rss_mib = maxrss_mib()
    pending = deque(list(range(i, min(i + chunk, inputs))) for i in range(0, inputs, chunk))
    workers: list[Worker] = []
    tmp = tempfile.mkdtemp(prefix="amdocc-fuzz-")
    started = time.monotonic()
    spawned = 0
    next_report = 2000

    def spawn():
        nonlocal spawned
        parent, child = ctx.Pipe()
        slot = ctx.Array("d", [-1.0, 0.0, 0.0], lock=False)  # input index, busy, CPU seconds at its start
        spawned += 1
        stack_file = os.path.join(tmp, f"stack-{spawned}.txt")
        proc = ctx.Process(target=_worker, args=(child, slot, seed, as_limit_mib, stack_file, time_limit), daemon=True)
        proc.start()
        child.close()
        w = Worker(proc, parent, slot, stack_file)
        workers.append(w)
        feed(w)

    def feed(w):
        if pending and not w.retire:
            w.chunk, w.done = pending.popleft(), set()
            w.conn.send(w.chunk)
        else:
            w.chunk = []
            with contextlib.suppress(OSError):
                w.conn.send(None)
            w.proc.join(5)
            workers.remove(w)
            if pending and len(workers) < jobs:
                spawn()

    def lost(w, kind, detail, stack=""):
        """A worker died or hung: record the input it was on, requeue the rest of its chunk."""
        index = int(w.slot[0]) if w.slot[1] else None
        if index is not None:
            case = generate(seed, index)
            stats.failures.append(
                {
                    "index": index,
                    "kind": kind,
                    "signature": f"{kind}: {detail}",
                    "exception": kind,
                    "message": detail,
                    "traceback": stack,
                    "elapsed": spent(w) if kind == "hang" else None,
                    "fixture": case.fixture,
                    "layer": case.layer_path,
                    "mutations": case.mutations,
                }
            )
            stats.inputs += 1
            w.done.add(index)
        rest = [i for i in w.chunk if i not in w.done]
        if rest:
            pending.appendleft(rest)
        workers.remove(w)
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join(5)
        if pending:
            spawn()

    for _ in range(max(1, min(jobs, len(pending)))):
        spawn()
    while workers:
        ready = wait_connections([w.conn for w in workers], timeout=0.2)
        for conn in ready:
            w = next((x for x in workers if x.conn is conn), None)
            if w is None:
                continue
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                w.proc.join(1)
                lost(w, "died", f"worker exited with status {w.proc.exitcode}")
                continue
            if msg[0] == "done":
                rest = [i for i in w.chunk if i not in w.done]
                if rest:
                    pending.appendleft(rest)
                w.retire = w.retire or msg[1]
                feed(w)
                continue
            _, index, fixture, layer_kind, mutators, outcome, elapsed, wall, rss, per_input, size, failure = msg
            stats.largest_input = max(stats.largest_input, size)
            stats.slowest_wall = max(stats.slowest_wall, wall)
            w.done.add(index)
            stats.inputs += 1
            stats.outcomes[outcome] += 1
            stats.fixtures[fixture] += 1
            stats.layer_kinds[layer_kind] += 1
            for name in set(mutators):
                stats.mutators[name] += 1
            if elapsed > stats.slowest[0]:
                stats.slowest = (elapsed, index)
            if len(stats.slow_list) < 5 or elapsed > stats.slow_list[-1][0]:
                stats.slow_list = sorted([*stats.slow_list, (elapsed, index, mutators)], reverse=True)[:5]
            if rss > stats.peak_rss_mib:
                stats.peak_rss_mib, stats.peak_rss_index = rss, index
            base = {"index": index, "fixture": fixture, "elapsed": elapsed}
            if failure is not None:
                stats.failures.append({**base, **failure})
            if elapsed > time_limit:
                stats.failures.append(
                    {
                        **base,
                        "kind": "slow",
                        "signature": "slow: over the time limit",
                        "exception": "slow",
                        "message": f"{elapsed:.3f} s of CPU ({wall:.3f} s wall) > {time_limit} s",
                        "traceback": "",
                    }
                )
            if rss > rss_limit_mib and not w.retire:
                stats.failures.append(
                    {
                        **base,
                        "kind": "rss",
                        "signature": "rss: peak RSS over the bound",
                        "exception": "rss",
                        "message": f"peak RSS {rss:.0f} MiB > {rss_limit_mib} MiB",
                        "traceback": "",
                    }
                )
                # Without a per-input reset the peak stays high: finish the chunk, then a fresh worker.
                w.retire = not per_input
        for w in list(workers):
            if w.slot[1] and spent(w) > hang_timeout:
                os.kill(w.proc.pid, signal.SIGUSR1)  # faulthandler writes the stuck stack
                time.sleep(0.3)
                stack = Path(w.stack_file).read_text(errors="replace") if os.path.exists(w.stack_file) else ""
                where = _innermost_amdocc(stack)
                lost(w, "hang", f"no answer within {hang_timeout:g} s of CPU{' at ' + where if where else ''}", stack)
            elif not w.proc.is_alive() and not w.conn.poll():
                lost(w, "died", f"worker exited with status {w.proc.exitcode}")
        if progress and stats.inputs >= next_report:
            next_report += 2000
            progress(stats)
    stats.wall = time.monotonic() - started
    overall = max(maxrss_mib(), maxrss_mib(resource.RUSAGE_CHILDREN))  # the parent; workers' lifetimes
    if overall > stats.peak_rss_mib:
        stats.peak_rss_mib, stats.peak_rss_index = overall, -1
    _confirm_slow(stats, hang_timeout, as_limit_mib)
    for f in stats.failures:
        f.setdefault("mutations", None)
    return stats


def check_in_child(
    data: bytes, timeout: float, mode: str = "bytes", as_limit_mib: int = AS_LIMIT_MIB
) -> tuple[str | None, float, float]:
    """The failure signature of ``data`` (None if it passes), its time and its peak RSS (MiB),
    in a forked child limited like a campaign worker."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def body():
        limit_address_space(as_limit_mib)
        gc.collect()  # what the parent left alive is not this input's to walk
        gc.freeze()
        reset_peak_rss()
        _outcome, elapsed, _wall, failure = run_one(data, mode)
        child.send((failure["signature"] if failure else None, elapsed, maxrss_mib()))

    proc = ctx.Process(target=body, daemon=True)
    proc.start()
    child.close()
    if parent.poll(timeout):
        try:
            result = parent.recv()
        except EOFError:  # signed as the campaign signs a worker that died (lost), so it matches
            proc.join(5)
            result = (f"died: worker exited with status {proc.exitcode}", timeout, 0.0)
    else:
        result = ("hang", timeout, 0.0)
    if proc.is_alive():
        proc.kill()
    proc.join(5)
    parent.close()
    return result


# A slow input is timed again in a child forked from the coordinator, at most this many of them:
# a worker that has run thousands of inputs can be slower than the input alone costs.
CONFIRM_SLOW = 8


def _confirm_slow(stats: Stats, hang_timeout: float, as_limit_mib: int) -> None:
    """Keep a "slow" failure only if the input is over the limit in a fresh child too (twice
    in the worker and once there: the fastest run is what the input costs). Inputs that were slow
    only in a long-lived worker are counted in ``slow_in_worker_only``."""
    kept, confirmed = [], 0
    for f in stats.failures:
        if f["kind"] == "slow" and confirmed < CONFIRM_SLOW:
            confirmed += 1
            case = generate(stats.seed, f["index"])
            sig, elapsed, _rss = check_in_child(case.data, hang_timeout, case.mode, as_limit_mib)
            if sig is None and elapsed <= stats.time_limit:
                stats.slow_in_worker_only.append((round(f["elapsed"], 4), round(elapsed, 4), f["index"]))
                _counted_as(stats, f["index"], elapsed)
                continue
            f["message"] += f"; {elapsed:.3f} s in a fresh process"
        kept.append(f)
    stats.failures = kept


def _counted_as(stats: Stats, index: int, elapsed: float) -> None:
    """Input ``index`` costs ``elapsed`` CPU seconds after all: the slowest five say so."""
    stats.slow_list = sorted(((min(t, elapsed) if i == index else t), i, m) for t, i, m in stats.slow_list)[::-1]
    stats.slowest = (stats.slow_list[0][0], stats.slow_list[0][1]) if stats.slow_list else (0.0, -1)


def _innermost_amdocc(stack: str) -> str:
    hits = re.findall(r'File "([^"]*amdocc[^"]*)", line (\d+) in (\w+)', stack)
    if not hits:
        return ""
    path, line, fn = hits[0]  # faulthandler prints the innermost frame first
    return f"{os.path.relpath(path, ROOT)}:{line} in {fn}"


def _warm_up() -> None:
    """Load every fixture once so lazy imports and tables do not count against input 0."""
    for fx in fixtures():
        with contextlib.suppress(Exception):  # the campaign reports real failures itself
            exercise(fx.data)
