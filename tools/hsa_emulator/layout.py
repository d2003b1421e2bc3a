#!/usr/bin/env python3
"""Lay out the real HIP runtimes over the emulated HSA device, under .cache/hip-runtimes/.

    python3 tools/hsa_emulator/layout.py [--root .cache]

Run by .ci/setup-tests.sh after it has fetched the pinned inputs:
  - rocm-7.14: the ``vapoursynth_dfttest2_hip.libs/`` folder of the pinned
    vapoursynth-dfttest2-hip 11.1.0 wheel (TheRock's ROCm 7.14 libamdhip64, ROCr, comgr and their
    sysdeps), hard-linked (or copied) into the runtime folder, with ROCr replaced by the emulator
    under ROCr's exact file name and soname (libamdhip64 has RPATH=$ORIGIN and NEEDED that name,
    so it finds the emulator with no LD_PRELOAD and no patchelf), and comgr also named
    ``libamd_comgr.so.3`` (the name 7.14 dlopens; without it device creation fails with "Code
    object manager initialization failed");
  - rocm-5.2: Debian's libamdhip64-5 (ROCm 5.2.3) stays where apt put it; the folder holds the
    emulator as ``libhsa-runtime64.so.1``, found through LD_LIBRARY_PATH (the worker sets it).
Each folder gets a ``runtime.json`` the worker and tests read. The emulator is rebuilt every time
(one C file, about a second) so that the folders never hold a stale one.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = "vapoursynth_dfttest2_hip-11.1.0-py3-none-manylinux_2_28_x86_64.whl"
WHEEL_LIBS = "vapoursynth_dfttest2_hip.libs/"
DEBIAN_HIP = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"


def build(out: str, soname: str) -> None:
    subprocess.run([os.path.join(HERE, "build.sh"), out, soname], check=True)


def emulated_processors(emulator: str) -> list[str]:
    lib = ctypes.CDLL(emulator)
    lib.hsaemu_processors.restype = ctypes.c_char_p
    return lib.hsaemu_processors().decode().split(",")


def probe(runtime_dir: str, candidates: list[str]) -> tuple[list[str], dict[str, str]]:
    """The processors this runtime creates a device for on the emulator (asked, one worker each),
    and why each other one was not."""
    created, refused = [], {}
    for processor in candidates:
        run = subprocess.run(
            [sys.executable, os.path.join(HERE, "hip_oracle.py"), "--runtime", runtime_dir, "--device", processor],
            input='{"op":"hello"}\n',
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        try:
            hello = json.loads(run.stdout.splitlines()[0])
        except (IndexError, ValueError):
            refused[processor] = f"worker exit {run.returncode}: {run.stderr.strip()[-200:]}"
            continue
        if hello.get("device_count") == 1:
            created.append(processor)
        else:
            refused[processor] = hello.get("device_error") or hello.get("error") or "no device"
    return created, refused


def write_config(out: str, config: dict[str, object], emulator: str) -> None:
    with open(os.path.join(out, "runtime.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1)
    created, refused = probe(out, emulated_processors(emulator))
    config["processors"], config["no_device"] = created, refused
    with open(os.path.join(out, "runtime.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1)


def link_or_copy(src: str, dst: str) -> None:
    if os.path.lexists(dst):
        os.unlink(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def layout_714(root: str) -> str:
    wheel = os.path.join(root, "hip-wheels", WHEEL)
    unpacked = os.path.join(root, "hip-wheels", "vapoursynth_dfttest2_hip-11.1.0")
    if not os.path.isdir(os.path.join(unpacked, WHEEL_LIBS)):
        with zipfile.ZipFile(wheel) as z:
            z.extractall(unpacked, [m for m in z.namelist() if m.startswith(WHEEL_LIBS)])
    libs = os.path.join(unpacked, WHEEL_LIBS)
    out = os.path.join(root, "hip-runtimes", "rocm-7.14")
    os.makedirs(out, exist_ok=True)
    (hip,) = glob.glob(os.path.join(libs, "libamdhip64-*.so.*"))
    (rocr,) = glob.glob(os.path.join(libs, "libhsa-runtime64-*.so.*"))
    (comgr,) = glob.glob(os.path.join(libs, "libamd_comgr-*.so.*"))
    for path in sorted(glob.glob(os.path.join(libs, "*"))):
        if path != rocr:
            link_or_copy(path, os.path.join(out, os.path.basename(path)))
    rocr_name = os.path.basename(rocr)
    target = os.path.join(out, rocr_name)
    if os.path.lexists(target):
        os.unlink(target)
    build(target, rocr_name)
    # libamdhip64.so.7: the soname FlyDSL's libfly_jit_runtime.so has as NEEDED (found through
    # LD_LIBRARY_PATH); libamdhip64.so: the name hip-python opens under $ROCM_PATH/lib
    hip_name = os.path.basename(hip)
    for alias, name in (
        ("libamd_comgr.so.3", os.path.basename(comgr)),
        ("libamdhip64.so", hip_name),
        ("libamdhip64.so.7", hip_name),
    ):
        if os.path.lexists(os.path.join(out, alias)):
            os.unlink(os.path.join(out, alias))
        os.symlink(name, os.path.join(out, alias))
    # hip-python (rocm.bindings.util.paths) opens $ROCM_PATH/lib/libamdhip64.so: lib/ is this folder
    if not os.path.lexists(os.path.join(out, "lib")):
        os.symlink(".", os.path.join(out, "lib"))
    config = {
        "release": "rocm-7.14",
        "source": f"PyPI {WHEEL} ({WHEEL_LIBS})",
        "hip_library": os.path.basename(hip),
        "emulator": rocr_name,
        "ld_library_path": False,
    }
    write_config(out, config, target)  # adds "processors": those it creates a device for
    return out


def layout_52(root: str) -> str:
    out = os.path.join(root, "hip-runtimes", "rocm-5.2")
    os.makedirs(out, exist_ok=True)
    target = os.path.join(out, "libhsa-runtime64.so.1")
    if os.path.lexists(target):
        os.unlink(target)
    build(target, "libhsa-runtime64.so.1")
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    if os.path.lexists(os.path.join(out, "lib", "libamdhip64.so")):
        os.unlink(os.path.join(out, "lib", "libamdhip64.so"))
    os.symlink(DEBIAN_HIP, os.path.join(out, "lib", "libamdhip64.so"))
    config = {
        "release": "rocm-5.2",
        "source": "Debian bookworm libamdhip64-5 (ROCm 5.2.3)",
        "hip_library": DEBIAN_HIP,
        "emulator": "libhsa-runtime64.so.1",
        "ld_library_path": True,
    }
    # ROCm 5.2.3's HIP creates a device only for the processors it knows ("Unsupported HSA
    # device gfx942" for the others): the probe finds which
    write_config(out, config, target)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=".cache", help="the cache folder (default .cache)")
    args = parser.parse_args()
    print("laid out", layout_714(args.root))
    if os.path.exists(DEBIAN_HIP):
        print("laid out", layout_52(args.root))
    else:
        print(f"no {DEBIAN_HIP}: rocm-5.2 not laid out", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
