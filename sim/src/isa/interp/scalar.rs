//! Dispatching an instruction by encoding, and the scalar unit: SOP1/SOP2/SOPK/SOPC/SOPP
//! (SMEM is in `smem.rs`).

use super::*;

impl Exec<'_, '_> {
    pub(super) fn step(&mut self, i: &Inst, next: u64) -> Result<(), IsaError> {
        match i.enc {
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp => self.scalar(i, next),
            Enc::Smem => self.smem(i),
            Enc::Vopd => self.vopd(i),
            Enc::Ds => self.ds(i),
            Enc::Flat => self.flat(i),
            Enc::Mubuf => match i.op {
                Op::BufferGl0Inv
                | Op::BufferGl1Inv
                | Op::BufferWbinvl1Vol
                | Op::BufferWbinvl1
                | Op::BufferWbl2
                | Op::BufferInvl2 => Ok(()),
                _ => self.mubuf(i),
            },
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3sd => self.valu(i),
            Enc::Vop3p => self.vop3p(i),
            Enc::Vinterp => self.vinterp(i),
        }
    }

    pub(super) fn branch(&mut self, next: u64, imm: i32, cond: bool) {
        if cond {
            // CAST: sign-extended word offset.
            self.w.pc = next.wrapping_add((i64::from(imm) * 4) as u64);
        }
    }

    pub(super) fn scalar(&mut self, i: &Inst, next: u64) -> Result<(), IsaError> {
        use Op::*;
        let lit = i.lit;
        let a = || self.s32(i.src[0], lit);
        let b = || self.s32(i.src[1], lit);
        let a64 = || self.s64(i.src[0], lit);
        let b64 = || self.s64(i.src[1], lit);
        // Results: (value, Some(scc)).
        let r32: Option<(u32, Option<bool>)> = match i.op {
            SAddU32 => {
                let (x, y) = (a()?, b()?);
                let (v, c) = x.overflowing_add(y);
                Some((v, Some(c)))
            }
            SSubU32 => {
                let (x, y) = (a()?, b()?);
                Some((x.wrapping_sub(y), Some(y > x)))
            }
            SAddI32 => {
                // CAST: two's complement.
                let (x, y) = (a()? as i32, b()? as i32);
                let (v, o) = x.overflowing_add(y);
                Some((v as u32, Some(o)))
            }
            SSubI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let (v, o) = x.overflowing_sub(y);
                Some((v as u32, Some(o)))
            }
            SAddcU32 => {
                let (x, y) = (a()?, b()?);
                let s = u64::from(x) + u64::from(y) + u64::from(self.w.scc);
                Some((s as u32, Some(s >> 32 != 0)))
            }
            SSubbU32 => {
                let (x, y) = (a()?, b()?);
                let s = u64::from(y) + u64::from(self.w.scc);
                Some((
                    x.wrapping_sub(y).wrapping_sub(u32::from(self.w.scc)),
                    Some(s > u64::from(x)),
                ))
            }
            SAbsdiffI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let v = x.wrapping_sub(y).wrapping_abs() as u32;
                Some((v, Some(v != 0)))
            }
            SLshlB32 => {
                let v = a()? << (b()? & 31);
                Some((v, Some(v != 0)))
            }
            SLshrB32 => {
                let v = a()? >> (b()? & 31);
                Some((v, Some(v != 0)))
            }
            SAshrI32 => {
                let v = ((a()? as i32) >> (b()? & 31)) as u32;
                Some((v, Some(v != 0)))
            }
            SLshl1AddU32 | SLshl2AddU32 | SLshl3AddU32 | SLshl4AddU32 => {
                let k = match i.op {
                    SLshl1AddU32 => 1,
                    SLshl2AddU32 => 2,
                    SLshl3AddU32 => 3,
                    _ => 4,
                };
                let s = (u64::from(a()?) << k) + u64::from(b()?);
                Some((s as u32, Some(s >> 32 != 0)))
            }
            SMinI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                Some((x.min(y) as u32, Some(x < y)))
            }
            SMinU32 => {
                let (x, y) = (a()?, b()?);
                Some((x.min(y), Some(x < y)))
            }
            // SCC: S0 >= S1 on gfx11/gfx12 (RDNA3/RDNA4 ISA S_MAX pseudo-code), S0 chosen
            // as the strictly greater on gfx9 (Vega ISA).
            SMaxI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let scc = if self.l.isa == Isa::Gfx9 {
                    x > y
                } else {
                    x >= y
                };
                Some((x.max(y) as u32, Some(scc)))
            }
            SMaxU32 => {
                let (x, y) = (a()?, b()?);
                let scc = if self.l.isa == Isa::Gfx9 {
                    x > y
                } else {
                    x >= y
                };
                Some((x.max(y), Some(scc)))
            }
            SAndB32 | SOrB32 | SXorB32 | SNandB32 | SNorB32 | SXnorB32 | SAndNot1B32
            | SOrNot1B32 => {
                let (x, y) = (a()?, b()?);
                let v = match i.op {
                    SAndB32 => x & y,
                    SOrB32 => x | y,
                    SXorB32 => x ^ y,
                    SNandB32 => !(x & y),
                    SNorB32 => !(x | y),
                    SXnorB32 => !(x ^ y),
                    SAndNot1B32 => x & !y,
                    _ => x | !y,
                };
                Some((v, Some(v != 0)))
            }
            SBfeU32 => {
                let (x, y) = (a()?, b()?);
                let v = bfe(x, y & 31, (y >> 16) & 0x7f);
                let v = if (y >> 16) & 0x7f >= 32 {
                    x >> (y & 31)
                } else {
                    v
                };
                Some((v, Some(v != 0)))
            }
            SBfeI32 => {
                let (x, y) = (a()?, b()?);
                // A width of 32 or more takes every bit above the offset, as for S_BFE_U32.
                let v = if (y >> 16) & 0x7f >= 32 {
                    ((x as i32) >> (y & 31)) as u32
                } else {
                    bfe_i(x, y & 31, (y >> 16) & 0x7f)
                };
                Some((v, Some(v != 0)))
            }
            SBfmB32 => {
                let (x, y) = (a()?, b()?);
                Some((((1u64 << (x & 31)) - 1) as u32) << (y & 31)).map(|v| (v, None))
            }
            SMulI32 => Some((a()?.wrapping_mul(b()?), None)),
            // gfx12 SALU floats (no SCC).
            SAddF32 => Some(((f32v(a()?) + f32v(b()?)).to_bits(), None)),
            SSubF32 => Some(((f32v(a()?) - f32v(b()?)).to_bits(), None)),
            SMulF32 => Some(((f32v(a()?) * f32v(b()?)).to_bits(), None)),
            SMinNumF32 => Some((fmin(f32v(a()?), f32v(b()?)).to_bits(), None)),
            SMaxNumF32 => Some((fmax(f32v(a()?), f32v(b()?)).to_bits(), None)),
            SFmacF32 => {
                let d = f32v(self.s32(i.dst, lit)?);
                Some((fma32(f32v(a()?), f32v(b()?), d).to_bits(), None))
            }
            // A NaN operand comes back quieted with its payload (IEEE 754 rounding ops).
            SCeilF32 => Some((quiet32(f32v(a()?).ceil()), None)),
            SFloorF32 => Some((quiet32(f32v(a()?).floor()), None)),
            STruncF32 => Some((quiet32(f32v(a()?).trunc()), None)),
            SRndneF32 => Some((quiet32(rne32(f32v(a()?))), None)),
            // The 16-bit forms read S0[15:0] and write D[15:0], D[31:16] zero.
            SCeilF16 | SFloorF16 | STruncF16 | SRndneF16 => {
                let x = f16_to_f32(a()? & 0xffff);
                let r = match i.op {
                    SCeilF16 => x.ceil(),
                    SFloorF16 => x.floor(),
                    STruncF16 => x.trunc(),
                    _ => rne32(x),
                };
                Some((f32_to_f16(r, false), None))
            }
            SCvtF16F32 => Some((f32_to_f16(f32v(a()?), false), None)),
            SCvtF32F16 => Some((f16_to_f32(a()? & 0xffff).to_bits(), None)),
            SCvtHiF32F16 => Some((f16_to_f32(a()? >> 16).to_bits(), None)),
            // {f16(S1) rounded toward zero, f16(S0) rounded toward zero}.
            SCvtPkRtzF16F32 => {
                let (x, y) = (a()?, b()?);
                Some((
                    f32_to_f16(f32v(x), true) | (f32_to_f16(f32v(y), true) << 16),
                    None,
                ))
            }
            // The guide's S_MINIMUM/S_MAXIMUM pseudo-code: a signaling NaN (S0 first) comes back
            // quieted with its payload, else a quiet NaN operand (S0 first) unchanged.
            SMinimumF16 | SMaximumF16
                if nan_operand(a()? & 0xffff, b()? & 0xffff, 16).is_some() =>
            {
                nan_operand(a()? & 0xffff, b()? & 0xffff, 16).map(|v| (v, None))
            }
            SMinimumF32 | SMaximumF32 if nan_operand(a()?, b()?, 32).is_some() => {
                nan_operand(a()?, b()?, 32).map(|v| (v, None))
            }
            SAddF16 | SSubF16 | SMulF16 | SMinNumF16 | SMaxNumF16 | SMinimumF16 | SMaximumF16 => {
                let (x, y) = (f16_to_f32(a()? & 0xffff), f16_to_f32(b()? & 0xffff));
                let r = match i.op {
                    SAddF16 => x + y,
                    SSubF16 => x - y,
                    SMulF16 => x * y,
                    SMinNumF16 => fmin(x, y),
                    SMaxNumF16 => fmax(x, y),
                    SMinimumF16 => fminimum(x, y),
                    _ => fmaximum(x, y),
                };
                Some((f32_to_f16(r, false), None))
            }
            SFmacF16 => {
                let f = |v: u32| f64::from(f16_to_f32(v & 0xffff));
                let d = f(self.s32(i.dst, lit)?);
                // CAST: the f64 result rounds to f32, then to f16.
                Some((f32_to_f16(f(a()?).mul_add(f(b()?), d) as f32, false), None))
            }
            SMinimumF32 => Some((fminimum(f32v(a()?), f32v(b()?)).to_bits(), None)),
            SMaximumF32 => Some((fmaximum(f32v(a()?), f32v(b()?)).to_bits(), None)),
            SPackHlB32B16 => Some(((a()? >> 16) | (b()? << 16), None)),
            SFmaakF32 | SFmamkF32 => {
                let c = f32v(self.s32(i.src[2], lit)?);
                Some((fma32(f32v(a()?), f32v(b()?), c).to_bits(), None))
            }
            // CAST: the bits as a signed integer.
            SCvtF32I32 => Some(((a()? as i32 as f32).to_bits(), None)),
            // CAST: u32 to f32 rounds to nearest.
            SCvtF32U32 => Some(((a()? as f32).to_bits(), None)),
            SCvtI32F32 => Some((cvt_i32(f64::from(f32v(a()?))), None)),
            SCvtU32F32 => Some((cvt_u32(f64::from(f32v(a()?))), None)),
            SMulHiU32 => Some((((u64::from(a()?) * u64::from(b()?)) >> 32) as u32, None)),
            SMulHiI32 => Some((
                ((i64::from(a()? as i32) * i64::from(b()? as i32)) >> 32) as u32,
                None,
            )),
            SCselectB32 => {
                let (x, y) = (a()?, b()?);
                Some((if self.w.scc { x } else { y }, None))
            }
            SPackLlB32B16 => Some(((a()? & 0xffff) | (b()? << 16), None)),
            SPackLhB32B16 => Some(((a()? & 0xffff) | (b()? & 0xffff_0000), None)),
            SPackHhB32B16 => Some(((a()? >> 16) | (b()? & 0xffff_0000), None)),
            SMovB32 => Some((a()?, None)),
            SCmovB32 => {
                if self.w.scc {
                    Some((a()?, None))
                } else {
                    None
                }
            }
            SBrevB32 => Some((a()?.reverse_bits(), None)),
            SCtzI32B32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SFf1I32B32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SFf1I32B64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SClzI32U32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.leading_zeros() }, None))
            }
            // As v_cls_i32: leading bits equal to the sign bit after it, -1 for 0 and -1.
            SClsI32 => {
                let x = a()?;
                let y = if x >> 31 == 1 { !x } else { x };
                Some((if y == 0 { u32::MAX } else { y.leading_zeros() }, None))
            }
            SCtzI32B64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SClzI32U64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.leading_zeros() }, None))
            }
            SSextI32I8 => Some((a()? as u8 as i8 as i32 as u32, None)),
            SSextI32I16 => Some((a()? as u16 as i16 as i32 as u32, None)),
            SAbsI32 => {
                let v = (a()? as i32).wrapping_abs() as u32;
                Some((v, Some(v != 0)))
            }
            SBcnt0I32B32 => {
                let v = a()?.count_zeros();
                Some((v, Some(v != 0)))
            }
            SBcnt1I32B32 => {
                let v = a()?.count_ones();
                Some((v, Some(v != 0)))
            }
            SBcnt1I32B64 => {
                let v = a64()?.count_ones();
                Some((v, Some(v != 0)))
            }
            SBcnt0I32B64 => {
                let v = a64()?.count_zeros();
                Some((v, Some(v != 0)))
            }
            // The first zero bit from bit 0, -1 when there is none.
            SFf0I32B32 => {
                let x = a()?;
                Some((
                    if x == u32::MAX {
                        u32::MAX
                    } else {
                        x.trailing_ones()
                    },
                    None,
                ))
            }
            SFf0I32B64 => {
                let x = a64()?;
                Some((
                    if x == u64::MAX {
                        u32::MAX
                    } else {
                        x.trailing_ones()
                    },
                    None,
                ))
            }
            // As s_cls_i32 on 64 bits: leading bits equal to the sign after it, -1 for 0, -1.
            SClsI32I64 => {
                let x = a64()?;
                let y = if x >> 63 == 1 { !x } else { x };
                Some((if y == 0 { u32::MAX } else { y.leading_zeros() }, None))
            }
            // Whole-quad mode: every lane of a quad with any lane set.
            SWqmB32 => {
                let x = a()?;
                let v = (0..8).fold(0, |m, q| {
                    m | if (x >> (4 * q)) & 15 != 0 {
                        15 << (4 * q)
                    } else {
                        0
                    }
                });
                Some((v, Some(v != 0)))
            }
            // One bit per quad of S0: set when any of the quad's four is.
            SQuadmaskB32 => {
                let x = a()?;
                let v = (0..8).fold(0, |m, q| m | u32::from((x >> (4 * q)) & 15 != 0) << q);
                Some((v, Some(v != 0)))
            }
            SNotB32 => {
                let v = !a()?;
                Some((v, Some(v != 0)))
            }
            SBitset0B32 | SBitset1B32 => {
                let d = self.s32(i.dst, 0)?;
                let bit = 1u32 << (a()? & 31);
                Some((
                    if i.op == SBitset0B32 {
                        d & !bit
                    } else {
                        d | bit
                    },
                    None,
                ))
            }
            SMovkI32 => Some((i.imm as u32, None)),
            SCmovkI32 => self.w.scc.then_some((i.imm as u32, None)),
            SAddkI32 => {
                let d = self.s32(i.dst, 0)? as i32;
                let (v, o) = d.overflowing_add(i.imm);
                Some((v as u32, Some(o)))
            }
            SMulkI32 => Some((
                (self.s32(i.dst, 0)? as i32).wrapping_mul(i.imm) as u32,
                None,
            )),
            SVersion => None,
            _ => None,
        };
        if let Some((v, scc)) = r32 {
            self.swrite(i.dst, v)?;
            if let Some(c) = scc {
                self.w.scc = c;
            }
            return Ok(());
        }
        // 64-bit results.
        let r64: Option<(u64, Option<bool>)> = match i.op {
            SBrevB64 => Some((a64()?.reverse_bits(), None)),
            SQuadmaskB64 => {
                let x = a64()?;
                let v = (0..16).fold(0, |m, q| m | u64::from((x >> (4 * q)) & 15 != 0) << q);
                Some((v, Some(v != 0)))
            }
            // Whole-quad mode: every lane of a quad with any lane set.
            SWqmB64 => {
                let x = a64()?;
                let v = (0..16).fold(0, |m, q| {
                    m | if (x >> (4 * q)) & 15 != 0 {
                        15 << (4 * q)
                    } else {
                        0
                    }
                });
                Some((v, Some(v != 0)))
            }
            SBitset0B64 | SBitset1B64 => {
                let d = self.s64(i.dst, 0)?;
                let bit = 1u64 << (a()? & 63);
                Some((
                    if i.op == SBitset0B64 {
                        d & !bit
                    } else {
                        d | bit
                    },
                    None,
                ))
            }
            // Each bit of S0 twice: D[2k] = D[2k + 1] = S0[k].
            SBitreplicateB64B32 => {
                let x = a()?;
                let v = (0..32).fold(0u64, |m, k| m | (u64::from((x >> k) & 1) * 3) << (2 * k));
                Some((v, None))
            }
            // gfx12: 64-bit add, subtract and multiply; SCC unchanged.
            SAddNcU64 => Some((a64()?.wrapping_add(b64()?), None)),
            SSubNcU64 => Some((a64()?.wrapping_sub(b64()?), None)),
            SMulU64 => Some((a64()?.wrapping_mul(b64()?), None)),
            SLshlB64 => {
                let v = a64()? << (b()? & 63);
                Some((v, Some(v != 0)))
            }
            SLshrB64 => {
                let v = a64()? >> (b()? & 63);
                Some((v, Some(v != 0)))
            }
            SAshrI64 => {
                let v = ((a64()? as i64) >> (b()? & 63)) as u64;
                Some((v, Some(v != 0)))
            }
            SAndB64 | SOrB64 | SXorB64 | SNandB64 | SNorB64 | SXnorB64 | SAndNot1B64
            | SOrNot1B64 => {
                let (x, y) = (a64()?, b64()?);
                let v = match i.op {
                    SAndB64 => x & y,
                    SOrB64 => x | y,
                    SXorB64 => x ^ y,
                    SNandB64 => !(x & y),
                    SNorB64 => !(x | y),
                    SXnorB64 => !(x ^ y),
                    SAndNot1B64 => x & !y,
                    _ => x | !y,
                };
                Some((v, Some(v != 0)))
            }
            SBfeU64 | SBfeI64 => {
                let (x, y) = (a64()?, b()?);
                let off = y & 63;
                let w = (y >> 16) & 0x7f;
                // S0.i64 >> offset is arithmetic for S_BFE_I64 (RDNA3 ISA pseudo-code).
                // CAST: the 64-bit word's bits as signed and back.
                let sh = if i.op == SBfeI64 {
                    ((x as i64) >> off) as u64
                } else {
                    x >> off
                };
                let v = if w == 0 {
                    0
                } else if w >= 64 {
                    sh
                } else {
                    let f = sh & ((1u64 << w) - 1);
                    if i.op == SBfeI64 {
                        (((f << (64 - w)) as i64) >> (64 - w)) as u64
                    } else {
                        f
                    }
                };
                Some((v, Some(v != 0)))
            }
            SBfmB64 => {
                let (x, y) = (a()?, b()?);
                let m = if x & 63 == 0 {
                    0
                } else {
                    u64::MAX >> (64 - (x & 63))
                };
                Some((m << (y & 63), None))
            }
            SCselectB64 => {
                let (x, y) = (a64()?, b64()?);
                Some((if self.w.scc { x } else { y }, None))
            }
            SMovB64 => Some((a64()?, None)),
            SCmovB64 => {
                if self.w.scc {
                    Some((a64()?, None))
                } else {
                    None
                }
            }
            SNotB64 => {
                let v = !a64()?;
                Some((v, Some(v != 0)))
            }
            SGetpcB64 => Some((next, None)),
            _ => None,
        };
        if let Some((v, scc)) = r64 {
            self.swrite64(i.dst, v)?;
            if let Some(c) = scc {
                self.w.scc = c;
            }
            return Ok(());
        }
        match i.op {
            SAndSaveexecB32 | SOrSaveexecB32 | SXorSaveexecB32 | SAndNot0SaveexecB32
            | SAndNot1SaveexecB32 | SAndSaveexecB64 | SOrSaveexecB64 | SXorSaveexecB64
            | SAndNot0SaveexecB64 | SAndNot1SaveexecB64 | SNandSaveexecB32 | SNandSaveexecB64
            | SNorSaveexecB32 | SNorSaveexecB64 | SXnorSaveexecB32 | SXnorSaveexecB64
            | SOrNot0SaveexecB32 | SOrNot0SaveexecB64 | SOrNot1SaveexecB32 | SOrNot1SaveexecB64
            | SAndNot0WrexecB32 | SAndNot0WrexecB64 | SAndNot1WrexecB32 | SAndNot1WrexecB64 => {
                let wide = i.op.name().ends_with("64");
                let full = u64::from(self.w.s[126]) | (u64::from(self.w.s[127]) << 32);
                let old = if wide { full } else { full & 0xffff_ffff };
                let s = if wide { a64()? } else { u64::from(a()?) };
                let new = match i.op {
                    SAndSaveexecB32 | SAndSaveexecB64 => s & old,
                    SOrSaveexecB32 | SOrSaveexecB64 => s | old,
                    SXorSaveexecB32 | SXorSaveexecB64 => s ^ old,
                    SAndNot0SaveexecB32 | SAndNot0SaveexecB64 => !s & old,
                    SNandSaveexecB32 | SNandSaveexecB64 => !(s & old),
                    SNorSaveexecB32 | SNorSaveexecB64 => !(s | old),
                    SXnorSaveexecB32 | SXnorSaveexecB64 => !(s ^ old),
                    SOrNot0SaveexecB32 | SOrNot0SaveexecB64 => !s | old,
                    SOrNot1SaveexecB32 | SOrNot1SaveexecB64 => s | !old,
                    SAndNot0WrexecB32 | SAndNot0WrexecB64 => !s & old,
                    _ => s & !old,
                };
                let new = if wide { new } else { new & 0xffff_ffff };
                // The wrexec forms write the new EXEC to the destination, the others the old.
                let d = if i.op.name().contains("wrexec") {
                    new
                } else {
                    old
                };
                if wide {
                    self.swrite64(i.dst, d)?;
                    self.w.set_exec(new);
                } else {
                    // CAST: wave32 halves.
                    self.swrite(i.dst, d as u32)?;
                    self.w.s[126] = new as u32;
                }
                self.w.scc = new != 0;
                Ok(())
            }
            SSetpcB64 => {
                self.w.pc = a64()?;
                Ok(())
            }
            SSwappcB64 => {
                let t = a64()?;
                self.swrite64(i.dst, next)?;
                self.w.pc = t;
                Ok(())
            }
            SCmpEqI32 | SCmpLgI32 | SCmpGtI32 | SCmpGeI32 | SCmpLtI32 | SCmpLeI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpEqI32 as usize)];
                self.w.scc = icmp(c, x, y);
                Ok(())
            }
            SCmpEqU32 | SCmpLgU32 | SCmpGtU32 | SCmpGeU32 | SCmpLtU32 | SCmpLeU32 => {
                let (x, y) = (a()?, b()?);
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpEqU32 as usize)];
                self.w.scc = icmp(c, x, y);
                Ok(())
            }
            SCmpkEqI32 | SCmpkLgI32 | SCmpkGtI32 | SCmpkGeI32 | SCmpkLtI32 | SCmpkLeI32 => {
                let x = self.s32(i.dst, 0)? as i32;
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpkEqI32 as usize)];
                self.w.scc = icmp(c, x, i.imm);
                Ok(())
            }
            SCmpkEqU32 | SCmpkLgU32 | SCmpkGtU32 | SCmpkGeU32 | SCmpkLtU32 | SCmpkLeU32 => {
                let x = self.s32(i.dst, 0)?;
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpkEqU32 as usize)];
                // CAST: the u32 forms zero-extend simm16.
                self.w.scc = icmp(c, x, i.imm as u16 as u32);
                Ok(())
            }
            SBitcmp0B32 | SBitcmp1B32 => {
                let (x, y) = (a()?, b()?);
                let bit = x >> (y & 31) & 1;
                self.w.scc = (bit == 1) == (i.op == SBitcmp1B32);
                Ok(())
            }
            // gfx12: f32/f16 compares by condition, denormals as the VALU's (RSRC1's mode).
            SCmpF32 | SCmpF16 => {
                let (x, y) = (a()?, b()?);
                let (x, y) = if i.op == SCmpF16 {
                    (f16_to_f32(x & 0xffff), f16_to_f32(y & 0xffff))
                } else if self.w.denorm32() {
                    (f32v(x), f32v(y))
                } else {
                    (f32v(flush32(x)), f32v(flush32(y)))
                };
                self.w.scc = fcmp(i.sub, f64::from(x), f64::from(y));
                Ok(())
            }
            SCmpEqU64 | SCmpLgU64 => {
                let (x, y) = (a64()?, b64()?);
                self.w.scc = (x == y) == (i.op == SCmpEqU64);
                Ok(())
            }
            SNop
            | SClause
            | SSetInstPrefetchDistance
            | SDelayAlu
            | SWaitcnt
            | SWaitcntDepctr
            | SSleep
            | SSetprio
            | SIcacheInv
            | SWaitcntVscnt
            | SWaitcntVmcnt
            | SWaitcntExpcnt
            | SWaitcntLgkmcnt
            | SVersion
            | SCmovB32
            | SCmovB64
            | SCmovkI32
            | SWaitLoadcnt
            | SWaitStorecnt
            | SWaitSamplecnt
            | SWaitBvhcnt
            | SWaitExpcnt
            | SWaitDscnt
            | SWaitKmcnt
            | SWaitAlu => Ok(()),
            // gfx12 split barrier: the wave arrives at the signal (`control`) and waits at the
            // wait; waves of a workgroup run in turn, so arriving is stopping at the wait.
            SBarrierWait => {
                self.w.state = WaveState::Barrier;
                Ok(())
            }
            SBranch => {
                self.branch(next, i.imm, true);
                Ok(())
            }
            SCbranchScc0 => {
                self.branch(next, i.imm, !self.w.scc);
                Ok(())
            }
            SCbranchScc1 => {
                self.branch(next, i.imm, self.w.scc);
                Ok(())
            }
            SCbranchVccz => {
                self.branch(next, i.imm, self.w.vcc() == 0);
                Ok(())
            }
            SCbranchVccnz => {
                self.branch(next, i.imm, self.w.vcc() != 0);
                Ok(())
            }
            SCbranchExecz => {
                self.branch(next, i.imm, self.w.exec() == 0);
                Ok(())
            }
            SCbranchExecnz => {
                self.branch(next, i.imm, self.w.exec() != 0);
                Ok(())
            }
            SEndpgm => {
                self.w.state = WaveState::Done;
                Ok(())
            }
            SBarrier => {
                self.w.state = WaveState::Barrier;
                Ok(())
            }
            STrap => Err(self.err(&format!(
                "s_trap {:#x} (no trap handler in the simulator)",
                i.imm
            ))),
            SCodeEnd => Err(self.err("executed s_code_end (padding after the kernel's code)")),
            _ => self.control(i, next),
        }
    }
}

/// IEEE 754-2019 minimum: a NaN operand gives a quiet NaN; -0 is below +0.
fn fminimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return f32::from_bits(0x7fc0_0000);
    }
    if a == b {
        return f32::from_bits(a.to_bits() | b.to_bits());
    }
    a.min(b)
}

/// A NaN result with the quiet bit set and its payload kept, as bits.
fn quiet32(x: f32) -> u32 {
    if x.is_nan() {
        x.to_bits() | 0x0040_0000
    } else {
        x.to_bits()
    }
}

/// The NaN the guide's S_MINIMUM/S_MAXIMUM return for `width`-bit (16 or 32) operands `a` (S0)
/// and `b` (S1): the first signaling NaN quieted (payload kept), else the first quiet NaN;
/// `None` without a NaN operand.
fn nan_operand(a: u32, b: u32, width: u32) -> Option<u32> {
    let (exp, quiet) = if width == 16 {
        (0x7c00u32, 0x0200u32)
    } else {
        (0x7f80_0000, 0x0040_0000)
    };
    let mag = exp | ((quiet << 1) - 1);
    let nan = |x: u32| (x & mag) > exp;
    let snan = |x: u32| nan(x) && (x & quiet) == 0;
    if snan(a) {
        Some(a | quiet)
    } else if snan(b) {
        Some(b | quiet)
    } else if nan(a) {
        Some(a)
    } else if nan(b) {
        Some(b)
    } else {
        None
    }
}

/// IEEE 754-2019 maximum: a NaN operand gives a quiet NaN; +0 is above -0.
fn fmaximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        return f32::from_bits(0x7fc0_0000);
    }
    if a == b {
        return f32::from_bits(a.to_bits() & b.to_bits());
    }
    a.max(b)
}
