"""Occupancy graphs in the manner of Nsight Compute's occupancy section (matplotlib, optional).

Three panels: workgroups per CU against block size, against dynamic LDS, and against VGPRs per
thread, each with the kernel's current point marked and every point coloured by the resource
that limits it.
"""
from __future__ import annotations

LIMITER_COLOURS = {"vgpr": "#d62728", "agpr": "#ff7f0e", "sgpr": "#9467bd", "lds": "#1f77b4",
                   "waves": "#2ca02c", "barriers": "#8c564b", "workgroup_slots": "#7f7f7f",
                   "block_size": "#000000", None: "#bbbbbb"}
FIGSIZE, DPI = (13.5, 4.2), 100


def plot_sweep(path, usage, model: str, options: dict, blocks: list[int], lds_sizes: list[int], title: str,
               block: int | None = None, dynamic_lds: int = 0) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from ..errors import UsageError
        raise UsageError("--plot needs matplotlib (pip install 'amdocc[plot]'); the table above is the sweep") from None
    from ..models import compute
    from ..targets import MAX_WORKGROUP_SIZE

    t = usage.target
    block = block or (blocks[len(blocks) // 2] if blocks else 256)

    def blocks_of(u, b, d):
        occ = compute(u, model, b, d, **options)
        return occ.blocks_per_cu or 0, occ.limiter

    wave = usage.wave
    block_axis = list(range(wave, min(MAX_WORKGROUP_SIZE, usage.max_flat_workgroup_size or MAX_WORKGROUP_SIZE) + 1, wave))
    lds_axis = sorted(set(list(range(0, t.lds_per_workgroup - usage.lds + 1, max(256, t.lds_granule))) + lds_sizes))
    granule = t.vgpr_alloc_granule[wave]
    vgpr_axis = list(range(granule, t.addressable_vgprs + 1, granule))
    panels = [
        ("threads per block", block_axis, lambda x: blocks_of(usage, x, dynamic_lds), block),
        ("dynamic LDS per block (bytes)", lds_axis, lambda x: blocks_of(usage, block, x), dynamic_lds),
        ("VGPRs per thread (.vgpr_count)", vgpr_axis, lambda x: blocks_of(usage.with_(vgprs=x), block, dynamic_lds),
         usage.vgprs),
    ]
    fig, axes = plt.subplots(1, 3, figsize=FIGSIZE, dpi=DPI)
    seen = set()
    for ax, (label, xs, fn, current) in zip(axes, panels):
        points = [(x, *fn(x)) for x in xs]
        ax.step([p[0] for p in points], [p[1] for p in points], where="post", color="#444444", linewidth=1)
        for limiter in {p[2] for p in points}:
            sel = [p for p in points if p[2] == limiter]
            ax.scatter([p[0] for p in sel], [p[1] for p in sel], s=10, color=LIMITER_COLOURS.get(limiter, "#bbbbbb"),
                       label=None if limiter in seen else f"limited by {limiter}", zorder=3)
            seen.add(limiter)
        now, now_limiter = fn(current)
        ax.scatter([current], [now], marker="*", s=220, color="gold", edgecolor="black", zorder=4,
                   label=None if "current" in seen else "this kernel")
        seen.add("current")
        ax.annotate(f"{now} ({now_limiter})", (current, now), textcoords="offset points", xytext=(6, 8), fontsize=8)
        ax.set_xlabel(label)
        ax.set_ylabel(f"workgroups per {'WGP' if usage.wgp_mode else 'CU'}")
        ax.grid(alpha=0.3)
        ax.set_ylim(bottom=0)
    fig.suptitle(f"{title} — {model} model, block {block}, dynamic LDS {dynamic_lds} B", fontsize=10)
    fig.legend(loc="lower center", ncol=8, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
