#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian bookworm machine (no GPU):
#  - LLVM 22 tools (the oracle): llvm-22 clang-22 lld-22 from Debian's bookworm-security, and
#    libllvm22 (its libLLVM.so.22.1 is the disassembler `amdocc isa` loads through LLVM-C)
#  - Chromium (Debian's chromium), headless, to open the census HTML report
#  - amdocc with its test extras (editable, so tests run against this checkout)
#  - the amd-aiter wheel's 2,501 hand-written .co files (the real corpus), unpacked to .cache/aiter
#  - bitsandbytes' ROCm libraries (HIP fat binaries of templated C++ kernels: the demangler's
#    second corpus), pinned, unpacked to .cache/bitsandbytes/<version>/
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v llvm-readelf-22 >/dev/null || ! command -v clang-22 >/dev/null || ! command -v ld.lld-22 >/dev/null \
  || ! ls /usr/lib/*-linux-gnu/libLLVM.so.22* >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq llvm-22 clang-22 lld-22 libllvm22 >/dev/null
fi
# Debian's ROCm 5.2.3 HSA runtime keeps its blit kernels as raw code objects in .data
# (tests/test_raw_images.py reads them).
if [ ! -f /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libhsa-runtime64-1 >/dev/null
fi
# Headless Chromium opens the `amdocc census --html` report in tests/test_census.py.
if ! command -v chromium >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test,hip,plot]"
python3 -c "import matplotlib, hypothesis, yaml" # the extras the tests compare or plot with
python3 -m pip install -q --disable-pip-version-check "triton==3.9.0"
# ROCm 10.0's compiler backend, the third LLVM oracle (tools/rocm_llc.py; tests/test_llvm_differential.py,
# tests/test_rocm10_compiler.py): rocm/bindings/llvm/libLLVM.so, AMD's LLVM 23.0.0git 8f497e0992fb. It
# imports zlib and zstd under TheRock's names (librocm_sysdeps_{z,zstd}.so.1, symbol version
# AMDROCM_SYSDEPS_1.0), which no package ships: tools/rocm_sysdeps builds two forwarding libraries
# over the system's libz.so.1 and libzstd.so.1 with cc into .cache/rocm-sysdeps.
python3 -m pip install -q --disable-pip-version-check "rocm-bindings-compiler==10.0.0.0.1.2" "rocm-bindings-core==10.0.0.0.1.2"
if ! command -v cc >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gcc libc6-dev zlib1g libzstd1 >/dev/null
fi
bash tools/rocm_sysdeps/build.sh .cache/rocm-sysdeps
# FlyDSL compiles offline with the CPU build of torch 2.13.0. Pinned to the FlyDSL whose answers the
# fixtures record; an install that fails stops the setup (set -e): with AMDOCC_REQUIRE_ORACLES=1 the
# tests would fail on the missing package anyway, and saying so here names the cause.
python3 -m pip install -q --disable-pip-version-check "flydsl==0.5.0" "torch==2.13.0" numpy

# The CI action and the pre-commit hook (tests/test_ci_action.py). The action's install step builds
# this checkout offline, so the build backend (hatchling) is installed for --no-build-isolation;
# pre-commit itself runs the hook, building the hook's environment from a local wheelhouse (the
# build backend and amdocc's dependencies, each pinned: --no-deps) so no index is needed at test time.
python3 -m pip install -q --disable-pip-version-check "hatchling==1.33.0" "pre-commit==4.7.0"
# (pyelftools is a runtime dependency since the ISA layer reads DWARF line tables with it.)
if ! ls .cache/wheelhouse/pyelftools-0.33-*.whl >/dev/null 2>&1; then
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d .cache/wheelhouse \
      "hatchling==1.33.0" "packaging==26.4" "pathspec==1.1.1" "pluggy==1.7.0" \
      "trove-classifiers==2026.9.21.13" "tomlkit==0.15.2" "msgpack==1.2.4" "zstandard==0.25.0" "pycxxfilt==1.2.0" \
      "pyelftools==0.33"
fi

# The corpus: pinned to the release the project was measured on, newest pre-release otherwise.
if [ ! -d .cache/aiter/aiter_meta/hsa/gfx942 ]; then
  mkdir -p .cache/aiter-wheel .cache/aiter
  python3 -m pip download -q --disable-pip-version-check --no-deps --pre -d .cache/aiter-wheel \
      "amd-aiter==0.1.7.post2.dev18" \
    || python3 -m pip download -q --disable-pip-version-check --no-deps --pre -d .cache/aiter-wheel amd-aiter
  python3 - <<'PY'
import glob, zipfile
wheel = sorted(glob.glob(".cache/aiter-wheel/amd_aiter-*.whl"))[-1]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith("aiter_meta/hsa/")]
    z.extractall(".cache/aiter", members)
print(f"unpacked {len(members)} files of {wheel} into .cache/aiter")
PY
fi

# bitsandbytes ships its ROCm kernels inside the one manylinux wheel (libbitsandbytes_rocm*.so).
BNB_VERSION=0.50.2
if ! ls .cache/bitsandbytes/$BNB_VERSION/bitsandbytes/libbitsandbytes_rocm*.so >/dev/null 2>&1; then
  mkdir -p .cache/bitsandbytes
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --platform manylinux_2_24_x86_64 -d .cache/bitsandbytes "bitsandbytes==$BNB_VERSION"
  python3 - "$BNB_VERSION" <<'PY'
import glob, sys, zipfile
version = sys.argv[1]
wheel = glob.glob(f".cache/bitsandbytes/bitsandbytes-{version}-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith("bitsandbytes/libbitsandbytes_rocm")]
    z.extractall(f".cache/bitsandbytes/{version}", members)
print(f"unpacked {len(members)} ROCm libraries of {wheel}")
PY
fi

# Device code outside every container, for tests/test_raw_images.py (28 MB): mojolearn-amd keeps
# 4,502 gfx942 code objects as raw ELF images in its libraries' .rodata. Pinned by SHA-256.
MOJO_WHEEL=mojolearn_amd-0.8.62-py3-none-manylinux_2_35_x86_64.whl
if [ ! -f ".cache/mojolearn/$MOJO_WHEEL" ]; then
  mkdir -p .cache/mojolearn
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version 3.11 --platform manylinux_2_35_x86_64 -d .cache/mojolearn "mojolearn-amd==0.8.62"
fi
echo "bfd08ff89fa34b09006fd215b1c391585ae2ded73291c6607f1d16aaf3995f8f  .cache/mojolearn/$MOJO_WHEEL" | sha256sum -c --quiet -

# The first public CDNA 5 corpus, for tests/test_corpus_rocm10.py (134 MB; ROCm 10.1, 15,287 gfx1250
# kernels): PyPI tags it manylinux_2_27 only, so pip is told the platform. Pinned by SHA-256.
JAX_WHEEL=jax_rocm10_pjrt-0.12.0-py3-none-manylinux_2_27_x86_64.whl
if [ ! -f ".cache/jax-rocm10/$JAX_WHEEL" ]; then
  mkdir -p .cache/jax-rocm10
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version 3.11 --platform manylinux_2_27_x86_64 -d .cache/jax-rocm10 "jax-rocm10-pjrt==0.12.0"
fi
echo "45ee7b471b71a582ce165dd63069b10d1d8923d849b61b6fa8783f1d13294edb  .cache/jax-rocm10/$JAX_WHEEL" | sha256sum -c --quiet -

# Two real ROCm wheels from PyPI for tests/test_wheels.py (98 MB): pinned by version and SHA-256.
# Their tags are not this interpreter's, so pip is told which Python and platforms to fetch for.
mkdir -p .cache/rocm-wheels
while read -r spec python platform file digest; do
  if [ ! -f ".cache/rocm-wheels/$file" ]; then
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
      --python-version "$python" --platform "$platform" -d .cache/rocm-wheels "$spec"
  fi
  echo "$digest  .cache/rocm-wheels/$file" | sha256sum -c --quiet -
done <<'WHEELS'
vllm-rocm==0.6.3 3.10 manylinux_2_35_x86_64 vllm_rocm-0.6.3-cp310-cp310-manylinux_2_34_x86_64.manylinux_2_35_x86_64.whl 1385fa51555f730a1fe31b8bbd40047915eea0688992cb24e288d3550a4831be
cupy-rocm-5-0==13.3.0 3.11 manylinux2014_x86_64 cupy_rocm_5_0-13.3.0-cp311-cp311-manylinux2014_x86_64.whl 00907762735d182737bee317f532dc381337fb8e978bd846acb268df463b2d7b
WHEELS

# HIP itself without a GPU (docs/hsa-emulator.md): real runtimes over the emulated HSA device.
# ROCm 7.14's libamdhip64, ROCr and comgr ship in this PyPI wheel (py3-none, Requires-Python
# >=3.12, hence --python-version), pinned by version and SHA-256; ROCm 5.2.3's is Debian's own
# libamdhip64-5. tools/hsa_emulator/layout.py builds the emulator with cc and lays both out under
# .cache/hip-runtimes/ (the emulator under ROCr's own name, where the runtime's RPATH finds it).
HIP_WHEEL=vapoursynth_dfttest2_hip-11.1.0-py3-none-manylinux_2_28_x86_64.whl
mkdir -p .cache/hip-wheels
if [ ! -f ".cache/hip-wheels/$HIP_WHEEL" ]; then
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --platform manylinux_2_28_x86_64 -d .cache/hip-wheels "vapoursynth-dfttest2-hip==11.1.0"
fi
echo "fbf3922eeeb36d5c3e9bf486bad8efe650e40d44efb1efa5c6bc53b0377b1db8  .cache/hip-wheels/$HIP_WHEEL" | sha256sum -c --quiet -
if [ ! -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ] || ! command -v cc >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libamdhip64-5 gcc >/dev/null
fi
python3 tools/hsa_emulator/layout.py
