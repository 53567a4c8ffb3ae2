//! Encoders: one per packet.

use super::*;

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
            .with(PollRegmemHeader::FUNC, CompareFunction::Equal.raw()),
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
