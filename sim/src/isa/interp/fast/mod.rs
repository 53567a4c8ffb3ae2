//! Pre-resolved forms of the hottest vector instructions: when an instruction enters the
//! dispatch's decode cache, [`classify`] checks whether it is one of a few plain 32-bit
//! integer or f32 operations without modifiers (no neg/abs/op_sel/SDWA/DPP, no clamp or
//! omod) whose operands are VGPRs in the RSRC1 budget, SGPRs or constants, or a GLOBAL or
//! SCRATCH dword load or store, and resolves its operands once. Executing it ([`Exec::fast`])
//! then skips the general path's dispatch cascade and operand decoding, for a wave whose
//! every lane is live (and, for memory, whose global lanes are one contiguous block or a
//! gather/scatter of per-lane addresses that does not fault, or whose scratch lanes share
//! one offset); anything else (partial EXEC, per-lane scratch offsets, a faulting gather,
//! gfx9's VSKIP or index mode) takes the general path, which gives the same results: each
//! operation here is the general path's own expression and checks (`valu.rs`,
//! `operands.rs`, `memory.rs`; the f32 FMA is one shared function, `num::fma32`), faults
//! included.

mod mem;
mod salu;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_mem;
mod valu;

use super::*;
use mem::*;
use salu::*;
use valu::*;

/// A source operand resolved at decode time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FSrc {
    /// VGPR row `r`.
    V(u16),
    /// SGPR (or VCC, M0, EXEC half...) at operand code `k`, read at execution.
    S(u8),
    /// The same value in every lane (inline constant or literal).
    C(u32),
}

/// One pre-resolved instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fast {
    /// A vector ALU operation.
    Alu(Alu),
    /// A whole-wave vector memory access.
    Mem(Mem),
    /// A whole-wave LDS dword load or store.
    Lds(Lds),
    /// A VOPD dual issue of two halves.
    Dual([Half; 2]),
    /// A 64-bit shift (`v_lshlrev_b64`, `v_lshrrev_b64`, `v_ashrrev_i64`).
    Shift64(Shift64),
    /// A 32-bit integer compare into a lane mask (VOPC, or its VOP3 form).
    Cmp(Cmp),
    /// A scalar ALU operation or branch ([`Salu`]).
    Salu(Salu),
    /// A scalar memory dword load through the scalar cache ([`SLoad`]).
    SLoad(SLoad),
}

/// The pre-resolved form of `i`, when it has one (see the module documentation).
pub(crate) fn classify(l: &Launch, i: &Inst) -> Option<Fast> {
    if matches!(
        i.enc,
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp
    ) {
        return classify_salu(l, i).map(Fast::Salu);
    }
    if i.enc == Enc::Smem {
        return classify_sload(l, i).map(Fast::SLoad);
    }
    if let Some(s) = classify_shift64(l, i) {
        return Some(Fast::Shift64(s));
    }
    if let Some(c) = classify_cmp(l, i) {
        return Some(Fast::Cmp(c));
    }
    if i.enc == Enc::Flat {
        return classify_mem(l, i).map(Fast::Mem);
    }
    if i.enc == Enc::Ds {
        return classify_lds(l, i).map(Fast::Lds);
    }
    if i.enc == Enc::Vopd {
        return classify_dual(l, i).map(Fast::Dual);
    }
    classify_alu(l, i).map(Fast::Alu)
}

/// A 32-bit source operand `code` of `i` as the general path reads it (`s32`, `lanes32`
/// without modifiers): the null register as 0, an SGPR (or VCC, M0, EXEC half...) read at
/// execution, a literal or integer/f32 inline constant, or a VGPR in the RSRC1 budget.
pub(super) fn src32(l: &Launch, i: &Inst, code: u16) -> Option<FSrc> {
    let null = codes(l.isa).null;
    Some(match code {
        _ if code == null => FSrc::C(0),
        // CAST: below 128.
        0..=127 => FSrc::S(code as u8),
        LIT => FSrc::C(i.lit),
        // Integer and f32 inline constants: the 32-bit view the general path reads.
        // CAST: the low 32 bits.
        128..=208 | 240..=248 => FSrc::C(inline_const(code, Width::B32)? as u32),
        _ => {
            let r = code.checked_sub(VGPR)?;
            FSrc::V((code < AGPR && u32::from(r) < l.vgprs).then_some(r)?)
        }
    })
}

/// Whether `i` has no modifier of any kind (the fast forms' precondition).
pub(super) fn plain(i: &Inst) -> bool {
    i.mods == 0
        && i.opsel == 0
        && !i.clamp
        && i.omod == 0
        && !i.cmpx
        && i.sdwa.is_none()
        && i.dpp.is_none()
        && i.dual.is_none()
}

/// A source's lanes into `out` (a wave's `N` lanes).
#[inline(always)]
pub(super) fn load<const N: usize>(w: &Wave, s: FSrc, out: &mut [u32; N]) -> Option<()> {
    match s {
        FSrc::V(r) => {
            let r = usize::from(r);
            let row = w.v.get(r * N..(r + 1) * N)?;
            out.copy_from_slice(row);
        }
        FSrc::S(k) => out.fill(*w.s.get(usize::from(k))?),
        FSrc::C(c) => out.fill(c),
    }
    Some(())
}

/// A source's lanes (a wave's `N` lanes), by value.
#[inline(always)]
pub(super) fn get<const N: usize>(w: &Wave, s: FSrc) -> Option<[u32; N]> {
    Some(match s {
        FSrc::V(r) => {
            let r = usize::from(r);
            w.v.get(r * N..(r + 1) * N)?.try_into().ok()?
        }
        FSrc::S(k) => [*w.s.get(usize::from(k))?; N],
        FSrc::C(c) => [c; N],
    })
}

/// `f` over the lanes of `a` and `b`.
#[inline(always)]
pub(super) fn zip2<const N: usize>(
    a: &[u32; N],
    b: &[u32; N],
    f: impl Fn(u32, u32) -> u32,
) -> [u32; N] {
    // A copy, then a straight loop over it (`array::from_fn` goes through a drop guard that
    // keeps the loop from vectorising).
    let mut r = *a;
    for (r, b) in r.iter_mut().zip(b) {
        *r = f(*r, *b);
    }
    r
}

/// `f` over the lanes of `a`.
#[inline(always)]
pub(super) fn each<const N: usize>(mut a: [u32; N], f: impl Fn(u32) -> u32) -> [u32; N] {
    for x in &mut a {
        *x = f(*x);
    }
    a
}

/// `f` over the lanes of `a`, `b` and `c`.
#[inline(always)]
pub(super) fn zip3<const N: usize>(
    a: &[u32; N],
    b: &[u32; N],
    c: &[u32; N],
    f: impl Fn(u32, u32, u32) -> u32,
) -> [u32; N] {
    let mut r = *a;
    for ((r, b), c) in r.iter_mut().zip(b).zip(c) {
        *r = f(*r, *b, *c);
    }
    r
}

/// `f` over the lanes of `a` and `b` into `r`.
#[inline(always)]
pub(super) fn map2<const N: usize>(
    r: &mut [u32; N],
    a: &[u32; N],
    b: &[u32; N],
    f: impl Fn(u32, u32) -> u32,
) {
    for ((r, a), b) in r.iter_mut().zip(a).zip(b) {
        *r = f(*a, *b);
    }
}

impl Exec<'_, '_> {
    /// Runs the pre-resolved `f`: `None` when the wave does not meet its preconditions (a
    /// lane inactive, or registers the wave does not have), and the general path must run.
    #[inline]
    pub(super) fn fast(&mut self, f: &Fast, next: u64) -> Option<Result<(), IsaError>> {
        // Scalar: EXEC does not matter.
        match f {
            Fast::Salu(s) => {
                self.fast_salu(s, next);
                return Some(Ok(()));
            }
            Fast::SLoad(m) => return Some(self.fast_sload(m)),
            _ => {}
        }
        if self.w.exec() != self.w.lane_mask() {
            return None;
        }
        match (self.w.lanes, f) {
            (32, Fast::Alu(a)) => self.fast_alu::<32>(a),
            (64, Fast::Alu(a)) => self.fast_alu::<64>(a),
            (32, Fast::Mem(m)) => self.fast_mem::<32>(m),
            (64, Fast::Mem(m)) => self.fast_mem::<64>(m),
            (32, Fast::Lds(d)) => self.fast_lds::<32>(d),
            (64, Fast::Lds(d)) => self.fast_lds::<64>(d),
            (32, Fast::Dual(h)) => self.fast_dual::<32>(h),
            (64, Fast::Dual(h)) => self.fast_dual::<64>(h),
            (32, Fast::Shift64(h)) => self.fast_shift64::<32>(h),
            (64, Fast::Shift64(h)) => self.fast_shift64::<64>(h),
            (32, Fast::Cmp(c)) => self.fast_cmp::<32>(c),
            (64, Fast::Cmp(c)) => self.fast_cmp::<64>(c),
            _ => None,
        }
    }
}
