"""The seed corpus: every fixture tests/data/fixtures/manifest.json lists, taken apart into layers.

Bare code objects, offload bundles, CCOB v1-v3 with zlib and zstd, OffloadBinary, host ELF
``.so``/``.o``, PE ``.dll`` and COFF ``.obj``: real files, read once per process; and archives
built around some of them (an ``ar`` static library, a tar and a gzip tar sdist).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from . import ROOT
from .formats.archives import build_ar, build_tar, gzip_of
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
        for name, data in _archives():
            if not only or only in name:
                out.append(Fixture(name, data, discover(data)))
        _FIXTURES = out
    return _FIXTURES


# Archives around real fixtures, as users hand them over: a static library of HIP objects (one of
# them -fgpu-rdc), and an sdist as tar and as gzip tar holding a library and a bundle.
ARCHIVED = {
    "archives/libhip.a": ("ar", ["containers/newdriver_nonrdc.o", "containers/newdriver_rdc.o"]),
    "archives/sdist.tar": ("tar", ["containers/libhip_ccob_v3.so", "containers/bundle_5arch.hipfb"]),
    "archives/sdist.tar.gz": ("tgz", ["containers/libhip_plain.so", "containers/ccob_v2_zlib.hipfb"]),
}


def _archives() -> list[tuple[str, bytes]]:
    out = []
    for name, (kind, files) in ARCHIVED.items():
        members = [(f"pkg-1.0/{f}", (FIXTURES / f).read_bytes()) for f in files if (FIXTURES / f).is_file()]
        if not members:
            continue
        if kind == "ar":
            out.append((name, build_ar([(m.rsplit("/", 1)[1], d) for m, d in members])))
        else:
            tar = build_tar(members)
            out.append((name, tar if kind == "tar" else gzip_of(tar)))
    return out
