//! DPP: a VOP1/VOP2/VOPC operation whose src0 is read from another lane of the wave
//! ([`Dpp::source`]), and the lane permutes v_permlane16/v_permlanex16 (gfx10+).
//!
//! The permuted src0 is staged in a VGPR the instruction does not name (its lanes restored
//! afterwards), and the operation then runs unchanged with src0 naming that register and EXEC
//! narrowed to the lanes DPP writes: lanes of a row or bank masked off, and lanes
//! whose source is invalid without BOUND_CTRL, keep their destination (RDNA3 ISA 7.8 and
//! Vega ISA 6.8.1 "DPP"). v_cmpx with DPP writes EXEC as the compare's result over those lanes.

use super::*;
use crate::isa::decode::Dpp;

impl Exec<'_, '_> {
    pub(super) fn dpp(&mut self, i: &Inst, d: Dpp) -> Result<(), IsaError> {
        if i.op == Op::VNop {
            return Ok(());
        }
        // The M0-relative moves permute the register they address (a plain move of it).
        let rel;
        let i = if matches!(
            i.op,
            Op::VMovreldB32 | Op::VMovrelsB32 | Op::VMovrelsdB32 | Op::VMovrelsd2B32
        ) {
            rel = self.movrel(i)?;
            &rel
        } else {
            i
        };
        let n = self.w.lanes;
        let (dw, sw) = i.op.regs();
        if dw > 1 || sw.iter().any(|&w| w > 1) {
            return Err(self.err(&format!(
                "DPP on {}: 64-bit operands under DPP are not interpreted",
                i.op.name()
            )));
        }
        // The operands the program names, checked against the real VGPR budget first.
        for code in [i.dst, i.src[1], i.src[2]] {
            if code >= VGPR && code != NONE {
                self.vreg(code, 1)?;
            }
        }
        let o = self.vreg(i.src[0], 1)?;
        let exec = self.w.exec();
        let mut src = [0u32; MAX_LANES];
        src[..n].copy_from_slice(self.row(o)?);
        let mut perm = [0u32; MAX_LANES];
        let mut write = 0u64;
        let (fi, bound, masks) = match d {
            Dpp::Row {
                row_mask,
                bank_mask,
                bound_ctrl,
                fi,
                ..
            } => (fi, bound_ctrl, Some((row_mask, bank_mask))),
            // DPP8: an invalid (inactive) source reads 0; every lane is written.
            Dpp::Lane8 { fi, .. } => (fi, true, None),
        };
        for (l, p) in perm[..n].iter_mut().enumerate() {
            let enabled = masks.is_none_or(|(rm, bm)| {
                (rm >> (l / 16)) & 1 == 1 && (bm >> ((l & 15) / 4)) & 1 == 1
            });
            let s = d.source(l, n).filter(|&s| fi || (exec >> s) & 1 == 1);
            match s {
                Some(s) => *p = src[s],
                None if bound => *p = 0,
                None => continue,
            }
            if enabled {
                write |= 1 << l;
            }
        }
        // The permuted src0 is staged in a VGPR the instruction does not name, whose lanes are
        // put back afterwards (a row past the wave's VGPRs would alias AGPR codes when the
        // kernel has all 256).
        let named = |r: usize| {
            [i.dst, i.src[1], i.src[2]]
                .iter()
                .any(|&c| (VGPR..AGPR).contains(&c) && usize::from(c - VGPR) == r)
        };
        let Some(stage) = (0..self.w.nvgpr).rev().find(|&r| !named(r)) else {
            return Err(self.err("DPP: no VGPR left to stage the permuted source in"));
        };
        let mut kept = [0u32; MAX_LANES];
        match self.w.v.get_mut(stage * n..(stage + 1) * n) {
            Some(row) => {
                kept[..n].copy_from_slice(row);
                row.copy_from_slice(&perm[..n]);
            }
            None => return Err(self.range_err()),
        }
        let mut j = *i;
        j.dpp = None;
        // CAST: below 256 VGPRs.
        j.src[0] = VGPR + stage as u16;
        let saved = (self.w.s[126], self.w.s[127]);
        self.w.set_exec(exec & write);
        let r = if j.enc == Enc::Vop3p {
            self.vop3p(&j)
        } else {
            self.valu(&j)
        };
        if let Some(row) = self.w.v.get_mut(stage * n..(stage + 1) * n) {
            row.copy_from_slice(&kept[..n]);
        }
        if !i.cmpx {
            (self.w.s[126], self.w.s[127]) = saved;
        }
        r
    }

    /// v_permlane16_b32 / v_permlanex16_b32: lane `16r + k` reads lane `16r' + sel(k)` of
    /// src0, `r' = r` (permlane16) or `r ^ 1` (x16), `sel` the k-th nibble of {src2, src1};
    /// op_sel\[0\] is FI (read inactive lanes), op_sel\[1\] BOUND_CTRL (an inactive source reads
    /// 0, else the lane keeps its value).
    pub(super) fn permlane(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let o = self.vreg(i.src[0], 1)?;
        let mut src = [0u32; MAX_LANES];
        src[..n].copy_from_slice(self.row(o)?);
        let sel =
            u64::from(self.s32(i.src[1], i.lit)?) | (u64::from(self.s32(i.src[2], i.lit)?) << 32);
        let (fi, bound) = (i.opsel & 1 != 0, i.opsel & 2 != 0);
        let cross = i.op == Op::VPermlanex16B32;
        let exec = self.w.exec();
        let d = self.vreg(i.dst, 1)?;
        let mut out = [0u32; MAX_LANES];
        out[..n].copy_from_slice(self.row(d)?);
        for (l, x) in out[..n].iter_mut().enumerate() {
            if (exec >> l) & 1 == 0 {
                continue;
            }
            let row = if cross { (l & !15) ^ 16 } else { l & !15 };
            // CAST: a nibble.
            let s = row + ((sel >> (4 * (l & 15))) & 15) as usize;
            if fi || (exec >> s) & 1 == 1 {
                *x = src[s];
            } else if bound {
                *x = 0;
            }
        }
        self.write_lanes(i.dst, &out)
    }
}
