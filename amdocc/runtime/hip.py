"""The only place amdocc touches the HIP runtime (through hip-python, the ``amdocc[hip]`` extra).

Every hip-python call returns a tuple whose first element is an error code; values after it are
garbage when the call failed (docs/hip-runtime.md shows an uninitialised block count), so
the code is checked before any value is used. Without ROCm, hip-python imports but every call
raises RuntimeError("failed to dlopen ..."); that, and a missing hip-python, become HipUnavailable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..caches import cached
from ..errors import AmdoccError, ExitCode
from ..targets import processor_name


class HipUnavailable(AmdoccError):
    """No usable HIP runtime here (no hip-python, no libamdhip64, or no device)."""

    exit_code = ExitCode.RUNTIME_UNAVAILABLE


class HipError(AmdoccError):
    """A HIP call returned an error code."""

    def __init__(self, call: str, code: object) -> None:
        name = getattr(code, "name", str(code))
        super().__init__(f"{call} failed: {name}")
        self.call, self.code = call, name


def import_hip() -> Any:  # hip-python has no type information: its module and handles are Any
    """hip-python's ``hip`` module, or HipUnavailable with the reason."""
    try:
        from hip import hip  # hip-python: 7.x ships hip.hip, 10.x aliases rocm.bindings.hip
    except ImportError as exc:
        from ..install_hint import install_hint

        raise HipUnavailable(f"hip-python is not installed ({exc}); {install_hint('hip')}") from None
    return hip


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    index: int
    name: str
    gcn_arch_name: str  # e.g. "gfx942:sramecc+:xnack-"
    compute_units: int  # multiProcessorCount (WGPs on RDNA in WGP mode)
    shared_mem_per_block: int
    max_threads_per_cu: int
    warp_size: int
    runtime_version: int
    driver_version: int

    @property
    def processor(self) -> str:
        return processor_name(self.gcn_arch_name)


class Hip:
    """Checked calls into one HIP runtime. ``hip`` may be any object with hip-python's API
    (tests pass a fake); by default hip-python's module."""

    def __init__(self, hip: Any = None) -> None:
        self.hip = hip if hip is not None else import_hip()
        self._runtime_version: int | None = None

    def _ok(self, code: object) -> bool:
        ok: bool = code == self.hip.hipError_t.hipSuccess
        return ok

    def _call(self, name: str, *args: Any) -> Any:
        fn = getattr(self.hip, name, None)
        if fn is None:
            raise HipUnavailable(f"{name} is not in this hip-python")
        try:
            result = fn(*args)
        except RuntimeError as exc:  # hip-python could not dlopen libamdhip64
            raise HipUnavailable(f"{name}: {exc}") from None
        if not isinstance(result, tuple):
            result = (result,)
        if not self._ok(result[0]):
            raise HipError(name, result[0])
        return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)

    # -- devices ------------------------------------------------------------------------------

    def device_count(self) -> int:
        try:
            return int(self._call("hipGetDeviceCount"))
        except HipError as exc:
            raise HipUnavailable(f"no HIP device ({exc.code})") from None

    def current_device(self) -> int:
        return int(self._call("hipGetDevice"))

    def properties(self, device: int | None = None) -> DeviceInfo:
        index = self.current_device() if device is None else device
        props = self._call("hipGetDeviceProperties", index)
        arch = props.gcnArchName
        arch = arch.decode() if isinstance(arch, bytes) else str(arch)
        name = props.name
        name = name.decode() if isinstance(name, bytes) else str(name)
        return DeviceInfo(
            index,
            name,
            arch,
            int(props.multiProcessorCount),
            int(props.sharedMemPerBlock),
            int(props.maxThreadsPerMultiProcessor),
            int(props.warpSize),
            self.runtime_version(),
            int(self._call("hipDriverGetVersion")),
        )

    def runtime_version(self) -> int:
        """hipRuntimeGetVersion(): major * 10_000_000 + minor * 100_000 + patch (e.g. 60443482 for 6.4.43482)."""
        if self._runtime_version is None:
            self._runtime_version = int(self._call("hipRuntimeGetVersion"))
        return self._runtime_version

    # -- modules and occupancy ------------------------------------------------------------------

    def load(self, image: bytes) -> Any:
        return self._call("hipModuleLoadData", image)

    def function(self, module: Any, name: str) -> Any:
        return self._call("hipModuleGetFunction", module, name.encode())

    def unload(self, module: Any) -> None:
        self._call("hipModuleUnload", module)

    def max_active_blocks(self, function: Any, block_size: int, dynamic_lds: int = 0, flags: int | None = None) -> int:
        if flags is None:
            return int(
                self._call("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", function, block_size, dynamic_lds)
            )
        return int(
            self._call(
                "hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", function, block_size, dynamic_lds, flags
            )
        )

    def occupancy_of(self, image: bytes, kernel: str, block_size: int, dynamic_lds: int = 0) -> int:
        """Load ``image``, ask HIP, unload (what FlyDSL's max_blocks_per_cu wrapper does)."""
        module = self.load(image)
        try:
            return self.max_active_blocks(self.function(module, kernel), block_size, dynamic_lds)
        finally:
            self.unload(module)

    # -- graph capture -----------------------------------------------------------------------------

    def is_capturing(self, stream: Any = None) -> bool:
        """Whether ``stream`` is being captured into a graph. A query that fails in any way counts
        as capturing (FlashInfer's rule): loading a module mid-capture is what must not happen."""
        try:
            result = self.hip.hipStreamIsCapturing(stream)
        except Exception:  # no library, or a garbage status the enum rejects
            return True
        if not isinstance(result, tuple) or len(result) < 2 or not self._ok(result[0]):
            return True
        none = getattr(self.hip.hipStreamCaptureStatus, "hipStreamCaptureStatusNone", 0)
        capturing: bool = result[1] != none
        return capturing


@cached(maxsize=1)
def _probe() -> tuple[Hip | None, str]:
    try:
        hip = Hip()
        if hip.device_count() < 1:
            return None, "HIP reports no device"
        return hip, "HIP runtime usable"
    except HipUnavailable as exc:
        return None, str(exc)


def runtime() -> Hip | None:
    """A usable HIP runtime with a device, or None (see :func:`unavailable_reason`)."""
    return _probe()[0]


def unavailable_reason() -> str | None:
    hip, reason = _probe()
    return None if hip is not None else reason
