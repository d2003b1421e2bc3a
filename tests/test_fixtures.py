"""amdocc against the LLVM 22 output stored next to each fixture (python tools/fixtures).

These tests need no LLVM at run time: the oracle is the text llvm-readelf-22 and llvm-objdump-22
printed when the fixtures were made. Every metadata field and every descriptor field is compared.
"""

from __future__ import annotations

import hashlib

import pytest

import amdocc
from amdocc.containers import Blob, Skipped, scan
from conftest import FIXTURES, ROOT
from oracle.check import ABI_TO_CO
from oracle.compare import (
    compare_descriptor,
    compare_metadata,
    count_leaves,
    feature_mismatches,
    isa_version_from_readelf,
)
from oracle.llvm22 import header_flags, metadata_documents, parse_descriptor_dump


def _load_manifest():
    import json

    with open(FIXTURES / "manifest.json") as fh:
        return json.load(fh)


MANIFEST = _load_manifest()
BARE = [f for f in MANIFEST["fixtures"] if f["kind"] in ("elf", "elf-rel")]
CONTAINERS = [f for f in MANIFEST["fixtures"] if f["kind"] not in ("elf", "elf-rel")]


COMPARED = {"metadata": 0, "descriptor": 0, "kernels": 0}  # what every test here compared


def _oracle_mismatches(co, oracle: dict, amd_kernel_code: dict | None = None) -> list[str]:
    """Everything LLVM printed for one code object, against amdocc's parse of it. Comparing
    nothing is a mismatch too: every value LLVM printed must have been compared."""
    out = []
    text = (FIXTURES / oracle["readelf"]).read_text()
    hdr = header_flags(text)
    co_version = ABI_TO_CO[hdr["abi_version"]]
    if co.code_object_version != co_version:
        out.append(f"CO version: LLVM {co_version}, amdocc {co.code_object_version}")
    if co_version == 2:
        # The processor lives only in the ISA note; LLVM prints its version.
        if co.target.isa_version != isa_version_from_readelf(text) or co.e_flags != hdr["e_flags"]:
            out.append(f"ISA: LLVM {isa_version_from_readelf(text)}, amdocc {co.target.isa_version}")
    elif co.processor != hdr["processor"] or co.e_flags != hdr["e_flags"]:
        out.append(
            f"processor/e_flags: LLVM {hdr['processor']} {hdr['e_flags']:#x}, amdocc {co.processor} {co.e_flags:#x}"
        )
    out += feature_mismatches(co.target_id, hdr["features"], co_version)
    docs = metadata_documents(text)
    assert len(docs) == 1, "each fixture has exactly one metadata note"
    found, compared = compare_metadata(co.metadata, docs[0])
    out += found
    if compared != count_leaves(docs[0]) or compared == 0:
        out.append(f"compared {compared} of the {count_leaves(docs[0])} metadata values LLVM printed")
    COMPARED["metadata"] += compared
    if co_version == 2:
        # llvm-objdump cannot decode amd_kernel_code_t: compare with what the assembler was given.
        (k,) = co.kernels
        d = k.descriptor.as_dict()
        for field, value in amd_kernel_code.items():
            mine = {
                "workgroup_group_segment_byte_size": d["group_segment_fixed_size"],
                "workitem_private_segment_byte_size": d["private_segment_fixed_size"],
                "kernarg_segment_byte_size": d["kernarg_size"],
            }.get(field, d.get(field))
            if mine != value:
                out.append(f"amd_kernel_code_t {field}: assembled {value}, amdocc {mine}")
        return out
    dumped = parse_descriptor_dump((FIXTURES / oracle["kd"]).read_text())
    assert len(dumped) == 1
    (descriptors,) = dumped.values()
    if {k.symbol for k in co.kernels} != set(descriptors):
        out.append(f"kernels: LLVM {sorted(descriptors)}, amdocc {sorted(k.symbol for k in co.kernels)}")
    for k in co.kernels:
        if k.symbol in descriptors:
            found, compared, expected = compare_descriptor(k.descriptor.as_dict(), descriptors[k.symbol])
            out += [f"{k.symbol}: {m}" for m in found]
            if compared != expected or compared == 0:
                out.append(f"{k.symbol}: compared {compared} of the {expected} descriptor fields LLVM printed")
            COMPARED["descriptor"] += compared
            COMPARED["kernels"] += 1
    return out


@pytest.mark.parametrize("fixture", BARE, ids=[f["file"] for f in BARE])
def test_bare_code_object_matches_llvm(fixture):
    cos = amdocc.load(FIXTURES / fixture["file"])
    assert len(cos) == 1
    co = cos[0]
    assert [k.name for k in co.kernels] == fixture["kernels"] or sorted(k.name for k in co.kernels) == sorted(
        fixture["kernels"]
    )
    assert _oracle_mismatches(co, fixture["oracle"], fixture.get("amd_kernel_code_t")) == []


def _expected_entries(fixture):
    """(entry id or label, sha256) of every code object the fixture's manifest lists, and the
    skipped entries, from LLVM's own extraction (clang-offload-bundler / llvm-objcopy)."""
    expected, skipped, oracles = [], [], {}
    for bundle in fixture.get("bundles", []):
        for e in bundle["entries"]:
            if "skipped" in e:
                skipped.append(e["entry_id"])
            else:
                expected.append((e["entry_id"], e["sha256"]))
                oracles[e["sha256"]] = e["oracle"]
    for image in fixture.get("offload_images", []):
        if "skipped" in image:
            skipped.append(image["arch"])
        else:
            expected.append((image["arch"], image["sha256"]))
            oracles[image["sha256"]] = image["oracle"]
    return expected, skipped, oracles


@pytest.mark.parametrize("fixture", CONTAINERS, ids=[f["file"] for f in CONTAINERS])
def test_container_entries_match_llvm_extraction(fixture):
    expected, expected_skips, _ = _expected_entries(fixture)
    found, skipped = [], []
    for item in scan(FIXTURES / fixture["file"]):
        assert not hasattr(item, "error"), f"{item.origin}: {getattr(item, 'error', '')}"
        if isinstance(item, Blob):
            found.append((item.entry_id, hashlib.sha256(item.data).hexdigest()))
        elif isinstance(item, Skipped):
            skipped.append(item)
    # OffloadBinary images are labelled "<kind>-<triple>-<arch>" by amdocc; the manifest keys by arch.
    normalized = sorted((eid.rsplit("-", 1)[-1] if fixture.get("offload_images") else eid, sha) for eid, sha in found)
    assert normalized == sorted(expected)
    assert len(skipped) == len(expected_skips)


@pytest.mark.parametrize("fixture", CONTAINERS, ids=[f["file"] for f in CONTAINERS])
def test_container_code_objects_match_llvm(fixture):
    _, _, oracles = _expected_entries(fixture)
    for item in scan(FIXTURES / fixture["file"]):
        if isinstance(item, Blob):
            (co,) = amdocc.load(item.data)
            oracle = oracles[hashlib.sha256(item.data).hexdigest()]
            assert _oracle_mismatches(co, oracle) == [], str(item.origin)


def test_sample_shipped_in_package_matches_llvm():
    sample = MANIFEST["sample"]
    cos = amdocc.load(ROOT / sample["file"])
    assert sorted(co.processor for co in cos) == sorted(sample["targets"])
    by_sha = {e["sha256"]: e for b in sample["bundles"] for e in b["entries"] if "sha256" in e}
    for item in scan(ROOT / sample["file"]):
        if isinstance(item, Blob):
            entry = by_sha[hashlib.sha256(item.data).hexdigest()]
            (co,) = amdocc.load(item.data)
            assert _oracle_mismatches(co, entry["oracle"]) == []


def test_mapped_file_with_pages_released_reads_every_copy(tmp_path, monkeypatch):
    """Bundles back to back in a file read through mmap, with scanned pages handed back every
    few pages: every copy still yields the entries LLVM's unbundler extracted."""
    import importlib

    regions_module = importlib.import_module("amdocc.containers.regions")
    from amdocc.containers.model import Limits

    sample = MANIFEST["sample"]
    expected = sorted(e["sha256"] for b in sample["bundles"] for e in b["entries"] if "sha256" in e)
    blob = (ROOT / sample["file"]).read_bytes()
    blob += b"\0" * (-len(blob) % 4096)
    copies = 9
    big = tmp_path / "copies.hipfb"
    big.write_bytes(blob * copies)
    monkeypatch.setattr(regions_module, "RELEASE_EVERY", 4096)
    released = []
    real_release = regions_module.release_pages
    monkeypatch.setattr(regions_module, "release_pages", lambda *a: released.append(a[1:]) or real_release(*a))
    found = [hashlib.sha256(i.data).hexdigest() for i in scan(big, Limits(mmap_threshold=0)) if isinstance(i, Blob)]
    assert released, "the mapped file was never released"
    assert sorted(found) == sorted(expected * copies)


def _all_oracle_pairs():
    """(code object, oracle, amd_kernel_code_t values) for every code object with a stored oracle."""
    for fixture in BARE:
        (co,) = amdocc.load(FIXTURES / fixture["file"])
        yield co, fixture["oracle"], fixture.get("amd_kernel_code_t")
    for fixture in CONTAINERS:
        _, _, oracles = _expected_entries(fixture)
        for item in scan(FIXTURES / fixture["file"]):
            if isinstance(item, Blob):
                (co,) = amdocc.load(item.data)
                yield co, oracles[hashlib.sha256(item.data).hexdigest()], None


def test_every_value_llvm_printed_is_compared_and_kernels_without_an_objdump_oracle_are_counted():
    """The totals compared equal the totals in LLVM's stored text, counted here without amdocc."""
    from oracle.compare import NOT_ENCODED

    COMPARED.update(metadata=0, descriptor=0, kernels=0)
    printed_metadata = printed_descriptor = kernels = without_descriptor_oracle = 0
    for co, oracle, amd_kernel_code in _all_oracle_pairs():
        assert _oracle_mismatches(co, oracle, amd_kernel_code) == []
        kernels += len(co.kernels)
        (doc,) = metadata_documents((FIXTURES / oracle["readelf"]).read_text())
        printed_metadata += count_leaves(doc)
        if "kd" not in oracle:  # CO v2: llvm-objdump cannot decode amd_kernel_code_t
            without_descriptor_oracle += len(co.kernels)
            continue
        (dumped,) = parse_descriptor_dump((FIXTURES / oracle["kd"]).read_text()).values()
        printed_descriptor += sum(1 for d in dumped.values() for name in d if name not in NOT_ENCODED)
    assert COMPARED["metadata"] == printed_metadata > 0
    assert COMPARED["descriptor"] == printed_descriptor > 0
    assert COMPARED["kernels"] + without_descriptor_oracle == kernels
    assert without_descriptor_oracle == sum(1 for f in BARE if "kd" not in f["oracle"]) >= 1  # legacy_v2_gfx906.co
    print(
        f"\nfixtures: {kernels} kernels, {printed_metadata} metadata values and {printed_descriptor} "
        f"descriptor fields compared; {without_descriptor_oracle} kernel without a descriptor oracle"
    )
