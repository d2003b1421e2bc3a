"""Containers: what is skipped and why, and where one bundle ends, against the fixture manifest
(clang-offload-bundler-22's own listing of each bundle, python tools/fixtures)."""

from __future__ import annotations

import hashlib
import json

import pytest

from amdocc.containers import Blob, Skipped, scan
from conftest import FIXTURES

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
BUNDLED = [f for f in MANIFEST["fixtures"] if f.get("bundles")]
CCOB = [f for f in BUNDLED if f["file"].startswith("containers/ccob_")]


@pytest.mark.parametrize("fixture", BUNDLED, ids=[f["file"] for f in BUNDLED])
def test_skipped_entries_and_their_reasons_match_the_bundler_listing(fixture):
    want = sorted(
        (e["entry_id"], e["skipped"].split(" (")[0]) for b in fixture["bundles"] for e in b["entries"] if "skipped" in e
    )
    got = sorted((s.entry_id, s.reason) for s in scan(FIXTURES / fixture["file"]) if isinstance(s, Skipped))
    assert got == want and want


@pytest.mark.parametrize("fixture", CCOB, ids=[f["file"] for f in CCOB])
def test_compressed_bundles_back_to_back_each_end_where_they_should(fixture):
    # The same compressed bundle three times in a row (padded to 8 bytes, as HIP's fat binaries
    # align them): every copy's entries, in order, and nothing read across a boundary.
    one = (FIXTURES / fixture["file"]).read_bytes()
    one += b"\0" * (-len(one) % 8)
    want = [e["sha256"] for b in fixture["bundles"] for e in b["entries"] if "sha256" in e]
    found = [hashlib.sha256(i.data).hexdigest() for i in scan(one * 3) if isinstance(i, Blob)]
    assert found == want * 3
    assert not [i for i in scan(one * 3) if not isinstance(i, (Blob, Skipped))]
