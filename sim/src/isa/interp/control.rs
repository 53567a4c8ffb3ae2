//! Scalar control: hardware registers (`s_getreg`/`s_setreg`, `s_round_mode`,
//! `s_denorm_mode`), M0-relative SGPR moves, calls, 64-bit bit compares, messages
//! (`s_sendmsg`, gfx11+'s `s_sendmsg_rtn`), the debugger, trace and performance hints, gfx12's
//! barrier operations, and gfx9's VGPR index mode, VSKIP and fork/join branch stack.
//!
//! Semantics from the ISA guides' pseudo-code (RDNA3/RDNA4 "SOP1/SOPK/SOPP Instructions",
//! CDNA3 and the GCN3/Vega guides for gfx9's indexing, VSKIP and fork/join). What would enter
//! a trap handler, halt the wave for a debugger or need graphics state is a named fault: the
//! simulator runs no trap handler, no debugger and no graphics pipeline.

use super::*;
use crate::isa::FloatMode;

/// gfx9 MODE.GPR_IDX_EN: VALU VGPR operands are indexed by M0.
pub(super) const MODE_GPR_IDX_EN: u32 = 1 << 27;
/// gfx9 MODE.VSKIP: vector instructions are skipped.
pub(super) const MODE_VSKIP: u32 = 1 << 28;
/// gfx9 MODE.CSP (31:29): the fork/join stack pointer.
const CSP_SHIFT: u32 = 29;

/// MODE as a wave starts: FP_ROUND 0 (round to nearest even, what the VALU implements),
/// FP_DENORM from COMPUTE_PGM_RSRC1's FLOAT_MODE as the launch decoded it (3 keeps denormals,
/// anything else flushes), and on gfx9/gfx11 DX10_CLAMP (8) and IEEE (9) set, as the
/// compilers' kernel descriptors program them (gfx12's RSRC1 has neither).
pub(super) fn initial_mode(l: &Launch) -> u32 {
    let FloatMode {
        denorm32,
        denorm16_64,
    } = l.float;
    let denorm = if denorm32 { 3 << 4 } else { 0 } | if denorm16_64 { 3 << 6 } else { 0 };
    let clamp_ieee = if l.isa == Isa::Gfx12 { 0 } else { 3 << 8 };
    denorm | clamp_ieee
}

/// gfx9's VGPR index mode applied to a VALU instruction: each VGPR operand that M0[15:12]
/// enables (12 SRC0, 13 SRC1, 14 SRC2, 15 DST) is offset by M0[7:0] (Vega ISA "VGPR
/// Indexing").
pub(super) fn gpr_indexed(i: &Inst, m0: u32) -> Inst {
    let mut x = *i;
    // CAST: 8 bits.
    let idx = (m0 & 0xff) as u16;
    let vgpr = |c: u16| (VGPR..AGPR).contains(&c);
    for k in 0..3 {
        if m0 >> (12 + k) & 1 == 1 && vgpr(x.src[k]) {
            x.src[k] += idx;
        }
    }
    if m0 >> 15 & 1 == 1 && vgpr(x.dst) {
        x.dst += idx;
    }
    x
}

impl Exec<'_, '_> {
    /// SGPRs a wave addresses (gfx9: s0..s101; gfx10+: s0..s105).
    fn sgprs(&self) -> usize {
        if self.l.isa == Isa::Gfx9 { 102 } else { 106 }
    }

    /// M0's operand code (gfx9 124; gfx10+ 125, 124 being null).
    fn m0(&self) -> u32 {
        if self.l.isa == Isa::Gfx9 {
            self.w.s[124]
        } else {
            self.w.s[125]
        }
    }

    /// SGPR `base + off` (`n` of them) for the M0-relative moves, or a fault naming it.
    fn rel_sgpr(&self, i: &Inst, base: u16, off: u32, n: usize) -> Result<usize, IsaError> {
        // CAST: a u32 into usize (at least 32 bits).
        let at = usize::from(base).saturating_add(off as usize);
        if usize::from(base) >= self.sgprs() || at.saturating_add(n) > self.sgprs() {
            return Err(self.err(&format!(
                "{} addresses SGPR {base} + M0 {off} = {at} beyond the wave's {} SGPRs",
                i.op.name(),
                self.sgprs()
            )));
        }
        Ok(at)
    }

    /// The instructions of this module (the scalar unit's remainder).
    pub(super) fn control(&mut self, i: &Inst, next: u64) -> Result<(), IsaError> {
        use Op::*;
        match i.op {
            // D = SGPR[S0.addr + M0]; SGPR[D.addr + M0] = S0 (64-bit: pairs).
            SMovrelsB32 | SMovrelsB64 => {
                let n = if i.op == SMovrelsB64 { 2 } else { 1 };
                let at = self.rel_sgpr(i, i.src[0], self.m0(), n)?;
                let lo = self.w.s[at];
                if n == 2 {
                    let v = u64::from(lo) | (u64::from(self.w.s[at + 1]) << 32);
                    self.swrite64(i.dst, v)
                } else {
                    self.swrite(i.dst, lo)
                }
            }
            SMovreldB32 | SMovreldB64 => {
                let n = if i.op == SMovreldB64 { 2 } else { 1 };
                let v = if n == 2 {
                    self.s64(i.src[0], i.lit)?
                } else {
                    u64::from(self.s32(i.src[0], i.lit)?)
                };
                let at = self.rel_sgpr(i, i.dst, self.m0(), n)?;
                // CAST: halves of a u64.
                self.w.s[at] = v as u32;
                if n == 2 {
                    // CAST: halves of a u64.
                    self.w.s[at + 1] = (v >> 32) as u32;
                }
                Ok(())
            }
            // SGPR[D.addr + M0[25:16]] = SGPR[S0.addr + M0[9:0]].
            SMovrelsd2B32 => {
                let m0 = self.m0();
                let from = self.rel_sgpr(i, i.src[0], m0 & 0x3ff, 1)?;
                let to = self.rel_sgpr(i, i.dst, (m0 >> 16) & 0x3ff, 1)?;
                self.w.s[to] = self.w.s[from];
                Ok(())
            }
            // D = PC + 4; PC = PC + 4 + SIMM16 * 4.
            SCallB64 => {
                self.swrite64(i.dst, next)?;
                self.branch(next, i.imm, true);
                Ok(())
            }
            // RDNA2 ISA 4.2.1 "Subvector Execution" and its SOPK table (RDNA1's text is the
            // same; the RDNA3 guide dropped the section, LLVM still decodes the gfx11 opcodes):
            // a loop that runs its body for EXEC's low half, then its high half, the other half
            // kept in the SGPR (D0). The SOPK pseudo-code, followed in its order:
            //   begin: if EXEC == 0: jump LABEL (skip the loop)
            //          elif EXEC_LO == 0: D0 = EXEC_LO (the high pass only)
            //          else: D0 = EXEC_HI; EXEC_HI = 0 (the low pass first)
            //   end:   if EXEC_HI != 0: EXEC_LO = D0 (after the high pass: restore)
            //          elif D0 == 0: nothing (the low pass only: done)
            //          else: EXEC_HI = D0; D0 = EXEC_LO; EXEC_LO = 0; jump LABEL (second pass)
            // LABEL is PC + 4 + SIMM16 * 4, as S_CBRANCH ("internally equivalent to an
            // S_CBRANCH with extra math"). Wave32 (the guide: "well-defined semantics in wave32
            // mode"): EXEC_HI holds no lanes and reads 0 here, so begin skips when EXEC_LO is 0
            // and otherwise writes D0 = 0 and runs the body once with EXEC unchanged; end then
            // sees EXEC_HI == 0 and D0 == 0 and falls through.
            SSubvectorLoopBegin => {
                let e = self.w.exec();
                // CAST: halves of a u64.
                let (lo, hi) = (e as u32, (e >> 32) as u32);
                if e == 0 {
                    self.branch(next, i.imm, true);
                } else if lo == 0 {
                    self.swrite(i.dst, lo)?;
                } else {
                    self.swrite(i.dst, hi)?;
                    self.w.s[127] = 0;
                }
                Ok(())
            }
            SSubvectorLoopEnd => {
                // CAST: the high half of a u64.
                let hi = (self.w.exec() >> 32) as u32;
                let d = self.s32(i.dst, 0)?;
                if hi != 0 {
                    self.w.s[126] = d;
                } else if d != 0 {
                    self.w.s[127] = d;
                    let lo = self.w.s[126];
                    self.swrite(i.dst, lo)?;
                    self.w.s[126] = 0;
                    self.branch(next, i.imm, true);
                }
                Ok(())
            }
            SBitcmp0B64 | SBitcmp1B64 => {
                let x = self.s64(i.src[0], i.lit)?;
                let bit = x >> (self.s32(i.src[1], i.lit)? & 63) & 1;
                self.w.scc = (bit == 1) == (i.op == SBitcmp1B64);
                Ok(())
            }
            SGetregB32 => {
                // CAST: simm16.
                let imm = i.imm as u32 & 0xffff;
                let (id, off, size) = (imm & 63, (imm >> 6) & 31, ((imm >> 11) & 31) + 1);
                let v = self.hwreg(id)? >> off;
                let mask = if size >= 32 { !0 } else { (1u32 << size) - 1 };
                self.swrite(i.dst, v & mask)
            }
            SSetregB32 | SSetregImm32B32 => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                let imm = i.imm as u32 & 0xffff;
                let (id, off, size) = (imm & 63, (imm >> 6) & 31, ((imm >> 11) & 31) + 1);
                let v = self.s32(i.src[0], i.lit)?;
                let mask = (if size >= 32 { !0 } else { (1u32 << size) - 1 }) << off;
                let put = |r: u32| (r & !mask) | ((v << off) & mask);
                match (self.l.isa, id) {
                    (_, 1) => self.w.mode = put(self.w.mode),
                    (Isa::Gfx9 | Isa::Gfx11, 3) | (Isa::Gfx12, 18) => {
                        self.w.trapsts = put(self.w.trapsts);
                    }
                    // The other registers are read-only to a user wave (or reserved): the
                    // hardware drops the write.
                    _ => {}
                }
                Ok(())
            }
            // MODE.FP_ROUND (3:0) and MODE.FP_DENORM (7:4) from SIMM16[3:0].
            SRoundMode => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                self.w.mode = (self.w.mode & !0xf) | (i.imm as u32 & 0xf);
                Ok(())
            }
            SDenormMode => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                self.w.mode = (self.w.mode & !0xf0) | ((i.imm as u32 & 0xf) << 4);
                Ok(())
            }
            SSendmsg | SSendmsghalt => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                let m = self.message(i.imm as u32 & 0xffff)?;
                if m != Msg::DeallocVgprs {
                    return Err(self.err(&format!("{} {}", i.op.name(), m.why())));
                }
                if i.op == SSendmsghalt {
                    return Err(self.err(
                        "s_sendmsghalt: the wave halts after its message until the host resumes it (a debugger); nothing resumes a simulated wave",
                    ));
                }
                Ok(())
            }
            SSendmsgRtnB32 | SSendmsgRtnB64 => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                let v = match self.message(i.imm as u32)? {
                    // REALTIME: the GPU's constant-rate clock, as s_memrealtime reads it.
                    Msg::RtnRealtime => self.l.clock,
                    // TMA, TBA: the trap handler's addresses; the simulated queues install
                    // none, so both are zero (as s_getreg of TBA/TMA reads).
                    Msg::RtnTma | Msg::RtnTba => 0,
                    // SE_AID_ID: every simulated wave runs on shader engine 0 of die 0.
                    Msg::RtnSeAidId => 0,
                    m => return Err(self.err(&format!("{} {}", i.op.name(), m.why()))),
                };
                if i.op == SSendmsgRtnB64 {
                    self.swrite64(i.dst, v)
                } else {
                    // CAST: a 64-bit value's low half (the guide: only the lower 32 bits).
                    self.swrite(i.dst, v as u32)
                }
            }
            // The debugger's condition bits (STATUS.COND_DBG_SYS/USER) are 0 without a
            // debugger: none of these branches is taken.
            SCbranchCdbgsys | SCbranchCdbguser | SCbranchCdbgsysOrUser
            | SCbranchCdbgsysAndUser => Ok(()),
            // Hints and data for the performance counters and thread trace, which have no
            // architectural effect (no trace is enabled: STATUS.TTRACE_EN is 0); waits for
            // events and idle (every access completes at issue here); s_wakeup wakes waves
            // of the workgroup sleeping in s_sleep, which the simulator never puts to sleep;
            // gfx12's variable sleep, the single-use VGPR hint and its s_waitcnt.
            SIncperflevel | SDecperflevel | STtracedata | STtracedataImm | SWaitEvent
            | SWaitIdle | SWakeup | SSleepVar | SSingleuseVdst => Ok(()),
            // Halt (bit 0): the wave stops until the host resumes it.
            SSethalt if i.imm & 1 == 0 => Ok(()),
            SSethalt => Err(self.err(
                "s_sethalt 1: the wave halts until the host (a debugger) resumes it; nothing resumes a simulated wave",
            )),
            SSetkill if i.imm & 1 == 0 => Ok(()),
            SSetkill => Err(self.err(
                "s_setkill 1: the wave is killed (terminated without completing), as the driver kills the waves of a queue it resets",
            )),
            // End of program after the context-save handler saved the wave: it ends.
            SEndpgmSaved => {
                self.w.state = WaveState::Done;
                Ok(())
            }
            SEndpgmOrderedPsDone => Err(self.err(
                "s_endpgm_ordered_ps_done ends a pixel shader of an ordered POPS section: graphics state a compute wave does not have",
            )),
            SRfeB64 | SRfeRestoreB64 => Err(self.err(&format!(
                "{}: the return from the trap handler runs only in the handler (STATUS.PRIV); the simulator runs no trap handler",
                i.op.name()
            ))),
            SBarrierSignal | SBarrierSignalIsfirst => {
                let first = match self.barrier_id(i)? {
                    -1 => {
                        let first = self.bar.signals == 0;
                        self.bar.signals += 1;
                        first
                    }
                    // The trap barrier (a user wave's signal is ignored) and barrier 0 (NOP).
                    _ => false,
                };
                if i.op == SBarrierSignalIsfirst {
                    self.w.scc = first;
                }
                Ok(())
            }
            // { 9'0, signalCnt[22:16], 5'0, memberCnt[10:4], 3'0, valid[0] }.
            SGetBarrierState => {
                let v = match self.barrier_id(i)? {
                    -1 => (self.bar.signals << 16) | (self.bar.members << 4) | 1,
                    // The trap barrier: the work-group's members, never signalled by a user
                    // wave.
                    -2 => (self.bar.members << 4) | 1,
                    _ => 0,
                };
                self.swrite(i.dst, v)
            }
            SBarrierInit | SBarrierJoin | SWakeupBarrier | SBarrierLeave => {
                Err(self.err(&format!(
                    "{}: a named-barrier operation; RDNA4 has only the work-group (-1) and trap (-2) barriers (RDNA4 ISA 5.6)",
                    i.op.name()
                )))
            }
            // gfx9 VGPR indexing: MODE.GPR_IDX_EN, M0[7:0] the index, M0[15:12] the operands.
            SSetGprIdxOn => {
                let idx = self.s32(i.src[0], i.lit)? & 0xff;
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                let m0 = (self.w.s[124] & !0xf0ff) | idx | ((i.imm as u32 & 15) << 12);
                self.w.s[124] = m0;
                self.w.mode |= MODE_GPR_IDX_EN;
                Ok(())
            }
            SSetGprIdxOff => {
                self.w.mode &= !MODE_GPR_IDX_EN;
                Ok(())
            }
            SSetGprIdxIdx => {
                let idx = self.s32(i.src[0], i.lit)? & 0xff;
                self.w.s[124] = (self.w.s[124] & !0xff) | idx;
                Ok(())
            }
            SSetGprIdxMode => {
                // CAST: simm16's bits (sign-extended by the decoder; the fields read are below bit 16).
                self.w.s[124] = (self.w.s[124] & !0xf000) | ((i.imm as u32 & 15) << 12);
                Ok(())
            }
            // MODE.VSKIP = S0[S1[4:0]].
            SSetvskip => {
                let (x, b) = (self.s32(i.src[0], i.lit)?, self.s32(i.src[1], i.lit)?);
                if x >> (b & 31) & 1 == 1 {
                    self.w.mode |= MODE_VSKIP;
                } else {
                    self.w.mode &= !MODE_VSKIP;
                }
                Ok(())
            }
            SCbranchGFork => {
                let (mask, target) = (self.s64(i.src[0], i.lit)?, self.s64(i.src[1], i.lit)?);
                self.fork(mask, target, next)
            }
            SCbranchIFork => {
                let mask = self.s64(i.src[0], i.lit)?;
                // CAST: sign-extended word offset.
                let target = next.wrapping_add((i64::from(i.imm) * 4) as u64);
                self.fork(mask, target, next)
            }
            // saved_csp = S0; CSP == saved_csp: fall through; else pop {PC, EXEC}.
            SCbranchJoin => {
                let saved = self.s32(i.src[0], i.lit)?;
                let csp = self.w.mode >> CSP_SHIFT;
                if csp != saved {
                    let csp = csp.wrapping_sub(1) & 7;
                    // CAST: CSP is 3 bits.
                    let at = (csp * 4) as usize;
                    let s = &self.w.s;
                    let mask = u64::from(s[at]) | (u64::from(s[at + 1]) << 32);
                    let pc = u64::from(s[at + 2]) | (u64::from(s[at + 3]) << 32);
                    self.w.mode = (self.w.mode & !(7 << CSP_SHIFT)) | (csp << CSP_SHIFT);
                    self.w.set_exec(mask);
                    self.w.pc = pc;
                }
                Ok(())
            }
            _ => Err(self.unsupported(i)),
        }
    }

    /// S_CBRANCH_G_FORK / I_FORK (GCN3 ISA): run the side with fewer lanes first, pushing
    /// the other side's {PC, mask} on the SGPR stack at SGPR[CSP * 4] (mask low, PC high).
    fn fork(&mut self, mask: u64, target: u64, next: u64) -> Result<(), IsaError> {
        let exec = self.w.exec();
        let (pass, fail) = (mask & exec, !mask & exec);
        if pass == exec {
            self.w.pc = target;
            return Ok(());
        }
        if fail == exec {
            return Ok(());
        }
        let csp = self.w.mode >> CSP_SHIFT;
        if csp >= 7 {
            return Err(
                self.err("s_cbranch_*_fork: the fork/join stack (MODE.CSP, 3 bits) overflows")
            );
        }
        let (run, pushed_pc, pushed_mask, pc) = if fail.count_ones() < pass.count_ones() {
            (fail, target, pass, next)
        } else {
            (pass, next, fail, target)
        };
        // CAST: CSP is 3 bits.
        let at = (csp * 4) as usize;
        // CAST: halves of u64s.
        for (k, v) in [
            pushed_mask as u32,
            (pushed_mask >> 32) as u32,
            pushed_pc as u32,
            (pushed_pc >> 32) as u32,
        ]
        .into_iter()
        .enumerate()
        {
            self.w.s[at + k] = v;
        }
        self.w.mode = (self.w.mode & !(7 << CSP_SHIFT)) | ((csp + 1) << CSP_SHIFT);
        self.w.set_exec(run);
        self.w.pc = pc;
        Ok(())
    }

    /// gfx12's barrier number: M0[4:0] when the operand is M0, else the operand's value;
    /// a barrier other than the work-group's (-1), the trap handler's (-2) or the NOP
    /// barrier (0) is a fault (RDNA4 has no named barriers).
    fn barrier_id(&self, i: &Inst) -> Result<i32, IsaError> {
        let id = if i.src[0] == 125 {
            // CAST: 5 bits.
            (self.w.s[125] & 31) as i32
        } else {
            // CAST: the operand as a signed number.
            self.s32(i.src[0], i.lit)? as i32
        };
        if !(-2..=0).contains(&id) {
            return Err(self.err(&format!(
                "{} of barrier {id}: RDNA4 has only the work-group (-1) and trap (-2) barriers and the NOP barrier 0",
                i.op.name()
            )));
        }
        Ok(id)
    }

    /// Hardware register `id` as `s_getreg` reads it (names per family as LLVM's).
    fn hwreg(&self, id: u32) -> Result<u32, IsaError> {
        let isa = self.l.isa;
        let w = &self.w;
        let scratch = self
            .l
            .scratch
            .base
            .wrapping_add(w.scratch_slot.wrapping_mul(self.l.scratch.wave_bytes));
        Ok(match (isa, id) {
            (_, 1) => w.mode,
            // STATUS: SCC (0), EXECZ (9), VCCZ (10), IN_TG (11: a work-group of more than
            // one wave), VALID (16); PRIV, TRAP_EN, TTRACE_EN, HALT and the debugger's
            // condition bits are 0 (no trap handler, trace or debugger).
            (_, 2) => {
                u32::from(w.scc)
                    | u32::from(w.exec() == 0) << 9
                    | u32::from(w.vcc() == 0) << 10
                    | u32::from(self.bar.members > 1) << 11
                    | 1 << 16
            }
            (Isa::Gfx9 | Isa::Gfx11, 3) | (Isa::Gfx12, 18) => w.trapsts,
            // HW_ID (gfx9) / HW_ID1 (gfx11+): the wave's slot (WAVE_ID 3:0 / 4:0); the
            // simulator places every wave on SIMD 0 of CU 0 of shader engine 0, queue 0.
            (Isa::Gfx9, 4) => w.id & 15,
            (Isa::Gfx11 | Isa::Gfx12, 23) => w.id & 31,
            (Isa::Gfx11 | Isa::Gfx12, 24) => 0,
            // GPR_ALLOC: VGPR_SIZE (gfx9 13:8, gfx11+ 15:8) in the granules COMPUTE_PGM_RSRC1
            // programmed (gfx9 8 VGPRs; gfx11+ 8 in wave32, 4 in wave64), bases 0; gfx9's
            // SGPR_SIZE (27:24) in 16-SGPR granules of the 112 a wave holds (s0..s101, VCC,
            // FLAT_SCRATCH, XNACK_MASK and padding).
            (_, 5) => {
                let g = match (isa, w.lanes) {
                    (Isa::Gfx9, _) | (_, 32) => 8,
                    _ => 4,
                };
                // CAST: at most 512 VGPRs.
                let size = (w.nvgpr as u32).div_ceil(g).saturating_sub(1);
                if isa == Isa::Gfx9 {
                    ((size & 63) << 8) | (6 << 24)
                } else {
                    (size & 0xff) << 8
                }
            }
            // LDS_ALLOC: LDS_SIZE (20:12) in COMPUTE_PGM_RSRC2's LDS granules, base 0.
            (_, 6) => ((self.l.lds_bytes / hcq_core::codeobj::LDS_GRANULE_BYTES) & 0x1ff) << 12,
            // IB_STS: outstanding memory counters; every access completes at issue here.
            (_, 7) => 0,
            (Isa::Gfx9 | Isa::Gfx11, 15) => {
                return Err(self.err(
                    "s_getreg of SH_MEM_BASES: the simulated FLAT segment has no LDS or private aperture whose base it could report",
                ));
            }
            // TBA/TMA (gfx9): no trap handler is installed for the simulated queues.
            (Isa::Gfx9, 16..=19) => 0,
            // FLAT_SCR (gfx11) / SCRATCH_BASE (gfx12): this wave's scratch slot.
            (Isa::Gfx11, 20) | (Isa::Gfx12, 20) => {
                // CAST: the low half.
                scratch as u32
            }
            // CAST: halves of a u64.
            (Isa::Gfx11, 21) | (Isa::Gfx12, 21) => (scratch >> 32) as u32,
            // SHADER_CYCLES: the wave's clock (gfx11: 20 bits; gfx12: 64 bits in two).
            // CAST: the counter bits the register holds.
            (Isa::Gfx11, 29) => (w.clock.t & 0xf_ffff) as u32,
            (Isa::Gfx12, 29) => w.clock.t as u32,
            // CAST: the counter bits the register holds.
            (Isa::Gfx12, 30) => (w.clock.t >> 32) as u32,
            // XCC_ID (gfx940+, id 20): the wave's XCC in bits 3:0 (HIP amd_device_functions.h
            // `XCC_ID_XCC_ID_OFFSET` 0, `_SIZE` 4; LLVM SIDefines.h `ID_XCC_ID` 20); the rest 0.
            (Isa::Gfx9, 20) if self.l.gfx940 => self.l.xcc.id & 0xf,
            // Everything else a compute wave may read is 0 here: the performance snapshots (no counters sampled), gfx12's STATE_PRIV,
            // EXCP_FLAG_PRIV, TRAP_CTRL and DVGPR_ALLOC (no trap handler, no dynamic
            // VGPRs), and reserved IDs.
            _ => 0,
        })
    }

    /// The message `imm` names for this family (gfx9: ID 3:0; gfx11+: 7:0).
    fn message(&self, imm: u32) -> Result<Msg, IsaError> {
        let gfx9 = self.l.isa == Isa::Gfx9;
        let id = if gfx9 { imm & 15 } else { imm & 0xff };
        Ok(match (gfx9, id) {
            (_, 1) => Msg::Interrupt,
            (false, 3) => Msg::DeallocVgprs,
            (false, 128) => Msg::RtnDoorbell,
            (false, 129) => Msg::RtnDdid,
            (false, 130) => Msg::RtnTma,
            (false, 131) => Msg::RtnRealtime,
            (false, 132) => Msg::RtnSaveWave,
            (false, 133) => Msg::RtnTba,
            (false, 134) => Msg::RtnTbaToPc,
            (false, 135) if self.l.isa == Isa::Gfx12 => Msg::RtnSeAidId,
            (true, 2 | 3 | 7 | 8 | 9) | (false, 2 | 9) => Msg::Graphics(id),
            (true, 4) => Msg::SaveWave,
            (_, 5 | 6) => Msg::WaveControl(id),
            (true, 10) => Msg::GetDoorbell,
            (true, 15) => Msg::Sysmsg,
            _ => {
                return Err(self.err(&format!(
                    "message {id} (word {imm:#x}) is reserved: the guides define no receiver for it"
                )));
            }
        })
    }
}

/// A message of `s_sendmsg`/`s_sendmsg_rtn` ([`Msg::why`]: why a fault does not deliver it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    /// MSG_DEALLOC_VGPRS (gfx11+): releases the wave's VGPRs early; nothing to model.
    DeallocVgprs,
    /// MSG_INTERRUPT: an interrupt to the driver with M0 as its payload (KFD signals the
    /// event M0 names); the interpreter has no path to the simulated interrupt handler.
    Interrupt,
    /// A geometry/tessellation/pixel-shader message (GS, GS_DONE, ORDERED_PS_DONE,
    /// EARLY_PRIM_DEALLOC, GS_ALLOC_REQ, HS_TESSFACTOR): graphics state a compute wave does
    /// not have.
    Graphics(u32),
    /// MSG_SAVEWAVE (gfx9): the context-save trap handler's report; no trap handler runs.
    SaveWave,
    /// STALL_WAVE_GEN / HALT_WAVES: stop wave launch or halt waves until the host resumes
    /// them (a debugger's messages).
    WaveControl(u32),
    /// MSG_GET_DOORBELL (gfx9): the trap handler's doorbell query (returns in the handler's
    /// TTMPs).
    GetDoorbell,
    /// MSG_SYSMSG (gfx9): privileged system messages (ECC interrupts, register reads, trace).
    Sysmsg,
    /// MSG_RTN_GET_DOORBELL: the doorbell of the queue the dispatch came from, which the
    /// interpreter's launch state does not carry.
    RtnDoorbell,
    /// MSG_RTN_GET_DDID: the draw/dispatch id counter of the queue, which the launch state does
    /// not carry.
    RtnDdid,
    /// MSG_RTN_GET_TMA: the trap handler's memory address.
    RtnTma,
    /// MSG_RTN_GET_REALTIME: the constant-rate clock.
    RtnRealtime,
    /// MSG_RTN_SAVE_WAVE: the context-save handler's report; no trap handler runs.
    RtnSaveWave,
    /// MSG_RTN_GET_TBA: the trap handler's base address.
    RtnTba,
    /// MSG_RTN_GET_TBA_TO_PC: enters the trap handler at TBA; no trap handler runs.
    RtnTbaToPc,
    /// MSG_RTN_GET_SE_AID_ID (gfx12): the shader engine and die of the wave.
    RtnSeAidId,
}

impl Msg {
    /// The message's name and why the simulator does not deliver it (a fault's text).
    fn why(self) -> String {
        match self {
            Msg::DeallocVgprs => "MSG_DEALLOC_VGPRS".into(),
            Msg::Interrupt => "MSG_INTERRUPT: an interrupt to the driver with M0 as its payload (KFD signals the event it names); the interpreter has no path to the simulated interrupt handler".into(),
            Msg::Graphics(id) => format!("message {id}: a geometry, tessellation or pixel-shader message; a compute wave has no graphics pipeline to receive it"),
            Msg::SaveWave => "MSG_SAVEWAVE: the context-save trap handler's report; the simulator runs no trap handler".into(),
            Msg::WaveControl(id) => format!("message {id} (STALL_WAVE_GEN/HALT_WAVES): stops wave launch or halts waves until the host resumes them, a debugger's message"),
            Msg::GetDoorbell => "MSG_GET_DOORBELL: the trap handler's doorbell query (answered in its TTMPs); the simulator runs no trap handler".into(),
            Msg::Sysmsg => "MSG_SYSMSG: a privileged system message (ECC interrupt, register read, trace PC)".into(),
            Msg::RtnDoorbell => "MSG_RTN_GET_DOORBELL: the doorbell of the dispatch's queue, which the interpreter's launch state does not carry".into(),
            Msg::RtnDdid => "MSG_RTN_GET_DDID: the queue's draw/dispatch id counter, which the interpreter's launch state does not carry".into(),
            Msg::RtnTma => "MSG_RTN_GET_TMA".into(),
            Msg::RtnRealtime => "MSG_RTN_GET_REALTIME".into(),
            Msg::RtnSaveWave => "MSG_RTN_SAVE_WAVE: the context-save trap handler's report; the simulator runs no trap handler".into(),
            Msg::RtnTba => "MSG_RTN_GET_TBA".into(),
            Msg::RtnTbaToPc => "MSG_RTN_GET_TBA_TO_PC: enters the trap handler at TBA; the simulator runs no trap handler".into(),
            Msg::RtnSeAidId => "MSG_RTN_GET_SE_AID_ID".into(),
        }
    }
}
