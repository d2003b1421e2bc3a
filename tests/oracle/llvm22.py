"""Run LLVM 22's tools and read what they print, as the oracle amdocc is checked against.

Nothing here imports amdocc: these readers turn LLVM's text into plain Python values.
- ``llvm-readelf-22 -h --notes``: e_flags as LLVM decodes them, and the metadata note as YAML.
- ``llvm-objdump-22 -D --disassemble-symbols=<k>.kd``: each descriptor as ``.amdhsa_*`` directives.
  objdump decodes every file with the processor of the FIRST file it is given, so callers must
  group files by processor (see ``objdump_descriptors``).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import yaml

READELF = "llvm-readelf-22"
OBJDUMP = "llvm-objdump-22"
LLC = "llc-22"
CLANG = "clang-22"
LLD = "ld.lld-22"


def available(*tools: str) -> bool:
    return all(shutil.which(t) for t in (tools or (READELF, OBJDUMP)))


def run(cmd: list[str], **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace", **kw).stdout


# -- YAML as LLVM writes it (YAML 1.2 core booleans only) -------------------------------------


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


# PyYAML follows YAML 1.1, where "on"/"off"/"yes"/"no" are booleans; LLVM's writer quotes only
# true/false, so an argument named "on" must stay a string.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def parse_yaml(text: str):
    return yaml.load(text, Loader=_Loader)


# -- llvm-readelf -h --notes -------------------------------------------------------------------

_FILE = re.compile(r"^File: (.*)$", re.M)


def split_files(text: str, files: list[str]) -> dict[str, str]:
    """llvm-readelf prints "File: <name>" before each file when given several."""
    if len(files) == 1 and not _FILE.search(text):
        return {files[0]: text}
    parts = _FILE.split(text)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def metadata_documents(text: str) -> list:
    """Every AMDGPU/AMD metadata YAML document in one file's readelf output."""
    docs = []
    for match in re.finditer(r"(?:AMDGPU|AMD HSA) Metadata:\s*\n\s*---\n(.*?)\n\.\.\.\s*$", text, re.S | re.M):
        docs.append(parse_yaml("---\n" + match.group(1) + "\n...\n"))
    return docs


def header_flags(text: str) -> dict:
    """ABI version and the e_flags line: {"abi_version", "e_flags", "processor", "features"}."""
    abi = re.search(r"ABI Version:\s+(\d+)", text)
    flags = re.search(r"Flags:\s+(0x[0-9a-fA-F]+)(.*)$", text, re.M)
    names = [p.strip() for p in flags.group(2).split(",") if p.strip()] if flags else []
    return {
        "abi_version": int(abi.group(1)) if abi else None,
        "e_flags": int(flags.group(1), 16) if flags else None,
        "processor": names[0] if names else None,
        "features": names[1:],
    }


def readelf(files: list[str]) -> dict[str, dict]:
    """{file: {"header": header_flags, "metadata": [docs]}} from one llvm-readelf run."""
    text = run([READELF, "-h", "--notes", *files])
    out = {}
    for name, part in split_files(text, files).items():
        out[name] = {"header": header_flags(part), "metadata": metadata_documents(part)}
    return out


# -- llvm-objdump descriptors ------------------------------------------------------------------

_KD_BLOCK = re.compile(
    r"^[0-9a-f]+ <(?P<sym>[^>]+)>:\n(?P<body>.*?)(?=^[0-9a-f]+ <|^\S+:\s+file format|\Z)", re.M | re.S
)
_DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(-?(?:0x[0-9a-fA-F]+|\d+))\s*$", re.M)
_FORMAT = re.compile(r"^(?P<file>.+?):\s+file format ", re.M)


def parse_descriptor_dump(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """{file: {symbol: {directive: value}}}; a symbol objdump failed to decode maps to
    {"__error__": message}."""
    out: dict[str, dict] = {}
    starts = [(m.start(), m.group("file")) for m in _FORMAT.finditer(text)]
    for i, (pos, name) in enumerate(starts):
        chunk = text[pos : starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        syms = {}
        for block in _KD_BLOCK.finditer(chunk):
            body = block.group("body")
            err = re.search(r"; error decoding [^:]+: (.*)", body)
            if err:
                syms[block.group("sym")] = {"__error__": err.group(1)}
                continue
            syms[block.group("sym")] = {k: int(v, 0) for k, v in _DIRECTIVE.findall(body)}
        out[name] = syms
    return out


class OracleUnavailable(Exception):
    """LLVM itself cannot decode this input (e.g. no disassembler for gfx6)."""


# One argument may hold at most MAX_ARG_STRLEN (128 KiB on Linux): longer symbol lists are split.
SYMBOLS_PER_ARGUMENT = 100_000


def objdump_descriptors(files: list[str], symbols: list[str]) -> dict[str, dict]:
    """Descriptors of ``symbols`` (names ending in .kd) in ``files``, which must share a processor."""
    batches: list[list[str]] = [[]]
    for symbol in symbols:
        if batches[-1] and sum(len(s) + 1 for s in batches[-1]) + len(symbol) > SYMBOLS_PER_ARGUMENT:
            batches.append([])
        batches[-1].append(symbol)
    out: dict[str, dict] = {}
    for batch in batches:
        for name, found in _objdump_descriptors(files, batch).items():
            out.setdefault(name, {}).update(found)
    return out


def _objdump_descriptors(files: list[str], symbols: list[str]) -> dict[str, dict]:
    proc = subprocess.run(
        [OBJDUMP, "-D", "--disassemble-symbols=" + ",".join(symbols), *files],
        capture_output=True,
        text=True,
        errors="replace",
    )
    if proc.returncode != 0:
        if "disassembly not yet supported for subtarget" in proc.stderr:
            raise OracleUnavailable(proc.stderr.strip().splitlines()[0])
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return parse_descriptor_dump(proc.stdout)
