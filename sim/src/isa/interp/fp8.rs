//! The 8-bit float formats (gfx942's FNUZ FP8/BF8, gfx12's OCP E4M3FN/E5M2): decoding to f32
//! and converting from it with rounding and saturation.

use super::*;

/// An 8-bit float format: mantissa bits, exponent bias, and which variant: gfx942's FNUZ
/// (no infinities, no -0, the one NaN 0x80) or gfx12's OCP formats (E4M3FN: no infinities,
/// NaN S.1111.111; E5M2: IEEE-like with infinities).
#[derive(Clone, Copy)]
pub(super) struct Fp8 {
    pub(super) m: u32,
    pub(super) bias: i32,
    pub(super) fnuz: bool,
}

impl Fp8 {
    /// The format of `bf8` (E5M2) or fp8 (E4M3) on `isa`.
    pub(super) fn of(isa: Isa, bf8: bool) -> Fp8 {
        let fnuz = isa == Isa::Gfx9;
        match (bf8, fnuz) {
            (false, true) => Fp8 {
                m: 3,
                bias: 8,
                fnuz,
            },
            (true, true) => Fp8 {
                m: 2,
                bias: 16,
                fnuz,
            },
            (false, false) => Fp8 {
                m: 3,
                bias: 7,
                fnuz,
            },
            (true, false) => Fp8 {
                m: 2,
                bias: 15,
                fnuz,
            },
        }
    }

    /// The largest finite magnitude's bits (FNUZ: 0x7f; OCP E4M3FN: 0x7e; E5M2: 0x7b).
    pub(super) fn max_bits(self) -> u32 {
        match (self.fnuz, self.m) {
            (true, _) => 0x7f,
            (false, 3) => 0x7e,
            _ => 0x7b,
        }
    }

    /// The bits of a NaN (and, for E4M3FN and FNUZ, of an overflow) with sign `s` (0x80 or 0).
    pub(super) fn nan(self, s: u32) -> u32 {
        match (self.fnuz, self.m) {
            (true, _) => 0x80,
            (false, 3) => s | 0x7f,
            _ => s | 0x7e,
        }
    }

    /// The 8-bit value `b` as an f32 (exact).
    pub(super) fn to_f32(self, b: u32) -> f32 {
        let b = b & 0xff;
        let (m, e_bits) = (self.m, 7 - self.m);
        let (e, man) = ((b >> m) & ((1 << e_bits) - 1), b & ((1 << m) - 1));
        let emax = (1u32 << e_bits) - 1;
        if self.fnuz && b == 0x80 {
            return f32::NAN;
        }
        if !self.fnuz && e == emax && (m == 2 || man == (1 << m) - 1) {
            if m == 2 && man == 0 {
                return if b & 0x80 != 0 {
                    f32::NEG_INFINITY
                } else {
                    f32::INFINITY
                };
            }
            return f32::NAN;
        }
        // CAST: small exponents.
        let v = if e == 0 {
            f64::from(man) * 2f64.powi(1 - self.bias - m as i32)
        } else {
            f64::from(man + (1 << m)) * 2f64.powi(e as i32 - self.bias - m as i32)
        };
        // CAST: exact in f32.
        let v = v as f32;
        if b & 0x80 != 0 { -v } else { v }
    }

    /// `f` rounded to nearest even into this format; `sat` (the instruction's clamp) turns an
    /// overflow and infinity into the largest finite value, else an overflow is a NaN
    /// (E4M3, FNUZ) or infinity (OCP E5M2).
    pub(super) fn convert(self, f: f32, sat: bool) -> u32 {
        let s = if f.is_sign_negative() { 0x80 } else { 0 };
        if f.is_nan() {
            return self.nan(s);
        }
        let over = |s: u32| {
            if sat {
                s | self.max_bits()
            } else if !self.fnuz && self.m == 2 {
                s | 0x7c
            } else {
                self.nan(s)
            }
        };
        if f.is_infinite() {
            return over(s);
        }
        let a = f64::from(f.abs());
        // CAST: small exponents.
        let m = self.m as i32;
        let emin = 1 - self.bias;
        let (bits, v) = if a < 2f64.powi(emin) {
            let q = rne64(a / 2f64.powi(emin - m));
            // CAST: q <= 2^m (then it is the smallest normal's encoding).
            (q as u32, q * 2f64.powi(emin - m))
        } else {
            let mut e = frexp(a).1 - 1;
            let mut q = rne64(a / 2f64.powi(e - m));
            if q >= 2f64.powi(m + 1) {
                e += 1;
                q /= 2.0;
            }
            // CAST: the biased exponent and the mantissa fit the byte when not overflowing.
            let b =
                (((e + self.bias).max(0) as u32) << self.m) | ((q as u32) & ((1 << self.m) - 1));
            (b, q * 2f64.powi(e - m))
        };
        if v > f64::from(self.to_f32(self.max_bits())) {
            return over(s);
        }
        if bits == 0 && self.fnuz {
            return 0;
        }
        s | bits
    }
}
