"""Kernel identity (amdocc.identity) in diff, census OLD NEW and check's baseline: a kernel name
that occurs twice (two libraries of a wheel, two bundles of one file) is two kernels, each
compared with its own counterpart; a kernel found at another location is reported as moved.

The builds are made here by LLVM's own tools: each library is one kernel `dup` assembled and
linked by llvm-mc-22/ld.lld-22 (amdocc.testing.synth) with the metadata we choose, bundles are
written by clang-offload-bundler-22, and the VGPR counts every assertion names are read back by
llvm-readelf-22 --notes. Workgroups per CU are HIP's rule worked by hand (see VGPR_BLOCKS)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from amdocc.cli.main import main
from amdocc.identity import KernelId, location_of, match, relative_path
from amdocc.testing import SynthSpec, synthesize
from oracle import llvm22

pytestmark = pytest.mark.llvm22

BUNDLER = "clang-offload-bundler-22"
BLOCK = 256  # the kernels' .max_flat_workgroup_size, the block diff and census use
# HIP on gfx942 (512 VGPRs per SIMD lane, granule 8, 4 SIMDs, wave64), block 256 = 4 waves, one
# per SIMD: 64 VGPRs -> 512/64 = 8 waves per SIMD -> 4*8*64/256 = 8 workgroups; 160 VGPRs ->
# floor(512/160) = 3 waves -> 3 workgroups (the numbers test_diff works out the same way).
VGPR_BLOCKS = {64: 8, 160: 3}
# Waves per SIMD at that block: one wave per SIMD per workgroup, so the workgroup count.
VGPR_WAVES = VGPR_BLOCKS


def bundle_of(co: Path) -> Path:
    """``co`` as a one-entry gfx942 offload bundle (clang-offload-bundler-22) beside it."""
    bundle = co.with_suffix(".hipfb")
    subprocess.run(
        [
            BUNDLER,
            "--type=o",
            "--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx942",
            "--input=/dev/null",
            f"--input={co}",
            f"--output={bundle}",
        ],
        check=True,
        capture_output=True,
    )
    return bundle


@pytest.fixture(scope="module")
def objects(tmp_path_factory) -> dict[int, Path]:
    """`dup` on gfx942 with 64 and with 160 VGPRs, as code objects and as one-entry bundles."""
    out = tmp_path_factory.mktemp("objects")
    made = {}
    for vgprs in VGPR_BLOCKS:
        co = out / f"dup{vgprs}.co"
        synthesize(SynthSpec("gfx942", vgprs, name="dup", max_flat_workgroup_size=BLOCK), co)
        bundle_of(co)
        made[vgprs] = co
    # The oracle: LLVM's reader says what each object's note holds.
    notes = llvm22.readelf([str(p) for p in made.values()])
    for vgprs, path in made.items():
        (kernel,) = notes[str(path)]["metadata"][0]["amdhsa.kernels"]
        assert (kernel[".name"], kernel[".vgpr_count"]) == ("dup", vgprs)
    return made


def wheel(path: Path, members: dict[str, Path]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, source in members.items():
            z.write(source, name)
    return path


def fat(path: Path, bundles: list[Path]) -> Path:
    """Several bundles back to back in one file, as a .hip_fatbin holds them."""
    path.write_bytes(b"".join(b.read_bytes() for b in bundles))
    listed = subprocess.run(
        [BUNDLER, "--list", "--type=o", f"--input={bundles[0]}"], check=True, capture_output=True, text=True
    ).stdout.split()
    assert "hipv4-amdgcn-amd-amdhsa--gfx942" in listed
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


LIBS = ("pkg/lib/liba.hsaco", "pkg/lib/libb.hsaco")


@pytest.mark.parametrize("regressed", LIBS)
def test_diff_of_a_name_in_two_libraries_compares_each_copy_with_its_own(capsys, tmp_path, objects, regressed):
    old = wheel(tmp_path / "old.whl", dict.fromkeys(LIBS, objects[64]))
    new = wheel(tmp_path / "new.whl", {lib: objects[160 if lib == regressed else 64] for lib in LIBS})
    code, out, _ = run(capsys, "diff", "--json", old, new)
    assert code == 1
    result = json.loads(out)
    rows = {r["location"]: r for r in result["kernels"]}
    assert sorted(rows) == sorted(LIBS) and result["failing"] == 1
    bad = rows[regressed]
    assert (bad["kernel"], bad["target"], bad["processor"], bad["copy"]) == ("dup", "gfx942", "gfx942", 0)
    assert (bad["old"]["vgpr"], bad["new"]["vgpr"]) == (64, 160)
    assert (bad["old"]["blocks_per_cu"], bad["new"]["blocks_per_cu"]) == (VGPR_BLOCKS[64], VGPR_BLOCKS[160])
    assert bad["fails"] == ["occupancy"]
    (other,) = [r for loc, r in rows.items() if loc != regressed]
    assert other["regressions"] == [] and other["old"]["vgpr"] == other["new"]["vgpr"] == 64
    # The text names the library that regressed.
    code, out, _ = run(capsys, "diff", old, new)
    failing = [line for line in out.splitlines() if "FAIL occupancy" in line]
    assert code == 1 and len(failing) == 1 and f"in {regressed}" in failing[0]


@pytest.mark.parametrize("first_regresses", [True, False])
def test_diff_of_two_bundles_in_one_file_compares_them_in_order(capsys, tmp_path, objects, first_regresses):
    b64, b160 = objects[64].with_suffix(".hipfb"), objects[160].with_suffix(".hipfb")
    old = fat(tmp_path / "old.hipfb", [b64, b64])
    new = fat(tmp_path / "new.hipfb", [b160, b64] if first_regresses else [b64, b160])
    code, out, _ = run(capsys, "diff", "--json", old, new)
    result = json.loads(out)
    assert code == 1 and result["failing"] == 1
    (bad,) = [r for r in result["kernels"] if r["fails"]]
    assert (bad["location"], bad["copy"]) == ("", 0 if first_regresses else 1)
    assert (bad["old"]["vgpr"], bad["new"]["vgpr"]) == (64, 160)
    code, out, _ = run(capsys, "diff", old, new)
    (failing,) = [line for line in out.splitlines() if "FAIL" in line]
    assert f"copy {1 if first_regresses else 2} of 2" in failing


def test_census_compare_names_the_copy_that_regressed(capsys, tmp_path, objects):
    b64, b160 = objects[64].with_suffix(".hipfb"), objects[160].with_suffix(".hipfb")
    old = wheel(tmp_path / "old.whl", {"pkg/fat.hipfb": fat(tmp_path / "o.hipfb", [b64, b64])})
    new = wheel(tmp_path / "new.whl", {"pkg/fat.hipfb": fat(tmp_path / "n.hipfb", [b64, b160])})
    code, out, _ = run(capsys, "census", "--json", "--fail-on", "occupancy", old, new)
    result = json.loads(out)
    assert code == 1 and result["matched"] == 2 and result["moved"] == 0
    (change,) = result["changes"]
    assert (change["member"], change["kernel"], change["copy"]) == ("pkg/fat.hipfb", "dup", 1)
    assert (change["old"]["blocks_per_cu"], change["new"]["blocks_per_cu"]) == (VGPR_BLOCKS[64], VGPR_BLOCKS[160])


def test_a_kernel_in_a_renamed_library_is_reported_as_moved_and_still_gated(capsys, tmp_path, objects):
    old = wheel(tmp_path / "old.whl", {"pkg/lib/liba.hsaco": objects[64], "pkg/lib/libb.hsaco": objects[64]})
    new = wheel(tmp_path / "new.whl", {"pkg/lib/libb.hsaco": objects[64], "pkg/lib/libc.hsaco": objects[160]})
    code, out, _ = run(capsys, "diff", "--json", old, new)
    result = json.loads(out)
    assert code == 1 and result["moved"] == 1 and result["added"] == [] and result["removed"] == []
    rows = {r["location"]: r for r in result["kernels"]}
    assert rows["pkg/lib/libb.hsaco"]["moved_from"] is None
    assert rows["pkg/lib/libb.hsaco"]["regressions"] == []  # not merged with the moved copy
    moved = rows["pkg/lib/libc.hsaco"]
    assert moved["moved_from"]["location"] == "pkg/lib/liba.hsaco"
    assert (moved["old"]["vgpr"], moved["new"]["vgpr"]) == (64, 160) and moved["fails"] == ["occupancy"]
    text = run(capsys, "diff", old, new)[1]
    assert "in pkg/lib/libc.hsaco (moved; was in pkg/lib/liba.hsaco)" in text
    # census OLD NEW says the same.
    code, out, _ = run(capsys, "census", "--json", "--fail-on", "occupancy", old, new)
    result = json.loads(out)
    assert code == 1 and result["moved"] == 1
    (change,) = result["changes"]
    assert change["member"] == "pkg/lib/libc.hsaco" and change["moved_from"]["member"] == "pkg/lib/liba.hsaco"


def test_a_name_left_over_ambiguously_is_removed_and_added_not_guessed(capsys, tmp_path, objects):
    old = wheel(tmp_path / "old.whl", {"a/x.hsaco": objects[64], "b/x.hsaco": objects[64]})
    new = wheel(tmp_path / "new.whl", {"c/x.hsaco": objects[64], "d/x.hsaco": objects[160]})
    code, out, _ = run(capsys, "diff", "--json", old, new)
    result = json.loads(out)
    assert code == 0 and result["kernels"] == [] and result["moved"] == 0
    assert [k["location"] for k in result["removed"]] == ["a/x.hsaco", "b/x.hsaco"]
    assert [k["location"] for k in result["added"]] == ["c/x.hsaco", "d/x.hsaco"]


# --------------------------------------------------------------------------- check's baseline

CHECK = ("check", "--no-config", "--rules", "occupancy", "--min-occupancy", "4")


def test_a_baseline_accepting_one_library_does_not_accept_the_other(capsys, tmp_path, objects):
    base = tmp_path / "baseline.json"
    old = wheel(tmp_path / "old.whl", {LIBS[0]: objects[160], LIBS[1]: objects[64]})
    new = wheel(tmp_path / "new.whl", {LIBS[0]: objects[160], LIBS[1]: objects[160]})
    code, _, err = run(capsys, *CHECK, "--baseline", base, "--update-baseline", old)
    assert code == 0 and "wrote 1 accepted violation(s)" in err
    doc = json.loads(base.read_text())
    assert doc["version"] == 2
    assert doc["entries"] == [
        {
            "kernel": "dup",
            "target": "gfx942",
            "rule": "occupancy",
            "value": VGPR_WAVES[160],
            "location": LIBS[0],
            "copy": 0,
        }
    ]
    code, out, _ = run(capsys, *CHECK, "--baseline", base, "--json", new)
    result = json.loads(out)
    assert code == 1
    status = {v["location"]: v["status"] for v in result["violations"]}
    assert status == {LIBS[0]: "accepted", LIBS[1]: "new"}


def test_a_baseline_accepting_one_bundle_does_not_accept_the_other(capsys, tmp_path, objects):
    b64, b160 = objects[64].with_suffix(".hipfb"), objects[160].with_suffix(".hipfb")
    base = tmp_path / "baseline.json"
    old, new = fat(tmp_path / "old.hipfb", [b160, b64]), fat(tmp_path / "new.hipfb", [b160, b160])
    assert run(capsys, *CHECK, "--baseline", base, "--update-baseline", old)[0] == 0
    code, out, _ = run(capsys, *CHECK, "--baseline", base, "--json", new)
    assert code == 1
    assert [(v["copy"], v["status"]) for v in json.loads(out)["violations"]] == [(0, "accepted"), (1, "new")]


def test_a_version_1_baseline_is_read_with_a_notice_and_upgraded(capsys, tmp_path, objects):
    base = tmp_path / "baseline.json"
    # What amdocc wrote before identities: kernel, target and rule only.
    base.write_text(
        '{"format": "amdocc-check-baseline", "version": 1,\n "entries": [\n'
        '  {"kernel": "dup", "target": "gfx942", "rule": "occupancy", "value": 3}\n ]}\n'
    )
    new = wheel(tmp_path / "new.whl", {LIBS[0]: objects[160], LIBS[1]: objects[160]})
    code, out, err = run(capsys, *CHECK, "--baseline", base, "--json", new)
    # The old entry cannot say which library it meant: it accepts both, as it did, and says so once.
    assert code == 0
    assert [v["status"] for v in json.loads(out)["violations"]] == ["accepted", "accepted"]
    notices = [line for line in err.splitlines() if "format version 1" in line]
    assert len(notices) == 1 and "--update-baseline rewrites the file as version 2" in notices[0]
    code, _, err = run(capsys, *CHECK, "--baseline", base, "--update-baseline", new)
    assert code == 0
    doc = json.loads(base.read_text())
    assert doc["version"] == 2 and [e["location"] for e in doc["entries"]] == list(LIBS)
    assert "format version 1" not in run(capsys, *CHECK, "--baseline", base, new)[2]


# --------------------------------------------------------------------------- the rule itself


def test_location_leaves_out_packing_and_offsets_and_keeps_members():
    hops = ("torch/lib/libtorch_hip.so@0x1f000", "section .hip_fatbin", "CCOB v3 zstd@0x1000", "bundle@+0x0")
    assert location_of("", (*hops, "hipv4-amdgcn-amd-amdhsa--gfx942")) == "torch/lib/libtorch_hip.so"
    assert location_of("sub/x.a", ("k.o",)) == "sub/x.a!k.o"


def test_relative_path_is_within_a_directory_given_and_empty_for_a_file(tmp_path):
    (tmp_path / "d").mkdir()
    assert relative_path(str(tmp_path / "d" / "x.so"), [str(tmp_path / "d")]) == "x.so"
    assert relative_path(str(tmp_path / "x.so"), [str(tmp_path / "d")]) == ""
    assert relative_path("-", [str(tmp_path)]) == ""


def test_match_pairs_same_identities_then_unique_moves_only():
    a, b = KernelId("liba", "gfx942", "k"), KernelId("libb", "gfx942", "k")
    m = match({a: 1, KernelId("libx", "gfx942", "j"): 2}, {b: 3, KernelId("libx", "gfx942", "j"): 4})
    assert [(k.location, x, y) for k, x, y in m.same] == [("libx", 2, 4)]
    assert [(x.location, y.location) for x, y, *_ in m.moved] == [("liba", "libb")]
    # Two copies gone from one library and now in another: a library renamed, paired in order.
    old = {KernelId("l1", "t", "k", 0): 0, KernelId("l1", "t", "k", 1): 1}
    new = {KernelId("l2", "t", "k", 0): 0, KernelId("l2", "t", "k", 1): 1}
    assert [(x.copy, y.copy) for x, y, *_ in match(old, new).moved] == [(0, 0), (1, 1)]
    # One copy gone, two came: which one is it? Nobody can say: removed and added.
    m = match({KernelId("l1", "t", "k"): 0}, {KernelId("l2", "t", "k"): 0, KernelId("l3", "t", "k"): 0})
    assert (len(m.moved), len(m.removed), len(m.added)) == (0, 1, 2)


def test_xnack_on_and_off_builds_are_two_kernels(capsys):
    # libhip_plain.so: clang-22 --offload-arch=gfx90a:xnack+ --offload-arch=gfx90a:xnack- ... (its
    # manifest record lists the bundle's targets as clang-offload-bundler-22 --list printed them).
    from conftest import FIXTURES

    lib = FIXTURES / "containers" / "libhip_plain.so"
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    records = manifest if isinstance(manifest, list) else manifest.get("fixtures", manifest)
    (record,) = [r for r in records if r["file"] == "containers/libhip_plain.so"]
    code, out, _ = run(capsys, "diff", "--json", lib, lib)
    rows = json.loads(out)["kernels"]
    assert code == 0
    targets = {r["target"] for r in rows}
    assert targets == set(record["targets"])  # gfx90a:xnack+ and gfx90a:xnack- both compared
    by_processor = {r["processor"] for r in rows if r["target"].startswith("gfx90a")}
    assert by_processor == {"gfx90a"}


@pytest.fixture(scope="module")
def too_big(tmp_path_factory) -> Path:
    """`dup` with 160 VGPRs declaring 1024 threads, as a one-entry gfx942 bundle: HIP fits
    floor(512/160) = 3 waves per SIMD, 12 on the CU's 4 SIMDs, fewer than the 16 wave64 waves
    of one workgroup, so no workgroup of the declared size fits (census lists it)."""
    out = tmp_path_factory.mktemp("too_big")
    co = out / "dup.co"
    synthesize(SynthSpec("gfx942", 160, name="dup", max_flat_workgroup_size=1024), co)
    (kernel,) = llvm22.readelf([str(co)])[str(co)]["metadata"][0]["amdhsa.kernels"]
    assert (kernel[".vgpr_count"], kernel[".max_flat_workgroup_size"]) == (160, 1024)
    return bundle_of(co)


def host_library(path: Path, fatbin: Path) -> Path:
    """A host shared library (clang-22) whose .hip_fatbin section (llvm-objcopy-22) holds ``fatbin``."""
    source = path.with_suffix(".c")
    source.write_text("int host_side(void) { return 1; }\n")
    plain = path.with_suffix(".plain.so")
    subprocess.run(["clang-22", "-shared", "-fPIC", "-o", plain, source], check=True, capture_output=True)
    subprocess.run(
        [
            "llvm-objcopy-22",
            f"--add-section=.hip_fatbin={fatbin}",
            "--set-section-flags=.hip_fatbin=alloc,readonly",
            plain,
            path,
        ],
        check=True,
        capture_output=True,
    )
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_census_summary_numbers_each_copy_when_a_library_is_read_in_pieces(
    capsys, monkeypatch, tmp_path, too_big, jobs
):
    # Three copies of one bundle in one library's .hip_fatbin, cut into a piece each for the
    # workers, then the library in a wheel beside one more copy: a summary made where each piece
    # is read still numbers the copies in reading order, per member.
    from amdocc.app import parallel
    from amdocc.containers import pieces

    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)  # every file counts as large
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # one container per piece
    lib = host_library(tmp_path / "libthree.so", fat(tmp_path / "three.hipfb", [too_big] * 3))
    with tempfile.TemporaryDirectory() as spill:
        assert len(list(parallel.tasks_for([(str(lib), False)], spill))) == 3  # the premise: three pieces
    code, out, _ = run(capsys, "census", "--json", "--jobs", jobs, lib)
    listed = json.loads(out)["cannot_launch"]
    assert code == 0 and [(r["member"], r["kernel"], r["copy"]) for r in listed] == [("", "dup", n) for n in range(3)]
    lib_dir = tmp_path / "tree" / "lib"
    lib_dir.mkdir(parents=True)
    shutil.copyfile(lib, lib_dir / "libthree.so")
    shutil.copyfile(lib, lib_dir / "libthree_again.so")
    code, out, _ = run(capsys, "census", "--json", "--jobs", jobs, tmp_path / "tree")
    summary = json.loads(out)
    assert code == 0 and summary["kernels"] == 6 and summary["targets"]["gfx942"]["cannot_launch"] == 6
    assert [(r["member"], r["copy"]) for r in summary["cannot_launch"]] == [
        (f"lib/{name}", n) for name in ("libthree.so", "libthree_again.so") for n in range(3)
    ]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_check_numbers_each_copy_when_a_library_is_read_in_pieces(capsys, monkeypatch, tmp_path, too_big, jobs):
    # The same three copies, judged by check: each fails the launch rule (12 waves fit, a
    # workgroup is 16), and each violation names its own copy, whichever process read it.
    from amdocc.app import parallel
    from amdocc.containers import pieces

    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    lib_dir = tmp_path / "tree"
    lib_dir.mkdir()
    lib = host_library(lib_dir / "libthree.so", fat(tmp_path / "three.hipfb", [too_big] * 3))
    shutil.copyfile(lib, lib_dir / "libthree_again.so")
    code, out, _ = run(capsys, "check", "--no-config", "--json", "--jobs", jobs, lib_dir)
    result = json.loads(out)
    assert code == 1 and result["summary"]["kernels"] == 6
    assert [(v["location"], v["rule"], v["copy"]) for v in result["violations"]] == [
        (name, "launch", n) for name in ("libthree.so", "libthree_again.so") for n in range(3)
    ]
