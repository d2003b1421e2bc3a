"""The seed corpus: every fixture tests/data/fixtures/manifest.json lists, taken apart into layers.

Bare code objects, offload bundles, CCOB v1-v3 with zlib and zstd, OffloadBinary, host ELF
``.so``/``.o``, PE ``.dll`` and COFF ``.obj``: real files, read once per process.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from . import ROOT
from .layers import Layer, discover

FIXTURES = ROOT / "tests" / "data" / "fixtures"


@dataclass
class Fixture:
    """One fixture file: its path below tests/data/fixtures, its bytes, and its layers."""

    name: str
    data: bytes
    layers: list[Layer]


_FIXTURES: list[Fixture] | None = None


def fixtures() -> list[Fixture]:
    """Every fixture the manifest lists, with its layers (computed once per process)."""
    global _FIXTURES
    if _FIXTURES is None:
        entries = json.loads((FIXTURES / "manifest.json").read_text())["fixtures"]
        # object-linking relocatables, unknown processors, raw images (tools/fixtures/objects.py)
        entries += json.loads((FIXTURES / "objects" / "manifest.json").read_text())["fixtures"]
        only = os.environ.get("AMDOCC_FUZZ_ONLY")  # a substring of the fixture names to fuzz
        out = []
        for entry in entries:
            if only and only not in entry["file"]:
                continue
            path = FIXTURES / entry["file"]
            if path.is_file():
                data = path.read_bytes()
                out.append(Fixture(entry["file"], data, discover(data)))
        _FIXTURES = out
    return _FIXTURES
