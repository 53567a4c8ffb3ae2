#!/usr/bin/env python3
"""Regenerates sim/isa-list/<target>.tsv: every compute instruction LLVM 19 knows for gfx90a,
gfx942, gfx1100 and gfx1201, straight from LLVM's own AMDGPU disassembler.

Why a sweep and not LLVM's MC test files: the issue asks for "every instruction that LLVM 19's
AMDGPU tests assemble or disassemble" (llvm/test/MC/AMDGPU, llvm/test/MC/Disassembler/AMDGPU).
Those tests check LLVM's decoder tables; the tables themselves are the complete source (a test
file can only name what the tables decode). The llvm-project snapshot is too large to fetch
here, so the list comes from the tables through LLVM 19's C disassembler API (libLLVM-19, the
library llvm-objdump-19 and llvm-mc-19 use): every opcode value of every compute encoding is
decoded with a few operand templates (all registers 0; VGPR sources; the DPP16, DPP8 and SDWA
forms), and each (mnemonic, encoding family) LLVM decodes is kept with its first encoding.
The examples are then assembled into one object (`llvm-mc-19 -filetype=obj`) and disassembled
with `llvm-objdump-19 -d`, whose text the TSV records (the simulator's disassembler must print
exactly that).

Compute only: export, interpolation (v_interp_*, VINTERP, LDSDIR), and image/sample (MIMG,
VIMAGE, VSAMPLE) encodings are not swept; the v_interp_* that gfx9's VOP3 space holds are
dropped by name.

Columns: family, mnemonic, words (hex, as llvm-objdump prints them), llvm-objdump-19 text.
Run from the repository root: `python3 scripts/isa-list.py` (needs llvm-19 installed).
"""

import ctypes
import os
import struct
import subprocess
import sys
import tempfile

LIB = os.environ.get("LIBLLVM", "/usr/lib/llvm-19/lib/libLLVM-19.so")
MC = os.environ.get("LLVM_MC", "llvm-mc-19")
OBJDUMP = os.environ.get("LLVM_OBJDUMP", "llvm-objdump-19")
TARGETS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
OUT = "sim/isa-list"

V = 0x100  # operand code of v0
DPP16 = 0xFF00E400  # quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf, src v0
DPP16_SHARE = 0xFF015000  # gfx90a row_newbcast:0 (the 64-bit DPP control), gfx11 row_share:0
DPP8 = 0xFAC688 << 8  # dpp8:[0,1,2,3,4,5,6,7], src v0
SDWA = 0x06060600  # src0_sel:DWORD src1_sel:DWORD dst_sel:DWORD, src v0
VSRC3 = V | (V << 9) | (V << 18)  # VOP3 word 1: v0, v0, v0


class Disasm:
    def __init__(self, cpu):
        lib = ctypes.CDLL(LIB)
        for f in (
            "LLVMInitializeAMDGPUTargetInfo",
            "LLVMInitializeAMDGPUTargetMC",
            "LLVMInitializeAMDGPUDisassembler",
        ):
            getattr(lib, f)()
        lib.LLVMCreateDisasmCPU.restype = ctypes.c_void_p
        lib.LLVMCreateDisasmCPU.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                                            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        lib.LLVMDisasmInstruction.restype = ctypes.c_size_t
        lib.LLVMDisasmInstruction.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64,
                                              ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
        self.lib = lib
        self.dc = lib.LLVMCreateDisasmCPU(b"amdgcn-amd-amdhsa", cpu.encode(), None, 0, None, None)
        if not self.dc:
            sys.exit(f"LLVM has no disassembler for {cpu}")
        self.buf = ctypes.create_string_buffer(512)

    def __call__(self, words):
        """(bytes consumed, text) of the instruction at `words`, or (0, None)."""
        b = struct.pack(f"<{len(words) + 3}I", *words, 0, 0, 0)
        n = self.lib.LLVMDisasmInstruction(self.dc, b, len(b), 0, self.buf, len(self.buf))
        if n == 0:
            return 0, None
        return n, self.buf.value.decode().strip()


def bits(v, lo):
    return v << lo


def families(target):
    """(family, opcode count, fn(op) -> list of candidate word lists) for one target."""
    gfx9 = target in ("gfx90a", "gfx942")
    gfx12 = target == "gfx1201"
    F = []

    def add(name, count, gen):
        F.append((name, count, gen))

    # Scalar ALU: the same layout on every family.
    add("SOP2", 0x60, lambda op: [[0x80000000 | bits(op, 23)],
                                  [0x80000000 | bits(op, 23) | 0x0200]])
    add("SOPK", 0x1D, lambda op: [[0xB0000000 | bits(op, 23)],
                                  [0xB0000000 | bits(op, 23) | 0x0001]])
    add("SOP1", 0x100, lambda op: [[0xBE800000 | bits(op, 8)],
                                   [0xBE800000 | bits(op, 8) | 0x00020002]])
    add("SOPC", 0x80, lambda op: [[0xBF000000 | bits(op, 16)],
                                  [0xBF000000 | bits(op, 16) | 0x0202]])
    add("SOPP", 0x80, lambda op: [[0xBF800000 | bits(op, 16)],
                                  [0xBF800000 | bits(op, 16) | 1]])
    # Scalar memory.
    if gfx9:
        # imm=1 offset 0; soffset forms; glc.
        add("SMEM", 0x100, lambda op: [[0xC0000000 | bits(op, 18) | bits(1, 17), 0],
                                       [0xC0000000 | bits(op, 18), 0],
                                       [0xC0000000 | bits(op, 18) | bits(1, 17) | 0x80, 0]])
    elif gfx12:
        add("SMEM", 0x100, lambda op: [[0xF4000000 | bits(op, 13), 0xF8000000],
                                       [0xF4000000 | bits(op, 13) | 0x80, 0xF8000000],
                                       [0xF4000000 | bits(op, 13), 0]])
    else:
        add("SMEM", 0x100, lambda op: [[0xF4000000 | bits(op, 18), 0xF8000000],
                                       [0xF4000000 | bits(op, 18) | 0x80, 0xF8000000],
                                       [0xF4000000 | bits(op, 18), 0]])
    # Vector ALU, 32-bit encodings and their DPP/SDWA forms.
    vop2n = 0x3F if gfx9 else 0x3E

    def vop(enc):
        def gen(op):
            w = {"VOP2": bits(op, 25), "VOP1": 0x7E000000 | bits(op, 9),
                 "VOPC": 0x7C000000 | bits(op, 17)}[enc]
            return [[w | V], [w]]  # src0 v0 or s0; vsrc1 v0
        return gen

    for enc, n in (("VOP2", vop2n), ("VOP1", 0x100), ("VOPC", 0x100)):
        add(enc, n, vop(enc))

    def vop_dpp(enc, marker, ctrls):
        base = vop(enc)

        def gen(op):
            w = base(op)[0][0] & ~0x1FF | marker
            return [[w, c] for c in ctrls]
        return gen

    for enc, n in (("VOP2", vop2n), ("VOP1", 0x100), ("VOPC", 0x100)):
        add(enc + "_DPP16", n, vop_dpp(enc, 0xFA, [DPP16, DPP16_SHARE]))
        if gfx9:
            sdwa = SDWA & 0x00FFFFFF if enc == "VOP1" else SDWA
            add(enc + "_SDWA", n, vop_dpp(enc, 0xF9, [sdwa, sdwa | 0x8000]))
        else:
            add(enc + "_DPP8", n, vop_dpp(enc, 0xE9, [DPP8]))
    # VOP3 (10-bit opcode) and VOP3P (7-bit).
    vop3 = 0xD0000000 if gfx9 else 0xD4000000
    vop3n = 0x380 if gfx9 else 0x400
    add("VOP3", vop3n, lambda op: [[vop3 | bits(op, 16), VSRC3], [vop3 | bits(op, 16), 0],
                                   [vop3 | bits(op, 16), V | (V << 9)]])
    if not gfx9:
        def vop3_dpp(marker, ctrls):
            def gen(op):
                w1 = VSRC3 & ~0x1FF | marker
                w1b = (V << 9) | marker  # src1 v0, src2 s0
                return [[vop3 | bits(op, 16), w, c] for w in (w1, w1b) for c in ctrls]
            return gen
        add("VOP3_DPP16", vop3n, vop3_dpp(0xFA, [DPP16]))
        add("VOP3_DPP8", vop3n, vop3_dpp(0xE9, [DPP8]))
    vop3p = 0xD3800000 if gfx9 else 0xCC000000
    # op_sel_hi set for every source (bits 59,60 and 14), as LLVM's defaults; and clear.
    add("VOP3P", 0x80, lambda op: [[vop3p | bits(op, 16) | 0x4000, VSRC3 | 0x18000000],
                                   [vop3p | bits(op, 16), VSRC3],
                                   [vop3p | bits(op, 16) | 0x8000, VSRC3 | 0x18000000],
                                   [vop3p | bits(op, 16), 0]])
    if not gfx9:
        def vop3p_dpp(marker, ctrls):
            def gen(op):
                w1 = VSRC3 & ~0x1FF | marker | 0x18000000
                return [[vop3p | bits(op, 16) | 0x4000, w1, c] for c in ctrls]
            return gen
        add("VOP3P_DPP16", 0x80, vop3p_dpp(0xFA, [DPP16]))
        add("VOP3P_DPP8", 0x80, vop3p_dpp(0xE9, [DPP8]))
        # VOPD: each X opcode paired with v_dual_mov_b32 as Y (opcode 8) and each Y opcode with
        # v_dual_mov_b32 as X (opcode 8); vdstx v0, vdsty v1 (field 0), sources v0..v3.
        def vopd(x, y):
            # vsrc1 of a half without a second source must be 0 (LLVM refuses the word).
            c = []
            for s1x, s1y in ((1, 3), (1, 0), (0, 3), (0, 0)):
                w0 = 0xC8000000 | bits(x, 22) | bits(y, 17) | V | bits(s1x, 9)
                c.append([w0, (V + 2) | bits(s1y, 9)])
            return c
        add("VOPD_X", 16, lambda op: vopd(op, 8))
        add("VOPD_Y", 32, lambda op: vopd(8, op))
    # LDS.
    ds_op = 17 if gfx9 else 18
    add("DS", 0x100, lambda op: [[0xD8000000 | bits(op, ds_op), 0],
                                 [0xD8000000 | bits(op, ds_op), 0x02000100],
                                 [0xD8000000 | bits(op, ds_op) | (1 << (16 if gfx9 else 17)), 0]])
    # FLAT / GLOBAL / SCRATCH.
    if gfx12:
        for name, pre in (("FLAT", 0xEC000000), ("SCRATCH", 0xED000000), ("GLOBAL", 0xEE000000)):
            add(name, 0x80, lambda op, pre=pre: [[pre | bits(op, 14) | 0x7C, 0, 0],
                                                 [pre | bits(op, 14), 0, 0],
                                                 [pre | bits(op, 14) | 0x7C, 0x20000, 0]])
    else:
        segs = (("FLAT", 0), ("SCRATCH", 1), ("GLOBAL", 2))
        off = 0x7F if gfx9 else 0x7C
        seg_lo = 14 if gfx9 else 16
        for name, seg in segs:
            def gen(op, seg=seg):
                w0 = 0xDC000000 | bits(op, 18) | bits(seg, seg_lo)
                c = [[w0, bits(off, 16)], [w0, 0]]
                if target == "gfx942" and seg == 1:
                    c.append([w0 | (1 << 13), bits(off, 16)])
                if not gfx9 and seg == 1:
                    c.append([w0, bits(off, 16) | (1 << 23)])
                return c
            add(name, 0x80, gen)
    # Buffers.
    if gfx12:
        # VBUFFER: op[21:14]; tbuffer opcodes 0x80.. have a format in word 1 [31:25].
        add("MUBUF", 0x100, lambda op: [[0xC4000000 | bits(op, 14) | 0x7C, 0x00800000 | 0x7C000000, 0],
                                        [0xC4000000 | bits(op, 14), 0x00800000, 0],
                                        [0xC4000000 | bits(op, 14) | 0x7C, 0x40800000, 0]])
    else:
        mubuf_op_bits = 7 if gfx9 else 8
        add("MUBUF", 1 << mubuf_op_bits, lambda op: [[0xE0000000 | bits(op, 18), 0x80000000],
                                                     [0xE0000000 | bits(op, 18), 0],
                                                     [0xE0000000 | bits(op, 18) | 0x10000, 0]])
        mtbuf_fmt = bits(1, 19) if gfx9 else bits(22, 19)
        add("MTBUF", 0x10, lambda op: [[0xE8000000 | bits(op, 15) | mtbuf_fmt, 0x80000000],
                                       [0xE8000000 | bits(op, 15) | mtbuf_fmt, 0]])
    return F


EXCLUDED_PREFIXES = ("v_interp_", "exp ", "image_", "lds_param_load", "lds_direct_load")


def family_of(enc, mnemonic):
    """Refines the swept encoding into the issue's families by the mnemonic."""
    base = mnemonic
    for pre, fam in (("v_mfma_", "MFMA"), ("v_smfmac_", "SMFMAC"), ("v_wmma_", "WMMA"),
                     ("v_swmmac_", "SWMMAC")):
        if base.startswith(pre):
            return fam
    if enc in ("FLAT", "GLOBAL", "SCRATCH"):
        return mnemonic.split("_", 1)[0].upper()
    if enc == "MUBUF" and mnemonic.startswith("tbuffer_"):
        return "MTBUF"
    return enc


def sweep(target):
    dis = Disasm(target)
    found = {}  # (family, mnemonic) -> words
    for enc, count, gen in families(target):
        for op in range(count):
            for words in gen(op):
                n, text = dis(words)
                # Shorter than the template: LLVM read another form (a VOP1 without operands
                # ignores an SDWA/DPP marker).
                if n < 4 * len(words):
                    continue
                m = text.split()[0]
                if text.startswith("v_dual_"):
                    x, y = [h.split()[0] for h in text.split("::")]
                    m = x if enc == "VOPD_X" else y
                if any(text.startswith(p) for p in EXCLUDED_PREFIXES):
                    continue
                key = (family_of(enc, m), m)
                if key not in found:
                    found[key] = (words + [0, 0, 0])[: n // 4]
    return found


def objdump_text(target, found):
    """llvm-objdump-19's text of every example, in `found`'s order (assembled as .long)."""
    keys = list(found)
    src = ".text\n" + "".join(
        "".join(f".long {w:#010x}\n" for w in found[k]) for k in keys)
    with tempfile.TemporaryDirectory() as d:
        s, o = os.path.join(d, "a.s"), os.path.join(d, "a.o")
        with open(s, "w") as f:
            f.write(src)
        subprocess.run([MC, "-arch=amdgcn", f"-mcpu={target}", "-filetype=obj", s, "-o", o],
                       check=True)
        out = subprocess.run([OBJDUMP, "-d", f"--mcpu={target}", o], check=True,
                             capture_output=True, text=True).stdout
    lines = []
    for line in out.splitlines():
        if "//" not in line or not line.startswith(("\t", " ")):
            continue
        text, rest = line.split("//", 1)
        text = " ".join(text.split())
        if text.endswith(">") and " <" in text:
            text = text[: text.rindex(" <")]
        words = [int(w, 16) for w in rest.split(":", 1)[1].split() if not w.startswith("<")]
        lines.append((text, words))
    if len(lines) != len(keys):
        sys.exit(f"{target}: objdump printed {len(lines)} instructions for {len(keys)} examples")
    rows = []
    for k, (text, words) in zip(keys, lines):
        if words != found[k]:
            sys.exit(f"{target}: {k}: objdump decoded {words} for {found[k]}")
        rows.append((k[0], k[1], words, text))
    return rows


ORDER = ["SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P",
         "VOP1_DPP16", "VOP2_DPP16", "VOPC_DPP16", "VOP1_DPP8", "VOP2_DPP8", "VOPC_DPP8",
         "VOP3_DPP16", "VOP3_DPP8", "VOP3P_DPP16", "VOP3P_DPP8", "VOP1_SDWA", "VOP2_SDWA",
         "VOPC_SDWA", "VOPD_X", "VOPD_Y", "DS", "FLAT", "GLOBAL", "SCRATCH", "MUBUF", "MTBUF",
         "MFMA", "SMFMAC", "WMMA", "SWMMAC"]


def main():
    os.makedirs(OUT, exist_ok=True)
    for target in TARGETS:
        rows = objdump_text(target, sweep(target))
        rows.sort(key=lambda r: (ORDER.index(r[0]), r[1]))
        path = os.path.join(OUT, f"{target}.tsv")
        with open(path, "w") as f:
            f.write("# family\tmnemonic\twords\tllvm-objdump-19 text "
                    "(generated by scripts/isa-list.py from LLVM 19's decoder)\n")
            for fam, m, words, text in rows:
                f.write(f"{fam}\t{m}\t{' '.join(f'{w:08X}' for w in words)}\t{text}\n")
        counts = {}
        for r in rows:
            counts[r[0]] = counts.get(r[0], 0) + 1
        print(f"{path}: {len(rows)} instructions: "
              + ", ".join(f"{k} {counts[k]}" for k in ORDER if k in counts))


if __name__ == "__main__":
    main()
