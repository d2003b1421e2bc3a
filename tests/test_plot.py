"""amdocc sweep --plot renders the occupancy graphs to an image of the expected size."""
from __future__ import annotations

import struct

from amdocc.cli.main import main
from conftest import needs

needs("matplotlib", "the plot tests render with it (amdocc[plot])")


def test_sweep_plot_png(tmp_path, capsys):
    from amdocc.cli.plot import DPI, FIGSIZE
    out = tmp_path / "sweep.png"
    code = main(["sweep", "--target", "gfx942", "--vgprs", "96", "--lds", "8192", "--block", "256",
                 "--plot", str(out)])
    assert code == 0 and "plot written" in capsys.readouterr().err
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI))
    assert len(data) > 20_000          # three panels of points, not an empty canvas


def test_sweep_plot_svg(tmp_path):
    out = tmp_path / "sweep.svg"
    assert main(["sweep", "--target", "gfx1100", "--vgprs", "100", "--plot", str(out)]) == 0
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "limited by vgpr" in text
