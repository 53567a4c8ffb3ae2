//! Pre-resolved forms of the hottest vector instructions: when an instruction enters the
//! dispatch's decode cache, [`classify`] checks whether it is one of a few plain 32-bit
//! integer or f32 operations without modifiers (no neg/abs/op_sel/SDWA/DPP, no clamp or
//! omod) whose operands are VGPRs in the RSRC1 budget, SGPRs or constants, or a GLOBAL or
//! SCRATCH dword load or store, and resolves its operands once. Executing it ([`Exec::fast`])
//! then skips the general path's dispatch cascade and operand decoding, for a wave whose
//! every lane is live (and, for memory, whose lanes access one contiguous block: consecutive
//! global addresses, or one scratch offset); anything else (partial EXEC, scattered
//! addresses, gfx9's VSKIP or index mode) takes the general path, which gives the same
//! results: each operation here is the general path's own expression and checks
//! (`valu.rs`, `operands.rs`, `memory.rs`), faults included.

use super::*;

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

/// A pre-resolved vector ALU operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Alu {
    op: FOp,
    /// Destination VGPR row.
    dst: u16,
    /// Carry-out (or mask) destination code (carry ops only).
    sdst: u16,
    /// Carry-in mask code (`AddCoCi`).
    cin: u16,
    src: [FSrc; 3],
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

fn classify_alu(l: &Launch, i: &Inst) -> Option<Alu> {
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

/// A 32-bit source operand `code` of `i` as the general path reads it (`s32`, `lanes32`
/// without modifiers): the null register as 0, an SGPR (or VCC, M0, EXEC half...) read at
/// execution, a literal or integer/f32 inline constant, or a VGPR in the RSRC1 budget.
fn src32(l: &Launch, i: &Inst, code: u16) -> Option<FSrc> {
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
fn plain(i: &Inst) -> bool {
    i.mods == 0
        && i.opsel == 0
        && !i.clamp
        && i.omod == 0
        && !i.cmpx
        && i.sdwa.is_none()
        && i.dpp.is_none()
        && i.dual.is_none()
}

/// A pre-resolved 64-bit shift: `D.u64 = S1.u64 shifted by S0[5:0]` (`valu.rs`,
/// `vshift64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shift64 {
    /// 0: left, 1: logical right, 2: arithmetic right.
    kind: u8,
    /// The destination pair's low VGPR row.
    dst: u16,
    /// The shift count.
    count: FSrc,
    /// The shifted pair's low VGPR row.
    src: u16,
}

/// The pre-resolved form of a 64-bit shift `i` whose shifted operand is a VGPR pair.
fn classify_shift64(l: &Launch, i: &Inst) -> Option<Shift64> {
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
    signed: bool,
    /// The condition code (`Inst::sub`: f lt eq le gt ne ge t).
    cond: u8,
    /// The mask's destination code.
    sdst: u16,
    src: [FSrc; 2],
}

/// The pre-resolved form of a VOPC `v_cmp_*_{i,u}32` `i` without modifiers or CMPX.
fn classify_cmp(l: &Launch, i: &Inst) -> Option<Cmp> {
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

/// The scalar operations the fast path runs (the general path's `scalar` expressions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SOp {
    /// `s_mov_b32` (no SCC).
    Mov,
    /// `s_add_u32` (SCC: carry out).
    Add,
    /// `s_sub_u32` (SCC: borrow).
    Sub,
    /// `s_mul_i32` (no SCC).
    Mul,
    /// `s_lshl_b32` (SCC: result nonzero).
    Lshl,
    /// `s_lshr_b32` (SCC: result nonzero).
    Lshr,
    /// `s_ashr_i32` (SCC: result nonzero).
    Ashr,
    /// `s_and_b32` (SCC: result nonzero).
    And,
    /// `s_or_b32` (SCC: result nonzero).
    Or,
    /// `s_xor_b32` (SCC: result nonzero).
    Xor,
    /// `s_cmp_*_u32` by condition code (SCC only).
    CmpU(u8),
    /// `s_cmp_*_i32` by condition code (SCC only).
    CmpI(u8),
    /// `s_and_saveexec_b32` (wave32 EXEC; SCC: new EXEC nonzero).
    AndSaveexec,
    /// A branch by [`Cond`] to `imm`.
    Branch(Cond),
    /// `s_endpgm`.
    Endpgm,
    /// `s_barrier` (the wave stops until the workgroup arrives).
    Barrier,
    /// No architectural effect (`s_sendmsg` of the VGPR deallocation message).
    Nop,
}

/// A scalar branch's condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cond {
    /// `s_branch`.
    Always,
    /// `s_cbranch_scc0`.
    Scc0,
    /// `s_cbranch_scc1`.
    Scc1,
    /// `s_cbranch_vccz`.
    Vccz,
    /// `s_cbranch_vccnz`.
    Vccnz,
    /// `s_cbranch_execz`.
    Execz,
    /// `s_cbranch_execnz`.
    Execnz,
}

/// A pre-resolved scalar instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Salu {
    op: SOp,
    /// The destination SGPR code (a plain writable one), for the ops that write one.
    dst: u8,
    src: [FSrc; 2],
    /// A branch's word offset.
    imm: i32,
}

/// A pre-resolved `s_load_b32..b512`: SGPRs `dst..dst + dwords` from the address in the
/// SGPR pair `base` plus `off` (`scalar.rs`, `smem`, without SOFFSET).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SLoad {
    base: u8,
    dst: u8,
    dwords: u8,
    off: i32,
}

/// The pre-resolved form of a scalar load `i` whose base is an SGPR pair, without SOFFSET,
/// into plain SGPRs.
fn classify_sload(l: &Launch, i: &Inst) -> Option<SLoad> {
    use Op::*;
    let dwords: u8 = match i.op {
        SLoadB32 => 1,
        SLoadB64 => 2,
        SLoadB96 => 3,
        SLoadB128 => 4,
        SLoadB256 => 8,
        SLoadB512 => 16,
        _ => return None,
    };
    // No SOFFSET (or the null register, which reads 0), not gfx9's scratch form; a base
    // pair inside the scalar file (not null); a destination range of plain SGPRs.
    let null = codes(l.isa).null;
    if (i.src[1] != NONE && i.src[1] != null)
        || i.sub & 0x40 != 0
        || i.src[0] >= 127
        || i.src[0] == null
        || usize::from(i.dst) + usize::from(dwords) > 106
    {
        return None;
    }
    Some(SLoad {
        // CAST: below 127 and 106.
        base: i.src[0] as u8,
        dst: i.dst as u8,
        dwords,
        off: i.imm,
    })
}

/// The pre-resolved form of a scalar instruction `i`, when it has one.
fn classify_salu(l: &Launch, i: &Inst) -> Option<Salu> {
    use Op::*;
    let null = codes(l.isa).null;
    let (op, n, writes) = match i.op {
        SMovB32 => (SOp::Mov, 1, true),
        SAddU32 => (SOp::Add, 2, true),
        SSubU32 => (SOp::Sub, 2, true),
        SMulI32 => (SOp::Mul, 2, true),
        SLshlB32 => (SOp::Lshl, 2, true),
        SLshrB32 => (SOp::Lshr, 2, true),
        SAshrI32 => (SOp::Ashr, 2, true),
        SAndB32 => (SOp::And, 2, true),
        SOrB32 => (SOp::Or, 2, true),
        SXorB32 => (SOp::Xor, 2, true),
        SCmpEqU32 | SCmpLgU32 | SCmpGtU32 | SCmpGeU32 | SCmpLtU32 | SCmpLeU32 => {
            let c = *[2u8, 5, 4, 6, 1, 3].get((i.op as usize).checked_sub(SCmpEqU32 as usize)?)?;
            (SOp::CmpU(c), 2, false)
        }
        SCmpEqI32 | SCmpLgI32 | SCmpGtI32 | SCmpGeI32 | SCmpLtI32 | SCmpLeI32 => {
            let c = *[2u8, 5, 4, 6, 1, 3].get((i.op as usize).checked_sub(SCmpEqI32 as usize)?)?;
            (SOp::CmpI(c), 2, false)
        }
        // Wave32's EXEC: wave64 has the B64 form.
        SAndSaveexecB32 if !l.wave64 => (SOp::AndSaveexec, 1, true),
        SBranch => (SOp::Branch(Cond::Always), 0, false),
        SCbranchScc0 => (SOp::Branch(Cond::Scc0), 0, false),
        SCbranchScc1 => (SOp::Branch(Cond::Scc1), 0, false),
        SCbranchVccz => (SOp::Branch(Cond::Vccz), 0, false),
        SCbranchVccnz => (SOp::Branch(Cond::Vccnz), 0, false),
        SCbranchExecz => (SOp::Branch(Cond::Execz), 0, false),
        SCbranchExecnz => (SOp::Branch(Cond::Execnz), 0, false),
        SEndpgm => (SOp::Endpgm, 0, false),
        SBarrier => (SOp::Barrier, 0, false),
        // The VGPR deallocation message (RDNA: id 3), the one `control` accepts.
        // CAST: simm16's bits.
        SSendmsg if l.isa != Isa::Gfx9 && i.imm as u32 & 0xff == 3 => (SOp::Nop, 0, false),
        _ => return None,
    };
    // A destination the general path's `swrite` stores as it is (not null, not read-only).
    let dst = if writes {
        if i.dst >= 128 || (108..=123).contains(&i.dst) || i.dst == null {
            return None;
        }
        // CAST: below 128.
        i.dst as u8
    } else {
        0
    };
    let mut src = [FSrc::C(0); 2];
    for (k, d) in src.iter_mut().enumerate().take(n) {
        *d = match src32(l, i, *i.src.get(k)?)? {
            FSrc::V(_) => return None,
            s => s,
        };
    }
    Some(Salu {
        op,
        dst,
        src,
        imm: i.imm,
    })
}

/// A source's lanes into `out` (a wave's `N` lanes).
#[inline(always)]
fn load<const N: usize>(w: &Wave, s: FSrc, out: &mut [u32; N]) -> Option<()> {
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
fn get<const N: usize>(w: &Wave, s: FSrc) -> Option<[u32; N]> {
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
fn zip2<const N: usize>(a: &[u32; N], b: &[u32; N], f: impl Fn(u32, u32) -> u32) -> [u32; N] {
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
fn each<const N: usize>(mut a: [u32; N], f: impl Fn(u32) -> u32) -> [u32; N] {
    for x in &mut a {
        *x = f(*x);
    }
    a
}

/// `f` over the lanes of `a`, `b` and `c`.
#[inline(always)]
fn zip3<const N: usize>(
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
fn map2<const N: usize>(r: &mut [u32; N], a: &[u32; N], b: &[u32; N], f: impl Fn(u32, u32) -> u32) {
    for ((r, a), b) in r.iter_mut().zip(a).zip(b) {
        *r = f(*a, *b);
    }
}

/// `f` over the lanes of `a`, `b` and `c` into `r`.
#[inline(always)]
fn map3<const N: usize>(
    r: &mut [u32; N],
    a: &[u32; N],
    b: &[u32; N],
    c: &[u32; N],
    f: impl Fn(u32, u32, u32) -> u32,
) {
    for (((r, a), b), c) in r.iter_mut().zip(a).zip(b).zip(c) {
        *r = f(*a, *b, *c);
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

    fn fast_alu<const N: usize>(&mut self, f: &Alu) -> Option<Result<(), IsaError>> {
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
                    _ => zip3(&a, &b, &c, |x, y, z| {
                        f32v(x).mul_add(f32v(y), f32v(z)).to_bits()
                    }),
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
    /// A scalar source's value ([`classify_salu`] resolves no VGPR; an SGPR code is below
    /// 128).
    #[inline(always)]
    fn sval(&self, s: FSrc) -> u32 {
        match s {
            // `& 127`: the code is below 128 (classify), so the index needs no check.
            FSrc::S(k) => self.w.s[usize::from(k & 127)],
            FSrc::C(c) => c,
            FSrc::V(_) => 0,
        }
    }

    /// Runs the pre-resolved scalar instruction `f` (the general path's `scalar`; nothing
    /// here can fault: `classify_salu` took only plain destinations and readable sources).
    #[inline]
    fn fast_salu(&mut self, f: &Salu, next: u64) {
        let (x, y) = (self.sval(f.src[0]), self.sval(f.src[1]));
        let d = usize::from(f.dst & 127);
        let (v, scc) = match f.op {
            SOp::Mov => (x, None),
            SOp::Add => {
                let (v, c) = x.overflowing_add(y);
                (v, Some(c))
            }
            SOp::Sub => (x.wrapping_sub(y), Some(y > x)),
            SOp::Mul => (x.wrapping_mul(y), None),
            SOp::Lshl => {
                let v = x << (y & 31);
                (v, Some(v != 0))
            }
            SOp::Lshr => {
                let v = x >> (y & 31);
                (v, Some(v != 0))
            }
            SOp::Ashr => {
                // CAST: two's complement views.
                let v = ((x as i32) >> (y & 31)) as u32;
                (v, Some(v != 0))
            }
            SOp::And => {
                let v = x & y;
                (v, Some(v != 0))
            }
            SOp::Or => {
                let v = x | y;
                (v, Some(v != 0))
            }
            SOp::Xor => {
                let v = x ^ y;
                (v, Some(v != 0))
            }
            SOp::CmpU(c) => {
                self.w.scc = icmp(c, x, y);
                return;
            }
            SOp::CmpI(c) => {
                // CAST: two's complement views.
                self.w.scc = icmp(c, x as i32, y as i32);
                return;
            }
            SOp::AndSaveexec => {
                // The old EXEC to the destination, then the new one to EXEC.
                let old = self.w.s[126];
                let new = x & old;
                self.w.s[d] = old;
                self.w.s[126] = new;
                self.w.scc = new != 0;
                return;
            }
            SOp::Branch(c) => {
                let cond = match c {
                    Cond::Always => true,
                    Cond::Scc0 => !self.w.scc,
                    Cond::Scc1 => self.w.scc,
                    Cond::Vccz => self.w.vcc() == 0,
                    Cond::Vccnz => self.w.vcc() != 0,
                    Cond::Execz => self.w.exec() == 0,
                    Cond::Execnz => self.w.exec() != 0,
                };
                self.branch(next, f.imm, cond);
                return;
            }
            SOp::Endpgm => {
                self.w.state = WaveState::Done;
                return;
            }
            SOp::Barrier => {
                self.w.state = WaveState::Barrier;
                return;
            }
            SOp::Nop => return,
        };
        self.w.s[d] = v;
        if let Some(c) = scc {
            self.w.scc = c;
        }
    }

    /// Runs the pre-resolved scalar load `m`: the general path's address and scalar cache
    /// read (same faults), then the dwords into the SGPRs.
    fn fast_sload(&mut self, m: &SLoad) -> Result<(), IsaError> {
        let b = usize::from(m.base);
        let (lo, hi) = match (self.w.s.get(b), self.w.s.get(b + 1)) {
            (Some(lo), Some(hi)) => (*lo, *hi),
            _ => return Err(self.err("scalar operand pair out of range")),
        };
        // CAST: sign-extended offset; dword accesses ignore the address's low two bits.
        let va = (u64::from(lo) | (u64::from(hi) << 32)).wrapping_add(m.off as i64 as u64) & !3;
        let n = 4 * usize::from(m.dwords);
        let mut buf = [0u8; 64];
        let bytes = buf.get_mut(..n).ok_or_else(|| self.range_err())?;
        self.kcache.read(self.mem, va, bytes)?;
        let d = usize::from(m.dst);
        let regs = self
            .w
            .s
            .get_mut(d..d + usize::from(m.dwords))
            .ok_or_else(|| self.at.msg("SGPR out of range"))?;
        for (r, c) in regs.iter_mut().zip(bytes.chunks_exact(4)) {
            *r = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    }

    /// Runs the pre-resolved 64-bit shift `f` for a wave whose every lane is live.
    fn fast_shift64<const N: usize>(&mut self, f: &Shift64) -> Option<Result<(), IsaError>> {
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
    fn fast_cmp<const N: usize>(&mut self, c: &Cmp) -> Option<Result<(), IsaError>> {
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

/// A FLAT-family dword load or store (`global_*_b32..b128`, `scratch_*_b32..b128`) resolved
/// at decode time: the fast forms of the general path's whole-wave accesses (`memory.rs`,
/// `vmem`): global lanes at consecutive addresses, or scratch lanes at one private offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mem {
    load: bool,
    scratch: bool,
    /// Dwords per lane (1..=4).
    dwords: u8,
    /// The data VGPR row (load destination, store source).
    data: u16,
    /// The address VGPR row (global: the 64-bit pair's low row, or the 32-bit offset with
    /// SADDR); `None`: scratch without a VGPR address.
    vaddr: Option<u16>,
    /// The SADDR operand code, [`NONE`] when off.
    saddr: u16,
    /// The instruction's signed offset.
    off: i32,
}

/// The pre-resolved form of a memory instruction `i`, when it has one.
fn classify_mem(l: &Launch, i: &Inst) -> Option<Mem> {
    use Op::*;
    if i.enc != Enc::Flat || i.flags & 0x80 != 0 || !matches!(i.sub, SEG_GLOBAL | SEG_SCRATCH) {
        return None;
    }
    let (load, dwords) = match i.op {
        MLoadB32 => (true, 1),
        MLoadB64 => (true, 2),
        MLoadB96 => (true, 3),
        MLoadB128 => (true, 4),
        MStoreB32 => (false, 1),
        MStoreB64 => (false, 2),
        MStoreB96 => (false, 3),
        MStoreB128 => (false, 4),
        _ => return None,
    };
    let scratch = i.sub == SEG_SCRATCH;
    let rows = |code: u16, n: u32| -> Option<u16> {
        let r = code.checked_sub(VGPR)?;
        (code < AGPR && u32::from(r) + n <= l.vgprs).then_some(r)
    };
    let data = rows(if load { i.dst } else { i.src[1] }, dwords)?;
    let vaddr = match (scratch, i.src[0]) {
        (true, NONE) => None,
        // Scratch with a VGPR offset: per-lane offsets, the general path's.
        (true, _) => return None,
        (false, a) => Some(rows(a, if i.src[2] == NONE { 2 } else { 1 })?),
    };
    // SADDR: an SGPR (pair) the general path reads, or off; anything else stays there.
    if i.src[2] != NONE && i.src[2] >= 127 {
        return None;
    }
    Some(Mem {
        load,
        scratch,
        dwords: dwords as u8,
        data,
        vaddr,
        saddr: i.src[2],
        off: i.imm,
    })
}

impl Exec<'_, '_> {
    /// Runs the pre-resolved memory access `m` for a wave whose every lane is live: `None`
    /// (nothing done) when its lanes do not form the whole-wave case, for the general path.
    fn fast_mem<const N: usize>(&mut self, m: &Mem) -> Option<Result<(), IsaError>> {
        let size = 4 * usize::from(m.dwords);
        let data = usize::from(m.data);
        // CAST: sign-extended offset.
        let off = m.off as i64 as u64;
        if m.scratch {
            // Every lane at one private offset: each dword is a contiguous row of the
            // swizzled wave slot (the general path's uniform-offset case, same checks).
            let mut base = off;
            if m.saddr != NONE {
                match self.s32(m.saddr, 0) {
                    Ok(s) => base = base.wrapping_add(u64::from(s)),
                    Err(e) => return Some(Err(e)),
                }
            }
            // Past the lane's private size a run that is not strict takes the general path
            // (the access is a finding there: `oor.rs`).
            let per_lane = self.l.scratch.wave_bytes / N as u64;
            if !self.w.strict && base.checked_add(size as u64).is_none_or(|e| e > per_lane) {
                return None;
            }
            return Some(self.scratch_rows::<N>(m, base, data));
        }
        let a = usize::from(m.vaddr?);
        let addr0 = if m.saddr != NONE {
            let base = match self.s64(m.saddr, 0) {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            let v: &[u32; N] = self.w.v.get(a * N..(a + 1) * N)?.try_into().ok()?;
            // Consecutive lanes: offset l is lane 0's plus l * size (no 32-bit wrap, so the
            // 64-bit sums are consecutive too).
            let mut ok = true;
            for (l, x) in v.iter().enumerate() {
                // CAST: l < 64, size <= 16.
                ok &= u64::from(*x) == u64::from(v[0]) + (l * size) as u64;
            }
            if !ok {
                return None;
            }
            base.wrapping_add(u64::from(v[0])).wrapping_add(off)
        } else {
            let lo: &[u32; N] = self.w.v.get(a * N..(a + 1) * N)?.try_into().ok()?;
            let hi: &[u32; N] = self.w.v.get((a + 1) * N..(a + 2) * N)?.try_into().ok()?;
            let first = u64::from(lo[0]) | (u64::from(hi[0]) << 32);
            let mut ok = true;
            for (l, (x, y)) in lo.iter().zip(hi).enumerate() {
                let va = u64::from(*x) | (u64::from(*y) << 32);
                // CAST: l < 64, size <= 16.
                ok &= va.wrapping_sub(first) == (l * size) as u64;
            }
            if !ok {
                return None;
            }
            first.wrapping_add(off)
        };
        let dw = usize::from(m.dwords);
        if dw == 1 {
            // One row, lane-major as memory is: straight in or out (a load that faults
            // writes nothing: `read_dwords` checks before it copies).
            return Some(if m.load {
                let row = self.w.v.get_mut(data * N..(data + 1) * N)?;
                self.mem.read_dwords(addr0, row).map_err(IsaError::Vm)
            } else {
                let row = self.w.v.get(data * N..(data + 1) * N)?;
                self.mem.write_dwords(addr0, row).map_err(IsaError::Vm)
            });
        }
        let mut buf = [0u32; 256];
        let words = buf.get_mut(..N * dw)?;
        if m.load {
            if let Err(e) = self.mem.read_dwords(addr0, words) {
                return Some(Err(IsaError::Vm(e)));
            }
            for k in 0..dw {
                let row = self.w.v.get_mut((data + k) * N..(data + k + 1) * N)?;
                for (x, c) in row.iter_mut().zip(words.chunks_exact(dw)) {
                    *x = c[k];
                }
            }
            return Some(Ok(()));
        }
        for k in 0..dw {
            let row = self.w.v.get((data + k) * N..(data + k + 1) * N)?;
            for (x, c) in row.iter().zip(words.chunks_exact_mut(dw)) {
                c[k] = *x;
            }
        }
        Some(self.mem.write_dwords(addr0, words).map_err(IsaError::Vm))
    }

    /// Scratch rows at private offset `base` for every lane: per dword, the bounds checks of
    /// the wave's first and last lane, then one access of the row.
    fn scratch_rows<const N: usize>(
        &mut self,
        m: &Mem,
        base: u64,
        data: usize,
    ) -> Result<(), IsaError> {
        for k in 0..usize::from(m.dwords) {
            // CAST: k < 4.
            let at = base.wrapping_add(4 * k as u64);
            // The bounds check depends on the offset only: lane 0's address is checked
            // once (the general path checks the last lane's too, the same way).
            let va = self.scratch_va(at, 4, 0)?;
            let lo = (data + k) * N;
            if m.load {
                let row = self
                    .w
                    .v
                    .get_mut(lo..lo + N)
                    .ok_or_else(|| self.at.msg("VGPR out of range"))?;
                self.mem.read_dwords(va, row).map_err(IsaError::Vm)?;
            } else {
                let row = self.w.v.get(lo..lo + N).ok_or_else(|| self.range_err())?;
                self.mem.write_dwords(va, row).map_err(IsaError::Vm)?;
            }
        }
        Ok(())
    }
}

/// A DS dword load or store (`ds_load_b32..b128`, `ds_store_b32..b128`) resolved at decode
/// time: the general path's per-lane accesses (`lds.rs`, `ds`), run as one loop once every
/// lane's address is known to be inside the workgroup's LDS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lds {
    load: bool,
    /// Dwords per lane (1..=4).
    dwords: u8,
    /// The address VGPR row.
    addr: u16,
    /// The data VGPR row (load destination, store source).
    data: u16,
    /// The instruction's offset (offset0).
    off: u32,
}

/// The pre-resolved form of a DS instruction `i`, when it has one.
fn classify_lds(l: &Launch, i: &Inst) -> Option<Lds> {
    use Op::*;
    let (load, dwords) = match i.op {
        DsLoadB32 => (true, 1),
        DsLoadB64 => (true, 2),
        DsLoadB96 => (true, 3),
        DsLoadB128 => (true, 4),
        DsStoreB32 => (false, 1),
        DsStoreB64 => (false, 2),
        DsStoreB96 => (false, 3),
        DsStoreB128 => (false, 4),
        _ => return None,
    };
    if i.mods != 0 || i.opsel != 0 || i.sdwa.is_some() || i.src[2] != NONE {
        return None;
    }
    let rows = |code: u16, n: u32| -> Option<u16> {
        let r = code.checked_sub(VGPR)?;
        (code < AGPR && u32::from(r) + n <= l.vgprs).then_some(r)
    };
    let addr = rows(i.src[0], 1)?;
    let data = rows(if load { i.dst } else { i.src[1] }, dwords)?;
    Some(Lds {
        load,
        // CAST: 1..=4.
        dwords: dwords as u8,
        addr,
        data,
        // CAST: the general path's non-negative offset.
        off: i.imm as u32,
    })
}

impl Exec<'_, '_> {
    /// Runs the pre-resolved LDS access `d` for a wave whose every lane is live: `None`
    /// (nothing done) when a lane's access leaves the LDS, for the general path's fault.
    fn fast_lds<const N: usize>(&mut self, d: &Lds) -> Option<Result<(), IsaError>> {
        let size = 4 * usize::from(d.dwords);
        let a = usize::from(d.addr);
        let addr: [u32; N] = self.w.v.get(a * N..(a + 1) * N)?.try_into().ok()?;
        // Every lane's end inside the LDS (64-bit sums: no wrap), checked before any access.
        let mut end = 0u64;
        for x in &addr {
            // CAST: size <= 16.
            end = end.max(u64::from(*x) + u64::from(d.off) + size as u64);
        }
        // CAST: usize -> u64 widens.
        if end > u64::from(self.l.lds_bytes) {
            return None;
        }
        let data = usize::from(d.data);
        for (l, x) in addr.iter().enumerate() {
            // CAST: below the LDS size, checked above.
            let at = (u64::from(*x) + u64::from(d.off)) as usize;
            for k in 0..usize::from(d.dwords) {
                let reg = (data + k) * N + l;
                let bytes = self.lds.get_mut(at + 4 * k..at + 4 * k + 4)?;
                let v = self.w.v.get_mut(reg)?;
                if d.load {
                    *v = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                } else {
                    bytes.copy_from_slice(&v.to_le_bytes());
                }
            }
        }
        Some(Ok(()))
    }
}

/// One half of a VOPD dual issue, resolved at decode time: the general path's `dual_half`
/// (`valu.rs`) for its operations without a literal constant: a VOPD half's f32 result
/// flushes a denormal unless MODE keeps them, and reads its sources as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Half {
    op: Op,
    /// Destination VGPR row.
    dst: u16,
    src: [FSrc; 2],
}

/// The pre-resolved halves of a VOPD instruction `i`, when both have one.
fn classify_dual(l: &Launch, i: &Inst) -> Option<[Half; 2]> {
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
    fn fast_half<const N: usize>(&self, h: &Half, r: &mut [u32; N]) -> Option<()> {
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
                map3(r, &a, &b, &d, |x, y, z| f(x).mul_add(f(y), f(z)).to_bits());
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
    fn fast_dual<const N: usize>(&mut self, h: &[Half; 2]) -> Option<Result<(), IsaError>> {
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

#[cfg(test)]
mod tests {
    //! The fast path against the general path (`Exec::step`) on the same wave state, over
    //! edge values (±0, ±inf, quiet and signaling NaNs, denormals, shift counts of 32 and
    //! more, carries), both f32 denormal modes, wave32 and wave64; and hand-computed values.

    use super::*;
    use crate::isa::{FlatMemory, FloatMode, ScratchSetup};

    const EDGES: [u32; 16] = [
        0,
        0x8000_0000, // -0.0
        1,           // the smallest denormal
        0x807f_ffff, // the largest negative denormal
        0x7f80_0000, // +inf
        0xff80_0000, // -inf
        0x7fc0_0000, // quiet NaN
        0x7f80_0001, // signaling NaN
        0x3f80_0000, // 1.0
        0xbf80_0000, // -1.0
        0xffff_ffff,
        0x7fff_ffff,
        31,
        32,
        33,
        0x0080_0000, // the smallest normal
    ];

    /// Register files equal, where a NaN matches any NaN of the same quietness: an f32
    /// operation on two NaNs returns one of them (quieted), and which one the host's float
    /// unit returns depends on how the compiler ordered the operands (Rust leaves it open),
    /// in the general path as in the fast one.
    fn same(a: &[u32], b: &[u32]) -> bool {
        let nan = |x: u32| x & 0x7fff_ffff > 0x7f80_0000;
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                x == y || (nan(*x) && nan(*y) && (x & 0x0040_0000) == (y & 0x0040_0000))
            })
    }

    fn launch(wave64: bool) -> Launch {
        Launch {
            isa: Isa::Gfx11,
            gfx940: true,
            pgm: 0x1000,
            wave64,
            user_sgprs: vec![],
            rsrc2: 0,
            local: [64, 1, 1],
            groups: [1, 1, 1],
            lds_bytes: 0,
            vgprs: 8,
            accum_offset: 0,
            scratch: ScratchSetup::default(),
            scratch_waves: 0,
            float: FloatMode {
                denorm32: true,
                denorm16_64: true,
            },
            budget: 1 << 20,
            clock: 0,
        }
    }

    fn wave(lanes: usize, mode: u32, salt: usize) -> Wave {
        let mut w = Wave {
            s: [UNDEFINED; 128],
            scc: false,
            pc: 0x1000,
            v: vec![UNDEFINED; 9 * lanes],
            nvgpr: 8,
            lanes,
            full: lane_bits(lanes),
            id: 0,
            state: WaveState::Running,
            scratch_slot: 0,
            clock: model::WaveClock::default(),
            mode,
            trapsts: 0,
            executed: 0,
            strict: true,
            oob: (0, None),
        };
        for (k, x) in w.v.iter_mut().enumerate() {
            *x = EDGES[(k * 7 + k / lanes + salt) % EDGES.len()];
        }
        for (k, x) in w.s.iter_mut().enumerate() {
            *x = EDGES[(k + salt) % EDGES.len()];
        }
        // VCC: a carry-in pattern; EXEC: every lane.
        w.s[106] = 0x5a5a_a5a5;
        w.s[107] = 0x0ff0_f00f;
        w.set_exec(!0);
        w
    }

    /// Runs `i` on `w`: the fast path when `fast`, else the general one.
    fn exec(l: &Launch, w: &mut Wave, i: &Inst, fast: bool) -> Option<Result<(), IsaError>> {
        exec_on(&FlatMemory::new(0x1000, 64), l, w, i, fast)
    }

    /// [`exec`] on memory `mem`.
    fn exec_on(
        mem: &FlatMemory,
        l: &Launch,
        w: &mut Wave,
        i: &Inst,
        fast: bool,
    ) -> Option<Result<(), IsaError>> {
        exec_lds(mem, &mut [], l, w, i, fast)
    }

    /// [`exec_on`] with the workgroup's LDS `lds`.
    fn exec_lds(
        mem: &FlatMemory,
        lds: &mut [u8],
        l: &Launch,
        w: &mut Wave,
        i: &Inst,
        fast: bool,
    ) -> Option<Result<(), IsaError>> {
        // The grant is the slice (strict waves fault before the sink past it).
        let mut granted = l.clone();
        granted.lds_bytes = u32::try_from(lds.len()).ok()?;
        let l = &granted;
        let mut kcache = KCache::new();
        let mut bar = WgBarrier {
            signals: 0,
            members: 1,
        };
        let mut x = Exec {
            l,
            w,
            at: At {
                l,
                wg: [0; 3],
                wave: 0,
                pc: 0x1000,
            },
            cd: codes(l.isa),
            mem,
            lds,
            kcache: &mut kcache,
            bar: &mut bar,
        };
        if fast {
            let f = classify(l, i)?;
            x.fast(&f, 0x1004)
        } else {
            Some(x.step(i, 0x1004))
        }
    }

    fn inst(op: Op, enc: Enc, dst: u16, src: [u16; 3]) -> Inst {
        let mut i = Inst::new(op, enc);
        i.dst = dst;
        i.src = src;
        if matches!(op, Op::VAddCoU32 | Op::VAddCoCiU32) {
            i.sdst = 106;
        }
        i
    }

    #[test]
    fn fast_path_matches_the_general_path() {
        use Op::*;
        let v = |r: u16| VGPR + r;
        let ops: [(Op, Enc); 25] = [
            (VMovB32, Enc::Vop1),
            (VAddNcU32, Enc::Vop2),
            (VSubNcU32, Enc::Vop2),
            (VSubrevNcU32, Enc::Vop2),
            (VLshlrevB32, Enc::Vop2),
            (VLshrrevB32, Enc::Vop2),
            (VAshrrevI32, Enc::Vop2),
            (VAndB32, Enc::Vop2),
            (VOrB32, Enc::Vop2),
            (VXorB32, Enc::Vop2),
            (VMulLoU32, Enc::Vop3),
            (VAdd3U32, Enc::Vop3),
            (VLshlOrB32, Enc::Vop3),
            (VLshlAddU32, Enc::Vop3),
            (VAddLshlU32, Enc::Vop3),
            (VAndOrB32, Enc::Vop3),
            (VOr3B32, Enc::Vop3),
            (VXor3B32, Enc::Vop3),
            (VAddCoU32, Enc::Vop3sd),
            (VAddCoCiU32, Enc::Vop2),
            (VAddF32, Enc::Vop2),
            (VSubF32, Enc::Vop2),
            (VSubrevF32, Enc::Vop2),
            (VMulF32, Enc::Vop2),
            (VFmacF32, Enc::Vop2),
        ];
        // Source forms: VGPRs, an SGPR, integer and float inline constants, a literal.
        let forms: [[u16; 3]; 6] = [
            [v(1), v(2), v(3)],
            [v(4), v(5), v(6)],
            [3, v(2), v(7)],
            [v(1), 130, 200],
            [242, v(3), 5],
            [LIT, v(6), v(0)],
        ];
        let mut compared = 0;
        for (op, enc) in ops {
            for wave64 in [false, true] {
                let l = launch(wave64);
                let lanes = if wave64 { 64 } else { 32 };
                for mode in [0u32, 0xf0] {
                    for (k, src) in forms.iter().enumerate() {
                        let mut i = inst(op, enc, v(1 + (k % 3) as u16), *src);
                        i.lit = 0x4049_0fdb;
                        if op == VAddCoCiU32 {
                            i.src[2] = if k % 2 == 0 { 106 } else { 10 };
                        }
                        let mut a = wave(lanes, mode, k);
                        let mut b = wave(lanes, mode, k);
                        let fast = exec(&l, &mut a, &i, true);
                        let slow = exec(&l, &mut b, &i, false);
                        assert!(
                            matches!(fast, Some(Ok(()))),
                            "{op:?} {src:?}: the fast path declined"
                        );
                        assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                        assert!(
                            same(&a.v, &b.v),
                            "{op:?} {src:?} wave64 {wave64} mode {mode:#x}"
                        );
                        assert_eq!(a.s, b.s, "{op:?} {src:?} wave64 {wave64} mode {mode:#x}");
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, 25 * 2 * 2 * 6);
    }

    #[test]
    fn fast_path_values_by_hand() {
        let l = launch(false);
        let v = |r: u16| VGPR + r;
        let mut w = wave(32, 0, 0);
        let set = |w: &mut Wave, r: usize, x: [u32; 4]| {
            for lane in 0..32 {
                w.set_v(r, lane, x[lane % 4]);
            }
        };
        let lanes = |w: &Wave, r: usize| {
            [
                w.v[r * 32],
                w.v[r * 32 + 1],
                w.v[r * 32 + 2],
                w.v[r * 32 + 3],
            ]
        };
        // Shift counts use the low 5 bits: 33 shifts by 1, 32 by 0.
        set(&mut w, 1, [33, 32, 31, 0]);
        set(&mut w, 2, [0x8000_0001, 5, 3, 7]);
        let i = inst(Op::VLshlrevB32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [2, 5, 0x8000_0000, 7]);
        let i = inst(Op::VAshrrevI32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [0xc000_0000, 5, 0, 7]);
        // Carry out per lane into VCC: 0xffffffff + 1 carries, 1 + 1 does not.
        set(&mut w, 1, [0xffff_ffff, 1, 0x8000_0000, 0]);
        set(&mut w, 2, [1, 1, 0x8000_0000, 0]);
        let i = inst(Op::VAddCoU32, Enc::Vop3sd, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [0, 2, 0, 0]);
        assert_eq!(w.s[106], 0x5555_5555);
        // Carry in from that VCC: lanes 0 and 2 add one more (and carry again).
        let i = inst(Op::VAddCoCiU32, Enc::Vop2, v(3), [v(1), v(2), 106]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [1, 2, 1, 0]);
        assert_eq!(w.s[106], 0x5555_5555);
        // f32 with denormals flushed (MODE.FP_DENORM 0): a denormal input is +-0, a
        // signaling NaN comes out quiet, -0 + -0 stays -0, inf - inf is the default NaN.
        set(&mut w, 1, [1, 0x7f80_0001, 0x8000_0000, 0x7f80_0000]);
        set(
            &mut w,
            2,
            [0x3f80_0000, 0x3f80_0000, 0x8000_0000, 0xff80_0000],
        );
        let i = inst(Op::VMulF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3)[..3], [0, 0x7fc0_0001, 0]);
        let i = inst(Op::VAddF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3)[2], 0x8000_0000);
        assert_eq!(lanes(&w, 3)[3] & 0x7fc0_0000, 0x7fc0_0000);
        // Denormals kept (FP_DENORM 3): the denormal times 1.0 is itself; fma of
        // 2^-126 * 0.5 + 0 is the denormal 2^-127.
        w.mode = 0xf0;
        let i = inst(Op::VMulF32, Enc::Vop2, v(3), [v(1), v(2), NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3)[0], 1);
        set(&mut w, 1, [0x0080_0000; 4]);
        let i = inst(Op::VFmaF32, Enc::Vop3, v(3), [v(1), 240, 128]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [0x0040_0000; 4]);
        w.mode = 0;
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(lanes(&w, 3), [0; 4]);
    }

    #[test]
    fn fast_path_declines_what_it_does_not_model() {
        let l = launch(false);
        let v = |r: u16| VGPR + r;
        let plain = inst(Op::VAddNcU32, Enc::Vop2, v(1), [v(2), v(3), NONE]);
        assert!(classify(&l, &plain).is_some());
        // Modifiers, clamp, omod, DPP/SDWA and registers beyond RSRC1's budget.
        let mut i = plain;
        i.clamp = true;
        assert!(classify(&l, &i).is_none());
        let mut i = plain;
        i.mods = 1;
        assert!(classify(&l, &i).is_none());
        let mut i = plain;
        i.omod = 1;
        assert!(classify(&l, &i).is_none());
        let mut i = plain;
        i.sdwa = Some(0);
        assert!(classify(&l, &i).is_none());
        let mut i = plain;
        i.dst = v(8);
        assert!(classify(&l, &i).is_none());
        let mut i = plain;
        i.src[1] = v(8);
        assert!(classify(&l, &i).is_none());
        // SCC/VCCZ/EXECZ sources are left to the general path.
        let mut i = plain;
        i.src[0] = 253;
        assert!(classify(&l, &i).is_none());
        // A partial EXEC takes the general path (which keeps inactive lanes).
        let mut w = wave(32, 0, 0);
        w.set_exec(0xffff_fffe);
        assert!(exec(&l, &mut w, &plain, true).is_none());
        let before = w.v[32];
        assert!(matches!(exec(&l, &mut w, &plain, false), Some(Ok(()))));
        assert_eq!(w.v[32], before);
    }

    fn copy(w: &Wave) -> Wave {
        Wave {
            s: w.s,
            scc: w.scc,
            pc: w.pc,
            v: w.v.clone(),
            nvgpr: w.nvgpr,
            lanes: w.lanes,
            full: w.full,
            id: w.id,
            state: w.state,
            scratch_slot: w.scratch_slot,
            clock: w.clock.clone(),
            mode: w.mode,
            trapsts: w.trapsts,
            executed: w.executed,
            strict: w.strict,
            oob: w.oob,
        }
    }

    /// Memory of the memory tests: 64 KiB at 0x10000, scratch at 0x18000.
    const MBASE: u64 = 0x1_0000;

    fn mem_with_pattern() -> FlatMemory {
        let m = FlatMemory::new(MBASE, 0x1_0000);
        let bytes: Vec<u8> = (0..0x1_0000u32).map(|k| (k * 7 + k / 251) as u8).collect();
        m.poke(MBASE, &bytes).unwrap();
        m
    }

    fn mem_bytes(m: &FlatMemory) -> Vec<u8> {
        let mut b = vec![0u8; 0x1_0000];
        m.peek(MBASE, &mut b).unwrap();
        b
    }

    #[test]
    fn fast_memory_matches_the_general_path() {
        use Op::*;
        let v = |r: u16| VGPR + r;
        let ops = [
            MLoadB32, MLoadB64, MLoadB96, MLoadB128, MStoreB32, MStoreB64, MStoreB96, MStoreB128,
        ];
        let mut fast_runs = 0;
        for wave64 in [false, true] {
            let mut l = launch(wave64);
            l.vgprs = 16;
            l.scratch = ScratchSetup {
                base: MBASE + 0x8000,
                wave_bytes: 64 * 64,
            };
            let lanes = if wave64 { 64usize } else { 32 };
            for op in ops {
                let dwords = match op {
                    MLoadB32 | MStoreB32 => 1,
                    MLoadB64 | MStoreB64 => 2,
                    MLoadB96 | MStoreB96 => 3,
                    _ => 4,
                };
                let load = matches!(op, MLoadB32 | MLoadB64 | MLoadB96 | MLoadB128);
                // (segment, saddr, lane stride in bytes, offset): consecutive lanes, one
                // lane's gap (the general path's per-lane access), a negative offset, the
                // scratch forms, and accesses beyond memory (the same fault).
                let size = 4 * dwords;
                let cases: [(u8, u16, u32, i32, u64); 8] = [
                    (SEG_GLOBAL, NONE, size, 16, MBASE),
                    (SEG_GLOBAL, 2, size, 0, MBASE + 0x100),
                    (SEG_GLOBAL, 2, size + 4, -8, MBASE + 0x100),
                    (SEG_GLOBAL, NONE, size, 0, MBASE + 0x1_0000 - 64),
                    (SEG_GLOBAL, NONE, size, 0, 0x10),
                    (SEG_SCRATCH, NONE, 0, 8, 0),
                    (SEG_SCRATCH, 4, 0, 4, 0),
                    (SEG_SCRATCH, NONE, 0, 60, 0),
                ];
                for (k, (seg, saddr, stride, off, base)) in cases.into_iter().enumerate() {
                    let mut i = Inst::new(op, Enc::Flat);
                    i.sub = seg;
                    i.imm = off;
                    i.src[2] = saddr;
                    if seg == SEG_GLOBAL {
                        i.src[0] = v(8);
                    }
                    if load {
                        i.dst = v(2);
                    } else {
                        i.src[1] = v(2);
                    }
                    let mut w = wave(lanes, 0, k);
                    w.v.resize(17 * lanes, UNDEFINED);
                    w.nvgpr = 16;
                    // The address rows: a 64-bit pair, or a 32-bit offset from SADDR.
                    for lane in 0..lanes {
                        // CAST: lane < 64.
                        let a = u64::from(stride) * lane as u64;
                        let va = if saddr == NONE { base + a } else { a };
                        w.set_v(8, lane, va as u32);
                        w.set_v(9, lane, (va >> 32) as u32);
                    }
                    w.s[2] = (base & 0xffff_ffff) as u32;
                    w.s[3] = (base >> 32) as u32;
                    w.s[4] = 16;
                    let (ma, mb) = (mem_with_pattern(), mem_with_pattern());
                    let mut a = copy(&w);
                    let mut b = w;
                    let fast = exec_on(&ma, &l, &mut a, &i, true);
                    let slow = exec_on(&mb, &l, &mut b, &i, false);
                    let slow = slow.unwrap();
                    match fast {
                        Some(r) => {
                            fast_runs += 1;
                            assert_eq!(
                                r.map_err(|e| e.to_string()),
                                slow.map_err(|e| e.to_string()),
                                "{op:?} case {k}"
                            );
                        }
                        // Declined: only the scattered lanes.
                        None => {
                            assert_eq!(stride, size + 4, "{op:?} case {k} declined");
                            let r = exec_on(&ma, &l, &mut a, &i, false).unwrap();
                            assert_eq!(r.is_ok(), slow.is_ok());
                        }
                    }
                    assert_eq!(a.v, b.v, "{op:?} case {k} wave64 {wave64}");
                    assert!(mem_bytes(&ma) == mem_bytes(&mb), "{op:?} case {k} memory");
                }
            }
        }
        assert_eq!(fast_runs, 2 * 8 * 7);
    }

    #[test]
    fn fast_memory_values_by_hand() {
        let l = {
            let mut l = launch(false);
            l.scratch = ScratchSetup {
                base: MBASE + 0x8000,
                wave_bytes: 32 * 16,
            };
            l
        };
        let m = FlatMemory::new(MBASE, 0x1_0000);
        let words: Vec<u8> = (0..64u32).flat_map(|k| (0x100 + k).to_le_bytes()).collect();
        m.poke(MBASE + 0x40, &words).unwrap();
        let mut w = wave(32, 0, 0);
        for lane in 0..32 {
            // CAST: lane < 32.
            w.set_v(4, lane, 8 * lane as u32);
        }
        w.s[2] = MBASE as u32;
        w.s[3] = 0;
        // global_load_b64 v[0:1], v4, s[2:3] offset:0x40: lane l reads words 2l and 2l + 1.
        let mut i = Inst::new(Op::MLoadB64, Enc::Flat);
        i.sub = SEG_GLOBAL;
        i.imm = 0x40;
        i.src = [VGPR + 4, NONE, 2];
        i.dst = VGPR;
        assert!(matches!(exec_on(&m, &l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(&w.v[..3], &[0x100, 0x102, 0x104]);
        assert_eq!(&w.v[32..35], &[0x101, 0x103, 0x105]);
        // scratch_store_b32 off, v0, off offset:4: lane l's dword 1 is at slot + 4 * 32 +
        // 4 * l (the swizzle: dword-major across the wave).
        let mut i = Inst::new(Op::MStoreB32, Enc::Flat);
        i.sub = SEG_SCRATCH;
        i.imm = 4;
        i.src = [NONE, VGPR, NONE];
        assert!(matches!(exec_on(&m, &l, &mut w, &i, true), Some(Ok(()))));
        let mut b = [0u8; 8];
        m.peek(MBASE + 0x8000 + 128 + 4 * 3, &mut b).unwrap();
        assert_eq!(b, [0x06, 1, 0, 0, 0x08, 1, 0, 0]);
        // Beyond the 16 bytes a lane has: the general path's scratch fault.
        i.imm = 16;
        let e = exec_on(&m, &l, &mut w, &i, true).unwrap().unwrap_err();
        assert!(e.to_string().contains("beyond the wave's slot"), "{e}");
    }

    /// A lane's LDS address.
    type LaneAddr = fn(usize) -> u32;

    #[test]
    fn fast_lds_matches_the_general_path() {
        use Op::*;
        let v = |r: u16| VGPR + r;
        let ops = [
            DsLoadB32,
            DsLoadB64,
            DsLoadB96,
            DsLoadB128,
            DsStoreB32,
            DsStoreB64,
            DsStoreB96,
            DsStoreB128,
        ];
        let mut fast_runs = 0;
        for wave64 in [false, true] {
            let mut l = launch(wave64);
            l.vgprs = 16;
            let lanes = if wave64 { 64usize } else { 32 };
            for op in ops {
                let load = matches!(op, DsLoadB32 | DsLoadB64 | DsLoadB96 | DsLoadB128);
                // (lane address, offset): reversed lanes, every lane at one address (the
                // last lane's store wins), unaligned, and the last lane past the end (the
                // general path's fault, after the lanes before it).
                let cases: [(LaneAddr, i32); 4] = [
                    (|l| 4 * (63 - l as u32), 8),
                    (|_| 40, 0),
                    (|l| 3 + 20 * l as u32, 1),
                    (|l| 60 * l as u32, 0),
                ];
                for (k, (at, off)) in cases.into_iter().enumerate() {
                    let mut i = Inst::new(op, Enc::Ds);
                    i.imm = off;
                    i.src[0] = v(8);
                    if load {
                        i.dst = v(2);
                    } else {
                        i.src[1] = v(2);
                    }
                    let mut w = wave(lanes, 0, k);
                    w.v.resize(17 * lanes, UNDEFINED);
                    w.nvgpr = 16;
                    for lane in 0..lanes {
                        w.set_v(8, lane, at(lane));
                    }
                    let mut la: Vec<u8> = (0..2048u32).map(|x| (x * 13 + 5) as u8).collect();
                    let mut lb = la.clone();
                    let mut a = copy(&w);
                    let mut b = w;
                    let m = FlatMemory::new(MBASE, 64);
                    let slow = exec_lds(&m, &mut lb, &l, &mut b, &i, false).unwrap();
                    match exec_lds(&m, &mut la, &l, &mut a, &i, true) {
                        Some(r) => {
                            fast_runs += 1;
                            assert!(r.is_ok() && slow.is_ok(), "{op:?} case {k}");
                        }
                        None => {
                            assert!(slow.is_err(), "{op:?} case {k} declined");
                            let r = exec_lds(&m, &mut la, &l, &mut a, &i, false).unwrap();
                            assert_eq!(
                                r.map_err(|e| e.to_string()),
                                slow.map_err(|e| e.to_string())
                            );
                        }
                    }
                    assert_eq!(a.v, b.v, "{op:?} case {k} wave64 {wave64}");
                    assert!(la == lb, "{op:?} case {k} LDS");
                }
            }
        }
        // The last case faults in wave64 (lane 63 at 3780) and for the wider ops in wave32.
        assert!((2 * 8 * 3..2 * 8 * 4).contains(&fast_runs), "{fast_runs}");
    }

    #[test]
    fn fast_lds_values_by_hand() {
        let l = launch(false);
        let m = FlatMemory::new(MBASE, 64);
        let mut lds = vec![0u8; 256];
        let mut w = wave(32, 0, 0);
        for lane in 0..32 {
            // CAST: lane < 32.
            w.set_v(1, lane, 4 * (31 - lane as u32));
            w.set_v(2, lane, 0x100 + lane as u32);
        }
        // ds_store_b32 v1, v2 offset:16: lane l's value at 16 + 4 * (31 - l).
        let mut i = Inst::new(Op::DsStoreB32, Enc::Ds);
        i.imm = 16;
        i.src = [VGPR + 1, VGPR + 2, NONE];
        assert!(matches!(
            exec_lds(&m, &mut lds, &l, &mut w, &i, true),
            Some(Ok(()))
        ));
        assert_eq!(&lds[16..20], &[0x1f, 1, 0, 0]);
        assert_eq!(&lds[140..144], &[0x00, 1, 0, 0]);
        // ds_load_b64 v[3:4], v1 offset:16 reads lane l's word and the one after it.
        let mut i = Inst::new(Op::DsLoadB64, Enc::Ds);
        i.imm = 16;
        i.src = [VGPR + 1, NONE, NONE];
        i.dst = VGPR + 3;
        assert!(matches!(
            exec_lds(&m, &mut lds, &l, &mut w, &i, true),
            Some(Ok(()))
        ));
        assert_eq!(w.v[3 * 32 + 31], 0x11f);
        assert_eq!(w.v[4 * 32 + 31], 0x11e);
        assert_eq!(w.v[3 * 32], 0x100);
        assert_eq!(w.v[4 * 32], 0);
    }

    #[test]
    fn fast_dual_matches_the_general_path() {
        use Op::*;
        let v = |r: u16| VGPR + r;
        let ops = [
            VMovB32,
            VAddNcU32,
            VLshlrevB32,
            VAndB32,
            VCndmaskB32,
            VAddF32,
            VSubF32,
            VSubrevF32,
            VMulF32,
            VFmacF32,
        ];
        // Y reads X's destination (v1): both read before either writes.
        let srcs: [([u16; 2], [u16; 2]); 3] = [
            ([v(2), v(3)], [v(1), v(4)]),
            ([5, v(3)], [242, v(1)]),
            ([LIT, v(6)], [130, v(7)]),
        ];
        let mut runs = 0;
        for wave64 in [false, true] {
            let l = launch(wave64);
            let lanes = if wave64 { 64 } else { 32 };
            for mode in [0u32, 0xf0] {
                for (k, (sx, sy)) in srcs.iter().enumerate() {
                    for (j, opx) in ops.iter().enumerate() {
                        let opy = ops[(j * 3 + k) % ops.len()];
                        let mut i = Inst::new(VDual, Enc::Vopd);
                        i.lit = 0x0000_0003;
                        i.dual = Some([
                            DualHalf {
                                op: *opx,
                                dst: v(1),
                                src: *sx,
                            },
                            DualHalf {
                                op: opy,
                                dst: v(6),
                                src: *sy,
                            },
                        ]);
                        let mut a = wave(lanes, mode, k + j);
                        let mut b = wave(lanes, mode, k + j);
                        assert!(
                            matches!(exec(&l, &mut a, &i, true), Some(Ok(()))),
                            "{opx:?} {opy:?} declined"
                        );
                        assert!(matches!(exec(&l, &mut b, &i, false), Some(Ok(()))));
                        assert!(same(&a.v, &b.v), "{opx:?} {opy:?} {k} mode {mode:#x}");
                        runs += 1;
                    }
                }
            }
        }
        assert_eq!(runs, 2 * 2 * 3 * 10);
    }

    #[test]
    fn fast_dual_values_by_hand() {
        use Op::*;
        let l = launch(false);
        let mut w = wave(32, 0, 0);
        for lane in 0..32 {
            w.set_v(1, lane, 5);
            // The smallest denormal times 1.0 flushes to 0 without FP_DENORM.
            w.set_v(2, lane, 1);
        }
        // v_dual_mov_b32 v1, 7 :: v_dual_add_nc_u32 v3, 2, v1: Y reads the old v1 (5).
        let mut i = Inst::new(VDual, Enc::Vopd);
        i.dual = Some([
            DualHalf {
                op: VMovB32,
                dst: VGPR + 1,
                src: [135, NONE],
            },
            DualHalf {
                op: VAddNcU32,
                dst: VGPR + 3,
                src: [130, VGPR + 1],
            },
        ]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!((w.v[32], w.v[3 * 32]), (7, 7));
        i.dual = Some([
            DualHalf {
                op: VMulF32,
                dst: VGPR + 4,
                src: [242, VGPR + 2],
            },
            DualHalf {
                op: VMovB32,
                dst: VGPR + 5,
                src: [VGPR + 2, NONE],
            },
        ]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!((w.v[4 * 32], w.v[5 * 32]), (0, 1));
        w.mode = 0xf0;
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(w.v[4 * 32], 1);
    }

    /// The whole observable state of a wave: registers, SCC, PC and run state.
    fn state(w: &Wave) -> (Vec<u32>, [u32; 128], bool, u64, WaveState) {
        (w.v.clone(), w.s, w.scc, w.pc, w.state)
    }

    #[test]
    fn fast_scalar_ops_match_the_general_path() {
        use Op::*;
        let ops: [(Op, Enc); 35] = [
            (SMovB32, Enc::Sop1),
            (SAddU32, Enc::Sop2),
            (SSubU32, Enc::Sop2),
            (SMulI32, Enc::Sop2),
            (SLshlB32, Enc::Sop2),
            (SLshrB32, Enc::Sop2),
            (SAshrI32, Enc::Sop2),
            (SAndB32, Enc::Sop2),
            (SOrB32, Enc::Sop2),
            (SXorB32, Enc::Sop2),
            (SCmpEqU32, Enc::Sopc),
            (SCmpLgU32, Enc::Sopc),
            (SCmpGtU32, Enc::Sopc),
            (SCmpGeU32, Enc::Sopc),
            (SCmpLtU32, Enc::Sopc),
            (SCmpLeU32, Enc::Sopc),
            (SCmpEqI32, Enc::Sopc),
            (SCmpLgI32, Enc::Sopc),
            (SCmpGtI32, Enc::Sopc),
            (SCmpGeI32, Enc::Sopc),
            (SCmpLtI32, Enc::Sopc),
            (SCmpLeI32, Enc::Sopc),
            (SAndSaveexecB32, Enc::Sop1),
            (SBranch, Enc::Sopp),
            (SCbranchScc0, Enc::Sopp),
            (SCbranchScc1, Enc::Sopp),
            (SCbranchVccz, Enc::Sopp),
            (SCbranchVccnz, Enc::Sopp),
            (SCbranchExecz, Enc::Sopp),
            (SCbranchExecnz, Enc::Sopp),
            (SEndpgm, Enc::Sopp),
            (SBarrier, Enc::Sopp),
            (SSendmsg, Enc::Sopp),
            // Destinations that are VCC and EXEC halves.
            (SMovB32, Enc::Sop1),
            (SAndSaveexecB32, Enc::Sop1),
        ];
        // Sources: SGPRs (one of them EXEC's low half), integer and float inline constants,
        // a literal, the null register.
        let forms: [[u16; 2]; 7] = [
            [3, 4],
            [5, 13],
            [126, 2],
            [130, 7],
            [9, 200],
            [242, LIT],
            [124, 6],
        ];
        let mut compared = 0;
        for (n, (op, enc)) in ops.into_iter().enumerate() {
            for wave64 in [false, true] {
                let l = launch(wave64);
                let lanes = if wave64 { 64 } else { 32 };
                for (k, src) in forms.iter().enumerate() {
                    for (scc, em, vcc) in [
                        (false, !0u64, 0u64),
                        (true, 0, 0x1_0000_0000),
                        (true, 0x8000_0000_0000_0001, 0x5a),
                    ] {
                        let dst = match n {
                            33 => 106,
                            34 => 126,
                            _ => 10 + k as u16,
                        };
                        let mut i = inst(op, enc, dst, [src[0], src[1], NONE]);
                        i.lit = 0x8000_0003;
                        i.imm = if op == SSendmsg { 3 } else { -7 + k as i32 };
                        let prep = |w: &mut Wave| {
                            w.scc = scc;
                            w.set_exec(em);
                            w.s[106] = vcc as u32;
                            w.s[107] = (vcc >> 32) as u32;
                        };
                        let mut a = wave(lanes, 0, k);
                        let mut b = wave(lanes, 0, k);
                        prep(&mut a);
                        prep(&mut b);
                        let fast = exec(&l, &mut a, &i, true);
                        let slow = exec(&l, &mut b, &i, false);
                        if op == SAndSaveexecB32 && wave64 {
                            // Wave64's EXEC has the B64 form: no fast one for B32.
                            assert!(fast.is_none());
                            continue;
                        }
                        assert!(
                            matches!(fast, Some(Ok(()))),
                            "{op:?} {src:?}: the fast path declined"
                        );
                        assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                        assert_eq!(state(&a), state(&b), "{op:?} {src:?} wave64 {wave64}");
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, (35 * 2 - 2) * 7 * 3);
        // What the fast path leaves to the general one: unwritable or null destinations,
        // VCCZ/EXECZ/SCC as sources, VGPRs, other messages.
        let l = launch(false);
        for (op, dst, src) in [
            (SMovB32, 124, [3, NONE]),
            (SMovB32, 110, [3, NONE]),
            (SMovB32, 251, [3, NONE]),
            (SAddU32, 3, [251, 4]),
            (SAddU32, 3, [253, 4]),
            (SAddU32, 3, [4, VGPR]),
        ] {
            assert!(classify(&l, &inst(op, Enc::Sop2, dst, [src[0], src[1], NONE])).is_none());
        }
        let mut i = inst(SSendmsg, Enc::Sopp, NONE, [NONE; 3]);
        i.imm = 1;
        assert!(classify(&l, &i).is_none());
    }

    #[test]
    fn fast_scalar_values_by_hand() {
        let l = launch(false);
        let mut w = wave(32, 0, 0);
        w.s[3] = 0xffff_fff0;
        w.s[4] = 0x20;
        let i = inst(Op::SAddU32, Enc::Sop2, 5, [3, 4, NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!((w.s[5], w.scc), (0x10, true));
        let i = inst(Op::SLshlB32, Enc::Sop2, 5, [4, 4, NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        // A count of 32 shifts by 0.
        assert_eq!((w.s[5], w.scc), (0x20, true));
        let i = inst(Op::SCmpLtI32, Enc::Sopc, NONE, [3, 4, NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert!(w.scc);
        // EXEC 0b1100 & 0b1010: EXEC 0b1000, the old one saved.
        w.set_exec(0b1100);
        w.s[6] = 0b1010;
        let i = inst(Op::SAndSaveexecB32, Enc::Sop1, 7, [6, NONE, NONE]);
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!((w.s[7], w.s[126], w.scc), (0b1100, 0b1000, true));
        // A taken branch: next (0x1004) + 4 * imm.
        let mut i = inst(Op::SCbranchExecnz, Enc::Sopp, NONE, [NONE; 3]);
        i.imm = -1;
        assert!(matches!(exec(&l, &mut w, &i, true), Some(Ok(()))));
        assert_eq!(w.pc, 0x1000);
    }

    #[test]
    fn fast_shift64_and_compare_match_the_general_path() {
        use Op::*;
        let v = |r: u16| VGPR + r;
        let ops: [(Op, Enc); 5] = [
            (VLshlrevB64, Enc::Vop3),
            (VLshrrevB64, Enc::Vop3),
            (VAshrrevI64, Enc::Vop3),
            (VCmpU32, Enc::Vopc),
            (VCmpI32, Enc::Vop3),
        ];
        // Shift counts and compare sources: VGPRs (overlapping the destination too), an
        // SGPR, constants, a literal.
        let forms: [[u16; 2]; 6] = [
            [v(1), v(2)],
            [v(3), v(2)],
            [3, v(4)],
            [130, v(6)],
            [LIT, v(0)],
            [242, v(1)],
        ];
        let mut compared = 0;
        for (op, enc) in ops {
            let cmp = matches!(op, VCmpU32 | VCmpI32);
            for wave64 in [false, true] {
                let l = launch(wave64);
                let lanes = if wave64 { 64 } else { 32 };
                for (k, src) in forms.iter().enumerate() {
                    for cond in 0..8u8 {
                        if !cmp && cond > 0 {
                            continue;
                        }
                        let mut i = inst(op, enc, v(2 + (k % 3) as u16), [src[0], src[1], NONE]);
                        i.lit = if k % 2 == 0 { 0xffff_fffe } else { 63 };
                        i.sub = cond;
                        if cmp {
                            i.dst = NONE;
                            i.sdst = if k % 2 == 0 { 106 } else { 10 };
                        }
                        for em in [!0u64, 0x0000_0001_8000_0001] {
                            let mut a = wave(lanes, 0, k + usize::from(cond));
                            let mut b = wave(lanes, 0, k + usize::from(cond));
                            a.set_exec(em);
                            b.set_exec(em);
                            let fast = exec(&l, &mut a, &i, true);
                            let slow = exec(&l, &mut b, &i, false);
                            assert!(matches!(slow, Some(Ok(()))), "{op:?} {src:?}");
                            if em != !0 {
                                // A lane inactive: the general path's.
                                assert!(fast.is_none(), "{op:?} {src:?}");
                                continue;
                            }
                            assert!(
                                matches!(fast, Some(Ok(()))),
                                "{op:?} {src:?}: the fast path declined"
                            );
                            assert_eq!(state(&a), state(&b), "{op:?} {src:?} wave64 {wave64}");
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, (3 + 2 * 8) * 2 * 6);
        // Left to the general path: a pair past the VGPR budget (8), CMPX, a null mask, and
        // a wave64 mask into VCC_HI..(the pair's high half not a plain SGPR).
        let l = launch(false);
        let i = inst(VLshlrevB64, Enc::Vop3, v(7), [v(1), v(2), NONE]);
        assert!(classify(&l, &i).is_none());
        let i = inst(VLshlrevB64, Enc::Vop3, v(2), [v(1), v(7), NONE]);
        assert!(classify(&l, &i).is_none());
        let mut i = inst(VCmpU32, Enc::Vopc, NONE, [v(1), v(2), NONE]);
        i.sdst = 106;
        i.cmpx = true;
        assert!(classify(&l, &i).is_none());
        i.cmpx = false;
        i.sdst = 124;
        assert!(classify(&l, &i).is_none());
        i.sdst = 107;
        assert!(classify(&launch(true), &i).is_none());
        assert!(classify(&l, &i).is_some());
    }

    #[test]
    fn fast_scalar_loads_match_the_general_path() {
        use Op::*;
        let mem = FlatMemory::new(0x1000, 256);
        let bytes: Vec<u8> = (0..256u32).map(|k| (k * 29 + 3) as u8).collect();
        assert!(mem.poke(0x1000, &bytes).is_ok());
        let ops = [
            SLoadB32, SLoadB64, SLoadB96, SLoadB128, SLoadB256, SLoadB512,
        ];
        let mut compared = 0;
        for op in ops {
            for wave64 in [false, true] {
                let l = launch(wave64);
                let lanes = if wave64 { 64 } else { 32 };
                // Offsets: aligned, unaligned (the low bits ignored), negative, and past the
                // end of memory (a fault, the same one each way).
                for (k, off) in [0i32, 0x44, 0x13, -8, 0xfc, 0x400].into_iter().enumerate() {
                    // SOFFSET off, or the null register (gfx11's encoding of off).
                    let soff = if k % 2 == 0 { NONE } else { 124 };
                    let mut i = inst(op, Enc::Smem, 20, [4, soff, NONE]);
                    i.imm = off;
                    let prep = |w: &mut Wave| {
                        w.s[4] = 0x1010;
                        w.s[5] = 0;
                        // A partial EXEC does not matter to a scalar load.
                        w.set_exec(0x5);
                    };
                    let mut a = wave(lanes, 0, k);
                    let mut b = wave(lanes, 0, k);
                    prep(&mut a);
                    prep(&mut b);
                    let fast = exec_on(&mem, &l, &mut a, &i, true);
                    let slow = exec_on(&mem, &l, &mut b, &i, false);
                    match (fast, slow) {
                        (Some(Ok(())), Some(Ok(()))) => {}
                        (Some(Err(x)), Some(Err(y))) => {
                            assert_eq!(x.to_string(), y.to_string(), "{op:?} {off}");
                        }
                        (x, y) => panic!("{op:?} {off}: fast {x:?}, general {y:?}"),
                    }
                    assert_eq!(state(&a), state(&b), "{op:?} {off} wave64 {wave64}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 6 * 2 * 6);
        // Left to the general path: SOFFSET, a destination past the plain SGPRs (VCC), a
        // base that is not an SGPR pair, other loads.
        let l = launch(false);
        for (op, dst, src) in [
            (SLoadB32, 20, [4, 5]),
            (SLoadB64, 106, [4, NONE]),
            (SLoadB32, 20, [124, NONE]),
            (SLoadB32, 20, [127, NONE]),
            (SLoadU8, 20, [4, NONE]),
            (SBufferLoadB32, 20, [4, NONE]),
        ] {
            let i = inst(op, Enc::Smem, dst, [src[0], src[1], NONE]);
            assert!(classify(&l, &i).is_none(), "{op:?} {dst} {src:?}");
        }
    }
}
