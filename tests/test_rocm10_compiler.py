"""Facts by compiler: the llvm model's rule set is chosen by the commit the code
object's .comment names, and ROCm 10.0's compiler is an oracle of its own.

Oracles: bitsandbytes 0.50.2's six ROCm libraries (each built by one ROCm release's compiler; their
.comment read with llvm-readelf-22), the libLLVM.so of rocm-bindings-compiler 10.0.0.0.1.2 (ROCm 10.0's
backend: the commit string it holds, and the ``; Occupancy:`` it prints through tools/rocm_llc.py),
and the forwarding libraries tools/rocm_sysdeps builds for it (checked against the system zlib).
ROCm 10.1's compiler line is the one jax-rocm10-pjrt 0.12.0's gfx1250 code objects carry
(docs/compiler-rules.md).
"""

from __future__ import annotations

import ctypes
import json
import re
import subprocess
import zlib

import pytest

import amdocc
import rocm_llc
from amdocc.codeobject.producer import parse_producer
from amdocc.models import llvm_rules
from amdocc.targets import get_target
from conftest import FIXTURES, REQUIRE, TESTS

pytestmark = pytest.mark.llvm22  # llvm-readelf-22 reads the oracles' .comment; ld.lld-22 links ROCm 10.0's objects

ROCM101 = "AMD clang version 24.0.0git (ROCm/llvm-project d6f6cb691863)"


def _missing(reason):
    if REQUIRE:
        pytest.fail(reason)
    pytest.skip(reason)


def _backend_or_skip():
    path = rocm_llc.library_path()
    if path is None or not (rocm_llc.sysdeps_dir() / "librocm_sysdeps_z.so.1").exists():
        _missing("rocm-bindings-compiler or the sysdeps libraries are missing (run .ci/setup-tests.sh)")
    return path


def _comment_lines(data: bytes, tmp_path) -> list[str]:
    path = tmp_path / "co.elf"
    path.write_bytes(data)
    out = subprocess.run(["llvm-readelf-22", "-p", ".comment", str(path)], capture_output=True, text=True, check=True)
    return re.findall(r"^\s*\[\s*[0-9a-f]+\]\s(.*)$", out.stdout, re.M)


@pytest.mark.bitsandbytes
def test_the_stamped_producer_is_rocm10s_own_line(bitsandbytes_rocm, tmp_path):
    """tools/rocm_llc.py stamps the exact clang line of every code object in bitsandbytes' ROCm 10.0
    build (libbitsandbytes_rocm715.so: HIP 7.15 is ROCm 10.0's), as llvm-readelf-22 reads it."""
    lines = set()
    for co in amdocc.load(bitsandbytes_rocm / "libbitsandbytes_rocm715.so"):
        lines |= {line for line in _comment_lines(co.data, tmp_path) if "clang version" in line}
    assert lines == {rocm_llc.PRODUCER}
    assert rocm_llc.COMMIT in rocm_llc.PRODUCER


@pytest.mark.bitsandbytes
def test_each_rocm_compiler_of_bitsandbytes_gets_its_rule_set_and_says_how(bitsandbytes_rocm, tmp_path):
    """ROCm 10.0's commit is in the table (no warning); the five older compilers are not, so each
    gets the rule set its version implies, with a warning that names its commit."""
    seen = {}
    for lib in sorted(bitsandbytes_rocm.glob("libbitsandbytes_rocm*.so")):
        co = next(co for co in amdocc.load(lib) if co.processor == "gfx942")
        (line,) = [x for x in _comment_lines(co.data, tmp_path) if "clang version" in x]
        k = co.kernels[0]
        assert k.producer.text == line
        occ = amdocc.occupancy(k, model="llvm")
        seen[lib.name] = occ.profile
        commit = re.search(r"\b([0-9a-f]{40})\b", line).group(1)  # every line names a full commit
        if lib.name == "libbitsandbytes_rocm715.so":
            assert occ.profile == "rocm-10.0" and not occ.warnings
            assert "8f497e0992fb" in occ.details["llvm_rules"]["chosen_by"]
        else:
            assert any(f"commit {commit[:12]} is not among the compilers" in w for w in occ.warnings), occ.warnings
    assert seen["libbitsandbytes_rocm715.so"] == "rocm-10.0"
    assert seen["libbitsandbytes_rocm714.so"] == "llvm-22"  # 23.0.0git, a snapshot: LLVM 22's rules (gfx942)


def test_rocm_10_1s_compiler_is_assumed_from_its_version_with_a_warning():
    producer = parse_producer(ROCM101)
    assert producer is not None and producer.commit == "d6f6cb691863"
    assert llvm_rules.compiler_of(producer.commit) is None
    choice = llvm_rules.rules_for_producer(producer, True, get_target("gfx1250"))
    # 24.0.0git: a snapshot of the cycle in which llvm-24's change landed, which is the same as
    # llvm-23's rules on gfx1250 (llvm PR #222615 moved gfx13 only)
    assert choice.rules.name == "llvm-23"
    (warning,) = choice.warnings
    assert "commit d6f6cb691863 is not among the compilers" in warning
    assert "its version 24.0.0git implies (llvm-23) are assumed" in warning


def test_commits_match_by_prefix_of_at_least_twelve_digits():
    assert llvm_rules.compiler_of("8f497e0992fb").rules.name == "rocm-10.0"
    assert llvm_rules.compiler_of("8f497e0992fb7513f7f78a6f6b6f1056c375e961").rules.name == "rocm-10.0"
    assert llvm_rules.compiler_of("8f497e0992f") is None  # 11 digits name nothing
    assert llvm_rules.compiler_of("8f497e0992fc") is None
    assert llvm_rules.compiler_of(None) is None


def test_a_commit_row_must_name_a_rule_set(monkeypatch):
    from amdocc import tabledata

    raw = tabledata.load_table("llvm_rules.toml")
    broken = {**raw, "compilers": {"0123456789ab": {"compiler": "x", "rules": "llvm-99", "oracle": "", "source": ""}}}
    monkeypatch.setattr(llvm_rules, "load_table", lambda name: broken)
    llvm_rules.known_compilers.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"\[compilers.0123456789ab\] column 'rules': 'llvm-99' is not one of llvm-22, "
        ):
            llvm_rules.known_compilers()
    finally:
        monkeypatch.undo()
        llvm_rules.known_compilers.cache_clear()


def test_no_llvm_version_chooses_a_fork_rule_set():
    assert "rocm-10.0" not in {r.name for r in llvm_rules.version_sets()}
    assert llvm_rules.parse_version("23.0.0git").rules.name == "llvm-22"
    assert llvm_rules.parse_version("rocm-10.0").rules.name == "rocm-10.0"  # by name it can be asked for
    assert llvm_rules.parse_version("main").rules.name == llvm_rules.version_sets()[-1].name


def test_the_rule_set_changes_only_gfx1310_among_rocm10s_processors():
    """rocm-10.0 is llvm-22's rules everywhere but gfx1310 (the differential confirms it kernel by kernel)."""
    rocm10, llvm22 = llvm_rules.rules_named("rocm-10.0"), llvm_rules.rules_named("llvm-22")
    assert [p for p, _ in rocm10.overrides] == ["gfx1310"]
    assert (rocm10.sgpr_occupancy, rocm10.lds_granule_rounding) == (llvm22.sgpr_occupancy, llvm22.lds_granule_rounding)
    view = rocm10.target_view(get_target("gfx1310"))
    assert (view.vgprs, view.vgpr_alloc_granule) == ({32: 1536, 64: 768}, {32: 24, 64: 12})
    assert (view.lds_per_workgroup, view.lds_per_cu, view.lds_per_wgp, view.mode_recorded) == (
        65536,
        65536,
        131072,
        False,
    )


def test_rocm10s_library_is_the_commit_the_table_names():
    path = _backend_or_skip()
    assert rocm_llc.COMMIT.encode() in path.read_bytes()
    assert llvm_rules.compiler_of(rocm_llc.COMMIT).rules.name == "rocm-10.0"


def test_the_sysdeps_libraries_forward_to_the_system_zlib_under_rocms_symbol_version():
    _backend_or_skip()
    for name, symbol in (("z", "crc32"), ("zstd", "ZSTD_isError")):
        lib = rocm_llc.sysdeps_dir() / f"librocm_sysdeps_{name}.so.1"
        syms = subprocess.run(["llvm-readelf-22", "--dyn-syms", str(lib)], capture_output=True, text=True).stdout
        assert f"{symbol}@@AMDROCM_SYSDEPS_1.0" in syms, syms
    z = ctypes.CDLL(str(rocm_llc.sysdeps_dir() / "librocm_sysdeps_z.so.1"))
    z.crc32.restype, z.crc32.argtypes = ctypes.c_ulong, [ctypes.c_ulong, ctypes.c_char_p, ctypes.c_uint]
    data = b"amdocc forwards to the system zlib"
    assert z.crc32(0, data, len(data)) == zlib.crc32(data)


def test_rocm10_prints_gfx1310s_occupancy_from_gfx12s_register_file(tmp_path):
    """The measurements the rocm-10.0 row cites, asked of the compiler again, and of amdocc reading
    the object the compiler linked (the rule set chosen from its stamped .comment)."""
    _backend_or_skip()
    import kernelgen

    cases = {  # name: (spec fields, ROCm 10.0's Occupancy as measured for tables/llvm_rules.toml)
        "v129": (dict(vgprs=129), 10),  # 1536 / alignTo(129, 24) = 10 (LLVM main: 1024/16 -> 7)
        # 3 workgroups of 40000 B and 8 waves in a 128 KiB WGP pool: 24 waves on 4 SIMDs (LLVM main's
        # 192 KiB pool holds 4: 8)
        "lds40k": (dict(lds=40000), 6),
    }
    specs = [kernelgen.KernelSpec(n, "gfx1310", **fields) for n, (fields, _) in cases.items()]
    res = kernelgen.compile_batch(specs, tmp_path, compiler=kernelgen.ROCM10)
    assert not res.errors and res.hsaco is not None
    kernels = {k.name: k for co in amdocc.load(res.hsaco) for k in co.kernels}
    for name, (_, want) in cases.items():
        assert res.infos[name]["Occupancy"] == want
        occ = amdocc.occupancy(kernels[name], model="llvm")
        assert occ.profile == "rocm-10.0" and occ.waves_per_simd == want
    too_big = kernelgen.KernelSpec("big", "gfx1310", lds=65540)
    assert (
        "exceeds limit (65536)"
        in kernelgen.compile_batch([too_big], tmp_path / "big", compiler=kernelgen.ROCM10).errors["big"]
    )


def test_the_fixture_family_is_rocm10s(tmp_path):
    """The committed invisible-mode fixtures came from this compiler: rebuilt, the bytes are the same."""
    _backend_or_skip()
    import kernelgen
    from fixtures import rocm10_mode

    spec = rocm10_mode.specs("gfx1310", "cumode")
    res = kernelgen.compile_batch(spec, tmp_path, compiler=kernelgen.ROCM10)
    assert res.hsaco.read_bytes() == (FIXTURES / "rocm10_mode" / "gfx1310_cumode.hsaco").read_bytes()


def test_the_gfx1310_row_of_rocm10_is_what_its_compiler_measures():
    """tests/data/rocm10_target_probe.json (tools/probe_targets.py --compiler rocm-10.0 gfx1310): the
    probe fits the VGPR file and granules and the LDS limit and pool from the compiler's own answers.
    It sees the default build, which computes in WGP mode (4 EUs) while writing no mode key."""
    probe = json.loads((TESTS / "data" / "rocm10_target_probe.json").read_text())["gfx1310"]
    view = llvm_rules.rules_named("rocm-10.0").target_view(get_target("gfx1310"))
    for wave in (32, 64):
        fitted = probe["vgpr"][str(wave)]
        assert (view.vgprs[wave], view.vgpr_alloc_granule[wave]) == (fitted["total"], fitted["alloc_granule"])
    (mode,) = probe["modes"]  # the probe reads the (absent) metadata key: one mode, whatever it is called
    assert probe["lds"]["eus_per_cu"][mode] == view.simds(True)  # the default build: WGP mode's SIMD count
    assert probe["lds"]["max_per_workgroup"][mode] == view.lds_per_workgroup == view.lds_per_workgroup_wgp
    assert probe["lds"]["pool"][mode] == view.lds_per_wgp == 2 * view.lds_per_workgroup
    assert probe["lds"]["rounded_to_granule"] is False  # no llvm PR #205637
