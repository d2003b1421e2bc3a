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
import contextlib
import dataclasses
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar, cast

from ..errors import AmdoccError, AmdoccWarning

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
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
    isolated: bool = False,
) -> Iterator[Event]:
    """Everything the generator ``worker((path, in_directory), options)`` yields for each file,
    in file order (``path`` may be a part of a large input, which ``amdocc.iter_load`` reads
    like a file). On one process it streams; on ``jobs`` processes each batch's items come back
    as one list, while the main process writes what came before. ``isolated`` reads in a worker
    process even for one job: for a worker that calls native code which may crash on some
    bytes (LLVM's disassembler), so that such a file is an error entry, not the end of the run."""
    make = PROGRESS.get()
    progress: Progress = make() if make is not None else _Silent()
    total, done = len(files), 0
    try:
        if jobs <= 1 and not isolated:
            for item in files:
                yield from worker(item, options)
                done += 1
                progress.step(done, total)
            return
        jobs = max(jobs, 1)
        most = max(1, min(64, len(files) // (jobs * 8)))
        with tempfile.TemporaryDirectory(prefix="amdocc-parts-") as spill, _Workers(jobs) as workers:
            # A thread plans the work (cutting a wheel writes its large members out) while the
            # workers read; at most IN_FLIGHT batches per worker are queued or held as results,
            # so memory does not grow when output is written slower than it is produced.
            work = _prefetch(batches(tasks_for(files, spill), most), IN_FLIGHT * jobs)
            for results, spilled in workers.ordered(((worker, b, options, spill) for b in work), IN_FLIGHT * jobs):
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


# Batches sent to one worker and not yet answered: the one it reads and one waiting in its pipe,
# so it starts the next as soon as it has answered, without waiting for the main process.
AHEAD = 2


class WorkerDied(AmdoccError):
    """A worker process ended without answering (a native library crashed on the bytes of a
    file, the out-of-memory killer): what it held is read again file by file in fresh
    processes, and a file whose process dies too is an error entry of this kind."""


class _Workers:
    """``jobs`` forked worker processes, each answering batches over its own pipe, and the main
    process handing them out and taking the answers back in order.

    Not multiprocessing's Pool: its worker-maintenance thread also wakes whenever an answer is
    waiting in the result pipe, so while answers came back to back (inspect over AITER's 2,501
    files) it polled the workers in a loop and took about a tenth of the run's CPU from the
    workers on a two-CPU machine; and a Pool whose worker is killed waits forever. Here a dead
    worker is replaced, the batches it held are read again file by file, each in a process of
    its own, and a file that kills its process too becomes an error entry (LLVM 22's
    disassembler crashes on some bytes no compiler emits, docs/isa.md): the run goes on. One
    thread sends the batches (a send may block until the worker reads, which it does only
    after its answer has been taken), so the main process never waits on a worker that waits
    on it.
    """

    def __init__(self, jobs: int):
        import multiprocessing
        import queue
        import threading

        self.ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
        self.conns: list[Connection] = []
        self.processes: list[BaseProcess] = []
        # Dead workers' pipes, closed at the end: the sender thread may still be writing a batch
        # to one, and a descriptor closed now could be reused by a new worker's pipe.
        self.dead: list[Connection] = []
        try:
            for _ in range(jobs):
                conn, process = self._start()
                self.conns.append(conn)
                self.processes.append(process)
        except BaseException:
            self._terminate()
            self._join()
            raise
        self.outbox: queue.SimpleQueue[tuple[Connection, Any] | None] = queue.SimpleQueue()
        self.sender = threading.Thread(target=self._send_all, daemon=True, name="amdocc-sender")
        self.sender.start()

    def _start(self) -> tuple[Connection, BaseProcess]:
        here, there = self.ctx.Pipe()
        process = self.ctx.Process(target=_serve, args=(there,), daemon=True, name="amdocc-worker")
        process.start()
        there.close()
        return here, process

    def _send_all(self) -> None:
        while (message := self.outbox.get()) is not None:
            conn, batch = message
            # A worker that is gone is found by the main process when it reads the answer.
            with contextlib.suppress(OSError, ValueError):
                conn.send(batch)

    def ordered(self, batches: Iterable[Any], most: int) -> Iterator[Any]:
        """Each batch's answer (``_call``'s), in the order of ``batches`` (a batch whose worker
        died: one answer per file, read again alone); at most ``most`` batches sent or answered
        and not yet taken by the caller."""
        from multiprocessing.connection import wait

        work = iter(batches)
        sent: dict[Connection, collections.deque[tuple[int, Any]]] = {c: collections.deque() for c in self.conns}
        answers: dict[int, list[Any]] = {}
        taken = submitted = 0
        exhausted = False
        while True:
            # Hand out batches while there is room: fewest waiting first, so both keep busy.
            while not exhausted and submitted - taken < most:
                conn = min(self.conns, key=lambda c: len(sent[c]))
                if len(sent[conn]) >= AHEAD:
                    break
                batch = next(work, None)
                if batch is None:
                    exhausted = True
                    break
                sent[conn].append((submitted, batch))
                self.outbox.put((conn, batch))
                submitted += 1
            if taken in answers:
                yield from answers.pop(taken)
                taken += 1
                continue
            if taken == submitted:
                return
            for ready in wait([c for c in self.conns if sent[c]]):
                conn = cast("Connection", ready)
                index, batch = sent[conn].popleft()
                try:
                    ok, value, trace = conn.recv()
                except (EOFError, OSError):
                    held = [(index, batch), *sent.pop(conn)]  # the one it read, and any behind it
                    replacement, how = self._replace(conn)
                    sent[replacement] = collections.deque()
                    for i, b in held:
                        answers[i] = self._file_by_file(b, how, read_when_it_died=i == index)
                    continue
                if not ok:
                    raise value from RemoteTraceback(trace)
                answers[index] = [value]

    def _replace(self, conn: Connection) -> tuple[Connection, str]:
        """Start a worker in a dead one's place: (its pipe, how the dead one ended)."""
        i = self.conns.index(conn)
        process = self.processes[i]
        process.join(1)
        code = process.exitcode
        if code is not None and code < 0:
            import signal

            how = f"was killed by {signal.Signals(-code).name}"
        else:
            how = f"ended with status {code}" if code is not None else "closed its pipe"
        self.dead.append(conn)
        self.conns[i], self.processes[i] = self._start()
        return self.conns[i], how

    def _file_by_file(self, batch: Any, how: str, read_when_it_died: bool) -> list[Any]:
        """A dead worker's batch read again, each file in a process of its own: their answers,
        and an error entry for a file whose process dies too, or for the only file of the batch
        the worker was reading when it died (a batch still waiting in its pipe is read again)."""
        worker, tasks, options, spill = batch
        if read_when_it_died and len(tasks) == 1:
            from .. import report
            from .reading import item_path

            item, role = tasks[0]
            died = WorkerDied(
                f"the process reading it {how}: a native library crashed on its bytes (LLVM 22's "
                "disassembler does on some no compiler emits), or memory ran out"
            )
            return [([(item, role, [("error", report.error_record(died, item_path(item)))])], None)]
        out: list[Any] = []
        for task in tasks:
            with _Workers(1) as alone:
                out.extend(alone.ordered([(worker, [task], options, spill)], 1))
        return out

    def __enter__(self) -> _Workers:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:
            for conn in self.conns:
                self.outbox.put((conn, None))  # each worker's end, after its last batch
        else:  # an error, Ctrl-C or a caller that stopped reading: the rest is not wanted
            self._terminate()
        self.outbox.put(None)
        self.sender.join()
        self._join()

    def _terminate(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()

    def _join(self) -> None:
        for conn, process in zip(self.conns, self.processes, strict=True):
            process.join()
            conn.close()
        for conn in self.dead:
            conn.close()


class RemoteTraceback(AmdoccError):
    """The traceback of an exception a worker raised, as the cause of the one raised here
    (its text is the worker's traceback)."""


def _serve(conn: Connection) -> None:
    """A worker: batches in, answers out, until told to stop or its pipe closes. Ctrl-C is the
    main process's to handle (it stops the workers)."""
    import signal
    import traceback

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        answer: tuple[bool, Any, str | None]
        try:
            answer = (True, _call(batch), None)
        except BaseException as exc:  # raised again in the main process, as Pool did
            answer = (False, exc, traceback.format_exc())
        try:
            conn.send(answer)
        except Exception as exc:  # an exception that cannot be pickled: its text
            conn.send((False, RuntimeError(f"{type(answer[1]).__name__}: {answer[1]}"), answer[2] or repr(exc)))


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
