#!/usr/bin/env python3
"""Ask the runtime's own comgr (libamd_comgr) what it knows about every ISA, with ctypes.

comgr is the code-object manager the HIP runtime reads kernel metadata and ISA facts through;
ROCm 7.x's runtime takes its VGPRs per SIMD and VGPR granule from comgr's
``amd_comgr_get_isa_metadata`` (TotalNumVGPRs, VGPRAllocGranule; docs/hip-occupancy.md §1). The
interface used, from comgr's public header amd_comgr.h: amd_comgr_get_version,
amd_comgr_get_isa_count, amd_comgr_get_isa_name, amd_comgr_get_isa_metadata (a map node),
amd_comgr_get_metadata_kind (AMD_COMGR_METADATA_KIND_STRING = 1, _MAP = 2),
amd_comgr_get_metadata_string, amd_comgr_iterate_map_metadata, amd_comgr_destroy_metadata.

Which comgr: $AMDOCC_COMGR, else the ROCm 7.14 runtime folder .cache/hip-runtimes/rocm-7.14/
($AMDOCC_HIP_RUNTIMES/rocm-7.14/ when that is set)
(libamd_comgr.so.3, set up by .ci/setup-tests.sh), else the pinned wheel in .cache/hip-wheels/
(vapoursynth-dfttest2-hip 11.1.0, whose libs are unpacked into a temporary folder).

    python3 tools/comgr_isa.py                  # print every ISA's metadata as JSON
    python3 tools/comgr_isa.py --write          # record it in tests/data/comgr_isa_metadata.json
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tests" / "data" / "comgr_isa_metadata.json"
WHEEL = "vapoursynth_dfttest2_hip-11.1.0-py3-none-manylinux_2_28_x86_64.whl"
WHEEL_SHA256 = "fbf3922eeeb36d5c3e9bf486bad8efe650e40d44efb1efa5c6bc53b0377b1db8"  # issue 17, PyPI
LIBS = "vapoursynth_dfttest2_hip.libs/"
KIND_STRING, KIND_MAP = 1, 2  # amd_comgr_metadata_kind_t (amd_comgr.h)
_keep: list[Any] = []  # temporary folders of unpacked wheels, alive while the library is loaded


class Node(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_uint64)]  # amd_comgr_metadata_node_t


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, Node, Node, ctypes.c_void_p)


def find_comgr(root: Path = ROOT) -> Path | None:
    """The comgr library to ask (see the module's docstring), or None when none is here."""
    if os.environ.get("AMDOCC_COMGR"):
        return Path(os.environ["AMDOCC_COMGR"])
    runtimes = Path(os.environ.get("AMDOCC_HIP_RUNTIMES", root / ".cache" / "hip-runtimes"))
    folder = runtimes / "rocm-7.14"
    for name in ("libamd_comgr.so.3", *sorted(p.name for p in folder.glob("libamd_comgr*"))):
        if (folder / name).is_file():
            return folder / name
    wheel = root / ".cache" / "hip-wheels" / WHEEL
    if wheel.is_file():
        tmp = tempfile.TemporaryDirectory(prefix="amdocc-comgr-")
        _keep.append(tmp)
        with zipfile.ZipFile(wheel) as z:
            wanted = [n for n in z.namelist() if n.startswith(LIBS) and _needed(n[len(LIBS) :])]
            z.extractall(tmp.name, wanted)
        (lib,) = Path(tmp.name, LIBS).glob("libamd_comgr*")
        return lib
    return None


def _needed(name: str) -> bool:
    # comgr and what it links (ldd): LLVM, clang-cpp, zlib, zstd.
    return name.startswith(("libamd_comgr", "libLLVM", "libclang-cpp", "librocm_sysdeps_z"))


class Comgr:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        for fn in ("amd_comgr_get_isa_name",):
            getattr(self.lib, fn).argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)]

    def _check(self, status: int, call: str) -> None:
        if status != 0:
            raise RuntimeError(f"{call} returned comgr status {status}")

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_size_t(), ctypes.c_size_t()
        self.lib.amd_comgr_get_version(ctypes.byref(major), ctypes.byref(minor))
        return major.value, minor.value

    def isa_names(self) -> list[str]:
        count = ctypes.c_size_t()
        self._check(self.lib.amd_comgr_get_isa_count(ctypes.byref(count)), "amd_comgr_get_isa_count")
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            self._check(self.lib.amd_comgr_get_isa_name(i, ctypes.byref(name)), "amd_comgr_get_isa_name")
            names.append((name.value or b"").decode())
        return names

    def _value(self, node: Node) -> Any:
        kind = ctypes.c_int()
        self._check(self.lib.amd_comgr_get_metadata_kind(node, ctypes.byref(kind)), "amd_comgr_get_metadata_kind")
        if kind.value == KIND_STRING:
            size = ctypes.c_size_t()
            self._check(self.lib.amd_comgr_get_metadata_string(node, ctypes.byref(size), None), "string size")
            buf = ctypes.create_string_buffer(size.value)
            self._check(self.lib.amd_comgr_get_metadata_string(node, ctypes.byref(size), buf), "string")
            return buf.value.decode()
        if kind.value == KIND_MAP:
            out: dict[str, Any] = {}
            errors: list[BaseException] = []

            def visit(key: Node, value: Node, _: Any) -> int:
                try:
                    out[self._value(key)] = self._value(value)
                except BaseException as exc:  # raised through C: report after the walk
                    errors.append(exc)
                    return 1
                return 0

            callback = _CALLBACK(visit)
            status = self.lib.amd_comgr_iterate_map_metadata(node, callback, None)
            if errors:
                raise errors[0]
            self._check(status, "amd_comgr_iterate_map_metadata")
            return out
        raise RuntimeError(f"comgr metadata of kind {kind.value} is not read here")

    def isa_metadata(self, isa: str) -> dict[str, Any]:
        node = Node()
        self._check(self.lib.amd_comgr_get_isa_metadata(isa.encode(), ctypes.byref(node)), f"isa_metadata {isa}")
        try:
            value = self._value(node)
        finally:
            self.lib.amd_comgr_destroy_metadata(node)
        assert isinstance(value, dict)
        return value


def read_all(path: Path) -> dict[str, Any]:
    comgr = Comgr(path)
    major, minor = comgr.version()
    isas = {}
    for name in comgr.isa_names():
        md = comgr.isa_metadata(name)
        isas[md["Processor"]] = md
    return {"comgr_version": f"{major}.{minor}", "isas": isas}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"record the answer in {RECORD.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    path = find_comgr()
    if path is None:
        print("comgr_isa: no comgr here (set AMDOCC_COMGR or run .ci/setup-tests.sh)", file=sys.stderr)
        return 2
    answer = read_all(path)
    record = {
        "source": f"libamd_comgr from the ROCm 7.14 runtime of PyPI's {WHEEL} (sha256 {WHEEL_SHA256}), "
        "amd_comgr_get_isa_metadata for every ISA amd_comgr_get_isa_name lists (tools/comgr_isa.py)",
        **answer,
    }
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    if args.write:
        RECORD.write_text(text)
        print(f"wrote {RECORD} ({len(answer['isas'])} ISAs, comgr {answer['comgr_version']})")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
