"""The child process that runs the code generators (:mod:`.codegen`).

One child serves a whole run, one request at a time. A request that takes longer than its
timeout, or a child that dies (a code generator's assertion or segmentation fault), fails that
request alone: the child is killed and the next request starts a fresh one.
"""

from __future__ import annotations

import multiprocessing
import traceback
from multiprocessing.connection import Connection
from typing import Any

DEFAULT_TIMEOUT = 300.0  # seconds one compile may take; Triton's slowest kernels take a minute


class PointFailed(Exception):
    """One request failed: ``kind`` is "error" (the code generator refused), "timeout" or "crash"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _serve(conn: Connection) -> None:
    from .codegen import FUNCTIONS

    while True:
        try:
            name, args = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", FUNCTIONS[name](*args)))
        except Exception as exc:  # the code generator's own error: reported for this request
            text = str(exc).strip() or type(exc).__name__
            if not getattr(exc, "exit_code", None) and not isinstance(exc, RuntimeError):
                text = f"{type(exc).__name__}: {text}\n{traceback.format_exc(limit=3)}"
            conn.send(("error", text))


class Codegen:
    """A child process running :mod:`.codegen` functions; a context manager."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._process is None or not self._process.is_alive():
            context = multiprocessing.get_context("spawn")  # no LLVM state inherited from this process
            parent, child = context.Pipe()
            self._process = context.Process(target=_serve, args=(child,), daemon=True)
            self._process.start()
            child.close()
            self._conn = parent
        assert self._conn is not None
        return self._conn

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
        if self._conn is not None:
            self._conn.close()
        self._process = self._conn = None

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        conn = self._start()
        limit = self.timeout if timeout is None else timeout
        try:
            conn.send((name, args))
            if not conn.poll(limit):
                self._stop()
                raise PointFailed("timeout", f"the code generator did not finish in {limit:g} s")
            status, value = conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = self._process.exitcode if self._process is not None else None
            self._stop()
            raise PointFailed("crash", f"the code generator's process died (exit status {code})") from None
        if status != "ok":
            raise PointFailed("error", str(value))
        return value

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                if self._process is not None:
                    self._process.join(timeout=5)
                    if self._process.is_alive():
                        self._process.kill()
                        self._process.join()
                self._process = self._conn = None

    def __enter__(self) -> Codegen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
