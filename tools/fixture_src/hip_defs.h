// Minimal stand-ins for the HIP headers, so the fixtures build with a bare
// clang-22 (-nogpulib -nogpuinc) and no ROCm installation.
#pragma once
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
// HIP's __launch_bounds__(N) lowers to this attribute (max flat work-group size N).
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define TID_X() ((int)__builtin_amdgcn_workitem_id_x())
#define BID_X() ((int)__builtin_amdgcn_workgroup_id_x())

struct dim3 { unsigned x, y, z; };
// Only the host pass needs this declaration (kernel launch stubs call it).
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, void*);

// Targets with AGPRs (MAI instructions): the AGPR kernels are compiled only there.
#if defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx942__) || \
    defined(__gfx950__) || defined(__gfx9_4_generic__)
#define FIXTURE_HAS_AGPRS 1
#endif
