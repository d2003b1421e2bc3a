"""A small client for the HIP oracle worker (hip_oracle.py): one subprocess per runtime x device.

    from hsa_emulator.client import HipOracle, available_runtimes

    for release, directory, processors in available_runtimes():
        with HipOracle(directory, "gfx942") as hip:
            module = hip.load("/x.co")["module"]
            hip.occupancy(module, "kernel", 256)      # {"ok": True, "value": N}

Every method returns the worker's JSON answer as a dict. A query that kills the runtime (ROCm
5.2's HIP divides by zero, SIGFPE, for a kernel that allows no wave) does not take the caller
down: the client answers ``{"ok": False, "error": "crashed:SIGFPE"}``, starts a new worker and
loads the modules again on their next use, under the same ids. ``report()`` sums the emulator's
counts over every worker the client started (counts since a crashed worker's last report are
lost with it; ``crashes`` says how many there were).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKER = HERE / "hip_oracle.py"
DEFAULT_ROOT = HERE.parent.parent / ".cache" / "hip-runtimes"


def available_runtimes(root: str | os.PathLike[str] | None = None) -> list[tuple[str, str, list[str]]]:
    """(release, folder, processors it creates a device for) of each runtime laid out by
    tools/hsa_emulator/layout.py under ``root`` (default: the project's .cache/hip-runtimes/)."""
    base = Path(root) if root is not None else DEFAULT_ROOT
    found = []
    for config in sorted(base.glob("*/runtime.json")):
        data = json.loads(config.read_text(encoding="utf-8"))
        found.append((str(data["release"]), str(config.parent), list(data.get("processors", []))))
    return found


def runtime_env(runtime_dir: str | os.PathLike[str], device: str) -> dict[str, str]:
    """Environment variables that point a fresh process's HIP at this runtime on the emulated
    ``device``: HSAEMU_DEVICE for the emulator, ROCM_PATH for hip-python (it opens
    $ROCM_PATH/lib/libamdhip64.so), and LD_LIBRARY_PATH where the runtime finds the emulator
    through it (ROCm 5.2)."""
    directory = os.path.abspath(runtime_dir)
    config = json.loads(Path(directory, "runtime.json").read_text(encoding="utf-8"))
    env = {"HSAEMU_DEVICE": device, "ROCM_PATH": directory}
    if config.get("ld_library_path"):
        env["LD_LIBRARY_PATH"] = ":".join(p for p in (directory, os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return env


class WorkerCrashed(Exception):
    pass


class HipOracle:
    """The real HIP runtime in ``runtime_dir`` on the emulated ``device``, queried over a pipe."""

    def __init__(self, runtime_dir: str | os.PathLike[str], device: str, *, timeout: float = 300.0) -> None:
        self.runtime_dir, self.device, self.timeout = str(runtime_dir), device, timeout
        self.proc: subprocess.Popen[str] | None = None
        self.crashes = 0
        self._images: dict[int, bytes] = {}  # client module id -> image
        self._worker_ids: dict[int, int] = {}  # client module id -> id in the current worker
        self._next = 1
        self._dead_counts: dict[str, Counter[str]] = {"unexpected": Counter(), "refused": Counter(), "calls": Counter()}
        self._last_report: dict[str, Any] | None = None

    # -- process ------------------------------------------------------------------------------

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("HSAEMU_DEVICE",)}
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), "--runtime", self.runtime_dir, "--device", self.device],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if os.environ.get("HSAEMU_WORKER_STDERR") != "1" else None,
            text=True,
            env=env,
        )
        self._worker_ids.clear()
        self._last_report = None

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None and self.proc.stdin:
                self.proc.stdin.close()
                try:
                    self.proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self.proc = None

    def __enter__(self) -> HipOracle:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            raise WorkerCrashed(self._death())
        assert self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerCrashed(self._death()) from None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(self.timeout)
        sel.close()
        if not ready:
            self.proc.kill()
            self.proc.wait()
            raise WorkerCrashed("timeout")
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerCrashed(self._death())
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _death(self) -> str:
        if self.proc is None:
            return "crashed:not-started"
        code = self.proc.wait()
        if code < 0:
            try:
                return f"crashed:{signal.Signals(-code).name}"
            except ValueError:
                return f"crashed:signal{-code}"
        return f"crashed:exit{code}"

    def _restart(self) -> None:
        if self._last_report:
            for key in self._dead_counts:
                self._dead_counts[key].update(self._last_report.get(key, {}))
        self.crashes += 1
        self.close()
        self.start()

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request; a crash (or a hang) restarts the worker and answers crashed:<why>."""
        try:
            return self._exchange(request)
        except WorkerCrashed as exc:
            self._restart()
            return {"ok": False, "error": str(exc)}

    # -- queries ------------------------------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        return self.request({"op": "hello"})

    def load(self, code_object: str | os.PathLike[str] | bytes) -> dict[str, Any]:
        image = code_object if isinstance(code_object, bytes) else Path(code_object).read_bytes()
        answer = self.request({"op": "load", "hex": image.hex()})
        if not answer.get("ok"):
            return answer
        mid = self._next
        self._next += 1
        self._images[mid], self._worker_ids[mid] = image, answer["module"]
        return {"ok": True, "module": mid}

    def _module(self, mid: int) -> int | dict[str, Any]:
        if mid not in self._images:
            return {"ok": False, "error": f"bad-request: unknown module {mid}"}
        if mid not in self._worker_ids:  # loaded in a worker that has since crashed
            answer = self.request({"op": "load", "hex": self._images[mid].hex()})
            if not answer.get("ok"):
                return answer
            self._worker_ids[mid] = answer["module"]
        return self._worker_ids[mid]

    def _on_kernel(self, op: str, mid: int, kernel: str, **fields: Any) -> dict[str, Any]:
        wid = self._module(mid)
        if isinstance(wid, dict):
            return wid
        return self.request({"op": op, "module": wid, "kernel": kernel, **fields})

    def occupancy(
        self, module: int, kernel: str, block: int, dynamic_lds: int = 0, flags: int | None = None
    ) -> dict[str, Any]:
        return self._on_kernel("occupancy", module, kernel, block=block, dynamic_lds=dynamic_lds, flags=flags)

    def potential_block_size(
        self, module: int, kernel: str, dynamic_lds: int = 0, block_limit: int = 0
    ) -> dict[str, Any]:
        return self._on_kernel("potential_block_size", module, kernel, dynamic_lds=dynamic_lds, block_limit=block_limit)

    def attributes(self, module: int, kernel: str) -> dict[str, Any]:
        return self._on_kernel("attributes", module, kernel)

    def unload(self, module: int) -> dict[str, Any]:
        if module not in self._images:
            return {"ok": False, "error": f"bad-request: unknown module {module}"}
        self._images.pop(module)
        wid = self._worker_ids.pop(module, None)
        return self.request({"op": "unload", "module": wid}) if wid is not None else {"ok": True}

    def report(self) -> dict[str, Any]:
        """The emulator's counts over all workers so far: {"unexpected", "refused", "calls", "crashes"}."""
        answer = self.request({"op": "report"})
        if answer.get("ok"):
            self._last_report = answer
        total: dict[str, Any] = {
            "ok": bool(answer.get("ok")),
            "emulated": answer.get("emulated"),
            "crashes": self.crashes,
        }
        for key, dead in self._dead_counts.items():
            total[key] = dict(dead + Counter(answer.get(key, {})))
        return total
