"""A reader for the small YAML subset LLVM wrote as CO v2 metadata (NT_AMD_HSA_METADATA).

LLVM's YAML writer produced only block mappings, block sequences, flow sequences of scalars
("[ 1, 0 ]") and plain or quoted scalars, one key per line. Supporting exactly that keeps a YAML
library out of amdocc's dependencies; anything else is reported as an error, not guessed at.
"""

from __future__ import annotations

from ..errors import FormatError

MAX_DEPTH = 64

# A value of the subset: a scalar, a sequence or a mapping.
Value = str | int | bool | None | list["Value"] | dict[str, "Value"]
# One non-blank line: (indentation, content without it, 1-based line number).
Line = tuple[int, str, int]


class YamlSubsetError(FormatError, ValueError):
    """Text outside the subset; ``line`` is the 1-based line it was met on, when known. A
    FormatError (the note's text does not follow its format), and a ValueError as before."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


def loads(text: str) -> Value:
    lines: list[Line] = []
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.rstrip()
        if not stripped.strip() or stripped.strip() in ("---", "...") or stripped.lstrip().startswith("#"):
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError("tab in indentation", number)
        lines.append((len(stripped) - len(stripped.lstrip(" ")), stripped.lstrip(" "), number))
    if not lines:
        return {}
    value, end = _block(lines, 0, lines[0][0], 0)
    if end != len(lines):
        raise YamlSubsetError("unexpected indentation", lines[end][2])
    return value


def _block(lines: list[Line], i: int, indent: int, depth: int) -> tuple[Value, int]:
    if depth > MAX_DEPTH:
        raise YamlSubsetError(f"nesting deeper than {MAX_DEPTH} levels", lines[i][2])
    if lines[i][1].startswith("-") and lines[i][1][1:2] in ("", " "):
        return _sequence(lines, i, indent, depth)
    return _mapping(lines, i, indent, depth)


def _sequence(lines: list[Line], i: int, indent: int, depth: int) -> tuple[list[Value], int]:
    out: list[Value] = []
    while i < len(lines) and lines[i][0] == indent and lines[i][1][:1] == "-" and lines[i][1][1:2] in ("", " "):
        rest = lines[i][1][1:]
        if not rest.strip():
            i += 1
            value: Value
            if i < len(lines) and lines[i][0] > indent:
                value, i = _block(lines, i, lines[i][0], depth + 1)
            else:
                value = None
            out.append(value)
            continue
        # "- key: value" starts a mapping whose keys line up after the dash.
        pad = len(rest) - len(rest.lstrip(" "))
        lines[i] = (indent + 1 + pad, rest.lstrip(" "), lines[i][2])
        if _split_key(lines[i][1], lines[i][2]) is None:
            out.append(_scalar(lines[i][1], lines[i][2], depth))
            i += 1
        else:
            value, i = _mapping(lines, i, lines[i][0], depth + 1)
            out.append(value)
    return out, i


def _mapping(lines: list[Line], i: int, indent: int, depth: int) -> tuple[dict[str, Value], int]:
    out: dict[str, Value] = {}
    while i < len(lines) and lines[i][0] == indent:
        content, number = lines[i][1], lines[i][2]
        if content[:1] == "-" and content[1:2] in ("", " "):
            break
        pair = _split_key(content, number)
        if pair is None:
            raise YamlSubsetError("expected 'key: value'", number)
        key, rest = pair
        i += 1
        if rest:
            out[key] = _scalar(rest, number, depth)
        elif i < len(lines) and (lines[i][0] > indent or (lines[i][0] == indent and lines[i][1][:1] == "-")):
            out[key], i = _block(lines, i, lines[i][0], depth + 1)
        else:
            out[key] = None
    return out, i


def _split_key(content: str, number: int | None = None) -> tuple[str, str] | None:
    if content[:1] in ("'", '"'):
        quote = content[0]
        end = content.find(quote, 1)
        while end > 0 and quote == "'" and content[end + 1 : end + 2] == "'":
            end = content.find(quote, end + 2)
        if end < 0 or content[end + 1 : end + 2] != ":":
            return None
        return _quoted(content[: end + 1], number), content[end + 2 :].strip()
    colon = content.find(": ")
    if colon > 0:
        return content[:colon], content[colon + 2 :].strip()
    if colon < 0 and len(content) > 1 and content.endswith(":"):
        return content[:-1], ""
    return None  # no key, or an empty one (": x"), which LLVM never wrote


def _scalar(text: str, number: int | None, depth: int = 0) -> Value:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        if depth > MAX_DEPTH:
            raise YamlSubsetError(f"flow sequences nested deeper than {MAX_DEPTH} levels", number)
        inner = text[1:-1].strip()
        return [_scalar(part, number, depth + 1) for part in inner.split(",")] if inner else []
    if text.startswith(("'", '"')):
        return _quoted(text, number)
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    try:
        return int(text, 0)
    except ValueError:
        return text


def _quoted(text: str, number: int | None) -> str:
    """A single- or double-quoted scalar (``text`` starts with its quote)."""
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlSubsetError("unterminated quoted scalar", number)
        return text[1:-1].replace("''", "'")
    if not text.endswith('"') or len(text) < 2:
        raise YamlSubsetError("unterminated quoted scalar", number)
    try:
        return text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as exc:
        raise YamlSubsetError(f"bad escape in double-quoted scalar: {exc.reason}", number) from None
