"""Bad input on the ISA path: a clear error naming the file and the offset, or a flag, never a
traceback. The broken code objects are clang-22 builds patched where pyelftools (an independent
ELF reader) says the fields are."""

from __future__ import annotations

import json
import re
import struct

import pytest
from elftools.elf.elffile import ELFFile

import amdocc
from amdocc.cli.main import main
from amdocc.errors import FormatError
from amdocc.isa import kernel_code
from conftest import skip_unless_required
from isa_oracle import build
from test_isa_disassembly import _library
from test_occupancy_where import hot_loop  # noqa: F401 - the fixture

pytestmark = pytest.mark.llvm22
SAXPY, NESTED = "_Z14isa_saxpy_loopfPKfPfii", "_Z10isa_nestedPKfPfiii"


@pytest.fixture(scope="module")
def gfx942(tmp_path_factory):
    _library()
    return build(tmp_path_factory.mktemp("isa-bad"), "gfx942", "gfx942", [])


def _symbol_entries(data: bytes, name: str) -> list[int]:
    """File offsets of ``name``'s entries in .symtab and .dynsym (pyelftools)."""
    import io

    elf = ELFFile(io.BytesIO(data))
    out = []
    for table in (elf.get_section_by_name(".symtab"), elf.get_section_by_name(".dynsym")):
        for i, sym in enumerate(table.iter_symbols()):
            if sym.name == name:
                out.append(table["sh_offset"] + i * table["sh_entsize"])
    return out


def _text(data: bytes) -> tuple[int, int, int, int]:
    """(.text section header offset, sh_addr, sh_offset, sh_size) (pyelftools)."""
    import io

    elf = ELFFile(io.BytesIO(data))
    index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".text")
    text = elf.get_section(index)
    return elf["e_shoff"] + index * elf["e_shentsize"], text["sh_addr"], text["sh_offset"], text["sh_size"]


def _patched(path, tmp_path, edits: list[tuple[int, str, int]]):
    data = bytearray(path.read_bytes())
    for at, fmt, value in edits:
        struct.pack_into(fmt, data, at, value)
    out = tmp_path / "patched.co"
    out.write_bytes(bytes(data))
    return out


def _kernel(path, name):
    (co,) = amdocc.load(path)
    return co, co.kernel(name)


def test_a_symbol_past_its_section_is_an_error_naming_file_and_offset(gfx942, tmp_path):
    data = gfx942.read_bytes()
    _, addr, _, size = _text(data)
    entries = _symbol_entries(data, SAXPY)
    broken = _patched(gfx942, tmp_path, [(at + 8, "<Q", addr + size - 8) for at in entries])
    co, kernel = _kernel(broken, SAXPY)
    with pytest.raises(FormatError) as exc:
        kernel_code(kernel, co.origin)
    assert "lies outside its section .text" in str(exc.value)
    assert str(exc.value).startswith(f"{broken}: offset {entries[0]:#x}")


def test_a_truncated_text_section_is_an_error(gfx942, tmp_path):
    data = gfx942.read_bytes()
    header, _, _, size = _text(data)
    # .text said to start so late in the file that its bytes run past the end.
    broken = _patched(gfx942, tmp_path, [(header + 0x18, "<Q", len(data) - size // 2)])
    co, kernel = _kernel(broken, SAXPY)
    with pytest.raises(FormatError) as exc:
        kernel_code(kernel, co.origin)
    assert "truncated or out-of-range section .text" in str(exc.value)
    code = main(["isa", "--json", str(broken)])
    assert code == 2


def test_the_cli_reports_a_bad_kernel_and_reads_the_others(gfx942, tmp_path, capsys):
    data = gfx942.read_bytes()
    _, addr, _, size = _text(data)
    broken = _patched(gfx942, tmp_path, [(at + 8, "<Q", addr + size) for at in _symbol_entries(data, SAXPY)])
    assert main(["isa", "--json", str(broken)]) == 2
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert [e["kernel"] for e in d["errors"]] == [SAXPY]
    assert SAXPY not in {k["kernel"] for k in d["kernels"]} and NESTED in {k["kernel"] for k in d["kernels"]}
    assert err.count("\n") == 1 and "lies outside its section .text" in err and "Traceback" not in err


def test_overlapping_kernels_are_flagged(gfx942, tmp_path):
    data = gfx942.read_bytes()
    (co,) = amdocc.load(gfx942)
    saxpy = kernel_code(co.kernel(SAXPY), co.origin)
    nested = kernel_code(co.kernel(NESTED), co.origin)
    # saxpy's size reaches 16 bytes into the next kernel.
    grown = nested.address - saxpy.address + 16
    broken = _patched(gfx942, tmp_path, [(at + 16, "<Q", grown) for at in _symbol_entries(data, SAXPY)])
    co, kernel = _kernel(broken, SAXPY)
    notes = kernel_code(kernel, co.origin).notes
    assert any(f"overlaps {NESTED}" in n for n in notes)
    assert any(f"overlaps {SAXPY}" in n for n in kernel_code(co.kernel(NESTED), co.origin).notes)


def test_a_size_zero_symbol_runs_to_the_next_function_and_says_so(gfx942, tmp_path):
    data = gfx942.read_bytes()
    broken = _patched(gfx942, tmp_path, [(at + 16, "<Q", 0) for at in _symbol_entries(data, SAXPY)])
    co, kernel = _kernel(broken, SAXPY)
    code = kernel_code(kernel, co.origin)
    nested = kernel_code(co.kernel(NESTED), co.origin)
    assert code.inferred == "the symbol's size is 0"
    assert code.address + len(code.code) == nested.address  # up to the next function symbol
    assert any("extent inferred" in n for n in code.notes)


def test_a_library_without_the_disassembler_exits_3_with_how_to_get_one(gfx942, monkeypatch, capsys):
    import glob

    from amdocc.isa import libllvm

    path = next(p for p in glob.glob("/usr/lib/*/libz.so*") + glob.glob("/lib/*/libz.so*"))  # zlib: not LLVM
    monkeypatch.setenv("AMDOCC_LIBLLVM", path)
    libllvm.forget()
    try:
        assert main(["isa", str(gfx942)]) == 3
    finally:
        libllvm.forget()
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert f"AMDOCC_LIBLLVM={path}: does not export LLVMInitializeAMDGPUTargetInfo" in err
    assert "apt-get install libllvm22" in err


def test_a_missing_library_file_is_a_usage_error(gfx942, monkeypatch, capsys):
    monkeypatch.setenv("AMDOCC_LIBLLVM", "/nonexistent/libLLVM.so")
    assert main(["isa", str(gfx942)]) == 2
    assert capsys.readouterr().err == "amdocc: AMDOCC_LIBLLVM='/nonexistent/libLLVM.so': expected an existing file\n"


def test_no_library_anywhere_says_how_to_get_one(monkeypatch, tmp_path):
    from amdocc.isa import libllvm

    monkeypatch.setattr(libllvm, "_libraries_in", lambda pattern: [])
    monkeypatch.setattr(libllvm, "_rocm_bindings", lambda environ: None)
    with pytest.raises(libllvm.LlvmUnavailable) as exc:
        libllvm.find({"ROCM_PATH": str(tmp_path)})
    assert exc.value.exit_code == 3
    assert str(exc.value) == (
        "no libLLVM with the AMDGPU disassembler was found; apt-get install libllvm22, or install ROCm "
        "(ROCM_PATH), or set AMDOCC_LIBLLVM to a libLLVM.so"
    )


def test_rocm_bindings_compilers_libllvm_decodes_as_objdump_does(gfx942):
    # The fourth place the search looks: rocm-bindings-compiler's libLLVM (ROCm 10's LLVM),
    # loaded after the zlib/zstd shims it needs (tools/rocm_sysdeps/build.sh).
    import os

    from amdocc.isa import libllvm
    from amdocc.isa.decode import decode_bytes
    from conftest import needs, skip_unless_required
    from isa_oracle import objdump

    needs("rocm.bindings", "rocm-bindings-compiler bundles a libLLVM with the AMDGPU disassembler")
    candidate = libllvm._rocm_bindings(dict(os.environ))
    if not isinstance(candidate, libllvm.Candidate):
        skip_unless_required(f"rocm-bindings-compiler's libLLVM cannot be used: {candidate}")
    lib = libllvm._load(candidate)
    assert isinstance(lib, libllvm.Library), lib
    assert lib.source == "rocm-bindings-compiler" and lib.version and lib.version.startswith("23.")
    listing = objdump(gfx942, "gfx942")
    (co,) = amdocc.load(gfx942)
    for kernel in co.kernels:
        code = kernel_code(kernel, co.origin)
        for ins in decode_bytes(code.code, code.address, code.processor, code.features, lib):
            assert listing.text[ins.address] == ins.text


def test_a_processor_the_tables_do_not_know_is_not_guessed(gfx942, tmp_path, capsys):
    data = bytearray(gfx942.read_bytes())
    e_flags = struct.unpack_from("<I", data, 0x30)[0]
    broken = _patched(gfx942, tmp_path, [(0x30, "<I", (e_flags & ~0xFF) | 0xFE)])  # EF_AMDGPU_MACH 0xfe: none
    (co,) = amdocc.load(broken)
    assert co.target is None and co.kernels
    from amdocc.errors import UnknownTargetError

    with pytest.raises(UnknownTargetError, match="not asked to guess"):
        kernel_code(co.kernels[0], co.origin)
    assert main(["isa", "--summary", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "not asked to guess" in err


def test_the_search_order_rocm_then_the_system(tmp_path):
    import glob
    import os

    from amdocc.isa import libllvm

    system = sorted(glob.glob("/usr/lib/*-linux-gnu/libLLVM.so.22*"))
    if not system:
        skip_unless_required("Debian's libllvm22 is not installed")
    rocm = tmp_path / "rocm" / "lib" / "llvm" / "lib"
    rocm.mkdir(parents=True)
    (rocm / "libLLVM.so").symlink_to(system[0])
    found = libllvm.candidates({"ROCM_PATH": str(tmp_path / "rocm")})
    assert found[0] == libllvm.Candidate(str(rocm / "libLLVM.so"), "ROCm")
    assert any(isinstance(c, libllvm.Candidate) and c.source == "system" and c.path == system[0] for c in found)
    loaded = libllvm.find({"ROCM_PATH": str(tmp_path / "rocm")})
    assert (loaded.source, loaded.path) == ("ROCm", str(rocm / "libLLVM.so"))
    # AMDOCC_LIBLLVM, when set, is the only candidate.
    assert libllvm.candidates({"AMDOCC_LIBLLVM": system[0], "ROCM_PATH": str(tmp_path / "rocm")}) == [
        libllvm.Candidate(system[0], "AMDOCC_LIBLLVM")
    ]
    assert os.path.realpath(loaded.path) == os.path.realpath(system[0])


def test_a_processor_newer_than_the_libllvm_is_refused_not_a_crash(gfx942, tmp_path, capsys, monkeypatch):
    # LLVM 22 does not know gfx1310 (tables/targets.toml: since_llvm 23); asked anyway, it stops
    # the process ("LLVM ERROR: disassembly not yet supported for subtarget"). The library is
    # presented as LLVM 22.1.8 whatever is installed, so the rule is checked everywhere.
    import dataclasses

    from amdocc.isa import disassemble, libllvm
    from amdocc.isa.decode import ProcessorNotDecodable
    from amdocc.targets import get_target

    monkeypatch.setattr(libllvm, "_loaded", dataclasses.replace(_library(), version="22.1.8"))
    target = get_target("gfx1310")
    assert target.since_llvm == 23
    e_flags = struct.unpack_from("<I", gfx942.read_bytes(), 0x30)[0]
    broken = _patched(gfx942, tmp_path, [(0x30, "<I", (e_flags & ~0xFF) | target.mach)])
    (co,) = amdocc.load(broken)
    assert co.processor == "gfx1310"
    with pytest.raises(ProcessorNotDecodable, match="first known to LLVM 23") as exc:
        disassemble(co.kernels[0], origin=co.origin)
    assert exc.value.exit_code == 3 and str(exc.value).startswith(f"{broken}: offset ")
    assert main(["isa", "--summary", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("first known to LLVM 23") == len(co.kernels) and "Traceback" not in err


def test_a_processor_llvm_removed_is_refused_not_a_crash(gfx942, tmp_path):
    # LLVM removed gfx940 and gfx941 before LLVM 20 (tables/targets.toml: until_llvm 19); the
    # libLLVM found here, asked to decode for one, stops the whole process ("disassembly not yet
    # supported for subtarget": the fuzz campaign met it). llc-22's own processor list is the
    # oracle that LLVM 22 does not know them; the command runs in its own process, so an abort
    # shows as a signal, not as a lost test run.
    import subprocess
    import sys

    from amdocc.isa import libllvm
    from amdocc.targets import get_target

    known = subprocess.run(["llc-22", "-mtriple=amdgcn", "-mcpu=help"], capture_output=True, text=True)
    listed = set(re.findall(r"\bgfx[0-9a-z-]+", known.stdout + known.stderr))
    assert "gfx942" in listed and not {"gfx940", "gfx941"} & listed
    if int(libllvm.library().version.split(".")[0]) <= 19:
        pytest.fail("the libLLVM found knows gfx940: this test needs LLVM 20 or later (Debian's libllvm22)")
    for name in ("gfx940", "gfx941"):
        target = get_target(name)
        assert target.until_llvm == 19
        e_flags = struct.unpack_from("<I", gfx942.read_bytes(), 0x30)[0]
        broken = _patched(gfx942, tmp_path, [(0x30, "<I", (e_flags & ~0xFF) | target.mach)])
        run = subprocess.run(
            [sys.executable, "-m", "amdocc", "isa", "--summary", str(broken)], capture_output=True, text=True
        )
        assert run.returncode == 2, (run.returncode, run.stderr[-400:])
        assert f"{name} was last known to LLVM 19" in run.stderr and "Traceback" not in run.stderr


def test_a_processor_whose_encoding_llvm_cannot_decode_is_refused_not_a_crash(gfx942, tmp_path):
    # LLVM's AMDGPU disassembler decodes gfx8 and later only (tables/isa_decoding.toml); asked for
    # gfx6 or gfx7 it stops the process. llvm-objdump-22 is the oracle for both sides of the edge:
    # it aborts on gfx700 and decodes gfx801. The fuzz campaign met the abort (e_flags gfx600).
    import subprocess
    import sys

    from amdocc.targets import get_target

    def objdump(mcpu: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["llvm-objdump-22", "-d", f"--mcpu={mcpu}", str(gfx942)], capture_output=True, text=True)

    assert "disassembly not yet supported for subtarget" in objdump("gfx700").stderr
    assert objdump("gfx801").returncode == 0
    e_flags = struct.unpack_from("<I", gfx942.read_bytes(), 0x30)[0]
    for name, refused in (("gfx600", True), ("gfx700", True), ("gfx705", True), ("gfx801", False)):
        broken = _patched(gfx942, tmp_path, [(0x30, "<I", (e_flags & ~0xFF) | get_target(name).mach)])
        run = subprocess.run(
            [sys.executable, "-m", "amdocc", "isa", "--summary", str(broken)], capture_output=True, text=True
        )
        said = "disassembler does not decode" in run.stderr
        assert (run.returncode, said) == ((2, True) if refused else (0, False)), (name, run.stderr[-300:])
        assert "Traceback" not in run.stderr and "LLVM ERROR" not in run.stderr


CUT_SHORT = """
import sys
from amdocc.isa.decode import decode_bytes
for ins in decode_bytes(bytes.fromhex(sys.argv[1]), 0, "gfx942"):
    print(hex(ins.address), ins.size, ins.decoded, ins.text)
"""


def test_an_instruction_cut_short_inside_its_literal_is_undecodable_never_a_crash():
    # v_and_b32 with a literal (0xff in src0) whose 4 literal bytes are cut off, as at the end of
    # a kernel whose symbol size lies: LLVM 22's disassembler crashes on it (llvm-mc-22
    # --disassemble of the same four bytes dies of SIGSEGV), so amdocc never lets LLVM see a
    # cut-short instruction. In a subprocess: a regression would kill the test run otherwise.
    _library()
    import subprocess
    import sys

    with_literal = subprocess.run(
        ["llvm-mc-22", "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"],
        input="0xff 0x3e 0x0c 0x26 0x00 0x00 0x80 0x3f",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    run = subprocess.run(
        [sys.executable, "-c", CUT_SHORT, "ff3e0c260000803f" + "ff3e0c26"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    whole, cut = run.stdout.splitlines()
    assert whole.split(" ", 3)[1:3] == ["8", "True"] and whole.split(" ", 3)[3].strip() == with_literal
    assert cut.split(" ", 3)[:3] == ["0x8", "4", "False"]  # flagged undecodable, one word on


# A 32-byte window on which LLVM 22's disassembler (and llvm-mc-22 --disassemble) dies of SIGSEGV
# for gfx942: found by decoding seeded random windows (docs/isa.md, "Not covered").
CRASHING_WINDOW = bytes.fromhex("3e2e6de9c40b72ffad3ffa8556ab3e615064437a34bf20d500aad8bb90c13551")


def _llvm_crashes_on_the_window() -> bool:
    """Whether llvm-mc-22 --disassemble dies on CRASHING_WINDOW (the oracle that LLVM does)."""
    import subprocess

    llvm_mc = subprocess.run(
        ["llvm-mc-22", "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942"],
        input=" ".join(f"0x{b:02x}" for b in CRASHING_WINDOW),
        capture_output=True,
        text=True,
    )
    return llvm_mc.returncode < 0 or llvm_mc.returncode > 128


def _crashing_pair(source, directory, kernel: str | None = None, suffix: str = ".hsaco"):
    """``directory`` holding good{suffix} (``source`` as built) and bad{suffix} (the same with
    ``kernel``'s first bytes, or the first kernel's, replaced by CRASHING_WINDOW)."""
    co = amdocc.load(source)[0]
    chosen = next(k for k in co.kernels if kernel in (None, k.name))
    start = kernel_code(chosen, co.origin).file_offset
    data = bytearray(source.read_bytes())
    data[start : start + len(CRASHING_WINDOW)] = CRASHING_WINDOW
    directory.mkdir(exist_ok=True)
    (directory / f"bad{suffix}").write_bytes(data)
    (directory / f"good{suffix}").write_bytes(source.read_bytes())
    return directory / f"good{suffix}", directory / f"bad{suffix}"


def test_a_kernel_whose_bytes_crash_llvm_is_an_error_entry_and_the_other_files_are_read(gfx942, tmp_path):
    _library()
    import subprocess
    import sys

    crashes = _llvm_crashes_on_the_window()
    kernels = len(amdocc.load(gfx942)[0].kernels)
    _crashing_pair(gfx942, tmp_path)
    for jobs in ("1", "2"):
        run = subprocess.run(
            [sys.executable, "-m", "amdocc", "isa", "--json", "--jobs", jobs, str(tmp_path)],
            capture_output=True,
            text=True,
        )
        listed = json.loads(run.stdout)
        good = [k for k in listed["kernels"] if k["path"].endswith("good.hsaco")]
        assert len(good) == kernels, run.stderr
        if crashes:  # LLVM crashes on it: one error entry
            assert run.returncode == 2
            (error,) = listed["errors"]
            assert error["path"].endswith("bad.hsaco") and "was killed by SIGSEGV" in error["error"]
        else:  # an LLVM that decodes it: the file reads like any other
            assert run.returncode == 0 and len(listed["kernels"]) == 2 * kernels


# Every other command that disassembles, in one process (--jobs 1): the spilling kernel is the one
# patched, as a diff and the spills-in-loops rule disassemble the kernels that spill.
DISASSEMBLING = {
    "census --isa": ["census", "--isa", "--jobs", "1", "{dir}"],
    "check, spills in loops": ["check", "--rules", "defaults,spills-in-loops", "--jobs", "1", "{dir}"],
    "check, a max_live budget": ["check", "--budget", "max_live_vgpr<=512", "--jobs", "1", "{dir}"],
    "diff": ["diff", "--jobs", "1", "{good}", "{bad}"],
    "diff --isa": ["diff", "--isa", "--jobs", "1", "{good}", "{bad}"],
}


@pytest.mark.parametrize("command", sorted(DISASSEMBLING))
def test_every_command_that_disassembles_survives_bytes_that_crash_llvm_in_one_process(command, gfx942, tmp_path):
    _library()
    import subprocess
    import sys

    good, bad = _crashing_pair(gfx942, tmp_path / "t", "_Z9isa_spillPKfPfi")
    args = [a.format(dir=good.parent, good=good, bad=bad) for a in DISASSEMBLING[command]]
    run = subprocess.run([sys.executable, "-m", "amdocc", *args], capture_output=True, text=True)
    assert run.returncode >= 0, f"killed by signal {-run.returncode}"
    assert "Traceback" not in run.stderr
    said = f"{bad}: the process reading it was killed by SIGSEGV" in run.stderr
    assert (run.returncode, said) == (2, True) if _llvm_crashes_on_the_window() else run.returncode in (0, 1)


def test_occupancy_where_survives_bytes_that_crash_llvm_in_one_process(hot_loop, tmp_path):  # noqa: F811
    _library()
    import subprocess
    import sys

    good, _ = _crashing_pair(hot_loop[0], tmp_path / "t", suffix=".so")
    run = subprocess.run(
        [sys.executable, "-m", "amdocc", "occupancy", "--json", "--where", "--jobs", "1", str(good.parent)],
        capture_output=True,
        text=True,
    )
    assert run.returncode >= 0, f"killed by signal {-run.returncode}"
    listed = json.loads(run.stdout)
    (result,) = [r for r in listed["results"] if r["path"].endswith("good.so")]
    assert result["next_step_where"] is not None  # the good file's place was found
    if _llvm_crashes_on_the_window():
        (error,) = listed["errors"]
        assert run.returncode == 2 and error["path"].endswith("bad.so") and "killed by SIGSEGV" in error["error"]
