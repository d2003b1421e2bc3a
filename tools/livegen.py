"""Seeded generator of LLVM IR kernels with the shapes register liveness must get right.

Each kernel is a random composition of pieces: counted loops (nested, with float and integer
accumulators), divergent and uniform if/else with phis, early returns, LDS stores/loads around
a barrier, LDS and global atomics with and without a used result, wide vector loads and stores
(register tuples), SGPR-heavy uniform integer chains on the kernel arguments, 64-bit integer and
double arithmetic (carry pairs, ``v_mad_u64_u32``), float division (``v_div_scale``), DPP,
``readlane``/``writelane``, ``ds_bpermute``, 16-bit loads into vector halves (``_d16`` loads),
half arithmetic (true16 on gfx11+), ``permlane16`` (gfx10+), ``permlane32.swap`` (gfx950),
LDS DMA (gfx9 CDNA), MFMA accumulators (AGPRs on CDNA), and live ranges long enough to spill under
a small ``amdgpu-num-vgpr``/``amdgpu-num-sgpr`` budget (scratch spills, SGPR spills into VGPR lanes).

Independent of amdocc (an oracle-side tool): it writes IR text and nothing else. llc-22 compiles it
(tests/oracle/mir.py) and prints the final machine IR that the liveness pass is checked against.

    python3 tools/livegen.py --seed 1 --target gfx942 --count 3 > k.ll
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field

# What each processor may be asked for (intrinsics llc-22 selects for it).
CDNA = {"gfx908", "gfx90a", "gfx942", "gfx950"}
MFMA = {  # (intrinsic, A/B type, C type)
    "gfx908": ("llvm.amdgcn.mfma.f32.32x32x8f16", "<4 x half>", "<16 x float>"),
    "gfx90a": ("llvm.amdgcn.mfma.f32.32x32x8f16", "<4 x half>", "<16 x float>"),
    "gfx942": ("llvm.amdgcn.mfma.f32.32x32x8f16", "<4 x half>", "<16 x float>"),
    "gfx950": ("llvm.amdgcn.mfma.f32.32x32x8f16", "<4 x half>", "<16 x float>"),
}
LDS_DMA = {"gfx908", "gfx90a", "gfx942", "gfx950"}
PERMLANE16 = {"gfx1030", "gfx1100", "gfx1201", "gfx1250"}
PERMLANE32_SWAP = {"gfx950"}

TARGETS = ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1201", "gfx1250")

PIECES = (
    "loop",
    "branch",
    "uniform_branch",
    "early_return",
    "lds",
    "atomic",
    "wide",
    "scalar",
    "int64",
    "double",
    "divide",
    "dpp",
    "lanes",
    "bpermute",
    "d16",
    "half",
    "permlane16",
    "permlane32_swap",
    "lds_dma",
    "mfma",
    "pressure",
)


@dataclass
class Builder:
    target: str
    rng: random.Random
    lines: list[str] = field(default_factory=list)
    block: str = "entry"
    counter: int = 0
    floats: list[str] = field(default_factory=list)
    ints: list[str] = field(default_factory=list)  # divergent i32 values
    uniform: list[str] = field(default_factory=list)  # uniform i32 values
    longs: list[str] = field(default_factory=list)
    declares: set[str] = field(default_factory=set)

    def name(self, stem: str) -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def label(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def start(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    def f(self) -> str:
        return self.rng.choice(self.floats)

    def i(self) -> str:
        return self.rng.choice(self.ints)

    def u(self) -> str:
        return self.rng.choice(self.uniform)

    def gep_in(self, index: str, ty: str = "float") -> str:
        p = self.name("p")
        self.emit(f"{p} = getelementptr {ty}, ptr addrspace(1) %in, i32 {index}")
        return p

    def load_float(self, index: str) -> str:
        v = self.name("ld")
        self.emit(f"{v} = load float, ptr addrspace(1) {self.gep_in(index)}, align 4")
        self.floats.append(v)
        return v

    def fop(self) -> str:
        v = self.name("f")
        op = self.rng.choice(["fadd", "fmul", "fsub"])
        self.emit(f"{v} = {op} float {self.f()}, {self.f()}")
        self.floats.append(v)
        return v

    def iop(self) -> str:
        v = self.name("i")
        op = self.rng.choice(["add", "xor", "mul", "shl", "and", "or"])
        rhs = self.i() if op != "shl" else str(self.rng.randrange(1, 5))
        self.emit(f"{v} = {op} i32 {self.i()}, {rhs}")
        self.ints.append(v)
        return v


def _straight(b: Builder, n: int) -> None:
    for _ in range(n):
        b.fop() if b.rng.random() < 0.6 else b.iop()


def piece_loop(b: Builder, depth: int) -> None:
    pre = b.block
    head, exit_ = b.label("loop"), b.label("after")
    init_f, init_i = b.f(), b.i()
    b.emit(f"br label %{head}")
    b.start(head)
    iv, acc, iacc = b.name("iv"), b.name("acc"), b.name("iacc")
    phi_at = len(b.lines)
    saved = (len(b.floats), len(b.ints))
    b.floats.append(acc)
    b.ints.append(iacc)
    ld = b.load_float(iv)
    _straight(b, b.rng.randrange(1, 4))
    if depth < 2 and b.rng.random() < 0.35:
        piece_loop(b, depth + 1)
    elif b.rng.random() < 0.4:
        piece_branch(b, uniform=b.rng.random() < 0.5)
    acc_n, iacc_n, iv_n, c = b.name("accn"), b.name("iaccn"), b.name("ivn"), b.name("c")
    b.emit(f"{acc_n} = fadd float {acc}, {b.f()}")
    b.emit(f"{iacc_n} = add i32 {iacc}, {b.i()}")
    b.emit(f"{iv_n} = add i32 {iv}, 1")
    b.emit(f"{c} = icmp slt i32 {iv_n}, %n")
    latch = b.block
    b.emit(f"br i1 {c}, label %{head}, label %{exit_}")
    b.lines[phi_at:phi_at] = [
        f"  {iv} = phi i32 [0, %{pre}], [{iv_n}, %{latch}]",
        f"  {acc} = phi float [{init_f}, %{pre}], [{acc_n}, %{latch}]",
        f"  {iacc} = phi i32 [{init_i}, %{pre}], [{iacc_n}, %{latch}]",
    ]
    del ld
    b.start(exit_)
    # Values of the loop body dominate the exit (the latch is the only way out).
    del b.floats[saved[0] :]
    del b.ints[saved[1] :]
    b.floats.append(acc_n)
    b.ints.append(iacc_n)


def piece_branch(b: Builder, uniform: bool = False) -> None:
    c = b.name("c")
    if uniform:
        b.emit(f"{c} = icmp sgt i32 {b.u()}, {b.rng.randrange(0, 64)}")
    elif b.rng.random() < 0.5:  # divergent against uniform: the SGPR is v_cmpx's first source
        b.emit(f"{c} = icmp slt i32 {b.i()}, {b.u()}")
    else:
        b.emit(f"{c} = icmp slt i32 {b.i()}, {b.rng.randrange(1, 64)}")
    then, other, merge = b.label("then"), b.label("else"), b.label("merge")
    b.emit(f"br i1 {c}, label %{then}, label %{other}")
    saved = (len(b.floats), len(b.ints))
    results = []
    for arm in (then, other):
        b.start(arm)
        _straight(b, b.rng.randrange(1, 4))
        if b.rng.random() < 0.3:
            b.load_float(b.i())
        results.append((b.fop(), b.block))
        b.emit(f"br label %{merge}")
        del b.floats[saved[0] :]
        del b.ints[saved[1] :]
    b.start(merge)
    v = b.name("phi")
    b.emit(f"{v} = phi float [{results[0][0]}, %{results[0][1]}], [{results[1][0]}, %{results[1][1]}]")
    b.floats.append(v)


def piece_early_return(b: Builder) -> None:
    c = b.name("c")
    b.emit(f"{c} = icmp eq i32 {b.i()}, {b.rng.randrange(0, 7)}")
    ret, cont = b.label("ret"), b.label("cont")
    b.emit(f"br i1 {c}, label %{ret}, label %{cont}")
    b.start(ret)
    p = b.name("q")
    b.emit(f"{p} = getelementptr float, ptr addrspace(1) %out, i32 {b.i()}")
    b.emit(f"store float {b.f()}, ptr addrspace(1) {p}, align 4")
    b.emit("ret void")
    b.start(cont)


def piece_lds(b: Builder) -> None:
    idx = b.name("li")
    b.emit(f"{idx} = and i32 {b.i()}, 255")
    p = b.name("lp")
    b.emit(f"{p} = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 {idx}")
    b.emit(f"store float {b.f()}, ptr addrspace(3) {p}, align 4")
    b.emit("call void @llvm.amdgcn.s.barrier()")
    b.declares.add("declare void @llvm.amdgcn.s.barrier()")
    j = b.name("lj")
    b.emit(f"{j} = xor i32 {idx}, 1")
    q = b.name("lq")
    b.emit(f"{q} = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 {j}")
    v = b.name("lv")
    b.emit(f"{v} = load float, ptr addrspace(3) {q}, align 4")
    b.floats.append(v)


def piece_atomic(b: Builder) -> None:
    for space, base in (("3", "@lds_i"), ("1", "%out")):
        if space == "3":
            p = b.name("ap")
            idx = b.name("ai")
            b.emit(f"{idx} = and i32 {b.i()}, 63")
            b.emit(f"{p} = getelementptr [64 x i32], ptr addrspace(3) {base}, i32 0, i32 {idx}")
        else:
            p = b.name("ap")
            b.emit(f"{p} = getelementptr i32, ptr addrspace(1) {base}, i32 {b.i()}")
        op = b.rng.choice(["add", "max", "or", "xchg"])
        r = b.name("ar")
        b.emit(f'{r} = atomicrmw {op} ptr addrspace({space}) {p}, i32 {b.i()} syncscope("agent") monotonic, align 4')
        if b.rng.random() < 0.5:
            b.ints.append(r)  # the result is used: the returning form
    if b.rng.random() < 0.5:
        p = b.name("cp")
        b.emit(f"{p} = getelementptr i32, ptr addrspace(1) %out, i32 {b.i()}")
        r = b.name("cx")
        b.emit(f'{r} = cmpxchg ptr addrspace(1) {p}, i32 {b.i()}, i32 {b.i()} syncscope("agent") monotonic monotonic')
        v = b.name("cv")
        b.emit(f"{v} = extractvalue {{ i32, i1 }} {r}, 0")
        b.ints.append(v)


def piece_wide(b: Builder) -> None:
    width = b.rng.choice([2, 4, 8, 16])
    p = b.name("wp")
    b.emit(f"{p} = getelementptr <{width} x float>, ptr addrspace(1) %in, i32 {b.i()}")
    v = b.name("wv")
    b.emit(f"{v} = load <{width} x float>, ptr addrspace(1) {p}, align 16")
    for k in b.rng.sample(range(width), min(3, width)):
        e = b.name("we")
        b.emit(f"{e} = extractelement <{width} x float> {v}, i32 {k}")
        b.floats.append(e)
    w = b.name("ww")
    b.emit(f"{w} = insertelement <{width} x float> {v}, float {b.f()}, i32 {b.rng.randrange(width)}")
    q = b.name("wq")
    b.emit(f"{q} = getelementptr <{width} x float>, ptr addrspace(1) %out, i32 {b.i()}")
    b.emit(f"store <{width} x float> {w}, ptr addrspace(1) {q}, align 16")


def piece_scalar(b: Builder) -> None:
    for _ in range(b.rng.randrange(3, 9)):
        v = b.name("s")
        op = b.rng.choice(["add", "mul", "xor", "sub", "lshr", "and"])
        rhs = b.u() if op != "lshr" else str(b.rng.randrange(1, 8))
        b.emit(f"{v} = {op} i32 {b.u()}, {rhs}")
        b.uniform.append(v)
    p = b.name("sp")
    b.emit(f"{p} = getelementptr i32, ptr addrspace(1) %in, i32 {b.u()}")
    v = b.name("sl")
    b.emit(f"{v} = load i32, ptr addrspace(1) {p}, align 4")  # a scalar load (uniform address)
    b.uniform.append(v)
    m = b.name("sm")
    b.emit(f"{m} = add i32 {v}, {b.i()}")
    b.ints.append(m)


def piece_int64(b: Builder) -> None:
    a, c = b.name("za"), b.name("zb")
    b.emit(f"{a} = zext i32 {b.i()} to i64")
    b.emit(f"{c} = zext i32 {b.i()} to i64")
    m = b.name("zm")
    b.emit(f"{m} = mul i64 {a}, {c}")
    s = b.name("zs")
    b.emit(f"{s} = add i64 {m}, %m")
    t = b.name("zt")
    b.emit(f"{t} = lshr i64 {s}, {b.rng.randrange(1, 40)}")
    r = b.name("zr")
    b.emit(f"{r} = trunc i64 {t} to i32")
    b.ints.append(r)
    b.longs.append(s)


def piece_double(b: Builder) -> None:
    d, e = b.name("da"), b.name("db")
    b.emit(f"{d} = fpext float {b.f()} to double")
    b.emit(f"{e} = fpext float {b.f()} to double")
    r = b.name("dr")
    b.emit(f"{r} = call double @llvm.fma.f64(double {d}, double {e}, double {d})")
    b.declares.add("declare double @llvm.fma.f64(double, double, double)")
    t = b.name("dt")
    b.emit(f"{t} = fptrunc double {r} to float")
    b.floats.append(t)


def piece_divide(b: Builder) -> None:
    v = b.name("dv")
    b.emit(f"{v} = fdiv float {b.f()}, {b.f()}")
    b.floats.append(v)
    w = b.name("ud")
    b.emit(f"{w} = udiv i32 {b.i()}, {b.u()}")
    b.ints.append(w)


def piece_dpp(b: Builder) -> None:
    v = b.name("dp")
    ctrl = b.rng.choice([0x111, 0x121, 0x1E, 0x141])
    masks = b.rng.choice([(15, 15, "true"), (15, 15, "false"), (10, 15, "false")])
    b.emit(f"{v} = call i32 @llvm.amdgcn.update.dpp.i32(i32 {b.i()}, i32 {b.i()}, i32 {ctrl}, "
           f"i32 {masks[0]}, i32 {masks[1]}, i1 {masks[2]})")  # fmt: skip
    b.declares.add("declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)")
    b.ints.append(v)


def piece_lanes(b: Builder) -> None:
    r = b.name("rl")
    b.emit(f"{r} = call i32 @llvm.amdgcn.readlane.i32(i32 {b.i()}, i32 {b.rng.randrange(0, 32)})")
    b.declares.add("declare i32 @llvm.amdgcn.readlane.i32(i32, i32)")
    b.uniform.append(r)
    w = b.name("wl")
    b.emit(f"{w} = call i32 @llvm.amdgcn.writelane.i32(i32 {b.u()}, i32 {b.rng.randrange(0, 32)}, i32 {b.i()})")
    b.declares.add("declare i32 @llvm.amdgcn.writelane.i32(i32, i32, i32)")
    b.ints.append(w)


def piece_bpermute(b: Builder) -> None:
    v = b.name("bp")
    a = b.name("ba")
    b.emit(f"{a} = shl i32 {b.i()}, 2")
    b.emit(f"{v} = call i32 @llvm.amdgcn.ds.bpermute(i32 {a}, i32 {b.i()})")
    b.declares.add("declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)")
    b.ints.append(v)


def piece_d16(b: Builder) -> None:
    p = b.name("hp")
    b.emit(f"{p} = getelementptr i16, ptr addrspace(1) %in, i32 {b.i()}")
    h = b.name("h")
    b.emit(f"{h} = load i16, ptr addrspace(1) {p}, align 2")
    base = b.name("hb")
    b.emit(f"{base} = bitcast i32 {b.i()} to <2 x i16>")
    ins = b.name("hi")
    b.emit(f"{ins} = insertelement <2 x i16> {base}, i16 {h}, i32 {b.rng.randrange(2)}")
    r = b.name("hr")
    b.emit(f"{r} = bitcast <2 x i16> {ins} to i32")
    b.ints.append(r)


def piece_half(b: Builder) -> None:
    a, c = b.name("ha"), b.name("hc")
    b.emit(f"{a} = fptrunc float {b.f()} to half")
    b.emit(f"{c} = fptrunc float {b.f()} to half")
    m = b.name("hm")
    b.emit(f"{m} = fmul half {a}, {c}")
    s = b.name("hs")
    b.emit(f"{s} = fadd half {m}, {a}")
    r = b.name("hx")
    b.emit(f"{r} = fpext half {s} to float")
    b.floats.append(r)


def piece_permlane16(b: Builder) -> None:
    v = b.name("pl")
    fn = b.rng.choice(["permlane16", "permlanex16"])
    args = f"i32 {b.i()}, i32 {b.i()}, i32 {b.u()}, i32 {b.u()}, i1 false, i1 false"
    b.emit(f"{v} = call i32 @llvm.amdgcn.{fn}.i32({args})")
    b.declares.add(f"declare i32 @llvm.amdgcn.{fn}.i32(i32, i32, i32, i32, i1, i1)")
    b.ints.append(v)


def piece_permlane32_swap(b: Builder) -> None:
    r = b.name("sw")
    b.emit(f"{r} = call {{ i32, i32 }} @llvm.amdgcn.permlane32.swap(i32 {b.i()}, i32 {b.i()}, i1 false, i1 false)")
    b.declares.add("declare { i32, i32 } @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)")
    for k in (0, 1):
        v = b.name("swv")
        b.emit(f"{v} = extractvalue {{ i32, i32 }} {r}, {k}")
        b.ints.append(v)


def piece_lds_dma(b: Builder) -> None:
    p = b.name("gp")
    b.emit(f"{p} = getelementptr i32, ptr addrspace(1) %in, i32 {b.i()}")
    b.emit(f"call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) {p}, ptr addrspace(3) @lds, i32 4, i32 0, i32 0)")
    b.declares.add("declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)")
    b.emit("call void @llvm.amdgcn.s.barrier()")
    b.declares.add("declare void @llvm.amdgcn.s.barrier()")
    v = b.name("dl")
    b.emit(f"{v} = load float, ptr addrspace(3) @lds, align 4")
    b.floats.append(v)


def piece_mfma(b: Builder) -> None:
    fn, ab, cty = MFMA[b.target]
    n = int(cty.split()[0].lstrip("<"))
    a = b.name("ma")
    b.emit(f"{a} = insertelement <4 x half> zeroinitializer, half 0xH3C00, i32 {b.rng.randrange(4)}")
    x = b.name("mx")
    b.emit(f"{x} = fptrunc float {b.f()} to half")
    a2 = b.name("ma")
    b.emit(f"{a2} = insertelement <4 x half> {a}, half {x}, i32 0")
    c = b.name("mc")
    b.emit(f"{c} = insertelement {cty} zeroinitializer, float {b.f()}, i32 0")
    acc = c
    for _ in range(b.rng.randrange(1, 4)):
        r = b.name("mr")
        b.emit(f"{r} = call {cty} @{fn}({ab} {a2}, {ab} {a}, {cty} {acc}, i32 0, i32 0, i32 0)")
        acc = r
    b.declares.add(f"declare {cty} @{fn}({ab}, {ab}, {cty}, i32, i32, i32)")
    for k in b.rng.sample(range(n), 3):
        e = b.name("me")
        b.emit(f"{e} = extractelement {cty} {acc}, i32 {k}")
        b.floats.append(e)


def piece_pressure(b: Builder) -> None:
    # Many values loaded early and all used late: long live ranges (spills under a budget).
    for _ in range(b.rng.randrange(8, 40)):
        b.load_float(b.i())
        b.floats.append(b.floats[-1])


def allowed(target: str) -> list[str]:
    out = []
    for p in PIECES:
        if p == "mfma" and target not in MFMA:
            continue
        if p == "lds_dma" and target not in {"gfx942", "gfx950"}:
            continue
        if p == "permlane16" and target not in PERMLANE16:
            continue
        if p == "permlane32_swap" and target not in PERMLANE32_SWAP:
            continue
        out.append(p)
    return out


def kernel(name: str, target: str, rng: random.Random) -> tuple[str, set[str], str]:
    """(IR of one kernel with ``ATTRS`` where its attribute group goes, its declarations, the
    attributes: register budgets that force spills, a workgroup size range)."""
    b = Builder(target, rng)
    b.start("entry")
    tid = b.name("tid")
    b.emit(f"{tid} = call i32 @llvm.amdgcn.workitem.id.x()")
    wg = b.name("wg")
    b.emit(f"{wg} = call i32 @llvm.amdgcn.workgroup.id.x()")
    b.declares |= {"declare i32 @llvm.amdgcn.workitem.id.x()", "declare i32 @llvm.amdgcn.workgroup.id.x()",
                   "declare float @llvm.fma.f32(float, float, float)"}  # fmt: skip
    b.ints.append(tid)
    b.uniform += [wg, "%n"]
    if rng.random() < 0.3:
        y = b.name("tidy")
        b.emit(f"{y} = call i32 @llvm.amdgcn.workitem.id.y()")
        b.declares.add("declare i32 @llvm.amdgcn.workitem.id.y()")
        b.ints.append(y)
    b.load_float(tid)
    b.fop()
    pieces = allowed(target)
    for _ in range(rng.randrange(3, 9)):
        p = rng.choice(pieces)
        if p == "loop":
            piece_loop(b, 0)
        elif p == "branch":
            piece_branch(b)
        elif p == "uniform_branch":
            piece_branch(b, uniform=True)
        else:
            globals()[f"piece_{p}"](b)
    total = b.floats[0]
    for v in b.floats[1:]:
        t = b.name("sum")
        b.emit(f"{t} = fadd float {total}, {v}")
        total = t
    itot = b.ints[0]
    for v in b.ints[1:] + b.uniform[2:]:
        t = b.name("isum")
        b.emit(f"{t} = add i32 {itot}, {v}")
        itot = t
    q = b.name("q")
    b.emit(f"{q} = getelementptr float, ptr addrspace(1) %out, i32 {tid}")
    b.emit(f"store float {total}, ptr addrspace(1) {q}, align 4")
    q2 = b.name("q")
    b.emit(f"{q2} = getelementptr i32, ptr addrspace(1) %out, i32 {itot}")
    b.emit(f"store i32 {itot}, ptr addrspace(1) {q2}, align 4")
    b.emit("ret void")
    attrs = []
    budget = rng.random()
    if budget < 0.2:
        attrs.append(f'"amdgpu-num-vgpr"="{rng.choice([24, 32, 40])}"')
    elif budget < 0.3:
        attrs.append(f'"amdgpu-num-sgpr"="{rng.choice([24, 32])}"')
    if rng.random() < 0.2:
        attrs.append('"amdgpu-flat-work-group-size"="1,1024"')
    body = "\n".join(b.lines)
    text = (
        f"define amdgpu_kernel void @{name}(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n, i64 %m) "
        f"ATTRS {{\n{body}\n}}\n"
    )
    return text, b.declares, " ".join(attrs)


def module(target: str, seed: int, count: int, prefix: str = "k") -> str:
    """One IR module of ``count`` kernels for ``target``, reproducible from ``seed``."""
    rng = random.Random(f"{target}:{seed}")
    parts, declares = [], set()
    for i in range(count):
        text, decl, attrs = kernel(f"{prefix}{seed}_{i}", target, rng)
        parts.append(text.replace("ATTRS", f"#{i}" if attrs else "", 1))
        if attrs:
            parts.append(f"attributes #{i} = {{ {attrs} }}\n")
        declares |= decl
    head = [
        "@lds = internal addrspace(3) global [256 x float] poison, align 16",
        "@lds_i = internal addrspace(3) global [64 x i32] poison, align 16",
    ]
    return "\n".join(head + parts + sorted(declares)) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="gfx942", choices=TARGETS)
    ap.add_argument("--count", type=int, default=4)
    args = ap.parse_args()
    print(module(args.target, args.seed, args.count), end="")


if __name__ == "__main__":
    main()
