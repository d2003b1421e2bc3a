"""amdocc sweep --plot: the plotted data, read back from the figure's artists, is what
``amdocc occupancy`` answers at the same inputs and what HIP's arithmetic gives by hand.

Expected values come from the worked examples of docs/hip-occupancy.md §5 and from its
§2 algorithm worked by hand (``oracle.hip_reference``), from LLVM's reading of the fixtures'
metadata (the default block), and from ``amdocc occupancy --json`` for the star.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import FIXTURES, ROOT, needs
from oracle.hip_reference import hip_blocks

needs("matplotlib", "the plot tests render with it (amdocc[plot])")

from amdocc.cli import plot  # noqa: E402  (needs matplotlib only when drawing)
from amdocc.models import usage_of  # noqa: E402

SAMPLE = str(amdocc.samples_path())


# --- reading the figure back ------------------------------------------------------------------------


def read_panels(fig) -> dict:
    """{panel: {"xs", "ys", "star", "workgroups", "title", "ylabel", "axes", "twin", "flat"}}."""
    out = {}
    for ax in fig.axes:
        gid = ax.get_gid() or ""
        if gid in ("block", "lds", "vgpr"):
            (line,) = [ln for ln in ax.lines if ln.get_gid() == "occupancy"]
            stars = [c for c in ax.collections if c.get_gid() == "star"]
            flat = [ln for ln in ax.lines if ln.get_gid() == "flat-range"]
            out[gid] = {
                "xs": [int(x) for x in line.get_xdata()],
                "ys": list(line.get_ydata()),
                "star": tuple(float(v) for v in stars[0].get_offsets()[0]) if stars else None,
                "title": ax.get_title(),
                "ylabel": ax.get_ylabel(),
                "axes": ax,
                "twin": None,
                "workgroups": None,
                "flat": flat[0].get_ydata()[0] if flat else None,
            }
        elif gid.endswith(":workgroups"):
            (line,) = [ln for ln in ax.lines if ln.get_gid() == "workgroups"]
            panel = out[gid.split(":")[0]]
            panel["workgroups"] = list(line.get_ydata())
            panel["twin"] = ax
    return out


def figure_of(usage, model="hip", options=None, block=None, dynamic_lds=0, device=None):
    return plot.build_figure(plot.Point(usage, model, options or {}, block, dynamic_lds, device), title="t")


def sweep_figure(monkeypatch, tmp_path, *argv):
    """Run `amdocc sweep ... --plot` and keep the figure it drew."""
    figures = []
    real = plot.build_figure

    def keep(*args, **kwargs):
        figures.append(real(*args, **kwargs))
        return figures[-1]

    monkeypatch.setattr(plot, "build_figure", keep)
    out = tmp_path / "sweep.svg"
    assert main(["sweep", *argv, "--plot", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml")
    (fig,) = figures
    return read_panels(fig)


def occupancy_json(capsys, *argv) -> list[dict]:
    capsys.readouterr()
    assert main(["occupancy", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)["results"]


def same(a, b) -> bool:
    return (a is None and math.isnan(b)) or (a is not None and not math.isnan(b) and abs(a - b) < 1e-9)


def value_at(xs, ys, x):
    """The drawn value at x of a steps-post curve."""
    i = max(i for i, v in enumerate(xs) if v <= x)
    return ys[i]


# --- the star is where `amdocc occupancy` evaluates the kernel --------------------------------------


@pytest.mark.parametrize(
    "kernel, block, source", [("vector_add", 256, "max_flat_workgroup_size"), ("lds_reduce", 64, "reqd_workgroup_size")]
)
def test_star_at_the_default_block_of_amdocc_occupancy(monkeypatch, tmp_path, capsys, kernel, block, source):
    # The default block from LLVM's reading of the note: .reqd_workgroup_size 64x1x1 for lds_reduce,
    # .max_flat_workgroup_size 256 for vector_add (see test_cli's oracle test).
    fixture = str(FIXTURES / "elf" / "opencl_gfx942_cov6.hsaco")
    (r,) = occupancy_json(capsys, "--kernel", f"^{kernel}$", fixture)
    assert (r["block_size"], r["block_source"]) == (block, source)
    panels = sweep_figure(monkeypatch, tmp_path, "--kernel", f"^{kernel}$", fixture)
    for name in ("block", "lds", "vgpr"):
        p = panels[name]
        assert p["star"][1] == r["waves_per_simd"], name
    assert panels["block"]["star"][0] == block
    assert panels["lds"]["star"][0] == 0
    # The star is one of its curve's points, and the workgroups curve there is the JSON's.
    for name, p in panels.items():
        i = p["xs"].index(int(p["star"][0]))
        assert p["ys"][i] == p["star"][1] and p["workgroups"][i] == r["blocks_per_cu"], name


def test_star_takes_the_given_dynamic_lds_and_device(monkeypatch, tmp_path, capsys):
    args = ("--kernel", "saxpy_lds", "--device", "MI300X", "--dynamic-lds", "12288", SAMPLE)
    (r,) = occupancy_json(capsys, *args)
    panels = sweep_figure(monkeypatch, tmp_path, *args)
    assert panels["lds"]["star"] == (12288, r["waves_per_simd"])
    assert panels["block"]["star"] == (r["block_size"], r["waves_per_simd"])
    assert "dynamic LDS 12288 B" in panels["vgpr"]["title"] and "dynamic LDS 12288 B" in panels["block"]["title"]


def test_every_sample_kernel_star_matches_occupancy_json(capsys):
    # Every kernel of the shipped sample on its own processor with the hip model; the llvm and hw
    # models on one CDNA and one RDNA kernel (a figure costs a few tenths of a second).
    for model in ("hip", "llvm", "hw"):
        results = {
            (r["target"].split(":")[0], r["kernel"]): r for r in occupancy_json(capsys, "--model", model, SAMPLE)
        }
        for co in amdocc.load(SAMPLE):
            for k in co.kernels:
                if model != "hip" and (co.processor, k.name) not in (
                    ("gfx942", "_Z9reg_heavyPKfPf"),
                    ("gfx1100", "_Z9saxpy_ldsfPKfPfi"),
                ):
                    continue
                r = results[(co.processor, k.name)]
                usage = usage_of(k)
                panels = read_panels(figure_of(usage, model, block=r["block_size"]))
                for name, p in panels.items():
                    if p["star"] is None:  # llvm over the flat range: a line, not a point
                        assert name == "block" and model == "llvm" and p["flat"] == r["waves_per_simd"]
                        continue
                    assert p["star"][1] == r["waves_per_simd"], (model, co.processor, k.name, name)
                    star = (int(p["star"][0]), p["star"][1])
                    assert star in zip(p["xs"], p["ys"], strict=True), (model, k.name, name)


# --- the curves: exact at every input, equal to amdocc.occupancy and to HIP by hand -----------------


def test_curves_equal_amdocc_occupancy_at_every_point():
    k = amdocc.load(SAMPLE)[3].kernel("_Z9reg_heavyPKfPf")  # gfx942
    usage = usage_of(k)
    panels = read_panels(figure_of(usage, block=256, dynamic_lds=4096))
    assert panels["block"]["xs"] == list(range(1, 1025))  # every block size
    assert set(range(1, 513)) <= set(panels["vgpr"]["xs"])  # every VGPR count
    for name, p in panels.items():
        for x, y, wg in zip(p["xs"], p["ys"], p["workgroups"], strict=True):
            if name == "block":
                occ = amdocc.occupancy(k, block_size=x, dynamic_lds=4096)
            elif name == "lds":
                occ = amdocc.occupancy(k, block_size=256, dynamic_lds=x)
            else:
                occ = amdocc.occupancy(usage.with_(vgprs=x), block_size=256, dynamic_lds=4096)
            assert same(occ.waves_per_simd, y) and same(occ.blocks_per_cu, wg), (name, x)


# ids without the bare word "hip": conftest treats a "hip" keyword as "needs a ROCm GPU".
@pytest.mark.parametrize("model", ["hip", "llvm", "hw"], ids=lambda m: f"{m}-model")
def test_lds_curve_is_exact_at_every_byte(model):
    # One-wave blocks of a light kernel: the wave slots allow 32 per CU and the LDS limit
    # 65536 // d falls through every count below that, a step every few hundred bytes. Every
    # byte of the dense stretch, and every 61st beyond, is read off the drawn steps.
    usage = usage_of({"vgprs": 16}, target="gfx942")
    p = read_panels(figure_of(usage, model, block=64))["lds"]
    assert p["xs"][0] == 0 and p["xs"][-1] == 65536
    assert len(set(p["ys"])) >= 8  # many steps: the check below is not vacuous
    for d in [*range(16385), *range(16385, 65537, 61)]:
        want = amdocc.occupancy(usage, block_size=64, dynamic_lds=d, model=model).waves_per_simd
        assert value_at(p["xs"], p["ys"], d) == want, d


def test_hand_worked_gfx942_example_1():
    # docs/hip-occupancy.md §5 example 1: min(1024/256 = 4, 65536/49152 = 1) = 1 block; 1 block of 4 waves on 4 SIMDs.
    usage = usage_of({"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942")
    panels = read_panels(figure_of(usage, block=256))
    for p in panels.values():
        assert p["star"][1] == 1
        i = p["xs"].index(int(p["star"][0]))
        assert p["workgroups"][i] == 1
    for b, wg in zip(panels["block"]["xs"], panels["block"]["workgroups"], strict=True):
        assert wg == hip_blocks("gfx942", 128, b, sgprs=40, lds=49152), b
    # 65536 // (49152 + d) is 1 for every dynamic LDS a workgroup can still have (up to 16 KiB).
    assert set(panels["lds"]["workgroups"]) == {1} and panels["lds"]["xs"][-1] == 16384
    for v, wg in zip(panels["vgpr"]["xs"], panels["vgpr"]["workgroups"], strict=True):
        assert wg == hip_blocks("gfx942", v, 256, sgprs=40, lds=49152), v
    # Without the LDS the same kernel gives 4 (docs/hip-occupancy.md §5), and the VGPR curve steps at HIP's granule 8.
    free = read_panels(figure_of(usage.with_(lds=0), block=256))
    assert free["block"]["star"] == (256, 4.0)
    # 512 // alignUp(v, 8) waves x 4 SIMDs x 64 lanes / 256 threads.
    vgprs = (64, 128, 129, 168, 169, 256, 257, 512)
    assert {v: free["vgpr"]["workgroups"][free["vgpr"]["xs"].index(v)] for v in vgprs} == {
        64: 8,
        128: 4,
        129: 3,
        168: 3,
        169: 2,
        256: 2,
        257: 1,
        512: 1,
    }
    for v, wg in zip(free["vgpr"]["xs"], free["vgpr"]["workgroups"], strict=True):
        assert wg == hip_blocks("gfx942", v, 256, sgprs=40), v


def test_hand_worked_gfx1100_example_4_per_wgp_with_the_bit_mask():
    # docs/hip-occupancy.md §5 example 4: gfx1100 wave32 in WGP mode, 100 VGPRs, block 256: alignUp(100, 24) = 104 by
    # the bit mask, 1536/104 = 14 waves, 4 SIMDs x 14 x 32 = 1792 threads: 7 blocks per WGP.
    usage = usage_of({"vgprs": 100}, target="gfx1100")
    panels = read_panels(figure_of(usage, block=256))
    assert panels["block"]["star"] == (256, 14.0)
    for p in panels.values():
        assert p["workgroups"][p["xs"].index(int(p["star"][0]))] == 7
        assert p["twin"].get_ylabel() == "workgroups per WGP"
    # The VGPR curve follows the bit mask, not true rounding: not monotone (e.g. 104 vs 105).
    vg = dict(zip(panels["vgpr"]["xs"], panels["vgpr"]["workgroups"], strict=True))
    for v, wg in vg.items():
        assert wg == hip_blocks("gfx1100", v, 256, wave=32, wgp=True), v
    assert any(vg[v + 1] > vg[v] for v in range(1, 255))
    for b, wg in zip(panels["block"]["xs"], panels["block"]["workgroups"], strict=True):
        assert wg == hip_blocks("gfx1100", 100, b, wave=32, wgp=True), b


def test_hand_worked_gfx942_example_5_sgpr_bound():
    # docs/hip-occupancy.md §5 example 5: 92 SGPRs, 32 VGPRs, block 64: 800 / (96 + 16) = 7 waves
    # → 28 blocks of one wave on 4 SIMDs = 7 waves per SIMD (rocm-systems PR #10618's figure).
    # With the trap reserve (develop); the default, rocm-7.14, predates it: 800 / 96 = 8 -> 32.
    usage = usage_of({"vgprs": 32, "sgprs": 92}, target="gfx942")
    p = read_panels(figure_of(usage, options={"profile": "develop"}, block=64))["block"]
    assert p["star"] == (64, 7.0)
    assert p["workgroups"][p["xs"].index(64)] == 28
    p = read_panels(figure_of(usage, block=64))["block"]
    assert p["star"] == (64, 8.0)
    assert p["workgroups"][p["xs"].index(64)] == 32


# --- what the axes say -----------------------------------------------------------------------------


def test_titles_name_the_inputs_held_and_axes_are_occupancy_first():
    usage = usage_of({"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942")
    fig = figure_of(usage, block=256, dynamic_lds=1024)
    fig.draw_without_rendering()  # tick labels are made at draw time
    panels = read_panels(fig)
    assert "dynamic LDS 1024 B" in panels["block"]["title"] and "VGPRs 128" in panels["block"]["title"]
    assert "block 256" in panels["lds"]["title"] and "VGPRs 128" in panels["lds"]["title"]
    assert "block 256" in panels["vgpr"]["title"] and "dynamic LDS 1024 B" in panels["vgpr"]["title"]
    for p in panels.values():
        assert "waves per SIMD" in p["ylabel"] and p["twin"].get_ylabel() == "workgroups per CU"
        # Nsight-style: the primary axis spans the model's wave slots (HIP: 8 on gfx9), with %.
        lo, hi = p["axes"].get_ylim()
        assert lo == 0 and 8 <= hi < 9
        labels = [t.get_text() for t in p["axes"].get_yticklabels()]
        assert "8 (100%)" in labels and "4 (50%)" in labels


def test_axes_never_degenerate_and_ticks_are_integers():
    # Static LDS filling the workgroup's 64 KiB leaves no room for dynamic LDS: the LDS axis is
    # a single input, still drawn over a real range.
    for usage in (
        usage_of({"vgprs": 32, "lds": 65536}, target="gfx942"),
        usage_of({"vgprs": 100, "max_flat_workgroup_size": 32}, target="gfx1100"),
        usage_of({"vgprs": 200}, target="gfx942"),
    ):
        panels = read_panels(figure_of(usage, block=32))
        for name, p in panels.items():
            for ax in (p["axes"], p["twin"]):
                xlo, xhi = ax.get_xlim()
                ylo, yhi = ax.get_ylim()
                assert xhi > xlo and yhi > ylo, name
                assert all(float(t).is_integer() for t in ax.get_yticks()), name
            assert all(float(t).is_integer() for t in p["axes"].get_xticks()), name
        room = panels["lds"]["xs"][-1]
        assert ("none fits" in panels["lds"]["axes"].get_xlabel()) == (room == 0)


def test_wgp_parse_bug_profile_says_per_cu():
    # The 2023-2025 runtimes read .workgroup_processor_mode as off: HIP counts per CU there.
    usage = usage_of({"vgprs": 100}, target="gfx1100")
    panels = read_panels(figure_of(usage, options={"profile": "2023-2025"}, block=256))
    assert panels["block"]["twin"].get_ylabel() == "workgroups per CU"
    # docs/hip-occupancy.md §5 example 4 under the parse bug: 2 SIMDs x 14 x 32 = 896 threads → 3 blocks.
    assert panels["block"]["workgroups"][panels["block"]["xs"].index(256)] == 3


def test_llvm_without_a_block_draws_the_flat_range(capsys):
    k = amdocc.load(SAMPLE)[3].kernel("_Z9reg_heavyPKfPf")
    (r,) = [x for x in occupancy_json(capsys, "--model", "llvm", "--target", "gfx942", "--kernel", "reg_heavy", SAMPLE)]
    assert r["block_size"] is None
    panels = read_panels(figure_of(usage_of(k), "llvm", block=None))
    assert panels["block"]["star"] is None and panels["block"]["flat"] == r["waves_per_simd"]
    assert "flat workgroup range 1..1024" in panels["vgpr"]["title"]
    for name in ("lds", "vgpr"):
        assert panels[name]["star"][1] == r["waves_per_simd"] and panels[name]["twin"] is None


def test_no_answer_is_a_gap_not_a_zero():
    # ROCm 6.0 gave gfx942 256 VGPRs per SIMD: past 256 no wave fits and HIP answers
    # hipErrorUnknown (docs/hip-releases.md): the curve has no point there.
    usage = usage_of({"vgprs": 200}, target="gfx942")
    p = read_panels(figure_of(usage, options={"profile": "rocm-6.0"}, block=256))["vgpr"]
    ys = dict(zip(p["xs"], p["ys"], strict=True))
    assert ys[256] == 1 and math.isnan(ys[257]) and math.isnan(ys[512])


# --- the command line ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, words",
    [
        ("/nonexistent-dir/x.png", "does not exist"),
        ("occupancy.xyz", "unknown image type .xyz"),
        ("noextension", "(no extension)"),
        (".", "is a directory"),
    ],
)
def test_bad_plot_paths_are_usage_errors_before_any_work(capsys, path, words):
    # The input does not exist either: the plot path is checked first.
    code = main(["sweep", "/nonexistent-input.co", "--plot", path])
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("usage:")]
    assert code == 2 and words in err and "--plot" in err and len(lines) == 1
    assert "Traceback" not in err


def test_plot_is_written_when_stdout_closes_early(tmp_path):
    out = tmp_path / "early.png"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # A table of 1024 columns outgrows the pipe's buffer, so its printing meets the closed pipe.
    blocks = ",".join(str(b) for b in range(1, 1025))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "amdocc",
            "sweep",
            "--target",
            "gfx942",
            "--vgprs",
            "96",
            "--block",
            "256",
            "--blocks",
            blocks,
            "--plot",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    proc.stdout.close()  # like `| head -1` that has already exited
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_plot_svg_legend(tmp_path):
    out = tmp_path / "sweep.svg"
    assert main(["sweep", "--target", "gfx1100", "--vgprs", "100", "--plot", str(out)]) == 0
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "limited by vgpr" in text
