//! The fast path's memory forms: whole-wave GLOBAL/SCRATCH dword accesses and DS dword
//! loads and stores (see the parent module).

use super::*;

/// A FLAT-family dword load or store (`global_*_b32..b128`, `scratch_*_b32..b128`) resolved
/// at decode time: the fast forms of the general path's whole-wave accesses (`memory.rs`,
/// `vmem`): global lanes at consecutive addresses, or scratch lanes at one private offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mem {
    pub(super) load: bool,
    pub(super) scratch: bool,
    /// Dwords per lane (1..=4).
    pub(super) dwords: u8,
    /// The data VGPR row (load destination, store source).
    pub(super) data: u16,
    /// The address VGPR row (global: the 64-bit pair's low row, or the 32-bit offset with
    /// SADDR); `None`: scratch without a VGPR address.
    pub(super) vaddr: Option<u16>,
    /// The SADDR operand code, [`NONE`] when off.
    pub(super) saddr: u16,
    /// The instruction's signed offset.
    pub(super) off: i32,
}

/// The pre-resolved form of a memory instruction `i`, when it has one.
pub(super) fn classify_mem(l: &Launch, i: &Inst) -> Option<Mem> {
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
    pub(super) fn fast_mem<const N: usize>(&mut self, m: &Mem) -> Option<Result<(), IsaError>> {
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
        // Consecutive lanes (one block) first, without building the lanes' addresses; else
        // every lane's address (`global_addrs`: SADDR + the 32-bit VGPR offset, or the VGPR
        // pair; then the offset, wrapping) for the gather.
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
                let mut addrs = [0u64; N];
                for (o, x) in addrs.iter_mut().zip(v) {
                    *o = base.wrapping_add(u64::from(*x)).wrapping_add(off);
                }
                return self.gather::<N>(m, &addrs, data);
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
                let mut addrs = [0u64; N];
                for ((o, x), y) in addrs.iter_mut().zip(lo).zip(hi) {
                    *o = (u64::from(*x) | (u64::from(*y) << 32)).wrapping_add(off);
                }
                return self.gather::<N>(m, &addrs, data);
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

    /// The access of `m` at `addrs`, lanes not one block: each lane's dwords at its address,
    /// lane after lane as the general path (`vmem`) accesses them, through one call of the
    /// memory's gather or scatter ([`Memory::read_lanes`], [`Memory::write_lanes`]). An
    /// access that faults returns `None`: the general path runs it again, from the same
    /// registers and (a store's earlier lanes rewritten with the same bytes) the same memory,
    /// and so leaves its registers and fault exactly.
    fn gather<const N: usize>(
        &mut self,
        m: &Mem,
        addrs: &[u64; N],
        data: usize,
    ) -> Option<Result<(), IsaError>> {
        let dw = usize::from(m.dwords);
        let mut buf = [0u32; 256];
        let words = buf.get_mut(..N * dw)?;
        let rows = self.w.v.get_mut(data * N..(data + dw) * N)?;
        if m.load {
            self.mem.read_lanes(addrs, words).ok()?;
            for (k, row) in rows.chunks_exact_mut(N).enumerate() {
                for (x, c) in row.iter_mut().zip(words.chunks_exact(dw)) {
                    *x = c[k];
                }
            }
            return Some(Ok(()));
        }
        for (k, row) in rows.chunks_exact(N).enumerate() {
            for (x, c) in row.iter().zip(words.chunks_exact_mut(dw)) {
                c[k] = *x;
            }
        }
        self.mem.write_lanes(addrs, words).ok()?;
        Some(Ok(()))
    }

    /// Scratch rows at private offset `base` for every lane: per dword, the bounds checks of
    /// the wave's first and last lane, then one access of the row.
    pub(super) fn scratch_rows<const N: usize>(
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
    pub(super) load: bool,
    /// Dwords per lane (1..=4).
    pub(super) dwords: u8,
    /// The address VGPR row.
    pub(super) addr: u16,
    /// The data VGPR row (load destination, store source).
    pub(super) data: u16,
    /// The instruction's offset (offset0).
    pub(super) off: u32,
}

/// The pre-resolved form of a DS instruction `i`, when it has one.
pub(super) fn classify_lds(l: &Launch, i: &Inst) -> Option<Lds> {
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
    pub(super) fn fast_lds<const N: usize>(&mut self, d: &Lds) -> Option<Result<(), IsaError>> {
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
