"""AMD products, read from ``tables/devices.toml``: processor, CU count, LDS."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .caches import cached
from .errors import TableError, UnknownTargetError
from .tabledata import Row, load_table
from .targets import Target

TABLE = "devices.toml"


@dataclass(frozen=True, slots=True, eq=False)
class Device:
    name: str
    target: Target
    compute_units: int  # per device as HIP enumerates it (real CUs; WGPs are half on RDNA)
    lds: int  # HSA group segment bytes (HIP's localMemSize)
    note: str
    source: str

    @property
    def processor(self) -> str:
        return self.target.name


def _key(name: str) -> str:
    # "AMD Instinct MI300X", "mi300x", "RX 7900 XTX" and "radeon-rx-7900-xtx" all compare equal.
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    for prefix in ("amdinstinct", "instinct", "amdradeon", "radeon", "amd"):
        if key.startswith(prefix) and len(key) > len(prefix):
            key = key[len(prefix) :]
    return key


@cached(maxsize=1)
def _devices() -> dict[str, Device]:
    from .targets import find_target

    out: dict[str, Device] = {}
    for row in Row(TABLE, "", load_table(TABLE)).rows():
        name = row.key
        processor = row.text("processor")
        target = find_target(processor)
        if target is None:
            raise row.error(f"{processor!r} is not a processor of targets.toml", "processor")
        device = Device(
            name,
            target,
            row.whole("compute_units", 1),
            row.whole("lds", 1),
            row.text("note", ""),
            row.text("source"),
        )
        for spelling in [name, *row.texts("aliases", ())]:
            key = _key(spelling)
            if key in out and out[key] is not device:
                raise TableError(f"{TABLE}: {spelling!r} names both {out[key].name} and {name}")
            out[key] = device
    return out


def all_devices() -> list[Device]:
    seen, out = set(), []
    for d in _devices().values():
        if d.name not in seen:
            seen.add(d.name)
            out.append(d)
    return out


def get_device(name: str) -> Device:
    try:
        return _devices()[_key(name)]
    except KeyError:
        known = ", ".join(d.name for d in all_devices())
        raise UnknownTargetError(f"unknown device {name!r} (known: {known})") from None
