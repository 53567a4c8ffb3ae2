//! LDS: the DS instructions, bounds-checked against the RSRC2 grant.

use super::*;

impl Exec<'_, '_> {
    /// The LDS bytes an access of `n` bytes at `addr` touches. Past the RSRC2.LDS_SIZE grant
    /// the hardware reads 0 and drops the write (RDNA3/RDNA4/CDNA3 ISA guides, LDS chapter):
    /// a strict run faults; otherwise the access is counted ([`crate::isa::OutOfRange`]) and
    /// lands in the zeroed sink past the grant.
    pub(super) fn lds_range(
        &mut self,
        addr: u64,
        n: usize,
    ) -> Result<core::ops::Range<usize>, IsaError> {
        // CAST: the grant is at most 64 KiB.
        let grant = self.l.lds_bytes as usize;
        let a = usize::try_from(addr).unwrap_or(usize::MAX);
        match a.checked_add(n) {
            Some(end) if end <= grant => Ok(a..end),
            _ if self.w.strict || n > LDS_SINK => Err(self.err(&format!(
                "LDS access of {n} bytes at {addr:#x} beyond the {grant} bytes COMPUTE_PGM_RSRC2.LDS_SIZE grants (hardware reads 0 and drops the write; a strict run faults)"
            ))),
            _ => {
                let i = self.at.pc.wrapping_sub(self.l.pgm);
                let op = decode_op_name(self);
                self.w.oob.0 += 1;
                if self.w.oob.1.is_none() {
                    self.w.oob.1 = Some(crate::isa::OutOfRange {
                        space: crate::isa::Space::Lds,
                        pc_offset: i,
                        mnemonic: op,
                        address: addr,
                        // CAST: n <= LDS_SINK.
                        bytes: n as u32,
                        allocation: grant as u64,
                    });
                }
                let sink = self.lds.get_mut(grant..grant + LDS_SINK);
                if let Some(sink) = sink {
                    sink.fill(0);
                }
                Ok(grant..grant + n)
            }
        }
    }

    pub(super) fn ds(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        if i.op == DsNop {
            return Ok(());
        }
        if matches!(i.op, DsSwizzleB32 | DsPermuteB32 | DsBpermuteB32) {
            return self.ds_cross_lane(i);
        }
        if matches!(
            i.op,
            DsStorexchg2RtnB32
                | DsStorexchg2St64RtnB32
                | DsStorexchg2RtnB64
                | DsStorexchg2St64RtnB64
        ) {
            return self.ds_xchg2(i);
        }
        if matches!(
            i.op,
            DsStoreAddtidB32 | DsLoadAddtidB32 | DsAppend | DsConsume | DsCondxchg32RtnB64
        ) {
            return self.ds_m0(i);
        }
        if i.op == DsBvhStackRtnB32 {
            return self.ds_bvh_stack(i);
        }
        let n = self.w.lanes;
        let mut addr = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut addr)?;
        let exec = self.w.exec();
        // CAST: non-negative offsets.
        let off0 = i.imm as u32;
        let off1 = u32::from(i.sub);
        let (size, two, stride) = match i.op {
            DsStoreB8 | DsLoadU8 | DsLoadI8 | DsStoreB8D16Hi => (1usize, false, 0u32),
            DsLoadU8D16 | DsLoadU8D16Hi | DsLoadI8D16 | DsLoadI8D16Hi => (1, false, 0),
            DsStoreB16 | DsLoadU16 | DsLoadI16 | DsStoreB16D16Hi => (2, false, 0),
            DsLoadU16D16 | DsLoadU16D16Hi => (2, false, 0),
            DsStore2St64B64 | DsLoad2St64B64 => (8, true, 512),
            DsStoreB64 | DsLoadB64 => (8, false, 0),
            DsStoreB96 | DsLoadB96 => (12, false, 0),
            DsStoreB128 | DsLoadB128 => (16, false, 0),
            DsStore2B32 | DsLoad2B32 => (4, true, 4),
            DsStore2St64B32 | DsLoad2St64B32 => (4, true, 256),
            DsStore2B64 | DsLoad2B64 => (8, true, 8),
            _ => (4, false, 0),
        };
        let dwords = size.div_ceil(4);
        let is_load = i.op.is_ds_load();
        let is_store = matches!(
            i.op,
            DsStoreB8
                | DsStoreB16
                | DsStoreB32
                | DsStoreB64
                | DsStoreB96
                | DsStoreB128
                | DsStore2B32
                | DsStore2St64B32
                | DsStore2B64
                | DsStore2St64B64
                | DsStoreB8D16Hi
                | DsStoreB16D16Hi
        );
        let parts = if two { 2 } else { 1 };
        if is_load {
            let d = self.vreg(i.dst, dwords * parts)?;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for p in 0..parts {
                    let a = if two {
                        u64::from(addr[l])
                            + u64::from(if p == 0 { off0 } else { off1 }) * u64::from(stride)
                    } else {
                        u64::from(addr[l]) + u64::from(off0)
                    };
                    let r = self.lds_range(a, size)?;
                    let mut b = [0u8; 16];
                    b[..size].copy_from_slice(&self.lds[r]);
                    let vals: [u32; 4] = core::array::from_fn(|k| {
                        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
                    });
                    // The d16 loads write one half of the VGPR and keep the other.
                    let half = |h: u32, hi: bool, old: u32| {
                        if hi {
                            (old & 0xffff) | (h << 16)
                        } else {
                            (old & 0xffff_0000) | (h & 0xffff)
                        }
                    };
                    let old = self.w.v.get(d + l).copied().unwrap_or(0);
                    let v0 = match i.op {
                        DsLoadI8 => b[0] as i8 as i32 as u32,
                        DsLoadI16 => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                        DsLoadU8D16 | DsLoadU8D16Hi => {
                            half(u32::from(b[0]), i.op == DsLoadU8D16Hi, old)
                        }
                        // CAST: the byte sign-extended to 16 bits.
                        DsLoadI8D16 | DsLoadI8D16Hi => half(
                            u32::from(b[0] as i8 as i16 as u16),
                            i.op == DsLoadI8D16Hi,
                            old,
                        ),
                        DsLoadU16D16 | DsLoadU16D16Hi => half(
                            u32::from(u16::from_le_bytes([b[0], b[1]])),
                            i.op == DsLoadU16D16Hi,
                            old,
                        ),
                        _ => vals[0],
                    };
                    for (k, &val) in vals.iter().enumerate().take(dwords) {
                        let v = if k == 0 { v0 } else { val };
                        if let Some(x) = self.w.v.get_mut(d + (p * dwords + k) * n + l) {
                            *x = v;
                        }
                    }
                }
            }
            return Ok(());
        }
        // Data operands.
        let d0 = if i.src[1] != NONE {
            self.vreg(i.src[1], dwords)?
        } else {
            0
        };
        let d1 = if i.src[2] != NONE {
            self.vreg(i.src[2], dwords)?
        } else {
            0
        };
        if is_store {
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for p in 0..parts {
                    let a = if two {
                        u64::from(addr[l])
                            + u64::from(if p == 0 { off0 } else { off1 }) * u64::from(stride)
                    } else {
                        u64::from(addr[l]) + u64::from(off0)
                    };
                    let base = if p == 0 { d0 } else { d1 };
                    let mut b = [0u8; 16];
                    for k in 0..dwords {
                        let v = self.w.v.get(base + k * n + l).copied().unwrap_or(0);
                        // The d16_hi stores write the VGPR's high half.
                        let v = if matches!(i.op, DsStoreB8D16Hi | DsStoreB16D16Hi) {
                            v >> 16
                        } else {
                            v
                        };
                        b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    let r = self.lds_range(a, size)?;
                    self.lds[r].copy_from_slice(&b[..size]);
                }
            }
            return Ok(());
        }
        if i.op.name().ends_with("64") {
            return self.ds_atomic64(i, &addr, off0);
        }
        // Atomics on 32 bits.
        let rtn = i.dst != NONE;
        let dst = if rtn {
            Some(self.vreg(i.dst, 1)?)
        } else {
            None
        };
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = u64::from(addr[l]) + u64::from(off0);
            let r = self.lds_range(a, 4)?;
            let old = u32::from_le_bytes([
                self.lds[r.start],
                self.lds[r.start + 1],
                self.lds[r.start + 2],
                self.lds[r.start + 3],
            ]);
            let x = self.w.v.get(d0 + l).copied().unwrap_or(0);
            let y = self.w.v.get(d1 + l).copied().unwrap_or(0);
            let new = match i.op {
                DsAddU32 | DsAddRtnU32 => old.wrapping_add(x),
                DsSubU32 | DsSubRtnU32 => old.wrapping_sub(x),
                DsRsubU32 | DsRsubRtnU32 => x.wrapping_sub(old),
                // Wrapping increment/decrement within 0..=x (the ISA guides' INC/DEC).
                DsIncU32 | DsIncRtnU32 => {
                    if old >= x {
                        0
                    } else {
                        old + 1
                    }
                }
                DsDecU32 | DsDecRtnU32 => {
                    if old == 0 || old > x {
                        x
                    } else {
                        old - 1
                    }
                }
                // CAST: signed views of the same bits.
                DsMinI32 | DsMinRtnI32 => (old as i32).min(x as i32) as u32,
                // CAST: signed views of the same bits.
                DsMaxI32 | DsMaxRtnI32 => (old as i32).max(x as i32) as u32,
                DsMinU32 | DsMinRtnU32 => old.min(x),
                DsMaxU32 | DsMaxRtnU32 => old.max(x),
                DsAndB32 | DsAndRtnB32 => old & x,
                DsOrB32 | DsOrRtnB32 => old | x,
                DsXorB32 | DsXorRtnB32 => old ^ x,
                DsAddF32 | DsAddRtnF32 => (f32::from_bits(old) + f32::from_bits(x)).to_bits(),
                DsSwapRtnB32 => x,
                // Compare-and-store: gfx11/12 name the new value data0 and the compare value
                // data1 (RDNA3 ISA, DS_CMPSTORE_B32); gfx9 the other way round (CDNA3 ISA,
                // DS_CMPST_B32: cmp = DATA, src = DATA2).
                DsCmpswapRtnB32 | DsCmpswapB32 => {
                    let (src, cmp) = if self.l.isa == Isa::Gfx9 {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    if old == cmp { src } else { old }
                }
                // As DS_CMPST_B32 with a float compare (+0 == -0, a NaN equals nothing).
                DsCmpstoreF32 | DsCmpstoreRtnF32 => {
                    let (src, cmp) = if self.l.isa == Isa::Gfx9 {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    if f32v(old) == f32v(cmp) { src } else { old }
                }
                // MEM = (MEM & ~DATA) | DATA2.
                DsMskorB32 | DsMskorRtnB32 => (old & !x) | y,
                // MEM = (MEM >= DATA) ? MEM - DATA : MEM + DATA2.
                DsWrapRtnB32 => {
                    if old >= x {
                        old - x
                    } else {
                        old.wrapping_add(y)
                    }
                }
                DsMinF32 | DsMinRtnF32 => fmin(f32v(old), f32v(x)).to_bits(),
                DsMaxF32 | DsMaxRtnF32 => fmax(f32v(old), f32v(x)).to_bits(),
                DsCondSubU32 | DsCondSubRtnU32 => {
                    if old >= x {
                        old - x
                    } else {
                        old
                    }
                }
                DsSubClampU32 | DsSubClampRtnU32 => old.saturating_sub(x),
                // Two half adds, rounded to nearest even (as the packed memory atomics).
                DsPkAddF16 | DsPkAddRtnF16 => {
                    let h = |s: u32| f32_to_f16(f16_to_f32(old >> s) + f16_to_f32(x >> s), false);
                    h(0) | (h(16) << 16)
                }
                DsPkAddBf16 | DsPkAddRtnBf16 => {
                    let f = |v: u32, s: u32| f32::from_bits(((v >> s) & 0xffff) << 16);
                    let h = |s: u32| {
                        let b = (f(old, s) + f(x, s)).to_bits();
                        if f32::from_bits(b).is_nan() {
                            (b >> 16) | 0x40
                        } else {
                            b.wrapping_add(0x7fff + ((b >> 16) & 1)) >> 16
                        }
                    };
                    h(0) | (h(16) << 16)
                }
                _ => return Err(self.unsupported(i)),
            };
            self.lds[r].copy_from_slice(&new.to_le_bytes());
            if let Some(d) = dst {
                if let Some(v) = self.w.v.get_mut(d + l) {
                    *v = old;
                }
            }
        }
        Ok(())
    }
    /// 64-bit LDS atomics: read-modify-write per lane in lane order, the old value returned
    /// in a VGPR pair by the *_rtn_* forms.
    fn ds_atomic64(&mut self, i: &Inst, addr: &Lanes, off0: u32) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let d0 = self.vreg(i.src[1], 2)?;
        let d1 = if i.src[2] != NONE {
            self.vreg(i.src[2], 2)?
        } else {
            0
        };
        let dst = if i.dst != NONE {
            Some(self.vreg(i.dst, 2)?)
        } else {
            None
        };
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let r = self.lds_range(u64::from(addr[l]) + u64::from(off0), 8)?;
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.lds[r.clone()]);
            let old = u64::from_le_bytes(b);
            let get = |k: usize| u64::from(self.w.v.get(d0 + k * n + l).copied().unwrap_or(0));
            let x = get(0) | get(1) << 32;
            let y = u64::from(self.w.v.get(d1 + l).copied().unwrap_or(0))
                | u64::from(self.w.v.get(d1 + n + l).copied().unwrap_or(0)) << 32;
            let (fo, fx) = (f64::from_bits(old), f64::from_bits(x));
            let new = match i.op {
                DsRsubU64 | DsRsubRtnU64 => x.wrapping_sub(old),
                DsIncU64 | DsIncRtnU64 => {
                    if old >= x {
                        0
                    } else {
                        old + 1
                    }
                }
                DsDecU64 | DsDecRtnU64 => {
                    if old == 0 || old > x {
                        x
                    } else {
                        old - 1
                    }
                }
                DsSwapRtnB64 => x,
                DsMskorB64 | DsMskorRtnB64 => (old & !x) | y,
                // The data order as the 32-bit compare-stores (gfx9: compare value first).
                DsCmpstoreB64 | DsCmpstoreRtnB64 | DsCmpstoreF64 | DsCmpstoreRtnF64 => {
                    let (src, cmp) = if self.l.isa == Isa::Gfx9 {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    let eq = if matches!(i.op, DsCmpstoreF64 | DsCmpstoreRtnF64) {
                        fo == f64::from_bits(cmp)
                    } else {
                        old == cmp
                    };
                    if eq { src } else { old }
                }
                DsMinF64 | DsMinRtnF64 => fmin64(fo, fx).to_bits(),
                DsMaxF64 | DsMaxRtnF64 => fmax64(fo, fx).to_bits(),
                DsAddF64 | DsAddRtnF64 => (fo + fx).to_bits(),
                DsAddU64 | DsAddRtnU64 => old.wrapping_add(x),
                DsSubU64 | DsSubRtnU64 => old.wrapping_sub(x),
                // CAST: signed views of the same bits.
                DsMinI64 | DsMinRtnI64 => (old as i64).min(x as i64) as u64,
                // CAST: signed views of the same bits.
                DsMaxI64 | DsMaxRtnI64 => (old as i64).max(x as i64) as u64,
                DsMinU64 | DsMinRtnU64 => old.min(x),
                DsMaxU64 | DsMaxRtnU64 => old.max(x),
                DsAndB64 | DsAndRtnB64 => old & x,
                DsOrB64 | DsOrRtnB64 => old | x,
                DsXorB64 | DsXorRtnB64 => old ^ x,
                _ => return Err(self.unsupported(i)),
            };
            self.lds[r].copy_from_slice(&new.to_le_bytes());
            if let Some(d) = dst {
                for (k, half) in [old as u32, (old >> 32) as u32].into_iter().enumerate() {
                    if let Some(v) = self.w.v.get_mut(d + k * n + l) {
                        *v = half;
                    }
                }
            }
        }
        Ok(())
    }
    /// ds_swizzle_b32 (the offset's pattern: quad permute with bit 15, else and/or/xor masks
    /// of the lane id within 32 lanes), ds_bpermute_b32 (each lane reads the lane its address
    /// / 4 names) and ds_permute_b32 (each lane writes to it; unwritten lanes read 0, the
    /// highest writer wins). Addresses add the offset; lane ids wrap at the wave size.
    fn ds_cross_lane(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let exec = self.w.exec();
        let mut addr = [0u32; MAX_LANES];
        let src_k = if i.op == Op::DsSwizzleB32 { 0 } else { 1 };
        self.lanes32(i, 0, Width::B32, &mut addr)?;
        let mut data = [0u32; MAX_LANES];
        self.lanes32(i, src_k, Width::B32, &mut data)?;
        // CAST: the 16-bit offset.
        let off = i.imm as u32;
        let lane_of = |l: usize| (((addr[l].wrapping_add(off)) >> 2) as usize) & (n - 1);
        let mut r = [0u32; MAX_LANES];
        match i.op {
            Op::DsSwizzleB32 => {
                for (l, r) in r[..n].iter_mut().enumerate() {
                    let from = if off & 0x8000 != 0 {
                        (l & !3) | ((off >> (2 * (l & 3))) & 3) as usize
                    } else {
                        let (and, or, xor) = (off & 0x1f, (off >> 5) & 0x1f, (off >> 10) & 0x1f);
                        // CAST: lane ids below 64.
                        let t = ((l as u32 & 0x1f & and) | or) ^ xor;
                        (l & !0x1f) | t as usize
                    };
                    *r = data[from];
                }
            }
            Op::DsBpermuteB32 => {
                for (l, r) in r[..n].iter_mut().enumerate() {
                    *r = data[lane_of(l)];
                }
            }
            _ => {
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    r[lane_of(l)] = data[l];
                }
            }
        }
        self.write_lanes(i.dst, &r)
    }
}

impl Exec<'_, '_> {
    /// DS_STOREXCHG_2ADDR(_STRIDE64)_RTN_B32/B64 (gfx9: ds_wrxchg2(st64)_rtn): per lane,
    /// MEM[addr + offset0 * size] and MEM[addr + offset1 * size] (size 4 or 8; stride64: 64
    /// times that) take DATA0 and DATA1; their old values return in the destination's first
    /// and second halves (RDNA3 ISA, DS opcodes 46, 47, 110, 111).
    fn ds_xchg2(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let size = if matches!(i.op, DsStorexchg2RtnB64 | DsStorexchg2St64RtnB64) {
            8usize
        } else {
            4
        };
        let stride = if matches!(i.op, DsStorexchg2St64RtnB32 | DsStorexchg2St64RtnB64) {
            64 * size
        } else {
            size
        } as u64;
        let dw = size / 4;
        let mut addr = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut addr)?;
        let (d0, d1, dst) = (
            self.vreg(i.src[1], dw)?,
            self.vreg(i.src[2], dw)?,
            self.vreg(i.dst, 2 * dw)?,
        );
        let len = self.w.v.len();
        if len < d0.max(d1) + dw * n || len < dst + 2 * dw * n {
            return Err(self.range_err());
        }
        // CAST: non-negative 8-bit offsets.
        let offs = [i.imm as u64, u64::from(i.sub)];
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let mut old = [0u32; 4];
            for (p, (&off, &data)) in offs.iter().zip(&[d0, d1]).enumerate() {
                let r = self.lds_range(u64::from(addr[l]) + off * stride, size)?;
                for k in 0..dw {
                    let at = r.start + 4 * k;
                    let b = &mut self.lds[at..at + 4];
                    old[p * dw + k] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    b.copy_from_slice(&self.w.v[data + k * n + l].to_le_bytes());
                }
            }
            for (k, &v) in old.iter().enumerate().take(2 * dw) {
                self.w.v[dst + k * n + l] = v;
            }
        }
        Ok(())
    }
}

impl Exec<'_, '_> {
    /// The DS operations M0 addresses (RDNA3 ISA pseudo code; CDNA3 names them
    /// ds_write/read_addtid_b32):
    /// - DS_STORE/LOAD_ADDTID_B32: MEM[M0 + OFFSET + laneID * 4] = DATA0 / VDST = MEM[..];
    /// - DS_APPEND/DS_CONSUME: the dword at M0 + OFFSET grows/shrinks by the number of
    ///   active lanes; every active lane gets its value before (the wave's base slot; a lane
    ///   adds its mbcnt). The CDNA ISA text names M0's base for GDS only; LLVM's selection
    ///   of LDS ds_append/ds_consume puts the LDS pointer in M0, which is what is modelled.
    ///
    /// M0 counts with its low 16 bits (the ADDTID pseudo code's M0[15:0]).
    fn ds_m0(&mut self, i: &Inst) -> Result<(), IsaError> {
        if i.op == Op::DsCondxchg32RtnB64 {
            return self.ds_condxchg(i);
        }
        let m0 = if self.l.isa == Isa::Gfx9 { 124 } else { 125 };
        // CAST: the non-negative 16-bit offset.
        let base = u64::from(self.s32(m0, 0)? & 0xffff) + i.imm as u64;
        let n = self.w.lanes;
        let exec = self.w.exec();
        let word = |x: &mut Self, a: u64| -> Result<(core::ops::Range<usize>, u32), IsaError> {
            let r = x.lds_range(a, 4)?;
            let b = &x.lds[r.clone()];
            Ok((r, u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        };
        match i.op {
            Op::DsAppend | Op::DsConsume => {
                let d = self.vreg(i.dst, 1)?;
                let (r, old) = word(self, base)?;
                let k = exec.count_ones();
                let new = if i.op == Op::DsAppend {
                    old.wrapping_add(k)
                } else {
                    old.wrapping_sub(k)
                };
                self.lds[r].copy_from_slice(&new.to_le_bytes());
                if self.w.v.len() < d + n {
                    return Err(self.range_err());
                }
                for (l, x) in self.w.v[d..d + n].iter_mut().enumerate() {
                    if exec >> l & 1 == 1 {
                        *x = old;
                    }
                }
            }
            _ => {
                let load = i.op == Op::DsLoadAddtidB32;
                let d = if load {
                    self.vreg(i.dst, 1)?
                } else {
                    self.vreg(i.src[1], 1)?
                };
                if self.w.v.len() < d + n {
                    return Err(self.range_err());
                }
                let mut m = exec;
                while m != 0 {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let (r, old) = word(self, base + 4 * l as u64)?;
                    if load {
                        self.w.v[d + l] = old;
                    } else {
                        self.lds[r].copy_from_slice(&self.w.v[d + l].to_le_bytes());
                    }
                }
            }
        }
        Ok(())
    }
}

impl Exec<'_, '_> {
    /// DS_CONDXCHG32_RTN_B64 (CDNA3/RDNA3 ISA pseudo code): ADDR0 = (ADDR + offset) & 0xfff8,
    /// ADDR1 = ADDR0 + 4; each dword returns its old value and, when its data dword's bit 31
    /// is set, takes that data's low 31 bits (bit 31 cleared).
    fn ds_condxchg(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let mut addr = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut addr)?;
        let (data, dst) = (self.vreg(i.src[1], 2)?, self.vreg(i.dst, 2)?);
        let len = self.w.v.len();
        if len < data + 2 * n || len < dst + 2 * n {
            return Err(self.range_err());
        }
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            // CAST: the non-negative 16-bit offset.
            let a0 = u64::from(addr[l].wrapping_add(i.imm as u32) & 0xfff8);
            let mut old = [0u32; 2];
            for (k, o) in old.iter_mut().enumerate() {
                let r = self.lds_range(a0 + 4 * k as u64, 4)?;
                let b = &mut self.lds[r];
                *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let d = self.w.v[data + k * n + l];
                if d >> 31 == 1 {
                    b.copy_from_slice(&(d & 0x7fff_ffff).to_le_bytes());
                }
            }
            for (k, &o) in old.iter().enumerate() {
                self.w.v[dst + k * n + l] = o;
            }
        }
        Ok(())
    }
}

/// The node pointer that marks "no node" (Mesa's RADV_BVH_INVALID_NODE; radv relies on the
/// instruction returning it exactly when the short stack has lost entries). The guides name
/// INVALID_NODE without giving its value.
const INVALID_NODE: u32 = 0xffff_ffff;

impl Exec<'_, '_> {
    /// DS_BVH_STACK_RTN_B32 (RDNA3 ISA 12.5.3 "DS Stack Operations for Ray Tracing" and the
    /// instruction's pseudo-code): per active lane, DATA1's first three nodes that are valid
    /// are pushed (a node equal to the last-visited pointer DATA0 stops the pushes), then
    /// DATA1[3] is returned when valid, else the stack is popped (the slot becomes
    /// INVALID_NODE); ADDR is written back with the updated index. A node is valid when it is
    /// neither INVALID_NODE nor (DATA0 being valid) DATA0.
    ///
    /// How this reads the guide where its two texts differ or are silent:
    /// - Stack size: the field table gives it in both OFFSET1[5:4] and ADDR[17:16]; the
    ///   instruction's text says OFFSET1[5:4] ("constant for all lanes and patched into the
    ///   shader by software"; DECODE_ADDR takes ADDR and OFFSET1), and LLVM and Mesa's radv
    ///   put it there (the `offset` operand; radv leaves ADDR[17:0] as the index). So the size
    ///   is 8 << OFFSET1[5:4] entries and ADDR[17:16] is not read (and kept on write-back).
    /// - Address: ADDR[31:18] is stack_base[15:2], the lane's base as a dword index in LDS
    ///   ("bits [1:0] must be zero": the byte base is dword-aligned); ADDR[15:0] the index.
    ///   Entry k is at dword base + 32 * (k mod size): the hardware's stride is 32 dwords
    ///   (radv_build_bvh_stack_rtn_addr: "a stride of 128 bytes (32 entries) for the stack
    ///   index"), so a wave32 group's lanes interleave with consecutive bases.
    /// - Wrap: the index counts in 16 bits and the slot is the index modulo the size, so a
    ///   push beyond the size overwrites the oldest items ("beyond that the stack wraps around
    ///   and overwrites older items"), and a pop below them returns what the slot holds.
    /// - Pop order: the pseudo-code's push stores at the index and then increments it, so the
    ///   index is the next free slot; a pop takes the top, the slot below the index (reading
    ///   at the index itself, as the pop's abbreviated lines read, would return the slot
    ///   above the last push: not a stack). So a pop decrements, returns that slot and
    ///   writes INVALID_NODE there.
    fn ds_bvh_stack(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let addr = self.vreg(i.src[0], 1)?;
        let last = self.vreg(i.src[1], 1)?;
        let data = self.vreg(i.src[2], 4)?;
        let dst = self.vreg(i.dst, 1)?;
        let len = self.w.v.len();
        if [addr, last, dst].iter().any(|&r| len < r + n) || len < data + 4 * n {
            return Err(self.range_err());
        }
        // CAST: OFFSET1[5:4] of the 16-bit offset field.
        let size = 8u32 << ((i.imm as u32 >> 12) & 3);
        let mut m = self.w.exec();
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = self.w.v[addr + l];
            let lvp = self.w.v[last + l];
            let node = |k: usize| self.w.v[data + k * n + l];
            let nodes = [node(0), node(1), node(2), node(3)];
            let valid = |d: u32| d != INVALID_NODE && (lvp == INVALID_NODE || d != lvp);
            let base = a >> 18;
            let mut index = a & 0xffff;
            let slot = |index: u32| u64::from(base + 32 * (index % size)) * 4;
            for &d in &nodes[..3] {
                if valid(d) {
                    let r = self.lds_range(slot(index), 4)?;
                    self.lds[r].copy_from_slice(&d.to_le_bytes());
                    index = (index + 1) & 0xffff;
                } else if d == lvp {
                    break;
                }
            }
            let ret = if valid(nodes[3]) {
                nodes[3]
            } else {
                index = index.wrapping_sub(1) & 0xffff;
                let r = self.lds_range(slot(index), 4)?;
                let b = &mut self.lds[r];
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                b.copy_from_slice(&INVALID_NODE.to_le_bytes());
                v
            };
            self.w.v[dst + l] = ret;
            self.w.v[addr + l] = (a & !0xffff) | index;
        }
        Ok(())
    }
}

/// The mnemonic of the instruction at the executor's pc (read again: only a tolerated
/// out-of-range access asks).
pub(super) fn decode_op_name(x: &Exec<'_, '_>) -> &'static str {
    let mut b = [0u8; 12];
    if x.mem.read(x.at.pc, &mut b, Access::Execute).is_err() {
        return "?";
    }
    let w = [0, 4, 8].map(|k| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]));
    decode::decode_for(x.l.isa, x.l.gfx940, &w).map_or("?", |i| i.op.name())
}
