"""The child process that runs the code generators (:mod:`.codegen`).

One child (``python -m amdocc.tuning.worker``) serves a whole run, one request at a time, over
its standard input and output (length-prefixed pickles; both ends are this package). A request
that takes longer than its timeout, or a child that dies (a code generator's assertion or
segmentation fault), fails that request alone: the child is killed and the next request starts
a fresh one. A plain child process, not ``multiprocessing``: it never re-imports the caller's
``__main__``, so a script may call :func:`amdocc.app.tune_regs` at top level.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import time
import traceback
from typing import IO, Any

from ..errors import AmdoccError

DEFAULT_TIMEOUT = 300.0  # seconds one compile may take; Triton's slowest kernels take a minute
_HEADER = struct.Struct("<Q")
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class PointFailed(AmdoccError):
    """One request failed: ``kind`` is "error" (the code generator refused), "timeout" or "crash".
    The sweep reports it for its point; anywhere else it is bad input (exit status 2)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _write(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The child's loop: read (name, args), answer ("ok", value) or ("error", message)."""
    from .codegen import FUNCTIONS

    inp = sys.stdin.buffer
    # The answers go to a copy of standard output; whatever a code generator prints (Python's
    # print or LLVM's own writes to file descriptor 1) goes to standard error instead.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exact(inp.fileno(), _HEADER.size, None))
            name, args = pickle.loads(_read_exact(inp.fileno(), size, None))
        except EOFError:
            return
        try:
            _write(out, ("ok", FUNCTIONS[name](*args)))
        except Exception as exc:  # the code generator's own error: reported for this request
            text = str(exc).strip() or type(exc).__name__
            if not getattr(exc, "exit_code", None) and not isinstance(exc, RuntimeError):
                text = f"{type(exc).__name__}: {text}\n{traceback.format_exc(limit=3)}"
            _write(out, ("error", text))


class Codegen:
    """A child process running :mod:`.codegen` functions; a context manager."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self._process: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
            self._process = subprocess.Popen(
                [sys.executable, "-m", "amdocc.tuning.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        return self._process

    def _stop(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        code = process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        return code

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            _write(process.stdin, (name, args))
            fd = process.stdout.fileno()
            (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
            status, value = pickle.loads(_read_exact(fd, size, deadline))
        except TimeoutError:
            self._stop()
            raise PointFailed("timeout", f"the code generator did not finish in {limit:g} s") from None
        except (EOFError, BrokenPipeError, OSError, pickle.UnpicklingError):
            code = self._stop()
            raise PointFailed("crash", f"the code generator's process died (exit status {code})") from None
        if status != "ok":
            raise PointFailed("error", str(value))
        return value

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the child's loop ends at end of input
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> Codegen:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


if __name__ == "__main__":
    serve()
