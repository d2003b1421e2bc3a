"""The Python API's edges: arguments of the wrong type are UsageErrors, strict=False means what
the README says, code objects out of a wheel carry an offset, every error is an AmdoccError with
the exit status the CLI gives it, and one rule decides what a whole number is."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import amdocc
from amdocc import AmdoccError, FormatError, UsageError
from amdocc.errors import TableError
from conftest import FIXTURES, ROOT

GFX942 = FIXTURES / "elf" / "gfx942_cov4.hsaco"
SAMPLE = ROOT / "amdocc" / "samples" / "sample_kernels.hipfb"


# -- load -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, words",
    [
        (None, "source must be a path (str or os.PathLike), '-' for standard input, or bytes, not NoneType"),
        (12, "source must be a path (str or os.PathLike), '-' for standard input, or bytes, not int"),
        (["a.co"], "source must be a path (str or os.PathLike), '-' for standard input, or bytes, not list"),
        ("", "source is an empty path"),
    ],
)
def test_a_source_of_the_wrong_type_is_a_usage_error(source, words):
    for call in (amdocc.load, lambda s: list(amdocc.iter_load(s))):
        with pytest.raises(UsageError) as exc:
            call(source)
        assert exc.value.message == words


def test_strict_must_be_a_bool():
    with pytest.raises(UsageError, match=r"^strict must be True or False, not 'no'$"):
        amdocc.load(str(GFX942), strict="no")


def test_not_strict_lists_a_text_file_named_like_a_code_object(tmp_path):
    text = tmp_path / "x.co"
    text.write_text("hello\n")
    # The whole file alone: listed, not raised; strict: raised, naming the file and offset 0.
    loaded = amdocc.load(str(text), strict=False)
    assert list(loaded) == [] and [f.origin.path for f in loaded.failed] == [str(text)]
    (failed,) = loaded.failed
    assert isinstance(failed.error, FormatError) and failed.error.offset == 0
    assert str(failed.error).startswith(f"{text}: offset 0x0: not a code object or a container")
    with pytest.raises(FormatError, match=re.escape(f"{text}: offset 0x0: not a code object")):
        amdocc.load(str(text))
    # Beside a real code object in a directory: the code object is read, the text file is listed.
    shutil.copy(GFX942, tmp_path / "k.hsaco")
    loaded = amdocc.load(str(tmp_path), strict=False)
    assert [co.processor for co in loaded] == ["gfx942"] and [f.origin.path for f in loaded.failed] == [str(text)]


def test_not_strict_still_raises_for_a_path_that_cannot_be_opened(tmp_path):
    with pytest.raises(AmdoccError, match="cannot open: No such file or directory"):
        amdocc.load(str(tmp_path / "missing.co"), strict=False)


def test_bytes_that_are_no_code_object_are_listed_when_not_strict():
    loaded = amdocc.load(b"hello\n", strict=False)
    assert list(loaded) == [] and [f.origin.path for f in loaded.failed] == ["<bytes>"]


# -- offsets of wheel members ------------------------------------------------------------------


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(SAMPLE, "pkg/stored.hipfb", compress_type=zipfile.ZIP_STORED)
        z.write(SAMPLE, "pkg/deflated.hipfb", compress_type=zipfile.ZIP_DEFLATED)
    return wheel


def test_code_objects_in_a_wheel_carry_an_offset(tmp_path, capsys):
    import json

    from amdocc.cli.main import main

    wheel = _wheel(tmp_path)
    assert main(["inspect", "--json", str(wheel)]) == 0
    records = json.loads(capsys.readouterr().out)["code_objects"]
    raw = wheel.read_bytes()
    with zipfile.ZipFile(wheel) as z:
        member = {name: z.read(name) for name in z.namelist()}
        stored = z.getinfo("pkg/stored.hipfb")
    # zipfile's own view of where the stored member's data starts: its local header (30 bytes,
    # then the name and the extra field; APPNOTE 4.3.7).
    data_start = stored.header_offset + 30 + len(stored.filename.encode()) + len(stored.extra)
    seen = {"pkg/stored.hipfb": 0, "pkg/deflated.hipfb": 0}
    for r in records:
        name = r["origin"].split(" > ")[0]
        seen[name] += 1
        size = r["size"]
        if name == "pkg/stored.hipfb":
            assert r["payload_offset"] is None
            image = raw[r["offset"] : r["offset"] + size]
            assert r["offset"] - data_start == member[name].index(image)
        else:  # deflated: no file offset; the offset inside the member's inflated bytes instead
            assert r["offset"] is None
            image = member[name][r["payload_offset"] : r["payload_offset"] + size]
        assert image[:4] == b"\x7fELF" and image[18:20] == (224).to_bytes(2, "little")  # EM_AMDGPU
    assert seen == {"pkg/stored.hipfb": 5, "pkg/deflated.hipfb": 5}
    # The same images at the same places inside each member.
    by_entry = {}
    for r in records:
        name, rest = r["origin"].split(" > ", 1)
        entry = rest.split(" > ")[-1]
        start = r["offset"] - data_start if r["offset"] is not None else r["payload_offset"]
        by_entry.setdefault(entry, set()).add(start)
    assert all(len(starts) == 1 for starts in by_entry.values()), by_entry


@pytest.mark.llvm22
def test_the_image_at_a_payload_offset_is_what_llvm_readelf_reads(tmp_path, capsys):
    import json

    from amdocc.cli.main import main

    wheel = _wheel(tmp_path)
    assert main(["inspect", "--json", str(wheel)]) == 0
    records = [r for r in json.loads(capsys.readouterr().out)["code_objects"] if r["offset"] is None]
    with zipfile.ZipFile(wheel) as z:
        inflated = z.read("pkg/deflated.hipfb")
    for r in records:
        image = tmp_path / f"{r['processor']}.o"
        image.write_bytes(inflated[r["payload_offset"] : r["payload_offset"] + r["size"]])
        header = subprocess.run(["llvm-readelf-22", "-h", str(image)], check=True, capture_output=True, text=True)
        assert re.search(rf"Flags:\s+0x[0-9a-f]+, {r['processor']}\b", header.stdout), header.stdout


# -- the facade's documentation -----------------------------------------------------------------


def test_help_says_what_the_llvm_model_follows_and_documents_every_option():
    from amdocc.models import OPTIONS

    doc = " ".join(amdocc.__doc__.split())
    assert "LLVM 22 prints" not in doc and "the compiler that built the kernel prints" in doc
    options_doc = " ".join(amdocc.occupancy.__doc__.split())
    for model_options in OPTIONS.values():
        for name in model_options:
            assert f"``{name}``" in options_doc, name
    assert "what_if" in inspect.signature(amdocc.occupancy).parameters
    assert "what_if:" in options_doc
    assert "not switches of their own" in options_doc  # lds_granule_rounding/sgpr_trap_reserve
    assert "Limits.from_env()" in " ".join(amdocc.load.__doc__.split())


def test_the_facade_passes_what_if_through():
    (co,) = [c for c in amdocc.load(str(SAMPLE)) if c.processor == "gfx942"]
    kernel = co.kernels[0]
    with pytest.raises(UsageError):
        amdocc.occupancy(kernel, target="gfx90a", block_size=256)
    occ = amdocc.occupancy(kernel, target="gfx90a", block_size=256, what_if=True)
    assert occ.what_if


# -- one error hierarchy ----------------------------------------------------------------------


def _amdocc_modules():
    skip = ("amdocc.cli.plot", "amdocc.__main__")  # imports matplotlib; runs the CLI
    for info in pkgutil.walk_packages(amdocc.__path__, "amdocc."):
        if info.name not in skip:
            yield importlib.import_module(info.name)


def test_every_exception_amdocc_defines_is_an_amdocc_error_with_an_exit_code():
    import argparse

    found = {}
    for module in _amdocc_modules():
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)  # AmdoccWarning: said, not raised
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    assert "amdocc.policy.prefill_gate.NotFound" in found and "amdocc.codeobject.yaml_subset.YamlSubsetError" in found
    outside = {n for n, c in found.items() if not issubclass(c, (AmdoccError, argparse.ArgumentTypeError))}
    assert outside == set()
    codes = {n: c.exit_code for n, c in found.items() if issubclass(c, AmdoccError)}
    assert codes.pop("amdocc.runtime.hip.HipUnavailable") == 3  # docs/cli-contract.md: 3 when HIP is needed but missing
    assert codes.pop("amdocc.isa.libllvm.LlvmUnavailable") == 3  # and for isa, when no libLLVM can be loaded
    assert codes.pop("amdocc.isa.decode.ProcessorNotDecodable") == 3  # or the one loaded cannot decode it
    assert codes.pop("amdocc.testing.properties.PropertyFailure") == 1  # a disagreement is a verdict, as a gate's
    assert set(codes.values()) == {2}
    assert issubclass(TableError, ValueError) and issubclass(
        found["amdocc.codeobject.yaml_subset.YamlSubsetError"], FormatError
    )


def test_cli_exit_status_is_the_error_classs(capsys, monkeypatch):
    from amdocc.cli import main as cli

    class Special(AmdoccError):
        exit_code = 7

    def run(_args):
        raise Special("the message")

    monkeypatch.setattr("amdocc.cli.sample.run", run)
    assert cli.main(["sample"]) == 7
    assert capsys.readouterr().err == "amdocc: the message\n"


@pytest.mark.parametrize(
    "edit, words",
    [
        (
            lambda text: text.replace("mach = 0x21", "mach = 0x20", 1),
            "targets.toml: mach 0x20 used by gfx600 and gfx601",
        ),
        (lambda text: text + "\n[broken\n", "targets.toml: not valid TOML"),
        (
            lambda text: text.replace("lds_granule = ", "lds_granul = ", 1),
            "targets.toml [gfx600] column 'lds_granule': missing",
        ),
        (
            lambda text: text.replace("mach = 0x20", 'mach = "x"', 1),
            "targets.toml [gfx600] column 'mach': 'x' is not a whole number >= 1",
        ),
    ],
)
def test_a_bad_table_is_one_line_and_exit_2_not_a_traceback(tmp_path, edit, words):
    # A copy of the package whose own tables/ has a bad targets.toml (tables_dir looks there first).
    shutil.copytree(ROOT / "amdocc", tmp_path / "amdocc", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tables", tmp_path / "amdocc" / "tables")
    targets = tmp_path / "amdocc" / "tables" / "targets.toml"
    targets.write_text(edit(targets.read_text()))
    run = subprocess.run(
        [sys.executable, "-m", "amdocc", "inspect", "--target", "gfx942", str(GFX942)],
        env=dict(os.environ, PYTHONPATH=str(tmp_path)),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert len(run.stderr.splitlines()) <= 2 and words in run.stderr, run.stderr


def test_the_yaml_and_gate_errors_are_amdocc_errors():
    from amdocc.codeobject import yaml_subset
    from amdocc.policy.prefill_gate import NotFound

    with pytest.raises(FormatError, match="line 2: tab in indentation"):
        yaml_subset.loads("a:\n\tb: 1\n")
    assert issubclass(NotFound, AmdoccError) and NotFound("x").exit_code == 2


# -- one whole-number rule -----------------------------------------------------------------------


def _gfx942_kernel():
    return amdocc.load(str(GFX942))[0].kernels[0]


@pytest.mark.parametrize("value", [True, 2.0, "2", None])
def test_no_entry_point_takes_a_bool_a_float_or_text_for_a_count(value):
    from amdocc.policy import check_config
    from amdocc.policy.splits import auto_num_splits

    shape = dict(seq_len=256, seq_len_kv=65536, rows_per_block=4, block_kv=128, arch="gfx942")
    calls = [lambda: auto_num_splits(**{**shape, "seq_len": value})]
    if value is not None:  # None: the llvm model's flat range, and "not given" for a CU count
        calls += [
            lambda: amdocc.occupancy(_gfx942_kernel(), block_size=value),
            lambda: auto_num_splits(**shape, cu_count=value, occupancy=2),
        ]
    for call in calls:
        with pytest.raises(UsageError, match="must be a whole number"):
            call()
    if not isinstance(value, str):  # the file takes "2" as the flag does; a bool or float it refuses
        with pytest.raises(UsageError, match="must be an integer from 1 to 1024"):
            check_config.block_size(value, "block in p.toml")


def test_the_triton_adapter_and_the_reader_apply_the_same_rule():
    from amdocc.codeobject.model import Finding
    from amdocc.codeobject.resources import _int
    from amdocc.integrations.triton import _count

    for value in (True, 2.0):
        with pytest.raises(UsageError, match=r"is .*, not an integer >= 1"):
            _count({"warp_size": value}, "warp_size", minimum=1)
        findings: list[Finding] = []
        assert _int({".vgpr_count": value}, ".vgpr_count", findings) is None
        assert [f.code for f in findings] == ["metadata-type"]
    assert _count({"warp_size": 64}, "warp_size", minimum=1) == 64


def test_the_wave_cost_search_takes_whole_floats_as_aiter_does_but_no_bool():
    from amdocc.policy.splits import splits_by_wave_cost

    # AITER's own vectors for _splits_by_wave_cost pass 1e6 (tests/test_policy_splits.py).
    assert splits_by_wave_cost(1, 1e6, 1e6, 1e6, 0) == 64
    with pytest.raises(UsageError, match="takes whole numbers, got True"):
        splits_by_wave_cost(True, 300, 8, 8, 0)
    with pytest.raises(UsageError, match=r"takes whole numbers, got 2\.5"):
        splits_by_wave_cost(4, 2.5, 8, 8, 0)
