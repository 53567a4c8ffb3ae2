//! Building blocks: one encoder per packet.

use super::*;

/// Dwords of a RELEASE_MEM.
pub const RELEASE_MEM_DWORDS: usize = 8;
/// Dwords of a WAIT_REG_MEM.
pub const WAIT_REG_MEM_DWORDS: usize = 7;
/// The dword of a WAIT_REG_MEM holding its reference value.
pub const WAIT_REG_MEM_REFERENCE_AT: usize = 4;
/// The dwords of a RELEASE_MEM holding its data (low, high).
pub const RELEASE_MEM_DATA_AT: usize = 5;
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

/// Encodes SET_SH_REG writing `values` from register offset `reg_offset` (1..=0x3FFF values: the
/// body is the offset plus the values, at most 0x4000 dwords, i.e. the 14-bit count's 0x3FFF).
#[inline]
pub fn set_sh_reg(buf: &mut [u32], reg_offset: u32, values: &[u32]) -> Result<usize, EncodeError> {
    set_reg(buf, op::SET_SH_REG, reg_offset, values)
}

/// Encodes SET_UCONFIG_REG (1..=0x3FFF values, as [`set_sh_reg`]).
#[inline]
pub fn set_uconfig_reg(
    buf: &mut [u32],
    reg_offset: u32,
    values: &[u32],
) -> Result<usize, EncodeError> {
    set_reg(buf, op::SET_UCONFIG_REG, reg_offset, values)
}

/// Encodes WRITE_DATA of `data` (1..=0x3FFD dwords: the body is control, address lo/hi and the
/// data, at most 0x4000 dwords, i.e. the 14-bit count's 0x3FFF) to `addr`.
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

/// Dwords of a PRED_EXEC.
pub const PRED_EXEC_DWORDS: usize = 2;

/// Encodes a PRED_EXEC: only the XCCs in `xcc_mask` (`DEVICE_SELECT`, bits 31:24) execute the
/// next `exec_count` dwords (`EXEC_COUNT`, bits 13:0), the others skip them (Linux `soc15d.h`
/// `PACKET3_PRED_EXEC`; tinygrad `ops_amd.py` `pred_exec`). The command processor honours it
/// only inside indirect buffers (tinygrad's MI300X note: "PACKET3_PRED_EXEC doesn't work in
/// rings, only in IBs").
///
/// # Errors
/// `xcc_mask` 0 (no XCC would run the dwords), `exec_count` over 14 bits, or no room.
#[inline]
pub fn pred_exec(buf: &mut [u32], xcc_mask: u8, exec_count: usize) -> Result<usize, EncodeError> {
    if xcc_mask == 0 {
        return Err(EncodeError::ValueTooLarge {
            field: "pred_exec xcc mask (must select at least one XCC)",
            value: 0,
            max: 0,
        });
    }
    check_max("pred_exec count", len64(exec_count), 0x3FFF)?;
    let out = room(buf, PRED_EXEC_DWORDS)?;
    // CAST: exec_count <= 0x3FFF checked above.
    out.copy_from_slice(&[
        Pm4Header::packet3(op::PRED_EXEC, 1).raw(),
        u32::from(xcc_mask) << 24 | exec_count as u32,
    ]);
    Ok(PRED_EXEC_DWORDS)
}

/// Copies the PM4 packets `src` to `out`, each run of consecutive RELEASE_MEMs behind a
/// [`pred_exec`] of `xcc_mask`, and returns the dwords written: on a GPU of several XCCs,
/// whose command processors all run an AQL queue's PM4 indirect buffers, a signal, its
/// interrupt or a timestamp is then written once (tinygrad 0.14 `AMDComputeQueue.signal` and
/// `timestamp` run under `pred_exec(xcc_mask=0b1)`). Everything else (waits, cache
/// operations, which each XCC needs for its own caches) runs on every XCC.
///
/// # Errors
/// A packet that is not type 3 or runs past `src`'s end, or no room in `out`.
pub fn releases_on_xccs(src: &[u32], out: &mut [u32], xcc_mask: u8) -> Result<usize, EncodeError> {
    let len_of = |at: usize| -> Result<usize, EncodeError> {
        let h = src.get(at).copied().unwrap_or(0);
        let bad = EncodeError::ValueTooLarge {
            field: "a PM4 packet to predicate (not a whole type-3 packet)",
            value: u64::from(h),
            max: 0,
        };
        if h >> 30 != 3 {
            return Err(bad);
        }
        let n = if h == NOP_1DW {
            1
        } else {
            ((h >> 16) & 0x3FFF) as usize + 2
        };
        if at + n > src.len() {
            return Err(bad);
        }
        Ok(n)
    };
    let is_release = |at: usize| {
        src.get(at)
            .is_some_and(|h| (h >> 8) & 0xFF == op::RELEASE_MEM)
    };
    let (mut i, mut o) = (0, 0);
    while i < src.len() {
        let start = i;
        let release = is_release(i);
        while i < src.len() && is_release(i) == release {
            i += len_of(i)?;
            if !release {
                break;
            }
        }
        let run = src.get(start..i).unwrap_or_default();
        if release {
            o += pred_exec(out.get_mut(o..).unwrap_or_default(), xcc_mask, run.len())?;
        }
        room(out.get_mut(o..).unwrap_or_default(), run.len())?.copy_from_slice(run);
        o += run.len();
    }
    Ok(o)
}
