"""What one input may cost, and how a process measures it.

Time is CPU time, so other load on the machine does not fail an input: the time limit is the
worker's own process_time() per input, and the watchdog calls an input a hang once the worker
has spent HANG_TIMEOUT seconds of CPU on it (read from /proc/<pid>/stat). Peak RSS is reset before each input through
/proc/self/clear_refs and read from ``ru_maxrss`` after it; address space is capped so a
runaway allocation becomes a reported MemoryError instead of the machine swapping.
"""

from __future__ import annotations

import os
import resource

TIME_LIMIT = 1.0  # seconds per input
HANG_TIMEOUT = 10.0  # CPU seconds: the watchdog kills a worker that spends this much on one input
RSS_LIMIT_MIB = 1024  # peak resident set size of any campaign process
AS_LIMIT_MIB = 4096  # address-space cap of a worker: runaway allocations raise MemoryError


def maxrss_mib(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # KiB on Linux


def current_rss_mib() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1048576
    except (OSError, ValueError, IndexError):
        return maxrss_mib()


def reset_peak_rss() -> bool:
    """Start a new peak-RSS measurement for this process (Linux: clear_refs 5 resets VmHWM,
    and with it ru_maxrss), so each input's peak is its own. False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def limit_address_space(as_limit_mib: int) -> None:
    if as_limit_mib:
        limit = as_limit_mib << 20
        try:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        except (ValueError, OSError):
            pass
