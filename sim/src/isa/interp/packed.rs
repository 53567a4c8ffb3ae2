//! VOP3P: packed math on the two 16-bit halves of each lane. Every source half is chosen by
//! op_sel (low result half) and op_sel_hi (high result half); f16 sources take neg_lo/neg_hi;
//! clamp saturates integers to their 16-bit range and clamps f16 results to [0, 1].

use super::*;

/// How an operation reads and writes its halves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    F16,
    U16,
    I16,
}

impl Exec<'_, '_> {
    pub(super) fn vop3p(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        if let Some(d) = i.dpp {
            return self.dpp(i, d);
        }
        match i.op {
            VFmaMixF32 | VFmaMixloF16 | VFmaMixhiF16 => return self.fma_mix(i),
            VPkMovB32 => return self.pk_mov(i),
            op if Self::is_matrix(op) => return self.matrix(i),
            VPkFmaF32 | VPkMulF32 | VPkAddF32 => return self.pk_f32(i),
            VDot2F32F16 | VDot2F32Bf16 | VDot4I32Iu8 | VDot4U32U8 | VDot8I32Iu4 | VDot8U32U4
            | VDot2I32I16 | VDot2U32U16 | VDot4I32I8 | VDot8I32I4 => {
                return self.dot_packed(i);
            }
            VDot4F32Fp8Bf8 | VDot4F32Bf8Fp8 | VDot4F32Fp8Fp8 | VDot4F32Bf8Bf8 => {
                return self.dot4_fp8(i);
            }
            _ => {}
        }
        let kind = match i.op {
            VPkFmaF16 | VPkAddF16 | VPkMulF16 | VPkMinF16 | VPkMaxF16 | VPkMinimumF16
            | VPkMaximumF16 => Kind::F16,
            VPkMadI16 | VPkAddI16 | VPkSubI16 | VPkMaxI16 | VPkMinI16 | VPkAshrrevI16 => Kind::I16,
            _ => Kind::U16,
        };
        let n = self.w.lanes;
        let mut src = [[0u32; MAX_LANES]; 3];
        for (k, out) in src.iter_mut().enumerate() {
            if i.src[k] == NONE {
                continue;
            }
            let width = if kind == Kind::F16 {
                Width::F16
            } else {
                Width::B32
            };
            let code = i.src[k];
            match self.src(code, i.lit, width)? {
                Src::V(o) => {
                    let s = self
                        .w
                        .v
                        .get(o..o + n)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    out[..n].copy_from_slice(s);
                }
                // An inline constant is one 32-bit value whose halves the op_sel bits pick
                // like a register's: an integer sign-extended to 32 bits, a float as an f16 in
                // the low half (0 above) for f16 operations and as the f32 for integer ones
                // (LLVM AMDGPUBaseInfo getInlineEncodingV216: "the actual HW behavior";
                // tinygrad test/amd/hw test_vop3p.py *_with_inline_constant and
                // test_v_pk_add_u16_float_inline_const_opsel, checked on gfx1100).
                Src::C(c) => out[..n].fill(c),
            }
        }
        let half = |x: u32, hi: bool| if hi { x >> 16 } else { x & 0xffff };
        let op_sel = u32::from(i.sub);
        let neg = u32::from(i.mods);
        let mut r = [0u32; MAX_LANES];
        for (l, r) in r[..n].iter_mut().enumerate() {
            let mut out = 0u32;
            for h in 0..2 {
                // h 0: the low result half (op_sel, neg_lo); h 1: the high one (op_sel_hi, neg_hi).
                let mut a = [0u32; 3];
                for (k, a) in a.iter_mut().enumerate() {
                    let sel = (op_sel >> (4 * h + k)) & 1 == 1;
                    *a = half(src[k][l], sel);
                    if kind == Kind::F16 && (neg >> (4 * h + k)) & 1 == 1 {
                        *a ^= 0x8000;
                    }
                }
                let v = packed_half(i.op, kind, a, i.clamp);
                out |= (v & 0xffff) << (16 * h);
            }
            *r = out;
        }
        self.write_lanes(i.dst, &r)
    }
}

impl Exec<'_, '_> {
    /// gfx90a/gfx942 packed f32: each source is a 64-bit register pair (or an SGPR pair);
    /// the low result takes dword op_sel\[k\] of source k and neg_lo, the high one dword
    /// op_sel_hi\[k\] and neg_hi. An inline constant is one 32-bit value seen in both dwords.
    /// Denormals follow FLOAT_DENORM_MODE_32, clamp saturates each result to \[0, 1\].
    fn pk_f32(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let mut src = [[0u64; MAX_LANES]; 3];
        for (k, out) in src.iter_mut().enumerate() {
            let code = i.src[k];
            if code == NONE {
                continue;
            }
            if !(128..VGPR).contains(&code) {
                let mut plain = *i;
                plain.mods = 0;
                self.lanes64(&plain, k, Width::B64, out)?;
            } else {
                let c = u64::from(self.sread(code, i.lit, Width::B32)? as u32);
                out[..n].fill(c | (c << 32));
            }
        }
        let op_sel = u32::from(i.sub);
        let neg = u32::from(i.mods);
        let denorm = self.w.denorm32();
        let fl = |x: u32| if denorm { x } else { flush32(x) };
        let mut r = [0u64; MAX_LANES];
        for (l, r) in r[..n].iter_mut().enumerate() {
            let mut out = 0u64;
            for h in 0..2 {
                let mut a = [0f32; 3];
                for (k, a) in a.iter_mut().enumerate() {
                    let hi = (op_sel >> (4 * h + k)) & 1 == 1;
                    // CAST: the selected dword.
                    let mut x = (src[k][l] >> if hi { 32 } else { 0 }) as u32;
                    if (neg >> (4 * h + k)) & 1 == 1 {
                        x ^= 0x8000_0000;
                    }
                    *a = f32v(fl(x));
                }
                let v = match i.op {
                    VPkFmaF32 => fma32(a[0], a[1], a[2]),
                    VPkMulF32 => a[0] * a[1],
                    _ => a[0] + a[1],
                };
                let v = if i.clamp {
                    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
                } else {
                    v
                };
                out |= u64::from(fl(v.to_bits())) << (32 * h);
            }
            *r = out;
        }
        self.write_lanes64(i.dst, &r)
    }
}

/// One 16-bit result of `op` from the source halves `a` (zero-extended).
fn packed_half(op: Op, kind: Kind, a: [u32; 3], clamp: bool) -> u32 {
    use Op::*;
    if matches!(op, VPkMinimumF16 | VPkMaximumF16) {
        // RDNA4 ISA V_PK_MINIMUM/MAXIMUM_F16: IEEE-754-2019 minimum/maximum per half.
        let v = super::ext_num::minmax_ieee16(a[0], a[1], op == VPkMaximumF16);
        let f = f16_to_f32(v);
        return if clamp && f.is_nan() {
            0
        } else if clamp {
            f32_to_f16(f.clamp(0.0, 1.0), false)
        } else {
            v
        };
    }
    if kind == Kind::F16 {
        let f = |x: u32| f16_to_f32(x);
        let v = match op {
            VPkAddF16 => f(a[0]) + f(a[1]),
            VPkMulF16 => f(a[0]) * f(a[1]),
            // CAST: the f64 product-sum rounds once to f32 and then to f16.
            VPkFmaF16 => f64::from(f(a[0])).mul_add(f64::from(f(a[1])), f64::from(f(a[2]))) as f32,
            VPkMinF16 => fmin(f(a[0]), f(a[1])),
            _ => fmax(f(a[0]), f(a[1])),
        };
        let v = if clamp && !v.is_nan() {
            v.clamp(0.0, 1.0)
        } else if clamp {
            0.0
        } else {
            v
        };
        return f32_to_f16(v, false);
    }
    // CAST: 16-bit halves, signed where the op is.
    let s = |x: u32| i64::from(x as u16 as i16);
    let (x, y, z) = if kind == Kind::I16 {
        (s(a[0]), s(a[1]), s(a[2]))
    } else {
        (i64::from(a[0]), i64::from(a[1]), i64::from(a[2]))
    };
    let wide = match op {
        VPkMadI16 | VPkMadU16 => x * y + z,
        VPkMulLoU16 => x * y,
        VPkAddI16 | VPkAddU16 => x + y,
        VPkSubI16 | VPkSubU16 => x - y,
        // Shifts: the amount is the low 4 bits of the first source.
        VPkLshlrevB16 => y << (x & 15),
        VPkLshrrevB16 => (y & 0xffff) >> (x & 15),
        VPkAshrrevI16 => s(a[1] & 0xffff) >> (x & 15),
        VPkMaxI16 | VPkMaxU16 => x.max(y),
        _ => x.min(y),
    };
    // Clamp saturates arithmetic; a shift's result is its low 16 bits either way.
    let shift = matches!(op, VPkLshlrevB16 | VPkLshrrevB16 | VPkAshrrevI16);
    let wide = match (clamp && !shift, kind) {
        (true, Kind::I16) => wide.clamp(-0x8000, 0x7fff),
        (true, _) => wide.clamp(0, 0xffff),
        _ => wide,
    };
    // CAST: the low 16 bits are the result.
    (wide as u32) & 0xffff
}
