// Second translation unit of the two-TU host .so.
#include "hip_defs.h"
__global__ __launch_bounds__(128) void tu_b_scale(float* p, float s) {
  __shared__ float t[128];
  int i = TID_X();
  t[i] = p[i];
  __builtin_amdgcn_s_barrier();
  p[i] = t[127 - i] * s;
}
