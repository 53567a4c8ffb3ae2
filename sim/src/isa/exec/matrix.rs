//! The matrix cores: D = A x B + C over one wave's registers, in the lane layout each
//! instruction defines (AMD's matrix instruction calculator for CDNA2/CDNA3 MFMA; the RDNA3
//! and RDNA4 ISA guides' WMMA sections). Products and sums in f32, in k order; EXEC is
//! ignored (the hardware requires it all ones for WMMA and does not use it for MFMA).

use super::*;

/// Where element (row, column) of an operand lives: (register, lane, 16-bit half or -1 for
/// a whole dword).
type Place = fn(usize, usize) -> (usize, usize, i8);

/// 16-bit element `e` of `lane`: half `e % 2` of register `e / 2`.
fn half(e: usize, lane: usize) -> (usize, usize, i8) {
    // CAST: 0 or 1.
    (e / 2, lane, (e % 2) as i8)
}

struct Shape {
    m: usize,
    n: usize,
    k: usize,
    bf16: bool,
    /// C and D are f16, one per register, in the half OPSEL[2] picks (the other half of D is
    /// kept); otherwise f32.
    f16_out: bool,
    /// Lanes the instruction needs (32: wave32 only; 64: wave64 only).
    lanes: usize,
    a: Place,
    b: Place,
    d: Place,
}

fn shape(op: Op) -> Option<Shape> {
    use Op::*;
    Some(match op {
        VMfmaF32_16x16x16F16 => Shape {
            m: 16,
            n: 16,
            k: 16,
            bf16: false,
            f16_out: false,
            lanes: 64,
            a: |m, k| half(k % 4, m + 16 * (k / 4)),
            b: |k, n| half(k % 4, n + 16 * (k / 4)),
            d: |m, n| (m % 4, n + 16 * (m / 4), -1),
        },
        VMfmaF32_32x32x8F16 => Shape {
            m: 32,
            n: 32,
            k: 8,
            bf16: false,
            f16_out: false,
            lanes: 64,
            a: |m, k| half(k % 4, m + 32 * (k / 4)),
            b: |k, n| half(k % 4, n + 32 * (k / 4)),
            d: |m, n| (m % 4 + 4 * (m / 8), n + 32 * ((m / 4) % 2), -1),
        },
        VMfmaF32_16x16x4F32 => Shape {
            m: 16,
            n: 16,
            k: 4,
            bf16: false,
            f16_out: false,
            lanes: 64,
            a: |m, k| (0, m + 16 * k, -1),
            b: |k, n| (0, n + 16 * k, -1),
            d: |m, n| (m % 4, n + 16 * (m / 4), -1),
        },
        VWmmaF32F16 | VWmmaF32Bf16 => Shape {
            m: 16,
            n: 16,
            k: 16,
            bf16: op == VWmmaF32Bf16,
            f16_out: false,
            lanes: 32,
            // Lanes 16..31 hold a copy of lanes 0..15's A and B; the hardware reads 0..15.
            a: |m, k| half(k, m),
            b: |k, n| half(k, n),
            d: |m, n| (m / 2, n + 16 * (m % 2), -1),
        },
        // D.f16 = A.f16 x B.f16 + C.f16: the f32 instruction's layout, one f16 per register
        // (RDNA3 ISA, WMMA); products and sums in f32, rounded once to f16.
        VWmmaF16F16 => Shape {
            m: 16,
            n: 16,
            k: 16,
            bf16: false,
            f16_out: true,
            lanes: 32,
            a: |m, k| half(k, m),
            b: |k, n| half(k, n),
            d: |m, n| (m / 2, n + 16 * (m % 2), -1),
        },
        VWmmaF32F16Gfx12 | VWmmaF32Bf16Gfx12 => Shape {
            m: 16,
            n: 16,
            k: 16,
            bf16: op == VWmmaF32Bf16Gfx12,
            f16_out: false,
            lanes: 32,
            a: |m, k| half(k % 8, m + 16 * (k / 8)),
            b: |k, n| half(k % 8, n + 16 * (k / 8)),
            d: |m, n| (m % 8, n + 16 * (m / 8), -1),
        },
        _ => return None,
    })
}

impl Exec<'_, '_> {
    /// Whether `op` is a matrix-core operation this module runs.
    pub(super) fn is_matrix(op: Op) -> bool {
        shape(op).is_some()
    }

    pub(super) fn matrix(&mut self, i: &Inst) -> Result<(), IsaError> {
        let Some(s) = shape(i.op) else {
            return Err(self.err("not a matrix operation"));
        };
        if self.w.lanes != s.lanes {
            return Err(self.err(&format!(
                "{} needs wave{} (this wave has {} lanes)",
                i.op.name(),
                s.lanes,
                self.w.lanes
            )));
        }
        if i.mods != 0 || i.clamp {
            return Err(self.err(&format!(
                "{}: neg and clamp modifiers are not interpreted",
                i.op.name()
            )));
        }
        let (dw, sw) = i.op.regs();
        let n = self.w.lanes;
        // Each operand's registers, copied out (D may overlap C).
        let regs = |x: &Self, code: u16, count: u16| -> Result<Vec<u32>, IsaError> {
            let o = x.vreg(code, usize::from(count))?;
            x.w.v
                .get(o..o + usize::from(count) * n)
                .map(<[u32]>::to_vec)
                .ok_or_else(|| x.range_err())
        };
        let (a, b) = (regs(self, i.src[0], sw[0])?, regs(self, i.src[1], sw[1])?);
        let c = if (VGPR..).contains(&i.src[2]) && i.src[2] != NONE {
            regs(self, i.src[2], sw[2])?
        } else {
            // An inline constant C (MFMA allows one): the same value everywhere.
            let v = self.s32(i.src[2], i.lit)?;
            vec![v; usize::from(sw[2]) * n]
        };
        let elem = |r: &[u32], (reg, lane, half): (usize, usize, i8)| -> f32 {
            let w = r[reg * n + lane];
            match half {
                -1 => f32v(w),
                h => {
                    // CAST: 0 or 1.
                    let bits = (w >> (16 * h as u32)) & 0xffff;
                    if s.bf16 {
                        f32v(bits << 16)
                    } else {
                        f16_to_f32(bits)
                    }
                }
            }
        };
        // f16 C and D: the half OPSEL[2] selects; D's other half is kept.
        let hi = i8::from(i.sub & 4 != 0);
        let o = self.vreg(i.dst, usize::from(dw))?;
        let mut d = if s.f16_out {
            self.w
                .v
                .get(o..o + usize::from(dw) * n)
                .map(<[u32]>::to_vec)
                .ok_or_else(|| self.range_err())?
        } else {
            vec![0u32; usize::from(dw) * n]
        };
        for row in 0..s.m {
            for col in 0..s.n {
                let (reg, lane, _) = (s.d)(row, col);
                let mut acc = if s.f16_out {
                    elem(&c, (reg, lane, hi))
                } else {
                    elem(&c, (reg, lane, -1))
                };
                for k in 0..s.k {
                    acc += elem(&a, (s.a)(row, k)) * elem(&b, (s.b)(k, col));
                }
                let w = &mut d[reg * n + lane];
                *w = if s.f16_out {
                    let shift = 16 * u32::from(hi.unsigned_abs());
                    (*w & !(0xffff << shift)) | (f32_to_f16(acc, false) << shift)
                } else {
                    acc.to_bits()
                };
            }
        }
        match self.w.v.get_mut(o..o + d.len()) {
            Some(dst) => dst.copy_from_slice(&d),
            None => return Err(self.range_err()),
        }
        Ok(())
    }
}
