; A kernel compiled with and without the gfx90a+ `tgsplit` feature (tools/fixtures/tgsplit.py).
; With +tgsplit llc sets COMPUTE_PGM_RSRC3 bit 16 (TG_SPLIT): the waves of a workgroup may run on
; different CUs. 4 KiB of static LDS and 256 threads give the hw model per-CU limits to lift.
target triple = "amdgcn-amd-amdhsa"

@tile = internal addrspace(3) global [1024 x i32] poison, align 4

define amdgpu_kernel void @tgsplit_lds(ptr addrspace(1) %out) #0 {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %slot = getelementptr [1024 x i32], ptr addrspace(3) @tile, i32 0, i32 %id
  store i32 %id, ptr addrspace(3) %slot, align 4
  %v = load i32, ptr addrspace(3) %slot, align 4
  %dst = getelementptr i32, ptr addrspace(1) %out, i32 %id
  store i32 %v, ptr addrspace(1) %dst, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
