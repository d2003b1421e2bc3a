"""Launches recorded beside the code: Triton (and Inductor) caches and AOTInductor ``.pt2`` packages.

A kernel compiled by Triton is launched by Triton's HIP launcher with ``num_warps × warp_size``
threads and ``shared`` bytes of dynamic LDS; neither number is in the code object (its static LDS
is 0, its ``.max_flat_workgroup_size`` is only an upper bound). Both are recorded where the kernel
was made, so the occupancy of the launch that will happen can be stated exactly:

* **A Triton cache** (``~/.triton/cache``, ``$TRITON_CACHE_DIR``, and the ``triton/`` tree of
  Inductor's cache, ``/tmp/torchinductor_$USER``): each ``<hash>/<name>.hsaco`` has its compiled
  kernel's metadata beside it as ``<hash>/<name>.json`` (Triton's ``CompiledKernel.metadata``:
  ``name``, ``num_warps``, ``warp_size``, ``shared``, ``target.arch``).
* **An AOTInductor package** (``.pt2``, a zip laid out as ``<root>/data/aotinductor/<model>/``,
  PyTorch's "PT2 Archive Spec"): the kernels are ``.hsaco`` members, and the model's generated
  C++ wrapper (``*.cpp`` in the same folder) records each launch as Inductor's
  ``cpp_wrapper_gpu`` writes it: ``var = loadKernel("<file>.hsaco", "<kernel>", <shared>, ...)``,
  then ``launchKernel(var, grid_0, grid_1, grid_2, <num_warps>, <shared>, ...)``, with the
  launcher's ``<wave>*numWarps`` block (``device_op_overrides.kernel_driver``, where HIP's device
  wave size replaces CUDA's 32).

:func:`recorded_launch` finds the launch of one kernel of one code object, or None when nothing
records it. Inconsistent records (a metadata file for another processor or wave size) are
errors naming the file, never silently used.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from ..caches import cached
from ..errors import FormatError
from ..numbers import in_range

__all__ = ["RecordedLaunch", "aoti_launches", "recorded_launch", "triton_launch"]

MAX_METADATA_BYTES = 16 << 20  # a Triton metadata JSON is a few KB; a wrapper .cpp a few MB
AOTI_DIR = "data/aotinductor/"


@dataclass(frozen=True)
class RecordedLaunch:
    """The block size and dynamic LDS a kernel is launched with, and where they were read.

    ``fields`` holds the recorded values under their names in the record (``num_warps``,
    ``warp_size``, ``shared``, and ``arch`` where recorded); ``derived`` says how ``block_size``
    and ``dynamic_lds`` follow from them; ``source`` is the kind of record and ``file`` the file
    (or archive member) it came from.
    """

    kernel: str
    block_size: int
    dynamic_lds: int
    source: str  # "triton-cache" or "aotinductor"
    file: str
    fields: dict[str, int | str] = field(default_factory=dict)
    derived: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "file": self.file,
            "block_size": self.block_size,
            "dynamic_lds": self.dynamic_lds,
            "fields": dict(self.fields),
            "derived": dict(self.derived),
        }

    @property
    def label(self) -> str:
        what = "Triton metadata" if self.source == "triton-cache" else "AOTInductor wrapper"
        f = self.fields
        return (
            f"launch from {what} {os.path.basename(self.file)}: num_warps {f['num_warps']} x warp_size "
            f"{f['warp_size']} = {self.block_size} threads, shared {self.dynamic_lds} B dynamic LDS"
        )


def _count(value: object, name: str, where: str, minimum: int) -> int:
    if not in_range(value, minimum):  # amdocc.numbers' one rule
        raise FormatError(f"{where}: {name} is {value!r}, not an integer >= {minimum}")
    return value


# --------------------------------------------------------------------------- Triton's cache


def _triton_metadata(path: str) -> dict[str, Any] | None:
    """The metadata JSON beside ``path`` (a .hsaco), when it is Triton's; None otherwise."""
    side = os.path.splitext(path)[0] + ".json"
    try:
        size = os.path.getsize(side)
    except OSError:
        return None
    if size > MAX_METADATA_BYTES:
        return None
    try:
        with open(side, "rb") as f:
            doc = json.loads(f.read())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    # Triton's CompiledKernel metadata: these keys are what its launcher reads.
    if not isinstance(doc, dict) or not {"num_warps", "shared", "name"} <= doc.keys():
        return None
    doc["__file__"] = side
    return doc


def triton_launch(path: str, kernel: str, processor: str | None, wave: int | None) -> RecordedLaunch | None:
    """The launch Triton's metadata beside ``path`` records for ``kernel``, or None.

    ``processor`` and ``wave`` are the code object's; a record for another processor or wave
    size is refused (FormatError naming the JSON file)."""
    meta = _triton_metadata(path)
    if meta is None or meta["name"] != kernel:
        return None
    side = meta["__file__"]
    target: dict[str, Any] = meta["target"] if isinstance(meta.get("target"), dict) else {}
    warp = meta.get("warp_size", target.get("warp_size"))
    num_warps = _count(meta["num_warps"], "num_warps", side, 1)
    warp_size = _count(warp, "warp_size", side, 1)
    shared = _count(meta["shared"], "shared", side, 0)
    arch = target.get("arch", meta.get("arch"))
    fields: dict[str, int | str] = {"num_warps": num_warps, "warp_size": warp_size, "shared": shared}
    if isinstance(arch, str):
        fields["arch"] = arch
        base = arch.split(":", 1)[0]
        if processor is not None and base != processor:
            raise FormatError(f"{side}: Triton metadata is for {arch}, but {path} is a {processor} code object")
    if wave is not None and wave != warp_size:
        raise FormatError(f"{side}: Triton metadata warp_size {warp_size}, but {kernel} in {path} is wave{wave}")
    return RecordedLaunch(
        kernel,
        num_warps * warp_size,
        shared,
        "triton-cache",
        side,
        fields,
        {"block_size": "num_warps * warp_size", "dynamic_lds": "shared"},
    )


# --------------------------------------------------------------------------- AOTInductor packages

# Every repetition is bounded and every variable name must start after a non-name character, so
# a wrapper of any content is scanned in linear time (a generated line is far inside the bounds).
_NAME = r"[A-Za-z_][\w.>\-]{0,255}"  # kernels_.triton_poi_fused_0, or a local
_SP = r"\s{0,64}"
_LOAD = re.compile(
    rf"(?<![\w.>\-])({_NAME})[ \t]{{0,64}}=[ \t]{{0,64}}loadKernel\({_SP}"
    rf"(\"(?:[^\"\\\n]|\\.){{0,4096}}\"|[A-Za-z_]\w{{0,255}}){_SP},{_SP}\"(\w{{1,512}})\"{_SP},{_SP}(\d{{1,12}})"
)
_LAUNCH = re.compile(
    rf"launchKernel\({_SP}({_NAME}){_SP},(?:[^,()]{{1,512}},){{3}}{_SP}(\d{{1,12}}){_SP},{_SP}(\d{{1,12}}){_SP},"
)
_WAVE = re.compile(r"(?<!\w)(\d{1,6})\s{0,8}\*\s{0,8}numWarps\b")


def _aoti_model_dir(member: str) -> str | None:
    """``<root>/data/aotinductor/<model>/`` of an archive member, or None."""
    at = member.find(AOTI_DIR)
    if at < 0 or (at and member[at - 1] != "/"):
        return None
    rest = member[at + len(AOTI_DIR) :]
    if "/" not in rest:
        return None
    return member[: at + len(AOTI_DIR)] + rest.split("/", 1)[0] + "/"


def aoti_launches(path: str, model_dir: str) -> dict[str, RecordedLaunch]:
    """kernel name → launch, from the C++ wrappers of one model of a ``.pt2`` package (read once
    per package and version of the file)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read the package's wrappers: {exc}") from None
    return _aoti_launches(path, model_dir, st.st_mtime_ns, st.st_size)


@cached(maxsize=16)
def _aoti_launches(path: str, model_dir: str, _mtime: int, _size: int) -> dict[str, RecordedLaunch]:
    out: dict[str, RecordedLaunch] = {}
    try:
        with zipfile.ZipFile(path) as z:
            wrappers = [i for i in z.infolist() if i.filename.startswith(model_dir) and i.filename.endswith(".cpp")]
            texts = []
            for info in wrappers:
                if info.file_size > MAX_METADATA_BYTES:
                    raise FormatError(f"{path} [{info.filename}]: {info.file_size} B is too large for a wrapper")
                texts.append((info.filename, z.read(info).decode("utf-8", "replace")))
    except (OSError, zipfile.BadZipFile) as exc:
        raise FormatError(f"{path}: cannot read the package's wrappers: {exc}") from None
    for member, text in texts:
        waves = {int(w) for w in _WAVE.findall(text)}
        if len(waves) > 1:
            raise FormatError(f"{path} [{member}]: the wrapper launches with several wave sizes {sorted(waves)}")
        wave = waves.pop() if waves else None
        loaded = {var: (name, int(shared)) for var, _, name, shared in _LOAD.findall(text)}
        for var, warps, shared in _LAUNCH.findall(text):
            if var not in loaded or wave is None:
                continue
            name, load_shared = loaded[var]
            if int(shared) != load_shared:
                raise FormatError(
                    f"{path} [{member}]: {name} is loaded with {load_shared} B of shared memory "
                    f"but launched with {shared}"
                )
            launch = RecordedLaunch(
                name,
                int(warps) * wave,
                int(shared),
                "aotinductor",
                f"{path} [{member}]",
                {"num_warps": int(warps), "warp_size": wave, "shared": int(shared)},
                {"block_size": "num_warps * warp_size", "dynamic_lds": "shared"},
            )
            if out.get(name, launch) != launch:
                raise FormatError(f"{path} [{member}]: {name} is launched with two different configurations")
            out[name] = launch
    return out


# --------------------------------------------------------------------------- one kernel


def recorded_launch(
    path: str | None, origin: str, kernel: str, processor: str | None, wave: int | None
) -> RecordedLaunch | None:
    """The recorded launch of ``kernel`` in the code object read from ``path`` at ``origin``
    (the container chain; "" for a bare file), or None when nothing records it."""
    if not path or path == "-":
        return None
    if not origin:
        return triton_launch(path, kernel, processor, wave) if path.endswith(".hsaco") else None
    # An archive member in a model's folder, or a code object inside one (a wrapper .so that
    # embeds its kernels): kernel names are unique within a model, and the wrapper names them.
    member = origin.split(" > ", 1)[0]
    model_dir = _aoti_model_dir(member)
    if model_dir is None:
        return None
    launch = aoti_launches(path, model_dir).get(kernel)
    if launch is not None and wave is not None and wave != launch.fields["warp_size"]:
        raise FormatError(f"{launch.file}: launches {kernel} as wave{launch.fields['warp_size']}, but it is wave{wave}")
    return launch
