#!/usr/bin/env python3
"""Regenerate the code objects that `amdocc check` and `amdocc census` are tested on.

    python tools/make_check_fixtures.py

Each kernel is built to trip one rule of `amdocc check` (or none), with Debian's LLVM 22
(llc-22, llvm-mc-22, ld.lld-22), into tests/data/fixtures/check/. LLVM's own view of every
code object is stored next to it exactly as tools/make_fixtures.py stores it (readelf notes,
symbols, descriptor disassembly, the compiler's "; Kernel info" blocks), and so is every
source this script rendered (src/). The tests derive the expected violations from those texts.

    check_gfx942.hsaco       release 1 of a small library, one kernel per rule:
      k_clean                nothing to report
      k_vgpr_spill           VGPR spills (values live across a clobber of the 32 VGPRs allowed)
      k_sgpr_spill           SGPR spills to VGPR lanes: spills without scratch
      k_scratch              a private array indexed at run time: scratch without spills
      k_dynamic_stack        a run-time sized alloca: a dynamic stack
      k_launch_miss          132 VGPRs with "amdgpu-flat-work-group-size"="1,1024": one
                             1024-thread workgroup needs 4 waves per SIMD, the VGPRs allow 3
                             (kokkos/kokkos#9402)
      k_low_occupancy        160 VGPRs at 256 threads: 3 waves per SIMD
      k_reqd                 132 VGPRs, max flat size 1024 but .reqd_workgroup_size 64x4x1
    check_next_gfx942.hsaco  release 2: k_vgpr_spill fixed, k_scratch's array doubled, a new
                             kernel k_new_spill that spills
    check_lds_gfx942.hsaco   hand-written assembly declaring 96 KiB of static LDS on gfx942
                             (llc-22 refuses such a kernel; its error is stored as the oracle
                             of the limit) and a kernel at exactly the 64 KiB limit
    check_dvgpr_gfx1200.hsaco  a gfx1200 kernel whose descriptor has COMPUTE_PGM_RSRC2 bit 6
                             (ENABLE_DYNAMIC_VGPR on GFX12, AMDGPUUsage) set: LLVM 22 has no
                             way to emit it for an HSA kernel, so the bit is set after linking

Beware: tools/make_fixtures.py empties tests/data/fixtures/ before it rebuilds; run this
script after it.
"""
from __future__ import annotations

import json
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import make_fixtures as mf

OUT = mf.OUT / "check"
LLC = [mf.LLC, "-mtriple=amdgcn-amd-amdhsa", "-O3"]
MODULE_FLAGS = '!llvm.module.flags = !{!0}\n!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}\n'
RSRC2_OFFSET = 0x34          # COMPUTE_PGM_RSRC2 within a kernel descriptor (AMDGPUUsage)
GFX12_DYNAMIC_VGPR = 1 << 6  # COMPUTE_PGM_RSRC2 bit 6 on GFX12: ENABLE_DYNAMIC_VGPR


# --------------------------------------------------------------------------- IR kernels

def clobbers(kind: str, registers) -> str:
    return ",".join(f"~{{{kind}{i}}}" for i in registers)


def asm_kernel(name: str, attrs: int, vgpr: int, extra: str = "") -> str:
    """A kernel that uses registers v0..v<vgpr> through an inline-asm clobber."""
    return (f"define amdgpu_kernel void @{name}() #{attrs}{extra} {{\n"
            f'  call void asm sideeffect "", "~{{v{vgpr}}}"()\n  ret void\n}}\n')


def vgpr_spill_kernel(name: str, values: int) -> str:
    """``values`` loads live across a clobber of every VGPR the kernel may use (32): the
    register allocator must put them somewhere else (AGPRs, then scratch)."""
    body = []
    for i in range(values):
        body.append(f"  %a{i} = getelementptr float, ptr addrspace(1) %p, i32 {i * 64}")
        body.append(f"  %v{i} = load volatile float, ptr addrspace(1) %a{i}")
    body.append(f'  call void asm sideeffect "", "{clobbers("v", range(32))}"()')
    body += [f"  store volatile float %v{i}, ptr addrspace(1) %a{i}" for i in range(values)]
    return (f"define amdgpu_kernel void @{name}(ptr addrspace(1) %p) #2 {{\n"
            + "\n".join(body) + "\n  ret void\n}\n")


def sgpr_spill_kernel(name: str) -> str:
    """40 uniform values live across a clobber of s0..s39 with 48 SGPRs allowed."""
    body = []
    for i in range(40):
        body.append(f"  %a{i} = getelementptr i32, ptr addrspace(4) %p, i32 {i}")
        body.append(f"  %v{i} = load i32, ptr addrspace(4) %a{i}")
    body.append(f'  call void asm sideeffect "", "{clobbers("s", range(40))}"()')
    acc = "%v0"
    for i in range(1, 40):
        body.append(f"  %x{i} = xor i32 {acc}, %v{i}")
        acc = f"%x{i}"
    body.append(f"  store i32 {acc}, ptr addrspace(1) %q")
    return (f"define amdgpu_kernel void @{name}(ptr addrspace(4) %p, ptr addrspace(1) %q) #3 {{\n"
            + "\n".join(body) + "\n  ret void\n}\n")


def scratch_kernel(name: str, words: int) -> str:
    """A private array indexed with kernel arguments cannot live in registers."""
    return f"""define amdgpu_kernel void @{name}(ptr addrspace(1) %q, i32 %i, i32 %j) #0 {{
  %buf = alloca [{words} x i32], align 4, addrspace(5)
  %p = getelementptr [{words} x i32], ptr addrspace(5) %buf, i32 0, i32 %i
  store volatile i32 %j, ptr addrspace(5) %p
  %r = getelementptr [{words} x i32], ptr addrspace(5) %buf, i32 0, i32 %j
  %v = load volatile i32, ptr addrspace(5) %r
  store i32 %v, ptr addrspace(1) %q
  ret void
}}
"""


DYNAMIC_STACK = """define amdgpu_kernel void @k_dynamic_stack(ptr addrspace(1) %q, i32 %n) #0 {
  %buf = alloca i32, i32 %n, align 4, addrspace(5)
  store volatile i32 %n, ptr addrspace(5) %buf
  %v = load volatile i32, ptr addrspace(5) %buf
  store i32 %v, ptr addrspace(1) %q
  ret void
}
"""

ATTRIBUTES = """attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
attributes #1 = { "amdgpu-flat-work-group-size"="1,1024" }
attributes #2 = { "amdgpu-flat-work-group-size"="1,256" "amdgpu-num-vgpr"="32" }
attributes #3 = { "amdgpu-flat-work-group-size"="1,256" "amdgpu-num-sgpr"="48" }
"""


def library(release: int) -> str:
    """The IR of one release of the test library."""
    parts = [asm_kernel("k_clean", 0, 23),
             vgpr_spill_kernel("k_vgpr_spill", 48 if release == 1 else 16),
             sgpr_spill_kernel("k_sgpr_spill"),
             scratch_kernel("k_scratch", 64 if release == 1 else 128),
             DYNAMIC_STACK,
             asm_kernel("k_launch_miss", 1, 131),
             asm_kernel("k_low_occupancy", 0, 159),
             asm_kernel("k_reqd", 1, 131, " !reqd_work_group_size !1")]
    if release == 2:
        parts.append(vgpr_spill_kernel("k_new_spill", 40))
    return ("; amdocc check fixture, release %d (rendered by tools/make_check_fixtures.py)\n" % release
            + "\n".join(parts) + "\n" + ATTRIBUTES + MODULE_FLAGS + "!1 = !{i32 64, i32 4, i32 1}\n")


# --------------------------------------------------------------------------- hand-written LDS

LDS_KERNELS = (("k_lds_over", 98304), ("k_lds_at_limit", 65536))


def lds_assembly() -> str:
    """gfx942 kernels whose only resource is static LDS, written as llvm-mc assembly."""
    text = ['// amdocc check fixture: static LDS against gfx942\'s 64 KiB per workgroup',
            '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"', "\t.amdhsa_code_object_version 5", "\t.text"]
    for name, _ in LDS_KERNELS:
        text += [f"\t.globl\t{name}", "\t.p2align\t8", f"\t.type\t{name},@function", f"{name}:",
                 "\tv_mov_b32 v7, 0", "\ts_endpgm", f".Lend_{name}:", f"\t.size\t{name}, .Lend_{name}-{name}"]
    text += ["\t.rodata"]
    for name, lds in LDS_KERNELS:
        text += ["\t.p2align\t6", f"\t.amdhsa_kernel {name}", f"\t\t.amdhsa_group_segment_fixed_size {lds}",
                 "\t\t.amdhsa_next_free_vgpr 8", "\t\t.amdhsa_next_free_sgpr 8",
                 "\t\t.amdhsa_accum_offset 8", "\t.end_amdhsa_kernel"]
    text += ["\t.amdgpu_metadata", "---", "amdhsa.version:", "  - 1", "  - 2",
             "amdhsa.target:   amdgcn-amd-amdhsa--gfx942", "amdhsa.kernels:"]
    for name, lds in LDS_KERNELS:
        text += [f"  - .name:            {name}", f"    .symbol:          {name}.kd",
                 "    .kernarg_segment_size: 0", "    .kernarg_segment_align: 4",
                 f"    .group_segment_fixed_size: {lds}", "    .private_segment_fixed_size: 0",
                 "    .wavefront_size:  64", "    .sgpr_count:      8", "    .vgpr_count:      8",
                 "    .agpr_count:      0", "    .max_flat_workgroup_size: 256",
                 "    .sgpr_spill_count: 0", "    .vgpr_spill_count: 0"]
    text += ["...", "\t.end_amdgpu_metadata", ""]
    return "\n".join(text)


LDS_OVER_IR = f"""@big = internal addrspace(3) global [{LDS_KERNELS[0][1]} x i8] poison, align 4
define amdgpu_kernel void @{LDS_KERNELS[0][0]}() #0 {{
  call void asm sideeffect "; lds $0", "s"(ptr addrspace(3) @big)
  ret void
}}
""" + ATTRIBUTES.splitlines()[0] + "\n" + MODULE_FLAGS


# --------------------------------------------------------------------------- builds

def record(path: Path, why: str, commands: list, build: dict) -> dict:
    rec = {"file": path.relative_to(mf.OUT).as_posix(), "why": why, "build": build,
           "sha256": mf.sha256(path), "size": path.stat().st_size, "commands": commands}
    rec.update(mf.oracle(path.parent, path.name, path.parent, path.name))
    return rec


def render(name: str, text: str) -> None:
    (mf.WORK / name).write_text(text)
    (OUT / "src").mkdir(parents=True, exist_ok=True)
    (OUT / "src" / name).write_text(text)


def llc_library(stem: str, source: str, arch: str, log: list) -> Path:
    base = LLC + [f"-mcpu={arch}"]
    mf.run(base + ["-filetype=obj", source, "-o", f"{stem}.o"], log)
    mf.run([mf.LLD, "-shared", f"{stem}.o", "-o", f"{stem}.hsaco"], log)
    mf.run(base + ["-filetype=asm", source, "-o", f"{stem}.s"], log)
    mf.remember_kernel_info(mf.WORK / f"{stem}.hsaco", mf.WORK / f"{stem}.s")
    return mf.store(mf.WORK / f"{stem}.hsaco", "check")


def build_libraries() -> list[dict]:
    out = []
    for release, stem in ((1, "check_gfx942"), (2, "check_next_gfx942")):
        log: list[str] = []
        render(f"{stem}.ll", library(release))
        dest = llc_library(stem, f"{stem}.ll", "gfx942", log)
        out.append(record(dest, f"amdocc check library, release {release}", log,
                          {"source": f"check/src/{stem}.ll", "offload_arch": "gfx942", "code_object_version": 5}))
    return out


def build_lds() -> dict:
    log: list[str] = []
    render("check_lds_gfx942.s", lds_assembly())
    mf.run([mf.MC, "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", "check_lds_gfx942.s",
            "-o", "check_lds_gfx942.o"], log)
    mf.run([mf.LLD, "-shared", "check_lds_gfx942.o", "-o", "check_lds_gfx942.hsaco"], log)
    dest = mf.store(mf.WORK / "check_lds_gfx942.hsaco", "check")
    # The limit itself, as LLVM states it: llc-22 refuses the same LDS in IR for gfx942.
    render("check_lds_over.ll", LDS_OVER_IR)
    refused = mf.run(LLC + ["-mcpu=gfx942", "-filetype=asm", "check_lds_over.ll", "-o", "/dev/null"],
                     log, check=False)
    assert refused.returncode != 0, "llc-22 accepted LDS above the gfx942 limit"
    (OUT / "check_lds_over.llc-error.txt").write_text(mf.first_error_line(refused.stderr) + "\n")
    rec = record(dest, "hand-written: 96 KiB static LDS on gfx942, and 64 KiB exactly", log,
                 {"source": "check/src/check_lds_gfx942.s", "offload_arch": "gfx942",
                  "code_object_version": 5, "hand_written": True})
    rec["oracle"]["llc_error"] = "check/check_lds_over.llc-error.txt"
    return rec


def file_offset(binary: str, symbol: str) -> int:
    """Where a symbol's bytes sit in the file, from llvm-readelf's symbol and section tables."""
    symbols = mf.run([mf.READELF, "--symbols", binary]).stdout
    value, index = next((int(ln.split()[1], 16), int(ln.split()[6])) for ln in symbols.splitlines()
                        if ln.split() and ln.split()[-1] == symbol)
    sections = mf.run([mf.READELF, "-S", binary]).stdout
    row = next(ln for ln in sections.splitlines() if ln.strip().startswith(f"[{index:2d}]")
               or ln.strip().startswith(f"[{index}]"))
    fields = row.split("]", 1)[1].split()
    address, offset = int(fields[2], 16), int(fields[3], 16)
    return value - address + offset


def build_dynamic_vgpr() -> dict:
    log: list[str] = []
    stem = "check_dvgpr_gfx1200"
    render(f"{stem}.ll", asm_kernel("k_dynamic_vgpr", 0, 40) + ATTRIBUTES.splitlines()[0] + "\n" + MODULE_FLAGS)
    built = mf.WORK / f"{stem}.hsaco"
    base = LLC + ["-mcpu=gfx1200"]
    mf.run(base + ["-filetype=obj", f"{stem}.ll", "-o", f"{stem}.o"], log)
    mf.run([mf.LLD, "-shared", f"{stem}.o", "-o", built.name], log)
    mf.run(base + ["-filetype=asm", f"{stem}.ll", "-o", f"{stem}.s"], log)
    data = bytearray(built.read_bytes())
    kd = file_offset(built.name, "k_dynamic_vgpr.kd")
    (rsrc2,) = struct.unpack_from("<I", data, kd + RSRC2_OFFSET)
    struct.pack_into("<I", data, kd + RSRC2_OFFSET, rsrc2 | GFX12_DYNAMIC_VGPR)
    built.write_bytes(bytes(data))
    log.append(f"# then: COMPUTE_PGM_RSRC2 of k_dynamic_vgpr.kd (file offset {kd + RSRC2_OFFSET:#x}) "
               f"{rsrc2:#x} -> {rsrc2 | GFX12_DYNAMIC_VGPR:#x} (bit 6, ENABLE_DYNAMIC_VGPR)")
    dest = mf.store(built, "check")
    return record(dest, "gfx1200 kernel in dynamic-VGPR mode (descriptor bit set after linking)", log,
                  {"source": f"check/src/{stem}.ll", "offload_arch": "gfx1200", "code_object_version": 5,
                   "patched": "COMPUTE_PGM_RSRC2 bit 6"})


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="amdocc-check-fixtures-") as tmp:
        mf.WORK = Path(tmp)
        fixtures = build_libraries() + [build_lds(), build_dynamic_vgpr()]
        manifest = {"generator": "tools/make_check_fixtures.py", "toolchain": mf.toolchain(),
                    "oracle_commands": mf.ORACLE_COMMANDS, "fixtures": fixtures}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(fixtures)} check fixtures in {OUT.relative_to(mf.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
