//! Decoding machine words into [`Inst`]: the compact form the interpreter executes. Each
//! family has its encoding tables; the operations ([`Op`]) and their semantics are shared.

use super::Isa;
use super::ops::Op;

/// The encoding an instruction came in (what its fields mean).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Enc {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    Vop3,
    Vop3sd,
    Vopd,
    Ds,
    Flat,
    Mubuf,
}

/// Operand code of the literal constant.
pub const LIT: u16 = 255;
/// Operand codes from here on name VGPRs (`256 + n`).
pub const VGPR: u16 = 256;
/// No operand.
pub const NONE: u16 = u16::MAX;

/// Memory segment of a FLAT-family instruction (`Inst::sub`).
pub const SEG_FLAT: u8 = 0;
/// Scratch segment.
pub const SEG_SCRATCH: u8 = 1;
/// Global segment.
pub const SEG_GLOBAL: u8 = 2;

/// One half of a VOPD pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualHalf {
    /// The operation (a VOP2/VOP1 op).
    pub op: Op,
    /// Destination VGPR operand code.
    pub dst: u16,
    /// Sources (src0 any operand, src1 a VGPR).
    pub src: [u16; 2],
}

/// A decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    /// What it does.
    pub op: Op,
    /// How it was encoded.
    pub enc: Enc,
    /// Length in bytes (4, 8 or 12).
    pub len: u8,
    /// Destination operand code (SGPR codes below 256, VGPRs from [`VGPR`]); [`NONE`].
    pub dst: u16,
    /// Second (scalar) destination: carry-out, compare mask; [`NONE`].
    pub sdst: u16,
    /// Source operand codes; [`NONE`] when absent. Memory: vaddr, vdata, saddr/sbase.
    pub src: [u16; 3],
    /// The literal constant, when an operand is [`LIT`].
    pub lit: u32,
    /// Signed immediate: SOPP/SOPK simm16, memory offset.
    pub imm: i32,
    /// Sub-operation: compare condition, memory segment, DS offset1.
    pub sub: u8,
    /// VOPC compares that write EXEC (v_cmpx).
    pub cmpx: bool,
    /// VOP3 input modifiers: neg (bits 0..3), abs (bits 4..7).
    pub mods: u8,
    /// VOP3 clamp.
    pub clamp: bool,
    /// VOP3 output modifier (0 none, 1 *2, 2 *4, 3 /2).
    pub omod: u8,
    /// Memory flags: bit 0 glc/sc0 (return for atomics), bit 1 slc, bit 2 dlc, bit 3 sve.
    pub flags: u8,
    /// VOPD: the X and Y halves.
    pub dual: Option<[DualHalf; 2]>,
    /// The raw words (for messages).
    pub words: [u32; 3],
}

/// Why words could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undecodable {
    /// The first word.
    pub word: u32,
    /// The encoding's opcode name when the encoding is known (`"VOP2 opcode 63"`).
    pub what: &'static str,
    /// Opcode within the encoding.
    pub opcode: u32,
}

impl Inst {
    fn new(op: Op, enc: Enc) -> Self {
        Self {
            op,
            enc,
            len: 4,
            dst: NONE,
            sdst: NONE,
            src: [NONE; 3],
            lit: 0,
            imm: 0,
            sub: 0,
            cmpx: false,
            mods: 0,
            clamp: false,
            omod: 0,
            flags: 0,
            dual: None,
            words: [0; 3],
        }
    }

    /// Whether any operand is the literal.
    fn uses_lit(&self) -> bool {
        self.src.contains(&LIT)
            || self
                .dual
                .is_some_and(|d| d[0].src[0] == LIT || d[1].src[0] == LIT)
    }
}

fn bits(w: u32, lo: u32, n: u32) -> u32 {
    (w >> lo) & ((1u32 << n) - 1)
}

fn b16(w: u32, lo: u32, n: u32) -> u16 {
    // CAST: n <= 16 bits.
    bits(w, lo, n) as u16
}

/// Decodes the instruction at the start of `words` (up to 3 words available; missing words
/// read as 0, which the caller avoids by providing them). Returns the instruction, or why not.
///
/// # Errors
/// Words that are no instruction of `isa` the interpreter knows.
pub fn decode(isa: Isa, words: &[u32; 3]) -> Result<Inst, Undecodable> {
    match isa {
        Isa::Gfx11 => decode_gfx11(words),
        Isa::Gfx12 => decode_gfx12(words),
        Isa::Gfx9 => decode_gfx9(words),
    }
}

fn undec(word: u32, what: &'static str, opcode: u32) -> Undecodable {
    Undecodable { word, what, opcode }
}

fn decode_gfx11(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let mut i = if w0 >> 31 == 0 {
        if w0 >> 25 == 0x3f {
            vop1(w0)?
        } else if w0 >> 25 == 0x3e {
            vopc(w0)?
        } else {
            vop2(w0)?
        }
    } else if w0 >> 30 == 0b10 && w0 >> 28 != 0b1011 {
        sop2(w0)?
    } else if w0 >> 28 == 0b1011 {
        match bits(w0, 23, 5) {
            0x1d => sop1(w0)?,
            0x1e => sopc(w0)?,
            0x1f => sopp(w0)?,
            _ => sopk(w0)?,
        }
    } else {
        match w0 >> 26 {
            0b111101 => smem(w0, w[1])?,
            0b110101 => vop3(w0, w[1])?,
            0b110010 => vopd(w0, w[1])?,
            0b110110 => ds(w0, w[1])?,
            0b110111 => flat(w0, w[1])?,
            0b111000 => mubuf(w0, w[1])?,
            _ => {
                return Err(undec(
                    w0,
                    "an encoding (unknown or not interpreted)",
                    w0 >> 26,
                ));
            }
        }
    };
    if i.uses_lit() {
        let at = usize::from(i.len / 4);
        i.lit = w.get(at).copied().unwrap_or(0);
        i.len += 4;
    }
    let n = usize::from(i.len / 4);
    for (k, slot) in i.words.iter_mut().enumerate() {
        *slot = if k < n { w[k] } else { 0 };
    }
    Ok(i)
}

fn sop2(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 23, 7);
    let op = match opc {
        0 => SAddU32,
        1 => SSubU32,
        2 => SAddI32,
        3 => SSubI32,
        4 => SAddcU32,
        5 => SSubbU32,
        6 => SAbsdiffI32,
        8 => SLshlB32,
        9 => SLshlB64,
        10 => SLshrB32,
        11 => SLshrB64,
        12 => SAshrI32,
        13 => SAshrI64,
        14 => SLshl1AddU32,
        15 => SLshl2AddU32,
        16 => SLshl3AddU32,
        17 => SLshl4AddU32,
        18 => SMinI32,
        19 => SMinU32,
        20 => SMaxI32,
        21 => SMaxU32,
        22 => SAndB32,
        23 => SAndB64,
        24 => SOrB32,
        25 => SOrB64,
        26 => SXorB32,
        27 => SXorB64,
        28 => SNandB32,
        29 => SNandB64,
        30 => SNorB32,
        31 => SNorB64,
        32 => SXnorB32,
        33 => SXnorB64,
        34 => SAndNot1B32,
        35 => SAndNot1B64,
        36 => SOrNot1B32,
        37 => SOrNot1B64,
        38 => SBfeU32,
        39 => SBfeI32,
        40 => SBfeU64,
        41 => SBfeI64,
        42 => SBfmB32,
        43 => SBfmB64,
        44 => SMulI32,
        45 => SMulHiU32,
        46 => SMulHiI32,
        48 => SCselectB32,
        49 => SCselectB64,
        50 => SPackLlB32B16,
        51 => SPackLhB32B16,
        52 => SPackHhB32B16,
        _ => return Err(undec(w, "SOP2", opc)),
    };
    let mut i = Inst::new(op, Enc::Sop2);
    i.dst = b16(w, 16, 7);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    Ok(i)
}

fn sop1(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 8, 8);
    let op = match opc {
        0 => SMovB32,
        1 => SMovB64,
        2 => SCmovB32,
        3 => SCmovB64,
        4 => SBrevB32,
        8 => SCtzI32B32,
        9 => SCtzI32B64,
        10 => SClzI32U32,
        11 => SClzI32U64,
        14 => SSextI32I8,
        15 => SSextI32I16,
        16 => SBitset0B32,
        18 => SBitset1B32,
        21 => SAbsI32,
        22 => SBcnt0I32B32,
        24 => SBcnt1I32B32,
        25 => SBcnt1I32B64,
        30 => SNotB32,
        31 => SNotB64,
        32 => SAndSaveexecB32,
        33 => SAndSaveexecB64,
        34 => SOrSaveexecB32,
        35 => SOrSaveexecB64,
        36 => SXorSaveexecB32,
        37 => SXorSaveexecB64,
        44 => SAndNot0SaveexecB32,
        45 => SAndNot0SaveexecB64,
        48 => SAndNot1SaveexecB32,
        49 => SAndNot1SaveexecB64,
        71 => SGetpcB64,
        72 => SSetpcB64,
        73 => SSwappcB64,
        _ => return Err(undec(w, "SOP1", opc)),
    };
    let mut i = Inst::new(op, Enc::Sop1);
    i.dst = b16(w, 16, 7);
    i.src[0] = b16(w, 0, 8);
    if op == SGetpcB64 {
        i.src[0] = NONE;
    }
    if op == SSetpcB64 {
        i.dst = NONE;
    }
    Ok(i)
}

fn sopk(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 23, 5);
    let op = match opc {
        0 => SMovkI32,
        1 => SVersion,
        2 => SCmovkI32,
        3 => SCmpkEqI32,
        4 => SCmpkLgI32,
        5 => SCmpkGtI32,
        6 => SCmpkGeI32,
        7 => SCmpkLtI32,
        8 => SCmpkLeI32,
        9 => SCmpkEqU32,
        10 => SCmpkLgU32,
        11 => SCmpkGtU32,
        12 => SCmpkGeU32,
        13 => SCmpkLtU32,
        14 => SCmpkLeU32,
        15 => SAddkI32,
        16 => SMulkI32,
        24 => SWaitcntVscnt,
        25 => SWaitcntVmcnt,
        26 => SWaitcntExpcnt,
        27 => SWaitcntLgkmcnt,
        _ => return Err(undec(w, "SOPK", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopk);
    i.dst = b16(w, 16, 7);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    Ok(i)
}

fn sopc(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 16, 7);
    let op = match opc {
        0 => SCmpEqI32,
        1 => SCmpLgI32,
        2 => SCmpGtI32,
        3 => SCmpGeI32,
        4 => SCmpLtI32,
        5 => SCmpLeI32,
        6 => SCmpEqU32,
        7 => SCmpLgU32,
        8 => SCmpGtU32,
        9 => SCmpGeU32,
        10 => SCmpLtU32,
        11 => SCmpLeU32,
        12 => SBitcmp0B32,
        13 => SBitcmp1B32,
        16 => SCmpEqU64,
        17 => SCmpLgU64,
        _ => return Err(undec(w, "SOPC", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopc);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    Ok(i)
}

fn sopp(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 16, 7);
    let op = match opc {
        0 => SNop,
        3 => SSleep,
        5 => SClause,
        7 => SDelayAlu,
        8 => SWaitcntDepctr,
        9 => SWaitcnt,
        16 => STrap,
        31 => SCodeEnd,
        32 => SBranch,
        33 => SCbranchScc0,
        34 => SCbranchScc1,
        35 => SCbranchVccz,
        36 => SCbranchVccnz,
        37 => SCbranchExecz,
        38 => SCbranchExecnz,
        48 => SEndpgm,
        53 => SSetprio,
        54 => SSendmsg,
        60 => SIcacheInv,
        61 => SBarrier,
        _ => return Err(undec(w, "SOPP", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopp);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    Ok(i)
}

fn smem(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = match opc {
        0 => SLoadB32,
        1 => SLoadB64,
        2 => SLoadB128,
        3 => SLoadB256,
        4 => SLoadB512,
        32 => SGl1Inv,
        33 => SDcacheInv,
        36 => SMemtime,
        37 => SMemrealtime,
        _ => return Err(undec(w, "SMEM", opc)),
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
    Ok(i)
}

fn vop1_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0 => VNop,
        1 => VMovB32,
        2 => VReadfirstlaneB32,
        3 => VCvtI32F64,
        4 => VCvtF64I32,
        5 => VCvtF32I32,
        6 => VCvtF32U32,
        7 => VCvtU32F32,
        8 => VCvtI32F32,
        10 => VCvtF16F32,
        11 => VCvtF32F16,
        15 => VCvtF32F64,
        16 => VCvtF64F32,
        17 => VCvtF32Ubyte0,
        18 => VCvtF32Ubyte1,
        19 => VCvtF32Ubyte2,
        20 => VCvtF32Ubyte3,
        21 => VCvtU32F64,
        22 => VCvtF64U32,
        23 => VTruncF64,
        24 => VCeilF64,
        25 => VRndneF64,
        26 => VFloorF64,
        32 => VFractF32,
        33 => VTruncF32,
        34 => VCeilF32,
        35 => VRndneF32,
        36 => VFloorF32,
        37 => VExpF32,
        39 => VLogF32,
        42 => VRcpF32,
        43 => VRcpIflagF32,
        46 => VRsqF32,
        47 => VRcpF64,
        49 => VRsqF64,
        51 => VSqrtF32,
        52 => VSqrtF64,
        53 => VSinF32,
        54 => VCosF32,
        55 => VNotB32,
        56 => VBfrevB32,
        57 => VClzI32U32,
        58 => VCtzI32B32,
        62 => VFractF64,
        63 => VFrexpExpI32F32,
        64 => VFrexpMantF32,
        _ => return None,
    })
}

fn vop2_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        1 => VCndmaskB32,
        3 => VAddF32,
        4 => VSubF32,
        5 => VSubrevF32,
        8 => VMulF32,
        9 => VMulI32I24,
        10 => VMulHiI32I24,
        11 => VMulU32U24,
        12 => VMulHiU32U24,
        15 => VMinF32,
        16 => VMaxF32,
        17 => VMinI32,
        18 => VMaxI32,
        19 => VMinU32,
        20 => VMaxU32,
        24 => VLshlrevB32,
        25 => VLshrrevB32,
        26 => VAshrrevI32,
        27 => VAndB32,
        28 => VOrB32,
        29 => VXorB32,
        30 => VXnorB32,
        32 => VAddCoCiU32,
        33 => VSubCoCiU32,
        34 => VSubrevCoCiU32,
        37 => VAddNcU32,
        38 => VSubNcU32,
        39 => VSubrevNcU32,
        43 => VFmacF32,
        44 => VFmamkF32,
        45 => VFmaakF32,
        47 => VCvtPkRtzF16F32,
        50 => VAddF16,
        51 => VSubF16,
        53 => VMulF16,
        54 => VFmacF16,
        55 => VFmamkF16,
        56 => VFmaakF16,
        57 => VMaxF16,
        58 => VMinF16,
        _ => return None,
    })
}

/// VOPC opcode → (op, condition, cmpx).
fn vopc_op(opc: u32) -> Option<(Op, u8, bool)> {
    use Op::*;
    let x = opc & 0x80 != 0;
    let o = opc & 0x7f;
    // CAST: masked to 4 bits.
    let c = (o & 0xf) as u8;
    let op = match o {
        0x00..=0x0f => VCmpF16,
        0x10..=0x1f => VCmpF32,
        0x20..=0x2f => VCmpF64,
        0x31..=0x36 => VCmpI16,
        0x39..=0x3e => VCmpU16,
        0x40..=0x47 => VCmpI32,
        0x48..=0x4f => VCmpU32,
        0x50..=0x57 => VCmpI64,
        0x58..=0x5f => VCmpU64,
        0x7e => VCmpClassF32,
        0x7f => VCmpClassF64,
        _ => return None,
    };
    // Integer conditions: f lt eq le gt ne ge t (0..7, u32 at +8).
    let c = match op {
        VCmpI16 | VCmpU16 | VCmpI32 | VCmpU32 | VCmpI64 | VCmpU64 => c & 7,
        _ => c,
    };
    Some((op, c, x))
}

fn vop1(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 9, 8);
    let op = vop1_op(opc).ok_or_else(|| undec(w, "VOP1", opc))?;
    let mut i = Inst::new(op, Enc::Vop1);
    i.dst = VGPR + b16(w, 17, 8);
    i.src[0] = b16(w, 0, 9);
    if op == Op::VReadfirstlaneB32 {
        i.dst = b16(w, 17, 8);
    }
    if op == Op::VNop {
        i.dst = NONE;
        i.src[0] = NONE;
    }
    Ok(i)
}

fn vop2(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 25, 6);
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
    Some(match opc {
        0x227 => VDivFixupF32,
        0x228 => VDivFixupF64,
        0x237 => VDivFmasF32,
        0x238 => VDivFmasF64,
        0x2fc => VDivScaleF32,
        0x2fd => VDivScaleF64,
        0x248 => VFmaF16,
        0x20a => VMadI32I24,
        0x20b => VMadU32U24,
        0x210 => VBfeU32,
        0x211 => VBfeI32,
        0x212 => VBfiB32,
        0x213 => VFmaF32,
        0x214 => VFmaF64,
        0x216 => VAlignbitB32,
        0x217 => VAlignbyteB32,
        0x219 => VMin3F32,
        0x21a => VMin3I32,
        0x21b => VMin3U32,
        0x21c => VMax3F32,
        0x21d => VMax3I32,
        0x21e => VMax3U32,
        0x21f => VMed3F32,
        0x220 => VMed3I32,
        0x221 => VMed3U32,
        0x240 => VXor3B32,
        0x244 => VPermB32,
        0x245 => VXadU32,
        0x246 => VLshlAddU32,
        0x247 => VAddLshlU32,
        0x255 => VAdd3U32,
        0x256 => VLshlOrB32,
        0x257 => VAndOrB32,
        0x258 => VOr3B32,
        0x2fe => VMadU64U32,
        0x2ff => VMadI64I32,
        0x300 => VAddCoU32,
        0x301 => VSubCoU32,
        0x302 => VSubrevCoU32,
        0x31c => VLdexpF32,
        0x31d => VBfmB32,
        0x31e => VBcntU32B32,
        0x31f => VMbcntLoU32B32,
        0x320 => VMbcntHiU32B32,
        0x325 => VSubNcI32,
        0x326 => VAddNcI32,
        0x327 => VAddF64,
        0x328 => VMulF64,
        0x329 => VMinF64,
        0x32a => VMaxF64,
        0x32b => VLdexpF64,
        0x32c => VMulLoU32,
        0x32d => VMulHiU32,
        0x32e => VMulHiI32,
        0x33c => VLshlrevB64,
        0x33d => VLshrrevB64,
        0x33e => VAshrrevI64,
        0x360 => VReadlaneB32,
        0x361 => VWritelaneB32,
        _ => return None,
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
        0x180..=0x1ff => vop1_op(opc - 0x180).ok_or_else(|| undec(w, "VOP3 (VOP1)", opc))?,
        _ => vop3_only(opc).ok_or_else(|| undec(w, "VOP3", opc))?,
    };
    // VOP2 forms without a VOP3 encoding of their own.
    if matches!(
        op,
        Op::VFmamkF32 | Op::VFmaakF32 | Op::VFmamkF16 | Op::VFmaakF16
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
        Op::VNop => {
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

fn ds(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = match opc {
        0 => DsAddU32,
        1 => DsSubU32,
        5 => DsMinI32,
        6 => DsMaxI32,
        7 => DsMinU32,
        8 => DsMaxU32,
        9 => DsAndB32,
        10 => DsOrB32,
        11 => DsXorB32,
        13 => DsStoreB32,
        14 => DsStore2B32,
        15 => DsStore2St64B32,
        20 => DsNop,
        30 => DsStoreB8,
        31 => DsStoreB16,
        32 => DsAddRtnU32,
        33 => DsSubRtnU32,
        39 => DsMinRtnU32,
        40 => DsMaxRtnU32,
        45 => DsSwapRtnB32,
        48 => DsCmpswapRtnB32,
        54 => DsLoadB32,
        55 => DsLoad2B32,
        56 => DsLoad2St64B32,
        57 => DsLoadI8,
        58 => DsLoadU8,
        59 => DsLoadI16,
        60 => DsLoadU16,
        77 => DsStoreB64,
        78 => DsStore2B64,
        118 => DsLoadB64,
        119 => DsLoad2B64,
        222 => DsStoreB96,
        223 => DsStoreB128,
        254 => DsLoadB96,
        255 => DsLoadB128,
        _ => return Err(undec(w, "DS", opc)),
    };
    let mut i = Inst::new(op, Enc::Ds);
    i.len = 8;
    i.imm = i32::from(b16(w, 0, 8));
    // CAST: 8-bit field.
    i.sub = bits(w, 8, 8) as u8;
    if matches!(
        op,
        DsStore2B32 | DsStore2St64B32 | DsStore2B64 | DsLoad2B32 | DsLoad2St64B32 | DsLoad2B64
    ) {
        i.imm = i32::from(b16(w, 0, 8));
    } else {
        i.imm = i32::from(b16(w, 0, 16));
        i.sub = 0;
    }
    let (addr, d0, d1, vdst) = (b16(w1, 0, 8), b16(w1, 8, 8), b16(w1, 16, 8), b16(w1, 24, 8));
    let loads = matches!(
        op,
        DsLoadB32
            | DsLoad2B32
            | DsLoad2St64B32
            | DsLoadI8
            | DsLoadU8
            | DsLoadI16
            | DsLoadU16
            | DsLoadB64
            | DsLoad2B64
            | DsLoadB96
            | DsLoadB128
    );
    let rtn = matches!(
        op,
        DsAddRtnU32 | DsSubRtnU32 | DsMinRtnU32 | DsMaxRtnU32 | DsSwapRtnB32 | DsCmpswapRtnB32
    );
    let two_data = matches!(
        op,
        DsStore2B32 | DsStore2St64B32 | DsStore2B64 | DsCmpswapRtnB32
    );
    i.src = [
        VGPR + addr,
        if loads { NONE } else { VGPR + d0 },
        if two_data { VGPR + d1 } else { NONE },
    ];
    i.dst = if loads || rtn { VGPR + vdst } else { NONE };
    if op == DsNop {
        i.src = [NONE; 3];
        i.dst = NONE;
    }
    Ok(i)
}

fn flat(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 7);
    let op = match opc {
        16 => MLoadU8,
        17 => MLoadI8,
        18 => MLoadU16,
        19 => MLoadI16,
        20 => MLoadB32,
        21 => MLoadB64,
        22 => MLoadB96,
        23 => MLoadB128,
        24 => MStoreB8,
        25 => MStoreB16,
        26 => MStoreB32,
        27 => MStoreB64,
        28 => MStoreB96,
        29 => MStoreB128,
        51 => MAtomicSwapB32,
        52 => MAtomicCmpswapB32,
        53 => MAtomicAddU32,
        54 => MAtomicSubU32,
        56 => MAtomicMinI32,
        57 => MAtomicMinU32,
        58 => MAtomicMaxI32,
        59 => MAtomicMaxU32,
        60 => MAtomicAndB32,
        61 => MAtomicOrB32,
        62 => MAtomicXorB32,
        63 => MAtomicIncU32,
        64 => MAtomicDecU32,
        65 => MAtomicSwapB64,
        66 => MAtomicCmpswapB64,
        67 => MAtomicAddU64,
        86 => MAtomicAddF32,
        _ => return Err(undec(w, "FLAT", opc)),
    };
    let mut i = Inst::new(op, Enc::Flat);
    i.len = 8;
    // CAST: 2-bit field.
    let seg = bits(w, 16, 2) as u8;
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
    let load = opc < 24;
    let store = (24..51).contains(&opc);
    let vaddr = if seg == SEG_SCRATCH && !sve {
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

fn mubuf(w: u32, _w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 18, 8);
    let op = match opc {
        43 => Op::BufferGl0Inv,
        44 => Op::BufferGl1Inv,
        _ => return Err(undec(w, "MUBUF", opc)),
    };
    let mut i = Inst::new(op, Enc::Mubuf);
    i.len = 8;
    Ok(i)
}

/// Whether `op` has a 32-bit VOP1/VOP2 encoding (LLVM then names the VOP3 form `_e64`).
#[must_use]
pub fn has_short_form(op: Op) -> bool {
    (0..64).any(|k| vop2_op(k) == Some(op)) || (0..256).any(|k| vop1_op(k) == Some(op))
}

/// gfx12 (RDNA4): the gfx11 tables plus what RDNA4 changed: SMEM field layout, the 96-bit
/// VFLAT/VGLOBAL/VSCRATCH encodings, the split s_wait_* counters and barriers, VOP2
/// v_lshlrev_b64.
fn decode_gfx12(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let mut i = if (0xEC..=0xEE).contains(&(w0 >> 24)) {
        vflat12(w0, w[1], w[2])?
    } else if w0 >> 26 == 0b111101 {
        smem12(w0, w[1])?
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
            9 | 61 => return Err(undec(w0, "SOPP (gfx11 only)", opc)),
            _ => None,
        };
        match op {
            Some(op) => {
                let mut i = Inst::new(op, Enc::Sopp);
                // CAST: simm16 sign-extends.
                i.imm = i32::from(w0 as u16 as i16);
                i
            }
            None => sopp(w0)?,
        }
    } else if w0 >> 23 == 0x17D && bits(w0, 8, 8) == 78 {
        let mut i = Inst::new(Op::SBarrierSignal, Enc::Sop1);
        i.src[0] = b16(w0, 0, 8);
        i
    } else if w0 >> 31 == 0
        && w0 >> 25 != 0x3f
        && w0 >> 25 != 0x3e
        && matches!(bits(w0, 25, 6), 2 | 6 | 13 | 14 | 31)
    {
        let op = match bits(w0, 25, 6) {
            2 => Op::VAddF64,
            6 => Op::VMulF64,
            13 => Op::VMinF64,
            14 => Op::VMaxF64,
            _ => Op::VLshlrevB64,
        };
        let mut i = Inst::new(op, Enc::Vop2);
        i.dst = VGPR + b16(w0, 17, 8);
        i.src = [b16(w0, 0, 9), VGPR + b16(w0, 9, 8), NONE];
        i
    } else {
        return decode_gfx11(w);
    };
    if i.uses_lit() {
        let at = usize::from(i.len / 4);
        i.lit = w.get(at).copied().unwrap_or(0);
        i.len += 4;
    }
    let n = usize::from(i.len / 4);
    for (k, slot) in i.words.iter_mut().enumerate() {
        *slot = if k < n { w[k] } else { 0 };
    }
    Ok(i)
}

fn smem12(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 13, 8);
    let op = match opc {
        0 => SLoadB32,
        1 => SLoadB64,
        2 => SLoadB128,
        3 => SLoadB256,
        4 => SLoadB512,
        5 => SLoadB96,
        _ => return Err(undec(w, "SMEM", opc)),
    };
    let mut i = Inst::new(op, Enc::Smem);
    i.len = 8;
    i.dst = b16(w, 6, 7);
    i.src = [b16(w, 0, 6) * 2, b16(w1, 25, 7), NONE];
    // CAST: the 24-bit offset shifted to the top sign-extends.
    i.imm = ((w1 << 8) as i32) >> 8;
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
        _ => {
            // Loads, stores and atomics keep their gfx11 numbers.
            let probe = (0b110111u32 << 26) | (u32::from(seg) << 16) | (opc << 18);
            let g11 = flat(probe & !(0x7f << 18) | ((opc & 0x7f) << 18), 0)?;
            if opc > 0x7f {
                return Err(undec(w, "VFLAT", opc));
            }
            g11.op
        }
    };
    let mut i = Inst::new(op, Enc::Flat);
    i.len = 12;
    i.sub = seg;
    // CAST: 2-bit SCOPE field, kept in flags bits 4..6 (for the disassembly).
    let scope = (bits(w1, 18, 2) as u8) << 4;
    if matches!(op, GlobalInv | GlobalWb) {
        i.flags = scope;
        return Ok(i);
    }
    // CAST: the 24-bit offset shifted to the top sign-extends.
    i.imm = ((w2 & 0xffff_ff00) as i32) >> 8;
    let sve = bits(w1, 17, 1) == 1;
    let saddr = b16(w, 0, 7);
    let (vdst, vsrc, vaddr) = (b16(w1, 0, 8), b16(w1, 23, 8), b16(w2, 0, 8));
    let atomic = opc >= 51;
    let load = opc < 24;
    // Atomics return the old value when TH has the return bit (bit 0 of th, dword1 bit 20).
    let rtn = atomic && bits(w1, 20, 1) == 1;
    i.flags = u8::from(rtn) | (u8::from(sve) << 3) | scope;
    let vaddr = if seg == SEG_SCRATCH && !sve {
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

/// gfx9 (gfx90a, gfx942): GCN encodings, wave64. Operations shared with gfx11 map onto the same
/// [`Op`]s (gfx9's v_add_co_u32 is gfx11's VOP3SD form, v_addc_co_u32 its v_add_co_ci_u32).
fn decode_gfx9(w: &[u32; 3]) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let mut i = if w0 >> 31 == 0 {
        if w0 >> 25 == 0x3f {
            vop1_9(w0)?
        } else if w0 >> 25 == 0x3e {
            vopc_9(w0)?
        } else {
            vop2_9(w0)?
        }
    } else if w0 >> 30 == 0b10 && w0 >> 28 != 0b1011 {
        sop2_9(w0)?
    } else if w0 >> 28 == 0b1011 {
        match bits(w0, 23, 5) {
            0x1d => sop1_9(w0)?,
            0x1e => sopc_9(w0)?,
            0x1f => sopp_9(w0)?,
            _ => sopk_9(w0)?,
        }
    } else {
        match w0 >> 26 {
            0b110000 => smem_9(w0, w[1])?,
            0b110100 => vop3_9(w0, w[1])?,
            0b110110 => ds(
                ((w0 & !(0xff << 17)) | (bits(w0, 17, 8) << 18)) & !(1 << 17),
                w[1],
            )?,
            0b110111 => flat_9(w0, w[1])?,
            0b111000 => mubuf_9(w0, w[1])?,
            _ => {
                return Err(undec(
                    w0,
                    "an encoding (unknown or not interpreted)",
                    w0 >> 26,
                ));
            }
        }
    };
    if i.uses_lit() {
        let at = usize::from(i.len / 4);
        i.lit = w.get(at).copied().unwrap_or(0);
        i.len += 4;
    }
    let n = usize::from(i.len / 4);
    for (k, slot) in i.words.iter_mut().enumerate() {
        *slot = if k < n { w[k] } else { 0 };
    }
    Ok(i)
}

fn sop2_9(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 23, 7);
    let op = match opc {
        0 => SAddU32,
        1 => SSubU32,
        2 => SAddI32,
        3 => SSubI32,
        4 => SAddcU32,
        5 => SSubbU32,
        6 => SMinI32,
        7 => SMinU32,
        8 => SMaxI32,
        9 => SMaxU32,
        10 => SCselectB32,
        11 => SCselectB64,
        12 => SAndB32,
        13 => SAndB64,
        14 => SOrB32,
        15 => SOrB64,
        16 => SXorB32,
        17 => SXorB64,
        18 => SAndNot1B32,
        19 => SAndNot1B64,
        20 => SOrNot1B32,
        21 => SOrNot1B64,
        22 => SNandB32,
        23 => SNandB64,
        24 => SNorB32,
        25 => SNorB64,
        26 => SXnorB32,
        27 => SXnorB64,
        28 => SLshlB32,
        29 => SLshlB64,
        30 => SLshrB32,
        31 => SLshrB64,
        32 => SAshrI32,
        33 => SAshrI64,
        34 => SBfmB32,
        35 => SBfmB64,
        36 => SMulI32,
        37 => SBfeU32,
        38 => SBfeI32,
        39 => SBfeU64,
        40 => SBfeI64,
        42 => SAbsdiffI32,
        44 => SMulHiU32,
        45 => SMulHiI32,
        46 => SLshl1AddU32,
        47 => SLshl2AddU32,
        48 => SLshl3AddU32,
        49 => SLshl4AddU32,
        50 => SPackLlB32B16,
        51 => SPackLhB32B16,
        52 => SPackHhB32B16,
        _ => return Err(undec(w, "SOP2", opc)),
    };
    let mut i = Inst::new(op, Enc::Sop2);
    i.dst = b16(w, 16, 7);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    Ok(i)
}

fn sop1_9(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 8, 8);
    let op = match opc {
        0 => SMovB32,
        1 => SMovB64,
        2 => SCmovB32,
        3 => SCmovB64,
        4 => SNotB32,
        5 => SNotB64,
        8 => SBrevB32,
        10 => SBcnt0I32B32,
        12 => SBcnt1I32B32,
        13 => SBcnt1I32B64,
        16 => SFf1I32B32,
        17 => SFf1I32B64,
        18 => SClzI32U32,
        22 => SSextI32I8,
        23 => SSextI32I16,
        24 => SBitset0B32,
        26 => SBitset1B32,
        28 => SGetpcB64,
        29 => SSetpcB64,
        30 => SSwappcB64,
        32 => SAndSaveexecB64,
        33 => SOrSaveexecB64,
        34 => SXorSaveexecB64,
        35 => SAndNot1SaveexecB64,
        48 => SAbsI32,
        _ => return Err(undec(w, "SOP1", opc)),
    };
    let mut i = Inst::new(op, Enc::Sop1);
    i.dst = b16(w, 16, 7);
    i.src[0] = b16(w, 0, 8);
    if op == SGetpcB64 {
        i.src[0] = NONE;
    }
    if op == SSetpcB64 {
        i.dst = NONE;
    }
    Ok(i)
}

fn sopk_9(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 23, 5);
    let op = match opc {
        0 => SMovkI32,
        1 => SCmovkI32,
        2 => SCmpkEqI32,
        3 => SCmpkLgI32,
        4 => SCmpkGtI32,
        5 => SCmpkGeI32,
        6 => SCmpkLtI32,
        7 => SCmpkLeI32,
        8 => SCmpkEqU32,
        9 => SCmpkLgU32,
        10 => SCmpkGtU32,
        11 => SCmpkGeU32,
        12 => SCmpkLtU32,
        13 => SCmpkLeU32,
        14 => SAddkI32,
        15 => SMulkI32,
        _ => return Err(undec(w, "SOPK", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopk);
    i.dst = b16(w, 16, 7);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    Ok(i)
}

fn sopc_9(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 16, 7);
    let op = match opc {
        0 => SCmpEqI32,
        1 => SCmpLgI32,
        2 => SCmpGtI32,
        3 => SCmpGeI32,
        4 => SCmpLtI32,
        5 => SCmpLeI32,
        6 => SCmpEqU32,
        7 => SCmpLgU32,
        8 => SCmpGtU32,
        9 => SCmpGeU32,
        10 => SCmpLtU32,
        11 => SCmpLeU32,
        12 => SBitcmp0B32,
        13 => SBitcmp1B32,
        18 => SCmpEqU64,
        19 => SCmpLgU64,
        _ => return Err(undec(w, "SOPC", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopc);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    Ok(i)
}

fn sopp_9(w: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 16, 7);
    let op = match opc {
        0 => SNop,
        1 => SEndpgm,
        2 => SBranch,
        4 => SCbranchScc0,
        5 => SCbranchScc1,
        6 => SCbranchVccz,
        7 => SCbranchVccnz,
        8 => SCbranchExecz,
        9 => SCbranchExecnz,
        10 => SBarrier,
        12 => SWaitcnt,
        14 => SSleep,
        15 => SSetprio,
        16 => SSendmsg,
        18 => STrap,
        19 => SIcacheInv,
        31 => SCodeEnd,
        _ => return Err(undec(w, "SOPP", opc)),
    };
    let mut i = Inst::new(op, Enc::Sopp);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    Ok(i)
}

fn smem_9(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 8);
    let op = match opc {
        0 => SLoadB32,
        1 => SLoadB64,
        2 => SLoadB128,
        3 => SLoadB256,
        4 => SLoadB512,
        32 => SDcacheInv,
        36 => SMemtime,
        37 => SMemrealtime,
        _ => return Err(undec(w, "SMEM", opc)),
    };
    let mut i = Inst::new(op, Enc::Smem);
    i.len = 8;
    i.dst = b16(w, 6, 7);
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
    if matches!(op, SDcacheInv) {
        i.dst = NONE;
        i.src = [NONE; 3];
    }
    if matches!(op, SMemtime | SMemrealtime) {
        i.src = [NONE; 3];
    }
    Ok(i)
}

fn vop1_9_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0 => VNop,
        1 => VMovB32,
        2 => VReadfirstlaneB32,
        3 => VCvtI32F64,
        4 => VCvtF64I32,
        5 => VCvtF32I32,
        6 => VCvtF32U32,
        7 => VCvtU32F32,
        8 => VCvtI32F32,
        10 => VCvtF16F32,
        11 => VCvtF32F16,
        15 => VCvtF32F64,
        16 => VCvtF64F32,
        17 => VCvtF32Ubyte0,
        18 => VCvtF32Ubyte1,
        19 => VCvtF32Ubyte2,
        20 => VCvtF32Ubyte3,
        21 => VCvtU32F64,
        22 => VCvtF64U32,
        23 => VTruncF64,
        24 => VCeilF64,
        25 => VRndneF64,
        26 => VFloorF64,
        27 => VFractF32,
        28 => VTruncF32,
        29 => VCeilF32,
        30 => VRndneF32,
        31 => VFloorF32,
        32 => VExpF32,
        33 => VLogF32,
        34 => VRcpF32,
        35 => VRcpIflagF32,
        36 => VRsqF32,
        37 => VRcpF64,
        38 => VRsqF64,
        39 => VSqrtF32,
        40 => VSqrtF64,
        41 => VSinF32,
        42 => VCosF32,
        43 => VNotB32,
        44 => VBfrevB32,
        45 => VFfbhU32,
        46 => VFfblB32,
        50 => VFractF64,
        51 => VFrexpExpI32F32,
        52 => VFrexpMantF32,
        _ => return None,
    })
}

fn vop2_9_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0 => VCndmaskB32,
        1 => VAddF32,
        2 => VSubF32,
        3 => VSubrevF32,
        5 => VMulF32,
        6 => VMulI32I24,
        7 => VMulHiI32I24,
        8 => VMulU32U24,
        9 => VMulHiU32U24,
        10 => VMinF32,
        11 => VMaxF32,
        12 => VMinI32,
        13 => VMaxI32,
        14 => VMinU32,
        15 => VMaxU32,
        16 => VLshrrevB32,
        17 => VAshrrevI32,
        18 => VLshlrevB32,
        19 => VAndB32,
        20 => VOrB32,
        21 => VXorB32,
        22 => VMacF32,
        4 => VFmacF64,
        25 => VAddCoU32,
        26 => VSubCoU32,
        27 => VSubrevCoU32,
        28 => VAddCoCiU32,
        29 => VSubCoCiU32,
        30 => VSubrevCoCiU32,
        52 => VAddNcU32,
        53 => VSubNcU32,
        54 => VSubrevNcU32,
        59 => VFmacF32,
        61 => VXnorB32,
        _ => return None,
    })
}

fn vopc_9_op(opc: u32) -> Option<(Op, u8, bool)> {
    use Op::*;
    // CAST: masked to 4 bits.
    let c = (opc & 0xf) as u8;
    Some(match opc {
        0x10 => (VCmpClassF32, 0, false),
        0x11 => (VCmpClassF32, 0, true),
        0x12 => (VCmpClassF64, 0, false),
        0x13 => (VCmpClassF64, 0, true),
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

fn vop1_9(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 9, 8);
    let op = vop1_9_op(opc).ok_or_else(|| undec(w, "VOP1", opc))?;
    let mut i = Inst::new(op, Enc::Vop1);
    i.dst = VGPR + b16(w, 17, 8);
    i.src[0] = b16(w, 0, 9);
    if op == Op::VReadfirstlaneB32 {
        i.dst = b16(w, 17, 8);
    }
    if op == Op::VNop {
        i.dst = NONE;
        i.src[0] = NONE;
    }
    Ok(i)
}

fn vop2_9(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 25, 6);
    let op = vop2_9_op(opc).ok_or_else(|| undec(w, "VOP2", opc))?;
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
        _ => {}
    }
    Ok(i)
}

fn vopc_9(w: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 17, 8);
    let (op, c, x) = vopc_9_op(opc).ok_or_else(|| undec(w, "VOPC", opc))?;
    let mut i = Inst::new(op, Enc::Vopc);
    i.sub = c;
    i.cmpx = x;
    // gfx9's v_cmpx also writes VCC.
    i.sdst = 106;
    i.src = [b16(w, 0, 9), VGPR + b16(w, 9, 8), NONE];
    Ok(i)
}

fn vop3_9_only(opc: u32) -> Option<Op> {
    use Op::*;
    Some(match opc {
        0x1de => VDivFixupF32,
        0x1df => VDivFixupF64,
        0x1e0 => VDivScaleF32,
        0x1e1 => VDivScaleF64,
        0x1e2 => VDivFmasF32,
        0x1e3 => VDivFmasF64,
        0x206 => VFmaF16,
        0x1c2 => VMadI32I24,
        0x1c3 => VMadU32U24,
        0x1c8 => VBfeU32,
        0x1c9 => VBfeI32,
        0x1ca => VBfiB32,
        0x1cb => VFmaF32,
        0x1cc => VFmaF64,
        0x1ce => VAlignbitB32,
        0x1cf => VAlignbyteB32,
        0x1d0 => VMin3F32,
        0x1d1 => VMin3I32,
        0x1d2 => VMin3U32,
        0x1d3 => VMax3F32,
        0x1d4 => VMax3I32,
        0x1d5 => VMax3U32,
        0x1d6 => VMed3F32,
        0x1d7 => VMed3I32,
        0x1d8 => VMed3U32,
        0x1e8 => VMadU64U32,
        0x1e9 => VMadI64I32,
        0x1ed => VPermB32,
        0x1f3 => VXadU32,
        0x1fd => VLshlAddU32,
        0x1fe => VAddLshlU32,
        0x1ff => VAdd3U32,
        0x200 => VLshlOrB32,
        0x201 => VAndOrB32,
        0x202 => VOr3B32,
        0x208 => VLshlAddU64,
        0x280 => VAddF64,
        0x281 => VMulF64,
        0x282 => VMinF64,
        0x283 => VMaxF64,
        0x284 => VLdexpF64,
        0x285 => VMulLoU32,
        0x286 => VMulHiU32,
        0x287 => VMulHiI32,
        0x288 => VLdexpF32,
        0x289 => VReadlaneB32,
        0x28a => VWritelaneB32,
        0x28b => VBcntU32B32,
        0x28c => VMbcntLoU32B32,
        0x28d => VMbcntHiU32B32,
        0x28f => VLshlrevB64,
        0x290 => VLshrrevB64,
        0x291 => VAshrrevI64,
        _ => return None,
    })
}

fn vop3_9(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 10);
    let mut cmp = None;
    let op = match opc {
        0..=0xff => {
            let (op, c, x) = vopc_9_op(opc).ok_or_else(|| undec(w, "VOP3 (VOPC)", opc))?;
            cmp = Some((c, x));
            op
        }
        0x100..=0x13f => vop2_9_op(opc - 0x100).ok_or_else(|| undec(w, "VOP3 (VOP2)", opc))?,
        0x140..=0x17f => vop1_9_op(opc - 0x140).ok_or_else(|| undec(w, "VOP3 (VOP1)", opc))?,
        _ => vop3_9_only(opc).ok_or_else(|| undec(w, "VOP3", opc))?,
    };
    // Reuse the gfx11 field layout (identical from here on), then fix the differences.
    let g11_opc = match (cmp, op) {
        (Some(_), _) => 0x04c, // any valid gfx11 compare; op and condition are set below
        _ => 0x255,            // v_add3_u32 as a 3-source placeholder
    };
    let mut i = vop3((w & !(0x3ff << 16)) | (g11_opc << 16), w1)?;
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
        | Op::VFmacF32 => 3,
        _ if (0x140..0x180).contains(&opc) => 1,
        _ if (0x100..0x140).contains(&opc) => 2,
        _ if vop3_9_only(opc).is_some_and(|o| {
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
        Op::VReadlaneB32 | Op::VReadfirstlaneB32 => i.dst = vdst,
        Op::VMacF32 | Op::VFmacF32 | Op::VFmacF64 => i.src[2] = i.dst,
        _ => {}
    }
    Ok(i)
}

fn flat_9(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 7);
    let op = match opc {
        16 => MLoadU8,
        17 => MLoadI8,
        18 => MLoadU16,
        19 => MLoadI16,
        20 => MLoadB32,
        21 => MLoadB64,
        22 => MLoadB96,
        23 => MLoadB128,
        24 => MStoreB8,
        26 => MStoreB16,
        28 => MStoreB32,
        29 => MStoreB64,
        30 => MStoreB96,
        31 => MStoreB128,
        64 => MAtomicSwapB32,
        65 => MAtomicCmpswapB32,
        66 => MAtomicAddU32,
        67 => MAtomicSubU32,
        68 => MAtomicMinI32,
        69 => MAtomicMinU32,
        70 => MAtomicMaxI32,
        71 => MAtomicMaxU32,
        72 => MAtomicAndB32,
        73 => MAtomicOrB32,
        74 => MAtomicXorB32,
        75 => MAtomicIncU32,
        76 => MAtomicDecU32,
        77 => MAtomicAddF32,
        96 => MAtomicSwapB64,
        97 => MAtomicCmpswapB64,
        98 => MAtomicAddU64,
        _ => return Err(undec(w, "FLAT", opc)),
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
    let load = opc < 24;
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
    Ok(i)
}

fn mubuf_9(w: u32, w1: u32) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 18, 7);
    let op = match opc {
        20 => BufferLoadDword,
        21 => BufferLoadDwordx2,
        23 => BufferLoadDwordx4,
        28 => BufferStoreDword,
        29 => BufferStoreDwordx2,
        31 => BufferStoreDwordx4,
        63 => BufferWbinvl1Vol,
        _ => return Err(undec(w, "MUBUF", opc)),
    };
    let mut i = Inst::new(op, Enc::Mubuf);
    i.len = 8;
    if op == BufferWbinvl1Vol {
        return Ok(i);
    }
    i.imm = i32::from(b16(w, 0, 12));
    let offen = bits(w, 12, 1) == 1;
    let idxen = bits(w, 13, 1) == 1;
    if idxen {
        return Err(undec(w, "MUBUF (idxen)", opc));
    }
    // CAST: flag bits.
    i.flags = (bits(w, 14, 1) as u8) | ((bits(w, 17, 1) as u8) << 1) | (u8::from(offen) << 3);
    let (vaddr, vdata, srsrc, soff) = (
        b16(w1, 0, 8),
        b16(w1, 8, 8),
        b16(w1, 16, 5) * 4,
        b16(w1, 24, 8),
    );
    let load = opc < 24;
    // src: vaddr (offen), vdata (stores), srsrc; soffset in sdst.
    i.src = [
        if offen { VGPR + vaddr } else { NONE },
        if load { NONE } else { VGPR + vdata },
        srsrc,
    ];
    i.sdst = soff;
    i.dst = if load { VGPR + vdata } else { NONE };
    Ok(i)
}
