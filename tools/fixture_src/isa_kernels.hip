// Kernels for the ISA layer's tests (amdocc/isa): loops nested to a known depth, a kernel made
// to spill with a small register budget, a private array, and, where the target has them,
// matrix instructions in a loop. Built by tests/isa_build.py with clang-22 for each processor.
#include "hip_defs.h"

// One loop: a grid-stride saxpy.
__global__ void isa_saxpy_loop(float a, const float* x, float* y, int n, int stride) {
  for (int i = BID_X() * 256 + TID_X(); i < n; i += stride) y[i] = a * x[i] + y[i];
}

// Two loops nested in a third (depth 3), and a loop after them (depth 1).
__global__ void isa_nested(const float* x, float* y, int n, int m, int k) {
  float acc = 0.f;
  int t = TID_X();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int l = 0; l < k; ++l) acc += x[(i * m + j) * k + l + t];
  for (int i = 0; i < n; ++i) y[i * 64 + t] = acc * (float)i;
}

// LDS tree reduction with barriers.
__global__ __launch_bounds__(256) void isa_lds_reduce(const float* x, float* out) {
  __shared__ float s[256];
  int t = TID_X();
  s[t] = x[BID_X() * 256 + t];
  __builtin_amdgcn_s_barrier();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) s[t] += s[t + w];
    __builtin_amdgcn_s_barrier();
  }
  if (t == 0) out[BID_X()] = s[0];
}

// Many values live across a loop with a 24-VGPR budget: the register allocator spills.
__global__ __attribute__((amdgpu_num_vgpr(24))) void isa_spill(const float* x, float* y, int n) {
  int t = TID_X();
  float v[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) v[i] = x[i * 64 + t];
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < 48; ++i) v[i] = v[i] * v[(i + 7) % 48] + x[r];
  }
#pragma unroll
  for (int i = 0; i < 48; ++i) y[i * 64 + t] = v[i];
}

// A dynamically indexed private array: scratch that is not a spill.
__global__ void isa_private(const int* idx, float* out, int n) {
  float buf[96];
  int t = TID_X();
  for (int k = 0; k < n; ++k) buf[(k * 7 + t) % 96] = out[k * 64 + t];
  out[t] = buf[idx[t] % 96] + buf[idx[t + 64] % 96];
}

#ifdef FIXTURE_HAS_AGPRS
typedef float float4_t __attribute__((ext_vector_type(4)));
// A matrix multiply-accumulate in a loop.
__global__ void isa_mfma_loop(const float* a, const float* b, float4_t* c, int n) {
  float4_t acc = {0, 0, 0, 0};
  int t = TID_X();
  for (int i = 0; i < n; ++i) acc = __builtin_amdgcn_mfma_f32_4x4x1f32(a[i * 64 + t], b[i * 64 + t], acc, 0, 0, 0);
  c[t] = acc;
}
#endif

// Many uniform values live across a loop with a 24-SGPR budget: SGPRs spill to VGPR lanes.
__global__ __attribute__((amdgpu_num_sgpr(24))) void isa_sgpr_spill(const int* __restrict__ c, int* y, int n) {
  int u[24];
#pragma unroll
  for (int i = 0; i < 24; ++i) u[i] = c[i];
  int t = TID_X(), acc = 0;
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < 24; ++i) acc += (t ^ r) * u[i] + u[(i + 5) % 24];
  }
  y[t] = acc;
}
