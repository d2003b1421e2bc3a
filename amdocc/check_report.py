"""``amdocc check`` results in the formats CI systems read: JUnit XML, SARIF 2.1.0 and GitHub
Actions workflow commands.

Each function takes the plain result record ``amdocc check --json`` prints (see
amdocc/app/check_op.py) and writes it down; none decides anything.

- JUnit XML follows the Apache Ant schema (windyroad/JUnit-Schema, JUnit.xsd): one <testsuite>
  per input file, one <testcase> per kernel checked, a <failure> for a kernel with new
  violations (the schema allows one, so they are listed together), an <error> for a file that
  could not be read. Test cases are named by the demangled name, as the text shows it; the
  schema gives a test case no properties, so each mangled name is a <property> of its suite
  ("mangled: <test case name>").
- SARIF 2.1.0 (OASIS): one result per violation. Accepted ones carry an external suppression
  and baselineState "unchanged", those past their accepted value "updated", new ones "new";
  stale baseline entries are results with baselineState "absent". Messages and logical
  locations name the demangled name; the mangled one is the location's decoratedName (SARIF
  section 3.33.6) and a property. Fingerprint amdoccCheck/v2 adds the kernel's location and copy
  (amdocc.identity) to v1's target, kernel and rule.
- GitHub Actions: ``::error``/``::warning`` lines, escaped as the runner's toolkit escapes them.

A path (or name) that is not UTF-8 is written by amdocc.printable's rule in all three: each
undecodable byte as ``\\xNN``, and in a SARIF artifact URI percent-encoded from the raw bytes.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import socket
from pathlib import PurePath
from typing import Any
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr as _quoteattr

from .demangle import display
from .policy.checks import RULE_SUMMARY, RULES
from .printable import printable, printable_record, uri_path

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FAILING = ("new", "worse")

# The check result and its violation, stale-entry and error records, as the JSON report holds them.
Record = dict[str, Any]


def where(v: Record, mangled: bool = True) -> str:
    """A violation's kernel as people read it: name (demangled unless ``mangled``), target, and
    the container chain."""
    origin = f" [{v['origin']}]" if v.get("origin") else ""
    name = v["kernel"] if mangled else (v.get("demangled") or v["kernel"])
    return f"{name} ({v['target']}) in {v['path']}{origin}"


def status_note(v: Record) -> str:
    if v["status"] == "worse":
        return f" (worse than the {v['accepted_value']} the baseline accepts)"
    return ""


# --------------------------------------------------------------------------- JUnit

# Characters XML 1.0 cannot carry at all; a malformed kernel name may hold them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", printable(text))


def escape(text: str) -> str:
    return _escape(_clean(text))


def quoteattr(text: str) -> str:
    return _quoteattr(_clean(text))


def junit(result: Record, checked: list[tuple[str, str, str, str]]) -> str:
    """``checked``: (path, origin chain, kernel, target) of every kernel checked, in order."""
    by_file: dict[str, list[tuple[str, str, str]]] = {}
    for path, origin, kernel, target in checked:
        by_file.setdefault(path, []).append((origin, kernel, target))
    failing: dict[tuple[str, str, str, str], list[Record]] = {}
    accepted: dict[str, list[Record]] = {}
    for v in result["violations"]:
        if v["status"] in FAILING:
            failing.setdefault((v["path"], v["origin"], v["kernel"], v["target"]), []).append(v)
        else:
            accepted.setdefault(v["path"], []).append(v)
    errors: dict[str, list[str]] = {}
    for e in result["errors"]:
        errors.setdefault(e["path"], []).append(e["error"])
        by_file.setdefault(e["path"], [])
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname() or "localhost"
    props = "".join(
        f"<property name={quoteattr(k)} value={quoteattr(_text(v))}/>" for k, v in result["settings"].items()
    )
    if result.get("baseline"):
        props += f'<property name="baseline" value={quoteattr(result["baseline"])}/>'
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>"]
    for index, (path, kernels) in enumerate(by_file.items()):
        cases: list[str] = []
        mangled: list[str] = []
        failures = 0
        for origin, kernel, target in kernels:
            shown = display(kernel)
            name = f"{shown} [{target}]" + (f" [{origin}]" if origin else "")
            if shown != kernel:
                mangled.append(f"<property name={quoteattr('mangled: ' + name)} value={quoteattr(kernel)}/>")
            found = failing.get((path, origin, kernel, target))
            body = ""
            if found:
                failures += 1
                message = "; ".join(f"{v['rule']}: {v['message']}{status_note(v)}" for v in found)
                kinds = ",".join(v["rule"] for v in found)
                body = f"<failure message={quoteattr(message)} type={quoteattr(kinds)}>{escape(message)}</failure>"
            cases.append(f'<testcase name={quoteattr(name)} classname={quoteattr(path)} time="0">{body}</testcase>')
        for message in errors.get(path, []):
            cases.append(
                f'<testcase name="read" classname={quoteattr(path)} time="0">'
                f'<error message={quoteattr(message)} type="unreadable">{escape(message)}</error></testcase>'
            )
        notes = [
            f"accepted by the baseline: {where(v, False)}: {v['rule']}: {v['message']}" for v in accepted.get(path, [])
        ]
        if index == 0:
            notes += [
                f"stale baseline entry: {display(e['kernel'])} ({e['target']}) {e['rule']}" for e in result["stale"]
            ]
        out.append(
            f'<testsuite package="amdocc.check" id="{index}" name={quoteattr(path)} timestamp="{stamp}" '
            f'hostname={quoteattr(host)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{len(errors.get(path, []))}" skipped="0" time="0">'
        )
        out.append(f"<properties>{props}{''.join(mangled)}</properties>")
        out.extend(cases)
        out.append(f"<system-out>{escape(chr(10).join(notes))}</system-out><system-err></system-err>")
        out.append("</testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def _text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return "" if value is None else str(value)


# --------------------------------------------------------------------------- SARIF


def artifact_uri(path: str) -> str:
    """``path`` as a SARIF artifact URI, percent-encoded from its raw bytes (a file name that is
    not UTF-8 included)."""
    p = PurePath(path)
    if p.is_absolute():
        return "file://" + uri_path(p.as_posix())
    return uri_path(p.as_posix())


def sarif(result: Record, version: str) -> Record:
    from .policy import budgets

    rules = [r for r in RULES if r in result["settings"]["rules"]]
    rules += budgets.rules_of(tuple(result["settings"].get("budgets", ())))  # budget:<comparison>
    index = {r: i for i, r in enumerate(rules)}
    baseline = result.get("baseline")
    results: list[Record] = []
    for v in result["violations"]:
        shown = v.get("demangled") or display(v["kernel"])
        item: Record = {
            "ruleId": v["rule"],
            "ruleIndex": index[v["rule"]],
            "level": "error",
            "message": {"text": f"{shown} ({v['target']}): {v['message']}{status_note(v)}"},
            "locations": [
                *_source_location(v),
                {
                    "physicalLocation": {"artifactLocation": {"uri": artifact_uri(v["path"])}},
                    "logicalLocations": [_logical(v["kernel"], shown, v["target"])],
                },
            ],
            "partialFingerprints": _fingerprints(v),
            "properties": {
                "target": v["target"],
                "origin": v["origin"],
                "symbol": v["symbol"],
                "mangled": v["kernel"],
                "demangled": shown,
                "location": v.get("location"),
                "copy": v.get("copy"),
                "value": v["value"],
                "limit": v["limit"],
            },
        }
        if baseline:
            item["baselineState"] = {"new": "new", "worse": "updated", "accepted": "unchanged"}[v["status"]]
        if v["status"] == "accepted":
            item["suppressions"] = [
                {"kind": "external", "status": "accepted", "justification": f"accepted in the baseline {baseline}"}
            ]
        results.append(item)
    for e in result["stale"]:
        shown = display(e["kernel"])
        results.append(
            {
                "ruleId": e["rule"],
                "ruleIndex": index[e["rule"]],
                "level": "note",
                "baselineState": "absent",
                "message": {
                    "text": f"stale baseline entry: {shown} ({e['target']}) no longer violates "
                    f"{e['rule']}; remove it with --update-baseline"
                },
                "locations": [{"logicalLocations": [_logical(e["kernel"], shown, e["target"])]}],
                "partialFingerprints": _fingerprints(e),
                "properties": {"mangled": e["kernel"], "location": e.get("location"), "copy": e.get("copy")},
            }
        )
    invocation = {
        "executionSuccessful": not result["errors"],
        "toolExecutionNotifications": [
            {
                "level": "error",
                "message": {"text": e["error"]},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(e["path"])}}}],
            }
            for e in result["errors"]
        ],
    }
    driver = {
        "name": "amdocc",
        "version": version,
        "semanticVersion": version,
        "rules": [
            {
                "id": r,
                "name": _camel(r) if r in RULE_SUMMARY else "Budget",
                "shortDescription": {"text": RULE_SUMMARY[r] if r in RULE_SUMMARY else budgets.summary(r)},
                "defaultConfiguration": {"level": "error"},
            }
            for r in rules
        ],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results}],
    }


def source_line(v: Record) -> tuple[str, int] | None:
    """A violation's source file and line ("line": "FILE:LINE", from the code object's line
    table, as the spills-in-loops rule gives it), or None."""
    text = v.get("line")
    if not text:
        return None
    file, _, number = str(text).rpartition(":")
    return (file, int(number)) if file and number.isdigit() and int(number) > 0 else None


def _source_location(v: Record) -> list[Record]:
    """The violation's source line as the result's first (primary) location, where it has one."""
    found = source_line(v)
    if found is None:
        return []
    file, line = found
    return [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(file)}, "region": {"startLine": line}}}]


def _logical(mangled: str, shown: str, target: str) -> Record:
    """A kernel as a SARIF logicalLocation: the demangled name, the mangled one as decoratedName."""
    out: Record = {"name": shown, "kind": "function", "fullyQualifiedName": f"{target}::{shown}"}
    if shown != mangled:
        out["decoratedName"] = mangled
    return out


def _fingerprints(v: Record) -> dict[str, str]:
    """v1 (target, kernel, rule: kept so that existing alerts keep matching) and v2, which adds
    the location and copy that tell two copies of a name apart (amdocc.identity)."""
    location = v.get("location")
    return {
        "amdoccCheck/v1": f"{v['target']}:{v['kernel']}:{v['rule']}",
        "amdoccCheck/v2": f"{'*' if location is None else location}:{v.get('copy') or 0}:"
        f"{v['target']}:{v['kernel']}:{v['rule']}",
    }


def _camel(rule: str) -> str:
    return "".join(part.capitalize() for part in rule.split("-"))


def sarif_text(result: Record, version: str) -> str:
    return json.dumps(printable_record(sarif(result, version)), indent=1) + "\n"


# --------------------------------------------------------------------------- GitHub Actions


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str, message: str, *, file: str | None = None, title: str | None = None, line: int | None = None
) -> str:
    props = []
    if file:
        props.append(f"file={_property(os.path.normpath(file))}")
    if file and line:
        props.append(f"line={line}")
    if title:
        props.append(f"title={_property(title)}")
    return f"::{level}{' ' + ','.join(props) if props else ''}::{_data(message)}"


def github(result: Record, mangled: bool = False) -> list[str]:
    """Annotations for new and worse violations, stale entries and unreadable input; kernel names
    demangled unless ``mangled``."""
    lines = []
    for v in result["violations"]:
        if v["status"] in FAILING:
            source = source_line(v)  # at the source line where the code object names one
            lines.append(
                annotation(
                    "error",
                    f"{where(v, mangled)}: {v['message']}{status_note(v)}",
                    file=v["path"] if source is None else source[0],
                    title=f"amdocc check: {v['rule']}",
                    line=None if source is None else source[1],
                )
            )
    for e in result["stale"]:
        lines.append(
            annotation(
                "warning",
                f"stale baseline entry: {display(e['kernel'], mangled)} ({e['target']}) no longer violates {e['rule']}",
                title="amdocc check: stale baseline entry",
            )
        )
    for e in result["errors"]:
        lines.append(annotation("error", e["error"], file=e["path"], title="amdocc check: unreadable input"))
    return lines
