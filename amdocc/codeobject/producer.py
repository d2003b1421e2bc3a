"""Which compiler built a code object, from the strings in its ``.comment`` section.

Clang writes its identification (``"clang version 22.1.8 (...)"``, ``"AMD clang version
19.0.0git (https://github.com/RadeonOpenCompute/llvm-project roc-6.3.1 ...)"``) and LLD adds
``"Linker: LLD 24.0.0 (https://github.com/llvm/llvm-project b010a18d2b64)"``. Code objects that
llc or Triton compiled carry only the linker's line; the compiler is then taken to be the LLVM
the linker came from, and the record says so. The strings are NUL-separated (a SHF_MERGE |
SHF_STRINGS section); anything that is not UTF-8 text is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..caches import cached

# "<vendor> clang version X.Y.Z[git] (...)" and "Linker: <vendor> LLD X.Y.Z[git] (...)"
_CLANG_RE = re.compile(r"^(?P<vendor>.*?)\bclang version (?P<version>\d+\.\d+\.\d+)(?P<git>git)?\b")
_LLD_RE = re.compile(r"^Linker:\s*(?P<vendor>.*?)\bLLD (?P<version>\d+\.\d+\.\d+)(?P<git>git)?\b")
# The commit a line names: the first run of 12-40 hex digits in it ("... llvm-project.git
# 8f497e0992fb7513f7f78a6f6b6f1056c375e961)", "(ROCm/llvm-project d6f6cb691863)"; ROCm 7.14's
# "46fcb339...+PATCHED:440716f8..." names its base commit first).
_COMMIT_RE = re.compile(r"(?<![0-9a-fA-F])([0-9a-f]{12,40})(?![0-9a-fA-F])")
MAX_COMMENT_BYTES = 1 << 16  # a .comment larger than this is not a compiler's identification


@dataclass(frozen=True, slots=True)
class Producer:
    """The LLVM that produced a code object, as its ``.comment`` says."""

    text: str  # the line the version was read from
    tool: str  # "clang" or "lld"
    vendor: str  # "" for upstream, else e.g. "AMD", "Debian"
    version: tuple[int, int, int]
    git: bool  # a development snapshot ("22.0.0git"), not a release

    @property
    def major(self) -> int:
        return self.version[0]

    @property
    def snapshot(self) -> bool:
        """A development build of main: "git" in the version, or X.0.y, which LLVM 18 and later never
        release (a major's first release is X.1.0; main between two branches is X.0.0)."""
        return is_snapshot(self.version, self.git)

    @property
    def commit(self) -> str | None:
        """The source commit the line names (AMD's fork and upstream LLD both give one), or None."""
        m = _COMMIT_RE.search(self.text)
        return m.group(1) if m else None

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version)) + ("git" if self.git else "")

    def as_dict(self) -> dict[str, str]:
        return dict(_as_items(self))  # a new dict each time: callers may change theirs


@cached(maxsize=1024)  # every llvm-model record carries its producer: read the line once
def _as_items(p: Producer) -> tuple[tuple[str, str], ...]:
    out = {"text": p.text, "tool": p.tool, "vendor": p.vendor, "version": p.version_text}
    if p.commit:
        out["commit"] = p.commit
    return tuple(out.items())


def is_snapshot(version: tuple[int, ...], git: bool) -> bool:
    """Whether an LLVM version names a development snapshot rather than a release."""
    return git or (version[0] >= 18 and len(version) > 1 and version[1] == 0)


def comment_strings(data: bytes) -> list[str]:
    """The printable strings of a ``.comment`` section, in order."""
    out = []
    for piece in data[:MAX_COMMENT_BYTES].split(b"\0"):
        try:
            text = piece.decode("utf-8").strip()
        except UnicodeDecodeError:
            continue
        if text and text.isprintable():
            out.append(text)
    return out


def parse_producer(line: str) -> Producer | None:
    """A Producer from one ``.comment`` line, or None when the line names no LLVM version."""
    for tool, pattern in (("clang", _CLANG_RE), ("lld", _LLD_RE)):
        m = pattern.match(line)
        if m:
            major, minor, patch = (int(x) for x in m.group("version").split("."))
            return Producer(line, tool, m.group("vendor").strip(), (major, minor, patch), bool(m.group("git")))
    return None


def producers(strings: list[str]) -> tuple[Producer | None, list[str]]:
    """The compiler of a code object (clang's line, else the linker's) and notes on what was seen:
    several different compilers, or none at all."""
    found = [p for p in map(parse_producer, strings) if p is not None]
    compilers = [p for p in found if p.tool == "clang"]
    chosen = (compilers or found)[0] if found else None
    notes = []
    versions = {p.version_text for p in compilers}
    if len(versions) > 1:  # then the first clang line is the one chosen
        notes.append(
            f".comment names {len(versions)} clang versions ({', '.join(sorted(versions))}); "
            f"the first, {compilers[0].version_text}, is used"
        )
    return chosen, notes
