//! More of the vector ALU (gfx11/gfx12, RDNA3/RDNA4 ISA guides): the 16-bit select, the f16
//! max-of-min/min-of-max and div_fixup, VOP3 and VOP3P dot products, packed conversions, the
//! cube-map coordinates, the DX9 zero-preserving multiplies, v_mullit, and gfx12's
//! IEEE-754-2019 minimum/maximum family.

use super::ext_num::*;
use super::fp8::Fp8;
use super::*;

impl Exec<'_, '_> {
    /// The operations of this module; `None` for any other.
    pub(super) fn valu_ext(&mut self, i: &Inst) -> Option<Result<(), IsaError>> {
        use Op::*;
        let m32 = minmax_ieee32;
        let m16 = minmax_ieee16;
        Some(match i.op {
            VCndmaskB16 => self.cndmask16(i),
            VMaxminF16 => self.f16x3(i, |a, b, c| {
                f32_to_f16(
                    fmin(fmax(f16_to_f32(a), f16_to_f32(b)), f16_to_f32(c)),
                    false,
                )
            }),
            VMinmaxF16 => self.f16x3(i, |a, b, c| {
                f32_to_f16(
                    fmax(fmin(f16_to_f32(a), f16_to_f32(b)), f16_to_f32(c)),
                    false,
                )
            }),
            VDivFixupF16 => self.f16x3(i, div_fixup16),
            VMinimumF16 => self.f16x3(i, |a, b, _| m16(a, b, false)),
            VMaximumF16 => self.f16x3(i, |a, b, _| m16(a, b, true)),
            VMinimum3F16 => self.f16x3(i, |a, b, c| m16(m16(a, b, false), c, false)),
            VMaximum3F16 => self.f16x3(i, |a, b, c| m16(m16(a, b, true), c, true)),
            VMinimummaximumF16 => self.f16x3(i, |a, b, c| m16(m16(a, b, false), c, true)),
            VMaximumminimumF16 => self.f16x3(i, |a, b, c| m16(m16(a, b, true), c, false)),
            VMinimumF32 => self.f32x3(i, |a, b, _| m32(a, b, false)),
            VMaximumF32 => self.f32x3(i, |a, b, _| m32(a, b, true)),
            VMinimum3F32 => self.f32x3(i, |a, b, c| m32(m32(a, b, false), c, false)),
            VMaximum3F32 => self.f32x3(i, |a, b, c| m32(m32(a, b, true), c, true)),
            VMinimummaximumF32 => self.f32x3(i, |a, b, c| m32(m32(a, b, false), c, true)),
            VMaximumminimumF32 => self.f32x3(i, |a, b, c| m32(m32(a, b, true), c, false)),
            VMinimumF64 => self.v64(i, [Width::F64; 3], |a, b, _| minmax_ieee64(a, b, false)),
            VMaximumF64 => self.v64(i, [Width::F64; 3], |a, b, _| minmax_ieee64(a, b, true)),
            // RDNA3 ISA: D = (S0 == 0 || S1 == 0) ? +0 : S0 * S1 (0 * inf and 0 * NaN are 0);
            // the fma forms return S2 (the accumulator) in that case.
            VMulDx9ZeroF32 => self.f32x3(i, |a, b, _| {
                let (x, y) = (f32v(a), f32v(b));
                if x == 0.0 || y == 0.0 {
                    0
                } else {
                    (x * y).to_bits()
                }
            }),
            VFmaDx9ZeroF32 | VFmacDx9ZeroF32 => {
                let mut j = *i;
                if i.op == VFmacDx9ZeroF32 {
                    j.src[2] = i.dst;
                }
                self.f32x3(&j, |a, b, c| {
                    let (x, y) = (f32v(a), f32v(b));
                    if x == 0.0 || y == 0.0 {
                        c
                    } else {
                        fma32(x, y, f32v(c)).to_bits()
                    }
                })
            }
            // RDNA3 ISA V_MULLIT_F32: -MAX_FLOAT when S1 is -MAX_FLOAT, -inf or NaN, or when S2
            // is <= 0 or NaN; else S0 * S1.
            VMullitF32 => self.f32x3(i, |a, b, c| {
                let (y, z) = (f32v(b), f32v(c));
                if y == -f32::MAX || y == f32::NEG_INFINITY || y.is_nan() || z.is_nan() || z <= 0.0
                {
                    (-f32::MAX).to_bits()
                } else {
                    (f32v(a) * y).to_bits()
                }
            }),
            // RDNA3 ISA V_CUBE*: (S0, S1, S2) = (x, y, z); the face id (0..5 as a float),
            // the face's s and t coordinates and twice the major axis.
            VCubeidF32 => self.f32x3(i, |a, b, c| {
                let (x, y, z) = (f32v(a), f32v(b), f32v(c));
                let v = match cube_major(x, y, z) {
                    2 => 4.0 + f32::from(u8::from(z < 0.0)),
                    1 => 2.0 + f32::from(u8::from(y < 0.0)),
                    _ => f32::from(u8::from(x < 0.0)),
                };
                v.to_bits()
            }),
            // The s/t coordinates are selections of (negated) operands: a NaN passes as it is.
            VCubescF32 => self.f32x3_sel(i, |a, b, c| {
                let (x, y, z) = (f32v(a), f32v(b), f32v(c));
                let v = match cube_major(x, y, z) {
                    2 if z < 0.0 => -x,
                    2 | 1 => x,
                    _ if x < 0.0 => z,
                    _ => -z,
                };
                v.to_bits()
            }),
            VCubetcF32 => self.f32x3_sel(i, |a, b, c| {
                let (x, y, z) = (f32v(a), f32v(b), f32v(c));
                let v = match cube_major(x, y, z) {
                    1 if y < 0.0 => -z,
                    1 => z,
                    _ => -y,
                };
                v.to_bits()
            }),
            VCubemaF32 => self.f32x3(i, |a, b, c| {
                let (x, y, z) = (f32v(a), f32v(b), f32v(c));
                let v = match cube_major(x, y, z) {
                    2 => 2.0 * z,
                    1 => 2.0 * y,
                    _ => 2.0 * x,
                };
                v.to_bits()
            }),
            // D = {cvt(S1), cvt(S0)}: f32 sources (abs/neg apply), 16-bit integer halves.
            VCvtPkI16F32 => self.pk16(i, Width::B32, |x| f32_to_int16(f32v(x), true)),
            VCvtPkU16F32 => self.pk16(i, Width::B32, |x| f32_to_int16(f32v(x), false)),
            VCvtPkNormI16F32 => self.pk16(i, Width::B32, |x| f32_to_norm16(f32v(x), true)),
            VCvtPkNormU16F32 => self.pk16(i, Width::B32, |x| f32_to_norm16(f32v(x), false)),
            VCvtPkNormI16F16 => self.pk16(i, Width::F16, |x| f32_to_norm16(f16_to_f32(x), true)),
            VCvtPkNormU16F16 => self.pk16(i, Width::F16, |x| f32_to_norm16(f16_to_f32(x), false)),
            VCvtPkU8F32 => self.cvt_pk_u8(i),
            VDot2F16F16 | VDot2Bf16Bf16 => self.dot2_16(i),
            VDot2accF32F16 => {
                let mut j = *i;
                j.src[2] = i.dst;
                self.dot_packed(&j)
            }
            VPkFmacF16 => self.pk_fmac16(i),
            // D.h/l = S0.h/l (the halves as op_sel names them; the other half of D kept).
            VMovB16 => {
                let mut a = [0u32; MAX_LANES];
                match self.lanes32(i, 0, Width::F16, &mut a) {
                    Ok(()) => {
                        for x in &mut a {
                            *x &= 0xffff;
                        }
                        self.write16(i, &mut a)
                    }
                    Err(e) => Err(e),
                }
            }
            VCvtF32Fp8 | VCvtF32Bf8 | VCvtPkF32Fp8 | VCvtPkF32Bf8 => self.cvt_from_fp8(i),
            VCvtPkFp8F32 | VCvtPkBf8F32 | VCvtSrFp8F32 | VCvtSrBf8F32 => self.cvt_to_fp8(i),
            // RDNA3/RDNA4 ISA: V_ILLEGAL raises the illegal-instruction exception into the
            // trap handler; the simulator has none, so the wave stops with a named fault.
            VIllegal => Err(self.err(
                "v_illegal: illegal-instruction exception (no trap handler in the simulator)",
            )),
            VPermlane16VarB32 | VPermlanex16VarB32 => self.permlane_var(i),
            // gfx9 (CDNA3 ISA): V_MAD_F16 and V_MAD_LEGACY_F16 round the product to f16 before
            // the add (a MAD, not fused); V_FMA_LEGACY_F16 is fused; the legacy forms are
            // the VI encodings without op_sel (same arithmetic).
            VMadF16 | VMadLegacyF16 => self.f16x3(i, |a, b, c| {
                let p = f32_to_f16(f16_to_f32(a) * f16_to_f32(b), false);
                f32_to_f16(f16_to_f32(p) + f16_to_f32(c), false)
            }),
            VFmaLegacyF16 => self.f16x3(i, |a, b, c| {
                let f = |v: u32| f64::from(f16_to_f32(v));
                // CAST: the f64 fma rounds to f32, then to f16.
                f32_to_f16(f(a).mul_add(f(b), f(c)) as f32, false)
            }),
            VDivFixupLegacyF16 => self.f16x3(i, div_fixup16),
            // CDNA3 ISA V_MAD_LEGACY_F32: S0 * S1 + S2 with DX9 rules (0 * anything = 0),
            // the product rounded before the add.
            VMadLegacyF32 => self.f32x3(i, |a, b, c| {
                let (x, y) = (f32v(a), f32v(b));
                let p = if x == 0.0 || y == 0.0 { 0.0 } else { x * y };
                (p + f32v(c)).to_bits()
            }),
            // CDNA3 ISA V_EXP_LEGACY_F32 / V_LOG_LEGACY_F32: 2^S0 and log2(S0) at the
            // Southern Islands precision, which the exact results meet.
            VExpLegacyF32 => self.f32x3(i, |a, _, _| f32v(a).exp2().to_bits()),
            VLogLegacyF32 => self.f32x3(i, |a, _, _| f32v(a).log2().to_bits()),
            // V_CVT_PKACCUM_U8_F32: V_CVT_PK_U8_F32 with D as the word it updates.
            VCvtPkaccumU8F32 => {
                let mut j = *i;
                j.src[2] = i.dst;
                self.cvt_pk_u8(&j)
            }
            VDot2cI32I16 | VDot4cI32I8 | VDot8cI32I4 => {
                let mut j = *i;
                j.src[2] = i.dst;
                self.dot_packed(&j)
            }
            VMovreldB32 | VMovrelsB32 | VMovrelsdB32 | VMovrelsd2B32 => match self.movrel(i) {
                Ok(j) => self.v1(&j, Width::B32, |x| x),
                Err(e) => Err(e),
            },
            VSwaprelB32 => self.swaprel(i),
            VQsadPkU16U8 | VMqsadPkU16U8 | VMqsadU32U8 => self.qsad(i),
            VTrigPreopF64 => self.v64(i, [Width::F64, Width::B32, Width::B32], trig_preop),
            _ => return None,
        })
    }

    /// V_CVT_F32_FP8/BF8 (one byte of S0, chosen by op_sel: RDNA4 ISA OPSEL[1:0] 0, 2, 1, 3
    /// for bytes 0..3) and V_CVT_PK_F32_FP8/BF8 (the two bytes of S0's word op_sel[0] names,
    /// to D and D + 1), exactly, into f32 (omod and clamp apply).
    fn cvt_from_fp8(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let fmt = Fp8::of(self.l.isa, matches!(i.op, VCvtF32Bf8 | VCvtPkF32Bf8));
        let mut j = *i;
        j.mods = 0;
        j.opsel = 0;
        let mut a = [0u32; MAX_LANES];
        self.lanes32(&j, 0, Width::B32, &mut a)?;
        let pk = matches!(i.op, VCvtPkF32Fp8 | VCvtPkF32Bf8);
        let shift = if pk {
            16 * u32::from(i.opsel & 1)
        } else {
            8 * [0, 2, 1, 3][usize::from(i.opsel & 3)]
        };
        let mut lo = [0u32; MAX_LANES];
        let mut hi = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            lo[l] = fmt.to_f32(a[l] >> shift).to_bits();
            hi[l] = fmt.to_f32(a[l] >> (shift + 8)).to_bits();
        }
        let mut k = *i;
        k.op = VCvtF32F16;
        self.f32_mode_out(&k, &mut lo);
        if !pk {
            return self.write_lanes(i.dst, &lo);
        }
        self.f32_mode_out(&k, &mut hi);
        self.vreg(i.dst, 2)?;
        self.write_lanes(i.dst, &lo)?;
        self.write_lanes(i.dst + 1, &hi)
    }

    /// V_CVT_PK_FP8/BF8_F32: {cvt(S1), cvt(S0)} into the word of D op_sel[3] names (the other
    /// word kept); V_CVT_SR_FP8/BF8_F32: S0 with S1[31:12] added to its mantissa (wrapping
    /// within the mantissa: stochastic rounding), converted, into the byte op_sel[3:2] names
    /// (the other bytes kept). Round to nearest even; clamp saturates (RDNA4/CDNA3 ISA).
    fn cvt_to_fp8(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let fmt = Fp8::of(self.l.isa, matches!(i.op, VCvtPkBf8F32 | VCvtSrBf8F32));
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let mut j = *i;
        j.opsel = 0;
        self.lanes32(&j, 0, Width::B32, &mut a)?;
        self.in_f32(&mut a);
        let sr = matches!(i.op, VCvtSrFp8F32 | VCvtSrBf8F32);
        j.mods = 0;
        self.lanes32(&j, 1, Width::B32, &mut b)?;
        if !sr {
            // S1's abs/neg (as an f32 source).
            let mut k = *i;
            k.opsel = 0;
            self.lanes32(&k, 1, Width::B32, &mut b)?;
            self.in_f32(&mut b);
        }
        let o = self.vreg(i.dst, 1)?;
        let mut r = [0u32; MAX_LANES];
        r[..self.w.lanes].copy_from_slice(self.row(o)?);
        let cv = |x: u32| fmt.convert(f32v(x), i.clamp);
        for l in 0..self.w.lanes {
            if sr {
                let x = a[l];
                let m = (x & 0x7f_ffff).wrapping_add(b[l] >> 12) & 0x7f_ffff;
                let sh = 8 * u32::from((i.opsel >> 2) & 3);
                r[l] = (r[l] & !(0xff << sh)) | (cv((x & 0xff80_0000) | m) << sh);
            } else {
                let sh = 16 * u32::from((i.opsel >> 3) & 1);
                let v = cv(a[l]) | (cv(b[l]) << 8);
                r[l] = (r[l] & !(0xffff << sh)) | (v << sh);
            }
        }
        self.write_lanes(i.dst, &r)
    }

    /// RDNA4 ISA V_DOT4_F32_{FP8,BF8}_{FP8,BF8}: D.f32 = S2.f32 + the sum of the four
    /// products of S0's and S1's 8-bit floats (exact in f64; the sum rounds once to f32).
    pub(super) fn dot4_fp8(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let isa = self.l.isa;
        let fa = Fp8::of(isa, matches!(i.op, VDot4F32Bf8Fp8 | VDot4F32Bf8Bf8));
        let fb = Fp8::of(isa, matches!(i.op, VDot4F32Fp8Bf8 | VDot4F32Bf8Bf8));
        let mut s = [[0u32; MAX_LANES]; 3];
        let mut j = *i;
        j.mods = 0;
        j.sub = 0;
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(&j, k, Width::B32, s)?;
        }
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let mut t = f64::from(f32v(s[2][l]));
            for k in 0..4 {
                let (x, y) = (s[0][l] >> (8 * k), s[1][l] >> (8 * k));
                t += f64::from(fa.to_f32(x)) * f64::from(fb.to_f32(y));
            }
            // CAST: the sum rounded to f32.
            let f = t as f32;
            r[l] = if i.clamp {
                if f.is_nan() {
                    0
                } else {
                    f.clamp(0.0, 1.0).to_bits()
                }
            } else {
                f.to_bits()
            };
        }
        self.write_lanes(i.dst, &r)
    }

    /// V_PERMLANE16_VAR_B32 / V_PERMLANEX16_VAR_B32 (RDNA4 ISA): each active lane reads S0
    /// of the lane S1[3:0] selects within its row of 16 (the X form: within the other row of
    /// its pair); S0 is read whole before any lane is written.
    fn permlane_var(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        // (An SGPR or constant operand, which LLVM flags as invalid, reads as that value in
        // every lane.)
        let mut src = [0u32; MAX_LANES];
        let mut sel = [0u32; MAX_LANES];
        let mut j = *i;
        j.mods = 0;
        j.opsel = 0;
        self.lanes32(&j, 0, Width::B32, &mut src)?;
        self.lanes32(&j, 1, Width::B32, &mut sel)?;
        let cross = i.op == Op::VPermlanex16VarB32;
        let d = self.vreg(i.dst, 1)?;
        let mut out = [0u32; MAX_LANES];
        out[..n].copy_from_slice(self.row(d)?);
        let exec = self.w.exec();
        for (l, o) in out[..n].iter_mut().enumerate() {
            if (exec >> l) & 1 == 0 {
                continue;
            }
            let row = l / 16;
            let from = if cross { row ^ 1 } else { row };
            // CAST: a 4-bit lane index.
            let k = from * 16 + (sel[l] & 15) as usize;
            if let Some(v) = src.get(k).filter(|_| k < n) {
                *o = *v;
            }
        }
        self.write_lanes(i.dst, &out)
    }

    /// A VGPR operand code moved `off` registers on (the M0-relative moves); a fault when it
    /// leaves the VGPRs.
    fn rel_vgpr(&self, code: u16, off: u32) -> Result<u16, IsaError> {
        if !(VGPR..AGPR).contains(&code) {
            return Err(self.err(&format!(
                "M0-relative move: operand code {code} is not a VGPR"
            )));
        }
        u32::from(code - VGPR)
            .checked_add(off)
            .filter(|&r| r < u32::from(AGPR - VGPR))
            .and_then(|r| u16::try_from(r).ok())
            .map(|r| VGPR + r)
            .ok_or_else(|| {
                self.err(&format!(
                    "M0-relative move: VGPR v{} + M0 {off} is beyond the VGPRs",
                    code - VGPR
                ))
            })
    }

    /// The M0-relative moves as the plain move they amount to (RDNA3 ISA): V_MOVRELD_B32
    /// writes VGPR[D + M0], V_MOVRELS_B32 reads VGPR[S0 + M0], V_MOVRELSD_B32 both, and
    /// V_MOVRELSD_2_B32 reads VGPR[S0 + M0[9:0]] into VGPR[D + M0[25:16]]. A register beyond
    /// the wave's VGPRs faults when the move executes. Used by DPP too (the permutation reads
    /// the relative source).
    pub(super) fn movrel(&self, i: &Inst) -> Result<Inst, IsaError> {
        let m0 = self.w.s[125];
        let (src_off, dst_off) = match i.op {
            Op::VMovreldB32 => (None, Some(m0)),
            Op::VMovrelsB32 => (Some(m0), None),
            Op::VMovrelsdB32 => (Some(m0), Some(m0)),
            _ => (Some(m0 & 0x3ff), Some((m0 >> 16) & 0x3ff)),
        };
        let mut j = *i;
        j.op = Op::VMovB32;
        if let Some(o) = src_off {
            j.src[0] = self.rel_vgpr(i.src[0], o)?;
        }
        if let Some(o) = dst_off {
            j.dst = self.rel_vgpr(i.dst, o)?;
        }
        Ok(j)
    }

    /// V_SWAPREL_B32 (RDNA3 ISA): swaps VGPR[S0 + M0[9:0]] and VGPR[D + M0[25:16]] in the
    /// active lanes.
    fn swaprel(&mut self, i: &Inst) -> Result<(), IsaError> {
        let m0 = self.w.s[125];
        let a = self.rel_vgpr(i.src[0], m0 & 0x3ff)?;
        let b = self.rel_vgpr(i.dst, (m0 >> 16) & 0x3ff)?;
        let mut x = [0u32; MAX_LANES];
        let mut y = [0u32; MAX_LANES];
        let n = self.w.lanes;
        let (oa, ob) = (self.vreg(a, 1)?, self.vreg(b, 1)?);
        x[..n].copy_from_slice(self.row(oa)?);
        y[..n].copy_from_slice(self.row(ob)?);
        self.write_lanes(b, &x)?;
        self.write_lanes(a, &y)
    }

    /// V_QSAD_PK_U16_U8 / V_MQSAD_PK_U16_U8 / V_MQSAD_U32_U8 (RDNA3 ISA): four byte SADs of
    /// the 32-bit windows S0[31:0], S0[39:8], S0[47:16], S0[55:24] (S0 64-bit) against S1,
    /// each plus its part of S2: 16-bit parts of 64 bits (the result's low 16 bits kept) or,
    /// for V_MQSAD_U32_U8, 32-bit parts of 128 bits. The MQSAD forms skip bytes whose S1
    /// byte is 0 (as V_MSAD_U8).
    fn qsad(&mut self, i: &Inst) -> Result<(), IsaError> {
        let wide = i.op == Op::VMqsadU32U8;
        let masked = i.op != Op::VQsadPkU16U8;
        let mut a = [0u64; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let mut j = *i;
        j.mods = 0;
        // 64-bit operands: an inline float constant is its f64 encoding.
        self.lanes64(&j, 0, Width::F64, &mut a)?;
        self.lanes32(&j, 1, Width::B32, &mut b)?;
        let parts = if wide { 4 } else { 2 };
        // S2's dwords: its first 64 bits as a 64-bit operand, V_MQSAD_U32_U8's upper two
        // from the next registers of the run (a constant has none: zero).
        let mut c = [[0u32; MAX_LANES]; 4];
        let mut c64 = [0u64; MAX_LANES];
        self.lanes64(&j, 2, Width::F64, &mut c64)?;
        for l in 0..self.w.lanes {
            // CAST: the halves of the 64-bit value.
            (c[0][l], c[1][l]) = (c64[l] as u32, (c64[l] >> 32) as u32);
        }
        let code = i.src[2];
        if wide && (code < 128 || (VGPR..AGPR).contains(&code)) {
            for (k, c) in c.iter_mut().enumerate().skip(2) {
                let mut j2 = j;
                // CAST: k < 4.
                j2.src[2] = code + k as u16;
                self.lanes32(&j2, 2, Width::B32, c)?;
            }
        }
        let mut r = [[0u32; MAX_LANES]; 4];
        for l in 0..self.w.lanes {
            for q in 0..4u32 {
                // CAST: a 32-bit window of the 64-bit S0.
                let win = (a[l] >> (8 * q)) as u32;
                let mut t = 0u32;
                for k in 0..4 {
                    let (x, y) = ((win >> (8 * k)) & 0xff, (b[l] >> (8 * k)) & 0xff);
                    if !(masked && y == 0) {
                        t += x.abs_diff(y);
                    }
                }
                if wide {
                    r[q as usize][l] = t.wrapping_add(c[q as usize][l]);
                } else {
                    let (dw, sh) = ((q / 2) as usize, 16 * (q % 2));
                    let acc = (c[dw][l] >> sh) & 0xffff;
                    r[dw][l] |= (t.wrapping_add(acc) & 0xffff) << sh;
                }
            }
        }
        self.vreg(i.dst, parts)?;
        for (k, r) in r.iter().enumerate().take(parts) {
            // CAST: k < 4.
            self.write_lanes(i.dst + k as u16, r)?;
        }
        Ok(())
    }

    /// V_PK_FMAC_F16 (VOP2): per 16-bit half, D.h = fma(S0.h, S1.h, D.h), each rounded once
    /// to f16.
    fn pk_fmac16(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut s = [[0u32; MAX_LANES]; 3];
        let mut j = *i;
        j.src[2] = i.dst;
        j.mods = 0;
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(&j, k, Width::B32, s)?;
        }
        let f = |v: u32, h: u32| f64::from(f16_to_f32((v >> (16 * h)) & 0xffff));
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let (a, b, c) = (s[0][l], s[1][l], s[2][l]);
            let mut out = 0;
            for h in 0..2 {
                // CAST: the f64 fma rounds to f32, then to f16.
                let v = f(a, h).mul_add(f(b, h), f(c, h)) as f32;
                out |= (f32_to_f16(v, false) & 0xffff) << (16 * h);
            }
            r[l] = out;
        }
        self.write_lanes(i.dst, &r)
    }

    /// The three sources as 32-bit lanes, with VOP3 abs/neg on the `width` float.
    fn srcs3(&self, i: &Inst, width: Width) -> Result<[Lanes; 3], IsaError> {
        let mut s = [[0u32; MAX_LANES]; 3];
        for (k, s) in s.iter_mut().enumerate() {
            if i.src[k] != NONE {
                self.lanes32(i, k, width, s)?;
            }
        }
        Ok(s)
    }

    /// dst.f16 = f(S0.f16, S1.f16, S2.f16) on halves (op_sel, abs/neg), clamp applied.
    fn f16x3(&mut self, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), IsaError> {
        let s = self.srcs3(i, Width::F16)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let v = f(s[0][l] & 0xffff, s[1][l] & 0xffff, s[2][l] & 0xffff);
            r[l] = self.clamp16(i, v & 0xffff);
        }
        self.write16(i, &mut r)
    }

    /// dst.f32 = f(S0, S1, S2) on f32 bits: abs/neg, the denormal mode on the inputs, and
    /// the quiet bit, omod, clamp and denormal mode on the result.
    fn f32x3(&mut self, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), IsaError> {
        let mut s = self.srcs3(i, Width::B32)?;
        for s in &mut s {
            self.in_f32(s);
        }
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = f(s[0][l], s[1][l], s[2][l]);
        }
        self.f32_mode_out(i, &mut r);
        self.write_lanes(i.dst, &r)
    }

    /// [`Self::f32x3`] for results that select an operand (possibly negated) rather than
    /// compute one: a NaN comes out as it went in, not quieted (omod and clamp still apply).
    fn f32x3_sel(&mut self, i: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), IsaError> {
        let mut s = self.srcs3(i, Width::B32)?;
        for s in &mut s {
            self.in_f32(s);
        }
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = f(s[0][l], s[1][l], s[2][l]);
        }
        let raw = r;
        self.f32_mode_out(i, &mut r);
        if !i.clamp {
            for (r, x) in r.iter_mut().zip(&raw) {
                if x & 0x7fff_ffff > 0x7f80_0000 {
                    *r = *x;
                }
            }
        }
        self.write_lanes(i.dst, &r)
    }

    /// D = {f(S1), f(S0)}: two 16-bit results packed into the 32-bit destination.
    fn pk16(&mut self, i: &Inst, width: Width, f: impl Fn(u32) -> u32) -> Result<(), IsaError> {
        let mut s = self.srcs3(i, width)?;
        if width == Width::B32 {
            self.in_f32(&mut s[0]);
            self.in_f32(&mut s[1]);
        }
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let (a, b) = if width == Width::F16 {
                (s[0][l] & 0xffff, s[1][l] & 0xffff)
            } else {
                (s[0][l], s[1][l])
            };
            r[l] = (f(a) & 0xffff) | ((f(b) & 0xffff) << 16);
        }
        self.write_lanes(i.dst, &r)
    }

    /// V_CVT_PK_U8_F32: S2 with byte S1[1:0] replaced by f32_to_u8(S0): truncated toward
    /// zero and saturated as the guide's other float-to-unsigned conversions (V_CVT_U32_F32),
    /// NaN to 0.
    fn cvt_pk_u8(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut s = [[0u32; MAX_LANES]; 3];
        self.lanes32(i, 0, Width::B32, &mut s[0])?;
        self.in_f32(&mut s[0]);
        let mut j = *i;
        j.mods = 0;
        self.lanes32(&j, 1, Width::B32, &mut s[1])?;
        self.lanes32(&j, 2, Width::B32, &mut s[2])?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let f = f32v(s[0][l]);
            // CAST: in [0, 255].
            let byte = if f.is_nan() {
                0
            } else {
                f.clamp(0.0, 255.0).trunc() as u32
            };
            let sh = 8 * (s[1][l] & 3);
            r[l] = (s[2][l] & !(0xff << sh)) | (byte << sh);
        }
        self.write_lanes(i.dst, &r)
    }

    /// V_CNDMASK_B16: D.u16 = mask[lane] ? S1.u16 : S0.u16, the mask an SGPR (pair in wave64)
    /// or VCC; abs/neg apply to the halves as f16 modifiers, op_sel picks them.
    fn cndmask16(&mut self, i: &Inst) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::F16, &mut a)?;
        self.lanes32(i, 1, Width::F16, &mut b)?;
        let m = self.read_mask(i.src[2], i.lit)?;
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = if (m >> l) & 1 == 1 { b[l] } else { a[l] } & 0xffff;
        }
        self.write16(i, &mut r)
    }

    /// S0 and S1 as packed 16-bit pairs: VOP3 neg flips both halves' signs, abs clears them.
    fn packed_pair(&self, i: &Inst, k: usize, out: &mut Lanes) -> Result<(), IsaError> {
        let mut j = *i;
        j.mods = 0;
        j.opsel = 0;
        self.lanes32(&j, k, Width::B32, out)?;
        let (neg, abs) = ((i.mods >> k) & 1 == 1, (i.mods >> (4 + k)) & 1 == 1);
        for x in &mut out[..self.w.lanes] {
            if abs {
                *x &= 0x7fff_7fff;
            }
            if neg {
                *x ^= 0x8000_8000;
            }
        }
        Ok(())
    }

    /// V_DOT2_F16_F16 / V_DOT2_BF16_BF16 (RDNA3 ISA): D.16 = S0[15:0] * S1[15:0] +
    /// S0[31:16] * S1[31:16] + S2.16 (S2's half by op_sel[2]); the sum is formed exactly and
    /// rounded once to the 16-bit format; the result goes to the half op_sel[3] names.
    fn dot2_16(&mut self, i: &Inst) -> Result<(), IsaError> {
        let bf = i.op == Op::VDot2Bf16Bf16;
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let mut c = [0u32; MAX_LANES];
        self.packed_pair(i, 0, &mut a)?;
        self.packed_pair(i, 1, &mut b)?;
        self.lanes32(i, 2, Width::F16, &mut c)?;
        let to = |h: u32| {
            f64::from(if bf {
                bf16_to_f32(h)
            } else {
                f16_to_f32(h & 0xffff)
            })
        };
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let s = to(a[l]) * to(b[l]) + to(a[l] >> 16) * to(b[l] >> 16) + to(c[l]);
            // CAST: the f64 sum rounds to f32, then to the 16-bit format.
            let f = s as f32;
            let h = if bf { bf16_of(f) } else { f32_to_f16(f, false) };
            r[l] = self.clamp16(i, h & 0xffff);
        }
        self.write16(i, &mut r)
    }

    /// The packed dot products into 32 bits (VOP3P v_dot2_f32_f16/bf16, v_dot4/dot8 of bytes
    /// and nibbles; VOP2 v_dot2acc_f32_f16 with S2 = D), RDNA3 ISA: D = sum of the products
    /// of the element pairs + S2. For f16/bf16 neg_lo/neg_hi flip the sign bits of the low/high
    /// halves of each source (S2's bits 15 and 31 too); the sum rounds once to f32 (clamp to
    /// [0, 1]).
    /// For the IU forms neg_lo[0]/[1] make S0's/S1's elements signed; clamp saturates.
    pub(super) fn dot_packed(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let mut s = [[0u32; MAX_LANES]; 3];
        let mut j = *i;
        j.mods = 0;
        j.opsel = 0;
        j.sub = 0;
        for (k, s) in s.iter_mut().enumerate() {
            self.lanes32(&j, k, Width::B32, s)?;
        }
        let p = i.enc == Enc::Vop3p;
        if p {
            // The VOP3P operand mux: each source's low half is its half op_sel[k] names and
            // its high half the one op_sel_hi[k] names (the packed sources are rebuilt before
            // the products, as for every VOP3P operation).
            let (sel, sel_hi) = (u32::from(i.sub & 7), u32::from((i.sub >> 4) & 7));
            for (k, s) in s.iter_mut().enumerate() {
                let h = |x: u32, hi: bool| if hi { x >> 16 } else { x & 0xffff };
                let (lo_hi, hi_hi) = ((sel >> k) & 1 == 1, (sel_hi >> k) & 1 == 1);
                for x in &mut s[..self.w.lanes] {
                    *x = h(*x, lo_hi) | (h(*x, hi_hi) << 16);
                }
            }
        }
        // VOP3P neg bits (the VOP2 form has none).
        let (neg_lo, neg_hi) = if p {
            (u32::from(i.mods & 7), u32::from((i.mods >> 4) & 7))
        } else {
            (0, 0)
        };
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let (a, b, c) = (s[0][l], s[1][l], s[2][l]);
            r[l] = match i.op {
                VDot2F32F16 | VDot2F32Bf16 | VDot2accF32F16 => {
                    let bf = i.op == VDot2F32Bf16;
                    let el = |x: u32, k: usize, h: u32| {
                        let v = (x >> (16 * h)) & 0xffff;
                        let f = f64::from(if bf { bf16_to_f32(v) } else { f16_to_f32(v) });
                        let n = if h == 0 { neg_lo } else { neg_hi };
                        if (n >> k) & 1 == 1 { -f } else { f }
                    };
                    // S2 (f32) goes through the same per-half operand modifiers as every
                    // VOP3P source: neg_lo[2] flips bit 15, neg_hi[2] bit 31.
                    let c = f32v(
                        c ^ if neg_lo & 4 != 0 { 0x8000 } else { 0 }
                            ^ if neg_hi & 4 != 0 { 0x8000_0000 } else { 0 },
                    );
                    // S2 + both products, fused: the products of 16-bit floats are exact in
                    // f64 and the sum rounds once to f32 (the guide's tmp += steps read as
                    // one dot-product unit; the reference agrees on cancelling sums).
                    let sum = f64::from(c) + el(a, 0, 0) * el(b, 1, 0) + el(a, 0, 1) * el(b, 1, 1);
                    // CAST: the sum rounded to f32.
                    let f = sum as f32;
                    let f = if i.clamp {
                        if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) }
                    } else {
                        f
                    };
                    f.to_bits()
                }
                _ => {
                    let (n, bits) = match i.op {
                        VDot2I32I16 | VDot2U32U16 | VDot2cI32I16 => (2, 16),
                        VDot4I32Iu8 | VDot4U32U8 | VDot4I32I8 | VDot4cI32I8 => (4, 8),
                        _ => (8, 4),
                    };
                    // Signed elements: the gfx9 I forms (both), the IU forms by neg_lo[0]/[1].
                    let both = matches!(
                        i.op,
                        VDot2I32I16
                            | VDot4I32I8
                            | VDot8I32I4
                            | VDot2cI32I16
                            | VDot4cI32I8
                            | VDot8cI32I4
                    );
                    let iu = both || matches!(i.op, VDot4I32Iu8 | VDot8I32Iu4);
                    let (sa, sb) = if both {
                        (true, true)
                    } else {
                        (iu && neg_lo & 1 != 0, iu && neg_lo & 2 != 0)
                    };
                    let el = |x: u32, k: u32, signed: bool| -> i64 {
                        let v = i64::from((x >> (bits * k)) & ((1 << bits) - 1));
                        if signed && v >> (bits - 1) & 1 == 1 {
                            v - (1 << bits)
                        } else {
                            v
                        }
                    };
                    let mut t: i64 = (0..n).map(|k| el(a, k, sa) * el(b, k, sb)).sum();
                    if iu {
                        // CAST: S2 as a signed accumulator.
                        t += i64::from(c as i32);
                        if i.clamp {
                            t = t.clamp(i64::from(i32::MIN), i64::from(i32::MAX));
                        }
                    } else {
                        t += i64::from(c);
                        if i.clamp {
                            t = t.min(i64::from(u32::MAX));
                        }
                    }
                    // CAST: the low 32 bits.
                    t as u32
                }
            };
        }
        self.write_lanes(i.dst, &r)
    }
}
