"""The worker processes of ``amdocc.app.parallel.run``: answers in file order whatever order the
workers finish in, a worker's exception raised in the main process, a file that kills its worker
an error entry while the rest is read (never a hang), Ctrl-C handled by the main process alone,
and no worker left running when the caller stops early."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from amdocc.app import parallel


def echo(item, options):
    """A worker: the file's name back; the ones named in ``options`` take a little longer, so
    the workers finish out of order."""
    path, _ = item
    if path in options.get("slow", ()):
        end = time.process_time() + 0.02  # CPU time, so the delay does not depend on the machine's load
        while time.process_time() < end:
            pass
    if path == options.get("raise"):
        raise ValueError(f"no reading {path}")
    if path in options.get("kill", ()):
        os.kill(os.getpid(), signal.SIGKILL)
    yield "code_object", path


def files(n: int) -> list[tuple[str, bool]]:
    return [(f"f{i:03}", True) for i in range(n)]


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    # One file a batch: many batches in flight, so the order of answers is really tested.
    monkeypatch.setattr(parallel, "BATCH_BYTES", 0)


def test_answers_come_back_in_file_order_when_workers_finish_out_of_order():
    names = [f for f, _ in files(60)]
    slow = set(names[::7])
    got = [v for _, v in parallel.run(files(60), echo, {"slow": slow}, 3)]
    assert got == names


def test_a_workers_exception_is_raised_in_the_main_process_with_its_traceback():
    with pytest.raises(ValueError, match="no reading f011") as caught:
        list(parallel.run(files(40), echo, {"raise": "f011"}, 2))
    assert isinstance(caught.value.__cause__, parallel.RemoteTraceback)
    assert "in echo" in str(caught.value.__cause__)  # where the worker raised it
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("batch_bytes", [0, 1 << 40], ids=["one file a batch", "many files a batch"])
def test_files_that_kill_their_worker_are_error_entries_and_the_run_goes_on(monkeypatch, batch_bytes):
    # A worker killed while reading (LLVM 22's disassembler crashing on some bytes, the OOM
    # killer) is replaced; its batches are read again file by file, each alone, so only the
    # files that kill their process again are errors, in their places, and the rest is read.
    monkeypatch.setattr(parallel, "BATCH_BYTES", batch_bytes)
    names = [f for f, _ in files(200)]
    deadly = {"f017", "f018", "f150"}  # two in one batch, one in another
    events = list(parallel.run(files(200), echo, {"kill": deadly}, 2))
    assert [v if k == "code_object" else ("error", v["path"]) for k, v in events] == [
        ("error", n) if n in deadly else n for n in names
    ]
    errors = [v for k, v in events if k == "error"]
    assert all("the process reading it was killed by SIGKILL" in e["error"] for e in errors)
    assert multiprocessing.active_children() == []


def test_a_caller_that_stops_reading_leaves_no_worker_running():
    events = parallel.run(files(200), echo, {}, 2)
    assert next(events) == ("code_object", "f000")
    events.close()
    assert multiprocessing.active_children() == []


INTERRUPTED_RUN = """
import os, signal, sys, multiprocessing
sys.path.insert(0, {tests!r})
from amdocc.app import parallel
import test_parallel_workers as t

def interrupt(item, options):
    if item[0] == "f005":
        os.killpg(os.getpgid(0), signal.SIGINT)  # Ctrl-C reaches the whole process group
    yield from t.echo(item, options)

parallel.BATCH_BYTES = 0
try:
    for _ in parallel.run(t.files(400), interrupt, {{}}, 2):
        pass
except KeyboardInterrupt:
    print("interrupted; workers left:", len(multiprocessing.active_children()))
"""


def test_ctrl_c_is_handled_by_the_main_process_alone(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = INTERRUPTED_RUN.format(tests=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, start_new_session=True
    )
    assert done.stdout.strip() == "interrupted; workers left: 0", done.stderr
    assert "Traceback" not in done.stderr  # no worker printed its own KeyboardInterrupt


def test_a_worker_ignores_ctrl_c_and_goes_on_answering():
    with parallel._Workers(1) as workers:
        (worker,) = workers.processes

        def batches():
            for i in range(4):
                if i == 2:  # the first answers are back: the worker is in its loop
                    os.kill(worker.pid, signal.SIGINT)
                yield (echo, [((f"f{i:03}", True), "last")], {}, "")

        answers = [results for results, _ in workers.ordered(batches(), 4)]
    assert [items for _, _, items in (r[0] for r in answers)] == [[("code_object", f"f{i:03}")] for i in range(4)]


def test_an_isolated_run_of_one_job_reads_in_a_worker_and_survives_a_file_that_kills_it():
    names = [f for f, _ in files(12)]
    events = list(parallel.run(files(12), echo, {"kill": {"f003"}}, 1, isolated=True))
    assert [v if k == "code_object" else ("error", v["path"]) for k, v in events] == [
        ("error", n) if n == "f003" else n for n in names
    ]
    assert multiprocessing.active_children() == []
