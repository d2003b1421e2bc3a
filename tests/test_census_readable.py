"""The census report as people read it: the occupancy histogram has quarter-wave buckets (a
kernel that launches one wave per CU is 0.25 waves per SIMD, not 0) and an axis that spans the
processor's range; long names are cut to one line with the whole name on hover; an empty section
says "none". Opened in headless Chromium as test_census does (the screenshot is also written to
the test's directory for a person to look at).

Kernels are made by llvm-mc-22/ld.lld-22 (amdocc.testing.synth) with the metadata chosen, read
back by llvm-readelf-22; the occupancy values are HIP's rule worked by hand."""

from __future__ import annotations

import json
import re

import pytest

from amdocc.census import _bucket
from amdocc.census.html import buckets
from amdocc.testing import SynthSpec, synthesize
from oracle import llvm22
from test_census import Dom, browse, census

pytestmark = pytest.mark.llvm22

LONG = "k_" + "with_a_name_longer_than_any_table_column_" * 6  # 254 characters, a C name
# gfx942 (wave64, 4 SIMDs, 64 KiB LDS per CU): a 64-thread workgroup is one wave. With 65536 B of
# static LDS one workgroup fits (65536 / 65536), so one wave on four SIMDs: 0.25 waves per SIMD.
# With 64 VGPRs and no LDS, 512/64 = 8 waves per SIMD, HIP's cap on gfx9 (MaxWavesPerSimd = 8 when
# the ISA major is 9 or less: docs/hip-occupancy.md section 4, step 2), so 8. With 256 VGPRs,
# 512/256 = 2 waves per SIMD, 8 per CU, and a 1024-thread workgroup is 16 waves: it cannot launch
# (0), and is listed, under its long name, among the kernels that cannot.
QUARTER = SynthSpec("gfx942", 32, 0, 16, 65536, max_flat_workgroup_size=64, name="k_quarter")
FULL = SynthSpec("gfx942", 64, 0, 16, 0, max_flat_workgroup_size=64, name="k_full")
BLOCKED = SynthSpec("gfx942", 256, 0, 16, 0, max_flat_workgroup_size=1024, name=LONG)
HIP_MAX_WAVES_GFX9 = 8


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    for spec in (QUARTER, FULL, BLOCKED):
        path = root / f"{spec.name[:20]}.hsaco"
        synthesize(spec, path)
        (note,) = llvm22.readelf([str(path)])[str(path)]["metadata"][0]["amdhsa.kernels"]
        assert (note[".name"], note[".group_segment_fixed_size"]) == (spec.name, spec.lds)
    return root


def test_a_quarter_wave_is_its_own_bucket_and_the_axis_spans_the_processor(capsys, tree):
    code, out, _ = census(capsys, "--json", tree)
    t = json.loads(out)["targets"]["gfx942"]
    assert code == 0 and t["occupancy"] == {"0": 1, "0.25": 1, "8": 1}
    assert t["max_waves_per_simd"] == HIP_MAX_WAVES_GFX9
    assert buckets(t["occupancy"], t["max_waves_per_simd"]) == ["0", "0.25", *map(str, range(1, 9))]


@pytest.mark.parametrize(
    "waves, bucket", [(None, "n/a"), (0, "0"), (0.25, "0.25"), (0.4, "0.25"), (1.5, "1.5"), (3, "3"), (7.99, "7.75")]
)
def test_buckets_are_a_quarter_wave_wide(waves, bucket):
    assert _bucket(waves) == bucket


def test_the_html_cuts_long_names_keeps_them_on_hover_and_says_none(capsys, tree, tmp_path):
    page, shot = tmp_path / "census.html", tmp_path / "census.png"
    assert census(capsys, "--html", page, tree)[0] == 0
    text = page.read_text()
    shown = browse(page, "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    dom = Dom()
    dom.feed(shown.stdout)
    (chart,) = [c for c in dom.charts if "occupancy" in c["class"]]
    counts = {m["data-category"]: int(m["data-count"]) for m in chart["marks"]}
    assert counts == {**{str(i): 0 for i in range(9)}, "0": 1, "0.25": 1, "8": 1}
    # The long name: its cell is one line, cut with an ellipsis, and the whole name is its title.
    cells = re.findall(r'<td class="name" title="([^"]*)">([^<]*)</td>', shown.stdout)
    assert (LONG, LONG) in cells
    assert "td.name { max-width: 24em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }" in text
    # Nothing spills, nothing is skipped or unreadable, no finding: those sections say so.
    for section in ("findings", "inputs"):
        body = re.search(rf'<section id="{section}">(.*?)</section>', shown.stdout, re.S).group(1)
        assert "<table" not in body and re.search(r'<p class="none[^"]*">[^<]*none</p>', body)
    assert "entries skipped: none" in shown.stdout and "unreadable parts: none" in shown.stdout
    assert browse(page, f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars").returncode == 0
    assert shot.stat().st_size > 0
