//! The vector ALU: VOP1/VOP2/VOP3/VOP3SD/VOPC and the VOPD dual issue.

use super::*;

/// `r[l] = f(l)` for every lane of `r`: one straight loop.
#[inline(always)]
fn lanes_with(r: &mut [u32], f: impl Fn(usize) -> u32) {
    for (l, r) in r.iter_mut().enumerate() {
        *r = f(l);
    }
}

impl Exec<'_, '_> {
    pub(super) fn vopd(&mut self, i: &Inst) -> Result<(), IsaError> {
        let Some([x, y]) = i.dual else {
            return Err(self.unsupported(i));
        };
        // Both halves read their sources before either writes.
        let rx = self.dual_half(i, &x)?;
        let ry = self.dual_half(i, &y)?;
        self.write_lanes(x.dst, &rx)?;
        self.write_lanes(y.dst, &ry)
    }

    pub(super) fn dual_half(&self, i: &Inst, h: &DualHalf) -> Result<Lanes, IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let rd = |code: u16, out: &mut Lanes| -> Result<(), IsaError> {
            if code == NONE {
                return Ok(());
            }
            match self.src(code, i.lit, Width::B32)? {
                Src::V(o) => {
                    let s = self
                        .w
                        .v
                        .get(o..o + self.w.lanes)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    out[..self.w.lanes].copy_from_slice(s);
                }
                Src::C(c) => out.fill(c),
            }
            Ok(())
        };
        rd(h.src[0], &mut a)?;
        rd(h.src[1], &mut b)?;
        let mut d = [0u32; MAX_LANES];
        let needs_d = matches!(h.op, Op::VFmacF32 | Op::VDot2accF32F16);
        if needs_d {
            let o = self.vreg(h.dst, 1)?;
            if let Some(s) = self.w.v.get(o..o + self.w.lanes) {
                d[..self.w.lanes].copy_from_slice(s);
            }
        }
        let vcc = self.w.vcc();
        let k = f32v(i.lit);
        let mut r = [0u32; MAX_LANES];
        let n = self.w.lanes.min(MAX_LANES);
        // One straight loop per operation (the operation is chosen once, not per lane).
        let rn = &mut r[..n];
        let (x, y) = (|l: usize| f32v(a[l]), |l: usize| f32v(b[l]));
        match h.op {
            Op::VFmacF32 => lanes_with(rn, |l| fma32(x(l), y(l), f32v(d[l])).to_bits()),
            Op::VFmaakF32 => lanes_with(rn, |l| fma32(x(l), y(l), k).to_bits()),
            Op::VFmamkF32 => lanes_with(rn, |l| fma32(x(l), k, y(l)).to_bits()),
            Op::VMulF32 => lanes_with(rn, |l| (x(l) * y(l)).to_bits()),
            Op::VAddF32 => lanes_with(rn, |l| (x(l) + y(l)).to_bits()),
            Op::VSubF32 => lanes_with(rn, |l| (x(l) - y(l)).to_bits()),
            Op::VSubrevF32 => lanes_with(rn, |l| (y(l) - x(l)).to_bits()),
            Op::VMovB32 => rn.copy_from_slice(&a[..n]),
            Op::VCndmaskB32 => {
                let m = mask::spread(vcc);
                lanes_with(rn, |l| if m[l] != 0 { b[l] } else { a[l] });
            }
            Op::VMaxF32 => lanes_with(rn, |l| fmax(x(l), y(l)).to_bits()),
            Op::VMinF32 => lanes_with(rn, |l| fmin(x(l), y(l)).to_bits()),
            Op::VAddNcU32 => lanes_with(rn, |l| a[l].wrapping_add(b[l])),
            Op::VLshlrevB32 => lanes_with(rn, |l| b[l] << (a[l] & 31)),
            Op::VAndB32 => lanes_with(rn, |l| a[l] & b[l]),
            // RDNA3 ISA: +0 when either factor is 0 (0 * inf, 0 * NaN included).
            Op::VMulDx9ZeroF32 => lanes_with(rn, |l| {
                if x(l) == 0.0 || y(l) == 0.0 {
                    0
                } else {
                    (x(l) * y(l)).to_bits()
                }
            }),
            // D.f32 += S0.lo * S1.lo + S0.hi * S1.hi (f16 halves; the sum rounds once).
            Op::VDot2accF32F16 => lanes_with(rn, |l| {
                let h = |v: u32, k: u32| f64::from(f16_to_f32((v >> (16 * k)) & 0xffff));
                let s = f64::from(f32v(d[l])) + h(a[l], 0) * h(b[l], 0) + h(a[l], 1) * h(b[l], 1);
                // CAST: the sum rounded to f32.
                (s as f32).to_bits()
            }),
            _ => return Err(self.err(&format!("unsupported VOPD operation {}", h.op.name()))),
        }
        if is_f32(h.op) && !self.w.denorm32() {
            for x in &mut r {
                *x = flush32(*x);
            }
        }
        Ok(r)
    }

    pub(super) fn valu(&mut self, i: &Inst) -> Result<(), IsaError> {
        // The hardware ignores OMOD while MODE.IEEE (bit 9) is set (LLVM SIFoldOperands:
        // "omod is ignored by hardware if IEEE bit is enabled"; tinygrad test/amd/hw
        // test_vop3.py test_omod_ignored: v_add_f32 3.0 + 1.0 with omod *2 gives 4.0 on
        // gfx1100). gfx12 has no IEEE mode.
        if i.omod != 0 && self.l.isa != Isa::Gfx12 && self.w.mode & (1 << 9) != 0 {
            let mut i2 = *i;
            i2.omod = 0;
            return self.valu(&i2);
        }
        if let Some(d) = i.dpp {
            return self.dpp(i, d);
        }
        if matches!(i.op, Op::VPermlane16B32 | Op::VPermlanex16B32) {
            return self.permlane(i);
        }
        match i.sdwa {
            Some(sd) if i.enc != Enc::Vopc => self.sdwa(i, sd),
            _ => self.valu_op(i),
        }
    }

    pub(super) fn valu_op(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        if let Some(r) = self.valu16(i) {
            return r;
        }
        if let Some(r) = self.valu_ext(i) {
            return r;
        }
        let b32 = Width::B32;
        let f16 = Width::F16;
        let denorm64 = self.w.denorm16_64();
        let fl64 = move |x: u64| -> u64 {
            if !denorm64 && x & 0x7ff0_0000_0000_0000 == 0 {
                x & (1 << 63)
            } else {
                x
            }
        };
        let d64 = move |x: u64| f64::from_bits(fl64(x));
        let o64 = move |x: f64| fl64(x.to_bits());
        match i.op {
            VNop | VClrexcp | VPipeflush => Ok(()),
            // (int)floor(S0.f) and (int)floor(S0.f + 0.5), saturating, NaN to 0.
            VCvtFloorI32F32 | VCvtNearestI32F32 => {
                let d32 = self.w.denorm32();
                let half = if i.op == VCvtNearestI32F32 { 0.5 } else { 0.0 };
                self.v1(i, b32, move |x| {
                    let f = f32v(if d32 { x } else { flush32(x) });
                    cvt_i32(f64::from((f + half).floor()))
                })
            }
            // The signed 4-bit S0[3:0] over 16.
            VCvtOffF32I4 => self.v1(i, b32, |x| {
                // CAST: sign-extends the 4-bit field.
                ((((x << 28) as i32) >> 28) as f32 * 0.0625).to_bits()
            }),
            // CAST: 16-bit extensions.
            VCvtI32I16 => self.v1(i, f16, |x| x as u16 as i16 as i32 as u32),
            VCvtU32U16 => self.v1(i, f16, |x| x & 0xffff),
            VSwapB32 => self.vswap(i),
            // D = S0.u16 * S1.u16 + S2.u32 (signed: i16 x i16 + i32); clamp saturates.
            VMadU32U16 | VMadI32I16 => self.mad32_16(i),
            // Sums of absolute differences of bytes, halves or words, plus S2 (sad_hi: the
            // byte sum shifted to the high half); msad skips bytes whose S1 byte is 0.
            VSadU8 | VSadHiU8 | VMsadU8 => {
                let (hi, masked) = (i.op == VSadHiU8, i.op == VMsadU8);
                self.v3(i, b32, move |a, b, c| {
                    let mut t = 0u32;
                    for k in 0..4 {
                        let (x, y) = ((a >> (8 * k)) & 0xff, (b >> (8 * k)) & 0xff);
                        if !(masked && y == 0) {
                            t += x.abs_diff(y);
                        }
                    }
                    if hi {
                        (t << 16).wrapping_add(c)
                    } else {
                        t.wrapping_add(c)
                    }
                })
            }
            VSadU16 => self.v3(i, b32, |a, b, c| {
                let t = (a & 0xffff).abs_diff(b & 0xffff) + (a >> 16).abs_diff(b >> 16);
                t.wrapping_add(c)
            }),
            VSadU32 => self.v3(i, b32, |a, b, c| a.abs_diff(b).wrapping_add(c)),
            // Per byte: (S0.b + S1.b + S2.b[0]) >> 1 (the rounding bit is bit 0 of S2's byte).
            VLerpU8 => self.v3(i, b32, |a, b, c| {
                let mut r = 0;
                for k in 0..4 {
                    let f = |x: u32| (x >> (8 * k)) & 0xff;
                    r |= ((f(a) + f(b) + (f(c) & 1)) >> 1) << (8 * k);
                }
                r
            }),
            // {sat16(S1), sat16(S0)}.
            VCvtPkU16U32 => self.v2(i, b32, |a, b| a.min(0xffff) | (b.min(0xffff) << 16)),
            VCvtPkI16I32 => self.v2(i, b32, |a, b| {
                // CAST: signed views, then the saturated halves' bits.
                let s = |x: u32| ((x as i32).clamp(-0x8000, 0x7fff) as u32) & 0xffff;
                s(a) | (s(b) << 16)
            }),
            // CAST: signed views of the same bits.
            VMaxminI32 => self.v3(i, b32, |a, b, c| {
                (a as i32).max(b as i32).min(c as i32) as u32
            }),
            // CAST: signed views of the same bits.
            VMinmaxI32 => self.v3(i, b32, |a, b, c| {
                (a as i32).min(b as i32).max(c as i32) as u32
            }),
            VMaxminU32 => self.v3(i, b32, |a, b, c| a.max(b).min(c)),
            VMinmaxU32 => self.v3(i, b32, |a, b, c| a.min(b).max(c)),
            VSExpF32 | VSExpF16 | VSLogF32 | VSLogF16 | VSRcpF32 | VSRcpF16 | VSRsqF32
            | VSRsqF16 | VSSqrtF32 | VSSqrtF16 => self.scalar_trans(i),
            VPermlane64B32 => self.permlane64(i),
            VMovB32 | VAccvgprReadB32 | VAccvgprWriteB32 | VAccvgprMovB32 => self.v1(i, b32, |x| x),
            VNotB32 => self.v1(i, b32, |x| !x),
            VBfrevB32 => self.v1(i, b32, u32::reverse_bits),
            VClzI32U32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.leading_zeros() },
            ),
            VCtzI32B32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.trailing_zeros() },
            ),
            // The first bit from bit 30 down that differs from the sign bit, counted from bit 31
            // (RDNA3 ISA V_CLS_I32); -1 when none does (0 and -1).
            VClsI32 => self.v1(i, b32, |x| {
                let y = if x >> 31 == 1 { !x } else { x };
                if y == 0 { u32::MAX } else { y.leading_zeros() }
            }),
            VCvtF32I32 => self.v1(i, b32, |x| (x as i32 as f32).to_bits()),
            VCvtF32U32 => self.v1(i, b32, |x| (x as f32).to_bits()),
            VCvtU32F32 => self.v1(i, b32, |x| cvt_u32(f64::from(f32v(x)))),
            VCvtI32F32 => self.v1(i, b32, |x| cvt_i32(f64::from(f32v(x)))),
            // A 16-bit result: the other half of the destination is kept on gfx11/gfx12
            // (`write16`), as for every f16 result.
            VCvtF16F32 => {
                let mut a = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.in_f32(&mut a);
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    r[l] = self.clamp16(i, f32_to_f16(f32v(a[l]), false));
                }
                self.write16(i, &mut r)
            }
            VCvtF32F16 => self.v1(i, f16, |x| f16_to_f32(x).to_bits()),
            VCvtF32Ubyte0 => self.v1(i, b32, |x| ((x & 0xff) as f32).to_bits()),
            VCvtF32Ubyte1 => self.v1(i, b32, |x| ((x >> 8 & 0xff) as f32).to_bits()),
            VCvtF32Ubyte2 => self.v1(i, b32, |x| ((x >> 16 & 0xff) as f32).to_bits()),
            VCvtF32Ubyte3 => self.v1(i, b32, |x| ((x >> 24) as f32).to_bits()),
            VFractF32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f.is_nan() {
                    x
                } else if f.is_infinite() {
                    f32::NAN.to_bits()
                } else {
                    (f - f.floor()).min(f32::from_bits(0x3f7f_ffff)).to_bits()
                }
            }),
            VTruncF32 => self.v1(i, b32, |x| f32v(x).trunc().to_bits()),
            VCeilF32 => self.v1(i, b32, |x| f32v(x).ceil().to_bits()),
            VRndneF32 => self.v1(i, b32, |x| rne32(f32v(x)).to_bits()),
            VFloorF32 => self.v1(i, b32, |x| f32v(x).floor().to_bits()),
            VExpF32 => self.v1(i, b32, |x| f32v(x).exp2().to_bits()),
            VLogF32 => self.v1(i, b32, |x| f32v(x).log2().to_bits()),
            VRcpF32 | VRcpIflagF32 => self.v1(i, b32, |x| (1.0 / f32v(x)).to_bits()),
            VRsqF32 => self.v1(i, b32, |x| (1.0 / f32v(x).sqrt()).to_bits()),
            VSqrtF32 => self.v1(i, b32, |x| f32v(x).sqrt().to_bits()),
            // The input counts revolutions: the hardware reduces it to its fraction before
            // scaling by 2*pi (sin(132000.0) is 0 on gfx1100; tinygrad test/amd/hw
            // test_vop1.py test_v_sin_f32_large, checked on the GPU), so the product never
            // loses the fraction to f32 rounding.
            VSinF32 => self.v1(i, b32, |x| turns(f32v(x), false).to_bits()),
            VCosF32 => self.v1(i, b32, |x| turns(f32v(x), true).to_bits()),
            VFrexpExpI32F32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f == 0.0 || !f.is_finite() {
                    0
                } else {
                    let (m, e) = frexp(f64::from(f));
                    let _ = m;
                    e as u32
                }
            }),
            VFrexpMantF32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f == 0.0 || !f.is_finite() {
                    x
                } else {
                    (frexp(f64::from(f)).0 as f32).to_bits()
                }
            }),
            VReadfirstlaneB32 => {
                let exec = self.w.exec();
                let lane = if exec == 0 {
                    0
                } else {
                    exec.trailing_zeros() as usize
                };
                let v = match self.src(i.src[0], i.lit, b32)? {
                    Src::V(o) => *self
                        .w
                        .v
                        .get(o + lane)
                        .ok_or_else(|| self.err("VGPR out of range"))?,
                    Src::C(c) => c,
                };
                self.swrite(i.dst, v)
            }
            VReadlaneB32 => {
                let lane = (self.s32(i.src[1], i.lit)? as usize) & (self.w.lanes - 1);
                let v = match self.src(i.src[0], i.lit, b32)? {
                    Src::V(o) => *self
                        .w
                        .v
                        .get(o + lane)
                        .ok_or_else(|| self.err("VGPR out of range"))?,
                    Src::C(c) => c,
                };
                self.swrite(i.dst, v)
            }
            VWritelaneB32 => {
                let v = self.s32(i.src[0], i.lit)?;
                let lane = (self.s32(i.src[1], i.lit)? as usize) & (self.w.lanes - 1);
                let o = self.vreg(i.dst, 1)?;
                if let Some(x) = self.w.v.get_mut(o + lane) {
                    *x = v;
                }
                Ok(())
            }
            VCvtI32F64 => self.v64to32(i, |x| cvt_i32(d64(x))),
            VCvtU32F64 => self.v64to32(i, |x| cvt_u32(d64(x))),
            VCvtF32F64 => self.v64to32(i, |x| (d64(x) as f32).to_bits()),
            VCvtF64I32 => self.v32to64(i, b32, |x| f64::from(x as i32).to_bits()),
            VCvtF64U32 => self.v32to64(i, b32, |x| f64::from(x).to_bits()),
            VCvtF64F32 => self.v32to64(i, b32, |x| f64::from(f32v(x)).to_bits()),
            VTruncF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).trunc())),
            VCeilF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).ceil())),
            VFloorF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).floor())),
            VRndneF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(rne64(d64(x)))),
            VFractF64 => self.v64(i, [Width::F64; 3], |x, _, _| {
                let f = d64(x);
                o64(if f.is_nan() {
                    f
                } else if f.is_infinite() {
                    f64::NAN
                } else {
                    (f - f.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
                })
            }),
            // RDNA3 ISA: D = S0 for +-inf and NaN, else mantissa(S0) (in [0.5, 1), S0's sign; 0
            // stays 0) and exponent(S0) - 1022 (0 for +-inf, NaN and 0). Denormals normalise.
            VFrexpMantF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(frexp(d64(x)).0)),
            VFrexpExpI32F64 => self.v64to32(i, |x| frexp(d64(x)).1 as u32),
            VRcpF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(1.0 / d64(x))),
            VRsqF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(1.0 / d64(x).sqrt())),
            VSqrtF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).sqrt())),
            VAddF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(d64(x) + d64(y))),
            VMulF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(d64(x) * d64(y))),
            VMinF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(fmin64(d64(x), d64(y)))),
            VMaxF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(fmax64(d64(x), d64(y)))),
            VFmaF64 => self.v64(i, [Width::F64; 3], |x, y, z| {
                o64(d64(x).mul_add(d64(y), d64(z)))
            }),
            VLdexpF64 => self.v64(i, [Width::F64, b32, b32], |x, e, _| {
                o64(ldexp(d64(x), e as u32 as i32))
            }),
            VLshlrevB64 => self.vshift64(i, |s, x| x << (s & 63)),
            VLshrrevB64 => self.vshift64(i, |s, x| x >> (s & 63)),
            VAshrrevI64 => self.vshift64(i, |s, x| ((x as i64) >> (s & 63)) as u64),
            VLshlAddU64 => self.v64(i, [Width::B64, b32, Width::B64], |x, s, y| {
                (x << (s & 7)).wrapping_add(y)
            }),
            VMadU64U32 | VMadI64I32 => {
                let signed = i.op == VMadI64I32;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                let mut c = [0u64; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                self.lanes64(i, 2, Width::B64, &mut c)?;
                let mut r = [0u64; MAX_LANES];
                let mut m = 0u64;
                for l in 0..self.w.lanes {
                    let (v, o) = if signed {
                        let p = i128::from(a[l] as i32) * i128::from(b[l] as i32)
                            + i128::from(c[l] as i64);
                        (
                            p as u64,
                            p > i128::from(i64::MAX) || p < i128::from(i64::MIN),
                        )
                    } else {
                        let p = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
                        (p as u64, p >> 64 != 0)
                    };
                    r[l] = v;
                    m |= u64::from(o) << l;
                }
                self.write_lanes64(i.dst, &r)?;
                let exec = self.w.exec();
                self.write_mask(i.sdst, m & exec)
            }
            VDivScaleF32 | VDivScaleF64 => {
                let wide = i.op == VDivScaleF64;
                let mut s = [[0u64; MAX_LANES]; 3];
                for (k, sk) in s.iter_mut().enumerate() {
                    if wide {
                        self.lanes64(i, k, Width::F64, sk)?;
                    } else {
                        let mut t = [0u32; MAX_LANES];
                        self.lanes32(i, k, b32, &mut t)?;
                        for (d, x) in sk.iter_mut().zip(&t) {
                            *d = f64::from(f32v(*x)).to_bits();
                        }
                    }
                }
                let mut r = [0u64; MAX_LANES];
                let mut m = 0u64;
                for l in 0..self.w.lanes {
                    let (a, b, c) = (
                        f64::from_bits(s[0][l]),
                        f64::from_bits(s[1][l]),
                        f64::from_bits(s[2][l]),
                    );
                    let (d, v) = if wide {
                        div_scale(a, b, c, (768, 128, 53), exp64, f64::is_subnormal)
                    } else {
                        div_scale(a, b, c, (96, 64, 23), exp32of, sub32)
                    };
                    r[l] = if wide {
                        d.to_bits()
                    } else {
                        u64::from((d as f32).to_bits())
                    };
                    m |= u64::from(v) << l;
                }
                if wide {
                    self.write_lanes64(i.dst, &r)?;
                } else {
                    let mut r32 = [0u32; MAX_LANES];
                    for (d, x) in r32.iter_mut().zip(&r) {
                        // CAST: f32 bits in the low half.
                        *d = *x as u32;
                    }
                    self.write_lanes(i.dst, &r32)?;
                }
                let exec = self.w.exec();
                self.write_mask(i.sdst, m & exec)
            }
            VDivFmasF32 => {
                let vcc = self.w.vcc();
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                let mut c = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                self.lanes32(i, 2, b32, &mut c)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    let f = fma32(f32v(a[l]), f32v(b[l]), f32v(c[l]));
                    // Hardware (and LLVM's fdiv expansion) undoes V_DIV_SCALE_F32's 2^64:
                    // 2^64 when exponent(S2) > 127, else 2^-64. The RDNA3 guide's pseudocode
                    // prints a flat 2^32, which no V_DIV_SCALE result matches.
                    let f = if vcc >> l & 1 == 1 {
                        let up = (c[l] >> 23) & 0xff > 127;
                        (f64::from(f) * if up { 2f64.powi(64) } else { 2f64.powi(-64) }) as f32
                    } else {
                        f
                    };
                    r[l] = f.to_bits();
                }
                self.f32_mode_out(i, &mut r);
                self.write_lanes(i.dst, &r)
            }
            VDivFmasF64 => {
                let vcc = self.w.vcc();
                let mut s = [[0u64; MAX_LANES]; 3];
                for (k, sk) in s.iter_mut().enumerate() {
                    self.lanes64(i, k, Width::F64, sk)?;
                }
                let mut r = [0u64; MAX_LANES];
                for l in 0..self.w.lanes {
                    let (x, y, z) = (d64(s[0][l]), d64(s[1][l]), d64(s[2][l]));
                    let f = x.mul_add(y, z);
                    // As for F32: undoes V_DIV_SCALE_F64's 2^128 (2^128 or 2^-128).
                    let f = if vcc >> l & 1 == 1 {
                        ldexp(f, if exp64(z) > 1023 { 128 } else { -128 })
                    } else {
                        f
                    };
                    r[l] = o64(f);
                }
                super::operands::f64_out(i, &mut r[..self.w.lanes]);
                self.write_lanes64(i.dst, &r)
            }
            VDivFixupF32 => self.v3(i, b32, |q, d, n| {
                (div_fixup(
                    f64::from(f32v(q)),
                    f64::from(f32v(d)),
                    f64::from(f32v(n)),
                    255,
                    exp32of,
                ) as f32)
                    .to_bits()
            }),
            VDivFixupF64 => self.v64(i, [Width::F64; 3], |q, d, n| {
                o64(div_fixup(d64(q), d64(d), d64(n), 2047, exp64))
            }),
            VFmacF64 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v64(&i2, [Width::F64; 3], |x, y, z| {
                    o64(d64(x).mul_add(d64(y), d64(z)))
                })
            }
            VCndmaskB32 => {
                let mask = self.read_mask(i.src[2], i.lit)?;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    r[l] = if mask >> l & 1 == 1 { b[l] } else { a[l] };
                }
                self.write_lanes(i.dst, &r)
            }
            VAddF32 => self.v2(i, b32, |x, y| (f32v(x) + f32v(y)).to_bits()),
            VSubF32 => self.v2(i, b32, |x, y| (f32v(x) - f32v(y)).to_bits()),
            VSubrevF32 => self.v2(i, b32, |x, y| (f32v(y) - f32v(x)).to_bits()),
            VMulF32 => self.v2(i, b32, |x, y| (f32v(x) * f32v(y)).to_bits()),
            VMinF32 => self.v2(i, b32, |x, y| fmin(f32v(x), f32v(y)).to_bits()),
            VMaxF32 => self.v2(i, b32, |x, y| fmax(f32v(x), f32v(y)).to_bits()),
            VLdexpF32 => self.v2(i, b32, |x, e| {
                (ldexp(f64::from(f32v(x)), e as i32) as f32).to_bits()
            }),
            VMulI32I24 => self.v2(i, b32, |x, y| (sext24(x) * sext24(y)) as u32),
            VMulHiI32I24 => self.v2(i, b32, |x, y| ((sext24(x) * sext24(y)) >> 32) as u32),
            VMulU32U24 => self.v2(i, b32, |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
            VMulHiU32U24 => self.v2(i, b32, |x, y| {
                ((u64::from(x & 0xff_ffff) * u64::from(y & 0xff_ffff)) >> 32) as u32
            }),
            VMinI32 => self.v2(i, b32, |x, y| (x as i32).min(y as i32) as u32),
            VMaxI32 => self.v2(i, b32, |x, y| (x as i32).max(y as i32) as u32),
            VMinU32 => self.v2(i, b32, u32::min),
            VMaxU32 => self.v2(i, b32, u32::max),
            VLshlrevB32 => self.v2(i, b32, |s, x| x << (s & 31)),
            VLshrrevB32 => self.v2(i, b32, |s, x| x >> (s & 31)),
            VAshrrevI32 => self.v2(i, b32, |s, x| ((x as i32) >> (s & 31)) as u32),
            VAndB32 => self.v2(i, b32, |x, y| x & y),
            VOrB32 => self.v2(i, b32, |x, y| x | y),
            VXorB32 => self.v2(i, b32, |x, y| x ^ y),
            VXnorB32 => self.v2(i, b32, |x, y| !(x ^ y)),
            // With clamp the integer result saturates (RDNA3 ISA, VOP3 CLAMP).
            VAddNcU32 if i.clamp => self.v2(i, b32, u32::saturating_add),
            VSubNcU32 if i.clamp => self.v2(i, b32, u32::saturating_sub),
            VSubrevNcU32 if i.clamp => self.v2(i, b32, |x, y| y.saturating_sub(x)),
            VAddNcI32 if i.clamp => {
                self.v2(i, b32, |x, y| (x as i32).saturating_add(y as i32) as u32)
            }
            VSubNcI32 if i.clamp => {
                self.v2(i, b32, |x, y| (x as i32).saturating_sub(y as i32) as u32)
            }
            VAddNcU32 => self.v2(i, b32, u32::wrapping_add),
            VSubNcU32 => self.v2(i, b32, u32::wrapping_sub),
            VSubrevNcU32 => self.v2(i, b32, |x, y| y.wrapping_sub(x)),
            VAddNcI32 => self.v2(i, b32, |x, y| (x as i32).wrapping_add(y as i32) as u32),
            VSubNcI32 => self.v2(i, b32, |x, y| (x as i32).wrapping_sub(y as i32) as u32),
            VMulLoU32 => self.v2(i, b32, u32::wrapping_mul),
            VMulHiU32 => self.v2(i, b32, |x, y| ((u64::from(x) * u64::from(y)) >> 32) as u32),
            VMulHiI32 => self.v2(i, b32, |x, y| {
                ((i64::from(x as i32) * i64::from(y as i32)) >> 32) as u32
            }),
            VBfmB32 => self.v2(i, b32, |x, y| (((1u64 << (x & 31)) - 1) as u32) << (y & 31)),
            VBcntU32B32 => self.v2(i, b32, |x, y| x.count_ones().wrapping_add(y)),
            VMbcntLoU32B32 | VMbcntHiU32B32 => {
                let hi = i.op == VMbcntHiU32B32;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    let below = if hi {
                        if l <= 32 {
                            0
                        } else {
                            ((1u64 << (l - 32)) - 1) as u32
                        }
                    } else if l >= 32 {
                        u32::MAX
                    } else {
                        ((1u64 << l) - 1) as u32
                    };
                    r[l] = (a[l] & below).count_ones().wrapping_add(b[l]);
                }
                self.write_lanes(i.dst, &r)
            }
            VCvtPkRtzF16F32 => self.v2(i, b32, |x, y| {
                f32_to_f16(f32v(x), true) | (f32_to_f16(f32v(y), true) << 16)
            }),
            VFfbhU32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.leading_zeros() },
            ),
            VFfblB32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.trailing_zeros() },
            ),
            VMacF32 => {
                // Unfused: the product rounds before the add.
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v3(&i2, b32, |x, y, z| (f32v(x) * f32v(y) + f32v(z)).to_bits())
            }
            VFmacF32 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v3(&i2, b32, |x, y, z| {
                    fma32(f32v(x), f32v(y), f32v(z)).to_bits()
                })
            }
            VFmaF32 | VFmamkF32 | VFmaakF32 => {
                self.v3(i, b32, |x, y, z| fma32(f32v(x), f32v(y), f32v(z)).to_bits())
            }
            VBfeU32 => self.v3(i, b32, bfe),
            VBfeI32 => self.v3(i, b32, bfe_i),
            VBfiB32 => self.v3(i, b32, |m, x, y| (m & x) | (!m & y)),
            VAlignbitB32 => self.v3(i, b32, |x, y, s| {
                (((u64::from(x) << 32) | u64::from(y)) >> (s & 31)) as u32
            }),
            VAlignbyteB32 => self.v3(i, b32, |x, y, s| {
                (((u64::from(x) << 32) | u64::from(y)) >> ((s & 3) * 8)) as u32
            }),
            VMin3F32 => self.v3(i, b32, |x, y, z| {
                fmin(fmin(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMaxminF32 => self.v3(i, b32, |x, y, z| {
                fmin(fmax(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMinmaxF32 => self.v3(i, b32, |x, y, z| {
                fmax(fmin(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMax3F32 => self.v3(i, b32, |x, y, z| {
                fmax(fmax(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMed3F32 => self.v3(i, b32, |x, y, z| {
                let (a, b, c) = (f32v(x), f32v(y), f32v(z));
                // RDNA3 ISA V_MED3_F32: with a NaN operand, the min3 of the three.
                if a.is_nan() || b.is_nan() || c.is_nan() {
                    fmin(fmin(a, b), c).to_bits()
                } else {
                    fmax(fmin(a, b), fmin(fmax(a, b), c)).to_bits()
                }
            }),
            VMin3I32 => self.v3(i, b32, |x, y, z| {
                (x as i32).min(y as i32).min(z as i32) as u32
            }),
            VMax3I32 => self.v3(i, b32, |x, y, z| {
                (x as i32).max(y as i32).max(z as i32) as u32
            }),
            VMed3I32 => self.v3(i, b32, |x, y, z| {
                let (a, b, c) = (x as i32, y as i32, z as i32);
                a.min(b).max(a.max(b).min(c)) as u32
            }),
            VMin3U32 => self.v3(i, b32, |x, y, z| x.min(y).min(z)),
            VMax3U32 => self.v3(i, b32, |x, y, z| x.max(y).max(z)),
            VMed3U32 => self.v3(i, b32, |a, b, c| a.min(b).max(a.max(b).min(c))),
            VXor3B32 => self.v3(i, b32, |x, y, z| x ^ y ^ z),
            VOr3B32 => self.v3(i, b32, |x, y, z| x | y | z),
            VAndOrB32 => self.v3(i, b32, |x, y, z| (x & y) | z),
            VLshlOrB32 => self.v3(i, b32, |x, s, z| (x << (s & 31)) | z),
            VLshlAddU32 => self.v3(i, b32, |x, s, z| (x << (s & 31)).wrapping_add(z)),
            VAddLshlU32 => self.v3(i, b32, |x, y, s| x.wrapping_add(y) << (s & 31)),
            VAdd3U32 => self.v3(i, b32, |x, y, z| x.wrapping_add(y).wrapping_add(z)),
            VXadU32 => self.v3(i, b32, |x, y, z| (x ^ y).wrapping_add(z)),
            VMadU32U24 => self.v3(i, b32, |x, y, z| {
                (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)
            }),
            VMadI32I24 => self.v3(i, b32, |x, y, z| {
                ((sext24(x) * sext24(y)) as u32).wrapping_add(z)
            }),
            VPermB32 => self.v3(i, b32, |x, y, sel| {
                let s = (u64::from(x) << 32) | u64::from(y);
                (0..4).fold(0u32, |acc, k| {
                    acc | (perm_byte(s, (sel >> (8 * k)) & 0xff) << (8 * k))
                })
            }),
            VAddCoU32 => self.vcarry(i, false, false, false),
            VSubCoU32 => self.vcarry(i, true, false, false),
            VSubrevCoU32 => self.vcarry(i, true, true, false),
            VAddCoCiU32 => self.vcarry(i, false, false, true),
            VSubCoCiU32 => self.vcarry(i, true, false, true),
            VSubrevCoCiU32 => self.vcarry(i, true, true, true),
            VCmpF16 | VCmpF32 | VCmpF64 | VCmpI16 | VCmpU16 | VCmpI32 | VCmpU32 | VCmpI64
            | VCmpU64 | VCmpClassF32 | VCmpClassF64 | VCmpClassF16 => self.vcmp(i),
            _ => Err(self.unsupported(i)),
        }
    }

    /// V_SWAP_B32: each active lane exchanges its VDST and SRC0 VGPRs.
    fn vswap(&mut self, i: &Inst) -> Result<(), IsaError> {
        let (d, s) = (self.vreg(i.dst, 1)?, self.vreg(i.src[0], 1)?);
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            self.w.v.swap(d + l, s + l);
        }
        Ok(())
    }

    /// V_PERMLANE64_B32: lane l of a wave64 reads SRC0 of lane l ^ 32 (every lane's value,
    /// active or not); nothing happens in wave32.
    fn permlane64(&mut self, i: &Inst) -> Result<(), IsaError> {
        if self.w.lanes != 64 {
            return Ok(());
        }
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut a)?;
        let mut r = [0u32; MAX_LANES];
        for (l, r) in r.iter_mut().enumerate() {
            *r = a[l ^ 32];
        }
        self.write_lanes(i.dst, &r)
    }

    /// RDNA4 ISA V_S_EXP/LOG/RCP/RSQ/SQRT_F32/F16: the vector transcendental's arithmetic on
    /// one scalar value, computed once per wave and written to the destination SGPR (the
    /// f16 forms: D[15:0] the result, D[31:16] zero, as for the other scalar f16 results).
    /// Edge values are IEEE's, which the guide's tables give: exp(-inf) = 0, log(+-0) = -inf,
    /// log(x < 0) = NaN, rcp(+-0) = +-inf, rsq(+-0) = +-inf, rsq/sqrt(x < 0) = NaN,
    /// sqrt(-0) = -0; NaN in, quiet NaN out. The SGPR is written whatever EXEC holds (a
    /// per-wave result, as V_READFIRSTLANE_B32's).
    fn scalar_trans(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let f: fn(f32) -> f32 = match i.op {
            VSExpF32 | VSExpF16 => f32::exp2,
            VSLogF32 | VSLogF16 => f32::log2,
            VSRcpF32 | VSRcpF16 => |x| 1.0 / x,
            VSRsqF32 | VSRsqF16 => |x| 1.0 / x.sqrt(),
            _ => f32::sqrt,
        };
        let half = matches!(i.op, VSExpF16 | VSLogF16 | VSRcpF16 | VSRsqF16 | VSSqrtF16);
        // The scalar source, with abs/neg, through the lane reader (every lane the same).
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, if half { Width::F16 } else { Width::B32 }, &mut a)?;
        let omod = [1.0f32, 2.0, 4.0, 0.5][usize::from(i.omod & 3)];
        let d = if half {
            let h = f32_to_f16(f(f16_to_f32(a[0] & 0xffff)) * omod, false);
            self.clamp16(i, h) & 0xffff
        } else {
            self.in_f32(&mut a);
            let mut r = [0u32; MAX_LANES];
            r[0] = f(f32v(a[0])).to_bits();
            // Quiet NaN, omod, clamp and the denormal mode, as for the vector forms.
            self.f32_mode_out(i, &mut r);
            r[0]
        };
        self.swrite(i.dst, d)
    }

    /// V_MAD_U32_U16 / V_MAD_I32_I16: the 16-bit halves (op_sel) of S0 and S1 multiplied,
    /// plus the 32-bit S2; clamp saturates to 32 bits.
    fn mad32_16(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut s = [[0u32; MAX_LANES]; 3];
        self.lanes32(i, 0, Width::F16, &mut s[0])?;
        self.lanes32(i, 1, Width::F16, &mut s[1])?;
        self.lanes32(i, 2, Width::B32, &mut s[2])?;
        let signed = i.op == Op::VMadI32I16;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let x = if signed {
                // CAST: sign extensions of the halves and of S2.
                let p = i64::from(s[0][l] as u16 as i16) * i64::from(s[1][l] as u16 as i16);
                let x = p + i64::from(s[2][l] as i32);
                if i.clamp {
                    x.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    x
                }
            } else {
                let p = i64::from(s[0][l] & 0xffff) * i64::from(s[1][l] & 0xffff);
                let x = p + i64::from(s[2][l]);
                if i.clamp {
                    x.min(i64::from(u32::MAX))
                } else {
                    x
                }
            };
            // CAST: the low 32 bits are the result.
            r[l] = x as u32;
        }
        self.write_lanes(i.dst, &r)
    }
}
