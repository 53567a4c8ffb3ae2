//! gfx9 (CDNA2/CDNA3) encodings: opcode tables and field layouts.

use super::gfx11;
use super::*;

fn sop2_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SAddU32, 1 => SSubU32, 2 => SAddI32, 3 => SSubI32, 4 => SAddcU32, 5 => SSubbU32,
        6 => SMinI32, 7 => SMinU32, 8 => SMaxI32, 9 => SMaxU32, 10 => SCselectB32,
        11 => SCselectB64, 12 => SAndB32, 13 => SAndB64, 14 => SOrB32, 15 => SOrB64, 16 => SXorB32,
        17 => SXorB64, 18 => SAndNot1B32, 19 => SAndNot1B64, 20 => SOrNot1B32, 21 => SOrNot1B64,
        22 => SNandB32, 23 => SNandB64, 24 => SNorB32, 25 => SNorB64, 26 => SXnorB32,
        27 => SXnorB64, 28 => SLshlB32, 29 => SLshlB64, 30 => SLshrB32, 31 => SLshrB64,
        32 => SAshrI32, 33 => SAshrI64, 34 => SBfmB32, 35 => SBfmB64, 36 => SMulI32, 37 => SBfeU32,
        38 => SBfeI32, 39 => SBfeU64, 40 => SBfeI64, 42 => SAbsdiffI32, 44 => SMulHiU32,
        45 => SMulHiI32, 46 => SLshl1AddU32, 47 => SLshl2AddU32, 48 => SLshl3AddU32,
        49 => SLshl4AddU32, 50 => SPackLlB32B16, 51 => SPackLhB32B16, 52 => SPackHhB32B16,
        41 => SCbranchGFork, 43 => SRfeRestoreB64,
    })
}

fn sop1_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SMovB32, 1 => SMovB64, 2 => SCmovB32, 3 => SCmovB64, 4 => SNotB32, 5 => SNotB64,
        8 => SBrevB32, 10 => SBcnt0I32B32, 12 => SBcnt1I32B32, 13 => SBcnt1I32B64, 16 => SFf1I32B32,
        17 => SFf1I32B64, 18 => SClzI32U32, 22 => SSextI32I8, 23 => SSextI32I16, 24 => SBitset0B32,
        26 => SBitset1B32, 28 => SGetpcB64, 29 => SSetpcB64, 30 => SSwappcB64,
        32 => SAndSaveexecB64, 33 => SOrSaveexecB64, 34 => SXorSaveexecB64,
        35 => SAndNot1SaveexecB64, 48 => SAbsI32, 6 => SWqmB32, 7 => SWqmB64, 9 => SBrevB64,
        11 => SBcnt0I32B64, 14 => SFf0I32B32, 15 => SFf0I32B64, 19 => SClzI32U64, 20 => SClsI32,
        21 => SClsI32I64, 25 => SBitset0B64, 27 => SBitset1B64, 36 => SOrNot1SaveexecB64,
        37 => SNandSaveexecB64, 38 => SNorSaveexecB64, 39 => SXnorSaveexecB64,
        40 => SQuadmaskB32, 41 => SQuadmaskB64, 51 => SAndNot0SaveexecB64,
        52 => SOrNot0SaveexecB64, 53 => SAndNot0WrexecB64, 54 => SAndNot1WrexecB64,
        55 => SBitreplicateB64B32, 42 => SMovrelsB32, 43 => SMovrelsB64, 44 => SMovreldB32,
        45 => SMovreldB64, 46 => SCbranchJoin, 31 => SRfeB64, 50 => SSetGprIdxIdx,
    })
}

fn sopk_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SMovkI32, 1 => SCmovkI32, 2 => SCmpkEqI32, 3 => SCmpkLgI32, 4 => SCmpkGtI32,
        5 => SCmpkGeI32, 6 => SCmpkLtI32, 7 => SCmpkLeI32, 8 => SCmpkEqU32, 9 => SCmpkLgU32,
        10 => SCmpkGtU32, 11 => SCmpkGeU32, 12 => SCmpkLtU32, 13 => SCmpkLeU32, 14 => SAddkI32,
        15 => SMulkI32, 16 => SCbranchIFork, 17 => SGetregB32, 18 => SSetregB32,
        20 => SSetregImm32B32, 21 => SCallB64,
    })
}

fn sopc_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SCmpEqI32, 1 => SCmpLgI32, 2 => SCmpGtI32, 3 => SCmpGeI32, 4 => SCmpLtI32,
        5 => SCmpLeI32, 6 => SCmpEqU32, 7 => SCmpLgU32, 8 => SCmpGtU32, 9 => SCmpGeU32,
        10 => SCmpLtU32, 11 => SCmpLeU32, 12 => SBitcmp0B32, 13 => SBitcmp1B32, 18 => SCmpEqU64,
        19 => SCmpLgU64, 14 => SBitcmp0B64, 15 => SBitcmp1B64, 16 => SSetvskip, 17 => SSetGprIdxOn,
    })
}

fn sopp_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => SNop, 1 => SEndpgm, 2 => SBranch, 4 => SCbranchScc0, 5 => SCbranchScc1,
        6 => SCbranchVccz, 7 => SCbranchVccnz, 8 => SCbranchExecz, 9 => SCbranchExecnz,
        10 => SBarrier, 12 => SWaitcnt, 14 => SSleep, 15 => SSetprio, 16 => SSendmsg, 18 => STrap,
        19 => SIcacheInv, 31 => SCodeEnd, 3 => SWakeup, 11 => SSetkill, 13 => SSethalt,
        17 => SSendmsghalt, 20 => SIncperflevel, 21 => SDecperflevel, 22 => STtracedata,
        23 => SCbranchCdbgsys, 24 => SCbranchCdbguser, 25 => SCbranchCdbgsysOrUser,
        26 => SCbranchCdbgsysAndUser, 27 => SEndpgmSaved, 28 => SSetGprIdxOff,
        29 => SSetGprIdxMode, 30 => SEndpgmOrderedPsDone,
    })
}

/// gfx9 (gfx90a, gfx942): GCN encodings, wave64. Operations shared with gfx11 map onto the same
/// [`Op`]s (gfx9's v_add_co_u32 is gfx11's VOP3SD form, v_addc_co_u32 its v_add_co_ci_u32).
pub(super) fn decode(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let i = if w0 >> 31 == 0 && bits(w0, 0, 9) == 0xf9 {
        sdwa(w0, w[1])?
    } else if w0 >> 31 == 0 {
        if w0 >> 25 == 0x3f {
            let mut i = vop1(w0, vop1_op)?;
            if i.op == Op::VAccvgprMovB32 {
                // Both operands are AGPRs.
                if i.src[0] < VGPR {
                    return Err(undec(w0, "VOP1 (v_accvgpr_mov_b32 of a non-AGPR)", 0x52));
                }
                i.dst = agpr(i.dst);
                i.src[0] = agpr(i.src[0]);
            }
            i
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
            0b110000 => smem(w0, w[1])?,
            0b110100 if w0 >> 23 == 0x1a7 && matches!(bits(w0, 16, 7), 0x58 | 0x59) => {
                accvgpr(w0, w[1])?
            }
            0b110100
                if w0 >> 23 == 0x1a7
                    && crate::isa::mai::find(Isa::Gfx9, bits(w0, 16, 7)).is_some() =>
            {
                mfma(w0, w[1])?
            }
            0b110100 if w0 >> 23 == 0x1a7 => vop3p(w0, w[1], |opc| match opc {
                0x30 => Some(Op::VPkFmaF32),
                0x31 => Some(Op::VPkMulF32),
                0x32 => Some(Op::VPkAddF32),
                0x33 => Some(Op::VPkMovB32),
                0x23 => Some(Op::VDot2F32F16),
                0x26 => Some(Op::VDot2I32I16),
                0x27 => Some(Op::VDot2U32U16),
                0x28 => Some(Op::VDot4I32I8),
                0x29 => Some(Op::VDot4U32U8),
                0x2a => Some(Op::VDot8I32I4),
                0x2b => Some(Op::VDot8U32U4),
                o => vop3p_op(o),
            })?,
            0b110100 => vop3(w0, w[1])?,
            0b110110 => {
                // gfx9's DS opcodes match gfx11's, but for ds_add_rtn_f32 (53 there, 121 here).
                let raw = bits(w0, 17, 8);
                let opc = match raw {
                    53 => 121,
                    // The d16 loads and stores (gfx11: 160..=167).
                    84..=91 => raw + 76,
                    // gfx942's packed adds (gfx12: 154, 155, 170, 171).
                    23 => 154,
                    24 => 155,
                    183 => 170,
                    184 => 171,
                    // ds_add_f64 / ds_add_rtn_f64: decoded as the u64 adds' shape.
                    92 => 64,
                    124 => 96,
                    o @ (152..=155 | 160..=171) => return Err(undec(w0, "DS", o)),
                    // ds_swizzle/permute/bpermute_b32: gfx11 numbers them 53, 178, 179.
                    61 => 53,
                    62 => 178,
                    63 => 179,
                    // ds_consume/append, ds_write/read_addtid_b32 (gfx11: 61, 62, 176, 177).
                    189 => 61,
                    190 => 62,
                    29 => 176,
                    182 => 177,
                    o @ (121 | 178 | 179 | 176 | 177) => return Err(undec(w0, "DS", o)),
                    o => o,
                };
                // gfx90a's ACC (bit 25): data and destination are AGPRs.
                let acc = bits(w0, 25, 1) == 1;
                let w0 = w0 & !(1 << 25);
                let mut i = gfx11::ds(((w0 & !(0xff << 17)) | (opc << 18)) & !(1 << 17), w[1])?;
                match raw {
                    92 => i.op = Op::DsAddF64,
                    124 => i.op = Op::DsAddRtnF64,
                    _ => {}
                }
                if acc {
                    i.dst = agpr(i.dst);
                    i.src[1] = agpr(i.src[1]);
                    i.src[2] = agpr(i.src[2]);
                }
                i
            }
            0b110111 => flat(w0, w[1])?,
            0b111000 => mubuf(w0, w[1])?,
            0b111010 => mtbuf(w0, w[1])?,
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

/// SDWA (the src0 field 0xf9): a VOP1, VOP2 or VOPC operation on selected bytes or words of
/// its sources (and, but for VOPC, of its destination); the second word has the selects.
fn sdwa(w0: u32, w1: u32) -> Result<Inst, Undecodable> {
    let mut i = if w0 >> 25 == 0x3f {
        vop1(w0, vop1_op)?
    } else if w0 >> 25 == 0x3e {
        vopc(w0)?
    } else {
        vop2(w0)?
    };
    if i.src.contains(&LIT) || matches!(i.op, Op::VAccvgprMovB32 | Op::VReadfirstlaneB32) {
        return Err(undec(w0, "SDWA", bits(w0, 25, 6)));
    }
    i.len = 8;
    let s0 = b16(w1, 0, 8);
    i.src[0] = if bits(w1, 23, 1) == 1 { s0 } else { VGPR + s0 };
    // src1 names an SGPR (or constant) with S1.
    if i.src[1] != NONE && bits(w1, 31, 1) == 1 {
        i.src[1] -= VGPR;
    }
    // CAST: single bits: neg in bits 0..1, abs in bits 4..5 (the VOP3 layout).
    i.mods = (bits(w1, 20, 1)
        | (bits(w1, 28, 1) << 1)
        | (bits(w1, 21, 1) << 4)
        | (bits(w1, 29, 1) << 5)) as u8;
    if i.enc == Enc::Vopc {
        i.sdst = if bits(w1, 15, 1) == 1 {
            b16(w1, 8, 7)
        } else {
            106
        };
    } else {
        i.clamp = bits(w1, 13, 1) == 1;
        // CAST: 2-bit field.
        i.omod = bits(w1, 14, 2) as u8;
    }
    i.sdwa = Some(w1);
    Ok(i)
}

/// Whether `op` has a 32-bit VOP1/VOP2 encoding on gfx9 (LLVM then names its VOP3 form `_e64`).
pub(super) fn has_short_form(op: Op) -> bool {
    (0..64).any(|k| vop2_op(k) == Some(op)) || (0..256).any(|k| vop1_op(k) == Some(op))
}

/// The AGPR of a VGPR operand code (gfx90a's ACC bits); other codes unchanged.
fn agpr(code: u16) -> u16 {
    if (VGPR..AGPR).contains(&code) {
        code - VGPR + AGPR
    } else {
        code
    }
}

/// `v_accvgpr_read_b32` (VOP3P 0x58: an AGPR into a VGPR) and `v_accvgpr_write_b32` (0x59: a
/// VGPR, SGPR or inline constant into an AGPR). Executed as VOP3 moves.
fn accvgpr(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let read = opc == 0x58;
    let op = if read {
        Op::VAccvgprReadB32
    } else {
        Op::VAccvgprWriteB32
    };
    let mut i = Inst::new(op, Enc::Vop3);
    i.len = 8;
    let (vdst, src) = (b16(w, 0, 8), b16(w1, 0, 9));
    if read {
        if src < VGPR {
            return Err(undec(w, "VOP3P (v_accvgpr_read_b32 of a non-AGPR)", opc));
        }
        i.dst = VGPR + vdst;
        i.src[0] = agpr(src);
    } else {
        i.dst = AGPR + vdst;
        i.src[0] = src;
    }
    Ok(i)
}

/// VOP3P-MAI (MFMA, SMFMAC): vdst and src2 in AGPRs when ACC_CD (bit 15), src0/src1 in
/// AGPRs by the ACC bits of the second word. `imm` holds the [`crate::isa::mai::TABLE`] row
/// (bits 0..8), CBSZ (8..11), ABID (11..15) and BLGP (15..18).
fn mfma(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let Some(row) = crate::isa::mai::find(Isa::Gfx9, opc) else {
        return Err(undec(w, "VOP3P-MAI (no such MFMA)", opc));
    };
    let mut i = Inst::new(Op::VMfma, Enc::Vop3p);
    i.len = 8;
    let acc_cd = bits(w, 15, 1) == 1;
    let in_acc = |code: u16, acc: bool| if acc { agpr(code) } else { code };
    i.dst = in_acc(VGPR + b16(w, 0, 8), acc_cd);
    i.src = [
        in_acc(b16(w1, 0, 9), bits(w1, 27, 1) == 1),
        in_acc(b16(w1, 9, 9), bits(w1, 28, 1) == 1),
        in_acc(b16(w1, 18, 9), acc_cd),
    ];
    // CAST: the row (< 256) and three small fields.
    i.imm = (row as u32 | (bits(w, 8, 3) << 8) | (bits(w, 11, 4) << 11) | (bits(w1, 29, 3) << 15))
        as i32;
    Ok(i)
}

fn smem(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = table! {opc, return Err(undec(w, "SMEM", opc));
        0 => SLoadB32, 1 => SLoadB64, 2 => SLoadB128, 3 => SLoadB256, 4 => SLoadB512,
        5 => SLoadB32, 6 => SLoadB64, 7 => SLoadB128, 21 => SStoreB32, 22 => SStoreB64,
        23 => SStoreB128, 8 => SBufferLoadB32, 9 => SBufferLoadB64, 10 => SBufferLoadB128, 11 => SBufferLoadB256,
        12 => SBufferLoadB512, 16 => SStoreB32, 17 => SStoreB64, 18 => SStoreB128,
        24 => SBufferStoreB32, 25 => SBufferStoreB64, 26 => SBufferStoreB128,
        32 => SDcacheInv, 33 => SDcacheWb, 34 => SDcacheInvVol, 35 => SDcacheWbVol,
        36 => SMemtime, 37 => SMemrealtime, 38 => SAtcProbe, 39 => SAtcProbeBuffer,
        40 => SDcacheDiscard, 41 => SDcacheDiscardX2,
        64..=76 | 96..=108 => SBufferAtomic, 128..=140 | 160..=172 => SAtomic,
    };
    let mut i = Inst::new(op, Enc::Smem);
    i.len = 8;
    let sdata = b16(w, 6, 7);
    i.dst = sdata;
    let imm = bits(w, 17, 1) == 1;
    let soe = bits(w, 14, 1) == 1;
    // Offset: a 21-bit signed immediate, or an SGPR in the low bits when IMM is clear.
    let soff = if soe {
        b16(w1, 25, 7)
    } else if !imm {
        b16(w1, 0, 8)
    } else {
        NONE
    };
    // CAST: the 21-bit field shifted to the top sign-extends it.
    i.imm = if imm { ((w1 << 11) as i32) >> 11 } else { 0 };
    i.src = [b16(w, 0, 6) * 2, soff, NONE];
    i.flags = u8::from(bits(w, 16, 1) == 1);
    // s_scratch_load/store_dword*: `sub` bit 6 (the SGPR offset counts 64-byte units).
    if matches!(opc, 5..=7 | 21..=23) {
        i.sub = 0x40;
    }
    match op {
        SDcacheInv | SDcacheWb | SDcacheInvVol | SDcacheWbVol => {
            i.dst = NONE;
            i.src = [NONE; 3];
        }
        SMemtime | SMemrealtime => i.src = [NONE; 3],
        SDcacheDiscard | SDcacheDiscardX2 => i.dst = NONE,
        // The probe's SDATA field is its flags (printed as a number).
        SAtcProbe | SAtcProbeBuffer => {
            // CAST: 7-bit field.
            i.sub = sdata as u8;
            i.dst = NONE;
        }
        SStoreB32 | SStoreB64 | SStoreB128 | SBufferStoreB32 | SBufferStoreB64
        | SBufferStoreB128 => {
            i.src[2] = sdata;
            i.dst = NONE;
        }
        // The data in SDATA; with GLC the old value returns there.
        SAtomic | SBufferAtomic => {
            // CAST: the operation in 6 bits (x2 at +32).
            i.sub = (opc & 0x3f) as u8;
            i.src[2] = sdata;
            if i.flags & 1 == 0 {
                i.dst = NONE;
            }
        }
        _ => {}
    }
    Ok(i)
}

fn vop1_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0x4b => VExpLegacyF32, 0x4c => VLogLegacyF32, 84 => VCvtF32Fp8, 85 => VCvtF32Bf8,
        86 => VCvtPkF32Fp8, 87 => VCvtPkF32Bf8,
        0 => VNop, 1 => VMovB32, 2 => VReadfirstlaneB32, 3 => VCvtI32F64, 4 => VCvtF64I32,
        5 => VCvtF32I32, 6 => VCvtF32U32, 7 => VCvtU32F32, 8 => VCvtI32F32, 10 => VCvtF16F32,
        11 => VCvtF32F16, 15 => VCvtF32F64, 16 => VCvtF64F32, 17 => VCvtF32Ubyte0,
        18 => VCvtF32Ubyte1, 19 => VCvtF32Ubyte2, 20 => VCvtF32Ubyte3, 21 => VCvtU32F64,
        22 => VCvtF64U32, 23 => VTruncF64, 24 => VCeilF64, 25 => VRndneF64, 26 => VFloorF64,
        27 => VFractF32, 28 => VTruncF32, 29 => VCeilF32, 30 => VRndneF32, 31 => VFloorF32,
        32 => VExpF32, 33 => VLogF32, 34 => VRcpF32, 35 => VRcpIflagF32, 36 => VRsqF32,
        37 => VRcpF64, 38 => VRsqF64, 39 => VSqrtF32, 40 => VSqrtF64, 41 => VSinF32, 42 => VCosF32,
        43 => VNotB32, 44 => VBfrevB32, 45 => VFfbhU32, 46 => VFfblB32, 48 => VFrexpExpI32F64,
        49 => VFrexpMantF64, 50 => VFractF64,
        51 => VFrexpExpI32F32, 52 => VFrexpMantF32, 56 => VMovB64, 82 => VAccvgprMovB32,
        57 => VCvtF16U16, 58 => VCvtF16I16, 59 => VCvtU16F16, 60 => VCvtI16F16,
        12 => VCvtNearestI32F32, 13 => VCvtFloorI32F32, 14 => VCvtOffF32I4, 47 => VClsI32,
        53 => VClrexcp, 61 => VRcpF16, 62 => VSqrtF16, 63 => VRsqF16, 64 => VLogF16,
        65 => VExpF16, 66 => VFrexpMantF16, 67 => VFrexpExpI16F16, 68 => VFloorF16,
        69 => VCeilF16, 70 => VTruncF16, 71 => VRndneF16, 72 => VFractF16, 73 => VSinF16,
        74 => VCosF16, 77 => VCvtNormI16F16, 78 => VCvtNormU16F16, 79 => VSatPkU8I16,
        81 => VSwapB32,
    })
}

fn vop2_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => VCndmaskB32, 1 => VAddF32, 2 => VSubF32, 3 => VSubrevF32, 5 => VMulF32,
        6 => VMulI32I24, 7 => VMulHiI32I24, 8 => VMulU32U24, 9 => VMulHiU32U24, 10 => VMinF32,
        11 => VMaxF32, 12 => VMinI32, 13 => VMaxI32, 14 => VMinU32, 15 => VMaxU32,
        16 => VLshrrevB32, 17 => VAshrrevI32, 18 => VLshlrevB32, 19 => VAndB32, 20 => VOrB32,
        21 => VXorB32, 22 => VMacF32, 4 => VFmacF64, 25 => VAddCoU32, 26 => VSubCoU32,
        27 => VSubrevCoU32, 28 => VAddCoCiU32, 29 => VSubCoCiU32, 30 => VSubrevCoCiU32,
        52 => VAddNcU32, 53 => VSubNcU32, 54 => VSubrevNcU32, 59 => VFmacF32, 61 => VXnorB32,
        23 => VMadmkF32, 24 => VMadakF32, 31 => VAddF16, 32 => VSubF16, 33 => VSubrevF16,
        34 => VMulF16, 35 => VMacF16, 36 => VMadmkF16, 37 => VMadakF16, 38 => VAddU16,
        39 => VSubU16, 40 => VSubrevU16, 41 => VMulLoU16, 42 => VLshlrevB16, 43 => VLshrrevB16,
        44 => VAshrrevI16, 45 => VMaxF16, 46 => VMinF16, 47 => VMaxU16, 48 => VMaxI16,
        49 => VMinU16, 50 => VMinI16, 51 => VLdexpF16, 60 => VPkFmacF16, 55 => VDot2accF32F16,
        56 => VDot2cI32I16, 57 => VDot4cI32I8, 58 => VDot8cI32I4,
    })
}

fn vopc_op(opc: u32) -> Option<(Op, u8, bool)> {
    use Op::*;
    // CAST: masked to 4 bits.
    let c = (opc & 0xf) as u8;
    Some(match opc {
        0x10 => (VCmpClassF32, 0, false),
        0x11 => (VCmpClassF32, 0, true),
        0x12 => (VCmpClassF64, 0, false),
        0x13 => (VCmpClassF64, 0, true),
        0x14 => (VCmpClassF16, 0, false),
        0x15 => (VCmpClassF16, 0, true),
        0xa0..=0xa7 => (VCmpI16, c & 7, false),
        0xa8..=0xaf => (VCmpU16, c & 7, false),
        0xb0..=0xb7 => (VCmpI16, c & 7, true),
        0xb8..=0xbf => (VCmpU16, c & 7, true),
        0x20..=0x2f => (VCmpF16, c, false),
        0x30..=0x3f => (VCmpF16, c, true),
        0x40..=0x4f => (VCmpF32, c, false),
        0x50..=0x5f => (VCmpF32, c, true),
        0x60..=0x6f => (VCmpF64, c, false),
        0x70..=0x7f => (VCmpF64, c, true),
        0xc0..=0xc7 => (VCmpI32, c & 7, false),
        0xc8..=0xcf => (VCmpU32, c & 7, false),
        0xd0..=0xd7 => (VCmpI32, c & 7, true),
        0xd8..=0xdf => (VCmpU32, c & 7, true),
        0xe0..=0xe7 => (VCmpI64, c & 7, false),
        0xe8..=0xef => (VCmpU64, c & 7, false),
        0xf0..=0xf7 => (VCmpI64, c & 7, true),
        0xf8..=0xff => (VCmpU64, c & 7, true),
        _ => return None,
    })
}

fn vop2(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 25, 6);
    let op = vop2_op(opc).ok_or_else(|| undec(w, "VOP2", opc))?;
    let mut i = Inst::new(op, Enc::Vop2);
    i.dst = VGPR + b16(w, 17, 8);
    i.src = [b16(w, 0, 9), VGPR + b16(w, 9, 8), NONE];
    match op {
        Op::VAddCoCiU32 | Op::VSubCoCiU32 | Op::VSubrevCoCiU32 => {
            i.sdst = 106;
            i.src[2] = 106;
        }
        Op::VAddCoU32 | Op::VSubCoU32 | Op::VSubrevCoU32 => i.sdst = 106,
        Op::VCndmaskB32 => i.src[2] = 106,
        // dst = src0 * K + src1; dst = src0 * src1 + K (K the literal).
        Op::VMadmkF32 | Op::VMadmkF16 => {
            i.src[2] = i.src[1];
            i.src[1] = LIT;
        }
        Op::VMadakF32 | Op::VMadakF16 => i.src[2] = LIT,
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
    // gfx9's v_cmpx also writes VCC.
    i.sdst = 106;
    i.src = [b16(w, 0, 9), VGPR + b16(w, 9, 8), NONE];
    Ok(i)
}

fn vop3_only(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0x1c4 => VCubeidF32, 0x1c5 => VCubescF32, 0x1c6 => VCubetcF32, 0x1c7 => VCubemaF32,
        0x1dd => VCvtPkU8F32, 0x294 => VCvtPkNormI16F32, 0x295 => VCvtPkNormU16F32,
        0x299 => VCvtPkNormI16F16, 0x29a => VCvtPkNormU16F16, 0x296 => VCvtPkRtzF16F32,
        0x207 => VDivFixupF16, 0x1ef => VDivFixupLegacyF16, 0x1ee => VFmaLegacyF16,
        0x203 => VMadF16, 0x1ea => VMadLegacyF16, 0x1c0 => VMadLegacyF32, 0x2a1 => VMulDx9ZeroF32,
        0x1e5 => VQsadPkU16U8, 0x1e6 => VMqsadPkU16U8, 0x1e7 => VMqsadU32U8,
        0x292 => VTrigPreopF64, 0x1f0 => VCvtPkaccumU8F32, 0x2a2 => VCvtPkFp8F32,
        0x2a3 => VCvtPkBf8F32, 0x2a4 => VCvtSrFp8F32, 0x2a5 => VCvtSrBf8F32,
        0x1de => VDivFixupF32, 0x1df => VDivFixupF64, 0x1e0 => VDivScaleF32, 0x1e1 => VDivScaleF64,
        0x1e2 => VDivFmasF32, 0x1e3 => VDivFmasF64, 0x206 => VFmaF16, 0x1c2 => VMadI32I24,
        0x1c3 => VMadU32U24, 0x1c8 => VBfeU32, 0x1c9 => VBfeI32, 0x1ca => VBfiB32, 0x1cb => VFmaF32,
        0x1cc => VFmaF64, 0x1ce => VAlignbitB32, 0x1cf => VAlignbyteB32, 0x1d0 => VMin3F32,
        0x1d1 => VMin3I32, 0x1d2 => VMin3U32, 0x1d3 => VMax3F32, 0x1d4 => VMax3I32,
        0x1d5 => VMax3U32, 0x1d6 => VMed3F32, 0x1d7 => VMed3I32, 0x1d8 => VMed3U32,
        0x1e8 => VMadU64U32, 0x1e9 => VMadI64I32, 0x1ed => VPermB32, 0x1f3 => VXadU32,
        0x1fd => VLshlAddU32, 0x1fe => VAddLshlU32, 0x1ff => VAdd3U32, 0x200 => VLshlOrB32,
        0x201 => VAndOrB32, 0x202 => VOr3B32, 0x208 => VLshlAddU64, 0x280 => VAddF64,
        0x281 => VMulF64, 0x282 => VMinF64, 0x283 => VMaxF64, 0x284 => VLdexpF64,
        0x285 => VMulLoU32, 0x286 => VMulHiU32, 0x287 => VMulHiI32, 0x288 => VLdexpF32,
        0x289 => VReadlaneB32, 0x28a => VWritelaneB32, 0x28b => VBcntU32B32,
        0x2a0 => VPackB32F16, 0x28c => VMbcntLoU32B32, 0x1c1 => VMadF32, 0x28d => VMbcntHiU32B32, 0x28f => VLshlrevB64,
        0x290 => VLshrrevB64, 0x291 => VAshrrevI64,
        0x1f4 => VMin3F16, 0x1f7 => VMax3F16, 0x1fa => VMed3F16,
        0x1f5 => VMin3I16, 0x1f6 => VMin3U16, 0x1f8 => VMax3I16, 0x1f9 => VMax3U16,
        0x1fb => VMed3I16, 0x1fc => VMed3U16, 0x204 => VMadU16, 0x205 => VMadI16,
        0x1eb => VMadLegacyU16, 0x1ec => VMadLegacyI16, 0x1f1 => VMadU32U16, 0x1f2 => VMadI32I16,
        0x1d9 => VSadU8, 0x1da => VSadHiU8, 0x1db => VSadU16, 0x1dc => VSadU32, 0x1e4 => VMsadU8,
        0x1cd => VLerpU8, 0x297 => VCvtPkU16U32, 0x298 => VCvtPkI16I32, 0x293 => VBfmB32,
        0x29c => VAddNcI32, 0x29d => VSubNcI32, 0x29e => VAddNcI16, 0x29f => VSubNcI16,
    })
}

fn vop3(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 10);
    let mut cmp = None;
    let op = match opc {
        0..=0xff => {
            let (op, c, x) = vopc_op(opc).ok_or_else(|| undec(w, "VOP3 (VOPC)", opc))?;
            cmp = Some((c, x));
            op
        }
        0x100..=0x13f => vop2_op(opc - 0x100).ok_or_else(|| undec(w, "VOP3 (VOP2)", opc))?,
        // v_accvgpr_mov_b32 has no VOP3 form the interpreter knows (its operands are AGPRs).
        0x140..=0x1bf => vop1_op(opc - 0x140)
            .filter(|o| *o != Op::VAccvgprMovB32)
            .ok_or_else(|| undec(w, "VOP3 (VOP1)", opc))?,
        _ => vop3_only(opc).ok_or_else(|| undec(w, "VOP3", opc))?,
    };
    if matches!(
        op,
        Op::VMadmkF32 | Op::VMadakF32 | Op::VMadmkF16 | Op::VMadakF16
    ) {
        return Err(undec(w, "VOP3 (VOP2)", opc));
    }
    // Reuse the gfx11 field layout (identical from here on), then fix the differences.
    let g11_opc = match (cmp, op) {
        (Some(_), _) => 0x04c, // any valid gfx11 compare; op and condition are set below
        _ => 0x255,            // v_add3_u32 as a 3-source placeholder
    };
    let mut i = gfx11::vop3((w & !(0x3ff << 16)) | (g11_opc << 16), w1)?;
    i.op = op;
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
    let vdst = b16(w, 0, 8);
    i.enc = if sd { Enc::Vop3sd } else { Enc::Vop3 };
    i.src = [b16(w1, 0, 9), b16(w1, 9, 9), b16(w1, 18, 9)];
    i.dst = VGPR + vdst;
    i.sdst = NONE;
    if sd {
        i.sdst = b16(w, 8, 7);
        // CAST: 3-bit field.
        i.mods = bits(w1, 29, 3) as u8;
    }
    if let Some((c, x)) = cmp {
        i.sub = c;
        i.cmpx = x;
        i.dst = NONE;
        i.sdst = vdst;
        i.src[2] = NONE;
        return Ok(i);
    }
    let nsrc = match op {
        Op::VCndmaskB32
        | Op::VAddCoCiU32
        | Op::VSubCoCiU32
        | Op::VSubrevCoCiU32
        | Op::VMacF32
        | Op::VMacF16
        | Op::VFmacF32 => 3,
        _ if (0x140..0x1c0).contains(&opc) => 1,
        _ if (0x100..0x140).contains(&opc) => 2,
        _ if vop3_only(opc).is_some_and(|o| {
            matches!(
                o,
                Op::VAddF64
                    | Op::VMulF64
                    | Op::VMinF64
                    | Op::VMaxF64
                    | Op::VLdexpF64
                    | Op::VMulLoU32
                    | Op::VMulHiU32
                    | Op::VMulHiI32
                    | Op::VLdexpF32
                    | Op::VReadlaneB32
                    | Op::VWritelaneB32
                    | Op::VBcntU32B32
                    | Op::VMbcntLoU32B32
                    | Op::VMbcntHiU32B32
                    | Op::VLshlrevB64
                    | Op::VLshrrevB64
                    | Op::VAshrrevI64
                    | Op::VPackB32F16
                    | Op::VCvtPkU16U32
                    | Op::VCvtPkI16I32
                    | Op::VBfmB32
                    | Op::VAddNcI32
                    | Op::VSubNcI32
                    | Op::VAddNcI16
                    | Op::VSubNcI16
                    | Op::VCvtPkNormI16F32
                    | Op::VCvtPkNormU16F32
                    | Op::VCvtPkNormI16F16
                    | Op::VCvtPkNormU16F16
                    | Op::VCvtPkRtzF16F32
                    | Op::VMulDx9ZeroF32
                    | Op::VTrigPreopF64
                    | Op::VCvtPkaccumU8F32
                    | Op::VCvtPkFp8F32
                    | Op::VCvtPkBf8F32
                    | Op::VCvtSrFp8F32
                    | Op::VCvtSrBf8F32
            )
        }) =>
        {
            2
        }
        _ => 3,
    };
    for k in nsrc..3 {
        i.src[k] = NONE;
    }
    match op {
        Op::VNop | Op::VClrexcp => {
            i.dst = NONE;
            i.src = [NONE; 3];
        }
        Op::VReadlaneB32 | Op::VReadfirstlaneB32 => i.dst = vdst,
        Op::VMacF32 | Op::VMacF16 | Op::VFmacF32 | Op::VFmacF64 => i.src[2] = i.dst,
        // gfx942's 8-bit float conversions select bytes and words with op_sel.
        Op::VCvtF32Fp8
        | Op::VCvtF32Bf8
        | Op::VCvtPkF32Fp8
        | Op::VCvtPkF32Bf8
        | Op::VCvtPkFp8F32
        | Op::VCvtPkBf8F32
        | Op::VCvtSrFp8F32
        | Op::VCvtSrBf8F32 => {
            // CAST: 4-bit field.
            i.opsel = bits(w, 11, 4) as u8;
        }
        _ => {}
    }
    Ok(i)
}

/// The FLAT-family and MUBUF opcodes gfx9 shares (16..=37 loads and stores, 64.. atomics).
fn vmem_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        16 => MLoadU8, 17 => MLoadI8, 18 => MLoadU16, 19 => MLoadI16, 20 => MLoadB32,
        21 => MLoadB64, 22 => MLoadB96, 23 => MLoadB128, 24 => MStoreB8, 25 => MStoreD16HiB8,
        26 => MStoreB16, 27 => MStoreD16HiB16, 28 => MStoreB32, 29 => MStoreB64, 30 => MStoreB96,
        31 => MStoreB128, 32 => MLoadD16U8, 33 => MLoadD16HiU8, 34 => MLoadD16I8,
        35 => MLoadD16HiI8, 36 => MLoadD16B16, 37 => MLoadD16HiB16, 64 => MAtomicSwapB32,
        65 => MAtomicCmpswapB32, 66 => MAtomicAddU32, 67 => MAtomicSubU32, 68 => MAtomicMinI32,
        69 => MAtomicMinU32, 70 => MAtomicMaxI32, 71 => MAtomicMaxU32, 72 => MAtomicAndB32,
        73 => MAtomicOrB32, 74 => MAtomicXorB32, 75 => MAtomicIncU32, 76 => MAtomicDecU32,
        77 => MAtomicAddF32, 78 => MAtomicPkAddF16, 79 => MAtomicAddF64, 80 => MAtomicMinF64,
        81 => MAtomicMaxF64, 82 => MAtomicPkAddBf16, 96 => MAtomicSwapB64,
        97 => MAtomicCmpswapB64, 98 => MAtomicAddU64, 99 => MAtomicSubU64, 100 => MAtomicMinI64,
        101 => MAtomicMinU64, 102 => MAtomicMaxI64, 103 => MAtomicMaxU64, 104 => MAtomicAndB64,
        105 => MAtomicOrB64, 106 => MAtomicXorB64, 107 => MAtomicIncU64, 108 => MAtomicDecU64,
    })
}

/// Whether a [`vmem_op`] loads into its destination (opcodes 16..=23 and 32..=37).
fn vmem_load(opc: u32) -> bool {
    (16..24).contains(&opc) || (32..38).contains(&opc)
}

fn flat(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 18, 7);
    // gfx940's global/scratch_load_lds_{ubyte,sbyte,ushort,sshort,dword} (38..=42): the
    // load goes to LDS at M0 (flags bit 7), not to VGPRs.
    let lds = (38..=42).contains(&opc) && bits(w, 14, 2) != 0;
    let op = if lds {
        vmem_op(opc - 22).ok_or_else(|| undec(w, "FLAT", opc))?
    } else {
        vmem_op(opc).ok_or_else(|| undec(w, "FLAT", opc))?
    };
    let mut i = Inst::new(op, Enc::Flat);
    i.len = 8;
    // CAST: 2-bit field.
    let seg = bits(w, 14, 2) as u8;
    if seg == 3 {
        return Err(undec(w, "FLAT segment 3", opc));
    }
    let atomic = opc >= 64;
    if seg == SEG_SCRATCH && atomic {
        return Err(undec(w, "SCRATCH (atomics)", opc));
    }
    i.sub = seg;
    let off = bits(w, 0, 13);
    i.imm = if seg == SEG_FLAT {
        // CAST: 12 bits.
        (off & 0xfff) as i32
    } else {
        // CAST: the 13-bit field shifted to the top sign-extends.
        ((off << 19) as i32) >> 19
    };
    // Scratch: the address VGPR is used when SVE (bit 13, "lds" elsewhere) is set.
    let sve = seg == SEG_SCRATCH && bits(w, 13, 1) == 1;
    // CAST: flag bits (glc/sc0, slc/nt, gfx940's sc1 in bit 25 kept in the dlc slot).
    i.flags = (bits(w, 16, 1) as u8)
        | ((bits(w, 17, 1) as u8) << 1)
        | ((bits(w, 25, 1) as u8) << 2)
        | (u8::from(sve) << 3);
    let (addr, data, saddr, vdst) = (b16(w1, 0, 8), b16(w1, 8, 8), b16(w1, 16, 7), b16(w1, 24, 8));
    let load = vmem_load(opc);
    let vaddr = if seg == SEG_SCRATCH && !sve {
        NONE
    } else {
        VGPR + addr
    };
    let saddr = if seg == SEG_FLAT || saddr == 0x7f {
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
    // gfx90a's ACC (bit 55): data and destination are AGPRs.
    if bits(w1, 23, 1) == 1 {
        i.src[1] = agpr(i.src[1]);
        i.dst = agpr(i.dst);
    }
    if lds {
        i.flags |= 0x80;
        i.dst = NONE;
        i.src[1] = NONE;
    }
    Ok(i)
}

fn mubuf(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 7);
    let fmt = super::format_op(opc);
    let op = match (opc, fmt) {
        (40, _) => BufferWbl2,
        (41, _) => BufferInvl2,
        // buffer_store_lds_dword: a dword of LDS (M0-addressed) to memory (flags bit 7).
        (61, _) => MStoreB32,
        (62, _) => BufferWbinvl1,
        (63, _) => BufferWbinvl1Vol,
        (_, Some((op, _))) => op,
        _ => vmem_op(opc).ok_or_else(|| undec(w, "MUBUF", opc))?,
    };
    let mut i = Inst::new(op, Enc::Mubuf);
    i.omod = fmt.map_or(0, |f| f.1);
    i.len = 8;
    if matches!(
        op,
        BufferWbl2 | BufferInvl2 | BufferWbinvl1 | BufferWbinvl1Vol
    ) {
        return Ok(i);
    }
    let atomic = opc >= 64;
    // LDS (bit 16): the load goes to LDS at M0 instead of VGPRs (interpreted for
    // buffer_store_lds_dword only).
    if bits(w, 16, 1) == 1 && opc != 61 {
        return Err(undec(w, "MUBUF with lds", opc));
    }
    i.imm = i32::from(b16(w, 0, 12));
    let offen = bits(w, 12, 1) == 1;
    let idxen = bits(w, 13, 1) == 1;
    // CAST: flag bits (glc/sc0, slc/nt, gfx940's sc1 in bit 15 kept in the dlc slot).
    i.flags = (bits(w, 14, 1) as u8)
        | ((bits(w, 17, 1) as u8) << 1)
        | ((bits(w, 15, 1) as u8) << 2)
        | (u8::from(offen) << 3)
        | (u8::from(idxen) << 4);
    let load = fmt.map_or(vmem_load(opc), |f| f.0 == MLoadFormat);
    buf_operands(&mut i, w1, load, atomic);
    if opc == 61 {
        i.flags |= 0x80;
        i.src[1] = NONE;
    }
    Ok(i)
}

/// MTBUF: MUBUF's fields with a 4-bit opcode (bits 15..19), the format (DFMT bits 19..23,
/// NFMT bits 23..26, kept in `opsel` as DFMT | NFMT << 4 | 0x80) and SLC in the second word.
fn mtbuf(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 15, 4);
    let (op, omod) = super::format_op(opc).ok_or_else(|| undec(w, "MTBUF", opc))?;
    let mut i = Inst::new(op, Enc::Mubuf);
    i.len = 8;
    i.omod = omod;
    // CAST: 7 bits.
    i.opsel = (0x80 | bits(w, 19, 4) | (bits(w, 23, 3) << 4)) as u8;
    i.imm = i32::from(b16(w, 0, 12));
    let (offen, idxen) = (bits(w, 12, 1) == 1, bits(w, 13, 1) == 1);
    // CAST: flag bits (glc, slc).
    i.flags = (bits(w, 14, 1) as u8)
        | ((bits(w1, 22, 1) as u8) << 1)
        | (u8::from(offen) << 3)
        | (u8::from(idxen) << 4);
    buf_operands(&mut i, w1, op == Op::MLoadFormat, false);
    Ok(i)
}

/// MUBUF/MTBUF operands from the second word: src = [vaddr with offen or idxen, vdata of
/// stores, srsrc], soffset in `sdst`; vdata the destination of loads and returning atomics;
/// gfx90a's ACC (bit 55) puts vdata in the AGPRs.
fn buf_operands(i: &mut Inst, w1: u32, load: bool, atomic: bool) {
    let (offen, idxen) = (i.flags & 8 != 0, i.flags & 16 != 0);
    let (vaddr, vdata, srsrc, soff) = (
        b16(w1, 0, 8),
        b16(w1, 8, 8),
        b16(w1, 16, 5) * 4,
        b16(w1, 24, 8),
    );
    // src: vaddr (index with idxen, then offset with offen), vdata (stores), srsrc;
    // soffset in sdst.
    i.src = [
        if offen || idxen { VGPR + vaddr } else { NONE },
        if load { NONE } else { VGPR + vdata },
        srsrc,
    ];
    i.sdst = soff;
    // Atomics return the old value into vdata with glc.
    i.dst = if load || (atomic && i.flags & 1 == 1) {
        VGPR + vdata
    } else {
        NONE
    };
    // gfx90a's ACC (bit 55): vdata is an AGPR.
    if bits(w1, 23, 1) == 1 {
        i.src[1] = agpr(i.src[1]);
        i.dst = agpr(i.dst);
    }
}
