"""Whole numbers and byte counts, as every entry point of amdocc takes them.

One rule for what a whole number is, used by the Python API (``occupancy``, the split policy,
the Triton adapter), the metadata reader, ``[tool.amdocc.check]``, the command line and the
``AMDOCC_*`` environment variables:

- a value is a whole number when it is an ``int`` and not a ``bool`` (``True`` is an int to
  Python, never a count to amdocc). A float is not one, even a whole float such as ``2.0``: a
  count that arrives as a float was computed by a division somewhere, and taking it silently
  would hide that. The one exception is explicit: a port of an upstream function whose own
  tests pass whole floats takes them (:func:`whole_value` with ``floats=True``:
  ``splits_by_wave_cost``, whose AITER vectors pass 1e6);
- text is a whole number when it is decimal digits with an optional sign, or ``0x`` hex;
- a byte count is also a whole number of bytes, or text with a K/KB/KiB, M/MB/MiB or G/GB/GiB
  suffix (powers of 1024, as ``--max-scratch 1K`` has always meant).

Callers keep their own messages (a metadata value becomes a finding, an API argument a
UsageError); the decision is made here.
"""

from __future__ import annotations

import math
import re
from typing import TypeGuard

from .errors import UsageError

BYTE_UNITS = {
    "": 1,
    "B": 1,
    "K": 1 << 10,
    "KB": 1 << 10,
    "KIB": 1 << 10,
    "M": 1 << 20,
    "MB": 1 << 20,
    "MIB": 1 << 20,
    "G": 1 << 30,
    "GB": 1 << 30,
    "GIB": 1 << 30,
}
BYTE_SUFFIXES = "K/KiB, M/MiB or G/GiB"

_INTEGER = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")
_BYTES = re.compile(r"\s*(0[xX][0-9a-fA-F]+|[+-]?[0-9]+)\s*([A-Za-z]*)\s*")


def is_whole(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a whole number: an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def whole_value(value: object, *, floats: bool = False) -> int | None:
    """``value`` as an int when it is a whole number, else None; with ``floats``, a finite whole
    float (2.0, 1e6) is taken as the int it equals, and bools are still refused."""
    if is_whole(value):
        return value
    if floats and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def in_range(value: object, minimum: int | None = None, maximum: int | None = None) -> TypeGuard[int]:
    """Whether ``value`` is a whole number in [minimum, maximum] (either end open when None)."""
    return is_whole(value) and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def describe(minimum: int | None = None, maximum: int | None = None, what: str = "a whole number") -> str:
    """``what`` with its range, as messages say it: "a whole number >= 1", "... from 1 to 1024"."""
    if minimum is not None and maximum is not None:
        return f"{what} from {minimum} to {maximum}"
    if minimum is not None:
        return f"{what} >= {minimum}"
    if maximum is not None:
        return f"{what} <= {maximum}"
    return what


def whole_number(value: object, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` if it is a whole number in range, else a UsageError
    "NAME must be a whole number [RANGE], not VALUE" (None is shown as "absent")."""
    if in_range(value, minimum, maximum):
        return value
    shown = "absent" if value is None else repr(value)
    raise UsageError(f"{name} must be {describe(minimum, maximum)}, not {shown}")


def parse_integer(text: str) -> int | None:
    """Decimal (optionally signed) or 0x hex text as an int, surrounding blanks allowed; None
    for anything else ("1.5", "1e3", "", "abc")."""
    stripped = text.strip()
    if not _INTEGER.fullmatch(stripped):
        return None
    digits = stripped.lstrip("+-")
    value = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
    return -value if stripped.startswith("-") else value


def parse_bytes(text: str) -> int | None:
    """A byte count with an optional unit suffix ("64", "1K", "8 GiB", "0x100") as an int; None
    when the text is not one."""
    m = _BYTES.fullmatch(text)
    unit = m and BYTE_UNITS.get(m.group(2).upper())
    if not m or unit is None:
        return None
    digits = m.group(1)
    return int(digits, 0) * unit if digits[:2].lower() == "0x" else int(digits, 10) * unit
