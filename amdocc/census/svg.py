"""Small inline SVG charts for the census report: no plotting library, no scripts, no network.

Every drawn mark carries its data (``data-*`` attributes) so the page can be checked as a
document, not only looked at.
"""

from __future__ import annotations

from html import escape

# Colours a reader can tell apart (Okabe-Ito), assigned to series and limiters in order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#999999")
LIMITER_COLOURS = {
    "vgpr": "#0072B2",
    "agpr": "#56B4E9",
    "sgpr": "#009E73",
    "lds": "#E69F00",
    "waves": "#CC79A7",
    "workgroup_slots": "#F0E442",
    "barriers": "#D55E00",
    "block_size": "#000000",
    "n/a": "#999999",
}


def _attrs(**data: object) -> str:
    return "".join(f' data-{k.replace("_", "-")}="{escape(str(v))}"' for k, v in data.items())


def columns(
    title: str,
    categories: list[str],
    series: dict[str, list[int]],
    *,
    css: str,
    x_label: str,
    y_label: str = "kernels",
    width: int = 560,
    height: int = 220,
) -> str:
    """Vertical bars: one group per category, one bar per series in each group."""
    left, bottom, top, right = 48, 40, 28, 12
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max((v for values in series.values() for v in values), default=0) or 1
    group = plot_w / max(len(categories), 1)
    bar = group * 0.8 / max(len(series), 1)
    out = [
        f'<svg class="chart {css}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="16" text-anchor="middle" class="title">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#444"/>',
        f'<text x="12" y="{top + plot_h / 2}" transform="rotate(-90 12 {top + plot_h / 2})" '
        f'text-anchor="middle" class="axis">{escape(y_label)}</text>',
        f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle" class="axis">{escape(x_label)}</text>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" class="tick">{peak}</text>',
    ]
    for i, cat in enumerate(categories):
        x0 = left + i * group + group * 0.1
        for j, (name, values) in enumerate(series.items()):
            value = values[i]
            h = plot_h * value / peak
            colour = PALETTE[j % len(PALETTE)]
            out.append(
                f'<rect class="bar" x="{x0 + j * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar:.1f}" '
                f'height="{h:.1f}" fill="{colour}"{_attrs(category=cat, series=name, count=value)}>'
                f"<title>{escape(f'{name}: {cat}: {value}')}</title></rect>"
            )
        out.append(
            f'<text x="{left + i * group + group / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle" '
            f'class="tick">{escape(cat)}</text>'
        )
    if len(series) > 1:
        for j, name in enumerate(series):
            x = left + 8 + j * 110
            out.append(
                f'<rect x="{x}" y="{top - 6}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>'
                f'<text x="{x + 14}" y="{top + 3}" class="tick">{escape(name)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out)


def rows(
    title: str, items: list[tuple[str, int]], *, css: str, x_label: str, width: int = 760, colour: str = PALETTE[3]
) -> str:
    """Horizontal bars, one per (label, value), largest first as given."""
    left, right, top, line = 330, 60, 28, 18
    height = top + line * len(items) + 24
    plot_w = width - left - right
    peak = max((v for _, v in items), default=0) or 1
    out = [
        f'<svg class="chart {css}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="16" text-anchor="middle" class="title">{escape(title)}</text>',
    ]
    for i, (label, value) in enumerate(items):
        y = top + i * line
        w = plot_w * value / peak
        shown = label if len(label) <= 48 else label[:45] + "..."
        out.append(
            f'<text x="{left - 6}" y="{y + 12}" text-anchor="end" class="tick">'
            f"<title>{escape(label)}</title>{escape(shown)}</text>"
        )
        out.append(
            f'<rect class="bar" x="{left}" y="{y + 2}" width="{w:.1f}" height="{line - 5}" fill="{colour}"'
            f"{_attrs(label=label, count=value)}><title>{escape(f'{label}: {value}')}</title></rect>"
        )
        out.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}" class="tick">{value}</text>')
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle" class="axis">{escape(x_label)}</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


def shares(title: str, groups: dict[str, dict[str, int]], *, css: str, width: int = 760) -> str:
    """One stacked bar per group (a target), split by key (a limiter) in proportion."""
    left, right, top, line = 150, 20, 28, 24
    keys = list(dict.fromkeys(k for counts in groups.values() for k in counts))
    height = top + line * len(groups) + 30
    plot_w = width - left - right
    out = [
        f'<svg class="chart {css}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="{width / 2}" y="16" text-anchor="middle" class="title">{escape(title)}</text>',
    ]
    for i, (group, counts) in enumerate(groups.items()):
        y = top + i * line
        total = sum(counts.values()) or 1
        x = float(left)
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end" class="tick">{escape(group)}</text>')
        for key in keys:
            n = counts.get(key, 0)
            if not n:
                continue
            w = plot_w * n / total
            colour = LIMITER_COLOURS.get(key, PALETTE[keys.index(key) % len(PALETTE)])
            out.append(
                f'<rect class="share" x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{line - 6}" '
                f'fill="{colour}"{_attrs(group=group, key=key, count=n)}>'
                f"<title>{escape(f'{group}: {key}: {n} of {total}')}</title></rect>"
            )
            x += w
    y = top + line * len(groups) + 8
    for j, key in enumerate(keys):
        colour = LIMITER_COLOURS.get(key, PALETTE[j % len(PALETTE)])
        out.append(
            f'<rect x="{left + j * 95}" y="{y}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{left + j * 95 + 14}" y="{y + 9}" class="tick">{escape(key)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)
