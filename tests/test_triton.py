"""The Triton adapter (amdocc.integrations.triton) against Triton's own AMD compiler, offline.

Kernels are compiled for gfx942, gfx950 and gfx1100 with no GPU. Two oracles:

* the compiler: ``occupancy(compiled, model="llvm").waves_per_simd`` must equal the
  ``; Occupancy:`` comment in ``compiled.asm["amdgcn"]`` of that same compile;
* arithmetic done by hand: the ``hip`` answer at Triton's launch (``num_warps × warp size``
  threads, ``metadata.shared`` bytes of dynamic LDS) must equal the blocks per CU worked out in
  HIP_BY_HAND below from docs/hip-occupancy.md §1-§2 and the metadata note's numbers.
"""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import amdocc
from amdocc.integrations import triton as at
from conftest import needs, skip_unless_required

triton = needs("triton", "the Triton tests compile with it (pip install 'amdocc[triton]')")
tl = needs("triton.language", "the Triton tests compile with it")

# The version whose code generation the hand-worked numbers below were read from.
TRITON_VERSION = "3.9.0"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(a), tl.load(b))
        a += BK
        b += BK * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


_MATMUL_SIG = {
    "a_ptr": "*fp16",
    "b_ptr": "*fp16",
    "c_ptr": "*fp16",
    "M": "i32",
    "N": "i32",
    "K": "i32",
    "stride_am": "i32",
    "stride_bk": "i32",
    "stride_cm": "i32",
}
# name: (function, signature, constexprs, options)
KERNELS = {
    "add": (
        add_kernel,
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
        {"BLOCK": 1024},
        {"num_warps": 4},
    ),
    # 128x128x32 fp16 tl.dot, 2 stages: its operand tiles live in (dynamic) LDS.
    "matmul": (matmul_kernel, _MATMUL_SIG, {"BM": 128, "BN": 128, "BK": 32}, {"num_warps": 4, "num_stages": 2}),
    # 256x128x64: a wave owns more than 256 registers, so CDNA kernels use AGPRs (too slow on RDNA).
    "matmul_agpr": (matmul_kernel, _MATMUL_SIG, {"BM": 256, "BN": 128, "BK": 64}, {"num_warps": 4, "num_stages": 2}),
    "softmax": (
        softmax_kernel,
        {"out_ptr": "*fp32", "in_ptr": "*fp32", "stride": "i32", "n_cols": "i32"},
        {"BLOCK": 4096},
        {"num_warps": 8},
    ),
}
CASES = [
    (k, a) for a in ("gfx942", "gfx950", "gfx1100") for k in KERNELS if not (k == "matmul_agpr" and a == "gfx1100")
]

# HIP's answer (profile 2026-08, the default), worked out by hand for triton 3.9.0's code.
# Inputs per case: .vgpr_count, .sgpr_count, .wavefront_size, .workgroup_processor_mode as
# `llvm-readelf-22 --notes` prints them (.group_segment_fixed_size is 0 in all), and Triton's
# launch: B = num_warps x warp size threads, D = metadata.shared dynamic LDS bytes.
#
# gfx942/gfx950 (docs/hip-occupancy.md §1): MaxWavesPerSimd 8, wave 64, VGPR file 512 granule 8, sgprsPerSimd 800,
# SGPR cost alignUp(sgpr, 16) + 16 (trap reserve, PR #10618), simdPerCU 4, LDS 65536 (gfx942) or
# 163840 (gfx950). aluThreads = 4 x min(8, GprWaves) x 64; blocks = min(aluThreads / B, LDS / D).
#
# gfx1100 in WGP mode (.workgroup_processor_mode 1): MaxWavesPerSimd 16, wave 32, VGPR file 1536
# granule 24 rounded with HIP's bit mask alignUp(v, 24) = (v + 23) & ~23 (docs/hip-occupancy.md §4), no SGPR limit
# (sgprsPerSimd UINT32_MAX), simdPerCU 2 x 2 = 4 (the answer is per WGP), LDS 65536.
# (The 2026-08 profile warns that rocm-systems PR #9571 changed gfx11 WGP-mode LDS counting in
# a way not known here; §2's rule, used below, is the one before it.)
#
# case                vgpr  sgpr   B     D      VGPR waves           SGPR waves        aluThreads             blocks
HIP_BY_HAND = {
    # 512/alignUp(12,8)=512/16=32; 800/(alignUp(21,16)+16)=800/48=16; 4*min(8,16)*64=2048;
    # 2048/256=8, no LDS                                                                    -> 8
    ("add", "gfx942"): dict(vgpr=12, sgpr=21, wave=64, B=256, D=0, blocks=8),
    # 512/alignUp(178,8)=512/184=2; 800/(80+16)=8; 4*min(8,2)*64=512; 512/256=2;
    # 65536/8192=8                                                                          -> 2
    ("matmul", "gfx942"): dict(vgpr=178, sgpr=80, wave=64, B=256, D=8192, blocks=2),
    # .vgpr_count 450 already includes the 194 AGPRs (HIP ignores .agpr_count):
    # 512/alignUp(450,8)=512/456=1; 800/(alignUp(82,16)+16)=800/112=7; 4*1*64=256; 256/256=1;
    # 65536/32768=2                                                                         -> 1
    ("matmul_agpr", "gfx942"): dict(vgpr=450, sgpr=82, wave=64, B=256, D=32768, blocks=1),
    # 512/alignUp(22,8)=512/24=21; 800/(32+16)=16; 4*min(8,16)*64=2048; 2048/512=4;
    # 65536/32=2048                                                                         -> 4
    ("softmax", "gfx942"): dict(vgpr=22, sgpr=31, wave=64, B=512, D=32, blocks=4),
    # as gfx942 add                                                                         -> 8
    ("add", "gfx950"): dict(vgpr=12, sgpr=21, wave=64, B=256, D=0, blocks=8),
    # 512/240=2; 800/96=8; 4*2*64=512; 512/256=2; 163840/32768=5                            -> 2
    ("matmul", "gfx950"): dict(vgpr=240, sgpr=80, wave=64, B=256, D=32768, blocks=2),
    # 512/512=1; 800/112=7; 4*1*64=256; 256/256=1; 163840/98304=1                           -> 1
    ("matmul_agpr", "gfx950"): dict(vgpr=512, sgpr=82, wave=64, B=256, D=98304, blocks=1),
    # 512/24=21; 800/48=16; 2048/512=4; 163840/32=5120                                      -> 4
    ("softmax", "gfx950"): dict(vgpr=22, sgpr=31, wave=64, B=512, D=32, blocks=4),
    # (20+23)&~23 = 43&~23 = 40; 1536/40=38; 4*min(16,38)*32=2048; 2048/128=16, no LDS      -> 16
    ("add", "gfx1100"): dict(vgpr=20, sgpr=18, wave=32, B=128, D=0, blocks=16),
    # (256+23)&~23 = 279&~23 = 256; 1536/256=6; 4*6*32=768; 768/128=6; 65536/16384=4        -> 4
    ("matmul", "gfx1100"): dict(vgpr=256, sgpr=41, wave=32, B=128, D=16384, blocks=4),
    # (42+23)&~23 = 65&~23 = 64; 1536/64=24; 4*min(16,24)*32=2048; 2048/256=8;
    # 65536/32=2048                                                                         -> 8
    ("softmax", "gfx1100"): dict(vgpr=42, sgpr=29, wave=32, B=256, D=32, blocks=8),
}
assert set(HIP_BY_HAND) == set(CASES)

_compiled: dict = {}


@pytest.fixture(scope="module")
def triton_env(tmp_path_factory):
    """A private Triton cache and the settings the research notes used (read at compile time)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("triton-cache")))
        mp.setenv("TRITON_DEFAULT_FP_FUSION", "1")
        mp.setenv("TRITON_DISABLE_LINE_INFO", "1")
        yield


@pytest.fixture
def compile_case(triton_env):
    def get(name: str, arch: str):
        if (name, arch) not in _compiled:
            fn, signature, constexprs, options = KERNELS[name]
            _compiled[name, arch] = at.compile_offline(fn, signature, constexprs, arch, **options)
        return _compiled[name, arch]

    return get


def _comment_occupancy(compiled) -> int:
    found = re.findall(r"^; Occupancy: (\d+)$", compiled.asm["amdgcn"], re.M)
    assert len(found) == 1, "expected one '; Occupancy:' comment in the amdgcn text"
    return int(found[0])


def _needs_hand_version():
    if triton.__version__ != TRITON_VERSION:
        skip_unless_required(f"hand-worked numbers are for triton {TRITON_VERSION}, not {triton.__version__}")


@pytest.mark.parametrize("name,arch", CASES)
def test_llvm_model_equals_compiler_comment(compile_case, name, arch):
    compiled = compile_case(name, arch)
    occ = at.occupancy(compiled, model="llvm")
    assert occ.block_size is None and occ.dynamic_lds == 0
    assert occ.waves_per_simd == _comment_occupancy(compiled)


@pytest.mark.parametrize("name,arch", CASES)
def test_hip_model_equals_hand_worked(compile_case, name, arch):
    _needs_hand_version()
    compiled = compile_case(name, arch)
    want = HIP_BY_HAND[name, arch]
    kernel = at.kernel_of(compiled)
    # The premises of the arithmetic: the compile still produces the numbers it was done with.
    assert (
        kernel.meta("vgpr_count"),
        kernel.meta("sgpr_count"),
        kernel.meta("wavefront_size"),
        kernel.meta("group_segment_fixed_size"),
    ) == (want["vgpr"], want["sgpr"], want["wave"], 0)
    assert at.launch_of(compiled) == (want["B"], want["D"])
    occ = at.occupancy(compiled)
    assert (occ.model, occ.block_size, occ.dynamic_lds) == ("hip", want["B"], want["D"])
    assert occ.blocks_per_cu == want["blocks"]
    assert occ.per_wgp == (arch == "gfx1100")


@pytest.mark.llvm22
@pytest.mark.parametrize("name,arch", CASES)
def test_hand_worked_inputs_match_llvm_readelf(compile_case, name, arch, tmp_path):
    """The hand arithmetic's inputs, read back from the hsaco by llvm-readelf-22 itself."""
    _needs_hand_version()
    compiled = compile_case(name, arch)
    path = tmp_path / f"{name}-{arch}.hsaco"
    path.write_bytes(compiled.asm["hsaco"])
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(path)], check=True, capture_output=True, text=True).stdout

    def key(k):
        found = re.findall(rf"^\s+\.{k}:\s+(\S+)$", notes, re.M)
        assert len(found) == 1, k
        return int(found[0])

    want = HIP_BY_HAND[name, arch]
    assert (key("vgpr_count"), key("sgpr_count"), key("wavefront_size"), key("group_segment_fixed_size")) == (
        want["vgpr"],
        want["sgpr"],
        want["wave"],
        0,
    )
    if arch == "gfx1100":
        assert key("workgroup_processor_mode") == 1


@pytest.mark.parametrize("name,arch", [("matmul", "gfx942"), ("softmax", "gfx1100")])
def test_launch_matches_kernel(compile_case, name, arch):
    compiled = compile_case(name, arch)
    launch = at.launch_of(compiled)
    kernel = at.kernel_of(compiled)
    assert kernel.name == compiled.metadata.name
    assert launch.block_size == compiled.metadata.num_warps * compiled.metadata.warp_size
    # Triton sets amdgpu-flat-work-group-size "1,<block>", so the note's maximum is the launch size.
    assert kernel.meta("max_flat_workgroup_size") == launch.block_size
    assert launch.dynamic_lds == compiled.metadata.shared
    # The hw model gets the same launch; an explicit block size or dynamic LDS overrides it.
    assert at.occupancy(compiled, model="hw").dynamic_lds == launch.dynamic_lds
    assert at.occupancy(compiled, block_size=64, dynamic_lds=0).block_size == 64
    llvm_at_launch = at.occupancy(compiled, model="llvm", block_size=launch.block_size, dynamic_lds=launch.dynamic_lds)
    assert llvm_at_launch.blocks_per_cu is not None


def test_duck_typed_objects_and_errors(compile_case):
    compiled = compile_case("add", "gfx942")
    hsaco = compiled.asm["hsaco"]
    good = {"name": "add_kernel", "num_warps": 4, "warp_size": 64, "shared": 1024}
    fake = SimpleNamespace(asm={"hsaco": hsaco}, metadata=good)
    assert at.launch_of(fake) == (256, 1024)
    assert at.occupancy(fake).dynamic_lds == 1024
    # warp size from the target when the metadata has no warp_size (as in older Triton).
    old = dict(good, warp_size=None, target={"backend": "hip", "arch": "gfx942", "warp_size": 64})
    assert at.launch_of(SimpleNamespace(asm={"hsaco": hsaco}, metadata=old)).block_size == 256

    bad = {
        "no metadata": SimpleNamespace(asm={"hsaco": hsaco}),
        "no asm": SimpleNamespace(metadata=good),
        "no hsaco": SimpleNamespace(asm={"ptx": "x"}, metadata=good),
        "hsaco as text": SimpleNamespace(asm={"hsaco": "abc"}, metadata=good),
        "no shared": SimpleNamespace(asm={"hsaco": hsaco}, metadata=dict(good, shared=None)),
        "no num_warps": SimpleNamespace(
            asm={"hsaco": hsaco}, metadata={"name": "add_kernel", "shared": 0, "warp_size": 64}
        ),
        "no warp size": SimpleNamespace(asm={"hsaco": hsaco}, metadata=dict(good, warp_size=None)),
        "wrong name": SimpleNamespace(asm={"hsaco": hsaco}, metadata=dict(good, name="other")),
        "wrong warp size": SimpleNamespace(asm={"hsaco": hsaco}, metadata=dict(good, warp_size=32)),
        "negative shared": SimpleNamespace(asm={"hsaco": hsaco}, metadata=dict(good, shared=-1)),
    }
    for why, obj in bad.items():
        with pytest.raises(amdocc.UsageError):
            at.occupancy(obj)
            pytest.fail(why)


def test_import_is_lazy():
    code = "import sys, amdocc, amdocc.integrations.triton; assert 'triton' not in sys.modules, 'triton imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_compile_offline_default_warp_size(compile_case):
    assert compile_case("add", "gfx942").metadata.warp_size == 64
    assert compile_case("add", "gfx1100").metadata.warp_size == 32
