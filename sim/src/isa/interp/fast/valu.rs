//! The fast path's vector ALU forms: plain 32-bit integer and f32 operations, 64-bit
//! shifts, 32-bit integer compares and VOPD dual issues (see the parent module).

use super::*;

/// The operations the fast path runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FOp {
    Mov,
    Add,
    Sub,
    Subrev,
    Lshlrev,
    Lshrrev,
    Ashrrev,
    And,
    Or,
    Xor,
    MulLo,
    Add3,
    LshlOr,
    LshlAdd,
    AddLshl,
    AndOr,
    Or3,
    Xor3,
    /// Carry-out add (`v_add_co_u32`): the carry mask to `sdst`.
    AddCo,
    /// Carry-in-and-out add (`v_add_co_ci_u32`): carry in from the mask in src2.
    AddCoCi,
    AddF32,
    SubF32,
    SubrevF32,
    MulF32,
    /// Fused multiply-add (`v_fma_f32`, `v_fmac_f32` with src2 = dst).
    FmaF32,
}

/// A pre-resolved vector ALU operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Alu {
    pub(super) op: FOp,
    /// Destination VGPR row.
    pub(super) dst: u16,
    /// Carry-out (or mask) destination code (carry ops only).
    pub(super) sdst: u16,
    /// Carry-in mask code (`AddCoCi`).
    pub(super) cin: u16,
    pub(super) src: [FSrc; 3],
}

pub(super) fn classify_alu(l: &Launch, i: &Inst) -> Option<Alu> {
    use Op::*;
    if !matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vop3 | Enc::Vop3sd)
        || i.mods != 0
        || i.opsel != 0
        || i.clamp
        || i.omod != 0
        || i.cmpx
        || i.sdwa.is_some()
        || i.dpp.is_some()
        || i.dual.is_some()
    {
        return None;
    }
    let (op, n) = match i.op {
        VMovB32 => (FOp::Mov, 1),
        VAddNcU32 => (FOp::Add, 2),
        VSubNcU32 => (FOp::Sub, 2),
        VSubrevNcU32 => (FOp::Subrev, 2),
        VLshlrevB32 => (FOp::Lshlrev, 2),
        VLshrrevB32 => (FOp::Lshrrev, 2),
        VAshrrevI32 => (FOp::Ashrrev, 2),
        VAndB32 => (FOp::And, 2),
        VOrB32 => (FOp::Or, 2),
        VXorB32 => (FOp::Xor, 2),
        VMulLoU32 => (FOp::MulLo, 2),
        VAdd3U32 => (FOp::Add3, 3),
        VLshlOrB32 => (FOp::LshlOr, 3),
        VLshlAddU32 => (FOp::LshlAdd, 3),
        VAddLshlU32 => (FOp::AddLshl, 3),
        VAndOrB32 => (FOp::AndOr, 3),
        VOr3B32 => (FOp::Or3, 3),
        VXor3B32 => (FOp::Xor3, 3),
        VAddCoU32 => (FOp::AddCo, 2),
        VAddCoCiU32 => (FOp::AddCoCi, 2),
        VAddF32 => (FOp::AddF32, 2),
        VSubF32 => (FOp::SubF32, 2),
        VSubrevF32 => (FOp::SubrevF32, 2),
        VMulF32 => (FOp::MulF32, 2),
        VFmaF32 | VFmacF32 => (FOp::FmaF32, 3),
        _ => return None,
    };
    let row = |code: u16| -> Option<u16> {
        let r = code.checked_sub(VGPR)?;
        (code < AGPR && u32::from(r) < l.vgprs).then_some(r)
    };
    let src = |code: u16| src32(l, i, code);
    let dst = row(i.dst)?;
    let mut s = [FSrc::C(0); 3];
    // v_fmac_f32's third source is its destination (below): its encoding has none.
    let n = if i.op == VFmacF32 { 2 } else { n };
    for (k, d) in s.iter_mut().enumerate().take(n) {
        *d = src(*i.src.get(k)?)?;
    }
    if i.op == VFmacF32 {
        // D = S0 * S1 + D (the general path reads dst as src2).
        s[2] = FSrc::V(dst);
    }
    let (sdst, cin) = match op {
        FOp::AddCo => (i.sdst, NONE),
        // Without a carry-in operand the general path adds none: leave that to it.
        FOp::AddCoCi if i.src[2] != NONE && i.src[2] != LIT => (i.sdst, i.src[2]),
        FOp::AddCoCi => return None,
        _ => (NONE, NONE),
    };
    Some(Alu {
        op,
        dst,
        sdst,
        cin,
        src: s,
    })
}
/// A pre-resolved 64-bit shift: `D.u64 = S1.u64 shifted by S0[5:0]` (`valu.rs`,
/// `vshift64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shift64 {
    /// 0: left, 1: logical right, 2: arithmetic right.
    pub(super) kind: u8,
    /// The destination pair's low VGPR row.
    pub(super) dst: u16,
    /// The shift count.
    pub(super) count: FSrc,
    /// The shifted pair's low VGPR row.
    pub(super) src: u16,
}

/// The pre-resolved form of a 64-bit shift `i` whose shifted operand is a VGPR pair.
pub(super) fn classify_shift64(l: &Launch, i: &Inst) -> Option<Shift64> {
    use Op::*;
    let kind = match i.op {
        VLshlrevB64 => 0,
        VLshrrevB64 => 1,
        VAshrrevI64 => 2,
        _ => return None,
    };
    if !matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vop3) || !plain(i) {
        return None;
    }
    // Pairs inside the RSRC1 budget (`vreg(code, 2)`); VGPRs only.
    let pair = |code: u16| -> Option<u16> {
        let r = code.checked_sub(VGPR)?;
        (code < AGPR && u32::from(r) + 2 <= l.vgprs).then_some(r)
    };
    Some(Shift64 {
        kind,
        dst: pair(i.dst)?,
        count: src32(l, i, i.src[0])?,
        src: pair(i.src[1])?,
    })
}

/// A pre-resolved 32-bit integer compare: the lanes' `S0 <cond> S1` to the mask `sdst`
/// (`operands.rs`, `vcmp`, without CMPX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cmp {
    pub(super) signed: bool,
    /// The condition code (`Inst::sub`: f lt eq le gt ne ge t).
    pub(super) cond: u8,
    /// The mask's destination code.
    pub(super) sdst: u16,
    pub(super) src: [FSrc; 2],
}

/// The pre-resolved form of a VOPC `v_cmp_*_{i,u}32` `i` without modifiers or CMPX.
pub(super) fn classify_cmp(l: &Launch, i: &Inst) -> Option<Cmp> {
    let signed = match i.op {
        Op::VCmpI32 => true,
        Op::VCmpU32 => false,
        _ => return None,
    };
    if !matches!(i.enc, Enc::Vopc | Enc::Vop3 | Enc::Vop3sd) || !plain(i) {
        return None;
    }
    // A mask destination the general path writes as a plain SGPR (pair): not null, not
    // read-only, not past the scalar file.
    let wide = if l.wave64 { 1 } else { 0 };
    if i.sdst >= 128 - wide || (108 - wide..=123).contains(&i.sdst) || i.sdst == codes(l.isa).null {
        return None;
    }
    Some(Cmp {
        signed,
        cond: i.sub,
        sdst: i.sdst,
        src: [src32(l, i, i.src[0])?, src32(l, i, i.src[1])?],
    })
}

impl Exec<'_, '_> {
    pub(super) fn fast_alu<const N: usize>(&mut self, f: &Alu) -> Option<Result<(), IsaError>> {
        let w = &*self.w;
        // Sources are read as each operation needs them (a VGPR row by value, a scalar or
        // constant splat), so nothing is zeroed first; a count that is the same in every
        // lane shifts every lane at once.
        let src = |k: usize| get::<N>(w, *f.src.get(k)?);
        let count = |k: usize| match f.src.get(k) {
            Some(FSrc::C(c)) => Some(c & 31),
            _ => None,
        };
        let mut carry = 0u64;
        let denorm = w.denorm32();
        let r: [u32; N] = match f.op {
            FOp::Mov => src(0)?,
            FOp::Add => zip2(&src(0)?, &src(1)?, u32::wrapping_add),
            FOp::Sub => zip2(&src(0)?, &src(1)?, u32::wrapping_sub),
            FOp::Subrev => zip2(&src(0)?, &src(1)?, |x, y| y.wrapping_sub(x)),
            FOp::Lshlrev => match count(0) {
                Some(k) => each(src(1)?, |x| x << k),
                None => zip2(&src(0)?, &src(1)?, |s, x| x << (s & 31)),
            },
            FOp::Lshrrev => match count(0) {
                Some(k) => each(src(1)?, |x| x >> k),
                None => zip2(&src(0)?, &src(1)?, |s, x| x >> (s & 31)),
            },
            // CAST: two's complement views.
            FOp::Ashrrev => match count(0) {
                Some(k) => each(src(1)?, |x| ((x as i32) >> k) as u32),
                None => zip2(&src(0)?, &src(1)?, |s, x| ((x as i32) >> (s & 31)) as u32),
            },
            FOp::And => zip2(&src(0)?, &src(1)?, |x, y| x & y),
            FOp::Or => zip2(&src(0)?, &src(1)?, |x, y| x | y),
            FOp::Xor => zip2(&src(0)?, &src(1)?, |x, y| x ^ y),
            FOp::MulLo => zip2(&src(0)?, &src(1)?, u32::wrapping_mul),
            FOp::Add3 => zip3(&src(0)?, &src(1)?, &src(2)?, |x, y, z| {
                x.wrapping_add(y).wrapping_add(z)
            }),
            FOp::LshlOr => match count(1) {
                Some(k) => zip2(&src(0)?, &src(2)?, |x, z| (x << k) | z),
                None => zip3(&src(0)?, &src(1)?, &src(2)?, |x, s, z| (x << (s & 31)) | z),
            },
            FOp::LshlAdd => match count(1) {
                Some(k) => zip2(&src(0)?, &src(2)?, |x, z| (x << k).wrapping_add(z)),
                None => zip3(&src(0)?, &src(1)?, &src(2)?, |x, s, z| {
                    (x << (s & 31)).wrapping_add(z)
                }),
            },
            FOp::AddLshl => zip3(&src(0)?, &src(1)?, &src(2)?, |x, y, s| {
                x.wrapping_add(y) << (s & 31)
            }),
            FOp::AndOr => zip3(&src(0)?, &src(1)?, &src(2)?, |x, y, z| (x & y) | z),
            FOp::Or3 => zip3(&src(0)?, &src(1)?, &src(2)?, |x, y, z| x | y | z),
            FOp::Xor3 => zip3(&src(0)?, &src(1)?, &src(2)?, |x, y, z| x ^ y ^ z),
            FOp::AddCo | FOp::AddCoCi => {
                let (a, b) = (src(0)?, src(1)?);
                let cin = if f.op == FOp::AddCoCi {
                    match self.read_mask(f.cin, 0) {
                        Ok(m) => m,
                        Err(e) => return Some(Err(e)),
                    }
                } else {
                    0
                };
                // Byte lanes, as the general path's vcarry: straight loops that vectorise.
                let cin = if cin == 0 {
                    [0; MAX_LANES]
                } else {
                    mask::spread(cin)
                };
                let mut co = [0u8; MAX_LANES];
                let mut r = [0u32; N];
                for ((((r, a), b), ci), co) in r.iter_mut().zip(&a).zip(&b).zip(&cin).zip(&mut co) {
                    let t = a.wrapping_add(*b);
                    *r = t.wrapping_add(u32::from(*ci));
                    *co = u8::from(t < *a) | u8::from(*r < t);
                }
                carry = mask::pack(&co);
                r
            }
            FOp::AddF32 | FOp::SubF32 | FOp::SubrevF32 | FOp::MulF32 | FOp::FmaF32 => {
                // The general path's f32 handling without modifiers: denormal inputs flush
                // unless MODE keeps them, signaling NaNs come out quiet, then denormal
                // results flush (operands.rs: in_f32, f32_mode_out).
                let (mut a, mut b) = (src(0)?, src(1)?);
                let mut c = if f.op == FOp::FmaF32 { src(2)? } else { [0; N] };
                if !denorm {
                    for x in a.iter_mut().chain(&mut b).chain(&mut c) {
                        *x = flush32(*x);
                    }
                }
                let mut r = match f.op {
                    FOp::AddF32 => zip2(&a, &b, |x, y| (f32v(x) + f32v(y)).to_bits()),
                    FOp::SubF32 => zip2(&a, &b, |x, y| (f32v(x) - f32v(y)).to_bits()),
                    FOp::SubrevF32 => zip2(&a, &b, |x, y| (f32v(y) - f32v(x)).to_bits()),
                    FOp::MulF32 => zip2(&a, &b, |x, y| (f32v(x) * f32v(y)).to_bits()),
                    _ => {
                        let mut r = [0; N];
                        fma32_lanes(&mut r, &a, &b, &c);
                        r
                    }
                };
                for x in &mut r {
                    if *x & 0x7fff_ffff > 0x7f80_0000 {
                        *x |= 0x0040_0000;
                    }
                    if !denorm {
                        *x = flush32(*x);
                    }
                }
                r
            }
        };
        let d = usize::from(f.dst);
        let row = self.w.v.get_mut(d * N..(d + 1) * N)?;
        row.copy_from_slice(&r);
        if matches!(f.op, FOp::AddCo | FOp::AddCoCi) {
            return Some(self.write_mask(f.sdst, carry));
        }
        Some(Ok(()))
    }
}

impl Exec<'_, '_> {
    /// Runs the pre-resolved 64-bit shift `f` for a wave whose every lane is live.
    pub(super) fn fast_shift64<const N: usize>(
        &mut self,
        f: &Shift64,
    ) -> Option<Result<(), IsaError>> {
        let mut s = [0u32; N];
        load(self.w, f.count, &mut s)?;
        let a = usize::from(f.src);
        let lo: &[u32; N] = self.w.v.get(a * N..(a + 1) * N)?.try_into().ok()?;
        let hi: &[u32; N] = self.w.v.get((a + 1) * N..(a + 2) * N)?.try_into().ok()?;
        let mut rlo = [0u32; N];
        let mut rhi = [0u32; N];
        let mut each = |f: fn(u64, u32) -> u64| {
            for l in 0..N {
                let r = f(u64::from(lo[l]) | (u64::from(hi[l]) << 32), s[l] & 63);
                // CAST: halves of a u64.
                rlo[l] = r as u32;
                rhi[l] = (r >> 32) as u32;
            }
        };
        // One loop per kind (the kind is the instruction's, not the lane's).
        match f.kind {
            0 => each(|x, k| x << k),
            1 => each(|x, k| x >> k),
            // CAST: two's complement views.
            _ => each(|x, k| ((x as i64) >> k) as u64),
        }
        let d = usize::from(f.dst);
        self.w.v.get_mut(d * N..(d + 1) * N)?.copy_from_slice(&rlo);
        self.w
            .v
            .get_mut((d + 1) * N..(d + 2) * N)?
            .copy_from_slice(&rhi);
        Some(Ok(()))
    }

    /// Runs the pre-resolved compare `c` for a wave whose every lane is live.
    pub(super) fn fast_cmp<const N: usize>(&mut self, c: &Cmp) -> Option<Result<(), IsaError>> {
        let mut a = [0u32; N];
        let mut b = [0u32; N];
        load(self.w, c.src[0], &mut a)?;
        load(self.w, c.src[1], &mut b)?;
        let m = if c.signed {
            // CAST: two's complement views.
            mask::icmp(c.cond, N, &a.map(|x| x as i32), &b.map(|x| x as i32))
        } else {
            mask::icmp(c.cond, N, &a, &b)
        };
        Some(self.write_mask(c.sdst, m & self.w.exec()))
    }
}

/// One half of a VOPD dual issue, resolved at decode time: the general path's `dual_half`
/// (`valu.rs`) for its operations without a literal constant: a VOPD half's f32 result
/// flushes a denormal unless MODE keeps them, and reads its sources as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Half {
    pub(super) op: Op,
    /// Destination VGPR row.
    pub(super) dst: u16,
    pub(super) src: [FSrc; 2],
}

/// The pre-resolved halves of a VOPD instruction `i`, when both have one.
pub(super) fn classify_dual(l: &Launch, i: &Inst) -> Option<[Half; 2]> {
    use Op::*;
    let [x, y] = i.dual?;
    let null = codes(l.isa).null;
    let row = |code: u16| -> Option<u16> {
        let r = code.checked_sub(VGPR)?;
        (code < AGPR && u32::from(r) < l.vgprs).then_some(r)
    };
    let half = |h: DualHalf| -> Option<Half> {
        if !matches!(
            h.op,
            VMovB32
                | VAddNcU32
                | VLshlrevB32
                | VAndB32
                | VCndmaskB32
                | VAddF32
                | VSubF32
                | VSubrevF32
                | VMulF32
                | VFmacF32
        ) {
            return None;
        }
        let src = |code: u16| -> Option<FSrc> {
            Some(match code {
                // An absent source reads as 0 (`dual_half` leaves its lanes zero).
                NONE => FSrc::C(0),
                _ if code == null => FSrc::C(0),
                // CAST: below 128.
                0..=127 => FSrc::S(code as u8),
                LIT => FSrc::C(i.lit),
                // CAST: the low 32 bits.
                128..=208 | 240..=248 => FSrc::C(inline_const(code, Width::B32)? as u32),
                _ => FSrc::V(row(code)?),
            })
        };
        Some(Half {
            op: h.op,
            dst: row(h.dst)?,
            src: [src(h.src[0])?, src(h.src[1])?],
        })
    };
    Some([half(x)?, half(y)?])
}

impl Exec<'_, '_> {
    /// One VOPD half's lanes into `r` (nothing written).
    pub(super) fn fast_half<const N: usize>(&self, h: &Half, r: &mut [u32; N]) -> Option<()> {
        let a = get::<N>(self.w, h.src[0])?;
        let b = get::<N>(self.w, h.src[1])?;
        let f = |x: u32| f32v(x);
        match h.op {
            Op::VMovB32 => *r = a,
            Op::VAddNcU32 => map2(r, &a, &b, u32::wrapping_add),
            Op::VLshlrevB32 => map2(r, &a, &b, |s, x| x << (s & 31)),
            Op::VAndB32 => map2(r, &a, &b, |x, y| x & y),
            Op::VCndmaskB32 => {
                let m = mask::spread(self.w.vcc());
                for (((r, a), b), m) in r.iter_mut().zip(&a).zip(&b).zip(&m) {
                    *r = if *m != 0 { *b } else { *a };
                }
            }
            Op::VAddF32 => map2(r, &a, &b, |x, y| (f(x) + f(y)).to_bits()),
            Op::VSubF32 => map2(r, &a, &b, |x, y| (f(x) - f(y)).to_bits()),
            Op::VSubrevF32 => map2(r, &a, &b, |x, y| (f(y) - f(x)).to_bits()),
            Op::VMulF32 => map2(r, &a, &b, |x, y| (f(x) * f(y)).to_bits()),
            Op::VFmacF32 => {
                let mut d = [0u32; N];
                load(self.w, FSrc::V(h.dst), &mut d)?;
                fma32_lanes(r, &a, &b, &d);
            }
            _ => return None,
        }
        if is_f32(h.op) && !self.w.denorm32() {
            for x in r.iter_mut() {
                *x = flush32(*x);
            }
        }
        Some(())
    }

    /// Runs a pre-resolved VOPD: both halves read their sources before either writes.
    pub(super) fn fast_dual<const N: usize>(
        &mut self,
        h: &[Half; 2],
    ) -> Option<Result<(), IsaError>> {
        let mut rx = [0u32; N];
        let mut ry = [0u32; N];
        self.fast_half(&h[0], &mut rx)?;
        self.fast_half(&h[1], &mut ry)?;
        for (d, r) in [(h[0].dst, &rx), (h[1].dst, &ry)] {
            let d = usize::from(d);
            self.w.v.get_mut(d * N..(d + 1) * N)?.copy_from_slice(r);
        }
        Some(Ok(()))
    }
}
