"""A census summary made in pieces (each worker summarises the rows of the files it reads, and the
main process merges the pieces in reading order) is the summary of every row added in turn, which
is what Summary.merge promises; the rows here are drawn, not read, so every field the summary
counts takes values no fixture holds: ties in spill counts across pieces, rows that both spill
and cannot launch, targets first seen in a later piece."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from amdocc.app.census_op import add_summary
from amdocc.census import Summary
from amdocc.identity import Numbering

_rows = st.fixed_dictionaries(
    {
        "member": st.sampled_from(["", "lib/a.so", "lib/b.so"]),
        "path": st.sampled_from(["a.so", "b.so"]),
        "target": st.sampled_from(["gfx942", "gfx90a", "gfx1100"]),
        "processor": st.just(None),
        "kernel": st.sampled_from(["k", "m", "_Z1fv"]),
        "waves_per_simd": st.sampled_from([None, 0, 0.25, 1.5, 8]),
        "limiter": st.sampled_from([None, "vgpr", "lds", "waves"]),
        "vgpr_spills": st.sampled_from([None, 0, 1, 3]),
        "sgpr_spills": st.sampled_from([None, 0, 2]),
        "scratch": st.sampled_from([None, 0, 16]),
        "cannot_launch": st.sampled_from([None, "hip", "hip,llvm"]),
        "launch_checked": st.booleans(),
        "findings": st.sampled_from([None, "a", "a;b", "b"]),
        "unmodelled_by": st.sampled_from([{}, {"hw": "no slots"}]),
    }
)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(_rows, max_size=40), cuts=st.lists(st.integers(0, 40), max_size=5), top=st.integers(1, 4))
def test_a_summary_merged_from_pieces_is_the_summary_of_every_row_in_turn(rows, cuts, top):
    whole, number = Summary(top=top), Numbering()
    for row in rows:
        whole.add({**row, "copy": number.copy(row["member"], row["target"], row["kernel"])})
    merged, numbered = Summary(top=top), Numbering()
    bounds = [0, *sorted(min(c, len(rows)) for c in cuts), len(rows)]
    for start, end in itertools.pairwise(bounds):
        part, local = Summary(top=top), Numbering()
        for row in rows[start:end]:
            part.add({**row, "copy": local.copy(row["member"], row["target"], row["kernel"])})
        add_summary(merged, numbered, part, local.counts())
    assert merged.as_dict() == whole.as_dict()
    assert [row["copy"] for row in merged.cannot_launch] == [row["copy"] for row in whole.cannot_launch]
