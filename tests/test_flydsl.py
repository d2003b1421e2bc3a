"""The FlyDSL adapter (amdocc.integrations.flydsl) against real FlyDSL output, with no GPU.

The fixtures in tests/data/fixtures/flydsl/ are final MLIR modules from offline FlyDSL 0.5.0
compiles (tools/fixtures/flydsl_cases.py). Their manifest holds what two independent oracles saw:
FlyDSL's own MLIR Python bindings (each launch's kernel, block and dynamic shared memory, and the
sha256 of object #0 of each gpu.binary) and llvm-readelf-22 (the kernels' metadata). The
occupancy answers are checked against arithmetic done by hand (HIP_BY_HAND below) from
docs/hip-occupancy.md §1-§2 and those readelf numbers.

The last test compiles the same kernels live when flydsl and torch import (else it skips).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import amdocc
from amdocc import UsageError
from amdocc.integrations import flydsl as af
from amdocc.runtime import runtime
from conftest import needs, skip_unless_required

FIXTURES = Path(__file__).resolve().parent / "data" / "fixtures" / "flydsl"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
CASES = MANIFEST["cases"]
CONSTANT_CASES = ["vadd-gfx942", "vadd-gfx950", "lds-gfx942", "lds-gfx950", "two_launches-gfx942"]
SINGLE_LAUNCH = ["vadd-gfx942", "vadd-gfx950", "lds-gfx942", "lds-gfx950"]


def text_of(case: str) -> str:
    return (FIXTURES / CASES[case]["mlir"]).read_text()


def readelf_of(case: str, kernel: str) -> dict:
    (binary,) = CASES[case]["binaries"].values()
    (meta,) = [k for k in binary["readelf"] if k["name"] == kernel]
    return meta


# Blocks per CU by HIP's rules (docs/hip-occupancy.md §2; device values §1: gfx942 and gfx950 both
# have 4 SIMDs per CU, 8 waves per SIMD, 512 VGPRs per SIMD in granules of 8, 800 SGPRs per SIMD
# in granules of 16; LDS 65536 B on gfx942, 163840 B on gfx950), from the readelf numbers:
#
#   vadd_0 (both targets): .vgpr_count 5, .sgpr_count 16, .group_segment_fixed_size 0, wave64;
#     launched with block 256 and no dynamic shared memory.
#     VGPR waves   = 512 / alignUp(5, 8) = 512 / 8 = 64
#     SGPR waves   = 800 / (alignUp(16, 16) + 16 trap-handler SGPRs) = 800 / 32 = 25
#                    (800 / 16 = 50 before rocm-systems PR #10618; either way above 8)
#     ALU threads  = 4 SIMDs * min(8, 64, 25) waves * 64 = 2048
#     LDS          = 0 + 0 = 0 -> no LDS limit
#     blocks       = min(2048 / alignUp(256, 64), no limit) = 2048 / 256 = 8
#
#   lds_0 (both targets): .vgpr_count 6, .sgpr_count 14, .group_segment_fixed_size 4096, wave64;
#     launched with block 256 and dynamic_shared_memory_size 28672.
#     VGPR waves   = 512 / alignUp(6, 8) = 64;  SGPR waves = 800 / (16 + 16) = 25
#     ALU threads  = 4 * min(8, 64, 25) * 64 = 2048 -> 2048 / 256 = 8 blocks
#     LDS          = 4096 + 28672 = 32768 B per workgroup
#     gfx942: 65536 / 32768 = 2   -> blocks = min(8, 2) = 2 (LDS-limited)
#     gfx950: 163840 / 32768 = 5  -> blocks = min(8, 5) = 5 (LDS-limited)
HIP_BY_HAND = {"vadd-gfx942": 8, "vadd-gfx950": 8, "lds-gfx942": 2, "lds-gfx950": 5}
READELF_BY_HAND = {  # the numbers the arithmetic above starts from
    "vadd_0": {"vgpr_count": 5, "sgpr_count": 16, "group_segment_fixed_size": 0, "wavefront_size": 64},
    "lds_0": {"vgpr_count": 6, "sgpr_count": 14, "group_segment_fixed_size": 4096, "wavefront_size": 64},
}


# -- launches and binaries against FlyDSL's MLIR parser ------------------------------------------


@pytest.mark.parametrize("case", CONSTANT_CASES)
def test_launches_match_flydsl_oracle(case):
    expected = CASES[case]
    got = af.launches(text_of(case))
    assert len(got) == len(expected["launches"])
    for launch, want in zip(got, expected["launches"], strict=True):
        assert (launch.module, launch.kernel) == (want["module"], want["kernel"])
        assert list(launch.block) == [op["constant"] for op in want["block"]]
        assert launch.block_size == launch.block[0] * launch.block[1] * launch.block[2] == 256
        smem = want["dynamic_shared_memory_size"]
        assert launch.dynamic_lds == (0 if smem is None else smem["constant"])
        assert list(launch.grid) == [op["constant"] for op in want["grid"]]
        binary = expected["binaries"][launch.module]
        assert hashlib.sha256(launch.binary).hexdigest() == binary["sha256"]
        assert len(launch.binary) == binary["size"]
        assert launch.target == expected["arch"]


def test_binaries_are_exactly_object_zero():
    for case, expected in CASES.items():
        got = af.binaries(text_of(case))
        assert {name: hashlib.sha256(data).hexdigest() for name, data in got.items()} == {
            name: b["sha256"] for name, b in expected["binaries"].items()
        }, case
        assert all(data[:4] == b"\x7fELF" for data in got.values())


@pytest.mark.parametrize("case", SINGLE_LAUNCH)
def test_kernel_metadata_matches_readelf(case):
    kernel = af.kernel_of(text_of(case))
    (launch,) = CASES[case]["launches"]
    assert kernel.name == launch["kernel"]
    meta = readelf_of(case, kernel.name)
    for key, value in READELF_BY_HAND[kernel.name].items():
        assert meta[key] == value, (case, key)  # the hand arithmetic's inputs
        assert kernel.meta(key) == value, (case, key)  # what amdocc read
    assert kernel.target_id.processor == CASES[case]["arch"]
    assert kernel.resources.vgprs == meta["vgpr_count"]
    assert kernel.resources.lds == meta["group_segment_fixed_size"]


# -- max_blocks_per_cu ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", SINGLE_LAUNCH)
def test_max_blocks_per_cu_by_hand(case):
    got = af.max_blocks_per_cu(text_of(case))
    assert int(got) == got.model == HIP_BY_HAND[case]
    if runtime() is None:  # no ROCm here: the static model answers, and says so
        assert got.source == "model"
    # FlyDSL's question is amdocc's: the same kernel, block and dynamic LDS.
    (launch,) = af.launches(text_of(case))
    direct = amdocc.max_blocks_per_cu(af.kernel_of(text_of(case)), launch.block_size, launch.dynamic_lds)
    assert int(direct) == int(got)


def test_max_blocks_per_cu_profiles_agree_here():
    # Both HIP eras give the same answers for these kernels (see the arithmetic above).
    for case, want in HIP_BY_HAND.items():
        assert int(af.max_blocks_per_cu(text_of(case), profile="2025")) == want


class RecordingHip:
    """Stands in for amdocc's HIP runtime: records what it is asked."""

    def __init__(self, blocks, capturing=False):
        self.blocks, self.capturing, self.asked = blocks, capturing, []

    def is_capturing(self, stream=None):
        return self.capturing

    def occupancy_of(self, image, kernel, block_size, dynamic_lds=0):
        self.asked.append((hashlib.sha256(image).hexdigest(), kernel, block_size, dynamic_lds))
        return self.blocks


def test_max_blocks_per_cu_asks_hip_what_flydsl_asks():
    # With a runtime, HIP gets what FlyDSL's mgpuModuleOccupancyMaxActiveBlocks gets: the
    # code-object bytes, the kernel name, the block size and the dynamic shared memory.
    hip = RecordingHip(blocks=2)
    got = af.max_blocks_per_cu(text_of("lds-gfx942"), hip=hip)
    assert (int(got), got.source) == (2, "hip")
    assert hip.asked == [(CASES["lds-gfx942"]["binaries"]["kernels"]["sha256"], "lds_0", 256, 28672)]
    # Inside graph capture HIP is not asked; the model answers.
    capturing = RecordingHip(blocks=99, capturing=True)
    got = af.max_blocks_per_cu(text_of("lds-gfx950"), stream=object(), hip=capturing)
    assert (int(got), got.source, capturing.asked) == (5, "model", [])


def test_another_device_is_refused_unless_asked_as_a_what_if():
    # gfx942 code cannot run on gfx950: refused, naming both processors. Asked
    # for as a what-if, it is evaluated with gfx950's 160 KiB of LDS: 163840 / 32768 = 5.
    with pytest.raises(UsageError, match="gfx942 code cannot run on gfx950"):
        af.max_blocks_per_cu(text_of("lds-gfx942"), device="gfx950")
    assert int(af.max_blocks_per_cu(text_of("lds-gfx942"), device="gfx950", what_if=True)) == 5


# -- what cannot be answered --------------------------------------------------------------------


def test_runtime_smem_raises_naming_the_operand():
    text = text_of("lds_smem_arg-gfx942")
    assert CASES["lds_smem_arg-gfx942"]["launches"][0]["dynamic_shared_memory_size"] == {
        "constant": None,
        "defined_by": "argument",
    }
    for call in (af.launches, af.max_blocks_per_cu):
        with pytest.raises(UsageError, match=r"dynamic_shared_memory_size %arg6 is an argument of @run_lds_smem_arg"):
            call(text)
    assert af.kernel_of(text).name == "lds_0"  # the kernel itself is still readable


def test_runtime_block_raises_naming_the_operand():
    text = text_of("lds_block_arg-gfx942")
    assert CASES["lds_block_arg-gfx942"]["launches"][0]["block"][0] == {"constant": None, "defined_by": "llvm.sext"}
    for call in (af.launches, af.max_blocks_per_cu):
        with pytest.raises(
            UsageError, match=r"block size x .*%3 is defined by llvm\.sext, not by llvm\.mlir\.constant"
        ):
            call(text)
    assert af.kernel_of(text).meta("vgpr_count") == 6


def test_two_launches():
    text = text_of("two_launches-gfx942")
    assert [(x.kernel, x.dynamic_lds) for x in af.launches(text)] == [("vadd_0", 0), ("lds_1", 28672)]
    with pytest.raises(UsageError, match="exactly one kernel launch, found 2"):
        af.max_blocks_per_cu(text)
    with pytest.raises(UsageError, match="launches 2 kernels"):
        af.kernel_of(text)
    assert af.kernel_of(text, "lds_1").meta("group_segment_fixed_size") == 4096
    assert af.kernel_of(text, "vadd_0").meta("sgpr_count") == 16
    with pytest.raises(UsageError, match=r"0 gpu\.binary ops hold a kernel named 'nope'"):
        af.kernel_of(text, "nope")


# -- hand-written variations of a real module ----------------------------------------------------


def binary_line(case: str) -> str:
    (line,) = [ln for ln in text_of(case).splitlines() if ln.lstrip().startswith("gpu.binary")]
    return line


def module(body: str, case: str = "lds-gfx942") -> str:
    return "module attributes {gpu.container_module} {\n" + binary_line(case) + "\n" + body + "}\n"


HOST = """  llvm.func @host(%arg0: !llvm.ptr) {{
{defs}
    {launch}
    llvm.return
  }}
"""
LAUNCH = (
    "gpu.launch_func <%arg0 : !llvm.ptr> @kernels::@lds_0 blocks in (%g, %one, %one) "
    "threads in (%bx, %by, %one) : i64 dynamic_shared_memory_size %smem"
)


def host(defs: str, launch: str = LAUNCH) -> str:
    return HOST.format(defs=defs, launch=launch)


ARITH_DEFS = """    %g = arith.constant 4 : i64
    %one = arith.constant 1 : i64
    %bx = arith.constant 64 : i64
    %by = arith.constant 2 : i64
    %smem = arith.constant 28672 : i32"""


def test_arith_constants_and_a_2d_block():
    (launch,) = af.launches(module(host(ARITH_DEFS)))
    assert (launch.block, launch.block_size, launch.dynamic_lds, launch.grid) == ((64, 2, 1), 128, 28672, (4, 1, 1))
    # 128 threads: ALU threads 2048 / 128 = 16 blocks, LDS 65536 / 32768 = 2.
    assert int(af.max_blocks_per_cu(module(host(ARITH_DEFS)))) == 2


def test_generic_form_constants():
    defs = ARITH_DEFS.replace(
        "%smem = arith.constant 28672 : i32", '%smem = "llvm.mlir.constant"() <{value = 28672 : i32}> : () -> i32'
    )
    assert af.launches(module(host(defs)))[0].dynamic_lds == 28672


def test_ssa_names_are_scoped_to_their_function():
    other = host(ARITH_DEFS.replace("28672", "999"), LAUNCH).replace("@host", "@other")
    text = module(other + host(ARITH_DEFS))
    assert [x.dynamic_lds for x in af.launches(text)] == [999, 28672]


def test_definition_after_use_in_the_same_function():
    # Blocks need not be printed in dominance order; the whole function is read first.
    text = module(host("", LAUNCH).replace("    llvm.return", ARITH_DEFS + "\n    llvm.return"))
    assert af.launches(text)[0].dynamic_lds == 28672


def test_absent_smem_is_zero_and_duplicate_launches_count_once():
    launch = LAUNCH.replace(" dynamic_shared_memory_size %smem", "")
    text = module(host(ARITH_DEFS, launch + "\n    " + launch))
    assert [x.dynamic_lds for x in af.launches(text)] == [0, 0]
    # FlyDSL counts distinct (kernel, block, smem) launches; 128 threads, LDS 4096: 65536/4096 = 16.
    assert int(af.max_blocks_per_cu(text)) == 16


def test_async_token_launch_and_quoted_symbols():
    launch = (
        '%t = gpu.launch_func async [%dep] <%arg0 : !llvm.ptr> @"kernels"::@"lds_0" blocks in (%g, %one, %one) '
        "threads in (%bx, %by, %one) : i64 dynamic_shared_memory_size %smem"
    )
    text = module(host(ARITH_DEFS + "\n    %dep = gpu.wait async", launch))
    assert af.launches(text)[0].kernel == "lds_0"


@pytest.mark.parametrize(
    "defs, pattern",
    [
        (
            ARITH_DEFS.replace("%by = arith.constant 2 : i64", "%by = llvm.load %arg0 : !llvm.ptr -> i64"),
            r"block size y .*%by is defined by llvm\.load",
        ),
        (ARITH_DEFS.replace("    %bx = arith.constant 64 : i64\n", ""), r"block size x .*%bx is not defined by any op"),
        (
            ARITH_DEFS.replace("%smem = arith.constant 28672 : i32", "%smem = arith.constant -1 : i32"),
            r"dynamic_shared_memory_size is -1",
        ),
        (ARITH_DEFS.replace("%bx = arith.constant 64 : i64", "%bx = arith.constant 0 : i64"), r"block size x is 0"),
        (ARITH_DEFS + "\n    %smem = arith.constant 1 : i32", r"%smem is defined more than once"),
        (
            ARITH_DEFS.replace("%smem = arith.constant 28672 : i32", "%smem:2 = call_two_results"),
            r"%smem is a result of the multi-result op",
        ),
    ],
)
def test_non_constant_sizes_raise(defs, pattern):
    with pytest.raises(UsageError, match=pattern):
        af.launches(module(host(defs)))


def test_structural_errors():
    with pytest.raises(UsageError, match=r"no gpu\.binary @elsewhere"):
        af.launches(module(host(ARITH_DEFS, LAUNCH.replace("@kernels::", "@elsewhere::"))))
    generic = '    "gpu.launch_func"(%g) <{kernel = @kernels::@lds_0}> : (i64) -> ()'
    with pytest.raises(UsageError, match="generic form"):
        af.launches(module(host(ARITH_DEFS, generic)))
    with pytest.raises(UsageError, match=r"cannot read gpu\.launch_func"):
        af.launches(module(host(ARITH_DEFS, LAUNCH.replace("threads in", "threads at"))))
    offload = binary_line("lds-gfx942").replace(', bin = "', ', offload = "')
    text = "module {\n" + offload + "\n" + host(ARITH_DEFS) + "}\n"
    with pytest.raises(UsageError, match="is LLVM IR"):
        af.launches(text)
    broken = binary_line("lds-gfx942")[:-2]  # drop the closing '>]'
    with pytest.raises(UsageError, match=r"never closed|unterminated"):
        af.launches("module {\n" + broken + "\n}\n")


def test_no_launch_kernel_of_takes_the_only_kernel():
    text = module("")
    assert af.launches(text) == []
    assert af.kernel_of(text).name == "lds_0"
    with pytest.raises(UsageError, match="exactly one kernel launch, found 0"):
        af.max_blocks_per_cu(text)


# -- MLIR string literals ------------------------------------------------------------------------


def mlir_escape(data: bytes) -> str:
    """What MLIR's printer (llvm::printEscapedString) writes for these bytes."""
    out = []
    for byte in data:
        if byte == 0x5C:
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and byte != 0x22:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def test_string_literal_decoding():
    every_byte = bytes(range(256)) * 2
    assert af._decode_string(mlir_escape(every_byte)) == every_byte
    # Escapes the lexer also reads, lower-case hex, and literal UTF-8.
    assert af._decode_string(r"a\"b\'c\nd\te\7f\7F\\41") == b"a\"b'c\nd\te\x7f\x7f\\41"
    assert af._decode_string("é") == "é".encode()
    for bad in ("\\q", "\\", "\\4", "\\0z", "\\r"):
        with pytest.raises(UsageError, match="invalid escape"):
            af._decode_string(bad)


def test_object_zero_of_several():
    # Two objects in one gpu.binary: the launch uses object #0, as FlyDSL's JIT loads it.
    line950 = binary_line("lds-gfx950")
    obj950 = line950[line950.index("[") + 1 : line950.rindex("]")]
    line942 = binary_line("lds-gfx942")
    both = line942[: line942.rindex("]")] + ", " + obj950 + "]"
    text = "module {\n" + both + "\n" + host(ARITH_DEFS) + "}\n"
    (launch,) = af.launches(text)
    assert launch.target == "gfx942"
    assert hashlib.sha256(launch.binary).hexdigest() == CASES["lds-gfx942"]["binaries"]["kernels"]["sha256"]


# -- what counts as a compiled FlyDSL object -----------------------------------------------------


def test_accepts_compiled_objects():
    text = text_of("lds-gfx942")
    artifact = SimpleNamespace(ir=text)  # CompiledArtifact: public .ir
    function = SimpleNamespace(_keepalive=artifact)  # CompiledFunction: keeps the artifact
    old_artifact = SimpleNamespace(_ir_text=text)
    for obj in (artifact, function, old_artifact, text.encode()):
        assert af.launches(obj) == af.launches(text)
        assert int(af.max_blocks_per_cu(obj)) == 2
    with pytest.raises(UsageError, match="cannot get FlyDSL's final MLIR from a SimpleNamespace"):
        af.launches(SimpleNamespace(ir=None))
    with pytest.raises(UsageError, match="ELF file, not MLIR"):
        af.launches(af.launches(text)[0].binary)


def test_import_is_light():
    code = (
        "import sys, amdocc.integrations.flydsl; "
        "assert not {'torch', 'flydsl', 'numpy'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- live: FlyDSL itself, offline ----------------------------------------------------------------


@pytest.mark.slow  # about 3 s: importing FlyDSL and torch takes most of it
def test_live_offline_flydsl_compile(tmp_path, monkeypatch):
    """Compile the fixture kernels with FlyDSL now (CPU tensors, no GPU) and check the adapter
    against FlyDSL's own MLIR bindings; the answers by hand hold when FlyDSL is the fixture's."""
    needs("torch", "FlyDSL needs the CPU build of torch to compile")
    needs("flydsl", "the live test compiles with it (pip install flydsl torch numpy)")
    if not (shutil.which("ld.lld-22") or shutil.which("ld.lld")):
        skip_unless_required("FlyDSL links with ld.lld: install lld-22")
    import flydsl

    from fixtures import flydsl_cases as mf  # tools/ is on sys.path (conftest)

    start = time.perf_counter()
    for case in ("lds-gfx942", "vadd-gfx950", "lds_smem_arg-gfx942"):
        arch = CASES[case]["arch"]
        for key, value in mf.offline_env(tmp_path / "fakerocm", arch).items():
            monkeypatch.setenv(key, value)
        compiled = mf.compile_case(case)
        text = compiled._keepalive.ir
        seen = mf.oracle(text)
        if case == "lds_smem_arg-gfx942":
            with pytest.raises(UsageError, match=r"dynamic_shared_memory_size %arg[0-9]+ is an argument"):
                af.max_blocks_per_cu(compiled)
            continue
        (launch,) = af.launches(compiled)
        (want,) = seen["launches"]
        assert (launch.kernel, list(launch.block)) == (want["kernel"], [op["constant"] for op in want["block"]])
        smem = want["dynamic_shared_memory_size"]
        assert launch.dynamic_lds == (0 if smem is None else smem["constant"])
        assert launch.binary == seen["binaries"][launch.module]["object0"]
        assert launch.target == arch
        got = af.max_blocks_per_cu(compiled)
        if runtime() is None:
            assert got.source == "model"
            with pytest.raises(OSError, match="libamdhip64"):  # FlyDSL's own query dlopens HIP
                compiled.max_blocks_per_cu()
        if flydsl.__version__ == MANIFEST["flydsl"]:
            assert hashlib.sha256(launch.binary).hexdigest() == CASES[case]["binaries"]["kernels"]["sha256"]
            assert int(got) == HIP_BY_HAND[case]
    print(f"live FlyDSL {flydsl.__version__}: 3 compiles in {time.perf_counter() - start:.2f} s")
    if flydsl.__version__ != MANIFEST["flydsl"]:
        skip_unless_required(
            f"FlyDSL {flydsl.__version__} agreed with its own MLIR, but the answers by hand are "
            f"for the fixture's FlyDSL {MANIFEST['flydsl']}: not checked"
        )
