//! Buffer and scratch accesses out of range: the hardware reads 0 and drops the write (RDNA3
//! ISA guide, buffer "Range Checking": "reads that go out-of-range return zero", "writes that
//! are out-of-range do not write anything", dword x2/x3/x4 loads and stores checked per dword,
//! format loads/stores and atomics all or nothing; scratch is a swizzled buffer over the
//! wave's slot). A strict run faults; otherwise each lane's access is counted as a finding
//! ([`crate::isa::OutOfRange`]) and done as the GPU does it.

use super::*;
use crate::isa::{OutOfRange, Space};

impl Exec<'_, '_> {
    /// Records `lanes` tolerated accesses of the current instruction (the first one kept).
    pub(super) fn tolerate(
        &mut self,
        space: Space,
        address: u64,
        bytes: u32,
        allocation: u64,
        lanes: u64,
    ) {
        self.w.oob.0 += lanes;
        if self.w.oob.1.is_none() {
            self.w.oob.1 = Some(OutOfRange {
                space,
                pc_offset: self.at.pc.wrapping_sub(self.l.pgm),
                mnemonic: super::lds::decode_op_name(self),
                address,
                bytes,
                allocation,
            });
        }
    }

    /// Runs `access` over the active lanes in `ok` only; the destination bits a load writes
    /// read 0 in the other active lanes. `fmt`: a format load's registers and the bits of
    /// each it keeps (its other half, for a one-component d16 load).
    pub(super) fn in_range_only(
        &mut self,
        i: &Inst,
        ok: u64,
        fmt: Option<(usize, u32)>,
        access: impl FnOnce(&mut Self) -> Result<(), IsaError>,
    ) -> Result<(), IsaError> {
        let exec = self.w.exec();
        let saved = (self.w.s[126], self.w.s[127]);
        self.w.set_exec(exec & ok);
        let r = access(self);
        (self.w.s[126], self.w.s[127]) = saved;
        r?;
        let out = exec & !ok;
        if i.dst == NONE || out == 0 {
            return Ok(());
        }
        use Op::*;
        let (regs, keep) = match (i.op, fmt) {
            (MLoadFormat, Some(f)) => f,
            (MLoadD16U8 | MLoadD16I8 | MLoadD16B16, _) => (1, 0xffff_0000),
            (MLoadD16HiU8 | MLoadD16HiI8 | MLoadD16HiB16, _) => (1, 0xffff),
            _ => (super::memory::vmem_size(i.op).div_ceil(4), 0),
        };
        let n = self.w.lanes;
        let d = self.vreg(i.dst, regs)?;
        for k in 0..regs {
            let mut m = out;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                if let Some(x) = self.w.v.get_mut(d + k * n + l) {
                    *x &= keep;
                }
            }
        }
        Ok(())
    }
}
