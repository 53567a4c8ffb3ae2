//! 16-bit VALU results (f16 arithmetic, the u16/i16 group, v_pack_b32_f16), the f16/f32
//! mixed fma (VOP3P v_fma_mix*), 64-bit moves (v_pk_mov_b32, v_mov_b64) and gfx9 SDWA
//! destinations.
//!
//! A 16-bit result goes to the low half of the destination, or with VOP3 op_sel[3] to its
//! high half (the other half kept). gfx11/gfx12 keep the other half of a low-half write too
//! (their 16-bit registers are halves); gfx9 clears it.

use super::*;

/// The f16 result of `f` computed in f32 from f16 halves.
fn h2(f: impl Fn(f32, f32) -> f32) -> impl Fn(u32, u32) -> u32 {
    move |x, y| f32_to_f16(f(f16_to_f32(x), f16_to_f32(y)), false)
}

/// The f16 result of `f` computed in f32 from three f16 halves.
fn h3(x: u32, y: u32, z: u32, f: impl Fn(f32, f32, f32) -> f32) -> u32 {
    f32_to_f16(f(f16_to_f32(x), f16_to_f32(y), f16_to_f32(z)), false)
}

/// A fused f16 multiply-add (one rounding, through f64).
fn fma16(x: u32, y: u32, z: u32) -> u32 {
    let f = |v: u32| f64::from(f16_to_f32(v));
    // CAST: the f64 result rounds to f32, then to f16.
    f32_to_f16(f(x).mul_add(f(y), f(z)) as f32, false)
}

/// An unfused f16 multiply-add (gfx9 v_mac/madmk/madak_f16): the product rounds to f16.
fn mad16(x: u32, y: u32, z: u32) -> u32 {
    let p = f32_to_f16(f16_to_f32(x) * f16_to_f32(y), false);
    f32_to_f16(f16_to_f32(p) + f16_to_f32(z), false)
}

/// The low 16 bits as a signed value.
fn s16(x: u32) -> i32 {
    // CAST: the low half, sign-extended.
    i32::from(x as u16 as i16)
}

/// SDWA operand select: byte 0..3 (sel 0..3), word 0..1 (4..5) or the dword (6), zero- or
/// sign-extended (`sext`).
pub(super) fn sdwa_select(x: u32, sel: u32, sext: bool) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return x,
    };
    let v = (x >> shift) & ((1 << bits) - 1);
    if sext && v >> (bits - 1) & 1 == 1 {
        v | !((1 << bits) - 1)
    } else {
        v
    }
}

/// SDWA destination: the low `dst_sel` field of `r` placed into `old`; the other bits are
/// zero (`unused` 0), the sign extension of the field above it (1), or kept (2).
pub(super) fn sdwa_place(old: u32, r: u32, sel: u32, unused: u32) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel, 8),
        4 | 5 => (16 * (sel - 4), 16),
        _ => return r,
    };
    let field = ((1u32 << bits) - 1) << shift;
    let v = (r << shift) & field;
    match unused {
        2 => (old & !field) | v,
        1 if (r >> (bits - 1)) & 1 == 1 => {
            // Sign extension above the field; zeros below it.
            let above = if shift + bits >= 32 {
                0
            } else {
                u32::MAX << (shift + bits)
            };
            v | above
        }
        _ => v,
    }
}

impl Exec<'_, '_> {
    /// The 16-bit operations; `None` for any other.
    pub(super) fn valu16(&mut self, i: &Inst) -> Option<Result<(), IsaError>> {
        use Op::*;
        Some(match i.op {
            VAddF16 => self.h16(i, h2(|x, y| x + y)),
            VSubF16 => self.h16(i, h2(|x, y| x - y)),
            VSubrevF16 => self.h16(i, h2(|x, y| y - x)),
            VMulF16 => self.h16(i, h2(|x, y| x * y)),
            VMaxF16 => self.h16(i, h2(fmax)),
            VMinF16 => self.h16(i, h2(fmin)),
            VLdexpF16 => self.h16(i, |x, e| {
                // CAST: the f64 result rounds to f32, then to f16.
                f32_to_f16(ldexp(f64::from(f16_to_f32(x)), s16(e)) as f32, false)
            }),
            // f16 results: clamp applies (the other u16x1 results are integers).
            VCvtF16U16 => {
                let c = self.clamp16_of(i);
                self.u16x1(i, |x| c(f32_to_f16(x as f32, false)))
            }
            VCvtF16I16 => {
                let c = self.clamp16_of(i);
                self.u16x1(i, |x| c(f32_to_f16(s16(x) as f32, false)))
            }
            // Truncating, saturating; NaN converts to 0.
            VCvtU16F16 => self.u16x1(i, |x| {
                let f = f16_to_f32(x);
                if f.is_nan() {
                    0
                } else {
                    f.trunc().clamp(0.0, 65535.0) as u32
                }
            }),
            VCvtI16F16 => self.u16x1(i, |x| {
                let f = f16_to_f32(x);
                // CAST: the i16 result's low 16 bits.
                if f.is_nan() {
                    0
                } else {
                    (f.trunc().clamp(-32768.0, 32767.0) as i32 as u32) & 0xffff
                }
            }),
            VAddU16 => self.i16(i, |x, y| x + y),
            VSubU16 => self.i16(i, |x, y| x - y),
            VSubrevU16 => self.i16(i, |x, y| y - x),
            VMulLoU16 => self.i16(i, |x, y| x * y),
            VLshlrevB16 => self.i16(i, |s, x| x << (s & 15)),
            VLshrrevB16 => self.i16(i, |s, x| x >> (s & 15)),
            VAshrrevI16 => self.i16(i, |s, x| i64::from(s16(x as u32)) >> (s & 15)),
            VMaxU16 => self.i16(i, i64::max),
            VMinU16 => self.i16(i, i64::min),
            VMaxI16 => self.i16(i, |x, y| i64::from(s16(x as u32).max(s16(y as u32)))),
            VMinI16 => self.i16(i, |x, y| i64::from(s16(x as u32).min(s16(y as u32)))),
            // Transcendentals computed in f32 and rounded to f16 (the ISA allows 1 ULP);
            // sin/cos take revolutions, as the f32 forms.
            VExpF16 => self.h1(i, f32::exp2),
            VLogF16 => self.h1(i, f32::log2),
            VSqrtF16 => self.h1(i, f32::sqrt),
            VRcpF16 => self.h1(i, |x| 1.0 / x),
            VRsqF16 => self.h1(i, |x| 1.0 / x.sqrt()),
            VSinF16 => self.h1(i, |x| turns(x, false)),
            VCosF16 => self.h1(i, |x| turns(x, true)),
            // Rounding to an integer keeps an f16 exact in f32.
            VFloorF16 => self.h1(i, f32::floor),
            VCeilF16 => self.h1(i, f32::ceil),
            VTruncF16 => self.h1(i, f32::trunc),
            VRndneF16 => self.h1(i, rne32),
            // x - floor(x), below 1 (0x3bff the largest half under 1); a NaN operand stays
            // NaN (quieted, payload kept), an infinity gives NaN.
            VFractF16 => self.h1(i, |x| {
                if x.is_nan() {
                    x
                } else if x.is_infinite() {
                    f32::NAN
                } else {
                    (x - x.floor()).min(f16_to_f32(0x3bff))
                }
            }),
            // The mantissa in [0.5, 1) with the sign; zero, infinities and NaN pass.
            VFrexpMantF16 => self.h1(i, |x| {
                if x == 0.0 || !x.is_finite() {
                    x
                } else {
                    // CAST: the mantissa of an f16 is exact in f32.
                    frexp(f64::from(x)).0 as f32
                }
            }),
            // The exponent as an i16; 0 for zero, infinities and NaN.
            VFrexpExpI16F16 => self.u16x1(i, |x| {
                let f = f16_to_f32(x);
                if f == 0.0 || !f.is_finite() {
                    0
                } else {
                    // CAST: the exponent's low 16 bits (two's complement).
                    frexp(f64::from(f)).1 as u32 & 0xffff
                }
            }),
            // flt16_to_snorm/unorm: clamp to [-1, 1] / [0, 1], scale by 32767 / 65535, round
            // to nearest even; NaN converts to 0.
            VCvtNormI16F16 => self.u16x1(i, |x| {
                let f = f16_to_f32(x);
                if f.is_nan() {
                    0
                } else {
                    // CAST: the i16 result's low 16 bits.
                    (rne32(f.clamp(-1.0, 1.0) * 32767.0) as i32 as u32) & 0xffff
                }
            }),
            VCvtNormU16F16 => self.u16x1(i, |x| {
                let f = f16_to_f32(x);
                if f.is_nan() {
                    0
                } else {
                    // CAST: in [0, 65535].
                    rne32(f.clamp(0.0, 1.0) * 65535.0) as u32
                }
            }),
            VNotB16 => self.u16x1(i, |x| !x & 0xffff),
            // Each signed half saturated to an unsigned byte: D.u16 = {sat8(S0[31:16]),
            // sat8(S0[15:0])}.
            VSatPkU8I16 => self.sat_pk_u8(i),
            VMin3I16 | VMin3U16 | VMax3I16 | VMax3U16 | VMed3I16 | VMed3U16 | VMadU16 | VMadI16
            | VMadLegacyU16 | VMadLegacyI16 => self.i16x3(i),
            VAndB16 => self.i16(i, |x, y| x & y),
            VOrB16 => self.i16(i, |x, y| x | y),
            VXorB16 => self.i16(i, |x, y| x ^ y),
            VAddNcI16 => self.i16(i, |x, y| {
                i64::from(s16(x as u32)) + i64::from(s16(y as u32))
            }),
            VSubNcI16 => self.i16(i, |x, y| {
                i64::from(s16(x as u32)) - i64::from(s16(y as u32))
            }),
            VMin3F16 => self.h16x3(i, |x, y, z| h3(x, y, z, |a, b, c| fmin(fmin(a, b), c))),
            VMax3F16 => self.h16x3(i, |x, y, z| h3(x, y, z, |a, b, c| fmax(fmax(a, b), c))),
            VMed3F16 => self.h16x3(i, |x, y, z| {
                h3(x, y, z, |a, b, c| {
                    // RDNA3 ISA V_MED3: with a NaN operand, the min3 of the three.
                    if a.is_nan() || b.is_nan() || c.is_nan() {
                        fmin(fmin(a, b), c)
                    } else {
                        fmax(fmin(a, b), fmin(fmax(a, b), c))
                    }
                })
            }),
            VFmaF16 | VFmamkF16 | VFmaakF16 => self.h16x3(i, fma16),
            VMadmkF16 | VMadakF16 => self.h16x3(i, mad16),
            VFmacF16 | VMacF16 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                // e32: the accumulator is the destination's half (a `v0.h` destination adds
                // to v0.h: tinygrad test/amd/hw test_vop2.py test_v_fmac_f16_e32_vdst_hi_half,
                // checked on gfx1100). VOP3 reads it by its own op_sel[2].
                if i.enc == Enc::Vop2 {
                    i2.opsel = (i.opsel & !4) | ((i.opsel >> 1) & 4);
                }
                let f = if i.op == VMacF16 { mad16 } else { fma16 };
                self.h16x3(&i2, f)
            }
            VMadmkF32 | VMadakF32 | VMadF32 => {
                // Unfused: the product rounds before the add.
                self.v3(i, Width::B32, |x, y, z| {
                    (f32v(x) * f32v(y) + f32v(z)).to_bits()
                })
            }
            // Both halves (op_sel picks each source's half, neg/abs apply); no rounding.
            VPackB32F16 => self.v2(i, Width::F16, |x, y| (x & 0xffff) | (y << 16)),
            VMovB64 => self.v64(i, [Width::B64; 3], |x, _, _| x),
            _ => return None,
        })
    }

    /// Three 16-bit integer sources (halves per op_sel): min3/max3/med3 and the
    /// multiply-adds; `clamp` saturates the multiply-adds to 16 bits.
    fn i16x3(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let mut s = [[0u32; MAX_LANES]; 3];
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(i, k, Width::F16, s)?;
        }
        let signed = matches!(
            i.op,
            VMin3I16 | VMax3I16 | VMed3I16 | VMadI16 | VMadLegacyI16
        );
        let v = |x: u32| -> i64 {
            if signed {
                i64::from(s16(x))
            } else {
                i64::from(x & 0xffff)
            }
        };
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let (a, b, c) = (v(s[0][l]), v(s[1][l]), v(s[2][l]));
            let x = match i.op {
                VMin3I16 | VMin3U16 => a.min(b).min(c),
                VMax3I16 | VMax3U16 => a.max(b).max(c),
                VMed3I16 | VMed3U16 => a.min(b).max(a.max(b).min(c)),
                _ => {
                    let x = a * b + c;
                    match (i.clamp, signed) {
                        (true, false) => x.clamp(0, 0xffff),
                        (true, true) => x.clamp(-0x8000, 0x7fff),
                        _ => x,
                    }
                }
            };
            // CAST: the low 16 bits are the result.
            r[l] = (x as u32) & 0xffff;
        }
        self.write16(i, &mut r)
    }

    /// V_SAT_PK_U8_I16: each signed half of S0 saturated to an unsigned byte, D.u16 =
    /// {sat8(S0[31:16]), sat8(S0[15:0])}.
    fn sat_pk_u8(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut a)?;
        // CAST: clamped to 0..=255.
        let sat = |h: u32| s16(h & 0xffff).clamp(0, 255) as u32;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = sat(a[l]) | (sat(a[l] >> 16) << 8);
        }
        self.write16(i, &mut r)
    }

    /// dst.f16 = f(src0, src1) on 16-bit halves (op_sel and the modifiers applied).
    fn h16(&mut self, i: &Inst, f: impl Fn(u32, u32) -> u32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::F16, &mut a)?;
        self.lanes32(i, 1, Width::F16, &mut b)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = self.clamp16(i, f(a[l] & 0xffff, b[l] & 0xffff));
        }
        self.write16(i, &mut r)
    }

    /// dst.f16 = f(src0.f16), computed in f32.
    fn h1(&mut self, i: &Inst, f: impl Fn(f32) -> f32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::F16, &mut a)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = self.clamp16(i, f32_to_f16(f(f16_to_f32(a[l] & 0xffff)), false));
        }
        self.write16(i, &mut r)
    }

    /// dst.16 = f(src0.16): the 16-bit conversions.
    fn u16x1(&mut self, i: &Inst, f: impl Fn(u32) -> u32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::F16, &mut a)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = f(a[l] & 0xffff) & 0xffff;
        }
        self.write16(i, &mut r)
    }

    /// dst.f16 = f(src0, src1, src2).
    fn h16x3(&mut self, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), IsaError> {
        let mut s = [[0u32; MAX_LANES]; 3];
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(i, k, Width::F16, s)?;
        }
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = self.clamp16(i, f(s[0][l] & 0xffff, s[1][l] & 0xffff, s[2][l] & 0xffff));
        }
        self.write16(i, &mut r)
    }

    /// [`Self::clamp16`] as a closure that does not borrow the executor.
    fn clamp16_of(&self, i: &Inst) -> impl Fn(u32) -> u32 + use<> {
        let on = i.clamp;
        move |h| {
            if !on {
                return h;
            }
            let f = f16_to_f32(h);
            if f.is_nan() || f < 0.0 {
                0
            } else if f >= 1.0 {
                0x3c00
            } else {
                h
            }
        }
    }

    /// f16 clamp to [0, 1] (NaN to 0) when the instruction has it; -0 is in the range and
    /// stays -0, as for f32 and f64.
    pub(super) fn clamp16(&self, i: &Inst, h: u32) -> u32 {
        self.clamp16_of(i)(h)
    }

    /// dst.u16 = f(src0, src1) on the 16-bit halves (zero-extended; signed ops sign-extend
    /// themselves). With clamp the result saturates to the unsigned 16-bit range.
    fn i16(&mut self, i: &Inst, f: impl Fn(i64, i64) -> i64) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::F16, &mut a)?;
        self.lanes32(i, 1, Width::F16, &mut b)?;
        let signed = matches!(
            i.op,
            Op::VMaxI16 | Op::VMinI16 | Op::VAshrrevI16 | Op::VAddNcI16 | Op::VSubNcI16
        );
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let v = f(i64::from(a[l] & 0xffff), i64::from(b[l] & 0xffff));
            let v = match (i.clamp, signed) {
                (true, false) => v.clamp(0, 0xffff),
                (true, true) => v.clamp(-0x8000, 0x7fff),
                _ => v,
            };
            // CAST: the low 16 bits are the result.
            r[l] = (v as u32) & 0xffff;
        }
        self.write16(i, &mut r)
    }

    /// Writes 16-bit results `r` (low halves) to the destination's half (see the module).
    pub(super) fn write16(&mut self, i: &Inst, r: &mut Lanes) -> Result<(), IsaError> {
        let hi = i.opsel & 8 != 0;
        if hi || self.l.isa != Isa::Gfx9 {
            let o = self.vreg(i.dst, 1)?;
            let old = self.row(o)?;
            for (r, old) in r.iter_mut().zip(old) {
                *r = if hi {
                    (old & 0xffff) | (*r << 16)
                } else {
                    (old & 0xffff_0000) | (*r & 0xffff)
                };
            }
        }
        self.write_lanes(i.dst, r)
    }

    /// gfx9 SDWA with a VGPR destination: the operation, then its `dst_sel` field placed into
    /// the old value per `dst_unused`.
    pub(super) fn sdwa(&mut self, i: &Inst, sd: u32) -> Result<(), IsaError> {
        let o = self.vreg(i.dst, 1)?;
        let mut old = [0u32; MAX_LANES];
        let n = self.w.lanes;
        old[..n].copy_from_slice(self.row(o)?);
        self.valu_op(i)?;
        let (sel, unused) = ((sd >> 8) & 7, (sd >> 11) & 3);
        if sel == 6 {
            return Ok(());
        }
        let new = self.row(o)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..n {
            r[l] = sdwa_place(old[l], new[l], sel, unused);
        }
        // Only the active lanes are written.
        self.write_lanes(i.dst, &r)
    }

    /// VOP3P v_fma_mix_f32/mixlo_f16/mixhi_f16: each source is an f32 (op_sel_hi clear) or the
    /// f16 half op_sel picks; neg_lo negates, neg_hi takes the absolute value. mix_f32 writes
    /// an f32; mixlo/mixhi an f16 into the low/high half, keeping the other.
    pub(super) fn fma_mix(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let mut s = [[0u32; MAX_LANES]; 3];
        let mut plain = *i;
        plain.mods = 0;
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(&plain, k, Width::B32, s)?;
        }
        let (op_sel, op_sel_hi) = (i.sub & 7, (i.sub >> 4) & 7);
        let val = |k: usize, x: u32| -> f32 {
            let f = if (op_sel_hi >> k) & 1 == 1 {
                f16_to_f32(if (op_sel >> k) & 1 == 1 { x >> 16 } else { x })
            } else {
                f32v(x)
            };
            let f = if (i.mods >> (4 + k)) & 1 == 1 {
                f.abs()
            } else {
                f
            };
            if (i.mods >> k) & 1 == 1 { -f } else { f }
        };
        let o = self.vreg(i.dst, 1)?;
        let mut r = [0u32; MAX_LANES];
        r[..n].copy_from_slice(self.row(o)?);
        for l in 0..n {
            let (a, b, c) = (val(0, s[0][l]), val(1, s[1][l]), val(2, s[2][l]));
            let clamp = |f: f32| {
                if !i.clamp {
                    f
                } else if f.is_nan() {
                    0.0
                } else {
                    f.clamp(0.0, 1.0)
                }
            };
            r[l] = match i.op {
                Op::VFmaMixF32 => clamp(a.mul_add(b, c)).to_bits(),
                _ => {
                    // CAST: the f64 result rounds to f32, then to f16.
                    let f = clamp(f64::from(a).mul_add(f64::from(b), f64::from(c)) as f32);
                    let h = f32_to_f16(f, false);
                    if i.op == Op::VFmaMixhiF16 {
                        (r[l] & 0xffff) | (h << 16)
                    } else {
                        (r[l] & 0xffff_0000) | h
                    }
                }
            };
        }
        self.write_lanes(i.dst, &r)
    }

    /// gfx90a/gfx942 VOP3P v_pk_mov_b32: dst.lo = src0's dword op_sel[0] picks, dst.hi =
    /// src1's dword op_sel[1] picks (each source a 64-bit pair).
    pub(super) fn pk_mov(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut a = [0u64; MAX_LANES];
        let mut b = [0u64; MAX_LANES];
        self.lanes64(i, 0, Width::B64, &mut a)?;
        self.lanes64(i, 1, Width::B64, &mut b)?;
        let (s0, s1) = (u32::from(i.sub & 1) * 32, u32::from((i.sub >> 1) & 1) * 32);
        let mut r = [0u64; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = ((a[l] >> s0) & 0xffff_ffff) | (((b[l] >> s1) & 0xffff_ffff) << 32);
        }
        self.write_lanes64(i.dst, &r)
    }
}
