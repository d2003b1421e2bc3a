"""Code objects with several NT_AMDGPU_METADATA notes: clang-22's device link of relocatable
device code (``-fgpu-rdc``, with the classic driver and with ``--offload-new-driver``) writes
one note per LTO partition, and amdocc must read every one of them, as comgr (and so HIP) does.

The library is built at test time by tools/several_notes.py (two translation units, seven
kernels, gfx942 + gfx1100 + gfx1201) and unbundled with LLVM's own tools (tests/oracle/unbundle.py).
Expected values come from ``llvm-readelf-22 --notes`` (every note), ``llvm-objdump-22`` for
the descriptors (tests/oracle/check.py), and ROCm 7.14's runtime on the emulated device
(hipFuncGetAttribute, hipModuleOccupancyMaxActiveBlocksPerMultiprocessor). What the runtime does
when notes disagree or describe a kernel twice is asked of the runtime, on images edited in one
known place (docs/code-object-format.md §2.4).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pytest

import amdocc
from amdocc.codeobject.reader import parse_code_object
from amdocc.errors import FormatError, Origin
from fuzz.formats.elf import SHT_NOTE, ElfView, build_notes, elf_replace_section
from fuzz.formats.metadata import mp_encode
from hip_emulated import record, runtime_dir
from oracle import llvm22
from oracle.check import check_files
from oracle.compare import compare_metadata, count_leaves
from oracle.unbundle import unbundle_library
from several_notes import DRIVERS, PROCESSORS, build

pytestmark = pytest.mark.llvm22

ROOT = Path(__file__).resolve().parent.parent
NT_AMDGPU_METADATA = 32
KERNELS = 7  # in tools/fixture_src/notes_a.hip and notes_b.hip
SPILLING = "_Z11notes_spillPfi"
SCALE_FLOAT, SCALE_DOUBLE = "_Z11notes_scaleIfEvPT_S0_", "_Z11notes_scaleIdEvPT_S0_"  # same length
BLOCKS = (32, 64, 128, 256, 1024)


@dataclass
class Built:
    library: Path
    images: dict[str, Path]  # processor -> the code object LLVM's tools unbundle
    notes: dict[str, list[dict]]  # processor -> every metadata document llvm-readelf-22 prints


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Built]:
    out = {}
    for driver in DRIVERS:
        root = tmp_path_factory.mktemp(driver)
        library, _ = build(root, driver)
        images = {}
        for image in unbundle_library(library, root / "unbundled"):
            (processor,) = [p for p in PROCESSORS if image.name.endswith(f"-{p}.co")]
            images[processor] = image
        seen = llvm22.readelf([str(p) for p in images.values()])
        out[driver] = Built(library, images, {p: seen[str(i)]["metadata"] for p, i in images.items()})
    return out


def _llvm_kernels(docs: list[dict]) -> dict[str, tuple[int, dict]]:
    """symbol -> (1-based note number, the kernel's entry), from every note LLVM printed."""
    return {k[".symbol"]: (n, k) for n, doc in enumerate(docs, start=1) for k in doc["amdhsa.kernels"]}


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "amdocc", *args], capture_output=True, text=True, env=env)


# -- what LLVM builds, read whole --------------------------------------------------------------


@pytest.mark.parametrize("driver", DRIVERS)
def test_the_device_link_writes_one_note_per_partition_with_the_spilling_kernel_after_the_first(built, driver):
    """The input this file is about: several notes, and the spilling kernel not in the first."""
    for processor in PROCESSORS:
        docs = built[driver].notes[processor]
        kernels = _llvm_kernels(docs)
        assert len(docs) > 1 and len(kernels) == KERNELS, (processor, len(docs))
        assert kernels[SPILLING + ".kd"][0] > 1


@pytest.mark.parametrize("driver", DRIVERS)
def test_every_kernel_of_every_note_equals_llvm_readelf_value_by_value(built, driver):
    images = built[driver].images
    report = check_files([str(images[p]) for p in PROCESSORS])  # every note, and every descriptor
    assert not report.mismatches, report.mismatches[:10]
    assert report.kernels == KERNELS * len(PROCESSORS) and report.metadata_notes > len(PROCESSORS)
    assert report.kernels_with_descriptor_oracle == report.kernels and report.descriptor_fields > 0
    compared = 0
    for processor in PROCESSORS:
        (co,) = amdocc.load(images[processor])
        llvm = _llvm_kernels(built[driver].notes[processor])
        assert sorted(k.symbol for k in co.kernels) == sorted(llvm)
        for kernel in co.kernels:
            found, n = compare_metadata(kernel.metadata, llvm[kernel.symbol][1])
            assert not found and n == count_leaves(llvm[kernel.symbol][1]), (processor, kernel.symbol, found)
            compared += n
            assert not [f for f in kernel.findings if f.code.startswith(("metadata-", "kernel-described"))]
        assert [(f.code, f.severity) for f in co.findings] == [("metadata-notes", "info")]
        assert co.findings[0].message.startswith(f"{len(built[driver].notes[processor])} metadata notes")
    assert compared > KERNELS * len(PROCESSORS) * 20


@pytest.mark.parametrize("driver", DRIVERS)
def test_occupancy_on_gfx1100_answers_for_every_kernel_of_every_note(built, driver):
    done = _cli("occupancy", "--json", "--target", "gfx1100", "--block", "128", str(built[driver].library))
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert sorted(r["symbol"] for r in results) == sorted(_llvm_kernels(built[driver].notes["gfx1100"]))
    assert all(r["error"] is None and r["blocks_per_cu"] > 0 for r in results)


@pytest.mark.parametrize("driver", DRIVERS)
def test_check_fails_the_spilling_kernel_of_a_later_note_on_every_processor(built, driver):
    done = _cli("check", "--json", str(built[driver].library))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["not_evaluated"] == [] and report["errors"] == []
    assert report["summary"]["kernels"] == KERNELS * len(PROCESSORS)
    spills = {(v["processor"], v["symbol"]): v["value"] for v in report["violations"] if v["rule"] == "vgpr-spills"}
    expected = {
        (p, SPILLING + ".kd"): _llvm_kernels(built[driver].notes[p])[SPILLING + ".kd"][1][".vgpr_spill_count"]
        for p in PROCESSORS
    }
    assert spills == expected and all(expected.values())


# -- what HIP makes of the same code objects ---------------------------------------------------


def _attributes_agree(hip, module, kernel) -> None:
    attrs = hip.attributes(module, kernel.name)
    assert attrs["ok"], (kernel.name, attrs)
    r = kernel.resources
    hip_says = tuple(attrs[a] for a in ("NUM_REGS", "SHARED_SIZE_BYTES", "LOCAL_SIZE_BYTES", "MAX_THREADS_PER_BLOCK"))
    assert hip_says == (r.vgprs, r.lds, r.scratch, r.max_flat_workgroup_size), kernel.name


@pytest.mark.parametrize("processor", PROCESSORS)
def test_rocm714_answers_for_every_kernel_of_every_note_as_amdocc_does(hip_oracle, built, processor):
    """hipFuncGetAttribute and the occupancy API, per kernel of every note, against amdocc."""
    hip = hip_oracle(runtime_dir("rocm-7.14"), processor)
    for driver in DRIVERS:
        (co,) = amdocc.load(built[driver].images[processor])
        assert len(co.kernels) == KERNELS
        module = hip.load(co.data)["module"]
        for kernel in co.kernels:
            _attributes_agree(hip, module, kernel)
            record("rocm-7.14", processor, 4)
            for block in BLOCKS:
                answer = hip.occupancy(module, kernel.name, block)
                occ = amdocc.occupancy(kernel, block_size=block, profile="rocm-7.14")
                assert answer["ok"] and answer["value"] == occ.blocks_per_cu, (kernel.name, block, answer)
                record("rocm-7.14", processor)


def _metadata_notes(data: bytes):
    """(desc offset, desc) of every metadata note, read with the fuzzer's ELF view (not amdocc)."""
    elf = ElfView(data)
    return [
        (n.f["desc_at"], n.f["desc"])
        for s in elf.of_type(SHT_NOTE)
        for n in elf.notes(s)
        if n.name == "AMDGPU" and n.f["type"] == NT_AMDGPU_METADATA
    ]


def _edit_note(data: bytes, containing: str, old: bytes, new: bytes) -> tuple[bytes, int]:
    """``data`` with ``old`` replaced by ``new`` (same length) inside the one metadata note that
    describes ``containing``, in place (the PT_NOTE segment sees the same bytes), and the note's number."""
    notes = _metadata_notes(data)
    (number,) = [i for i, (_, desc) in enumerate(notes, start=1) if containing.encode() in desc]
    at, desc = notes[number - 1]
    assert len(old) == len(new) and old in desc
    edited = bytearray(data)
    edited[at : at + len(desc)] = desc.replace(old, new)
    return bytes(edited), number


def _load(data: bytes):
    (co,) = amdocc.load(data)
    return co, {k.symbol: k for k in co.kernels}


def test_rocm714_answers_a_kernel_described_twice_from_the_later_note_and_so_does_amdocc(hip_oracle, built):
    """The note of notes_scale<double> is edited to describe notes_scale<float> (symbols of one
    length): HIP then reports the double instantiation's LDS for the float one."""
    image = built["rdc"].images["gfx1100"].read_bytes()
    double_note = next(n for n, (_, d) in enumerate(_metadata_notes(image), 1) if SCALE_DOUBLE.encode() in d)
    float_note = next(n for n, (_, d) in enumerate(_metadata_notes(image), 1) if SCALE_FLOAT.encode() in d)
    later, earlier = max(double_note, float_note), min(double_note, float_note)
    # The later note's kernel (source) gives its entry to the earlier note's (renamed).
    source, renamed = (SCALE_DOUBLE, SCALE_FLOAT) if double_note > float_note else (SCALE_FLOAT, SCALE_DOUBLE)
    edited, number = _edit_note(image, source, source.encode(), renamed.encode())
    assert number == later
    llvm = _llvm_kernels(built["rdc"].notes["gfx1100"])
    _, kernels = _load(edited)
    kernel = kernels[renamed + ".kd"]
    assert kernel.metadata[".group_segment_fixed_size"] == llvm[source + ".kd"][1][".group_segment_fixed_size"]
    assert [(f.code, f.severity, f.message) for f in kernel.findings if f.code == "kernel-described-twice"] == [
        (
            "kernel-described-twice",
            "error",
            f"described in notes {earlier} and {later} with different values; note {later}'s entry is used: "
            "HIP answers from the later entry",
        )
    ]
    # The other instantiation has lost its entry: only its descriptor names it.
    assert "metadata-missing" in [f.code for f in kernels[source + ".kd"].findings]

    hip = hip_oracle(runtime_dir("rocm-7.14"), "gfx1100")
    module = hip.load(edited)["module"]
    _attributes_agree(hip, module, kernel)
    assert hip.attributes(module, source)["error"] == "hipErrorNotFound"
    record("rocm-7.14", "gfx1100", 5)


def test_rocm714_leaves_out_a_note_whose_version_differs_and_amdocc_says_so(hip_oracle, built):
    image = built["rdc"].images["gfx1100"].read_bytes()
    key = mp_encode("amdhsa.version")
    edited, number = _edit_note(image, SPILLING, key + mp_encode([1, 2]), key + mp_encode([1, 3]))
    at = _metadata_notes(edited)[number - 1][0]
    co, kernels = _load(edited)
    assert (
        "metadata-note-left-out",
        "error",
        f"metadata note {number} (at {at:#x} in the code object) says amdhsa.version [1, 3], note 1 [1, 2]: "
        "comgr, through which HIP reads metadata, leaves the whole note out, so HIP does not find the 1 "
        "kernel(s) it describes",
    ) in [(f.code, f.severity, f.message) for f in co.findings]
    spill = kernels[SPILLING + ".kd"]
    assert [f.code for f in spill.findings if f.severity == "error"] == ["metadata-note-left-out"]
    assert spill.metadata[".vgpr_spill_count"] > 0  # still read: its resources are what the note says

    hip = hip_oracle(runtime_dir("rocm-7.14"), "gfx1100")
    module = hip.load(edited)["module"]
    assert hip.attributes(module, SPILLING)["error"] == "hipErrorNotFound"
    for symbol, kernel in kernels.items():
        if symbol != SPILLING + ".kd":
            _attributes_agree(hip, module, kernel)
            assert not [f for f in kernel.findings if f.severity == "error"]
    record("rocm-7.14", "gfx1100", KERNELS)


def test_rocm714_merges_a_note_whose_target_differs_and_amdocc_warns(hip_oracle, built):
    image = built["rdc"].images["gfx1100"].read_bytes()
    edited, number = _edit_note(image, SPILLING, b"amdgcn-amd-amdhsa--gfx1100", b"amdgcn-amd-amdhsa--gfx1101")
    at = _metadata_notes(edited)[number - 1][0]
    co, kernels = _load(edited)
    assert [(f.code, f.severity, f.message) for f in co.findings[1:]] == [
        (
            "metadata-notes-disagree",
            "warning",
            f"metadata note {number} (at {at:#x} in the code object) says amdhsa.target "
            "'amdgcn-amd-amdhsa--gfx1101', note 1 'amdgcn-amd-amdhsa--gfx1100'; note 1's is the code object's, "
            "as comgr keeps it",
        )
    ]
    assert co.metadata["amdhsa.target"] == "amdgcn-amd-amdhsa--gfx1100" and len(kernels) == KERNELS
    hip = hip_oracle(runtime_dir("rocm-7.14"), "gfx1100")
    module = hip.load(edited)["module"]
    for kernel in kernels.values():
        _attributes_agree(hip, module, kernel)
    record("rocm-7.14", "gfx1100", KERNELS)


# -- comgr's other rules, on notes rebuilt by hand ----------------------------------------------


def _with_notes(image: bytes, edit) -> bytes:
    """``image`` with its note section rebuilt: ``edit(trees)`` changes the decoded metadata of
    each note (a list, in note order) in place; other notes are kept as they are."""
    elf = ElfView(image)
    (section,) = elf.of_type(SHT_NOTE)
    notes = elf.notes(section)
    trees = [msgpack.unpackb(n.f["desc"], raw=False) for n in notes if n.f["type"] == NT_AMDGPU_METADATA]
    edit(trees)
    it = iter(trees)
    rebuilt = [
        (n.f["name"], n.f["type"], mp_encode(next(it)) if n.f["type"] == NT_AMDGPU_METADATA else n.f["desc"])
        for n in notes
    ]
    rebuilt += [(b"AMDGPU\0", NT_AMDGPU_METADATA, mp_encode(t)) for t in it]  # notes edit() added
    step = 8 if section.f["sh_addralign"] == 8 else 4
    return elf_replace_section(image, section.index, build_notes(rebuilt, step))


def _parse(data: bytes):
    co = parse_code_object(data, Origin("edited.co"))
    return co, {k.symbol: k for k in co.kernels}


def _triples(findings):
    return [(f.code, f.severity, f.message) for f in findings]


@pytest.fixture(scope="module")
def gfx942(built) -> bytes:
    return built["new-driver"].images["gfx942"].read_bytes()


def _symbols(tree) -> list[str]:
    return [k[".symbol"] for k in tree["amdhsa.kernels"]]


def test_printf_tables_in_two_notes_leave_the_later_note_out_and_one_alone_is_adopted(gfx942):
    table = ["1:4:%d\\n"]

    def two(trees):
        trees[0]["amdhsa.printf"] = table
        trees[-1]["amdhsa.printf"] = ["2:4:%f\\n"]

    co, kernels = _parse(_with_notes(gfx942, two))
    (left_out,) = [f for f in co.findings if f.code == "metadata-note-left-out"]
    assert "carries an amdhsa.printf table, as an earlier note does" in left_out.message
    assert co.metadata["amdhsa.printf"] == table
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))
    assert "metadata-note-left-out" in [f.code for f in kernels[symbol].findings]

    def one(trees):
        trees[-1]["amdhsa.printf"] = table

    co, kernels = _parse(_with_notes(gfx942, one))
    assert co.metadata["amdhsa.printf"] == table
    assert [f.code for f in co.findings] == ["metadata-notes"]


def test_a_later_note_without_a_kernel_list_or_version_is_left_out(gfx942):
    def no_kernels(trees):
        trees[1]["amdhsa.kernels"] = {"not": "a list"}

    co, _ = _parse(_with_notes(gfx942, no_kernels))
    assert [f.message.split(": ")[0].split(") ")[1] for f in co.findings if f.severity == "error"] == [
        "has no amdhsa.kernels list"
    ]
    assert len(co.kernels) == KERNELS  # the lost entry's descriptor still names its kernel

    def no_version(trees):
        del trees[1]["amdhsa.version"]

    co, _ = _parse(_with_notes(gfx942, no_version))
    assert [f.message.split(": ")[0].split(") ")[1] for f in co.findings if f.severity == "error"] == [
        "has no amdhsa.version list"
    ]


def test_a_kernel_described_identically_twice_is_a_warning(gfx942):
    def again(trees):
        trees.append(dict(trees[-1]))

    co, kernels = _parse(_with_notes(gfx942, again))
    last = len(_metadata_notes(gfx942))
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))
    assert _triples(kernels[symbol].findings)[:1] == [
        (
            "kernel-described-twice",
            "warning",
            f"described in notes {last} and {last + 1} identically; note {last + 1}'s entry is used: "
            "HIP answers from the later entry",
        )
    ]
    assert len(co.kernels) == KERNELS


def test_a_malformed_later_note_names_the_file_and_its_offset(gfx942):
    notes = _metadata_notes(gfx942)
    at, _ = notes[2]
    broken = bytearray(gfx942)
    broken[at] = 0xC1  # a byte MessagePack never uses
    with pytest.raises(FormatError) as caught:
        parse_code_object(bytes(broken), Origin("edited.co"))
    assert caught.value.offset == at and "edited.co" in str(caught.value)
    assert "malformed MessagePack in the AMDGPU metadata note" in caught.value.message


def test_the_merged_metadata_keeps_the_first_notes_top_level_values_and_every_kernel(gfx942, built):
    co, _ = _parse(gfx942)
    docs = built["new-driver"].notes["gfx942"]
    assert {k: v for k, v in co.metadata.items() if k != "amdhsa.kernels"} == {
        k: v for k, v in docs[0].items() if k != "amdhsa.kernels"
    }
    assert [k[".symbol"] for k in co.metadata["amdhsa.kernels"]] == [
        k[".symbol"] for doc in docs for k in doc["amdhsa.kernels"]
    ]


def test_a_boolean_is_not_the_integer_1_when_two_notes_describe_a_kernel(gfx942):
    """MessagePack tells true from 1; so do comgr's document nodes, and so does the comparison."""
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))

    def again_with_a_bool(trees):
        entry = dict(trees[-1]["amdhsa.kernels"][0])
        entry[".uniform_work_group_size"] = 1
        trees[-1]["amdhsa.kernels"] = [entry]
        trees.append({**trees[-1], "amdhsa.kernels": [{**entry, ".uniform_work_group_size": True}]})

    _, kernels = _parse(_with_notes(gfx942, again_with_a_bool))
    (twice,) = [f for f in kernels[symbol].findings if f.code == "kernel-described-twice"]
    assert (twice.severity, "with different values" in twice.message) == ("error", True)
    assert kernels[symbol].metadata[".uniform_work_group_size"] is True


def test_a_float_in_a_later_note_is_written_as_json_exactly(gfx942):
    """Whether the metadata may take the float-free JSON path is asked of every note."""

    def with_a_float(trees):
        trees[-1]["amdhsa.kernels"][0][".made_up_ratio"] = 0.1

    data = _with_notes(gfx942, with_a_float)
    co, _ = _parse(data)
    assert co.metadata_plain is False
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))
    done = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", "--json", "-"],
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    (record_,) = json.loads(done.stdout)["code_objects"]
    (kernel,) = [k for k in record_["kernels"] if k["symbol"] == symbol]
    assert kernel["metadata"][".made_up_ratio"] == 0.1


def test_a_kernel_first_described_in_a_note_comgr_leaves_out_is_found_in_a_later_merged_one(gfx942):
    last = len(_metadata_notes(gfx942))
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))

    def left_out_then_merged(trees):
        trees.append(dict(trees[-1]))  # a copy HIP reads ...
        trees[-2] = {**trees[-2], "amdhsa.version": [1, 3]}  # ... after the original, left out

    co, kernels = _parse(_with_notes(gfx942, left_out_then_merged))
    assert [f.code for f in co.findings if f.severity == "error"] == ["metadata-note-left-out"]
    assert _triples(f for f in kernels[symbol].findings if f.code.startswith(("metadata-note", "kernel-"))) == [
        (
            "kernel-described-twice",
            "warning",
            f"described in notes {last} and {last + 1} identically; note {last + 1}'s entry is used: "
            f"comgr leaves note {last} out",
        )
    ]


def test_a_kernel_described_in_thousands_of_notes_gets_one_finding(gfx942):
    """The merge is linear in the notes and says a repeated description once."""
    last = len(_metadata_notes(gfx942))
    (symbol,) = _symbols(msgpack.unpackb(_metadata_notes(gfx942)[-1][1], raw=False))

    def thousands(trees):
        trees.extend([trees[-1]] * 3000)

    co, kernels = _parse(_with_notes(gfx942, thousands))
    assert len(co.kernels) == KERNELS
    assert _triples(f for f in kernels[symbol].findings if f.code == "kernel-described-twice") == [
        (
            "kernel-described-twice",
            "warning",
            f"described in 3001 notes ({', '.join(str(n) for n in range(last, last + 6))}, ...) identically; "
            f"note {last + 3000}'s entry is used: HIP answers from the last merged entry",
        )
    ]
