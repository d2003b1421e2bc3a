// Second translation unit of the several-notes library (tools/several_notes.py).
#include "hip_defs.h"

// 64 live values under a 24-VGPR budget: the compiler spills VGPRs to scratch.
__global__ __launch_bounds__(1024) __attribute__((amdgpu_num_vgpr(24))) void notes_spill(float* p, int n) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = p[TID_X() + i * 1024];
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = acc[i] * acc[(i + 7) & 63] + p[j];
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) p[TID_X() + i * 1024] = acc[i];
}

__global__ void notes_axpy(float* y, const float* x, float a, int n) {
  for (int i = BID_X() * 64 + TID_X(); i < n; i += 4096) y[i] = a * x[i] + y[i];
}
