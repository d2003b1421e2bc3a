"""The fixture makers' bookkeeping (tools/fixtures), without building anything: every fixture
directory has a family that rebuilds it, and the shared manifest keeps the records of the families
not rebuilt, in the order a full run writes them (so a partial rebuild changes no other byte)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT
from fixtures.driver import FAMILIES
from fixtures.manifest import SHARED, SHARED_FAMILIES, SharedManifest

COMMITTED = json.loads(SHARED.read_text())


def test_every_fixture_directory_has_one_family():
    owners = [d for family in FAMILIES.values() for d in family.directories]
    assert len(owners) == len(set(owners))
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == sorted(owners)


def _rewrite(manifest: SharedManifest) -> bytes:
    manifest.write(COMMITTED["toolchain"], COMMITTED["oracle_commands"], COMMITTED["llvm_limitations"])
    return manifest.path.read_bytes()


def test_keeping_every_family_writes_the_committed_bytes(tmp_path):
    copy = tmp_path / "manifest.json"
    copy.write_bytes(SHARED.read_bytes())
    assert _rewrite(SharedManifest(set(), copy)) == SHARED.read_bytes()


@pytest.mark.parametrize("family", SHARED_FAMILIES)
def test_a_rebuilt_family_takes_its_place_again(tmp_path, family):
    """Drop one family's records, add them back as a rebuild would (last, after the others were
    loaded): the file comes out byte for byte as committed."""
    copy = tmp_path / "manifest.json"
    copy.write_bytes(SHARED.read_bytes())
    manifest = SharedManifest({family}, copy)
    assert all(r["file"].split("/")[0] != family for r in manifest.all_fixtures())
    for record in COMMITTED["fixtures"]:
        if record["file"].split("/")[0] == family:
            manifest.add(json.loads(json.dumps(record)))
    if family == "sample":
        assert manifest.sample is None
        manifest.sample = COMMITTED["sample"]
    assert _rewrite(manifest) == SHARED.read_bytes()


def test_the_driver_refuses_what_it_cannot_do():
    def run(*args):
        return subprocess.run([sys.executable, str(ROOT / "tools" / "fixtures"), *args], capture_output=True, text=True)

    listed = run("--list")
    assert listed.returncode == 0 and [ln.split()[0] for ln in listed.stdout.splitlines()] == list(FAMILIES)
    for args, message in (
        (["bogus"], "unknown family bogus"),
        (["--list", "elf"], "--list takes no families"),
        (["elf", "--flydsl-python", "python3"], "--flydsl-python is for the flydsl family"),
    ):
        proc = run(*args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
