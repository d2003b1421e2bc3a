// A code-object v2 kernel for gfx906, written by hand because LLVM 22 can no longer emit v2.
// tools/fixtures/legacy.py assembles it for a non-HSA triple (where llvm-mc still accepts
// .amd_kernel_code_t), links it, then sets EI_OSABI to HSA (64), EI_ABIVERSION to 0 (v2) and the
// kernel symbol's type to STT_AMDGPU_HSA_KERNEL (10), as v2 code objects had them.
  .text
  .globl legacy_scale
  .p2align 8
  .type legacy_scale,@function
legacy_scale:
  .amd_kernel_code_t
    enable_sgpr_kernarg_segment_ptr = 1
    enable_sgpr_workgroup_id_x = 1
    workitem_vgpr_count = 10
    wavefront_sgpr_count = 12
    granulated_workitem_vgpr_count = 2
    granulated_wavefront_sgpr_count = 1
    workgroup_group_segment_byte_size = 1024
    workitem_private_segment_byte_size = 16
    kernarg_segment_byte_size = 24
  .end_amd_kernel_code_t
  s_endpgm
.Lend:
  .size legacy_scale, .Lend-legacy_scale

  .section .note,"a",@note
  .p2align 2
  // NT_AMD_HSA_CODE_OBJECT_VERSION: {major 2, minor 1}
  .long 4, 8, 1
  .asciz "AMD"
  .long 2, 1
  // NT_AMD_HSA_ISA_VERSION: vendor and arch name sizes, 9.0.6, "AMD", "AMDGPU"
  .long 4, .Lisa_end - .Lisa, 3
  .asciz "AMD"
.Lisa:
  .short 4, 7
  .long 9, 0, 6
  .asciz "AMD"
  .asciz "AMDGPU"
.Lisa_end:
  .p2align 2
  // NT_AMD_HSA_METADATA: YAML as LLVM's v2 metadata streamer wrote it
  .long 4, .Lmd_end - .Lmd, 10
  .asciz "AMD"
.Lmd:
  .ascii "---\n"
  .ascii "Version:         [ 1, 0 ]\n"
  .ascii "Kernels:         \n"
  .ascii "  - Name:            legacy_scale\n"
  .ascii "    SymbolName:      'legacy_scale@kd'\n"
  .ascii "    Language:        OpenCL C\n"
  .ascii "    LanguageVersion: [ 1, 2 ]\n"
  .ascii "    Args:            \n"
  .ascii "      - Name:            out\n"
  .ascii "        TypeName:        'float*'\n"
  .ascii "        Size:            8\n"
  .ascii "        Align:           8\n"
  .ascii "        ValueKind:       GlobalBuffer\n"
  .ascii "        ValueType:       F32\n"
  .ascii "        AddrSpaceQual:   Global\n"
  .ascii "        AccQual:         Default\n"
  .ascii "      - Size:            8\n"
  .ascii "        Align:           8\n"
  .ascii "        ValueKind:       HiddenGlobalOffsetX\n"
  .ascii "        ValueType:       I64\n"
  .ascii "    CodeProps:       \n"
  .ascii "      KernargSegmentSize: 24\n"
  .ascii "      GroupSegmentFixedSize: 1024\n"
  .ascii "      PrivateSegmentFixedSize: 16\n"
  .ascii "      KernargSegmentAlign: 8\n"
  .ascii "      WavefrontSize:   64\n"
  .ascii "      NumSGPRs:        12\n"
  .ascii "      NumVGPRs:        10\n"
  .ascii "      MaxFlatWorkGroupSize: 256\n"
  .ascii "...\n"
.Lmd_end:
  .p2align 2
