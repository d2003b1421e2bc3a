"""Observed HIP answers (``tables/hip_observed/``): read them, replay them, write new ones.

The format is described in tables/hip_observed/README.md. Replaying an observation runs amdocc's
``hip`` model under the observation's profile on the observation's inputs.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .tabledata import Row as TableRow
from .tabledata import read_toml, tables_dir

if TYPE_CHECKING:
    from .models.record import Occupancy
    from .models.usage import KernelUsage

# One [[observation]] or [[partial]] table of tables/hip_observed/*.toml, as read.
Row = dict[str, Any]

NOTE_KEYS = (
    "vgpr_count",
    "agpr_count",
    "sgpr_count",
    "group_segment_fixed_size",
    "wavefront_size",
    "workgroup_processor_mode",
)


def files() -> list[Path]:
    return sorted((tables_dir() / "hip_observed").glob("*.toml"))


KINDS = ("worked-example", "pr-figure", "measured")


def load(path: Path | None = None) -> tuple[list[Row], list[Row]]:
    """(observations, partial rows) from one file or from every file of the table; a row with a
    missing or damaged value is a TableError naming the file, the row and the column."""
    observations: list[Row] = []
    partial: list[Row] = []
    for p in [path] if path else files():
        data = TableRow(f"hip_observed/{p.name}", "", read_toml(p))
        for kind, check, out in (("observation", _observation, observations), ("partial", _partial, partial)):
            rows = data.value(kind, [])
            if not isinstance(rows, list):
                raise data.error("is not an array of tables ([[...]])", kind)
            for i, row in enumerate(rows, 1):
                check(TableRow(data.table, f"{kind} {i}", row))
                out.append({**row, "file": p.name})
    return observations, partial


def _counts(row: TableRow) -> None:
    row.text("processor")
    row.text("profile", None)
    row.whole("runtime_version", 0, default=None)
    row.whole("block_size", 1)
    row.whole("wavefront_size", 1)
    row.whole("dynamic_lds", 0, default=None)


def _observation(row: TableRow) -> None:
    row.text("id")
    row.text("source")
    row.text("kind", choices=KINDS)
    _counts(row)
    for column in ("vgpr_count", "agpr_count", "sgpr_count", "group_segment_fixed_size"):
        row.whole(column, 0, default=None)
    if row.whole("blocks_per_cu", 0, default=None) is None and row.text("error", None) is None:
        raise row.error("missing (a row has blocks_per_cu or error)", "blocks_per_cu")


def _partial(row: TableRow) -> None:
    row.text("variant")
    _counts(row)
    cells = len(row.wholes("blocks_per_cu", 0))
    for column in ("group_segment_fixed_size", "heads", "head_size"):
        if len(row.wholes(column, 0, ())) not in (0, cells):
            raise row.error(f"has not one value per cell of blocks_per_cu ({cells})", column)


def usage(row: Row, **override: Any) -> KernelUsage:
    """The KernelUsage an observation describes."""
    from .models import KernelUsage
    from .models.usage import metadata_text
    from .targets import get_target

    values = {**row, **override}
    target = get_target(values["processor"])
    wgp = values.get("workgroup_processor_mode")
    return KernelUsage(
        target=target,
        wave=int(values["wavefront_size"]),
        vgprs=int(values.get("vgpr_count", 0)),
        sgprs=int(values.get("sgpr_count", 0)),
        lds=int(values.get("group_segment_fixed_size", 0)),
        wgp_mode=bool(wgp) and target.wgp,
        wgp_metadata=metadata_text(wgp),
        agprs=values.get("agpr_count"),
    )


def profile_of(row: Row) -> str | None:
    """The profile an observation belongs to: the one it names, else the one its recorded
    hipRuntimeGetVersion() maps to, else None (the default)."""
    if row.get("profile"):
        named: str = row["profile"]
        return named
    if row.get("runtime_version") is not None:
        from .models.hip import profile_for_runtime

        return profile_for_runtime(int(row["runtime_version"])).profile.name
    return None


def replay(row: Row, **override: Any) -> Occupancy:
    """amdocc's hip model on an observation (under its profile); returns the Occupancy record."""
    from .models import compute

    values = {**row, **override}
    return compute(
        usage(values), "hip", int(values["block_size"]), int(values.get("dynamic_lds", 0)), profile=profile_of(values)
    )


def answer_of(occ: Occupancy) -> int | str | None:
    return occ.error if occ.error else occ.blocks_per_cu


@dataclass(frozen=True, slots=True)
class PartialReplay:
    variant: str
    processor: str
    cells: int
    reproduced: int
    vgpr_ranges: list[tuple[int, int] | None]  # per cell: the VGPR counts that reproduce it


def replay_partial(row: Row) -> PartialReplay:
    """For each cell of a partial row, the VGPR counts (with some SGPR count up to the addressable
    limit) for which the model gives the recorded answer."""
    from .targets import get_target

    target = get_target(row["processor"])
    ranges: list[tuple[int, int] | None] = []
    sgpr_choices = (0, 48, 64, 80, 96, 102)  # one per SGPR occupancy step
    for i, expected in enumerate(row["blocks_per_cu"]):
        cell = {**row, "group_segment_fixed_size": row["group_segment_fixed_size"][i], "dynamic_lds": 0}
        # Only the count rounded to the allocation granule matters, so one count per granule is tried.
        granule = target.vgpr_alloc_granule[int(row["wavefront_size"])]
        hits = [
            v
            for v in range(granule, target.addressable_vgprs + 1, granule)
            if any(answer_of(replay(cell, vgpr_count=v, sgpr_count=s)) == expected for s in sgpr_choices)
        ]
        ranges.append((hits[0] - granule + 1, hits[-1]) if hits else None)
    return PartialReplay(row["variant"], row["processor"], len(ranges), sum(r is not None for r in ranges), ranges)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def format_observation(row: Row) -> str:
    """One [[observation]] table, keys in the README's order, for appending to a file."""
    order = [
        "id",
        "source",
        "kind",
        "profile",
        "processor",
        "gcn_arch_name",
        "runtime_version",
        "date",
        *NOTE_KEYS,
        "block_size",
        "dynamic_lds",
        "blocks_per_cu",
        "error",
        "note",
    ]
    keys = [k for k in order if row.get(k) is not None]
    keys += sorted(k for k in row if k not in order and row[k] is not None)
    return "[[observation]]\n" + "".join(f"{k} = {toml_value(row[k])}\n" for k in keys) + "\n"


def today() -> str:
    return datetime.date.today().isoformat()
