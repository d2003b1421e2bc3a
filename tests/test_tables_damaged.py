"""A damaged shipped table is one line naming the table, the row and the column, and exit 2
(issue 26, item 8): never a KeyError or ValueError traceback and exit 1, the status that means
"a gate failed".

Every table of ``tables/`` is read through one row reader (amdocc.tabledata.Row). Each required
column of each table is damaged in turn (left out, given a value of the wrong type, and, where
the column has a range or a set of values, given one outside it) and the command that reads the
table is run on it. Which columns are required, and what their ranges are, is written here from
each table's own header comments (tables/*.toml), not read from the code under test. The
damaged table reaches the reader through ``tabledata.read_toml`` (the one function that opens a
table file); a few runs at the end edit the TOML text of a copy of the package and run
``python -m amdocc`` as a user would.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amdocc import observed, tabledata
from amdocc.cli.main import main
from amdocc.errors import TableError
from conftest import FIXTURES, ROOT, skip_unless_required

ISA_TABLES = ("isa_decoding.toml", "isa_mix.toml", "isa_semantics.toml")
MANUAL = ["occupancy", "--target", "gfx942", "--vgprs", "64", "--block", "256"]
# The command that reads each table (every row of it, before answering).
COMMANDS = {
    "targets.toml": MANUAL,
    "devices.toml": ["occupancy", "--device", "MI300X", "--vgprs", "64", "--block", "256"],
    "hip_profiles.toml": MANUAL,
    "llvm_rules.toml": ["occupancy", "--model", "llvm", "--target", "gfx942", "--vgprs", "64", "--block", "256"],
    "split_policies.toml": [
        "split",
        "--arch",
        "gfx942",
        "--seq-len",
        "1",
        "--seq-len-kv",
        "65536",
        "--rows-per-block",
        "4",
        "--block-kv",
        "64",
    ],
    "prefill_gate.toml": ["gate", "--arch", "gfx950", "--qo-len", "4096", "--kv-len", "4096"],
    # The ISA tables: `amdocc isa` reads them (the mix and the semantics whole, every family and
    # entry, whichever kernel it decodes) before the first kernel's summary.
    **{table: ["isa", "--summary", str(FIXTURES / "elf" / "gfx942_cov4.hsaco")] for table in ISA_TABLES},
}

WHOLE = ("x", 0)  # (a value of the wrong type, one out of range) for a whole number >= 1
COUNT = ("x", -1)  # ... for a whole number >= 0
TEXT = (7, "")  # text: empty is no text
FLAG = ("yes", None)  # true or false: no range
WAVES = ("x", {"w64": 0})  # a value per wave size, each >= 1

# (table, row (keys from the top; () for the table's own keys), column, wrong type, out of range)
REQUIRED: list[tuple[str, tuple[str, ...], str, Any, Any]] = [
    # targets.toml: gfx600, a row with every column of its own (no `like`)
    ("targets.toml", ("gfx600",), "mach", *WHOLE),
    ("targets.toml", ("gfx600",), "isa_version", "6.0.0", [6, 0]),
    ("targets.toml", ("gfx600",), "family", *TEXT),
    ("targets.toml", ("gfx600",), "wave_sizes", 64, [0]),
    ("targets.toml", ("gfx600",), "default_wave", "x", 32),  # not one of its wave sizes (64)
    ("targets.toml", ("gfx600",), "register_file", 1, "shared"),
    ("targets.toml", ("gfx600",), "vgprs", *WAVES),
    ("targets.toml", ("gfx600",), "vgpr_alloc_granule", *WAVES),
    ("targets.toml", ("gfx600",), "vgpr_encode_granule", *WAVES),
    ("targets.toml", ("gfx600",), "addressable_vgprs", *WHOLE),
    ("targets.toml", ("gfx600",), "agprs", *COUNT),
    ("targets.toml", ("gfx600",), "max_waves_per_simd", *WHOLE),
    ("targets.toml", ("gfx600",), "hip_max_waves_per_simd", *WHOLE),
    ("targets.toml", ("gfx600",), "simds_per_cu", *WHOLE),
    ("targets.toml", ("gfx600",), "wgp", *FLAG),
    ("targets.toml", ("gfx600",), "sgpr_waves", "x", [[80, 0]]),
    ("targets.toml", ("gfx600",), "sgpr_waves_beyond", *COUNT),
    ("targets.toml", ("gfx600",), "sgprs_per_simd", *COUNT),
    ("targets.toml", ("gfx600",), "sgpr_alloc_granule", *WHOLE),
    ("targets.toml", ("gfx600",), "addressable_sgprs", *WHOLE),
    ("targets.toml", ("gfx600",), "lds_per_workgroup", *WHOLE),
    ("targets.toml", ("gfx600",), "lds_per_cu", *WHOLE),
    ("targets.toml", ("gfx600",), "lds_granule", *WHOLE),
    ("targets.toml", ("gfx600",), "max_workgroups_per_cu", *WHOLE),
    ("targets.toml", ("gfx600",), "xnack", *FLAG),
    ("targets.toml", ("gfx600",), "sramecc", *FLAG),
    ("targets.toml", ("gfx600",), "descriptor_layout", 1, "gfx99"),
    ("targets.toml", ("gfx600",), "source", *TEXT),
    # devices.toml: processor (a row of targets.toml), compute_units, lds, source
    ("devices.toml", ("MI100",), "processor", 908, "gfx9999"),
    ("devices.toml", ("MI100",), "compute_units", *WHOLE),
    ("devices.toml", ("MI100",), "lds", *WHOLE),
    ("devices.toml", ("MI100",), "source", *TEXT),
    # hip_profiles.toml: the default, the pr9571 ISA major, a VGPR table, a profile's behaviour
    ("hip_profiles.toml", (), "default", 7, "rocm-0.0"),
    ("hip_profiles.toml", (), "pr9571_isa_major", *WHOLE),
    ("hip_profiles.toml", ("vgpr_tables", "rocm-5.2"), "gfx700", "x", [256]),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "dates", *TEXT),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "changes", *TEXT),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "source", *TEXT),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "vgpr_table", 5, "rocm-0.0"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "vgpr_guard", 1, "agprs"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "zero_vgpr_waves", 1, "hipSuccess"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "caller_value", 0, "1"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "sgpr_granule", 16, "8"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "sgpr_trap_reserve", *COUNT),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "wgp_parse", True, "always"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "wave_size", 64, "64"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "simd_count", 4, "four"),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "grid_cu_correction", *FLAG),
    ("hip_profiles.toml", ("profiles", "rocm-5.2"), "pr9571", *FLAG),
    # llvm_rules.toml: a rule set, a compiler by commit, an override
    ("llvm_rules.toml", ("llvm-22",), "summary", *TEXT),
    ("llvm_rules.toml", ("llvm-22",), "releases", 22, [0]),
    ("llvm_rules.toml", ("llvm-22",), "snapshots", 22, [-1]),
    ("llvm_rules.toml", ("llvm-22",), "sgpr_occupancy", 1, "linear"),
    ("llvm_rules.toml", ("llvm-22",), "lds_granule_rounding", *FLAG),
    ("llvm_rules.toml", ("llvm-22",), "oracle", *TEXT),
    ("llvm_rules.toml", ("llvm-22",), "source", *TEXT),
    ("llvm_rules.toml", ("compilers", "8f497e0992fb7513f7f78a6f6b6f1056c375e961"), "compiler", *TEXT),
    ("llvm_rules.toml", ("compilers", "8f497e0992fb7513f7f78a6f6b6f1056c375e961"), "rules", 22, "llvm-99"),
    ("llvm_rules.toml", ("rocm-10.0", "overrides", "gfx1310"), "lds_per_cu", *WHOLE),
    ("llvm_rules.toml", ("rocm-10.0", "overrides", "gfx1310"), "mode_recorded", 0, None),
    # split_policies.toml: the default row, the search bound, and a processor's policy
    ("split_policies.toml", (), "default", 942, "gfx000"),
    ("split_policies.toml", (), "max_split_search", *WHOLE),
    ("split_policies.toml", ("gfx942",), "min_seq_len_kv", *COUNT),
    ("split_policies.toml", ("gfx942",), "min_tiles_per_split", *WHOLE),
    ("split_policies.toml", ("gfx942",), "cu_oversub", *WHOLE),
    ("split_policies.toml", ("gfx942",), "fallback_cu", *WHOLE),
    ("split_policies.toml", ("gfx942",), "occupancy_aware", *FLAG),
    ("split_policies.toml", ("gfx942",), "block_overhead_tiles", *COUNT),
    ("split_policies.toml", ("gfx942",), "streaming_lowh_cu_oversub", *COUNT),
    ("split_policies.toml", ("gfx942",), "streaming_lowh_residency", *COUNT),
    ("split_policies.toml", ("gfx942",), "source", *TEXT),
    # prefill_gate.toml: a threshold, the environment names, AITER's layout
    ("prefill_gate.toml", ("min_qo_len",), "gfx950", *WHOLE),
    ("prefill_gate.toml", ("env",), "kill_switch", *TEXT),
    ("prefill_gate.toml", ("env",), "asm_dir", *TEXT),
    ("prefill_gate.toml", ("aiter",), "module", *TEXT),
    ("prefill_gate.toml", ("aiter",), "csv_manifest", *TEXT),
    ("prefill_gate.toml", ("aiter",), "codegen_manifest", *TEXT),
    ("prefill_gate.toml", ("aiter", "block_size"), "hd128", *WHOLE),
    ("prefill_gate.toml", ("aiter", "subfolder_by_cu", "gfx942"), "304", *TEXT),
    ("prefill_gate.toml", ("eligible",), "dtypes", "bf16", [1]),
    ("prefill_gate.toml", ("eligible",), "head_dims", [128, 128], [[128, 0]]),
    ("prefill_gate.toml", ("eligible",), "source", *TEXT),
    # isa_decoding.toml: the oldest ISA major the disassembler decodes
    ("isa_decoding.toml", ("disassembler",), "first_isa_major", *WHOLE),
    # ... and the bytes LLVM reads of an instruction at most: [first, last] LLVM majors, bytes 4-32
    ("isa_decoding.toml", ("read_at_most",), "llvm_majors", "x", [22, 20]),
    ("isa_decoding.toml", ("read_at_most",), "bytes", "x", None),
    ("isa_decoding.toml", ("read_at_most", "bytes"), "gfx942", "x", 33),
    # isa_mix.toml: the class order, a class's pattern (a regular expression), a family's own
    ("isa_mix.toml", (), "order", "waitcnt", None),
    ("isa_mix.toml", ("common",), "lds", 7, "^ds_("),
    ("isa_mix.toml", ("family", "RDNA4"), "waitcnt", ["^s_wait"], "^s_wait_(loadcnt"),
    # isa_semantics.toml's [[rule]], [[adjust]] and [[implicit]] entries are a list: damaged by
    # test_a_damaged_semantics_entry_names_it below; its [abi] table is here.
    ("isa_semantics.toml", (), "implicit", "x", None),
    ("isa_semantics.toml", ("abi",), "packed_workitem_ids", "gfx942", [942]),
]

# Entries of a table keyed by name, where a name left out is an answer, not damage: a processor
# the runtime does not run, a column a compiler does not override, a processor that never routes
# to asm, a head size or CU count AITER has no kernel for. Only their values can be damaged.
ENTRIES = {
    ("hip_profiles.toml", ("vgpr_tables", "rocm-5.2"), "gfx700"),
    ("llvm_rules.toml", ("rocm-10.0", "overrides", "gfx1310"), "lds_per_cu"),
    ("llvm_rules.toml", ("rocm-10.0", "overrides", "gfx1310"), "mode_recorded"),
    ("prefill_gate.toml", ("min_qo_len",), "gfx950"),
    ("prefill_gate.toml", ("aiter", "block_size"), "hd128"),
    ("prefill_gate.toml", ("aiter", "subfolder_by_cu", "gfx942"), "304"),
    ("isa_mix.toml", ("family", "RDNA4"), "waitcnt"),  # a family replaces only the classes it names
    ("isa_decoding.toml", ("read_at_most", "bytes"), "gfx942"),  # not listed: the whole window
}

DAMAGES = [
    pytest.param(table, row, column, how, value, id=f"{table}:{'.'.join(row) or '-'}:{column}:{how}")
    for table, row, column, wrong, out in REQUIRED
    for how, value in (("missing", None), ("wrong-type", wrong), ("out-of-range", out))
    if (value is not None if how != "missing" else (table, row, column) not in ENTRIES)
]


def _damaged(raw: dict[str, Any], row: tuple[str, ...], column: str, how: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    place = out
    for key in row:
        place = place[key]
    assert column in place, f"the table no longer has {'.'.join((*row, column))}: update REQUIRED"
    if how == "missing":
        del place[column]
    else:
        place[column] = value
    return out


def _run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    from amdocc import caches

    caches.clear_all()
    try:
        status = main(argv)
    finally:
        caches.clear_all()
    return status, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(("table", "row", "column", "how", "value"), DAMAGES)
def test_a_damaged_value_is_one_line_naming_table_row_and_column_and_exit_2(
    table, row, column, how, value, monkeypatch, capsys
):
    real = tabledata.read_toml

    def read(path):
        raw = real(path)
        return _damaged(raw, row, column, how, value) if path.name == table else raw

    monkeypatch.setattr(tabledata, "read_toml", read)
    if table in ISA_TABLES:
        _needs_libllvm()
    status, err = _run_cli(COMMANDS[table], capsys)
    assert status == 2 and len(err) == 1, err
    (line,) = err
    assert line.startswith(f"amdocc: {table}") and "Traceback" not in line, line
    assert column in line, line
    if row:
        assert f"[{'.'.join(row)}" in line, line


def test_every_required_column_is_damaged_three_ways_where_it_has_a_range():
    # The count the test above runs: every column left out (but the entries by name) and given
    # the wrong type; a range or set of values broken where the column has one (true/false and
    # the mode flag have none).
    assert len(REQUIRED) == 91 and len(ENTRIES) == 8
    assert len(DAMAGES) == 91 * 3 - 8 - sum(out is None for *_, out in REQUIRED) == 254
    assert {table for table, *_ in REQUIRED} == set(COMMANDS)


def _needs_libllvm() -> None:
    from amdocc.isa import LlvmUnavailable, library

    try:
        library()
    except LlvmUnavailable as exc:
        skip_unless_required(f"no libLLVM with the AMDGPU disassembler: {exc}")


# (entry kind, the entry's name, column, damaged value): each entry of isa_semantics.toml's
# lists, damaged as the table's header comments say its columns are (a role from the list of
# roles; a register from vcc, exec, scc, m0; majors and operand counts whole numbers; a modifier
# list of texts); None leaves the column out. A column no entry has (`min_majr`) is damage too.
SEMANTICS = [
    ("rule", "gpr-indexing", "match", None),
    ("rule", "gpr-indexing", "match", 7),
    ("rule", "gpr-indexing", "match", "s_set_gpr_idx_(on"),
    ("rule", "gpr-indexing", "unknown", 7),
    ("rule", "store-high-half", "roles", "use"),
    ("rule", "store-high-half", "roles", ["use", "read"]),
    ("rule", "store", "rest", "read"),
    ("rule", "cmpx-exec-only", "min_major", "10"),
    ("rule", "cmpx-exec-only", "min_major", 0),
    ("rule", "carry-out", "max_major", 8.0),
    ("rule", "buffer-atomic-return", "with_any", "glc"),
    ("rule", "buffer-atomic-return", "with_any", [1]),
    ("rule", "cmpx-exec-only", "min_majr", 10),
    ("adjust", "dpp-preserve", "first", "write"),
    ("implicit", "vector-exec", "uses", "exec"),
    ("implicit", "vector-exec", "uses", ["exec_lo"]),
    ("implicit", "cmpx-writes-exec", "defs", ["vcc", 1]),
    ("implicit", "dual-cndmask-vcc", "max_operands", -1),
    ("implicit", "m0-users", "name", 7),
]


@pytest.mark.parametrize(
    ("kind", "name", "column", "value"), [pytest.param(*d, id=f"{d[0]}:{d[1]}:{d[2]}:{d[3]!r}") for d in SEMANTICS]
)
def test_a_damaged_semantics_entry_names_it(kind, name, column, value, monkeypatch, capsys):
    real = tabledata.read_toml
    index = next(i for i, e in enumerate(real(ROOT / "tables" / "isa_semantics.toml")[kind]) if e["name"] == name)

    def read(path):
        raw = real(path)
        if path.name == "isa_semantics.toml":
            raw = copy.deepcopy(raw)
            entry = raw[kind][index]
            assert column in entry or column == "min_majr", f"{name} has no {column}: update SEMANTICS"
            if value is None:
                del entry[column]
            else:
                entry[column] = value
        return raw

    monkeypatch.setattr(tabledata, "read_toml", read)
    _needs_libllvm()
    status, err = _run_cli(COMMANDS["isa_semantics.toml"], capsys)
    assert status == 2 and len(err) == 1, err
    entry = f"{kind} {index + 1}" + ("" if column == "name" else f" ({name})")
    assert err[0].startswith(f"amdocc: isa_semantics.toml [{entry}] column {column!r}: "), err[0]


def test_an_entry_of_the_semantics_lists_that_is_not_a_table_is_named(monkeypatch, capsys):
    real = tabledata.read_toml

    def read(path):
        raw = real(path)
        return {**raw, "adjust": [*raw["adjust"], "first = both"]} if path.name == "isa_semantics.toml" else raw

    monkeypatch.setattr(tabledata, "read_toml", read)
    _needs_libllvm()
    adjusts = len(real(ROOT / "tables" / "isa_semantics.toml")["adjust"])
    status, err = _run_cli(COMMANDS["isa_semantics.toml"], capsys)
    assert status == 2 and err == [
        f"amdocc: isa_semantics.toml [adjust {adjusts + 1}]: is 'first = both', not a table of columns"
    ]


@pytest.mark.parametrize("table", sorted(COMMANDS))
def test_a_missing_table_is_one_line_and_exit_2(table, tmp_path, monkeypatch, capsys):
    tables = tmp_path / "tables"
    shutil.copytree(ROOT / "tables", tables)
    (tables / table).unlink()
    monkeypatch.setattr(tabledata, "tables_dir", lambda: tables)
    if table in ISA_TABLES:
        _needs_libllvm()
    status, err = _run_cli(COMMANDS[table], capsys)
    assert status == 2 and len(err) == 1 and f"{table}: cannot be read" in err[0], err


@pytest.mark.parametrize(
    ("kind", "index", "column", "how", "value"),
    [
        ("observation", 0, "processor", "missing", None),
        ("observation", 0, "block_size", "wrong-type", "256"),
        ("observation", 0, "block_size", "out-of-range", 0),
        ("observation", 0, "wavefront_size", "missing", None),
        ("observation", 0, "kind", "out-of-range", "guess"),
        ("observation", 0, "vgpr_count", "wrong-type", 1.5),
        ("observation", 0, "blocks_per_cu", "missing", None),
        ("partial", 0, "variant", "missing", None),
        ("partial", 0, "blocks_per_cu", "wrong-type", 28),
        ("partial", 0, "group_segment_fixed_size", "out-of-range", [0]),
    ],
)
def test_a_damaged_observation_names_its_file_row_and_column(kind, index, column, how, value, monkeypatch):
    # tables/hip_observed/ is read by the tests that replay it and by amdocc.observed; no command
    # reads it (verify --record only appends), so its reader is asked directly.
    real = observed.read_toml
    path = next(p for p in observed.files() if real(p).get(kind))

    def read(p):
        raw = real(p)
        if p == path:
            raw = copy.deepcopy(raw)
            rows = raw[kind]
            rows[index] = _damaged({"r": rows[index]}, ("r",), column, how, value)["r"]
        return raw

    monkeypatch.setattr(observed, "read_toml", read)
    with pytest.raises(TableError) as err:
        observed.load(path)
    message = str(err.value)
    where = f"hip_observed/{path.name} [{kind} {index + 1}] column '{column}'"
    assert "\n" not in message and message.startswith(where), message


# -- as a user meets it: the TOML text of an installed copy edited, python -m amdocc run ------------


def _amdocc_in(package_copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m amdocc ARGS`` run from the copy of the package (its tables edited by the test)."""
    return subprocess.run(
        [sys.executable, "-m", "amdocc", *args],
        env=dict(os.environ, PYTHONPATH=str(package_copy)),
        capture_output=True,
        text=True,
        cwd=package_copy,
    )


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory):
    """A copy of the package whose own tables/ (tabledata.tables_dir looks there first) can be edited."""
    root = tmp_path_factory.mktemp("installed")
    shutil.copytree(ROOT / "amdocc", root / "amdocc", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tables", root / "amdocc" / "tables")
    return root


@pytest.mark.parametrize(
    ("table", "line", "edited", "words"),
    [
        ("devices.toml", "compute_units = 120\n", 'compute_units = "120"\n', "[MI100] column 'compute_units'"),
        ("split_policies.toml", "fallback_cu = 304\n", "fallback_cu = 0\n", "[gfx942] column 'fallback_cu'"),
        ("hip_profiles.toml", 'default = "rocm-7.14"\n', 'default = "rocm-7.41"\n', "column 'default'"),
        ("llvm_rules.toml", 'sgpr_occupancy = "step-table"\n', "", "[llvm-22] column 'sgpr_occupancy'"),
        ("prefill_gate.toml", "gfx950 = 2048", "gfx950 = -1", "[min_qo_len] column 'gfx950'"),
        ("targets.toml", "lds_granule = ", "lds_granul = ", "[gfx600] column 'lds_granule'"),
        (
            "isa_decoding.toml",
            "first_isa_major = 8",
            "first_isa_major = 8.0",
            "[disassembler] column 'first_isa_major'",
        ),
        ("isa_mix.toml", "lds = '^ds_'", "lds = '^ds_('", "[common] column 'lds'"),
        (
            "isa_semantics.toml",
            "min_major = 10\n",
            'min_major = "10"\n',
            "[rule 10 (cmpx-exec-only)] column 'min_major'",
        ),
    ],
)
def test_an_edited_table_file_is_one_line_and_exit_2_from_python_m_amdocc(package_copy, table, line, edited, words):
    path = package_copy / "amdocc" / "tables" / table
    text = path.read_text()
    assert line in text
    path.write_text(text.replace(line, edited, 1))
    try:
        run = _amdocc_in(package_copy, *COMMANDS[table])
    finally:
        path.write_text(text)
    assert run.returncode == 2 and run.stdout == "", run
    assert run.stderr.startswith(f"amdocc: {table}") and len(run.stderr.splitlines()) == 1, run.stderr
    assert words in run.stderr, run.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["census", "--isa", "--jobs", "2"],
        ["check", "--no-config", "--budget", "max_live_vgpr<=300"],
        ["check", "--no-config", "--budget", "spills_in_loops<=0", "--jobs", "2"],
        ["diff", "--isa"],
    ],
    ids=" ".join,
)
def test_a_damaged_isa_table_stops_every_command_that_reads_machine_code(package_copy, tmp_path, command):
    # Not one kernel's error, nor a rule "not evaluated" for each kernel: the run stops with the
    # table's one line (in worker processes too, with --jobs).
    _needs_libllvm()
    path = package_copy / "amdocc" / "tables" / "isa_semantics.toml"
    text = path.read_text()
    assert "min_major = 10\n" in text
    path.write_text(text.replace("min_major = 10\n", 'min_major = "10"\n', 1))
    code = FIXTURES / "elf" / "gfx942_cov4.hsaco"
    for name in ("a.hsaco", "b.hsaco"):
        shutil.copy(code, tmp_path / name)
    paths = [str(tmp_path / "a.hsaco"), str(tmp_path / "b.hsaco")] if command[0] == "diff" else [str(tmp_path)]
    try:
        run = _amdocc_in(package_copy, *command, *paths)
    finally:
        path.write_text(text)
    assert run.returncode == 2, run
    assert run.stderr == (
        "amdocc: isa_semantics.toml [rule 10 (cmpx-exec-only)] column 'min_major': '10' is not a whole number >= 1\n"
    )
