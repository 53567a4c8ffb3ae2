//! The scalar memory unit: SMEM loads (through the K$), stores, scalar atomics and the
//! cache controls.

use super::*;

impl Exec<'_, '_> {
    pub(super) fn smem(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        // (dwords or bytes, through a V#, a store)
        let (n, buffer, store) = match i.op {
            SLoadB32 => (4, false, false),
            SLoadB64 => (8, false, false),
            SLoadB96 => (12, false, false),
            SLoadB128 => (16, false, false),
            SLoadB256 => (32, false, false),
            SLoadB512 => (64, false, false),
            SLoadI8 | SLoadU8 => (1, false, false),
            SLoadI16 | SLoadU16 => (2, false, false),
            SBufferLoadB32 => (4, true, false),
            SBufferLoadB64 => (8, true, false),
            SBufferLoadB96 => (12, true, false),
            SBufferLoadB128 => (16, true, false),
            SBufferLoadB256 => (32, true, false),
            SBufferLoadB512 => (64, true, false),
            SBufferLoadI8 | SBufferLoadU8 => (1, true, false),
            SBufferLoadI16 | SBufferLoadU16 => (2, true, false),
            SStoreB32 => (4, false, true),
            SStoreB64 => (8, false, true),
            SStoreB128 => (16, false, true),
            SBufferStoreB32 => (4, true, true),
            SBufferStoreB64 => (8, true, true),
            SBufferStoreB128 => (16, true, true),
            SAtomic | SBufferAtomic => (
                if i.sub & 32 != 0 { 8 } else { 4 },
                i.op == SBufferAtomic,
                false,
            ),
            SGl1Inv | SDcacheInv | SDcacheInvVol => {
                self.kcache.lines.clear();
                return Ok(());
            }
            // Stores write through (the cache holds no dirty lines to write back or discard);
            // the ATC and the prefetches change no state a program can read.
            SDcacheWb | SDcacheWbVol | SDcacheDiscard | SDcacheDiscardX2 | SAtcProbe
            | SAtcProbeBuffer | SPrefetchInst | SPrefetchInstPcRel | SPrefetchData
            | SPrefetchDataPcRel | SBufferPrefetchData => return Ok(()),
            SMemtime | SMemrealtime => {
                let t = self.l.clock;
                return self.swrite64(i.dst, t);
            }
            _ => return Err(self.unsupported(i)),
        };
        let soff = if i.src[1] != NONE {
            u64::from(self.s32(i.src[1], 0)?)
        } else {
            0
        };
        // gfx9 S_SCRATCH_LOAD/STORE (`sub` bit 6): CDNA3 ISA, "if the offset is specified as
        // an SGPR, the SGPR contains an UNSIGNED 64-byte offset, consistent with other scratch
        // operations"; the immediate stays a signed byte offset from SBASE (the wave's
        // scratch base, e.g. FLAT_SCRATCH).
        let soff = if i.enc == Enc::Smem
            && i.sub & 0x40 != 0
            && !matches!(i.op, SAtomic | SBufferAtomic)
        {
            soff.wrapping_mul(64)
        } else {
            soff
        };
        // CAST: sign-extended offset.
        let off = (i.imm as i64 as u64).wrapping_add(soff);
        let va = if buffer {
            // The V#'s 48-bit base; NUM_RECORDS bytes are in range.
            let r = i.src[0];
            let (w0, w1, w2) = (self.s32(r, 0)?, self.s32(r + 1, 0)?, self.s32(r + 2, 0)?);
            let base = u64::from(w0) | (u64::from(w1 & 0xffff) << 32);
            if off.wrapping_add(n) > u64::from(w2) {
                return Err(self.err(&format!(
                    "{} at buffer offset {off:#x} ({n} bytes) beyond the V#'s NUM_RECORDS {w2:#x}",
                    i.op.name()
                )));
            }
            base.wrapping_add(off)
        } else {
            self.s64(i.src[0], 0)?.wrapping_add(off)
        };
        // Dword accesses ignore the address's low two bits.
        let va = if n >= 4 { va & !3 } else { va };
        // CAST: at most 64 bytes.
        let n = n as usize;
        let reg = if store || matches!(i.op, SAtomic | SBufferAtomic) {
            i.src[2]
        } else {
            i.dst
        };
        // A cmpswap's data is twice the access (the data, then the compare value).
        let cmpswap = matches!(i.op, SAtomic | SBufferAtomic) && i.sub & 31 == 1;
        let regs = n.div_ceil(4) * if cmpswap { 2 } else { 1 };
        // SDATA is an SGPR range, or VCC (106..107) or trap temporaries (108..123) whole: LLVM
        // loads a 64-bit uniform condition straight into VCC (`s_load_b64 vcc, ...`).
        let end = usize::from(reg) + regs;
        if !(end <= 106 || (usize::from(reg) >= 106 && end <= 124)) {
            return Err(self.err(&format!(
                "{} names s{}..s{}, beyond the SGPRs",
                i.op.name(),
                reg,
                usize::from(reg) + regs - 1
            )));
        }
        let r0 = usize::from(reg);
        if store {
            let mut buf = [0u8; 16];
            for k in 0..n / 4 {
                buf[4 * k..4 * k + 4].copy_from_slice(&self.w.s[r0 + k].to_le_bytes());
            }
            return self.kcache.write(self.mem, va, &buf[..n]);
        }
        if matches!(i.op, SAtomic | SBufferAtomic) {
            return self.satomic(i, va, n, r0);
        }
        let mut buf = [0u8; 64];
        if let Err(e) = self.kcache.read(self.mem, va, &mut buf[..n]) {
            self.stale_tail(e, va, &mut buf[..n])?;
        }
        if n < 4 {
            let v = match i.op {
                SLoadI8 | SBufferLoadI8 => buf[0] as i8 as i32 as u32,
                SLoadU8 | SBufferLoadU8 => u32::from(buf[0]),
                SLoadI16 | SBufferLoadI16 => i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32,
                _ => u32::from(u16::from_le_bytes([buf[0], buf[1]])),
            };
            self.w.s[r0] = v;
            return Ok(());
        }
        for k in 0..n / 4 {
            let v =
                u32::from_le_bytes([buf[k * 4], buf[k * 4 + 1], buf[k * 4 + 2], buf[k * 4 + 3]]);
            self.w.s[r0 + k] = v;
        }
        Ok(())
    }

    /// A scalar load of `buf.len()` bytes at `va` that failed with `e`: when its first dwords
    /// read as flushed and only later ones were written by the CPU after the last HDP flush
    /// ([`Space::StaleTail`]: a widened kernarg load running into the next launch's
    /// arguments), the load completes with what the GPU sees of them, as a finding (a strict
    /// run faults with `e`). Anything else is `e`.
    pub(super) fn stale_tail(
        &mut self,
        e: IsaError,
        va: u64,
        buf: &mut [u8],
    ) -> Result<(), IsaError> {
        let IsaError::Vm(v) = &e else { return Err(e) };
        // The first stale dword, past at least one that is not.
        let head = v.va.wrapping_sub(va) & !3;
        // CAST: usize -> u64 widens.
        if v.kind != crate::vm::VmFaultKind::HdpStale || head == 0 || head >= buf.len() as u64 {
            return Err(e);
        }
        if self.w.strict {
            return Err(e);
        }
        // CAST: below 64.
        let (clean, tail) = buf.split_at_mut(head as usize);
        self.mem
            .read(va, clean, Access::Read)
            .map_err(IsaError::Vm)?;
        self.mem
            .read_visible(va.wrapping_add(head), tail)
            .map_err(IsaError::Vm)?;
        // CAST: at most 64 bytes.
        let bytes = tail.len() as u32;
        self.tolerate(crate::isa::Space::StaleTail, v.va, bytes, 0, 1);
        Ok(())
    }

    /// A scalar atomic (gfx9 S_ATOMIC_*, S_BUFFER_ATOMIC_*) of `n` bytes at `va` with its
    /// data at SGPR `r` (cmpswap: the data, then the compare value): memory becomes the
    /// operation's result; with GLC the old value returns to the data SGPRs.
    pub(super) fn satomic(
        &mut self,
        i: &Inst,
        va: u64,
        n: usize,
        r: usize,
    ) -> Result<(), IsaError> {
        if va % n as u64 != 0 {
            return Err(self.err(&format!("misaligned {n}-byte scalar atomic at {va:#x}")));
        }
        let mut b = [0u8; 8];
        self.mem
            .read(va, &mut b[..n], Access::Read)
            .map_err(IsaError::Vm)?;
        let get = |k: usize| -> u64 {
            let lo = u64::from(self.w.s[r + k * n / 4]);
            if n == 8 {
                lo | (u64::from(self.w.s[r + k * 2 + 1]) << 32)
            } else {
                lo
            }
        };
        let (old, x) = (u64::from_le_bytes(b), get(0));
        let bits = 8 * n as u32;
        // Signed views of the width's bits.
        let sx = |v: u64| ((v << (64 - bits)) as i64) >> (64 - bits);
        let new = match i.sub & 31 {
            0 => x,
            1 => {
                if old == get(1) {
                    x
                } else {
                    old
                }
            }
            2 => old.wrapping_add(x),
            3 => old.wrapping_sub(x),
            // CAST: the signed minimum's bits.
            4 => sx(old).min(sx(x)) as u64,
            5 => old.min(x),
            // CAST: the signed maximum's bits.
            6 => sx(old).max(sx(x)) as u64,
            7 => old.max(x),
            8 => old & x,
            9 => old | x,
            10 => old ^ x,
            11 => {
                if old >= x {
                    0
                } else {
                    old + 1
                }
            }
            12 => {
                if old == 0 || old > x {
                    x
                } else {
                    old - 1
                }
            }
            _ => return Err(self.unsupported(i)),
        };
        self.kcache.write(self.mem, va, &new.to_le_bytes()[..n])?;
        if i.dst != NONE {
            for k in 0..n / 4 {
                // CAST: dwords of the old value.
                self.w.s[r + k] = (old >> (32 * k)) as u32;
            }
        }
        Ok(())
    }
}
