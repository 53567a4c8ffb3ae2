//! Scalar encodings: SOPP, SOPK, SOP1/SOP2/SOPC, SMEM.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Printer<'_> {
    /// SOPP: the mnemonic and its immediate as LLVM formats it (waits, delays, messages, branches).
    pub(super) fn sopp(&self) -> String {
        let i = self.i;
        let Ctx { gfx9, imm16, .. } = self.ctx();
        let mut s = String::new();
        let name = i.op.name();
        s.push_str(name);
        match i.op {
            Op::SWaitcnt => {
                let _ = write!(
                    s,
                    " {}",
                    if gfx9 {
                        waitcnt9(imm16)
                    } else {
                        waitcnt(imm16)
                    }
                );
            }
            Op::SDelayAlu => {
                let _ = write!(s, " {}", delay_alu(imm16));
            }
            Op::SSendmsg | Op::SSendmsghalt => {
                let _ = write!(s, " {}", sendmsg(self.gfx(), imm16));
            }
            Op::SWaitcntDepctr | Op::SWaitAlu => {
                let _ = write!(s, " {}", depctr(imm16));
            }
            Op::SSetGprIdxMode => {
                let _ = write!(s, " {}", gpr_idx(imm16 & 15));
            }
            Op::SBarrierWait | Op::SDenormMode => {
                let _ = write!(s, " {}", imm_text(imm16));
            }
            Op::SEndpgm
            | Op::SBarrier
            | Op::SCodeEnd
            | Op::SIcacheInv
            | Op::SEndpgmSaved
            | Op::SEndpgmOrderedPsDone
            | Op::STtracedata
            | Op::SWaitIdle
            | Op::SWakeup
            | Op::SSetGprIdxOff
            | Op::SBarrierLeave => {}
            Op::SClause
            | Op::SWaitLoadcnt
            | Op::SWaitStorecnt
            | Op::SWaitSamplecnt
            | Op::SWaitBvhcnt
            | Op::SWaitExpcnt
            | Op::SWaitDscnt
            | Op::SWaitKmcnt
            | Op::SWaitLoadcntDscnt
            | Op::SWaitStorecntDscnt
            | Op::SSetInstPrefetchDistance
            | Op::SRoundMode
            | Op::SWaitEvent
            | Op::STtracedataImm
            | Op::SSingleuseVdst => {
                let _ = write!(s, " {imm16:#x}");
            }
            _ => {
                // Branch offsets print as the unsigned 16-bit field.
                let _ = write!(s, " {imm16}");
            }
        }
        s
    }

    /// SOPK: destination and 16-bit immediate (hardware registers, call offsets, versions).
    pub(super) fn sopk(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { imm16, dw, .. } = self.ctx();
        let name = self.name(i.op);
        let reg = |code: u16, n: u16| operand(code, n, 0, false, wave64);
        match i.op {
            Op::SGetregB32 => format!(
                "{name} {}, {}",
                reg(i.dst, 1),
                hwreg(self.gfx(), self.gfx940, imm16)
            ),
            Op::SSetregB32 => format!(
                "{name} {}, {}",
                hwreg(self.gfx(), self.gfx940, imm16),
                reg(i.src[0], 1)
            ),
            // The literal prints as an inline constant would where it is one (-16..=64).
            Op::SSetregImm32B32 => {
                // CAST: the literal's bits as a signed number.
                let v = i.lit as i32;
                let lit = if (-16..=64).contains(&v) {
                    v.to_string()
                } else {
                    format!("{:#x}", i.lit)
                };
                format!("{name} {}, {lit}", hwreg(self.gfx(), self.gfx940, imm16))
            }
            Op::SVersion => format!("{name} {}", version(imm16)),
            // Branch-like offsets print as the unsigned 16-bit field.
            Op::SCallB64 | Op::SSubvectorLoopBegin | Op::SSubvectorLoopEnd => {
                format!("{name} {}, {imm16}", reg(i.dst, dw))
            }
            Op::SCbranchIFork => format!("{name} {}, {imm16}", reg(i.src[0], 2)),
            _ => format!("{name} {}, {imm16:#x}", reg(i.dst, 1)),
        }
    }

    /// The family number the operand printers key on (9, 11, 12).
    pub(super) fn gfx(&self) -> u32 {
        match self.isa {
            Isa::Gfx9 => 9,
            Isa::Gfx11 => 11,
            Isa::Gfx12 => 12,
        }
    }

    /// SOP1/SOP2/SOPC: destination and sources (gfx12 float compares named by condition).
    pub(super) fn salu(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { dw, .. } = self.ctx();
        let name = |op: Op| self.name(op);
        let op = |k: usize| self.op(k);
        let mut s = String::new();
        match i.op {
            Op::SCmpF32 | Op::SCmpF16 => {
                let _ = write!(
                    s,
                    "s_cmp_{}_{}",
                    FLOAT_CONDS[usize::from(i.sub & 15)],
                    &i.op.name()[8..]
                );
            }
            op => s.push_str(name(op)),
        }
        let mut ops = Vec::new();
        match i.op {
            Op::SSendmsgRtnB32 | Op::SSendmsgRtnB64 => {
                // CAST: the 8-bit message field.
                let m = sendmsg(self.gfx(), i.imm as u32);
                let _ = write!(s, " {}, {m}", operand(i.dst, dw, 0, false, wave64));
                return s;
            }
            Op::SSetGprIdxOn => {
                // CAST: the 4-bit mode field.
                let _ = write!(s, " {}, {}", op(0), gpr_idx(i.imm as u32));
                return s;
            }
            _ => {}
        }
        if i.dst != NONE {
            ops.push(operand(i.dst, dw, 0, false, wave64));
        }
        // gfx12's s_fmaak/s_fmamk name a third source (s_fmac's is its destination).
        let n = if matches!(i.op, Op::SFmaakF32 | Op::SFmamkF32) {
            3
        } else {
            2
        };
        for k in 0..n {
            if i.src[k] != NONE {
                ops.push(op(k));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        s
    }

    /// SMEM: destination, base pair, offset register or immediate, cache bits.
    pub(super) fn smem(&self) -> String {
        use Op::*;
        let (i, wave64) = (self.i, self.wave64);
        let Ctx { gfx9, gfx12, .. } = self.ctx();
        let mut s = String::new();
        // Scalar atomics: the operation's name from Inst::sub.
        const ATOMICS: [&str; 13] = [
            "swap", "cmpswap", "add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor",
            "inc", "dec",
        ];
        let x2 = i.sub & 32 != 0;
        match i.op {
            SAtomic | SBufferAtomic => {
                let what = ATOMICS.get(usize::from(i.sub & 31)).copied().unwrap_or("?");
                let buf = if i.op == SBufferAtomic { "buffer_" } else { "" };
                let _ = write!(s, "s_{buf}atomic_{what}{}", if x2 { "_x2" } else { "" });
            }
            // gfx9's scalar scratch accesses (`sub` bit 6).
            op if i.sub & 0x40 != 0 => {
                let _ = write!(s, "s_scratch_{}", self.name(op).trim_start_matches("s_"));
            }
            op => s.push_str(self.name(op)),
        }
        let (dn, bn) = match i.op {
            SLoadB64 | SMemtime | SMemrealtime | SBufferLoadB64 | SStoreB64 | SBufferStoreB64 => {
                (2, 2)
            }
            SLoadB96 | SBufferLoadB96 => (3, 2),
            SLoadB128 | SBufferLoadB128 | SStoreB128 | SBufferStoreB128 => (4, 2),
            SLoadB256 | SBufferLoadB256 => (8, 2),
            SLoadB512 | SBufferLoadB512 => (16, 2),
            SAtomic | SBufferAtomic => {
                let n = if x2 { 2 } else { 1 };
                (if i.sub & 31 == 1 { 2 * n } else { n }, 2)
            }
            _ => (1, 2),
        };
        let bn = if matches!(
            i.op,
            SBufferLoadB32
                | SBufferLoadB64
                | SBufferLoadB96
                | SBufferLoadB128
                | SBufferLoadB256
                | SBufferLoadB512
                | SBufferLoadI8
                | SBufferLoadU8
                | SBufferLoadI16
                | SBufferLoadU16
                | SBufferStoreB32
                | SBufferStoreB64
                | SBufferStoreB128
                | SBufferAtomic
                | SAtcProbeBuffer
                | SBufferPrefetchData
        ) {
            4
        } else {
            bn
        };
        let prefetch = matches!(
            i.op,
            SPrefetchInst
                | SPrefetchInstPcRel
                | SPrefetchData
                | SPrefetchDataPcRel
                | SBufferPrefetchData
        );
        let mut ops = Vec::new();
        if matches!(i.op, SAtcProbe | SAtcProbeBuffer) {
            ops.push(format!("{}", i.sub));
        } else if i.src[2] != NONE {
            ops.push(operand(i.src[2], dn, 0, false, wave64));
        } else if i.dst != NONE {
            ops.push(operand(i.dst, dn, 0, false, wave64));
        }
        if i.src[0] != NONE {
            ops.push(operand(i.src[0], bn, 0, false, wave64));
        }
        if i.src[0] != NONE || prefetch {
            let soff = i.src[1];
            if prefetch {
                ops.push(format!("{:#x}", i.imm));
                ops.push(operand(soff, 1, 0, false, wave64));
                ops.push(format!("{}", i.sub));
            } else if soff != 124 && soff != NONE {
                let mut t = operand(soff, 1, 0, false, wave64);
                if i.imm != 0 {
                    let _ = write!(t, " offset:{:#x}", i.imm);
                }
                ops.push(t);
            } else if i.imm == 0 && !gfx12 && !gfx9 {
                ops.push("null".into());
            } else {
                ops.push(format!("{:#x}", i.imm));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        if i.flags & 1 != 0 {
            s.push_str(" glc");
        }
        if i.flags & 4 != 0 {
            s.push_str(" dlc");
        }
        s
    }
}
