; AGPR-using kernels written in LLVM IR and compiled with llc-22.
; agpr_clobber: A=41 arch VGPRs, G=64 AGPRs, flat work-group size <= 256.
; agpr_small:   A=41, G=11 (gfx90a+: .vgpr_count = alignTo(41,4)+11 = 55).
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @agpr_clobber(ptr addrspace(1) %out) #0 {
  call void asm sideeffect "", "~{a0},~{a63},~{v0},~{v40}"()
  store i32 1, ptr addrspace(1) %out, align 4
  ret void
}

define amdgpu_kernel void @agpr_small(ptr addrspace(1) %out) #1 {
  call void asm sideeffect "", "~{a0},~{a10},~{v0},~{v40}"()
  store i32 2, ptr addrspace(1) %out, align 4
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
attributes #1 = { "amdgpu-flat-work-group-size"="1,1024" }
