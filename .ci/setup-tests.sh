#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian bookworm machine (no GPU):
#  - LLVM 22 tools (the oracle): llvm-22 clang-22 lld-22 from Debian's bookworm-security
#  - amdocc with its test extras (editable, so tests run against this checkout)
#  - the amd-aiter wheel's 2,501 hand-written .co files (the real corpus), unpacked to .cache/aiter
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v llvm-readelf-22 >/dev/null || ! command -v clang-22 >/dev/null || ! command -v ld.lld-22 >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq llvm-22 clang-22 lld-22 >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test,hip,plot]"
python3 -c "import matplotlib, hypothesis, yaml" # the extras the tests compare or plot with
python3 -m pip install -q --disable-pip-version-check "triton==3.9.0"
# FlyDSL compiles offline with the CPU build of torch 2.13.0. Pinned to the FlyDSL whose answers the
# fixtures record; an install that fails stops the setup (set -e): with AMDOCC_REQUIRE_ORACLES=1 the
# tests would fail on the missing package anyway, and saying so here names the cause.
python3 -m pip install -q --disable-pip-version-check "flydsl==0.5.0" "torch==2.13.0" numpy

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
