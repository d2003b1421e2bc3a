// Several kernels in one translation unit; used for the bare code objects, the
// 5-target bundle and the host .so fixtures.
#include "hip_defs.h"

// Static LDS (16 KiB) + __launch_bounds__(256): LDS-limited occupancy, padded KD.
__global__ __launch_bounds__(256) void saxpy_lds(float a, const float* x, float* y, int n) {
  __shared__ float tile[4096];
  int t = TID_X(), i = BID_X() * 256 + t;
  tile[t] = (i < n) ? x[i] : 0.f;
  __builtin_amdgcn_s_barrier();
  if (i < n) y[i] = a * tile[255 - t] + y[i];
}

// Dynamically indexed private array: non-zero private segment (scratch).
__global__ void scratch_private(const int* idx, float* out) {
  volatile float buf[64];
  int t = TID_X();
  for (int k = 0; k < 64; ++k) buf[k] = out[k * 64 + t];
  out[t] = buf[idx[t] & 63];
}

// Reads the work-group size: needs the implicit (hidden) kernel arguments,
// whose layout differs between code-object v4 and v5+.
__global__ void uses_hidden_args(float* out) {
  int i = BID_X() * (int)__builtin_amdgcn_workgroup_size_x() + TID_X();
  out[i] = (float)i;
}

// Dynamic LDS only: group_segment_fixed_size stays 0.
extern __shared__ float dyn_lds[];
__global__ void dynamic_lds(float* out) {
  int t = TID_X();
  dyn_lds[t] = out[t];
  __builtin_amdgcn_s_barrier();
  out[t] = dyn_lds[t ^ 1];
}

#ifdef FIXTURE_HAS_AGPRS
// Clobbers a0..a47 and v0..v40: .agpr_count 48, .vgpr_count is the unified total
// on gfx90a+ (alignTo(41,4)+48 = 92) and max(41,48) on gfx908.
__global__ void agpr_user(float* p) {
  asm volatile("" ::: "a0", "a47", "v0", "v40");
  p[TID_X()] = 1.f;
}
#endif
