//! Packet bodies shared by the encoders and the decoder.

use super::*;

/// A RELEASE_MEM packet (8 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReleaseMem {
    /// Dword 1: event and cache actions.
    pub event: ReleaseMemEventCntl,
    /// Dword 2: data/interrupt selection.
    pub data_cntl: ReleaseMemDataCntl,
    /// Destination address.
    pub addr: GpuVa,
    /// Data (32- or 64-bit, per DATA_SEL).
    pub data: u64,
    /// Interrupt context id.
    pub int_ctxid: u32,
}

/// A WAIT_REG_MEM packet (7 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WaitRegMem {
    /// Dword 1.
    pub control: WaitRegMemCtl,
    /// Address low (memory) or request register.
    pub addr_lo: u32,
    /// Address high (memory) or done register.
    pub addr_hi: u32,
    /// Reference value.
    pub reference: u32,
    /// Compare mask.
    pub mask: u32,
    /// Poll interval.
    pub poll_interval: u32,
}

impl WaitRegMem {
    /// The memory address (meaningful when MEM_SPACE is 1).
    #[must_use]
    #[inline]
    pub const fn addr(&self) -> GpuVa {
        GpuVa(join64(self.addr_lo, self.addr_hi))
    }
}

/// An ACQUIRE_MEM packet: 8 dwords with GCR_CNTL (gfx10+) or 7 without (gfx9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AcquireMem {
    /// CP_COHER_CNTL (0 on gfx10+).
    pub coher_cntl: u32,
    /// Size (dwords 2-3, written raw as the seed does).
    pub size: u64,
    /// Base (dwords 4-5).
    pub base: u64,
    /// Poll interval.
    pub poll_interval: u32,
    /// GCR_CNTL (gfx10+ form), `None` for the 7-dword gfx9 form.
    pub gcr_cntl: Option<GcrCntl>,
}

/// An INDIRECT_BUFFER packet (4 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IndirectBuffer {
    /// IB address (dwords 1-2, raw).
    pub addr: GpuVa,
    /// Dword 3.
    pub control: IbControl,
}

/// A DISPATCH_DIRECT packet (5 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DispatchDirect {
    /// Workgroups in x, y, z.
    pub dim: [u32; 3],
    /// COMPUTE_DISPATCH_INITIATOR.
    pub initiator: DispatchInitiator,
}

/// One decoded PM4 packet; variable bodies borrow the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pm4Packet<'a> {
    /// NOP; `body` is empty for the 1-dword header-only NOP.
    Nop {
        /// Ignored body dwords.
        body: &'a [u32],
    },
    /// SET_SH_REG: `values` go to consecutive registers from `reg_offset` (+0x2C00).
    SetShReg {
        /// Register offset from 0x2C00.
        reg_offset: u32,
        /// Values.
        values: &'a [u32],
    },
    /// SET_UCONFIG_REG (offset from 0xC000).
    SetUconfigReg {
        /// Register offset from 0xC000.
        reg_offset: u32,
        /// Values.
        values: &'a [u32],
    },
    /// DISPATCH_DIRECT.
    DispatchDirect(DispatchDirect),
    /// WRITE_DATA.
    WriteData {
        /// Dword 1.
        control: WriteDataCntl,
        /// Destination.
        addr: GpuVa,
        /// Data dwords.
        data: &'a [u32],
    },
    /// WAIT_REG_MEM.
    WaitRegMem(WaitRegMem),
    /// INDIRECT_BUFFER.
    IndirectBuffer(IndirectBuffer),
    /// EVENT_WRITE.
    EventWrite(EventWriteCntl),
    /// RELEASE_MEM.
    ReleaseMem(ReleaseMem),
    /// ACQUIRE_MEM.
    AcquireMem(AcquireMem),
}
