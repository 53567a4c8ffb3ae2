//! The matrix cores: D = A x B + C over one wave's registers, for every instruction of
//! [`crate::isa::mai::TABLE`], in the register layouts of AMD's matrix instruction calculator
//! (`amd_matrix_instruction_calculator`: gfx9 `InstCalcGfx9`, RDNA3 `InstCalcGfx11`, RDNA4
//! `InstCalcGfx12`; the CDNA2/CDNA3 ISA guides' "Matrix Arithmetic" and the RDNA3/RDNA4 guides'
//! "WMMA" sections describe the same layouts). Products and sums of f32 results in f32, in k
//! order (C first); f64 in f64; integer sums wrap to 32 bits (WMMA's clamp saturates). EXEC is
//! ignored (the hardware requires it all ones for WMMA and does not use it for MFMA).

use super::*;
use crate::isa::mai::Ty;

/// Where an element lives: (register, lane, bit offset in the register).
type At = (usize, usize, u32);

/// gfx9 input element `(i, k)` of block `b` of an operand with outer size `m` and inner size
/// `k_n` (A: rows x columns; B: columns x rows), `bits` wide (calculator,
/// `__get_input_reg_lanes`): the 64 lanes hold `64 / (m * blocks)` groups of `m` lanes;
/// each lane holds `k_n / groups` consecutive k values.
fn gfx9_in(
    m: usize,
    k_n: usize,
    blocks: usize,
    bits: usize,
    (i, k, b): (usize, usize, usize),
) -> At {
    let per_lane = (k_n / (64 / (m * blocks))).max(1);
    let lane = b * m + (k / per_lane) * m * blocks + i;
    let bit = (k % per_lane) * bits;
    (bit / 32, lane, (bit % 32) as u32)
}

/// gfx9 output element `(i, j)` of block `b` (calculator, `__get_output_reg_lanes`): 32-bit
/// results in groups of 4 rows (registers) by N columns (lanes), 64-bit ones one row high.
fn gfx9_out(m: usize, n: usize, bits: usize, (i, j, b): (usize, usize, usize)) -> At {
    let h = if bits == 64 { 1 } else { 4 };
    let per_reg = 64 / n;
    let blocks_per_reg = 64usize.div_ceil(n * m / h);
    let elem = b * (m * n / 64) + (i / (h * per_reg)) * h + i % h;
    let lane = (b % blocks_per_reg) * n + ((i / h) % per_reg) * blocks_per_reg * n + j;
    (elem * bits / 32, lane, 0)
}

/// gfx11 WMMA input element `(i, k)` (calculator `InstCalcGfx11`): lane `i` (lanes 16..31
/// hold a copy, not read) holds every k in order.
fn gfx11_in(bits: usize, i: usize, k: usize) -> At {
    let bit = k * bits;
    (bit / 32, i, (bit % 32) as u32)
}

/// gfx12 dense input element `(i, k)` (calculator `InstCalcGfx12`, wave32; A of WMMA, A and
/// B of WMMA, B of SWMMAC with `sparse_b`).
fn gfx12_in(bits: usize, k_n: usize, sparse_b: bool, i: usize, k: usize) -> At {
    let off = |n: usize| (bits * (k % n)) as u32;
    match (bits, sparse_b) {
        (16, false) => (2 * (k / 8) + (k / 2) % 2, 16 * ((k / 4) % 2) + i, off(2)),
        (16, true) => (4 * (k / 16) + (k / 2) % 4, 16 * ((k / 8) % 2) + i, off(2)),
        (8, false) => ((k / 4) % 2, 16 * (k / 8) + i, off(4)),
        (8, true) => ((k / 4) % 4, 16 * (k / 16) + i, off(4)),
        // 4-bit: 8 per register.
        _ => match (k_n, sparse_b) {
            (16, _) => (0, 16 * (k / 8) + i, off(8)),
            (32, false) | (32, true) => ((k / 8) % 2, 16 * (k / 16) + i, off(8)),
            _ => ((k / 8) % 4, 16 * (k / 32) + i, off(8)),
        },
    }
}

/// gfx12 sparse A: the stored value `q` (0 or 1) of k group `g` (k / 4) of row `i`, and the
/// bit of its 2-bit index in the index VGPR of the same lane (before the index_key offset).
fn gfx12_sparse_a(bits: usize, k_n: usize, i: usize, g: usize, q: usize) -> (At, u32) {
    let (reg, lane, off) = match bits {
        16 => (2 * (g / 4) + g % 2, 16 * ((g / 2) % 2) + i, 16 * q),
        8 => ((g / 2) % 2, 16 * (g / 4) + i, 16 * (g % 2) + 8 * q),
        _ if k_n == 32 => (0, 16 * (g / 4) + i, 8 * (g % 4) + 4 * q),
        _ => ((g / 4) % 2, 16 * (g / 8) + i, 8 * (g % 4) + 4 * q),
    };
    let idx = match bits {
        16 => 8 * (g / 4) + 4 * (g % 2),
        8 => 4 * (g % 4),
        _ if k_n == 32 => 4 * (g % 4),
        _ => 4 * (g % 8),
    };
    // CAST: bit offsets below 32.
    ((reg, lane, off as u32), (idx + 2 * q) as u32)
}

/// gfx12 output element `(i, j)`: 32-bit values one row per register, 16-bit ones two rows.
fn gfx12_out(bits: usize, i: usize, j: usize) -> At {
    if bits == 32 {
        (i % 8, 16 * (i / 8) + j, 0)
    } else {
        ((i / 2) % 4, 16 * (i / 8) + j, 16 * (i % 2) as u32)
    }
}

/// FP8/BF8 bits as a value: `e` exponent bits, `m` mantissa bits, `bias`; `fnuz`: 0x80 is
/// the only NaN and there are no infinities (gfx942); otherwise OCP (gfx12: E4M3FN has only
/// S.1111.111 as NaN, E5M2 has IEEE infinities and NaNs).
fn f8(v: u32, e: u32, m: u32, bias: i32, fnuz: bool) -> f64 {
    let (s, ex, man) = ((v >> 7) & 1, (v >> m) & ((1 << e) - 1), v & ((1 << m) - 1));
    let top = (1 << e) - 1;
    if fnuz && v == 0x80 {
        return f64::NAN;
    }
    if !fnuz && ex == top && (e == 5 || man == (1 << m) - 1) {
        return match (e, man) {
            (5, 0) if s == 1 => f64::NEG_INFINITY,
            (5, 0) => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    let frac = f64::from(man) / f64::from(1u32 << m);
    // CAST: exponent fields below 32.
    let x = if ex == 0 {
        frac * 2f64.powi(1 - bias)
    } else {
        (1.0 + frac) * 2f64.powi(ex as i32 - bias)
    };
    if s == 1 { -x } else { x }
}

/// The value of an element's raw bits (integers as f64 exactly; `signed` for IU types).
fn value(ty: Ty, raw: u64, signed: bool) -> f64 {
    // CAST: every type's bits fit the narrowings below.
    let w = raw as u32;
    match ty {
        Ty::F64 => f64::from_bits(raw),
        Ty::F32 | Ty::Xf32 => f64::from(f32v(w)),
        Ty::F16 => f64::from(f16_to_f32(w & 0xffff)),
        Ty::Bf16 => f64::from(f32v((w & 0xffff) << 16)),
        Ty::I32 => f64::from(w as i32),
        Ty::I8 => f64::from(w as u8 as i8),
        Ty::Iu8 if signed => f64::from(w as u8 as i8),
        Ty::Iu8 => f64::from(w & 0xff),
        Ty::Iu4 if signed => f64::from(((w & 15) as i8) << 4 >> 4),
        Ty::Iu4 => f64::from(w & 15),
        Ty::Fp8Fnuz => f8(w & 0xff, 4, 3, 8, true),
        Ty::Bf8Fnuz => f8(w & 0xff, 5, 2, 16, true),
        Ty::Fp8 => f8(w & 0xff, 4, 3, 7, false),
        Ty::Bf8 => f8(w & 0xff, 5, 2, 15, false),
    }
}

/// f32 to bf16 bits, round to nearest even (NaNs stay quiet NaNs).
fn to_bf16(f: f32) -> u32 {
    let b = f.to_bits();
    if f.is_nan() {
        return (b >> 16) | 0x40;
    }
    (b + 0x7fff + ((b >> 16) & 1)) >> 16
}

impl Exec<'_, '_> {
    /// Whether `op` is a matrix-core operation this module runs.
    pub(super) fn is_matrix(op: Op) -> bool {
        matches!(op, Op::VMfma | Op::VWmma)
    }

    pub(super) fn matrix(&mut self, i: &Inst) -> Result<(), IsaError> {
        let Some(m) = crate::isa::mai::of(i.imm) else {
            return Err(self.err("not a matrix operation"));
        };
        let gfx9 = m.isa == Isa::Gfx9;
        let want = if gfx9 { 64 } else { 32 };
        if self.w.lanes != want {
            return Err(self.err(&format!(
                "{} needs wave{want} (this wave has {} lanes)",
                m.name, self.w.lanes
            )));
        }
        let int = m.out.int();
        // WMMA's IU types: NEG_LO[0]/[1] make A/B signed (RDNA3/RDNA4 ISA, WMMA); other
        // modifiers are not interpreted.
        let iu = matches!(m.a, Ty::Iu8 | Ty::Iu4);
        let mods_ok = if iu { i.mods & !3 == 0 } else { i.mods == 0 };
        if !mods_ok || (i.clamp && !iu) {
            return Err(self.err(&format!(
                "{}: neg and clamp modifiers are not interpreted",
                m.name
            )));
        }
        let (cbsz, abid, blgp) = if gfx9 {
            crate::isa::mai::broadcast(i.imm)
        } else {
            (0, 0, 0)
        };
        if m.out == Ty::F64 && blgp != 0 {
            return Err(self.err(&format!(
                "{}: BLGP on an f64 MFMA (gfx940's neg modifiers) is not interpreted",
                m.name
            )));
        }
        if m.sparse && cbsz != 0 {
            return Err(self.err(&format!(
                "{}: CBSZ on a sparse MFMA is not interpreted",
                m.name
            )));
        }
        let (dw, sw) = m.regs();
        let n = self.w.lanes;
        let regs = |x: &Self, code: u16, count: u16| -> Result<Vec<u32>, IsaError> {
            let o = x.vreg(code, usize::from(count))?;
            x.w.v
                .get(o..o + usize::from(count) * n)
                .map(<[u32]>::to_vec)
                .ok_or_else(|| x.range_err())
        };
        let (a, b) = (regs(self, i.src[0], sw[0])?, regs(self, i.src[1], sw[1])?);
        let o = self.vreg(i.dst, usize::from(dw))?;
        let old = self
            .w
            .v
            .get(o..o + usize::from(dw) * n)
            .map(<[u32]>::to_vec)
            .ok_or_else(|| self.range_err())?;
        // C: the destination itself (sparse), registers, or one inline constant everywhere.
        let (c, c_const) = if m.sparse {
            (old.clone(), None)
        } else if (VGPR..).contains(&i.src[2]) && i.src[2] != NONE {
            (regs(self, i.src[2], sw[2])?, None)
        } else if m.out == Ty::F64 {
            (Vec::new(), Some(self.s64(i.src[2], i.lit)?))
        } else {
            (Vec::new(), Some(u64::from(self.s32(i.src[2], i.lit)?)))
        };
        let index = if m.sparse {
            regs(self, i.src[2], 1)?
        } else {
            Vec::new()
        };
        let raw = |r: &[u32], (reg, lane, off): At, bits: u32| -> u64 {
            let w = |k: usize| r.get(k * n + lane).copied().unwrap_or(0);
            match bits {
                64 => u64::from(w(reg)) | u64::from(w(reg + 1)) << 32,
                32 => u64::from(w(reg)),
                _ => u64::from((w(reg) >> off) & ((1 << bits) - 1)),
            }
        };
        let (mm, nn, kk, bb) = (
            usize::from(m.m),
            usize::from(m.n),
            usize::from(m.k),
            usize::from(m.blocks),
        );
        let (ab, bbits, obits) = (m.a.bits(), m.b.bits(), m.out.bits());
        let (a_signed, b_signed) = (i.mods & 1 != 0, i.mods & 2 != 0);
        // A as dense values [block][row][k] (the sparse instructions' unselected k are 0).
        let mut av = vec![0f64; bb * mm * kk];
        let mut bv = vec![0f64; bb * kk * nn];
        for blk in 0..bb {
            // CBSZ/ABID: a block reads A from block ABID of its group of 2^CBSZ blocks
            // (calculator, `_get_cbsz_abid_transformed_block`; CBSZ 0 broadcasts nothing).
            let ablk = if cbsz == 0 {
                blk
            } else {
                let g = 1usize << cbsz;
                ((blk & !(g - 1)) | (abid as usize & (g - 1))) % bb
            };
            for r in 0..mm {
                if !m.sparse {
                    for k in 0..kk {
                        let at = match m.isa {
                            Isa::Gfx9 => gfx9_in(mm, kk, bb, ab as usize, (r, k, ablk)),
                            Isa::Gfx11 => gfx11_in(ab as usize, r, k),
                            Isa::Gfx12 => gfx12_in(ab as usize, kk, false, r, k),
                        };
                        av[(blk * mm + r) * kk + k] = value(m.a, raw(&a, at, ab), a_signed);
                    }
                    continue;
                }
                // 4:2 sparsity: each group of 4 k holds 2 stored values, each with a 2-bit
                // index of its k within the group.
                for g in 0..kk / 4 {
                    for q in 0..2 {
                        let (at, ibit) = if gfx9 {
                            // The compressed A is an ordinary A of K/2 (calculator); its indices
                            // are 2 bits per stored value in the same lane of the index VGPR, in
                            // the set ABID picks (8 bits per set for 16-bit data, 16 for 8-bit).
                            let kc = 2 * g + q;
                            let at = gfx9_in(mm, kk / 2, bb, ab as usize, (r, kc, blk));
                            let per_lane = kk / 2 / (64 / (mm * bb));
                            let sets = if ab == 16 { 4 } else { 2 };
                            let set = (abid as usize % sets) * (32 / sets);
                            // CAST: below 32.
                            (at, (set + 2 * (kc % per_lane)) as u32)
                        } else {
                            let (at, bit) = gfx12_sparse_a(ab as usize, kk, r, g, q);
                            // index_key (OPSEL[0]) picks the second set of 16 bits, where
                            // there are two (RDNA4 ISA, SWMMAC).
                            let key =
                                u32::from(i.sub & 1) * if ab == 4 && kk == 64 { 0 } else { 16 };
                            (at, bit + key)
                        };
                        let lane = at.1;
                        let sel = index.get(lane).map_or(0, |w| (w >> ibit) & 3) as usize;
                        let k = 4 * g + sel;
                        av[(blk * mm + r) * kk + k] += value(m.a, raw(&a, at, ab), a_signed);
                    }
                }
            }
            for col in 0..nn {
                for k in 0..kk {
                    let at = match m.isa {
                        Isa::Gfx9 => {
                            let (reg, lane, off) =
                                gfx9_in(nn, kk, bb, bbits as usize, (col, k, blk));
                            // BLGP: B's lanes swizzled (calculator, `_get_blgp_transformed_lane`).
                            let l = match blgp {
                                1 => lane % 32,
                                2 if lane < 32 => lane + 32,
                                3 => (lane + 16) % 64,
                                4..=7 => lane % 16 + 16 * (blgp as usize - 4),
                                _ => lane,
                            };
                            (reg, l, off)
                        }
                        Isa::Gfx11 => gfx11_in(bbits as usize, col, k),
                        Isa::Gfx12 => gfx12_in(bbits as usize, kk, m.sparse, col, k),
                    };
                    bv[(blk * kk + k) * nn + col] = value(m.b, raw(&b, at, bbits), b_signed);
                }
            }
        }
        let mut d = old;
        let hi = u32::from(i.sub & 4 != 0);
        for blk in 0..bb {
            for r in 0..mm {
                for col in 0..nn {
                    let at = match m.isa {
                        Isa::Gfx9 => gfx9_out(mm, nn, obits as usize, (r, col, blk)),
                        // 16-bit results in the half OPSEL[2] picks.
                        Isa::Gfx11 if obits == 16 => (r / 2, 16 * (r % 2) + col, 16 * hi),
                        Isa::Gfx11 => (r / 2, 16 * (r % 2) + col, 0),
                        Isa::Gfx12 => gfx12_out(obits as usize, r, col),
                    };
                    let cbits = match c_const {
                        Some(v) => v,
                        None => raw(&c, at, obits),
                    };
                    let arow = &av[(blk * mm + r) * kk..][..kk];
                    let prods = (0..kk).map(|k| arow[k] * bv[(blk * kk + k) * nn + col]);
                    let out: u64 = if int {
                        // CAST: sums of at most 64 products of 8-bit values.
                        let s = prods.fold(i64::from(cbits as u32 as i32), |s, p| s + p as i64);
                        if i.clamp {
                            // CAST: saturated into range.
                            u64::from(
                                s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                            )
                        } else {
                            // CAST: wraps to 32 bits.
                            u64::from(s as u32)
                        }
                    } else if m.out == Ty::F64 {
                        prods.fold(f64::from_bits(cbits), |s, p| s + p).to_bits()
                    } else {
                        // CAST: the 32-bit or 16-bit C of a float result.
                        let c0 = value(m.out, cbits, true) as f32;
                        // CAST: products of values narrower than f32 are exact in f32.
                        let s = prods.fold(c0, |s, p| s + p as f32);
                        u64::from(match m.out {
                            Ty::F16 => f32_to_f16(s, false),
                            Ty::Bf16 => to_bf16(s),
                            _ => s.to_bits(),
                        })
                    };
                    let (reg, lane, off) = at;
                    let mut put = |k: usize, v: u32, mask: u32| {
                        if let Some(w) = d.get_mut(k * n + lane) {
                            *w = (*w & !mask) | (v & mask);
                        }
                    };
                    // CAST: halves of the result.
                    match obits {
                        64 => {
                            put(reg, out as u32, !0);
                            put(reg + 1, (out >> 32) as u32, !0);
                        }
                        32 => put(reg, out as u32, !0),
                        _ => put(reg, (out as u32) << off, 0xffff << off),
                    }
                }
            }
        }
        match self.w.v.get_mut(o..o + d.len()) {
            Some(dst) => dst.copy_from_slice(&d),
            None => return Err(self.range_err()),
        }
        Ok(())
    }
}
