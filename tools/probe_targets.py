#!/usr/bin/env python3
"""Measure per-processor AMDGPU facts from llc-22 -> tests/data/llvm22_target_probe.json.

Everything in the output is *measured* by compiling synthetic kernels (made by
``tools/kernelgen.py``) with ``llc-22`` and reading what it prints (the
``; Kernel info:`` block, the metadata, error texts) and the ELF header of a
compiled object (``llvm-readelf-22 -h``).  Nothing is copied from documentation.
Derived values (granules, totals, LDS pool, EUs per CU, ...) are fitted to the
measurements by brute force; every fitted key also stores the set of values that
were consistent, so an ambiguous fit is visible.

llc results are cached on disk (``$AMDOCC_PROBE_CACHE`` or
``~/.cache/amdocc/llc-probe``), so a re-run only re-does the fitting.

Usage::

    python tools/probe_targets.py                 # all processors llc-22 knows
    python tools/probe_targets.py gfx942 gfx1100  # a subset (printed, not written)
    python tools/probe_targets.py -o FILE -j 2
"""

from __future__ import annotations

import concurrent.futures
import datetime
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernelgen as kg  # sibling module, not the amdocc package

K = kg.KernelSpec
READELF = os.environ.get("AMDOCC_READELF", "llvm-readelf-22")
REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "data" / "llvm22_target_probe.json"
CACHE = Path(os.environ.get("AMDOCC_PROBE_CACHE", Path.home() / ".cache" / "amdocc" / "llc-probe"))
INF = 10**9

ABOUT_KEYS = {
    "kind": "'processor' (a gfx name), 'generic' (gfxN-...-generic, needs code object v6), "
    "'generic-isa' (llc's 'generic'/'generic-hsa' pseudo processors, e_flags mach 0) or "
    "'alias' (a marketing/old name; the probe gave identical results to alias_of, so only "
    "the ELF facts are repeated).",
    "alias_of": "alias only: the processor whose e_flags mach the alias produces.",
    "target_id": "the .amdgcn_target string of a default compile (code object v6).",
    "e_flags": "ELF e_flags of a default object (code object v6, no -mattr), hex string.",
    "readelf_flags": "the 'Flags:' line of llvm-readelf-22 -h for that object.",
    "mach": "e_flags & 0xff (EF_AMDGPU_MACH), int; mach_hex is the same in hex.",
    "generic_version": "e_flags >> 24 (EF_AMDGPU_GENERIC_VERSION; 0 for non-generic processors).",
    "abi_version": "EI_ABIVERSION of the default object (4 = code object v6). os_abi: EI_OSABI (64 = AMDGPU_HSA).",
    "e_flags_by_cov": "e_flags per code-object version 4/5/6 (module flag amdhsa_code_object_version), "
    "or the llc error text when that version is rejected.",
    "xnack / sramecc": "'any' if the default e_flags carry the 'any' selector (the feature is supported), "
    "'unsupported' if the selector is 0.",
    "e_flags_by_mattr": "e_flags with -mattr=+xnack/-xnack/+sramecc/-sramecc, plus the first llc "
    "warning when the feature is unsupported.",
    "wave_sizes": "wave sizes whose +wavefrontsizeN kernels survive llc (others are removed with a remark, "
    "see wave_rejected).",
    "default_wave": "metadata .wavefront_size of a kernel without wave-size features.",
    "modes": "gfx10+: 'wgp' and/or 'cu' (metadata .workgroup_processor_mode of a default kernel and of a "
    "+cumode kernel); ['cu'] for targets without WGP mode. default_mode: mode without features.",
    "max_waves_per_simd": "per wave size: '; Occupancy:' of an empty kernel with amdgpu-flat-work-group-size=\"1,64\".",
    "max_waves_per_simd_1wave_wg": 'same with flat WG size "1,W" (one wave per workgroup).',
    "vgpr": 'per wave size W, from a sweep NumVgprs = 1..256 (clobber ~{v(n-1)}, WG "1,W", no LDS): '
    "occupancy = [[n_max, occ], ...] meaning NumVgprs <= n_max (and > previous n_max) gives occ; "
    "alloc_granule and total = the (granule, total) for which occ == min(max_waves, "
    "total // alignTo(n, granule)) fits every point (total_range: all consistent totals; total is "
    "the smallest multiple of the granule in that range); alloc_granule_candidates lists every "
    "consistent granule; encoding_granule = e with VGPRBlocks == ceil(NumVGPRsForWavesPerEU / e) - 1 "
    "for every point.",
    "agprs": "true if a ~{a0} clobber is counted (NumAgprs: 1); unknown register names are silently ignored.",
    "agpr": "AGPR targets only. cases: kernel-info and metadata counts for (arch, agpr) pairs; vgpr_file: "
    "'unified' if TotalNumVgprs == alignTo(arch,4)+agpr for every case with agpr>0, 'separate' if it "
    "== max(arch, agpr); agpr_only_occupancy: occupancy steps of an AGPR-only sweep (default wave).",
    "sgpr": 'from a sweep of numbered SGPRs k = 0..addressable (clobber ~{s(k-1)}, WG "1,W"): '
    "addressable = largest k llc accepts (over_limit_error: the error for k+1); extra = "
    "TotalNumSgprs - k for k >= 1 (extra_with_vcc: with a ~{vcc} clobber too; extra_with_scratch: with "
    "a private alloca; extra_with_flat_scratch: with a ~{flat_scratch} clobber; all relative to the "
    "numbered_sgpr symbol; extra_by_xnack: the same with -mattr-equivalent +xnack / -xnack, xnack targets "
    "only); occupancy = [[TotalNumSgprs_max, occ], ...]; "
    "limits_occupancy = occupancy ever drops below max_waves (or the fixed total caps max_waves itself); "
    "encoding_granule as for VGPRs but for "
    "SGPRBlocks vs NumSGPRsForWavesPerEU (null if SGPRBlocks is always 0, see blocks_always_zero); "
    "fixed_total: present when TotalNumSgprs is the same for every k (then extra is null); "
    "numbered_sgpr_anomalies: {k: numbered_sgpr symbol} where the symbol is not k.",
    "vgpr_count_anomalies": "present only if some ~{v(n-1)} clobber did not give NumVgprs == n: {W: {n: NumVgprs}}.",
    "lds.max_per_workgroup": "per mode: the largest static LDS global (bytes) llc accepts, by search; "
    "over_limit_error: llc's error for max+1.",
    "lds.thresholds": "per config '<mode>_w<W>_n<waves>' (exact flat WG size waves*W, no registers): the exact LDS "
    "sizes L where '; Occupancy:' changes, as [L, occ(L-1), occ(L)]; found by refining a "
    "sweep over 1..max_per_workgroup down to single bytes.",
    "lds.pool / lds.eus_per_cu / lds.granule": "fitted per mode: the (pool, EUs per CU, LDS granule, max "
    "workgroups per CU) for which occ = clamp(ceil(n * min(wg_cap(n), pool // alignTo(L, "
    "granule)) / eus)) reproduces every LDS observation and every L=0 workgroup-size "
    "observation, where wg_cap(1) = max_waves*eus and wg_cap(n>1) = min(max_waves*eus // n, "
    "max_wgs). granule 1 means LLVM does not round LDS; *_candidates list all consistent values. "
    "max_waves_model (only when needed): the max_waves the fit had to assume because the observed "
    "maximum is itself a cap (SGPR-init-bug targets: fixed 96 SGPRs -> 8 waves).",
    "lds.granule_evidence": "LDS sizes just over a multiple of 512 B where rounding to 512 would change the "
    "occupancy: [config, L, observed occ, occ the fitted model predicts if L were rounded up "
    "to 512].",
    "workgroups": "per '<mode>_w<W>': '; Occupancy:' of an empty kernel for flat WG size \"N,N\" (exact) and "
    '"1,N" (range), as [[N, occ], ...]; max_wgs_per_cu: fitted cap on workgroups per CU '
    "(barrier limit) per mode as [min, max] of the consistent range (max null = unbounded, i.e. "
    "not observable because max_waves*eus // 2 <= cap).",
    "probe": "bookkeeping: llc invocations (asm+obj, before caching) and kernels compiled for this processor.",
}


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def list_processors() -> list[str]:
    out = subprocess.run([kg.LLC, f"-mtriple={kg.TRIPLE}", "-mcpu=help"], capture_output=True, text=True, check=False)
    text = out.stdout + out.stderr
    procs, on = [], False
    for line in text.splitlines():
        if line.startswith("Available CPUs"):
            on = True
            continue
        if line.startswith("Available features"):
            break
        m = re.match(r"\s+(\S+)\s+- Select the", line)
        if on and m:
            procs.append(m.group(1))
    return procs


def kind_of(p: str) -> str:
    if re.match(r"gfx\d+(-\d+)?-generic$", p):
        return "generic"
    if p in ("generic", "generic-hsa"):
        return "generic-isa"
    if p.startswith("gfx"):
        return "processor"
    return "alias"


def steps(points: Iterable[tuple[int, int]]) -> list[list[int]]:
    """[(x, y)] sorted by x -> [[x_last_of_run, y], ...] (runs of equal y)."""
    out: list[list[int]] = []
    for x, y in sorted(points):
        if out and out[-1][1] == y:
            out[-1][0] = x
        else:
            out.append([x, y])
    return out


def align(x: int, g: int) -> int:
    return -(-x // g) * g


def fit_alloc(obs: dict[int, int], maxw: int) -> dict:
    """Fit occ == min(maxw, T // alignTo(n, g)) (n >= 1)."""
    cands = []
    for g in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64):
        lo, hi = 1, INF
        for n, occ in obs.items():
            a = align(max(n, 1), g)
            if occ < maxw:
                lo, hi = max(lo, occ * a), min(hi, (occ + 1) * a - 1)
            else:
                lo = max(lo, maxw * a)
            if lo > hi:
                break
        if lo <= hi:
            cands.append((g, lo, hi))
    res: dict = {"alloc_granule_candidates": [c[0] for c in cands]}
    if cands:
        # prefer the largest granule that fits (smaller ones only fit by accident of sparse data)
        g, lo, hi = cands[-1]
        total = align(lo, g)
        res.update(alloc_granule=g, total=total if total <= hi else lo, total_range=[lo, hi if hi < INF else None])
    return res


def fit_encoding(pairs: list[tuple[int, int]]) -> int | None:
    """e with blocks == ceil(max(m,1)/e) - 1 for all (m, blocks)."""
    if pairs and all(b == 0 for _, b in pairs):
        return None
    for e in range(1, 129):
        if all(b == -(-max(m, 1) // e) - 1 for m, b in pairs):
            return e
    return -1


def occ_exact(n: int, L: int, maxw: int, eus: int, cap: int, pool: int, gran: int, clamp: int = INF) -> int:
    """LLVM-style occupancy for an exact WG of n waves (clamp: an extra cap, e.g. from fixed SGPRs)."""
    slots = maxw * eus
    wg_cap = slots if n == 1 else min(slots // n, cap)
    g = wg_cap
    if L:
        wl = pool // align(L, gran)
        if wl == 0:
            return 1
        g = min(g, wl)
    return max(1, min(maxw, clamp, -(-(n * g) // eus)))


# ------------------------------------------------------------------------------------------
# llc driving
# ------------------------------------------------------------------------------------------


class Prober:
    def __init__(self, target: str, cache: Path, compiler: kg.Compiler = kg.LLC22):
        self.t = target
        self.cache = cache
        self.compiler = compiler
        self.calls = 0
        self.kernels = 0

    def asm(self, specs: list[kg.KernelSpec]) -> tuple[dict, dict]:
        if not specs:
            return {}, {}
        infos, errors, calls = kg.compile_asm(specs, cache_dir=self.cache, compiler=self.compiler)
        self.calls += calls
        self.kernels += len(specs)
        return infos, errors

    def spec(self, name: str, **kw) -> kg.KernelSpec:
        kw.setdefault("max_wg", 64)
        kw.setdefault("cov", 6)
        return K(name=name, target=self.t, **kw)

    # -------------------------------------------------------------- ELF facts
    def obj_flags(self, cov: int = 6, mattr: str | None = None) -> dict:
        ir = kg.render_module([K(name="k", target=self.t, cov=cov)])
        extra = [f"-mattr={mattr}"] if mattr else []
        r = kg.run_llc(ir, self.t, "obj", extra_args=extra, cache_dir=self.cache, compiler=self.compiler)
        self.calls += 1
        warn = next((ln.strip() for ln in r.stderr.splitlines() if ln.strip()), None)
        if r.rc != 0:
            return {"error": warn or f"rc={r.rc}"}
        with tempfile.NamedTemporaryFile(suffix=".o") as f:
            f.write(r.output or b"")
            f.flush()
            out = subprocess.run([READELF, "-h", f.name], capture_output=True, text=True, check=True).stdout
        m = re.search(r"Flags:\s+(0x[0-9a-fA-F]+)(.*)", out)
        flags_line = (m.group(1) + m.group(2)).strip()
        flags = int(m.group(1), 16)
        abiv = int(re.search(r"ABI Version:\s+(\d+)", out).group(1))
        data = r.output or b""
        raw_flags = int.from_bytes(data[48:52], "little")
        assert raw_flags == flags, (raw_flags, flags)
        return {"e_flags": flags, "readelf": flags_line, "abi_version": abiv, "os_abi": data[7], "warning": warn}

    # -------------------------------------------------------------- phases
    def basic(self) -> dict:
        s = self.spec
        specs = [
            s("t_def"),
            s("t_w32", wave=32),
            s("t_w64", wave=64),
            s("t1_w32", wave=32, max_wg=32),
            s("t1_w64", wave=64, max_wg=64),
            s("t_cu", cumode=True),
            s("t_wgp", cumode=False),
            s("a_probe", agprs=1),
            s("x_s10", sgprs=10),
            s("x_vcc", sgprs=10, vcc=True),
            s("x_scr", sgprs=10, scratch=64),
            s("x_fs", sgprs=10, flat_scratch=True),
            s("x_lds", lds=16),
        ]
        for a, g in ((5, 64), (41, 11), (1, 1), (4, 4), (100, 100), (128, 128), (256, 256), (3, 0), (0, 3)):
            specs.append(s(f"u_{a}_{g}", vgprs=a, agprs=g))
        infos, errors = self.asm(specs)
        # xnack forced off / on (module-wide in llc, hence separate modules)
        for xn in (False, True):
            tag = "xon" if xn else "xoff"
            i2, e2 = self.asm(
                [
                    s(f"x_s10_{tag}", sgprs=10, xnack=xn),
                    s(f"x_vcc_{tag}", sgprs=10, vcc=True, xnack=xn),
                    s(f"x_fs_{tag}", sgprs=10, flat_scratch=True, xnack=xn),
                ]
            )
            infos.update(i2)
            errors.update(e2)
        return {"infos": infos, "errors": errors}

    def limits_sgpr(self, waves) -> tuple[dict, dict]:
        specs = [self.spec(f"s_lim_{k}", sgprs=k, wave=waves[0], max_wg=waves[0]) for k in range(96, 108)]
        return self.asm(specs)

    def lds_max(self, modes: dict[str, bool | None]) -> dict:
        """Search the largest accepted static LDS per mode (llc reports every failing kernel)."""
        res = {}
        errs = {}
        bounds = {m: [0, None] for m in modes}  # accepted lo, rejected hi
        first = sorted(
            {1 << k for k in range(10, 22)}
            | {3 << k for k in range(9, 20)}
            | {5 << k for k in range(9, 18)}
            | {32768, 65536, 98304, 131072, 163840, 196608, 262144, 327680, 393216, 655360}
        )
        points = {m: first for m in modes}
        rnd = 0
        while points:
            rnd += 1
            specs = []
            for m, pts in points.items():
                for lds in pts:
                    specs.append(self.spec(f"lm_{m}_{lds}", lds=lds, cumode=modes[m]))
            infos, errors = self.asm(specs)
            for m, pts in points.items():
                for lds in pts:
                    name = f"lm_{m}_{lds}"
                    if name in infos:
                        bounds[m][0] = max(bounds[m][0], lds)
                    elif name in errors and (bounds[m][1] is None or lds < bounds[m][1]):
                        bounds[m][1] = lds
                        errs[m] = errors[name]
            new = {}
            for m, (lo, hi) in bounds.items():
                if hi is None:
                    hi = 1 << 24
                    bounds[m][1] = None
                if hi - lo > 1:
                    step = max(1, (hi - lo) // 64)
                    new[m] = sorted(set(range(lo + step, hi, step)) | {lo + 1, hi - 1})
            if rnd > 12:
                break
            points = new
        for m, (lo, hi) in bounds.items():
            res[m] = {"max": lo, "min_rejected": hi, "error": errs.get(m)}
        return res

    def main_sweeps(self, waves, default_wave, has_agprs, modes, max_sgprs) -> tuple[dict, dict]:
        s = self.spec
        specs = []
        for w in waves:
            for n in range(1, 257):
                specs.append(s(f"v{w}_{n}", wave=w, vgprs=n, max_wg=w))
            for k in range(max_sgprs + 1):
                specs.append(s(f"s{w}_{k}", wave=w, sgprs=k, max_wg=w))
        if has_agprs:
            for n in range(1, 257):
                specs.append(s(f"ag_{n}", agprs=n, max_wg=default_wave))
        for m, cm in modes.items():
            for w in waves:
                for N in wg_sizes(w):
                    specs.append(s(f"wx_{m}_w{w}_{N}", wave=w, cumode=cm, min_wg=N, max_wg=N))
                    specs.append(s(f"wr_{m}_w{w}_{N}", wave=w, cumode=cm, min_wg=1, max_wg=N))
        return self.asm(specs)

    def lds_steps(self, cfgs: dict[str, tuple[int, int, bool | None, int, list[int]]]) -> dict[str, dict[int, int]]:
        """cfgs: name -> (wave, waves_per_wg, cumode, lds_max, extra_points). Returns name -> {L: occ}."""
        obs: dict[str, dict[int, int]] = {c: {} for c in cfgs}
        pending: dict[str, set[int]] = {}
        for c, (_wave, _n, _cumode, lmax, extra) in cfgs.items():
            step = max(1, lmax // 200)
            pts = set(range(1, lmax + 1, step)) | {lmax, lmax - 1} | set(x for x in extra if 1 <= x <= lmax)
            pending[c] = pts
        rounds = 0
        while pending and rounds < 10:
            rounds += 1
            specs = []
            for c, pts in pending.items():
                w, n, cm, lmax, _ = cfgs[c]
                for L in sorted(pts):
                    specs.append(self.spec(f"ls_{c}_{L}", wave=w, cumode=cm, min_wg=n * w, max_wg=n * w, lds=L))
            infos, errors = self.asm(specs)
            if errors:
                raise RuntimeError(f"{self.t}: unexpected llc errors in LDS sweep: {list(errors.items())[:3]}")
            for c, pts in pending.items():
                for L in pts:
                    obs[c][L] = infos[f"ls_{c}_{L}"]["Occupancy"]
            new: dict[str, set[int]] = {}
            for c, d in obs.items():
                xs = sorted(d)
                for a, b in itertools.pairwise(xs):
                    if d[a] != d[b] and b - a > 1:
                        step = max(1, (b - a) // 32)
                        new.setdefault(c, set()).update(range(a + step, b, step))
                        new[c].add(b - 1)
                        new[c].add(a + 1)
                if c in new:
                    new[c] -= set(d)
                    if not new[c]:
                        del new[c]
            pending = new
        return obs


def wg_sizes(w: int) -> list[int]:
    ks = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 24, 32)
    return sorted({w * k for k in ks if w * k <= 1024} | {1024})


# ------------------------------------------------------------------------------------------
# per-processor probe
# ------------------------------------------------------------------------------------------


def kinfo(i: dict, keys=("NumVgprs", "NumAgprs", "TotalNumVgprs", "AccumOffset", "Occupancy")) -> dict:
    d = {k: i.get(k) for k in keys if k in i}
    md = i.get("md", {})
    d["md_vgpr_count"] = md.get("vgpr_count")
    d["md_agpr_count"] = md.get("agpr_count")
    return d


def probe(target: str, cache: Path = CACHE, compiler: kg.Compiler = kg.LLC22) -> dict:
    t0 = time.perf_counter()
    P = Prober(target, cache, compiler)
    out: dict = {"kind": kind_of(target)}

    # ---- ELF facts ---------------------------------------------------------------------
    d6 = P.obj_flags(6)
    if "error" in d6:
        raise RuntimeError(f"{target}: default compile failed: {d6['error']}")
    flags = d6["e_flags"]
    out["e_flags"] = f"0x{flags:08x}"
    out["readelf_flags"] = d6["readelf"]
    out["mach"] = flags & 0xFF
    out["mach_hex"] = f"0x{flags & 0xFF:02x}"
    out["generic_version"] = flags >> 24
    out["abi_version"] = d6["abi_version"]
    out["os_abi"] = d6["os_abi"]
    byc = {}
    for cov in (4, 5, 6):
        d = d6 if cov == 6 else P.obj_flags(cov)
        byc[str(cov)] = d["error"] if "error" in d else f"0x{d['e_flags']:08x}"
    out["e_flags_by_cov"] = byc
    sel = {0: "unsupported", 1: "any", 2: "off", 3: "on"}
    out["xnack"] = sel[(flags >> 8) & 3]
    out["sramecc"] = sel[(flags >> 10) & 3]
    bym = {}
    for ma in ("+xnack", "-xnack", "+sramecc", "-sramecc"):
        d = P.obj_flags(6, ma)
        if "error" in d:
            bym[ma] = d["error"]
        else:
            bym[ma] = f"0x{d['e_flags']:08x}" + (f"  ({d['warning']})" if d["warning"] else "")
    out["e_flags_by_mattr"] = bym

    # ---- basic kernels -------------------------------------------------------------------
    b = P.basic()
    bi, be = b["infos"], b["errors"]
    asm_target = None
    r = kg.run_llc(kg.render_module([K(name="k", target=target)]), target, "asm", cache_dir=cache, compiler=compiler)
    P.calls += 1
    m = re.search(r'\.amdgcn_target "([^"]+)"', (r.output or b"").decode())
    asm_target = m.group(1) if m else None
    out["target_id"] = asm_target
    waves = [w for w in (32, 64) if f"t_w{w}" in bi]
    out["wave_sizes"] = waves
    out["wave_rejected"] = {str(w): be[f"t_w{w}"] for w in (32, 64) if f"t_w{w}" in be}
    default_wave = bi["t_def"]["md"]["wavefront_size"]
    out["default_wave"] = default_wave
    modes: dict[str, bool | None] = {}
    md_def = bi["t_def"]["md"]
    if "workgroup_processor_mode" in md_def:

        def mname(i):
            return "wgp" if i["md"].get("workgroup_processor_mode") == 1 else "cu"

        out["default_mode"] = mname(bi["t_def"])
        for nm, cm in (("t_wgp", False), ("t_cu", True)):
            if nm in bi:
                modes.setdefault(mname(bi[nm]), cm)
        out["modes"] = sorted(modes, key=lambda x: x != "wgp")
    else:
        out["default_mode"] = "cu"
        modes = {"cu": None}
        out["modes"] = ["cu"]
    out["max_waves_per_simd"] = {str(w): bi[f"t_w{w}"]["Occupancy"] for w in waves}
    out["max_waves_per_simd_1wave_wg"] = {str(w): bi[f"t1_w{w}"]["Occupancy"] for w in waves}
    has_agprs = bi["a_probe"].get("NumAgprs") == 1
    out["agprs"] = has_agprs

    # ---- SGPR limit and LDS max --------------------------------------------------------
    li, le = P.limits_sgpr(waves)
    ok = [k for k in range(96, 108) if f"s_lim_{k}" in li and li[f"s_lim_{k}"]["sym"]["numbered_sgpr"] == k]
    max_sgprs = max(ok)
    over = le.get(f"s_lim_{max_sgprs + 1}")
    lm = P.lds_max(modes)
    lds_max = {m: v["max"] for m, v in lm.items()}

    # ---- main sweeps -----------------------------------------------------------------------
    mi, me = P.main_sweeps(waves, default_wave, has_agprs, modes, max_sgprs)
    if me:
        raise RuntimeError(f"{target}: unexpected errors in sweeps: {list(me.items())[:3]}")
    maxw = {w: mi[f"v{w}_1"]["Occupancy"] for w in waves}

    vg = {}
    vanom: dict = {}
    for w in waves:
        obs = {}
        enc = []
        padded = {}
        for n in range(1, 257):
            i = mi[f"v{w}_{n}"]
            if i["NumVgprs"] != n:
                vanom.setdefault(str(w), {})[n] = i["NumVgprs"]
            obs[n] = i["Occupancy"]
            enc.append((i["NumVGPRsForWavesPerEU"], i["VGPRBlocks"]))
            if i["NumVGPRsForWavesPerEU"] != n:
                padded[n] = i["NumVGPRsForWavesPerEU"]
        f = fit_alloc(obs, maxw[w])
        d = {
            "alloc_granule": f.get("alloc_granule"),
            "total": f.get("total"),
            "total_range": f.get("total_range"),
            "alloc_granule_candidates": f["alloc_granule_candidates"],
            "encoding_granule": fit_encoding(enc),
            "occupancy": steps(obs.items()),
        }
        if padded:
            d["padded_NumVGPRsForWavesPerEU"] = padded
        vg[str(w)] = d
    out["vgpr"] = vg
    if vanom:
        out["vgpr_count_anomalies"] = vanom

    if has_agprs:
        cases = []
        for a, g in ((5, 64), (41, 11), (1, 1), (4, 4), (100, 100), (128, 128), (256, 256), (3, 0), (0, 3)):
            i = bi[f"u_{a}_{g}"]
            c = {"arch": a, "agpr": g}
            c.update(kinfo(i))
            cases.append(c)
        uni = all(
            c["TotalNumVgprs"] == (align(max(c["arch"], 0), 4) + c["agpr"] if c["agpr"] else c["arch"]) for c in cases
        )
        sep = all(c["TotalNumVgprs"] == max(c["arch"], c["agpr"]) for c in cases)
        aobs = {n: mi[f"ag_{n}"]["Occupancy"] for n in range(1, 257)}
        out["agpr"] = {
            "vgpr_file": "unified" if uni and not sep else "separate" if sep and not uni else "unclear",
            "cases": cases,
            "agpr_only_occupancy": steps(aobs.items()),
            "agpr_only_occupancy_same_as_vgpr": steps(aobs.items()) == vg[str(default_wave)]["occupancy"],
        }

    # SGPRs
    sg: dict = {"addressable": max_sgprs, "over_limit_error": over}
    extras, table, enc = set(), {}, []
    sanom: dict[int, int] = {}
    totals: set[int] = set()
    for w in waves:
        for k in range(max_sgprs + 1):
            i = mi[f"s{w}_{k}"]
            nsg = i["sym"]["numbered_sgpr"]
            if nsg != k:
                sanom[k] = nsg
            elif k:
                extras.add(i["TotalNumSgprs"] - k)
            totals.add(i["TotalNumSgprs"])
            if w == default_wave:
                table[i["TotalNumSgprs"]] = i["Occupancy"]
            enc.append((i["NumSGPRsForWavesPerEU"], i["SGPRBlocks"]))
    sg["extra"] = sorted(extras)[0] if len(extras) == 1 else sorted(extras)
    if len(totals) == 1:
        # e.g. the SGPR-init-bug targets: every kernel reports the same fixed total
        sg["fixed_total"] = totals.pop()
        sg["extra"] = None
    if sanom:
        sg["numbered_sgpr_anomalies"] = {str(k): v for k, v in sorted(sanom.items())}
    xv, xs, xl, xf = bi["x_vcc"], bi["x_scr"], bi["x_lds"], bi["x_fs"]

    def ex(i):
        return i["TotalNumSgprs"] - i["sym"]["numbered_sgpr"]

    sg["extra_with_vcc"] = ex(xv)
    sg["extra_with_scratch"] = ex(xs)
    sg["extra_with_flat_scratch"] = ex(xf)
    sg["scratch_numbered_sgpr_for_10"] = xs["sym"]["numbered_sgpr"]
    sg["flat_scratch_numbered_sgpr_for_10"] = xf["sym"]["numbered_sgpr"]
    if out["xnack"] != "unsupported":
        sg["extra_by_xnack"] = {
            tag: {"plain": ex(bi[f"x_s10_{tag}"]), "vcc": ex(bi[f"x_vcc_{tag}"]), "flat_scratch": ex(bi[f"x_fs_{tag}"])}
            for tag in ("xoff", "xon")
        }
    sg["lds_operand_numbered_sgpr"] = xl["sym"]["numbered_sgpr"]
    sg["occupancy"] = steps(table.items())
    sg["limits_occupancy"] = min(table.values()) < maxw[default_wave]
    sg["encoding_granule"] = fit_encoding(enc)
    sg["blocks_always_zero"] = all(bk == 0 for _, bk in enc)
    out["sgpr"] = sg

    # ---- workgroup tables ----------------------------------------------------------------
    wgs: dict = {}
    for m in modes:
        for w in waves:
            wgs[f"{m}_w{w}"] = {
                "exact": [[N, mi[f"wx_{m}_w{w}_{N}"]["Occupancy"]] for N in wg_sizes(w)],
                "range": [[N, mi[f"wr_{m}_w{w}_{N}"]["Occupancy"]] for N in wg_sizes(w)],
            }

    # ---- LDS steps -----------------------------------------------------------------------
    cfgs = {}
    for m, cm in modes.items():
        W = default_wave
        for n in (1, 2, 4):
            extra = [k * 512 + 1 for k in range(1, lds_max[m] // 512 + 1)] if n == 4 else []
            cfgs[f"{m}_w{W}_n{n}"] = (W, n, cm, lds_max[m], extra)
        if len(waves) > 1:
            W2 = next(w for w in waves if w != default_wave)
            cfgs[f"{m}_w{W2}_n4"] = (W2, 4, cm, lds_max[m], [])
    lobs = P.lds_steps(cfgs)
    thresholds = {}
    for c, d in lobs.items():
        xs = sorted(d)
        th = [[b2, d[a2], d[b2]] for a2, b2 in itertools.pairwise(xs) if d[a2] != d[b2]]
        for x in th:
            assert x[1] > x[2], (target, c, x)  # occupancy must fall as LDS grows
        thresholds[c] = th

    # ---- fit (pool, eus, granule, max wgs) per mode ---------------------------------------
    lds: dict = {
        "max_per_workgroup": {m: lds_max[m] for m in modes},
        "over_limit_error": {m: lm[m]["error"] for m in modes},
    }
    fits = {}
    for m in modes:
        fits[m] = fit_mode(m, waves, maxw, lds_max[m], wgs, lobs, cfgs)
    lds["pool"] = {m: fits[m]["pool"] for m in modes}
    lds["pool_candidates"] = {m: fits[m]["pool_candidates"] for m in modes}
    lds["eus_per_cu"] = {m: fits[m]["eus"] for m in modes}
    mwm = {m: fits[m]["max_waves_model"] for m in modes if "max_waves_model" in fits[m]}
    if mwm:
        lds["max_waves_model"] = mwm
        # the observed maximum is already an SGPR cap (fixed SGPR total)
        out["sgpr"]["limits_occupancy"] = True
    lds["granule"] = {m: fits[m]["granule"] for m in modes}
    lds["granule_candidates"] = {m: fits[m]["granule_candidates"] for m in modes}
    lds["rounded_to_granule"] = any(1 not in fits[m]["granule_candidates"] for m in modes)
    lds["granule_evidence"] = {m: fits[m]["evidence"] for m in modes}
    lds["thresholds"] = thresholds
    out["lds"] = lds
    out["workgroups"] = {
        "max_wgs_per_cu": {m: fits[m]["max_wgs"] for m in modes},
        "eus_per_cu": {m: fits[m]["eus"] for m in modes},
        **wgs,
    }
    out["probe"] = {"llc_calls": P.calls, "kernels": P.kernels}
    out["_seconds"] = round(time.perf_counter() - t0, 1)  # printed, not written (keeps the JSON stable)
    return out


def fit_mode(m, waves, maxw, lmax, wgs, lobs, cfgs) -> dict:
    """Brute-force (eus, cap, pool, granule) consistent with L=0 exact-WG tables and LDS sweeps.

    If nothing fits with max_waves = the observed maximum (which may itself be an SGPR cap, as on
    the SGPR-init-bug targets), retry with larger hardware wave counts clamped to the observed one."""
    res = _fit_mode(m, waves, maxw, lmax, wgs, lobs, cfgs, None)
    if res["pool"] is None:
        for hw in (10, 16, 20):
            if all(hw > v for v in maxw.values()):
                r2 = _fit_mode(m, waves, {w: hw for w in maxw}, lmax, wgs, lobs, cfgs, maxw)
                if r2["pool"] is not None:
                    r2["max_waves_model"] = hw
                    return r2
    return res


def _fit_mode(m, waves, maxw, lmax, wgs, lobs, cfgs, clamp_by) -> dict:
    cl = {w: (clamp_by[w] if clamp_by else INF) for w in waves}
    caps = [*range(1, 129), INF]
    # L = 0 observations: (W, n, occ)
    f_obs = []
    for w in waves:
        for N, occ in wgs[f"{m}_w{w}"]["exact"]:
            f_obs.append((w, -(-N // w), occ))
    l_obs = []  # (W, n, {L: occ})
    for c, (w, n, _cm, _lm, _) in cfgs.items():
        if c.startswith(m + "_"):
            l_obs.append((w, n, lobs[c]))
    ok_ec = []
    for eus in (1, 2, 3, 4, 8):
        for cap in caps:
            if all(occ_exact(n, 0, maxw[w], eus, cap, 1, 1, cl[w]) == occ for w, n, occ in f_obs):
                ok_ec.append((eus, cap))
    # LDS: group caps into classes with identical effect on the configs used
    classes: dict[tuple, list[tuple[int, int]]] = {}
    for eus, cap in ok_ec:
        key = (eus, *(min(maxw[w] * eus // n, cap) if n > 1 else -1 for w, n, _ in l_obs))
        classes.setdefault(key, []).append((eus, cap))
    grans = (1, 4, 16, 64, 128, 256, 512, 1024, 1280, 2048)
    crit = []  # most discriminating points first: around thresholds
    full = []
    for w, n, d in l_obs:
        xs = sorted(d)
        for a, b in itertools.pairwise(xs):
            if d[a] != d[b]:
                crit += [(w, n, a, d[a]), (w, n, b, d[b])]
        full += [(w, n, L, o) for L, o in d.items()]
    good = []
    for members in classes.values():
        eus, cap = members[0]
        for gran in grans:
            for pool in range(256, 8 * lmax + 1, 256):
                # the few critical points first: most candidates fail there and skip the full check
                if all(occ_exact(n, L, maxw[w], eus, cap, pool, gran, cl[w]) == o for w, n, L, o in crit) and all(
                    occ_exact(n, L, maxw[w], eus, cap, pool, gran, cl[w]) == o for w, n, L, o in full
                ):
                    good.append((members, gran, pool))
    res: dict = {}
    eus_c = sorted({mm[0] for g in good for mm in g[0]})
    cap_c = sorted({mm[1] for g in good for mm in g[0]})
    pools = sorted({g[2] for g in good})
    gr_c = sorted({g[1] for g in good})
    res["eus"] = eus_c[0] if len(eus_c) == 1 else eus_c
    res["max_wgs"] = [cap_c[0], None if cap_c[-1] == INF else cap_c[-1]] if cap_c else None
    res["pool"] = pools[0] if len(pools) == 1 else (min(pools) if pools else None)
    res["pool_candidates"] = pools if len(pools) <= 8 else [pools[0], "...", pools[-1], f"{len(pools)} values"]
    res["granule"] = gr_c[0] if gr_c else None
    res["granule_candidates"] = gr_c
    # evidence: L = k*512+1 points where rounding to 512 would predict a different occupancy
    ev = []
    if good:
        members, gran, pool = good[0]
        eus, cap = members[0]
        for w, n, d in l_obs:
            for L, o in sorted(d.items()):
                if L % 512 == 1 and L > 1:
                    r512 = occ_exact(n, L, maxw[w], eus, cap, pool, 512, cl[w])
                    if r512 != o:
                        ev.append([f"w{w}_n{n}", L, o, r512])
        ev = ev[:6]
    res["evidence"] = ev
    return res


def strip_alias(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("kind", "probe", "target_id")}


# ------------------------------------------------------------------------------------------
# JSON output (stable, readable: short lists on one line)
# ------------------------------------------------------------------------------------------


def dumps(o, indent: int = 0) -> str:
    pad = "  " * indent
    if isinstance(o, dict):
        if not o:
            return "{}"
        items = [f"{pad}  {json.dumps(str(k))}: {dumps(v, indent + 1)}" for k, v in o.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(o, list):
        flat = json.dumps(o, separators=(", ", ": "))
        if len(flat) <= 110 and not any(isinstance(x, dict) for x in o):
            return flat
        if all(isinstance(x, list) and not any(isinstance(y, (dict, list)) for y in x) for x in o):
            # list of short rows: several per line
            rows, line = [], []
            for x in o:
                line.append(json.dumps(x, separators=(", ", ": ")))
                if len(", ".join(line)) > 100:
                    rows.append(", ".join(line[:-1]))
                    line = [line[-1]]
            if line:
                rows.append(", ".join(line))
            return "[\n" + ",\n".join(f"{pad}  {r}" for r in rows) + "\n" + pad + "]"
        items = [f"{pad}  {dumps(v, indent + 1)}" for v in o]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(o)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="*", help="subset to probe (default: all; subset runs print only)")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument(
        "--compiler",
        choices=sorted(kg.COMPILERS),
        default=kg.LLC22.name,
        help="llc-22 (default), triton-llvm (Triton's bundled LLVM) or rocm-10.0 (ROCm 10.0's "
        "compiler backend); for the last two give the processors, and -o, since they cannot list them",
    )
    a = ap.parse_args(argv)
    cache = Path(a.cache)
    compiler = kg.COMPILERS[a.compiler]
    if compiler is kg.LLC22:
        procs = list_processors()
        todo = a.targets or procs
        unknown = [t for t in todo if t not in procs]
        if unknown:
            ap.error(f"llc does not list: {unknown}")
    else:
        if not a.targets or not a.output:
            ap.error(f"--compiler {compiler.name} needs the processors and -o")
        todo = a.targets
    t0 = time.perf_counter()
    results: dict[str, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(probe, t, cache, compiler): t for t in todo}
        for f in concurrent.futures.as_completed(futs):
            t = futs[f]
            results[t] = f.result()
            r = results[t]
            print(
                f"{t:16s} {r['e_flags']} waves={r['wave_sizes']} maxw={r['max_waves_per_simd']} "
                f"lds={r['lds']['max_per_workgroup']} pool={r['lds']['pool']} "
                f"({r['probe']['llc_calls']} llc, {r.pop('_seconds')}s)",
                file=sys.stderr,
                flush=True,
            )
    # aliases: keep only the ELF facts when identical to the processor they map to
    final: dict[str, dict] = {}
    mach_to_proc = {r["mach"]: t for t, r in results.items() if r["kind"] == "processor"}
    for t in todo:
        r = results[t]
        if r["kind"] == "alias":
            base = mach_to_proc.get(r["mach"])
            if base and strip_alias(results[base]) == strip_alias(r):
                final[t] = {
                    "kind": "alias",
                    "alias_of": base,
                    "target_id": r["target_id"],
                    "e_flags": r["e_flags"],
                    "readelf_flags": r["readelf_flags"],
                    "identical_probe": True,
                }
                continue
            r = dict(r, alias_of=base, identical_probe=False)
        final[t] = r
    if compiler is kg.LLC22:
        measured_with = {
            "generated_by": "tools/probe_targets.py (measured with llc-22; see tools/kernelgen.py)",
            "llc_version": kg.llc_version(),
            "llc_version_string": subprocess.run([kg.LLC, "--version"], capture_output=True, text=True)
            .stdout.strip()
            .splitlines()[0],
            "triple": kg.TRIPLE,
        }
    else:
        measured_with = {
            "generated_by": f"tools/probe_targets.py --compiler {compiler.name} (see tools/kernelgen.py, "
            f"tools/{'triton' if compiler is kg.TRITON_LLVM else 'rocm'}_llc.py)",
            "compiler": compiler.name,
            "compiler_revision": compiler.version(),
            "triple": "amdgpu<subarch>-amd-amdhsa (kernelgen.subarch_triple)"
            if compiler.subarch_triples
            else kg.TRIPLE,
        }
    doc = {
        "_about": {
            **measured_with,
            "date": datetime.date.today().isoformat(),
            "processors": len(final),
            "keys": ABOUT_KEYS,
        },
        **final,
    }
    text = dumps(doc) + "\n"
    json.loads(text)  # self-check
    print(f"probed {len(todo)} processors in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    if a.output or not a.targets:
        path = Path(a.output) if a.output else DEFAULT_OUT
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
