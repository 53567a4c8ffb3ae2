//! PM4 type-3 packets for the compute (MEC) queue: header and control words as bitfields, one
//! encoder per packet writing into a caller's `&mut [u32]`, the seed's command sequences
//! (`memory_barrier`, `exec`, `wait`, `signal`, `timestamp`), and a strict decoder.
//!
//! Every encoder returns the dwords it wrote, or an [`EncodeError`] having written nothing
//! useful; none panics. Fixed-size encoders check the buffer once and then store a whole array.

use core::fmt;

use crate::arch::{AcquireMemLayout, ArchInfo, GpuVa, hi32, join64, lo32};
use crate::hsa::DispatchPacket;
use crate::packet::{
    DecodeError, DecodeErrorKind, EncodeError, check_max, head, len64, room, write_fields,
};
use crate::rsrc::ScratchRsrc;
use crate::signal::SignalRef;

/// PM4 opcodes (IT_OPCODE).
pub mod op {
    /// NOP (body ignored; `PACKET3(NOP, 0x3FFF)` is a header-only 1-dword NOP).
    pub const NOP: u32 = 0x10;
    /// DISPATCH_DIRECT.
    pub const DISPATCH_DIRECT: u32 = 0x15;
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

/// WAIT_REG_MEM / POLL_REGMEM compare functions.
pub mod func {
    /// Always true.
    pub const ALWAYS: u32 = 0;
    /// `==`.
    pub const EQ: u32 = 3;
    /// `!=`.
    pub const NE: u32 = 4;
    /// `>=`.
    pub const GEQ: u32 = 5;
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

// ---------------------------------------------------------------------------------------------
// Packet bodies shared by encoders and the decoder.

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

// ---------------------------------------------------------------------------------------------
// Building blocks.

/// Dwords of a RELEASE_MEM.
pub const RELEASE_MEM_DWORDS: usize = 8;
/// Dwords of a WAIT_REG_MEM.
pub const WAIT_REG_MEM_DWORDS: usize = 7;
/// Dwords of an INDIRECT_BUFFER.
pub const INDIRECT_BUFFER_DWORDS: usize = 4;
/// Dwords of a DISPATCH_DIRECT.
pub const DISPATCH_DIRECT_DWORDS: usize = 5;
/// Dwords of an EVENT_WRITE.
pub const EVENT_WRITE_DWORDS: usize = 2;
/// Largest INDIRECT_BUFFER size in dwords (IB_SIZE is 20 bits).
pub const MAX_IB_DWORDS: u32 = (1 << 20) - 1;

/// Encodes a RELEASE_MEM.
#[inline]
pub fn release_mem(buf: &mut [u32], p: &ReleaseMem) -> Result<usize, EncodeError> {
    let out = head::<RELEASE_MEM_DWORDS>(buf)?;
    *out = [
        Pm4Header::packet3(op::RELEASE_MEM, 7).raw(),
        p.event.raw(),
        p.data_cntl.raw(),
        p.addr.lo(),
        p.addr.hi(),
        lo32(p.data),
        hi32(p.data),
        p.int_ctxid,
    ];
    Ok(RELEASE_MEM_DWORDS)
}

/// Encodes a WAIT_REG_MEM.
#[inline]
pub fn wait_reg_mem(buf: &mut [u32], p: &WaitRegMem) -> Result<usize, EncodeError> {
    let out = head::<WAIT_REG_MEM_DWORDS>(buf)?;
    *out = [
        Pm4Header::packet3(op::WAIT_REG_MEM, 6).raw(),
        p.control.raw(),
        p.addr_lo,
        p.addr_hi,
        p.reference,
        p.mask,
        p.poll_interval,
    ];
    Ok(WAIT_REG_MEM_DWORDS)
}

/// Encodes an ACQUIRE_MEM (7 or 8 dwords, by `p.gcr_cntl`).
#[inline]
pub fn acquire_mem(buf: &mut [u32], p: &AcquireMem) -> Result<usize, EncodeError> {
    match p.gcr_cntl {
        Some(gcr) => {
            let out = head::<8>(buf)?;
            *out = [
                Pm4Header::packet3(op::ACQUIRE_MEM, 7).raw(),
                p.coher_cntl,
                lo32(p.size),
                hi32(p.size),
                lo32(p.base),
                hi32(p.base),
                p.poll_interval,
                gcr.raw(),
            ];
            Ok(8)
        }
        None => {
            let out = head::<7>(buf)?;
            *out = [
                Pm4Header::packet3(op::ACQUIRE_MEM, 6).raw(),
                p.coher_cntl,
                lo32(p.size),
                hi32(p.size),
                lo32(p.base),
                hi32(p.base),
                p.poll_interval,
            ];
            Ok(7)
        }
    }
}

/// Encodes an INDIRECT_BUFFER with an explicit control word.
#[inline]
pub fn indirect_buffer_raw(buf: &mut [u32], p: &IndirectBuffer) -> Result<usize, EncodeError> {
    let out = head::<INDIRECT_BUFFER_DWORDS>(buf)?;
    *out = [
        Pm4Header::packet3(op::INDIRECT_BUFFER, 3).raw(),
        p.addr.lo(),
        p.addr.hi(),
        p.control.raw(),
    ];
    Ok(INDIRECT_BUFFER_DWORDS)
}

/// The seed's INDIRECT_BUFFER: `size_dwords | VALID`.
#[inline]
pub fn indirect_buffer(
    buf: &mut [u32],
    addr: GpuVa,
    size_dwords: u32,
) -> Result<usize, EncodeError> {
    check_max(
        "indirect_buffer size_dwords",
        size_dwords.into(),
        MAX_IB_DWORDS.into(),
    )?;
    let control = IbControl::zeroed()
        .with(IbControl::IB_SIZE, size_dwords)
        .with(IbControl::VALID, 1);
    indirect_buffer_raw(buf, &IndirectBuffer { addr, control })
}

/// Encodes a DISPATCH_DIRECT.
#[inline]
pub fn dispatch_direct(buf: &mut [u32], p: &DispatchDirect) -> Result<usize, EncodeError> {
    let out = head::<DISPATCH_DIRECT_DWORDS>(buf)?;
    *out = [
        Pm4Header::packet3(op::DISPATCH_DIRECT, 4).raw(),
        p.dim[0],
        p.dim[1],
        p.dim[2],
        p.initiator.raw(),
    ];
    Ok(DISPATCH_DIRECT_DWORDS)
}

/// Encodes an EVENT_WRITE (2 dwords).
#[inline]
pub fn event_write(buf: &mut [u32], cntl: EventWriteCntl) -> Result<usize, EncodeError> {
    let out = head::<EVENT_WRITE_DWORDS>(buf)?;
    *out = [Pm4Header::packet3(op::EVENT_WRITE, 1).raw(), cntl.raw()];
    Ok(EVENT_WRITE_DWORDS)
}

fn set_reg(
    buf: &mut [u32],
    opcode: u32,
    reg_offset: u32,
    values: &[u32],
) -> Result<usize, EncodeError> {
    check_max(
        "register count",
        len64(values.len()),
        len64(MAX_BODY_DWORDS - 1),
    )?;
    if values.is_empty() {
        return Err(EncodeError::ValueTooLarge {
            field: "register count (must be at least 1)",
            value: 0,
            max: 0,
        });
    }
    let n = values.len() + 2;
    let out = room(buf, n)?;
    // CAST: len <= 0x3FFF checked above.
    let body = (values.len() + 1) as u32;
    if let Some((h, rest)) = out.split_first_chunk_mut::<2>() {
        *h = [Pm4Header::packet3(opcode, body).raw(), reg_offset];
        rest.copy_from_slice(values);
    }
    Ok(n)
}

/// Encodes SET_SH_REG writing `values` from register offset `reg_offset` (1..=0x3FFE values).
#[inline]
pub fn set_sh_reg(buf: &mut [u32], reg_offset: u32, values: &[u32]) -> Result<usize, EncodeError> {
    set_reg(buf, op::SET_SH_REG, reg_offset, values)
}

/// Encodes SET_UCONFIG_REG.
#[inline]
pub fn set_uconfig_reg(
    buf: &mut [u32],
    reg_offset: u32,
    values: &[u32],
) -> Result<usize, EncodeError> {
    set_reg(buf, op::SET_UCONFIG_REG, reg_offset, values)
}

/// Encodes WRITE_DATA of `data` (1..=0x3FFC dwords) to `addr`.
#[inline]
pub fn write_data(
    buf: &mut [u32],
    control: WriteDataCntl,
    addr: GpuVa,
    data: &[u32],
) -> Result<usize, EncodeError> {
    check_max(
        "write_data length",
        len64(data.len()),
        len64(MAX_BODY_DWORDS - 3),
    )?;
    if data.is_empty() {
        return Err(EncodeError::ValueTooLarge {
            field: "write_data length (must be at least 1)",
            value: 0,
            max: 0,
        });
    }
    let n = data.len() + 4;
    let out = room(buf, n)?;
    // CAST: len <= 0x3FFD checked above.
    let body = (data.len() + 3) as u32;
    if let Some((h, rest)) = out.split_first_chunk_mut::<4>() {
        *h = [
            Pm4Header::packet3(op::WRITE_DATA, body).raw(),
            control.raw(),
            addr.lo(),
            addr.hi(),
        ];
        rest.copy_from_slice(data);
    }
    Ok(n)
}

/// Encodes a NOP of exactly `dwords` dwords (>= 1): 1 is the header-only NOP, more is
/// `PACKET3(NOP, dwords-2)` plus zero filler.
#[inline]
pub fn nop(buf: &mut [u32], dwords: usize) -> Result<usize, EncodeError> {
    check_max("nop length", len64(dwords), len64(MAX_BODY_DWORDS))?;
    let out = room(buf, dwords)?;
    let Some((h, rest)) = out.split_first_mut() else {
        return Err(EncodeError::ValueTooLarge {
            field: "nop length (must be at least 1)",
            value: 0,
            max: 0,
        });
    };
    if rest.is_empty() {
        *h = NOP_1DW;
    } else {
        // CAST: rest.len() < 0x4000.
        *h = Pm4Header::packet3(op::NOP, rest.len() as u32).raw();
        rest.fill(0);
    }
    Ok(dwords)
}

// ---------------------------------------------------------------------------------------------
// The seed's commands.

/// Which caches an ACQUIRE_MEM invalidates (the seed's `_invalidate_cache` keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheInvalidate {
    /// GLI_INV (instruction cache; 0..=3).
    pub gli: u32,
    /// GLM invalidate + write-back.
    pub glm: bool,
    /// GLK invalidate + write-back.
    pub glk: bool,
    /// GLV invalidate.
    pub glv: bool,
    /// GL1 invalidate.
    pub gl1: bool,
    /// GL2 invalidate + write-back.
    pub gl2: bool,
}

impl CacheInvalidate {
    /// Everything (the seed's default).
    pub const ALL: Self = Self {
        gli: 1,
        glm: true,
        glk: true,
        glv: true,
        gl1: true,
        gl2: true,
    };

    /// The GCR_CNTL word.
    #[must_use]
    #[inline]
    pub const fn gcr(self) -> GcrCntl {
        GcrCntl::zeroed()
            .with(GcrCntl::GLI_INV, self.gli)
            .with_flag(GcrCntl::GLM_INV, self.glm)
            .with_flag(GcrCntl::GLM_WB, self.glm)
            .with_flag(GcrCntl::GLK_INV, self.glk)
            .with_flag(GcrCntl::GLK_WB, self.glk)
            .with_flag(GcrCntl::GLV_INV, self.glv)
            .with_flag(GcrCntl::GL1_INV, self.gl1)
            .with_flag(GcrCntl::GL2_INV, self.gl2)
            .with_flag(GcrCntl::GL2_WB, self.gl2)
    }

    /// The ACQUIRE_MEM packet for `arch` over `[addr, addr+size)`.
    #[must_use]
    #[inline]
    pub const fn acquire(self, arch: &ArchInfo, addr: u64, size: u64) -> AcquireMem {
        match arch.acquire_mem {
            AcquireMemLayout::GcrCntl => AcquireMem {
                coher_cntl: 0,
                size,
                base: addr,
                poll_interval: 0,
                gcr_cntl: Some(self.gcr()),
            },
            AcquireMemLayout::CoherCntl => AcquireMem {
                coher_cntl: CpCoherCntl::zeroed()
                    .with_flag(CpCoherCntl::SH_ICACHE_ACTION_ENA, self.gli != 0)
                    .with_flag(CpCoherCntl::SH_KCACHE_ACTION_ENA, self.glk)
                    .with(CpCoherCntl::TC_ACTION_ENA, 1)
                    .with(CpCoherCntl::TCL1_ACTION_ENA, 1)
                    .with(CpCoherCntl::TC_WB_ACTION_ENA, 1)
                    .raw(),
                size,
                base: addr,
                poll_interval: 0xA,
                gcr_cntl: None,
            },
        }
    }
}

/// The seed's `_invalidate_cache(addr, sz, ...)`: one ACQUIRE_MEM (`arch.acquire_mem.dwords()`).
#[inline]
pub fn invalidate_cache(
    buf: &mut [u32],
    arch: &ArchInfo,
    addr: u64,
    size: u64,
    which: CacheInvalidate,
) -> Result<usize, EncodeError> {
    acquire_mem(buf, &which.acquire(arch, addr, size))
}

/// Dwords of [`memory_barrier`].
#[must_use]
#[inline]
pub const fn memory_barrier_dwords(arch: &ArchInfo) -> usize {
    WAIT_REG_MEM_DWORDS + arch.acquire_mem.dwords()
}

/// The HDP-flush WAIT_REG_MEM (write REQ, wait for DONE == 0xffffffff) of `memory_barrier`.
#[must_use]
#[inline]
pub const fn hdp_flush_wait(arch: &ArchInfo) -> WaitRegMem {
    WaitRegMem {
        control: WaitRegMemCtl::zeroed()
            .with(WaitRegMemCtl::MEM_SPACE, 0)
            .with(WaitRegMemCtl::OPERATION, 1)
            .with(WaitRegMemCtl::FUNCTION, func::EQ)
            .with(WaitRegMemCtl::ENGINE, 0),
        addr_lo: arch.hdp_flush_req,
        addr_hi: arch.hdp_flush_done,
        reference: 0xffff_ffff,
        mask: 0xffff_ffff,
        poll_interval: 0x20,
    }
}

/// The seed's `memory_barrier`: HDP flush WAIT_REG_MEM then a full ACQUIRE_MEM.
#[inline]
pub fn memory_barrier(buf: &mut [u32], arch: &ArchInfo) -> Result<usize, EncodeError> {
    let n = memory_barrier_dwords(arch);
    let out = room(buf, n)?;
    let a = wait_reg_mem(out, &hdp_flush_wait(arch))?;
    let b = invalidate_cache(
        out.get_mut(a..).unwrap_or_default(),
        arch,
        0,
        u64::MAX,
        CacheInvalidate::ALL,
    )?;
    Ok(a + b)
}

/// Dwords of [`wait`].
pub const WAIT_DWORDS: usize = WAIT_REG_MEM_DWORDS;

/// The WAIT_REG_MEM of [`wait`].
#[must_use]
#[inline]
pub const fn wait_packet(value_addr: GpuVa, value: u32) -> WaitRegMem {
    WaitRegMem {
        control: WaitRegMemCtl::zeroed()
            .with(WaitRegMemCtl::MEM_SPACE, 1)
            .with(WaitRegMemCtl::OPERATION, 0)
            .with(WaitRegMemCtl::FUNCTION, func::GEQ)
            .with(WaitRegMemCtl::ENGINE, 0),
        addr_lo: value_addr.lo(),
        addr_hi: value_addr.hi(),
        reference: value,
        mask: 0xffff_ffff,
        poll_interval: 4,
    }
}

/// The seed's `wait(signal, value)`: WAIT_REG_MEM until `signal.value >= value`.
#[inline]
pub fn wait(buf: &mut [u32], signal: &SignalRef, value: u32) -> Result<usize, EncodeError> {
    wait_reg_mem(buf, &wait_packet(GpuVa(signal.value_addr()), value))
}

/// The RELEASE_MEM the seed's `_release_mem` builds.
#[must_use]
#[inline]
pub const fn release_packet(
    arch: &ArchInfo,
    data_sel: u32,
    int_sel: u32,
    addr: GpuVa,
    data: u64,
    int_ctxid: u32,
    cache_flush: bool,
) -> ReleaseMem {
    let flush = if cache_flush {
        arch.release_mem_cache_flush
    } else {
        0
    };
    ReleaseMem {
        event: ReleaseMemEventCntl(flush)
            .with(
                ReleaseMemEventCntl::EVENT_TYPE,
                arch.events.cache_flush_and_inv_ts,
            )
            .with(
                ReleaseMemEventCntl::EVENT_INDEX,
                arch.events.release_mem_end_of_pipe,
            ),
        data_cntl: ReleaseMemDataCntl::zeroed()
            .with(ReleaseMemDataCntl::DATA_SEL, data_sel)
            .with(ReleaseMemDataCntl::INT_SEL, int_sel)
            .with(ReleaseMemDataCntl::DST_SEL, 0),
        addr,
        data,
        int_ctxid,
    }
}

/// Dwords of [`timestamp`].
pub const TIMESTAMP_DWORDS: usize = RELEASE_MEM_DWORDS;

/// The seed's `timestamp(signal)`: RELEASE_MEM writing the GPU clock to `start_ts`.
#[inline]
pub fn timestamp(
    buf: &mut [u32],
    arch: &ArchInfo,
    signal: &SignalRef,
) -> Result<usize, EncodeError> {
    release_mem(
        buf,
        &release_packet(arch, 3, 0, GpuVa(signal.start_ts_addr()), 0, 0, false),
    )
}

/// Dwords of [`signal`]: 8, or 16 when the signal has a KFD event mailbox.
#[must_use]
#[inline]
pub const fn signal_dwords(signal: &SignalRef) -> usize {
    if signal.has_event() {
        2 * RELEASE_MEM_DWORDS
    } else {
        RELEASE_MEM_DWORDS
    }
}

/// The seed's `signal(signal, value)`: RELEASE_MEM writing `value` (64-bit field, int_sel 2,
/// cache flush), plus, when the signal has a mailbox, a RELEASE_MEM writing `event_id` there
/// with an interrupt whose context is `event_id`.
#[inline]
pub fn signal(
    buf: &mut [u32],
    arch: &ArchInfo,
    signal: &SignalRef,
    value: u64,
) -> Result<usize, EncodeError> {
    let main = release_packet(arch, 1, 2, GpuVa(signal.value_addr()), value, 0, true);
    if signal.has_event() {
        let out = head::<16>(buf)?;
        let (a, b) = out.split_at_mut(8);
        release_mem(a, &main)?;
        release_mem(b, &mailbox_packet(arch, signal))?;
        Ok(16)
    } else {
        release_mem(buf, &main)
    }
}

/// The mailbox RELEASE_MEM of [`signal`].
#[must_use]
#[inline]
pub const fn mailbox_packet(arch: &ArchInfo, signal: &SignalRef) -> ReleaseMem {
    release_packet(
        arch,
        1,
        2,
        GpuVa(signal.event_mailbox_ptr),
        // CAST: u32 -> u64 is lossless (`From` is not const).
        signal.event_id as u64,
        signal.event_id,
        true,
    )
}

/// A compiled kernel as the seed's `exec` sees it.
///
/// `exec` fills the kernel's user SGPRs (`COMPUTE_USER_DATA_0..`) in the order the hardware
/// allocates them from `kernel_code_properties` (LLVM `AMDGPUUsage`, "Initial Kernel Execution
/// State"): the private segment buffer (4), the dispatch pointer (2), the kernarg pointer (2),
/// flat scratch init (2), each only when present here. A kernel that also asks for the queue
/// pointer, the dispatch id or the private segment size SGPRs cannot be described: the runtime
/// must refuse it (hcq's driver does, at load).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Program {
    /// Entry point address (256-byte aligned; PGM_LO/HI get `>> 8`).
    pub prog_addr: GpuVa,
    /// Scratch base (DISPATCH_SCRATCH_BASE gets `>> 8`).
    pub scratch_addr: GpuVa,
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// COMPUTE_PGM_RSRC1.
    pub rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub rsrc2: u32,
    /// Present when the kernel takes a dispatch pointer.
    pub dispatch: Option<DispatchInfo>,
    /// The scratch V# for a kernel with `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER` (gfx9 before
    /// gfx940, gfx10): `USER_DATA_0..=3`, before every other input.
    pub private_segment_buffer: Option<ScratchRsrc>,
    /// `FLAT_SCRATCH_INIT` for a kernel with `ENABLE_SGPR_FLAT_SCRATCH_INIT`: on
    /// absolute-flat-scratch targets the 64-bit base address of the queue's scratch (the
    /// kernel's prologue adds its wave offset and moves it to `FLAT_SCRATCH`); 2 user SGPRs
    /// after the kernarg pointer.
    pub flat_scratch_init: Option<GpuVa>,
}

impl Program {
    /// `COMPUTE_USER_DATA` registers [`exec`] writes for this program (2 to 10).
    #[must_use]
    #[inline]
    pub const fn user_data_dwords(&self) -> usize {
        let mut n = 2;
        if self.private_segment_buffer.is_some() {
            n += 4;
        }
        if self.dispatch.is_some() {
            n += 2;
        }
        if self.flat_scratch_init.is_some() {
            n += 2;
        }
        n
    }
}

/// What the dispatch packet of a kernel with a dispatch pointer needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DispatchInfo {
    /// Byte offset of the 64-byte dispatch packet inside the kernargs.
    pub packet_offset: u64,
    /// LDS bytes.
    pub group_segment_size: u32,
    /// Scratch bytes per work-item.
    pub private_segment_size: u32,
}

/// Where the patchable parts of an exec command sit (dword offsets from its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecLayout {
    /// Total dwords.
    pub dwords: usize,
    /// SET_SH_REG header of COMPUTE_START_X.
    pub start_at: usize,
    /// First NUM_THREAD value (local x, y, z follow).
    pub local_at: usize,
    /// DISPATCH_DIRECT header (global x, y, z follow).
    pub dispatch_at: usize,
}

/// Dwords of the fixed register block between ACQUIRE_MEM and USER_DATA.
const EXEC_MID: usize = 35;
/// Dwords after USER_DATA: START/NUM_THREAD (10), RESOURCE_LIMITS (3), DISPATCH (5), EVENT (2).
const EXEC_TAIL: usize = 20;

/// Most `COMPUTE_USER_DATA` values [`exec`] writes (private segment buffer 4, dispatch pointer
/// 2, kernarg pointer 2, flat scratch init 2).
pub const EXEC_MAX_USER_DATA: usize = 10;

/// The layout of [`exec`] of `prog` on `arch` (it depends on the user SGPRs the program takes).
#[must_use]
#[inline]
pub const fn exec_layout(arch: &ArchInfo, prog: &Program) -> ExecLayout {
    // SET_SH_REG header and register offset, then the values.
    let user = 2 + prog.user_data_dwords();
    let start_at = arch.acquire_mem.dwords() + EXEC_MID + user;
    ExecLayout {
        dwords: start_at + EXEC_TAIL,
        start_at,
        local_at: start_at + 5,
        dispatch_at: start_at + 13,
    }
}

/// The DISPATCH_INITIATOR the seed uses: compute shader, start at 0, wave32 where it exists.
#[must_use]
#[inline]
pub const fn dispatch_initiator(arch: &ArchInfo) -> DispatchInitiator {
    DispatchInitiator::zeroed()
        .with(DispatchInitiator::COMPUTE_SHADER_EN, 1)
        .with(DispatchInitiator::FORCE_START_AT_000, 1)
        .with_flag(DispatchInitiator::CS_W32_EN, arch.has_cs_w32_en)
}

/// The dispatch packet the seed writes at `kernargs + packet_offset` for a kernel with a
/// dispatch pointer (other fields zero). Errors when a local size exceeds u16 or a grid size
/// (global * local) exceeds u32.
#[inline]
pub fn dispatch_packet(
    info: &DispatchInfo,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<DispatchPacket, EncodeError> {
    check_dispatch_dims(global, local)?;
    Ok(dispatch_packet_checked(info, kernargs, global, local))
}

/// Whether `global`/`local` fit a dispatch packet: local sizes in u16, grid sizes
/// (global * local) in u32. What [`dispatch_packet`] refuses.
#[inline]
pub fn check_dispatch_dims(global: [u32; 3], local: [u32; 3]) -> Result<(), EncodeError> {
    const WG: [&str; 3] = [
        "local[0] (dispatch packet workgroup_size_x)",
        "local[1] (dispatch packet workgroup_size_y)",
        "local[2] (dispatch packet workgroup_size_z)",
    ];
    const GRID: [&str; 3] = [
        "global[0]*local[0] (dispatch packet grid_size_x)",
        "global[1]*local[1] (dispatch packet grid_size_y)",
        "global[2]*local[2] (dispatch packet grid_size_z)",
    ];
    for i in 0..3 {
        let (g, l) = (global[i], local[i]);
        if l > u16::MAX.into() {
            return Err(EncodeError::ValueTooLarge {
                field: WG[i],
                value: l.into(),
                max: u16::MAX.into(),
            });
        }
        let grid = u64::from(g) * u64::from(l);
        if grid > u32::MAX.into() {
            return Err(EncodeError::ValueTooLarge {
                field: GRID[i],
                value: grid,
                max: u32::MAX.into(),
            });
        }
    }
    Ok(())
}

/// [`dispatch_packet`] for dims [`check_dispatch_dims`] accepted (sizes that do not fit are
/// truncated).
#[inline]
pub(crate) fn dispatch_packet_checked(
    info: &DispatchInfo,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> DispatchPacket {
    // CAST: check_dispatch_dims keeps local sizes within u16 and grid sizes within u32.
    let wg = |i: usize| local[i] as u16;
    let grid = |i: usize| global[i].wrapping_mul(local[i]);
    DispatchPacket {
        workgroup_size_x: wg(0),
        workgroup_size_y: wg(1),
        workgroup_size_z: wg(2),
        grid_size_x: grid(0),
        grid_size_y: grid(1),
        grid_size_z: grid(2),
        group_segment_size: info.group_segment_size,
        private_segment_size: info.private_segment_size,
        kernarg_address: kernargs.get(),
        ..DispatchPacket::default()
    }
}

/// Dwords of [`exec`].
#[must_use]
#[inline]
pub const fn exec_dwords(arch: &ArchInfo, prog: &Program) -> usize {
    exec_layout(arch, prog).dwords
}

/// The seed's `exec(prg, kernargs, global, local)`: ACQUIRE_MEM, PGM_LO/HI + scratch base,
/// RSRC1/2, TMPRING, RESTART, STATIC_THREAD_MGMT SE0-7, USER_DATA (private segment buffer if
/// any, dispatch pointer if any, kernargs, flat scratch init if any: see [`Program`]),
/// START/NUM_THREAD, RESOURCE_LIMITS, DISPATCH_DIRECT, EVENT_WRITE CS_PARTIAL_FLUSH.
///
/// The dispatch packet itself (for kernels with a dispatch pointer) lives in kernargs memory:
/// get it from [`dispatch_packet`] and write it at `kernargs + packet_offset`.
#[inline]
pub fn exec(
    buf: &mut [u32],
    arch: &ArchInfo,
    prog: &Program,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<usize, EncodeError> {
    let layout = exec_layout(arch, prog);
    let out = room(buf, layout.dwords)?;
    let too_small = EncodeError::BufferTooSmall {
        needed: layout.dwords,
        available: 0,
    };
    let a = invalidate_cache(out, arch, 0, u64::MAX, CacheInvalidate::ALL)?;
    let rest = out.get_mut(a..).ok_or(too_small)?;
    let r = &arch.regs;
    let sh = |n: u32| Pm4Header::packet3(op::SET_SH_REG, n + 1).raw();
    let pgm = prog.prog_addr.get() >> 8;
    let scratch = prog.scratch_addr.get() >> 8;
    let (mid, rest) = rest.split_first_chunk_mut::<EXEC_MID>().ok_or(too_small)?;
    *mid = [
        sh(6),
        r.pgm_lo,
        lo32(pgm),
        hi32(pgm),
        0,
        0,
        lo32(scratch),
        hi32(scratch),
        sh(2),
        r.pgm_rsrc1,
        prog.rsrc1,
        prog.rsrc2,
        sh(1),
        r.tmpring_size,
        prog.tmpring_size,
        sh(4),
        r.restart_x,
        0,
        0,
        0,
        0,
        sh(2),
        r.static_thread_mgmt_se0,
        0xFFFF_FFFF,
        0xFFFF_FFFF,
        sh(2),
        r.static_thread_mgmt_se2,
        0xFFFF_FFFF,
        0xFFFF_FFFF,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    // SE4..SE7 exist from gfx11; elsewhere the same offsets are other registers (RELAUNCH and
    // WAVE_RESTORE_ADDR on gfx10, PGM_RSRC3 on gfx90a/gfx940), so the slot is a 6-dword NOP and
    // the layout stays the same on every family.
    let se4_slot = mid.last_chunk_mut::<6>().ok_or(too_small)?;
    *se4_slot = if arch.has_static_thread_mgmt_se4 {
        [
            sh(4),
            r.static_thread_mgmt_se4,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
        ]
    } else {
        [Pm4Header::packet3(op::NOP, 5).raw(), 0, 0, 0, 0, 0]
    };
    let rest = match (
        prog.private_segment_buffer,
        prog.dispatch,
        prog.flat_scratch_init,
    ) {
        // The common cases as fixed-size stores (the launch hot path).
        (None, None, None) => {
            let (ud, rest) = rest.split_first_chunk_mut::<4>().ok_or(too_small)?;
            *ud = [sh(2), r.user_data_0, kernargs.lo(), kernargs.hi()];
            rest
        }
        (None, Some(d), None) => {
            let dp = kernargs.offset(d.packet_offset);
            let (ud, rest) = rest.split_first_chunk_mut::<6>().ok_or(too_small)?;
            *ud = [
                sh(4),
                r.user_data_0,
                dp.lo(),
                dp.hi(),
                kernargs.lo(),
                kernargs.hi(),
            ];
            rest
        }
        (psb, dispatch, fsi) => {
            // In allocation order; `user_data_dwords` counts exactly these values.
            let n = prog.user_data_dwords();
            let dp = dispatch.map(|d| kernargs.offset(d.packet_offset));
            let halves = |a: GpuVa| [a.lo(), a.hi()];
            let values = psb
                .map(ScratchRsrc::words)
                .into_iter()
                .flatten()
                .chain(dp.into_iter().flat_map(halves))
                .chain(halves(kernargs))
                .chain(fsi.into_iter().flat_map(halves));
            let (ud, rest) = rest.split_at_mut_checked(2 + n).ok_or(too_small)?;
            // CAST: n <= EXEC_MAX_USER_DATA.
            let head = [sh(n as u32), r.user_data_0];
            for (slot, v) in ud.iter_mut().zip(head.into_iter().chain(values)) {
                *slot = v;
            }
            rest
        }
    };
    let tail = rest.first_chunk_mut::<EXEC_TAIL>().ok_or(too_small)?;
    let ev = EventWriteCntl::zeroed()
        .with(EventWriteCntl::EVENT_TYPE, arch.events.cs_partial_flush)
        .with(
            EventWriteCntl::EVENT_INDEX,
            arch.events.cs_partial_flush_index,
        );
    *tail = [
        sh(8),
        r.start_x,
        0,
        0,
        0,
        local[0],
        local[1],
        local[2],
        0,
        0,
        sh(1),
        r.resource_limits,
        0,
        Pm4Header::packet3(op::DISPATCH_DIRECT, 4).raw(),
        global[0],
        global[1],
        global[2],
        dispatch_initiator(arch).raw(),
        Pm4Header::packet3(op::EVENT_WRITE, 1).raw(),
        ev.raw(),
    ];
    Ok(layout.dwords)
}

// ---------------------------------------------------------------------------------------------
// Decoder.

/// Total dwords of the packet starting with `header`, or why it is not a packet the decoder
/// accepts (not type 3, unknown opcode, a body length the packet never has).
#[inline]
pub const fn packet_len(header: u32) -> Result<usize, DecodeErrorKind> {
    let h = Pm4Header(header);
    if h.get(Pm4Header::TYPE) != 3 {
        return Err(DecodeErrorKind::NotType3 { header });
    }
    let opcode = h.get(Pm4Header::OPCODE);
    let count = h.get(Pm4Header::COUNT);
    // CAST: count is 14 bits.
    let body = count as usize + 1;
    let ok = match opcode {
        op::NOP => {
            if count == 0x3FFF {
                return Ok(1);
            }
            true
        }
        op::SET_SH_REG | op::SET_UCONFIG_REG => body >= 2,
        op::DISPATCH_DIRECT => body == 4,
        op::WRITE_DATA => body >= 4,
        op::WAIT_REG_MEM => body == 6,
        op::INDIRECT_BUFFER => body == 3,
        op::EVENT_WRITE => body == 1,
        op::RELEASE_MEM => body == 7,
        op::ACQUIRE_MEM => body == 7 || body == 6,
        _ => return Err(DecodeErrorKind::UnknownOpcode { opcode, sub_op: 0 }),
    };
    if ok {
        Ok(body + 1)
    } else {
        Err(DecodeErrorKind::BadCount {
            opcode,
            body_dwords: body,
        })
    }
}

fn at0(kind: DecodeErrorKind) -> DecodeError {
    DecodeError { at: 0, kind }
}

/// Decodes the packet at the start of `dwords`: the packet and its length in dwords.
#[inline]
pub fn decode_one(dwords: &[u32]) -> Result<(Pm4Packet<'_>, usize), DecodeError> {
    let Some(&header) = dwords.first() else {
        return Err(at0(DecodeErrorKind::Truncated {
            needed: 1,
            available: 0,
        }));
    };
    let len = packet_len(header).map_err(at0)?;
    let pkt = dwords.get(..len).ok_or(at0(DecodeErrorKind::Truncated {
        needed: len,
        available: dwords.len(),
    }))?;
    let body = pkt.get(1..).unwrap_or_default();
    let opcode = Pm4Header(header).get(Pm4Header::OPCODE);
    let bad = at0(DecodeErrorKind::BadCount {
        opcode,
        body_dwords: body.len(),
    });
    let p = match opcode {
        op::NOP => Pm4Packet::Nop { body },
        op::SET_SH_REG | op::SET_UCONFIG_REG => {
            let (&reg_offset, values) = body.split_first().ok_or(bad)?;
            if opcode == op::SET_SH_REG {
                Pm4Packet::SetShReg { reg_offset, values }
            } else {
                Pm4Packet::SetUconfigReg { reg_offset, values }
            }
        }
        op::DISPATCH_DIRECT => {
            let &[x, y, z, i] = body else { return Err(bad) };
            Pm4Packet::DispatchDirect(DispatchDirect {
                dim: [x, y, z],
                initiator: DispatchInitiator(i),
            })
        }
        op::WRITE_DATA => {
            let (&[c, lo, hi], data) = body.split_first_chunk::<3>().ok_or(bad)?;
            Pm4Packet::WriteData {
                control: WriteDataCntl(c),
                addr: GpuVa(join64(lo, hi)),
                data,
            }
        }
        op::WAIT_REG_MEM => {
            let &[c, lo, hi, reference, mask, poll_interval] = body else {
                return Err(bad);
            };
            Pm4Packet::WaitRegMem(WaitRegMem {
                control: WaitRegMemCtl(c),
                addr_lo: lo,
                addr_hi: hi,
                reference,
                mask,
                poll_interval,
            })
        }
        op::INDIRECT_BUFFER => {
            let &[lo, hi, c] = body else { return Err(bad) };
            Pm4Packet::IndirectBuffer(IndirectBuffer {
                addr: GpuVa(join64(lo, hi)),
                control: IbControl(c),
            })
        }
        op::EVENT_WRITE => {
            let &[c] = body else { return Err(bad) };
            Pm4Packet::EventWrite(EventWriteCntl(c))
        }
        op::RELEASE_MEM => {
            let &[e, d, alo, ahi, dlo, dhi, ctx] = body else {
                return Err(bad);
            };
            Pm4Packet::ReleaseMem(ReleaseMem {
                event: ReleaseMemEventCntl(e),
                data_cntl: ReleaseMemDataCntl(d),
                addr: GpuVa(join64(alo, ahi)),
                data: join64(dlo, dhi),
                int_ctxid: ctx,
            })
        }
        op::ACQUIRE_MEM => match *body {
            [c, slo, shi, blo, bhi, poll, gcr] => Pm4Packet::AcquireMem(AcquireMem {
                coher_cntl: c,
                size: join64(slo, shi),
                base: join64(blo, bhi),
                poll_interval: poll,
                gcr_cntl: Some(GcrCntl(gcr)),
            }),
            [c, slo, shi, blo, bhi, poll] => Pm4Packet::AcquireMem(AcquireMem {
                coher_cntl: c,
                size: join64(slo, shi),
                base: join64(blo, bhi),
                poll_interval: poll,
                gcr_cntl: None,
            }),
            _ => return Err(bad),
        },
        _ => {
            return Err(at0(DecodeErrorKind::UnknownOpcode { opcode, sub_op: 0 }));
        }
    };
    Ok((p, len))
}

/// Iterator over the packets of a PM4 stream: `(dword index, packet)`, stopping after
/// the first error (which carries the index of the bad packet).
pub type Decoder<'a> = crate::packet::Decoder<'a, Pm4Packet<'a>>;

impl<'a> crate::packet::DecodeOne<'a> for Pm4Packet<'a> {
    #[inline]
    fn decode_one(dwords: &'a [u32]) -> Result<(Self, usize), DecodeError> {
        decode_one(dwords)
    }
}

/// Decodes a whole PM4 stream.
#[must_use]
#[inline]
pub fn decode(dwords: &[u32]) -> Decoder<'_> {
    Decoder::new(dwords)
}

// ---------------------------------------------------------------------------------------------
// Display (umr style: one line, the packet name and every field).

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::{GFX9, GFX11};

    fn sig(mailbox: bool) -> SignalRef {
        SignalRef {
            addr: 0x1234_5678_9abc_de00,
            event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
            event_id: if mailbox { 42 } else { 0 },
        }
    }

    #[test]
    fn headers() {
        assert_eq!(Pm4Header::packet3(op::RELEASE_MEM, 7).raw(), 0xC006_4900);
        assert_eq!(Pm4Header::packet3(op::NOP, 0x4000).raw(), NOP_1DW);
        assert_eq!(packet_len(NOP_1DW), Ok(1));
        assert_eq!(packet_len(0xC006_4900), Ok(8));
        assert_eq!(
            packet_len(0x8000_0000),
            Err(DecodeErrorKind::NotType3 {
                header: 0x8000_0000
            })
        );
        assert_eq!(
            packet_len(0xC005_4900),
            Err(DecodeErrorKind::BadCount {
                opcode: 0x49,
                body_dwords: 6
            })
        );
        assert_eq!(
            packet_len(0xC000_2300),
            Err(DecodeErrorKind::UnknownOpcode {
                opcode: 0x23,
                sub_op: 0
            })
        );
    }

    #[test]
    fn wait_exact() {
        let mut b = [0u32; 7];
        assert_eq!(wait(&mut b, &sig(false), 7), Ok(7));
        assert_eq!(
            b,
            [
                0xC005_3C00,
                0x15,
                0x9abc_de08,
                0x1234_5678,
                7,
                0xffff_ffff,
                4
            ]
        );
        let mut small = [0u32; 6];
        assert_eq!(
            wait(&mut small, &sig(false), 7),
            Err(EncodeError::BufferTooSmall {
                needed: 7,
                available: 6
            })
        );
    }

    #[test]
    fn barrier_exact() {
        let mut b = [0u32; 15];
        assert_eq!(memory_barrier(&mut b, &GFX11), Ok(15));
        assert_eq!(
            b,
            [
                0xC005_3C00,
                0x43,
                0xe26,
                0xe27,
                0xffff_ffff,
                0xffff_ffff,
                0x20,
                0xC006_5800,
                0,
                0xffff_ffff,
                0xffff_ffff,
                0,
                0,
                0,
                0xC3F1
            ]
        );
        let mut b9 = [0u32; 14];
        assert_eq!(memory_barrier(&mut b9, &GFX9), Ok(14));
        assert_eq!(b9[7], 0xC005_5800);
        assert_eq!(
            b9[8],
            (1 << 29) | (1 << 27) | (1 << 23) | (1 << 22) | (1 << 18)
        );
        assert_eq!(b9[13], 0xA);
    }

    #[test]
    fn signal_exact() {
        let mut b = [0u32; 16];
        assert_eq!(signal(&mut b, &GFX11, &sig(true), 0x1_0000_0005), Ok(16));
        let ev = 0x14
            | (5 << 8)
            | (1 << 12)
            | (1 << 13)
            | (1 << 14)
            | (1 << 15)
            | (1 << 20)
            | (1 << 21)
            | (1 << 22);
        let dc = (1 << 29) | (2 << 24);
        assert_eq!(
            b[..8],
            [0xC006_4900, ev, dc, 0x9abc_de08, 0x1234_5678, 5, 1, 0]
        );
        assert_eq!(b[8..], [0xC006_4900, ev, dc, 0x10, 0x7fff, 42, 0, 42]);
        assert_eq!(signal(&mut b, &GFX11, &sig(false), 3), Ok(8));
        assert_eq!(
            signal(&mut b[..15], &GFX11, &sig(true), 3),
            Err(EncodeError::BufferTooSmall {
                needed: 16,
                available: 15
            })
        );
    }

    #[test]
    fn exec_layout_matches_seed() {
        let prog = Program {
            prog_addr: GpuVa(0x7f00_1234_5600),
            scratch_addr: GpuVa(0x7e00_0000_0000),
            tmpring_size: 0x1234,
            rsrc1: 0x11,
            rsrc2: 0x22,
            dispatch: None,
            private_segment_buffer: None,
            flat_scratch_init: None,
        };
        let mut b = [0u32; 80];
        let n = exec(
            &mut b,
            &GFX11,
            &prog,
            GpuVa(0x5555_0000_1000),
            [4, 5, 6],
            [32, 2, 1],
        )
        .unwrap();
        assert_eq!(n, 67);
        assert_eq!(b[60], 0xC003_1500);
        assert_eq!(b[52..55], [32, 2, 1]);
        assert_eq!(b[61..64], [4, 5, 6]);
        assert_eq!(b[64], 0x8005);
        assert_eq!(b[65..67], [0xC000_4600, 0x407]);
        assert_eq!(
            b[8..16],
            [0xC006_7600, 0x20c, 0x0012_3456, 0x7f, 0, 0, 0, 0x7e]
        );
        let l = exec_layout(&GFX11, &prog);
        assert_eq!((l.local_at, l.dispatch_at), (52, 60));
        let dp = Program {
            dispatch: Some(DispatchInfo {
                packet_offset: 0x40,
                group_segment_size: 0,
                private_segment_size: 0,
            }),
            ..prog
        };
        assert_eq!(
            exec(&mut b, &GFX11, &dp, GpuVa(0x1000), [1; 3], [1; 3]),
            Ok(69)
        );
        assert_eq!(b[43..49], [0xC004_7600, 0x240, 0x1040, 0, 0x1000, 0]);
        assert_eq!(b[62], 0xC003_1500);
        // Decode the whole thing back.
        let pk: heapless::Vec<_, 32> = decode(&b[..69]).map(|r| r.unwrap().1).collect();
        assert_eq!(pk.len(), 13);
        assert!(matches!(pk[12], Pm4Packet::EventWrite(_)));
    }

    /// gfx90a-style programs: the private segment buffer first, then the dispatch and kernarg
    /// pointers, then flat scratch init; every patchable offset follows the longer USER_DATA.
    #[test]
    fn exec_with_private_segment_buffer() {
        let v = ScratchRsrc::new(&GFX9, GpuVa(0x7e00_0000_0000), 0x10_0000, false).unwrap();
        let base = Program {
            prog_addr: GpuVa(0x7f00_1234_5600),
            scratch_addr: GpuVa(0x7e00_0000_0000),
            private_segment_buffer: Some(v),
            ..Program::default()
        };
        let dp = DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 68,
        };
        let ka = GpuVa(0x5555_0000_1000);
        // (program, USER_DATA values exec must write)
        let hv = |v: &[u32]| heapless::Vec::<u32, 10>::from_slice(v).unwrap();
        let w = v.words();
        let cases = [
            (base, hv(&[w[0], w[1], w[2], w[3], 0x1000, 0x5555])),
            (
                Program {
                    dispatch: Some(dp),
                    ..base
                },
                hv(&[w[0], w[1], w[2], w[3], 0x1040, 0x5555, 0x1000, 0x5555]),
            ),
            (
                Program {
                    flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                    ..base
                },
                hv(&[w[0], w[1], w[2], w[3], 0x1000, 0x5555, 0, 0x7e00]),
            ),
            (
                Program {
                    dispatch: Some(dp),
                    flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                    ..base
                },
                hv(&[
                    w[0], w[1], w[2], w[3], 0x1040, 0x5555, 0x1000, 0x5555, 0, 0x7e00,
                ]),
            ),
            (
                Program {
                    private_segment_buffer: None,
                    flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                    ..base
                },
                hv(&[0x1000, 0x5555, 0, 0x7e00]),
            ),
        ];
        for (prog, user) in cases {
            let mut b = [0xdead_beefu32; 96];
            let n = exec(&mut b, &GFX9, &prog, ka, [4, 5, 6], [64, 1, 1]).unwrap();
            let l = exec_layout(&GFX9, &prog);
            assert_eq!(n, l.dwords);
            assert_eq!(exec_dwords(&GFX9, &prog), n);
            assert_eq!(prog.user_data_dwords(), user.len());
            assert!(user.len() <= EXEC_MAX_USER_DATA);
            // 7-dword ACQUIRE_MEM, the 35-dword register block, then USER_DATA.
            let ud = 7 + 35;
            assert_eq!(n, ud + 2 + user.len() + 20);
            assert_eq!(
                b[ud],
                Pm4Header::packet3(op::SET_SH_REG, 1 + user.len() as u32).raw()
            );
            assert_eq!(b[ud + 1], GFX9.regs.user_data_0);
            assert_eq!(b[ud + 2..ud + 2 + user.len()], user[..]);
            assert_eq!(b[n], 0xdead_beef, "exec wrote past its length");
            // The patchable offsets land on START/NUM_THREAD and DISPATCH_DIRECT.
            assert_eq!(b[l.start_at], Pm4Header::packet3(op::SET_SH_REG, 9).raw());
            assert_eq!(b[l.start_at + 1], GFX9.regs.start_x);
            assert_eq!(b[l.local_at..l.local_at + 3], [64, 1, 1]);
            assert_eq!(b[l.dispatch_at], 0xC003_1500);
            assert_eq!(b[l.dispatch_at + 1..l.dispatch_at + 4], [4, 5, 6]);
            // The decoder reads it back: the USER_DATA SET_SH_REG with every value.
            let pk: heapless::Vec<_, 32> = decode(&b[..n]).map(|r| r.unwrap().1).collect();
            assert_eq!(pk.len(), 13);
            let Pm4Packet::SetShReg { reg_offset, values } = pk[8] else {
                panic!("{:?}", pk[8]);
            };
            assert_eq!(reg_offset, GFX9.regs.user_data_0);
            assert_eq!(values, &user[..]);
            assert!(matches!(pk[11], Pm4Packet::DispatchDirect(_)));
            // A buffer one dword short is refused.
            let mut small = [0u32; 96];
            assert_eq!(
                exec(&mut small[..n - 1], &GFX9, &prog, ka, [1; 3], [1; 3]),
                Err(EncodeError::BufferTooSmall {
                    needed: n,
                    available: n - 1
                })
            );
        }
    }

    #[test]
    fn nops() {
        let mut b = [7u32; 5];
        assert_eq!(nop(&mut b, 1), Ok(1));
        assert_eq!(b[0], NOP_1DW);
        assert_eq!(nop(&mut b, 4), Ok(4));
        assert_eq!(b[..4], [0xC002_1000, 0, 0, 0]);
        assert!(nop(&mut b, 0).is_err());
        assert_eq!(decode_one(&b[..4]).unwrap().1, 4);
    }

    #[test]
    fn decode_errors_carry_index() {
        let mut b = [0u32; 20];
        let n = wait(&mut b, &sig(false), 1).unwrap();
        b[n] = 0xC006_4900; // RELEASE_MEM cut short
        let r: heapless::Vec<_, 4> = decode(&b[..n + 3]).collect();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1],
            Err(DecodeError {
                at: 7,
                kind: DecodeErrorKind::Truncated {
                    needed: 8,
                    available: 3
                }
            })
        );
    }
}
