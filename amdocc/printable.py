"""Names that are not UTF-8, written down one way by every writer.

On POSIX a file name is bytes. Python hands amdocc such a name as text in which each byte that
is not part of valid UTF-8 is a lone surrogate U+DC80..U+DCFF (PEP 383, "surrogateescape"); ELF
symbol names are read the same way. Such text cannot be encoded as UTF-8, so a writer that is not
told otherwise fails on it. The rule, for every report amdocc writes (text on standard output
and standard error, JSON, CSV, Parquet, HTML, JUnit XML, SARIF messages, GitHub annotations):

- each such byte is written as the four characters ``\\xNN`` (``b"\\xff\\xfe.co"`` is shown as
  ``\\xff\\xfe.co``), as Python's "backslashreplace" writes a byte it cannot decode; any other
  lone surrogate, which no file name decodes to, as ``\\udNNN``;
- a SARIF artifact URI is percent-encoded from the raw bytes (``%FF%FE.co``), so it names the
  file exactly (RFC 3986 percent-encodes octets, not characters).

A valid name that contains a backslash followed by ``x`` and two hex digits reads the same as
the escaped form; the URI, and the Python API, which keeps Python's own text (so
``os.fsencode(record["path"])`` gives the bytes back), tell them apart. docs/cli-contract.md
states the rule for users.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from typing import Any

ERRORS = "amdocc.printable"  # the codec error handler that applies the rule to a text stream

# Lone surrogates to their written form: escaped bytes (U+DC80..U+DCFF) as \xNN, others as
# \udNNN. Built on first use: most runs never meet such a name.
_ESCAPES: dict[int, str] = {}


def _escapes() -> dict[int, str]:
    if not _ESCAPES:
        for code in range(0xD800, 0xE000):
            _ESCAPES[code] = f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"
    return _ESCAPES


def printable(text: str) -> str:
    """``text`` with every undecodable byte written as ``\\xNN`` (see the module's rule);
    text that is valid Unicode comes back as it is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_escapes())
    return text


def printable_record(value: Any) -> Any:
    """A JSON-shaped value (dicts, lists, tuples, strings, scalars) with :func:`printable`
    applied to every string in it, keys included; other values are kept."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k) if isinstance(k, str) else k: printable_record(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_record(v) for v in value]
    return value


def uri_path(path: str) -> str:
    """``path`` percent-encoded from its raw bytes, as a URI path (``/`` kept)."""
    from urllib.parse import quote  # only SARIF asks: kept off the command line's start

    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a surrogate no file name decodes to (text made by hand)
        raw = path.encode("utf-8", "surrogatepass")
    return quote(raw, safe="/")


def _handler(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return printable(error.object[error.start : error.end]).encode("ascii", "backslashreplace").decode(), error.end


codecs.register_error(ERRORS, _handler)


def escape_undecodable(stream: Any) -> None:
    """Make a text stream (standard output or error) write undecodable bytes by the rule
    instead of failing or writing them raw; a stream that cannot be reconfigured is left as
    it is (it holds text, not bytes: nothing fails there)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError, TypeError):
            reconfigure(errors=ERRORS)
