// OpenCL C kernels: the unlinked (ET_REL) fixture and its linked twin.
// vector_add reads the work-group size (hidden args); lds_reduce takes a
// __local pointer argument (dynamic_shared_pointer) and a required WG size.
__kernel void vector_add(__global const float* a, __global const float* b, __global float* c) {
  size_t i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
             __builtin_amdgcn_workitem_id_x();
  c[i] = a[i] + b[i];
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void lds_reduce(__global float* out, __local float* buf) {
  uint t = __builtin_amdgcn_workitem_id_x();
  buf[t] = out[t];
  __builtin_amdgcn_s_barrier();
  if (t == 0) {
    float s = 0.f;
    for (int k = 0; k < 64; ++k) s += buf[k];
    out[0] = s;
  }
}
