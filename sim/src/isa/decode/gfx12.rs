//! gfx12 (RDNA4): what changed from gfx11 (SMEM layout, VFLAT, s_wait_*, split barriers).

use super::gfx11;
use super::*;

/// gfx12 (RDNA4): the gfx11 tables plus what RDNA4 changed: SMEM field layout, the 96-bit
/// VFLAT/VGLOBAL/VSCRATCH encodings, the split s_wait_* counters and barriers, VOP2
/// v_lshlrev_b64.
pub(super) fn decode(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    if w[0] >> 24 == 0xcc && vop3p12(bits(w[0], 16, 7)).is_some() {
        return vop3p(w[0], w[1], vop3p12);
    }
    let w0 = w[0];
    let i = if (0xEC..=0xEE).contains(&(w0 >> 24)) {
        vflat12(w0, w[1], w[2])?
    } else if w0 >> 26 == 0b110001 && (bits(w0, 14, 8) < 128 || bits(w0, 18, 4) == 8) {
        vbuffer12(w0, w[1], w[2])?
    } else if w0 >> 26 == 0b111101 {
        smem12(w0, w[1])?
    } else if w0 >> 24 == 0xcc && bits(w0, 16, 7) >= 0x40 {
        super::wmma(Isa::Gfx12, w0, w[1])?
    } else if w0 >> 24 == 0xcc {
        // VOP3P: gfx12 renumbers the f16 min/max (IEEE minimumNumber/maximumNumber).
        vop3p(w0, w[1], |opc| match opc {
            17 | 18 => None,
            27 => Some(Op::VPkMinF16),
            28 => Some(Op::VPkMaxF16),
            o => vop3p_op(o),
        })?
    } else if w0 >> 23 == 0x17F {
        // SOPP
        let opc = bits(w0, 16, 7);
        let op = match opc {
            8 => Some(Op::SWaitAlu),
            20 => Some(Op::SBarrierWait),
            64 => Some(Op::SWaitLoadcnt),
            65 => Some(Op::SWaitStorecnt),
            66 => Some(Op::SWaitSamplecnt),
            67 => Some(Op::SWaitBvhcnt),
            68 => Some(Op::SWaitExpcnt),
            70 => Some(Op::SWaitDscnt),
            71 => Some(Op::SWaitKmcnt),
            72 => Some(Op::SWaitLoadcntDscnt),
            73 => Some(Op::SWaitStorecntDscnt),
            9 => Some(Op::SWaitcnt),
            19 => Some(Op::SSingleuseVdst),
            21 => Some(Op::SBarrierLeave),
            4 | 39..=42 | 61 => return Err(undec(w0, "SOPP (gfx11 only)", opc)),
            _ => None,
        };
        match op {
            Some(op) => {
                let mut i = Inst::new(op, Enc::Sopp);
                // CAST: simm16 sign-extends.
                i.imm = i32::from(w0 as u16 as i16);
                i
            }
            None => sopp(w0, gfx11::sopp_op)?,
        }
    } else if w0 >> 30 == 0b10 && w0 >> 28 != 0b1011 && matches!(bits(w0, 23, 7), 64..=85) {
        // SOP2: gfx12's f32 SALU and 64-bit add, subtract and multiply.
        let mut i = sop2(w0, |opc| {
            Some(match opc {
                64 => Op::SAddF32,
                65 => Op::SSubF32,
                66 => Op::SMinNumF32,
                67 => Op::SMaxNumF32,
                68 => Op::SMulF32,
                69 => Op::SFmaakF32,
                70 => Op::SFmamkF32,
                71 => Op::SFmacF32,
                72 => Op::SCvtPkRtzF16F32,
                73 => Op::SAddF16,
                74 => Op::SSubF16,
                75 => Op::SMinNumF16,
                76 => Op::SMaxNumF16,
                77 => Op::SMulF16,
                78 => Op::SFmacF16,
                79 => Op::SMinimumF32,
                80 => Op::SMaximumF32,
                81 => Op::SMinimumF16,
                82 => Op::SMaximumF16,
                83 => Op::SAddNcU64,
                84 => Op::SSubNcU64,
                _ => Op::SMulU64,
            })
        })?;
        // D = S0 * S1 + K and D = S0 * K + S1, K the literal after the instruction.
        if i.op == Op::SFmaakF32 {
            i.src[2] = LIT;
        }
        if i.op == Op::SFmamkF32 {
            i.src[2] = i.src[1];
            i.src[1] = LIT;
        }
        if matches!(i.op, Op::SFmacF32 | Op::SFmacF16) {
            i.src[2] = i.dst;
        }
        i
    } else if w0 >> 23 == 0x17D && matches!(bits(w0, 8, 8), 96..=110) {
        sop1(w0, |opc| {
            Some(match opc {
                96 => Op::SCeilF32,
                97 => Op::SFloorF32,
                98 => Op::STruncF32,
                99 => Op::SRndneF32,
                100 => Op::SCvtF32I32,
                101 => Op::SCvtF32U32,
                102 => Op::SCvtI32F32,
                103 => Op::SCvtU32F32,
                104 => Op::SCvtF16F32,
                105 => Op::SCvtF32F16,
                106 => Op::SCvtHiF32F16,
                107 => Op::SCeilF16,
                108 => Op::SFloorF16,
                109 => Op::STruncF16,
                _ => Op::SRndneF16,
            })
        })?
    } else if w0 >> 23 == 0x17E && matches!(bits(w0, 16, 7), 0x41..=0x4e | 0x51..=0x5e) {
        // SOPC: gfx12's scalar float compares, the condition in the low 4 bits (VOPC's order).
        let opc = bits(w0, 16, 7);
        let mut i = Inst::new(
            if opc < 0x50 { Op::SCmpF32 } else { Op::SCmpF16 },
            Enc::Sopc,
        );
        i.src = [b16(w0, 0, 8), b16(w0, 8, 8), NONE];
        // CAST: 4-bit condition.
        i.sub = (opc & 0xf) as u8;
        i
    } else if w0 >> 23 == 0x17D && bits(w0, 8, 8) == 78 {
        let mut i = Inst::new(Op::SBarrierSignal, Enc::Sop1);
        i.src[0] = b16(w0, 0, 8);
        i
    } else if w0 >> 23 == 0x17D && matches!(bits(w0, 8, 8), 79..=82 | 87 | 88) {
        // gfx12's barrier operations and the variable sleep: one source (the barrier id,
        // M0 or an inline constant; the sleep's duration), s_get_barrier_state a destination.
        let op = match bits(w0, 8, 8) {
            79 => Op::SBarrierSignalIsfirst,
            80 => Op::SGetBarrierState,
            81 => Op::SBarrierInit,
            82 => Op::SBarrierJoin,
            87 => Op::SWakeupBarrier,
            _ => Op::SSleepVar,
        };
        let mut i = Inst::new(op, Enc::Sop1);
        i.src[0] = b16(w0, 0, 8);
        if op == Op::SGetBarrierState {
            i.dst = b16(w0, 16, 7);
        }
        i
    } else if w0 >> 31 == 0
        && w0 >> 25 != 0x3f
        && w0 >> 25 != 0x3e
        && (vop2_12(bits(w0, 25, 6)).is_some() || matches!(bits(w0, 25, 6), 15 | 16 | 57 | 58))
    {
        let opc = bits(w0, 25, 6);
        // gfx11's v_min/max_f32/f16 (15, 16, 57, 58) are gone: RDNA4 has the *_num forms.
        let op = vop2_12(opc).ok_or_else(|| undec(w0, "VOP2", opc))?;
        let mut i = Inst::new(op, Enc::Vop2);
        i.dst = VGPR + b16(w0, 17, 8);
        i.src = [b16(w0, 0, 9), VGPR + b16(w0, 9, 8), NONE];
        i
    } else if w0 >> 25 == 0x3f && vop1_12(bits(w0, 9, 8)).is_some() {
        vop1(w0, vop1_12)?
    } else if w0 >> 26 == 0b110101 {
        vop3_12(w0, w[1])?
    } else if w0 >> 26 == 0b110010 && (bits(w0, 22, 4) == 12 || bits(w0, 17, 5) == 12) {
        // VOPD: RDNA4 has no v_dual_dot2acc_f32_f16 (opcode 12 of either half).
        return Err(undec(w0, "VOPD", 12));
    } else {
        return gfx11::decode(w);
    };
    Ok(i)
}

/// VOP2 opcodes gfx12 adds or moves (its VOP3 forms at 0x100 + opcode): f64 add/mul, the
/// IEEE-754-2019 minimumNumber/maximumNumber family, v_lshlrev_b64.
fn vop2_12(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        2 => VAddF64, 6 => VMulF64, 13 => VMinF64, 14 => VMaxF64, 21 => VMinF32, 22 => VMaxF32,
        31 => VLshlrevB64, 48 => VMinF16, 49 => VMaxF16,
    })
}

/// VOP3: gfx11's layout; the opcodes gfx12 moved decode as the gfx11 opcode of the same
/// operand shape, then take gfx12's operation.
fn vop3_12(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 10);
    if (0x280..=0x289).contains(&opc) {
        return Ok(vop3_scalar_trans(w, w1, opc));
    }
    let as11 = match opc {
        // gfx11's IEEE-mode min/max (and their 3-operand forms) are gone from RDNA4.
        0x10f | 0x110 | 0x139 | 0x13a | 0x329 | 0x32a | 0x219 | 0x21c | 0x21f => {
            return Err(undec(w, "VOP3", opc));
        }
        // v_min3/max3/med3_num_f32: minimumNumber/maximumNumber, as gfx11's min3/max3/med3.
        0x229 => 0x219,
        0x22a => 0x21c,
        0x231 => 0x21f,
        // v_maxmin/minmax_num_f32 (gfx11's v_maxmin/minmax_f32 at 0x25e/0x25f are gone).
        0x25e | 0x25f => return Err(undec(w, "VOP3", opc)),
        0x269 => 0x25e,
        0x268 => 0x25f,
        // The f16 forms likewise: v_min3/max3/med3_num_f16, v_maxmin/minmax_num_f16.
        0x249 | 0x24c | 0x24f | 0x260 | 0x261 => return Err(undec(w, "VOP3", opc)),
        0x22b => 0x249,
        0x22c => 0x24c,
        0x232 => 0x24f,
        0x26b => 0x260,
        0x26a => 0x261,
        0x100..=0x13f => match vop2_12(opc - 0x100) {
            Some(Op::VAddF64) => 0x327,
            Some(Op::VMulF64) => 0x328,
            Some(Op::VMinF64) => 0x329,
            Some(Op::VMaxF64) => 0x32a,
            Some(Op::VMinF32) => 0x10f,
            Some(Op::VMaxF32) => 0x110,
            Some(Op::VLshlrevB64) => 0x33c,
            Some(Op::VMinF16) => 0x13a,
            Some(Op::VMaxF16) => 0x139,
            _ => opc,
        },
        _ => opc,
    };
    gfx11::vop3_with((w & !(0x3ff << 16)) | (as11 << 16), w1, vop3_only12)
}

/// VOP3P opcodes beyond the ones gfx9 shares: the dot products (gfx11's numbers and gfx12's
/// 8-bit float ones) and the IEEE-754-2019 packed minimum/maximum.
fn vop3p12(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0x1d => VPkMinimumF16,
        0x1e => VPkMaximumF16,
        0x24 => VDot4F32Fp8Bf8,
        0x25 => VDot4F32Bf8Fp8,
        0x26 => VDot4F32Fp8Fp8,
        0x27 => VDot4F32Bf8Bf8,
        o => return gfx11::vop3p_dot(o),
    })
}

/// VOP1 opcodes gfx12 adds: the 8-bit float conversions to f32.
fn vop1_12(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        108 => VCvtF32Fp8, 109 => VCvtF32Bf8, 110 => VCvtPkF32Fp8, 111 => VCvtPkF32Bf8,
    })
}

/// VOP3 opcodes only gfx12 has: the IEEE-754-2019 minimum/maximum family, the 8-bit float
/// conversions (their VOP1 forms at 0x180 + opcode).
fn vop3_only12(opc: u32) -> Option<Op> {
    use Op::*;
    if (0x1ec..=0x1ef).contains(&opc) {
        return vop1_12(opc - 0x180);
    }
    Some(table! {opc, return None;
        0x369 => VCvtPkFp8F32, 0x36a => VCvtPkBf8F32, 0x36b => VCvtSrFp8F32, 0x36c => VCvtSrBf8F32,
        0x365 => VMinimumF32, 0x366 => VMaximumF32, 0x367 => VMinimumF16, 0x368 => VMaximumF16,
        0x341 => VMinimumF64, 0x342 => VMaximumF64, 0x22d => VMinimum3F32, 0x22e => VMaximum3F32,
        0x22f => VMinimum3F16, 0x230 => VMaximum3F16, 0x26c => VMinimummaximumF32,
        0x26d => VMaximumminimumF32, 0x26e => VMinimummaximumF16, 0x26f => VMaximumminimumF16,
        0x30f => VPermlane16VarB32, 0x310 => VPermlanex16VarB32,
    })
}

/// RDNA4's V_S_{EXP,LOG,RCP,RSQ,SQRT}_{F32,F16} (VOP3 0x280..0x289): VDST names an SGPR and
/// SRC0 a scalar operand; abs/neg, clamp and omod apply as to any VOP3 float operation.
fn vop3_scalar_trans(w: u32, w1: u32, opc: u32) -> Inst {
    use Op::*;
    const OPS: [Op; 10] = [
        VSExpF32, VSExpF16, VSLogF32, VSLogF16, VSRcpF32, VSRcpF16, VSRsqF32, VSRsqF16, VSSqrtF32,
        VSSqrtF16,
    ];
    // CAST: opc is in 0x280..=0x289 (the caller checks).
    let mut i = Inst::new(OPS[(opc - 0x280) as usize], Enc::Vop3);
    i.len = 8;
    i.dst = b16(w, 0, 8);
    i.src = [b16(w1, 0, 9), NONE, NONE];
    i.clamp = bits(w, 15, 1) == 1;
    // CAST: 2-bit field.
    i.omod = bits(w1, 27, 2) as u8;
    // CAST: the neg and abs bits of source 0.
    i.mods = (bits(w1, 29, 1) | (bits(w, 8, 1) << 4)) as u8;
    i
}

fn smem12(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 13, 8);
    let op = table! {opc, return Err(undec(w, "SMEM", opc));
        0 => SLoadB32, 1 => SLoadB64, 2 => SLoadB128, 3 => SLoadB256, 4 => SLoadB512, 5 => SLoadB96,
        8 => SLoadI8, 9 => SLoadU8, 10 => SLoadI16, 11 => SLoadU16, 16 => SBufferLoadB32,
        17 => SBufferLoadB64, 18 => SBufferLoadB128, 19 => SBufferLoadB256, 20 => SBufferLoadB512,
        21 => SBufferLoadB96, 24 => SBufferLoadI8, 25 => SBufferLoadU8, 26 => SBufferLoadI16,
        27 => SBufferLoadU16, 33 => SDcacheInv, 34 => SAtcProbe, 35 => SAtcProbeBuffer,
        36 => SPrefetchInst, 37 => SPrefetchInstPcRel, 38 => SPrefetchData,
        39 => SBufferPrefetchData, 40 => SPrefetchDataPcRel,
    };
    let mut i = Inst::new(op, Enc::Smem);
    i.len = 8;
    i.dst = b16(w, 6, 7);
    i.src = [b16(w, 0, 6) * 2, b16(w1, 25, 7), NONE];
    // CAST: the 24-bit offset shifted to the top sign-extends.
    i.imm = ((w1 << 8) as i32) >> 8;
    match op {
        SDcacheInv => {
            i.dst = NONE;
            i.src = [NONE; 3];
        }
        // The probe's SDATA field is its flags, a prefetch's its length (numbers).
        SAtcProbe | SAtcProbeBuffer | SPrefetchInst | SPrefetchData | SBufferPrefetchData => {
            // CAST: 7-bit field.
            i.sub = i.dst as u8;
            i.dst = NONE;
        }
        SPrefetchInstPcRel | SPrefetchDataPcRel => {
            // CAST: 7-bit field.
            i.sub = i.dst as u8;
            i.dst = NONE;
            i.src[0] = NONE;
        }
        _ => {}
    }
    Ok(i)
}

/// VBUFFER (96 bits): soffset, opcode; vdata, srsrc, scope, th, format, offen, idxen; vaddr
/// and a 24-bit offset. The operations are MUBUF's (gfx11 numbers, renumbered atomics).
fn vbuffer12(w: u32, w1: u32, w2: u32) -> Result<Inst, Undecodable> {
    // MTBUF: bit 21 set, a 4-bit opcode; its FORMAT (bits 55..62) is kept in `opsel` with
    // bit 7 set (MUBUF's FORMAT field is ignored).
    let mtbuf = bits(w, 21, 1) == 1;
    let opc = if mtbuf {
        bits(w, 14, 4)
    } else {
        bits(w, 14, 8)
    };
    let fmt = super::format_op(opc);
    let op = match fmt {
        Some((op, _)) => op,
        None if mtbuf => return Err(undec(w, "MTBUF", opc)),
        None => gfx11::vmem_op(opc, true).ok_or_else(|| undec(w, "VBUFFER", opc))?,
    };
    let mut i = Inst::new(op, Enc::Mubuf);
    i.len = 12;
    i.omod = fmt.map_or(0, |f| f.1);
    if mtbuf {
        // CAST: 7 bits.
        i.opsel = (0x80 | bits(w1, 23, 7)) as u8;
    }
    let (offen, idxen) = (bits(w1, 30, 1) == 1, bits(w1, 31, 1) == 1);
    let atomic = opc >= 51;
    // TH_ATOMIC_RETURN (th bit 0) makes an atomic return.
    let th = bits(w1, 20, 3);
    // CAST: flag bits.
    i.flags = u8::from(atomic && th & 1 == 1) | (u8::from(offen) << 3) | (u8::from(idxen) << 4);
    // The FORMAT field of a non-format access is ignored (LLVM prints its default, 1).
    // CAST: the 24-bit offset (unsigned).
    i.imm = (w2 >> 8) as i32;
    gfx11::mubuf_operands(
        &mut i,
        [b16(w2, 0, 8), b16(w1, 0, 8), b16(w1, 9, 9), b16(w, 0, 7)],
        fmt.map_or(gfx11::vmem_load(opc), |f| f.0 == Op::MLoadFormat),
        atomic && !mtbuf,
    );
    // TH (bits 0..3) and SCOPE (bits 3..5), cache policy kept for the disassembly in `sub`.
    // CAST: 5 bits.
    i.sub = (th | (bits(w1, 18, 2) << 3)) as u8;
    Ok(i)
}

fn vflat12(w: u32, w1: u32, w2: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    // CAST: 0xEC flat, 0xED scratch, 0xEE global.
    let seg = match w >> 24 {
        0xEC => SEG_FLAT,
        0xED => SEG_SCRATCH,
        _ => SEG_GLOBAL,
    };
    let opc = bits(w, 14, 8);
    let op = match opc {
        43 if seg == SEG_GLOBAL => GlobalInv,
        44 if seg == SEG_GLOBAL => GlobalWb,
        // Write back and invalidate (no architectural effect: the memory is coherent).
        79 if seg == SEG_GLOBAL => GlobalWbinv,
        40 if seg == SEG_GLOBAL => MLoadAddtidB32,
        41 if seg == SEG_GLOBAL => MStoreAddtidB32,
        // RDNA4 ISA 11.5 "Block VGPR Load & Store": GLOBAL and SCRATCH only.
        83 if seg != SEG_FLAT => MLoadBlock,
        84 if seg != SEG_FLAT => MStoreBlock,
        87 if seg == SEG_GLOBAL => MLoadTrB128,
        88 if seg == SEG_GLOBAL => MLoadTrB64,
        115 if seg == SEG_GLOBAL => MAtomicOrderedAddB64,
        // Loads, stores and atomics keep their gfx11 numbers (less the renumbered atomics).
        _ if seg == SEG_SCRATCH && opc >= 51 => return Err(undec(w, "SCRATCH (atomics)", opc)),
        _ => gfx11::vmem_op(opc, true).ok_or_else(|| undec(w, "VFLAT", opc))?,
    };
    let mut i = Inst::new(op, Enc::Flat);
    i.len = 12;
    i.sub = seg;
    // CAST: 2-bit SCOPE field, kept in flags bits 4..6 (for the disassembly).
    let scope = (bits(w1, 18, 2) as u8) << 4;
    if matches!(op, GlobalInv | GlobalWb | GlobalWbinv) {
        i.flags = scope;
        return Ok(i);
    }
    // CAST: the 24-bit offset shifted to the top sign-extends.
    i.imm = ((w2 & 0xffff_ff00) as i32) >> 8;
    let sve = bits(w1, 17, 1) == 1;
    let saddr = b16(w, 0, 7);
    let (vdst, vsrc, vaddr) = (b16(w1, 0, 8), b16(w1, 23, 8), b16(w2, 0, 8));
    let atomic = opc >= 51 && !matches!(op, MLoadBlock | MStoreBlock | MLoadTrB128 | MLoadTrB64);
    let load = opc < 24
        || (30..36).contains(&opc)
        || matches!(op, MLoadAddtidB32 | MLoadBlock | MLoadTrB128 | MLoadTrB64);
    let addtid = matches!(op, MLoadAddtidB32 | MStoreAddtidB32);
    // Atomics return the old value when TH has the return bit (bit 0 of th, dword1 bit 20).
    let rtn = atomic && bits(w1, 20, 1) == 1;
    i.flags = u8::from(rtn) | (u8::from(sve) << 3) | scope;
    let vaddr = if (seg == SEG_SCRATCH && !sve) || addtid {
        NONE
    } else {
        VGPR + vaddr
    };
    let saddr = if seg == SEG_FLAT || saddr == 124 {
        NONE
    } else {
        saddr
    };
    i.src = [vaddr, if load { NONE } else { VGPR + vsrc }, saddr];
    i.dst = if load || rtn { VGPR + vdst } else { NONE };
    Ok(i)
}

/// Whether `op` has a 32-bit VOP1/VOP2 encoding on gfx12.
pub(super) fn has_short_form(op: Op) -> bool {
    (0..64).any(|k| vop2_12(k) == Some(op))
        || (0..256).any(|k| vop1_12(k) == Some(op))
        || gfx11::has_short_form(op)
}
