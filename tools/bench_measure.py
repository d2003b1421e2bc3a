"""One command measured as its own process tree: wall and CPU time, peak memory, worker count.

Shared by tools/bench_inspect.py and tools/bench_scale.py. CPU time is the tree's (the command
and every process it waited for), the load-robust half on a shared machine; peak memory is
sampled every few milliseconds from /proc as the sum of the tree's resident sets (a pool's
workers count too) and as its largest single process; ``workers`` is the most child processes
seen at once, i.e. the --jobs a default run chose (0 for one process).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass

POLL = 0.005


@dataclass
class Run:
    wall: float
    cpu: float
    peak_mib: int  # largest sum of the tree's resident sets seen
    largest_mib: int  # largest single process (ru_maxrss of the tree)
    workers: int
    code: int

    def better(self, other: Run | None) -> Run:
        """The faster of two runs, keeping the larger memory and worker counts seen."""
        if other is None:
            return self
        best = self if self.wall <= other.wall else other
        return Run(
            best.wall,
            min(self.cpu, other.cpu),
            max(self.peak_mib, other.peak_mib),
            max(self.largest_mib, other.largest_mib),
            max(self.workers, other.workers),
            best.code,
        )


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(cmd: list[str], env: dict | None = None, stdout=subprocess.DEVNULL, shell: bool = False) -> Run:
    """Run ``cmd`` once, sampling its process tree until it ends."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.PIPE, shell=shell)
    peak = workers = 0
    # The command's own process: with shell=True that is the shell, whose child is the command.
    while True:
        done, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if done:
            break
        tree, frontier = [proc.pid], [proc.pid]
        while frontier:
            kids = [k for p in frontier for k in _children(p)]
            tree += kids
            frontier = kids
        top = _children(proc.pid) if not shell else [k for p in _children(proc.pid) for k in _children(p)]
        workers = max(workers, len(top))
        peak = max(peak, sum(_rss_kib(p) for p in tree))
        time.sleep(POLL)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(map(str, cmd))[:200]} failed ({proc.returncode}): {err.strip()[:300]}")
    return Run(
        wall,
        usage.ru_utime + usage.ru_stime,
        max(peak, usage.ru_maxrss) // 1024,
        usage.ru_maxrss // 1024,
        workers,
        proc.returncode,
    )


def best_of(runs: dict[str, list[str]], repeat: int, env: dict | None = None) -> dict[str, Run]:
    """Each command ``repeat`` times, interleaved (load on a shared machine hits all alike);
    the fastest run of each, with the largest memory and worker counts seen."""
    best: dict[str, Run | None] = {label: None for label in runs}
    for _ in range(repeat):
        for label, cmd in runs.items():
            best[label] = run(cmd, env).better(best[label])
    return best


def load_line() -> str:
    one, five, fifteen = os.getloadavg()
    try:
        with open("/proc/loadavg") as fh:
            running = fh.read().split()[3]
    except OSError:
        running = "?"
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}, running now {running}, {os.cpu_count()} CPUs"
