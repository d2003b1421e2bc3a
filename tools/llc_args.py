"""The llc command line the llc-shaped drivers (tools/triton_llc.py, tools/rocm_llc.py) accept,
and where they write what they made.

Both stand in for llc-22 under tools/kernelgen.py, so they read its arguments the same way:
``-key=value`` for the keys they know, ``-o FILE``, one input (a path, or ``-`` for stdin), and
every other llc option passed over (neither library has a use for it).
"""

from __future__ import annotations

import sys
from pathlib import Path


def parse_llc_arguments(argv: list[str], opts: dict[str, str]) -> str:
    """Fill ``opts`` (the known keys with their defaults) from ``argv``; return the input."""
    inputs, args = [], list(argv)
    while args:
        arg = args.pop(0)
        key, eq, value = arg.partition("=")
        if key in opts and eq:
            opts[key] = value
        elif arg == "-o" and args:
            opts["-o"] = args.pop(0)
        elif arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
    return inputs[0] if inputs else "-"


def write_llc_output(path: str, data: bytes) -> None:
    """Write ``data`` where llc's ``-o`` says: the file, or stdout for ``-``."""
    if path == "-":
        sys.stdout.buffer.write(data)
    else:
        Path(path).write_bytes(data)
