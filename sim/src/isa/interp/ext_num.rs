//! Number helpers of the extended vector ALU (`valu_ext.rs`): IEEE-754-2019 minimum/maximum,
//! bf16, 16-bit integer and normalized conversions, the cube-map major axis, the f16
//! div_fixup and trig_preop.

use super::*;

/// IEEE-754-2019 minimum (`max` false) or maximum of f32 bits: a NaN operand is the result
/// (a signaling one quieted, S0's first), -0 orders below +0 (RDNA4 ISA V_MINIMUM_F32).
pub(super) fn minmax_ieee32(a: u32, b: u32, max: bool) -> u32 {
    let nan = |x: u32| x & 0x7fff_ffff > 0x7f80_0000;
    let snan = |x: u32| nan(x) && x & 0x0040_0000 == 0;
    if snan(a) || (nan(a) && !snan(b)) {
        return a | 0x0040_0000;
    }
    if nan(b) {
        return b | 0x0040_0000;
    }
    let (x, y) = (f32v(a), f32v(b));
    if x == y {
        // +-0: the minimum has the sign if either has it, the maximum only if both do.
        return if max { a & b } else { a | b };
    }
    if (x < y) != max { a } else { b }
}

/// [`minmax_ieee32`] on f16 bits.
pub(super) fn minmax_ieee16(a: u32, b: u32, max: bool) -> u32 {
    let nan = |x: u32| x & 0x7fff > 0x7c00;
    let snan = |x: u32| nan(x) && x & 0x0200 == 0;
    if snan(a) || (nan(a) && !snan(b)) {
        return a | 0x0200;
    }
    if nan(b) {
        return b | 0x0200;
    }
    let (x, y) = (f16_to_f32(a), f16_to_f32(b));
    if x == y {
        return if max { a & b } else { a | b };
    }
    if (x < y) != max { a } else { b }
}

/// [`minmax_ieee32`] on f64 bits.
pub(super) fn minmax_ieee64(a: u64, b: u64, max: bool) -> u64 {
    let q = 1u64 << 51;
    let nan = |x: u64| x & !(1 << 63) > 0x7ff0_0000_0000_0000;
    let snan = |x: u64| nan(x) && x & q == 0;
    if snan(a) || (nan(a) && !snan(b)) {
        return a | q;
    }
    if nan(b) {
        return b | q;
    }
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    if x == y {
        return if max { a & b } else { a | b };
    }
    if (x < y) != max { a } else { b }
}

/// f32 → bf16 bits, round to nearest even (a NaN stays a quiet NaN).
pub(super) fn bf16_of(f: f32) -> u32 {
    let b = f.to_bits();
    if f.is_nan() {
        return (b >> 16) | 0x40;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round)) >> 16
}

/// bf16 bits → f32.
pub(super) fn bf16_to_f32(h: u32) -> f32 {
    f32::from_bits((h & 0xffff) << 16)
}

/// f32 → a signed or unsigned 16-bit integer, truncating and saturating, NaN to 0 (the
/// guide's f32_to_i16 / f32_to_u16 of V_CVT_PK_I16_F32 / V_CVT_PK_U16_F32).
pub(super) fn f32_to_int16(f: f32, signed: bool) -> u32 {
    if f.is_nan() {
        return 0;
    }
    let (lo, hi) = if signed {
        (-32768.0, 32767.0)
    } else {
        (0.0, 65535.0)
    };
    // CAST: saturated to the 16-bit range, then its low 16 bits.
    (f.trunc().clamp(lo, hi) as i32 as u32) & 0xffff
}

/// f32 in [-1, 1] (snorm) or [0, 1] (unorm) → a 16-bit normalized integer, round to nearest
/// even, NaN to 0 (the guide's f32_to_snorm / f32_to_unorm).
pub(super) fn f32_to_norm16(f: f32, signed: bool) -> u32 {
    if f.is_nan() {
        return 0;
    }
    let v = if signed {
        rne32(f.clamp(-1.0, 1.0) * 32767.0)
    } else {
        rne32(f.clamp(0.0, 1.0) * 65535.0)
    };
    // CAST: an integer in the 16-bit range, its low 16 bits.
    (v as i32 as u32) & 0xffff
}

/// Which face of the cube a direction (x, y, z) hits: 2 for z, 1 for y, 0 for x (RDNA3 ISA
/// V_CUBEID_F32: z wins ties with x and y, y wins ties with x).
pub(super) fn cube_major(x: f32, y: f32, z: f32) -> u8 {
    if z.abs() >= x.abs() && z.abs() >= y.abs() {
        2
    } else if y.abs() >= x.abs() {
        1
    } else {
        0
    }
}

/// V_DIV_FIXUP_F16 (RDNA3 ISA): the special cases of the quotient S2 / S1 whose estimate is
/// S0: a NaN operand quieted (S2's first), 0/0 and inf/inf the negative quiet NaN, x/0 and
/// inf/x infinity, x/inf and 0/x zero (signed by sign(S1) ^ sign(S2)); otherwise |S0| with
/// that sign.
pub(super) fn div_fixup16(q: u32, d: u32, n: u32) -> u32 {
    let nan = |x: u32| x & 0x7fff > 0x7c00;
    let (fd, fn_) = (f16_to_f32(d), f16_to_f32(n));
    let sign = (d ^ n) & 0x8000;
    if nan(n) {
        return n | 0x0200;
    }
    if nan(d) {
        return d | 0x0200;
    }
    if (fd == 0.0 && fn_ == 0.0) || (fd.is_infinite() && fn_.is_infinite()) {
        return 0xfe00;
    }
    if fd == 0.0 || fn_.is_infinite() {
        return sign | 0x7c00;
    }
    if fd.is_infinite() || fn_ == 0.0 {
        return sign;
    }
    sign | (q & 0x7fff)
}

/// 2/pi as a 1201-bit binary fraction (bit 1200 has weight 2^-1), in 64-bit limbs, least
/// significant first: the constant V_TRIG_PREOP_F64 reads (computed with Machin's formula).
pub(super) const TWO_OVER_PI: [u64; 19] = [
    0xba10_ac06_608d_f8f6,
    0x25d4_d7f6_bf62_3f1a,
    0xe2f6_7a0e_73ef_14a5,
    0xd45a_ea4f_758f_d7cb,
    0x136e_9e8c_7ecd_3cbf,
    0xda3e_da6c_fd9e_4f96,
    0x301f_de5e_2316_b414,
    0x5076_3ff1_2fff_bc0b,
    0x73e9_3908_bf17_7bf2,
    0xfc82_7323_ac73_06a6,
    0x8909_d338_e04d_68be,
    0x4e7d_d104_6bea_5d76,
    0x2439_fc3b_d639_6253,
    0xa5c0_0c92_5dd4_13a3,
    0x8ac3_6e48_dc74_849b,
    0x2083_fca2_c757_bd77,
    0xbb81_b6c5_2b32_7887,
    0x2a53_f84e_afa3_ea69,
    0x0001_45f3_06dc_9c88,
];

/// V_TRIG_PREOP_F64 (RDNA3 ISA): the 53 bits of 2/pi that start `shift` = 53 * S1[4:0]
/// (plus exponent(S0) - 1077 when that is positive) bits after the binary point, scaled by
/// 2^(-53 - shift) (2^128 more when exponent(S0) >= 1968): a piece of 2/pi for the
/// Payne-Hanek range reduction of S0.
pub(super) fn trig_preop(x: u64, s1: u64, _: u64) -> u64 {
    // CAST: the biased 11-bit exponent of S0.
    let e = ((x >> 52) & 0x7ff) as i64;
    // CAST: S1[4:0].
    let mut shift = (s1 & 31) as i64 * 53;
    if e > 1077 {
        shift += e - 1077;
    }
    // Bits [lo, lo + 53) of the 1201-bit constant (bits below 0 are zero).
    let lo = 1201 - 53 - shift;
    let mut chunk = 0u64;
    for k in 0..53 {
        let bit = lo + k;
        if (0..1201).contains(&bit) {
            // CAST: 0 <= bit < 1201.
            let b = bit as usize;
            chunk |= ((TWO_OVER_PI[b / 64] >> (b % 64)) & 1) << k;
        }
    }
    let mut scale = -53 - shift;
    if e >= 1968 {
        scale += 128;
    }
    // CAST: a 53-bit integer is exact in f64; scale fits i32.
    ldexp(chunk as f64, scale as i32).to_bits()
}
