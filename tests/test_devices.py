"""tables/devices.toml: every product resolves to a processor amdocc knows, spellings people use
resolve to the same row, and the figures match the public sources the table cites."""

from __future__ import annotations

import pytest

import amdocc
from amdocc.devices import all_devices, get_device

# (product as users write it, processor, CUs per device, LDS bytes) from the ROCm GPU
# specification table and rocminfo output quoted in each row's source note.
CITED = [
    ("MI100", "gfx908", 120, 65536),
    ("MI210", "gfx90a", 104, 65536),
    ("MI250", "gfx90a", 104, 65536),
    ("AMD Instinct MI250X", "gfx90a", 110, 65536),
    ("MI300A", "gfx942", 228, 65536),
    ("mi300x", "gfx942", 304, 65536),
    ("MI308X", "gfx942", 80, 65536),
    ("MI325X", "gfx942", 304, 65536),
    ("MI350X", "gfx950", 256, 163840),
    ("MI355X", "gfx950", 256, 163840),
    ("Radeon RX 7900 XTX", "gfx1100", 96, 65536),
    ("Radeon PRO W7900", "gfx1100", 96, 65536),
    ("RX 9070 XT", "gfx1201", 64, 65536),
    ("Strix Halo", "gfx1151", 40, 65536),
]


@pytest.mark.parametrize("name,processor,cus,lds", CITED)
def test_cited_products(name, processor, cus, lds):
    d = get_device(name)
    assert (d.processor, d.compute_units, d.lds) == (processor, cus, lds)


def test_every_row_has_a_processor_row_and_a_source():
    for d in all_devices():
        assert d.target.name == d.processor and d.source.strip()
        assert d.lds == d.target.lds_per_cu  # the HSA group segment is the CU's LDS


def test_device_picks_target_for_occupancy():
    occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40, "lds": 49152}, device="MI355X", block_size=256)
    assert (occ.processor, occ.blocks_per_cu) == ("gfx950", 3)  # docs/hip-occupancy.md §5 example 2
    with pytest.raises(amdocc.UnknownTargetError):
        get_device("MI400")
