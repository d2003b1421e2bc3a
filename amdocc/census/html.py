"""The census as one self-contained HTML page: tables and inline SVG, readable offline.

Sections (each a <section> with a stable id): summary, targets, occupancy, limiters, spills,
launch, findings, inputs; a comparison of two releases has summary, regressions, changes,
added, removed and occupancy.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from . import models_fitting_some, some_models_heading, svg

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 8px 0; } td, th { padding: 2px 8px; text-align: left; }
th { background: #eee; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #f7f7f7; } code { font-size: 12px; }
svg .title { font-size: 13px; font-weight: 600; } svg .axis { font-size: 12px; } svg .tick { font-size: 11px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; } p.note { color: #555; } p.none { color: #555; }
td.name { max-width: 24em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
td.name:hover { white-space: normal; overflow-wrap: anywhere; }
"""


class Name:
    """A name cell (a kernel or a member path): cut to one line with an ellipsis when long, the
    whole name (and a kernel's mangled name) in its title, shown on hover."""

    __slots__ = ("full", "mangled")

    def __init__(self, full: str, mangled: str | None = None) -> None:
        self.full, self.mangled = full, mangled

    def cell(self) -> str:
        title = self.full if not self.mangled or self.mangled == self.full else f"{self.full}\n{self.mangled}"
        return f'<td class="name" title="{escape(title)}">{escape(self.full)}</td>'

    def __str__(self) -> str:
        return self.full


def _cell(value: object) -> str:
    if isinstance(value, Name):
        return value.cell()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'<td class="n">{value}</td>'
    return f"<td>{escape('' if value is None else str(value))}</td>"


def table(headers: list[str], rows: list[list[Any]], css: str = "", what: str = "") -> str:
    """A table of ``rows``; with no rows, "none" (``what``: none, said of what), not a bare header."""
    if not rows:
        return f'<p class="none {css}">{escape(what + ": " if what else "")}none</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "\n".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>'


def section(ident: str, title: str, *content: str) -> str:
    return f'<section id="{ident}">\n<h2>{escape(title)}</h2>\n' + "\n".join(content) + "\n</section>"


def page(title: str, sections: list[str], subtitle: str = "") -> str:
    sub = f'<p class="note">{escape(subtitle)}</p>' if subtitle else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n{sub}\n" + "\n".join(sections) + "\n</body>\n</html>\n"
    )


def buckets(counts: dict[str, int], most: int | None = None) -> list[str]:
    """Histogram categories: every whole number of waves per SIMD from 0 to the processor's most
    (``most``; else the largest seen), the fractional buckets seen between them, then "n/a"."""
    seen = [float(k) for k in counts if k != "n/a"]
    top = max([float(most or 0), *seen]) if seen or most else -1.0
    values = sorted({float(i) for i in range(int(top) + 1)} | set(seen))
    return [f"{v:g}" for v in values] + (["n/a"] if "n/a" in counts else [])


def kernel_rows(rows: list[dict[str, Any]], columns: list[str], mangled: bool = True) -> list[list[Any]]:
    def cell(r: dict[str, Any], c: str) -> Any:
        if c == "kernel":
            return Name(name(r, mangled), r["kernel"])
        if c == "member":
            return Name(r[c] or "")
        return r[c]

    return [[cell(r, c) for c in columns] for r in rows]


def change_rows(changes: list[dict[str, Any]]) -> list[list[Any]]:
    """A comparison's change cells, the member and the kernel as name cells."""
    return [[Name(c["cells"][0]), Name(c["cells"][1], c["kernel"]), *c["cells"][2:]] for c in changes]


def name(row: dict[str, Any], mangled: bool) -> str:
    """A kernel's name as people read it: demangled unless ``mangled``."""
    shown: str = row["kernel"] if mangled else (row.get("demangled") or row["kernel"])
    return shown


def charted_kernels(
    rows: list[dict[str, Any]],
    columns: list[str],
    mangled: bool,
    chart: Callable[[], str],
    *,
    css: str,
    if_none: str,
) -> list[str]:
    """A chart and a table of the kernels in ``rows`` (the columns named), or the note
    ``if_none`` when there are none."""
    if not rows:
        return [f'<p class="note">{if_none}</p>']
    return [chart(), table(columns, kernel_rows(rows, columns, mangled), css)]


def census_page(summary: dict[str, Any], title: str, note: str = "", mangled: bool = True) -> str:
    targets = summary["targets"]
    overview = table(
        [
            "files",
            "code objects",
            "kernels",
            "targets",
            "kernels that cannot launch",
            "kernels only some models fit",
            "unreadable parts",
            "entries skipped",
        ],
        [
            [
                summary["files"],
                summary["code_objects"],
                summary["kernels"],
                len(targets),
                len(summary["cannot_launch"]),
                len(summary.get("some_models_zero", [])),
                len(summary["errors"]),
                sum(summary["skipped"].values()),
            ]
        ],
        "summary",
    )
    # With --isa: the kernels spilling inside loops, and those whose machine code could not say.
    isa = any("spilling_in_loops" in t for t in targets.values())
    per_target = table(
        [
            "target",
            "kernels",
            "spilling",
            *(["spilling in loops", "spills in loops unknown", "most live VGPRs", "liveness unknown"] if isa else []),
            "without spill counts",
            "using scratch",
            "cannot launch",
            "0 under some models",
            "launch not checked",
            "most common limiter",
        ],
        [
            [
                name,
                t["kernels"],
                t["spilling"],
                *(
                    [
                        t.get("spilling_in_loops", 0),
                        t.get("spills_in_loops_unknown", 0),
                        t.get("max_live_vgpr", "-"),
                        t.get("max_live_unknown", 0),
                    ]
                    if isa
                    else []
                ),
                t["no_spill_counts"],
                t["scratch"],
                t["cannot_launch"],
                t.get("some_models_zero", 0),
                t["launch_unchecked"],
                next(iter(t["limiters"]), ""),
            ]
            for name, t in targets.items()
        ],
        "targets",
    )
    unknown_spills = sum(t["no_spill_counts"] for t in targets.values())
    unchecked = sum(t["launch_unchecked"] for t in targets.values())
    histograms = [
        svg.columns(
            f"{name}: waves per SIMD at the declared block size (hip)",
            buckets(t["occupancy"], t.get("max_waves_per_simd")),
            {name: [t["occupancy"].get(b, 0) for b in buckets(t["occupancy"], t.get("max_waves_per_simd"))]},
            css="occupancy",
            x_label="waves per SIMD",
        )
        for name, t in targets.items()
    ]
    limiter_chart = svg.shares(
        "What limits occupancy, per target (hip)", {name: t["limiters"] for name, t in targets.items()}, css="limiters"
    )
    limiter_table = table(
        ["target", "limiter", "kernels"],
        [[name, lim, n] for name, t in targets.items() for lim, n in t["limiters"].items()],
        "limiters",
    )
    spill_cols = ["kernel", "target", "member", "vgpr_spills", "sgpr_spills", "scratch", "vgprs"]
    top = summary["top_spillers"]
    spills = charted_kernels(
        top,
        spill_cols,
        mangled,
        lambda: svg.rows(
            f"Top {len(top)} spillers (VGPR + SGPR spills)",
            [(f"{name(r, mangled)} [{r['target']}]", (r["vgpr_spills"] or 0) + (r["sgpr_spills"] or 0)) for r in top],
            css="spills",
            x_label="spills",
        ),
        css="spills",
        if_none="No kernel reports spills.",
    )
    if unknown_spills:
        spills.append(
            f'<p class="note">{unknown_spills} kernel(s) carry no spill counts in their metadata '
            "(hand-written assembly, for one): for those nothing is known.</p>"
        )
    launch_cols = ["kernel", "target", "member", "block_size", "block_source", "vgprs", "lds", "cannot_launch"]
    blocked = summary["cannot_launch"]
    launch = charted_kernels(
        blocked,
        launch_cols,
        mangled,
        lambda: svg.columns(
            "Kernels that cannot launch at their declared size, per target",
            list(targets),
            {"cannot launch": [t["cannot_launch"] for t in targets.values()]},
            css="launch",
            x_label="target",
        ),
        css="launch",
        if_none="Every kernel checked fits at least one workgroup of its declared size on a CU.",
    )
    disputed = summary.get("some_models_zero") or []
    if disputed:
        # Not "cannot launch": another model fits a workgroup (HIP's arithmetic, where only its API answers 0).
        rows = [
            [*cells, ",".join(models_fitting_some(r))]
            for cells, r in zip(kernel_rows(disputed, launch_cols, mangled), disputed, strict=True)
        ]
        launch += [
            f"<h3>{escape(some_models_heading(disputed))}</h3>",
            table([*launch_cols[:-1], "models fitting 0", "models fitting 1+"], rows, "launch-disputed"),
        ]
    for target, t in targets.items():
        for key, n in t.get("unmodelled", {}).items():
            model, why = key.split(": ", 1)
            launch.append(
                f'<p class="note">{escape(target)}: {n} kernel(s) judged without the {escape(model)} model: '
                f"{escape(why)}</p>"
            )
    if unchecked:
        launch.append(
            f'<p class="note">{unchecked} kernel(s) not checked: no declared size '
            "(.reqd_workgroup_size or .max_flat_workgroup_size), or a kernel amdocc cannot model "
            "(see its problem column).</p>"
        )
    findings = table(["finding", "kernels"], [[k, n] for k, n in summary["findings"].items()], "findings")
    inputs = [
        table(
            ["skipped because", "entries"],
            [[k, n] for k, n in summary["skipped"].items()],
            "skipped",
            "entries skipped",
        ),
        table(["path", "error"], [[e["path"], e["error"]] for e in summary["errors"]], "errors", "unreadable parts"),
    ]
    return page(
        title,
        [
            section("summary", "Summary", overview),
            section("targets", "Targets", per_target),
            section(
                "occupancy", "Occupancy distribution per target", f'<div class="charts">{"".join(histograms)}</div>'
            ),
            section("limiters", "Limiter shares", limiter_chart, limiter_table),
            section("spills", "Top spillers", *spills),
            section("launch", "Kernels that cannot launch at their declared size", *launch),
            section("findings", "Findings", findings),
            section("inputs", "Skipped entries and unreadable parts", *inputs),
        ],
        note,
    )


def compare_page(result: dict[str, Any], title: str, mangled: bool = True) -> str:
    """``result``: what ``amdocc census OLD NEW --json`` prints."""
    old, new = result["old_summary"], result["new_summary"]
    overview = table(
        ["", "files", "code objects", "kernels", "cannot launch"],
        [
            [result["old"], old["files"], old["code_objects"], old["kernels"], len(old["cannot_launch"])],
            [result["new"], new["files"], new["code_objects"], new["kernels"], len(new["cannot_launch"])],
        ],
        "summary",
    )
    counts = table(
        ["matched", "changed", "regressed", "added", "removed"],
        [
            [
                result["matched"],
                len(result["changes"]),
                result["regressed"],
                len(result["added"]),
                len(result["removed"]),
            ]
        ],
        "counts",
    )
    change_cols = [
        "member",
        "kernel",
        "target",
        "vgpr",
        "sgpr",
        "lds",
        "scratch",
        "spills",
        "workgroups (hip)",
        "worse",
    ]
    regressions = [c for c in result["changes"] if c["regressions"]]
    added_cols = ["member", "kernel", "target"]
    charts = []
    for target in sorted(set(old["targets"]) | set(new["targets"])):
        a = old["targets"].get(target, {}).get("occupancy", {})
        b = new["targets"].get(target, {}).get("occupancy", {})
        most = (new["targets"].get(target) or old["targets"][target]).get("max_waves_per_simd")
        cats = buckets({**a, **b}, most)
        charts.append(
            svg.columns(
                f"{target}: waves per SIMD (hip), old and new",
                cats,
                {"old": [a.get(c, 0) for c in cats], "new": [b.get(c, 0) for c in cats]},
                css="occupancy",
                x_label="waves per SIMD",
            )
        )
    return page(
        title,
        [
            section("summary", "Summary", overview, counts),
            section("regressions", "Regressions", table(change_cols, change_rows(regressions), "regressions")),
            section(
                "changes",
                "Every changed kernel",
                table(change_cols, change_rows(result["changes"]), "changes"),
            ),
            section(
                "added", "Added kernels", table(added_cols, kernel_rows(result["added"], added_cols, mangled), "added")
            ),
            section(
                "removed",
                "Removed kernels",
                table(added_cols, kernel_rows(result["removed"], added_cols, mangled), "removed"),
            ),
            section("occupancy", "Occupancy distribution per target", f'<div class="charts">{"".join(charts)}</div>'),
        ],
        f"{result['old']} -> {result['new']}",
    )
