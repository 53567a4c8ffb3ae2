//! Opcodes, sub-opcodes, header words and packet bodies.

use super::*;

/// SDMA opcodes.
pub mod op {
    /// NOP (count in bits 29:16; 0 is a 1-dword NOP).
    pub const NOP: u32 = 0;
    /// COPY (sub-op 0: linear).
    pub const COPY: u32 = 1;
    /// WRITE (sub-op 0: linear).
    pub const WRITE: u32 = 2;
    /// INDIRECT buffer.
    pub const INDIRECT: u32 = 4;
    /// FENCE: write a 32-bit value.
    pub const FENCE: u32 = 5;
    /// TRAP: raise an interrupt.
    pub const TRAP: u32 = 6;
    /// POLL_REGMEM: wait on memory or a register.
    pub const POLL_REGMEM: u32 = 8;
    /// CONST_FILL.
    pub const CONST_FILL: u32 = 11;
    /// TIMESTAMP (sub-op 2: get global).
    pub const TIMESTAMP: u32 = 13;
    /// GCR_REQ: cache control.
    pub const GCR_REQ: u32 = 17;
}

/// SDMA sub-opcodes.
pub mod sub_op {
    /// COPY linear.
    pub const COPY_LINEAR: u32 = 0;
    /// WRITE linear.
    pub const WRITE_LINEAR: u32 = 0;
    /// TIMESTAMP get global.
    pub const TIMESTAMP_GET_GLOBAL: u32 = 2;
    /// GCR_REQ as the kernel and the seed emit it.
    pub const GCR_REQ: u32 = 0;
    /// GCR_REQ as ROCR emits it ("USER_GCR").
    pub const USER_GCR: u32 = 1;
}

bitfield! {
    /// The common part of every SDMA header.
    pub struct SdmaHeader(u32) {
        /// Opcode.
        OP: 7:0,
        /// Sub-opcode.
        SUB_OP: 15:8,
        /// Packet-specific bits.
        FLAGS: 31:16,
    }
}

pub(super) const fn hdr(opcode: u32, sub: u32, flags_word: u32) -> u32 {
    SdmaHeader(flags_word & 0xFFFF_0000)
        .with(SdmaHeader::OP, opcode)
        .with(SdmaHeader::SUB_OP, sub)
        .raw()
}

bitfield! {
    /// NOP header bits.
    pub struct NopHeader(u32) {
        /// Extra dwords after the header.
        COUNT: 29:16,
    }
}

bitfield! {
    /// COPY_LINEAR header bits.
    pub struct CopyLinearHeader(u32) {
        /// Encrypt.
        ENCRYPT: 16:16,
        /// Trusted memory zone.
        TMZ: 18:18,
        /// Cache policy valid.
        CPV: 19:19,
        /// Copy backwards.
        BACKWARDS: 25:25,
        /// Broadcast.
        BROADCAST: 27:27,
    }
}

bitfield! {
    /// COPY_LINEAR dword 2.
    pub struct CopyLinearParams(u32) {
        /// Destination swap.
        DST_SW: 17:16,
        /// Destination cache policy.
        DST_CACHE_POLICY: 20:18,
        /// Source swap.
        SRC_SW: 25:24,
        /// Source cache policy.
        SRC_CACHE_POLICY: 28:26,
    }
}

bitfield! {
    /// FENCE header bits.
    pub struct FenceHeader(u32) {
        /// Memory type (3 = uncached, gfx10+).
        MTYPE: 18:16,
        /// GCC.
        GCC: 19:19,
        /// System memory.
        SYS: 20:20,
        /// Snoop.
        SNP: 22:22,
        /// Physical address.
        GPA: 23:23,
        /// L2 policy.
        L2_POLICY: 25:24,
        /// LLC.
        LLC: 26:26,
        /// Cache policy valid.
        CPV: 28:28,
    }
}

bitfield! {
    /// POLL_REGMEM header bits.
    pub struct PollRegmemHeader(u32) {
        /// Cache policy.
        CACHE_POLICY: 22:20,
        /// Cache policy valid.
        CPV: 24:24,
        /// HDP flush form.
        HDP_FLUSH: 26:26,
        /// Compare function (WAIT_REG_MEM codes).
        FUNC: 30:28,
        /// 1: poll memory, 0: register.
        MEM_POLL: 31:31,
    }
}

impl PollRegmemHeader {
    /// The compare function.
    ///
    /// # Errors
    /// [`UnknownSelector`] for a value [`CompareFunction`] does not name.
    #[inline]
    pub const fn function(self) -> Result<CompareFunction, UnknownSelector> {
        CompareFunction::from_raw(self.get(Self::FUNC))
    }
}

bitfield! {
    /// POLL_REGMEM dword 5.
    pub struct PollRegmemDw5(u32) {
        /// Poll interval.
        INTERVAL: 15:0,
        /// Retries (0xfff: forever).
        RETRY_COUNT: 27:16,
    }
}

bitfield! {
    /// CONST_FILL header bits.
    pub struct ConstFillHeader(u32) {
        /// Swap.
        SW: 17:16,
        /// Cache policy.
        CACHE_POLICY: 26:24,
        /// Cache policy valid.
        CPV: 28:28,
        /// Fill size (2 = dword).
        FILLSIZE: 31:30,
    }
}

bitfield! {
    /// WRITE dword 3.
    pub struct WriteDw3(u32) {
        /// Data dwords minus one.
        COUNT: 19:0,
        /// Swap.
        SW: 25:24,
        /// Cache policy.
        CACHE_POLICY: 28:26,
    }
}

bitfield! {
    /// INDIRECT header bits.
    pub struct IndirectHeader(u32) {
        /// VMID.
        VMID: 19:16,
        /// Privileged.
        PRIV: 31:31,
    }
}

/// Largest COPY_LINEAR / CONST_FILL count (bytes − 1; 30 bits).
pub const MAX_COUNT: u32 = (1 << 30) - 1;
/// Largest INDIRECT / WRITE count field (20 bits).
pub const MAX_COUNT20: u32 = (1 << 20) - 1;

/// A COPY_LINEAR packet (7 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CopyLinear {
    /// Header bits.
    pub header: CopyLinearHeader,
    /// Bytes − 1 (30 bits).
    pub count: u32,
    /// Dword 2.
    pub params: CopyLinearParams,
    /// Source.
    pub src: GpuVa,
    /// Destination.
    pub dst: GpuVa,
}

/// A FENCE packet (4 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Fence {
    /// Header bits.
    pub header: FenceHeader,
    /// Address.
    pub addr: GpuVa,
    /// Value written.
    pub data: u32,
}

/// A POLL_REGMEM packet (6 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PollRegmem {
    /// Header bits.
    pub header: PollRegmemHeader,
    /// Address (or register << 2 pair in the HDP form: lo = done, hi = req).
    pub addr: GpuVa,
    /// Reference.
    pub value: u32,
    /// Mask.
    pub mask: u32,
    /// Dword 5.
    pub dw5: PollRegmemDw5,
}

/// A CONST_FILL packet (5 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ConstFill {
    /// Header bits.
    pub header: ConstFillHeader,
    /// Destination.
    pub dst: GpuVa,
    /// Fill value.
    pub data: u32,
    /// Bytes − 1 (30 bits).
    pub count: u32,
}

/// An INDIRECT packet (6 dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Indirect {
    /// Header bits.
    pub header: IndirectHeader,
    /// IB address (32-byte aligned).
    pub ib: GpuVa,
    /// IB size in dwords (20 bits).
    pub size_dwords: u32,
    /// Context-save area address.
    pub csa: GpuVa,
}

/// A GCR_REQ packet (5 dwords), fields as the hardware reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GcrReq {
    /// Sub-op (0 kernel/seed, 1 ROCR).
    pub sub_op: u32,
    /// Base VA bits 47:7 (low 7 bits are ignored).
    pub base_va: u64,
    /// Limit VA bits 47:7.
    pub limit_va: u64,
    /// GCR_CNTL (19 bits).
    pub gcr: GcrCntl,
    /// VMID.
    pub vmid: u32,
}

/// One decoded SDMA packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SdmaPacket<'a> {
    /// NOP with `body` ignored dwords.
    Nop {
        /// Ignored dwords.
        body: &'a [u32],
    },
    /// COPY_LINEAR.
    CopyLinear(CopyLinear),
    /// WRITE (linear).
    Write {
        /// Destination.
        dst: GpuVa,
        /// Dword 3 (count, swap, cache policy).
        dw3: WriteDw3,
        /// Data.
        data: &'a [u32],
    },
    /// INDIRECT.
    Indirect(Indirect),
    /// FENCE.
    Fence(Fence),
    /// TRAP with its interrupt context (28 bits).
    Trap {
        /// Interrupt context (the KFD event id).
        int_context: u32,
    },
    /// POLL_REGMEM.
    PollRegmem(PollRegmem),
    /// CONST_FILL.
    ConstFill(ConstFill),
    /// TIMESTAMP GET_GLOBAL writing 64 bits to `addr`.
    Timestamp {
        /// Destination.
        addr: GpuVa,
    },
    /// GCR_REQ.
    GcrReq(GcrReq),
}
