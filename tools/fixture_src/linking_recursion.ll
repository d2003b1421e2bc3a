; A recursive callee: the call graph has a cycle, so the stack has no static bound.
define void @rec(ptr addrspace(1) %p, i32 %n) noinline {
  %buf = alloca [8 x i32], align 4, addrspace(5)
  %e = getelementptr [8 x i32], ptr addrspace(5) %buf, i32 0, i32 %n
  store volatile i32 %n, ptr addrspace(5) %e
  %z = load volatile i32, ptr addrspace(5) %e
  store volatile i32 %z, ptr addrspace(1) %p
  %c = icmp sgt i32 %n, 0
  br i1 %c, label %again, label %done
again:
  %m = sub i32 %n, 1
  call void @rec(ptr addrspace(1) %p, i32 %m)
  br label %done
done:
  ret void
}

define amdgpu_kernel void @kern_rec(ptr addrspace(1) %p, i32 %n) {
  call void @rec(ptr addrspace(1) %p, i32 %n)
  ret void
}
