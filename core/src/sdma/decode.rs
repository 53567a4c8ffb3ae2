//! The strict decoder and its display.

use super::*;

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
