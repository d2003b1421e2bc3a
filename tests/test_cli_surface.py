"""Selections that match nothing, processor compatibility, records that agree with themselves,
nothing vanishing from a tree, and what people read.

Expected numbers come from LLVM 22's readings of the fixtures (manifest.json) worked by hand
through HIP's algorithm (docs/hip-occupancy.md §2), from the target-id rules
(docs/code-object-format.md §1.2-1.3) and from llvm-cxxfilt-22.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import FIXTURES, ROOT, SPLIT_SHAPE

ELF = FIXTURES / "elf"
GFX942 = ELF / "gfx942_cov4.hsaco"  # xnack any, sramecc any (e_flags 0x54c)
GFX942_XNACK_OFF = ELF / "gfx942_sramecc+_xnack-_cov5.hsaco"
GFX11_GENERIC = ELF / "gfx11-generic_cov6.hsaco"
GFX1100_WGP = ELF / "gfx1100_w32_wgp_cov6.hsaco"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def kernel(path, fragment):
    (co,) = amdocc.load(path)
    (k,) = [k for k in co.kernels if fragment in k.name]
    return k


# -- selections that match nothing ----------------------------------------------------------


@pytest.mark.llvm22
def test_a_kernel_pattern_that_matches_nothing_names_the_nearest(capsys):
    code, _out, err = cli(capsys, "occupancy", "--block", "256", "--kernel", "saxpi_lds", GFX942)
    line = one_line(err)
    (readable,) = subprocess.run(
        ["llvm-cxxfilt-22", "_Z9saxpy_ldsfPKfPfi"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert code == 2 and "saxpi_lds" in line and "nearest" in line and readable in line
    for command in (["inspect"], ["sweep"], ["diff", GFX942]):
        code, _, err = cli(capsys, *command, "--kernel", "saxpi_lds", GFX942)
        assert code == 2 and readable in err
    # A pattern that is the start of a name, typed with a slip, still finds it; the other
    # kernels of the file (reg_heavy, mfma_agpr) are not near it.
    code, _, err = cli(capsys, "inspect", "--kernel", "saxpi", GFX942)
    assert code == 2 and f"nearest: {readable}" in one_line(err)


def test_a_target_that_selects_nothing_names_the_processors_there(capsys):
    code, _out, err = cli(capsys, "occupancy", "--block", "256", "--target", "gfx1100", GFX942)
    line = one_line(err)
    assert code == 2 and "gfx1100" in line and "gfx942" in line and "--what-if" in line
    code, _, err = cli(capsys, "occupancy", "--json", "--block", "256", "--target", "gfx1100", GFX942)
    assert code == 2 and "gfx942" in one_line(err)
    code, _, err = cli(capsys, "inspect", "--target", "gfx1030", FIXTURES / "containers" / "bundle_5arch.hipfb")
    assert code == 2 and "gfx1030" in one_line(err)


def test_a_directory_without_code_objects(capsys, tmp_path):
    (tmp_path / "notes.txt").write_text("not a kernel")
    code, _, err = cli(capsys, "occupancy", "--block", "64", tmp_path)
    assert code == 2 and "no code object" in one_line(err)


def test_a_command_that_needs_one_kernel_lists_the_ones_selected(capsys):
    sample = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"
    manifest = json.loads((FIXTURES / "manifest.json").read_text())["sample"]
    count = sum(
        len(e["llvm_reported"]["kernels"]) for b in manifest["bundles"] for e in b["entries"] if "llvm_reported" in e
    )
    code, _, err = cli(capsys, "sweep", sample)
    line = one_line(err)
    assert code == 2 and f"{count} selected" in line and "saxpy_lds(float, float const*, float*, int) (gfx1100)" in line


def test_verify_on_a_missing_file_is_bad_input_not_a_missing_gpu(capsys, tmp_path):
    code, _, err = cli(capsys, "verify", tmp_path / "nope.co")
    assert code == 2 and "nope.co" in one_line(err)


# -- processor compatibility ----------------------------------------------------------------


def test_the_api_refuses_a_processor_the_code_cannot_run_on():
    k = kernel(GFX942, "saxpy")
    for where in ({"target": "gfx1100"}, {"device": "MI355X"}, {"target": "gfx950"}):
        with pytest.raises(amdocc.AmdoccError, match=r"gfx942 code cannot run on gfx(1100|950)"):
            amdocc.occupancy(k, block_size=256, **where)
    with pytest.raises(amdocc.AmdoccError, match="gfx942 code cannot run on gfx950"):
        amdocc.max_blocks_per_cu(k, 256, device="MI355X")
    # Its own processor, named or not, is fine: HIP at 256 threads, 6 VGPRs (granule 8 → 64
    # waves, capped at 8), 14 SGPRs (→ 16 + 16 trap = 32 → 25 waves), 16 KiB LDS of 64 KiB → 4.
    assert amdocc.occupancy(k, block_size=256, target="gfx942").blocks_per_cu == 4
    assert amdocc.occupancy(k, block_size=256, device="MI300X").blocks_per_cu == 4
    assert int(amdocc.max_blocks_per_cu(k, 256, device="MI300X")) == 4


def test_a_what_if_is_allowed_when_asked_and_labelled():
    k = kernel(GFX942, "saxpy")
    occ = amdocc.occupancy(k, block_size=256, device="MI355X", what_if=True)
    # On gfx950 the same numbers meet 160 KiB of LDS: LDS allows 163840 / 16384 = 10, the
    # 8 wave slots per SIMD allow 4·8·64 / 256 = 8 → 8, limited by wave slots.
    assert (occ.blocks_per_cu, occ.limiter, occ.processor) == (8, "waves", "gfx950")
    assert occ.what_if is True and occ.built_for == "gfx942"
    assert any(w.startswith("what-if: gfx942 code cannot run on gfx950") for w in occ.warnings)
    assert occ.as_dict()["what_if"] is True
    assert int(amdocc.max_blocks_per_cu(k, 256, device="MI355X", what_if=True)) == 8
    with pytest.raises(amdocc.AmdoccError, match="what_if needs"):
        amdocc.occupancy(k, block_size=256, what_if=True)


def test_xnack_and_sramecc_modes_must_match():
    k = kernel(GFX942_XNACK_OFF, "saxpy")  # built gfx942:sramecc+:xnack-
    for device in ("gfx942:xnack+", "gfx942:sramecc-", "gfx942:sramecc-:xnack+"):
        with pytest.raises(amdocc.AmdoccError, match="gfx942:sramecc\\+:xnack- code is built with"):
            amdocc.occupancy(k, block_size=256, target=device)
    for device in ("gfx942", "gfx942:xnack-", "gfx942:sramecc+:xnack-"):
        assert amdocc.occupancy(k, block_size=256, target=device).blocks_per_cu == 4
    # Code built with "any" (the default e_flags 0x54c) runs in either mode.
    any_mode = kernel(GFX942, "saxpy")
    for device in ("gfx942:xnack+", "gfx942:xnack-", "gfx942:sramecc+:xnack+"):
        assert amdocc.occupancy(any_mode, block_size=256, target=device).what_if is False


def test_generic_code_runs_on_its_family_and_names_the_member():
    k = kernel(GFX11_GENERIC, "saxpy")
    # gfx11-generic's members (docs/code-object-format.md §1.2): gfx1100-1103 and gfx1150-1153.
    for member in ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"):
        occ = amdocc.occupancy(k, block_size=256, target=member)
        assert (occ.processor, occ.built_for, occ.what_if) == (member, "gfx11-generic", False)
    for outsider in ("gfx1030", "gfx1200", "gfx942"):
        with pytest.raises(amdocc.AmdoccError, match=f"gfx11-generic code cannot run on {outsider}"):
            amdocc.occupancy(k, block_size=256, target=outsider)


def test_cli_what_if_evaluates_and_labels(capsys):
    code, out, err = cli(
        capsys, "occupancy", "--json", "--block", "256", "--device", "MI355X", "--what-if", "--kernel", "saxpy", GFX942
    )
    assert code == 0, err
    (r,) = json.loads(out)["results"]
    assert (r["blocks_per_cu"], r["what_if"], r["built_for"], r["processor"], r["target"]) == (
        8,
        True,
        "gfx942",
        "gfx950",
        "gfx942",
    )
    code, out, _ = cli(
        capsys, "occupancy", "--block", "256", "--device", "MI355X", "--what-if", "--kernel", "saxpy", GFX942
    )
    assert code == 0 and "WHAT-IF: gfx942 code evaluated on gfx950" in out
    code, out, _ = cli(capsys, "occupancy", "--block", "256", "--target", "gfx1101", GFX11_GENERIC)
    assert code == 0 and "gfx11-generic code evaluated on gfx1101" in out and "WHAT-IF" not in out


def test_sweep_and_split_refuse_a_processor_the_code_cannot_run_on(capsys):
    code, _, err = cli(capsys, "sweep", "--target", "gfx1100", "--kernel", "saxpy", GFX942)
    assert code == 2 and "gfx1100" in one_line(err) and "gfx942" in err
    code, out, err = cli(
        capsys,
        "sweep",
        "--json",
        "--device",
        "MI355X",
        "--what-if",
        "--kernel",
        "saxpy",
        "--blocks",
        "256",
        "--dynamic-lds",
        "0",
        GFX942,
    )
    doc = json.loads(out)
    assert code == 0 and doc["what_if"] is True and doc["grid"][0]["blocks_per_cu"] == 8
    shape = [
        *SPLIT_SHAPE,
        "--block",
        "512",
        ELF / "hand_aiter_gfx942.hsaco",
    ]
    # --aggressive: gfx950's policy row uses occupancy only in the streaming low-head case.
    code, _, err = cli(capsys, "split", "--arch", "gfx950", "--aggressive", *shape)
    assert code == 2 and "gfx950" in one_line(err) and "gfx942" in err
    code, out, _ = cli(capsys, "split", "--json", "--arch", "gfx942", "--cu-count", "304", *shape)
    assert code == 0 and json.loads(out)["splits"] == 9  # the §1.1 case worked in test_policy_splits


@pytest.mark.corpus
def test_gate_does_not_evaluate_a_kernel_the_device_cannot_load(aiter_hsa, tmp_path):
    import shutil

    from amdocc.policy.prefill_gate import decide

    dst = tmp_path / "gfx950" / "fmha_v3_fwd"
    shutil.copytree(aiter_hsa / "gfx950" / "fmha_v3_fwd", dst)
    shutil.copyfile(aiter_hsa / "gfx942" / "fmha_v3_fwd" / "MI300" / "fwd_hd128_bf16.co", dst / "fwd_hd128_bf16.co")
    d = decide(arch="gfx950", qo_len=4096, kv_len=4096, asm_dir=str(tmp_path), env={})
    assert d.route == "ck_tile" and "occupancy" not in [c.rule for c in d.checks] and d.blocks_per_cu is None


# -- records that agree with themselves ----------------------------------------------------------


def test_a_block_above_max_flat_workgroup_size_is_handled_alike_by_every_model():
    k = kernel(GFX942, "saxpy")  # .max_flat_workgroup_size 256 (LLVM's reading)
    warning = "block size 512 exceeds the kernel's .max_flat_workgroup_size 256: a launch fails"
    answers = {}
    for model in ("hip", "llvm", "hw"):
        occ = amdocc.occupancy(k, block_size=512, model=model)
        assert occ.launchable is False and any(w.startswith(warning) for w in occ.warnings), occ.warnings
        answers[model] = (occ.blocks_per_cu, occ.waves_per_simd, occ.occupancy_fraction)
    # llvm and hw: no launch, so nothing resident. HIP's API does not read the limit and answers
    # as at any block: 8 wave slots allow 4·8·64/512 = 4, LDS 65536/16384 = 4 → 4 blocks of
    # 8 waves = 32 waves per CU = 8 per SIMD, 100%.
    assert answers == {"llvm": (0, 0, 0.0), "hw": (0, 0, 0.0), "hip": (4, 8, 1.0)}


def test_no_record_shows_waves_without_workgroups():
    for path in sorted(ELF.glob("*.hsaco")):
        for co in amdocc.load(path):
            # Generic code is evaluated as a member of its family (on the family, hip and hw refuse).
            where = {"target": co.target.generic_of[0]} if co.target is not None and co.target.is_generic else {}
            for k in co.kernels:
                for model in ("hip", "llvm", "hw"):
                    for block in (64, 256, 1024, 2048):
                        occ = amdocc.occupancy(k, block_size=block, model=model, dynamic_lds=48 << 10, **where)
                        if occ.blocks_per_cu == 0:
                            assert occ.waves_per_simd == 0 and occ.waves_per_cu == 0 and occ.occupancy_fraction == 0


def test_per_wgp_is_said_per_wgp_everywhere(capsys):
    code, out, _ = cli(capsys, "occupancy", "--json", "--block", "256", "--kernel", "saxpy", GFX1100_WGP)
    (r,) = json.loads(out)["results"]
    assert code == 0 and r["unit"] == "WGP" and r["blocks_per_wgp"] == r["blocks_per_cu"] is not None
    assert r["waves_per_wgp"] == r["waves_per_cu"]
    code, out, _ = cli(capsys, "occupancy", "--block", "256", "--kernel", "saxpy", GFX1100_WGP)
    assert "workgroups/WGP" in out and "/CU" not in out
    # LLVM's occupancy over the flat workgroup range has no workgroups: its limits are waves.
    code, out, _ = cli(capsys, "occupancy", "--model", "llvm", "--kernel", "saxpy", GFX942)
    assert "limits (waves/SIMD each allows)" in out
    code, out, _ = cli(capsys, "sweep", "--kernel", "saxpy", "--blocks", "64,256", "--dynamic-lds", "0", GFX1100_WGP)
    assert code == 0 and "workgroups per WGP" in out and "per CU" not in out
    code, out, _ = cli(
        capsys, "sweep", "--json", "--kernel", "saxpy", "--blocks", "64", "--dynamic-lds", "0", GFX1100_WGP
    )
    doc = json.loads(out)
    assert doc["unit"] == "WGP" and doc["grid"][0]["blocks_per_wgp"] == doc["grid"][0]["blocks_per_cu"]
    code, out, _ = cli(capsys, "diff", GFX1100_WGP, GFX1100_WGP)
    assert code == 0 and "per WGP" in out and "per CU" not in out
    # A CDNA kernel counts per CU, and says so.
    code, out, _ = cli(capsys, "occupancy", "--json", "--block", "256", "--kernel", "saxpy", GFX942)
    (r,) = json.loads(out)["results"]
    assert (r["unit"], r["blocks_per_wgp"]) == ("CU", None)


def test_diff_names_only_the_kinds_that_regressed(capsys):
    d = FIXTURES / "diff"
    code, out, _ = cli(
        capsys, "diff", d / "diff_base.hsaco", d / "diff_more_lds.hsaco", "--fail-on", "lds,vgpr,scratch"
    )
    assert code == 1
    assert out.strip().splitlines()[-1] == "1 kernel(s) regress on lds"
    code, out, _ = cli(capsys, "diff", "--json", d / "diff_base.hsaco", d / "diff_more_lds.hsaco", "--fail-on", "all")
    assert json.loads(out)["failed_kinds"] == ["occupancy", "lds"]


def test_split_fallbacks_are_visible(capsys):
    shape = ["--seq-len", "256", "--seq-len-kv", "65536", "--rows-per-block", "4", "--block-kv", "128"]
    code, out, _ = cli(capsys, "split", "--json", "--arch", "gfx1100", *shape)
    doc = json.loads(out)
    assert code == 0 and doc["policy_fallback"] is True and doc["arch_policy"] == "gfx942"
    assert doc["cu_source"] == "fallback" and doc["occupancy"]["source"] == "default"
    assert len(doc["warnings"]) == 3
    code, out, _ = cli(capsys, "split", "--arch", "gfx1100", *shape)
    assert out.count("warning: ") == 3 and "falls back to gfx942" in out
    code, out, _ = cli(capsys, "split", "--json", "--arch", "gfx942", "--cu-count", "304", "--occupancy", "2", *shape)
    doc = json.loads(out)
    assert doc["policy_fallback"] is False and doc["warnings"] == []


# -- nothing vanishes --------------------------------------------------------------------------


@pytest.fixture
def tree_with_unreadable_code_objects(tmp_path):
    good = GFX942.read_bytes()
    (tmp_path / "good.co").write_bytes(good)
    (tmp_path / "empty.co").write_bytes(b"")
    (tmp_path / "random.hsaco").write_bytes(bytes((i * 97 + 13) % 251 for i in range(300)))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "truncated.hipfb").write_bytes(good[:300])
    (tmp_path / "sub" / "zero.fatbin").write_bytes(b"\0" * 64)
    (tmp_path / "README.txt").write_text("sources and notes are passed over")
    return tmp_path


def test_unreadable_code_object_files_in_a_tree_are_reported(capsys, tree_with_unreadable_code_objects):
    root = tree_with_unreadable_code_objects
    bad = {"empty.co", "random.hsaco", "truncated.hipfb", "zero.fatbin"}
    for command in (["inspect", "--json"], ["occupancy", "--json", "--block", "256"]):
        code, out, err = cli(capsys, *command, root)
        doc = json.loads(out)
        assert code == 2
        assert {e["path"].rsplit("/", 1)[-1] for e in doc["errors"]} == bad
        assert all(e["error"] for e in doc["errors"]) and "README" not in out + err
        assert len(err.strip().splitlines()) == len(bad)
    code, out, err = cli(capsys, "inspect", root)
    assert all(name in err for name in bad) and "empty file" in err


CUDA_ELF_YAML = """--- !ELF
FileHeader:
  Class:   ELFCLASS64
  Data:    ELFDATA2LSB
  Type:    ET_EXEC
  Machine: EM_CUDA
Sections:
  - Name:    .text.kernel
    Type:    SHT_PROGBITS
    Flags:   [ SHF_ALLOC, SHF_EXECINSTR ]
    Content: "0123456789abcdef"
"""


@pytest.mark.llvm22
def test_other_vendors_gpu_code_in_a_tree_is_skipped_by_name(capsys, tmp_path):
    """A CUDA ELF (written by LLVM's yaml2obj-22 with machine EM_CUDA, as llvm-readelf-22 reads it
    back) and an NVIDIA fat binary (the public fatBinaryHeader: u32 magic 0xBA55ED50, u16 version,
    u16 header size 16, u64 size of what follows) under code-object names are skipped with what
    they are; the same files truncated stay errors."""
    import struct

    (tmp_path / "k.yaml").write_text(CUDA_ELF_YAML)
    subprocess.run(["yaml2obj-22", str(tmp_path / "k.yaml"), "-o", str(tmp_path / "k.cubin")], check=True)
    header = subprocess.run(
        ["llvm-readelf-22", "-h", str(tmp_path / "k.cubin")], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"Machine:\s+NVIDIA CUDA architecture", header)
    cubin = (tmp_path / "k.cubin").read_bytes()
    fatbin = struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(cubin)) + cubin
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    (root / "good.co").write_bytes(GFX942.read_bytes())
    (root / "kernel.co").write_bytes(cubin)
    (root / "sub" / "kernels.fatbin").write_bytes(fatbin)
    (root / "cut.hsaco").write_bytes(cubin[: len(cubin) // 2])
    (root / "sub" / "cut.fatbin").write_bytes(fatbin[:-1])
    (root / "head.fatbin").write_bytes(fatbin[:8])
    skipped = {"kernel.co": "NVIDIA CUDA ELF", "kernels.fatbin": "NVIDIA CUDA fat binary"}
    bad = {"cut.hsaco", "cut.fatbin", "head.fatbin"}
    for command in (
        ["inspect", "--json"],
        ["occupancy", "--json", "--block", "256"],
        ["check", "--json", "--no-config"],
    ):
        code, out, _ = cli(capsys, *command, root)
        doc = json.loads(out)
        assert code == 2
        assert {r["path"].rsplit("/", 1)[-1]: r["reason"].split(" (")[0] for r in doc["skipped"]} == skipped
        assert {e["path"].rsplit("/", 1)[-1] for e in doc["errors"]} == bad
    code, out, _ = cli(capsys, "census", "--json", root)
    assert code == 2 and sorted(r.split(" (")[0] for r in json.loads(out)["skipped"]) == sorted(skipped.values())
    _, out, _ = cli(capsys, "inspect", root)
    for name, what in skipped.items():
        assert re.search(rf"skipped \S*{name}: {what}", out)


def assert_located_as_said(e: dict) -> None:
    """An error record names the same place as its message."""
    message = e["error"]
    assert message.startswith(e["path"])
    if e["origin"]:
        assert e["origin"] in message
    if e["offset"] is not None:
        assert f"offset {e['offset']:#x}" in message
    if e["payload_offset"] is not None:
        assert f"+{e['payload_offset']:#x}" in message
    if e["offset"] is None and e["payload_offset"] is None:
        assert not re.search(r"offset 0x|\+0x", message.split(": ", 1)[1] if ": " in message else message)


def test_errors_in_json_carry_the_origin_and_offset_of_their_message(capsys, tmp_path):
    seen = 0
    for name in (
        "bundle_5arch.hipfb",
        "ccob_v2_zstd.hipfb",
        "ccob_v3_zlib.hipfb",
        "libhip_plain.so",
        "libhip_ccob_v3.so",
        "offload_binary_2arch.bin",
    ):
        data = (FIXTURES / "containers" / name).read_bytes()
        for i, cut in enumerate((len(data) // 5, len(data) // 2, len(data) - 7)):
            path = tmp_path / f"{i}_{name}"
            path.write_bytes(data[:cut])
            _, out, _ = cli(capsys, "inspect", "--json", path)
            for e in json.loads(out)["errors"]:
                assert_located_as_said(e)
                seen += 1
        corrupt = bytearray(data)
        for at in range(64, len(corrupt), max(1, len(corrupt) // 9)):
            corrupt[at] ^= 0xFF
        path = tmp_path / f"x_{name}"
        path.write_bytes(bytes(corrupt))
        _, out, _ = cli(capsys, "inspect", "--json", path)
        for e in json.loads(out)["errors"]:
            assert_located_as_said(e)
            seen += 1
    assert seen >= 10


# -- text people read --------------------------------------------------------------------------


def test_inspect_shows_spills_and_scratch(capsys):
    _, out, _ = cli(capsys, "inspect", "--kernel", "scratch_private", GFX942)
    header, row = [line for line in out.splitlines() if "scratch" in line][:2]
    assert "spills SGPR/VGPR" in header and "scratch" in header
    # LLVM's reading: .private_segment_fixed_size 272, .sgpr_spill_count 0, .vgpr_spill_count 0.
    assert " 272 " in row and " 0/0 " in row


def test_findings_that_fire_on_every_aiter_kernel_are_hidden_by_default(capsys):
    # AITER's asm kernels leave the descriptor's kernarg_size 0 (docs/code-object-format.md §3.3): info, shown on ask.
    hand = ELF / "hand_aiter_gfx942.hsaco"
    code, out, _ = cli(capsys, "inspect", hand)
    assert code == 0 and "kernarg-size-mismatch" not in out
    code, out, _ = cli(capsys, "inspect", "--findings", "all", hand)
    assert "info: kernarg-size-mismatch" in out
    code, out, _ = cli(capsys, "inspect", "--json", hand)
    (co,) = json.loads(out)["code_objects"]
    assert "kernarg-size-mismatch" in [f["code"] for f in co["kernels"][0]["findings"]]
