"""The contract checked for every input.

Only ``amdocc.AmdoccError`` may escape ``amdocc.load``, and rendering every code object it
returns (``report.code_object_record`` + ``report.dumps`` and ``cli.inspect.render_code_object``)
must not raise at all; every error must name its file and an offset in it. The first kernels of
each code object also go through the ISA path (disassembly, control flow, spills, lines), under
the same contract. Most inputs reach
amdocc as a buffer; one in eight through a file read by mmap, one in eight loaded strictly.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import traceback

import amdocc
from amdocc import report
from amdocc.cli.inspect import render_code_object
from amdocc.errors import AmdoccError

from . import ROOT


class ContractError(AssertionError):
    """amdocc returned, but broke the contract (an error without a file or offset, a failure that
    is not an AmdoccError). ``key`` names the kind of breach and the error, without the numbers."""

    def __init__(self, breach: str, error):
        text = str(error)
        super().__init__(f"{breach}: {text}")
        message = getattr(error, "message", text)
        self.key = f"{breach}: " + re.sub(r"0x[0-9a-fA-F]+|\d+", "N", message)[:70]


def _check_error(exc) -> None:
    if not isinstance(exc, AmdoccError):
        raise ContractError(f"Failed item holds a {type(exc).__name__}, not an AmdoccError", exc)
    text = str(exc)
    if exc.origin is None or not text.startswith(exc.origin.path):
        raise ContractError("AmdoccError without a file name", exc)
    if exc.offset is None:
        raise ContractError("AmdoccError without an offset", exc)


# How an input reaches amdocc: as a buffer (most), as a file read through mmap (the path large
# files take), or as a buffer loaded strictly (the first failure raises).
MODES = {"bytes": 6, "file": 1, "strict": 1}
_SCRATCH: str | None = None


def _scratch_file(data: bytes) -> str:
    global _SCRATCH
    if _SCRATCH is None or not os.path.isdir(os.path.dirname(_SCRATCH)):
        _SCRATCH = os.path.join(tempfile.mkdtemp(prefix="amdocc-fuzz-"), "input.bin")
    with open(_SCRATCH, "wb") as fh:
        fh.write(data)
    return _SCRATCH


def exercise(data: bytes, mode: str = "bytes") -> str:
    """Run the entry points on ``data``; anything but AmdoccError from load() propagates.

    Returns "rejected" (load raised an AmdoccError), "partial" (some parts failed), "ok" (code
    objects, nothing failed) or "empty" (nothing failed, nothing found).
    """
    from amdocc.containers import Limits

    try:
        if mode == "file":
            loaded = amdocc.load(_scratch_file(data), strict=False, limits=Limits(mmap_threshold=0))
        else:
            loaded = amdocc.load(data, strict=(mode == "strict"))
    except AmdoccError as exc:
        _check_error(exc)
        return "rejected"
    for co in loaded:
        report.dumps(report.code_object_record(co))
        render_code_object(co, "all")
        _exercise_isa(co)
    for item in loaded.skipped:
        report.skipped_record(item)
    for item in loaded.failed:
        _check_error(item.error)
        report.failed_record(item)
    if loaded.failed:
        return "partial"
    return "ok" if len(loaded) else "empty"


ISA_KERNELS = 1  # kernels of each code object taken through amdocc.isa
ISA_MOST_BYTES = 16 << 10  # larger extents are left out: the time limit is per input


def _exercise_isa(co) -> None:
    """The ISA path (amdocc.isa through amdocc.app.isa_kernel) on the first kernels: only an
    AmdoccError naming the file and an offset may escape it; rendering its record must not fail.
    Without a libLLVM (LlvmUnavailable) the path is not taken."""
    from amdocc.app.isa_op import isa_kernel
    from amdocc.cli.isa import render_listing
    from amdocc.isa.extent import kernel_code
    from amdocc.isa.libllvm import LlvmUnavailable, library

    try:
        library()
    except LlvmUnavailable:
        return
    for kernel in co.kernels[:ISA_KERNELS]:
        try:
            if len(kernel_code(kernel, co.origin).code) > ISA_MOST_BYTES:
                continue
            record = isa_kernel(kernel, co.origin)
        except LlvmUnavailable:
            return
        except AmdoccError as exc:
            _check_error(exc)
            continue
        report.dumps(record)
        render_listing(record)


def signature(exc: BaseException) -> str:
    """Exception type and the innermost amdocc (else innermost) frame: one per distinct bug."""
    if isinstance(exc, ContractError):
        return f"ContractError ({exc.key})"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}amdocc{os.sep}" in f.filename]
    frame = (ours or frames or [None])[-1]
    if frame is None:
        return type(exc).__name__
    where = os.path.relpath(frame.filename, ROOT) if frame.filename.startswith(str(ROOT)) else frame.filename
    return f"{type(exc).__name__} at {where}:{frame.lineno} in {frame.name}"


def run_one(data: bytes, mode: str = "bytes") -> tuple[str, float, float, dict | None]:
    """(outcome, CPU seconds, wall seconds, failure) for one input, in this process.

    The time limit applies to CPU time: it is what the input costs, whatever else the machine
    is doing (wall time is reported beside it; the watchdog counts CPU time for hangs too).
    """
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        outcome, failure = exercise(data, mode), None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # any escape is what we are looking for
        outcome = "crash"
        failure = {
            "kind": "crash",
            "signature": signature(exc),
            "exception": type(exc).__name__,
            "message": _clip(str(exc), 400),
            "traceback": _clip(traceback.format_exc(), 6000),
        }
    return outcome, time.process_time() - cpu_start, time.perf_counter() - start, failure


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2 :]
