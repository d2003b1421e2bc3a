"""Files across processes, in order, with a progress line on a terminal.

Large inputs are directory trees of thousands of files (a library install, a wheel's kernels).
Each file is independent, so a process pool reads them concurrently; results come back in file
order so output is the same as a serial run. A single file is still streamed entry by entry in
one process (memory stays bounded by the largest code object, not by the file).
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator

MIN_FILES_FOR_POOL = 32     # below this, starting workers costs more than it saves


def expand(paths: list[str]) -> list[tuple[str, bool]]:
    """(path, found in a directory walk) for every file to read; "-" and plain files as given."""
    from ..containers import iter_files

    out = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            out.extend((f, True) for f in iter_files(p))
        else:
            out.append((p, False))
    return out


def jobs_for(requested: int | None, files: int) -> int:
    if requested is not None and requested > 0:
        return min(requested, max(files, 1))
    return min(os.cpu_count() or 1, files) if files >= MIN_FILES_FOR_POOL else 1


class Progress:
    """"N/M files" on stderr, redrawn at most ten times a second, only when stderr is a terminal."""

    def __init__(self, total: int, enabled: bool | None = None):
        self.total, self.done, self.last = total, 0, 0.0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def step(self, note: str = "") -> None:
        self.done += 1
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.1 or self.done == self.total):
            self.last = now
            sys.stderr.write(f"\r{self.done}/{self.total} files {note}".ljust(60))
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def run(files: list[tuple[str, bool]], worker: Callable, options, jobs: int) -> Iterator:
    """Everything the generator ``worker((path, in_directory), options)`` yields for each file,
    in file order. On one process it streams; on ``jobs`` processes each file's items come back
    as one list."""
    progress = Progress(len(files))
    try:
        if jobs <= 1:
            for item in files:
                yield from worker(item, options)
                progress.step()
            return
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        with ctx.Pool(jobs) as pool:
            chunk = max(1, min(64, len(files) // (jobs * 8)))
            for results in pool.imap(_call, [(worker, item, options) for item in files], chunksize=chunk):
                yield from results
                progress.step()
    finally:
        progress.close()


def _call(packed):
    worker, item, options = packed
    return list(worker(item, options))


def read(item: tuple[str, bool]) -> Iterator[tuple[str, object]]:
    """One file of ``expand``, as a worker reports it: ("code_object", CodeObject), and
    ("skipped", record) and ("error", record) for what is passed over or cannot be read (the
    JSON records of amdocc.report, located as their messages say)."""
    from ..codeobject import CodeObject
    from ..containers import Skipped
    from ..errors import AmdoccError
    from ..loader import iter_load
    from .. import report

    path, in_directory = item
    try:
        for x in iter_load(path, in_directory=in_directory):
            if isinstance(x, CodeObject):
                yield "code_object", x
            elif isinstance(x, Skipped):
                yield "skipped", report.skipped_record(x)
            else:
                yield "error", report.failed_record(x)
    except AmdoccError as exc:
        yield "error", report.error_record(exc, path)


def kernel_error(co, kernel, exc) -> dict:
    """An error evaluating one kernel, as a record: the rest of its file is still evaluated."""
    from .. import report

    return {**report.origin_record(co.origin), "kernel": kernel.name, "error": f"{co.origin}: {kernel.name}: {exc}"}

