"""What a run tells the terminal besides its results: the "N/M files" progress line, and the
library's warnings (amdocc.errors.AmdoccWarning) as "amdocc: warning: ..." with flags named."""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from ..errors import AmdoccWarning


class TerminalProgress:
    """ "N/M files" on stderr, redrawn at most ten times a second, only when stderr is a terminal."""

    def __init__(self, enabled: bool | None = None):
        self.done, self.last = 0, 0.0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def step(self, done: int, total: int) -> None:
        self.done = done
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.1 or done == total):
            self.last = now
            sys.stderr.write(f"\r{done}/{total} files ".ljust(60))
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


@contextlib.contextmanager
def told(spell: Callable[[str], str]) -> Iterator[None]:
    """While a command runs: a progress line on a terminal, and each AmdoccWarning printed at
    once as "amdocc: warning: ..." with its parameters spelled by ``spell`` (the flags)."""
    from ..app.parallel import PROGRESS

    shown = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *rest: Any, **kw: Any) -> None:
        if isinstance(message, AmdoccWarning):
            print(f"amdocc: warning: {message.spelled(spell)}", file=sys.stderr)
        else:
            shown(message, category, *rest, **kw)

    token = PROGRESS.set(TerminalProgress)
    with warnings.catch_warnings():
        warnings.simplefilter("always", AmdoccWarning)
        warnings.showwarning = show
        try:
            yield
        finally:
            PROGRESS.reset(token)
