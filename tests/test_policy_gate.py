"""The asm-prefill gate: FlashInfer's rules (ROCm PR #365, docs/consumers.md §2) and
amdocc's static validation, against the real amd-aiter wheel's hsa/ tree."""

from __future__ import annotations

import shutil

import pytest

from amdocc.policy.prefill_gate import decide, find_asm_kernel, min_qo_len, normalize_window, validate_asm_kernel

PASSING = dict(
    arch="gfx950:sramecc+:xnack-", qo_len=4096, kv_len=4096, dtype="bf16", head_dim_qk=128, head_dim_v=128, env={}
)


def test_threshold_table():
    # FlashInfer's accessor tests: gfx950 and gfx950:sramecc+:xnack- → 2048; gfx942, gfx90a, unknown → None.
    assert min_qo_len("gfx950") == 2048 and min_qo_len("gfx950:sramecc+:xnack-") == 2048
    assert min_qo_len("gfx942") is None and min_qo_len("gfx90a") is None and min_qo_len("gfx1234") is None


def test_window_wider_than_kv_is_no_window():
    assert normalize_window(8192, 4096) == -1 and normalize_window(4096, 4096) == -1
    assert normalize_window(128, 4096) == 128


FLIPS = [
    ("threshold", dict(qo_len=2047)),
    ("threshold", dict(arch="gfx942", cu_count=304)),
    ("kill switch", dict(env={"FLASHINFER_AITER_ASM_PREFILL": "0"})),
    ("graph capture", dict(capturing=True)),
    ("eligible", dict(dtype="fp16")),
    ("eligible", dict(head_dim_qk=192)),
    ("eligible", dict(logits_soft_cap=30.0)),
    ("eligible", dict(window_left=1024)),
    ("AITER_ASM_DIR", dict(asm_dir="")),
]


@pytest.mark.corpus
def test_the_passing_configuration_routes_to_asm(aiter_hsa):
    d = decide(**PASSING, asm_dir=str(aiter_hsa))
    assert d.route == "asm" and d.reasons == []
    assert d.kernel.knl_name == "_ZN5aiter19fmha_fwd_hd128_bf16E" and d.blocks_per_cu == 1


@pytest.mark.corpus
@pytest.mark.parametrize("rule,change", FLIPS, ids=[f"{r}:{next(iter(c))}" for r, c in FLIPS])
def test_each_rule_flips_the_decision_on_its_own(aiter_hsa, rule, change):
    args = {**PASSING, "asm_dir": str(aiter_hsa), **change}
    d = decide(**args)
    assert d.route == "ck_tile"
    assert [c.rule for c in d.checks if not c.ok] == [rule]


@pytest.mark.corpus
def test_window_as_wide_as_kv_still_routes_to_asm(aiter_hsa):
    assert decide(**PASSING, asm_dir=str(aiter_hsa), window_left=4096).route == "asm"


@pytest.mark.corpus
def test_real_aiter_decisions(aiter_hsa):
    d = str(aiter_hsa)
    assert decide(**PASSING, asm_dir=d).route == "asm"
    low = decide(**{**PASSING, "qo_len": 512}, asm_dir=d)
    assert low.route == "ck_tile" and low.reasons == ["threshold: qo_len 512 against gfx950's threshold 2048"]
    mi300 = decide(**{**PASSING, "arch": "gfx942:sramecc+:xnack-"}, asm_dir=d, cu_count=304)
    assert mi300.route == "ck_tile" and [c.rule for c in mi300.checks if not c.ok] == ["threshold"]


@pytest.mark.corpus
@pytest.mark.parametrize("arch,cus,folder", [("gfx950", None, ""), ("gfx942", 304, "MI300"), ("gfx942", 80, "MI308")])
@pytest.mark.parametrize("causal", [False, True])
def test_hd128_kernels_give_one_block_per_cu(aiter_hsa, arch, cus, folder, causal):
    # 256 unified VGPRs → 2 waves per SIMD → 8 waves = one 512-thread block; the LDS (64 KiB on
    # gfx942, 160 KiB on gfx950) also allows one (docs/consumers.md §2).
    k = find_asm_kernel(aiter_hsa, arch, causal=causal, cu_count=cus)
    assert k.path.parent.name == (folder or "fmha_v3_fwd")
    checks, blocks = validate_asm_kernel(k, arch)
    assert all(c.ok for c in checks) and blocks == 1


def _copy_tree(aiter_hsa, tmp_path, arch):
    src = aiter_hsa / arch / "fmha_v3_fwd"
    dst = tmp_path / arch / "fmha_v3_fwd"
    shutil.copytree(src, dst)
    return dst


def test_empty_directory_routes_to_ck_tile(tmp_path):
    d = decide(**PASSING, asm_dir=str(tmp_path))
    assert d.route == "ck_tile" and d.reasons[0].startswith("kernel lookup: no fmha_v3_fwd directory for gfx950")


@pytest.mark.corpus
def test_gfx942_kernel_under_the_gfx950_name(aiter_hsa, tmp_path):
    dst = _copy_tree(aiter_hsa, tmp_path, "gfx950")
    shutil.copyfile(aiter_hsa / "gfx942" / "fmha_v3_fwd" / "MI300" / "fwd_hd128_bf16.co", dst / "fwd_hd128_bf16.co")
    d = decide(**PASSING, asm_dir=str(tmp_path))
    assert d.route == "ck_tile"
    assert [c.rule for c in d.checks if not c.ok] == ["target"]
    assert "built for gfx942" in d.reasons[0]


@pytest.mark.corpus
def test_truncated_kernel(aiter_hsa, tmp_path):
    dst = _copy_tree(aiter_hsa, tmp_path, "gfx950")
    data = (dst / "fwd_hd128_bf16.co").read_bytes()
    (dst / "fwd_hd128_bf16.co").write_bytes(data[: len(data) // 3])
    d = decide(**PASSING, asm_dir=str(tmp_path))
    assert d.route == "ck_tile" and [c.rule for c in d.checks if not c.ok] == ["kernel file"]
    assert "does not parse" in d.reasons[0] and "offset 0x" in d.reasons[0]


@pytest.mark.corpus
def test_manifest_naming_a_missing_symbol(aiter_hsa, tmp_path):
    dst = _copy_tree(aiter_hsa, tmp_path, "gfx950")
    (dst / "codegen.py").write_text(
        (dst / "codegen.py").read_text().replace('"fmha_fwd_hd128_bf16"', '"fmha_fwd_hd128_bf16_v2"')
    )
    d = decide(**PASSING, asm_dir=str(tmp_path))
    assert d.route == "ck_tile" and [c.rule for c in d.checks if not c.ok] == ["symbol"]
    assert "_ZN5aiter22fmha_fwd_hd128_bf16_v2E not found" in d.reasons[0]


@pytest.mark.corpus
def test_csv_manifest_is_preferred_when_present(aiter_hsa, tmp_path):
    # Newer AITER ships fmha_fwd.csv (dtype,hdim_q,hdim_v,mask,mode,bf16_cvt,ts_qo,ts_kv,knl_name,co_name).
    dst = _copy_tree(aiter_hsa, tmp_path, "gfx950")
    (dst / "fmha_fwd.csv").write_text(
        "dtype,hdim_q,hdim_v,mask,mode,bf16_cvt,ts_qo,ts_kv,knl_name,co_name\n"
        "bf16,128,128,0,0,0,256,64,_ZN5aiter19fmha_fwd_hd128_bf16E,fwd_hd128_bf16.co\n"
        "bf16,128,128,2,0,0,256,64,_ZN5aiter26fmha_fwd_hd128_bf16_causalE,fwd_hd128_bf16_causal.co\n"
    )
    d = decide(**PASSING, asm_dir=str(tmp_path), causal=True)
    assert d.route == "asm" and d.kernel.co_name == "fwd_hd128_bf16_causal.co"


def test_gfx942_needs_the_cu_count_to_pick_a_folder(tmp_path):
    (tmp_path / "gfx942" / "fmha_v3_fwd").mkdir(parents=True)
    (tmp_path / "gfx942" / "fmha_v3_fwd" / "fmha_fwd.csv").write_text(
        "dtype,hdim_q,hdim_v,mask,mode,bf16_cvt,ts_qo,ts_kv,knl_name,co_name\n"
        "bf16,128,128,0,0,0,256,32,_ZN5aiter24fmha_fwd_hd128_bf16_rtneE,fwd_hd128_bf16_rtne.co\n"
    )
    from amdocc.policy.prefill_gate import NotFound

    with pytest.raises(NotFound, match="CU count is not known"):
        find_asm_kernel(tmp_path, "gfx942")
    with pytest.raises(NotFound, match="no gfx942 kernel folder for a 100-CU device"):
        find_asm_kernel(tmp_path, "gfx942", cu_count=100)
    assert find_asm_kernel(tmp_path, "gfx942", cu_count=80).path.parent.name == "MI308"


@pytest.mark.parametrize(
    "selector_args, body, reason",
    [
        # A FmhaFwdV3Name specialisation without the quoted kernel name used to raise AttributeError
        # (re.search(...) was None).
        ("128, 0, 0, 0, 0", "static constexpr int name = 0;", r"FmhaFwdV3Name entry .* does not match"),
        # A word where a number belongs used to escape int() as a ValueError.
        ("true, 0, 0, 0, 0", 'static constexpr auto name = "k";', r"has no whole number for hdim 'true'"),
    ],
)
def test_a_malformed_codegen_entry_is_a_reason_not_a_crash(tmp_path, selector_args, body, reason):
    # The gate must route to CK Tile and say which entry is broken.
    from amdocc.policy.prefill_gate import NotFound

    folder = tmp_path / "gfx950" / "fmha_v3_fwd"
    folder.mkdir(parents=True)
    selector = f"fmha_fwd_kernel_selector<FmhaFwdBf16, {selector_args}, GPUArch::gfx950>"
    (folder / "codegen.py").write_text(f"template<> struct FmhaFwdV3Name<{selector}> {{ {body} }};\n")
    with pytest.raises(NotFound, match=reason):
        find_asm_kernel(tmp_path, "gfx950")
    d = decide(**PASSING, asm_dir=str(tmp_path))
    assert d.route == "ck_tile" and [c.rule for c in d.checks if not c.ok] == ["kernel lookup"]


def test_the_threshold_admits_qo_len_equal_to_it():
    # FlashInfer's gate is `qo_len >= threshold` (docs/consumers.md §2),
    # with gfx950's threshold 2048: 2048 passes the threshold rule, 2047 fails it.
    def threshold(qo_len):
        d = decide(**{**PASSING, "qo_len": qo_len})
        return next(c.ok for c in d.checks if c.rule == "threshold")

    assert threshold(2048) is True and threshold(2047) is False
