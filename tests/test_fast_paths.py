"""The fast paths of the reader decode exactly what their declarations say.

The generated descriptor extractors are checked against the declarative BIT_FIELDS table read
field by field (LLVM's own view of real descriptors is tests/test_elf_oracle.py's job), the
memo of decoded words against fresh decodes, and the shared symbol-name table against reading
each name where its entry points.
"""

from __future__ import annotations

import os
import random

import pytest

import amdocc
from amdocc.binary import cstring
from amdocc.cli.main import main
from amdocc.codeobject import descriptor as D
from amdocc.elf import SHT_SYMTAB, ElfFile
from amdocc.errors import Origin
from amdocc.targets import all_targets
from conftest import FIXTURES


def _by_hand(layout: str, words: dict) -> dict:
    out = {}
    for f in D.BIT_FIELDS:
        if layout in f.layouts:
            out[f.name] = (words[f.word] >> f.lo) & ((1 << (f.hi - f.lo + 1)) - 1)
    return out


@pytest.mark.parametrize("layout", sorted(D.DESCRIPTOR_LAYOUTS))
def test_generated_extractor_matches_the_bit_field_table(layout):
    rng = random.Random(layout)
    compiled = D._compiled(layout)
    for _ in range(300):
        words = {w: rng.getrandbits(32 if w not in (D.KCP, D.PRELOAD) else 16) for w in D.RSRC_WORDS}
        fields = compiled.extract(*(words[w] for w in D.RSRC_WORDS))
        expected = _by_hand(layout, words)
        assert fields == expected and list(fields) == list(expected)  # values and JSON order


def test_decoded_words_are_shared_but_each_kernel_gets_its_own_fields():
    target = next(t for t in all_targets() if t.descriptor_layout == "gfx90a")
    words = {name: 0 for name in D.WORDS}
    words[D.R1] = 0x00AC0085
    first = D._decode_words(0, dict(words), target, [])
    first.fields["next_free_vgpr"] = -1  # a caller scribbling on its copy
    second = D._decode_words(64, dict(words), target, ["earlier problem"])
    assert second.fields["next_free_vgpr"] != -1 and second.offset == 64
    assert second.problems[0] == "earlier problem"
    stray = dict(words, **{D.R3: 1 << 31})
    third = D._decode_words(0, stray, target, [])
    assert any("compute_pgm_rsrc3 has reserved bits 0x80000000" in p for p in third.problems)
    assert not D._decode_words(0, dict(words), target, []).problems


def test_the_decoded_words_cache_is_bounded_and_answers_each_combination(fresh_caches):
    # A registered cache (amdocc.caches) with a bound, not a dict grown by hand.
    assert D._decode_fields.cache_info().maxsize == 1024
    target = next(t for t in all_targets() if t.descriptor_layout == "gfx11")
    for vgpr in range(10):
        words = dict.fromkeys(D.WORDS, 0)
        words[D.R1] = vgpr
        assert D._decode_words(0, words, target, []).fields["granulated_workitem_vgpr_count"] == vgpr
    assert D._decode_fields.cache_info().currsize == 10


@pytest.mark.parametrize("many", [0, 1 << 30])  # names from the one-pass table, or one by one
@pytest.mark.parametrize("name", ["gfx942_cov4.hsaco", "agpr_gfx90a_cov5.hsaco", "legacy_v2_gfx906.co"])
def test_symbol_names_are_the_names_their_entries_point_at(monkeypatch, name, many):
    import amdocc.elf

    monkeypatch.setattr(amdocc.elf, "MANY_SYMBOLS", many)
    data = (FIXTURES / "elf" / name).read_bytes()
    elf = ElfFile(data, Origin(name))
    table = next(s for s in elf.sections if s.type == SHT_SYMTAB)
    strtab = elf.section_bytes(elf.sections[table.link])
    symbols = elf.symbols(table)
    assert symbols
    for s in symbols:
        st_name = int.from_bytes(data[s.entry_offset : s.entry_offset + 4], "little")
        assert s.name == (cstring(strtab, st_name, elf.origin, "name", 0) if st_name else "")


def test_only_the_chosen_commands_module_is_imported():
    import subprocess
    import sys

    code = (
        "import sys; from amdocc.cli.main import main; main(['inspect', '--json', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith('amdocc.cli.')), file=sys.stderr)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(amdocc.samples_path())], capture_output=True, text=True, check=True
    )
    loaded = out.stderr.strip()
    assert "amdocc.cli.inspect" in loaded and "amdocc.cli.census" not in loaded and "amdocc.cli.check" not in loaded


# The container readers: a plain code object needs none of them, so a run on one imports none.
CONTAINER_READERS = ("ar", "archive", "bundle", "kpack", "offload_binary", "pe", "regions", "tar")


def _modules_loaded_by_inspect(*argv: str) -> tuple[list[str], str]:
    """The amdocc.containers modules a run of ``amdocc inspect ARGV`` loads, and its output."""
    import subprocess
    import sys

    code = (
        "import sys; from amdocc.cli.main import main; status = main(['inspect', *sys.argv[1:]]); "
        "print(sorted(m for m in sys.modules if m.startswith('amdocc.containers.')), file=sys.stderr); "
        "sys.exit(status)"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    loaded = out.stderr.strip().splitlines()[-1]
    return [m for m in CONTAINER_READERS if f"'amdocc.containers.{m}'" in loaded], out.stdout


@pytest.mark.parametrize("options", [["--json"], ["--json-lines"], []], ids=["json", "json-lines", "table"])
def test_inspecting_a_plain_code_object_imports_no_container_reader(options):
    plain = str(FIXTURES / "elf" / "gfx942_cov4.hsaco")
    readers, out = _modules_loaded_by_inspect(*options, plain)
    assert readers == []
    assert "gfx942" in out  # the file was read


def test_a_directory_of_plain_code_objects_read_by_a_pool_imports_no_container_reader(tmp_path):
    # warm_up imports the readers every worker runs before the pool forks: none of them either.
    for name in ("a.co", "b.co"):
        (tmp_path / name).write_bytes((FIXTURES / "elf" / "gfx942_cov4.hsaco").read_bytes())
    readers, out = _modules_loaded_by_inspect("--json", "--jobs", "2", str(tmp_path))
    assert readers == []
    assert out.count('"processor":"gfx942"') == 2


def test_a_bundle_imports_its_reader_when_met():
    readers, _ = _modules_loaded_by_inspect("--json", str(amdocc.samples_path()))
    assert "bundle" in readers and "archive" not in readers and "tar" not in readers


def test_output_spilled_through_files_is_printed_as_one_process_prints_it(capsys, monkeypatch, tmp_path):
    from amdocc.app import parallel

    made = []

    class Recording(parallel._Unspill):  # the main process's reader
        def __init__(self, path):
            super().__init__(path)
            made.append(path)

    monkeypatch.setattr(parallel, "SPILL_ITEM", 1)  # every JSON text goes by file
    monkeypatch.setattr(parallel, "MIN_FILES_FOR_POOL", 1)
    monkeypatch.setattr(parallel, "_Unspill", Recording)
    tree = [str(FIXTURES / "containers"), str(FIXTURES / "elf")]
    for form in (["--json"], ["--json-lines"]):
        assert main(["inspect", *form, "--jobs", "1", *tree]) == 0
        serial = capsys.readouterr().out
        assert main(["inspect", *form, "--jobs", "2", *tree]) == 0
        assert capsys.readouterr().out == serial
    spilled = [p for p in made if p]
    assert spilled and not any(os.path.exists(p) for p in spilled)  # read back, then removed


@pytest.mark.llvm22
@pytest.mark.parametrize("name", ["agpr_gfx90a_cov5.hsaco", "gfx1030_w32_wgp_cov4.hsaco"])
def test_resource_symbols_kept_as_rows_read_as_llvm_readelf_lists_them(name):
    # Resource symbols are not made Symbol objects; their values, and a lookup by name, must
    # still be llvm-readelf-22's .symtab rows.
    import subprocess

    from amdocc.codeobject.reader import RESOURCE_SUFFIXES, _symbols

    path = FIXTURES / "elf" / name
    listing = subprocess.run(["llvm-readelf-22", "--syms", str(path)], capture_output=True, text=True, check=True)
    symtab = listing.stdout.split("Symbol table '.symtab'")[1]
    rows = [line.split() for line in symtab.splitlines() if line.strip()[:1].isdigit() and len(line.split()) == 8]
    absolute = {r[7]: int(r[1], 16) for r in rows if r[6] == "ABS" and r[7].rpartition(".")[2] in RESOURCE_SUFFIXES}
    assert absolute
    symbols = _symbols(ElfFile((path).read_bytes(), Origin(name)))
    got = {f"{fn}.{suffix}": v for fn, by in symbols.resources.items() for suffix, v in by.items()}
    assert got == absolute
    for full, value in absolute.items():
        found = symbols.lookup(full)
        assert found is not None and (found.name, found.value, found.shndx) == (full, value, 0xFFF1)
    kds = [r[7] for r in rows if r[7].endswith(".kd")]
    assert kds and all(symbols.lookup(k).value == int(next(r[1] for r in rows if r[7] == k), 16) for k in kds)
