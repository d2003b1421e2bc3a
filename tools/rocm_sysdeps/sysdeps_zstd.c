/* librocm_sysdeps_zstd.so.1: the zstd entry points ROCm's bundled libLLVM.so (PyPI
 * rocm-bindings-compiler) imports with symbol version AMDROCM_SYSDEPS_1.0, forwarded to the
 * system's libzstd.so.1. The prototypes are zstd's public API (zstd.h); ZSTD_CCtx is opaque. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ZSTD_CCtx_s ZSTD_CCtx;

static void *system_zstd(void) {
  static void *handle;
  if (handle == NULL) {
    handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "librocm_sysdeps_zstd: cannot load the system libzstd.so.1: %s\n", dlerror());
      abort();
    }
  }
  return handle;
}

static void *lookup(const char *name) {
  void *f = dlsym(system_zstd(), name);
  if (f == NULL) {
    fprintf(stderr, "librocm_sysdeps_zstd: libzstd.so.1 has no %s\n", name);
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

FORWARD(size_t, ZSTD_CCtx_setParameter, (ZSTD_CCtx * cctx, int param, int value), (cctx, param, value))
FORWARD(size_t, ZSTD_compress2, (ZSTD_CCtx * cctx, void *dst, size_t dst_capacity, const void *src, size_t src_size),
        (cctx, dst, dst_capacity, src, src_size))
FORWARD(size_t, ZSTD_compressBound, (size_t src_size), (src_size))
FORWARD(ZSTD_CCtx *, ZSTD_createCCtx, (void), ())
FORWARD(size_t, ZSTD_decompress, (void *dst, size_t dst_capacity, const void *src, size_t compressed_size),
        (dst, dst_capacity, src, compressed_size))
FORWARD(size_t, ZSTD_freeCCtx, (ZSTD_CCtx * cctx), (cctx))
FORWARD(const char *, ZSTD_getErrorName, (size_t code), (code))
FORWARD(unsigned, ZSTD_isError, (size_t code), (code))
