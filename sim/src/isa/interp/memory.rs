//! Vector memory: MUBUF through the buffer descriptor, FLAT/GLOBAL/SCRATCH addresses and
//! accesses through the GPU page table.

use super::*;
use crate::isa::Space;

/// Whether lane `l`'s address is `a[0] + l * size` for every lane: one straight pass (no early
/// exit, so it vectorises).
fn consecutive(a: &[u64], size: u64) -> bool {
    let base = a.first().copied().unwrap_or(0);
    let mut ok = true;
    let mut want = base;
    for x in a {
        ok &= *x == want;
        want = want.wrapping_add(size);
    }
    ok
}

/// Bytes one lane of a FLAT-family or MUBUF operation accesses.
pub(super) fn vmem_size(op: Op) -> usize {
    use Op::*;
    match op {
        MLoadU8 | MLoadI8 | MStoreB8 | MStoreD16HiB8 => 1,
        MLoadD16U8 | MLoadD16I8 | MLoadD16HiU8 | MLoadD16HiI8 => 1,
        MLoadU16 | MLoadI16 | MStoreB16 | MLoadD16B16 | MLoadD16HiB16 | MStoreD16HiB16 => 2,
        MLoadB64 | MStoreB64 | MAtomicAddU64 | MAtomicSwapB64 => 8,
        MAtomicCmpswapB64 | MAtomicAddF64 | MAtomicSubU64 | MAtomicMinI64 | MAtomicMinU64
        | MAtomicMaxI64 | MAtomicMaxU64 | MAtomicAndB64 | MAtomicOrB64 | MAtomicXorB64
        | MAtomicIncU64 | MAtomicDecU64 | MAtomicMinF64 | MAtomicMaxF64 => 8,
        MLoadB96 | MStoreB96 => 12,
        MLoadB128 | MStoreB128 => 16,
        _ => 4,
    }
}

/// Whether `op` is a plain dword load or store (splittable into dwords).
pub(super) fn vmem_plain(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        MLoadB32 | MLoadB64 | MLoadB96 | MLoadB128 | MStoreB32 | MStoreB64 | MStoreB96 | MStoreB128
    )
}

/// f32 -> bfloat16 bits, round to nearest even (NaN stays a quiet NaN).
fn f32_to_bf16(f: f32) -> u32 {
    let b = f.to_bits();
    if f.is_nan() {
        return (b >> 16) | 0x40;
    }
    let round = 0x7fff + ((b >> 16) & 1);
    (b.wrapping_add(round)) >> 16
}

impl Exec<'_, '_> {
    /// Per-lane address of a FLAT/GLOBAL instruction.
    pub(super) fn global_addrs(
        &self,
        i: &Inst,
        out: &mut [u64; MAX_LANES],
    ) -> Result<(), IsaError> {
        // CAST: sign-extended offset.
        let off = i.imm as i64 as u64;
        if i.src[2] != NONE {
            let base = self.s64(i.src[2], 0)?;
            let mut v = [0u32; MAX_LANES];
            self.lanes32(i, 0, Width::B32, &mut v)?;
            for (o, x) in out.iter_mut().zip(&v).take(self.w.lanes) {
                *o = base.wrapping_add(u64::from(*x)).wrapping_add(off);
            }
        } else {
            self.lanes64(i, 0, Width::B64, out)?;
            for o in out.iter_mut().take(self.w.lanes) {
                *o = o.wrapping_add(off);
            }
        }
        Ok(())
    }

    /// Lane `l`'s `size / 4` dwords at `bytes[l * size..]` into VGPR rows from offset `d`.
    fn rows_from_bytes(&mut self, d: usize, bytes: &[u8], size: usize) -> Result<(), IsaError> {
        let n = self.w.lanes;
        if size == 4 {
            let row = self
                .w
                .v
                .get_mut(d..d + n)
                .ok_or_else(|| self.at.msg("VGPR out of range"))?;
            for (x, c) in row.iter_mut().zip(bytes.chunks_exact(4)) {
                *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            return Ok(());
        }
        for k in 0..size / 4 {
            let row = self
                .w
                .v
                .get_mut(d + k * n..d + (k + 1) * n)
                .ok_or_else(|| self.at.msg("VGPR out of range"))?;
            for (x, c) in row.iter_mut().zip(bytes.chunks_exact(size)) {
                *x = u32::from_le_bytes([c[4 * k], c[4 * k + 1], c[4 * k + 2], c[4 * k + 3]]);
            }
        }
        Ok(())
    }

    /// Per-lane private (scratch) offset of a SCRATCH instruction.
    pub(super) fn scratch_addrs(
        &self,
        i: &Inst,
        out: &mut [u64; MAX_LANES],
    ) -> Result<(), IsaError> {
        // CAST: sign-extended offset.
        let mut base = i.imm as i64 as u64;
        if i.src[2] != NONE {
            base = base.wrapping_add(u64::from(self.s32(i.src[2], 0)?));
        }
        let mut v = [0u32; MAX_LANES];
        if i.src[0] != NONE {
            self.lanes32(i, 0, Width::B32, &mut v)?;
        }
        for (o, x) in out.iter_mut().zip(&v).take(self.w.lanes) {
            *o = base.wrapping_add(u64::from(*x));
        }
        Ok(())
    }

    /// The GPU address of private byte `off` of `lane` (swizzled per dword across the wave,
    /// as the hardware lays out scratch), after the bounds check.
    /// [`Self::scratch_va`]'s fault: the access leaves the wave's slot.
    #[cold]
    #[inline(never)]
    fn scratch_range_err(&self, off: u64, size: u64, per_lane: u64) -> IsaError {
        self.err(&format!(
            "scratch access of {size} bytes at private offset {off:#x} beyond the wave's slot ({per_lane} bytes per lane from COMPUTE_TMPRING_SIZE)"
        ))
    }

    #[inline]
    pub(super) fn scratch_va(&self, off: u64, size: u64, lane: usize) -> Result<u64, IsaError> {
        let sc = &self.l.scratch;
        let lanes = self.w.lanes as u64;
        // A wave has 32 or 64 lanes: a shift, not a division, per access.
        let per_lane = if lanes.is_power_of_two() {
            sc.wave_bytes >> lanes.trailing_zeros()
        } else {
            sc.wave_bytes / lanes.max(1)
        };
        if sc.wave_bytes == 0 || off.checked_add(size).is_none_or(|e| e > per_lane) {
            return Err(self.scratch_range_err(off, size, per_lane));
        }
        let wave_base = sc
            .base
            .wrapping_add(self.w.scratch_slot.wrapping_mul(sc.wave_bytes));
        Ok(wave_base.wrapping_add((off / 4) * 4 * lanes + lane as u64 * 4 + off % 4))
    }

    pub(super) fn flat(&mut self, i: &Inst) -> Result<(), IsaError> {
        if matches!(i.op, Op::GlobalInv | Op::GlobalWb | Op::GlobalWbinv) {
            return Ok(());
        }
        let mut addr = [0u64; MAX_LANES];
        if matches!(i.op, Op::MLoadAddtidB32 | Op::MStoreAddtidB32) {
            // RDNA3 ISA, GLOBAL_LOAD/STORE_ADDTID_B32: address = SADDR (0 with off) + offset
            // + laneID * 4; a dword load or store.
            let base = if i.src[2] == NONE {
                0
            } else {
                self.s64(i.src[2], 0)?
            };
            for (l, a) in addr.iter_mut().enumerate() {
                // CAST: sign-extended offset.
                *a = base
                    .wrapping_add(i.imm as i64 as u64)
                    .wrapping_add(4 * l as u64);
            }
            let mut j = *i;
            j.op = if i.op == Op::MLoadAddtidB32 {
                Op::MLoadB32
            } else {
                Op::MStoreB32
            };
            return self.vmem(&j, &addr, false);
        }
        let scratch = i.sub == SEG_SCRATCH;
        if scratch {
            self.scratch_addrs(i, &mut addr)?;
        } else {
            debug_assert!(i.sub == SEG_GLOBAL || i.sub == SEG_FLAT);
            self.global_addrs(i, &mut addr)?;
        }
        if i.flags & 0x80 != 0 {
            return self.lds_dma(i, &addr, scratch, None);
        }
        match i.op {
            Op::MLoadBlock | Op::MStoreBlock => self.block(i, &addr, scratch),
            Op::MAtomicOrderedAddB64 => self.ordered_add(i, &addr),
            Op::MLoadTrB128 | Op::MLoadTrB64 => self.load_tr(i, &addr),
            _ if scratch && !self.w.strict => self.scratch_in_range(i, &addr),
            _ => self.vmem(i, &addr, scratch),
        }
    }

    /// A SCRATCH access of a run that is not strict: the lanes whose access leaves the lane's
    /// private size (the wave's slot over its lanes) read 0 and drop their write, each a
    /// finding (`oor.rs`); the others access the slot (a strict run's [`Self::scratch_va`]
    /// faults instead).
    fn scratch_in_range(&mut self, i: &Inst, addr: &[u64; MAX_LANES]) -> Result<(), IsaError> {
        let lanes = self.w.lanes as u64;
        let per_lane = self.l.scratch.wave_bytes / lanes.max(1);
        let size = vmem_size(i.op) as u64;
        let exec = self.w.exec();
        let (mut ok, mut bad) = (0u64, None);
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            if addr[l].checked_add(size).is_some_and(|e| e <= per_lane) {
                ok |= 1 << l;
            } else if bad.is_none() {
                bad = Some(addr[l]);
            }
        }
        let Some(first) = bad else {
            return self.vmem(i, addr, true);
        };
        let n = u64::from((exec & !ok).count_ones());
        // CAST: at most 16 bytes.
        self.tolerate(Space::Scratch, first, size as u32, per_lane, n);
        self.in_range_only(i, ok, None, |x| x.vmem(i, addr, true))
    }

    /// RDNA4 ISA 11.5 "Block VGPR Load & Store" (GLOBAL/SCRATCH_LOAD/STORE_BLOCK): for n in
    /// 0..32, when M0[n] is set, VGPR VDST/VDATA + n moves to or from the lane's dword at
    /// address + 4 * n; a clear bit skips both the VGPR and the memory dword (M0 == 0 moves
    /// nothing). 11.5.1: a load's VGPR beyond the wave's allocation is not written; a store's
    /// such VGPR supplies VGPR0's value instead.
    fn block(&mut self, i: &Inst, addr: &[u64; MAX_LANES], scratch: bool) -> Result<(), IsaError> {
        let m0 = self.s32(125, 0)?;
        let load = i.op == Op::MLoadBlock;
        let base = if load { i.dst } else { i.src[1] };
        let mut j = *i;
        j.op = if load { Op::MLoadB32 } else { Op::MStoreB32 };
        let mut a = [0u64; MAX_LANES];
        for n in 0..32u16 {
            if m0 >> n & 1 == 0 {
                continue;
            }
            for (x, y) in a.iter_mut().zip(addr) {
                *x = y.wrapping_add(4 * u64::from(n));
            }
            let r = base + n;
            // The encodings name 256 VGPRs; the wave owns its allocation of them.
            let in_range = r < AGPR && usize::from(r - VGPR) < self.w.nvgpr;
            if load {
                if !in_range {
                    continue;
                }
                j.dst = r;
            } else {
                j.src[1] = if in_range { r } else { VGPR };
            }
            self.vmem(&j, &a, scratch)?;
        }
        Ok(())
    }

    /// GLOBAL_LOAD_TR_B128 / GLOBAL_LOAD_TR_B64 (RDNA4 ISA 11.6.2 "WMMA Load-Transpose
    /// Instructions"): each of lanes 0..31 reads 16 (b128: eight 16-bit elements) or 8 (b64:
    /// eight bytes) contiguous bytes at its address, as GLOBAL_LOAD_B128/B64 would, and the
    /// data is transposed before it reaches the VGPRs: instead of one lane's elements filling
    /// its own VGPRs, they go one to each of eight lanes. The guide's example: "lane 0 loads
    /// 64 bits of contiguous memory and stores it in the matrix: K=0, M=0..7" (a column of a
    /// column-major matrix becomes row M = 0..7's element K = 0). The transposition is per
    /// group of eight lanes ("eight lanes load an 8x8 block of values and transpose them",
    /// Triton's gfx12 lowering of llvm.amdgcn.global.load.tr, whose address and data layouts
    /// for wave32 are exactly this): element j of lane L's result is element L mod 8 of the
    /// data lane 8 * (L / 8) + j read. So with lane l reading column K = l (M = 0..7), lane L
    /// receives row M = L mod 8, K = 8 * (L / 8) + 0..7: row-major, as WMMA's A-matrix wants.
    ///
    /// wave32 writes the eight elements to 4 (b128) or 2 (b64) VGPRs. wave64 loads the same
    /// data (addresses from lanes 0..31 only) into half as many VGPRs: 64 (b128) or 32 (b64)
    /// bits per lane over 64 lanes (the guide's table). Which half goes to which lane the
    /// guide's text does not say; this follows its wave64 WMMA layouts (7.12: the first 32
    /// lanes hold the even chunks of a row, the second 32 lanes the odd ones): lane L < 32
    /// keeps elements 0..3 of its wave32 result and lane L + 32 receives elements 4..7.
    ///
    /// "If EXEC==0, the instruction acts like an S_NOP; otherwise these instructions require
    /// that EXEC be set to all ones, else the operation is undefined": another EXEC faults.
    fn load_tr(&mut self, i: &Inst, addr: &[u64; MAX_LANES]) -> Result<(), IsaError> {
        let exec = self.w.exec();
        if exec == 0 {
            return Ok(());
        }
        if exec != self.w.lane_mask() {
            return Err(self.err(&format!(
                "global_{} with EXEC {exec:#x}: the RDNA4 ISA defines the transposing loads only with EXEC all ones (or zero, a no-op)",
                i.op.name()
            )));
        }
        let (esz, bytes) = if i.op == Op::MLoadTrB128 {
            (2, 16)
        } else {
            (1, 8)
        };
        let mut src = [[0u8; 16]; 32];
        for (b, &a) in src.iter_mut().zip(addr.iter()) {
            self.mem
                .read(a, &mut b[..bytes], Access::Read)
                .map_err(IsaError::Vm)?;
        }
        let mut out = [[0u8; 16]; 32];
        for (l, o) in out.iter_mut().enumerate() {
            for j in 0..8 {
                let from = &src[8 * (l / 8) + j][(l % 8) * esz..(l % 8 + 1) * esz];
                o[j * esz..(j + 1) * esz].copy_from_slice(from);
            }
        }
        let n = self.w.lanes;
        let dwords = if n == 64 { bytes / 8 } else { bytes / 4 };
        let d = self.vreg(i.dst, dwords)?;
        if self.w.v.len() < d + dwords * n {
            return Err(self.range_err());
        }
        let word = |o: &[u8; 16], k: usize| {
            u32::from_le_bytes([o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]])
        };
        for (l, o) in out.iter().enumerate() {
            for k in 0..dwords {
                self.w.v[d + k * n + l] = word(o, k);
                if n == 64 {
                    self.w.v[d + k * n + l + 32] = word(o, k + dwords);
                }
            }
        }
        Ok(())
    }

    /// GLOBAL_ATOMIC_ORDERED_ADD_B64 (RDNA4 ISA, its pseudo-code): memory holds an
    /// (ID, value) pair of dwords; DATA[31:0] is the shader's ID, DATA[63:32] the amount.
    /// When the ID in memory equals the shader's, the ID becomes (ID + 1) &
    /// VGT_GS_MAX_WAVE_ID and the value grows by the amount; the pair before is returned
    /// (the table in 11.1: "Supports only return preOp"; without TH_ATOMIC_RETURN the update
    /// still happens and nothing is returned). Lanes go in lane order, as every atomic here.
    ///
    /// Not modelled: VGT_GS_MAX_WAVE_ID is a geometry-pipeline register that a compute queue
    /// does not have (amdgpu's golden settings program 0xff or 0x3ff, per chip). Every value
    /// a driver programs keeps IDs up to 0xff, so the increment is exact there; an increment
    /// past 0xff, whose wrap depends on that register, is a named fault.
    fn ordered_add(&mut self, i: &Inst, addr: &[u64; MAX_LANES]) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let data = self.vreg(i.src[1], 2)?;
        let dst = if i.dst == NONE {
            None
        } else {
            Some(self.vreg(i.dst, 2)?)
        };
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addr[l];
            if a % 8 != 0 {
                return Err(self.err(&format!("misaligned 8-byte atomic at {a:#x}")));
            }
            let mut b = [0u8; 8];
            self.mem
                .read(a, &mut b, Access::Read)
                .map_err(IsaError::Vm)?;
            let id = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let value = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            let get = |k: usize| self.w.v.get(data + k * n + l).copied().unwrap_or(0);
            if id == get(0) {
                if id >= 0xff {
                    return Err(self.err(&format!(
                        "global_atomic_ordered_add_b64: the ordered ID {id:#x} + 1 wraps at VGT_GS_MAX_WAVE_ID, a geometry-pipeline register a compute queue does not have"
                    )));
                }
                let mut w = [0u8; 8];
                w[..4].copy_from_slice(&(id + 1).to_le_bytes());
                w[4..].copy_from_slice(&value.wrapping_add(get(1)).to_le_bytes());
                self.mem.write(a, &w).map_err(IsaError::Vm)?;
            }
            if let Some(d) = dst {
                for (k, v) in [id, value].into_iter().enumerate() {
                    if let Some(x) = self.w.v.get_mut(d + k * n + l) {
                        *x = v;
                    }
                }
            }
        }
        Ok(())
    }

    /// The access of a FLAT-family or MUBUF instruction at each active lane's address
    /// (`scratch`: private offsets, swizzled per lane).
    pub(super) fn vmem(
        &mut self,
        i: &Inst,
        addr: &[u64; MAX_LANES],
        scratch: bool,
    ) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let exec = self.w.exec();
        let size = vmem_size(i.op);
        let dwords = size.div_ceil(4);
        let load = matches!(
            i.op,
            MLoadU8
                | MLoadI8
                | MLoadU16
                | MLoadI16
                | MLoadB32
                | MLoadB64
                | MLoadB96
                | MLoadB128
                | MLoadD16U8
                | MLoadD16I8
                | MLoadD16B16
                | MLoadD16HiU8
                | MLoadD16HiI8
                | MLoadD16HiB16
        );
        let store = matches!(
            i.op,
            MStoreB8
                | MStoreB16
                | MStoreB32
                | MStoreB64
                | MStoreB96
                | MStoreB128
                | MStoreD16HiB8
                | MStoreD16HiB16
        );
        if load {
            let d = self.vreg(i.dst, dwords)?;
            // Fast path: every lane live and the lanes' addresses consecutive.
            let full = exec == self.w.lane_mask();
            if !scratch && full && size >= 4 && consecutive(&addr[..n], size as u64) {
                // One read for the whole wave; a dword per lane needs only a quarter of the
                // buffer (zeroing it is part of the cost).
                if size == 4 {
                    let mut buf = [0u8; MAX_LANES * 4];
                    self.mem
                        .read(addr[0], &mut buf[..n * 4], Access::Read)
                        .map_err(IsaError::Vm)?;
                    return self.rows_from_bytes(d, &buf[..n * 4], 4);
                }
                let mut buf = [0u8; MAX_LANES * 16];
                self.mem
                    .read(addr[0], &mut buf[..n * size], Access::Read)
                    .map_err(IsaError::Vm)?;
                return self.rows_from_bytes(d, &buf[..n * size], size);
            }
            if scratch && full && size % 4 == 0 && consecutive(&addr[..n], 0) {
                // Every lane at the same private offset: each dword is one contiguous row of
                // the swizzled wave slot.
                for k in 0..dwords {
                    let va = self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, 0)?;
                    self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, n - 1)?;
                    let mut buf = [0u8; MAX_LANES * 4];
                    self.mem
                        .read(va, &mut buf[..n * 4], Access::Read)
                        .map_err(IsaError::Vm)?;
                    let row = self
                        .w
                        .v
                        .get_mut(d + k * n..d + (k + 1) * n)
                        .ok_or_else(|| self.at.msg("VGPR out of range"))?;
                    for (x, c) in row.iter_mut().zip(buf.chunks_exact(4)) {
                        *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                return Ok(());
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut b = [0u8; 16];
                if scratch {
                    for k in 0..dwords {
                        let chunk = (size - 4 * k).min(4);
                        let va =
                            self.scratch_va(addr[l].wrapping_add(4 * k as u64), chunk as u64, l)?;
                        self.mem
                            .read(va, &mut b[4 * k..4 * k + chunk], Access::Read)
                            .map_err(IsaError::Vm)?;
                    }
                } else {
                    self.mem
                        .read(addr[l], &mut b[..size], Access::Read)
                        .map_err(IsaError::Vm)?;
                }
                let v0 = match i.op {
                    MLoadU8 => u32::from(b[0]),
                    MLoadI8 => b[0] as i8 as i32 as u32,
                    MLoadU16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
                    MLoadI16 => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                    MLoadD16U8 | MLoadD16I8 | MLoadD16B16 | MLoadD16HiU8 | MLoadD16HiI8
                    | MLoadD16HiB16 => {
                        // CAST: 8-bit values widen to 16 bits (signed for i8).
                        let h = match i.op {
                            MLoadD16U8 | MLoadD16HiU8 => u32::from(b[0]),
                            MLoadD16I8 | MLoadD16HiI8 => u32::from(b[0] as i8 as i16 as u16),
                            _ => u32::from(u16::from_le_bytes([b[0], b[1]])),
                        };
                        let old = self.w.v.get(d + l).copied().unwrap_or(0);
                        if matches!(i.op, MLoadD16HiU8 | MLoadD16HiI8 | MLoadD16HiB16) {
                            (old & 0xffff) | (h << 16)
                        } else {
                            (old & 0xffff_0000) | h
                        }
                    }
                    _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                };
                for k in 0..dwords {
                    let v = if k == 0 {
                        v0
                    } else {
                        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
                    };
                    if let Some(x) = self.w.v.get_mut(d + k * n + l) {
                        *x = v;
                    }
                }
            }
            return Ok(());
        }
        let data = self.vreg(
            i.src[1],
            if matches!(i.op, MAtomicCmpswapB32 | MAtomicCmpswapF32) {
                2
            } else if i.op == MAtomicCmpswapB64 {
                4
            } else {
                dwords
            },
        )?;
        if store {
            let full = exec == self.w.lane_mask();
            if !scratch && full && size >= 4 && consecutive(&addr[..n], size as u64) {
                if size == 4 {
                    let mut buf = [0u8; MAX_LANES * 4];
                    let row = self
                        .w
                        .v
                        .get(data..data + n)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    for (c, x) in buf.chunks_exact_mut(4).zip(row) {
                        c.copy_from_slice(&x.to_le_bytes());
                    }
                    return self.mem.write(addr[0], &buf[..n * 4]).map_err(IsaError::Vm);
                }
                let mut buf = [0u8; MAX_LANES * 16];
                for l in 0..n {
                    for k in 0..dwords {
                        let v = self.w.v.get(data + k * n + l).copied().unwrap_or(0);
                        let p = l * size + 4 * k;
                        buf[p..p + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
                return self
                    .mem
                    .write(addr[0], &buf[..n * size])
                    .map_err(IsaError::Vm);
            }
            if scratch && full && size % 4 == 0 && consecutive(&addr[..n], 0) {
                for k in 0..dwords {
                    let va = self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, 0)?;
                    self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, n - 1)?;
                    let mut buf = [0u8; MAX_LANES * 4];
                    let row = self
                        .w
                        .v
                        .get(data + k * n..data + (k + 1) * n)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    for (c, x) in buf.chunks_exact_mut(4).zip(row) {
                        c.copy_from_slice(&x.to_le_bytes());
                    }
                    self.mem.write(va, &buf[..n * 4]).map_err(IsaError::Vm)?;
                }
                return Ok(());
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut b = [0u8; 16];
                for k in 0..dwords {
                    let v = self.w.v.get(data + k * n + l).copied().unwrap_or(0);
                    // The d16_hi stores write the register's high half.
                    let v = if matches!(i.op, MStoreD16HiB8 | MStoreD16HiB16) {
                        v >> 16
                    } else {
                        v
                    };
                    b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                }
                if scratch {
                    for k in 0..dwords {
                        let chunk = (size - 4 * k).min(4);
                        let va =
                            self.scratch_va(addr[l].wrapping_add(4 * k as u64), chunk as u64, l)?;
                        self.mem
                            .write(va, &b[4 * k..4 * k + chunk])
                            .map_err(IsaError::Vm)?;
                    }
                } else {
                    self.mem.write(addr[l], &b[..size]).map_err(IsaError::Vm)?;
                }
            }
            return Ok(());
        }
        // Atomics: read-modify-write per lane, in lane order.
        let rtn = i.dst != NONE;
        let dst = if rtn {
            Some(self.vreg(i.dst, dwords)?)
        } else {
            None
        };
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addr[l];
            if a % size as u64 != 0 {
                return Err(self.err(&format!("misaligned {}-byte atomic at {a:#x}", size)));
            }
            let get = |k: usize| self.w.v.get(data + k * n + l).copied().unwrap_or(0);
            let mut b = [0u8; 8];
            self.mem
                .read(a, &mut b[..size], Access::Read)
                .map_err(IsaError::Vm)?;
            let (old, new): (u64, u64) = if size == 8 {
                let old = u64::from_le_bytes(b);
                let x = u64::from(get(0)) | (u64::from(get(1)) << 32);
                let new = match i.op {
                    MAtomicAddU64 => old.wrapping_add(x),
                    MAtomicSwapB64 => x,
                    MAtomicSubU64 => old.wrapping_sub(x),
                    MAtomicAddF64 => (f64::from_bits(old) + f64::from_bits(x)).to_bits(),
                    // CAST: signed views of the same bits.
                    MAtomicMinI64 => (old as i64).min(x as i64) as u64,
                    // CAST: signed views of the same bits.
                    MAtomicMaxI64 => (old as i64).max(x as i64) as u64,
                    MAtomicMinU64 => old.min(x),
                    MAtomicMaxU64 => old.max(x),
                    MAtomicAndB64 => old & x,
                    MAtomicOrB64 => old | x,
                    MAtomicXorB64 => old ^ x,
                    // The ISA's INC/DEC wrap at the data value, as the 32-bit forms.
                    MAtomicIncU64 => {
                        if old >= x {
                            0
                        } else {
                            old + 1
                        }
                    }
                    MAtomicDecU64 => {
                        if old == 0 || old > x {
                            x
                        } else {
                            old - 1
                        }
                    }
                    // IEEE minNum/maxNum as V_MIN_F64/V_MAX_F64 (a NaN loses to a number).
                    MAtomicMinF64 => fmin64(f64::from_bits(old), f64::from_bits(x)).to_bits(),
                    MAtomicMaxF64 => fmax64(f64::from_bits(old), f64::from_bits(x)).to_bits(),
                    _ => {
                        let cmp = u64::from(get(2)) | (u64::from(get(3)) << 32);
                        if old == cmp { x } else { old }
                    }
                };
                (old, new)
            } else {
                let old = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let x = get(0);
                let new = match i.op {
                    MAtomicSwapB32 => x,
                    MAtomicCmpswapB32 => {
                        if old == get(1) {
                            x
                        } else {
                            old
                        }
                    }
                    MAtomicAddU32 => old.wrapping_add(x),
                    MAtomicSubU32 => old.wrapping_sub(x),
                    MAtomicMinI32 => (old as i32).min(x as i32) as u32,
                    MAtomicMinU32 => old.min(x),
                    MAtomicMaxI32 => (old as i32).max(x as i32) as u32,
                    MAtomicMaxU32 => old.max(x),
                    MAtomicAndB32 => old & x,
                    MAtomicOrB32 => old | x,
                    MAtomicXorB32 => old ^ x,
                    MAtomicIncU32 => {
                        if old >= x {
                            0
                        } else {
                            old + 1
                        }
                    }
                    MAtomicDecU32 => {
                        if old == 0 || old > x {
                            x
                        } else {
                            old - 1
                        }
                    }
                    MAtomicAddF32 => (f32v(old) + f32v(x)).to_bits(),
                    // Clamped: 0 when DATA exceeds the old value.
                    MAtomicCsubU32 => old.saturating_sub(x),
                    // Conditional: subtracts only when the old value is at least DATA.
                    MAtomicCondSubU32 => {
                        if old >= x {
                            old - x
                        } else {
                            old
                        }
                    }
                    // Float equality (-0 == +0, a NaN equals nothing).
                    MAtomicCmpswapF32 => {
                        if f32v(old) == f32v(get(1)) {
                            x
                        } else {
                            old
                        }
                    }
                    MAtomicMinF32 => fmin(f32v(old), f32v(x)).to_bits(),
                    MAtomicMaxF32 => fmax(f32v(old), f32v(x)).to_bits(),
                    // Two independent half (bfloat16) adds, round to nearest even, denormals
                    // kept (CDNA2 ISA 9.5: packed f16 atomics never flush). An f32 sum
                    // rounded once more to 16 bits is the correctly rounded sum (24 >= 2*11+2
                    // significand bits).
                    MAtomicPkAddF16 => {
                        let h =
                            |s: u32| f32_to_f16(f16_to_f32(old >> s) + f16_to_f32(x >> s), false);
                        h(0) | (h(16) << 16)
                    }
                    MAtomicPkAddBf16 => {
                        let f = |s: u32| f32::from_bits(((old >> s) & 0xffff) << 16);
                        let g = |s: u32| f32::from_bits(((x >> s) & 0xffff) << 16);
                        let h = |s: u32| f32_to_bf16(f(s) + g(s));
                        h(0) | (h(16) << 16)
                    }
                    _ => return Err(self.unsupported(i)),
                };
                (u64::from(old), u64::from(new))
            };
            self.mem
                .write(a, &new.to_le_bytes()[..size])
                .map_err(IsaError::Vm)?;
            if let Some(d) = dst {
                for k in 0..dwords {
                    if let Some(v) = self.w.v.get_mut(d + k * n + l) {
                        // CAST: halves of the old value.
                        *v = (old >> (32 * k)) as u32;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Exec<'_, '_> {
    /// LDS DMA: loads that write LDS instead of VGPRs (gfx11 buffer_load_lds_*, gfx940
    /// global/scratch_load_lds_*) and gfx9's buffer_store_lds_dword (LDS to memory). Lane
    /// `l`'s LDS dword is at M0[15:0] + 4 * l, plus the instruction offset for MUBUF (GCN3/
    /// CDNA3 ISA "buffer load to LDS": LDS_ADDR = LDS_BASE + LDS_OFFSET (M0) + INST_OFFSET +
    /// TID * 4; FLAT's offset is part of the memory address only). Sub-dword loads extend to a
    /// dword (signed for i8/i16); format_x converts the x component.
    pub(super) fn lds_dma(
        &mut self,
        i: &Inst,
        addr: &[u64; MAX_LANES],
        scratch: bool,
        fmt: Option<format::Fmt>,
    ) -> Result<(), IsaError> {
        use Op::*;
        let m0 = if self.l.isa == Isa::Gfx9 { 124 } else { 125 };
        let mut base = u64::from(self.s32(m0, 0)? & 0xffff);
        if i.enc == Enc::Mubuf {
            // CAST: the non-negative 12-bit offset.
            base += i.imm as u64;
        }
        let size = match (i.op, fmt) {
            (_, Some(f)) => f.bytes(),
            (MLoadU8 | MLoadI8, _) => 1,
            (MLoadU16 | MLoadI16, _) => 2,
            _ => 4,
        };
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let va = if scratch {
                self.scratch_va(addr[l], size as u64, l)?
            } else {
                addr[l]
            };
            let r = self.lds_range(base + 4 * l as u64, 4)?;
            if i.op == MStoreB32 {
                let mut b = [0u8; 4];
                b.copy_from_slice(&self.lds[r]);
                self.mem.write(va, &b).map_err(IsaError::Vm)?;
                continue;
            }
            let mut b = [0u8; 16];
            self.mem
                .read(va, &mut b[..size], Access::Read)
                .map_err(IsaError::Vm)?;
            // CAST: sign extensions of the loaded byte and half.
            let v = match (i.op, fmt) {
                (_, Some(f)) => f.load(u128::from_le_bytes(b), 0, false),
                (MLoadI8, _) => b[0] as i8 as i32 as u32,
                (MLoadU8, _) => u32::from(b[0]),
                (MLoadI16, _) => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                (MLoadU16, _) => u32::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            };
            self.lds[r].copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    }
}
