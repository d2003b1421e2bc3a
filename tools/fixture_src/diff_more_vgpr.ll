; amdocc diff fixture (more_vgpr): k_main uses the VGPRs and LDS below; k_other never changes.
; Generated once with tools/kernelgen.py render_module; compiled by tools/fixtures/diff.py.
@k_main.lds = internal addrspace(3) global [16384 x i8] poison, align 4

define amdgpu_kernel void @k_main() #0 {
  call void asm sideeffect "; lds $0", "s"(ptr addrspace(3) @k_main.lds)
  call void asm sideeffect "", "~{v159}"()
  call void asm sideeffect "", "~{s19}"()
  ret void
}

define amdgpu_kernel void @k_other() #1 {
  call void asm sideeffect "", "~{v23}"()
  call void asm sideeffect "", "~{s15}"()
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
attributes #1 = { "amdgpu-flat-work-group-size"="1,1024" }
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
