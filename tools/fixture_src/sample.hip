// Kernels of the README quickstart sample (amdocc/samples/sample_kernels.hipfb).
#include "hip_defs.h"

// 16 KiB static LDS and __launch_bounds__(256).
__global__ __launch_bounds__(256) void saxpy_lds(float a, const float* x, float* y, int n) {
  __shared__ float tile[4096];
  int t = TID_X(), i = BID_X() * 256 + t;
  tile[t] = (i < n) ? x[i] : 0.f;
  __builtin_amdgcn_s_barrier();
  if (i < n) y[i] = a * tile[255 - t] + y[i];
}

// Register-heavy: 96 values stay live until the reduction is done (~100 VGPRs).
#define NR 96
__global__ void reg_heavy(const float* __restrict__ in, float* __restrict__ out) {
  int t = BID_X() * 1024 + TID_X();
  float r[NR];
#pragma unroll
  for (int k = 0; k < NR; ++k) r[k] = in[t + k * 65536];
  float acc = 0.f;
#pragma unroll
  for (int k = 0; k < NR; ++k) acc += r[k] * r[NR - 1 - k];
#pragma unroll
  for (int k = 0; k < NR; ++k) out[t + k * 65536] = r[k] * acc;
}

#ifdef FIXTURE_HAS_AGPRS
// Uses AGPRs a0..a31 next to VGPRs v0..v63 (gfx90a/gfx942/gfx950 only).
__global__ void mfma_agpr(float* p) {
  asm volatile("" ::: "a0", "a31", "v0", "v63");
  p[TID_X()] = 1.f;
}
#endif
