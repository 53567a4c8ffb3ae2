//! Number helpers the lane loops share: float views, f16 conversion, min/max, compares,
//! classes, rounding, bit fields, and the f32/f64 division steps.

use super::*;

pub(super) fn f32v(x: u32) -> f32 {
    f32::from_bits(x)
}

/// The f32 fused multiply-add `x * y + z`, rounded once to nearest even (V_FMA_F32,
/// V_FMAC_F32 and their VOPD and literal forms): the one definition the general and the fast
/// paths share. [`fma32_quick`] when it is exact, else `f32::mul_add` (libm's `fmaf`, a call
/// per lane on a baseline x86-64 build).
#[inline(always)]
pub(super) fn fma32(x: f32, y: f32, z: f32) -> f32 {
    match fma32_quick(x, y, z) {
        (r, true) => r,
        _ => x.mul_add(y, z),
    }
}

/// The f32 FMA in f64 arithmetic, and whether that is the correctly rounded result. The
/// product of two f32 is exact in f64 (24 + 24 significant bits, exponents well inside f64's
/// range), so `s = x * y + z` in f64 is the exact sum rounded once to 53 bits. Rounding `s` to
/// f32 then gives the exact sum's f32 rounding unless the first rounding moved the sum onto or
/// across a point halfway between two f32 values: every such midpoint (25 significant bits) is
/// an f64, and rounding is monotonic, so the exact sum and `s` lie on the same side of every
/// midpoint unless `s` is one. Between normal f32 values (results of magnitude 2^-125 up to
/// the largest finite f32, where every midpoint has 24 fraction bits) that is the f64's 29
/// bits below the f32 mantissa being exactly 1 << 28, all in its low word. Other results
/// (denormal or near it, zero, infinite, NaN: signs, payloads and the denormal grid the host's
/// FMA decides) report `false`, as do ties, for [`fma32`] to take the host's FMA. Only 32-bit
/// integer tests, so a lane loop vectorises on baseline x86-64.
#[inline(always)]
pub(super) fn fma32_quick(x: f32, y: f32, z: f32) -> (f32, bool) {
    let s = f64::from(x) * f64::from(y) + f64::from(z);
    // CAST: f64 -> f32 rounds to nearest even.
    let r = s as f32;
    // Biased exponent 2..=254: |r| in [2^-125, 2^128).
    let normal = ((r.to_bits() >> 23) & 0xff).wrapping_sub(2) < 253;
    // CAST: the low word of the f64.
    let tie = (s.to_bits() as u32) & 0x1fff_ffff == 0x1000_0000;
    (r, normal && !tie)
}

/// [`fma32`] over a wave's lanes of f32 bits: one straight pass of [`fma32_quick`] (it
/// vectorises), then, only when a lane needs it, that lane again through [`fma32`].
#[inline(always)]
pub(super) fn fma32_lanes<const N: usize>(
    r: &mut [u32; N],
    a: &[u32; N],
    b: &[u32; N],
    c: &[u32; N],
) {
    let mut inexact = 0u32;
    for (((r, a), b), c) in r.iter_mut().zip(a).zip(b).zip(c) {
        let (v, ok) = fma32_quick(f32v(*a), f32v(*b), f32v(*c));
        *r = v.to_bits();
        inexact |= u32::from(!ok);
    }
    if inexact != 0 {
        for (((r, a), b), c) in r.iter_mut().zip(a).zip(b).zip(c) {
            *r = fma32(f32v(*a), f32v(*b), f32v(*c)).to_bits();
        }
    }
}

/// V_SIN (`cos` false) or V_COS of `x` revolutions: `sin(2 * pi * x)` / `cos(2 * pi * x)`
/// (RDNA3 ISA guide, VOP1 opcodes: V_SIN_F32, V_COS_F32). The hardware works in turns: the
/// fraction of `x` (exact in f32) is split into its quadrant and the rest, so a large whole
/// number of turns gives the value at 0 (sin(132000.0) is 0 on gfx1100) and a quarter turn is
/// exact (cos(0.25) is +0.0 on gfx1100: tinygrad test/amd/hw test_vop1.py
/// test_v_sin_f32_large and test_v_cos_f32_quarter, checked on the GPU). A zero result is
/// +0.0 except sin(-0.0); infinities and NaN give NaN.
pub(super) fn turns(x: f32, cos: bool) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    if !cos && x == 0.0 {
        return x;
    }
    // sin is odd and cos even: reduce |x| and put the sign back on sin.
    let neg = !cos && x < 0.0;
    let mut u = f64::from(x.abs() % 1.0);
    if cos {
        // cos(t) = sin(t + 1/4 turn).
        u += 0.25;
        if u >= 1.0 {
            u -= 1.0;
        }
    }
    let q = (u * 4.0).floor();
    // Exact: q / 4 is a multiple of a quarter below u.
    let a = (u - q * 0.25) * core::f64::consts::TAU;
    // CAST: q is 0..=3.
    let v = match q as u8 {
        0 => a.sin(),
        1 => a.cos(),
        2 => -a.sin(),
        _ => -a.cos(),
    };
    // CAST: rounds the result to f32.
    let f = if neg { -v } else { v } as f32;
    if f == 0.0 { 0.0 } else { f }
}

pub(super) fn inline_const(code: u16, width: Width) -> Option<u64> {
    Some(match code {
        128..=192 => u64::from(code - 128),
        // CAST: -1..-16 as two's complement.
        193..=208 => (-(i64::from(code) - 192)) as u64,
        240..=248 => {
            let k = usize::from(code - 240);
            // 64-bit operands, integer ones too, read the f64 (tinygrad test/amd/hw
            // test_sop.py test_s_mov_b64_float_const_1_0: s_mov_b64 of 1.0 gives
            // 0x3ff00000_00000000 on gfx1100; LLVM's isInlinableLiteral64 likewise).
            match width {
                Width::F64 | Width::B64 => [
                    0x3fe0_0000_0000_0000u64,
                    0xbfe0_0000_0000_0000,
                    0x3ff0_0000_0000_0000,
                    0xbff0_0000_0000_0000,
                    0x4000_0000_0000_0000,
                    0xc000_0000_0000_0000,
                    0x4010_0000_0000_0000,
                    0xc010_0000_0000_0000,
                    0x3fc4_5f30_6dc9_c882,
                ][k],
                Width::F16 => [
                    0x3800u64, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
                ][k],
                _ => [
                    0x3f00_0000u64,
                    0xbf00_0000,
                    0x3f80_0000,
                    0xbf80_0000,
                    0x4000_0000,
                    0xc000_0000,
                    0x4080_0000,
                    0xc080_0000,
                    0x3e22_f983,
                ][k],
            }
        }
        _ => return None,
    })
}

/// How an operand is read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Width {
    B32,
    F16,
    B64,
    F64,
}

pub(super) fn is_f32(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        VAddF32
            | VSubF32
            | VSubrevF32
            | VMulF32
            | VMinF32
            | VMaxF32
            | VFmacF32
            | VFmamkF32
            | VFmaakF32
            | VFmaF32
            | VMin3F32
            | VMax3F32
            | VMed3F32
            | VMaxminF32
            | VMinmaxF32
            | VLdexpF32
            | VCmpF32
            | VCmpClassF32
            | VCvtU32F32
            | VCvtI32F32
            | VCvtF16F32
            | VCvtF64F32
            | VFractF32
            | VTruncF32
            | VCeilF32
            | VRndneF32
            | VFloorF32
            | VExpF32
            | VLogF32
            | VRcpF32
            | VRcpIflagF32
            | VRsqF32
            | VSqrtF32
            | VSinF32
            | VCosF32
            | VFrexpExpI32F32
            | VFrexpMantF32
            | VCvtPkRtzF16F32
    )
}

/// Whether the op's 32-bit result is an f32 (clamp, omod, the quiet bit of a NaN and the
/// denormal mode apply to it): the f32 ops of [`is_f32`] whose result is a float, and the
/// conversions to f32 from integers, bytes and f64.
pub(super) fn f32_result(op: Op) -> bool {
    use Op::*;
    match op {
        VCmpF32 | VCmpClassF32 | VCvtU32F32 | VCvtI32F32 | VCvtF16F32 | VCvtF64F32
        | VFrexpExpI32F32 | VCvtPkRtzF16F32 => false,
        VCvtF32I32 | VCvtF32U32 | VCvtF32Ubyte0 | VCvtF32Ubyte1 | VCvtF32Ubyte2 | VCvtF32Ubyte3
        | VCvtF32F64 | VCvtF32F16 | VDivFixupF32 => true,
        _ => is_f32(op),
    }
}

/// Per-source bit masks for VOP3 abs/neg on a float of `width` (applied to the word holding
/// the sign).
pub(super) fn mods_masks(i: &Inst, k: usize, w: Width) -> (u32, u32) {
    if i.mods == 0 {
        return (!0, 0);
    }
    let sign = match w {
        Width::F16 => 0x8000,
        _ => 0x8000_0000,
    };
    let neg = (i.mods >> k) & 1 == 1;
    let abs = (i.mods >> (4 + k)) & 1 == 1;
    (if abs { !sign } else { !0 }, if neg { sign } else { 0 })
}

pub(super) fn f16_to_f32(h: u32) -> f32 {
    let h = h & 0xffff;
    let sign = (h >> 15) << 31;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// f32 → f16 bits, round to nearest even (`rtz`: toward zero).
pub(super) fn f32_to_f16(f: f32, rtz: bool) -> u32 {
    let b = f.to_bits();
    let sign = (b >> 16) & 0x8000;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 13) } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return if rtz { sign | 0x7bff } else { sign | 0x7c00 };
    }
    let (mant, shift) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        (man | 0x80_0000, (14 - e) as u32)
    } else {
        (man, 13u32)
    };
    let mut h = mant >> shift;
    if !rtz {
        let rem = mant & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        if rem > half || (rem == half && h & 1 == 1) {
            h += 1;
        }
    }
    if e <= 0 {
        sign | h
    } else {
        // Carry from rounding may bump the exponent (correct: also reaches inf).
        sign | (((e as u32) << 10) + h)
    }
}

pub(super) fn flush32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

pub(super) fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        // Two NaNs: S0 quieted (RDNA4 ISA V_MIN_NUM/V_MAX_NUM; RDNA3 returns S0).
        return if b.is_nan() {
            f32::from_bits(a.to_bits() | 0x0040_0000)
        } else {
            b
        };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // -0 < +0
        return f32::from_bits(a.to_bits() | b.to_bits());
    }
    a.min(b)
}

pub(super) fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        // Two NaNs: S0 quieted (RDNA4 ISA V_MIN_NUM/V_MAX_NUM; RDNA3 returns S0).
        return if b.is_nan() {
            f32::from_bits(a.to_bits() | 0x0040_0000)
        } else {
            b
        };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return f32::from_bits(a.to_bits() & b.to_bits());
    }
    a.max(b)
}

pub(super) fn fmin64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() { a } else { a.min(b) }
}

pub(super) fn fmax64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() { a } else { a.max(b) }
}

/// Float compare by condition (f lt eq le gt lg ge o u nge nlg ngt nle neq nlt t).
pub(super) fn fcmp(c: u8, a: f64, b: f64) -> bool {
    use core::cmp::Ordering::{Equal, Greater, Less};
    let o = a.partial_cmp(&b);
    match c {
        0 => false,
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => !matches!(o, Some(Greater | Equal)),
        10 => !matches!(o, Some(Less | Greater)),
        11 => o != Some(Greater),
        12 => !matches!(o, Some(Less | Equal)),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => true,
    }
}

/// Integer compare by condition (f lt eq le gt ne ge t).
pub(super) fn icmp<T: PartialOrd + PartialEq>(c: u8, a: T, b: T) -> bool {
    match c {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

/// v_cmp_class: `mask` bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0,
/// 7 +denorm, 8 +normal, 9 +inf.
pub(super) fn class64(x: f64, mask: u32) -> bool {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        // Quiet bit.
        if x.to_bits() & (1 << 51) != 0 { 1 } else { 0 }
    } else if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    mask >> bit & 1 == 1
}

pub(super) fn class32(x: f32, mask: u32) -> bool {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        if x.to_bits() & (1 << 22) != 0 { 1 } else { 0 }
    } else if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    mask >> bit & 1 == 1
}

/// V_CMP_CLASS_F16: whether the class of the half in the low 16 bits of `x` has its bit set
/// in `mask` (0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
/// 7 +denormal, 8 +normal, 9 +inf), from the bits: f16 denormals are no f32 denormals.
pub(super) fn class16(x: u32, mask: u32) -> bool {
    let (neg, e, m) = (x & 0x8000 != 0, (x >> 10) & 0x1f, x & 0x3ff);
    let bit = match (e, m) {
        (0x1f, 0) => {
            if neg {
                2
            } else {
                9
            }
        }
        (0x1f, m) => u32::from(m & 0x200 != 0),
        (0, 0) => {
            if neg {
                5
            } else {
                6
            }
        }
        (0, _) => {
            if neg {
                4
            } else {
                7
            }
        }
        _ => {
            if neg {
                3
            } else {
                8
            }
        }
    };
    mask >> bit & 1 == 1
}

pub(super) fn rne32(x: f32) -> f32 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

pub(super) fn rne64(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

pub(super) fn cvt_i32(f: f64) -> u32 {
    // Saturating, NaN -> 0 (ISA).
    // CAST: `as` saturates and maps NaN to 0, as the ISA specifies.
    (f as i32) as u32
}

pub(super) fn cvt_u32(f: f64) -> u32 {
    // CAST: `as` saturates and maps NaN to 0.
    f as u32
}

pub(super) fn bfe(x: u32, off: u32, w: u32) -> u32 {
    let off = off & 31;
    let w = w & 31;
    if w == 0 {
        0
    } else {
        (x >> off) & ((1u64 << w) - 1) as u32
    }
}

pub(super) fn bfe_i(x: u32, off: u32, w: u32) -> u32 {
    let off = off & 31;
    let w = w & 31;
    if w == 0 {
        return 0;
    }
    // S0.i32 >> offset is an arithmetic shift (RDNA3 ISA V_BFE_I32/S_BFE_I32 pseudo-code):
    // a field reaching past bit 31 takes copies of the sign bit.
    // CAST: the shifted word's bits, then the field placed at the top and shifted back.
    let v = u64::from(((x as i32) >> off) as u32) << (64 - w);
    ((v as i64) >> (64 - w)) as u32
}

pub(super) fn sext24(x: u32) -> i64 {
    // CAST: low 24 bits sign-extended.
    i64::from(((x << 8) as i32) >> 8)
}

/// One byte of V_PERM_B32 (RDNA3 ISA BYTE_PERMUTE): selectors 0..7 pick a byte of
/// {S0, S1}, 8..11 the sign of bytes 1, 3, 5, 7 spread to the byte, 12 zero (LLVM's masks
/// use 0x0c for a zero byte), 13 and up 0xff.
pub(super) fn perm_byte(s: u64, sel: u32) -> u32 {
    let sign = |bit: u32| if s >> bit & 1 == 1 { 0xff } else { 0 };
    match sel {
        0..=7 => ((s >> (sel * 8)) & 0xff) as u32,
        8 => sign(15),
        9 => sign(31),
        10 => sign(47),
        11 => sign(63),
        12 => 0,
        _ => 0xff,
    }
}

/// Exponent field of an f64.
pub(super) fn exp64(x: f64) -> i32 {
    // CAST: 11-bit field.
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// V_DIV_SCALE: the numerator or denominator, scaled when the quotient would leave the
/// normal range; the bool is the lane's VCC. `k` = (exponent-difference limit, scale
/// exponent, exponent of a tiny numerator) of the format; `e` reads the biased exponent
/// field and `sub` whether a value is a denormal of the format.
///
/// The RDNA3/CDNA3 pseudo-code, with what gfx1100 does where it differs (tinygrad's
/// hardware-validated test/amd/hw test_vop3.py `test_div_scale_f32_*`): a zero operand
/// gives NaN with VCC set; a denormal denominator gives NaN (the guide scales it); a tiny
/// numerator (exponent <= k.2) is scaled with VCC set (the guide leaves VCC clear, but
/// V_DIV_FMAS undoes the scale only by VCC); a quotient that would be denormal sets VCC
/// and returns S0 unscaled (the guide scales S0 when it is the numerator). The `1.0 / S1
/// == DENORM.f64` tests are the guide's, in f64 for both formats (never true for an f32
/// denominator). f64 follows the same rules (no hardware case checks it).
pub(super) fn div_scale(
    s0: f64,
    s1: f64,
    s2: f64,
    k: (i32, i32, i32),
    e: fn(f64) -> i32,
    sub: fn(f64) -> bool,
) -> (f64, bool) {
    let (diff, scale, tiny) = k;
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, true);
    }
    let inv_denorm = (1.0 / s1).is_subnormal();
    // Near the top of the range, or a huge denominator and a denormal quotient: only the
    // denominator is scaled.
    let (d, vcc) = if e(s2) - e(s1) >= diff || (inv_denorm && sub(s2 / s1)) {
        (if s0 == s1 { ldexp(s0, scale) } else { s0 }, true)
    } else if inv_denorm {
        (ldexp(s0, -scale), false)
    } else if sub(s2 / s1) {
        (s0, true)
    } else if e(s2) <= tiny {
        (ldexp(s0, scale), true)
    } else {
        (s0, false)
    };
    if sub(s1) { (f64::NAN, vcc) } else { (d, vcc) }
}

pub(super) fn exp32of(x: f64) -> i32 {
    // CAST: the f32 exponent field.
    (((x as f32).to_bits() >> 23) & 0xff) as i32
}

pub(super) fn sub32(x: f64) -> bool {
    (x as f32).is_subnormal()
}

/// V_DIV_FIXUP: special cases of a quotient `s2 / s1` whose estimate is `s0`.
pub(super) fn div_fixup(s0: f64, s1: f64, s2: f64, max_exp: i32, e: fn(f64) -> i32) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |m: f64| if neg { -m } else { m };
    // A NaN operand comes out quiet; 0/0 and inf/inf give the negative quiet NaN
    // (0xffc00000, 0xfff8000000000000) (RDNA3 ISA V_DIV_FIXUP pseudo-code).
    let quiet = |x: f64| f64::from_bits(x.to_bits() | 1 << 51);
    if s2.is_nan() {
        return quiet(s2);
    }
    if s1.is_nan() {
        return quiet(s1);
    }
    if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        return -f64::NAN;
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    // A quotient below the smallest denormal: the smallest denormal, signed.
    let (floor, tiny) = if max_exp == 255 {
        (-150, 2f64.powi(-149))
    } else {
        (-1075, f64::from_bits(1))
    };
    if e(s2) - e(s1) < floor {
        return signed(tiny);
    }
    if e(s1) == max_exp {
        return signed(f64::INFINITY);
    }
    // A NaN estimate (the reciprocal overflowed) gives the signed infinity (gfx1100:
    // tinygrad test/amd/hw test_vop3.py test_div_fixup_f32_nan_estimate_*; the guide
    // returns abs(S0)).
    if s0.is_nan() {
        return signed(f64::INFINITY);
    }
    signed(s0.abs())
}

pub(super) fn ldexp(x: f64, e: i32) -> f64 {
    let e = e.clamp(-2200, 2200);
    let mut r = x;
    let mut e = e;
    while e > 1000 {
        r *= pow2(1000);
        e -= 1000;
    }
    while e < -1000 {
        r *= pow2(-1000);
        e += 1000;
    }
    r * pow2(e)
}

/// 2^e exactly for `e` in -1022..=1023 (a normal f64: the exponent field alone), without
/// `powi`'s loop of multiplications (the same value: powers of two multiply exactly).
#[inline]
fn pow2(e: i32) -> f64 {
    // CAST: the biased exponent, 1..=2046 for the range above.
    f64::from_bits(((e + 1023).clamp(1, 2046) as u64) << 52)
}

/// frexp: `x = m * 2^e` with `|m|` in [0.5, 1) and x's sign; `(x, 0)` for 0, +-inf and NaN.
pub(super) fn frexp(x: f64) -> (f64, i32) {
    // Read off the bits: exact for every finite f64, denormals and the extremes included
    // (2^e over- or underflows there, so a division would not be).
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let b = x.to_bits();
    let frac = b & ((1 << 52) - 1);
    // CAST: 11-bit field.
    let (frac, e) = match ((b >> 52) & 0x7ff) as i32 {
        0 => {
            // Denormal: shift the leading 1 up to the implicit bit 52.
            let s = frac.leading_zeros() - 11;
            // CAST: s <= 52.
            ((frac << s) & ((1 << 52) - 1), 1 - s as i32)
        }
        e => (frac, e),
    };
    (f64::from_bits(b & (1 << 63) | 1022 << 52 | frac), e - 1022)
}

#[cfg(test)]
mod pow2_tests {
    use super::*;

    #[test]
    fn pow2_is_powi_of_two_over_ldexps_range() {
        for e in -1000..=1000 {
            assert_eq!(pow2(e).to_bits(), 2f64.powi(e).to_bits(), "2^{e}");
        }
        assert_eq!(pow2(0), 1.0);
        assert_eq!(pow2(-1), 0.5);
        // ldexp across the steps: the largest f32 denormal scaled up, 1 past f64's range, and
        // the smallest f64 denormal.
        assert_eq!(ldexp(1.0, -1074).to_bits(), 1);
        assert_eq!(ldexp(1.0, 1024), f64::INFINITY);
        assert_eq!(ldexp(3.0, -2), 0.75);
        assert_eq!(ldexp(-1.5, 2000), f64::NEG_INFINITY);
    }
}
