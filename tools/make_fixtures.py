#!/usr/bin/env python3
"""Regenerate amdocc's real AMD GPU code-object test fixtures, and LLVM's view of them.

    python tools/make_fixtures.py            # everything
    python tools/make_fixtures.py --newer    # only fixtures/newer (LLVM 24 output, needs triton 3.9)

Builds small code objects and containers with Debian's LLVM 22 tools (clang-22,
llc-22, llvm-mc-22, ld.lld-22, lld-link-22, clang-offload-bundler-22,
clang-offload-packager-22) into tests/data/fixtures/, plus the README sample
amdocc/samples/sample_kernels.hipfb.

Next to every code object (and for every device entry extracted from a
container) it stores what LLVM's own tools report:

    <x>.readelf.txt      llvm-readelf-22 -h --notes   (header, decoded e_flags, metadata YAML)
    <x>.symbols.txt      llvm-readelf-22 --symbols
    <x>.kd.txt           llvm-objdump-22 -D --disassemble-symbols=<every *.kd>
    <x>.relocs.txt       llvm-readelf-22 -r           (relocatable objects only)
    <x>.kernel-info.txt  the compiler's "; Kernel info:" asm comments (Occupancy, ...),
                         only where the same code object was rebuilt with -S and matched

tests/data/fixtures/manifest.json lists every fixture: kind, targets, code-object
version, the exact commands, container entries (bundle ID, target, sha256, oracle
files), CCOB header facts, and what LLVM's tools could not do.

The amdocc package is deliberately NOT imported: LLVM's tools are the oracle.
Every command runs in a scratch directory holding copies of tools/fixture_src/,
with relative file names and a fixed -cuid, so reruns give the same bytes.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import yaml
import zstandard

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tools" / "fixture_src"
OUT = ROOT / "tests" / "data" / "fixtures"
SAMPLE_DIR = ROOT / "amdocc" / "samples"
SAMPLE_NAME = "sample_kernels.hipfb"

CLANG, LLC, MC, LLD, LLD_LINK = "clang-22", "llc-22", "llvm-mc-22", "ld.lld-22", "lld-link-22"
READELF, OBJDUMP, OBJCOPY = "llvm-readelf-22", "llvm-objdump-22", "llvm-objcopy-22"
BUNDLER, PACKAGER = "clang-offload-bundler-22", "clang-offload-packager-22"

HIP_COMMON = ["-x", "hip", "-nogpulib", "-nogpuinc", "-O3", "-g0"]
HIP_DEVICE = HIP_COMMON + ["--offload-device-only"]
HOST_ID = "host-x86_64-unknown-linux-gnu-"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
ABI_TO_COV = {0: 2, 1: 3, 2: 4, 3: 5, 4: 6}
CCOB_METHODS = {0: "zlib", 1: "zstd"}
CDNA_AGPR = ("gfx908", "gfx90a", "gfx942", "gfx950")

WORK: Path = Path()          # scratch build directory (set in main)
MANIFEST: dict = {}
ORACLE_CACHE: dict = {}      # (dest dir, sha256) -> oracle record, so equal entries share texts
KERNEL_INFO: dict = {}       # sha256 of a code object -> "; Kernel info" text from the same build


# --------------------------------------------------------------------------- helpers

def clean_env(extra: dict | None = None) -> dict:
    """Environment without user knobs that change bundler output."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("COMPRESSED_BUNDLE_", "OFFLOAD_BUNDLER_"))}
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def cmd_text(cmd: list[str], env: dict | None = None) -> str:
    prefix = "".join(f"{k}={v} " for k, v in (env or {}).items())
    return prefix + shlex.join(cmd)


def run(cmd: list[str], log: list | None = None, env: dict | None = None,
        cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run one tool in the scratch dir; append the command line to log."""
    if log is not None:
        log.append(cmd_text(cmd, env))
    proc = subprocess.run(cmd, cwd=cwd or WORK, env=clean_env(env),
                          capture_output=True, text=True, errors="replace")
    if check and proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {cmd_text(cmd, env)}\n"
                           f"{proc.stdout}\n{proc.stderr}")
    return proc


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rel(path: Path) -> str:
    return path.relative_to(OUT).as_posix()


def first_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errs = [ln for ln in lines if "error" in ln.lower()]
    return (errs or lines or [""])[0]


def target_of(bundle_id: str) -> str:
    """Target ID part of a bundle entry ID (processor names may contain '-')."""
    i = bundle_id.find("amdgcn-amd-amdhsa")
    if i < 0:
        return ""
    return bundle_id[i + len("amdgcn-amd-amdhsa"):].lstrip("-")


def safe(name: str) -> str:
    return name.replace(":", "_")


# --------------------------------------------------------------------------- LLVM oracles

def kd_symbols(symbols_text: str) -> list[str]:
    """*.kd symbol names in llvm-readelf --symbols output, first occurrence order."""
    names = []
    for line in symbols_text.splitlines():
        if re.match(r"\s*\d+:\s", line):
            name = line.split()[-1]
            if name.endswith(".kd") and name not in names:
                names.append(name)
    return names


def metadata_yaml(readelf_text: str) -> dict:
    """The NT_AMDGPU_METADATA YAML document llvm-readelf printed."""
    lines = readelf_text.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "---")
        end = next(i for i in range(start, len(lines)) if lines[i].strip() == "...")
    except StopIteration:
        return {}
    return yaml.safe_load("\n".join(lines[start + 1:end])) or {}


def header_facts(readelf_text: str) -> dict:
    facts = {}
    for key, field in (("ABI Version", "abi_version"), ("Type", "type"), ("Flags", "e_flags")):
        m = re.search(rf"^\s*{key}:\s+(.*)$", readelf_text, re.M)
        if m:
            facts[field] = m.group(1).strip()
    if "abi_version" in facts:
        facts["abi_version"] = int(facts["abi_version"])
        facts["code_object_version"] = ABI_TO_COV.get(facts["abi_version"])
    return facts


KERNEL_KEYS = (".name", ".symbol", ".sgpr_count", ".vgpr_count", ".agpr_count",
               ".group_segment_fixed_size", ".private_segment_fixed_size",
               ".kernarg_segment_size", ".wavefront_size", ".max_flat_workgroup_size",
               ".workgroup_processor_mode")


def metadata_summary(meta: dict) -> dict:
    kernels = meta.get("amdhsa.kernels") or []
    return {
        "amdhsa.version": meta.get("amdhsa.version"),
        "amdhsa.target": meta.get("amdhsa.target"),
        "kernels": [{k: kern[k] for k in KERNEL_KEYS if k in kern} for kern in kernels],
    }


def oracle(directory: Path, name: str, dest: Path, stem: str) -> dict:
    """Run LLVM's tools on directory/name and store their output as dest/stem.*.txt."""
    dest.mkdir(parents=True, exist_ok=True)
    outputs = {}

    def save(kind: str, cmd: list[str]) -> str:
        text = run(cmd, cwd=directory).stdout
        out = dest / f"{stem}.{kind}.txt"
        out.write_text(text)
        outputs[kind] = rel(out)
        return text

    header = save("readelf", [READELF, "-h", "--notes", name])
    syms = save("symbols", [READELF, "--symbols", name])
    kds = kd_symbols(syms)
    if kds:
        save("kd", [OBJDUMP, "-D", "--disassemble-symbols=" + ",".join(kds), name])
    facts = header_facts(header)
    if facts.get("type", "").startswith("REL"):
        save("relocs", [READELF, "-r", name])
    info = KERNEL_INFO.get(sha256(directory / name))
    if info:
        out = dest / f"{stem}.kernel-info.txt"
        out.write_text(info)
        outputs["kernel_info"] = rel(out)
    meta = metadata_summary(metadata_yaml(header))
    return {
        "kernels": [k[".name"] for k in meta["kernels"] if ".name" in k],
        "kd_symbols": kds,
        "llvm_reported": {**facts, **meta},
        "oracle": outputs,
    }


ORACLE_COMMANDS = {  # run with the code object's own (relative) file name as <file>
    "readelf": f"{READELF} -h --notes <file> > <stem>.readelf.txt",
    "symbols": f"{READELF} --symbols <file> > <stem>.symbols.txt",
    "kd": f"{OBJDUMP} -D --disassemble-symbols=<every .kd symbol, comma-separated> <file>"
          " > <stem>.kd.txt",
    "relocs": f"{READELF} -r <file> > <stem>.relocs.txt   (ET_REL only)",
    "kernel_info": "'; Kernel info:' comment blocks of the same build's -S output "
                   "(only when a rebuild produced a byte-identical code object)",
}


def entry_oracle(path: Path, target: str, dest: Path) -> dict:
    """Oracle for an extracted container entry; identical entries share one set of texts."""
    digest = sha256(path)
    key = (dest, digest)
    if key not in ORACLE_CACHE:
        name = f"{safe(target) or 'image'}-{digest[:12]}.co"
        edir = WORK / "entries"
        edir.mkdir(exist_ok=True)
        shutil.copyfile(path, edir / name)
        ORACLE_CACHE[key] = oracle(edir, name, dest, name)
    return {"sha256": digest, "size": path.stat().st_size, **ORACLE_CACHE[key]}


def kernel_info_text(asm: str) -> str:
    """The '; Kernel info:' comment blocks of compiler asm, one per kernel."""
    out, fn, inside = [], None, False
    for line in asm.splitlines():
        m = re.match(r"\s*\.type\s+([^,\s]+),@function", line)
        if m:
            fn = m.group(1)
        if line.startswith("; Kernel info:"):
            inside = True
            out.append(f"# kernel {fn}")
            continue
        if inside and line.startswith("; "):
            out.append(line)
        elif inside:
            inside = False
            out.append("")
    return "\n".join(out)


def remember_kernel_info(code_object: Path, asm: Path) -> None:
    KERNEL_INFO[sha256(code_object)] = kernel_info_text(asm.read_text())


# --------------------------------------------------------------------------- containers

def parse_bundle(data: bytes) -> list[dict]:
    """(offset, size, id) of each entry of an uncompressed bundle, in header order."""
    assert data.startswith(BUNDLE_MAGIC)
    (count,) = struct.unpack_from("<Q", data, 24)
    pos, entries = 32, []
    for _ in range(count):
        off, size, idlen = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        entries.append({"id": data[pos:pos + idlen].decode(), "offset": off, "size": size})
        pos += idlen
    return entries


def ccob_header(data: bytes) -> dict:
    """Header fields of a compressed bundle (versions 1, 2 and 3)."""
    version, method = struct.unpack_from("<HH", data, 4)
    if version == 1:
        unc, hsh = struct.unpack_from("<IQ", data, 8)
        size, total = 20, None
    elif version == 2:
        total, unc, hsh = struct.unpack_from("<IIQ", data, 8)
        size = 24
    else:
        total, unc, hsh = struct.unpack_from("<QQQ", data, 8)
        size = 32
    return {"version": version, "method_id": method, "method": CCOB_METHODS.get(method),
            "header_size": size, "total_file_size": total, "uncompressed_size": unc,
            "hash": f"0x{hsh:016x}"}


def ccob_decompress(data: bytes) -> bytes:
    h = ccob_header(data)
    end = h["total_file_size"] or len(data)
    payload = data[h["header_size"]:end]
    if h["method_id"] == 0:
        return zlib.decompress(payload)
    return zstandard.ZstdDecompressor().decompress(payload, max_output_size=h["uncompressed_size"])


def md5_low(data: bytes) -> int:
    return struct.unpack("<Q", hashlib.md5(data).digest()[:8])[0]


def make_ccob(bundle: bytes, version: int, method: int) -> bytes:
    """A compressed bundle written by hand from a real bundle (llvm-amdgpu-rules.md §5.3)."""
    if method == 0:
        payload = zlib.compress(bundle, 9)
    else:
        payload = zstandard.ZstdCompressor(level=19, write_content_size=True,
                                           write_checksum=False).compress(bundle)
    h = md5_low(bundle)
    if version == 1:
        header = CCOB_MAGIC + struct.pack("<HHIQ", 1, method, len(bundle), h)
    elif version == 2:
        header = CCOB_MAGIC + struct.pack("<HHIIQ", 2, method, 24 + len(payload), len(bundle), h)
    else:
        header = CCOB_MAGIC + struct.pack("<HHQQQ", 3, method, 32 + len(payload), len(bundle), h)
    return header + payload


def bundler_verbose(path: Path) -> dict:
    """What `clang-offload-bundler --list --verbose` says about a compressed bundle."""
    proc = run([BUNDLER, "--list", "--verbose", "--type=o", f"--input={path.name}"],
               cwd=path.parent, check=False)
    facts = {}
    for line in proc.stderr.splitlines():
        if ":" in line and "speed" not in line:
            key, val = line.split(":", 1)
            facts[key.strip()] = val.strip()
    return facts


def bundle_starts(blob: bytes) -> list[int]:
    """Offsets of bundles/CCOBs at 4096-aligned positions of a .hip_fatbin blob."""
    return [off for off in range(0, len(blob), 4096)
            if blob.startswith(BUNDLE_MAGIC, off) or blob.startswith(CCOB_MAGIC, off)]


def bundle_entries(blob_path: Path, log: list, dest: Path, bundle_index: int = 0) -> dict:
    """List and unbundle one (possibly compressed) bundle with clang-offload-bundler-22."""
    data = blob_path.read_bytes()
    result: dict = {"bundle_index": bundle_index, "size": len(data)}
    if data.startswith(CCOB_MAGIC):
        result["ccob"] = ccob_header(data)
        result["ccob"]["llvm_verbose"] = bundler_verbose(blob_path)
        raw = ccob_decompress(data)
        result["uncompressed_sha256"] = hashlib.sha256(raw).hexdigest()
        assert md5_low(raw) == int(result["ccob"]["hash"], 16), "CCOB hash mismatch"
    else:
        raw = data
    layout = {e["id"]: e for e in parse_bundle(raw)}
    listed = run([BUNDLER, "--list", "--type=o", f"--input={blob_path.name}"],
                 log, cwd=blob_path.parent).stdout.split()
    result["bundler_list"] = listed
    assert sorted(listed) == sorted(layout), (listed, layout)
    entries = []
    for pos, bid in enumerate(layout):
        entry = {"entry_id": bid, "target": target_of(bid), "position": pos,
                 "offset": layout[bid]["offset"], "size": layout[bid]["size"]}
        if bid.startswith("host-"):
            entry["skipped"] = "host entry (HIP leaves it empty)"
            entries.append(entry)
            continue
        out = blob_path.parent / f"{blob_path.name}.{pos}.co"
        run([BUNDLER, "--unbundle", "--type=o", f"--input={blob_path.name}",
             f"--targets={bid}", f"--output={out.name}"], log, cwd=blob_path.parent)
        o, s = entry["offset"], entry["size"]
        assert hashlib.sha256(raw[o:o + s]).hexdigest() == sha256(out), bid
        entry.update(entry_oracle(out, entry["target"], dest))
        entries.append(entry)
    result["entries"] = entries
    return result


def dump_section(binary: Path, section: str, out: Path, log: list) -> bytes:
    target = os.path.relpath(out, binary.parent)
    run([OBJCOPY, f"--dump-section={section}={target}", binary.name, "/dev/null"], log,
        cwd=binary.parent)
    return out.read_bytes()


def bundle_length(blob: bytes) -> int:
    """Bytes a bundle really uses (a CCOB knows its size; v1 and plain bundles use all)."""
    if blob.startswith(CCOB_MAGIC):
        return ccob_header(blob)["total_file_size"] or len(blob)
    return len(blob)


def objdump_offloading(binary: Path) -> dict:
    """Cross-check with `llvm-objdump-22 --offloading` (extracts into a private dir)."""
    xdir = WORK / f"objdump-{binary.name}"
    xdir.mkdir(exist_ok=True)
    shutil.copyfile(binary, xdir / binary.name)
    proc = run([OBJDUMP, "--offloading", binary.name], cwd=xdir, check=False)
    files = sorted(p for p in xdir.iterdir() if p.name != binary.name)
    res = {"command": shlex.join([OBJDUMP, "--offloading", binary.name]),
           "returncode": proc.returncode,
           "files": {p.name: {"size": p.stat().st_size, "sha256": sha256(p)} for p in files}}
    if proc.returncode:
        res["error"] = first_error_line(proc.stderr)
    return res


def offload_images(binary: Path, log: list) -> list[dict]:
    """Images of an OffloadBinary (or of a .llvm.offloading section) as llvm-objdump lists them."""
    text = run([OBJDUMP, "--offloading", binary.name], log, cwd=binary.parent).stdout
    images = []
    for block in text.split("OFFLOADING IMAGE")[1:]:
        fields = dict(re.findall(r"^(\w+)\s+(.+)$", block, re.M))
        images.append({k: fields.get(k) for k in ("kind", "arch", "triple", "producer")})
    return images


def offload_blobs(data: bytes) -> list[dict]:
    """Offsets and sizes of concatenated OffloadBinary blobs (each padded to 8 bytes)."""
    blobs, pos = [], 0
    while pos + 32 <= len(data) and data.startswith(b"\x10\xff\x10\xad", pos):
        version, total = struct.unpack_from("<IQ", data, pos + 4)
        blobs.append({"offset": pos, "total_size": total, "version": version})
        pos += (total + 7) & ~7
    return blobs


def extract_offload_images(binary: Path, log: list, dest: Path) -> list[dict]:
    entries = []
    for i, img in enumerate(offload_images(binary, log)):
        ext = "bc" if img["kind"] == "llvm ir" else "o"
        out = binary.parent / f"{binary.name}.{i}.{ext}"
        run([PACKAGER, binary.name,
             f"--image=file={out.name},triple={img['triple']},arch={img['arch']}"],
            log, cwd=binary.parent)
        entry = {"image_index": i, **img, "target": img["arch"]}
        if img["kind"] == "elf":
            entry.update(entry_oracle(out, img["arch"], dest))
        else:
            entry.update(sha256=sha256(out), size=out.stat().st_size,
                         skipped=f"image kind '{img['kind']}' is LLVM bitcode, not a code object")
        entries.append(entry)
    return entries


# --------------------------------------------------------------------------- fixture records

def add_fixture(record: dict) -> dict:
    if "kernels" not in record:  # containers: every kernel name of every device entry
        entries = [e for b in record.get("bundles", []) for e in b["entries"]]
        entries += record.get("offload_images", [])
        names = [k for e in entries for k in e.get("kernels", [])]
        record["kernels"] = sorted(set(names))
    MANIFEST["fixtures"].append(record)
    return record


def store(built: Path, subdir: str, name: str | None = None) -> Path:
    dest = OUT / subdir / (name or built.name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built, dest)
    return dest


def elf_fixture(built: Path, kind: str, why: str, cmds: list, build: dict) -> dict:
    """Copy a bare code object into fixtures/elf/ and run the oracles on it."""
    dest = store(built, "elf")
    rec = {"file": rel(dest), "kind": kind, "why": why, "targets": [build["offload_arch"]],
           "build": build,
           "sha256": sha256(dest), "size": dest.stat().st_size, "commands": cmds}
    rec.update(oracle(dest.parent, dest.name, dest.parent, dest.name))
    check_build(dest.name, build, rec["llvm_reported"])
    return add_fixture(rec)


def check_build(name: str, build: dict, reported: dict) -> None:
    """The requested CO version, wave size and CU/WGP mode must be what LLVM reports."""
    want = build.get("code_object_version")
    assert want is None or want == reported.get("code_object_version"), (name, want)
    for kern in reported["kernels"]:
        if "wavefront_size" in build:
            assert kern[".wavefront_size"] == build["wavefront_size"], (name, kern[".name"])
        if build.get("cu_mode") is not None and ".workgroup_processor_mode" in kern:
            assert kern[".workgroup_processor_mode"] == int(not build["cu_mode"]), name


def hip_device(src: str, arch: str, flags: list[str], out: str, log: list,
               cuid: str) -> Path:
    """Compile a bare HIP code object plus its -S twin (for the Kernel info comments)."""
    base = HIP_DEVICE + ["--no-gpu-bundle-output", f"-cuid={cuid}", f"--offload-arch={arch}"] + flags
    run([CLANG] + base + [src, "-o", out], log)
    asm = out + ".s"
    run([CLANG] + base + ["-S", src, "-o", asm], log)
    remember_kernel_info(WORK / out, WORK / asm)
    return WORK / out


# --------------------------------------------------------------------------- 1. bare code objects

# (file stem, --offload-arch, extra flags, CO version, reason)
HIP_BARE = [
    ("gfx906_xnack-_cov4", "gfx906:xnack-", [], 4,
     "gfx9 without AGPRs; xnack- target-ID feature; CO v4 (56 bytes of hidden args)"),
    ("gfx906_cov6", "gfx906", [], 6, "gfx906 default (xnack/sramecc any), CO v6"),
    ("gfx908_cov5", "gfx908", [], 5, "separate AGPR file: .vgpr_count = max(arch, agpr)"),
    ("gfx90a_xnack+_cov6", "gfx90a:xnack+", [], 6, "unified VGPR file; xnack+ e_flags"),
    ("gfx942_sramecc+_xnack-_cov5", "gfx942:sramecc+:xnack-", [], 5,
     "two target-ID features (sramecc+ xnack-); architected flat scratch"),
    ("gfx942_cov4", "gfx942", [], 4, "gfx942 with CO v4"),
    ("gfx950_cov6", "gfx950", [], 6, "gfx950: 160 KiB LDS, 1280-byte LDS granule"),
    ("gfx1030_w32_wgp_cov4", "gfx1030", [], 4, "RDNA2 wave32 WGP mode, CO v4"),
    ("gfx1030_w64_cu_cov5", "gfx1030", ["-mwavefrontsize64", "-mcumode"], 5,
     "RDNA2 wave64 + CU mode"),
    ("gfx1100_w32_wgp_cov6", "gfx1100", [], 6, "RDNA3 1.5x VGPR file, wave32 WGP"),
    ("gfx1100_w64_cu_cov4", "gfx1100", ["-mwavefrontsize64", "-mcumode"], 4,
     "RDNA3 wave64 + CU mode, CO v4"),
    ("gfx1101_w32_cu_cov5", "gfx1101", ["-mcumode"], 5, "wave32 in CU mode"),
    ("gfx1151_w64_wgp_cov6", "gfx1151", ["-mwavefrontsize64"], 6, "wave64 in WGP mode"),
    ("gfx1200_w32_wgp_cov5", "gfx1200", [], 5, "RDNA4 wave32, CO v5"),
    ("gfx1200_w64_cu_cov4", "gfx1200", ["-mwavefrontsize64", "-mcumode"], 4, "RDNA4 wave64 CU, CO v4"),
    ("gfx1201_w32_cu_cov4", "gfx1201", ["-mcumode"], 4, "RDNA4 wave32 CU mode, CO v4"),
    ("gfx1201_w64_wgp_cov6", "gfx1201", ["-mwavefrontsize64"], 6, "RDNA4 wave64 WGP, CO v6"),
    ("gfx9-4-generic_cov6", "gfx9-4-generic", [], 6,
     "generic target (needs CO v6): e_flags generic version field"),
    ("gfx11-generic_cov6", "gfx11-generic", [], 6, "generic RDNA3 target (1024-VGPR model)"),
]

# (target, CO version) for the llc-built AGPR kernels
LLC_AGPR = [("gfx908", 4), ("gfx90a", 5), ("gfx942", 6), ("gfx950", 5)]


def build_hip_bare() -> None:
    """kernels.hip for every asked target, wave size, CU/WGP mode and CO version."""
    for stem, arch, flags, cov, why in HIP_BARE:
        log: list[str] = []
        built = hip_device("kernels.hip", arch, flags + [f"-mcode-object-version={cov}"],
                           f"{stem}.hsaco", log, cuid="kernels")
        build = {"source": "tools/fixture_src/kernels.hip", "offload_arch": arch,
                 "code_object_version": cov,
                 "wavefront_size": 64 if "-mwavefrontsize64" in flags or arch.startswith("gfx9") else 32,
                 "cu_mode": "-mcumode" in flags if not arch.startswith("gfx9") else None}
        elf_fixture(built, "elf", why, log, build)


def build_llc_agpr() -> None:
    """AGPR-clobbering LLVM IR through llc-22 + ld.lld-22 on the four MAI targets."""
    for arch, cov in LLC_AGPR:
        log: list[str] = []
        stem = f"agpr_{arch}_cov{cov}"
        base = [LLC, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3",
                f"--amdhsa-code-object-version={cov}"]
        run(base + ["-filetype=obj", "agpr.ll", "-o", f"{stem}.o"], log)
        run([LLD, "-shared", f"{stem}.o", "-o", f"{stem}.hsaco"], log)
        run(base + ["-filetype=asm", "agpr.ll", "-o", f"{stem}.s"], log)
        remember_kernel_info(WORK / f"{stem}.hsaco", WORK / f"{stem}.s")
        elf_fixture(WORK / f"{stem}.hsaco", "elf",
                    "AGPRs: .agpr_count non-zero, .vgpr_count = unified total on gfx90a+",
                    log, {"source": "tools/fixture_src/agpr.ll", "offload_arch": arch,
                          "code_object_version": cov, "wavefront_size": 64})


def build_opencl() -> None:
    """An unlinked ET_REL object (KD entry offset lives in a relocation) and its linked twin."""
    log: list[str] = []
    base = [CLANG, "-x", "cl", "-cl-std=CL2.0", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx942",
            "-nogpulib", "-O3", "-g0"]
    run(base + ["-c", "opencl_kernels.cl", "-o", "opencl_gfx942_cov6.o"], log)
    run(base + ["-S", "opencl_kernels.cl", "-o", "opencl_gfx942_cov6.s"], log)
    remember_kernel_info(WORK / "opencl_gfx942_cov6.o", WORK / "opencl_gfx942_cov6.s")
    build = {"source": "tools/fixture_src/opencl_kernels.cl", "offload_arch": "gfx942",
             "code_object_version": 6, "wavefront_size": 64}
    elf_fixture(WORK / "opencl_gfx942_cov6.o", "elf-rel",
                "ET_REL: kernel_code_entry_byte_offset is 0 in the KD, real value in .rela.rodata",
                list(log), build)
    link_log = list(log)
    run([LLD, "-shared", "opencl_gfx942_cov6.o", "-o", "opencl_gfx942_cov6.hsaco"], link_log)
    KERNEL_INFO[sha256(WORK / "opencl_gfx942_cov6.hsaco")] = KERNEL_INFO[sha256(WORK / "opencl_gfx942_cov6.o")]
    elf_fixture(WORK / "opencl_gfx942_cov6.hsaco", "elf",
                "OpenCL language metadata, dynamic_shared_pointer arg, reqd_work_group_size",
                link_log, build)


def build_hand_asm() -> None:
    """Hand-written llvm-mc assembly where metadata and descriptor disagree."""
    hand = [
        ("hand_aiter_gfx942", "gfx942", 5,
         "AITER-style: metadata .vgpr_count 256 without .agpr_count, kernarg 512 vs KD 0, "
         "accum_offset 160, amdhsa.version [1,0] and no amdhsa.target"),
        ("hand_lds_mismatch_gfx1100", "gfx1100", 6,
         "KD group_segment_fixed_size 32768 but metadata 16384 (plus a consistent kernel)"),
    ]
    for stem, arch, cov, why in hand:
        log: list[str] = []
        run([MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-filetype=obj",
             f"{stem}.s", "-o", f"{stem}.o"], log)
        run([LLD, "-shared", f"{stem}.o", "-o", f"{stem}.hsaco"], log)
        elf_fixture(WORK / f"{stem}.hsaco", "elf", why, log,
                    {"source": f"tools/fixture_src/{stem}.s", "offload_arch": arch,
                     "code_object_version": cov, "hand_written": True})


def _patch_v2(path: Path, symbol: str) -> None:
    """Turn a linked non-HSA object into a CO v2 one: EI_OSABI 64, EI_ABIVERSION 0, v2 e_flags,
    and the kernel symbol typed STT_AMDGPU_HSA_KERNEL (10) in every symbol table."""
    data = bytearray(path.read_bytes())
    data[7], data[8] = 64, 0
    struct.pack_into("<I", data, 0x30, 0)   # v2 e_flags: no xnack, no trap handler, no processor
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, = struct.unpack_from("<H", data, 0x3C)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    for _, stype, _, _, off, size, link, _, _, ent in sections:
        if stype not in (2, 11):          # SYMTAB, DYNSYM
            continue
        strtab = sections[link]
        for at in range(off, off + size, ent):
            name_off, = struct.unpack_from("<I", data, at)
            start = strtab[4] + name_off
            if bytes(data[start:data.index(0, start)]) == symbol.encode():
                data[at + 4] = (data[at + 4] & 0xF0) | 10
    path.write_bytes(bytes(data))


def build_legacy() -> None:
    """Code objects v2 and v3, which LLVM 22 no longer writes (only reads)."""
    log: list[str] = []
    stem = "legacy_v2_gfx906"
    run([MC, "-triple=amdgcn--", "-mcpu=gfx906", "-filetype=obj", f"{stem}.s", "-o", f"{stem}.o"], log)
    run([LLD, "-shared", f"{stem}.o", "-o", f"{stem}.co"], log)
    _patch_v2(WORK / f"{stem}.co", "legacy_scale")
    log.append("# then: EI_OSABI=64, EI_ABIVERSION=0, e_flags=0, symbol legacy_scale typed 10 "
               "(tools/make_fixtures.py _patch_v2)")
    rec = elf_fixture(WORK / f"{stem}.co", "elf",
                      "code-object v2: processor only in the ISA note, YAML metadata, amd_kernel_code_t",
                      log, {"source": f"tools/fixture_src/{stem}.s", "offload_arch": "gfx906",
                            "code_object_version": 2})
    # The v2 YAML note is not what oracle() summarises (it reads v3+ notes): name the kernel here.
    rec["kernels"] = ["legacy_scale"]
    # llvm-objdump has no decoder for amd_kernel_code_t; the values the assembler was given are
    # the record of what the descriptor holds.
    rec["amd_kernel_code_t"] = {"workitem_vgpr_count": 10, "wavefront_sgpr_count": 12,
                                "granulated_workitem_vgpr_count": 2,
                                "granulated_wavefront_sgpr_count": 1,
                                "workgroup_group_segment_byte_size": 1024,
                                "workitem_private_segment_byte_size": 16,
                                "kernarg_segment_byte_size": 24, "wavefront_size": 64}

    # v3: a gfx906 v4 object with EI_ABIVERSION 1, v3 feature bits (xnack on, sramecc off) and
    # amdhsa.version [1,0]; the rest is LLVM's own output.
    log = []
    src = hip_device("kernels.hip", "gfx906", ["-mcode-object-version=4"], "legacy_v3_gfx906.hsaco", log,
                     cuid="kernels")
    data = bytearray(src.read_bytes())
    data[8] = 1
    struct.pack_into("<I", data, 0x30, 0x2F | 0x100)
    at = data.index(b"amdhsa.version") + len(b"amdhsa.version")
    assert data[at:at + 3] == b"\x92\x01\x01", "v4 metadata version"
    data[at:at + 3] = b"\x92\x01\x00"
    src.write_bytes(bytes(data))
    log.append("# then: EI_ABIVERSION=1, e_flags=0x12f (v3: gfx906, xnack on), amdhsa.version [1,0]")
    elf_fixture(src, "elf", "code-object v3 (rewritten from v4): single-bit xnack/sramecc e_flags",
                log, {"source": "tools/fixture_src/kernels.hip", "offload_arch": "gfx906",
                      "code_object_version": 3})


def build_diff() -> None:
    """Three builds of one library for `amdocc diff`: a base, one where k_main needs more VGPRs
    (64 → 160) and one where it needs more LDS (16 → 32 KiB); k_other never changes."""
    for stem in ("base", "more_vgpr", "more_lds"):
        log: list[str] = []
        base = [LLC, "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-O3"]
        run(base + ["-filetype=obj", f"diff_{stem}.ll", "-o", f"diff_{stem}.o"], log)
        run([LLD, "-shared", f"diff_{stem}.o", "-o", f"diff_{stem}.hsaco"], log)
        run(base + ["-filetype=asm", f"diff_{stem}.ll", "-o", f"diff_{stem}.s"], log)
        remember_kernel_info(WORK / f"diff_{stem}.hsaco", WORK / f"diff_{stem}.s")
        dest = store(WORK / f"diff_{stem}.hsaco", "diff")
        rec = {"file": rel(dest), "kind": "elf", "why": f"amdocc diff fixture: {stem}", "targets": ["gfx942"],
               "build": {"source": f"tools/fixture_src/diff_{stem}.ll", "offload_arch": "gfx942",
                         "code_object_version": 5},
               "sha256": sha256(dest), "size": dest.stat().st_size, "commands": log}
        rec.update(oracle(dest.parent, dest.name, dest.parent, dest.name))
        add_fixture(rec)


# --------------------------------------------------------------------------- 2. containers

CONTAINER_ENTRIES = OUT / "containers" / "entries"
BUNDLE5_ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]


def device_objects(src: str, archs: list[str], cuid: str, log: list, tag: str) -> list[Path]:
    return [hip_device(src, a, [], f"{tag}_{safe(a)}.co", log, cuid) for a in archs]


def container_record(path: Path, kind: str, why: str, cmds: list, **extra) -> dict:
    rec = {"file": rel(path), "kind": kind, "why": why,
           "sha256": sha256(path), "size": path.stat().st_size, "commands": cmds}
    rec.update(extra)
    return rec


def build_bundle_5arch() -> Path:
    """Standalone uncompressed bundle written by clang-offload-bundler (host + 5 targets)."""
    log: list[str] = []
    cos = device_objects("kernels.hip", BUNDLE5_ARCHS, "kernels", log, "b5")
    ids = [HOST_ID] + [f"hipv4-amdgcn-amd-amdhsa--{a}" for a in BUNDLE5_ARCHS]
    run([BUNDLER, "--type=o", "--bundle-align=4096", "--targets=" + ",".join(ids),
         "--input=/dev/null"] + [f"--input={c.name}" for c in cos]
        + ["--output=bundle_5arch.hipfb"], log)
    dest = store(WORK / "bundle_5arch.hipfb", "containers")
    b = bundle_entries(dest_copy(dest), log, CONTAINER_ENTRIES)
    add_fixture(container_record(dest, "bundle", "plain offload bundle, 4096-aligned entries",
                                 log, targets=BUNDLE5_ARCHS, bundles=[b]))
    return dest


def dest_copy(path: Path) -> Path:
    """A scratch copy of a stored fixture, so tools never write next to tests/data."""
    d = WORK / "inspect"
    d.mkdir(exist_ok=True)
    shutil.copyfile(path, d / path.name)
    return d / path.name


def build_ccobs() -> None:
    """Compressed bundles: bundler-written zstd v3/v2, and hand-written zlib v3/v2/v1, zstd v1."""
    log: list[str] = []
    archs = ["gfx942", "gfx1100"]
    cos = device_objects("tu_b.hip", archs, "tu_b", log, "cc")
    ids = [HOST_ID] + [f"hipv4-amdgcn-amd-amdhsa--{a}" for a in archs]
    common = [BUNDLER, "--type=o", "--bundle-align=4096", "--targets=" + ",".join(ids),
              "--input=/dev/null"] + [f"--input={c.name}" for c in cos]
    run(common + ["--output=base_2arch.hipfb"], log)
    base = (WORK / "base_2arch.hipfb").read_bytes()
    base_info = {"uncompressed_bundle_sha256": hashlib.sha256(base).hexdigest(),
                 "uncompressed_bundle_size": len(base),
                 "uncompressed_bundle_command": log[-1]}
    by_tool = [("ccob_v3_zstd.hipfb", None, "LLVM 22 default compressed format (v3, zstd)"),
               ("ccob_v2_zstd.hipfb", {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"},
                "ROCm-era v2 header (u32 sizes)")]
    for name, env, why in by_tool:
        clog = list(log)
        run(common + ["--compress", f"--output={name}"], clog, env=env)
        ccob_fixture(WORK / name, why, clog, "clang-offload-bundler-22", archs, base_info)
    by_python = [("ccob_v3_zlib.hipfb", 3, 0), ("ccob_v2_zlib.hipfb", 2, 0),
                 ("ccob_v1_zlib.hipfb", 1, 0), ("ccob_v1_zstd.hipfb", 1, 1)]
    for name, version, method in by_python:
        (WORK / name).write_bytes(make_ccob(base, version, method))
        clog = log + [f"python: make_ccob(base_2arch.hipfb, version={version}, method={method})"
                      f" -> {name}"]
        why = (f"CCOB v{version} with {CCOB_METHODS[method]}: clang cannot be told to use zlib"
               if method == 0 else "CCOB v1 header (20 bytes, no total size)")
        ccob_fixture(WORK / name, why, clog, "tools/make_fixtures.py (Python)", archs, base_info)


def ccob_fixture(built: Path, why: str, cmds: list, writer: str, archs: list[str],
                 base_info: dict) -> None:
    dest = store(built, "containers")
    probe = run([BUNDLER, "--list", "--type=o", f"--input={dest.name}"],
                cwd=dest.parent, check=False)
    extra = {"targets": archs, "written_by": writer, **base_info,
             "llvm_accepts": probe.returncode == 0}
    if probe.returncode:
        extra["llvm_error"] = first_error_line(probe.stderr)
        rec = container_record(dest, "ccob", why, cmds, ccob=ccob_header(dest.read_bytes()), **extra)
    else:
        b = bundle_entries(dest_copy(dest), cmds, CONTAINER_ENTRIES)
        assert b["uncompressed_sha256"] == base_info["uncompressed_bundle_sha256"]
        rec = container_record(dest, "ccob", why, cmds, ccob=b.pop("ccob"), bundles=[b], **extra)
    add_fixture(rec)


HOST_ARCHS = ["gfx90a:xnack+", "gfx90a:xnack-", "gfx942", "gfx1100"]


def host_compile(src: str, archs: list[str], out: str, log: list, cuid: str,
                 compress: bool = False, env: dict | None = None,
                 extra: list[str] | None = None, pic: bool = True) -> Path:
    cmd = [CLANG] + HIP_COMMON + [f"-cuid={cuid}"] + [f"--offload-arch={a}" for a in archs]
    cmd += (["--offload-compress"] if compress else []) + (extra or [])
    run(cmd + (["-fPIC"] if pic else []) + ["-c", src, "-o", out], log, env=env)
    return WORK / out


def link_so(objs: list[Path], out: str, log: list) -> Path:
    run([CLANG, "-shared", "-nostdlib", "-fuse-ld=lld"] + [o.name for o in objs] + ["-o", out], log)
    return WORK / out


def companions(src: str, archs: list[str], cuid: str) -> list[str]:
    """Device-only rebuilds of the same source, so entries get Kernel info when bytes match."""
    log: list[str] = []
    for a in archs:
        hip_device(src, a, [], f"cmp_{cuid}_{safe(a)}.co", log, cuid)
    return log


def build_host_so() -> None:
    """Host .so files whose .hip_fatbin holds one plain / CCOB v3 / CCOB v2 bundle."""
    variants = [("libhip_plain.so", False, None, "plain bundle in .hip_fatbin"),
                ("libhip_ccob_v3.so", True, None, "clang --offload-compress: CCOB v3 zstd"),
                ("libhip_ccob_v2.so", True, {"COMPRESSED_BUNDLE_FORMAT_VERSION": "2"},
                 "COMPRESSED_BUNDLE_FORMAT_VERSION=2: CCOB v2 zstd")]
    kinfo_log = companions("kernels.hip", HOST_ARCHS, "kernels")
    for name, compress, env, why in variants:
        log: list[str] = []
        obj = host_compile("kernels.hip", HOST_ARCHS, name.replace(".so", ".o"), log,
                           "kernels", compress, env)
        so = link_so([obj], name, log)
        dest = store(so, "containers")
        host_elf_fixture(dest, why, log, HOST_ARCHS, ".hip_fatbin",
                         kernel_info_commands=kinfo_log)


def host_elf_fixture(dest: Path, why: str, log: list, archs: list[str], section: str,
                     kind: str = "host-elf", per_tu: list[Path] | None = None,
                     **extra) -> dict:
    """Extract every bundle of a host binary's fat-binary section and run the oracles."""
    copy = dest_copy(dest)
    blob_path = WORK / "inspect" / f"{dest.name}.section.bin"
    blob = dump_section(copy, section, blob_path, log)
    starts = bundle_starts(blob)
    rec = container_record(dest, kind, why, log, targets=archs, section=section,
                           section_size=len(blob), bundle_offsets_in_section=starts, **extra)
    if per_tu is None:
        assert len(starts) == 1, (dest.name, starts)
        rec["bundles"] = [bundle_entries(blob_path, log, CONTAINER_ENTRIES)]
    else:
        rec["bundles"] = per_tu_bundles(blob, blob_path, starts, per_tu, log, rec)
    rec["objdump_offloading"] = check_objdump(copy, rec["bundles"])
    return add_fixture(rec)


def check_objdump(binary: Path, bundles: list[dict]) -> dict:
    """Does llvm-objdump --offloading extract the same device entries as the bundler?"""
    res = objdump_offloading(binary)
    device = {f: v for f, v in res["files"].items() if not re.search(r"\.\d+\.host-", f)}
    expected = [e for b in bundles for e in b["entries"] if "sha256" in e]
    agree = sorted(e["sha256"] for e in expected) == sorted(v["sha256"] for v in device.values())
    res["agrees_with_expected_entries"] = agree
    if not agree:
        for v in res["files"].values():   # wrong bytes are not reproducible: keep sizes only
            v.pop("sha256")
        if sorted(e["size"] for e in expected) == sorted(v["size"] for v in device.values()):
            res["note"] = "files have the expected names and sizes but wrong content"
        elif device:
            res["note"] = "files have wrong sizes and content"
    return res


def per_tu_bundles(blob: bytes, blob_path: Path, starts: list[int], objs: list[Path],
                   log: list, rec: dict) -> list[dict]:
    """Several bundles in one section: LLVM 22 only reads the first (or fails on CCOBs).

    Record what LLVM does on the whole section, and take the expected entries from
    each translation unit's own .hip_fatbin (verified to sit at the scanned offsets)."""
    whole = run([BUNDLER, "--list", "--type=o", f"--input={blob_path.name}"],
                cwd=blob_path.parent, check=False)
    rec["llvm_on_whole_section"] = {
        "command": shlex.join([BUNDLER, "--list", "--type=o", "--input=<section>.bin"]),
        "returncode": whole.returncode, "stdout": whole.stdout.split(),
        "error": first_error_line(whole.stderr) if whole.returncode else None}
    rec["entries_source"] = ("expected entries come from each translation unit's own object "
                             "(.hip_fatbin of " + ", ".join(o.name for o in objs) + ")")
    bundles = []
    for i, obj in enumerate(objs):
        tu_blob_path = WORK / "inspect" / f"{obj.name}.section.bin"
        tu_blob = dump_section(obj, ".hip_fatbin", tu_blob_path, log)
        n = bundle_length(tu_blob)
        assert blob[starts[i]:starts[i] + n] == tu_blob[:n], (obj, starts[i])
        b = bundle_entries(tu_blob_path, log, CONTAINER_ENTRIES, bundle_index=i)
        b["offset_in_section"] = starts[i]
        b["from_object"] = obj.name
        bundles.append(b)
    return bundles


def build_two_tu() -> None:
    """Two translation units in one .so: two bundles back to back in .hip_fatbin."""
    archs = ["gfx942", "gfx1201"]
    kinfo_log = companions("tu_a.hip", archs, "tu_a") + companions("tu_b.hip", archs, "tu_b")
    for name, compress in (("libhip_two_tu_plain.so", False), ("libhip_two_tu_ccob.so", True)):
        log: list[str] = []
        tag = "z" if compress else "p"
        objs = [host_compile(f"{tu}.hip", archs, f"{tu}_{tag}.o", log, tu, compress)
                for tu in ("tu_a", "tu_b")]
        so = link_so(objs, name, log)
        dest = store(so, "containers")
        why = ("two TUs -> two %s bundles in .hip_fatbin, each 4096-aligned"
               % ("compressed (CCOB v3)" if compress else "plain"))
        host_elf_fixture(dest, why, log, archs, ".hip_fatbin", per_tu=objs,
                         kernel_info_commands=kinfo_log)


def build_new_driver() -> None:
    """clang --offload-new-driver outputs, and OffloadBinary blobs."""
    archs = ["gfx942", "gfx1100"]
    # (a) RDC object: .llvm.offloading holds OffloadBinary images of LLVM bitcode.
    log: list[str] = []
    host_compile("tu_a.hip", archs, "newdriver_rdc.o", log, "tu_a",
                 extra=["--offload-new-driver", "-fgpu-rdc"])
    dest = store(WORK / "newdriver_rdc.o", "containers")
    copy = dest_copy(dest)
    add_fixture(container_record(
        dest, "host-elf-rel", "new offload driver -fgpu-rdc: .llvm.offloading (bitcode images)",
        log, targets=archs, section=".llvm.offloading",
        offload_blobs=offload_blobs(dump_section(copy, ".llvm.offloading",
                                                 copy.with_suffix(".offloading.bin"), log)),
        offload_images=extract_offload_images(copy, log, CONTAINER_ENTRIES)))
    # (b) non-RDC object: the new driver already emits .hip_fatbin ("hip-" entry IDs).
    log = []
    host_compile("tu_a.hip", archs, "newdriver_nonrdc.o", log, "tu_a",
                 extra=["--offload-new-driver"])
    dest = store(WORK / "newdriver_nonrdc.o", "containers")
    host_elf_fixture(dest, "new offload driver, non-RDC: .hip_fatbin in a relocatable host object",
                     log, archs, ".hip_fatbin", kind="host-elf-rel",
                     kernel_info_note="none: the new driver's device code differs from an "
                                      "old-driver device-only rebuild, so no asm matched")
    # (c) OffloadBinary wrapping real ELF code objects, standalone and embedded in a host object.
    log = []
    cos = device_objects("tu_b.hip", ["gfx942", "gfx1201"], "tu_b", log, "ob")
    images = []
    for c in cos:  # the packager infers image kind "elf" from the .o extension
        img = c.with_suffix(".o")
        shutil.copyfile(c, img)
        log.append(f"cp {c.name} {img.name}")
        arch = c.stem.split("_", 1)[1]
        images.append(f"--image=file={img.name},triple=amdgcn-amd-amdhsa,arch={arch},kind=hip")
    run([PACKAGER, "-o", "offload_binary_2arch.bin"] + images, log)
    dest = store(WORK / "offload_binary_2arch.bin", "containers")
    add_fixture(container_record(
        dest, "offload-binary", "two concatenated OffloadBinary blobs holding ELF code objects",
        log, targets=["gfx942", "gfx1201"], offload_blobs=offload_blobs(dest.read_bytes()),
        offload_images=extract_offload_images(dest_copy(dest), log, CONTAINER_ENTRIES)))
    emb_log = list(log)
    run([CLANG, "-O2", "-g0", "-c", "host_marker.c", "-Xclang",
         "-fembed-offload-object=offload_binary_2arch.bin", "-o", "host_offload_binary.o"], emb_log)
    dest = store(WORK / "host_offload_binary.o", "containers")
    copy = dest_copy(dest)
    add_fixture(container_record(
        dest, "host-elf-rel", "host object with .llvm.offloading holding OffloadBinary ELF images",
        emb_log, targets=["gfx942", "gfx1201"], section=".llvm.offloading",
        offload_blobs=offload_blobs(dump_section(copy, ".llvm.offloading",
                                                 copy.with_suffix(".offloading.bin"), emb_log)),
        offload_images=extract_offload_images(copy, emb_log, CONTAINER_ENTRIES)))


def build_windows() -> None:
    """Windows: COFF object (.hip_fatbin) and a PE DLL (section name truncated to .hip_fat)."""
    archs = ["gfx942", "gfx1201"]
    log: list[str] = []
    # -mno-incremental-linker-compatible: TimeDateStamp 0 instead of the build time
    win = ["--target=x86_64-pc-windows-msvc", "-mno-incremental-linker-compatible"]
    host_compile("tu_a.hip", archs, "hip_win.obj", log, "tu_a", extra=win, pic=False)
    kinfo = companions("tu_a.hip", archs, "tu_a")
    obj = store(WORK / "hip_win.obj", "containers")
    host_elf_fixture(obj, "COFF object from clang --target=x86_64-pc-windows-msvc -x hip",
                     list(log), archs, ".hip_fatbin", kind="coff", kernel_info_commands=kinfo)
    run([CLANG] + win + ["-O2", "-g0", "-c", "win_stubs.c", "-o", "win_stubs.obj"], log)
    proc = run([LLD_LINK, "/dll", "/noentry", "/nodefaultlib", "/Brepro", "/out:hip_win.dll",
                "hip_win.obj", "win_stubs.obj"], log, check=False)
    if proc.returncode:
        MANIFEST["could_not_produce"].append(
            {"what": "PE DLL", "command": log[-1], "error": first_error_line(proc.stderr)})
        return
    dll = store(WORK / "hip_win.dll", "containers")
    host_elf_fixture(dll, "PE DLL with a .hip_fat section (lld-link; runtime symbols stubbed)",
                     log, archs, ".hip_fat", kind="pe", kernel_info_commands=kinfo)


# --------------------------------------------------------------------------- 3. the README sample

SAMPLE_ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]


def build_sample() -> None:
    """amdocc/samples/sample_kernels.hipfb: clang --offload-device-only bundle of 5 targets."""
    log: list[str] = []
    run([CLANG] + HIP_DEVICE + ["-cuid=sample"] + [f"--offload-arch={a}" for a in SAMPLE_ARCHS]
        + ["sample.hip", "-o", SAMPLE_NAME], log)
    kinfo = companions("sample.hip", SAMPLE_ARCHS, "sample")
    SAMPLE_DIR.mkdir(parents=True, exist_ok=True)
    dest = SAMPLE_DIR / SAMPLE_NAME
    shutil.copyfile(WORK / SAMPLE_NAME, dest)
    b = bundle_entries(dest_copy(dest), log, OUT / "sample")
    assert dest.stat().st_size < 100_000, dest.stat().st_size
    MANIFEST["sample"] = {
        "file": f"amdocc/samples/{SAMPLE_NAME}", "path_base": "repository root",
        "kind": "bundle", "why": "README quickstart sample", "targets": SAMPLE_ARCHS,
        "sha256": sha256(dest), "size": dest.stat().st_size, "commands": log,
        "kernel_info_commands": kinfo, "bundles": [b]}


# --------------------------------------------------------------------------- 4. probes

def probe_limits() -> None:
    """Record things LLVM 22 refuses or gets wrong, with the exact messages."""
    probes = MANIFEST["llvm_limitations"]
    proc = run([CLANG] + HIP_DEVICE + ["--no-gpu-bundle-output", "--offload-arch=gfx9-4-generic",
                                       "-mcode-object-version=5", "kernels.hip", "-o", "x.co"],
               check=False)
    probes.append({"what": "generic target with CO v5 (expected refusal)",
                   "command": cmd_text(proc.args), "returncode": proc.returncode,
                   "error": first_error_line(proc.stderr)})
    proc = run([BUNDLER, "--help"])
    probes.append({"what": "choosing zlib for CCOB",
                   "result": "clang-offload-bundler-22 / clang-22 have no option to pick the "
                             "compression method (zstd is used when built in): zlib CCOBs are "
                             "written by this script in Python and checked with --list",
                   "bundler_options_mention_zlib": "zlib" in proc.stdout})
    for fx in MANIFEST["fixtures"]:
        od = fx.get("objdump_offloading")
        if od and (od["returncode"] or not od["agrees_with_expected_entries"]):
            probes.append({"what": f"llvm-objdump-22 --offloading on {fx['file']}",
                           "returncode": od["returncode"], "error": od.get("error"),
                           "note": od.get("note"),
                           "agrees_with_expected_entries": od["agrees_with_expected_entries"]})
        whole = fx.get("llvm_on_whole_section")
        if whole:
            listed = whole["stdout"]
            expected = sum(len(b["entries"]) for b in fx["bundles"])
            probes.append({"what": f"clang-offload-bundler-22 --list on the whole "
                                   f"{fx['section']} of {fx['file']} ({len(fx['bundles'])} bundles)",
                           "returncode": whole["returncode"], "error": whole["error"],
                           "ids_listed": len(listed), "ids_expected": expected})


# --------------------------------------------------------------------------- main

def toolchain() -> dict:
    versions = {}
    for tool in (CLANG, LLD, BUNDLER):
        out = run([tool, "--version"]).stdout.strip().splitlines()
        versions[tool] = next((ln.strip() for ln in out if "version" in ln.lower()), out[0])
    return versions



# --------------------------------------------------------------------------- newer LLVM (fixtures/newer)
#
# Code objects from LLVM main as Triton 3.9 bundles it (24.0.0git 6bc4aaf6641c): amdgpu<subarch>
# triples, processors LLVM 22 does not know, and LLVM 24's rules. Built through tools/triton_llc.py
# (compile, assemble) and Triton's own LLD, from tools/kernelgen.py IR. LLVM 22's tools still read
# their notes and headers; the compiler's own account of each kernel (its "; Kernel info:" comments
# and .amdhsa_* directives) is stored beside them. Hand-assembled pieces (a bundle spelled with
# amdgpu ids, dynamic-VGPR descriptors) are written to the documented layouts and say which.

NEWER = "newer"
NEWER_MANIFEST: dict = {}


def _kernelgen():
    sys.path.insert(0, str(ROOT / "tools"))
    import kernelgen

    return kernelgen


# (fixture stem, processor, kernels as KernelSpec keyword sets): each kernel puts one rule under test.
NEWER_OBJECTS = (
    ("amdgpu_gfx942", "gfx942", [
        dict(name="sgpr85", sgprs=85, max_wg=256),          # PR #201342: 85 SGPRs cost 8 -> 7 waves
        dict(name="lds20000", lds=20000, max_wg=256),        # PR #205637: LDS rounded to 512 B
        dict(name="agpr", vgprs=41, agprs=11, max_wg=256),
        dict(name="fixed320", min_wg=320, max_wg=320),       # 5 waves: the SGPR padding of 9 waves
    ]),
    ("amdgpu_gfx906", "gfx906", [
        dict(name="fixed384", min_wg=384, max_wg=384),       # 9 waves, padded SGPRs: 8 under PR #201342
    ]),
    ("amdgpu_gfx1250", "gfx1250", [
        dict(name="v200", vgprs=200, max_wg=256),
        dict(name="lds100000", lds=100000, max_wg=128),
    ]),
    ("amdgpu_gfx1250-strict", "gfx1250-strict", [dict(name="v100", vgprs=100, max_wg=256)]),
    ("amdgpu_gfx1310", "gfx1310", [
        dict(name="v100_wgp", vgprs=100, max_wg=256),        # LLVM 23's 1536/24 file vs PR #222615's 1024/16
        dict(name="v100_w64_cu", vgprs=100, wave=64, cumode=True, max_wg=256),
        dict(name="lds150000_wgp", lds=150000, max_wg=64),   # above a CU's 96 KiB: WGP mode only
    ]),
    ("amdgpu_gfx1170", "gfx1170", [dict(name="v120_w64", vgprs=120, wave=64, max_wg=512)]),
    ("amdgpu_gfx12-5-generic", "gfx12-5-generic", [dict(name="v64", vgprs=64, max_wg=1024)]),
)


def _amdhsa_blocks(asm: str) -> str:
    """The .amdhsa_kernel ... .end_amdhsa_kernel blocks of compiler asm: its descriptor directives."""
    out, inside = [], False
    for line in asm.splitlines():
        text = line.strip()
        if text.startswith(".amdhsa_kernel "):
            inside = True
        if inside:
            out.append(text)
        if text.startswith(".end_amdhsa_kernel"):
            inside = False
            out.append("")
    return "\n".join(out)


def _newer_oracles(path: Path, stem: str, asm: str | None) -> dict:
    dest = OUT / NEWER
    outputs = {}

    def save(kind: str, text: str) -> str:
        out = dest / f"{stem}.{kind}.txt"
        out.write_text(text)
        outputs[kind] = rel(out)
        return text

    header = save("readelf", run([READELF, "-h", "--notes", path.name], cwd=path.parent).stdout)
    save("comment", run([READELF, "-p", ".comment", path.name], cwd=path.parent).stdout)
    if asm is not None:
        save("kernel-info", kernel_info_text(asm))
        save("amdhsa", _amdhsa_blocks(asm))
    meta = metadata_summary(metadata_yaml(header))
    return {"llvm_reported": {**header_facts(header), **meta}, "oracle": outputs}


def build_newer_objects(kg) -> list[dict]:
    records = []
    for stem, target, kernels in NEWER_OBJECTS:
        specs = [kg.KernelSpec(target=target, cov=6, **k) for k in kernels]
        res = kg.compile_batch(specs, WORK / NEWER, compiler=kg.TRITON_LLVM, stem=stem)
        if res.errors or res.hsaco is None:
            raise RuntimeError(f"{stem}: {res.errors}")
        dest = store(res.hsaco, NEWER, f"{stem}.hsaco")
        asm = res.asm_path.read_text()
        rec = {"file": rel(dest), "kind": "elf", "target": target,
               "triple": kg.subarch_triple(target), "kernels": [s.name for s in specs],
               # the IR's "amdgpu-flat-work-group-size" (the note keeps only the maximum)
               "flat_workgroup_size": {s.name: [s.min_wg, s.max_wg] for s in specs},
               "why": "LLVM 24 output: amdgpu subarch triple in amdhsa.target, LLVM 24 occupancy rules"
                      + ("; a processor LLVM 22 does not know" if target not in kg._probe_data() else ""),
               "sha256": sha256(dest), "size": dest.stat().st_size,
               "commands": [f"tools/triton_llc.py -mtriple={kg.subarch_triple(target)} -mcpu={target} "
                            f"-filetype=asm|obj < {stem}.ll; tools/triton_llc.py --link {stem}.o -o {stem}.hsaco"]}
        (OUT / NEWER / f"{stem}.ll").write_text(kg.render_module(specs))
        rec.update(_newer_oracles(dest, stem, asm))
        records.append(rec)
    return records


def _write_bundle(entries: list[tuple[str, bytes]], align: int = 4096) -> bytes:
    """An uncompressed offload bundle (ClangOffloadBundler.rst; llvm-amdgpu-rules.md §5.1)."""
    header = BUNDLE_MAGIC + struct.pack("<Q", len(entries))
    size = len(header) + sum(24 + len(eid) for eid, _ in entries)
    offsets, pos = [], size
    for _, data in entries:
        pos = -(-pos // align) * align if data else pos
        offsets.append(pos)
        pos += len(data)
    for (eid, data), off in zip(entries, offsets):
        header += struct.pack("<QQQ", off, len(data), len(eid)) + eid.encode()
    blob = bytearray(header)
    for (_, data), off in zip(entries, offsets):
        blob += b"\0" * (off - len(blob)) + data
    return bytes(blob)


def build_newer_bundle(objects: list[dict]) -> dict:
    """The same code objects under amdgpu-spelled entry ids (clang-offload-bundler-22 rejects those
    triples), and a twin under amdgcn ids that clang-offload-bundler-22 itself writes and unbundles."""
    by_target = {r["target"]: OUT / r["file"] for r in objects}
    ids = [("hipv4-amdgpu9.42-amd-amdhsa--gfx942", "gfx942"),
           ("hipv4-amdgpu12.50-amd-amdhsa-unknown-gfx1250", "gfx1250"),
           ("hipv4-amdgpu13.10-amd-amdhsa--gfx1310", "gfx1310")]
    blob = _write_bundle([(HOST_ID, b"")] + [(eid, by_target[t].read_bytes()) for eid, t in ids])
    dest = OUT / NEWER / "bundle_amdgpu_ids.hipfb"
    dest.write_bytes(blob)
    twin_ids = [HOST_ID, "hipv4-amdgcn-amd-amdhsa--gfx942", "hipv4-amdgcn-amd-amdhsa--gfx1250"]
    scratch = WORK / NEWER
    for t in ("gfx942", "gfx1250"):
        shutil.copyfile(by_target[t], scratch / by_target[t].name)
    log: list = []
    run([BUNDLER, "--type=o", "--bundle-align=4096", "--targets=" + ",".join(twin_ids), "--input=/dev/null",
         f"--input={by_target['gfx942'].name}", f"--input={by_target['gfx1250'].name}",
         "--output=bundle_amdgcn_twin.hipfb"], log, cwd=scratch)
    twin = store(scratch / "bundle_amdgcn_twin.hipfb", NEWER)
    unbundled = {}
    for eid in twin_ids[1:]:
        out = f"twin-{safe(eid)}.co"
        run([BUNDLER, "--unbundle", "--type=o", "--input=bundle_amdgcn_twin.hipfb", f"--targets={eid}",
             f"--output={out}"], log, cwd=scratch)
        unbundled[eid] = sha256(scratch / out)
    return {"file": rel(dest), "kind": "bundle", "hand_assembled": True,
            "why": "bundle entry ids in LLVM main's amdgpu<subarch> spelling (llvm PR #206482)",
            "layout": "ClangOffloadBundler.rst: magic, u64 count, (u64 offset, u64 size, u64 id length, id) "
                      "per entry, payloads 4096-aligned; written by tools/make_fixtures.py _write_bundle",
            "entries": [{"id": eid, "target": t, "sha256": sha256(by_target[t])} for eid, t in ids],
            "twin": {"file": rel(twin), "commands": log, "bundler_list":
                     run([BUNDLER, "--list", "--type=o", f"--input={twin.name}"], cwd=twin.parent).stdout.split(),
                     "unbundled_sha256": unbundled}}


# Descriptor bits that enable dynamic VGPRs (AMDHSAKernelDescriptor.h, LLVM 22):
# COMPUTE_PGM_RSRC2_GFX120(ENABLE_DYNAMIC_VGPR, 6, 1) and COMPUTE_PGM_RSRC3_GFX125(ENABLE_DYNAMIC_VGPR, 17, 1).
DVGPR_BITS = {"gfx1200": ("compute_pgm_rsrc2", 52, 6), "gfx1250": ("compute_pgm_rsrc3", 44, 17)}


def _kd_file_offset(path: Path, symbol: str) -> int:
    syms = run([READELF, "-s", path.name], cwd=path.parent).stdout
    addr = int(re.search(rf"([0-9a-f]+)\s+64\s+OBJECT\s.*\s{re.escape(symbol)}$", syms, re.M).group(1), 16)
    secs = run([READELF, "-S", "-W", path.name], cwd=path.parent).stdout
    for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)", secs):
        start, off, size = int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
        if m.group(1) in (".rodata",) and start <= addr < start + size:
            return off + addr - start
    raise RuntimeError(f"{path}: no section holds {symbol}")


def build_newer_dynamic_vgpr(kg) -> list[dict]:
    """llc-22 kernels with the dynamic-VGPR bit set by hand (no compiler sets it for HSA)."""
    records = []
    for target, (word, at, bit) in DVGPR_BITS.items():
        spec = kg.KernelSpec(name="dvgpr", target=target, vgprs=40, max_wg=256, cov=6)
        res = kg.compile_batch([spec], WORK / NEWER, stem=f"dvgpr_{target}")
        data = bytearray(res.hsaco.read_bytes())
        off = _kd_file_offset(res.hsaco, "dvgpr.kd") + at
        before = struct.unpack_from("<I", data, off)[0]
        struct.pack_into("<I", data, off, before | (1 << bit))
        dest = OUT / NEWER / f"dvgpr_{target}.hsaco"
        dest.write_bytes(bytes(data))
        rec = {"file": rel(dest), "kind": "elf", "target": target, "hand_assembled": True,
               "why": "a dynamic-VGPR kernel: the static models must refuse it",
               "patch": {"symbol": "dvgpr.kd", "word": word, "bit": bit, "before": f"0x{before:08x}",
                         "after": f"0x{before | (1 << bit):08x}",
                         "source": f"AMDHSAKernelDescriptor.h (LLVM 22): ENABLE_DYNAMIC_VGPR is {word} bit {bit} "
                                   f"on {'GFX120' if bit == 6 else 'GFX125'}"},
               "sha256": sha256(dest), "size": dest.stat().st_size}
        rec.update(_newer_oracles(dest, f"dvgpr_{target}", None))
        kd = run([OBJDUMP, "-D", "--disassemble-symbols=dvgpr.kd", dest.name], cwd=dest.parent).stdout
        (OUT / NEWER / f"dvgpr_{target}.kd.txt").write_text(kd)
        rec["oracle"]["kd"] = rel(OUT / NEWER / f"dvgpr_{target}.kd.txt")
        records.append(rec)
    return records


def build_newer() -> None:
    """fixtures/newer/ and its manifest.json (regenerable alone: make_fixtures.py --newer)."""
    kg = _kernelgen()
    if not kg.TRITON_LLVM.available():
        raise RuntimeError("the newer fixtures need triton 3.9 (its bundled LLVM) installed")
    shutil.rmtree(OUT / NEWER, ignore_errors=True)
    (OUT / NEWER).mkdir(parents=True)
    (WORK / NEWER).mkdir(parents=True, exist_ok=True)
    objects = build_newer_objects(kg)
    NEWER_MANIFEST.update({
        "generator": "tools/make_fixtures.py --newer",
        "compiler": f"Triton 3.9 bundled AMD code generator, revision {kg.TRITON_LLVM.version()} "
                    "(tools/triton_llc.py), linked by Triton's LLD",
        "oracle_commands": {"readelf": f"{READELF} -h --notes <file>", "comment": f"{READELF} -p .comment <file>",
                            "kernel-info": "the compiler's '; Kernel info:' comments (same build)",
                            "amdhsa": "the compiler's .amdhsa_kernel directive blocks (same build)",
                            "kd": f"{OBJDUMP} -D --disassemble-symbols=<kd> <file>"},
        "fixtures": objects + [build_newer_bundle(objects)] + build_newer_dynamic_vgpr(kg)})
    (OUT / NEWER / "manifest.json").write_text(json.dumps(NEWER_MANIFEST, indent=1) + "\n")


def main() -> int:
    global WORK
    t0 = time.monotonic()
    if sys.argv[1:] == ["--newer"]:   # only fixtures/newer (the rest is left as it is)
        with tempfile.TemporaryDirectory(prefix="amdocc-fixtures-") as tmp:
            WORK = Path(tmp)
            build_newer()
        print(f"fixtures/newer rebuilt in {time.monotonic() - t0:.1f} s")
        return 0
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    (SAMPLE_DIR / SAMPLE_NAME).unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="amdocc-fixtures-") as tmp:
        WORK = Path(tmp)
        for f in SRC.iterdir():
            shutil.copyfile(f, WORK / f.name)
        MANIFEST.update({
            "generator": "tools/make_fixtures.py",
            "layout": ("'file' paths are relative to tests/data/fixtures (the sample's to the "
                       "repository root); commands ran in a scratch directory holding copies "
                       "of tools/fixture_src/*; oracle texts are LLVM tool stdout; a bundle "
                       "entry's position/offset/size come from this script's parse of the "
                       "(decompressed) bundle header, checked byte-for-byte against "
                       "clang-offload-bundler-22 --unbundle; bundler_list is LLVM's own order"),
            "toolchain": toolchain(),
            "oracle_commands": ORACLE_COMMANDS,
            "fixtures": [], "llvm_limitations": [], "could_not_produce": []})
        build_hip_bare()
        build_llc_agpr()
        build_opencl()
        build_hand_asm()
        build_legacy()
        build_diff()
        build_bundle_5arch()
        build_ccobs()
        build_host_so()
        build_two_tu()
        build_new_driver()
        build_windows()
        build_sample()
        build_newer()
        probe_limits()
    (OUT / "manifest.json").write_text(json.dumps(MANIFEST, indent=1) + "\n")
    total = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    sample = (SAMPLE_DIR / SAMPLE_NAME).stat().st_size
    print(f"{len(MANIFEST['fixtures'])} fixtures + sample; tests/data/fixtures = {total} bytes, "
          f"sample = {sample} bytes; {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
