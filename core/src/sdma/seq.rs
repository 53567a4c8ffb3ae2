//! The seed's commands: `copy`, `signal`, `wait`, `timestamp`.

use super::*;

/// Where [`copy`] puts the GCR_REQ cache-control bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GcrPlacement {
    /// As the seed: the GCR bits raw in dword 2, where the hardware reads `base_va[47:32]`
    /// (so the request carries GCR_CNTL 0 and a nonzero base). Default, for dword equality.
    #[default]
    Seed,
    /// As the kernel's `sdma_v6_0_emit_mem_sync`: GCR_CNTL in its own field, base/limit 0.
    Hardware,
    /// No GCR_REQ: SDMA v4 (gfx9) has no such packet (`vega10_sdma_pkt_open.h` stops at
    /// opcode 16, DUMMY_TRAP) and moves data past the L2, so a NOP of the same length stands
    /// in its place and the copy keeps its layout.
    Nop,
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
    /// in the field the SDMA engine reads ([`GcrPlacement::Hardware`]), or on gfx9, whose SDMA
    /// v4 has no GCR_REQ, NOPs in its place ([`GcrPlacement::Nop`]). Same dword count.
    #[must_use]
    #[inline]
    pub const fn hardware(arch: &ArchInfo) -> Self {
        Self {
            gcr: if matches!(arch.family, crate::arch::Family::Gfx9) {
                GcrPlacement::Nop
            } else {
                GcrPlacement::Hardware
            },
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
        GcrPlacement::Hardware | GcrPlacement::Nop => GcrReq {
            sub_op: sub_op::GCR_REQ,
            base_va: 0,
            limit_va: 0,
            gcr,
            vmid: 0,
        },
    }
}

/// The copy's cache request under `placement`: a GCR_REQ, or a NOP of its length.
fn copy_gcr_packet(
    buf: &mut [u32],
    gcr: GcrCntl,
    placement: GcrPlacement,
) -> Result<usize, EncodeError> {
    match placement {
        GcrPlacement::Nop => nop(buf, GCR_REQ_DWORDS),
        _ => gcr_req(buf, &copy_gcr(gcr, placement)),
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
    copy_gcr_packet(first, COPY_GCR_INVALIDATE, opts.gcr)?;
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
    copy_gcr_packet(rest, COPY_GCR_WRITEBACK, opts.gcr)?;
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
            .with(PollRegmemHeader::FUNC, CompareFunction::GreaterEqual.raw())
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
