"""Files across processes, in order, with a progress line on a terminal.

Large inputs are directory trees of thousands of files (a library install, a wheel's kernels)
or one huge library. Work is scheduled by size: small files are batched by bytes, and a large
host library is cut at container boundaries (``containers.plan``) so its bundles spread over
the workers instead of one worker holding the whole file's output. Results come back in file
order, so output is the same as a serial run, and each worker holds one batch at a time, so
memory stays bounded per worker. In one process everything is streamed entry by entry.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator

MIN_FILES_FOR_POOL = 32     # below this, starting workers costs more than it saves
SPLIT_BYTES = 32 << 20      # a file this large is worth cutting into pieces for the workers
BATCH_BYTES = 2 << 20       # small files go to a worker in batches of about this many bytes


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


def jobs_for(requested: int | None, files) -> int:
    """Processes to use for ``files`` (a count, or the (path, in_directory) list): a pool for
    many files or for one library large enough to cut into pieces, else one."""
    count = files if isinstance(files, int) else len(files)
    if requested is not None and requested > 0:
        return min(requested, max(count, 1)) if isinstance(files, int) else requested
    if count >= MIN_FILES_FOR_POOL:
        return os.cpu_count() or 1
    if not isinstance(files, int) and any(_size(p) >= SPLIT_BYTES for p, _ in files):
        return os.cpu_count() or 1
    return 1


def tasks_for(files: list[tuple[str, bool]]) -> list[tuple]:
    """What the workers read: whole files, with each large library cut into pieces."""
    from ..containers import plan

    out = []
    for path, in_directory in files:
        pieces = plan(path) if path != "-" and _size(path) >= SPLIT_BYTES else None
        if pieces and len(pieces) > 1:
            out.extend((piece, False) for piece in pieces)
        else:
            out.append((path, in_directory))
    return out


def _size(item) -> int:
    if not isinstance(item, str):
        return item.size             # a Piece
    try:
        return os.path.getsize(item) if item != "-" else 0
    except OSError:
        return 0


def batches(tasks: list[tuple], jobs: int) -> list[list[tuple]]:
    """Consecutive tasks grouped by bytes (and count, so every worker gets several batches)."""
    most = max(1, min(64, len(tasks) // (jobs * 8)))
    out: list[list[tuple]] = []
    size = 0
    for task in tasks:
        if not out or size >= BATCH_BYTES or len(out[-1]) >= most:
            out.append([])
            size = 0
        out[-1].append(task)
        size += _size(task[0])
    return out


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
    in file order (``path`` may be a ``containers.Piece`` of a large library, which
    ``amdocc.iter_load`` reads like a file). On one process it streams; on ``jobs`` processes
    each batch's items come back as one list."""
    tasks = tasks_for(files) if jobs > 1 else files
    progress = Progress(len(tasks))
    try:
        if jobs <= 1 or len(tasks) <= 1:
            for item in tasks:
                yield from worker(item, options)
                progress.step()
            return
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        with ctx.Pool(min(jobs, len(tasks))) as pool:
            for results in pool.imap(_call, [(worker, batch, options) for batch in batches(tasks, jobs)]):
                for done, items in results:
                    yield from items
                    progress.step()
    finally:
        progress.close()


def _call(packed):
    worker, batch, options = packed
    return [(item, list(worker(item, options))) for item in batch]
