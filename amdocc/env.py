"""The ``AMDOCC_*`` environment variables, each read through one validated reader.

A variable that is set to a value its reader refuses is a :class:`~amdocc.errors.UsageError`
naming the variable and the form it takes ("AMDOCC_MAX_DEPTH='abc': expected a whole number
>= 0"), so the command line exits 2 with that one line instead of using a default in silence.
An empty value counts as unset (``AMDOCC_MAX_DEPTH= amdocc ...`` is the usual way to clear one).

``VARIABLES`` lists every variable amdocc, its test suite and its tools read, with its form;
docs/cli-contract.md shows the same table, and tests/test_cli_contract.py walks it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .errors import UsageError
from .numbers import BYTE_SUFFIXES, describe, parse_bytes, parse_integer


@dataclass(frozen=True)
class Variable:
    """One variable: who reads it, what it means, and how its text is read.

    ``parse`` turns the text into a value or returns None when it refuses it; ``form`` says
    what it accepts; ``refused`` are texts it must refuse and ``sample`` one it accepts (the
    contract test sets each)."""

    name: str
    reader: str  # "amdocc" (the package and every command), "amdocc.testing", "tests" or "tools"
    meaning: str
    form: str
    parse: Callable[[str], object]
    sample: str
    refused: tuple[str, ...]


def _whole(minimum: int) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        value = parse_integer(text)
        return value if value is not None and value >= minimum else None

    return parse


def _bytes(text: str) -> int | None:
    value = parse_bytes(text)
    return value if value is not None and value >= 0 else None


def _switch(text: str) -> bool | None:
    return {"0": False, "1": True}.get(text.strip())


def _directory(text: str) -> str | None:
    return text if os.path.isdir(text) else None


def _file(text: str) -> str | None:
    return text if os.path.isfile(text) else None


def _word(text: str) -> str | None:
    return text.strip() or None


def _hip_profile(text: str) -> str | None:
    from .models.hip_profiles import profiles

    return text if text in profiles() else None


_COUNT = describe(0)
_POSITIVE = describe(1)
_BYTE_COUNT = f"a byte count >= 0 (bytes, or with a {BYTE_SUFFIXES} suffix)"
_NUMBER_REFUSED = ("abc", "-1", "1.5")

VARIABLES: dict[str, Variable] = {
    v.name: v
    for v in (
        # amdocc.containers.Limits.from_env: the safety bounds on untrusted input.
        Variable(
            "AMDOCC_MAX_DECOMPRESSED",
            "amdocc",
            "largest payload one compressed bundle may expand to (default 1 GiB)",
            _BYTE_COUNT,
            _bytes,
            "2G",
            ("abc", "-1", "1.5", "1T"),
        ),
        Variable(
            "AMDOCC_MAX_DEPTH",
            "amdocc",
            "container layers that may wrap a code object (default 8)",
            _COUNT,
            _whole(0),
            "12",
            _NUMBER_REFUSED,
        ),
        Variable(
            "AMDOCC_MAX_ENTRIES",
            "amdocc",
            "entries one bundle, section or archive may declare (default 65536)",
            _COUNT,
            _whole(0),
            "100000",
            _NUMBER_REFUSED,
        ),
        Variable(
            "AMDOCC_MMAP_THRESHOLD",
            "amdocc",
            "files above this size are mapped instead of read (default 64 MiB)",
            _BYTE_COUNT,
            _bytes,
            "16M",
            ("abc", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_MAX_ARCHIVE_BYTES",
            "amdocc",
            "bytes one zip archive (a wheel) may expand to, nested archives included (default 8 GiB)",
            _BYTE_COUNT,
            _bytes,
            "16GiB",
            ("abc", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_VERIFY_HASHES",
            "amdocc",
            "1: check each compressed bundle's MD5 against its header, a mismatch being an error "
            "(default 0: not checked, as clang-offload-bundler and HIP's loader do not)",
            "0 or 1",
            _switch,
            "1",
            ("yes", "2", "true"),
        ),
        Variable(
            "AMDOCC_LIBLLVM",
            "amdocc",
            "the libLLVM `amdocc isa` disassembles with (default: ROCm's, then the system's libLLVM.so.22, "
            "then rocm-bindings-compiler's; see docs/isa.md)",
            "an existing file",
            _file,
            "/bin/sh",
            ("/nonexistent/libLLVM.so",),
        ),
        Variable(
            "AMDOCC_ROCM_SYSDEPS",
            "amdocc",
            "the folder of the zlib/zstd shims rocm-bindings-compiler's libLLVM needs (`amdocc isa`, "
            "tools/rocm_llc.py; default .cache/rocm-sysdeps)",
            "a command or path",
            _word,
            "/tmp",
            ("   ",),
        ),
        Variable(
            "AMDOCC_LLVM_BIN",
            "amdocc.testing",
            "directory holding LLVM's tools, for amdocc.testing.synth (default: <tool>-22 on PATH)",
            "an existing directory",
            _directory,
            "/",
            ("/nonexistent/amdocc-llvm",),
        ),
        # The test suite (tests/conftest.py checks these when pytest starts).
        Variable(
            "AMDOCC_REQUIRE_ORACLES",
            "tests",
            "1: a test whose oracle is missing fails instead of skipping (as CI runs)",
            "0 or 1",
            _switch,
            "1",
            ("yes", "true", "2"),
        ),
        Variable(
            "AMDOCC_HYPOTHESIS_SEED",
            "tests",
            "the property tests' seed (default: a new one per run, printed)",
            _COUNT,
            _whole(0),
            "42",
            _NUMBER_REFUSED,
        ),
        Variable(
            "AMDOCC_FUZZ_SEED",
            "tests",
            "the fuzz campaign's seed (default: a new one per run, printed)",
            _COUNT,
            _whole(0),
            "1234",
            _NUMBER_REFUSED,
        ),
        Variable(
            "AMDOCC_FUZZ_INPUTS",
            "tests",
            "inputs the fuzz campaign runs (default 20000)",
            _POSITIVE,
            _whole(1),
            "500",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_DIFF_SEED",
            "tests",
            "the LLVM differential tests' seed (default: a new one per run, printed)",
            _COUNT,
            _whole(0),
            "7",
            _NUMBER_REFUSED,
        ),
        Variable(
            "AMDOCC_DIFF_KERNELS",
            "tests",
            "kernels the llc-22 differential test generates (default 1200)",
            _POSITIVE,
            _whole(1),
            "60",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_DIFF_TRITON",
            "tests",
            "kernels the Triton differential test generates (default 800)",
            _POSITIVE,
            _whole(1),
            "30",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_DIFF_ROCM10",
            "tests",
            "kernels the ROCm 10.0 compiler differential test generates (default 1500)",
            _POSITIVE,
            _whole(1),
            "40",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_ISA_CORPUS",
            "tests",
            "amd-aiter .co files tests/test_isa_corpus.py compares with llvm-objdump-22 (default 100; "
            "a seeded sample, AMDOCC_DIFF_SEED)",
            _POSITIVE,
            _whole(1),
            "2501",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_WHEELHOUSE",
            "tests",
            "where the CI-action test finds or builds its wheels (default .cache/wheelhouse)",
            "a directory path",
            _word,
            "/tmp",
            ("   ",),
        ),
        Variable(
            "AMDOCC_AITER_DIR",
            "tests",
            "the unpacked amd-aiter wheel's hsa/ tree (default: .cache/aiter/aiter_meta/hsa)",
            "an existing directory",
            _directory,
            "/",
            ("/nonexistent/amdocc-aiter",),
        ),
        Variable(
            "AMDOCC_WHEELS_DIR",
            "tests",
            "the downloaded ROCm wheels (default: .cache/rocm-wheels)",
            "an existing directory",
            _directory,
            "/",
            ("/nonexistent/amdocc-wheels",),
        ),
        Variable(
            "AMDOCC_HIP_RUNTIMES",
            "tests",
            "the real HIP runtimes laid out over the emulated device (default: .cache/hip-runtimes)",
            "an existing directory",
            _directory,
            "/",
            ("/nonexistent/amdocc-hip-runtimes",),
        ),
        Variable(
            "AMDOCC_HIP_LIVE_EXAMPLES",
            "tests",
            "examples tests/test_hip_live.py's property test draws (default 200)",
            _POSITIVE,
            _whole(1),
            "60",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_HIP_PROPERTY_EXAMPLES",
            "tests",
            "examples per runtime x processor tests/test_hip_properties.py draws (default 15)",
            _POSITIVE,
            _whole(1),
            "15",
            ("abc", "0", "-1", "1.5"),
        ),
        Variable(
            "AMDOCC_HIP_PROFILE",
            "tests",
            "the HIP profile the live-runtime tests expect (default: the runtime's own release)",
            "a HIP profile name of tables/hip_profiles.toml (amdocc occupancy --list-profiles)",
            _hip_profile,
            "develop",
            ("   ", "rocm-0.0"),
        ),
        Variable(
            "AMDOCC_FUZZ_ONLY",
            "tools",
            "fuzz only the fixtures whose file name contains this text (tools/fuzz; default: all)",
            "a part of a fixture's file name",
            _word,
            "objects",
            ("   ",),
        ),
        # The tools (commands and paths; a wrong command fails when it is run).
        *(
            Variable(name, "tools", meaning, "a command or path", _word, "true", ("   ",))
            for name, meaning in (
                ("AMDOCC_LLC", "llc for tools/kernelgen.py (default llc-22)"),
                ("AMDOCC_LLD", "ld.lld for tools/kernelgen.py (default ld.lld-22)"),
                ("AMDOCC_LLVM_MC", "llvm-mc for tools/kernelgen.py (default llvm-mc-22)"),
                ("AMDOCC_READELF", "llvm-readelf for tools/probe_targets.py (default llvm-readelf-22)"),
                ("AMDOCC_PROBE_CACHE", "tools/probe_targets.py's llc cache (default ~/.cache/amdocc/llc-probe)"),
                ("AMDOCC_TRITON_CODEGEN", "Triton's AMD code generator for tools/triton_llc.py"),
                ("AMDOCC_ROCM_LLVM", "the libLLVM.so tools/rocm_llc.py loads (default: rocm-bindings-compiler's)"),
                (
                    "AMDOCC_COMGR",
                    "the libamd_comgr tools/comgr_isa.py asks (default: ROCm 7.14's, .cache/hip-runtimes)",
                ),
            )
        ),
    )
}


def read(name: str, environ: Mapping[str, str] | None = None) -> object:
    """The value of variable ``name`` (one of VARIABLES), None when unset or empty; a value its
    form refuses is a UsageError naming the variable and the form."""
    variable = VARIABLES[name]
    text = (os.environ if environ is None else environ).get(name, "")
    if not text:
        return None
    value = variable.parse(text)
    if value is None:
        raise UsageError(f"{name}={text!r}: expected {variable.form}")
    return value


def check(reader: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """Read every variable of ``reader`` ("amdocc": what every command reads; "tests"), raising
    the first refused; returns warnings for AMDOCC_* names nothing reads, each with the known
    name it resembles. A variable of another reader is checked when that reader reads it."""
    env = os.environ if environ is None else environ
    for variable in VARIABLES.values():
        if variable.reader == reader:
            read(variable.name, env)
    return unknown(env)


def unknown(environ: Mapping[str, str]) -> list[str]:
    """One warning per set AMDOCC_* variable that no reader of amdocc knows."""
    out = []
    for name in sorted(environ):
        if name.startswith("AMDOCC_") and name not in VARIABLES and environ[name]:
            import difflib  # only for a variable amdocc does not read: most runs set none

            close = difflib.get_close_matches(name, VARIABLES, n=1, cutoff=0.8)
            hint = f" (did you mean {close[0]}?)" if close else ""
            out.append(f"{name} is not a variable amdocc reads{hint}; it is ignored")
    return out
