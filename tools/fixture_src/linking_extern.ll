; A call to a function defined in another object, and an indirect call: what the kernel needs
; is known only at link time.
declare void @ext(ptr addrspace(1))

define amdgpu_kernel void @kern_ext(ptr addrspace(1) %p, ptr %fp) {
  call void @ext(ptr addrspace(1) %p)
  call void %fp(ptr addrspace(1) %p)
  ret void
}
