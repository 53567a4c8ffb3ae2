use super::*;

fn idx(h: u32, add: usize) -> usize {
    // CAST: u32 -> usize is lossless on the 32/64-bit targets hcq supports.
    (h as usize).saturating_add(add)
}

fn expect<T: PatchTarget + ?Sized>(
    mem: &T,
    offset: usize,
    last: usize,
    expected_name: &'static str,
    ok: impl Fn(u32) -> bool,
) -> Result<(), CmdError> {
    let len = mem.dword_len();
    if last >= len {
        return Err(CmdError::OutOfRange { offset: last, len });
    }
    let found = mem
        .load(offset)
        .ok_or(CmdError::OutOfRange { offset, len })?;
    if ok(found) {
        Ok(())
    } else {
        Err(CmdError::WrongPacket {
            offset,
            expected: expected_name,
            found,
        })
    }
}

#[inline(always)]
fn put<T: PatchTarget + ?Sized>(mem: &mut T, i: usize, v: u32) -> Result<(), CmdError> {
    let len = mem.dword_len();
    mem.store(i, v)
        .ok_or(CmdError::OutOfRange { offset: i, len })
}

#[inline(always)]
fn put_all<T: PatchTarget + ?Sized>(mem: &mut T, i: usize, v: &[u32]) -> Result<(), CmdError> {
    let len = mem.dword_len();
    mem.store_all(i, v)
        .ok_or(CmdError::OutOfRange { offset: i, len })
}

/// The new dispatch packet; kept out of line so the common patch (no dispatch pointer) stays
/// small enough to inline.
#[inline(never)]
pub(super) fn dispatch_write(
    info: &DispatchInfo,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<DispatchWrite, CmdError> {
    Ok(DispatchWrite {
        addr: kernargs.offset(info.packet_offset),
        packet: pm4::dispatch_packet(info, kernargs, global, local)?,
    })
}

const WAIT_HDR: u32 = Pm4Header::packet3(pm4::op::WAIT_REG_MEM, 6).raw();
const RELEASE_HDR: u32 = Pm4Header::packet3(pm4::op::RELEASE_MEM, 7).raw();
const DISPATCH_HDR: u32 = Pm4Header::packet3(pm4::op::DISPATCH_DIRECT, 4).raw();
const START_HDR: u32 = Pm4Header::packet3(pm4::op::SET_SH_REG, 9).raw();

fn sdma_op(h: u32) -> u32 {
    sdma::SdmaHeader(h).get(sdma::SdmaHeader::OP)
}

/// The seed's `update_exec`: new launch dims into NUM_THREAD_X..Z and DISPATCH_DIRECT.
/// Returns the dispatch packet to write into kernargs when the kernel has one.
#[inline]
pub fn update_exec<T: PatchTarget + ?Sized>(
    mem: &mut T,
    h: &ExecCmd,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<Option<DispatchWrite>, CmdError> {
    let d = idx(h.offset, h.layout.dispatch_at);
    let s = idx(h.offset, h.layout.start_at);
    let lo = idx(h.offset, h.layout.local_at);
    // The common case first: every dword touched in range (checked once, so the stores need
    // no checks of their own) and both headers right. Anything else takes the checked path
    // below, which names what is wrong.
    let len = mem.dword_len();
    let before = |at: usize, n: usize| len.checked_sub(n).is_some_and(|m| at < m);
    if before(d, 3)
        && before(s, 8)
        && before(lo, 2)
        && mem.load(d) == Some(DISPATCH_HDR)
        && mem.load(s) == Some(START_HDR)
        && (h.dispatch.is_none() || pm4::check_dispatch_dims(global, local).is_ok())
    {
        let ([lx, ly, lz], [gx, gy, gz]) = (local, global);
        let stored = mem
            .store_all(lo, &[lx, ly, lz])
            .and_then(|()| mem.store_all(d + 1, &[gx, gy, gz]));
        if stored.is_some() {
            return Ok(h.dispatch.as_ref().map(|(kernargs, info)| DispatchWrite {
                addr: kernargs.offset(info.packet_offset),
                packet: pm4::dispatch_packet_checked(info, *kernargs, global, local),
            }));
        }
    }
    expect(mem, d, d + 3, "DISPATCH_DIRECT", |x| x == DISPATCH_HDR)?;
    expect(mem, s, s + 8, "SET_SH_REG(COMPUTE_START_X)", |x| {
        x == START_HDR
    })?;
    // Checked before anything is written; the packet is built after the stores, so no
    // value has to live across its construction.
    if h.dispatch.is_some() {
        pm4::check_dispatch_dims(global, local)?;
    }
    // In range: NUM_THREAD_X..Z sit inside the COMPUTE_START packet checked above.
    // Fresh arrays: `local` and `global` may live in memory, and a copy straight from there
    // reads them with wider loads than they were written with (a store-forwarding stall).
    let ([lx, ly, lz], [gx, gy, gz]) = (local, global);
    put_all(mem, lo, &[lx, ly, lz])?;
    put_all(mem, d + 1, &[gx, gy, gz])?;
    Ok(h.dispatch.as_ref().map(|(kernargs, info)| DispatchWrite {
        addr: kernargs.offset(info.packet_offset),
        packet: pm4::dispatch_packet_checked(info, *kernargs, global, local),
    }))
}

/// The seed's `update_wait`: new signal address and/or value (PM4 or SDMA).
#[inline]
pub fn update_wait<T: PatchTarget + ?Sized>(
    mem: &mut T,
    h: &WaitCmd,
    signal: Option<&SignalRef>,
    value: Option<u32>,
) -> Result<(), CmdError> {
    let o = idx(h.offset, 0);
    // PM4: hdr, ctl, lo, hi, ref; SDMA: hdr, lo, hi, ref.
    let (addr_at, value_at) = match h.engine {
        Engine::Pm4 => {
            expect(mem, o, o + 6, "WAIT_REG_MEM", |x| x == WAIT_HDR)?;
            (o + 2, o + pm4::WAIT_REG_MEM_REFERENCE_AT)
        }
        Engine::Sdma => {
            expect(mem, o, o + 5, "SDMA POLL_REGMEM", |x| {
                sdma_op(x) == sdma::op::POLL_REGMEM
            })?;
            (o + 1, o + 3)
        }
    };
    if let Some(s) = signal {
        let a = s.value_addr();
        put_all(mem, addr_at, &[lo32(a), hi32(a)])?;
    }
    if let Some(v) = value {
        put(mem, value_at, v)?;
    }
    Ok(())
}

/// The seed's `update_signal`: new signal address (PM4: also the mailbox part when the
/// command has one) and/or value. PM4 writes 64-bit values; SDMA FENCE takes the low 32
/// bits (an SDMA value above `u32::MAX` is refused).
#[inline]
pub fn update_signal<T: PatchTarget + ?Sized>(
    mem: &mut T,
    h: &SignalCmd,
    signal: Option<&SignalRef>,
    value: Option<u64>,
) -> Result<(), CmdError> {
    let o = idx(h.offset, 0);
    match h.engine {
        Engine::Pm4 => {
            let mailbox = h.dwords > 8;
            let last = if mailbox { o + 15 } else { o + 7 };
            expect(mem, o, last, "RELEASE_MEM", |x| x == RELEASE_HDR)?;
            if mailbox {
                expect(mem, o + 8, last, "RELEASE_MEM (mailbox)", |x| {
                    x == RELEASE_HDR
                })?;
            }
            if let Some(s) = signal {
                let a = s.value_addr();
                put_all(mem, o + 3, &[lo32(a), hi32(a)])?;
                if mailbox {
                    let m = s.event_mailbox_ptr;
                    put_all(mem, o + 11, &[lo32(m), hi32(m), s.event_id, 0, s.event_id])?;
                }
            }
            if let Some(v) = value {
                put_all(mem, o + pm4::RELEASE_MEM_DATA_AT, &[lo32(v), hi32(v)])?;
            }
        }
        Engine::Sdma => {
            expect(mem, o, o + 3, "SDMA FENCE", |x| {
                sdma_op(x) == sdma::op::FENCE
            })?;
            let v32 = match value {
                Some(v) => Some(u32::try_from(v).map_err(|_| {
                    CmdError::Encode(EncodeError::ValueTooLarge {
                        field: "SDMA signal value",
                        value: v,
                        max: u32::MAX.into(),
                    })
                })?),
                None => None,
            };
            if let Some(s) = signal {
                let a = s.value_addr();
                put_all(mem, o + 1, &[lo32(a), hi32(a)])?;
            }
            if let Some(v) = v32 {
                put(mem, o + 3, v)?;
            }
        }
    }
    Ok(())
}
