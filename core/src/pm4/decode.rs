//! The strict decoder.

use super::*;

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
