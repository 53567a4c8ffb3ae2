#!/usr/bin/env python3
"""Golden vectors for the differential ISA test (sim/tests/isa_diff.rs), computed by an
executor that shares no code with hcq-sim's interpreter: tinygrad's RDNA emulator
(test/mockgpu/amd/emu.py, MIT licence), which compiles the pseudo-code of AMD's ISA documents
(tinygrad/runtime/autogen/amd/*/str_pcode.py, extracted from the ISA PDFs) into C and runs it.

For every instruction of the chosen families on the target's LLVM list (sim/isa-list/<target>.tsv)
the script rewrites the register fields to a fixed layout, generates operand vectors (seeded
random values and edge lists per operand type: denormals, NaN payloads, +-0, +-inf, integer
extremes, shift counts at and above the width), sets EXEC to a mask with inactive lanes, runs
the one instruction on the reference and writes every register the instruction can write
(sim/tests/isa_diff/<target>.tsv). The Rust test replays each line on hcq-sim and compares bit
for bit; the test needs neither Python nor the reference.

Register layout (both sides; sim/tests/isa_diff.rs has the same constants):
  sources  src0 = v10 / s10, src1 = v12 / s12, src2 = v14 / s14 (64-bit operands: pairs);
           VGPRs v10..v15 and SGPRs s10..s15 all hold vector values;
  results  vdst = v20 (v20..v21), SDST of SALU = s20 (s20..s21), SGPR results of VALU
           (VOPC e64, VOP3SD carry-out, readlane, readfirstlane) = s24 (s24..s25);
  before   v20/v21 hold OLD(reg, lane) = 0xDEAD0000 | reg << 8 | lane, s20/s21/s24/s25 hold
           0x5EED0000 | reg, so lanes that EXEC leaves off and halves a 16-bit write keeps are
           checked too.

Usage (the reference is not vendored; check it out at the pinned commit):
  git clone https://github.com/tinygrad/tinygrad /tmp/tg && git -C /tmp/tg checkout <COMMIT>
  CC=clang-19 python3 scripts/isa-diff.py --tinygrad /tmp/tg --target gfx1100
"""
import argparse
import ctypes
import os
import random
import struct
import subprocess
import sys

TINYGRAD_COMMIT = "a9069c177a9da9cca18593edf55acd2e6073cca6"
ARCH = {"gfx1100": "rdna3", "gfx1201": "rdna4"}
FAMILIES = ("SOP1", "SOP2", "SOPC", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
# Instructions whose effect is not a function of registers alone (program counter, messages,
# register indexing through M0, traps) or that do nothing: not compared.
SKIP = {
    "s_getpc_b64": "reads the program counter",
    "s_setpc_b64": "jumps",
    "s_swappc_b64": "jumps",
    "s_rfe_b64": "returns from a trap",
    "s_sendmsg_rtn_b32": "asks the SPI for a value",
    "s_sendmsg_rtn_b64": "asks the SPI for a value",
    "s_movrels_b32": "indexes registers by M0",
    "s_movrels_b64": "indexes registers by M0",
    "s_movreld_b32": "indexes registers by M0",
    "s_movreld_b64": "indexes registers by M0",
    "s_movrelsd_2_b32": "indexes registers by M0",
    "v_movrels_b32_e32": "indexes registers by M0",
    "v_movreld_b32_e32": "indexes registers by M0",
    "v_movrelsd_b32_e32": "indexes registers by M0",
    "v_movrelsd_2_b32_e32": "indexes registers by M0",
    "v_movrels_b32_e64": "indexes registers by M0",
    "v_movreld_b32_e64": "indexes registers by M0",
    "v_movrelsd_b32_e64": "indexes registers by M0",
    "v_movrelsd_2_b32_e64": "indexes registers by M0",
    "v_nop": "does nothing",
    "v_pipeflush": "does nothing",
    "v_illegal": "traps",
    "s_barrier_init": "a named barrier, not a register function",
    "s_barrier_join": "a named barrier, not a register function",
    "s_barrier_leave": "a named barrier, not a register function",
    "s_barrier_signal": "a named barrier, not a register function",
    "s_barrier_signal_isfirst": "a named barrier, not a register function",
    "s_get_barrier_state": "a named barrier, not a register function",
    "s_wakeup_barrier": "a named barrier, not a register function",
    "s_sleep_var": "sleeps",
}
LANES = 32
SRC_REG = {"src0": 10, "ssrc0": 10, "src1": 12, "vsrc1": 12, "ssrc1": 12, "src2": 14}
VDST, SDST, VSDST = 20, 20, 24
VCC, M0, EXEC, SCC_IDX = 106, 125, 126, 253  # tinygrad keeps SCC at sgpr 253
SGPRS_IN = [10, 11, 12, 13, 14, 15, 20, 21, 24, 25, VCC, M0]
SGPRS_OUT = [10, 11, 12, 13, 14, 15, 20, 21, 24, 25, VCC, M0]
VGPRS_IN = [10, 11, 12, 13, 14, 15]
VGPRS_OUT = [10, 11, 12, 13, 14, 15, 20, 21]
SOP_RUNS = 16
INLINE = [0x80, 0x81, 0xC1, 0xF0, 0xF1, 0xF2, 0xF3, 0xF6, 0xF7, 0xF8, 0xBF]


def old_v(reg, lane):
    return 0xDEAD0000 | reg << 8 | lane


def old_s(reg):
    return 0x5EED0000 | reg


def f32b(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64b(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


F32_EDGE = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
            0x7FA12345, 0xFFD23456, 0x7FFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x00400000,
            0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000,
            0x4F000000, 0x4F800000, 0xCF000000, 0xCF000001, 0x5F000000, 0x3F7FFFFF, 0x4B800000,
            0x3EFFFFFF, 0x3F400000, 0xC0400000, 0x477FE000, 0x477FF000, 0x38800000, 0x33800000]
F16_EDGE = [0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D23, 0xFE45, 0x0001,
            0x8001, 0x03FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x3BFF,
            0x6800, 0x7800, 0xF800, 0x3E00, 0xC200]
F64_EDGE = [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0xFFF8 << 48,
            0x7FF0000000000001, 0x7FF4000012345678, 0xFFF80000ABCDEF01, 1, (1 << 63) | 1,
            0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
            f64b(1.0), f64b(-1.0), f64b(0.5), f64b(2.0 ** 31), f64b(2.0 ** 32), f64b(-2.0 ** 31),
            f64b(-2.0 ** 31 - 1), f64b(2.0 ** 63), f64b(2.0 ** 64), f64b(4294967295.5),
            f64b(0.49999999999999994), f64b(1.5), f64b(-2.5), f64b(3.4028234663852886e38),
            f64b(3.5e38), f64b(1e-40), f64b(65504.0), f64b(65520.0)]
I32_EDGE = [0, 1, 2, 0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFFFF, 0x80000000, 0x80000001, 15, 16, 17,
            31, 32, 33, 63, 64, 65, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x00FFFFFF,
            0x01000000, 0x00800000, 0xFF800000, 0xAAAAAAAA, 0x55555555]
I16_EDGE = [0, 1, 2, 0xFFFF, 0xFFFE, 0x7FFF, 0x8000, 0x8001, 15, 16, 17, 31, 32, 0xFF, 0x100]
I64_EDGE = [0, 1, (1 << 64) - 1, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, 31, 32, 63, 64, 65,
            127, 128, 0xFFFFFFFF, 1 << 32, (1 << 32) + 1, 0x8000000000000001 >> 1,
            0xAAAAAAAAAAAAAAAA]


def edge_of(fmt):
    if "F32" in fmt and "PK" not in fmt:
        return F32_EDGE, 32
    if fmt in ("FMT_NUM_F64",):
        return F64_EDGE, 64
    if fmt in ("FMT_NUM_F16", "FMT_NUM_BF16"):
        return F16_EDGE, 16
    if fmt in ("FMT_NUM_I16", "FMT_NUM_U16", "FMT_NUM_B16"):
        return I16_EDGE, 16
    if fmt in ("FMT_NUM_I64", "FMT_NUM_U64", "FMT_NUM_B64", "FMT_NUM_M64"):
        return I64_EDGE, 64
    if "PK2_F16" in fmt or "PK2_BF16" in fmt:
        return F16_EDGE, -16
    if "PK2" in fmt:
        return I16_EDGE, -16
    return I32_EDGE, 32


def rand_float_bits(rng, bits):
    """A moderate normal float (exponent within +-24) or a random bit pattern."""
    if rng.random() < 0.3:
        return rng.getrandbits(bits)
    x = rng.uniform(-1, 1) * 2.0 ** rng.randint(-24, 24)
    if bits == 16:
        x = max(min(x, 60000.0), -60000.0)
        return struct.unpack("<H", struct.pack("<e", x))[0]
    return f32b(x) if bits == 32 else f64b(x)


def value(rng, fmt, width):
    """One operand value of `width` bits (32 or 64) for an operand of format `fmt`."""
    edge, bits = edge_of(fmt)
    isf = "F" in fmt.replace("FMT_", "")
    if width == 64 and abs(bits) < 64:
        bits = 32
    def one(b):
        if rng.random() < 0.5:
            return rng.choice(edge)
        if isf:
            return rand_float_bits(rng, b)
        r = rng.random()
        if r < 0.4:
            return rng.getrandbits(b)
        if r < 0.7:
            return rng.randint(0, 70)
        return (-rng.randint(1, 70)) & ((1 << b) - 1)
    if bits == -16:
        return one(16) | one(16) << 16
    if bits == 16:
        return one(16) | rng.getrandbits(16) << 16
    if bits == 32 and width == 64:
        return one(32) | rng.getrandbits(32) << 32
    return one(bits)


def load_reference(path):
    head = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip()
    if head != TINYGRAD_COMMIT:
        sys.exit(f"isa-diff: {path} is at {head or 'no git commit'}, the golden files pin "
                 f"tinygrad {TINYGRAD_COMMIT}\nnext: git -C {path} checkout {TINYGRAD_COMMIT}")
    sys.path.insert(0, path)
    from test.mockgpu.amd import emu  # noqa: E402
    from tinygrad.device import Buffer, BufferSpec  # noqa: E402
    from tinygrad.dtype import dtypes  # noqa: E402
    from tinygrad.renderer.amd import decode_inst  # noqa: E402
    return emu, Buffer, BufferSpec, dtypes, decode_inst


class Ref:
    """Runs one instruction on tinygrad's emulator from a chosen wave state."""

    def __init__(self, path, arch):
        self.emu, Buffer, BufferSpec, dtypes, self.decode = load_reference(path)
        self.arch = arch
        self.vmem = Buffer("CPU", 1 << 40, dtypes.uint32,
                           options=BufferSpec(external_ptr=0)).ensure_allocated()
        self.lds = Buffer("CPU", 16384, dtypes.uint32).ensure_allocated()

    def run(self, words, sgprs, vgprs, exec_mask, scc):
        emu = self.emu
        st = emu.WaveState(LANES, LANES)
        for k, v in sgprs.items():
            st._write_sgpr(k, v)
        st._write_sgpr(EXEC, exec_mask)
        st._write_sgpr(SCC_IDX, scc)
        for (r, lane), v in vgprs.items():
            st._write_vgpr(r, lane, v)
        code = b"".join(struct.pack("<I", w) for w in words) + b"\0" * 16
        buf = ctypes.create_string_buffer(code, len(code))
        st.pc = ctypes.addressof(buf)
        (prg, rt), _ = emu._decode_at(st.pc, self.arch)
        bufs = [ctypes.c_uint64(st.sgpr_buf._buf.va_addr), ctypes.c_uint64(st.vgpr_buf._buf.va_addr),
                ctypes.c_uint64(self.vmem._buf.va_addr), ctypes.c_uint64(self.lds._buf.va_addr),
                ctypes.c_uint64(0), ctypes.c_uint64(st.accvgpr_buf._buf.va_addr)]
        rt.fxn(*[bufs[g] for g in prg.arg.globals])
        s = {k: st._read_sgpr(k) for k in SGPRS_OUT}
        s["exec"] = st._read_sgpr(EXEC)
        s["scc"] = st._read_sgpr(SCC_IDX) & 1
        v = {(r, lane): st._read_vgpr(r, lane) for r in VGPRS_OUT for lane in range(LANES)}
        return s, v


def setf(raw, cls, name, val):
    f = getattr(cls, name)
    mask = (1 << (f.hi - f.lo + 1)) - 1
    return raw & ~(mask << f.lo) | (val & mask) << f.lo


def is_sreg(optype, fmt):
    return optype in ("OPR_SREG", "OPR_SSRC", "OPR_SDST", "OPR_SREG_NOVCC", "OPR_SSRC_LANESEL",
                      "OPR_SSRC_NOLIT") or fmt == "FMT_NUM_M64"


def shape(ref, words):
    inst = ref.decode(b"".join(struct.pack("<I", w) for w in words) + b"\0" * 8, ref.arch)
    table = inst.operands
    if not table:  # the VOP3 form of a VOP1/VOP2/VOPC: the operands of the e32 form
        mod = sys.modules[type(inst).__module__.rsplit(".", 1)[0] + ".operands"]
        want = inst.op.name + "_E32"
        table = next((v for k, v in mod.OPERANDS.items() if k.name == want), {})
        table = {("src1" if k == "vsrc1" else k): v for k, v in table.items()}
    if type(inst).__name__.startswith("VOP3"):
        table = {{"vsrc0": "src0", "vsrc1": "src1"}.get(k, k): v for k, v in table.items()}
    ops = {k: (v[0].name, v[1], v[2].name) for k, v in table.items()}
    if type(inst).__name__ == "VOP3_SDST":
        ops["vdst"] = ("FMT_NUM_M64", 64, "OPR_SREG")
    return inst, ops


def llvm_text(mcpu, words):
    """llvm-mc-19's disassembly of `words`, or None when LLVM calls the encoding invalid."""
    b = b"".join(struct.pack("<I", w) for w in words)
    r = subprocess.run(["llvm-mc-19", "-arch=amdgcn", f"-mcpu={mcpu}", "-disassemble"],
                       input=",".join(f"0x{x:02x}" for x in b), capture_output=True, text=True,
                       check=False)
    if "invalid" in r.stderr or r.returncode != 0:
        return None
    t = [ln.strip() for ln in r.stdout.splitlines() if ln.strip() and ln.strip() != ".text"]
    return t[0] if len(t) == 1 else None


def legal_mods(mcpu, inst, words, plain):
    """The modifier bits of `words` that LLVM decodes and prints (clamp, op_sel, neg/abs);
    the others are cleared, so every case is an encoding LLVM accepts."""
    cls = type(inst)
    size = inst.size()
    def pack(raw):
        b = raw.to_bytes(size, "little")
        return [int.from_bytes(b[i:i + 4], "little") for i in range(0, size, 4)]
    raw = int.from_bytes(b"".join(struct.pack("<I", w) for w in words)[:size], "little")
    base = int.from_bytes(b"".join(struct.pack("<I", w) for w in plain)[:size], "little")
    groups = [("omod", "mul:"), ("clmp", "clamp"), ("opsel", "op_sel"), ("opsel_hi", "op_sel_hi"),
              ("opsel_hi2", "op_sel_hi"), ("neg", "neg"), ("neg_hi", "neg_hi"), ("abs", "|")]
    groups = [g for g in groups if hasattr(cls, g[0])]
    for _ in range(len(groups) + 1):
        t = llvm_text(mcpu, pack(raw))
        bad = None
        if t is None:
            bad = next((g for g in groups if getattr(cls, g[0]) and field(raw, cls, g[0])
                        != field(base, cls, g[0])), None)
        else:
            for g in groups:
                if field(raw, cls, g[0]) != field(base, cls, g[0]):
                    shown = g[1] in t or (g[0] == "neg" and ("-v" in t or "-|" in t or "neg_lo" in t)) \
                        or (g[0] == "omod" and "div:2" in t)
                    if not shown:
                        bad = g
                        break
            if bad is None:
                return pack(raw)
        if bad is None:
            return plain
        raw = setf(raw, cls, bad[0], field(base, cls, bad[0]))
        groups.remove(bad)
    return plain


def field(raw, cls, name):
    f = getattr(cls, name)
    return raw >> f.lo & ((1 << (f.hi - f.lo + 1)) - 1)


def encode(inst, ops, kind, rng):
    """Words of `inst` with the register layout and, for `kind` 'mods'/'sgpr', modifiers."""
    cls = type(inst)
    size = inst.size()
    raw = int.from_bytes(inst.to_bytes()[:size], "little")
    fields = [n for n in ("src0", "src1", "src2", "vsrc1", "ssrc0", "ssrc1") if hasattr(cls, n)]
    nsrc = {"src0": 0, "src1": 1, "src2": 2, "vsrc1": 1}
    float_op = any("F" in ops.get(n, ("FMT_ANY",))[0].replace("FMT_", "") for n in fields + ["vdst"])
    used = []
    for n in fields:
        if n.startswith("ssrc"):
            raw = setf(raw, cls, n, SRC_REG[n])
            used.append((n, "s"))
            continue
        if n not in ops and n != "vsrc1":
            continue  # src2 of a two-source VOP3 stays as LLVM encodes it
        fmt, _, opt = ops.get(n, ("FMT_ANY", 32, "OPR_VGPR"))
        reg = SRC_REG[n]
        if n == "vsrc1":
            raw = setf(raw, cls, n, reg)
            used.append((n, "v"))
        elif is_sreg(opt, fmt):
            raw = setf(raw, cls, n, reg)
            used.append((n, "s"))
        elif kind == "sgpr" and n == "src1":
            raw = setf(raw, cls, n, reg)
            used.append((n, "s"))
        elif kind == "sgpr" and n == "src2":
            raw = setf(raw, cls, n, rng.choice(INLINE))
            used.append((n, "c"))
        else:
            raw = setf(raw, cls, n, 256 + reg)
            used.append((n, "v"))
    if hasattr(cls, "vdst") and "CMPX" not in inst.op.name:  # V_CMPX writes EXEC only
        fmt, _, opt = ops.get("vdst", ("FMT_ANY", 32, "OPR_VGPR"))
        raw = setf(raw, cls, "vdst", VSDST if is_sreg(opt, fmt) else VDST)
    if hasattr(cls, "sdst"):
        raw = setf(raw, cls, "sdst", VSDST if cls.__name__.startswith("VOP") else SDST)
    plain_raw = raw
    if kind == "mods":
        n = sum(1 for u in used if u[0].startswith("src"))
        if hasattr(cls, "opsel_hi"):  # VOP3P
            raw = setf(raw, cls, "opsel", rng.getrandbits(3))
            raw = setf(raw, cls, "opsel_hi", rng.getrandbits(2))
            raw = setf(raw, cls, "opsel_hi2", rng.getrandbits(1))
            if float_op:
                raw = setf(raw, cls, "neg", rng.getrandbits(3) & ((1 << n) - 1))
                raw = setf(raw, cls, "neg_hi", rng.getrandbits(3) & ((1 << n) - 1))
            raw = setf(raw, cls, "clmp", rng.getrandbits(1))
        elif hasattr(cls, "clmp"):
            if float_op and hasattr(cls, "abs"):
                raw = setf(raw, cls, "abs", rng.getrandbits(3) & ((1 << n) - 1))
            if float_op:
                raw = setf(raw, cls, "neg", rng.getrandbits(3) & ((1 << n) - 1))
            if cls.__name__ != "VOP3_SDST":
                raw = setf(raw, cls, "clmp", 1)
            if hasattr(cls, "opsel") and any(ops.get(k, ("", 32))[1] == 16 for k in ops):
                raw = setf(raw, cls, "opsel", rng.getrandbits(4))
            # omod on f32/f64 results (from its own generator, so the other draws stay put);
            # the reference does not implement omod: `apply_omod` does, per the guide.
            if hasattr(cls, "omod") and ops.get("vdst", ("",))[0] in ("FMT_NUM_F32", "FMT_NUM_F64"):
                orng = random.Random(f"omod:{inst.op.name}")
                raw = setf(raw, cls, "omod", orng.randint(0, 3))
    b = raw.to_bytes(size, "little")
    return [int.from_bytes(b[i:i + 4], "little") for i in range(0, size, 4)], used, plain_raw


def apply_omod(ref, inst, ops, words, sg, vg, exec_mask, scc):
    """Runs `words` on the reference without omod and clamp, then applies them as the guide
    does (the result times 2, 4 or 0.5, rounded to the result's precision, then clamp to
    [0, 1] with NaN to 0) to the enabled lanes' f32/f64 result."""
    cls = type(inst)
    raw = int.from_bytes(b"".join(struct.pack("<I", w) for w in words), "little")
    k = [1.0, 2.0, 4.0, 0.5][field(raw, cls, "omod")]
    clamp = field(raw, cls, "clmp")
    raw = setf(setf(raw, cls, "omod", 0), cls, "clmp", 0)
    b = raw.to_bytes(inst.size(), "little")
    s, v = ref.run([int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b), 4)],
                   sg, vg, exec_mask, scc)
    wide = ops["vdst"][0] == "FMT_NUM_F64"
    for lane in range(LANES):
        if not exec_mask >> lane & 1:
            continue
        if wide:
            x = struct.unpack("<d", struct.pack("<Q", v[(VDST, lane)] | v[(VDST + 1, lane)] << 32))[0]
        else:
            x = struct.unpack("<f", struct.pack("<I", v[(VDST, lane)]))[0]
        if x != x and not clamp:
            continue  # a NaN stays itself, payload and all
        x = 0.0 if x != x else x * k
        if clamp:
            x = 1.0 if x > 1.0 else 0.0 if x < 0.0 else x
        if wide:
            bits = struct.unpack("<Q", struct.pack("<d", x))[0]
            v[(VDST, lane)], v[(VDST + 1, lane)] = bits & 0xFFFFFFFF, bits >> 32
        else:
            try:
                v[(VDST, lane)] = struct.unpack("<I", struct.pack("<f", x))[0]
            except OverflowError:
                v[(VDST, lane)] = 0x7F800000 if x > 0 else 0xFF800000
    return s, v


def case_state(rng, ops, used, salu):
    """SGPR and VGPR inputs of one case."""
    sg = {k: rng.getrandbits(32) for k in SGPRS_IN}
    for k in (20, 21, 24, 25):
        sg[k] = old_s(k)
    sg[M0] = 0
    vg = {}
    for n, where in used:
        if where == "c":
            continue
        fmt, bits, _ = ops.get(n, ("FMT_ANY", 32, ""))
        width = 64 if bits == 64 else 32
        reg = SRC_REG[n]
        if where == "s":
            x = value(rng, fmt, width)
            sg[reg] = x & 0xFFFFFFFF
            if width == 64:
                sg[reg + 1] = x >> 32
        else:
            for lane in range(LANES):
                x = value(rng, fmt, width)
                vg[(reg, lane)] = x & 0xFFFFFFFF
                if width == 64:
                    vg[(reg + 1, lane)] = x >> 32
    for r in VGPRS_IN:
        for lane in range(LANES):
            vg.setdefault((r, lane), 0)
    for r in (VDST, VDST + 1):
        for lane in range(LANES):
            vg[(r, lane)] = old_v(r, lane)
    if salu:
        exec_mask = 0xFFFFFFFF
    else:
        exec_mask = rng.getrandbits(32) | rng.getrandbits(32) | 1
    scc = rng.getrandbits(1)
    return sg, vg, exec_mask, scc


def hexs(x):
    return format(x, "x")


def line(target_row, kind, words, sg, vg, exec_mask, scc, out_s, out_v):
    ins = " ".join(f"s{k}={hexs(sg[k])}" for k in SGPRS_IN) + f" exec={hexs(exec_mask)} scc={scc}"
    vin = " ".join(f"v{r}=" + ",".join(hexs(vg[(r, lane)]) for lane in range(LANES))
                   for r in VGPRS_IN if any(vg[(r, lane)] for lane in range(LANES)))
    outs = []
    for k in SGPRS_OUT:
        before = sg[k]
        if out_s[k] != before:
            outs.append(f"s{k}={hexs(out_s[k])}")
    if out_s["exec"] != exec_mask:
        outs.append(f"exec={hexs(out_s['exec'])}")
    outs.append(f"scc={out_s['scc']}")
    for r in VGPRS_OUT:
        lanes = [out_v[(r, lane)] for lane in range(LANES)]
        if any(lanes[lane] != vg[(r, lane)] for lane in range(LANES)):
            outs.append(f"v{r}=" + ",".join(hexs(x) for x in lanes))
    return "\t".join([target_row, kind, " ".join(f"{w:08X}" for w in words), ins, vin or "-",
                      " ".join(outs)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tinygrad", required=True, help=f"tinygrad checkout at {TINYGRAD_COMMIT}")
    ap.add_argument("--target", default="gfx1100", choices=sorted(ARCH))
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--only", help="comma-separated mnemonics (for debugging)")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ref = Ref(a.tinygrad, ARCH[a.target])
    rows, listed = [], set()
    with open(os.path.join(root, "sim", "isa-list", f"{a.target}.tsv")) as f:
        for ln in f:
            if ln.startswith("#") or not ln.strip():
                continue
            fam, mn, w, _ = ln.rstrip("\n").split("\t")
            if fam in FAMILIES:
                listed.add(mn)
            if fam in FAMILIES and mn not in SKIP:
                rows.append((fam, mn, [int(x, 16) for x in w.split()]))
    only = set(a.only.split(",")) if a.only else None
    out, skipped = [], []
    for fam, mn, words in rows:
        if only and mn not in only:
            continue
        rng = random.Random(f"{a.seed}:{a.target}:{mn}")
        try:
            inst, ops = shape(ref, words)
        except Exception as e:  # the reference cannot decode it
            skipped.append(f"{mn}: decode: {e}")
            continue
        salu = fam.startswith("SOP")
        if salu:
            kinds = ["plain"] * SOP_RUNS
        elif fam == "VOP3" or fam == "VOP3P":
            kinds = ["plain", "mods", "sgpr"]
        else:
            kinds = ["plain"]
        lines = []
        try:
            for kind in kinds:
                ws, used, plain_raw = encode(inst, ops, kind, rng)
                if kind == "mods":
                    b = plain_raw.to_bytes(inst.size(), "little")
                    plain = [int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b), 4)]
                    ws = legal_mods(a.target, inst, ws, plain)
                sg, vg, ex, scc = case_state(rng, ops, used, salu)
                omod = field(int.from_bytes(b"".join(struct.pack("<I", w) for w in ws), "little"),
                             type(inst), "omod") if hasattr(type(inst), "omod") and not salu else 0
                if omod:
                    s, v = apply_omod(ref, inst, ops, ws, sg, vg, ex, scc)
                else:
                    s, v = ref.run(ws, sg, vg, ex, scc)
                lines.append(line(f"{fam}\t{mn}", kind, ws, sg, vg, ex, scc, s, v))
        except Exception as e:  # the reference does not execute it
            skipped.append(f"{mn}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        out.extend(lines)
    dst = os.path.join(root, "sim", "tests", "isa_diff", f"{a.target}.tsv")
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if only:  # replace the lines of these instructions in the existing file
        keep = [ln.rstrip("\n") for ln in open(dst) if not ln.startswith("#")
                and ln.split("\t")[1] not in only]
        out = keep + out
    out.sort(key=lambda ln: (ln.split("\t")[1], ln.split("\t")[0]))  # stable: cases in order
    with open(dst, "w") as f:
        f.write(f"# {a.target}: generated by scripts/isa-diff.py (seed {a.seed}) from tinygrad "
                f"{TINYGRAD_COMMIT} test/mockgpu/amd/emu.py\n")
        f.write("# family\tmnemonic\tcase\twords\tsgprs/exec/scc before\tvgprs before "
                "(v20/v21: OLD)\tregisters after that differ from before (scc always)\n")
        for ln in out:
            f.write(ln + "\n")
    if only:
        return
    with open(os.path.join(os.path.dirname(dst), f"unreferenced-{a.target}.txt"), "w") as f:
        f.write(f"# {a.target}: listed instructions of {', '.join(FAMILIES)} the reference "
                "does not decode or execute, and those not compared (scripts/isa-diff.py SKIP)\n")
        for s in skipped:
            f.write(s + "\n")
        for k, why in sorted((k, w) for k, w in SKIP.items() if k in listed):
            f.write(f"{k}: not compared: {why}\n")
    print(f"{a.target}: {len(out)} cases, {len({l.split(chr(9))[1] for l in out})} instructions, "
          f"{len(skipped)} unreferenced", file=sys.stderr)


if __name__ == "__main__":
    main()
