//! gfx11 (RDNA3) encodings: opcode tables and the field layouts gfx12 inherits.

use super::*;

fn sop2_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SAddU32, 1 => SSubU32, 2 => SAddI32, 3 => SSubI32, 4 => SAddcU32, 5 => SSubbU32,
        6 => SAbsdiffI32, 8 => SLshlB32, 9 => SLshlB64, 10 => SLshrB32, 11 => SLshrB64,
        12 => SAshrI32, 13 => SAshrI64, 14 => SLshl1AddU32, 15 => SLshl2AddU32, 16 => SLshl3AddU32,
        17 => SLshl4AddU32, 18 => SMinI32, 19 => SMinU32, 20 => SMaxI32, 21 => SMaxU32,
        22 => SAndB32, 23 => SAndB64, 24 => SOrB32, 25 => SOrB64, 26 => SXorB32, 27 => SXorB64,
        28 => SNandB32, 29 => SNandB64, 30 => SNorB32, 31 => SNorB64, 32 => SXnorB32,
        33 => SXnorB64, 34 => SAndNot1B32, 35 => SAndNot1B64, 36 => SOrNot1B32, 37 => SOrNot1B64,
        38 => SBfeU32, 39 => SBfeI32, 40 => SBfeU64, 41 => SBfeI64, 42 => SBfmB32, 43 => SBfmB64,
        44 => SMulI32, 45 => SMulHiU32, 46 => SMulHiI32, 48 => SCselectB32, 49 => SCselectB64,
        50 => SPackLlB32B16, 51 => SPackLhB32B16, 52 => SPackHhB32B16, 53 => SPackHlB32B16,
    })
}

fn sop1_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SMovB32, 1 => SMovB64, 2 => SCmovB32, 3 => SCmovB64, 4 => SBrevB32, 8 => SCtzI32B32,
        9 => SCtzI32B64, 10 => SClzI32U32, 11 => SClzI32U64, 12 => SClsI32, 14 => SSextI32I8, 15 => SSextI32I16,
        16 => SBitset0B32, 18 => SBitset1B32, 21 => SAbsI32, 22 => SBcnt0I32B32, 24 => SBcnt1I32B32,
        25 => SBcnt1I32B64, 30 => SNotB32, 31 => SNotB64, 32 => SAndSaveexecB32,
        33 => SAndSaveexecB64, 34 => SOrSaveexecB32, 35 => SOrSaveexecB64, 36 => SXorSaveexecB32,
        37 => SXorSaveexecB64, 44 => SAndNot0SaveexecB32, 45 => SAndNot0SaveexecB64,
        48 => SAndNot1SaveexecB32, 49 => SAndNot1SaveexecB64, 71 => SGetpcB64, 72 => SSetpcB64,
        73 => SSwappcB64, 5 => SBrevB64, 13 => SClsI32I64, 17 => SBitset0B64, 19 => SBitset1B64,
        20 => SBitreplicateB64B32, 23 => SBcnt0I32B64, 26 => SQuadmaskB32, 27 => SQuadmaskB64,
        28 => SWqmB32, 29 => SWqmB64, 38 => SNandSaveexecB32, 39 => SNandSaveexecB64,
        40 => SNorSaveexecB32, 41 => SNorSaveexecB64, 42 => SXnorSaveexecB32,
        43 => SXnorSaveexecB64, 46 => SOrNot0SaveexecB32, 47 => SOrNot0SaveexecB64,
        50 => SOrNot1SaveexecB32, 51 => SOrNot1SaveexecB64, 52 => SAndNot0WrexecB32,
        53 => SAndNot0WrexecB64, 54 => SAndNot1WrexecB32, 55 => SAndNot1WrexecB64,
        64 => SMovrelsB32, 65 => SMovrelsB64, 66 => SMovreldB32, 67 => SMovreldB64,
        68 => SMovrelsd2B32, 74 => SRfeB64, 76 => SSendmsgRtnB32, 77 => SSendmsgRtnB64,
    })
}

fn sopk_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SMovkI32, 1 => SVersion, 2 => SCmovkI32, 3 => SCmpkEqI32, 4 => SCmpkLgI32,
        5 => SCmpkGtI32, 6 => SCmpkGeI32, 7 => SCmpkLtI32, 8 => SCmpkLeI32, 9 => SCmpkEqU32,
        10 => SCmpkLgU32, 11 => SCmpkGtU32, 12 => SCmpkGeU32, 13 => SCmpkLtU32, 14 => SCmpkLeU32,
        15 => SAddkI32, 16 => SMulkI32, 24 => SWaitcntVscnt, 25 => SWaitcntVmcnt,
        26 => SWaitcntExpcnt, 27 => SWaitcntLgkmcnt, 17 => SGetregB32, 18 => SSetregB32,
        19 => SSetregImm32B32, 20 => SCallB64, 22 => SSubvectorLoopBegin, 23 => SSubvectorLoopEnd,
    })
}

fn sopc_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SCmpEqI32, 1 => SCmpLgI32, 2 => SCmpGtI32, 3 => SCmpGeI32, 4 => SCmpLtI32,
        5 => SCmpLeI32, 6 => SCmpEqU32, 7 => SCmpLgU32, 8 => SCmpGtU32, 9 => SCmpGeU32,
        10 => SCmpLtU32, 11 => SCmpLeU32, 12 => SBitcmp0B32, 13 => SBitcmp1B32, 16 => SCmpEqU64,
        17 => SCmpLgU64, 14 => SBitcmp0B64, 15 => SBitcmp1B64,
    })
}

pub(super) fn sopp_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SNop, 3 => SSleep, 4 => SSetInstPrefetchDistance, 5 => SClause, 7 => SDelayAlu, 8 => SWaitcntDepctr, 9 => SWaitcnt,
        16 => STrap, 31 => SCodeEnd, 32 => SBranch, 33 => SCbranchScc0, 34 => SCbranchScc1,
        35 => SCbranchVccz, 36 => SCbranchVccnz, 37 => SCbranchExecz, 38 => SCbranchExecnz,
        48 => SEndpgm, 53 => SSetprio, 54 => SSendmsg, 60 => SIcacheInv, 61 => SBarrier,
        1 => SSetkill, 2 => SSethalt, 10 => SWaitIdle, 11 => SWaitEvent, 17 => SRoundMode,
        18 => SDenormMode, 39 => SCbranchCdbgsys, 40 => SCbranchCdbguser,
        41 => SCbranchCdbgsysOrUser, 42 => SCbranchCdbgsysAndUser, 49 => SEndpgmSaved,
        52 => SWakeup, 55 => SSendmsghalt, 56 => SIncperflevel, 57 => SDecperflevel,
        58 => STtracedata, 59 => STtracedataImm,
    })
}

pub(super) fn decode(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let i = if w0 >> 31 == 0 {
        if w0 >> 25 == 0x3f {
            vop1(w0, vop1_op)?
        } else if w0 >> 25 == 0x3e {
            vopc(w0)?
        } else {
            vop2(w0)?
        }
    } else if w0 >> 30 == 0b10 && w0 >> 28 != 0b1011 {
        sop2(w0, sop2_op)?
    } else if w0 >> 28 == 0b1011 {
        match bits(w0, 23, 5) {
            0x1d => sop1(w0, sop1_op)?,
            0x1e => sopc(w0, sopc_op)?,
            0x1f => sopp(w0, sopp_op)?,
            _ => sopk(w0, sopk_op)?,
        }
    } else {
        match w0 >> 26 {
            // The VOP3P dot products (gfx11's opcodes; gfx9 numbers its own).
            0b110011 if w0 >> 24 == 0xcc && vop3p_dot(bits(w0, 16, 7)).is_some() => {
                vop3p(w0, w[1], vop3p_dot)?
            }
            0b111101 => smem(w0, w[1])?,
            0b110101 => vop3(w0, w[1])?,
            0b110010 => vopd(w0, w[1])?,
            0b110011 if w0 >> 24 == 0xcc && bits(w0, 16, 7) >= 0x40 => {
                super::wmma(Isa::Gfx11, w0, w[1])?
            }
            0b110011 if w0 >> 24 == 0xcc => vop3p(w0, w[1], vop3p_op)?,
            0b110110 => ds(w0, w[1])?,
            0b110111 => flat(w0, w[1])?,
            0b111000 => mubuf(w0, w[1])?,
            0b111010 => buf(w0, w[1], true)?,
            _ => {
                return Err(undec(
                    w0,
                    "an encoding (unknown or not interpreted)",
                    w0 >> 26,
                ));
            }
        }
    };
    Ok(i)
}

fn smem(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = table! {opc, return Err(undec(w, "SMEM", opc));
        0 => SLoadB32, 1 => SLoadB64, 2 => SLoadB128, 3 => SLoadB256, 4 => SLoadB512,
        8 => SBufferLoadB32, 9 => SBufferLoadB64, 10 => SBufferLoadB128, 11 => SBufferLoadB256,
        12 => SBufferLoadB512, 32 => SGl1Inv, 33 => SDcacheInv, 34 => SAtcProbe,
        35 => SAtcProbeBuffer, 36 => SMemtime, 37 => SMemrealtime,
    };
    let mut i = Inst::new(op, Enc::Smem);
    i.len = 8;
    i.dst = b16(w, 6, 7);
    // sbase names an SGPR pair.
    i.src = [b16(w, 0, 6) * 2, b16(w1, 25, 7), NONE];
    // offset: signed 21 bits.
    // CAST: shifting the 21-bit field to the top sign-extends it.
    i.imm = ((w1 << 11) as i32) >> 11;
    i.flags = u8::from(bits(w, 14, 1) == 1) | (u8::from(bits(w, 13, 1) == 1) << 2);
    if matches!(op, SGl1Inv | SDcacheInv) {
        i.dst = NONE;
        i.src = [NONE; 3];
    }
    if matches!(op, SMemtime | SMemrealtime) {
        i.src = [NONE; 3];
    }
    // The probe's SDATA field is its flags (printed as a number).
    if matches!(op, SAtcProbe | SAtcProbeBuffer) {
        // CAST: 7-bit field.
        i.sub = i.dst as u8;
        i.dst = NONE;
    }
    Ok(i)
}

fn vop1_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        66 => VMovreldB32, 67 => VMovrelsB32, 68 => VMovrelsdB32, 72 => VMovrelsd2B32,
        104 => VSwaprelB32,
        0 => VNop, 1 => VMovB32, 2 => VReadfirstlaneB32, 3 => VCvtI32F64, 4 => VCvtF64I32,
        28 => VMovB16, 5 => VCvtF32I32, 6 => VCvtF32U32, 7 => VCvtU32F32, 8 => VCvtI32F32, 10 => VCvtF16F32,
        11 => VCvtF32F16, 15 => VCvtF32F64, 16 => VCvtF64F32, 17 => VCvtF32Ubyte0,
        18 => VCvtF32Ubyte1, 19 => VCvtF32Ubyte2, 20 => VCvtF32Ubyte3, 21 => VCvtU32F64,
        22 => VCvtF64U32, 23 => VTruncF64, 24 => VCeilF64, 25 => VRndneF64, 26 => VFloorF64,
        32 => VFractF32, 33 => VTruncF32, 34 => VCeilF32, 35 => VRndneF32, 36 => VFloorF32,
        37 => VExpF32, 39 => VLogF32, 42 => VRcpF32, 43 => VRcpIflagF32, 46 => VRsqF32,
        47 => VRcpF64, 49 => VRsqF64, 51 => VSqrtF32, 52 => VSqrtF64, 53 => VSinF32, 54 => VCosF32,
        55 => VNotB32, 56 => VBfrevB32, 57 => VClzI32U32, 58 => VCtzI32B32, 59 => VClsI32, 60 => VFrexpExpI32F64,
        61 => VFrexpMantF64, 62 => VFractF64,
        63 => VFrexpExpI32F32, 64 => VFrexpMantF32, 80 => VCvtF16U16, 81 => VCvtF16I16,
        82 => VCvtU16F16, 83 => VCvtI16F16, 84 => VRcpF16, 85 => VSqrtF16, 86 => VRsqF16,
        87 => VLogF16, 88 => VExpF16, 96 => VSinF16, 97 => VCosF16,
        12 => VCvtNearestI32F32, 13 => VCvtFloorI32F32, 14 => VCvtOffF32I4, 27 => VPipeflush,
        89 => VFrexpMantF16, 90 => VFrexpExpI16F16, 91 => VFloorF16, 92 => VCeilF16,
        93 => VTruncF16, 94 => VRndneF16, 95 => VFractF16, 98 => VSatPkU8I16,
        99 => VCvtNormI16F16, 100 => VCvtNormU16F16, 101 => VSwapB32, 103 => VPermlane64B32,
        105 => VNotB16, 106 => VCvtI32I16, 107 => VCvtU32U16,
    })
}

/// The VOP3P dot products of gfx11 and gfx12 (gfx9 numbers its own).
pub(super) fn vop3p_dot(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0x13 => VDot2F32F16, 0x16 => VDot4I32Iu8, 0x17 => VDot4U32U8, 0x18 => VDot8I32Iu4,
        0x19 => VDot8U32U4, 0x1a => VDot2F32Bf16,
    })
}

fn vop2_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        1 => VCndmaskB32, 3 => VAddF32, 4 => VSubF32, 5 => VSubrevF32, 8 => VMulF32,
        9 => VMulI32I24, 10 => VMulHiI32I24, 11 => VMulU32U24, 12 => VMulHiU32U24, 15 => VMinF32,
        16 => VMaxF32, 17 => VMinI32, 18 => VMaxI32, 19 => VMinU32, 20 => VMaxU32,
        24 => VLshlrevB32, 25 => VLshrrevB32, 26 => VAshrrevI32, 27 => VAndB32, 28 => VOrB32,
        29 => VXorB32, 30 => VXnorB32, 32 => VAddCoCiU32, 33 => VSubCoCiU32, 34 => VSubrevCoCiU32,
        37 => VAddNcU32, 38 => VSubNcU32, 39 => VSubrevNcU32, 43 => VFmacF32, 44 => VFmamkF32,
        45 => VFmaakF32, 47 => VCvtPkRtzF16F32, 50 => VAddF16, 51 => VSubF16, 53 => VMulF16,
        54 => VFmacF16, 55 => VFmamkF16, 56 => VFmaakF16, 57 => VMaxF16, 58 => VMinF16,
        52 => VSubrevF16, 59 => VLdexpF16, 2 => VDot2accF32F16, 6 => VFmacDx9ZeroF32,
        7 => VMulDx9ZeroF32, 60 => VPkFmacF16,
    })
}

/// VOPC opcode → (op, condition, cmpx).
fn vopc_op(opc: u32) -> Option<(Op, u8, bool)> {
    use Op::*;
    let x = opc & 0x80 != 0;
    let o = opc & 0x7f;
    // CAST: masked to 4 bits.
    let c = (o & 0xf) as u8;
    let op = table! {o, return None;
        0x00..=0x0f => VCmpF16, 0x10..=0x1f => VCmpF32, 0x20..=0x2f => VCmpF64,
        0x31..=0x36 => VCmpI16, 0x39..=0x3e => VCmpU16, 0x40..=0x47 => VCmpI32,
        0x48..=0x4f => VCmpU32, 0x50..=0x57 => VCmpI64, 0x58..=0x5f => VCmpU64,
        0x7d => VCmpClassF16, 0x7e => VCmpClassF32, 0x7f => VCmpClassF64,
    };
    // Integer conditions: f lt eq le gt ne ge t (0..7, u32 at +8).
    let c = match op {
        VCmpI16 | VCmpU16 | VCmpI32 | VCmpU32 | VCmpI64 | VCmpU64 => c & 7,
        _ => c,
    };
    Some((op, c, x))
}

fn vop2(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 25, 6);
    if opc == 0 {
        // V_ILLEGAL (VOP2 opcode 0, which includes the all-zero word): no operands.
        return Ok(Inst::new(Op::VIllegal, Enc::Vop2));
    }
    let op = vop2_op(opc).ok_or_else(|| undec(w, "VOP2", opc))?;
    let mut i = Inst::new(op, Enc::Vop2);
    i.dst = VGPR + b16(w, 17, 8);
    i.src = [b16(w, 0, 9), VGPR + b16(w, 9, 8), NONE];
    match op {
        // Carry in and out through VCC.
        Op::VAddCoCiU32 | Op::VSubCoCiU32 | Op::VSubrevCoCiU32 => {
            i.sdst = 106;
            i.src[2] = 106;
        }
        Op::VCndmaskB32 => i.src[2] = 106,
        Op::VFmamkF32 | Op::VFmamkF16 => {
            // dst = src0 * K + src1
            i.src[2] = i.src[1];
            i.src[1] = LIT;
        }
        Op::VFmaakF32 | Op::VFmaakF16 => i.src[2] = LIT,
        _ => {}
    }
    Ok(i)
}

fn vopc(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 17, 8);
    let (op, c, x) = vopc_op(opc).ok_or_else(|| undec(w, "VOPC", opc))?;
    let mut i = Inst::new(op, Enc::Vopc);
    i.sub = c;
    i.cmpx = x;
    i.sdst = if x { NONE } else { 106 };
    i.src = [b16(w, 0, 9), VGPR + b16(w, 9, 8), NONE];
    Ok(i)
}

fn vop3_only(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0x227 => VDivFixupF32, 0x228 => VDivFixupF64, 0x237 => VDivFmasF32, 0x238 => VDivFmasF64,
        0x2fc => VDivScaleF32, 0x2fd => VDivScaleF64, 0x248 => VFmaF16, 0x249 => VMin3F16, 0x24c => VMax3F16, 0x24f => VMed3F16,
        0x20a => VMadI32I24,
        0x20b => VMadU32U24, 0x210 => VBfeU32, 0x211 => VBfeI32, 0x212 => VBfiB32, 0x213 => VFmaF32,
        0x214 => VFmaF64, 0x216 => VAlignbitB32, 0x217 => VAlignbyteB32, 0x219 => VMin3F32,
        0x21a => VMin3I32, 0x21b => VMin3U32, 0x21c => VMax3F32, 0x21d => VMax3I32,
        0x21e => VMax3U32, 0x21f => VMed3F32, 0x220 => VMed3I32, 0x221 => VMed3U32,
        0x240 => VXor3B32, 0x244 => VPermB32, 0x245 => VXadU32, 0x246 => VLshlAddU32,
        0x247 => VAddLshlU32, 0x255 => VAdd3U32, 0x256 => VLshlOrB32, 0x257 => VAndOrB32,
        0x258 => VOr3B32, 0x25b => VPermlane16B32,
        0x25e => VMaxminF32, 0x25f => VMinmaxF32,
        0x25c => VPermlanex16B32, 0x2fe => VMadU64U32, 0x2ff => VMadI64I32, 0x300 => VAddCoU32,
        0x301 => VSubCoU32, 0x302 => VSubrevCoU32, 0x31c => VLdexpF32, 0x31d => VBfmB32,
        0x31e => VBcntU32B32, 0x31f => VMbcntLoU32B32, 0x320 => VMbcntHiU32B32, 0x325 => VSubNcI32,
        0x326 => VAddNcI32, 0x327 => VAddF64, 0x328 => VMulF64, 0x329 => VMinF64, 0x32a => VMaxF64,
        0x32b => VLdexpF64, 0x32c => VMulLoU32, 0x32d => VMulHiU32, 0x32e => VMulHiI32,
        0x33c => VLshlrevB64, 0x33d => VLshrrevB64, 0x33e => VAshrrevI64, 0x360 => VReadlaneB32,
        0x361 => VWritelaneB32, 0x303 => VAddU16, 0x304 => VSubU16, 0x305 => VMulLoU16,
        0x309 => VMaxU16, 0x30a => VMaxI16, 0x30b => VMinU16, 0x30c => VMinI16,
        0x311 => VPackB32F16, 0x338 => VLshlrevB16, 0x339 => VLshrrevB16, 0x33a => VAshrrevI16,
        0x24a => VMin3I16, 0x24b => VMin3U16, 0x24d => VMax3I16, 0x24e => VMax3U16,
        0x250 => VMed3I16, 0x251 => VMed3U16, 0x241 => VMadU16, 0x253 => VMadI16,
        0x259 => VMadU32U16, 0x25a => VMadI32I16, 0x222 => VSadU8, 0x223 => VSadHiU8,
        0x224 => VSadU16, 0x225 => VSadU32, 0x239 => VMsadU8, 0x215 => VLerpU8,
        0x323 => VCvtPkU16U32, 0x324 => VCvtPkI16I32, 0x262 => VMaxminU32, 0x263 => VMinmaxU32,
        0x264 => VMaxminI32, 0x265 => VMinmaxI32, 0x362 => VAndB16, 0x363 => VOrB16,
        0x364 => VXorB16, 0x30d => VAddNcI16, 0x30e => VSubNcI16,
        0x25d => VCndmaskB16, 0x260 => VMaxminF16, 0x261 => VMinmaxF16, 0x254 => VDivFixupF16,
        0x266 => VDot2F16F16, 0x267 => VDot2Bf16Bf16, 0x306 => VCvtPkI16F32,
        0x307 => VCvtPkU16F32, 0x312 => VCvtPkNormI16F16, 0x313 => VCvtPkNormU16F16,
        0x321 => VCvtPkNormI16F32, 0x322 => VCvtPkNormU16F32, 0x226 => VCvtPkU8F32,
        0x20c => VCubeidF32, 0x20d => VCubescF32, 0x20e => VCubetcF32, 0x20f => VCubemaF32,
        0x218 => VMullitF32, 0x209 => VFmaDx9ZeroF32, 0x23a => VQsadPkU16U8,
        0x23b => VMqsadPkU16U8, 0x23d => VMqsadU32U8, 0x32f => VTrigPreopF64,
    })
}

pub(super) fn vop3(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    vop3_with(w, w1, |_| None)
}

/// VOP3 with `extra` consulted first for the VOP3-only opcodes (gfx12's additions).
pub(super) fn vop3_with(
    w: u32,
    w1: u32,
    extra: fn(u32) -> Option<Op>,
) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 10);
    let mut cmp = None;
    let op = match opc {
        _ if extra(opc).is_some() => extra(opc).ok_or_else(|| undec(w, "VOP3", opc))?,
        0..=0xff => {
            let (op, c, x) = vopc_op(opc).ok_or_else(|| undec(w, "VOP3 (VOPC)", opc))?;
            cmp = Some((c, x));
            op
        }
        0x100..=0x13f => vop2_op(opc - 0x100).ok_or_else(|| undec(w, "VOP3 (VOP2)", opc))?,
        0x180..=0x1ff => vop1_op(opc - 0x180).ok_or_else(|| undec(w, "VOP3 (VOP1)", opc))?,
        _ => vop3_only(opc).ok_or_else(|| undec(w, "VOP3", opc))?,
    };
    // VOP2 forms without a VOP3 encoding of their own (and v_swaprel_b32, VOP1 only).
    if matches!(
        op,
        Op::VFmamkF32 | Op::VFmaakF32 | Op::VFmamkF16 | Op::VFmaakF16 | Op::VSwaprelB32
    ) {
        return Err(undec(w, "VOP3 (VOP2)", opc));
    }
    let sd = matches!(
        op,
        Op::VAddCoU32
            | Op::VSubCoU32
            | Op::VSubrevCoU32
            | Op::VAddCoCiU32
            | Op::VSubCoCiU32
            | Op::VSubrevCoCiU32
            | Op::VMadU64U32
            | Op::VMadI64I32
            | Op::VDivScaleF32
            | Op::VDivScaleF64
    );
    let mut i = Inst::new(op, if sd { Enc::Vop3sd } else { Enc::Vop3 });
    i.len = 8;
    let vdst = b16(w, 0, 8);
    i.src = [b16(w1, 0, 9), b16(w1, 9, 9), b16(w1, 18, 9)];
    // CAST: 3-bit fields.
    let neg = bits(w1, 29, 3) as u8;
    i.omod = bits(w1, 27, 2) as u8;
    i.clamp = bits(w, 15, 1) == 1;
    // CAST: 4-bit field.
    i.opsel = if sd { 0 } else { bits(w, 11, 4) as u8 };
    if sd {
        i.dst = VGPR + vdst;
        i.sdst = b16(w, 8, 7);
        i.mods = neg;
    } else {
        i.dst = VGPR + vdst;
        // CAST: 3-bit field.
        i.mods = neg | ((bits(w, 8, 3) as u8) << 4);
    }
    if let Some((c, x)) = cmp {
        i.sub = c;
        i.cmpx = x;
        i.dst = NONE;
        i.sdst = if x { NONE } else { vdst };
        i.src[2] = NONE;
    }
    let nsrc = match op {
        _ if cmp.is_some() => 2,
        Op::VCndmaskB32
        | Op::VAddCoCiU32
        | Op::VSubCoCiU32
        | Op::VSubrevCoCiU32
        | Op::VFmaF32
        | Op::VFmaF64
        | Op::VBfeU32
        | Op::VBfeI32
        | Op::VBfiB32
        | Op::VAlignbitB32
        | Op::VAlignbyteB32
        | Op::VMin3F32
        | Op::VMin3I32
        | Op::VMin3U32
        | Op::VMax3F32
        | Op::VMax3I32
        | Op::VMax3U32
        | Op::VMed3F32
        | Op::VMed3I32
        | Op::VMed3U32
        | Op::VXor3B32
        | Op::VPermB32
        | Op::VXadU32
        | Op::VLshlAddU32
        | Op::VAddLshlU32
        | Op::VAdd3U32
        | Op::VLshlOrB32
        | Op::VAndOrB32
        | Op::VOr3B32
        | Op::VMadU64U32
        | Op::VMadI64I32
        | Op::VMadU32U24
        | Op::VMadI32I24
        | Op::VDivScaleF32
        | Op::VDivScaleF64
        | Op::VDivFmasF32
        | Op::VDivFmasF64
        | Op::VDivFixupF32
        | Op::VDivFixupF64
        | Op::VFmaF16
        | Op::VPermlane16B32
        | Op::VPermlanex16B32
        | Op::VMaxminF32
        | Op::VMinmaxF32
        | Op::VMin3F16
        | Op::VMax3F16
        | Op::VMed3F16
        | Op::VMin3I16
        | Op::VMin3U16
        | Op::VMax3I16
        | Op::VMax3U16
        | Op::VMed3I16
        | Op::VMed3U16
        | Op::VMadU16
        | Op::VMadI16
        | Op::VMadU32U16
        | Op::VMadI32I16
        | Op::VSadU8
        | Op::VSadHiU8
        | Op::VSadU16
        | Op::VSadU32
        | Op::VMsadU8
        | Op::VLerpU8
        | Op::VMaxminI32
        | Op::VMaxminU32
        | Op::VMinmaxI32
        | Op::VMinmaxU32
        | Op::VCndmaskB16
        | Op::VMaxminF16
        | Op::VMinmaxF16
        | Op::VDivFixupF16
        | Op::VDot2F16F16
        | Op::VDot2Bf16Bf16
        | Op::VCvtPkU8F32
        | Op::VCubeidF32
        | Op::VCubescF32
        | Op::VCubetcF32
        | Op::VCubemaF32
        | Op::VMullitF32
        | Op::VFmaDx9ZeroF32
        | Op::VMinimum3F32
        | Op::VMaximum3F32
        | Op::VMinimum3F16
        | Op::VMaximum3F16
        | Op::VMinimummaximumF32
        | Op::VMaximumminimumF32
        | Op::VMinimummaximumF16
        | Op::VMaximumminimumF16
        | Op::VQsadPkU16U8
        | Op::VMqsadPkU16U8
        | Op::VMqsadU32U8
        | Op::VFmacF32 => 3,
        _ if (0x180..0x200).contains(&opc) => 1,
        _ => 2,
    };
    for k in nsrc..3 {
        i.src[k] = NONE;
    }
    match op {
        Op::VReadlaneB32 => i.dst = vdst,
        Op::VFmacF32 => i.src[2] = i.dst,
        Op::VNop | Op::VClrexcp | Op::VPipeflush => {
            i.dst = NONE;
            i.src = [NONE; 3];
        }
        Op::VReadfirstlaneB32 => i.dst = vdst,
        _ => {}
    }
    Ok(i)
}

fn vopd_op(opc: u32, y: bool) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0 => VFmacF32,
        1 => VFmaakF32,
        2 => VFmamkF32,
        3 => VMulF32,
        4 => VAddF32,
        5 => VSubF32,
        6 => VSubrevF32,
        8 => VMovB32,
        9 => VCndmaskB32,
        10 => VMaxF32,
        11 => VMinF32,
        7 => VMulDx9ZeroF32,
        12 => VDot2accF32F16,
        16 if y => VAddNcU32,
        17 if y => VLshlrevB32,
        18 if y => VAndB32,
        _ => return None,
    })
}

fn vopd(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let ox = bits(w, 22, 4);
    let oy = bits(w, 17, 5);
    let x = vopd_op(ox, false).ok_or_else(|| undec(w, "VOPD X", ox))?;
    let y = vopd_op(oy, true).ok_or_else(|| undec(w, "VOPD Y", oy))?;
    let mut i = Inst::new(Op::VDual, Enc::Vopd);
    i.len = 8;
    let dx = b16(w1, 24, 8);
    let dy = (b16(w1, 17, 7) << 1) | ((dx & 1) ^ 1);
    let half = |op: Op, dst: u16, s0: u16, s1: u16| DualHalf {
        op,
        dst: VGPR + dst,
        src: [s0, if op == Op::VMovB32 { NONE } else { VGPR + s1 }],
    };
    let hx = half(x, dx, b16(w, 0, 9), b16(w, 9, 8));
    let hy = half(y, dy, b16(w1, 0, 9), b16(w1, 9, 8));
    i.dst = hx.dst;
    i.src = [hx.src[0], hx.src[1], NONE];
    i.dual = Some([hx, hy]);
    // fmaak/fmamk read the literal.
    if matches!(x, Op::VFmaakF32 | Op::VFmamkF32) || matches!(y, Op::VFmaakF32 | Op::VFmamkF32) {
        i.src[2] = LIT;
    }
    Ok(i)
}

pub(super) fn ds(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = table! {opc, return Err(undec(w, "DS", opc));
        0 => DsAddU32, 1 => DsSubU32, 2 => DsRsubU32, 3 => DsIncU32, 4 => DsDecU32, 5 => DsMinI32, 6 => DsMaxI32, 7 => DsMinU32, 8 => DsMaxU32,
        9 => DsAndB32, 10 => DsOrB32, 11 => DsXorB32, 13 => DsStoreB32, 14 => DsStore2B32,
        15 => DsStore2St64B32, 16 => DsCmpswapB32, 20 => DsNop, 21 => DsAddF32, 30 => DsStoreB8, 31 => DsStoreB16, 32 => DsAddRtnU32,
        33 => DsSubRtnU32, 34 => DsRsubRtnU32, 35 => DsIncRtnU32, 36 => DsDecRtnU32,
        37 => DsMinRtnI32, 38 => DsMaxRtnI32, 39 => DsMinRtnU32, 40 => DsMaxRtnU32, 41 => DsAndRtnB32, 42 => DsOrRtnB32, 43 => DsXorRtnB32,
        45 => DsSwapRtnB32,
        48 => DsCmpswapRtnB32, 54 => DsLoadB32, 55 => DsLoad2B32, 56 => DsLoad2St64B32,
        57 => DsLoadI8, 58 => DsLoadU8, 59 => DsLoadI16, 60 => DsLoadU16, 77 => DsStoreB64,
        78 => DsStore2B64, 118 => DsLoadB64, 119 => DsLoad2B64, 121 => DsAddRtnF32, 222 => DsStoreB96,
        223 => DsStoreB128, 254 => DsLoadB96, 255 => DsLoadB128, 64 => DsAddU64, 65 => DsSubU64,
        69 => DsMinI64, 70 => DsMaxI64, 71 => DsMinU64, 72 => DsMaxU64, 73 => DsAndB64,
        74 => DsOrB64, 75 => DsXorB64, 96 => DsAddRtnU64, 97 => DsSubRtnU64, 101 => DsMinRtnI64,
        102 => DsMaxRtnI64, 103 => DsMinRtnU64, 104 => DsMaxRtnU64, 105 => DsAndRtnB64,
        106 => DsOrRtnB64, 107 => DsXorRtnB64, 53 => DsSwizzleB32, 178 => DsPermuteB32,
        179 => DsBpermuteB32, 12 => DsMskorB32, 44 => DsMskorRtnB32, 76 => DsMskorB64,
        108 => DsMskorRtnB64, 17 => DsCmpstoreF32, 49 => DsCmpstoreRtnF32, 80 => DsCmpstoreB64,
        112 => DsCmpstoreRtnB64, 81 => DsCmpstoreF64, 113 => DsCmpstoreRtnF64, 18 => DsMinF32,
        19 => DsMaxF32, 50 => DsMinRtnF32, 51 => DsMaxRtnF32, 82 => DsMinF64, 83 => DsMaxF64,
        114 => DsMinRtnF64, 115 => DsMaxRtnF64, 52 => DsWrapRtnB32, 66 => DsRsubU64,
        67 => DsIncU64, 68 => DsDecU64, 98 => DsRsubRtnU64, 99 => DsIncRtnU64,
        100 => DsDecRtnU64, 109 => DsSwapRtnB64, 152 => DsCondSubU32, 168 => DsCondSubRtnU32,
        153 => DsSubClampU32, 169 => DsSubClampRtnU32, 154 => DsPkAddF16, 170 => DsPkAddRtnF16,
        155 => DsPkAddBf16, 171 => DsPkAddRtnBf16, 162 => DsLoadU8D16, 163 => DsLoadU8D16Hi,
        164 => DsLoadI8D16, 165 => DsLoadI8D16Hi, 166 => DsLoadU16D16, 167 => DsLoadU16D16Hi,
        160 => DsStoreB8D16Hi, 161 => DsStoreB16D16Hi, 79 => DsStore2St64B64,
        120 => DsLoad2St64B64, 46 => DsStorexchg2RtnB32, 47 => DsStorexchg2St64RtnB32,
        110 => DsStorexchg2RtnB64, 111 => DsStorexchg2St64RtnB64, 176 => DsStoreAddtidB32,
        177 => DsLoadAddtidB32, 61 => DsConsume, 62 => DsAppend, 126 => DsCondxchg32RtnB64,
        173 => DsBvhStackRtnB32,
    };
    let mut i = Inst::new(op, Enc::Ds);
    i.len = 8;
    i.imm = i32::from(b16(w, 0, 8));
    // CAST: 8-bit field.
    i.sub = bits(w, 8, 8) as u8;
    if matches!(
        op,
        DsStore2B32
            | DsStore2St64B32
            | DsStore2B64
            | DsLoad2B32
            | DsLoad2St64B32
            | DsLoad2B64
            | DsStore2St64B64
            | DsLoad2St64B64
            | DsStorexchg2RtnB32
            | DsStorexchg2St64RtnB32
            | DsStorexchg2RtnB64
            | DsStorexchg2St64RtnB64
    ) {
        i.imm = i32::from(b16(w, 0, 8));
    } else {
        i.imm = i32::from(b16(w, 0, 16));
        i.sub = 0;
    }
    let (addr, d0, d1, vdst) = (b16(w1, 0, 8), b16(w1, 8, 8), b16(w1, 16, 8), b16(w1, 24, 8));
    let loads = op.is_ds_load();
    // Every returning DS op the table has is named *_rtn_*.
    let rtn = op.name().contains("_rtn_");
    let two_data = matches!(
        op,
        DsStore2B32
            | DsStore2St64B32
            | DsStore2B64
            | DsStore2St64B64
            | DsCmpswapRtnB32
            | DsCmpswapB32
            | DsMskorB32
            | DsMskorRtnB32
            | DsMskorB64
            | DsMskorRtnB64
            | DsCmpstoreF32
            | DsCmpstoreRtnF32
            | DsCmpstoreB64
            | DsCmpstoreRtnB64
            | DsCmpstoreF64
            | DsCmpstoreRtnF64
            | DsWrapRtnB32
            | DsStorexchg2RtnB32
            | DsStorexchg2St64RtnB32
            | DsStorexchg2RtnB64
            | DsStorexchg2St64RtnB64
            | DsBvhStackRtnB32
    );
    i.src = [
        VGPR + addr,
        if loads { NONE } else { VGPR + d0 },
        if two_data { VGPR + d1 } else { NONE },
    ];
    i.dst = if loads || rtn { VGPR + vdst } else { NONE };
    // ds_swizzle_b32 reads its source from the address field, with a 16-bit pattern.
    if op == DsSwizzleB32 {
        i.src[1] = NONE;
        i.dst = VGPR + vdst;
    }
    if matches!(op, DsPermuteB32 | DsBpermuteB32) {
        i.dst = VGPR + vdst;
    }
    if op == DsNop {
        i.src = [NONE; 3];
        i.dst = NONE;
    }
    // No address operand: M0 (and the lane) give it.
    match op {
        DsStoreAddtidB32 => i.src[0] = NONE,
        DsLoadAddtidB32 | DsAppend | DsConsume => {
            i.src = [NONE; 3];
            i.dst = VGPR + vdst;
        }
        _ => {}
    }
    Ok(i)
}

/// The FLAT-family and MUBUF opcodes gfx11 shares (16..=37 loads and stores, 51.. atomics;
/// gfx12 keeps them, `gfx12` selecting its renumbered atomics at 80..).
pub(super) fn vmem_op(opc: u32, gfx12: bool) -> Option<Op> {
    use Op::*;
    if gfx12 {
        match opc {
            80 => return Some(MAtomicCondSubU32),
            89 => return Some(MAtomicPkAddF16),
            90 => return Some(MAtomicPkAddBf16),
            _ => {}
        }
    }
    Some(table! {opc, return None;
        16 => MLoadU8, 17 => MLoadI8, 18 => MLoadU16, 19 => MLoadI16, 20 => MLoadB32,
        21 => MLoadB64, 22 => MLoadB96, 23 => MLoadB128, 24 => MStoreB8, 25 => MStoreB16,
        26 => MStoreB32, 27 => MStoreB64, 28 => MStoreB96, 29 => MStoreB128, 30 => MLoadD16U8,
        31 => MLoadD16I8, 32 => MLoadD16B16, 33 => MLoadD16HiU8, 34 => MLoadD16HiI8,
        35 => MLoadD16HiB16, 36 => MStoreD16HiB8, 37 => MStoreD16HiB16, 51 => MAtomicSwapB32,
        52 => MAtomicCmpswapB32, 53 => MAtomicAddU32, 54 => MAtomicSubU32, 55 => MAtomicCsubU32,
        56 => MAtomicMinI32, 57 => MAtomicMinU32, 58 => MAtomicMaxI32, 59 => MAtomicMaxU32,
        60 => MAtomicAndB32, 61 => MAtomicOrB32, 62 => MAtomicXorB32, 63 => MAtomicIncU32,
        64 => MAtomicDecU32, 65 => MAtomicSwapB64, 66 => MAtomicCmpswapB64, 67 => MAtomicAddU64,
        68 => MAtomicSubU64, 69 => MAtomicMinI64, 70 => MAtomicMinU64, 71 => MAtomicMaxI64,
        72 => MAtomicMaxU64, 73 => MAtomicAndB64, 74 => MAtomicOrB64, 75 => MAtomicXorB64,
        76 => MAtomicIncU64, 77 => MAtomicDecU64, 80 => MAtomicCmpswapF32, 81 => MAtomicMinF32,
        82 => MAtomicMaxF32, 86 => MAtomicAddF32,
    })
}

/// Whether a [`vmem_op`] loads into its destination.
pub(super) fn vmem_load(opc: u32) -> bool {
    opc < 24 || (30..36).contains(&opc)
}

pub(super) fn flat(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 18, 7);
    // CAST: 2-bit field.
    let seg = bits(w, 16, 2) as u8;
    let op = match opc {
        40 if seg == SEG_GLOBAL => Op::MLoadAddtidB32,
        41 if seg == SEG_GLOBAL => Op::MStoreAddtidB32,
        _ => vmem_op(opc, false).ok_or_else(|| undec(w, "FLAT", opc))?,
    };
    let mut i = Inst::new(op, Enc::Flat);
    i.len = 8;
    if seg == 3 {
        return Err(undec(w, "FLAT segment 3", opc));
    }
    let atomic = opc >= 51;
    if seg == SEG_SCRATCH && atomic {
        return Err(undec(w, "SCRATCH (atomics)", opc));
    }
    i.sub = seg;
    // Offset: 13-bit signed for global/scratch, 12-bit unsigned for flat.
    let off = bits(w, 0, 13);
    i.imm = if seg == SEG_FLAT {
        // CAST: 12 bits.
        (off & 0xfff) as i32
    } else {
        // CAST: the 13-bit field shifted to the top sign-extends.
        ((off << 19) as i32) >> 19
    };
    let sve = bits(w1, 23, 1) == 1;
    // CAST: flag bits.
    i.flags = (bits(w, 14, 1) as u8)
        | ((bits(w, 15, 1) as u8) << 1)
        | ((bits(w, 13, 1) as u8) << 2)
        | (u8::from(sve) << 3);
    let (addr, data, saddr, vdst) = (b16(w1, 0, 8), b16(w1, 8, 8), b16(w1, 16, 7), b16(w1, 24, 8));
    let load = vmem_load(opc) || op == Op::MLoadAddtidB32;
    let store = (24..30).contains(&opc) || (36..51).contains(&opc);
    let addtid = matches!(op, Op::MLoadAddtidB32 | Op::MStoreAddtidB32);
    let vaddr = if (seg == SEG_SCRATCH && !sve) || addtid {
        NONE
    } else {
        VGPR + addr
    };
    let saddr = if seg == SEG_FLAT || saddr == 124 {
        NONE
    } else {
        saddr
    };
    i.src = [vaddr, if load { NONE } else { VGPR + data }, saddr];
    i.dst = if load || (atomic && i.flags & 1 == 1) {
        VGPR + vdst
    } else {
        NONE
    };
    let _ = store;
    Ok(i)
}

fn mubuf(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    buf(w, w1, false)
}

/// MUBUF, or MTBUF (`mtbuf`: a 4-bit opcode at bit 15 and the 7-bit FORMAT at bit 19, kept
/// in `opsel` with bit 7 set).
fn buf(w: u32, w1: u32, mtbuf: bool) -> Result<Inst, Undecodable> {
    let opc = if mtbuf {
        bits(w, 15, 4)
    } else {
        bits(w, 18, 8)
    };
    let fmt = super::format_op(opc);
    let op = match (opc, fmt) {
        // buffer_load_lds_{u8,i8,u16,i16,b32,format_x}: into LDS at M0 (flags bit 7).
        (45, _) if !mtbuf => Op::MLoadU8,
        (46, _) if !mtbuf => Op::MLoadI8,
        (47, _) if !mtbuf => Op::MLoadU16,
        (48, _) if !mtbuf => Op::MLoadI16,
        (49, _) if !mtbuf => Op::MLoadB32,
        (50, _) if !mtbuf => Op::MLoadFormat,
        (43, _) if !mtbuf => Op::BufferGl0Inv,
        (44, _) if !mtbuf => Op::BufferGl1Inv,
        (_, Some((op, _))) => op,
        _ if mtbuf => return Err(undec(w, "MTBUF", opc)),
        _ => vmem_op(opc, false).ok_or_else(|| undec(w, "MUBUF", opc))?,
    };
    let mut i = Inst::new(op, Enc::Mubuf);
    i.len = 8;
    i.omod = fmt.map_or(0, |f| f.1);
    if mtbuf {
        // CAST: 7 bits.
        i.opsel = (0x80 | bits(w, 19, 7)) as u8;
    }
    if matches!(op, Op::BufferGl0Inv | Op::BufferGl1Inv) {
        return Ok(i);
    }
    // LDS (bit 16): the load goes to LDS at M0 instead of VGPRs (not interpreted).
    if !mtbuf && bits(w, 16, 1) == 1 {
        return Err(undec(w, "MUBUF with lds", opc));
    }
    let (offen, idxen) = (bits(w1, 22, 1) == 1, bits(w1, 23, 1) == 1);
    // CAST: flag bits (glc, slc, dlc, offen, idxen).
    i.flags = (bits(w, 14, 1) as u8)
        | ((bits(w, 12, 1) as u8) << 1)
        | ((bits(w, 13, 1) as u8) << 2)
        | (u8::from(offen) << 3)
        | (u8::from(idxen) << 4);
    i.imm = i32::from(b16(w, 0, 12));
    mubuf_operands(
        &mut i,
        [
            b16(w1, 0, 8),
            b16(w1, 8, 8),
            b16(w1, 16, 5) * 4,
            b16(w1, 24, 8),
        ],
        fmt.map_or(vmem_load(opc), |f| f.0 == Op::MLoadFormat),
        !mtbuf && opc >= 51,
    );
    if !mtbuf && (45..=50).contains(&opc) {
        i.flags |= 0x80;
        i.dst = NONE;
        i.src[1] = NONE;
    }
    Ok(i)
}

/// MUBUF operands from (vaddr, vdata, srsrc, soffset): src = [vaddr with offen or idxen,
/// vdata of stores and atomics, srsrc], soffset in `sdst`, vdata the destination of loads
/// and of atomics that return (`flags` bit 0).
pub(super) fn mubuf_operands(i: &mut Inst, f: [u16; 4], load: bool, atomic: bool) {
    let [vaddr, vdata, srsrc, soff] = f;
    i.src = [
        if i.flags & 0x18 != 0 {
            VGPR + vaddr
        } else {
            NONE
        },
        if load { NONE } else { VGPR + vdata },
        srsrc,
    ];
    i.sdst = soff;
    i.dst = if load || (atomic && i.flags & 1 == 1) {
        VGPR + vdata
    } else {
        NONE
    };
}

/// Whether `op` has a 32-bit VOP1/VOP2 encoding (LLVM then names the VOP3 form `_e64`).
#[must_use]
pub fn has_short_form(op: Op) -> bool {
    (0..64).any(|k| vop2_op(k) == Some(op)) || (0..256).any(|k| vop1_op(k) == Some(op))
}
