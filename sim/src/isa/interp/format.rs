//! Typed buffer accesses (MUBUF `*_format_*`, MTBUF): each lane reads or writes one element
//! of a buffer format (the descriptor's DATA_FORMAT/NUM_FORMAT on gfx9, its unified FORMAT on
//! gfx11/gfx12, or MTBUF's own field), converting each component to or from the VGPR's 32-bit
//! value (f32 for the normalized, scaled and float formats, integers for UINT/SINT) or, with
//! d16, a 16-bit half (f16 or the integer's low 16 bits). Loads fill components the format
//! lacks with 0 (x, y, z) or 1 (w) and apply the descriptor's DST_SEL; stores write only the
//! components both the instruction and the format have (the element's other bits are kept).
//! CDNA3 ISA "Buffer Instructions" / RDNA3 and RDNA4 ISA "Vector Memory Buffer Instructions"
//! (the data and numeric format tables).

use super::*;

/// A numeric format (NUM_FORMAT codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
}

/// A buffer format: the bits of each component from the element's least significant bit
/// (x first), and how they convert.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fmt {
    bits: &'static [u32],
    num: Num,
}

impl Fmt {
    /// Bytes of one element.
    pub(super) fn bytes(&self) -> usize {
        // CAST: at most 128 bits.
        (self.bits.iter().sum::<u32>() / 8) as usize
    }

    /// gfx9's DATA_FORMAT and NUM_FORMAT; `None` for the invalid and reserved codes and the
    /// combinations the tables do not define.
    fn from_gfx9(dfmt: u32, nfmt: u32) -> Option<Fmt> {
        let bits: &'static [u32] = match dfmt {
            1 => &[8],
            2 => &[16],
            3 => &[8, 8],
            4 => &[32],
            5 => &[16, 16],
            // The names list components from the most significant: 10_11_11 has x in the low
            // 11 bits.
            6 => &[11, 11, 10],
            7 => &[10, 11, 11],
            8 => &[2, 10, 10, 10],
            9 => &[10, 10, 10, 2],
            10 => &[8, 8, 8, 8],
            11 => &[32, 32],
            12 => &[16, 16, 16, 16],
            13 => &[32, 32, 32],
            14 => &[32, 32, 32, 32],
            _ => return None,
        };
        let num = match nfmt {
            0 => Num::Unorm,
            1 => Num::Snorm,
            2 => Num::Uscaled,
            3 => Num::Sscaled,
            4 => Num::Uint,
            5 => Num::Sint,
            7 => Num::Float,
            _ => return None,
        };
        let small_float = matches!(dfmt, 6 | 7);
        let float_ok = matches!(dfmt, 2 | 4 | 5 | 6 | 7 | 11 | 12 | 13 | 14);
        let norm_ok = !matches!(dfmt, 4 | 11 | 13 | 14);
        match num {
            Num::Float if !float_ok => None,
            _ if small_float && num != Num::Float => None,
            Num::Unorm | Num::Snorm | Num::Uscaled | Num::Sscaled if !norm_ok => None,
            _ => Some(Fmt { bits, num }),
        }
    }

    /// gfx10+'s unified FORMAT (the RDNA3/RDNA4 buffer format table: LLVM's
    /// DfmtNfmt2UFmtGFX11).
    fn from_unified(f: u32) -> Option<Fmt> {
        let six = |base: u32, d: u32| (d, f - base);
        let (d, n) = match f {
            1..=6 => six(1, 1),
            7..=12 => six(7, 2),
            13 => (2, 7),
            14..=19 => six(14, 3),
            20 | 21 => (4, f - 16),
            22 => (4, 7),
            23..=28 => six(23, 5),
            29 => (5, 7),
            30 => (6, 7),
            31 => (7, 7),
            32 | 33 => (8, f - 32),
            34 | 35 => (8, f - 30),
            36..=41 => six(36, 9),
            42..=47 => six(42, 10),
            48 | 49 => (11, f - 44),
            50 => (11, 7),
            51..=56 => six(51, 12),
            57 => (12, 7),
            58 | 59 => (13, f - 54),
            60 => (13, 7),
            61 | 62 => (14, f - 57),
            63 => (14, 7),
            _ => return None,
        };
        Fmt::from_gfx9(d, n)
    }

    /// Component `c` of the element `elem` as a load writes it: a dword (f32 or the integer)
    /// or, with `d16`, a half; components the format lacks are 0, or 1 for w.
    pub(super) fn load(&self, elem: u128, c: usize, d16: bool) -> u32 {
        let Some(&b) = self.bits.get(c) else {
            return match (c == 3, self.float_like(), d16) {
                (false, _, _) => 0,
                (true, false, _) => 1,
                (true, true, false) => 0x3f80_0000,
                (true, true, true) => 0x3c00,
            };
        };
        let off: u32 = self.bits[..c].iter().sum();
        let mask = if b == 32 { u32::MAX } else { (1u32 << b) - 1 };
        // CAST: the component's bits.
        let r = ((elem >> off) as u32) & mask;
        let x: f32 = match self.num {
            Num::Uint => return if d16 { r & 0xffff } else { r },
            Num::Sint => return if d16 { r & 0xffff } else { sext(r, b) as u32 },
            // CAST: the normalizations the format tables give.
            Num::Unorm => (f64::from(r) / f64::from(mask)) as f32,
            Num::Snorm => (f64::from(sext(r, b)) / f64::from(mask >> 1)).max(-1.0) as f32,
            Num::Uscaled => r as f32,
            Num::Sscaled => sext(r, b) as f32,
            Num::Float => match b {
                32 => f32v(r),
                16 => f16_to_f32(r),
                _ => ufloat_to_f32(r, b - 5),
            },
        };
        if d16 {
            f32_to_f16(x, false)
        } else {
            x.to_bits()
        }
    }

    fn float_like(&self) -> bool {
        !matches!(self.num, Num::Uint | Num::Sint)
    }
}

/// An unsigned small float (5-bit exponent, bias 15, `m` mantissa bits): the 11- and 10-bit
/// components of 10_11_11 and 11_11_10.
fn ufloat_to_f32(r: u32, m: u32) -> f32 {
    // The f16 with the same exponent and the mantissa widened: exact.
    f16_to_f32(r << (10 - m))
}

fn f32_to_ufloat(f: f32, m: u32) -> u32 {
    if f.is_nan() {
        return (0x1f << m) | 1;
    }
    if f <= 0.0 {
        return 0;
    }
    let h = f32_to_f16(f, false) & 0x7fff;
    if h >= 0x7c00 {
        return 0x1f << m;
    }
    // Round the f16's mantissa to `m` bits, to nearest even.
    let s = 10 - m;
    (h + (1 << (s - 1)) - 1 + ((h >> s) & 1)) >> s
}

fn sext(r: u32, b: u32) -> i32 {
    // CAST: the component's sign bit moved to bit 31 and back.
    ((r << (32 - b)) as i32) >> (32 - b)
}

/// Round-to-nearest-even of a finite f32 into `lo..=hi`.
fn round_clamp(f: f32, lo: f64, hi: f64) -> i64 {
    if f.is_nan() {
        return 0;
    }
    // CAST: clamped into a 32-bit range first.
    f64::from(f).clamp(lo, hi).round_ties_even() as i64
}

impl Exec<'_, '_> {
    /// The format a typed access uses: MTBUF's own field (`opsel` bit 7), else the V#'s word 3.
    /// `None`: BUF_FMT_INVALID or a reserved code, which the hardware treats as an
    /// out-of-range access (the ISA guides' buffer range checking: loads return 0, stores
    /// write nothing).
    pub(super) fn buf_fmt(&self, i: &Inst, word3: u32) -> Option<Fmt> {
        let gfx9 = self.l.isa == Isa::Gfx9;
        if i.opsel & 0x80 != 0 {
            let f = u32::from(i.opsel & 0x7f);
            if gfx9 {
                Fmt::from_gfx9(f & 15, f >> 4)
            } else {
                Fmt::from_unified(f)
            }
        } else {
            match self.l.isa {
                Isa::Gfx9 => Fmt::from_gfx9((word3 >> 15) & 15, (word3 >> 12) & 7),
                Isa::Gfx11 => Fmt::from_unified((word3 >> 12) & 0x7f),
                Isa::Gfx12 => Fmt::from_unified((word3 >> 12) & 0x3f),
            }
        }
    }

    /// A typed access with an invalid format: loads write 0 to every component register,
    /// stores do nothing.
    pub(super) fn format_invalid(&mut self, i: &Inst) -> Result<(), IsaError> {
        if i.op != Op::MLoadFormat {
            return Ok(());
        }
        let n = self.w.lanes;
        let regs = usize::from(crate::isa::decode::format_regs(i.omod));
        let base = self.vreg(i.dst, regs)?;
        let hi = i.omod & 8 != 0;
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            for r in 0..regs {
                let w = self
                    .w
                    .v
                    .get_mut(base + r * n + l)
                    .ok_or_else(|| self.at.msg("VGPR out of range"))?;
                *w = if hi { *w & 0xffff } else { 0 };
            }
        }
        Ok(())
    }

    /// The typed access at each active lane's address (`addr`, computed by the MUBUF path).
    pub(super) fn format_access(
        &mut self,
        i: &Inst,
        addr: &[u64; MAX_LANES],
        f: Fmt,
        word3: u32,
    ) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let count = usize::from(i.omod & 3) + 1;
        let (d16, hi) = (i.omod & 4 != 0, i.omod & 8 != 0);
        let regs = usize::from(crate::isa::decode::format_regs(i.omod));
        let bytes = f.bytes();
        let load = i.op == Op::MLoadFormat;
        let base = if load {
            self.vreg(i.dst, regs)?
        } else {
            self.vreg(i.src[1], regs)?
        };
        if self.w.v.len() < base + regs * n {
            return Err(self.range_err());
        }
        let mut offs = [0u32; 4];
        for k in 1..f.bits.len() {
            offs[k] = offs[k - 1] + f.bits[k - 1];
        }
        let mask = |b: u32| if b == 32 { u32::MAX } else { (1u32 << b) - 1 };
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let mut buf = [0u8; 16];
            self.mem
                .read(addr[l], &mut buf[..bytes], Access::Read)
                .map_err(IsaError::Vm)?;
            let elem = u128::from_le_bytes(buf);
            // Each 16-bit half (d16) or dword of the lane's data, by component.
            let slot = |c: usize| -> (usize, u32) {
                if d16 {
                    (c / 2, 16 * (c % 2 + usize::from(hi)) as u32)
                } else {
                    (c, 0)
                }
            };
            if load {
                let comp = |c: usize| f.load(elem, c, d16);
                // DST_SEL (word 3 bits 0..12): 0 and 1 constants, 4..7 components x..w.
                let vals: Vec<u32> = (0..4)
                    .map(|c| match (word3 >> (3 * c)) & 7 {
                        0 => 0,
                        1 => match (f.float_like(), d16) {
                            (false, _) => 1,
                            (true, false) => 0x3f80_0000,
                            (true, true) => 0x3c00,
                        },
                        s @ 4..=7 => comp(s as usize - 4),
                        _ => 0,
                    })
                    .collect();
                for (c, &v) in vals.iter().enumerate().take(count) {
                    let (r, sh) = slot(c);
                    let w = &mut self.w.v[base + r * n + l];
                    *w = if d16 {
                        (*w & !(0xffff << sh)) | ((v & 0xffff) << sh)
                    } else {
                        v
                    };
                }
            } else {
                let mut e = elem;
                for (c, (&b, &off)) in f.bits.iter().zip(&offs).enumerate().take(count) {
                    let (r, sh) = slot(c);
                    let w = self.w.v[base + r * n + l];
                    let (raw, fv) = if d16 {
                        let h = (w >> sh) & 0xffff;
                        // CAST: the half's integer, sign-extended for SINT.
                        (
                            if f.num == Num::Sint {
                                sext(h, 16) as u32
                            } else {
                                h
                            },
                            f16_to_f32(h),
                        )
                    } else {
                        (w, f32v(w))
                    };
                    let full = 1u32.checked_shl(b).map_or(u32::MAX, |v| v - 1);
                    let half = f64::from(full >> 1);
                    // CAST: values clamped into the component's range.
                    let out = match f.num {
                        Num::Uint | Num::Sint => raw,
                        Num::Unorm => round_clamp(fv * full as f32, 0.0, f64::from(full)) as u32,
                        Num::Snorm => round_clamp(fv * half as f32, -half, half) as u32,
                        Num::Uscaled => round_clamp(fv, 0.0, f64::from(full)) as u32,
                        Num::Sscaled => round_clamp(fv, -half - 1.0, half) as u32,
                        Num::Float => match b {
                            32 => fv.to_bits(),
                            16 => f32_to_f16(fv, false),
                            _ => f32_to_ufloat(fv, b - 5),
                        },
                    } & mask(b);
                    e = (e & !(u128::from(mask(b)) << off)) | (u128::from(out) << off);
                }
                self.mem
                    .write(addr[l], &e.to_le_bytes()[..bytes])
                    .map_err(IsaError::Vm)?;
            }
        }
        Ok(())
    }
}
