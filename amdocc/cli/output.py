"""Standard output and standard error that may close early without changing a command's status.

``amdocc check … | head -1`` closes the pipe after one line; ``amdocc inspect F 2>&1 | head -0``
closes it before the first, standard error included. Python ignores SIGPIPE, so the next write
raises BrokenPipeError (EPIPE). Raised out of a command, that error used to end the run with
exit status 0 (stdout: a failing gate passed as soon as its log was trimmed) or 1 (stderr: the
traceback itself could not be printed, and 1 means "a gate failed"). Here the output that no
one reads any more is dropped instead, stream by stream, the command runs to its end (reports
written to files are completed) and its own exit status is returned.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, BinaryIO, TextIO


class _Reader:
    """Whether the reader of standard output went away (shared by the text and byte streams)."""

    gone = False


class Guarded:
    """A text stream (or, as its ``buffer``, a byte stream) whose writes after the reader went
    away are dropped.

    Once a write or flush meets a closed pipe, the stream's file descriptor is pointed at
    /dev/null, so that what is still buffered (and the interpreter's flush at exit, which would
    otherwise print "Exception ignored" and exit 120) goes nowhere, quietly."""

    def __init__(self, stream: Any, reader: _Reader | None = None) -> None:
        self.stream = stream
        self.reader = reader or _Reader()

    @property
    def lost(self) -> bool:
        return self.reader.gone

    @property
    def buffer(self) -> Guarded:
        """The byte stream under a text stream, guarded the same way (AttributeError if none)."""
        return Guarded(self.stream.buffer, self.reader)

    def write(self, data: Any) -> int:
        if not self.reader.gone:
            try:
                written: int = self.stream.write(data)
                return written
            except BrokenPipeError:
                self._reader_gone()
        return len(data)

    def writelines(self, lines: Iterable[Any]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.reader.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self.reader.gone = True
        try:
            fd = self.stream.fileno()
        except (OSError, ValueError, AttributeError):  # not a file (a test's capture): nothing to redirect
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class guarded_streams:
    """``with guarded_streams():`` runs a command with :class:`Guarded` standard output and
    standard error (each with its own reader: one may close while the other is read), flushes
    both at the end (a closed pipe included) and puts the streams back."""

    def __enter__(self) -> tuple[Guarded, Guarded]:
        self.previous: tuple[TextIO, TextIO] = (sys.stdout, sys.stderr)
        self.guards = (Guarded(sys.stdout), Guarded(sys.stderr))
        sys.stdout, sys.stderr = self.guards  # a TextIO in all that print() uses (typed Any here)
        return self.guards

    def __exit__(self, *exc: object) -> None:
        for guard in self.guards:
            guard.flush()
        sys.stdout, sys.stderr = self.previous


def binary_stdout() -> Callable[[bytes], object]:
    """A function writing JSON's ASCII bytes to stdout: to its binary buffer, so that 100s of MB
    of output are not decoded and encoded again, or as text when stdout has no buffer."""
    buffer: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        return lambda data: sys.stdout.write(data.decode("ascii"))
    sys.stdout.flush()
    return buffer.write
