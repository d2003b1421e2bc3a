; Object linking (llvm #191645/#192384/#192594): kern -> mid -> leaf, kern_leaf -> leaf.
; leaf uses the most VGPRs and LDS variable lds_b; mid and leaf have stack frames (they add up);
; mid uses lds_a.
@lds_a = external addrspace(3) global [64 x i32], align 16
@lds_b = external addrspace(3) global [128 x i32], align 16

define void @leaf(ptr addrspace(1) %p, i32 %i) noinline {
  %buf = alloca [8 x i32], align 4, addrspace(5)
  %e = getelementptr [8 x i32], ptr addrspace(5) %buf, i32 0, i32 %i
  store volatile i32 %i, ptr addrspace(5) %e
  %s = load volatile i32, ptr addrspace(5) %e
  store volatile i32 %s, ptr addrspace(1) %p
  %v = load volatile <32 x float>, ptr addrspace(1) %p
  %w = fmul <32 x float> %v, %v
  store volatile <32 x float> %w, ptr addrspace(1) %p
  %x = load volatile i32, ptr addrspace(3) @lds_b
  store volatile i32 %x, ptr addrspace(1) %p
  ret void
}

define void @mid(ptr addrspace(1) %p, i32 %i) noinline {
  %buf = alloca [16 x i32], align 4, addrspace(5)
  %e = getelementptr [16 x i32], ptr addrspace(5) %buf, i32 0, i32 %i
  %y = load volatile i32, ptr addrspace(3) @lds_a
  store volatile i32 %y, ptr addrspace(5) %e
  %z = load volatile i32, ptr addrspace(5) %e
  store volatile i32 %z, ptr addrspace(1) %p
  call void @leaf(ptr addrspace(1) %p, i32 %i)
  ret void
}

define amdgpu_kernel void @kern(ptr addrspace(1) %p, i32 %i) {
  call void @mid(ptr addrspace(1) %p, i32 %i)
  ret void
}

define amdgpu_kernel void @kern_leaf(ptr addrspace(1) %p, i32 %i) {
  call void @leaf(ptr addrspace(1) %p, i32 %i)
  ret void
}
