//! Text of a decoded instruction in LLVM's syntax (what `llvm-objdump-19 -d` prints), so the
//! decoder can be checked against LLVM's disassembler.

use super::Isa;
use super::decode::{AGPR, Dpp, Enc, Inst, LIT, NONE, SEG_FLAT, SEG_SCRATCH, VGPR};
use super::ops::Op;
use core::fmt::Write;

mod names;
mod vinterp;
use names::{
    delay_alu, depctr, gfx9_name, gfx12_name, gpr_idx, hwreg, imm16 as imm_text, sdwa_sel, sendmsg,
    swizzle, version, waitcnt, waitcnt9,
};

fn is_float(op: Op) -> bool {
    let n = op.name();
    n.ends_with("_f32")
        || n.ends_with("_f64")
        || n.ends_with("_f16")
        || n.contains("_f32_")
        || n.contains("_f16_")
}

/// One operand: `code` spanning `n` registers.
fn operand(code: u16, n: u16, lit: u32, float: bool, wave64: bool) -> String {
    let _ = wave64;
    let reg = |p: &str, r: u16| {
        if n == 1 {
            format!("{p}{r}")
        } else {
            format!("{p}[{r}:{}]", r + n - 1)
        }
    };
    match code {
        0..=105 => reg("s", code),
        106 if n == 2 => "vcc".into(),
        106 => "vcc_lo".into(),
        107 => "vcc_hi".into(),
        108..=123 => reg("ttmp", code - 108),
        124 => "null".into(),
        125 => "m0".into(),
        126 if n == 2 => "exec".into(),
        126 => "exec_lo".into(),
        127 => "exec_hi".into(),
        128..=192 => format!("{}", code - 128),
        193..=208 => format!("-{}", code - 192),
        240..=248 => {
            let v = [
                "0.5",
                "-0.5",
                "1.0",
                "-1.0",
                "2.0",
                "-2.0",
                "4.0",
                "-4.0",
                "0.15915494",
            ];
            let s = v[usize::from(code - 240)];
            let _ = float;
            s.into()
        }
        251 => "src_vccz".into(),
        252 => "src_execz".into(),
        253 => "src_scc".into(),
        LIT => format!("{lit:#x}"),
        NONE => "off".into(),
        c if c >= AGPR => reg("a", c - AGPR),
        c if c >= VGPR => reg("v", c - VGPR),
        c => format!("<operand {c}>"),
    }
}

/// The DPP controls as LLVM prints them after the operands.
fn dpp_text(d: Dpp, gfx9: bool) -> String {
    match d {
        Dpp::Lane8 { sel, fi } => {
            let v: Vec<String> = (0..8).map(|k| ((sel >> (3 * k)) & 7).to_string()).collect();
            format!(" dpp8:[{}]{}", v.join(","), if fi { " fi:1" } else { "" })
        }
        Dpp::Row {
            ctrl,
            row_mask,
            bank_mask,
            bound_ctrl,
            fi,
        } => {
            let n = ctrl & 15;
            let c = match ctrl {
                0..=0xff => {
                    let v: Vec<String> = (0..4)
                        .map(|k| ((ctrl >> (2 * k)) & 3).to_string())
                        .collect();
                    format!("quad_perm:[{}]", v.join(","))
                }
                0x101..=0x10f => format!("row_shl:{n}"),
                0x111..=0x11f => format!("row_shr:{n}"),
                0x121..=0x12f => format!("row_ror:{n}"),
                0x130 => "wave_shl:1".into(),
                0x134 => "wave_rol:1".into(),
                0x138 => "wave_shr:1".into(),
                0x13c => "wave_ror:1".into(),
                0x140 => "row_mirror".into(),
                0x141 => "row_half_mirror".into(),
                0x142 => "row_bcast:15".into(),
                0x143 => "row_bcast:31".into(),
                0x150..=0x15f => format!("row_share:{n}"),
                0x160..=0x16f => format!("row_xmask:{n}"),
                c => format!("dpp_ctrl:{c:#x}"),
            };
            let mut s = format!(" {c} row_mask:{row_mask:#x} bank_mask:{bank_mask:#x}");
            if bound_ctrl {
                s.push_str(" bound_ctrl:1");
            }
            if fi && !gfx9 {
                s.push_str(" fi:1");
            }
            s
        }
    }
}

/// Registers of a FLAT-family or MUBUF operation's data and of its destination (loads return
/// as many as they read; atomics the old value, cmpswap half its data).
fn vmem_regs(op: Op) -> (u16, u16) {
    use Op::*;
    match op {
        MLoadB64 | MStoreB64 | MAtomicAddU64 | MAtomicSwapB64 | MAtomicSubU64 | MAtomicMinI64
        | MAtomicMinU64 | MAtomicMaxI64 | MAtomicMaxU64 | MAtomicAndB64 | MAtomicOrB64
        | MAtomicXorB64 | MAtomicAddF64 | MAtomicIncU64 | MAtomicDecU64 | MAtomicMinF64
        | MAtomicMaxF64 => (2, 2),
        MLoadB96 | MStoreB96 => (3, 3),
        MLoadB128 | MStoreB128 => (4, 4),
        MAtomicCmpswapB64 => (4, 2),
        MAtomicCmpswapB32 | MAtomicCmpswapF32 => (2, 1),
        MAtomicOrderedAddB64 => (2, 2),
        MLoadBlock | MStoreBlock => (32, 32),
        // wave32's register counts; wave64 halves them (`Printer::flat`).
        MLoadTrB128 => (4, 4),
        MLoadTrB64 => (2, 2),
        _ => (1, 1),
    }
}

/// The float compare conditions by their 4-bit code (VOPC's and gfx12 SOPC's order).
const FLOAT_CONDS: [&str; 16] = [
    "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt",
    "t",
];

fn vop_name(i: &Inst, gfx9: bool) -> String {
    match i.op {
        Op::VCmpF16
        | Op::VCmpF32
        | Op::VCmpF64
        | Op::VCmpI16
        | Op::VCmpU16
        | Op::VCmpI32
        | Op::VCmpU32
        | Op::VCmpI64
        | Op::VCmpU64 => {
            let float = matches!(i.op, Op::VCmpF16 | Op::VCmpF32 | Op::VCmpF64);
            let conds: &[&str] = if float {
                &FLOAT_CONDS
            } else {
                &["f", "lt", "eq", "le", "gt", "ne", "ge", "t"]
            };
            let ty = &i.op.name()[8..];
            // gfx9 names the always-true float compare `tru`.
            let c = match conds.get(usize::from(i.sub)).copied() {
                Some("t") if float && gfx9 => "tru",
                c => c.unwrap_or("?"),
            };
            format!("v_cmp{}_{c}_{ty}", if i.cmpx { "x" } else { "" })
        }
        Op::VCmpClassF32 | Op::VCmpClassF64 | Op::VCmpClassF16 => {
            format!(
                "v_cmp{}_class_{}",
                if i.cmpx { "x" } else { "" },
                &i.op.name()[12..]
            )
        }
        op => op.name().into(),
    }
}

fn has_e32(op: Op) -> bool {
    !matches!(
        op,
        Op::VFmamkF32
            | Op::VFmaakF32
            | Op::VFmamkF16
            | Op::VFmaakF16
            | Op::VMadmkF32
            | Op::VMadakF32
            | Op::VMadmkF16
            | Op::VMadakF16
            | Op::VReadfirstlaneB32
            | Op::VAccvgprMovB32
            | Op::VSwapB32
            | Op::VPermlane64B32
            | Op::VSwaprelB32
    )
}

/// LLVM's text for `i` (gfx11 syntax).
#[must_use]
pub fn disasm(i: &Inst, wave64: bool) -> String {
    disasm_for(Isa::Gfx11, i, wave64)
}

/// LLVM's text for `i` of `isa` (gfx9 as gfx90a prints it, gfx11, gfx12).
#[must_use]
pub fn disasm_for(isa: Isa, i: &Inst, wave64: bool) -> String {
    disasm_target(isa, false, i, wave64)
}

/// MTBUF's format as LLVM prints it (nothing for the default: gfx9's DFMT 1 NFMT 0, gfx10+'s
/// BUF_FMT_8_UNORM), symbolic where LLVM has a name (AMDGPUAsmUtils' DfmtSymbolic,
/// NfmtSymbolicVI, UfmtSymbolicGFX11).
fn buf_format(isa: Isa, f: u8) -> String {
    if isa == Isa::Gfx9 {
        const DFMT: [&str; 16] = [
            "INVALID",
            "8",
            "16",
            "8_8",
            "32",
            "16_16",
            "10_11_11",
            "11_11_10",
            "10_10_10_2",
            "2_10_10_10",
            "8_8_8_8",
            "32_32",
            "16_16_16_16",
            "32_32_32",
            "32_32_32_32",
            "RESERVED_15",
        ];
        const NFMT: [&str; 8] = [
            "UNORM",
            "SNORM",
            "USCALED",
            "SSCALED",
            "UINT",
            "SINT",
            "RESERVED_6",
            "FLOAT",
        ];
        let (d, n) = (usize::from(f & 15), usize::from(f >> 4));
        let mut parts = Vec::new();
        if d != 1 {
            parts.push(format!("BUF_DATA_FORMAT_{}", DFMT[d]));
        }
        if n != 0 {
            parts.push(format!("BUF_NUM_FORMAT_{}", NFMT[n]));
        }
        return if parts.is_empty() {
            String::new()
        } else {
            format!(" format:[{}]", parts.join(","))
        };
    }
    match crate::isa::decode::UFMT_NAMES.get(usize::from(f)) {
        _ if f == 1 => String::new(),
        Some(n) => format!(" format:[BUF_FMT_{n}]"),
        None => format!(" format:{f}"),
    }
}

/// Registers each operand of `i` spans (the matrix table's for matrix instructions).
fn regs_of(i: &Inst) -> (u16, [u16; 3]) {
    match (i.op, crate::isa::mai::of(i.imm)) {
        (Op::VMfma | Op::VWmma, Some(m)) => m.regs(),
        _ => i.op.regs(),
    }
}

/// As [`disasm_for`]; `gfx940` selects gfx940's cache-policy names (sc0, sc1, nt) on gfx9.
#[must_use]
pub fn disasm_target(isa: Isa, gfx940: bool, i: &Inst, wave64: bool) -> String {
    let whole;
    let i = if isa == Isa::Gfx9 {
        i
    } else {
        whole = crate::isa::decode::whole_regs(i);
        &whole
    };
    let p = Printer {
        i,
        isa,
        gfx940,
        wave64,
    };
    match i.enc {
        Enc::Sopp => p.sopp(),
        Enc::Sopk => p.sopk(),
        Enc::Sop1 | Enc::Sop2 | Enc::Sopc => p.salu(),
        Enc::Smem => p.smem(),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3sd => p.valu(),
        Enc::Vop3p => p.vop3p(),
        Enc::Vopd => p.vopd(),
        Enc::Ds => p.ds(),
        Enc::Flat if matches!(i.op, Op::GlobalInv | Op::GlobalWb | Op::GlobalWbinv) => {
            p.cache_ctl()
        }
        Enc::Flat => p.flat(),
        Enc::Mubuf => p.mubuf(),
        Enc::Vinterp => vinterp::text(i, wave64),
    }
}

/// One instruction being printed: what every encoding's printer reads.
struct Printer<'a> {
    i: &'a Inst,
    isa: Isa,
    gfx940: bool,
    wave64: bool,
}

/// The values the encodings' printers share, computed once per instruction.
struct Ctx {
    gfx9: bool,
    gfx12: bool,
    dw: u16,
    mask_n: u16,
    imm16: u32,
}

impl Printer<'_> {
    fn ctx(&self) -> Ctx {
        let i = self.i;
        Ctx {
            gfx9: self.isa == Isa::Gfx9,
            gfx12: self.isa == Isa::Gfx12,
            dw: regs_of(i).0,
            mask_n: if self.wave64 { 2 } else { 1 },
            // CAST: simm16 as the printer shows it.
            imm16: (i.imm as u32) & 0xffff,
        }
    }

    /// The family's mnemonic of `op`.
    fn name(&self, op: Op) -> &'static str {
        match self.isa {
            Isa::Gfx9 => gfx9_name(op).unwrap_or(op.name()),
            Isa::Gfx12 => gfx12_name(op).unwrap_or(op.name()),
            Isa::Gfx11 => op.name(),
        }
    }

    /// Source `k` as its operand text.
    fn op(&self, k: usize) -> String {
        let i = self.i;
        // A 16-bit operation's literal prints as its 16 bits.
        let lit = if i.op.name().ends_with("16") && i.enc != Enc::Vop3p {
            i.lit & 0xffff
        } else {
            i.lit
        };
        operand(i.src[k], regs_of(i).1[k], lit, is_float(i.op), self.wave64)
    }

    /// SOPP: the mnemonic and its immediate as LLVM formats it (waits, delays, messages, branches).
    fn sopp(&self) -> String {
        let i = self.i;
        let Ctx { gfx9, imm16, .. } = self.ctx();
        let mut s = String::new();
        let name = i.op.name();
        s.push_str(name);
        match i.op {
            Op::SWaitcnt => {
                let _ = write!(
                    s,
                    " {}",
                    if gfx9 {
                        waitcnt9(imm16)
                    } else {
                        waitcnt(imm16)
                    }
                );
            }
            Op::SDelayAlu => {
                let _ = write!(s, " {}", delay_alu(imm16));
            }
            Op::SSendmsg | Op::SSendmsghalt => {
                let _ = write!(s, " {}", sendmsg(self.gfx(), imm16));
            }
            Op::SWaitcntDepctr | Op::SWaitAlu => {
                let _ = write!(s, " {}", depctr(imm16));
            }
            Op::SSetGprIdxMode => {
                let _ = write!(s, " {}", gpr_idx(imm16 & 15));
            }
            Op::SBarrierWait | Op::SDenormMode => {
                let _ = write!(s, " {}", imm_text(imm16));
            }
            Op::SEndpgm
            | Op::SBarrier
            | Op::SCodeEnd
            | Op::SIcacheInv
            | Op::SEndpgmSaved
            | Op::SEndpgmOrderedPsDone
            | Op::STtracedata
            | Op::SWaitIdle
            | Op::SWakeup
            | Op::SSetGprIdxOff
            | Op::SBarrierLeave => {}
            Op::SClause
            | Op::SWaitLoadcnt
            | Op::SWaitStorecnt
            | Op::SWaitSamplecnt
            | Op::SWaitBvhcnt
            | Op::SWaitExpcnt
            | Op::SWaitDscnt
            | Op::SWaitKmcnt
            | Op::SWaitLoadcntDscnt
            | Op::SWaitStorecntDscnt
            | Op::SSetInstPrefetchDistance
            | Op::SRoundMode
            | Op::SWaitEvent
            | Op::STtracedataImm
            | Op::SSingleuseVdst => {
                let _ = write!(s, " {imm16:#x}");
            }
            _ => {
                // Branch offsets print as the unsigned 16-bit field.
                let _ = write!(s, " {imm16}");
            }
        }
        s
    }

    /// SOPK: destination and 16-bit immediate (hardware registers, call offsets, versions).
    fn sopk(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { imm16, dw, .. } = self.ctx();
        let name = self.name(i.op);
        let reg = |code: u16, n: u16| operand(code, n, 0, false, wave64);
        match i.op {
            Op::SGetregB32 => format!(
                "{name} {}, {}",
                reg(i.dst, 1),
                hwreg(self.gfx(), self.gfx940, imm16)
            ),
            Op::SSetregB32 => format!(
                "{name} {}, {}",
                hwreg(self.gfx(), self.gfx940, imm16),
                reg(i.src[0], 1)
            ),
            // The literal prints as an inline constant would where it is one (-16..=64).
            Op::SSetregImm32B32 => {
                // CAST: the literal's bits as a signed number.
                let v = i.lit as i32;
                let lit = if (-16..=64).contains(&v) {
                    v.to_string()
                } else {
                    format!("{:#x}", i.lit)
                };
                format!("{name} {}, {lit}", hwreg(self.gfx(), self.gfx940, imm16))
            }
            Op::SVersion => format!("{name} {}", version(imm16)),
            // Branch-like offsets print as the unsigned 16-bit field.
            Op::SCallB64 | Op::SSubvectorLoopBegin | Op::SSubvectorLoopEnd => {
                format!("{name} {}, {imm16}", reg(i.dst, dw))
            }
            Op::SCbranchIFork => format!("{name} {}, {imm16}", reg(i.src[0], 2)),
            _ => format!("{name} {}, {imm16:#x}", reg(i.dst, 1)),
        }
    }

    /// The family number the operand printers key on (9, 11, 12).
    fn gfx(&self) -> u32 {
        match self.isa {
            Isa::Gfx9 => 9,
            Isa::Gfx11 => 11,
            Isa::Gfx12 => 12,
        }
    }

    /// SOP1/SOP2/SOPC: destination and sources (gfx12 float compares named by condition).
    fn salu(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { dw, .. } = self.ctx();
        let name = |op: Op| self.name(op);
        let op = |k: usize| self.op(k);
        let mut s = String::new();
        match i.op {
            Op::SCmpF32 | Op::SCmpF16 => {
                let _ = write!(
                    s,
                    "s_cmp_{}_{}",
                    FLOAT_CONDS[usize::from(i.sub & 15)],
                    &i.op.name()[8..]
                );
            }
            op => s.push_str(name(op)),
        }
        let mut ops = Vec::new();
        match i.op {
            Op::SSendmsgRtnB32 | Op::SSendmsgRtnB64 => {
                // CAST: the 8-bit message field.
                let m = sendmsg(self.gfx(), i.imm as u32);
                let _ = write!(s, " {}, {m}", operand(i.dst, dw, 0, false, wave64));
                return s;
            }
            Op::SSetGprIdxOn => {
                // CAST: the 4-bit mode field.
                let _ = write!(s, " {}, {}", op(0), gpr_idx(i.imm as u32));
                return s;
            }
            _ => {}
        }
        if i.dst != NONE {
            ops.push(operand(i.dst, dw, 0, false, wave64));
        }
        // gfx12's s_fmaak/s_fmamk name a third source (s_fmac's is its destination).
        let n = if matches!(i.op, Op::SFmaakF32 | Op::SFmamkF32) {
            3
        } else {
            2
        };
        for k in 0..n {
            if i.src[k] != NONE {
                ops.push(op(k));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        s
    }

    /// SMEM: destination, base pair, offset register or immediate, cache bits.
    fn smem(&self) -> String {
        use Op::*;
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { gfx9, gfx12, .. } = self.ctx();
        let mut s = String::new();
        // Scalar atomics: the operation's name from Inst::sub.
        const ATOMICS: [&str; 13] = [
            "swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor",
            "inc", "dec",
        ];
        let x2 = i.sub & 32 != 0;
        match i.op {
            SAtomic | SBufferAtomic => {
                let what = ATOMICS.get(usize::from(i.sub & 31)).copied().unwrap_or("?");
                let buf = if i.op == SBufferAtomic { "buffer_" } else { "" };
                let _ = write!(s, "s_{buf}atomic_{what}{}", if x2 { "_x2" } else { "" });
            }
            // gfx9's scalar scratch accesses (`sub` bit 6).
            op if i.sub & 0x40 != 0 => {
                let _ = write!(s, "s_scratch_{}", self.name(op).trim_start_matches("s_"));
            }
            op => s.push_str(self.name(op)),
        }
        let (dn, bn) = match i.op {
            SLoadB64 | SMemtime | SMemrealtime | SBufferLoadB64 | SStoreB64 | SBufferStoreB64 => {
                (2, 2)
            }
            SLoadB96 | SBufferLoadB96 => (3, 2),
            SLoadB128 | SBufferLoadB128 | SStoreB128 | SBufferStoreB128 => (4, 2),
            SLoadB256 | SBufferLoadB256 => (8, 2),
            SLoadB512 | SBufferLoadB512 => (16, 2),
            SAtomic | SBufferAtomic => {
                let n = if x2 { 2 } else { 1 };
                (if i.sub & 31 == 1 { 2 * n } else { n }, 2)
            }
            _ => (1, 2),
        };
        let bn = if matches!(
            i.op,
            SBufferLoadB32
                | SBufferLoadB64
                | SBufferLoadB96
                | SBufferLoadB128
                | SBufferLoadB256
                | SBufferLoadB512
                | SBufferLoadI8
                | SBufferLoadU8
                | SBufferLoadI16
                | SBufferLoadU16
                | SBufferStoreB32
                | SBufferStoreB64
                | SBufferStoreB128
                | SBufferAtomic
                | SAtcProbeBuffer
                | SBufferPrefetchData
        ) {
            4
        } else {
            bn
        };
        let prefetch = matches!(
            i.op,
            SPrefetchInst
                | SPrefetchInstPcRel
                | SPrefetchData
                | SPrefetchDataPcRel
                | SBufferPrefetchData
        );
        let mut ops = Vec::new();
        if matches!(i.op, SAtcProbe | SAtcProbeBuffer) {
            ops.push(format!("{}", i.sub));
        } else if i.src[2] != NONE {
            ops.push(operand(i.src[2], dn, 0, false, wave64));
        } else if i.dst != NONE {
            ops.push(operand(i.dst, dn, 0, false, wave64));
        }
        if i.src[0] != NONE {
            ops.push(operand(i.src[0], bn, 0, false, wave64));
        }
        if i.src[0] != NONE || prefetch {
            let soff = i.src[1];
            if prefetch {
                ops.push(format!("{:#x}", i.imm));
                ops.push(operand(soff, 1, 0, false, wave64));
                ops.push(format!("{}", i.sub));
            } else if soff != 124 && soff != NONE {
                let mut t = operand(soff, 1, 0, false, wave64);
                if i.imm != 0 {
                    let _ = write!(t, " offset:{:#x}", i.imm);
                }
                ops.push(t);
            } else if i.imm == 0 && !gfx12 && !gfx9 {
                ops.push("null".into());
            } else {
                ops.push(format!("{:#x}", i.imm));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        if i.flags & 1 != 0 {
            s.push_str(" glc");
        }
        if i.flags & 4 != 0 {
            s.push_str(" dlc");
        }
        s
    }

    /// VOP1/VOP2/VOPC/VOP3: mnemonic with its encoding suffix, operands, modifiers.
    fn valu(&self) -> String {
        let name = self.valu_name();
        let mut s = name.clone();
        s.push_str(self.valu_suffix());
        let ops = self.valu_operands(&name);
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        s.push_str(&self.valu_modifiers());
        s
    }

    /// The family's VALU mnemonic (compares by condition, gfx940's fused madmk/madak).
    fn valu_name(&self) -> String {
        let i = self.i;
        let renamed = match self.isa {
            Isa::Gfx9 => gfx9_name(i.op),
            Isa::Gfx12 => gfx12_name(i.op),
            Isa::Gfx11 => None,
        };
        match (renamed, i.op) {
            // gfx940 fuses the gfx90a v_madmk/madak_f32 encodings.
            (_, Op::VMadmkF32) if self.gfx940 => "v_fmamk_f32".to_string(),
            (_, Op::VMadakF32) if self.gfx940 => "v_fmaak_f32".to_string(),
            (Some(n), _) => n.to_string(),
            (None, _) => vop_name(i, self.isa == Isa::Gfx9),
        }
    }

    /// `_dpp`, `_sdwa`, `_e32` (a 32-bit encoding) or `_e64` (the VOP3 form of an operation
    /// that also has a 32-bit one), as LLVM names them.
    fn valu_suffix(&self) -> &'static str {
        let i = self.i;
        let Ctx { gfx9, gfx12, .. } = self.ctx();
        let short = matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc);
        let native_short = matches!(
            i.op,
            Op::VCmpF16
                | Op::VCmpF32
                | Op::VCmpF64
                | Op::VCmpI16
                | Op::VCmpU16
                | Op::VCmpI32
                | Op::VCmpU32
                | Op::VCmpI64
                | Op::VCmpU64
                | Op::VCmpClassF32
                | Op::VCmpClassF64
                | Op::VCmpClassF16
        ) || if gfx9 {
            super::decode::has_short_form_gfx9(i.op)
        } else if gfx12 {
            super::decode::has_short_form_gfx12(i.op)
        } else {
            super::decode::has_short_form(i.op)
        };
        if matches!(
            i.op,
            Op::VNop | Op::VClrexcp | Op::VPipeflush | Op::VIllegal
        ) {
            // No operands, no encoding suffix.
            ""
        } else if i.dpp.is_some() {
            // gfx10+ prints a VOPC's DPP form without the suffix.
            if matches!(i.enc, Enc::Vop3 | Enc::Vop3sd) {
                "_e64_dpp"
            } else if i.enc != Enc::Vopc || gfx9 {
                "_dpp"
            } else {
                ""
            }
        } else if i.sdwa.is_some() {
            "_sdwa"
        } else if short
            && has_e32(i.op)
            && (gfx9 || !matches!(i.op, Op::VPkFmacF16 | Op::VDot2accF32F16))
        {
            // (gfx11/gfx12 print v_pk_fmac_f16 and v_dot2acc_f32_f16 without the suffix;
            // gfx9 prints them, as v_pk_fmac_f16_e32 and v_dot2c_f32_f16_e32, with it.)
            "_e32"
        } else if !short && native_short {
            "_e64"
        } else {
            ""
        }
    }

    /// The VALU operands with their neg/abs/sext modifiers, in LLVM's order per operation.
    fn valu_operands(&self, name: &str) -> Vec<String> {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { dw, mask_n, .. } = self.ctx();
        let op = |k: usize| self.op(k);
        let mut ops = Vec::new();
        let mods = i.enc == Enc::Vop3 || i.sdwa.is_some() || i.dpp.is_some();
        let src_mod = |k: usize| {
            let t = op(k);
            let neg = (i.mods >> k) & 1 == 1 && mods;
            let abs = (i.mods >> (4 + k)) & 1 == 1 && mods;
            let sext = i
                .sdwa
                .is_some_and(|sd| k < 2 && (sd >> (19 + 8 * k)) & 1 == 1);
            let t = if sext { format!("sext({t})") } else { t };
            let t = if abs { format!("|{t}|") } else { t };
            if neg { format!("-{t}") } else { t }
        };
        match i.op {
            _ if i.enc == Enc::Vopc || (i.enc == Enc::Vop3 && name.starts_with("v_cmp")) => {
                // v_cmpx writes EXEC, named by no operand (gfx9's also writes its SGPR
                // pair or VCC, printed).
                if !i.cmpx || self.isa == Isa::Gfx9 {
                    ops.push(operand(i.sdst, mask_n, 0, false, wave64));
                }
                ops.push(src_mod(0));
                ops.push(src_mod(1));
            }
            // True16 halves: `v0.l`, `v0.h` (VOP1 and DPP forms).
            Op::VMovB16 if i.enc == Enc::Vop1 => {
                let half = |code: u16, hi: bool| {
                    format!("v{}.{}", code - VGPR, if hi { "h" } else { "l" })
                };
                ops.push(half(i.dst, i.opsel & 8 != 0));
                ops.push(if (VGPR..AGPR).contains(&i.src[0]) {
                    half(i.src[0], i.opsel & 1 != 0)
                } else {
                    op(0)
                });
            }
            Op::VReadfirstlaneB32 | Op::VReadlaneB32 => {
                ops.push(operand(i.dst, 1, 0, false, wave64));
                for k in 0..3 {
                    if i.src[k] != NONE {
                        ops.push(op(k));
                    }
                }
            }
            Op::VAddCoCiU32 | Op::VSubCoCiU32 | Op::VSubrevCoCiU32 => {
                ops.push(operand(i.dst, 1, 0, false, wave64));
                ops.push(operand(i.sdst, mask_n, 0, false, wave64));
                ops.push(op(0));
                ops.push(op(1));
                ops.push(operand(i.src[2], mask_n, 0, false, wave64));
            }
            Op::VCndmaskB32 => {
                ops.push(operand(i.dst, 1, 0, false, wave64));
                ops.push(src_mod(0));
                ops.push(src_mod(1));
                ops.push(operand(i.src[2], mask_n, 0, false, wave64));
            }
            Op::VFmacF32 | Op::VFmacF16 | Op::VMacF32 | Op::VMacF16 | Op::VFmacF64 => {
                ops.push(operand(i.dst, dw, 0, false, wave64));
                ops.push(src_mod(0));
                ops.push(src_mod(1));
            }
            Op::VFmamkF32 | Op::VMadmkF32 | Op::VMadmkF16 => {
                ops.push(operand(i.dst, 1, 0, false, wave64));
                ops.push(op(0));
                ops.push(format!("{:#x}", i.lit));
                ops.push(op(2));
            }
            _ => {
                if i.dst != NONE {
                    ops.push(operand(i.dst, dw, 0, false, wave64));
                }
                if i.enc == Enc::Vop3sd || (i.enc == Enc::Vop2 && i.sdst != NONE) {
                    ops.push(operand(i.sdst, mask_n, 0, false, wave64));
                }
                for k in 0..3 {
                    if i.src[k] != NONE {
                        ops.push(src_mod(k));
                    }
                }
            }
        }
        ops
    }

    /// clamp, omod, DPP controls, op_sel and the SDWA selects after the operands.
    fn valu_modifiers(&self) -> String {
        let i = self.i;
        let mut s = String::new();
        if i.clamp {
            s.push_str(" clamp");
        }
        match i.omod {
            1 => s.push_str(" mul:2"),
            2 => s.push_str(" mul:4"),
            3 => s.push_str(" div:2"),
            _ => {}
        }
        if let Some(d) = i.dpp {
            s.push_str(&dpp_text(d, self.isa == Isa::Gfx9));
        }
        if i.opsel != 0 && matches!(i.op, Op::VPermlane16B32 | Op::VPermlanex16B32) {
            let b = |k: u8| (i.opsel >> k) & 1;
            let _ = write!(s, " op_sel:[{},{}]", b(0), b(1));
        } else if i.opsel != 0 && i.enc == Enc::Vop3 {
            let mut v: Vec<&str> = (0..3)
                .filter(|&k| i.src[k] != NONE)
                .map(|k| if (i.opsel >> k) & 1 == 1 { "1" } else { "0" })
                .collect();
            v.push(if i.opsel & 8 != 0 { "1" } else { "0" });
            let _ = write!(s, " op_sel:[{}]", v.join(","));
        }
        if let Some(sd) = i.sdwa {
            // (gfx942's 8-bit float conversions to f32 have no destination select.)
            let no_dst_sel = matches!(
                i.op,
                Op::VCvtF32Fp8 | Op::VCvtF32Bf8 | Op::VCvtPkF32Fp8 | Op::VCvtPkF32Bf8
            );
            if i.enc != Enc::Vopc && !no_dst_sel {
                let unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "3"];
                let _ = write!(
                    s,
                    " dst_sel:{} dst_unused:{}",
                    sdwa_sel((sd >> 8) & 7),
                    unused[((sd >> 11) & 3) as usize]
                );
            }
            let _ = write!(s, " src0_sel:{}", sdwa_sel((sd >> 16) & 7));
            if i.src[1] != NONE {
                let _ = write!(s, " src1_sel:{}", sdwa_sel((sd >> 24) & 7));
            }
        }
        s
    }

    /// VOP3P: packed operands and the op_sel/op_sel_hi/neg lists that differ from the default.
    fn vop3p(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { gfx12, dw, .. } = self.ctx();
        let op = |k: usize| self.op(k);
        let mut s = String::new();
        let row = crate::isa::mai::of(i.imm);
        if let (Op::VMfma, Some(m)) = (i.op, row) {
            let nm = if (self.gfx940 && !m.name940.is_empty()) || m.name.is_empty() {
                m.name940
            } else {
                m.name
            };
            let ops: Vec<String> = (0..3).map(op).collect();
            let _ = write!(
                s,
                "{nm} {}, {}",
                operand(i.dst, dw, 0, false, wave64),
                ops.join(", ")
            );
            let (cbsz, abid, blgp) = crate::isa::mai::broadcast(i.imm);
            for (name, v) in [("cbsz", cbsz), ("abid", abid)] {
                if v != 0 {
                    let _ = write!(s, " {name}:{v}");
                }
            }
            if blgp != 0 {
                if self.gfx940 && m.out == crate::isa::mai::Ty::F64 {
                    // gfx940's f64 MFMA reads the field as neg:[A,B,C].
                    let b = |k: u32| (blgp >> k) & 1;
                    let _ = write!(s, " neg:[{},{},{}]", b(0), b(1), b(2));
                } else {
                    let _ = write!(s, " blgp:{blgp}");
                }
            }
            return s;
        }
        let nm = match (i.op, row) {
            (Op::VWmma, Some(m)) => m.name,
            _ => match i.op {
                Op::VPkMinF16 if gfx12 => "v_pk_min_num_f16",
                Op::VPkMaxF16 if gfx12 => "v_pk_max_num_f16",
                op => op.name(),
            },
        };
        let mix = matches!(i.op, Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16);
        let used: Vec<usize> = (0..3).filter(|&k| i.src[k] != NONE).collect();
        let mut ops = vec![operand(i.dst, dw, 0, false, wave64)];
        ops.extend(used.iter().map(|&k| {
            let t = op(k);
            // The mixed fma prints neg_hi as |abs| and neg_lo as a minus.
            let t = if mix && (i.mods >> (4 + k)) & 1 == 1 {
                format!("|{t}|")
            } else {
                t
            };
            if mix && (i.mods >> k) & 1 == 1 {
                format!("-{t}")
            } else {
                t
            }
        }));
        let dpp = if i.dpp.is_some() { "_e64_dpp" } else { "" };
        let _ = write!(s, "{nm}{dpp} {}", ops.join(", "));
        // LLVM prints a modifier list only when it differs from the default (op_sel_hi
        // all set, the rest clear).
        let list = |bits: u8, default: bool| -> Option<String> {
            let v: Vec<&str> = used
                .iter()
                .map(|&k| if (bits >> k) & 1 == 1 { "1" } else { "0" })
                .collect();
            let all = v.iter().all(|b| *b == if default { "1" } else { "0" });
            (!all).then(|| format!("[{}]", v.join(",")))
        };
        let lists = if mix {
            [
                ("op_sel", i.sub & 7, false),
                ("op_sel_hi", (i.sub >> 4) & 7, false),
                ("", 0, false),
                ("", 0, false),
            ]
        } else {
            [
                ("op_sel", i.sub & 7, false),
                ("op_sel_hi", (i.sub >> 4) & 7, true),
                ("neg_lo", i.mods & 7, false),
                ("neg_hi", (i.mods >> 4) & 7, false),
            ]
        };
        for (name, bits, default) in lists.into_iter().filter(|l| !l.0.is_empty()) {
            if let Some(l) = list(bits, default) {
                let _ = write!(s, " {name}:{l}");
            }
        }
        if i.clamp {
            s.push_str(" clamp");
        }
        if let Some(d) = i.dpp {
            s.push_str(&dpp_text(d, false));
        }
        s
    }

    /// VOPD: both halves joined by `::`.
    fn vopd(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { gfx12, .. } = self.ctx();
        let mut s = String::new();
        if let Some(halves) = i.dual {
            let parts: Vec<String> = halves
                .iter()
                .map(|h| {
                    let nm = if gfx12 {
                        gfx12_name(h.op).unwrap_or(h.op.name())
                    } else {
                        h.op.name()
                    };
                    let mut t = format!(
                        "v_dual_{} {}",
                        &nm[2..],
                        operand(h.dst, 1, 0, false, wave64)
                    );
                    let lit = format!(", {:#x}", i.lit);
                    for (k, &c) in h.src.iter().enumerate() {
                        if k == 1 && h.op == Op::VFmamkF32 {
                            t.push_str(&lit);
                        }
                        if c != NONE {
                            let _ = write!(t, ", {}", operand(c, 1, i.lit, true, wave64));
                        }
                    }
                    if h.op == Op::VFmaakF32 {
                        t.push_str(&lit);
                    }
                    t
                })
                .collect();
            s = parts.join(" :: ");
        }
        s
    }

    /// DS: data and address operands, offsets (two-address forms print offset0/offset1).
    fn ds(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let name = |op: Op| self.name(op);
        let mut s = String::new();
        s.push_str(name(i.op));
        let mut ops = Vec::new();
        let xchg2 = matches!(
            i.op,
            Op::DsStorexchg2RtnB32
                | Op::DsStorexchg2St64RtnB32
                | Op::DsStorexchg2RtnB64
                | Op::DsStorexchg2St64RtnB64
        );
        let n = match i.op {
            Op::DsStorexchg2RtnB32 | Op::DsStorexchg2St64RtnB32 => 2,
            Op::DsStorexchg2RtnB64 | Op::DsStorexchg2St64RtnB64 => 4,
            Op::DsLoadB64 | Op::DsStoreB64 | Op::DsLoad2B32 | Op::DsLoad2St64B32 => 2,
            Op::DsLoadB96 | Op::DsStoreB96 => 3,
            Op::DsLoadB128 | Op::DsStoreB128 | Op::DsLoad2B64 | Op::DsLoad2St64B64 => 4,
            op if op.name().ends_with("64") => 2,
            _ => 1,
        };
        if i.dst != NONE {
            ops.push(operand(i.dst, n, 0, false, wave64));
        }
        for k in 0..3 {
            if i.src[k] != NONE {
                let w = if k == 0 {
                    1
                } else if i.op == Op::DsBvhStackRtnB32 {
                    // The last-visited node, then the four nodes (X, Y, Z, W).
                    if k == 2 { 4 } else { 1 }
                } else if xchg2 {
                    n / 2
                } else {
                    n.min(if matches!(i.op, Op::DsStore2B64 | Op::DsStore2St64B64) {
                        2
                    } else {
                        4
                    })
                };
                ops.push(operand(i.src[k], w, 0, false, wave64));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        let two = matches!(
            i.op,
            Op::DsStore2B32
                | Op::DsStore2St64B32
                | Op::DsStore2B64
                | Op::DsLoad2B32
                | Op::DsLoad2St64B32
                | Op::DsLoad2B64
                | Op::DsStore2St64B64
                | Op::DsLoad2St64B64
        ) || xchg2;
        if two {
            if i.imm != 0 {
                let _ = write!(s, " offset0:{}", i.imm);
            }
            if i.sub != 0 {
                let _ = write!(s, " offset1:{}", i.sub);
            }
        } else if i.op == Op::DsSwizzleB32 && i.imm != 0 {
            // CAST: the 16-bit pattern.
            let _ = write!(s, " offset:{}", swizzle(i.imm as u32));
        } else if i.imm != 0 {
            let _ = write!(s, " offset:{}", i.imm);
        }
        s
    }

    /// gfx12 global_inv/global_wb: the scope only.
    fn cache_ctl(&self) -> String {
        let i = self.i;
        let mut s = String::new();
        let scope = [
            "",
            " scope:SCOPE_SE",
            " scope:SCOPE_DEV",
            " scope:SCOPE_SYS",
        ];
        s.push_str(i.op.name());
        s.push_str(scope[usize::from((i.flags >> 4) & 3)]);
        s
    }

    /// FLAT/GLOBAL/SCRATCH: segment prefix, data, address, saddr, offset, cache policy.
    fn flat(&self) -> String {
        let (i, wave64, gfx940) = (self.i, self.wave64, self.gfx940);
        let Ctx { gfx9, gfx12, .. } = self.ctx();
        let name = |op: Op| self.name(op);
        let mut s = String::new();
        let seg = match i.sub {
            SEG_FLAT => "flat_",
            SEG_SCRATCH => "scratch_",
            _ => "global_",
        };
        if i.flags & 0x80 != 0 {
            // gfx940's LDS DMA loads: global/scratch_load_lds_{ubyte,...,dword}.
            let t = name(i.op).trim_start_matches("load_");
            let _ = write!(s, "{seg}load_lds_{t}");
        } else {
            let _ = write!(s, "{seg}{}", name(i.op));
        }
        let (n, mut dn) = vmem_regs(i.op);
        if wave64 && matches!(i.op, Op::MLoadTrB128 | Op::MLoadTrB64) {
            // RDNA4 ISA 11.6.2: the same data in half the VGPRs in wave64.
            dn /= 2;
        }
        let mut ops = Vec::new();
        if i.dst != NONE {
            ops.push(operand(i.dst, dn, 0, false, wave64));
        }
        let vaddr_n = if i.sub == SEG_SCRATCH || i.src[2] != NONE {
            1
        } else {
            2
        };
        if !matches!(i.op, Op::MLoadAddtidB32 | Op::MStoreAddtidB32) {
            ops.push(operand(i.src[0], vaddr_n, 0, false, wave64));
        }
        if i.src[1] != NONE {
            ops.push(operand(i.src[1], n, 0, false, wave64));
        }
        if i.sub != SEG_FLAT {
            ops.push(if i.src[2] == NONE {
                "off".into()
            } else {
                operand(
                    i.src[2],
                    if i.sub == SEG_SCRATCH { 1 } else { 2 },
                    0,
                    false,
                    wave64,
                )
            });
        }
        let _ = write!(s, " {}", ops.join(", "));
        if i.imm != 0 {
            let _ = write!(s, " offset:{}", i.imm);
        }
        if gfx12 {
            if i.flags & 1 != 0 {
                s.push_str(" th:TH_ATOMIC_RETURN");
            }
            let scope = [
                "",
                " scope:SCOPE_SE",
                " scope:SCOPE_DEV",
                " scope:SCOPE_SYS",
            ];
            s.push_str(scope[usize::from((i.flags >> 4) & 3)]);
        } else if gfx9 && gfx940 {
            for (bit, f) in [(1u8, " sc0"), (4, " sc1"), (2, " nt")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        } else if gfx9 {
            for (bit, f) in [(1u8, " glc"), (2, " slc")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        } else {
            for (bit, f) in [(1u8, " glc"), (2, " slc"), (4, " dlc")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        }
        s
    }

    /// MUBUF: data, vaddr, descriptor, soffset and the addressing/cache bits.
    fn mubuf(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let mut s = String::new();
        // LDS DMA (flags bit 7): gfx9's buffer_store_lds_dword, gfx11's buffer_load_lds_*.
        let lds = i.flags & 0x80 != 0;
        match i.op {
            _ if lds && self.isa == Isa::Gfx9 => s.push_str("buffer_store_lds_dword"),
            op if lds => {
                let t = match op {
                    Op::MLoadU8 => "u8",
                    Op::MLoadI8 => "i8",
                    Op::MLoadU16 => "u16",
                    Op::MLoadI16 => "i16",
                    Op::MLoadFormat => "format_x",
                    _ => "b32",
                };
                let _ = write!(s, "buffer_load_lds_{t}");
            }
            Op::BufferInvl2 if self.gfx940 => s.push_str("buffer_inv"),
            Op::BufferWbl2 | Op::BufferInvl2 | Op::BufferWbinvl1 | Op::BufferWbinvl1Vol => {
                s.push_str(i.op.name());
            }
            op @ (Op::MLoadFormat | Op::MStoreFormat) => {
                let t = if i.opsel & 0x80 != 0 { "t" } else { "" };
                let dir = if op == Op::MLoadFormat {
                    "load"
                } else {
                    "store"
                };
                let xyzw = &"xyzw"[..usize::from(i.omod & 3) + 1];
                let d16 = match (i.omod >> 2) & 3 {
                    0 => "",
                    1 => "d16_",
                    _ => "d16_hi_",
                };
                // gfx9 names d16 after the format (buffer_load_format_d16_x), gfx10+ before.
                if self.isa == Isa::Gfx9 {
                    let _ = write!(s, "{t}buffer_{dir}_format_{d16}{xyzw}");
                } else {
                    let _ = write!(s, "{t}buffer_{dir}_{d16}format_{xyzw}");
                }
            }
            op if self.isa == Isa::Gfx9 || i.src[2] != NONE => {
                let _ = write!(s, "buffer_{}", self.name(op));
            }
            op => s.push_str(op.name()),
        }
        if i.src[2] != NONE {
            let (n, dn) = if matches!(i.op, Op::MLoadFormat | Op::MStoreFormat) {
                let r = crate::isa::decode::format_regs(i.omod);
                (r, r)
            } else {
                vmem_regs(i.op)
            };
            let (data, n) = if i.src[1] != NONE {
                (i.src[1], n)
            } else {
                (i.dst, dn)
            };
            let both = i.flags & 0x18 == 0x18;
            let vaddr = if i.src[0] == NONE {
                "off".to_string()
            } else {
                operand(i.src[0], if both { 2 } else { 1 }, 0, false, wave64)
            };
            if lds && self.isa == Isa::Gfx9 {
                let _ = write!(
                    s,
                    " {}, {}",
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            } else if lds {
                let _ = write!(
                    s,
                    " {vaddr}, {}, {}",
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            } else {
                let _ = write!(
                    s,
                    " {}, {vaddr}, {}, {}",
                    operand(data, n, 0, false, wave64),
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            }
            if i.opsel & 0x80 != 0 {
                s.push_str(&buf_format(self.isa, i.opsel & 0x7f));
            }
            if i.flags & 16 != 0 {
                s.push_str(" idxen");
            }
            if i.flags & 8 != 0 {
                s.push_str(" offen");
            }
            if i.imm != 0 {
                let _ = write!(s, " offset:{}", i.imm);
            }
            if self.isa == Isa::Gfx12 {
                let th = usize::from(i.sub & 7);
                let kind = if i.op.name().starts_with("atomic") {
                    [
                        "",
                        "RETURN",
                        "NT",
                        "NT_RETURN",
                        "CASCADE_RT",
                        "CASCADE_NT",
                        "6",
                        "7",
                    ]
                } else {
                    ["", "NT", "HT", "BYPASS", "LU", "NT_RT", "RT_NT", "NT_HT"]
                };
                let what = if i.op.name().starts_with("atomic") {
                    "ATOMIC"
                } else if i.dst != NONE {
                    "LOAD"
                } else {
                    "STORE"
                };
                if th != 0 {
                    let _ = write!(s, " th:TH_{what}_{}", kind[th]);
                }
                let scope = [
                    "",
                    " scope:SCOPE_SE",
                    " scope:SCOPE_DEV",
                    " scope:SCOPE_SYS",
                ];
                s.push_str(scope[usize::from((i.sub >> 3) & 3)]);
            } else {
                let bits: &[(u8, &str)] = if self.gfx940 {
                    &[(1, " sc0"), (4, " sc1"), (2, " nt")]
                } else if self.isa == Isa::Gfx11 {
                    &[(1, " glc"), (2, " slc"), (4, " dlc")]
                } else {
                    &[(1, " glc"), (2, " slc")]
                };
                for (bit, f) in bits {
                    if i.flags & bit != 0 {
                        s.push_str(f);
                    }
                }
                if lds && self.isa == Isa::Gfx9 {
                    s.push_str(" lds");
                }
            }
        }
        s
    }
}
