"""The Python API a library author expects: help(amdocc) enough to use it, kernels looked up by
name, compact reprs, documented result fields, next_step on the record, explicit keywords and
errors that name what is valid.

Names and symbols come from LLVM's reading of the fixtures' metadata notes (llvm-readelf-22,
recorded next to them), next steps from HIP's arithmetic worked by hand
(docs/hip-occupancy.md §2, §5: ``oracle.hip_reference``).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import pydoc
import re
import shutil
import subprocess

import pytest

import amdocc
from amdocc.cli.main import main
from conftest import FIXTURES, ROOT
from oracle.hip_reference import hip_blocks
from oracle.llvm22 import metadata_documents

SAMPLE = str(amdocc.samples_path())
ELF = FIXTURES / "elf"


def llvm_kernels(fixture: str) -> list[dict]:
    (doc,) = metadata_documents((ELF / f"{fixture}.readelf.txt").read_text())
    return doc["amdhsa.kernels"]


# --- help(amdocc) is enough to use the package ---------------------------------------------------------


def public_functions():
    return [getattr(amdocc, n) for n in amdocc.__all__ if inspect.isfunction(getattr(amdocc, n))]


def test_every_public_function_states_args_returns_and_errors():
    functions = public_functions()
    assert {f.__name__ for f in functions} >= {"load", "iter_load", "occupancy", "max_blocks_per_cu", "samples_path"}
    for f in functions:
        doc = inspect.getdoc(f) or ""
        params = [p for p in inspect.signature(f).parameters if p not in ("options",)]
        assert "Returns:" in doc and "Raises:" in doc, f.__name__
        if params:
            assert "Args:" in doc, f.__name__
            for name in params:
                assert re.search(rf"^\s+\*{{0,2}}{name}:", doc, re.M), (f.__name__, name)


def test_module_docstring_names_the_entry_points_and_help_renders_the_results():
    doc = amdocc.__doc__
    for name in ("load(", "occupancy(", "max_blocks_per_cu(", "CodeObject.kernel(", "next_step(occ)", "AmdoccError"):
        assert name in doc, name
    text = pydoc.render_doc(amdocc, renderer=pydoc.plaintext)
    # The result types are part of help(amdocc), with their fields' own documentation.
    for needle in (
        "class Occupancy",
        "class CodeObject",
        "class Kernel",
        "Workgroups resident per CU",
        "kernel(self, name",
        "next_step(occ)",
    ):
        assert needle in text, needle


def test_the_module_example_runs():
    import doctest

    failed, tried = doctest.testmod(amdocc, verbose=False, report=False)
    assert tried >= 5 and failed == 0


def test_import_stays_light():
    code = (
        "import sys, amdocc; heavy = [m for m in ('amdocc.cli', 'amdocc.models', 'amdocc.codeobject', "
        "'amdocc.runtime', 'amdocc.targets', 'matplotlib') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [shutil.which("python3") or "python3", "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT)},
        check=True,
    ).stdout
    assert out.strip() == "[]"
    assert amdocc.Occupancy.__name__ == "Occupancy" and "Kernel" in dir(amdocc)


def test_readme_documents_every_public_name():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python") :]
    section = section[: section.index("\n## ", 1)]
    for name in amdocc.__all__:
        assert f"`{name}" in section or f"amdocc.{name}" in section, name


# --- documented result fields ------------------------------------------------------------------------


def test_every_occupancy_field_has_its_own_docstring():
    for name in amdocc.Occupancy._fields:
        doc = getattr(amdocc.Occupancy, name).__doc__
        assert doc and not doc.startswith("Alias for field"), name


@pytest.mark.parametrize("cls", ["Resources", "Kernel", "CodeObject", "Finding"])
def test_every_record_field_is_documented(cls):
    record = getattr(amdocc, cls)
    doc = inspect.getdoc(record)
    for f in dataclasses.fields(record):
        assert re.search(rf"^\s+{f.name}:", doc, re.M), (cls, f.name)


def test_blocks_per_cu_attributes_are_documented():
    from amdocc.runtime import BlocksPerCU

    doc = inspect.getdoc(BlocksPerCU)
    for name in BlocksPerCU.__annotations__:
        assert re.search(rf"^\s+{name}:", doc, re.M), name


# --- CodeObject.kernel(name) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture", ["gfx1100_w32_wgp_cov6.hsaco", "opencl_gfx942_cov6.hsaco", "agpr_gfx942_cov6.hsaco"]
)
def test_kernel_by_name_or_symbol(fixture):
    (co,) = amdocc.load(ELF / fixture)
    for k in llvm_kernels(fixture):
        name, symbol = k[".name"], k[".symbol"]
        for spelling in (name, symbol, symbol[:-3]):
            got = co.kernel(spelling)
            assert (got.name, got.symbol) == (name, symbol), spelling


def test_kernel_miss_lists_the_nearest_names():
    (co,) = amdocc.load(ELF / "gfx1100_w32_wgp_cov6.hsaco")
    with pytest.raises(amdocc.AmdoccError) as e:
        co.kernel("_Z9saxpy_ldsPKfPfi")  # the "f" of float dropped
    msg = str(e.value)
    assert "nearest: _Z9saxpy_ldsfPKfPfi" in msg and "\n" not in msg
    with pytest.raises(amdocc.UsageError) as e:
        co.kernel("gemm")  # nothing near: the kernels are listed
    assert all(k[".name"] in str(e.value) for k in llvm_kernels("gfx1100_w32_wgp_cov6.hsaco"))
    with pytest.raises(amdocc.UsageError):
        co.kernel(3)


def cxxfilt(name: str) -> str:
    return subprocess.run(["llvm-cxxfilt-22", name], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.llvm22
def test_kernel_by_demangled_name_through_the_hook(monkeypatch):
    # The lookup through the demangler hook, with llvm-cxxfilt-22 standing in as the demangler.
    from amdocc.codeobject import model

    monkeypatch.setattr(model, "demangle", lambda name: (lambda text: text if text != name else None)(cxxfilt(name)))
    (co,) = amdocc.load(ELF / "gfx1100_w32_wgp_cov6.hsaco")
    for k in llvm_kernels("gfx1100_w32_wgp_cov6.hsaco"):
        demangled = cxxfilt(k[".name"])
        assert demangled != k[".name"] and co.kernel(demangled).name == k[".name"]
    # The nearest name is offered in the spelling asked with (here demangled).
    with pytest.raises(amdocc.UsageError, match=re.escape("nearest: " + cxxfilt("_Z9saxpy_ldsfPKfPfi"))):
        co.kernel("saxpy_lds(float, float*, float*, int)")


@pytest.mark.llvm22
def test_kernel_by_demangled_name():
    (co,) = amdocc.load(ELF / "gfx1100_w32_wgp_cov6.hsaco")
    for k in llvm_kernels("gfx1100_w32_wgp_cov6.hsaco"):
        readable = cxxfilt(k[".name"])
        assert co.kernel(readable).name == k[".name"]
        # The bare function name llvm-cxxfilt prints before the signature finds it too.
        assert co.kernel(readable.split("(", 1)[0]).name == k[".name"]


def test_a_bare_name_several_kernels_share_is_ambiguous(tmp_path):
    # Two kernels of one name (an overload): the bare name is refused, listing both.
    (co,) = amdocc.load(ELF / "gfx1100_w32_wgp_cov6.hsaco")
    k = co.kernels[0]
    # _Z9saxpy_ldsfPKfPfi with an int first: saxpy_lds(int, float, float const*, float*, int).
    overload = k.name.replace("_Z9saxpy_lds", "_Z9saxpy_ldsi", 1)
    twin = dataclasses.replace(k, name=overload, symbol=overload + ".kd")
    assert twin.demangled_name == (k.demangled_name or "").replace("(", "(int, ", 1)
    both = dataclasses.replace(co, kernels=[k, twin])
    with pytest.raises(amdocc.UsageError, match="names 2 kernels"):
        both.kernel(k.demangled_name.split("(", 1)[0])


# --- compact reprs ---------------------------------------------------------------------------------


def test_repr_is_one_line_per_kernel():
    (co,) = amdocc.load(ELF / "gfx1100_w32_wgp_cov6.hsaco")
    lines = repr(co).splitlines()
    names = [k[".name"] for k in llvm_kernels("gfx1100_w32_wgp_cov6.hsaco")]
    assert len(lines) == 1 + len(names)
    assert "gfx1100" in lines[0] and f"{len(names)} kernels" in lines[0]
    for line, name in zip(lines[1:], names, strict=True):
        assert name in line
    assert "\n" not in repr(co.kernels[0]) and len(repr(co.kernels[0])) < 200
    many = dataclasses.replace(co, kernels=co.kernels * 30)  # 120 kernels: the repr stays short
    assert len(repr(many).splitlines()) <= 42 and "more" in repr(many).splitlines()[-1]
    occ = amdocc.occupancy(co.kernels[0], block_size=256)
    assert "\n" not in repr(occ) and "query" not in repr(occ)


# --- next_step of a result record --------------------------------------------------------------------


def test_next_step_hand_worked_gfx942_example_1():
    # docs/hip-occupancy.md §5 example 1: LDS-bound at 1 block; two need 65536 // 2 = 32768 B, so shed 16384 of 49152.
    occ = amdocc.occupancy({"vgprs": 128, "sgprs": 40, "lds": 49152}, target="gfx942", block_size=256)
    assert amdocc.next_step(occ) == {"gain": 2, "unit": "blocks_per_cu", "shed": {"lds": 16384}}
    # Dynamic LDS counts with the static: the same kernel at 32 KiB static + 16 KiB dynamic.
    occ = amdocc.occupancy({"vgprs": 128, "lds": 32768}, target="gfx942", block_size=256, dynamic_lds=16384)
    assert amdocc.next_step(occ) == {"gain": 2, "unit": "blocks_per_cu", "shed": {"lds": 16384}}


def test_next_step_ties_shed_both():
    # gfx942, 128 VGPRs, 16 KiB LDS, block 256: VGPRs allow 4 (512/128 waves x 4 SIMDs x 64 / 256)
    # and LDS allows 65536 // 16384 = 4. Five need LDS <= 65536 // 5 = 13107 (shed 3277) and 5
    # waves per SIMD, i.e. alignUp(v, 8) <= 102: v <= 96 (shed 32).
    occ = amdocc.occupancy({"vgprs": 128, "lds": 16384}, target="gfx942", block_size=256)
    assert set(occ.limiters) == {"lds", "vgpr"}
    assert amdocc.next_step(occ) == {"gain": 5, "unit": "blocks_per_cu", "shed": {"lds": 3277, "vgpr": 32}}


def test_next_step_follows_the_bit_mask_on_gfx1100():
    # docs/hip-occupancy.md §5 example 4: 100 VGPRs give 7 blocks per WGP. HIP's bit mask rounds 96 to 96 (16 waves,
    # 8 blocks) but 97..100 to 104: shedding 4 is enough, though 88 rounds to 104 again.
    occ = amdocc.occupancy({"vgprs": 100}, target="gfx1100", block_size=256)
    assert amdocc.next_step(occ) == {"gain": 8, "unit": "blocks_per_cu", "shed": {"vgpr": 4}}
    # Every VGPR count, both wave sizes: the smallest cut by brute force over docs/hip-occupancy.md §2.
    for wave in (32, 64):
        for v in range(1, 257):
            have = hip_blocks("gfx1100", v, 256, wave=wave, wgp=True)
            occ = amdocc.occupancy({"vgprs": v, "wave": wave}, target="gfx1100", block_size=256)
            assert occ.blocks_per_cu == have
            better = [x for x in range(v) if hip_blocks("gfx1100", x, 256, wave=wave, wgp=True) > have]
            step = amdocc.next_step(occ)
            if occ.limiter != "vgpr" or not better:
                assert step is None, (wave, v)
                continue
            keep = max(better)
            assert step == {
                "gain": hip_blocks("gfx1100", keep, 256, wave=wave, wgp=True),
                "unit": "blocks_per_cu",
                "shed": {"vgpr": v - keep},
            }, (wave, v)


def test_next_step_of_the_hw_model_sheds_what_the_descriptor_allocates():
    # The hw model reads the descriptor's allocation: the sample's gfx1100 reg_heavy allocates
    # .amdhsa_next_free_vgpr registers (LLVM's descriptor dump). Wave32 in WGP mode: 1536 VGPRs
    # per SIMD in granules of 24, 16 waves at most, 4 SIMDs, 8 waves per 256-thread block; so
    # 104 → 120 → 12 waves → 6 blocks, and 8 blocks need 16 waves: at most 96 allocated.
    from oracle.llvm22 import parse_descriptor_dump

    dump = parse_descriptor_dump((FIXTURES / "sample" / "gfx1100-1f5f94216bf5.co.kd.txt").read_text())
    allocated = next(v for d in dump.values() for s, v in d.items() if s == "_Z9reg_heavyPKfPf.kd")["next_free_vgpr"]
    assert allocated == 104
    co = next(c for c in amdocc.load(SAMPLE) if c.processor == "gfx1100")
    k = co.kernel("_Z9reg_heavyPKfPf")
    assert k.resources.vgprs_allocated == allocated and k.resources.vgprs != allocated
    occ = amdocc.occupancy(k, block_size=256, model="hw")
    assert (occ.blocks_per_cu, occ.limiter) == (6, "vgpr")
    assert amdocc.next_step(occ) == {"gain": 8, "unit": "blocks_per_cu", "shed": {"vgpr": 104 - 96}}


def test_next_step_equals_the_json_record(capsys):
    for model in ("hip", "llvm", "hw"):
        for path in (SAMPLE, str(ELF / "agpr_gfx942_cov6.hsaco"), str(ELF / "gfx1100_w32_wgp_cov6.hsaco")):
            capsys.readouterr()
            assert main(["occupancy", "--json", "--model", model, path]) == 0
            for r in json.loads(capsys.readouterr().out)["results"]:
                co = next(c for c in amdocc.load(path) if str(c.target_id) == r["target"])
                occ = amdocc.occupancy(co.kernel(r["symbol"]), block_size=r["block_size"], model=model)
                assert amdocc.next_step(occ) == r["next_step"], (model, path, r["kernel"])


def test_next_step_is_lazy_and_computed_once(monkeypatch):
    from amdocc.models import nextstep

    calls = []
    real = nextstep.search_next_step
    monkeypatch.setattr(nextstep, "search_next_step", lambda *a, **k: calls.append(1) or real(*a, **k))
    nextstep._cached_next_step.cache_clear()
    occ = amdocc.occupancy({"vgprs": 136, "sgprs": 8}, target="gfx942", block_size=320)
    assert calls == []  # building the record costs no search
    first = amdocc.next_step(occ)
    first["shed"]["vgpr"] = -1  # a caller's copy: the cache is not touched
    # By hand (docs/hip-occupancy.md §2): 512 // 136 = 3 waves → 4 x 3 x 64 = 768 threads → 768 // 320 = 2 blocks;
    # three need 960 threads, i.e. 4 waves: alignUp(v, 8) <= 128, so shed 8 → 1024 // 320 = 3.
    assert occ.blocks_per_cu == hip_blocks("gfx942", 136, 320, sgprs=8) == 2
    assert amdocc.next_step(occ) == {"gain": 3, "unit": "blocks_per_cu", "shed": {"vgpr": 8}} and calls == [1]


def test_record_without_its_query_refuses_next_step():
    from amdocc.models import compute, usage_of

    occ = compute(usage_of({"vgprs": 128}, target="gfx942"), "hip", 256)
    with pytest.raises(amdocc.UsageError):
        amdocc.next_step(occ)
    assert "query" not in amdocc.occupancy({"vgprs": 128}, target="gfx942", block_size=256).as_dict()


# --- max_blocks_per_cu: kernel_name= ----------------------------------------------------------------


def test_kernel_name_is_an_explicit_keyword():
    params = inspect.signature(amdocc.max_blocks_per_cu).parameters
    assert params["kernel_name"].kind is inspect.Parameter.KEYWORD_ONLY
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def test_max_blocks_per_cu_picks_the_kernel_by_name_or_symbol():
    path = ELF / "gfx1100_w32_wgp_cov6.hsaco"
    (co,) = amdocc.load(path)
    for k in llvm_kernels("gfx1100_w32_wgp_cov6.hsaco"):
        want = amdocc.occupancy(co.kernel(k[".name"]), block_size=128).blocks_per_cu
        for spelling in (k[".name"], k[".symbol"]):
            got = amdocc.max_blocks_per_cu(path, 128, kernel_name=spelling, hip=_NoHip())
            assert int(got) == want and got.source == "model"
    with pytest.raises(amdocc.UsageError, match="nearest: _Z9saxpy_ldsfPKfPfi"):
        amdocc.max_blocks_per_cu(path, 128, kernel_name="_Z9saxpy_ldsPKfPfi", hip=_NoHip())
    with pytest.raises(amdocc.UsageError, match="kernel_name="):
        amdocc.max_blocks_per_cu(path, 128, hip=_NoHip())  # four kernels: which one?
    with pytest.raises(amdocc.UsageError, match="does not name"):
        amdocc.max_blocks_per_cu(co.kernels[0], 128, kernel_name=co.kernels[1].name, hip=_NoHip())


class _NoHip:
    """A runtime that is present but never reached (the kernel's bytes are the question here)."""

    def is_capturing(self, stream):
        return True


# --- Kernel.image ------------------------------------------------------------------------------------


def test_image_is_a_declared_field_holding_the_code_object():
    assert "image" in {f.name for f in dataclasses.fields(amdocc.Kernel)}
    path = ELF / "gfx1100_w32_wgp_cov6.hsaco"  # a bare ELF: the image is the file itself
    (co,) = amdocc.load(path)
    assert all(k.image == path.read_bytes() for k in co.kernels)

    seen = []

    class RecordingHip(_NoHip):
        def is_capturing(self, stream):
            return False

        def occupancy_of(self, image, kernel, block_size, dynamic_lds=0):
            seen.append((image, kernel))
            return 5

    got = amdocc.max_blocks_per_cu(co.kernels[0], 64, hip=RecordingHip())
    assert (int(got), got.source) == (5, "hip") and seen == [(path.read_bytes(), co.kernels[0].name)]


# --- a misspelled manual resource key ---------------------------------------------------------------


def test_misspelled_manual_key_names_the_valid_keys():
    with pytest.raises(amdocc.UsageError) as e:
        amdocc.occupancy({"vgpr": 128, "lds": 0}, target="gfx942", block_size=256)
    msg = str(e.value)
    assert "'vgpr'" in msg and "did you mean vgprs" in msg and "valid keys:" in msg and "max_flat_workgroup_size" in msg
    with pytest.raises(amdocc.UsageError, match="must be int"):
        amdocc.occupancy({"vgprs": "128"}, target="gfx942", block_size=256)
    with pytest.raises(amdocc.UsageError, match="must be bool"):
        amdocc.occupancy({"vgprs": 128, "wgp": 1}, target="gfx1100", block_size=256)
