// Hand-written gfx1100 wave32 (WGP mode) kernels. lds_mismatch's descriptor
// says 32768 bytes of static LDS while its metadata says 16384; lds_agree is a
// consistent control kernel (8192 in both) in the same object.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
	.amdhsa_code_object_version 6

	.text
	.globl	lds_mismatch
	.p2align	8
	.type	lds_mismatch,@function
lds_mismatch:
	v_mov_b32 v23, 0
	s_endpgm
.Lfunc_end0:
	.size	lds_mismatch, .Lfunc_end0-lds_mismatch

	.globl	lds_agree
	.p2align	8
	.type	lds_agree,@function
lds_agree:
	v_mov_b32 v7, 0
	s_endpgm
.Lfunc_end1:
	.size	lds_agree, .Lfunc_end1-lds_agree

	.rodata
	.p2align	6
	.amdhsa_kernel lds_mismatch
		.amdhsa_group_segment_fixed_size 32768
		.amdhsa_kernarg_size 8
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 24
		.amdhsa_next_free_sgpr 8
		.amdhsa_wavefront_size32 1
		.amdhsa_workgroup_processor_mode 1
	.end_amdhsa_kernel

	.p2align	6
	.amdhsa_kernel lds_agree
		.amdhsa_group_segment_fixed_size 8192
		.amdhsa_kernarg_size 8
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 8
		.amdhsa_wavefront_size32 1
		.amdhsa_workgroup_processor_mode 1
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version:
  - 1
  - 2
amdhsa.target:   amdgcn-amd-amdhsa--gfx1100
amdhsa.kernels:
  - .name:            lds_mismatch
    .symbol:          lds_mismatch.kd
    .args:
      - .address_space:  global
        .offset:          0
        .size:            8
        .value_kind:      global_buffer
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 16384
    .private_segment_fixed_size: 0
    .wavefront_size:  32
    .sgpr_count:      8
    .vgpr_count:      24
    .max_flat_workgroup_size: 256
    .workgroup_processor_mode: 1
    .uses_dynamic_stack: false
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
  - .name:            lds_agree
    .symbol:          lds_agree.kd
    .args:
      - .address_space:  global
        .offset:          0
        .size:            8
        .value_kind:      global_buffer
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 8192
    .private_segment_fixed_size: 0
    .wavefront_size:  32
    .sgpr_count:      8
    .vgpr_count:      8
    .max_flat_workgroup_size: 1024
    .workgroup_processor_mode: 1
    .uses_dynamic_stack: false
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
...
	.end_amdgpu_metadata
