"""The asm-prefill gate's checks one by one: each check's rule name and the words of its detail,
the manifest's tile sizes, and the defaults of decide/find_asm_kernel.

Oracles: FlashInfer ROCm PR #365's rules (docs/consumers.md §2; tables/prefill_gate.toml
cites them: gfx950 threshold 2048, none for gfx942, FLASHINFER_AITER_ASM_PREFILL=0 pins CK Tile,
asm v3 takes bf16 with head dims 128/128), AITER's published codegen.py (gfx950 hd128 bf16:
ts_qo 256, ts_kv 64), the manifests and files each test writes, and the llc-22-built fixtures
with LLVM's output stored beside them (kernel names from llvm-readelf-22 --notes, gfx942's
65536 B LDS limit from llc-22's own refusal, the bundle's entries from clang-offload-bundler-22).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from amdocc.policy.prefill_gate import (
    AsmKernel,
    Check,
    NotFound,
    _codegen_rows,
    decide,
    find_asm_kernel,
    validate_asm_kernel,
)
from conftest import FIXTURES
from test_check import LDS, LIB1, C, kernels_of, llc_lds_limit

GATE_ENV = "FLASHINFER_AITER_ASM_PREFILL"
BUNDLE = FIXTURES / "containers" / "bundle_5arch.hipfb"


def check(decision, rule):
    (c,) = [c for c in decision.checks if c.rule == rule]
    return c


# --------------------------------------------------------------------------- decide's own checks


def test_the_defaults_are_the_one_shape_asm_v3_takes():
    # No dtype or head dims given: bf16 with 128/128, no soft cap, no window (PR #365's pre-filter).
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={})
    assert check(d, "eligible").ok and check(d, "eligible").detail == "bf16, head dims 128/128, no soft cap, no window"
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, dtype="BF16")
    assert not check(d, "eligible").ok and check(d, "eligible").detail == "dtype BF16 (asm v3 takes bf16 only)"


def test_what_asm_v3_takes_is_read_from_the_table_rows(monkeypatch):
    # tables/prefill_gate.toml [eligible] holds PR #365's pre-filter; a second dtype and head-dim
    # pair written there is what decide then takes, in the same words.
    from amdocc import caches, tabledata

    real = tabledata.read_toml

    def read(path):
        raw = real(path)
        if path.name == "prefill_gate.toml":
            raw["eligible"].update(dtypes=["bf16", "fp16"], head_dims=[[128, 128], [192, 128]])
        return raw

    monkeypatch.setattr(tabledata, "read_toml", read)
    caches.clear_all()
    try:
        d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, dtype="fp16", head_dim_qk=192)
        assert check(d, "eligible") == Check("eligible", True, "fp16, head dims 192/128, no soft cap, no window")
        d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, dtype="fp8", head_dim_qk=64, head_dim_v=64)
        assert check(d, "eligible").detail == (
            "dtype fp8 (asm v3 takes bf16 or fp16 only); head dims 64/64 (asm v3 takes 128/128, 192/128)"
        )
    finally:
        monkeypatch.undo()
        caches.clear_all()


def test_a_processor_without_a_threshold_says_it_never_routes_to_asm():
    d = decide(arch="gfx942:sramecc+:xnack-", qo_len=1 << 20, kv_len=4096, env={})
    c = check(d, "threshold")
    assert (c.ok, c.detail) == (False, "gfx942 never routes to asm (no qo_len threshold)")
    assert d.reasons[0] == "threshold: gfx942 never routes to asm (no qo_len threshold)"
    assert d.as_dict()["arch"] == "gfx942" and d.as_dict()["kernel"] is None  # no AITER_ASM_DIR: no lookup
    assert (d.as_dict()["route"], d.as_dict()["blocks_per_cu"]) == ("ck_tile", None)


@pytest.mark.parametrize(
    "env,ok,detail",
    [
        ({}, True, f"{GATE_ENV} is unset"),
        ({GATE_ENV: "1"}, True, f"{GATE_ENV} is '1'"),
        ({GATE_ENV: ""}, True, f"{GATE_ENV} is ''"),
        ({GATE_ENV: "0"}, False, f"{GATE_ENV} is '0' (pins CK Tile)"),
    ],
)
def test_the_kill_switch_detail_says_what_the_variable_holds(env, ok, detail):
    c = check(decide(arch="gfx950", qo_len=4096, kv_len=4096, env=env), "kill switch")
    assert (c.ok, c.detail) == (ok, detail)


def test_the_other_checks_say_what_they_saw():
    d = decide(arch="gfx950", qo_len=4096, kv_len=100, env={}, capturing=True, window_left=99, logits_soft_cap=30.0)
    assert [(c.rule, c.ok) for c in d.checks] == [
        ("threshold", True),
        ("kill switch", True),
        ("graph capture", False),
        ("eligible", False),
        ("AITER_ASM_DIR", False),
    ]
    assert check(d, "threshold").detail == "qo_len 4096 against gfx950's threshold 2048"
    assert check(d, "graph capture").detail == "the stream is capturing: AITER would load a module mid-capture"
    assert check(d, "eligible").detail == "logits soft cap 30.0; sliding window 99 (narrower than kv_len 100)"
    assert check(d, "AITER_ASM_DIR").detail == "AITER_ASM_DIR=''"
    d = decide(arch="gfx950", qo_len=4096, kv_len=100, env={"AITER_ASM_DIR": "/nowhere"}, head_dim_qk=192)
    assert check(d, "graph capture").detail == "not capturing"
    assert check(d, "eligible").detail == "head dims 192/128 (asm v3 takes 128/128)"
    assert check(d, "AITER_ASM_DIR") == Check("AITER_ASM_DIR", True, "AITER_ASM_DIR='/nowhere'")
    assert d.route == "ck_tile" and d.kernel is None  # an ineligible shape looks for no kernel


# --------------------------------------------------------------------------- the manifest


def selector(hdim, mask, bf16_cvt=None):
    tail = "" if bf16_cvt is None else f", {bf16_cvt}"
    return f"fmha_fwd_kernel_selector<FmhaFwdBf16, {hdim}, {mask}, false, false, 0, GPUArch::gfx950{tail}>"


def codegen(tmp_path, *rows):
    """A codegen.py of (hdim, mask, name, co, ts_qo, ts_kv) rows, as older AITER wheels write it."""
    folder = tmp_path / "gfx950" / "fmha_v3_fwd"
    folder.mkdir(parents=True)
    lines = []
    for hdim, mask, name, co, ts_qo, ts_kv in rows:
        s = selector(hdim, mask)
        lines += [
            f'template<> struct FmhaFwdV3Name<{s}> {{ static constexpr const char * fwd_v3_name = "{name}"; }};',
            f'template<> struct FmhaFwdV3Buf<{s}> {{ static constexpr const char * fwd_v3_buf = "{co}"; }};',
            f"template<> struct FmhaFwdV3Ts<{s}> "
            f"{{ static constexpr int ts_qo = {ts_qo}; static constexpr int ts_kv = {ts_kv}; }};",
        ]
    (folder / "codegen.py").write_text("\n".join(lines) + "\n")
    return folder


def test_codegen_tile_sizes_are_read_from_the_ts_entry(tmp_path):
    folder = codegen(tmp_path, (128, 0, "fwd_a", "a.co", 128, 32), (128, 1, "fwd_b", "b.co", 64, 16))
    k = find_asm_kernel(tmp_path, "gfx950")
    assert k == AsmKernel("_ZN5aiter5fwd_aE", "a.co", folder / "a.co", 128, 32)
    k = find_asm_kernel(tmp_path, "gfx950", causal=True)
    assert (k.knl_name, k.ts_qo, k.ts_kv) == ("_ZN5aiter5fwd_bE", 64, 16)
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, asm_dir=str(tmp_path))
    assert d.as_dict()["kernel"] == {
        "knl_name": "_ZN5aiter5fwd_aE",
        "co_name": "a.co",
        "path": str(folder / "a.co"),
        "ts_qo": 128,
        "ts_kv": 32,
    }
    assert d.reasons == [f"kernel file: {folder / 'a.co'} does not exist"]


@pytest.mark.corpus
def test_aiters_own_codegen_gives_the_hd128_tiles(aiter_hsa):
    # hsa/gfx950/fmha_v3_fwd/codegen.py: FmhaFwdV3Ts<... FmhaFwdBf16, 128, 0 ...> { ts_qo = 256; ts_kv = 64; }
    text = (aiter_hsa / "gfx950" / "fmha_v3_fwd" / "codegen.py").read_text()
    entry = "template<> struct FmhaFwdV3Ts<fmha_fwd_kernel_selector<FmhaFwdBf16, 128,"
    line = next(x for x in text.splitlines() if x.startswith(entry))
    assert re.search(r"ts_qo = 256; .*ts_kv = 64;", line)
    k = find_asm_kernel(aiter_hsa, "gfx950")
    assert (k.knl_name, k.co_name, k.ts_qo, k.ts_kv) == (
        "_ZN5aiter19fmha_fwd_hd128_bf16E",
        "fwd_hd128_bf16.co",
        256,
        64,
    )


@pytest.mark.parametrize(
    "removed,entry,pattern",
    [
        ('"fwd_a"', "Name", '"'),
        ('"a.co"', "Buf", '"'),
        ("static constexpr int ts_qo = 128;", "Ts", "ts_qo"),
        ("static constexpr int ts_kv = 32;", "Ts", "ts_kv"),
    ],
)
def test_an_entry_without_its_value_is_a_reason_naming_the_entry(tmp_path, removed, entry, pattern):
    folder = codegen(tmp_path, (128, 0, "fwd_a", "a.co", 128, 32))
    text = (folder / "codegen.py").read_text().replace(removed, "", 1)
    (folder / "codegen.py").write_text(text)
    with pytest.raises(
        NotFound, match=rf"^the codegen\.py manifest's FmhaFwdV3{entry} entry \{{.*\}} does not match .*{pattern}"
    ):
        find_asm_kernel(tmp_path, "gfx950")


# --------------------------------------------------------------------------- validating a .co


def asm(name, path):
    return AsmKernel(name, path.name, path)


def test_a_missing_file_and_an_unparsable_one_are_kernel_file_failures(tmp_path):
    missing = tmp_path / "gone.co"
    assert validate_asm_kernel(asm("k", missing), "gfx942") == (
        [Check("kernel file", False, f"{missing} does not exist")],
        None,
    )
    junk = tmp_path / "junk.co"
    junk.write_bytes(b"\x7fELF" + b"\0" * 12)
    (c,), blocks = validate_asm_kernel(asm("k", junk), "gfx942")
    assert (c.rule, c.ok, blocks) == ("kernel file", False, None)
    assert c.detail.startswith("junk.co does not parse: ")


@pytest.mark.llvm22
def test_a_file_of_several_code_objects_is_refused_with_their_count(tmp_path):
    listed = subprocess.run(
        ["clang-offload-bundler-22", "--list", "--type=o", f"--input={BUNDLE}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    n = sum(1 for entry in listed if "amdgcn-amd-amdhsa" in entry)
    assert n == 5
    path = tmp_path / "fwd.co"
    shutil.copyfile(BUNDLE, path)
    (c,), blocks = validate_asm_kernel(asm("k", path), "gfx942")
    assert (c.rule, c.ok, c.detail, blocks) == ("kernel file", False, f"fwd.co holds {n} code objects, not one", None)


def test_a_symbol_the_file_lacks_names_what_it_has():
    checks, blocks = validate_asm_kernel(asm("_ZN5aiter4nopeE", LIB1), "gfx942")
    assert [(c.rule, c.ok) for c in checks] == [("kernel file", True), ("target", True), ("symbol", False)]
    names = ", ".join(sorted(kernels_of(LIB1)))
    assert checks[2].detail == f"_ZN5aiter4nopeE not found in {LIB1.name} (it has {names})"
    # llvm-readelf-22's amdhsa.target names the processor; EI_ABIVERSION (byte 8) is the code object
    # version less 2 (ELFABIVERSION_AMDGPU_HSA_V5 = 3).
    target = re.search(r"amdhsa.target:\s+amdgcn-amd-amdhsa--(\S+)", (C / f"{LIB1.name}.readelf.txt").read_text())
    version = LIB1.read_bytes()[8] + 2
    assert checks[0].detail == f"{LIB1.name} parses ({target.group(1)}, code object v{version})"
    assert blocks is None


def test_a_code_object_for_another_processor_is_a_target_failure():
    checks, blocks = validate_asm_kernel(asm("k_clean", LIB1), "gfx950")
    assert [(c.rule, c.ok) for c in checks] == [("kernel file", True), ("target", False), ("symbol", True)]
    assert checks[1].detail.endswith("the device is gfx950 — HIP would refuse to load it")
    assert checks[2].detail == f"k_clean found in {LIB1.name}" and blocks is None


@pytest.mark.parametrize("name,fits", [("k_lds_at_limit", True), ("k_lds_over", False)])
def test_static_lds_is_held_against_the_devices_limit_inclusively(name, fits):
    limit, lds = llc_lds_limit(), kernels_of(LDS)[name][".group_segment_fixed_size"]
    checks, _ = validate_asm_kernel(asm(name, LDS), "gfx942", block_size=64)
    assert [c.rule for c in checks] == ["kernel file", "target", "symbol", "lds", "occupancy"]
    c = checks[3]
    assert (c.ok, c.detail) == (fits, f"static LDS {lds} B against the device's {limit} B per workgroup")
    # A smaller device LDS given by the caller wins over the processor's.
    assert not validate_asm_kernel(asm(name, LDS), "gfx942", lds_bytes=lds - 1, block_size=64)[0][3].ok


def test_the_block_size_comes_from_reqd_workgroup_size_else_it_is_unknown():
    reqd = kernels_of(LIB1)["k_reqd"][".reqd_workgroup_size"]
    block = reqd[0] * reqd[1] * reqd[2]
    checks, blocks = validate_asm_kernel(asm("k_reqd", LIB1), "gfx942")
    assert checks[-1].rule == "occupancy" and checks[-1].ok and blocks >= 1
    assert f"block(s) of {block} threads per CU" in checks[-1].detail
    checks, blocks = validate_asm_kernel(asm("k_clean", LIB1), "gfx942")  # no .reqd_workgroup_size
    assert (checks[-1].rule, checks[-1].ok, checks[-1].detail, blocks) == (
        "occupancy",
        False,
        "no block size: none given and no .reqd_workgroup_size",
        None,
    )


def test_a_block_that_fits_nowhere_is_an_occupancy_failure():
    # k_launch_miss at 1024 threads fits no workgroup on gfx942 (test_check: 3 waves per SIMD, 4 needed).
    checks, blocks = validate_asm_kernel(asm("k_launch_miss", LIB1), "gfx942", block_size=1024)
    assert (checks[-1].rule, checks[-1].ok, blocks) == ("occupancy", False, 0)
    assert checks[-1].detail == "0 block(s) of 1024 threads per CU (limited by vgpr)"


# --------------------------------------------------------------------------- AITER's own manifests


@pytest.mark.corpus
@pytest.mark.parametrize(
    "causal,group,cvt,name",
    [
        # hsa/gfx942/fmha_v3_fwd/codegen.py: BF16Cvt 0 rtne, 1 rtna, 2 rtz; kIsGroupMode_ true adds _group.
        (False, False, 0, "fmha_fwd_hd128_bf16_rtne"),
        (False, False, 1, "fmha_fwd_hd128_bf16_rtna"),
        (False, False, 2, "fmha_fwd_hd128_bf16_rtz"),
        (True, False, 0, "fmha_fwd_hd128_bf16_causal_rtne"),
        (True, False, 2, "fmha_fwd_hd128_bf16_causal_rtz"),
        (False, True, 1, "fmha_fwd_hd128_bf16_rtna_group"),
        (True, True, 0, "fmha_fwd_hd128_bf16_causal_rtne_group"),
    ],
)
def test_gfx942_picks_the_kernel_of_the_rounding_mode_and_mode(aiter_hsa, causal, group, cvt, name):
    k = find_asm_kernel(aiter_hsa, "gfx942", causal=causal, group_mode=group, bf16_cvt=cvt, cu_count=304)
    assert k.knl_name == f"_ZN5aiter{len(name)}{name}E"
    assert k.path.parent == aiter_hsa / "gfx942" / "fmha_v3_fwd" / "MI300"


@pytest.mark.corpus
@pytest.mark.parametrize(
    "causal,group,name",
    [
        (False, False, "fmha_fwd_hd128_bf16"),
        (True, False, "fmha_fwd_hd128_bf16_causal"),
        (False, True, "fmha_fwd_hd128_bf16_group"),
        (True, True, "fmha_fwd_hd128_bf16_causal_group"),
    ],
)
def test_gfx950_ignores_the_rounding_mode(aiter_hsa, causal, group, name):
    # gfx950 has no per-SKU folders, so its rows' BF16Cvt does not pick (PR #365: "get_kernel_name_key
    # ignores it entirely on gfx950").
    for cvt in (0, 1, 2):
        k = find_asm_kernel(aiter_hsa, "gfx950", causal=causal, group_mode=group, bf16_cvt=cvt)
        assert k.knl_name == f"_ZN5aiter{len(name)}{name}E"
        assert k.path.parent == aiter_hsa / "gfx950" / "fmha_v3_fwd"


@pytest.mark.corpus
def test_hd192_kernels_pair_a_192_query_head_with_a_128_value_head(aiter_hsa):
    k = find_asm_kernel(aiter_hsa, "gfx950", hdim_q=192, hdim_v=128)
    assert k.co_name == "fwd_hd192_hd128_bf16.co"
    with pytest.raises(NotFound, match=r"^codegen\.py lists no bf16 hd192/192 non-causal batch kernel$"):
        find_asm_kernel(aiter_hsa, "gfx950", hdim_q=192, hdim_v=192)


# --------------------------------------------------------------------------- manifests it builds


def csv_manifest(tmp_path, rows, arch="gfx950"):
    folder = tmp_path / arch / "fmha_v3_fwd"
    folder.mkdir(parents=True)
    header = "dtype,hdim_q,hdim_v,mask,mode,bf16_cvt,ts_qo,ts_kv,knl_name,co_name\n"
    (folder / "fmha_fwd.csv").write_text(header + "".join(r + "\n" for r in rows))
    return folder


def test_the_csv_manifest_rows_and_blanks(tmp_path):
    folder = csv_manifest(
        tmp_path,
        [
            "BF16, 128, 128, 0, 0, , , , k_plain , plain.co ",
            "bf16,128,128,2,0,1,256,64,k_causal,causal.co",
            "bf16,128,128,0,1,0,128,32,k_group,group.co",
            "fp16,128,128,0,0,0,128,32,k_fp16,fp16.co",
        ],
    )
    assert find_asm_kernel(tmp_path, "gfx950") == AsmKernel("k_plain", "plain.co", folder / "plain.co", None, None)
    assert find_asm_kernel(tmp_path, "gfx950", causal=True) == AsmKernel(
        "k_causal", "causal.co", folder / "causal.co", 256, 64
    )
    assert find_asm_kernel(tmp_path, "gfx950", group_mode=True).knl_name == "k_group"
    assert find_asm_kernel(tmp_path, "gfx950", dtype="fp16").knl_name == "k_fp16"
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx950", dtype="fp16", causal=True, group_mode=True)
    assert str(exc.value) == "fmha_fwd.csv lists no fp16 hd128/128 causal group kernel"


@pytest.mark.parametrize(
    "row", ["bf16,128,128,zero,0,0,1,1,k,k.co", "bf16,128,128,0,0,0,x,1,k,k.co", "bf16,128,128,0,0,0,1,1"]
)
def test_a_csv_row_that_does_not_read_is_a_reason(tmp_path, row):
    folder = csv_manifest(tmp_path, [row])
    with pytest.raises(NotFound, match=rf"^{re.escape(str(folder / 'fmha_fwd.csv'))} is not a usable fmha_fwd.csv"):
        find_asm_kernel(tmp_path, "gfx950")


def test_codegen_entries_that_are_not_entries(tmp_path):
    folder = codegen(tmp_path, (128, 0, "fwd_a", "a.co", 128, 32))
    s = selector(128, 0)
    text = (folder / "codegen.py").read_text()
    # A commented-out entry, a selector of fewer than 7 arguments and a name without a .co are skipped.
    text = (
        f'// template<> struct FmhaFwdV3Name<{s}> {{ static constexpr const char * fwd_v3_name = "fwd_x"; }};\n'
        "template<> struct FmhaFwdV3Name<fmha_fwd_kernel_selector<FmhaFwdBf16, 128, 0, false, false, 0>> "
        '{ static constexpr const char * fwd_v3_name = "fwd_short"; };\n'
        + text
        + f'template<> struct FmhaFwdV3Name<{selector(64, 0)}> {{ static constexpr const char * n = "fwd_noco"; }};\n'
    )
    (folder / "codegen.py").write_text(text)
    assert find_asm_kernel(tmp_path, "gfx950").knl_name == "_ZN5aiter5fwd_aE"
    with pytest.raises(NotFound, match=r"^codegen\.py lists no bf16 hd64/64 non-causal batch kernel$"):
        find_asm_kernel(tmp_path, "gfx950", hdim_q=64, hdim_v=64)


def test_a_kernel_directory_without_a_manifest_or_a_folder(tmp_path):
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx950")
    assert (
        str(exc.value)
        == f"no fmha_v3_fwd directory for gfx950 in AITER_ASM_DIR ({tmp_path / 'gfx950' / 'fmha_v3_fwd'})"
    )
    (tmp_path / "gfx950" / "fmha_v3_fwd").mkdir(parents=True)
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx950:xnack-")
    assert str(exc.value) == (
        f"no kernel manifest (fmha_fwd.csv or codegen.py) in {tmp_path / 'gfx950' / 'fmha_v3_fwd'}"
    )


def test_gfx942_picks_the_folder_of_the_devices_cu_count(tmp_path):
    # tables/prefill_gate.toml from AITER's gfx942 codegen.py: 304 CUs MI300, 80 and 64 MI308.
    folder = csv_manifest(tmp_path, ["bf16,128,128,0,0,0,256,32,k,k.co"], arch="gfx942")
    for cus, sub in ((304, "MI300"), (80, "MI308"), (64, "MI308")):
        assert find_asm_kernel(tmp_path, "gfx942", cu_count=cus).path == folder / sub / "k.co"
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx942")
    assert str(exc.value) == (
        "gfx942 keeps one kernel folder per SKU (MI300, MI308), chosen by CU count, and the device's CU count "
        "is not known"
    )
    # The rounding mode picks the row there: only bf16_cvt 0 is listed.
    with pytest.raises(NotFound, match="lists no bf16 hd128/128 non-causal batch kernel"):
        find_asm_kernel(tmp_path, "gfx942", cu_count=304, bf16_cvt=1)


def test_a_row_for_another_processor_is_not_used(tmp_path):
    folder = codegen(tmp_path, (128, 0, "fwd_a", "a.co", 128, 32))
    (folder / "codegen.py").write_text(
        (folder / "codegen.py").read_text().replace("GPUArch::gfx950", "GPUArch::gfx942")
    )
    with pytest.raises(NotFound, match=r"^codegen\.py lists no bf16 hd128/128 non-causal batch kernel$"):
        find_asm_kernel(tmp_path, "gfx950")


def test_a_short_csv_row_is_named_by_its_line(tmp_path):
    # It used to escape as an AttributeError (DictReader fills missing cells with None).
    folder = csv_manifest(tmp_path, ["bf16,128,128,0,0,0,256,64,k,k.co", "bf16,128,128,2,0,0,256,64"])
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx950")
    assert str(exc.value) == f"{folder / 'fmha_fwd.csv'} is not a usable fmha_fwd.csv manifest (line 3 is short)"
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, asm_dir=str(tmp_path))
    assert d.route == "ck_tile" and d.reasons == [f"kernel lookup: {exc.value}"]


def test_a_quoted_csv_cell_keeps_the_line_break_inside_it(tmp_path):
    # The csv module reads a file opened with newline="" so that a quoted cell keeps "\r\n" as
    # written (Python's csv docs, footnote to csv.reader); universal newlines would make it "\n".
    folder = csv_manifest(tmp_path, [])
    header = (folder / "fmha_fwd.csv").read_bytes()
    (folder / "fmha_fwd.csv").write_bytes(header + b'bf16,128,128,0,0,0,256,64,"k\r\nx",k.co\r\n')
    assert find_asm_kernel(tmp_path, "gfx950").knl_name == "k\r\nx"


# --------------------------------------------------------------------------- a whole decision


@pytest.mark.corpus
def test_a_decision_that_routes_to_asm_as_json(aiter_hsa):
    # asm_dir given overrides AITER_ASM_DIR; AITER launches hd128 with 512 threads (mha_fwd.cu bdx),
    # and 256 unified VGPRs allow 2 waves per SIMD: 8 waves, one block per CU (§1.3).
    folder = aiter_hsa / "gfx950" / "fmha_v3_fwd"
    d = decide(
        arch="gfx950:sramecc+:xnack-",
        qo_len=2048,
        kv_len=4096,
        env={"AITER_ASM_DIR": "/nowhere"},
        asm_dir=str(aiter_hsa),
    )
    out = d.as_dict()
    assert (out["route"], out["arch"], out["reasons"], out["blocks_per_cu"]) == ("asm", "gfx950", [], 1)
    assert out["kernel"] == {
        "knl_name": "_ZN5aiter19fmha_fwd_hd128_bf16E",
        "co_name": "fwd_hd128_bf16.co",
        "path": str(folder / "fwd_hd128_bf16.co"),
        "ts_qo": 256,
        "ts_kv": 64,
    }
    assert [c["rule"] for c in out["checks"]] == [
        "threshold",
        "kill switch",
        "graph capture",
        "eligible",
        "AITER_ASM_DIR",
        "kernel lookup",
        "kernel file",
        "target",
        "symbol",
        "lds",
        "occupancy",
    ]
    assert all(c["ok"] for c in out["checks"])
    assert out["checks"][4]["detail"] == f"AITER_ASM_DIR={str(aiter_hsa)!r}"
    assert out["checks"][5]["detail"] == f"_ZN5aiter19fmha_fwd_hd128_bf16E in {folder / 'fwd_hd128_bf16.co'}"
    assert out["checks"][-1]["detail"].startswith("1 block(s) of 512 threads per CU (limited by ")
    # The device's LDS, when given, is what the kernel's static LDS (163840 B, llvm-readelf-22) must fit.
    small = decide(arch="gfx950", qo_len=2048, kv_len=4096, env={}, asm_dir=str(aiter_hsa), lds_bytes=163839)
    assert small.route == "ck_tile" and small.reasons == [
        "lds: static LDS 163840 B against the device's 163839 B per workgroup"
    ]


def test_an_unknown_processor_is_an_error_not_never():
    from amdocc import UnknownTargetError

    with pytest.raises(UnknownTargetError):
        decide(arch="gfx1234", qo_len=4096, kv_len=4096, env={})


@pytest.mark.parametrize(
    "args,bad",
    [
        ("FmhaFwdBf16, 128, 0, false, false, x, GPUArch::gfx950", "lse 'x'"),
        ("FmhaFwdBf16, h, m, false, false, 0, GPUArch::gfx950", "hdim 'h', mask 'm'"),
        ("FmhaFwdBf16, 128, 0, false, false, 0, GPUArch::gfx942, rtz", "bf16_cvt 'rtz'"),
    ],
)
def test_a_selector_names_every_argument_that_is_not_a_whole_number(tmp_path, args, bad):
    folder = tmp_path / "gfx950" / "fmha_v3_fwd"
    folder.mkdir(parents=True)
    (folder / "codegen.py").write_text(
        f'template<> struct FmhaFwdV3Name<fmha_fwd_kernel_selector<{args}>> {{ static constexpr auto n = "k"; }};\n'
    )
    with pytest.raises(NotFound) as exc:
        find_asm_kernel(tmp_path, "gfx950")
    assert str(exc.value) == (
        f"the codegen.py manifest's selector <{', '.join(a.strip() for a in args.split(','))}> "
        f"has no whole number for {bad}"
    )


@pytest.mark.corpus
def test_decide_looks_up_the_kernel_of_its_shape(aiter_hsa):
    # FlashInfer pins how_v3_bf16_cvt to 0 (PR #365: "to match what single_prefill.cuh sends"), and on
    # gfx942 BF16Cvt 0 is AITER's _rtne kernel. gfx942 never routes to asm, but the kernel is still
    # found and validated, so the decision says what would have run.
    d = decide(arch="gfx942", qo_len=4096, kv_len=4096, env={}, asm_dir=str(aiter_hsa), cu_count=304)
    assert d.kernel.knl_name == "_ZN5aiter24fmha_fwd_hd128_bf16_rtneE" and d.route == "ck_tile"
    d = decide(arch="gfx942", qo_len=4096, kv_len=4096, env={}, asm_dir=str(aiter_hsa), cu_count=80, bf16_cvt=2)
    assert d.kernel.knl_name == "_ZN5aiter23fmha_fwd_hd128_bf16_rtzE" and d.kernel.path.parent.name == "MI308"
    for causal, group, name in (
        (True, False, "fmha_fwd_hd128_bf16_causal"),
        (False, True, "fmha_fwd_hd128_bf16_group"),
    ):
        d = decide(
            arch="gfx950", qo_len=4096, kv_len=4096, env={}, asm_dir=str(aiter_hsa), causal=causal, group_mode=group
        )
        assert d.kernel.knl_name == f"_ZN5aiter{len(name)}{name}E"


def test_the_manifest_symbol_is_found_by_its_kd_symbol_when_the_name_differs(tmp_path):
    # The metadata's .name of k_clean (msgpack: fixstr ".name", fixstr "k_clean") renamed in place
    # to "k_clenn"; its .symbol stays "k_clean.kd". AITER loads by symbol, so "k_clean" is found.
    data = LIB1.read_bytes()
    assert data.count(b"\xa5.name\xa7k_clean") == 1
    path = tmp_path / "renamed.co"
    path.write_bytes(data.replace(b"\xa5.name\xa7k_clean", b"\xa5.name\xa7k_clenn"))
    checks, _ = validate_asm_kernel(asm("k_clean", path), "gfx942", block_size=64)
    assert [(c.rule, c.ok) for c in checks][:3] == [("kernel file", True), ("target", True), ("symbol", True)]
    assert checks[2].detail == "k_clean found in renamed.co"
    checks, _ = validate_asm_kernel(asm("k_clenn", path), "gfx942", block_size=64)
    assert checks[2].ok  # and by its name
    checks, _ = validate_asm_kernel(asm("k_clean.kd", path), "gfx942", block_size=64)
    assert not checks[2].ok and "k_clenn" in checks[2].detail  # the descriptor's own symbol is not the kernel's


def test_a_window_of_zero_is_a_window_and_a_kernel_without_lds_reads_zero():
    # FlashInfer's sentinel for "no window" is -1 (PR #365 normalises any negative to it); 0 is a window.
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, window_left=0)
    assert check(d, "eligible").detail == "sliding window 0 (narrower than kv_len 4096)"
    assert check(decide(arch="gfx950", qo_len=4096, kv_len=4096, env={}, window_left=-1), "eligible").ok
    # k_clean's .group_segment_fixed_size is 0 (llvm-readelf-22).
    assert kernels_of(LIB1)["k_clean"][".group_segment_fixed_size"] == 0
    checks, _ = validate_asm_kernel(asm("k_clean", LIB1), "gfx942", block_size=64)
    assert checks[3].detail == f"static LDS 0 B against the device's {llc_lds_limit()} B per workgroup"


def test_a_device_processor_the_tables_do_not_know_fails_the_target_check():
    checks, blocks = validate_asm_kernel(asm("k_clean", LIB1), "gfx1234")
    assert [(c.rule, c.ok) for c in checks] == [("kernel file", True), ("target", False), ("symbol", True)]
    assert (
        checks[1].detail == (f"{LIB1.name} is built for gfx942; the device is gfx1234 — HIP would refuse to load it")
        and blocks is None
    )


def test_a_byte_that_is_not_utf8_does_not_break_a_manifest(tmp_path):
    # Both manifests are read as UTF-8 with undecodable bytes replaced: a stray byte in a comment or
    # an unused cell leaves the entries readable (it used to escape as UnicodeDecodeError from the CSV).
    folder = codegen(tmp_path, (128, 0, "fwd_a", "a.co", 128, 32))
    (folder / "codegen.py").write_bytes(b"# \xff\n" + (folder / "codegen.py").read_bytes())
    assert find_asm_kernel(tmp_path, "gfx950").knl_name == "_ZN5aiter5fwd_aE"
    (folder / "codegen.py").unlink()
    (folder / "fmha_fwd.csv").write_bytes(
        b"dtype,hdim_q,hdim_v,mask,mode,bf16_cvt,ts_qo,ts_kv,knl_name,co_name\n"
        b"bf16,128,128,0,0,0,256,64,k,k.co\n"
        b"fp16,128,128,0,0,0,256,64,k_\xff,k2.co\n"
    )
    assert find_asm_kernel(tmp_path, "gfx950").knl_name == "k"
    assert find_asm_kernel(tmp_path, "gfx950", dtype="fp16").knl_name == "k_\ufffd"


def test_manifests_are_read_as_utf8_whatever_the_locale(tmp_path):
    # Under the C locale without UTF-8 mode Python's default text encoding is ASCII: a kernel name
    # outside ASCII shows whether each manifest is decoded as UTF-8 explicitly.
    import os
    import sys

    folder = codegen(tmp_path / "a", (128, 0, "fwd_\u00e9", "a.co", 128, 32))
    (folder / "codegen.py").write_bytes((folder / "codegen.py").read_text().encode("utf-8"))
    csv_manifest(tmp_path / "b", ["bf16,128,128,0,0,0,256,64,k\u00e9,k.co"])
    code = (
        "import sys; from amdocc.policy.prefill_gate import find_asm_kernel as f; "
        "print(ascii([f(sys.argv[1], 'gfx950').knl_name, f(sys.argv[2], 'gfx950').knl_name]))"
    )
    env = {**os.environ, "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    run = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "a"), str(tmp_path / "b")], env=env, capture_output=True, text=True
    )
    # codegen.py's name is mangled with its length in characters: "fwd_é" is 5.
    assert (run.returncode, run.stdout.strip()) == (0, "['_ZN5aiter5fwd_\\xe9E', 'k\\xe9']"), run.stderr


@pytest.mark.llvm22
def test_a_code_object_without_kernels_says_so(tmp_path):
    # A module with a global and no kernel, built by llc-22 and ld.lld-22: llvm-readelf-22 shows
    # "amdhsa.kernels: []" in its metadata note.
    ir = tmp_path / "empty.ll"
    ir.write_text('target triple = "amdgcn-amd-amdhsa"\n@g = addrspace(1) global i32 0\n')
    obj, co = tmp_path / "empty.o", tmp_path / "empty.co"
    subprocess.run(["llc-22", "-mcpu=gfx942", "-filetype=obj", str(ir), "-o", str(obj)], check=True)
    subprocess.run(["ld.lld-22", "-shared", str(obj), "-o", str(co)], check=True)
    notes = subprocess.run(["llvm-readelf-22", "--notes", str(co)], capture_output=True, text=True, check=True).stdout
    assert re.search(r"amdhsa\.kernels:\s+\[\]", notes)
    checks, blocks = validate_asm_kernel(asm("_ZN5aiter1kE", co), "gfx942")
    assert [(c.rule, c.ok) for c in checks] == [("kernel file", True), ("target", True), ("symbol", False)]
    assert checks[2].detail == "_ZN5aiter1kE not found in empty.co (it has no kernels)" and blocks is None


def test_a_code_object_for_the_device_says_only_what_it_is_built_for():
    checks, _ = validate_asm_kernel(asm("k_clean", LIB1), "gfx942", block_size=64)
    assert checks[1] == Check("target", True, f"{LIB1.name} is built for gfx942; the device is gfx942")


def test_manifests_are_opened_as_utf8_in_process(tmp_path, monkeypatch):
    # The C-locale test above runs in a child process, where a mutation tool cannot see it; this
    # one watches the same fact here: each manifest is decoded by an explicit UTF-8 codec.
    import builtins
    import codecs
    import pathlib

    from amdocc.policy import prefill_gate

    seen = []

    def explicit(encoding):
        seen.append(encoding)
        assert encoding is not None and codecs.lookup(encoding).name == "utf-8", encoding

    def spy_open(file, mode="r", *args, **kwargs):
        explicit(kwargs.get("encoding"))
        return builtins.open(file, mode, *args, **kwargs)

    real_read_text = pathlib.Path.read_text

    def spy_read_text(self, encoding=None, errors=None):
        explicit(encoding)
        return real_read_text(self, encoding=encoding, errors=errors)

    monkeypatch.setattr(prefill_gate, "open", spy_open, raising=False)
    monkeypatch.setattr(pathlib.Path, "read_text", spy_read_text)
    codegen(tmp_path / "a", (128, 0, "fwd_a", "a.co", 128, 32))
    csv_manifest(tmp_path / "b", ["bf16,128,128,0,0,0,256,64,k,k.co"])
    assert find_asm_kernel(tmp_path / "a", "gfx950").knl_name == "_ZN5aiter5fwd_aE"
    assert find_asm_kernel(tmp_path / "b", "gfx950").knl_name == "k"
    assert len(seen) == 2


GENERIC = FIXTURES / "elf" / "gfx9-4-generic_cov6.hsaco"


def test_an_indented_commented_out_codegen_entry_is_not_an_entry():
    def entry(mask, name, indent=""):
        s = f"fmha_fwd_kernel_selector<FmhaFwdBf16, 128, {mask}, false, false, 0, GPUArch::gfx950>"
        return [
            f'{indent}template<> struct FmhaFwdV3Name<{s}> {{ static constexpr const char * n = "{name}"; }};',
            f'{indent}template<> struct FmhaFwdV3Buf<{s}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    live = entry(0, "fwd_live")
    dead = [f"    // {line}" for line in entry(1, "fwd_dead")]  # commented out inside an indented block
    rows = _codegen_rows("\n".join(live + dead) + "\n")
    assert [r["co_name"] for r in rows] == ["fwd_live.co"]


def test_the_gate_counts_blocks_on_the_device_not_on_the_generic_target():
    # llvm-objdump-22: 16384 B static LDS; 6 VGPRs; 256 threads = 4 waves. On gfx950 (160 KiB LDS):
    # LDS 163840 // 16384 = 10, wave slots 4 x 8 x 64 // 256 = 8, VGPRs 512 // 8 = 64 -> capped: 8
    # blocks limited by waves. (gfx942's 64 KiB would give 4, limited by LDS.)
    lds = re.search(r"\.amdhsa_group_segment_fixed_size (\d+)", (GENERIC.parent / f"{GENERIC.name}.kd.txt").read_text())
    assert int(lds.group(1)) == 16384
    kernel = AsmKernel("_Z9saxpy_ldsfPKfPfi", GENERIC.name, GENERIC)
    checks, blocks = validate_asm_kernel(kernel, "gfx950", block_size=256)
    assert blocks == 8
    assert checks[-1].detail == "8 block(s) of 256 threads per CU (limited by waves)"
    assert validate_asm_kernel(kernel, "gfx942", block_size=256)[0][-1].detail == (
        "4 block(s) of 256 threads per CU (limited by lds)"
    )


def test_a_commented_codegen_line_skips_only_itself():
    s = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128, {mask}, false, false, 0, GPUArch::gfx950>"

    def entry(mask: int, name: str, prefix: str = "") -> list[str]:
        sel = s.format(mask=mask)
        return [
            f'{prefix}template<> struct FmhaFwdV3Name<{sel}> {{ static constexpr const char * n = "{name}"; }};',
            f'{prefix}template<> struct FmhaFwdV3Buf<{sel}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    # The commented entry comes FIRST: the live ones after it are still read.
    text = "\n".join(entry(1, "fwd_dead", "// ") + entry(0, "fwd_a") + entry(2, "fwd_b")) + "\n"
    assert [r["co_name"] for r in _codegen_rows(text)] == ["fwd_a.co", "fwd_b.co"]


def test_a_selector_with_too_few_arguments_skips_only_itself_on_its_line():
    """A specialisation whose selector has fewer than the seven positions AITER's selector takes
    (dtype, hdim, mask, seq pad, hd pad, store LSE, arch) is not an entry, and the entry written
    after it on the same line is still read."""
    full = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128, 0, false, false, 0, GPUArch::gfx950>"
    short = "fmha_fwd_kernel_selector<FmhaFwdBf16, 128>"

    def entry(sel: str, name: str) -> list[str]:
        return [
            f'template<> struct FmhaFwdV3Name<{sel}> {{ static constexpr const char * n = "{name}"; }};',
            f'template<> struct FmhaFwdV3Buf<{sel}> {{ static constexpr const char * b = "{name}.co"; }};',
        ]

    bad, good = entry(short, "fwd_short"), entry(full, "fwd_a")
    text = f"{bad[0]} {good[0]}\n{bad[1]} {good[1]}\n"
    assert [r["co_name"] for r in _codegen_rows(text)] == ["fwd_a.co"]
