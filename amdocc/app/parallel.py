"""Files across processes, in order, telling a progress callback (the CLI's line on a terminal).

Large inputs are directory trees of thousands of files (a library install, a wheel's kernels)
or one huge library. Work is scheduled by size: small files are batched by bytes, and a large
host library is cut at container boundaries (``containers.plan``) so its bundles spread over
the workers instead of one worker holding the whole file's output. Results come back in file
order, so output is the same as a serial run, and each worker holds one batch at a time, so
memory stays bounded per worker. In one process everything is streamed entry by entry.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar

from ..errors import AmdoccWarning

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult
    from typing import TypeAlias

    from ..containers import NotWalked
    from ..containers.pieces import Part
    from .reading import Event, FileItem

    # (item, role): role "last" ends a file, "part" does not, "local" is read by the main process.
    Task: TypeAlias = tuple[FileItem, str]
    # A worker's batch done: (task, role, its events) each, and the file holding spilled items.
    Results: TypeAlias = tuple[list[tuple[FileItem, str, list[Event]]], str | None]

Options = TypeVar("Options")  # what a command's worker needs besides the file (picklable)

MIN_FILES_FOR_POOL = 32  # below this, starting workers costs more than it saves
SPLIT_BYTES = 32 << 20  # a file this large is worth cutting into pieces for the workers
BATCH_BYTES = 2 << 20  # small files go to a worker in batches of about this many bytes
# Batches per worker queued or waiting to be printed. Results are taken in file order, so a slow
# batch at the head stops new work from being handed out once this many wait behind it: with 2
# per worker a census of the onnxruntime wheel left a worker idle for half a second behind one
# library part that took 1.3 s; 4 keeps both busy (each held result is a batch's small items).
IN_FLIGHT = 4


def expand(paths: list[str]) -> list[tuple[str | NotWalked, bool]]:
    """(path, found in a directory walk) for every file to read; "-" and plain files as given.
    What a walk does not read (a directory that cannot be listed, a second link to a directory)
    is kept in its place as a NotWalked, which the reader reports as an error or a skip."""
    from ..containers import NotWalked, iter_files
    from ..errors import AmdoccError

    out: list[tuple[str | NotWalked, bool]] = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            try:
                out.extend((f, True) for f in iter_files(p))
            except AmdoccError as exc:  # the directory named cannot be listed: one error entry
                out.append((NotWalked(p, exc.message, True), True))
        else:
            out.append((p, False))
    return out


def jobs_for(requested: int | None, files: int | list[tuple[str | NotWalked, bool]]) -> int:
    """Processes to use for ``files`` (a count, or the (path, in_directory) list): a pool for
    many files or for one input large enough to cut into parts, else one."""
    count = files if isinstance(files, int) else len(files)
    if requested is not None and requested > 0:
        requested = capped_jobs(requested)
        return min(requested, max(count, 1)) if isinstance(files, int) else requested
    if count >= MIN_FILES_FOR_POOL:
        return idle_cpus()
    if not isinstance(files, int) and any(_size(p) >= SPLIT_BYTES for p, _ in files):
        return idle_cpus()
    return 1


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, as taskset(1) sets it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def capped_jobs(requested: int) -> int:
    """``jobs`` N, at most the CPUs available: more processes than CPUs only wait for one another
    and add their memory (5000 would start 5,000 interpreters). Above it, an AmdoccWarning says
    so and the CPU count is used."""
    cpus = available_cpus()
    if requested <= cpus:
        return requested
    warnings.warn(
        AmdoccWarning(
            f"{{jobs}} {requested} is more than the {cpus} CPU(s) this process may use; using {cpus}",
            params=("jobs",),
        ),
        stacklevel=2,
    )
    return cpus


def idle_cpus() -> int:
    """CPUs not busy with other work, at least one: the CPU count less the processes running
    elsewhere right now. On a machine other work keeps busy, workers that wait for a core are
    slower than one process; on a quiet one every core is used."""
    return max(1, available_cpus() - running_elsewhere())


def running_elsewhere(loadavg: str = "/proc/loadavg") -> int:
    """Processes running or ready to run besides this one: Linux's instant count (the fourth
    field of /proc/loadavg counts this process too), else the one-minute load average. The
    instant count, because the average still remembers a minute of work that has ended (an
    earlier run of amdocc itself, in a loop of runs)."""
    try:
        with open(loadavg) as fh:
            return max(0, int(fh.read().split()[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.getloadavg()[0] + 0.5)
    except OSError:
        return 0


def warm_up() -> None:
    """Import the readers and load the processor table once, before the workers are forked,
    so each worker starts with them instead of loading its own copy."""
    from .. import loader, report  # noqa: F401 - loader: the readers every worker runs
    from ..demangle import demangle
    from ..targets import target_by_mach
    from . import reading, selection  # noqa: F401 - every worker's reader; a filtering worker's matcher

    target_by_mach(0)
    # What each worker would otherwise load on its first file: the demangler and the JSON encoder.
    demangle("_Z1fv")
    report.compact_json({}, plain=True)


def tasks_for(files: list[tuple[str | NotWalked, bool]], spill_dir: str) -> Iterator[Task]:
    """((item, in_directory), role) for the workers: whole files, and each large library or
    wheel cut into parts (``containers.plan``). Role "last" ends a file (for the progress
    line), "part" does not, and "local" is a large file that cannot be cut: the main process
    streams it, so no worker holds its whole output."""
    from ..containers import Limits, plan

    limits = Limits.from_env()
    for path, in_directory in files:
        big = isinstance(path, str) and path != "-" and _size(path) >= SPLIT_BYTES
        parts = plan(path, limits, spill_dir=spill_dir) if big and isinstance(path, str) else None
        if parts:
            for i, part in enumerate(parts):
                yield (part, False), "last" if i == len(parts) - 1 else "part"
        else:
            yield (path, in_directory), "local" if big else "last"


def _size(item: str | Part | NotWalked) -> int:
    if not isinstance(item, str):
        return getattr(item, "size", 0)  # a part of a cut-up input; nothing to read for a NotWalked
    try:
        return os.path.getsize(item) if item != "-" else 0
    except OSError:
        return 0


def batches(tasks: Iterable[Task], most: int) -> Iterator[list[Task]]:
    """Consecutive tasks grouped by bytes and count; a "local" task travels alone."""
    batch: list[Task] = []
    size = 0
    for task in tasks:
        if task[1] == "local":
            if batch:
                yield batch
            yield [task]
            batch, size = [], 0
            continue
        batch.append(task)
        size += _size(task[0][0])
        if size >= BATCH_BYTES or len(batch) >= most:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class Progress(Protocol):
    """What a run tells as it goes: ``step(done, total)`` after each file, ``close()`` at the end."""

    def step(self, done: int, total: int) -> None: ...

    def close(self) -> None: ...


class _Silent:
    def step(self, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


#: Makes the Progress a run reports to (none by default: a library call draws nothing; the
#: command line sets one that draws "N/M files" on a terminal).
PROGRESS: ContextVar[Callable[[], Progress] | None] = ContextVar("amdocc_progress", default=None)


def run(
    files: list[tuple[str | NotWalked, bool]],
    worker: Callable[[FileItem, Options], Iterable[Event]],
    options: Options,
    jobs: int,
) -> Iterator[Event]:
    """Everything the generator ``worker((path, in_directory), options)`` yields for each file,
    in file order (``path`` may be a part of a large input, which ``amdocc.iter_load`` reads
    like a file). On one process it streams; on ``jobs`` processes each batch's items come back
    as one list, while the main process writes what came before."""
    make = PROGRESS.get()
    progress: Progress = make() if make is not None else _Silent()
    total, done = len(files), 0
    try:
        if jobs <= 1:
            for item in files:
                yield from worker(item, options)
                done += 1
                progress.step(done, total)
            return
        import multiprocessing

        most = max(1, min(64, len(files) // (jobs * 8)))
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        with tempfile.TemporaryDirectory(prefix="amdocc-parts-") as spill, ctx.Pool(jobs) as pool:
            # A thread plans the work (cutting a wheel writes its large members out) while the
            # workers read; at most IN_FLIGHT batches per worker are queued or held as results,
            # so memory does not grow when output is written slower than it is produced.
            work = _prefetch(batches(tasks_for(files, spill), most), IN_FLIGHT * jobs)
            pending: collections.deque[AsyncResult[Results]] = collections.deque()
            for batch in itertools.islice(work, IN_FLIGHT * jobs):
                pending.append(pool.apply_async(_call, ((worker, batch, options, spill),)))
            while pending:
                results, spilled = pending.popleft().get()
                following = next(work, None)
                if following is not None:
                    pending.append(pool.apply_async(_call, ((worker, following, options, spill),)))
                with _Unspill(spilled) as unspill:
                    for task, role, items in results:
                        if role == "local":
                            yield from worker(task, options)
                        else:
                            for kind, value in items:
                                yield kind, unspill(value)
                        if role != "part":
                            done += 1
                            progress.step(done, total)
    finally:
        progress.close()


def _prefetch(work: Iterable[list[Task]], size: int) -> Iterator[list[Task]]:
    """The batches of ``work`` produced by a background thread, at most ``size`` ahead."""
    import queue
    import threading

    box: queue.Queue[list[Task] | None] = queue.Queue(size)

    def produce() -> None:
        try:
            for batch in work:
                box.put(batch)
        finally:
            box.put(None)  # the end (a batch is never None)

    threading.Thread(target=produce, daemon=True).start()
    while (batch := box.get()) is not None:
        yield batch


SPILL_ITEM = 64 << 10  # output this large goes back through a file, not the result pipe


@dataclasses.dataclass(frozen=True, slots=True)
class _Spilled:
    """``size`` bytes of output at ``offset`` of the batch's spill file."""

    offset: int
    size: int


def _call(packed: tuple[Callable[[FileItem, Options], Iterable[Event]], list[Task], Options, str]) -> Results:
    """A worker's batch: its items, with large byte strings (a library's JSON) written to a
    file in ``spill_dir`` and sent as _Spilled places. A worker then holds one item at a
    time, not a batch's output, and the main process reads each back just before writing it.
    Returns (results, the spill file or None)."""
    worker, batch, options, spill_dir = packed
    results: list[tuple[FileItem, str, list[Event]]] = []
    out: IO[bytes] | None = None
    try:
        for task, role in batch:
            items: list[Event] = []
            if role != "local":
                for kind, value in worker(task, options):
                    if isinstance(value, bytes) and len(value) >= SPILL_ITEM:
                        if out is None:
                            out = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below
                                dir=spill_dir, prefix="out-", delete=False
                            )
                        items.append((kind, _Spilled(out.tell(), len(value))))
                        out.write(value)
                    else:
                        items.append((kind, value))
            results.append((task, role, items))
    finally:
        if out is not None:
            out.close()
    return results, out.name if out is not None else None


class _Unspill:
    """Reads a batch's spilled items back, in order, and removes the file when done."""

    def __init__(self, path: str | None):
        self.path = path
        self.fh = open(path, "rb") if path else None  # noqa: SIM115 - closed by __exit__

    def __call__(self, value: Any) -> Any:
        if isinstance(value, _Spilled):
            assert self.fh is not None, "a spilled item comes with its batch's spill file"
            self.fh.seek(value.offset)
            return self.fh.read(value.size)
        return value

    def __enter__(self) -> _Unspill:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()
            os.unlink(self.fh.name)
