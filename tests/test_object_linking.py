"""Object-linking relocatables (llvm #191645, #192384, #192594) and metadata root keys amdocc has
not met (llvm #217261).

Oracles: Triton 3.9's LLVM (24.0.0git), the only compiler here that emits ``.amdgpu.info``
(Debian's llc-22 has no ``-amdgpu-enable-object-linking``), built each module of
tests/data/fixtures/objects/ twice (tools/fixtures/objects.py):

* its own listing of the ``.amdgpu_info`` blocks (``<stem>.amdgpu_info.txt``) is what the
  binary section must decode to, function by function;
* the same module built without object linking carries, in its metadata note as
  llvm-readelf-22 prints it (``<stem>.plain.o.readelf.txt``), the compiler's call-graph maximum
  of each kernel: what the transitive maximum of the linking build must equal;
* the linking build's own note (``<stem>.o.readelf.txt``) holds the local counts.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys

import pytest
import yaml
from elftools.elf.elffile import ELFFile

import amdocc
from amdocc.codeobject.linking import KINDS
from amdocc.errors import AmdoccError, FormatError
from conftest import FIXTURES, ROOT

OBJECTS = FIXTURES / "objects"
CASES = ("calls", "recursion", "extern")


def _notes(readelf_text: str) -> dict:
    """The metadata YAML llvm-readelf-22 --notes printed."""
    start = readelf_text.index("---\n")
    end = readelf_text.index("\n...", start)
    return yaml.safe_load(readelf_text[start : end + 4])


def _kernels(readelf_text: str) -> dict[str, dict]:
    return {k[".name"]: k for k in _notes(readelf_text)["amdhsa.kernels"]}


def _listing(stem: str) -> dict[str, dict]:
    """The compiler's .amdgpu_info blocks: {function: {directive: [values]}}."""
    out: dict[str, dict] = {}
    current: dict | None = None
    for line in (OBJECTS / f"{stem}.amdgpu_info.txt").read_text().splitlines():
        directive, _, value = line.partition(" ")
        if directive == ".amdgpu_info":
            current = out[value] = {}
        elif directive == ".end_amdgpu_info":
            current = None
        else:
            assert current is not None
            current.setdefault(directive.removeprefix(".amdgpu_"), []).append(value.strip('"'))
    return out


def _load(stem: str) -> amdocc.CodeObject:
    (co,) = amdocc.load(OBJECTS / f"{stem}.o")
    return co


@pytest.mark.parametrize("case", CASES)
def test_every_function_decodes_as_the_compiler_listed_it(case):
    stem = f"linking_{case}"
    listed = _listing(stem)
    info = _load(stem).linking
    assert info is not None and set(info.functions) == set(listed)
    for name, directives in listed.items():
        fn = info.functions[name]
        assert fn.flags == (int(directives["flags"][0]) if "flags" in directives else None)
        for key in ("num_sgpr", "num_vgpr", "num_agpr"):
            assert fn.counts.get(key) == (int(directives[key][0]) if key in directives else None), (name, key)
        size = directives.get("private_segment_size")
        assert fn.private_segment_size == (int(size[0]) if size else None)
        assert fn.uses == directives.get("use", [])
        assert fn.calls == directives.get("call", [])
        assert fn.indirect_calls == directives.get("indirect_call", [])
        assert fn.typeids == directives.get("typeid", [])
    assert info.unknown_kinds == {}


@pytest.mark.parametrize("case", ("calls", "recursion"))
def test_transitive_maximum_is_what_the_compiler_computes_without_object_linking(case):
    stem = f"linking_{case}"
    plain = _kernels((OBJECTS / f"{stem}.plain.o.readelf.txt").read_text())
    local = _kernels((OBJECTS / f"{stem}.o.readelf.txt").read_text())
    co = _load(stem)
    assert {k.name for k in co.kernels} == set(plain)
    compared = 0
    for kernel in co.kernels:
        total = kernel.object_linking["transitive"]
        want = plain[kernel.name]
        # gfx942 without AGPRs: .vgpr_count is the architectural count
        assert want[".agpr_count"] == 0 and total["num_agpr"] == 0
        assert total["num_vgpr"] == want[".vgpr_count"]
        assert total["lds_bytes"] == want[".group_segment_fixed_size"]
        assert total["private_segment_size"] == want[".private_segment_fixed_size"]
        # ... while the object's own note holds the kernel's local counts
        assert kernel.meta("vgpr_count") == local[kernel.name][".vgpr_count"]
        assert kernel.meta("group_segment_fixed_size") == local[kernel.name][".group_segment_fixed_size"] == 0
        (said,) = [f.message for f in kernel.findings if f.code == "call-graph-maximum"]
        assert f"needs {'at least ' if case == 'recursion' else ''}{want['.vgpr_count']} VGPRs" in said
        assert (
            f"{want['.group_segment_fixed_size']} B of LDS and {want['.private_segment_fixed_size']} B of scratch"
            in said
        )
        compared += 3
    assert compared == 3 * len(plain)


def test_the_local_counts_differ_from_the_linked_answer_where_callees_need_more():
    # The point of the rule: read as it is, kern would be judged on 32 VGPRs and no LDS.
    co = _load("linking_calls")
    kern = co.kernel("kern")
    plain = _kernels((OBJECTS / "linking_calls.plain.o.readelf.txt").read_text())["kern"]
    assert kern.meta("vgpr_count") < plain[".vgpr_count"]
    assert kern.meta("group_segment_fixed_size") < plain[".group_segment_fixed_size"]
    total = kern.object_linking["transitive"]
    assert total["complete"] is True and total["functions"] == ["kern", "leaf", "mid"]
    assert total["lds_uses"] == ["lds_a", "lds_b"]


def test_recursion_and_calls_outside_the_object_leave_the_maximum_a_lower_bound():
    rec = _load("linking_recursion").kernel("kern_rec").object_linking["transitive"]
    assert rec["has_recursion"] is True and rec["complete"] is False and "cycle" in rec["reason"]
    ext = _load("linking_extern").kernel("kern_ext").object_linking["transitive"]
    listed = _listing("linking_extern")["kern_ext"]
    assert ext["complete"] is False
    assert "ext" in ext["reason"] and listed["call"] == ["ext"]
    assert f"type ids {listed['indirect_call'][0]}" in ext["reason"]


def _readelf_type(path) -> str:
    out = subprocess.run(["llvm-readelf-22", "-h", str(path)], capture_output=True, text=True, check=True).stdout
    return re.search(r"Type:\s+(\w+)", out).group(1)


@pytest.mark.parametrize("name", ("linking_calls.o", "linking_calls.plain.o"))
def test_a_relocatable_is_local_counts_not_launchable(name):
    assert _readelf_type(OBJECTS / name) == "REL"
    (co,) = amdocc.load(OBJECTS / name)
    assert co.launchable is False and all(k.launchable is False for k in co.kernels)
    (finding,) = [f for f in co.findings if f.code == "local-counts"]
    assert finding.message.startswith("local counts, not launchable as built")
    assert (co.linking is None) == (name == "linking_calls.plain.o")
    kernel = co.kernels[0]
    with pytest.raises(AmdoccError, match="local counts, not launchable as built"):
        amdocc.occupancy(kernel, block_size=64)
    occ = amdocc.occupancy(kernel, block_size=64, what_if=True)
    assert occ.what_if is True and any("local counts" in w for w in occ.warnings)


def test_a_linked_code_object_is_launchable():
    assert _readelf_type(OBJECTS / "globals_gfx942.co") == "DYN"
    (co,) = amdocc.load(OBJECTS / "globals_gfx942.co")
    assert co.launchable is True and co.linking is None
    assert not [f for f in co.findings if f.code == "local-counts"]
    assert amdocc.occupancy(co.kernels[0], block_size=64).what_if is False


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *args], capture_output=True, text=True, cwd=ROOT, env=_env(), timeout=120
    )


def _env() -> dict:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_cli_refuses_occupancy_of_local_counts_unless_asked_for_a_what_if():
    path = str(OBJECTS / "linking_calls.o")
    refused = _cli("occupancy", "--block", "64", path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("local counts, not launchable as built") == 2  # kern and kern_leaf
    asked = _cli("occupancy", "--json", "--block", "64", "--what-if", "--target", "gfx942", path)
    assert asked.returncode == 0, asked.stderr
    import json

    results = json.loads(asked.stdout)["results"]
    assert sorted(r["kernel"] for r in results) == ["kern", "kern_leaf"]
    assert all(r["what_if"] for r in results)


def test_check_and_census_keep_a_relocatables_kernels_and_leave_out_only_what_needs_the_callees():
    """A gate over a build tree meets relocatables: their kernels are checked on what they hold
    (spills, scratch, LDS from the note llvm-readelf-22 prints) and the occupancy and launch rules
    are "not evaluated" with the reason, exit 0, never "unreadable" (exit 2)."""
    import json

    path = str(OBJECTS / "linking_calls.o")
    names = sorted(_kernels((OBJECTS / "linking_calls.o.readelf.txt").read_text()))
    checked = _cli("check", "--json", "--min-occupancy", "1", path)
    assert checked.returncode == 0, checked.stderr
    doc = json.loads(checked.stdout)
    assert doc["errors"] == [] and doc["summary"]["kernels"] == len(names)
    local = {n["rule"]: n for n in doc["not_evaluated"] if "local counts" in n["reason"]}
    assert set(local) == {"occupancy", "launch"} and {n["kernels"] for n in local.values()} == {len(names)}
    census = _cli("census", "--json", path)
    assert census.returncode == 0, census.stderr
    assert json.loads(census.stdout)["kernels"] == len(names)
    assert census.stderr.count("local counts") == 1  # said once for the target, with its count
    with_what_if = _cli("check", "--json", "--what-if", "--target", "gfx942", path)
    assert not [n for n in json.loads(with_what_if.stdout)["not_evaluated"] if "local counts" in n["reason"]]


def test_inspect_json_carries_the_linking_record():
    import json

    done = _cli("inspect", "--json", str(OBJECTS / "linking_calls.o"))
    assert done.returncode == 0, done.stderr
    (co,) = json.loads(done.stdout)["code_objects"]
    assert co["launchable"] is False and co["elf_type"] == "rel"
    assert set(co["object_linking"]["functions"]) == set(_listing("linking_calls"))
    # LDS variables as llvm-readelf-22 lists them: SHN_AMDGPU_LDS (0xff00) symbols, value = alignment
    symbols = (OBJECTS / "linking_calls.o.readelf.txt").read_text()
    for name, record in co["object_linking"]["lds"].items():
        (row,) = [ln.split() for ln in symbols.splitlines() if ln.endswith(f" {name}") and "PRC[0xff00]" in ln]
        assert (record["align"], record["size"]) == (int(row[1], 16), int(row[2]))
    kern = next(k for k in co["kernels"] if k["name"] == "kern")
    assert kern["launchable"] is False
    plain = _kernels((OBJECTS / "linking_calls.plain.o.readelf.txt").read_text())["kern"]
    assert kern["object_linking"]["transitive"]["num_vgpr"] == plain[".vgpr_count"]


# -- a lying .amdgpu.info ---------------------------------------------------------------------


def _info_section(data: bytes) -> tuple[int, int]:
    """(file offset, size) of .amdgpu.info, as pyelftools reads the section table."""
    import io

    section = ELFFile(io.BytesIO(data)).get_section_by_name(".amdgpu.info")
    return section["sh_offset"], section["sh_size"]


def _entries(data: bytes) -> list[tuple[int, int, int]]:
    """(file offset, kind, length) of each entry, walked by the documented layout."""
    start, size = _info_section(data)
    out, pos = [], start
    while pos < start + size:
        out.append((pos, data[pos], data[pos + 1]))
        pos += 2 + data[pos + 1]
    return out


def _patched(stem: str, change) -> bytes:
    data = bytearray((OBJECTS / f"{stem}.o").read_bytes())
    change(data, _entries(bytes(data)))
    return bytes(data)


def _error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as info:
        amdocc.load(data)
    return info.value


def test_an_entry_longer_than_the_section_names_its_offset():
    last = _entries((OBJECTS / "linking_calls.o").read_bytes())[-1][0]

    def lie(data, entries):
        data[last + 1] = 0xFF

    err = _error(_patched("linking_calls", lie))
    assert err.offset == last
    assert "says 255 payload bytes" in err.message and f"{last:#x}" in str(err)


@pytest.mark.parametrize("kind", (2, 3, 4, 6))
def test_a_u32_entry_of_the_wrong_length_names_its_offset(kind):
    def lie(data, entries):
        pos, _, length = next(e for e in entries if e[1] == kind)
        data[pos + 1] = length - 1

    data = _patched("linking_calls", lie)
    err = _error(data)
    first = next(e for e in _entries((OBJECTS / "linking_calls.o").read_bytes()) if e[1] == kind)
    assert err.offset == first[0]
    assert f"INFO_{KINDS[kind][0].upper()} entry has 3 payload bytes, not 4" in err.message


def test_a_symbol_entry_without_its_relocation_names_its_offset():
    original = (OBJECTS / "linking_calls.o").read_bytes()
    elf = ELFFile(__import__("io").BytesIO(original))
    rela = elf.get_section_by_name(".rela.amdgpu.info")
    data = bytearray(original)
    # Move the first relocation's r_offset off every payload: the INFO_FUNC it filled names nothing.
    struct.pack_into("<Q", data, rela["sh_offset"], 0xFFFF)
    first_offset = struct.unpack_from("<Q", original, rela["sh_offset"])[0]
    start, _ = _info_section(original)
    err = _error(bytes(data))
    assert err.offset == start + first_offset - 2
    assert "names no symbol" in err.message


def test_a_string_offset_outside_the_string_table_names_its_offset():
    def lie(data, entries):
        pos, _, _ = next(e for e in entries if e[1] in (9, 10))
        struct.pack_into("<I", data, pos + 2, 0xFFFF)

    data = _patched("linking_extern", lie)
    err = _error(data)
    assert err.offset == next(e for e in _entries(data) if e[1] in (9, 10))[0]
    assert ".amdgpu.strtab" in err.message


def test_a_kind_amdocc_does_not_know_is_skipped_by_its_length():
    # The header's forward-compatibility rule: "a consumer skips them by reading len".
    def renumber(data, entries):
        for pos, kind, _ in entries:
            if kind == 2:  # INFO_FLAGS
                data[pos] = 200

    co = amdocc.load(_patched("linking_calls", renumber))[0]
    listed = _listing("linking_calls")
    assert co.linking.unknown_kinds == {200: len(listed)}
    assert all(fn.flags is None for fn in co.linking.functions.values())
    assert co.kernel("kern").object_linking["transitive"]["num_vgpr"] == 35


# -- metadata root keys amdocc has not met ----------------------------------------------------


def test_an_unknown_metadata_root_key_is_read_and_kept():
    oracle = _notes((OBJECTS / "globals_gfx942.co.readelf.txt").read_text())
    assert oracle["amdhsa.globals"] == [{".name": "g", ".size": 12}]
    done = _cli("inspect", "--json", str(OBJECTS / "globals_gfx942.co"))
    import json

    (co,) = json.loads(done.stdout)["code_objects"]
    assert co["metadata"]["amdhsa.globals"] == oracle["amdhsa.globals"]
    assert not [f for f in co["findings"] if f["severity"] != "info"]
    (kernel,) = co["kernels"]
    assert kernel["vgpr_count"] == oracle["amdhsa.kernels"][0][".vgpr_count"]


def test_an_entry_before_any_function_names_its_offset():
    entries = _entries((OBJECTS / "linking_calls.o").read_bytes())
    assert entries[0][1] == 1  # INFO_FUNC opens the section

    def lie(data, entries):
        data[entries[0][0]] = 200  # now an unknown kind, skipped: INFO_FLAGS comes first

    err = _error(_patched("linking_calls", lie))
    assert err.offset == entries[1][0]
    assert "INFO_FLAGS entry before any INFO_FUNC" in err.message
