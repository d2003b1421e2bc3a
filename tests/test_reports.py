"""Reports people read name kernels as the text does: JUnit test cases and SARIF results carry
the demangled name (as llvm-cxxfilt-22 prints it), with the mangled name kept (a suite property
in JUnit, whose schema gives test cases none; decoratedName and a property in SARIF), and both
still validate against the schemas stored in tests/data/schemas."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import jsonschema
import pytest
import xmlschema

from amdocc.cli.main import main
from conftest import ROOT, TESTS

pytestmark = pytest.mark.llvm22

SAMPLE = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
SCHEMAS = TESTS / "data" / "schemas"
# The sample's kernels (amdocc/samples, built by clang-22 from HIP C++): the C++ names, mangled.
MANGLED = ("_Z9saxpy_ldsfPKfPfi", "_Z9reg_heavyPKfPf", "_Z9mfma_agprPf")
CHECK = ("check", "--no-config", "--rules", "occupancy", "--min-occupancy", "16")


def cxxfilt(names: tuple[str, ...]) -> dict[str, str]:
    out = subprocess.run(["llvm-cxxfilt-22", *names], check=True, capture_output=True, text=True).stdout
    return dict(zip(names, out.splitlines(), strict=True))


def test_junit_names_test_cases_demangled_and_keeps_the_mangled_name(capsys, tmp_path):
    report = tmp_path / "junit.xml"
    assert main([*CHECK, "--junit", str(report), str(SAMPLE)]) == 1
    capsys.readouterr()
    xmlschema.XMLSchema(str(SCHEMAS / "JUnit.xsd")).validate(str(report))
    demangled = cxxfilt(MANGLED)
    root = ET.parse(report).getroot()
    names = [tc.get("name") for tc in root.iter("testcase")]
    assert names and not any(m in n for n in names for m in MANGLED)
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        for tc in suite.iter("testcase"):
            kernel = props[f"mangled: {tc.get('name')}"]
            assert kernel in MANGLED and tc.get("name").startswith(demangled[kernel] + " [")


def test_sarif_names_kernels_demangled_with_the_mangled_name_as_decorated_name(capsys, tmp_path):
    report = tmp_path / "out.sarif"
    assert main([*CHECK, "--sarif", str(report), str(SAMPLE)]) == 1
    capsys.readouterr()
    doc = json.loads(report.read_text())
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(doc)
    demangled = cxxfilt(MANGLED)
    results = doc["runs"][0]["results"]
    assert results
    for r in results:
        (loc,) = r["locations"][0]["logicalLocations"]
        mangled = loc["decoratedName"]
        assert mangled in MANGLED and r["properties"]["mangled"] == mangled
        assert loc["name"] == demangled[mangled] and r["message"]["text"].startswith(demangled[mangled] + " (")
        assert mangled not in r["message"]["text"]
        v1, v2 = r["partialFingerprints"]["amdoccCheck/v1"], r["partialFingerprints"]["amdoccCheck/v2"]
        assert v1 == f"{r['properties']['target']}:{mangled}:occupancy" and v2 == f":0:{v1}"
