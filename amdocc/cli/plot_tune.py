"""The tune-regs plot: waves per SIMD against spilled dwords, one panel per kernel, the frontier
joined and each point labelled with the waves-per-EU (and AGPR count) it was compiled with."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from .plot import DPI, PLOT_EXTRA, check_plot_path

MODEL = "hip"  # the frontier's occupancy (amdocc.app.tune_regs_op.FRONTIER_MODEL)


def _label(p: dict[str, Any]) -> str:
    if p["waves_per_eu"] is None and p["agpr_alloc"] is None:
        return "as built"
    return f"{p['waves_per_eu']}" + (f"/a{p['agpr_alloc']}" if p["agpr_alloc"] is not None else "")


def plot_frontier(path: str, results: list[dict[str, Any]]) -> None:
    """Write the figure for the results that have points to ``path``."""
    ext = check_plot_path(path)
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(f"--plot needs matplotlib (pip install '{PLOT_EXTRA}')") from None
    shown = [r for r in results if any(p["error"] is None for p in r["points"])]
    if not shown:
        raise UsageError("--plot: no kernel has a compiled point to draw")
    fig = Figure(figsize=(5.5 * len(shown), 4.2), layout="constrained")
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    for ax, result in zip(axes, shown, strict=True):
        points = [p for p in result["points"] if p["error"] is None]
        spilled = [(p["vgpr_spill_count"] or 0) + (p["sgpr_spill_count"] or 0) for p in points]
        waves = [p["waves_per_simd"][MODEL] for p in points]
        front = sorted((s, w) for s, w, p in zip(spilled, waves, points, strict=True) if p["frontier"])
        ax.scatter(spilled, waves, color="0.6", zorder=2, label="compiled point")
        if front:
            ax.plot([s for s, _ in front], [w for _, w in front], "o-", color="C3", zorder=3, label="frontier")
        for s, w, p in zip(spilled, waves, points, strict=True):
            ax.annotate(_label(p), (s, w), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.set_xlabel("spilled dwords (.vgpr_spill_count + .sgpr_spill_count)")
        ax.set_ylabel(f"waves per SIMD ({MODEL}, at the launch)")
        ax.set_title(f"{result['kernel']} on {result['target']}", fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    try:
        fig.savefig(path, format=ext, dpi=DPI)
    except OSError as exc:
        raise UsageError(f"--plot {path!r}: cannot write: {exc.strerror or exc}") from None
