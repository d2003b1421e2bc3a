"""A file name that is not UTF-8 goes through every writer one way, never as a traceback.

The rule (amdocc/printable.py, docs/cli-contract.md): each byte that is not valid UTF-8 is
written as ``\\xNN``, as Python's own "backslashreplace" decoder writes it, in text, JSON, CSV,
Parquet, HTML, JUnit, SARIF messages and GitHub annotations; a SARIF artifact URI is
percent-encoded from the raw bytes. The expected texts are derived from the raw names by
Python's codecs (``bytes.decode("utf-8", "backslashreplace")``, ``urllib.parse.unquote_to_bytes``),
not by amdocc. The inputs: a copy of a real fixture (built by clang-22, tests/data/fixtures/elf)
named ``b"\\xff\\xfe.co"``, and a file of text named ``b"\\xff\\xfe-bad.co"``, an unreadable one.
Each command runs as its own process with standard output in strict UTF-8 (a UTF-8 locale), so a
surrogate that reached the stream would be a UnicodeEncodeError.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote_to_bytes

import jsonschema
import pytest
import xmlschema
from hypothesis import given
from hypothesis import strategies as st

from amdocc.printable import printable, uri_path
from conftest import FIXTURES, ROOT, needs

GOOD = b"\xff\xfe.co"
BAD = b"\xff\xfe-bad.co"
SCHEMAS = Path(__file__).resolve().parent / "data" / "schemas"


def shown(raw: bytes) -> str:
    """How the rule writes a raw name: Python's backslashreplace decoding of its bytes."""
    return raw.decode("utf-8", "backslashreplace")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("undecodable")
    folder = root / "tree"
    folder.mkdir()
    shutil.copyfile(FIXTURES / "elf" / "gfx942_cov4.hsaco", os.path.join(os.fsencode(folder), GOOD))
    Path(os.fsdecode(os.path.join(os.fsencode(folder), BAD))).write_bytes(b"not a code object\n" * 8)
    return root


def amdocc(cwd: Path, *argv: str | bytes) -> tuple[int, str, str]:
    """One command in its own process, its streams in strict UTF-8, decoded strictly here too."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8:strict", "COLUMNS": "200"}
    p = subprocess.run([sys.executable, "-m", "amdocc", *argv], capture_output=True, env=env, cwd=cwd)
    out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")  # strict: raw bytes would fail here
    assert "Traceback" not in err, err
    return p.returncode, out, err


def strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_the_shown_form_is_pythons_backslashreplace():
    assert shown(GOOD) == "\\xff\\xfe.co" and shown(BAD) == "\\xff\\xfe-bad.co"


@given(st.binary(max_size=40))
def test_printable_writes_every_name_as_backslashreplace_and_the_uri_keeps_its_bytes(raw):
    name = os.fsdecode(raw)
    assert printable(name) == shown(raw)
    printable(name).encode("utf-8")  # always encodable
    assert unquote_to_bytes(uri_path(name)) == raw


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (("inspect", GOOD), 0),
        (("occupancy", "--block", "256", GOOD), 0),
        (("best-block", GOOD), 0),
        (("check", GOOD), 1),
        (("check", "--github", GOOD), 1),
        (("census", GOOD), 0),
        (("diff", GOOD, GOOD), 0),
    ],
)
def test_text_names_the_file_with_backslash_escapes(tree, argv, status):
    code, out, _ = amdocc(tree / "tree", *argv)
    assert code == status
    assert shown(GOOD) in out


def test_github_annotations_name_the_file_with_backslash_escapes(tree):
    code, out, _ = amdocc(tree, "check", "--github", b"tree/" + GOOD, b"tree/" + BAD)
    assert code == 2
    files = {line.split("file=", 1)[1].split(",", 1)[0] for line in out.splitlines() if "file=" in line}
    assert files == {"tree/" + shown(GOOD), "tree/" + shown(BAD)}


def test_an_unreadable_file_is_named_on_standard_error_the_same_way(tree):
    code, _, err = amdocc(tree / "tree", "inspect", BAD)
    assert code == 2 and err.startswith(f"amdocc: {shown(BAD)}: ")


@pytest.mark.parametrize(
    ("argv", "per_kernel"),
    [
        (("inspect", "--json", "tree"), True),
        (("occupancy", "--json", "--block", "256", "tree"), True),
        (("best-block", "--json", "tree"), True),
        (("check", "--json", "tree"), True),
        (("census", "--json", "tree"), False),  # a summary: it names files only for errors and outliers
    ],
)
def test_json_holds_the_escaped_names_and_no_surrogate(tree, argv, per_kernel):
    code, out, _ = amdocc(tree, *argv)
    assert code == 2  # the unreadable file is an error beside the results
    texts = strings(json.loads(out))
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for s in texts for ch in s)
    assert any(s == "tree/" + shown(GOOD) for s in texts) == per_kernel
    assert any(s.startswith("tree/" + shown(BAD) + ": ") for s in texts)  # the error's message


def test_diff_json_names_both_builds_escaped(tree):
    code, out, _ = amdocc(tree / "tree", "diff", "--json", GOOD, GOOD)
    assert code == 0
    doc = json.loads(out)
    assert (doc["old"], doc["new"]) == (shown(GOOD), shown(GOOD))


@pytest.mark.parametrize("where", ["file", "-"])
def test_census_csv_reads_back_with_the_escaped_member(tree, where):
    target = str(tree / "census.csv") if where == "file" else "-"
    code, out, _ = amdocc(tree, "census", "--csv", target, "tree")
    assert code == 2
    text = Path(target).read_text(encoding="utf-8") if where == "file" else out
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["member"] for r in rows} == {shown(GOOD)}
    assert {r["path"] for r in rows} == {"tree/" + shown(GOOD)}
    assert len(rows) == 5  # the fixture's kernels (its .readelf.txt)


def test_census_parquet_reads_back_with_the_escaped_member(tree):
    parquet = needs("pyarrow.parquet", "census --parquet writes with pyarrow")
    code, _, _ = amdocc(tree, "census", "--parquet", "census.parquet", "tree")
    assert code == 2
    table = parquet.read_table(str(tree / "census.parquet"))
    assert set(table.column("member").to_pylist()) == {shown(GOOD)}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []

    def handle_data(self, data: str) -> None:
        self.cells.append(data)


def test_census_html_shows_the_escaped_member(tree):
    code, _, _ = amdocc(tree, "census", "--html", "census.html", "tree")
    assert code == 2
    page = _Text()
    page.feed((tree / "census.html").read_text(encoding="utf-8"))
    assert any(shown(BAD) in cell for cell in page.cells)  # the unreadable file's error
    code, _, _ = amdocc(tree, "census", "--html", "one.html", b"tree/" + GOOD)
    assert code == 0
    page = _Text()
    page.feed((tree / "one.html").read_text(encoding="utf-8"))
    assert f"amdocc census: tree/{shown(GOOD)}" in page.cells  # the title names the file


def test_junit_is_valid_and_names_both_files_escaped(tree):
    code, _, _ = amdocc(tree, "check", "--junit", "check.xml", "tree")
    assert code == 2
    xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).validate(str(tree / "check.xml"))
    suites = {s.get("name"): s for s in ET.parse(tree / "check.xml").getroot()}
    assert set(suites) == {"tree/" + shown(GOOD), "tree/" + shown(BAD)}
    (error,) = suites["tree/" + shown(BAD)].iter("error")
    assert error.get("message").startswith("tree/" + shown(BAD) + ": ")
    assert suites["tree/" + shown(GOOD)].get("failures") == "1"  # scratch_private's 272 B of scratch


def test_sarif_uris_carry_the_raw_bytes_percent_encoded(tree):
    code, _, _ = amdocc(tree, "check", "--sarif", "check.sarif", "tree", str(tree / "tree"))
    assert code == 2
    doc = json.loads((tree / "check.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())).validate(doc)
    (run,) = doc["runs"]
    result_uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"] for loc in r["locations"]}
    absolute = os.fsencode(tree / "tree")
    assert {unquote_to_bytes(u.removeprefix("file://")) for u in result_uris} == {
        b"tree/" + GOOD,
        absolute + b"/" + GOOD,
    }
    (invocation,) = run["invocations"]
    notices = invocation["toolExecutionNotifications"]
    assert {
        unquote_to_bytes(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].removeprefix("file://"))
        for n in notices
    } == {b"tree/" + BAD, absolute + b"/" + BAD}
    assert any(n["message"]["text"].startswith("tree/" + shown(BAD)) for n in notices)


def test_a_baseline_written_for_the_file_still_accepts_its_violation(tree, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copyfile(os.path.join(os.fsencode(tree / "tree"), GOOD), os.path.join(os.fsencode(folder), GOOD))
    baseline = tmp_path / "baseline.json"
    code, _, _ = amdocc(tmp_path, "check", "--baseline", baseline, "--update-baseline", "one")
    assert code == 0
    (entry,) = json.loads(baseline.read_text(encoding="ascii"))["entries"]
    assert os.fsencode(entry["location"]) == GOOD  # kept as Python reads the name: it round-trips
    code, out, _ = amdocc(tmp_path, "check", "--json", "--baseline", baseline, "one")
    assert code == 0
    assert [v["status"] for v in json.loads(out)["violations"]] == ["accepted"]
