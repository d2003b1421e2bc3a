"""The seed corpus: every fixture tests/data/fixtures/manifest.json lists, taken apart into layers.

Bare code objects, offload bundles, CCOB v1-v3 with zlib and zstd, OffloadBinary, host ELF
``.so``/``.o``, PE ``.dll`` and COFF ``.obj``: real files, read once per process.
"""

from __future__ import annotations

import json
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
        manifest = json.loads((FIXTURES / "manifest.json").read_text())
        out = []
        for entry in manifest["fixtures"]:
            path = FIXTURES / entry["file"]
            if path.is_file():
                data = path.read_bytes()
                out.append(Fixture(entry["file"], data, discover(data)))
        _FIXTURES = out
    return _FIXTURES
