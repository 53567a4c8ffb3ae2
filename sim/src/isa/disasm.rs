//! Text of a decoded instruction in LLVM's syntax (what `llvm-objdump-19 -d` prints), so the
//! decoder can be checked against LLVM's disassembler.

use super::Isa;
use super::decode::{AGPR, Dpp, Enc, Inst, LIT, NONE, SEG_FLAT, SEG_SCRATCH, VGPR};
use super::ops::Op;
use core::fmt::Write;

mod memory;
mod names;
mod scalar;
mod valu;
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
}
