#!/usr/bin/env python3
"""Read HIP's VGPR file and SGPR trap reserve from the runtime's own source, per ROCm release.

For each release (and each tag or commit of it listed in READINGS) this reads, from the local git
mirrors (``git show REV:path``), the CLR files the occupancy function's numbers come from:

- ``rocclr/device/device.cpp``: the ISA table (``Isa::supportedIsas``); a processor runs under
  the ROC runtime when a row of it has the ROC column true (generic targets are left out);
- ``rocclr/device/rocm/rocdevice.cpp``: how ``info_.vgprsPerSimd_`` and
  ``info_.vgprAllocGranularity_`` are set. Up to mid-2025 a ``switch`` on the ISA version, which
  this tool parses and *runs* for each processor's (major, minor, stepping) with C's switch rules
  (fall-through, ``default``, ``break``), so no value is guessed; a processor the code sets
  nothing for keeps the ``memset`` 0 of ``Device::Device`` (device.cpp). From rocm-systems
  7fd322a on, the values come from comgr's isa metadata (``TotalNumVGPRs``,
  ``VGPRAllocGranule``): comgr is not in these mirrors, so those releases get the processor list
  and the citation of the comgr call, no numbers;
- ``hipamd/src/hip_platform.cpp``: the SGPR divisor of the occupancy function,
  ``alignUp(usedSGPRs_, GRANULE)`` plus, if any, a literal trap reserve.

Before ROCm/clr (ROCm <= 5.5) the runtime was two repositories, both tagged per release:
ROCm-Developer-Tools/hipamd (``src/hip_platform.cpp``, whose occupancy function then set the VGPR
file itself, in an ``if`` chain on ``device.isa()``'s version: this tool runs that chain per
processor as it runs the later switch) and ROCm-Developer-Tools/ROCclr (``device/device.cpp``, the
same ISA table). The ROCm/hipamd and ROCm/ROCclr mirrors hold them; a ("hipamd", TAG) reading reads
both at TAG.

Every number goes to tests/data/hip_source_tables.json with the repository, revision, commit and
file (and lines) it was read from. This tool never imports amdocc: it is the independent reading
that tests/test_hip_source_tables.py compares tables/hip_profiles.toml with.

Usage::

    python3 tools/hip_source_tables.py            # write tests/data/hip_source_tables.json
    python3 tools/hip_source_tables.py --check    # exit 1 if the file would change
    python3 tools/hip_source_tables.py --mirrors DIR
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "tests" / "data" / "hip_source_tables.json"
DEFAULT_MIRRORS = Path("/work/.mirror")

# Mirror directory -> the public repository it holds.
REPOS = {
    "ROCm+clr": "ROCm/clr",
    "smajidzahedi+clr": "smajidzahedi/clr",
    "jeffdaily+clr": "jeffdaily/clr",
    # rocm-systems develop history with projects/clr, as published in NautRobot/Eze-P.
    "NautRobot+Eze-P": "NautRobot/Eze-P",
    "ROCm+TheRock": "ROCm/TheRock",
    "ROCm+hipamd": "ROCm/hipamd",
    "ROCm+ROCclr": "ROCm/ROCclr",
}
CLR_IN_ROCM_SYSTEMS = "projects/clr/"

# (mirror, revision, path prefix of CLR in that repository). A ("ROCm+TheRock", TAG) entry means
# "the rocm-systems commit TAG pins", looked up in the rocm-systems history.
READINGS: dict[str, list[tuple[str, str]]] = {
    "rocm-5.2": [("hipamd", "rocm-5.2.0"), ("hipamd", "rocm-5.2.1"), ("hipamd", "rocm-5.2.3")],
    "rocm-5.6": [("ROCm+clr", "rocm-5.6.0"), ("ROCm+clr", "rocm-5.6.1")],
    "rocm-5.7": [("ROCm+clr", "rocm-5.7.0"), ("ROCm+clr", "rocm-5.7.1")],
    "rocm-6.0": [("ROCm+clr", "rocm-6.0.0"), ("ROCm+clr", "rocm-6.0.2")],
    "rocm-6.1": [("ROCm+clr", "rocm-6.1.0"), ("ROCm+clr", "rocm-6.1.1"), ("ROCm+clr", "rocm-6.1.2")],
    "rocm-6.2": [
        ("ROCm+clr", "rocm-6.2.0"),
        ("ROCm+clr", "rocm-6.2.1"),
        ("ROCm+clr", "rocm-6.2.2"),
        ("smajidzahedi+clr", "rocm-6.2.4"),
    ],
    "rocm-6.3": [
        ("smajidzahedi+clr", "rocm-6.3.0"),
        ("smajidzahedi+clr", "rocm-6.3.1"),
        ("smajidzahedi+clr", "rocm-6.3.2"),
        ("smajidzahedi+clr", "rocm-6.3.3"),
        ("jeffdaily+clr", "release/rocm-rel-6.3-statco-hotfix"),
    ],
    "rocm-6.4": [("smajidzahedi+clr", "733235e38"), ("smajidzahedi+clr", "a187df25c")],
    "rocm-7.0": [("NautRobot+Eze-P", "84e9845")],
    "rocm-7.1": [("NautRobot+Eze-P", "55feeef")],
    "rocm-7.2": [("NautRobot+Eze-P", "55feeef"), ("NautRobot+Eze-P", "598ca70"), ("NautRobot+Eze-P", "318d138")],
    "rocm-7.9": [("ROCm+TheRock", "therock-7.9.0")],
    "rocm-7.10": [("ROCm+TheRock", "therock-7.10"), ("NautRobot+Eze-P", "598ca70")],
    "rocm-7.11": [("ROCm+TheRock", "therock-7.11")],
    "rocm-7.12": [("ROCm+TheRock", "therock-7.12"), ("NautRobot+Eze-P", "93bc019")],
    "rocm-7.13": [("ROCm+TheRock", "therock-7.13")],
    "rocm-7.14": [("ROCm+TheRock", "therock-7.14"), ("NautRobot+Eze-P", "cd52904"), ("NautRobot+Eze-P", "aaae694")],
    # ROCm 10: the release branches' pins are not in the mirrors; the newest develop read stands in
    # (tables/hip_profiles.toml says from which commits the rest is inferred).
    "rocm-10.0": [("ROCm+TheRock", "release/therock-10.0"), ("NautRobot+Eze-P", "aaae694")],
    "rocm-10.1": [("ROCm+TheRock", "release/bkc/therock-10.1-20260811"), ("NautRobot+Eze-P", "aaae694")],
    # the develop snapshots: the device tables of their periods
    "develop-2025": [("NautRobot+Eze-P", "55feeef"), ("NautRobot+Eze-P", "318d138")],
    "develop": [("NautRobot+Eze-P", "aaae694")],
}
# The pre-CLR layout: hipamd and ROCclr at the same tag.
PRE_CLR = ("ROCm+hipamd", "ROCm+ROCclr")
PRE_CLR_PLATFORM = "src/hip_platform.cpp"
PRE_CLR_DEVICE = "device/device.cpp"
# the occupancy function's locals that held the VGPR file then
PRE_CLR_VGPRS, PRE_CLR_GRANULE = "maxVGPRs", "VgprGranularity"
OCCUPANCY_FUNCTION = "ihipOccupancyMaxActiveBlocksPerMultiprocessor"
ROCM_SYSTEMS_MIRROR = "NautRobot+Eze-P"

DEVICE_CPP = "rocclr/device/device.cpp"
ROCDEVICE_CPP = "rocclr/device/rocm/rocdevice.cpp"
PLATFORM_CPP = "hipamd/src/hip_platform.cpp"
VGPRS = "vgprsPerSimd_"
GRANULE = "vgprAllocGranularity_"


class SourceError(Exception):
    """The source does not have the shape this reader follows: refuse rather than guess."""


# ---------------------------------------------------------------------------------------------
# git


@dataclass(frozen=True)
class Revision:
    mirror: str
    revision: str  # as named (tag, branch or abbreviated commit)
    commit: str  # full hash
    prefix: str  # where CLR lives in the repository

    def cite(self, path: str, lines: list[int] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "repo": REPOS[self.mirror],
            "revision": self.revision,
            "commit": self.commit,
            "file": self.prefix + path,
        }
        if lines:
            out["lines"] = sorted(set(lines))
        return out


def git(mirrors: Path, mirror: str, *args: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(mirrors / mirror / "repo"), *args], capture_output=True, text=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def resolve(mirrors: Path, mirror: str, revision: str) -> tuple[Revision | None, dict[str, str] | None]:
    """The readable revision, or None and a note of what was not readable."""
    if mirror == "ROCm+TheRock":
        tree = git(mirrors, mirror, "ls-tree", revision, "rocm-systems")
        if not tree:
            raise SourceError(f"ROCm/TheRock {revision}: no rocm-systems pin")
        pinned = tree.split()[2]
        commit = git(mirrors, ROCM_SYSTEMS_MIRROR, "rev-parse", "--verify", "-q", pinned + "^{commit}")
        if commit is None:
            return None, {"repo": "ROCm/TheRock", "revision": revision, "pins_rocm_systems": pinned}
        return Revision(ROCM_SYSTEMS_MIRROR, f"{pinned[:7]} (pinned by ROCm/TheRock {revision})", commit.strip(),
                        CLR_IN_ROCM_SYSTEMS), None  # fmt: skip
    commit = git(mirrors, mirror, "rev-parse", "--verify", "-q", revision + "^{commit}")
    if commit is None:
        raise SourceError(f"{REPOS[mirror]} {revision}: not in the mirror")
    prefix = CLR_IN_ROCM_SYSTEMS if mirror == ROCM_SYSTEMS_MIRROR else ""
    return Revision(mirror, revision, commit.strip(), prefix), None


def show(mirrors: Path, rev: Revision, path: str) -> str:
    text = git(mirrors, rev.mirror, "show", f"{rev.commit}:{rev.prefix}{path}")
    if text is None:
        raise SourceError(f"{REPOS[rev.mirror]} {rev.revision}: no {rev.prefix}{path}")
    return text


# ---------------------------------------------------------------------------------------------
# C++ tokens (comments dropped, line numbers kept)

TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<string>\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])+')|(?P<number>\d+)"
    r"|(?P<name>[A-Za-z_]\w*)|(?P<op>::|->|==|!=|<=|>=|&&|\|\||[^\s\w])|(?P<space>\s+)",
    re.S,
)


@dataclass(frozen=True)
class Tok:
    text: str
    kind: str
    line: int


def tokenize(text: str, first_line: int = 1) -> list[Tok]:
    out, line, pos = [], first_line, 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise SourceError(f"line {line}: cannot read {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        if kind not in ("comment", "space"):
            out.append(Tok(m.group(), kind, line))
        line += m.group().count("\n")
        pos = m.end()
    return out


def matching(tokens: list[Tok], start: int) -> int:
    """Index of the bracket closing the one at ``start``."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opening, closing, depth = tokens[start].text, pairs[tokens[start].text], 0
    for i in range(start, len(tokens)):
        depth += (tokens[i].text == opening) - (tokens[i].text == closing)
        if depth == 0:
            return i
    raise SourceError(f"line {tokens[start].line}: unbalanced {opening}")


# ---------------------------------------------------------------------------------------------
# The VGPR switch: a statement parser and interpreter for the subset of C++ it is written in
# (switch/case/default/break, if/else, blocks, `info_.X = N;`). Anything else is refused.


class Break(Exception):
    pass


class Interpreter:
    def __init__(self, tokens: list[Tok], version: dict[str, int], local_fields: tuple[str, ...] = ()) -> None:
        self.tokens = tokens
        self.version = version
        self.local_fields = local_fields  # plain variables it may assign (`maxVGPRs = 512;`)
        self.assigned: dict[str, tuple[int, int]] = {}  # field -> (value, line)

    # expressions ------------------------------------------------------------------------
    def expression(self, i: int, end: int) -> tuple[int, int]:
        return self._or(i, end)

    def _or(self, i: int, end: int) -> tuple[int, int]:
        value, i = self._and(i, end)
        while i < end and self.tokens[i].text == "||":
            right, i = self._and(i + 1, end)
            value = int(bool(value) or bool(right))
        return value, i

    def _and(self, i: int, end: int) -> tuple[int, int]:
        value, i = self._compare(i, end)
        while i < end and self.tokens[i].text == "&&":
            right, i = self._compare(i + 1, end)
            value = int(bool(value) and bool(right))
        return value, i

    def _compare(self, i: int, end: int) -> tuple[int, int]:
        left, i = self._primary(i, end)
        ops = {"==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__, ">": int.__gt__,
               ">=": int.__ge__}  # fmt: skip
        if i < end and self.tokens[i].text in ops:
            op = ops[self.tokens[i].text]
            right, i = self._primary(i + 1, end)
            return int(op(left, right)), i
        return left, i

    def _primary(self, i: int, end: int) -> tuple[int, int]:
        tok = self.tokens[i]
        if tok.kind == "number":
            return int(tok.text), i + 1
        if tok.text == "(":
            close = matching(self.tokens, i)
            value, j = self.expression(i + 1, close)
            if j != close:
                raise SourceError(f"line {tok.line}: unexpected {self.tokens[j].text!r}")
            return value, close + 1
        # isa().versionMajor() and its kin (device.isa()... in the pre-CLR occupancy function)
        if [t.text for t in self.tokens[i : i + 2]] == ["device", "."]:
            i += 2
        texts = [t.text for t in self.tokens[i : i + 8]]
        if texts[:6] == ["isa", "(", ")", ".", texts[4], "("] and texts[6] == ")":
            if texts[4] not in self.version:
                raise SourceError(f"line {tok.line}: isa().{texts[4]}() is not an ISA version")
            return self.version[texts[4]], i + 7
        raise SourceError(f"line {tok.line}: cannot evaluate {tok.text!r}")

    def condition(self, i: int) -> tuple[int, int]:
        """`( expr )` at i: its value and the index after it."""
        if self.tokens[i].text != "(":
            raise SourceError(f"line {self.tokens[i].line}: expected (")
        close = matching(self.tokens, i)
        value, j = self.expression(i + 1, close)
        if j != close:
            raise SourceError(f"line {self.tokens[j].line}: unexpected {self.tokens[j].text!r}")
        return value, close + 1

    # statements -------------------------------------------------------------------------
    def statement_end(self, i: int) -> int:
        """Index after the statement starting at i (without running it)."""
        text = self.tokens[i].text
        if text == "{":
            return matching(self.tokens, i) + 1
        if text == "switch":
            return matching(self.tokens, self.condition(i + 1)[1]) + 1
        if text == "if":
            j = self.statement_end(matching(self.tokens, i + 1) + 1)
            if j < len(self.tokens) and self.tokens[j].text == "else":
                j = self.statement_end(j + 1)
            return j
        j = i
        while self.tokens[j].text != ";":
            if self.tokens[j].text in "{}":
                raise SourceError(f"line {self.tokens[j].line}: unexpected {self.tokens[j].text!r}")
            j += 1
        return j + 1

    def run(self, i: int) -> int:
        """Run the statement at i; return the index after it. Raises Break on `break;`."""
        tok = self.tokens[i]
        if tok.text == "{":
            close = matching(self.tokens, i)
            j = i + 1
            while j < close:
                j = self.run(j)
            return close + 1
        if tok.text == "if":
            value, body = self.condition(i + 1)
            after_body = self.statement_end(body)
            has_else = after_body < len(self.tokens) and self.tokens[after_body].text == "else"
            end = self.statement_end(after_body + 1) if has_else else after_body
            if value:
                self.run(body)
            elif has_else:
                self.run(after_body + 1)
            return end
        if tok.text == "switch":
            return self.switch(i)
        if tok.text == "break" and self.tokens[i + 1].text == ";":
            raise Break
        return self.assignment(i)

    def assignment(self, i: int) -> int:
        texts = [t.text for t in self.tokens[i : i + 6]]
        if texts[:2] == ["info_", "."] and texts[3] == "=" and self.tokens[i + 4].kind == "number" and texts[5] == ";":
            self.assigned[texts[2]] = (int(texts[4]), self.tokens[i + 4].line)
            return i + 6
        if (
            texts[0] in self.local_fields
            and texts[1] == "="
            and self.tokens[i + 2].kind == "number"
            and texts[3] == ";"
        ):
            self.assigned[texts[0]] = (int(texts[2]), self.tokens[i + 2].line)
            return i + 4
        raise SourceError(f"line {self.tokens[i].line}: not a literal info_ assignment: {' '.join(texts)}")

    def switch(self, i: int) -> int:
        value, body = self.condition(i + 1)
        close = matching(self.tokens, body)
        labels: dict[int | None, int] = {}  # case value (None: default) -> index of its first statement
        statements: list[int] = []
        j = body + 1
        while j < close:
            if self.tokens[j].text == "case":
                label, j = self.condition(j + 1) if self.tokens[j + 1].text == "(" else self._primary(j + 1, close)
                labels.setdefault(label, len(statements))
            elif self.tokens[j].text == "default":
                labels.setdefault(None, len(statements))
                j += 1
            else:
                statements.append(j)
                j = self.statement_end(j)
                continue
            if self.tokens[j].text != ":":
                raise SourceError(f"line {self.tokens[j].line}: expected : after a case label")
            j += 1
        start = labels.get(value, labels.get(None))
        if start is not None:
            try:
                for k in statements[start:]:
                    self.run(k)
            except Break:
                pass
        return close + 1


def vgpr_switch(text: str) -> tuple[list[Tok], int] | None:
    """Tokens of rocdevice.cpp and the index of the `switch` whose body assigns the VGPR file."""
    tokens = tokenize(text)
    found = []
    for i, tok in enumerate(tokens):
        if tok.text == "switch" and tokens[i + 1].text == "(":
            body = matching(tokens, i + 1) + 1
            if tokens[body].text != "{":
                continue
            inside = {t.text for t in tokens[body : matching(tokens, body)]}
            if VGPRS in inside:
                found.append(i)
    # nested switches also contain the fields: the outermost is the first found
    outer = [i for i in found if not any(o < i < matching(tokens, matching(tokens, o + 1) + 1) for o in found)]
    if len(outer) > 1:
        raise SourceError("more than one switch sets the VGPR file")
    return (tokens, outer[0]) if outer else None


def vgpr_if_chain(text: str) -> tuple[list[Tok], int]:
    """Tokens of the pre-CLR hip_platform.cpp and the index of the outermost `if` of the
    occupancy function that assigns the VGPR file's locals."""
    tokens = tokenize(text)
    # the body of ihipOccupancyMaxActiveBlocksPerMultiprocessor's definition
    starts = [i for i, t in enumerate(tokens[:-1]) if t.text == OCCUPANCY_FUNCTION and tokens[i + 1].text == "("]
    bodies = [matching(tokens, i + 1) + 1 for i in starts]
    bodies = [b for b in bodies if tokens[b].text == "{"]
    if len(bodies) != 1:
        raise SourceError(f"hip_platform.cpp: {len(bodies)} definitions of {OCCUPANCY_FUNCTION}, not one")
    first, last = bodies[0] + 1, matching(tokens, bodies[0])
    found = []
    for i in range(first, last):
        if tokens[i].text != "if" or tokens[i + 1].text != "(":
            continue
        run = Interpreter(tokens, {}, (PRE_CLR_VGPRS, PRE_CLR_GRANULE))
        end = run.statement_end(i)
        if any(t.text == PRE_CLR_VGPRS and tokens[k + 1].text == "=" for k, t in enumerate(tokens[i:end], i)):
            found.append((i, end))
    outer = [(i, end) for i, end in found if not any(o < i < e for o, e in found)]
    if len(outer) != 1:
        raise SourceError(f"hip_platform.cpp: {len(outer)} if-chains set {PRE_CLR_VGPRS}, not one")
    return tokens, outer[0][0]


def assignment_lines(text: str, field: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if re.search(rf"\binfo_\.{field}\s*=[^=]", line)]


# ---------------------------------------------------------------------------------------------
# device.cpp: the ISA table


@dataclass(frozen=True)
class Processor:
    name: str
    version: tuple[int, int, int]
    line: int


def runtime_processors(text: str) -> list[Processor]:
    """Processors (no feature suffix, no generic targets) with a ROC-true row, in table order."""
    start = text.find("supportedIsas_[] = {")
    if start < 0:
        raise SourceError("device.cpp: no supportedIsas_ table")
    first_line = text.count("\n", 0, start) + 1
    tokens = tokenize(text[start:], first_line)
    open_brace = next(i for i, t in enumerate(tokens) if t.text == "{")
    close = matching(tokens, open_brace)
    header = text[start : text.find('{"gfx', start)]
    # the table had an HSAIL ID column (a string or nullptr) between the target ID and ROC until 2025
    has_hsail = "HSAIL ID" in header
    if not has_hsail and not re.search(r"ROC\s+PAL", header):
        raise SourceError("device.cpp: the ISA table's header names neither HSAIL ID nor ROC PAL")
    runs: dict[str, Processor] = {}
    i = open_brace + 1
    while i < close:
        if tokens[i].text != "{":
            i += 1
            continue
        end = matching(tokens, i)
        fields = [t.text for t in tokens[i + 1 : end] if t.text != ","]
        row = fields[1 + has_hsail :]
        name = fields[0].strip('"')
        if row[0] not in ("true", "false") or not all(f.isdigit() for f in row[2:5]):
            raise SourceError(f"device.cpp line {tokens[i].line}: unexpected row {' '.join(fields[:8])}")
        processor = name.split(":")[0]
        if row[0] == "true" and "generic" not in processor and processor not in runs:
            runs[processor] = Processor(processor, (int(row[2]), int(row[3]), int(row[4])), tokens[i].line)
        i = end + 1
    return list(runs.values())


def memset_line(text: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if re.search(r"memset\(\s*&info_\s*,\s*'\\0'\s*,\s*sizeof\(info_\)\s*\)", line):
            return n
    raise SourceError("device.cpp: Device::Device does not memset info_ to 0")


# ---------------------------------------------------------------------------------------------
# hip_platform.cpp: the SGPR divisor

SGPR_DIVISOR = re.compile(r"alignUp\(\s*[\w.>-]*usedSGPRs_\s*,\s*(\w+)\s*\)\s*(\+\s*(\w+))?")


def sgpr_divisor(text: str) -> dict[str, Any]:
    """SGPR granule and trap reserve of every `alignUp(usedSGPRs_, G) [+ R]` in the file."""
    flat = re.sub(r"\s+", " ", text)
    found = {(m.group(1), m.group(3) or "0") for m in SGPR_DIVISOR.finditer(flat)}
    if not found:
        raise SourceError("hip_platform.cpp: no alignUp(usedSGPRs_, ...) divisor")
    if len(found) > 1:
        raise SourceError(f"hip_platform.cpp: the SGPR divisors differ: {sorted(found)}")
    granule, reserve = found.pop()
    if not (granule.isdigit() and reserve.isdigit()):
        raise SourceError(f"hip_platform.cpp: SGPR divisor is not literal: granule {granule}, reserve {reserve}")
    lines = [n for n, line in enumerate(text.splitlines(), 1) if "usedSGPRs_" in line and "alignUp" in line]
    return {"granule": int(granule), "trap_reserve": int(reserve), "lines": lines}


# ---------------------------------------------------------------------------------------------
# One revision


def read_revision(mirrors: Path, rev: Revision) -> dict[str, Any]:
    device = show(mirrors, rev, DEVICE_CPP)
    rocdevice = show(mirrors, rev, ROCDEVICE_CPP)
    processors = runtime_processors(device)
    out: dict[str, Any] = {"processors": {}}
    comgr = re.search(r"\binfo_\.vgprsPerSimd_\s*=\s*[\w:]*getValueFromIsaMeta\([^;]*\"TotalNumVGPRs\"", rocdevice)
    switch = vgpr_switch(rocdevice)
    listed = {p.name: rev.cite(DEVICE_CPP, [p.line]) for p in processors}
    if comgr and not switch:
        granule = re.search(r"getValueFromIsaMeta\([^;]*\"VGPRAllocGranule\"", rocdevice)
        if not granule:
            raise SourceError("rocdevice.cpp: TotalNumVGPRs from comgr but no VGPRAllocGranule")
        out["vgpr_values"] = "comgr"
        out["comgr_call"] = rev.cite(
            ROCDEVICE_CPP, assignment_lines(rocdevice, VGPRS) + assignment_lines(rocdevice, GRANULE)
        )
        out["processors"] = {name: {"listed": cite} for name, cite in listed.items()}
    elif switch and not comgr:
        tokens, at = switch
        # every assignment of the two fields must be inside the switch this tool runs
        inside = {t.line for t in tokens[at : matching(tokens, matching(tokens, at + 1) + 1)]}
        stray = [n for f in (VGPRS, GRANULE) for n in assignment_lines(rocdevice, f) if n not in inside]
        if stray:
            raise SourceError(f"rocdevice.cpp: VGPR fields also set at lines {stray}")
        zero = memset_line(device)
        out["vgpr_values"] = "rocdevice.cpp switch on the ISA version"
        for p in processors:
            run = Interpreter(
                tokens, dict(zip(("versionMajor", "versionMinor", "versionStepping"), p.version, strict=True))
            )
            run.run(at)
            vgprs, granule = run.assigned.get(VGPRS), run.assigned.get(GRANULE)
            if (vgprs is None) != (granule is None):
                raise SourceError(f"{p.name}: the switch sets only one of the VGPR fields")
            row: dict[str, Any] = {"version": list(p.version), "listed": listed[p.name]}
            if vgprs is None or granule is None:
                row.update(vgprs_per_simd=0, granule=0, source=rev.cite(DEVICE_CPP, [zero]), unset=True)
            else:
                row.update(vgprs_per_simd=vgprs[0], granule=granule[0],
                           source=rev.cite(ROCDEVICE_CPP, [vgprs[1], granule[1]]))  # fmt: skip
            out["processors"][p.name] = row
    else:
        raise SourceError("rocdevice.cpp: the VGPR file is set neither by a switch nor from comgr")
    sgpr = sgpr_divisor(show(mirrors, rev, PLATFORM_CPP))
    out["sgpr"] = {"granule": sgpr["granule"], "trap_reserve": sgpr["trap_reserve"],
                   "source": rev.cite(PLATFORM_CPP, sgpr["lines"])}  # fmt: skip
    return out


def read_pre_clr(mirrors: Path, tag: str) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """hipamd and ROCclr at ``tag``: the ISA table, the occupancy function's own VGPR if-chain run
    for each processor, and its SGPR divisor."""
    revs = []
    for mirror in PRE_CLR:
        rev, _ = resolve(mirrors, mirror, tag)
        assert rev is not None  # resolve only returns None for TheRock pins
        revs.append(rev)
    hipamd, rocclr = revs
    device = show(mirrors, rocclr, PRE_CLR_DEVICE)
    platform = show(mirrors, hipamd, PRE_CLR_PLATFORM)
    tokens, at = vgpr_if_chain(platform)
    listed = {p.name: rocclr.cite(PRE_CLR_DEVICE, [p.line]) for p in runtime_processors(device)}
    out: dict[str, Any] = {"vgpr_values": "hip_platform.cpp if-chain on the ISA version", "processors": {}}
    for p in runtime_processors(device):
        run = Interpreter(
            tokens,
            dict(zip(("versionMajor", "versionMinor", "versionStepping"), p.version, strict=True)),
            (PRE_CLR_VGPRS, PRE_CLR_GRANULE),
        )
        run.run(at)
        vgprs, granule = run.assigned.get(PRE_CLR_VGPRS), run.assigned.get(PRE_CLR_GRANULE)
        if vgprs is None or granule is None:
            raise SourceError(f"{p.name}: the if-chain sets {PRE_CLR_VGPRS} and {PRE_CLR_GRANULE} on every path")
        out["processors"][p.name] = {
            "version": list(p.version),
            "listed": listed[p.name],
            "vgprs_per_simd": vgprs[0],
            "granule": granule[0],
            "source": hipamd.cite(PRE_CLR_PLATFORM, [vgprs[1], granule[1]]),
        }
    sgpr = sgpr_divisor(platform)
    out["sgpr"] = {"granule": sgpr["granule"], "trap_reserve": sgpr["trap_reserve"],
                   "source": hipamd.cite(PRE_CLR_PLATFORM, sgpr["lines"])}  # fmt: skip
    read = [{"repo": REPOS[r.mirror], "revision": r.revision, "commit": r.commit} for r in revs]
    return read, out


def numbers(reading: dict[str, Any]) -> Any:
    """What a reading says, without its citations (to compare revisions of one release)."""
    procs = {k: (v.get("vgprs_per_simd"), v.get("granule")) for k, v in reading["processors"].items()}
    return reading["vgpr_values"], procs, reading["sgpr"]["granule"], reading["sgpr"]["trap_reserve"]


def read_release(mirrors: Path, release: str) -> dict[str, Any]:
    read, unreadable, first, differs = [], [], None, []
    for mirror, revision in READINGS[release]:
        if mirror == "hipamd":
            pair, reading = read_pre_clr(mirrors, revision)
            read.extend(pair)
            if first is None:
                first = reading
            elif numbers(reading) != numbers(first):
                differs.append(revision)
            continue
        rev, missing = resolve(mirrors, mirror, revision)
        if rev is None:
            unreadable.append(missing)
            continue
        reading = read_revision(mirrors, rev)
        read.append({"repo": REPOS[rev.mirror], "revision": rev.revision, "commit": rev.commit})
        if first is None:
            first = reading
        elif numbers(reading) != numbers(first):
            differs.append(rev.revision)
    if first is None:
        raise SourceError(f"{release}: no revision readable")
    if differs:
        raise SourceError(f"{release}: {differs} read otherwise than {read[0]['revision']}")
    return {"read": read, "unreadable": unreadable, **first}


def build(mirrors: Path) -> dict[str, Any]:
    return {
        "about": (
            "HIP's VGPR file per processor and SGPR divisor per ROCm release, read by "
            "tools/hip_source_tables.py from CLR's source at the revisions in `read` (all of which "
            "give the same numbers; the first is cited per value). Never edited by hand."
        ),
        "comgr": (
            "From rocm-systems 7fd322a (2025-07-09) rocdevice.cpp takes vgprsPerSimd_ and "
            "vgprAllocGranularity_ from comgr's isa metadata (TotalNumVGPRs, VGPRAllocGranule); "
            "comgr's source is not in these mirrors, so those releases list processors only."
        ),
        "releases": {release: read_release(mirrors, release) for release in READINGS},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="directory of git mirrors")
    parser.add_argument("--check", action="store_true", help="exit 1 if the JSON would change")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    try:
        text = json.dumps(build(args.mirrors), indent=1, sort_keys=False) + "\n"
    except SourceError as error:
        print(f"hip_source_tables: {error}", file=sys.stderr)
        return 2
    if args.check:
        same = args.output.exists() and args.output.read_text() == text
        print("up to date" if same else f"{args.output} would change")
        return 0 if same else 1
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
