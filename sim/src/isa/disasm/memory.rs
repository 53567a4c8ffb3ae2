//! Memory encodings: DS, FLAT/GLOBAL/SCRATCH, MUBUF/MTBUF.

#[allow(clippy::wildcard_imports)]
use super::*;

impl Printer<'_> {
    /// DS: data and address operands, offsets (two-address forms print offset0/offset1).
    pub(super) fn ds(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let name = |op: Op| self.name(op);
        let mut s = String::new();
        s.push_str(name(i.op));
        let mut ops = Vec::new();
        let xchg2 = matches!(
            i.op,
            Op::DsStorexchg2RtnB32
                | Op::DsStorexchg2St64RtnB32
                | Op::DsStorexchg2RtnB64
                | Op::DsStorexchg2St64RtnB64
        );
        let n = match i.op {
            Op::DsStorexchg2RtnB32 | Op::DsStorexchg2St64RtnB32 => 2,
            Op::DsStorexchg2RtnB64 | Op::DsStorexchg2St64RtnB64 => 4,
            Op::DsLoadB64 | Op::DsStoreB64 | Op::DsLoad2B32 | Op::DsLoad2St64B32 => 2,
            Op::DsLoadB96 | Op::DsStoreB96 => 3,
            Op::DsLoadB128 | Op::DsStoreB128 | Op::DsLoad2B64 | Op::DsLoad2St64B64 => 4,
            op if op.name().ends_with("64") => 2,
            _ => 1,
        };
        if i.dst != NONE {
            ops.push(operand(i.dst, n, 0, false, wave64));
        }
        for k in 0..3 {
            if i.src[k] != NONE {
                let w = if k == 0 {
                    1
                } else if i.op == Op::DsBvhStackRtnB32 {
                    // The last-visited node, then the four nodes (X, Y, Z, W).
                    if k == 2 { 4 } else { 1 }
                } else if xchg2 {
                    n / 2
                } else {
                    n.min(if matches!(i.op, Op::DsStore2B64 | Op::DsStore2St64B64) {
                        2
                    } else {
                        4
                    })
                };
                ops.push(operand(i.src[k], w, 0, false, wave64));
            }
        }
        if !ops.is_empty() {
            let _ = write!(s, " {}", ops.join(", "));
        }
        let two = matches!(
            i.op,
            Op::DsStore2B32
                | Op::DsStore2St64B32
                | Op::DsStore2B64
                | Op::DsLoad2B32
                | Op::DsLoad2St64B32
                | Op::DsLoad2B64
                | Op::DsStore2St64B64
                | Op::DsLoad2St64B64
        ) || xchg2;
        if two {
            if i.imm != 0 {
                let _ = write!(s, " offset0:{}", i.imm);
            }
            if i.sub != 0 {
                let _ = write!(s, " offset1:{}", i.sub);
            }
        } else if i.op == Op::DsSwizzleB32 && i.imm != 0 {
            // CAST: the 16-bit pattern.
            let _ = write!(s, " offset:{}", swizzle(i.imm as u32));
        } else if i.imm != 0 {
            let _ = write!(s, " offset:{}", i.imm);
        }
        s
    }

    /// gfx12 global_inv/global_wb: the scope only.
    pub(super) fn cache_ctl(&self) -> String {
        let i = self.i;
        let mut s = String::new();
        let scope = [
            "",
            " scope:SCOPE_SE",
            " scope:SCOPE_DEV",
            " scope:SCOPE_SYS",
        ];
        s.push_str(i.op.name());
        s.push_str(scope[usize::from((i.flags >> 4) & 3)]);
        s
    }

    /// FLAT/GLOBAL/SCRATCH: segment prefix, data, address, saddr, offset, cache policy.
    pub(super) fn flat(&self) -> String {
        let (i, wave64, gfx940) = (self.i, self.wave64, self.gfx940);
        let Ctx { gfx9, gfx12, .. } = self.ctx();
        let name = |op: Op| self.name(op);
        let mut s = String::new();
        let seg = match i.sub {
            SEG_FLAT => "flat_",
            SEG_SCRATCH => "scratch_",
            _ => "global_",
        };
        if i.flags & 0x80 != 0 {
            // gfx940's LDS DMA loads: global/scratch_load_lds_{ubyte,...,dword}.
            let t = name(i.op).trim_start_matches("load_");
            let _ = write!(s, "{seg}load_lds_{t}");
        } else {
            let _ = write!(s, "{seg}{}", name(i.op));
        }
        let (n, mut dn) = vmem_regs(i.op);
        if wave64 && matches!(i.op, Op::MLoadTrB128 | Op::MLoadTrB64) {
            // RDNA4 ISA 11.6.2: the same data in half the VGPRs in wave64.
            dn /= 2;
        }
        let mut ops = Vec::new();
        if i.dst != NONE {
            ops.push(operand(i.dst, dn, 0, false, wave64));
        }
        let vaddr_n = if i.sub == SEG_SCRATCH || i.src[2] != NONE {
            1
        } else {
            2
        };
        if !matches!(i.op, Op::MLoadAddtidB32 | Op::MStoreAddtidB32) {
            ops.push(operand(i.src[0], vaddr_n, 0, false, wave64));
        }
        if i.src[1] != NONE {
            ops.push(operand(i.src[1], n, 0, false, wave64));
        }
        if i.sub != SEG_FLAT {
            ops.push(if i.src[2] == NONE {
                "off".into()
            } else {
                operand(
                    i.src[2],
                    if i.sub == SEG_SCRATCH { 1 } else { 2 },
                    0,
                    false,
                    wave64,
                )
            });
        }
        let _ = write!(s, " {}", ops.join(", "));
        if i.imm != 0 {
            let _ = write!(s, " offset:{}", i.imm);
        }
        if gfx12 {
            if i.flags & 1 != 0 {
                s.push_str(" th:TH_ATOMIC_RETURN");
            }
            let scope = [
                "",
                " scope:SCOPE_SE",
                " scope:SCOPE_DEV",
                " scope:SCOPE_SYS",
            ];
            s.push_str(scope[usize::from((i.flags >> 4) & 3)]);
        } else if gfx9 && gfx940 {
            for (bit, f) in [(1u8, " sc0"), (4, " sc1"), (2, " nt")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        } else if gfx9 {
            for (bit, f) in [(1u8, " glc"), (2, " slc")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        } else {
            for (bit, f) in [(1u8, " glc"), (2, " slc"), (4, " dlc")] {
                if i.flags & bit != 0 {
                    s.push_str(f);
                }
            }
        }
        s
    }

    /// MUBUF: data, vaddr, descriptor, soffset and the addressing/cache bits.
    pub(super) fn mubuf(&self) -> String {
        let (i, wave64) = (self.i, self.wave64);
        let mut s = String::new();
        // LDS DMA (flags bit 7): gfx9's buffer_store_lds_dword, gfx11's buffer_load_lds_*.
        let lds = i.flags & 0x80 != 0;
        match i.op {
            _ if lds && self.isa == Isa::Gfx9 => s.push_str("buffer_store_lds_dword"),
            op if lds => {
                let t = match op {
                    Op::MLoadU8 => "u8",
                    Op::MLoadI8 => "i8",
                    Op::MLoadU16 => "u16",
                    Op::MLoadI16 => "i16",
                    Op::MLoadFormat => "format_x",
                    _ => "b32",
                };
                let _ = write!(s, "buffer_load_lds_{t}");
            }
            Op::BufferInvl2 if self.gfx940 => s.push_str("buffer_inv"),
            Op::BufferWbl2 | Op::BufferInvl2 | Op::BufferWbinvl1 | Op::BufferWbinvl1Vol => {
                s.push_str(i.op.name());
            }
            op @ (Op::MLoadFormat | Op::MStoreFormat) => {
                let t = if i.opsel & 0x80 != 0 { "t" } else { "" };
                let dir = if op == Op::MLoadFormat {
                    "load"
                } else {
                    "store"
                };
                let xyzw = &"xyzw"[..usize::from(i.omod & 3) + 1];
                let d16 = match (i.omod >> 2) & 3 {
                    0 => "",
                    1 => "d16_",
                    _ => "d16_hi_",
                };
                // gfx9 names d16 after the format (buffer_load_format_d16_x), gfx10+ before.
                if self.isa == Isa::Gfx9 {
                    let _ = write!(s, "{t}buffer_{dir}_format_{d16}{xyzw}");
                } else {
                    let _ = write!(s, "{t}buffer_{dir}_{d16}format_{xyzw}");
                }
            }
            op if self.isa == Isa::Gfx9 || i.src[2] != NONE => {
                let _ = write!(s, "buffer_{}", self.name(op));
            }
            op => s.push_str(op.name()),
        }
        if i.src[2] != NONE {
            let (n, dn) = if matches!(i.op, Op::MLoadFormat | Op::MStoreFormat) {
                let r = crate::isa::decode::format_regs(i.omod);
                (r, r)
            } else {
                vmem_regs(i.op)
            };
            let (data, n) = if i.src[1] != NONE {
                (i.src[1], n)
            } else {
                (i.dst, dn)
            };
            let both = i.flags & 0x18 == 0x18;
            let vaddr = if i.src[0] == NONE {
                "off".to_string()
            } else {
                operand(i.src[0], if both { 2 } else { 1 }, 0, false, wave64)
            };
            if lds && self.isa == Isa::Gfx9 {
                let _ = write!(
                    s,
                    " {}, {}",
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            } else if lds {
                let _ = write!(
                    s,
                    " {vaddr}, {}, {}",
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            } else {
                let _ = write!(
                    s,
                    " {}, {vaddr}, {}, {}",
                    operand(data, n, 0, false, wave64),
                    operand(i.src[2], 4, 0, false, wave64),
                    operand(i.sdst, 1, i.lit, false, wave64)
                );
            }
            if i.opsel & 0x80 != 0 {
                s.push_str(&buf_format(self.isa, i.opsel & 0x7f));
            }
            if i.flags & 16 != 0 {
                s.push_str(" idxen");
            }
            if i.flags & 8 != 0 {
                s.push_str(" offen");
            }
            if i.imm != 0 {
                let _ = write!(s, " offset:{}", i.imm);
            }
            if self.isa == Isa::Gfx12 {
                let th = usize::from(i.sub & 7);
                let kind = if i.op.name().starts_with("atomic") {
                    [
                        "",
                        "RETURN",
                        "NT",
                        "NT_RETURN",
                        "CASCADE_RT",
                        "CASCADE_NT",
                        "6",
                        "7",
                    ]
                } else {
                    ["", "NT", "HT", "BYPASS", "LU", "NT_RT", "RT_NT", "NT_HT"]
                };
                let what = if i.op.name().starts_with("atomic") {
                    "ATOMIC"
                } else if i.dst != NONE {
                    "LOAD"
                } else {
                    "STORE"
                };
                if th != 0 {
                    let _ = write!(s, " th:TH_{what}_{}", kind[th]);
                }
                let scope = [
                    "",
                    " scope:SCOPE_SE",
                    " scope:SCOPE_DEV",
                    " scope:SCOPE_SYS",
                ];
                s.push_str(scope[usize::from((i.sub >> 3) & 3)]);
            } else {
                let bits: &[(u8, &str)] = if self.gfx940 {
                    &[(1, " sc0"), (4, " sc1"), (2, " nt")]
                } else if self.isa == Isa::Gfx11 {
                    &[(1, " glc"), (2, " slc"), (4, " dlc")]
                } else {
                    &[(1, " glc"), (2, " slc")]
                };
                for (bit, f) in bits {
                    if i.flags & bit != 0 {
                        s.push_str(f);
                    }
                }
                if lds && self.isa == Isa::Gfx9 {
                    s.push_str(" lds");
                }
            }
        }
        s
    }
}
