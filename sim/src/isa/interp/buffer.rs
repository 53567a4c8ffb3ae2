//! MUBUF: per-lane addresses through the buffer resource (V#), range-checked against its
//! NUM_RECORDS (`oor.rs` for what an out-of-range lane does); the access is the FLAT
//! family's (`memory.rs`).

use super::memory::{vmem_plain, vmem_size};
use super::*;
use crate::isa::Space;

impl Exec<'_, '_> {
    /// MUBUF loads, stores and atomics through the buffer resource (V#) in four SGPRs: raw,
    /// or swizzled with ADD_TID as the scratch V# is (gfx9 layout, `hcq_core::rsrc`). Each
    /// lane's address is computed here; the access is the FLAT family's ([`Self::vmem`]).
    pub(super) fn mubuf(&mut self, i: &Inst) -> Result<(), IsaError> {
        let r = i.src[2];
        let v = [
            self.s32(r, 0)?,
            self.s32(r + 1, 0)?,
            self.s32(r + 2, 0)?,
            self.s32(r + 3, 0)?,
        ];
        // Typed accesses: one element of the buffer format per lane (`format.rs`).
        let fmt = if matches!(i.op, Op::MLoadFormat | Op::MStoreFormat) {
            match self.buf_fmt(i, v[3]) {
                Some(f) => Some(f),
                None => return self.format_invalid(i),
            }
        } else {
            None
        };
        let size = fmt.map_or(vmem_size(i.op), |f| f.bytes());
        let base = u64::from(v[0]) | (u64::from(v[1] & 0xffff) << 32);
        let stride = u64::from((v[1] >> 16) & 0x3fff);
        let swizzle = v[1] >> 31 == 1;
        let num_records = u64::from(v[2]);
        let add_tid = (v[3] >> 23) & 1 == 1;
        let index_stride = 8u64 << ((v[3] >> 21) & 3);
        let elem = 2u64 << ((v[3] >> 19) & 3);
        let soff = u64::from(self.s32(i.sdst, i.lit)?);
        // vaddr: the index with idxen, then (next VGPR when both) the offset with offen.
        let (idxen, offen) = (i.flags & 16 != 0, i.flags & 8 != 0);
        let mut vidx = [0u32; MAX_LANES];
        let mut voff = [0u32; MAX_LANES];
        if idxen {
            self.lanes32(i, 0, Width::B32, &mut vidx)?;
        }
        if offen {
            let mut j = *i;
            j.src[0] = i.src[0] + u16::from(idxen);
            self.lanes32(&j, 0, Width::B32, &mut voff)?;
        }
        let exec = self.w.exec();
        // Lane `l`'s buffer offset `extra` bytes into its access, and its record index.
        let locate = |l: usize, extra: u64| {
            // CAST: offsets are 32-bit.
            let off = u64::from(i.imm as u32) + u64::from(voff[l]) + extra;
            let index = u64::from(vidx[l]) + if add_tid { l as u64 } else { 0 };
            let boff = if swizzle {
                let (imsb, ilsb) = (index / index_stride, index % index_stride);
                let (omsb, olsb) = (off / elem, off % elem);
                (imsb * stride + omsb * elem) * index_stride + ilsb * elem + olsb
            } else {
                off + index * stride
            };
            (boff, index)
        };
        // Range checks (gfx9 ISA, buffer addressing): a structured buffer (idxen,
        // STRIDE != 0) counts NUM_RECORDS in records and checks the index; otherwise
        // NUM_RECORDS is bytes and the offset is checked.
        let structured = idxen && stride != 0;
        let in_range = |(boff, index): (u64, u64), bytes: u64| {
            if structured {
                index < num_records
            } else {
                boff + bytes <= num_records
            }
        };
        // Dword x2/x3/x4 loads and stores are range-checked per dword (RDNA3 ISA, buffer
        // "Range Checking"): a lane partly in range is split into dwords.
        let mut partly = false;
        if fmt.is_none() && vmem_plain(i.op) && size > 4 && !structured {
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                partly |= !in_range(locate(l, 0), size as u64);
            }
        }
        // A swizzled access wider than an element is split per dword (each its own address).
        let parts = if swizzle && size as u64 > elem {
            if size % 4 != 0 || !vmem_plain(i.op) {
                return Err(self.err(&format!(
                    "{} of {size} bytes through a swizzled V# with {elem}-byte elements (only dword loads and stores are split)",
                    i.op.name()
                )));
            }
            size / 4
        } else if partly {
            size / 4
        } else {
            1
        };
        let part = size / parts;
        let mut addr = [0u64; MAX_LANES];
        for k in 0..parts {
            let mut ok = 0u64;
            let mut bad = None;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let at = locate(l, (k * part) as u64);
                if in_range(at, part as u64) {
                    ok |= 1 << l;
                } else if bad.is_none() {
                    bad = Some((l, at));
                }
                addr[l] = base.wrapping_add(soff).wrapping_add(at.0);
            }
            if let Some((l, (boff, index))) = bad {
                if self.w.strict || i.flags & 0x80 != 0 {
                    return Err(self.err(&if structured {
                        format!(
                            "{} of lane {l} at index {index} beyond the V#'s NUM_RECORDS {num_records} (records of {stride} bytes)",
                            i.op.name()
                        )
                    } else {
                        format!(
                            "{} of lane {l} at buffer offset {boff:#x} beyond the V#'s NUM_RECORDS {num_records:#x}",
                            i.op.name()
                        )
                    }));
                }
                let (address, bytes) = if structured {
                    (index, 1)
                } else {
                    // CAST: at most 16 bytes.
                    (boff, part as u32)
                };
                let lanes = u64::from((exec & !ok).count_ones());
                self.tolerate(Space::Buffer, address, bytes, num_records, lanes);
            }
            if parts == 1 && i.flags & 0x80 != 0 {
                return self.lds_dma(i, &addr, false, fmt);
            }
            if parts == 1 {
                let f = fmt.map(|_| {
                    let regs = usize::from(crate::isa::decode::format_regs(i.omod));
                    // A one-component d16 format load writes one half and keeps the other.
                    let keep = match (i.omod & 4 != 0 && i.omod & 3 == 0, i.omod & 8 != 0) {
                        (false, _) => 0,
                        (true, false) => 0xffff_0000,
                        (true, true) => 0xffff,
                    };
                    (regs, keep)
                });
                return self.in_range_only(i, ok, f, |x| match fmt {
                    Some(f) => x.format_access(i, &addr, f, v[3]),
                    None => x.vmem(i, &addr, false),
                });
            }
            // One dword of each lane: the same operation on the k-th register.
            let mut j = *i;
            j.op = if i.dst != NONE {
                Op::MLoadB32
            } else {
                Op::MStoreB32
            };
            // CAST: k < 4.
            let kk = k as u16;
            if j.dst != NONE {
                j.dst += kk;
            } else {
                j.src[1] += kk;
            }
            self.in_range_only(&j, ok, None, |x| x.vmem(&j, &addr, false))?;
        }
        Ok(())
    }
}
