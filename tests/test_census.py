"""amdocc census: per-kernel rows checked against llvm-readelf-22's notes for every kernel, the
hip model's answers against hand-worked numbers, the comparison of two releases, CSV/Parquet,
and the HTML report opened in headless Chromium (its DOM checked for every section and chart,
a screenshot checked for the plots' colours)."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from amdocc.census import member_of
from amdocc.census.svg import LIMITER_COLOURS, PALETTE
from amdocc.cli.main import main
from conftest import FIXTURES, REQUIRE
from fixtures.oracles import metadata_yaml
from test_check import DVGPR, LDS, LIB1, LIB2, expected_violations, kernels_of, llc_lds_limit_of

D = FIXTURES / "diff"
CHECK_FILES = (LIB1, LIB2, LDS, DVGPR)
DIFF_FILES = (D / "diff_base.hsaco", D / "diff_more_vgpr.hsaco", D / "diff_more_lds.hsaco")


@pytest.fixture
def tree(tmp_path) -> Path:
    """A small library tree: the check and diff fixtures in two folders."""
    root = tmp_path / "tree"
    for folder, files in (("check", CHECK_FILES), ("diff", DIFF_FILES)):
        (root / folder).mkdir(parents=True)
        for f in files:
            shutil.copyfile(f, root / folder / f.name)
    return root


def census(capsys, *argv):
    code = main(["census", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def csv_rows(capsys, *argv) -> list[dict]:
    code, out, err = census(capsys, "--csv", "-", *argv)
    assert code == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def oracle_kernels() -> dict[tuple[str, str], dict]:
    """(member, kernel) → the kernel's metadata as llvm-readelf-22 printed it."""
    out = {}
    for folder, files in (("check", CHECK_FILES), ("diff", DIFF_FILES)):
        for f in files:
            for name, k in kernels_of(f).items():
                out[(f"{folder}/{f.name}", name)] = k
    return out


def oracle_targets() -> dict[str, int]:
    """Kernels per target, the target as each file's amdhsa.target names it."""
    out: dict[str, int] = {}
    for f in CHECK_FILES + DIFF_FILES:
        target = metadata_yaml(Path(f"{f}.readelf.txt").read_text())["amdhsa.target"].split("--")[-1]
        out[target] = out.get(target, 0) + len(kernels_of(f))
    return out


def number(text: str):
    return None if text == "" else int(text)


# --------------------------------------------------------------------------- rows


def test_every_row_agrees_with_llvm_readelf(capsys, tree):
    rows = csv_rows(capsys, tree)
    oracle = oracle_kernels()
    assert len(rows) == len(oracle)
    assert {(r["member"], r["kernel"]) for r in rows} == set(oracle)
    for r in rows:
        k = oracle[(r["member"], r["kernel"])]
        # LLVM writes no .agpr_count where there are no AGPRs (gfx1200): the census says 0 there.
        assert number(r["agprs"]) == k.get(".agpr_count", 0 if r["target"] == "gfx1200" else None)
        note = {
            "vgprs": ".vgpr_count",
            "sgprs": ".sgpr_count",
            "lds": ".group_segment_fixed_size",
            "scratch": ".private_segment_fixed_size",
            "wave": ".wavefront_size",
            "max_flat_workgroup_size": ".max_flat_workgroup_size",
            "vgpr_spills": ".vgpr_spill_count",
            "sgpr_spills": ".sgpr_spill_count",
        }
        for column, key in note.items():
            assert number(r[column]) == k.get(key), (r["kernel"], column)
        assert r["dynamic_stack"] == str(bool(k.get(".uses_dynamic_stack")))
        assert r["symbol"] == k[".symbol"] and r["target"] == r["processor"]


def test_occupancy_at_the_declared_size_matches_hand_worked_hip(capsys, tree):
    """HIP by hand (docs/hip-occupancy.md §2; gfx942: 512 VGPRs, granule 8, 8 waves per SIMD, 4 SIMDs):
    diff k_main 64 VGPRs + 16 KiB LDS at 256 → min(8 by VGPRs, 4 by LDS) = 4 (test_diff);
    k_other 24 VGPRs at 1024 → 8 waves per SIMD, 32 per CU / 16 = 2; k_low_occupancy 160 VGPRs
    at 256 → 3 waves per SIMD, 12 per CU / 4 = 3; k_launch_miss 132 VGPRs at 1024 → 12 / 16 = 0."""
    rows = {(r["member"], r["kernel"]): r for r in csv_rows(capsys, tree)}
    expect = {
        ("diff/diff_base.hsaco", "k_main"): (256, 4, "lds"),
        ("diff/diff_base.hsaco", "k_other"): (1024, 2, "waves"),
        ("check/check_gfx942.hsaco", "k_low_occupancy"): (256, 3, "vgpr"),
        ("check/check_gfx942.hsaco", "k_launch_miss"): (1024, 0, "vgpr"),
        ("check/check_gfx942.hsaco", "k_reqd"): (256, 3, "vgpr"),
    }
    for key, (block, blocks, limiter) in expect.items():
        r = rows[key]
        assert (number(r["block_size"]), number(r["blocks_per_cu"]), r["limiter"]) == (block, blocks, limiter), key
    assert rows[("check/check_gfx942.hsaco", "k_reqd")]["block_source"] == "reqd_workgroup_size"
    # --block replaces the declared size: k_other at 256 → 32 waves per CU / 4 = 8.
    rows = {r["kernel"]: r for r in csv_rows(capsys, "--block", "256", D / "diff_base.hsaco")}
    assert (number(rows["k_other"]["blocks_per_cu"]), rows["k_other"]["block_source"]) == (8, "given")


def test_cannot_launch_and_problems(capsys, tree):
    rows = csv_rows(capsys, tree)
    blocked = {(r["member"], r["kernel"]): r["cannot_launch"] for r in rows if r["cannot_launch"]}
    expected = {}
    for folder, f in (("check", LIB1), ("check", LIB2), ("check", LDS)):
        for (kernel, rule), value in expected_violations(f).items():
            if rule == "launch":
                expected[(f"{folder}/{f.name}", kernel)] = value
    assert blocked == expected and len(expected) == 3
    problems = {r["kernel"]: r["problem"] for r in rows if r["problem"]}
    assert list(problems) == ["k_dynamic_vgpr"] and "dynamic-VGPR mode" in problems["k_dynamic_vgpr"]
    dvgpr = next(r for r in rows if r["kernel"] == "k_dynamic_vgpr")
    assert dvgpr["blocks_per_cu"] == "" and dvgpr["limiter"] == ""


def test_parquet_has_the_csv_rows(capsys, tmp_path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        if REQUIRE:
            raise
        pytest.skip("pyarrow is not installed (the test extra installs it)")
    out = tmp_path / "census.parquet"
    code, _, _ = census(capsys, "--parquet", out, LIB1)
    assert code == 0
    table = pq.read_table(out).to_pylist()
    rows = csv_rows(capsys, LIB1)
    assert [t["kernel"] for t in table] == [r["kernel"] for r in rows] == list(kernels_of(LIB1))
    for t, r in zip(table, rows, strict=True):
        assert t["vgprs"] == int(r["vgprs"]) and t["vgpr_spills"] == int(r["vgpr_spills"])
        assert t["waves_per_simd"] == float(r["waves_per_simd"])


def test_parquet_without_pyarrow_is_a_usage_error(capsys, tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    code, out, err = census(capsys, "--parquet", tmp_path / "x.parquet", LIB1)
    assert code == 2 and out == "" and "--parquet needs pyarrow" in err and err.count("\n") == 1
    assert not (tmp_path / "x.parquet").exists()


def test_summary_json_and_text(capsys, tree):
    code, out, _ = census(capsys, "--json", tree)
    s = json.loads(out)
    oracle = oracle_kernels()
    assert code == 0 and s["kernels"] == len(oracle) and s["files"] == len(CHECK_FILES) + len(DIFF_FILES)
    assert {t: v["kernels"] for t, v in s["targets"].items()} == oracle_targets()
    # Every fixture kernel carries spill counts; only the dynamic-VGPR one cannot be launch-checked.
    no_counts = sum(".vgpr_spill_count" not in k for k in oracle.values())
    assert sum(t["no_spill_counts"] for t in s["targets"].values()) == no_counts == 0
    assert {t: v["launch_unchecked"] for t, v in s["targets"].items()} == {"gfx942": 0, "gfx1200": 1}
    spilling = sorted(
        ((k.get(".vgpr_spill_count") or 0) + (k.get(".sgpr_spill_count") or 0), name)
        for (_, name), k in oracle.items()
        if k.get(".vgpr_spill_count") or k.get(".sgpr_spill_count")
    )
    top = [(r["vgpr_spills"] + r["sgpr_spills"], r["kernel"]) for r in s["top_spillers"]]
    assert sorted(top) == spilling
    code, out, _ = census(capsys, tree)
    assert f"{len(oracle)} kernel(s)" in out.splitlines()[0] and "cannot launch at their declared size:" in out


def test_member_path_leaves_packing_out():
    hops = ("section .hip_fatbin", "CCOB v3 zstd@0x1000", "bundle@+0x0", "hipv4-amdgcn-amd-amdhsa--gfx942")
    assert member_of("lib/libk.so", hops) == "lib/libk.so"
    assert member_of("", ("OffloadBinary@0x48", "hip-amdgcn-amd-amdhsa-gfx942")) == ""
    # A hop naming a file inside an archive (a wheel member) is kept, without its offset.
    assert (
        member_of("", ("torch/lib/libtorch_hip.so@0x1f000", "section .hip_fatbin", "bundle@0x0"))
        == "torch/lib/libtorch_hip.so"
    )


# --------------------------------------------------------------------------- selection and names


def test_target_and_kernel_select_as_everywhere(capsys, tree):
    targets = oracle_targets()
    rows = csv_rows(capsys, "--target", "gfx1200", tree)
    assert len(rows) == targets["gfx1200"] and {r["target"] for r in rows} == {"gfx1200"}
    code, out, err = census(capsys, "--target", "gfx1100", tree)
    assert code == 2 and f"built for {', '.join(sorted(targets))}" in err and " 0 kernel(s)" in out.splitlines()[0]
    code, _, err = census(capsys, "--kernel", "no_such_kernel", tree)
    assert code == 2 and f"which hold {len(oracle_kernels())} kernels" in err


def test_per_wgp_kernels_say_so(capsys):
    """RDNA kernels in WGP mode (.workgroup_processor_mode 1 in LLVM's notes) count workgroups per
    WGP, and the row says so by name; CU-mode kernels count per CU."""
    for name in ("gfx1100_w32_wgp_cov6.hsaco", "gfx1101_w32_cu_cov5.hsaco"):
        path = FIXTURES / "elf" / name
        modes = {n: k[".workgroup_processor_mode"] for n, k in kernels_of(path).items()}
        for r in csv_rows(capsys, path):
            unit = "WGP" if modes[r["kernel"]] else "CU"
            assert r["unit"] == unit and r["blocks_per_wgp"] == (r["blocks_per_cu"] if unit == "WGP" else "")


@pytest.mark.llvm22
def test_names_are_demangled_as_llvm_cxxfilt_prints_them(capsys, tmp_path):
    from test_demangle import cxxfilt

    path = FIXTURES / "elf" / "gfx1100_w32_wgp_cov6.hsaco"
    rows = csv_rows(capsys, path)
    assert [r["demangled"] for r in rows] == cxxfilt([r["kernel"] for r in rows])
    # Reports list kernels by their demangled names (--mangled: as stored). With dynamic LDS past
    # gfx1100's per-workgroup limit (as llc-22 states it) no workgroup launches, so the kernel is
    # listed among those that cannot launch.
    mangled = "_Z15scratch_privatePKiPf"
    (readable,) = cxxfilt([mangled])
    over = ["--dynamic-lds", str(llc_lds_limit_of("gfx1100", tmp_path) + 1), "--kernel", mangled, path]
    code, out, _ = census(capsys, *over)
    assert code == 0 and readable in out.split("cannot launch at their declared size:")[1] and mangled not in out
    code, out, _ = census(capsys, "--mangled", *over)
    assert mangled in out and readable not in out
    page = census(capsys, "--html", "-", *over)[1]
    # Shown demangled; the mangled name is kept only in the cell's title (shown on hover).
    titles = re.findall(r' title="([^"]*)"', page)
    assert html.escape(readable, quote=False) in page and mangled not in re.sub(r' title="[^"]*"', "", page)
    assert f"{html.escape(readable)}\n{mangled}" in titles


# --------------------------------------------------------------------------- two releases


@pytest.fixture
def releases(tmp_path) -> tuple[Path, Path]:
    """Release 1 and 2 of a library with the same kernel names in two members."""
    old, new = tmp_path / "v1", tmp_path / "v2"
    for root, b, extra in ((old, "diff_base.hsaco", LDS), (new, "diff_more_vgpr.hsaco", DVGPR)):
        (root / "lib").mkdir(parents=True)
        shutil.copyfile(D / "diff_base.hsaco", root / "lib" / "a.hsaco")
        shutil.copyfile(D / b, root / "lib" / "b.hsaco")
        shutil.copyfile(extra, root / extra.name)
    return old, new


def test_compare_matches_by_member_kernel_and_target(capsys, releases):
    old, new = releases
    code, out, _ = census(capsys, "--json", old, new)
    result = json.loads(out)
    assert code == 0  # no --fail-on: a report, not a gate
    (change,) = result["changes"]  # only b's k_main changed; a's k_main did not
    assert (change["member"], change["kernel"], change["target"]) == ("lib/b.hsaco", "k_main", "gfx942")
    # From the compiler's listings (test_diff): 64 -> 160 VGPRs, 4 -> 3 workgroups at 256.
    assert (change["old"]["vgpr"], change["new"]["vgpr"]) == (64, 160)
    assert (change["old"]["blocks_per_cu"], change["new"]["blocks_per_cu"]) == (4, 3)
    assert change["regressions"] == ["occupancy", "vgpr"] and change["fails"] == []
    # A C name demangles to itself (llvm-cxxfilt prints it unchanged).
    assert result["added"] == [
        {
            "member": DVGPR.name,
            "kernel": "k_dynamic_vgpr",
            "demangled": "k_dynamic_vgpr",
            "target": "gfx1200",
            "copy": 0,
        }
    ]
    assert {(r["member"], r["kernel"]) for r in result["removed"]} == {(LDS.name, k) for k in kernels_of(LDS)}
    assert result["matched"] == 4
    code, out, _ = census(capsys, "--fail-on", "occupancy", old, new)
    assert code == 1 and "FAIL occupancy" in out and "1 kernel(s) regress on occupancy" in out
    assert census(capsys, "--fail-on", "lds", old, new)[0] == 0
    # The verdict names the kinds that regressed, not every kind the gate watches (as diff's).
    code, out, _ = census(capsys, "--fail-on", "lds,occupancy", old, new)
    assert code == 1 and out.strip().splitlines()[-1] == "1 kernel(s) regress on occupancy"
    failed = json.loads(census(capsys, "--json", "--fail-on", "all", old, new)[1])["failed_kinds"]
    assert failed == ["occupancy", "vgpr"]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["a", "b", "c"], "census takes one PATH, or OLD NEW to compare, not 3 paths"),
        (["--csv", "x.csv", "a", "b"], "--csv apply to a census of one PATH, not to a comparison"),
        (["--fail-on", "vgpr", "a"], "--fail-on applies to a comparison (census OLD NEW), not to one PATH"),
        (["--json", "--csv", "-", "a"], "only one of --json, --csv - and --html - may use standard output"),
        (["--top", "5", "a", "b"], "--top: lists the top spillers of a census of one PATH"),
        (["--csv", "-", "--top", "5", "a"], "--top: lists spillers in the summary, and --csv - replaces it"),
        (["--json", "--mangled", "a"], "--mangled: names are shown only in the text and HTML reports"),
        (["--csv", "-", "--mangled", "a"], "--mangled: names are shown only in the text and HTML reports"),
        (["--what-if", "a"], "--what-if needs --target or --device"),
    ],
)
def test_usage_errors(capsys, argv, words):
    code, out, err = census(capsys, *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--block", "0", "a"],
            "argument --block: '0' is out of range: expected a workgroup size in threads from 1 to 1024",
        ),
        (["--top", "0", "a"], "argument --top: '0' is out of range: expected an integer >= 1"),
        (
            ["--fail-on", "speed", "a", "b"],
            "argument --fail-on: unknown kind 'speed' (choose from occupancy, spills, "
            "scratch, vgpr, lds, spills-in-loops, live-vgpr; or all, none)",
        ),
        (["--parquet", "-", "a"], "argument --parquet: '-': this is not written to standard output; give a file name"),
        (["--kernel", "(", "a"], "argument --kernel: '(' is not a regular expression"),
    ],
)
def test_bad_values_exit_2(capsys, argv, words):
    # The argument contract (cli/args.py): argparse's one-line usage, then what is wrong.
    code = main(["census", *argv])
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.startswith("usage: amdocc census") and err.count("\n") == 2, err


def test_unreadable_file_in_a_tree_exits_2_and_the_rest_is_reported(capsys, tmp_path):
    shutil.copyfile(LIB1, tmp_path / "good.hsaco")
    (tmp_path / "bad.hsaco").write_bytes(b"\x7fELF" + b"\0" * 12)
    code, out, err = census(capsys, "--json", tmp_path)
    assert code == 2 and json.loads(out)["kernels"] == len(kernels_of(LIB1)) and "bad.hsaco" in err


# --------------------------------------------------------------------------- the HTML report


class Dom(HTMLParser):
    """Sections, and the marks each chart draws, of a page as the browser serialised it."""

    def __init__(self):
        super().__init__()
        self.sections: list[str] = []
        self.charts: list[dict] = []
        self.tables: dict[str, int] = {}
        self._table = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id"))
        elif tag == "svg":
            self.charts.append({"class": a.get("class", ""), "label": a.get("aria-label"), "marks": []})
        elif tag == "rect" and a.get("class") in ("bar", "share"):
            self.charts[-1]["marks"].append(a)
        elif tag == "table":
            self._table = a.get("class")
            self.tables[self._table] = 0
        elif tag == "tr" and self._table is not None:
            self.tables[self._table] += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if REQUIRE:
            pytest.fail("chromium is not installed (.ci/setup-tests.sh installs Debian's chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def browse(page: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            *flags,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_html_report_in_headless_chromium(capsys, tree, tmp_path):
    page = tmp_path / "census.html"
    assert census(capsys, "--html", page, tree)[0] == 0
    text = page.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in text
    assert "<script" not in text and "<link" not in text and "<img" not in text  # nothing to fetch
    shown = browse(page, "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = Dom()
    dom.feed(shown.stdout)
    assert dom.sections == ["summary", "targets", "occupancy", "limiters", "spills", "launch", "findings", "inputs"]
    oracle = oracle_kernels()
    targets = oracle_targets()
    occupancy = {c["label"].split(":")[0]: c for c in dom.charts if "occupancy" in c["class"]}
    assert set(occupancy) == set(targets)
    for target, chart in occupancy.items():
        assert sum(int(m["data-count"]) for m in chart["marks"]) == targets[target]
    (limiters,) = [c for c in dom.charts if "limiters" in c["class"]]
    assert {m["data-group"] for m in limiters["marks"]} == set(targets)
    assert sum(int(m["data-count"]) for m in limiters["marks"]) == len(oracle)
    (spills,) = [c for c in dom.charts if "spills" in c["class"]]
    spilled = sorted(
        (k.get(".vgpr_spill_count") or 0) + (k.get(".sgpr_spill_count") or 0)
        for k in oracle.values()
        if k.get(".vgpr_spill_count") or k.get(".sgpr_spill_count")
    )
    assert sorted(int(m["data-count"]) for m in spills["marks"]) == spilled
    launch_rows = sum(1 for f in (LIB1, LIB2, LDS) for (_, rule) in expected_violations(f) if rule == "launch")
    assert dom.tables["launch"] == launch_rows + 1  # + the header row
    (blocked,) = [c for c in dom.charts if "launch" in c["class"]]
    assert sum(int(m["data-count"]) for m in blocked["marks"]) == launch_rows


def test_screenshot_shows_the_plots(capsys, tree, tmp_path):
    image = pytest.importorskip("PIL.Image")
    page, shot = tmp_path / "census.html", tmp_path / "census.png"
    assert census(capsys, "--html", page, tree)[0] == 0
    shown = browse(page, f"--screenshot={shot}", "--window-size=1280,3200", "--hide-scrollbars")
    assert shown.returncode == 0 and shot.is_file(), shown.stderr[-2000:]
    colours = {colour for _, colour in image.open(shot).convert("RGB").getcolors(maxcolors=1 << 24)}

    def rgb(hex_colour):
        return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))

    # Histogram bars (first series colour), limiter shares (waves, vgpr, lds), spill bars.
    for colour in (PALETTE[0], LIMITER_COLOURS["waves"], LIMITER_COLOURS["lds"], PALETTE[3]):
        assert rgb(colour) in colours, colour


def test_compare_html(capsys, releases, tmp_path):
    old, new = releases
    page = tmp_path / "compare.html"
    assert census(capsys, "--html", page, old, new)[0] == 0
    shown = browse(page, "--dump-dom")
    dom = Dom()
    dom.feed(shown.stdout)
    assert dom.sections == ["summary", "regressions", "changes", "added", "removed", "occupancy"]
    assert dom.tables["regressions"] == 2 and dom.tables["added"] == 2
    assert dom.tables["removed"] == 1 + len(kernels_of(LDS))
    series = {m["data-series"] for c in dom.charts for m in c["marks"]}
    assert series == {"old", "new"}


def test_a_library_cut_into_pieces_in_a_tree_gives_the_serial_census(capsys, monkeypatch, tmp_path):
    """A large library found in a walk is cut into pieces for the workers (containers.plan); its
    rows still name it by its path in the tree, as one process names it."""
    from amdocc.app import parallel
    from amdocc.containers import pieces

    lib = tmp_path / "tree" / "lib"
    lib.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "containers" / "libhip_two_tu_plain.so", lib / "libhip_two_tu_plain.so")
    shutil.copyfile(LIB1, lib / LIB1.name)  # two files: --jobs 2 makes a pool
    monkeypatch.setattr(parallel, "SPLIT_BYTES", 0)  # every file counts as large
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # one container per piece
    serial = csv_rows(capsys, "--jobs", "1", tmp_path / "tree")
    pooled = csv_rows(capsys, "--jobs", "2", tmp_path / "tree")
    assert serial and pooled == serial
    assert {r["member"] for r in serial} == {"lib/libhip_two_tu_plain.so", f"lib/{LIB1.name}"}


def test_progress_on_a_terminal_only(capsys, monkeypatch):
    """One file is counted in kernels as it is read, on stderr, and only on a terminal."""
    import sys

    assert census(capsys, "--csv", "/dev/null", LIB1)[2] == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr("time.monotonic", iter(range(0, 10**6, 10)).__next__)
    code, _out, err = census(capsys, "--csv", "/dev/null", LIB1)
    assert code == 0 and f"\r{len(kernels_of(LIB1))} kernels read" in err and err.endswith("\r")
    # Without a sink too: the count moves as each kernel is read, not once at the end.
    code, _out, err = census(capsys, "--jobs", "1", LIB1)
    assert len(kernels_of(LIB1)) > 1 and code == 0 and "\r1 kernels read" in err
