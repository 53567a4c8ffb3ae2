//! Display (umr style: one line, the packet name and every field).

use super::*;

struct Hex<'a>(&'a [u32]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{v:#x}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for Pm4Packet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pm4Packet::Nop { body } => write!(f, "NOP dwords={}", body.len() + 1),
            Pm4Packet::SetShReg { reg_offset, values } => write!(
                f,
                "SET_SH_REG reg_offset={reg_offset:#x} reg={:#x} values={}",
                reg_offset.wrapping_add(SET_SH_REG_START),
                Hex(values)
            ),
            Pm4Packet::SetUconfigReg { reg_offset, values } => write!(
                f,
                "SET_UCONFIG_REG reg_offset={reg_offset:#x} reg={:#x} values={}",
                reg_offset.wrapping_add(0xC000),
                Hex(values)
            ),
            Pm4Packet::DispatchDirect(d) => {
                write!(
                    f,
                    "DISPATCH_DIRECT dim_x={} dim_y={} dim_z={} initiator={:#x}",
                    d.dim[0],
                    d.dim[1],
                    d.dim[2],
                    d.initiator.raw()
                )?;
                write_fields(f, DispatchInitiator::FIELDS, d.initiator.raw())?;
                Ok(())
            }
            Pm4Packet::WriteData {
                control,
                addr,
                data,
            } => {
                write!(f, "WRITE_DATA control={:#x}", control.raw())?;
                write_fields(f, WriteDataCntl::FIELDS, control.raw())?;
                write!(f, " addr={addr} data={}", Hex(data))
            }
            Pm4Packet::WaitRegMem(w) => {
                write!(f, "WAIT_REG_MEM control={:#x}", w.control.raw())?;
                write_fields(f, WaitRegMemCtl::FIELDS, w.control.raw())?;
                write!(
                    f,
                    " addr_lo={:#x} addr_hi={:#x} reference={:#x} mask={:#x} poll_interval={:#x}",
                    w.addr_lo, w.addr_hi, w.reference, w.mask, w.poll_interval
                )
            }
            Pm4Packet::IndirectBuffer(ib) => {
                write!(
                    f,
                    "INDIRECT_BUFFER addr={} control={:#x}",
                    ib.addr,
                    ib.control.raw()
                )?;
                write_fields(f, IbControl::FIELDS, ib.control.raw())?;
                Ok(())
            }
            Pm4Packet::EventWrite(e) => {
                write!(f, "EVENT_WRITE control={:#x}", e.raw())?;
                write_fields(f, EventWriteCntl::FIELDS, e.raw())?;
                Ok(())
            }
            Pm4Packet::ReleaseMem(r) => {
                write!(f, "RELEASE_MEM event_cntl={:#x}", r.event.raw())?;
                write_fields(f, ReleaseMemEventCntl::FIELDS, r.event.raw())?;
                write!(f, " data_cntl={:#x}", r.data_cntl.raw())?;
                write_fields(f, ReleaseMemDataCntl::FIELDS, r.data_cntl.raw())?;
                write!(
                    f,
                    " addr={} data={:#x} int_ctxid={:#x}",
                    r.addr, r.data, r.int_ctxid
                )
            }
            Pm4Packet::AcquireMem(a) => {
                write!(
                    f,
                    "ACQUIRE_MEM coher_cntl={:#x} size={:#x} base={:#x} poll_interval={:#x}",
                    a.coher_cntl, a.size, a.base, a.poll_interval
                )?;
                if let Some(g) = a.gcr_cntl {
                    write!(f, " gcr_cntl={:#x}", g.raw())?;
                    write_fields(f, GcrCntl::FIELDS, g.raw())?;
                }
                Ok(())
            }
        }
    }
}
