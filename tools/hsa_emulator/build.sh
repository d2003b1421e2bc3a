#!/usr/bin/env bash
# Build the emulated HSA device: tools/hsa_emulator/build.sh OUT.so [SONAME]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; soname="${2:-libhsa-runtime64.so.1}"
"${CC:-cc}" -std=c11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  -Wl,--version-script="$here/hsaemu.map" -Wl,-soname,"$soname" -o "$out" "$here/hsaemu.c" -lpthread
