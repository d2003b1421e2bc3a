"""Replay every recorded HIP answer (tables/hip_observed/) through the hip model."""

from __future__ import annotations

import pytest

from amdocc import observed

OBSERVATIONS, PARTIAL = observed.load()


@pytest.mark.parametrize("row", OBSERVATIONS, ids=[f"{r['file']}:{r['id']}" for r in OBSERVATIONS])
def test_observation_replays(row):
    expected = row.get("blocks_per_cu", row.get("error"))
    assert observed.answer_of(observed.replay(row)) == expected


def test_partial_rows_are_all_reproducible():
    # AITER published HIP's answers but not the kernels' register counts: every answer must be
    # one the model gives for some VGPR (and SGPR) count, given the known block size and LDS.
    cells = reproduced = 0
    for row in PARTIAL:
        r = observed.replay_partial(row)
        cells += r.cells
        reproduced += r.reproduced
        assert r.reproduced == r.cells, (row["variant"], row["processor"], r.vgpr_ranges)
    print(f"\naiter measured table: {reproduced}/{cells} answers reproducible over {len(PARTIAL)} variants")
    assert cells == 232


def test_an_impossible_answer_is_caught():
    # 64-thread blocks on gfx942 come in multiples of 4 per CU (4 SIMDs pool one wave each):
    # a recorded 29 cannot be reproduced by any register count.
    row = {
        "processor": "gfx942",
        "variant": "made-up",
        "profile": "2025",
        "block_size": 64,
        "wavefront_size": 64,
        "group_segment_fixed_size": [0],
        "blocks_per_cu": [29],
    }
    assert observed.replay_partial(row).reproduced == 0


def test_recording_format_round_trips(tmp_path):
    row = {
        "id": "x",
        "source": "test",
        "kind": "measured",
        "profile": "2026-08",
        "processor": "gfx942",
        "vgpr_count": 128,
        "sgpr_count": 40,
        "group_segment_fixed_size": 49152,
        "wavefront_size": 64,
        "block_size": 256,
        "dynamic_lds": 0,
        "blocks_per_cu": 1,
        "note": 'quote " and back\\slash',
    }
    path = tmp_path / "rec.toml"
    path.write_text(observed.format_observation(row) + observed.format_observation({**row, "id": "y"}))
    rows, _ = observed.load(path)
    assert [r["id"] for r in rows] == ["x", "y"] and rows[0]["note"] == row["note"]
    assert observed.answer_of(observed.replay(rows[0])) == 1
