"""Numbers of tables/split_policies.toml and tables/prefill_gate.toml held against their sources,
including the ones no current code path reads (a row's unused column is still a fact it states).

- split_policies.toml: AITER's ``_SPLIT_POLICIES`` (aiter/ops/flydsl/fp8_mqa_logits_kernels.py,
  PR #5921), as docs/consumers.md §1 transcribes it field by field.
- prefill_gate.toml ``[aiter] block_size``: AITER launches fmha_v3_fwd with ``bdx = 512``, or 256
  for hd192/128 (csrc/cpp_itfs/mha_fwd.cu, docs/consumers.md §2); each kernel of the
  amd-aiter wheel declares that size in its metadata note, read here with llvm-readelf-22.

The tables are read raw with tomllib, not through amdocc.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from amdocc.tabledata import tables_dir

# docs/consumers.md §1, the `_SplitPolicy` table: gfx942 (MI300X, 304 CU) | gfx950 (MI355X, 256 CU).
AITER_SPLIT_POLICIES = {
    "gfx942": {
        "min_seq_len_kv": 4096,
        "min_tiles_per_split": 8,
        "cu_oversub": 4,
        "fallback_cu": 304,
        "occupancy_aware": True,
        "block_overhead_tiles": 8,
        "streaming_lowh_cu_oversub": 0,
        "streaming_lowh_residency": 0,
    },
    "gfx950": {
        "min_seq_len_kv": 0,
        "min_tiles_per_split": 2,
        "cu_oversub": 4,
        "fallback_cu": 256,
        "occupancy_aware": False,
        "block_overhead_tiles": 0,
        "streaming_lowh_cu_oversub": 12,
        "streaming_lowh_residency": 4,
    },
}


def _table(name: str) -> dict:
    with open(tables_dir() / name, "rb") as f:
        return tomllib.load(f)


def test_split_policy_rows_are_aiters_field_for_field():
    table = _table("split_policies.toml")
    # An unknown arch uses gfx942's policy; _MAX_SPLIT_SEARCH = 64 (§1.1).
    assert (table["default"], table["max_split_search"]) == ("gfx942", 64)
    for arch, fields in AITER_SPLIT_POLICIES.items():
        row = {k: v for k, v in table[arch].items() if k != "source"}
        assert row == fields, arch
    assert {k for k, v in table.items() if isinstance(v, dict)} == set(AITER_SPLIT_POLICIES)


@pytest.mark.corpus
@pytest.mark.llvm22
def test_fmha_block_sizes_are_what_the_aiter_kernels_declare(aiter_hsa):
    # Every fmha_v3_fwd kernel of the wheel, gfx942 (both SKU folders) and gfx950, named
    # fwd_hd<qk>[_hd<v>]_...: its .reqd_workgroup_size and .max_flat_workgroup_size.
    files = sorted(aiter_hsa.glob("gfx9*/fmha_v3_fwd/**/fwd_hd*.co"))
    assert len(files) >= 16
    text = subprocess.run(
        ["llvm-readelf-22", "--notes", *map(str, files)], capture_output=True, text=True, check=True
    ).stdout
    sizes: dict[str, set[int]] = defaultdict(set)
    for chunk in re.split(r"^File: ", text, flags=re.M)[1:]:
        path = chunk.splitlines()[0]
        head = re.search(r"/fwd_(hd\d+)", path).group(1)
        flat = int(re.search(r"\.max_flat_workgroup_size:\s+(\d+)", chunk).group(1))
        reqd = [int(x) for x in re.search(r"\.reqd_workgroup_size:\s+- (\d+)\s+- (\d+)\s+- (\d+)", chunk).groups()]
        assert reqd[0] * reqd[1] * reqd[2] == flat, path
        sizes[head].add(flat)
    declared = {head: seen.pop() for head, seen in sizes.items() if len(seen) == 1}
    assert declared == {"hd128": 512, "hd192": 256}
    assert _table("prefill_gate.toml")["aiter"]["block_size"] == declared
