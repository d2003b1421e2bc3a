// Hand-written gfx942 kernel in the style of AITER's asm kernels, where the
// metadata and the kernel descriptor disagree on purpose:
//   metadata: .vgpr_count 256, no .agpr_count, .kernarg_segment_size 512,
//             amdhsa.version [1, 0], no amdhsa.target
//   descriptor: next_free_vgpr 256 (unified), accum_offset 160
//               (160 arch VGPRs + 96 AGPRs), kernarg_size 0, LDS 65536.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version 5

	.text
	.globl	aiter_like_fwd
	.p2align	8
	.type	aiter_like_fwd,@function
aiter_like_fwd:
	v_mov_b32 v159, 0
	v_accvgpr_write_b32 a95, v159
	s_mov_b32 s95, 0
	s_endpgm
.Lfunc_end0:
	.size	aiter_like_fwd, .Lfunc_end0-aiter_like_fwd

	.rodata
	.p2align	6
	.amdhsa_kernel aiter_like_fwd
		.amdhsa_group_segment_fixed_size 65536
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 1
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 256
		.amdhsa_next_free_sgpr 96
		.amdhsa_accum_offset 160
	.end_amdhsa_kernel

	.amdgpu_metadata
---
amdhsa.version:
  - 1
  - 0
amdhsa.kernels:
  - .name:            aiter_like_fwd
    .symbol:          aiter_like_fwd.kd
    .args:
      - .name:            args
        .offset:          0
        .size:            512
        .value_kind:      by_value
    .kernarg_segment_size: 512
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 65536
    .private_segment_fixed_size: 0
    .wavefront_size:  64
    .sgpr_count:      96
    .vgpr_count:      256
    .max_flat_workgroup_size: 512
    .sgpr_spill_count: 0
    .vgpr_spill_count: 0
...
	.end_amdgpu_metadata
