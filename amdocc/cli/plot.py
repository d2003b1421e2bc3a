"""Occupancy graphs in the manner of Nsight Compute's occupancy section (matplotlib, optional).

Three panels vary one input each — block size, dynamic LDS, VGPRs — and hold the others where
``amdocc occupancy`` evaluates the kernel (its default block: .reqd_workgroup_size, else
.max_flat_workgroup_size; the given dynamic LDS). The primary axis is occupancy, waves per SIMD
and its percentage, as Nsight draws warps per SM; workgroups per CU (per WGP in WGP mode) are on
the secondary axis. The background says which resource limits each stretch of a curve.

A curve is exact at every integer input: block sizes and VGPR counts are evaluated one by one
(HIP's bit-mask round-up makes VGPR steps irregular), and the dynamic-LDS curve at every byte
where the answer changes, found by bisection (the answer never rises as LDS grows). The star is
evaluated by the same function at the same inputs and its input is one of the curve's points,
so it always sits on its curve.

:func:`amdocc.app.curves.curves` computes the data, :func:`build_figure` draws it (a test reads
the points back from the figure's artists), :func:`plot_sweep` writes the file.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

from ..app.curves import Panel, Point, block_text, curves, max_waves_per_simd
from ..errors import UsageError
from ..install_hint import install_hint

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..models import Occupancy

LIMITER_COLOURS = {
    "vgpr": "#d62728",
    "agpr": "#ff7f0e",
    "sgpr": "#9467bd",
    "lds": "#1f77b4",
    "waves": "#2ca02c",
    "barriers": "#8c564b",
    "workgroup_slots": "#7f7f7f",
    "block_size": "#000000",
    None: "#bbbbbb",
}
NO_ANSWER = "no answer"  # shading label where the model returns an error
FIGSIZE, DPI = (15.0, 5.0), 100
PLOT_EXTRA = "plot"  # the extra that brings matplotlib


def check_plot_path(path: str) -> str:
    """The image format for ``path``; a UsageError before any work when it cannot be written
    (no matplotlib, an unknown extension, a missing or unwritable directory)."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise UsageError(f"--plot needs matplotlib ({install_hint(PLOT_EXTRA)})") from None
    if os.path.isdir(path):
        raise UsageError(f"--plot {path!r} is a directory; give a file name such as occupancy.png")
    formats = FigureCanvasBase.get_supported_filetypes()
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in formats:
        raise UsageError(
            f"--plot {path!r}: unknown image type {'.' + ext if ext else '(no extension)'} "
            f"(use one of {', '.join('.' + f for f in sorted(formats))})"
        )
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise UsageError(f"--plot {path!r}: directory {directory!r} does not exist")
    if not os.access(directory, os.W_OK):
        raise UsageError(f"--plot {path!r}: directory {directory!r} is not writable")
    return ext


def build_figure(point: Point, title: str = "", block_source: str = "given") -> Figure:
    """The occupancy figure (a matplotlib Figure, not yet written anywhere); ``block_source``
    says where the star's block size comes from."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
        from matplotlib.ticker import FuncFormatter, MaxNLocator
    except ImportError:
        raise UsageError(f"--plot needs matplotlib ({install_hint(PLOT_EXTRA)})") from None

    panels = curves(point)
    usage = point.usage
    star = panels[1].star  # the dynamic-LDS panel always holds the kernel's point
    assert star is not None, "curves() puts the kernel's point on the dynamic-LDS panel"
    top = max_waves_per_simd(usage, star)
    unit = "WGP" if star.per_wgp else "CU"
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    axes = fig.subplots(1, len(panels))
    shaded: dict[str | None, Patch] = {}
    for ax, panel in zip(axes, panels, strict=True):  # one axes per panel
        ax.set_gid(panel.name)
        xs = panel.xs
        ys = [_number(r.waves_per_simd, r) for r in panel.records]
        ax.plot(
            xs,
            ys,
            drawstyle="steps-post",
            color="#222222",
            linewidth=1.4,
            gid="occupancy",
            label="waves per SIMD",
            zorder=3,
        )
        for start, end, limiter in _runs(panel):
            colour = LIMITER_COLOURS.get(limiter, LIMITER_COLOURS[None])
            ax.axvspan(start, end, color=colour, alpha=0.13, linewidth=0, zorder=0)
            label = NO_ANSWER if limiter == NO_ANSWER else f"limited by {limiter}"
            shaded.setdefault(limiter, Patch(color=colour, alpha=0.35, label=label))
        if panel.reference is not None:
            ax.axhline(
                _number(panel.reference.waves_per_simd, panel.reference),
                color="#222222",
                linestyle=":",
                gid="flat-range",
                label="LLVM over the flat workgroup range (no single block)",
            )
        _x_axis(ax, panel)
        ax.set_ylim(0, top * 1.05)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g} ({v / top:.0%})"))
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(f"occupancy: waves per SIMD (of {top})")
        ax.set_title(panel.held, fontsize=9)
        ax.grid(alpha=0.3)
        blocks = [r.blocks_per_cu for r in panel.records]
        if any(b is not None for b in blocks):
            twin = ax.twinx()
            twin.set_gid(panel.name + ":workgroups")
            twin.plot(
                xs,
                [math.nan if b is None else b for b in blocks],
                drawstyle="steps-post",
                color="#1f4e9c",
                linestyle="--",
                linewidth=1,
                gid="workgroups",
                label=f"workgroups per {unit}",
            )
            twin.set_ylim(0, max(max((b for b in blocks if b is not None), default=0), 1) * 1.05)
            twin.yaxis.set_major_locator(MaxNLocator(integer=True))
            twin.set_ylabel(f"workgroups per {unit}", color="#1f4e9c")
        if panel.star is not None and panel.star_x is not None:  # a star has its x
            s = panel.star
            y = _number(s.waves_per_simd, s)
            ax.scatter(
                [panel.star_x],
                [y],
                marker="*",
                s=260,
                color="gold",
                edgecolor="black",
                zorder=5,
                gid="star",
                label="this kernel (amdocc occupancy)",
            )
            left = panel.star_x > (panel.xs[0] + panel.xs[-1]) / 2  # keep the label inside the panel
            ax.annotate(
                _star_text(s, unit),
                (panel.star_x, y),
                textcoords="offset points",
                xytext=(-8 if left else 8, 8),
                ha="right" if left else "left",
                fontsize=8,
                zorder=6,
            )
    handles = [axes[0].lines[0]]
    handles += [a.get_lines()[0] for a in fig.axes if a.get_gid() == panels[0].name + ":workgroups"][:1]
    handles += [c for c in axes[-1].collections if c.get_gid() == "star"][:1]
    handles += [line for line in axes[0].lines if line.get_gid() == "flat-range"]
    handles += list(shaded.values())
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 6), fontsize=8, frameon=False)
    fig.suptitle(_suptitle(point, star, title, block_source), fontsize=10)
    return fig


def plot_sweep(path: str, point: Point, title: str = "", block_source: str = "given") -> None:
    """Write the occupancy figure to ``path`` (its extension picks the format)."""
    ext = check_plot_path(path)
    fig = build_figure(point, title, block_source)
    try:
        fig.savefig(path, format=ext, dpi=DPI)
    except OSError as exc:
        raise UsageError(f"--plot {path!r}: cannot write: {exc.strerror or exc}") from None


def _x_axis(ax: Axes, panel: Panel) -> None:
    """Limits with a small margin (a step at the first input stays visible), never degenerate;
    integer ticks, LDS in KiB on power-of-two boundaries."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

    lo, hi = panel.xs[0], panel.xs[-1]
    if hi <= lo:
        hi = lo + (1024 if panel.name == "lds" else 1)
    margin = (hi - lo) * 0.02
    ax.set_xlim(lo - margin, hi + margin)
    if panel.name == "lds":
        step = 1024
        while (hi - lo) / step > 8:
            step *= 2
        ax.xaxis.set_major_locator(MultipleLocator(step))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v / 1024:g}"))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _number(value: float | None, occ: Occupancy) -> float:
    return math.nan if value is None or occ.error else value


def _runs(panel: Panel) -> list[tuple[int, int, str | None]]:
    """(start, end, limiter) for each stretch of the curve with one limiter (or no answer)."""
    xs = panel.xs
    out: list[tuple[int, int, str | None]] = []
    for i, occ in enumerate(panel.records):
        limiter = NO_ANSWER if occ.error else occ.limiter
        end = xs[i + 1] if i + 1 < len(xs) else xs[i] + (xs[i] - xs[i - 1] if i else 1)
        if out and out[-1][2] == limiter:
            out[-1] = (out[-1][0], end, limiter)
        else:
            out.append((xs[i], end, limiter))
    return out


def _star_text(occ: Occupancy, unit: str) -> str:
    if occ.error:
        return occ.error
    pct = f" ({occ.occupancy_fraction:.0%})" if occ.occupancy_fraction is not None else ""
    blocks = f"{occ.blocks_per_cu} WG/{unit}, " if occ.blocks_per_cu is not None else ""
    return f"{blocks}limited by {occ.limiter or '-'}\n{occ.waves_per_simd:g} waves/SIMD{pct}"


def _suptitle(point: Point, star: Occupancy, title: str, block_source: str) -> str:
    usage, block = point.usage, point.block
    profile = f" ({star.profile})" if star.profile else ""
    wgp = ", WGP mode" if star.per_wgp else ""
    source = f" ({block_source})" if block is not None else ""
    return (
        f"{title} — {star.model} model{profile}; as compiled: VGPRs {usage.vgprs}, SGPRs {usage.sgprs}, "
        f"static LDS {usage.lds} B, wave{usage.wave}{wgp}\n"
        f"the star is where `amdocc occupancy` evaluates it: {block_text(usage, block)}{source}, "
        f"dynamic LDS {point.dynamic_lds} B"
    )
