//! Opcodes, limits and the header and control words as bitfields.

use crate::sel::{
    CompareFunction, DataSel, EventIndex, EventType, IntSel, MemSpace, ReleaseDst, UnknownSelector,
    WaitOperation, WriteDataDst,
};

/// PM4 opcodes (IT_OPCODE).
pub mod op {
    /// NOP (body ignored; `PACKET3(NOP, 0x3FFF)` is a header-only 1-dword NOP).
    pub const NOP: u32 = 0x10;
    /// DISPATCH_DIRECT.
    pub const DISPATCH_DIRECT: u32 = 0x15;
    /// PRED_EXEC (one body dword: DEVICE_SELECT << 24 | EXEC_COUNT; Linux `soc15d.h`).
    pub const PRED_EXEC: u32 = 0x23;
    /// WRITE_DATA.
    pub const WRITE_DATA: u32 = 0x37;
    /// WAIT_REG_MEM.
    pub const WAIT_REG_MEM: u32 = 0x3C;
    /// INDIRECT_BUFFER.
    pub const INDIRECT_BUFFER: u32 = 0x3F;
    /// EVENT_WRITE.
    pub const EVENT_WRITE: u32 = 0x46;
    /// RELEASE_MEM.
    pub const RELEASE_MEM: u32 = 0x49;
    /// ACQUIRE_MEM.
    pub const ACQUIRE_MEM: u32 = 0x58;
    /// SET_SH_REG.
    pub const SET_SH_REG: u32 = 0x76;
    /// SET_UCONFIG_REG.
    pub const SET_UCONFIG_REG: u32 = 0x79;
}

/// First dword register of the SET_SH_REG window (`PACKET3_SET_SH_REG_START`).
pub const SET_SH_REG_START: u32 = 0x2C00;
/// Largest body a type-3 header can describe (count field 14 bits).
pub const MAX_BODY_DWORDS: usize = 0x4000;
/// `PACKET3(NOP, 0x3FFF)`: a header-only, 1-dword NOP.
pub const NOP_1DW: u32 = 0xFFFF_1000;

bitfield! {
    /// A PM4 type-3 header: `PACKET3(op, count) = 3<<30 | count<<16 | op<<8`.
    pub struct Pm4Header(u32) {
        /// Predicated execution.
        PREDICATE: 0:0,
        /// Shader type (1 = compute; gfx7 only).
        SHADER_TYPE: 1:1,
        /// Reset filter CAM.
        RESET_FILTER_CAM: 2:2,
        /// Opcode.
        OPCODE: 15:8,
        /// Body dwords minus one.
        COUNT: 29:16,
        /// Packet type (3).
        TYPE: 31:30,
    }
}

impl Pm4Header {
    /// `PACKET3(opcode, body_dwords - 1)` as a const (`body_dwords` in 1..=0x4000).
    #[must_use]
    #[inline]
    pub const fn packet3(opcode: u32, body_dwords: u32) -> Self {
        Self::zeroed()
            .with(Self::TYPE, 3)
            .with(Self::OPCODE, opcode)
            .with(Self::COUNT, body_dwords.wrapping_sub(1))
    }
}

bitfield! {
    /// WAIT_REG_MEM dword 1.
    pub struct WaitRegMemCtl(u32) {
        /// Compare function (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >).
        FUNCTION: 2:0,
        /// 0 register, 1 memory.
        MEM_SPACE: 5:4,
        /// 0 wait, 1 write-then-wait (register form), 2 wait-then-write.
        OPERATION: 7:6,
        /// 0 ME, 1 PFP.
        ENGINE: 9:8,
    }
}

impl WaitRegMemCtl {
    /// The compare function.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`CompareFunction`] does not name.
    #[inline]
    pub const fn function(self) -> Result<CompareFunction, UnknownSelector> {
        CompareFunction::from_raw(self.get(Self::FUNCTION))
    }

    /// What the address words name.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`MemSpace`] does not name.
    #[inline]
    pub const fn mem_space(self) -> Result<MemSpace, UnknownSelector> {
        MemSpace::from_raw(self.get(Self::MEM_SPACE))
    }

    /// Wait, or write and wait.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`WaitOperation`] does not name.
    #[inline]
    pub const fn operation(self) -> Result<WaitOperation, UnknownSelector> {
        WaitOperation::from_raw(self.get(Self::OPERATION))
    }
}

bitfield! {
    /// RELEASE_MEM dword 1: event and cache actions (gfx10+ GCR bits).
    pub struct ReleaseMemEventCntl(u32) {
        /// Event type (0x14 CACHE_FLUSH_AND_INV_TS_EVENT).
        EVENT_TYPE: 5:0,
        /// Event index (5 end of pipe, 6 shader done).
        EVENT_INDEX: 11:8,
        /// Write back GL meta.
        GCR_GLM_WB: 12:12,
        /// Invalidate GL meta.
        GCR_GLM_INV: 13:13,
        /// Invalidate GL vector (gfx9: TC_WB_ACTION_ENA at bit 15).
        GCR_GLV_INV: 14:14,
        /// Invalidate GL1.
        GCR_GL1_INV: 15:15,
        /// GL2 uncached/streaming.
        GCR_GL2_US: 16:16,
        /// GL2 range.
        GCR_GL2_RANGE: 18:17,
        /// GL2 discard.
        GCR_GL2_DISCARD: 19:19,
        /// Invalidate GL2.
        GCR_GL2_INV: 20:20,
        /// Write back GL2.
        GCR_GL2_WB: 21:21,
        /// Sequential GCR.
        GCR_SEQ: 23:22,
        /// Cache policy.
        CACHE_POLICY: 26:25,
        /// Execute.
        EXECUTE: 29:28,
    }
}

impl ReleaseMemEventCntl {
    /// The event.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`EventType`] does not name.
    #[inline]
    pub const fn event_type(self) -> Result<EventType, UnknownSelector> {
        EventType::from_raw(self.get(Self::EVENT_TYPE))
    }

    /// When the release happens (end of pipe, shader done).
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`EventIndex`] does not name.
    #[inline]
    pub const fn event_index(self) -> Result<EventIndex, UnknownSelector> {
        EventIndex::from_raw(self.get(Self::EVENT_INDEX))
    }
}

bitfield! {
    /// RELEASE_MEM dword 2: what to write and whether to interrupt.
    pub struct ReleaseMemDataCntl(u32) {
        /// Destination (0 memory).
        DST_SEL: 17:16,
        /// 0 none, 1 interrupt only, 2 interrupt after write confirm.
        INT_SEL: 26:24,
        /// 0 none, 1 32-bit data, 2 64-bit data, 3 GPU clock, 4 system clock.
        DATA_SEL: 31:29,
    }
}

impl ReleaseMemDataCntl {
    /// What is written.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`DataSel`] does not name.
    #[inline]
    pub const fn data_sel(self) -> Result<DataSel, UnknownSelector> {
        DataSel::from_raw(self.get(Self::DATA_SEL))
    }

    /// Whether and when an interrupt is sent.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`IntSel`] does not name.
    #[inline]
    pub const fn int_sel(self) -> Result<IntSel, UnknownSelector> {
        IntSel::from_raw(self.get(Self::INT_SEL))
    }

    /// Where the data goes.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`ReleaseDst`] does not name.
    #[inline]
    pub const fn dst_sel(self) -> Result<ReleaseDst, UnknownSelector> {
        ReleaseDst::from_raw(self.get(Self::DST_SEL))
    }
}

bitfield! {
    /// GCR_CNTL (ACQUIRE_MEM dword 7 on gfx10+; same bits in SDMA GCR_REQ).
    pub struct GcrCntl(u32) {
        /// Invalidate instruction cache (1 = all).
        GLI_INV: 1:0,
        /// GL1 range.
        GL1_RANGE: 3:2,
        /// Write back GL meta.
        GLM_WB: 4:4,
        /// Invalidate GL meta.
        GLM_INV: 5:5,
        /// Write back scalar cache.
        GLK_WB: 6:6,
        /// Invalidate scalar cache.
        GLK_INV: 7:7,
        /// Invalidate vector L0.
        GLV_INV: 8:8,
        /// Invalidate GL1.
        GL1_INV: 9:9,
        /// GL2 uncached/streaming.
        GL2_US: 10:10,
        /// GL2 range.
        GL2_RANGE: 12:11,
        /// GL2 discard.
        GL2_DISCARD: 13:13,
        /// Invalidate GL2.
        GL2_INV: 14:14,
        /// Write back GL2.
        GL2_WB: 15:15,
        /// Sequence.
        SEQ: 17:16,
        /// Range is a physical address.
        RANGE_IS_PA: 18:18,
    }
}

bitfield! {
    /// CP_COHER_CNTL (ACQUIRE_MEM dword 1 on gfx9).
    pub struct CpCoherCntl(u32) {
        /// TC write-back.
        TC_WB_ACTION_ENA: 18:18,
        /// TCL1 invalidate.
        TCL1_ACTION_ENA: 22:22,
        /// TC invalidate.
        TC_ACTION_ENA: 23:23,
        /// Scalar cache invalidate.
        SH_KCACHE_ACTION_ENA: 27:27,
        /// Instruction cache invalidate.
        SH_ICACHE_ACTION_ENA: 29:29,
    }
}

bitfield! {
    /// INDIRECT_BUFFER dword 3.
    pub struct IbControl(u32) {
        /// IB size in dwords.
        IB_SIZE: 19:0,
        /// Chain.
        CHAIN: 20:20,
        /// Preemption enable.
        PRE_ENA: 21:21,
        /// Valid (the seed sets it).
        VALID: 23:23,
        /// VMID.
        VMID: 27:24,
        /// Cache policy.
        CACHE_POLICY: 29:28,
        /// Preemption resume.
        PRE_RESUME: 30:30,
    }
}

bitfield! {
    /// EVENT_WRITE dword 1.
    pub struct EventWriteCntl(u32) {
        /// Event type (7 CS_PARTIAL_FLUSH).
        EVENT_TYPE: 5:0,
        /// Event index (4 for CS_PARTIAL_FLUSH).
        EVENT_INDEX: 11:8,
    }
}

impl EventWriteCntl {
    /// The event.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`EventType`] does not name.
    #[inline]
    pub const fn event_type(self) -> Result<EventType, UnknownSelector> {
        EventType::from_raw(self.get(Self::EVENT_TYPE))
    }

    /// The event's index.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`EventIndex`] does not name.
    #[inline]
    pub const fn event_index(self) -> Result<EventIndex, UnknownSelector> {
        EventIndex::from_raw(self.get(Self::EVENT_INDEX))
    }
}

bitfield! {
    /// COMPUTE_DISPATCH_INITIATOR (DISPATCH_DIRECT dword 4).
    pub struct DispatchInitiator(u32) {
        /// Compute shader enable.
        COMPUTE_SHADER_EN: 0:0,
        /// Partial threadgroups.
        PARTIAL_TG_EN: 1:1,
        /// Start at (0,0,0).
        FORCE_START_AT_000: 2:2,
        /// Order mode.
        ORDER_MODE: 6:6,
        /// Tunnel.
        TUNNEL: 13:13,
        /// Restore.
        RESTORE: 14:14,
        /// Wave32 (gfx10+).
        CS_W32_EN: 15:15,
    }
}

bitfield! {
    /// WRITE_DATA dword 1.
    pub struct WriteDataCntl(u32) {
        /// 0 register, 1 memory sync, 2 GL2, 5 memory async.
        DST_SEL: 11:8,
        /// Write all data to one address.
        WR_ONE_ADDR: 16:16,
        /// Wait for write confirmation.
        WR_CONFIRM: 20:20,
        /// Cache policy.
        CACHE_POLICY: 26:25,
        /// Engine.
        ENGINE_SEL: 31:30,
    }
}

impl WriteDataCntl {
    /// Where the data goes.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`WriteDataDst`] does not name.
    #[inline]
    pub const fn dst_sel(self) -> Result<WriteDataDst, UnknownSelector> {
        WriteDataDst::from_raw(self.get(Self::DST_SEL))
    }
}
