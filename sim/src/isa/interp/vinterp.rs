//! VINTERP (gfx11+): parameter interpolation. Each lane reads the attribute values of its
//! quad's first three lanes (P0 in lane 0, P10 = P1 - P0 in lane 1, P20 = P2 - P0 in lane 2 of
//! the quad, as LDS_PARAM_LOAD leaves them) and combines them with its own barycentric
//! coordinate. The RDNA3 ISA guide's pseudo-code (VINTERP opcodes):
//!
//! - `v_interp_p10_f32`: `D = fma(VGPR[quad + 1][SRC0], S1, VGPR[quad][SRC2])`
//! - `v_interp_p2_f32`: `D = fma(VGPR[quad + 2][SRC0], S1, S2)`
//! - `v_interp_p10_f16_f32`: as p10 with f16 attributes (OPSEL\[0\]/\[2\] pick the high
//!   halves), an f32 result
//! - `v_interp_p2_f16_f32`: as p2 with an f16 attribute (OPSEL\[0\]) and an f16 result
//!   (OPSEL\[3\]: the high half; the other half is kept)
//! - the `_rtz_` forms: the same, converting the f16 result toward zero (the p10 form's f32
//!   result has no f16 rounding; its pseudo-code is p10_f16_f32's)
//!
//! with `quad = lane & ~3`. NEG negates each source and CLMP clamps the result to \[0, 1\].
//! WAITEXP waits for EXPcnt, which a compute wave never raises: nothing to wait for.

use super::*;

impl Exec<'_, '_> {
    pub(super) fn vinterp(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let p10 = matches!(i.op, VInterpP10F32 | VInterpP10F16F32 | VInterpP10RtzF16F32);
        let f16 = !matches!(i.op, VInterpP10F32 | VInterpP2F32);
        let f16_out = matches!(i.op, VInterpP2F16F32 | VInterpP2RtzF16F32);
        let rtz = matches!(i.op, VInterpP2RtzF16F32);
        // The lane-indexed sources, whole rows (any lane of the quad may be read).
        let mut s0 = [0u32; MAX_LANES];
        s0[..n].copy_from_slice(self.row(self.vreg(i.src[0], 1)?)?);
        let mut s2 = [0u32; MAX_LANES];
        if p10 {
            s2[..n].copy_from_slice(self.row(self.vreg(i.src[2], 1)?)?);
        } else {
            let mut j = *i;
            j.opsel = 0;
            self.lanes32(&j, 2, Width::B32, &mut s2)?;
        }
        // S1 is an f32 of any operand kind (its NEG applied by the read).
        let mut s1 = [0u32; MAX_LANES];
        let mut j = *i;
        j.opsel = 0;
        self.lanes32(&j, 1, Width::B32, &mut s1)?;
        self.in_f32(&mut s1);
        if !p10 {
            self.in_f32(&mut s2);
        }
        // An attribute value: the f32, or the f16 half OPSEL picks, NEG applied.
        let attr = |x: u32, k: usize| -> f32 {
            let v = if f16 {
                f16_to_f32(if (i.opsel >> k) & 1 == 1 { x >> 16 } else { x } & 0xffff)
            } else {
                f32v(x)
            };
            if (i.mods >> k) & 1 == 1 { -v } else { v }
        };
        let flush = !f16 && !self.w.denorm32();
        let inp = |x: f32| {
            if flush { f32v(flush32(x.to_bits())) } else { x }
        };
        let mut r = [0u32; MAX_LANES];
        for (l, r) in r[..n].iter_mut().enumerate() {
            let q = l & !3;
            let a = inp(attr(s0[q + if p10 { 1 } else { 2 }], 0));
            let c = if p10 {
                inp(attr(s2[q], 2))
            } else {
                f32v(s2[l])
            };
            *r = fma32(a, f32v(s1[l]), c).to_bits();
        }
        if !f16_out {
            self.f32_mode_out(i, &mut r);
            return self.write_lanes(i.dst, &r);
        }
        // The f16 result into the half OPSEL[3] names.
        let d = self.vreg(i.dst, 1)?;
        let mut out = [0u32; MAX_LANES];
        out[..n].copy_from_slice(self.row(d)?);
        for (o, x) in out[..n].iter_mut().zip(&r[..n]) {
            let mut f = f32v(*x);
            if i.clamp {
                f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
            }
            let h = f32_to_f16(f, rtz);
            *o = if i.opsel & 8 != 0 {
                (*o & 0xffff) | (h << 16)
            } else {
                (*o & 0xffff_0000) | h
            };
        }
        self.write_lanes(i.dst, &out)
    }
}
