#!/usr/bin/env python3
"""The HIP oracle worker: one real libamdhip64, one (emulated) device, queries as JSON lines.

    python3 tools/hsa_emulator/hip_oracle.py --runtime DIR --device gfx942

DIR is a runtime laid out by .ci/setup-tests.sh under .cache/hip-runtimes/<release>/ (its
``runtime.json`` names the HIP library and whether the emulator is found through
LD_LIBRARY_PATH), or any folder holding a ``libamdhip64.so*``. The worker talks to that library
directly with ctypes: it does not use amdocc, nor hip-python. HIP initialises once per process,
so one worker serves one runtime and one device; ``--device`` sets HSAEMU_DEVICE for the
emulated HSA device (ignored by a real ROCr on a machine with a GPU).

Requests on stdin, one JSON object a line; one JSON line answers each on stdout:
  {"op":"hello"}
  {"op":"load","path":"/x.co"}                      -> {"ok":true,"module":ID}
  {"op":"occupancy","module":ID,"kernel":"k","block":256,"dynamic_lds":0,"flags":null}
  {"op":"potential_block_size","module":ID,"kernel":"k","dynamic_lds":0,"block_limit":0}
  {"op":"attributes","module":ID,"kernel":"k"}
  {"op":"unload","module":ID}
  {"op":"report"}                                   -> the emulator's call counts so far
A HIP error is {"ok":false,"error":"hipErrorXxx"}; a bad request {"ok":false,"error":"bad-request: ..."}.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import re
import sys
from typing import Any

# hipFunction_attribute (hip_runtime_api.h; the CUDA driver API's CUfunction_attribute order)
FUNC_ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 0,
    "SHARED_SIZE_BYTES": 1,
    "CONST_SIZE_BYTES": 2,
    "LOCAL_SIZE_BYTES": 3,
    "NUM_REGS": 4,
    "PTX_VERSION": 5,
    "BINARY_VERSION": 6,
    "CACHE_MODE_CA": 7,
    "MAX_DYNAMIC_SHARED_SIZE_BYTES": 8,
    "PREFERRED_SHARED_MEMORY_CARVEOUT": 9,
}
# hipDeviceAttribute_t values of HIP 6.x/7.x (hip_runtime_api.h); 5.x numbered them otherwise,
# so they are asked only of a runtime whose major version is 6 or more.
DEVICE_ATTRIBUTES = {
    "maxThreadsPerBlock": 56,
    "maxThreadsPerMultiProcessor": 57,
    "multiProcessorCount": 63,
    "sharedMemPerBlock": 74,
    "warpSize": 87,
    "maxSharedMemoryPerMultiProcessor": 10002,
}


def runtime_config(directory: str) -> dict[str, Any]:
    """What runtime.json says about DIR, with defaults for a plain folder holding libamdhip64."""
    path = os.path.join(directory, "runtime.json")
    config: dict[str, Any] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    library = config.get("hip_library")
    if library is None:
        found = sorted(glob.glob(os.path.join(directory, "libamdhip64.so*")))
        if not found:
            raise SystemExit(f"hip_oracle: no libamdhip64.so* in {directory} and no runtime.json naming one")
        library = found[0]
    elif not os.path.isabs(library):
        library = os.path.join(directory, library)
    config["hip_library"] = library
    return config


class Worker:
    def __init__(self, library: str, emulator: str | None) -> None:
        self.hip = ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        self.emulator = None
        if emulator and os.path.exists(emulator):
            try:
                lib = ctypes.CDLL(emulator)
                lib.hsaemu_report_json.restype = ctypes.c_size_t
                lib.hsaemu_report_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
                self.emulator = lib
            except (OSError, AttributeError):
                self.emulator = None
        h = self.hip
        h.hipGetErrorName.restype = ctypes.c_char_p
        h.hipGetErrorName.argtypes = [ctypes.c_int]
        h.hipModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
        h.hipModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        h.hipModuleUnload.argtypes = [ctypes.c_void_p]
        h.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.argtypes = [
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_size_t,
        ]
        h.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags.argtypes = [
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_void_p,
            ctypes.c_int,
            ctypes.c_size_t,
            ctypes.c_uint,
        ]
        h.hipModuleOccupancyMaxPotentialBlockSize.argtypes = [
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
        ]
        h.hipFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
        h.hipDeviceGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
        self.modules: dict[int, ctypes.c_void_p] = {}
        self.images: dict[int, bytes] = {}  # kept alive while loaded
        self.functions: dict[tuple[int, str], ctypes.c_void_p] = {}
        self.next_id = 1

    def error(self, code: int) -> dict[str, Any]:
        name = self.hip.hipGetErrorName(code)
        return {"ok": False, "error": name.decode() if name else f"hipError({code})"}

    # -- ops ------------------------------------------------------------------------------------

    def hello(self, _req: dict[str, Any]) -> dict[str, Any]:
        h = self.hip
        version = ctypes.c_int()
        rc = h.hipRuntimeGetVersion(ctypes.byref(version))
        if rc:
            return self.error(rc)
        count = ctypes.c_int()
        rc = h.hipGetDeviceCount(ctypes.byref(count))
        out: dict[str, Any] = {
            "ok": True,
            "runtime_version": version.value,
            "device_count": count.value if not rc else 0,
        }
        if rc:
            out["device_error"] = self.error(rc)["error"]
            return out
        name = ctypes.create_string_buffer(256)
        if h.hipDeviceGetName(name, 256, 0) == 0:
            out["name"] = name.value.decode(errors="replace")
        # hipDeviceProp_t's layout differs between releases (hipGetDevicePropertiesR0600 since 6.0);
        # its gcnArchName field is found by its form instead: the one "gfx<hex>[:feature±...]"
        # string after the 256-byte name.
        props = ctypes.create_string_buffer(16384)
        getter = getattr(h, "hipGetDevicePropertiesR0600", None) or h.hipGetDeviceProperties
        if getter(props, 0) == 0:
            m = re.search(rb"gfx[0-9a-f]+(?::[a-z]+[+-])*\0", props.raw[256:])
            if m:
                out["gcnArchName"] = m.group(0)[:-1].decode()
        if version.value >= 60000000:
            for key, attr in DEVICE_ATTRIBUTES.items():
                value = ctypes.c_int()
                if h.hipDeviceGetAttribute(ctypes.byref(value), attr, 0) == 0:
                    out[key] = value.value
        return out

    def load(self, req: dict[str, Any]) -> dict[str, Any]:
        if "path" in req:
            with open(req["path"], "rb") as f:
                image = f.read()
        elif "hex" in req:
            image = bytes.fromhex(req["hex"])
        else:
            return {"ok": False, "error": "bad-request: load needs path or hex"}
        module = ctypes.c_void_p()
        rc = self.hip.hipModuleLoadData(ctypes.byref(module), image)
        if rc:
            return self.error(rc)
        mid = self.next_id
        self.next_id += 1
        self.modules[mid], self.images[mid] = module, image
        return {"ok": True, "module": mid}

    def function(self, req: dict[str, Any]) -> ctypes.c_void_p | dict[str, Any]:
        mid, kernel = req.get("module"), req.get("kernel")
        if mid not in self.modules or not isinstance(kernel, str):
            return {"ok": False, "error": "bad-request: unknown module or no kernel"}
        key = (mid, kernel)
        if key not in self.functions:
            fn = ctypes.c_void_p()
            rc = self.hip.hipModuleGetFunction(ctypes.byref(fn), self.modules[mid], kernel.encode())
            if rc:
                return self.error(rc)
            self.functions[key] = fn
        return self.functions[key]

    def occupancy(self, req: dict[str, Any]) -> dict[str, Any]:
        fn = self.function(req)
        if isinstance(fn, dict):
            return fn
        n = ctypes.c_int(-1)
        block, dyn, flags = int(req["block"]), int(req.get("dynamic_lds", 0)), req.get("flags")
        if flags is None:
            rc = self.hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(n), fn, block, dyn)
        else:
            rc = self.hip.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
                ctypes.byref(n), fn, block, dyn, int(flags)
            )
        return self.error(rc) if rc else {"ok": True, "value": n.value}

    def potential_block_size(self, req: dict[str, Any]) -> dict[str, Any]:
        fn = self.function(req)
        if isinstance(fn, dict):
            return fn
        grid, block = ctypes.c_int(-1), ctypes.c_int(-1)
        rc = self.hip.hipModuleOccupancyMaxPotentialBlockSize(
            ctypes.byref(grid), ctypes.byref(block), fn, int(req.get("dynamic_lds", 0)), int(req.get("block_limit", 0))
        )
        return self.error(rc) if rc else {"ok": True, "grid": grid.value, "block": block.value}

    def attributes(self, req: dict[str, Any]) -> dict[str, Any]:
        fn = self.function(req)
        if isinstance(fn, dict):
            return fn
        out: dict[str, Any] = {"ok": True}
        for name, attr in FUNC_ATTRIBUTES.items():
            value = ctypes.c_int()
            rc = self.hip.hipFuncGetAttribute(ctypes.byref(value), attr, fn)
            out[name] = value.value if rc == 0 else self.error(rc)["error"]
        return out

    def unload(self, req: dict[str, Any]) -> dict[str, Any]:
        mid = req.get("module")
        if mid not in self.modules:
            return {"ok": False, "error": "bad-request: unknown module"}
        rc = self.hip.hipModuleUnload(self.modules.pop(mid))
        self.images.pop(mid, None)
        for key in [k for k in self.functions if k[0] == mid]:
            del self.functions[key]
        return self.error(rc) if rc else {"ok": True}

    def report(self, _req: dict[str, Any]) -> dict[str, Any]:
        if self.emulator is None:
            return {"ok": True, "emulated": False, "unexpected": {}, "calls": {}}
        need = self.emulator.hsaemu_report_json(None, 0) + 1
        buf = ctypes.create_string_buffer(need)
        self.emulator.hsaemu_report_json(buf, need)
        return {"ok": True, "emulated": True, **json.loads(buf.value.decode())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", required=True, help="a runtime folder under .cache/hip-runtimes/")
    parser.add_argument("--device", required=True, help="the processor to emulate, e.g. gfx942")
    args = parser.parse_args()
    directory = os.path.abspath(args.runtime)
    if not os.path.isdir(directory):
        print(f"hip_oracle: --runtime {args.runtime}: no such folder", file=sys.stderr)
        return 2
    config = runtime_config(directory)
    # The emulator reads HSAEMU_DEVICE in hsa_init; a runtime found through LD_LIBRARY_PATH needs
    # it set before the process starts, so the worker re-executes itself once with it.
    wanted = {"HSAEMU_DEVICE": args.device}
    if config.get("ld_library_path"):
        paths = os.environ.get("LD_LIBRARY_PATH", "").split(":")
        if directory not in paths:
            wanted["LD_LIBRARY_PATH"] = ":".join([directory, *[p for p in paths if p]])
    if any(os.environ.get(k) != v for k, v in wanted.items()):
        if "LD_LIBRARY_PATH" in wanted:
            os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **wanted})
        os.environ.update(wanted)
    emulator = config.get("emulator")
    if emulator and not os.path.isabs(emulator):
        emulator = os.path.join(directory, emulator)
    # Answers go to a private copy of stdout; anything the runtime itself prints (AMD_LOG_LEVEL,
    # warnings) is sent to stderr so that it cannot corrupt the protocol.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    worker = Worker(config["hip_library"], emulator)
    ops = {
        "hello": worker.hello,
        "load": worker.load,
        "occupancy": worker.occupancy,
        "potential_block_size": worker.potential_block_size,
        "attributes": worker.attributes,
        "unload": worker.unload,
        "report": worker.report,
    }
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            op = ops.get(req.get("op"))
            answer = op(req) if op else {"ok": False, "error": f"bad-request: unknown op {req.get('op')!r}"}
        except (ValueError, KeyError, TypeError, OSError) as exc:
            answer = {"ok": False, "error": f"bad-request: {type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
