//! The fast path's scalar forms: SALU operations, branches and SMEM loads (see the parent
//! module).

use super::*;

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
    pub(super) op: SOp,
    /// The destination SGPR code (a plain writable one), for the ops that write one.
    pub(super) dst: u8,
    pub(super) src: [FSrc; 2],
    /// A branch's word offset.
    pub(super) imm: i32,
}

/// A pre-resolved `s_load_b32..b512`: SGPRs `dst..dst + dwords` from the address in the
/// SGPR pair `base` plus `off` (`scalar.rs`, `smem`, without SOFFSET).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SLoad {
    pub(super) base: u8,
    pub(super) dst: u8,
    pub(super) dwords: u8,
    pub(super) off: i32,
}

/// The pre-resolved form of a scalar load `i` whose base is an SGPR pair, without SOFFSET,
/// into plain SGPRs.
pub(super) fn classify_sload(l: &Launch, i: &Inst) -> Option<SLoad> {
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
pub(super) fn classify_salu(l: &Launch, i: &Inst) -> Option<Salu> {
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

impl Exec<'_, '_> {
    /// A scalar source's value ([`classify_salu`] resolves no VGPR; an SGPR code is below
    /// 128).
    #[inline(always)]
    pub(super) fn sval(&self, s: FSrc) -> u32 {
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
    pub(super) fn fast_salu(&mut self, f: &Salu, next: u64) {
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
    pub(super) fn fast_sload(&mut self, m: &SLoad) -> Result<(), IsaError> {
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
        if let Err(e) = self.kcache.read(self.mem, va, bytes) {
            self.stale_tail(e, va, bytes)?;
        }
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
}
