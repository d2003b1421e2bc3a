"""One Triton cache entry: its files, and the options Triton recorded when it built them.

Triton's cache keeps, per compiled kernel, ``<hash>/<name>.llir`` (the LLVM IR its AMD code
generator compiled), ``<name>.amdgcn`` (the assembly it produced), ``<name>.hsaco`` (the linked
code object) and ``<name>.json`` (``CompiledKernel.metadata``: ``arch``, ``num_warps``,
``warp_size``, ``shared``, ``enable_fp_fusion``, ``waves_per_eu``, ``llvm_fn_attrs``,
``triton_version``, ...). Nothing in it records the code generator's revision, which is why the
entry is recompiled and compared before anything is swept (docs/tune-regs.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError, UsageError
from ..numbers import in_range

MAX_FILE_BYTES = 256 << 20  # a kernel's IR or assembly is a few MB; a cache entry is not a dump
SUFFIXES = (".llir", ".amdgcn", ".hsaco", ".json")


@dataclass(frozen=True)
class TritonEntry:
    """A Triton cache entry for one kernel.

    Attributes:
        folder: the entry's directory.
        name: the kernel's name (``metadata.name``; the files' stem).
        metadata: the entry's JSON, as Triton wrote it.
        arch, num_warps, warp_size, shared: the recorded build and launch.
        enable_fp_fusion: the recorded FP-fusion option the code generator was given.
        triton_version: the Triton that wrote the entry, as far as the entry says (None if not).
    """

    folder: str
    name: str
    metadata: dict[str, Any] = field(repr=False)
    arch: str
    num_warps: int
    warp_size: int
    shared: int
    enable_fp_fusion: bool
    triton_version: str | None

    def file(self, suffix: str) -> str:
        return os.path.join(self.folder, self.name + suffix)

    def read(self, suffix: str) -> bytes:
        path = self.file(suffix)
        try:
            size = os.path.getsize(path)
            if size > MAX_FILE_BYTES:
                raise FormatError(f"{path}: {size} bytes, larger than a Triton cache file can be ({MAX_FILE_BYTES})")
            with open(path, "rb") as f:
                return f.read()
        except OSError as exc:
            raise FormatError(f"{path}: cannot be read ({exc.strerror or exc})") from None

    def text(self, suffix: str) -> str:
        data = self.read(suffix)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"{self.file(suffix)}: offset {exc.start}: not UTF-8 text") from None

    @property
    def block_size(self) -> int:
        return self.num_warps * self.warp_size


def _field(meta: dict[str, Any], key: str, path: str, minimum: int = 0) -> int:
    value = meta.get(key)
    if not in_range(value, minimum):
        raise FormatError(f"{path}: {key!r} is {value!r}, not an integer >= {minimum}")
    assert isinstance(value, int)
    return value


def read_entry(llir_path: str) -> TritonEntry:
    """The entry whose IR is ``llir_path`` (its JSON beside it gives the options)."""
    folder, base = os.path.split(llir_path)
    name = base.removesuffix(".llir")
    json_path = os.path.join(folder, name + ".json")
    try:
        if os.path.getsize(json_path) > MAX_FILE_BYTES:
            raise FormatError(f"{json_path}: too large for a Triton metadata file")
        with open(json_path, "rb") as f:
            meta = json.loads(f.read())
    except OSError as exc:
        raise FormatError(
            f"{json_path}: cannot be read ({exc.strerror or exc}); a Triton cache entry has one"
        ) from None
    except ValueError as exc:
        raise FormatError(f"{json_path}: not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise FormatError(f"{json_path}: offset 0: not a JSON object")
    recorded = meta.get("target")
    target: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    arch = meta.get("arch", target.get("arch"))
    if not isinstance(arch, str) or not arch.startswith("gfx"):
        raise FormatError(f"{json_path}: 'arch' is {arch!r}, not an AMD processor (not a HIP-backend entry)")
    warp_size = meta.get("warp_size", target.get("warp_size"))
    if not in_range(warp_size, 1):
        raise FormatError(f"{json_path}: 'warp_size' is {warp_size!r}, not an integer >= 1")
    fusion = meta.get("enable_fp_fusion")
    if not isinstance(fusion, bool):
        raise FormatError(f"{json_path}: 'enable_fp_fusion' is {fusion!r}, not true or false")
    version = meta.get("triton_version")
    return TritonEntry(
        folder=folder,
        name=name,
        metadata=meta,
        arch=arch,
        num_warps=_field(meta, "num_warps", json_path, 1),
        warp_size=warp_size,
        shared=_field(meta, "shared", json_path),
        enable_fp_fusion=fusion,
        triton_version=version if isinstance(version, str) else None,
    )


def find_entries(path: str) -> list[str]:
    """The ``.llir`` files of Triton cache entries under ``path`` (a cache directory, an entry's
    directory, or one of an entry's files), sorted; those with no ``.json`` beside them are not
    entries."""
    if os.path.isfile(path):
        stem, suffix = os.path.splitext(path)
        if suffix not in SUFFIXES:
            raise UsageError(f"{path}: not a Triton cache file (expected one of {', '.join(SUFFIXES)})")
        return [stem + ".llir"] if os.path.isfile(stem + ".llir") else []
    if not os.path.isdir(path):
        raise UsageError(f"{path}: no such file or directory")
    found = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".llir") and name.removesuffix(".llir") + ".json" in files:
                found.append(os.path.join(root, name))
    return found
