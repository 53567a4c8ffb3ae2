//! SDMA (copy engine) packets, v5/v6 layout (gfx10/gfx11; gfx9's v4 differs only in the FENCE
//! mtype, which [`ArchInfo::sdma_fence_mtype_uc`] selects): encoders writing into a caller's
//! `&mut [u32]`, the seed's commands (`copy`, `signal`, `wait`, `timestamp`), and a strict decoder.
//!
//! Header dword 0: `op[7:0] | sub_op[15:8] | per-packet bits[31:16]`. Each per-packet header
//! bitfield below holds only bits 31:16; the encoder adds op and sub-op.

use core::fmt;

use crate::arch::{ArchInfo, GpuVa, hi32, join64, lo32};
use crate::packet::{
    DecodeError, DecodeErrorKind, EncodeError, check_max, head, len64, room, write_fields,
};
use crate::pm4::{GcrCntl, func};
use crate::signal::SignalRef;

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

const fn hdr(opcode: u32, sub: u32, flags_word: u32) -> u32 {
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

// ---------------------------------------------------------------------------------------------
// Encoders.

/// Dwords of a COPY_LINEAR.
pub const COPY_LINEAR_DWORDS: usize = 7;
/// Dwords of a FENCE.
pub const FENCE_DWORDS: usize = 4;
/// Dwords of a TRAP.
pub const TRAP_DWORDS: usize = 2;
/// Dwords of a POLL_REGMEM.
pub const POLL_REGMEM_DWORDS: usize = 6;
/// Dwords of a TIMESTAMP.
pub const TIMESTAMP_DWORDS: usize = 3;
/// Dwords of a GCR_REQ.
pub const GCR_REQ_DWORDS: usize = 5;
/// Dwords of a CONST_FILL.
pub const CONST_FILL_DWORDS: usize = 5;
/// Dwords of an INDIRECT.
pub const INDIRECT_DWORDS: usize = 6;

/// Encodes a NOP of `dwords` dwords (>= 1): `[0]` for one, else a count-form NOP plus zeros.
#[inline]
pub fn nop(buf: &mut [u32], dwords: usize) -> Result<usize, EncodeError> {
    check_max("sdma nop length", len64(dwords), 0x4000)?;
    let out = room(buf, dwords)?;
    let Some((h, rest)) = out.split_first_mut() else {
        return Err(EncodeError::ValueTooLarge {
            field: "sdma nop length (must be at least 1)",
            value: 0,
            max: 0,
        });
    };
    // CAST: rest.len() < 0x4000.
    *h = hdr(
        op::NOP,
        0,
        NopHeader::zeroed()
            .with(NopHeader::COUNT, rest.len() as u32)
            .raw(),
    );
    rest.fill(0);
    Ok(dwords)
}

/// Encodes a COPY_LINEAR.
#[inline]
pub fn copy_linear(buf: &mut [u32], p: &CopyLinear) -> Result<usize, EncodeError> {
    check_max("copy count", p.count.into(), MAX_COUNT.into())?;
    let out = head::<COPY_LINEAR_DWORDS>(buf)?;
    *out = [
        hdr(op::COPY, sub_op::COPY_LINEAR, p.header.raw()),
        p.count,
        p.params.raw(),
        p.src.lo(),
        p.src.hi(),
        p.dst.lo(),
        p.dst.hi(),
    ];
    Ok(COPY_LINEAR_DWORDS)
}

/// Encodes a FENCE.
#[inline]
pub fn fence(buf: &mut [u32], p: &Fence) -> Result<usize, EncodeError> {
    let out = head::<FENCE_DWORDS>(buf)?;
    *out = [
        hdr(op::FENCE, 0, p.header.raw()),
        p.addr.lo(),
        p.addr.hi(),
        p.data,
    ];
    Ok(FENCE_DWORDS)
}

/// Encodes a TRAP with a 28-bit interrupt context.
#[inline]
pub fn trap(buf: &mut [u32], int_context: u32) -> Result<usize, EncodeError> {
    check_max("trap int_context", int_context.into(), 0x0FFF_FFFF)?;
    let out = head::<TRAP_DWORDS>(buf)?;
    *out = [hdr(op::TRAP, 0, 0), int_context];
    Ok(TRAP_DWORDS)
}

/// Encodes a POLL_REGMEM.
#[inline]
pub fn poll_regmem(buf: &mut [u32], p: &PollRegmem) -> Result<usize, EncodeError> {
    let out = head::<POLL_REGMEM_DWORDS>(buf)?;
    *out = [
        hdr(op::POLL_REGMEM, 0, p.header.raw()),
        p.addr.lo(),
        p.addr.hi(),
        p.value,
        p.mask,
        p.dw5.raw(),
    ];
    Ok(POLL_REGMEM_DWORDS)
}

/// Encodes a TIMESTAMP GET_GLOBAL (64-bit GPU clock to `addr`).
#[inline]
pub fn timestamp_to(buf: &mut [u32], addr: GpuVa) -> Result<usize, EncodeError> {
    let out = head::<TIMESTAMP_DWORDS>(buf)?;
    *out = [
        hdr(op::TIMESTAMP, sub_op::TIMESTAMP_GET_GLOBAL, 0),
        addr.lo(),
        addr.hi(),
    ];
    Ok(TIMESTAMP_DWORDS)
}

/// Encodes a GCR_REQ.
#[inline]
pub fn gcr_req(buf: &mut [u32], p: &GcrReq) -> Result<usize, EncodeError> {
    check_max("gcr_req base_va", p.base_va, (1 << 48) - 1)?;
    check_max("gcr_req limit_va", p.limit_va, (1 << 48) - 1)?;
    check_max("gcr_req gcr_cntl", p.gcr.raw().into(), (1 << 19) - 1)?;
    check_max("gcr_req vmid", p.vmid.into(), 15)?;
    check_max("gcr_req sub_op", p.sub_op.into(), 0xff)?;
    let out = head::<GCR_REQ_DWORDS>(buf)?;
    let g = p.gcr.raw();
    *out = [
        hdr(op::GCR_REQ, p.sub_op, 0),
        lo32(p.base_va) & !0x7f,
        (hi32(p.base_va) & 0xffff) | (g & 0xffff) << 16,
        (g >> 16) & 0x7 | (lo32(p.limit_va) & !0x7f),
        (hi32(p.limit_va) & 0xffff) | p.vmid << 24,
    ];
    Ok(GCR_REQ_DWORDS)
}

/// Encodes a CONST_FILL.
#[inline]
pub fn const_fill_raw(buf: &mut [u32], p: &ConstFill) -> Result<usize, EncodeError> {
    check_max("const_fill count", p.count.into(), MAX_COUNT.into())?;
    let out = head::<CONST_FILL_DWORDS>(buf)?;
    *out = [
        hdr(op::CONST_FILL, 0, p.header.raw()),
        p.dst.lo(),
        p.dst.hi(),
        p.data,
        p.count,
    ];
    Ok(CONST_FILL_DWORDS)
}

/// Fills `bytes` (1..=2^30, a multiple of 4) at `dst` with the dword `data`.
#[inline]
pub fn const_fill(
    buf: &mut [u32],
    dst: GpuVa,
    data: u32,
    bytes: u64,
) -> Result<usize, EncodeError> {
    if bytes == 0 || bytes % 4 != 0 {
        return Err(EncodeError::ValueTooLarge {
            field: "const_fill bytes (must be a nonzero multiple of 4)",
            value: bytes,
            max: u64::from(MAX_COUNT) + 1,
        });
    }
    check_max("const_fill bytes", bytes, u64::from(MAX_COUNT) + 1)?;
    const_fill_raw(
        buf,
        &ConstFill {
            header: ConstFillHeader::zeroed().with(ConstFillHeader::FILLSIZE, 2),
            dst,
            data,
            // CAST: bytes - 1 <= MAX_COUNT checked above.
            count: (bytes - 1) as u32,
        },
    )
}

/// Encodes a linear WRITE of `data` (1..=2^20 dwords) to `dst`.
#[inline]
pub fn write(buf: &mut [u32], dst: GpuVa, data: &[u32]) -> Result<usize, EncodeError> {
    if data.is_empty() {
        return Err(EncodeError::ValueTooLarge {
            field: "sdma write length (must be at least 1)",
            value: 0,
            max: 0,
        });
    }
    check_max(
        "sdma write length",
        len64(data.len()),
        u64::from(MAX_COUNT20) + 1,
    )?;
    let n = data.len() + 4;
    let out = room(buf, n)?;
    if let Some((h, rest)) = out.split_first_chunk_mut::<4>() {
        // CAST: len - 1 < 2^20 checked above.
        *h = [
            hdr(op::WRITE, sub_op::WRITE_LINEAR, 0),
            dst.lo(),
            dst.hi(),
            (data.len() - 1) as u32,
        ];
        rest.copy_from_slice(data);
    }
    Ok(n)
}

/// Encodes an INDIRECT (the IB must be 32-byte aligned; the packet must end on an 8-dword
/// boundary in the ring, which is the ring's business).
#[inline]
pub fn indirect(buf: &mut [u32], p: &Indirect) -> Result<usize, EncodeError> {
    check_max(
        "indirect size_dwords",
        p.size_dwords.into(),
        MAX_COUNT20.into(),
    )?;
    let out = head::<INDIRECT_DWORDS>(buf)?;
    *out = [
        hdr(op::INDIRECT, 0, p.header.raw()),
        p.ib.lo(),
        p.ib.hi(),
        p.size_dwords,
        p.csa.lo(),
        p.csa.hi(),
    ];
    Ok(INDIRECT_DWORDS)
}

/// The HDP flush POLL_REGMEM (kernel `sdma_v6_0_ring_emit_hdp_flush`): write REQ, poll DONE
/// until `(DONE & ref_and_mask) == ref_and_mask`.
#[must_use]
#[inline]
pub const fn hdp_flush_packet(arch: &ArchInfo, ref_and_mask: u32) -> PollRegmem {
    PollRegmem {
        header: PollRegmemHeader::zeroed()
            .with(PollRegmemHeader::HDP_FLUSH, 1)
            .with(PollRegmemHeader::FUNC, func::EQ),
        addr: GpuVa(join64(arch.hdp_flush_done << 2, arch.hdp_flush_req << 2)),
        value: ref_and_mask,
        mask: ref_and_mask,
        dw5: PollRegmemDw5::zeroed()
            .with(PollRegmemDw5::INTERVAL, 10)
            .with(PollRegmemDw5::RETRY_COUNT, 0xfff),
    }
}

/// Encodes the HDP flush POLL_REGMEM.
#[inline]
pub fn hdp_flush(
    buf: &mut [u32],
    arch: &ArchInfo,
    ref_and_mask: u32,
) -> Result<usize, EncodeError> {
    poll_regmem(buf, &hdp_flush_packet(arch, ref_and_mask))
}

// ---------------------------------------------------------------------------------------------
// The seed's commands.

/// Where [`copy`] puts the GCR_REQ cache-control bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GcrPlacement {
    /// As the seed: the GCR bits raw in dword 2, where the hardware reads `base_va[47:32]`
    /// (so the request carries GCR_CNTL 0 and a nonzero base). Default, for dword equality.
    #[default]
    Seed,
    /// As the kernel's `sdma_v6_0_emit_mem_sync`: GCR_CNTL in its own field, base/limit 0.
    Hardware,
}

/// Options for [`copy_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyOptions {
    /// GCR_REQ encoding.
    pub gcr: GcrPlacement,
    /// Bytes per COPY_LINEAR (1..=2^30).
    pub max_copy_bytes: u64,
}

impl CopyOptions {
    /// The seed's behaviour on `arch`.
    #[must_use]
    #[inline]
    pub const fn seed(arch: &ArchInfo) -> Self {
        Self {
            gcr: GcrPlacement::Seed,
            max_copy_bytes: arch.sdma_max_copy_bytes,
        }
    }

    /// What real hardware needs on `arch`: the seed's copy, with the GCR_REQ cache-control bits
    /// in the field the SDMA engine reads ([`GcrPlacement::Hardware`]). Same dword count.
    #[must_use]
    #[inline]
    pub const fn hardware(arch: &ArchInfo) -> Self {
        Self {
            gcr: GcrPlacement::Hardware,
            max_copy_bytes: arch.sdma_max_copy_bytes,
        }
    }
}

/// GCR bits of the seed's pre-copy invalidate: GLM_INV|GLK_INV|GLK_WB|GLV_INV|GL1_INV|GL2_WB|GL2_INV.
pub const COPY_GCR_INVALIDATE: GcrCntl = GcrCntl::zeroed()
    .with(GcrCntl::GLM_INV, 1)
    .with(GcrCntl::GLK_INV, 1)
    .with(GcrCntl::GLK_WB, 1)
    .with(GcrCntl::GLV_INV, 1)
    .with(GcrCntl::GL1_INV, 1)
    .with(GcrCntl::GL2_WB, 1)
    .with(GcrCntl::GL2_INV, 1);

/// GCR bits of the seed's post-copy write-back: GLK_WB|GL2_WB.
pub const COPY_GCR_WRITEBACK: GcrCntl = GcrCntl::zeroed()
    .with(GcrCntl::GLK_WB, 1)
    .with(GcrCntl::GL2_WB, 1);

/// The GCR_REQ [`copy`] emits for `gcr` under `placement`.
#[must_use]
#[inline]
pub const fn copy_gcr(gcr: GcrCntl, placement: GcrPlacement) -> GcrReq {
    match placement {
        GcrPlacement::Seed => GcrReq {
            sub_op: sub_op::GCR_REQ,
            // CAST: u32 -> u64 is lossless.
            base_va: ((gcr.raw() & 0xffff) as u64) << 32,
            limit_va: 0,
            gcr: GcrCntl::zeroed(),
            vmid: 0,
        },
        GcrPlacement::Hardware => GcrReq {
            sub_op: sub_op::GCR_REQ,
            base_va: 0,
            limit_va: 0,
            gcr,
            vmid: 0,
        },
    }
}

/// Number of COPY_LINEAR packets for `size` bytes at `max` bytes each.
#[must_use]
#[inline]
pub const fn copy_chunks(size: u64, max: u64) -> u64 {
    if max == 0 { 0 } else { size.div_ceil(max) }
}

/// Dwords of [`copy`] for `size` bytes (`None` when it would not fit in `usize`).
#[must_use]
#[inline]
pub const fn copy_dwords(size: u64, max: u64) -> Option<usize> {
    let n = copy_chunks(size, max);
    // CAST: small usize constants and the usize::MAX comparison are lossless on 32/64-bit.
    match n.checked_mul(COPY_LINEAR_DWORDS as u64) {
        Some(d) => match d.checked_add(2 * GCR_REQ_DWORDS as u64) {
            Some(t) if t <= usize::MAX as u64 => Some(t as usize),
            _ => None,
        },
        None => None,
    }
}

/// The seed's `copy(dst, src, size)`: GCR invalidate, COPY_LINEAR per 4 MiB, GCR write-back.
/// Packet sizes are `[5, 7, 7, ..., 5]`.
#[inline]
pub fn copy(
    buf: &mut [u32],
    arch: &ArchInfo,
    dst: GpuVa,
    src: GpuVa,
    size: u64,
) -> Result<usize, EncodeError> {
    copy_with(buf, &CopyOptions::seed(arch), dst, src, size)
}

/// [`copy`] with explicit options.
#[inline]
pub fn copy_with(
    buf: &mut [u32],
    opts: &CopyOptions,
    dst: GpuVa,
    src: GpuVa,
    size: u64,
) -> Result<usize, EncodeError> {
    let max = opts.max_copy_bytes;
    if max == 0 {
        return Err(EncodeError::ValueTooLarge {
            field: "max_copy_bytes (must be at least 1)",
            value: 0,
            max: u64::from(MAX_COUNT) + 1,
        });
    }
    check_max("max_copy_bytes", max, u64::from(MAX_COUNT) + 1)?;
    check_max("copy src + size", size, u64::MAX - src.get())?;
    check_max("copy dst + size", size, u64::MAX - dst.get())?;
    let total = copy_dwords(size, max).ok_or(EncodeError::ValueTooLarge {
        field: "copy size",
        value: size,
        max: len64(usize::MAX),
    })?;
    let out = room(buf, total)?;
    let too_small = EncodeError::BufferTooSmall {
        needed: total,
        available: 0,
    };
    let (first, mut rest) = out
        .split_first_chunk_mut::<GCR_REQ_DWORDS>()
        .ok_or(too_small)?;
    gcr_req(first, &copy_gcr(COPY_GCR_INVALIDATE, opts.gcr))?;
    let mut copied = 0u64;
    while copied < size {
        let step = if size - copied < max {
            size - copied
        } else {
            max
        };
        let (pkt, r) = rest
            .split_first_chunk_mut::<COPY_LINEAR_DWORDS>()
            .ok_or(too_small)?;
        let s = src.offset(copied);
        let d = dst.offset(copied);
        *pkt = [
            hdr(op::COPY, sub_op::COPY_LINEAR, 0),
            // CAST: step - 1 < max <= 2^30.
            (step - 1) as u32,
            0,
            s.lo(),
            s.hi(),
            d.lo(),
            d.hi(),
        ];
        rest = r;
        copied += step;
    }
    gcr_req(rest, &copy_gcr(COPY_GCR_WRITEBACK, opts.gcr))?;
    Ok(total)
}

/// The FENCE header the seed uses on `arch` (mtype 3 = uncached on gfx10+).
#[must_use]
#[inline]
pub const fn fence_header(arch: &ArchInfo) -> FenceHeader {
    FenceHeader::zeroed().with(
        FenceHeader::MTYPE,
        if arch.sdma_fence_mtype_uc { 3 } else { 0 },
    )
}

/// Dwords of [`signal`]: 4, or 10 (FENCE, mailbox FENCE, TRAP) when the signal has an event.
#[must_use]
#[inline]
pub const fn signal_dwords(signal: &SignalRef) -> usize {
    if signal.has_event() {
        2 * FENCE_DWORDS + TRAP_DWORDS
    } else {
        FENCE_DWORDS
    }
}

/// The seed's `signal(signal, value)`: FENCE of `value`, plus mailbox FENCE + TRAP when the
/// signal has a KFD event. Packet sizes `[4]` or `[4, 4, 2]`.
#[inline]
pub fn signal(
    buf: &mut [u32],
    arch: &ArchInfo,
    signal: &SignalRef,
    value: u32,
) -> Result<usize, EncodeError> {
    let h = fence_header(arch);
    let main = Fence {
        header: h,
        addr: GpuVa(signal.value_addr()),
        data: value,
    };
    if signal.has_event() {
        check_max(
            "signal event_id (SDMA TRAP int_context)",
            signal.event_id.into(),
            0x0FFF_FFFF,
        )?;
        let out = head::<10>(buf)?;
        let (a, rest) = out.split_at_mut(FENCE_DWORDS);
        let (b, c) = rest.split_at_mut(FENCE_DWORDS);
        fence(a, &main)?;
        fence(
            b,
            &Fence {
                header: h,
                addr: GpuVa(signal.event_mailbox_ptr),
                data: signal.event_id,
            },
        )?;
        trap(c, signal.event_id)?;
        Ok(10)
    } else {
        fence(buf, &main)
    }
}

/// The POLL_REGMEM of [`wait`].
#[must_use]
#[inline]
pub const fn wait_packet(value_addr: GpuVa, value: u32) -> PollRegmem {
    PollRegmem {
        header: PollRegmemHeader::zeroed()
            .with(PollRegmemHeader::FUNC, func::GEQ)
            .with(PollRegmemHeader::MEM_POLL, 1),
        addr: value_addr,
        value,
        mask: 0xffff_ffff,
        dw5: PollRegmemDw5::zeroed()
            .with(PollRegmemDw5::INTERVAL, 4)
            .with(PollRegmemDw5::RETRY_COUNT, 0xfff),
    }
}

/// The seed's `wait(signal, value)`: POLL_REGMEM until `value >= value`.
#[inline]
pub fn wait(buf: &mut [u32], signal: &SignalRef, value: u32) -> Result<usize, EncodeError> {
    poll_regmem(buf, &wait_packet(GpuVa(signal.value_addr()), value))
}

/// The seed's `timestamp(signal)`: TIMESTAMP GET_GLOBAL to `start_ts`.
#[inline]
pub fn timestamp(buf: &mut [u32], signal: &SignalRef) -> Result<usize, EncodeError> {
    timestamp_to(buf, GpuVa(signal.start_ts_addr()))
}

// ---------------------------------------------------------------------------------------------
// Decoder.

/// Total dwords of the SDMA packet at the start of `dwords`. Needs the header, and for WRITE
/// also dword 3; when those are missing the error is `Truncated { needed, .. }` with how many
/// dwords are needed to know the length.
#[inline]
pub fn packet_len(dwords: &[u32]) -> Result<usize, DecodeErrorKind> {
    let Some(&h) = dwords.first() else {
        return Err(DecodeErrorKind::Truncated {
            needed: 1,
            available: 0,
        });
    };
    let hd = SdmaHeader(h);
    let opcode = hd.get(SdmaHeader::OP);
    let sub = hd.get(SdmaHeader::SUB_OP);
    let unknown = DecodeErrorKind::UnknownOpcode {
        opcode,
        sub_op: sub,
    };
    let fixed = |n: usize, ok: bool| if ok { Ok(n) } else { Err(unknown) };
    match opcode {
        op::NOP => {
            // CAST: 14-bit field.
            let count = NopHeader(h).get(NopHeader::COUNT) as usize;
            fixed(1 + count, sub == 0)
        }
        op::COPY => fixed(COPY_LINEAR_DWORDS, sub == sub_op::COPY_LINEAR),
        op::WRITE => {
            if sub != sub_op::WRITE_LINEAR {
                return Err(unknown);
            }
            let Some(&dw3) = dwords.get(3) else {
                return Err(DecodeErrorKind::Truncated {
                    needed: 4,
                    available: dwords.len(),
                });
            };
            // CAST: 20-bit field.
            Ok(5 + WriteDw3(dw3).get(WriteDw3::COUNT) as usize)
        }
        op::INDIRECT => fixed(INDIRECT_DWORDS, sub == 0),
        op::FENCE => fixed(FENCE_DWORDS, sub == 0),
        op::TRAP => fixed(TRAP_DWORDS, sub == 0),
        op::POLL_REGMEM => fixed(POLL_REGMEM_DWORDS, sub == 0),
        op::CONST_FILL => fixed(CONST_FILL_DWORDS, sub == 0),
        op::TIMESTAMP => fixed(TIMESTAMP_DWORDS, sub == sub_op::TIMESTAMP_GET_GLOBAL),
        op::GCR_REQ => fixed(
            GCR_REQ_DWORDS,
            sub == sub_op::GCR_REQ || sub == sub_op::USER_GCR,
        ),
        _ => Err(unknown),
    }
}

fn at0(kind: DecodeErrorKind) -> DecodeError {
    DecodeError { at: 0, kind }
}

/// Decodes the packet at the start of `dwords`: the packet and its length.
#[inline]
pub fn decode_one(dwords: &[u32]) -> Result<(SdmaPacket<'_>, usize), DecodeError> {
    let len = packet_len(dwords).map_err(at0)?;
    let pkt = dwords.get(..len).ok_or(at0(DecodeErrorKind::Truncated {
        needed: len,
        available: dwords.len(),
    }))?;
    let Some((&h, body)) = pkt.split_first() else {
        return Err(at0(DecodeErrorKind::Truncated {
            needed: 1,
            available: 0,
        }));
    };
    let hd = SdmaHeader(h);
    let opcode = hd.get(SdmaHeader::OP);
    let bad = at0(DecodeErrorKind::BadCount {
        opcode,
        body_dwords: body.len(),
    });
    let flags = h & 0xFFFF_0000;
    let p = match opcode {
        op::NOP => SdmaPacket::Nop { body },
        op::COPY => {
            let &[count, params, slo, shi, dlo, dhi] = body else {
                return Err(bad);
            };
            SdmaPacket::CopyLinear(CopyLinear {
                header: CopyLinearHeader(flags),
                count: count & MAX_COUNT,
                params: CopyLinearParams(params),
                src: GpuVa(join64(slo, shi)),
                dst: GpuVa(join64(dlo, dhi)),
            })
        }
        op::WRITE => {
            let (&[lo, hi, dw3], data) = body.split_first_chunk::<3>().ok_or(bad)?;
            SdmaPacket::Write {
                dst: GpuVa(join64(lo, hi)),
                dw3: WriteDw3(dw3),
                data,
            }
        }
        op::INDIRECT => {
            let &[lo, hi, size, clo, chi] = body else {
                return Err(bad);
            };
            SdmaPacket::Indirect(Indirect {
                header: IndirectHeader(flags),
                ib: GpuVa(join64(lo, hi)),
                size_dwords: size & MAX_COUNT20,
                csa: GpuVa(join64(clo, chi)),
            })
        }
        op::FENCE => {
            let &[lo, hi, data] = body else {
                return Err(bad);
            };
            SdmaPacket::Fence(Fence {
                header: FenceHeader(flags),
                addr: GpuVa(join64(lo, hi)),
                data,
            })
        }
        op::TRAP => {
            let &[ctx] = body else { return Err(bad) };
            SdmaPacket::Trap {
                int_context: ctx & 0x0FFF_FFFF,
            }
        }
        op::POLL_REGMEM => {
            let &[lo, hi, value, mask, dw5] = body else {
                return Err(bad);
            };
            SdmaPacket::PollRegmem(PollRegmem {
                header: PollRegmemHeader(flags),
                addr: GpuVa(join64(lo, hi)),
                value,
                mask,
                dw5: PollRegmemDw5(dw5),
            })
        }
        op::CONST_FILL => {
            let &[lo, hi, data, count] = body else {
                return Err(bad);
            };
            SdmaPacket::ConstFill(ConstFill {
                header: ConstFillHeader(flags),
                dst: GpuVa(join64(lo, hi)),
                data,
                count: count & MAX_COUNT,
            })
        }
        op::TIMESTAMP => {
            let &[lo, hi] = body else { return Err(bad) };
            SdmaPacket::Timestamp {
                addr: GpuVa(join64(lo, hi)),
            }
        }
        op::GCR_REQ => {
            let &[d1, d2, d3, d4] = body else {
                return Err(bad);
            };
            SdmaPacket::GcrReq(GcrReq {
                sub_op: hd.get(SdmaHeader::SUB_OP),
                base_va: join64(d1 & !0x7f, d2 & 0xffff),
                limit_va: join64(d3 & !0x7f, d4 & 0xffff),
                gcr: GcrCntl((d2 >> 16) | (d3 & 0x7) << 16),
                vmid: (d4 >> 24) & 0xf,
            })
        }
        _ => {
            return Err(at0(DecodeErrorKind::UnknownOpcode {
                opcode,
                sub_op: hd.get(SdmaHeader::SUB_OP),
            }));
        }
    };
    Ok((p, len))
}

/// Iterator over the packets of an SDMA stream: `(dword index, packet)`, stopping after
/// the first error (which carries the index of the bad packet).
pub type Decoder<'a> = crate::packet::Decoder<'a, SdmaPacket<'a>>;

impl<'a> crate::packet::DecodeOne<'a> for SdmaPacket<'a> {
    #[inline]
    fn decode_one(dwords: &'a [u32]) -> Result<(Self, usize), DecodeError> {
        decode_one(dwords)
    }
}

/// Decodes a whole SDMA stream.
#[must_use]
#[inline]
pub fn decode(dwords: &[u32]) -> Decoder<'_> {
    Decoder::new(dwords)
}

impl fmt::Display for SdmaPacket<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SdmaPacket::Nop { body } => write!(f, "SDMA_NOP dwords={}", body.len() + 1),
            SdmaPacket::CopyLinear(c) => {
                write!(f, "SDMA_COPY_LINEAR")?;
                write_fields(f, CopyLinearHeader::FIELDS, c.header.raw())?;
                write!(f, " count={:#x} bytes={}", c.count, u64::from(c.count) + 1)?;
                write_fields(f, CopyLinearParams::FIELDS, c.params.raw())?;
                write!(f, " src={} dst={}", c.src, c.dst)
            }
            SdmaPacket::Write { dst, dw3, data } => {
                write!(f, "SDMA_WRITE dst={dst}")?;
                write_fields(f, WriteDw3::FIELDS, dw3.raw())?;
                f.write_str(" data=[")?;
                for (i, v) in data.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v:#x}")?;
                }
                f.write_str("]")
            }
            SdmaPacket::Indirect(i) => {
                write!(f, "SDMA_INDIRECT")?;
                write_fields(f, IndirectHeader::FIELDS, i.header.raw())?;
                write!(
                    f,
                    " ib={} size_dwords={:#x} csa={}",
                    i.ib, i.size_dwords, i.csa
                )
            }
            SdmaPacket::Fence(x) => {
                write!(f, "SDMA_FENCE")?;
                write_fields(f, FenceHeader::FIELDS, x.header.raw())?;
                write!(f, " addr={} data={:#x}", x.addr, x.data)
            }
            SdmaPacket::Trap { int_context } => write!(f, "SDMA_TRAP int_context={int_context:#x}"),
            SdmaPacket::PollRegmem(p) => {
                write!(f, "SDMA_POLL_REGMEM")?;
                write_fields(f, PollRegmemHeader::FIELDS, p.header.raw())?;
                write!(
                    f,
                    " addr={} value={:#x} mask={:#x}",
                    p.addr, p.value, p.mask
                )?;
                write_fields(f, PollRegmemDw5::FIELDS, p.dw5.raw())
            }
            SdmaPacket::ConstFill(c) => {
                write!(f, "SDMA_CONST_FILL")?;
                write_fields(f, ConstFillHeader::FIELDS, c.header.raw())?;
                write!(f, " dst={} data={:#x} count={:#x}", c.dst, c.data, c.count)
            }
            SdmaPacket::Timestamp { addr } => write!(f, "SDMA_TIMESTAMP_GET_GLOBAL addr={addr}"),
            SdmaPacket::GcrReq(g) => {
                write!(
                    f,
                    "SDMA_GCR_REQ sub_op={} base_va={:#x} limit_va={:#x} vmid={} gcr_cntl={:#x}",
                    g.sub_op,
                    g.base_va,
                    g.limit_va,
                    g.vmid,
                    g.gcr.raw()
                )?;
                write_fields(f, GcrCntl::FIELDS, g.gcr.raw())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::GFX11;

    fn sig(mailbox: bool) -> SignalRef {
        SignalRef {
            addr: 0x1234_5678_9abc_de00,
            event_mailbox_ptr: if mailbox { 0x7fff_0000_0010 } else { 0 },
            event_id: if mailbox { 42 } else { 0 },
        }
    }

    #[test]
    fn seed_headers() {
        let mut b = [0u32; 10];
        assert_eq!(wait(&mut b, &sig(false), 9), Ok(6));
        assert_eq!(
            b[..6],
            [
                0xD000_0008,
                0x9abc_de08,
                0x1234_5678,
                9,
                0xffff_ffff,
                0x0FFF_0004
            ]
        );
        assert_eq!(timestamp(&mut b, &sig(false)), Ok(3));
        assert_eq!(b[..3], [0x20D, 0x9abc_de20, 0x1234_5678]);
        assert_eq!(signal(&mut b, &GFX11, &sig(true), 5), Ok(10));
        assert_eq!(
            b,
            [
                0x3_0005,
                0x9abc_de08,
                0x1234_5678,
                5,
                0x3_0005,
                0x10,
                0x7fff,
                42,
                6,
                42
            ]
        );
    }

    #[test]
    fn copy_splits() {
        let mut b = [0u32; 40];
        let n = copy(
            &mut b,
            &GFX11,
            GpuVa(0x2000_0000),
            GpuVa(0x1000_0000),
            0x40_0001,
        )
        .unwrap();
        assert_eq!(n, 24);
        assert_eq!(b[..5], [17, 0, COPY_GCR_INVALIDATE.raw(), 0, 0]);
        assert_eq!(COPY_GCR_INVALIDATE.raw(), 0xC3E0);
        assert_eq!(b[5..12], [1, 0x3f_ffff, 0, 0x1000_0000, 0, 0x2000_0000, 0]);
        assert_eq!(b[12..19], [1, 0, 0, 0x1040_0000, 0, 0x2040_0000, 0]);
        assert_eq!(b[19..24], [17, 0, 0x8040, 0, 0]);
        let bb = b;
        let v: heapless::Vec<_, 8> = decode(&bb[..n]).map(|r| r.unwrap().1).collect();
        assert_eq!(v.len(), 4);
        assert_eq!(
            v[0],
            SdmaPacket::GcrReq(copy_gcr(COPY_GCR_INVALIDATE, GcrPlacement::Seed))
        );
        assert_eq!(copy(&mut b, &GFX11, GpuVa(0), GpuVa(0), 0), Ok(10));
        assert!(copy(&mut b, &GFX11, GpuVa(u64::MAX), GpuVa(0), 2).is_err());
    }

    #[test]
    fn write_len_needs_dw3() {
        assert_eq!(
            packet_len(&[2, 0, 0]),
            Err(DecodeErrorKind::Truncated {
                needed: 4,
                available: 3
            })
        );
        assert_eq!(packet_len(&[2, 0, 0, 1]), Ok(6));
        assert_eq!(packet_len(&[0]), Ok(1));
        assert_eq!(packet_len(&[0x0003_0000]), Ok(4));
        assert_eq!(
            packet_len(&[0x0000_0101]),
            Err(DecodeErrorKind::UnknownOpcode {
                opcode: 1,
                sub_op: 1
            })
        );
    }

    #[test]
    fn gcr_roundtrip() {
        let g = GcrReq {
            sub_op: 1,
            base_va: 0xffff_ffff_ff80,
            limit_va: 0x1234_5678_9a80,
            gcr: GcrCntl(0x7_ffff),
            vmid: 7,
        };
        let mut b = [0u32; 5];
        gcr_req(&mut b, &g).unwrap();
        assert_eq!(decode_one(&b).unwrap(), (SdmaPacket::GcrReq(g), 5));
    }
}
