"""HIP runtimes to compare amdocc with (the :class:`~amdocc.testing.compare.HipAnswers` protocol).

- :class:`LiveHip`: the runtime installed here, through hip-python (``amdocc[hip]``), on a real
  GPU. Queries amdocc's model says would kill the process (HIP divides by zero) are not asked.
- :class:`EmulatedHip`: a real runtime library answering on the emulated HSA device, through the
  oracle worker of ``tools/hsa_emulator`` (its ``HipOracle`` client, or any object with the same
  methods). The worker is a separate process, so a query that dies with SIGFPE is asked too, and
  answers "crashed:SIGFPE".
"""

from __future__ import annotations

import os
from typing import Any

from ..runtime.hip import HipError
from ..targets import get_target
from .compare import ATTRIBUTES


def _release_of(version: int) -> str:
    from ..models.hip_profiles import decode_runtime_version

    major, minor, _ = decode_runtime_version(version)
    return f"rocm-{major}.{minor}"


def _max_threads(processor: str, runtime_wgp: bool) -> int:
    """hipDeviceAttributeMaxThreadsPerMultiProcessor when the runtime does not say: HIP's thread
    budget of one CU (one WGP in a WGP-mode runtime) at its MaxWavesPerSimd."""
    t = get_target(processor)
    return t.simds(runtime_wgp and t.wgp) * t.hip_max_waves_per_simd * t.default_wave


class LiveHip:
    """The installed HIP runtime's current device (``amdocc.runtime``'s checked hip-python calls)."""

    can_crash = False

    def __init__(self, rt: Any = None) -> None:
        from ..runtime import runtime
        from ..runtime.hip import HipUnavailable

        found = rt if rt is not None else runtime()
        if found is None:
            from ..runtime import unavailable_reason

            raise HipUnavailable(f"no usable HIP runtime: {unavailable_reason()}")
        self.rt: Any = found
        dev = self.rt.properties()
        self.processor = dev.processor
        self.runtime_version = dev.runtime_version
        self.release = _release_of(dev.runtime_version)
        self.compute_units = dev.compute_units
        self.lds_bytes = dev.shared_mem_per_block
        t = get_target(self.processor)
        self.runtime_wgp = t.wgp and os.environ.get("GPU_ENABLE_WGP_MODE", "1") != "0"
        self.max_threads_per_cu = dev.max_threads_per_cu
        # Function handles per (module, kernel name). The module is held in the value, so the id()
        # in the key cannot be reused by another module while the entry lives (unload drops it).
        self._functions: dict[tuple[int, str], tuple[Any, Any]] = {}

    def load(self, image: bytes) -> Any:
        return self.rt.load(image)

    def unload(self, module: Any) -> None:
        self._functions = {k: v for k, v in self._functions.items() if k[0] != id(module)}
        self.rt.unload(module)

    def _function(self, module: Any, kernel: str) -> Any:
        key = (id(module), kernel)
        held = self._functions.get(key)
        if held is None or held[0] is not module:
            held = self._functions[key] = (module, self.rt.function(module, kernel))
        return held[1]

    def occupancy(self, module: Any, kernel: str, block: int, dynamic_lds: int, flags: int | None) -> int | str:
        try:
            return int(self.rt.max_active_blocks(self._function(module, kernel), block, dynamic_lds, flags))
        except HipError as exc:
            return str(exc.code)

    def potential_block_size(
        self, module: Any, kernel: str, dynamic_lds: int, block_limit: int
    ) -> tuple[int, int] | str:
        try:
            grid, block = self.rt._call(
                "hipModuleOccupancyMaxPotentialBlockSize", self._function(module, kernel), dynamic_lds, block_limit
            )
        except HipError as exc:
            return str(exc.code)
        return int(grid), int(block)

    def attributes(self, module: Any, kernel: str) -> dict[str, int] | str:
        fn = self._function(module, kernel)
        out: dict[str, int] = {}
        for name in ATTRIBUTES:
            try:
                attr = getattr(self.rt.hip.hipFunction_attribute, f"HIP_FUNC_ATTRIBUTE_{name}")
                out[name] = int(self.rt._call("hipFuncGetAttribute", attr, fn))
            except HipError as exc:
                return str(exc.code)
        return out


class EmulatedHip:
    """A real HIP runtime on the emulated device, through an oracle-worker client.

    ``client`` is a started ``tools/hsa_emulator/client.HipOracle`` (or anything with its
    methods, answering its JSON dicts: ``hello``, ``load(bytes)``, ``unload``, ``occupancy``,
    ``potential_block_size``, ``attributes``); ``release`` names the runtime (e.g. "rocm-7.14")
    and ``processor`` the emulated device. The runtime version and the device's values come from
    ``hello()`` where the runtime reports them (HIP 6+ device attributes), else from the tables.
    """

    can_crash = True

    def __init__(self, client: Any, release: str, processor: str) -> None:
        self.client, self.release, self.processor = client, release, processor
        info = client.hello()
        if not info.get("ok") or not info.get("device_count"):
            raise RuntimeError(f"{release} on the emulated {processor}: no device ({info})")
        self.hello = info
        self.runtime_version = int(info["runtime_version"])
        t = get_target(processor)
        self.runtime_wgp = t.wgp  # GPU_ENABLE_WGP_MODE's default
        cus = info.get("multiProcessorCount")
        if cus is None:  # HIP 5 is not asked for device attributes: the emulated device's CUs, by its name
            cus = _cus_by_name(info.get("name", ""), t, self.runtime_wgp)
        self.compute_units = int(cus)
        self.lds_bytes = int(info.get("maxSharedMemoryPerMultiProcessor") or t.lds_per_cu)
        self.max_threads_per_cu = int(
            info.get("maxThreadsPerMultiProcessor") or _max_threads(processor, self.runtime_wgp)
        )

    def load(self, image: bytes) -> Any:
        answer = self.client.load(image)
        if not answer.get("ok"):
            raise RuntimeError(
                f"{self.release} on {self.processor} does not load the code object: {answer.get('error')}"
            )
        return answer["module"]

    def unload(self, module: Any) -> None:
        self.client.unload(module)

    @staticmethod
    def _error(value: dict[str, Any]) -> str | None:
        return None if value.get("ok") else str(value.get("error"))

    def occupancy(self, module: Any, kernel: str, block: int, dynamic_lds: int, flags: int | None) -> int | str:
        value = self.client.occupancy(module, kernel, block, dynamic_lds, flags)
        return self._error(value) or int(value["value"])

    def potential_block_size(
        self, module: Any, kernel: str, dynamic_lds: int, block_limit: int
    ) -> tuple[int, int] | str:
        value = self.client.potential_block_size(module, kernel, dynamic_lds, block_limit)
        error = self._error(value)
        return error if error else (int(value["grid"]), int(value["block"]))

    def attributes(self, module: Any, kernel: str) -> dict[str, int] | str:
        value = self.client.attributes(module, kernel)
        return self._error(value) or {k: v for k, v in value.items() if k != "ok"}


def _cus_by_name(name: str, t: Any, runtime_wgp: bool) -> int:
    """The CU count HIP reports for a device of tables/devices.toml named ``name``."""
    from ..devices import all_devices
    from ..models.best_block import hip_compute_units

    shown = name.replace(" ", "").lower()
    named = [d for d in all_devices() if d.target is t and d.name.replace("-", "").lower() in shown]
    if named:  # the longest name that matches: "MI250X" in "AMD Instinct MI250X/MI250", not "MI250"
        return hip_compute_units(max(named, key=lambda d: len(d.name)), runtime_wgp)
    raise RuntimeError(f"the runtime does not report the CU count of {name!r}, and no device of that name is known")
