#!/usr/bin/env bash
# Build the two forwarding libraries ROCm's bundled libLLVM.so needs into DIR (default
# .cache/rocm-sysdeps): librocm_sysdeps_z.so.1 and librocm_sysdeps_zstd.so.1, each exporting its
# symbols under the version AMDROCM_SYSDEPS_1.0 and forwarding them to the system library.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../.cache/rocm-sysdeps}"
mkdir -p "$out"
for lib in z zstd; do
  cc -shared -fPIC -O2 -Wall -Werror -o "$out/librocm_sysdeps_$lib.so.1" \
    -Wl,-soname,"librocm_sysdeps_$lib.so.1" -Wl,--version-script="$here/sysdeps_$lib.map" \
    "$here/sysdeps_$lib.c" -ldl
done
echo "built $out/librocm_sysdeps_z.so.1 and $out/librocm_sysdeps_zstd.so.1"
