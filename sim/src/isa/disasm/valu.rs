//! Vector ALU encodings: VOP1, VOP2, VOPC, VOP3, VOP3P, VOPD (mnemonics, operands, modifiers).

#[allow(clippy::wildcard_imports)]
use super::*;

impl Printer<'_> {
    /// VOP1/VOP2/VOPC/VOP3: mnemonic with its encoding suffix, operands, modifiers.
    pub(super) fn valu(&self) -> String {
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
    pub(super) fn valu_name(&self) -> String {
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
    pub(super) fn valu_suffix(&self) -> &'static str {
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
            crate::isa::decode::has_short_form_gfx9(i.op)
        } else if gfx12 {
            crate::isa::decode::has_short_form_gfx12(i.op)
        } else {
            crate::isa::decode::has_short_form(i.op)
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
    pub(super) fn valu_operands(&self, name: &str) -> Vec<String> {
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
    pub(super) fn valu_modifiers(&self) -> String {
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
    pub(super) fn vop3p(&self) -> String {
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
    pub(super) fn vopd(&self) -> String {
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
}
