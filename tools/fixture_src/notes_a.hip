// First translation unit of the several-notes library (tools/several_notes.py): linked with
// notes_b.hip by a -fgpu-rdc device link, whose LTO partitions each write a metadata note.
#include "hip_defs.h"

__global__ __launch_bounds__(256) void notes_fill(float* p, float v) { p[BID_X() * 256 + TID_X()] = v; }

// 1 KiB of static LDS and a 128-thread bound.
__global__ __launch_bounds__(128) void notes_lds_reverse(float* p) {
  __shared__ float t[256];
  t[TID_X()] = p[TID_X()];
  __builtin_amdgcn_s_barrier();
  p[TID_X()] = t[255 - TID_X()];
}

// Two instantiations of one template: symbols of the same length (_Z11notes_scaleIfEvPT_S0_,
// ...IdEv...) whose LDS differs (1 KiB, 2 KiB), so a test can make one note describe the other.
template <typename T> __global__ __launch_bounds__(256) void notes_scale(T* p, T s) {
  __shared__ T t[256];
  t[TID_X()] = p[TID_X()] * s;
  __builtin_amdgcn_s_barrier();
  p[TID_X()] = t[255 - TID_X()];
}
template __global__ void notes_scale<float>(float*, float);
template __global__ void notes_scale<double>(double*, double);

// An unmangled name.
extern "C" __global__ void notes_plain(int* p) { p[TID_X()] += 1; }
