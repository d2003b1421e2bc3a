"""Route a single prefill to AITER's asm kernel or to CK Tile, with every reason recorded.

FlashInfer's rules (ROCm PR #365; docs/consumers.md §2) decide whether asm is wanted.
Upstream then only checked that AITER_ASM_DIR was set, and a stale, incomplete or mismatched
directory made AITER abort the process at module load. Here the kernel is found through the
directory's own manifest and validated statically before anything loads it: it parses, it is
built for the device's processor and xnack/sramecc mode, the manifest's symbol exists, its
static LDS fits, and at least one block fits per CU. Any failure routes to CK Tile, with why.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..caches import cached
from ..codeobject.target_id import TargetId
from ..errors import AmdoccError
from ..frozen import freeze
from ..loader import load
from ..models import occupancy
from ..models.compat import why_not
from ..numbers import in_range
from ..tabledata import Row, load_table
from ..targets import find_target, get_target, processor_name

ASM, CK_TILE = "asm", "ck_tile"


@dataclass(frozen=True, slots=True)
class Check:
    rule: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, str | bool]:
        return {"rule": self.rule, "ok": self.ok, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class AsmKernel:
    """One row of AITER's fmha_v3_fwd manifest, resolved to a file."""

    knl_name: str  # the kernel symbol (mangled aiter::<name>)
    co_name: str
    path: Path
    ts_qo: int | None = None
    ts_kv: int | None = None


@dataclass(slots=True)
class GateDecision:
    route: str
    arch: str
    checks: list[Check] = field(default_factory=list)
    kernel: AsmKernel | None = None
    blocks_per_cu: int | None = None

    @property
    def reasons(self) -> list[str]:
        """Why not asm (empty when the route is asm)."""
        return [f"{c.rule}: {c.detail}" for c in self.checks if not c.ok]

    def as_dict(self) -> dict[str, Any]:
        return {
            "route": self.route,
            "arch": self.arch,
            "reasons": self.reasons,
            "checks": [c.as_dict() for c in self.checks],
            "kernel": None
            if self.kernel is None
            else {
                "knl_name": self.kernel.knl_name,
                "co_name": self.kernel.co_name,
                "path": str(self.kernel.path),
                "ts_qo": self.kernel.ts_qo,
                "ts_kv": self.kernel.ts_kv,
            },
            "blocks_per_cu": self.blocks_per_cu,
        }


@cached(maxsize=1)
def _table() -> dict[str, Any]:
    """tables/prefill_gate.toml, every value checked once (a damaged one is a TableError naming
    its row and column) before any is used."""
    table = Row("prefill_gate.toml", "", load_table("prefill_gate.toml"))
    thresholds = table.sub("min_qo_len")
    env, aiter, eligible = table.sub("env"), table.sub("aiter"), table.sub("eligible")
    blocks = aiter.sub("block_size")
    folders = aiter.sub("subfolder_by_cu")
    checked: dict[str, Any] = freeze(
        {
            "min_qo_len": {proc: thresholds.whole(proc, 1) for proc in thresholds.columns()},
            "eligible": {
                "dtypes": eligible.texts("dtypes"),
                "head_dims": tuple(_head_dims(eligible, pair) for pair in eligible.value("head_dims")),
                "source": eligible.text("source"),
            },
            "env": {column: env.text(column) for column in ("kill_switch", "asm_dir")},
            "aiter": {
                **{column: aiter.text(column) for column in ("module", "csv_manifest", "codegen_manifest")},
                "block_size": {hd: blocks.whole(hd, 1) for hd in blocks.columns()},
                "subfolder_by_cu": {
                    by_cu.key: {cu: by_cu.text(cu) for cu in by_cu.columns() if _cu_count(by_cu, cu)}
                    for by_cu in folders.rows()
                },
            },
        }
    )
    return checked


def _head_dims(row: Row, pair: object) -> tuple[int, int]:
    """A [qk, v] pair of head dims, each a whole number >= 1."""
    if not (isinstance(pair, list) and len(pair) == 2 and all(in_range(d, 1) for d in pair)):
        raise row.error(f"{pair!r} is not a [qk, v] pair of head dims >= 1", "head_dims")
    return pair[0], pair[1]


def _cu_count(row: Row, column: str) -> bool:
    """Whether a subfolder_by_cu key is a CU count (decimal digits, as AITER's table keys them)."""
    if not column.isdigit() or int(column) < 1:
        raise row.error("is not a CU count (a whole number >= 1)", column)
    return True


def min_qo_len(arch: str) -> int | None:
    """The smallest qo_len routed to asm on ``arch``; None means never."""
    value = _table()["min_qo_len"].get(processor_name(arch))
    return int(value) if value else None


def normalize_window(window_left: int, kv_len: int) -> int:
    """A window at least as wide as the KV sequence is no window at all (-1)."""
    return -1 if window_left >= kv_len else window_left


def sku_folders(arch: str) -> dict[str, str] | None:
    """AITER's per-SKU kernel folders of ``arch`` by CU count (gfx942: MI300, MI308), or None.
    Only where they exist do the device's CU count and the bf16 rounding mode pick a kernel."""
    folders: dict[str, str] | None = _table()["aiter"]["subfolder_by_cu"].get(processor_name(arch))
    return folders


# -- the AITER directory -------------------------------------------------------------------


class NotFound(AmdoccError):
    """The asm kernel cannot be located; the message is the reason (the gate catches it and
    routes to CK Tile; one that escapes is bad input, exit 2)."""


def mangled(name: str) -> str:
    """Itanium mangling of aiter::<name>, the symbol AITER loads (codegen.py builds it the same way)."""
    return f"_ZN5aiter{len(name)}{name}E"


_SELECTOR = re.compile(
    r"template<>\s*struct\s+FmhaFwdV3(?P<what>Name|Buf|Ts)<fmha_fwd_kernel_selector<(?P<args>[^>]*)>>\s*"
    r"\{(?P<body>[^}]*)\}"
)


def _quoted(pattern: str, body: str, what: str) -> str:
    """The first group of ``pattern`` in the body of a codegen.py ``FmhaFwdV3<what>`` entry; a body
    without it is a malformed manifest (NotFound, so the gate routes to CK Tile and says why)."""
    found = re.search(pattern, body)
    if found is None:
        raise NotFound(f"the codegen.py manifest's FmhaFwdV3{what} entry {{{body.strip()}}} does not match {pattern}")
    return found.group(1)


def _selector_row(args: list[str]) -> dict[str, Any]:
    """A codegen.py selector's fields; a number that is not one is a malformed manifest (NotFound)."""
    # The selector's whole-number arguments. kStoreLSE (5) picks no kernel (AITER names the same
    # kernel for both values) but a manifest where it is not a number is malformed all the same.
    positions = {"hdim": 1, "mask": 2, "lse": 5, "bf16_cvt": 7}
    given = {name: args[i] for name, i in positions.items() if i < len(args)}
    bad = [f"{name} {text!r}" for name, text in given.items() if not text.isdigit()]
    if bad:
        raise NotFound(
            f"the codegen.py manifest's selector <{', '.join(args)}> has no whole number for {', '.join(bad)}"
        )
    number = {name: int(text) for name, text in given.items()}
    return {
        "dtype": args[0].replace("FmhaFwd", "").lower(),
        "hdim": number["hdim"],
        "mask": number["mask"],
        "arch": args[6].split("::")[-1],
        "bf16_cvt": number.get("bf16_cvt"),
        "mode": 1 if len(args) > 8 and args[8] == "true" else 0,
    }


def _codegen_rows(text: str) -> list[dict[str, Any]]:
    """The kernel table that older AITER wheels keep as C++ specialisations in codegen.py:
    selector (dtype, hdim, mask, seq pad, hd pad, store LSE, arch[, bf16 cvt[, group]]) →
    kernel name, .co file and tile sizes. Commented-out lines are not entries."""
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for line in text.splitlines():
        if line.lstrip().startswith("//"):
            continue
        for m in _SELECTOR.finditer(line):
            args = [a.strip() for a in m.group("args").split(",")]
            if len(args) < 7:
                continue
            key = tuple(args)
            if key not in rows:
                rows[key] = _selector_row(args)
            row = rows[key]
            body, what = m.group("body"), m.group("what")
            if what == "Name":
                row["knl_name"] = mangled(_quoted(r'"([^"]+)"', body, what))
            elif what == "Buf":
                row["co_name"] = _quoted(r'"([^"]+)"', body, what)
            else:
                row["ts_qo"] = int(_quoted(r"ts_qo\s*=\s*(\d+)", body, what))
                row["ts_kv"] = int(_quoted(r"ts_kv\s*=\s*(\d+)", body, what))
    out = []
    for row in rows.values():
        if "knl_name" in row and "co_name" in row:
            # hd192 kernels pair a 192 query head with a 128 value head ("hd192_hd128").
            row["hdim_q"], row["hdim_v"] = row["hdim"], 128 if row["hdim"] == 192 else row["hdim"]
            out.append(row)
    return out


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    """fmha_fwd.csv: dtype, hdim_q, hdim_v, mask, mode, bf16_cvt, ts_qo, ts_kv, knl_name, co_name."""
    out = []
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:  # as codegen.py is read
        reader = csv.DictReader(fh)
        for row in reader:
            if None in row.values():  # DictReader fills a short row's missing cells with None
                raise NotFound(f"{path} is not a usable fmha_fwd.csv manifest (line {reader.line_num} is short)")
            try:
                out.append(
                    {
                        "dtype": row["dtype"].strip().lower(),
                        "hdim_q": int(row["hdim_q"]),
                        "hdim_v": int(row["hdim_v"]),
                        "mask": int(row["mask"]),
                        "mode": int(row["mode"]),
                        "bf16_cvt": _optional_int(row.get("bf16_cvt")),
                        "ts_qo": _optional_int(row.get("ts_qo")),
                        "ts_kv": _optional_int(row.get("ts_kv")),
                        "knl_name": row["knl_name"].strip(),
                        "co_name": row["co_name"].strip(),
                    }
                )
            except (KeyError, ValueError) as exc:
                raise NotFound(f"{path} is not a usable fmha_fwd.csv manifest ({exc})") from None
    return out


def _optional_int(cell: str | None) -> int | None:
    """A CSV cell that may be absent or blank (spaces included)."""
    return int(cell) if cell is not None and cell.strip() else None


def find_asm_kernel(
    asm_dir: str | os.PathLike[str],
    arch: str,
    *,
    dtype: str = "bf16",
    hdim_q: int = 128,
    hdim_v: int = 128,
    causal: bool = False,
    group_mode: bool = False,
    bf16_cvt: int = 0,
    cu_count: int | None = None,
) -> AsmKernel:
    """The manifest row for this prefill, resolved to its .co path (NotFound says why not)."""
    conf = _table()["aiter"]
    proc = processor_name(arch)
    base = Path(asm_dir) / proc / conf["module"]
    if not base.is_dir():
        raise NotFound(f"no {conf['module']} directory for {proc} in AITER_ASM_DIR ({base})")
    csv_path, codegen_path = base / conf["csv_manifest"], base / conf["codegen_manifest"]
    if csv_path.is_file():
        rows, manifest = _csv_rows(csv_path), csv_path
    elif codegen_path.is_file():
        rows, manifest = _codegen_rows(codegen_path.read_text(encoding="utf-8", errors="replace")), codegen_path
    else:
        raise NotFound(f"no kernel manifest ({conf['csv_manifest']} or {conf['codegen_manifest']}) in {base}")
    wanted_masks = {True: (1, 2), False: (0,)}[causal]  # codegen marks causal 1, the CSV 2
    by_cu = sku_folders(proc)
    matches = [
        r
        for r in rows
        if r["dtype"] == dtype
        and r["hdim_q"] == hdim_q
        and r["hdim_v"] == hdim_v
        and r["mask"] in wanted_masks
        and r["mode"] == int(group_mode)
        and (r["bf16_cvt"] is None or by_cu is None or r["bf16_cvt"] == bf16_cvt)
        and r.get("arch", proc) == proc
    ]
    if not matches:
        raise NotFound(
            f"{manifest.name} lists no {dtype} hd{hdim_q}/{hdim_v} "
            f"{'causal' if causal else 'non-causal'} {'group' if group_mode else 'batch'} kernel"
        )
    row = matches[0]
    folder = base
    if by_cu:
        if cu_count is None:
            raise NotFound(
                f"{proc} keeps one kernel folder per SKU ({', '.join(sorted(set(by_cu.values())))}), "
                "chosen by CU count, and the device's CU count is not known"
            )
        sub = by_cu.get(str(cu_count))
        if sub is None:
            raise NotFound(f"AITER has no {proc} kernel folder for a {cu_count}-CU device")
        folder = base / sub
    return AsmKernel(row["knl_name"], row["co_name"], folder / row["co_name"], row.get("ts_qo"), row.get("ts_kv"))


def validate_asm_kernel(
    kernel: AsmKernel, device_arch: str, *, lds_bytes: int | None = None, block_size: int | None = None
) -> tuple[list[Check], int | None]:
    """Everything that must hold before AITER may load this .co on this device, checked
    statically; returns the checks and the blocks per CU HIP would report."""
    checks: list[Check] = []
    path = kernel.path
    if not path.is_file():
        return [Check("kernel file", False, f"{path} does not exist")], None
    try:
        cos = load(path)
    except AmdoccError as exc:
        return [Check("kernel file", False, f"{path.name} does not parse: {exc}")], None
    if len(cos) != 1:
        return [Check("kernel file", False, f"{path.name} holds {len(cos)} code objects, not one")], None
    co = cos[0]
    checks.append(
        Check("kernel file", True, f"{path.name} parses ({co.target_id}, code object v{co.code_object_version})")
    )
    device = TargetId.parse(device_arch)
    target = find_target(device.processor)
    ok = target is not None and why_not(co.target_id, co.target, device, target) is None
    checks.append(
        Check(
            "target",
            ok,
            f"{path.name} is built for {co.target_id}; the device is {device}"
            + ("" if ok else " — HIP would refuse to load it"),
        )
    )
    names = {k.name: k for k in co.kernels}
    names.update({k.symbol[:-3]: k for k in co.kernels if k.symbol.endswith(".kd")})
    k = names.get(kernel.knl_name)
    checks.append(
        Check(
            "symbol",
            k is not None,
            f"{kernel.knl_name} {'found' if k else 'not found'} in {path.name}"
            + ("" if k else f" (it has {', '.join(sorted(x.name for x in co.kernels)) or 'no kernels'})"),
        )
    )
    if k is None or target is None or not ok:  # (ok implies a target; said again for the type checker)
        return checks, None  # no occupancy where the code cannot run
    limit = lds_bytes if lds_bytes is not None else target.lds_per_workgroup
    lds = k.resources.lds or 0
    checks.append(Check("lds", lds <= limit, f"static LDS {lds} B against the device's {limit} B per workgroup"))
    reqd = k.meta("reqd_workgroup_size")
    block = block_size or (reqd[0] * reqd[1] * reqd[2] if isinstance(reqd, list) and len(reqd) == 3 else None)
    if block is None:
        checks.append(Check("occupancy", False, "no block size: none given and no .reqd_workgroup_size"))
        return checks, None
    occ = occupancy(k, target=device_arch, block_size=block)
    fits = occ.error is None and (occ.blocks_per_cu or 0) >= 1
    checks.append(
        Check(
            "occupancy",
            fits,
            f"{occ.blocks_per_cu} block(s) of {block} threads per {occ.unit} (limited by {occ.limiter})"
            if occ.error is None
            else f"HIP would answer {occ.error}",
        )
    )
    return checks, occ.blocks_per_cu


# -- the decision ----------------------------------------------------------------------------


def _device_facts(arch: str, device: str, cu_count: int | None) -> tuple[int, int]:
    """The CU count and LDS bytes of ``device``, which must be a processor of ``arch``."""
    from ..devices import get_device
    from ..errors import UsageError

    dev = get_device(device)
    if dev.processor != processor_name(arch):
        raise UsageError(
            f"{{device}} {dev.name} is a {dev.processor}, but {{arch}} says {arch}", params=("device", "arch")
        )
    if cu_count is not None and cu_count != dev.compute_units:
        raise UsageError(
            f"{{cu_count}} {cu_count} contradicts {{device}} {dev.name}, which has "
            f"{dev.compute_units} CUs (give one of them)",
            params=("cu_count", "device"),
        )
    return dev.compute_units, dev.lds


def decide(
    *,
    arch: str,
    qo_len: int,
    kv_len: int,
    dtype: str = "bf16",
    head_dim_qk: int = 128,
    head_dim_v: int = 128,
    logits_soft_cap: float = 0.0,
    window_left: int = -1,
    causal: bool = False,
    group_mode: bool = False,
    bf16_cvt: int = 0,
    capturing: bool = False,
    env: Mapping[str, str] | None = None,
    asm_dir: str | None = None,
    cu_count: int | None = None,
    lds_bytes: int | None = None,
    device: str | None = None,
) -> GateDecision:
    """FlashInfer's asm-prefill gate plus amdocc's static validation of the kernel AITER would load.

    ``arch`` is the device's gcnArchName (features allowed); ``capturing`` whether the stream is
    being captured into a graph (a failed capture query counts as capturing); ``env`` defaults to
    os.environ; ``asm_dir`` overrides AITER_ASM_DIR; ``cu_count`` and ``lds_bytes`` describe the
    device, or ``device`` names it (a product of tables/devices.toml, a processor of ``arch``,
    giving both; a ``cu_count`` that contradicts it is a UsageError). The decision's
    ``as_dict()`` is what ``amdocc gate --json`` prints.
    """
    get_target(arch)  # a processor the tables do not know is an error, not "never asm"
    if device is not None:
        cu_count, lds_bytes = _device_facts(arch, device, cu_count)
    env = os.environ if env is None else env
    names = _table()["env"]
    proc = processor_name(arch)
    decision = GateDecision(CK_TILE, proc)
    add = decision.checks.append

    threshold = min_qo_len(proc)
    if threshold is None:
        add(Check("threshold", False, f"{proc} never routes to asm (no qo_len threshold)"))
    else:
        add(Check("threshold", qo_len >= threshold, f"qo_len {qo_len} against {proc}'s threshold {threshold}"))
    switch = env.get(names["kill_switch"])
    add(
        Check(
            "kill switch",
            switch != "0",
            f"{names['kill_switch']} is "
            + ("unset" if switch is None else f"{switch!r}")
            + (" (pins CK Tile)" if switch == "0" else ""),
        )
    )
    add(
        Check(
            "graph capture",
            not capturing,
            "the stream is capturing: AITER would load a module mid-capture" if capturing else "not capturing",
        )
    )
    window = normalize_window(window_left, kv_len)
    takes = _table()["eligible"]
    dtypes, head_dims = " or ".join(takes["dtypes"]), ", ".join(f"{qk}/{v}" for qk, v in takes["head_dims"])
    problems = [
        text
        for bad, text in (
            (dtype not in takes["dtypes"], f"dtype {dtype} (asm v3 takes {dtypes} only)"),
            (
                (head_dim_qk, head_dim_v) not in takes["head_dims"],
                f"head dims {head_dim_qk}/{head_dim_v} (asm v3 takes {head_dims})",
            ),
            (bool(logits_soft_cap), f"logits soft cap {logits_soft_cap}"),
            (window >= 0, f"sliding window {window_left} (narrower than kv_len {kv_len})"),
        )
        if bad
    ]
    add(
        Check(
            "eligible",
            not problems,
            "; ".join(problems) or f"{dtype}, head dims {head_dim_qk}/{head_dim_v}, no soft cap, no window",
        )
    )
    directory = asm_dir if asm_dir is not None else env.get(names["asm_dir"], "")
    add(Check("AITER_ASM_DIR", bool(directory), f"AITER_ASM_DIR={directory!r}"))

    if directory and not problems:  # an ineligible shape has no asm kernel to look for
        try:
            kernel = find_asm_kernel(
                directory,
                proc,
                dtype=dtype,
                hdim_q=head_dim_qk,
                hdim_v=head_dim_v,
                causal=causal,
                group_mode=group_mode,
                bf16_cvt=bf16_cvt,
                cu_count=cu_count,
            )
        except NotFound as exc:
            add(Check("kernel lookup", False, str(exc)))
        else:
            decision.kernel = kernel
            add(Check("kernel lookup", True, f"{kernel.knl_name} in {kernel.path}"))
            block = _table()["aiter"]["block_size"].get(f"hd{head_dim_qk}")
            checks, decision.blocks_per_cu = validate_asm_kernel(kernel, arch, lds_bytes=lds_bytes, block_size=block)
            decision.checks.extend(checks)
    if all(c.ok for c in decision.checks):
        decision.route = ASM
    return decision
