/* librocm_sysdeps_z.so.1: the zlib entry points ROCm's bundled libLLVM.so (PyPI
 * rocm-bindings-compiler) imports with symbol version AMDROCM_SYSDEPS_1.0, forwarded to the
 * system's libz.so.1. TheRock builds its own renamed zlib ("sysdeps") and no package ships it;
 * the prototypes are zlib's public API (zlib.h). Built by .ci/setup-tests.sh (see build.sh). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void *system_zlib(void) {
  static void *handle;
  if (handle == NULL) {
    handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "librocm_sysdeps_z: cannot load the system libz.so.1: %s\n", dlerror());
      abort();
    }
  }
  return handle;
}

static void *lookup(const char *name) {
  void *f = dlsym(system_zlib(), name);
  if (f == NULL) {
    fprintf(stderr, "librocm_sysdeps_z: libz.so.1 has no %s\n", name);
    abort();
  }
  return f;
}

#define FORWARD(ret, name, params, args)         \
  ret name params {                              \
    static ret(*real) params;                    \
    if (real == NULL) real = (ret(*) params)lookup(#name); \
    return real args;                            \
  }

FORWARD(int, compress2,
        (unsigned char *dest, unsigned long *dest_len, const unsigned char *source, unsigned long source_len,
         int level),
        (dest, dest_len, source, source_len, level))
FORWARD(unsigned long, compressBound, (unsigned long source_len), (source_len))
FORWARD(unsigned long, crc32, (unsigned long crc, const unsigned char *buf, unsigned int len), (crc, buf, len))
FORWARD(int, uncompress,
        (unsigned char *dest, unsigned long *dest_len, const unsigned char *source, unsigned long source_len),
        (dest, dest_len, source, source_len))
