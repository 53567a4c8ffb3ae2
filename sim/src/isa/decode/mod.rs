//! Decoding machine words into [`Inst`]: the compact form the interpreter executes. Each
//! family has its encoding tables; the operations ([`Op`]) and their semantics are shared.

use super::Isa;
use super::ops::Op;

mod gfx11;
mod gfx12;
mod gfx9;
mod true16;
mod vinterp;

pub use gfx11::has_short_form;
pub(crate) use true16::whole_regs;

/// Whether `op` has a 32-bit VOP1/VOP2 encoding on gfx9 (gfx90a, gfx942).
#[must_use]
pub fn has_short_form_gfx9(op: Op) -> bool {
    gfx9::has_short_form(op)
}

/// Whether `op` has a 32-bit VOP1/VOP2 encoding on gfx12 (gfx11's, less the IEEE-mode
/// min/max, plus the VOP2 ops gfx12 added).
#[must_use]
pub fn has_short_form_gfx12(op: Op) -> bool {
    gfx12::has_short_form(op)
}

/// A family's opcode map written compactly: `table! {opc, MISS; 0 => SMovB32, 1 => ...}`.
macro_rules! table {
    ($opc:expr, $miss:expr; $($k:pat => $v:ident),* $(,)?) => {
        match $opc { $($k => $v,)* _ => $miss }
    };
}
use table;

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
    Vop3p,
    Ds,
    Flat,
    Mubuf,
    /// VINTERP (gfx11+): `v_interp_*` reading the quad's lanes; `imm` is WAITEXP.
    Vinterp,
}

/// Operand code of the literal constant.
pub const LIT: u16 = 255;
/// Operand codes from here on name VGPRs (`256 + n`).
pub const VGPR: u16 = 256;
/// Operand codes from here on name AGPRs (`512 + n`, gfx90a/gfx942): what an ACC bit or an
/// AGPR operand of `v_accvgpr_*` selects instead of the VGPR of the same number.
pub const AGPR: u16 = 512;
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

/// Data-parallel primitives: a VOP1/VOP2/VOPC instruction whose src0 is read from another lane
/// (the src0 field 0xfa: DPP16; 0xe9/0xea: DPP8, gfx11+). The lane each lane reads is
/// [`Dpp::source`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dpp {
    /// DPP16: `ctrl` (quad_perm 0..=0xff, row shifts/rotates 0x101..=0x12f, gfx9's wave
    /// shifts/rotates 0x130..=0x13c and row broadcasts 0x142/0x143, mirrors 0x140/0x141, gfx10+'s
    /// row_share 0x150..=0x15f and row_xmask 0x160..=0x16f); a lane of a row whose `row_mask`
    /// bit is clear, or of a bank (4 lanes of a row) whose `bank_mask` bit is clear, is not
    /// written; a source lane out of range or inactive (unless `fi`, gfx10+) reads 0 with
    /// `bound_ctrl`, else the lane is not written.
    Row {
        /// DPP_CTRL (9 bits).
        ctrl: u16,
        /// ROW_MASK: one bit per row of 16 lanes.
        row_mask: u8,
        /// BANK_MASK: one bit per bank of 4 lanes within each row.
        bank_mask: u8,
        /// BOUND_CTRL: an invalid source reads 0 (else the lane keeps its value).
        bound_ctrl: bool,
        /// FI: inactive source lanes are read (gfx10+).
        fi: bool,
    },
    /// DPP8: lane `8g + k` reads lane `8g + sel[k]` (3 bits each from bit 0); an inactive
    /// source lane reads 0 unless `fi`.
    Lane8 {
        /// Eight 3-bit lane selects.
        sel: u32,
        /// FI: inactive source lanes are read.
        fi: bool,
    },
}

impl Dpp {
    /// The lane that `lane` of a wave of `lanes` reads, or `None` where the control names no
    /// lane (shifted out of its row or wave, a broadcast into row 0).
    #[must_use]
    pub fn source(self, lane: usize, lanes: usize) -> Option<usize> {
        let (row, k) = (lane & !15, lane & 15);
        let s = match self {
            Dpp::Lane8 { sel, .. } => (lane & !7) + ((sel >> (3 * (lane & 7))) & 7) as usize,
            Dpp::Row { ctrl, .. } => {
                let n = usize::from(ctrl & 15);
                match ctrl {
                    0..=0xff => (lane & !3) + usize::from((ctrl >> (2 * (lane & 3))) & 3),
                    0x101..=0x10f => row + k.checked_add(n).filter(|&v| v < 16)?,
                    0x111..=0x11f => row + k.checked_sub(n)?,
                    0x121..=0x12f => row + (k + 16 - n) % 16,
                    0x130 => lane + 1,
                    0x134 => (lane + 1) % lanes,
                    0x138 => lane.checked_sub(1)?,
                    0x13c => (lane + lanes - 1) % lanes,
                    0x140 => row + 15 - k,
                    0x141 => (lane & !7) + 7 - (lane & 7),
                    0x142 => row.checked_sub(1)?,
                    0x143 if lane >= 32 => 31,
                    0x150..=0x15f => row + n,
                    0x160..=0x16f => row + (k ^ n),
                    _ => return None,
                }
            }
        };
        (s < lanes).then_some(s)
    }

    /// Whether the control is one `isa` defines (gfx9: no row_share/row_xmask; gfx10+: no wave
    /// shifts or row broadcasts).
    fn valid(self, isa: Isa) -> bool {
        match self {
            Dpp::Lane8 { .. } => isa != Isa::Gfx9,
            Dpp::Row { ctrl, .. } => match ctrl {
                0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x140 | 0x141 => true,
                0x130 | 0x134 | 0x138 | 0x13c | 0x142 | 0x143 => isa == Isa::Gfx9,
                0x150..=0x16f => isa != Isa::Gfx9,
                _ => false,
            },
        }
    }
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
    /// Sub-operation: compare condition, memory segment, DS offset1; VOP3P: op_sel (bits
    /// 0..3) and op_sel_hi (bits 4..7), one bit per source.
    pub sub: u8,
    /// VOPC compares that write EXEC (v_cmpx).
    pub cmpx: bool,
    /// VOP3 input modifiers: neg (bits 0..3), abs (bits 4..7). VOP3P: neg_lo (bits 0..3),
    /// neg_hi (bits 4..7).
    pub mods: u8,
    /// VOP3 clamp.
    pub clamp: bool,
    /// VOP3 output modifier (0 none, 1 *2, 2 *4, 3 /2).
    pub omod: u8,
    /// Memory flags: bit 0 glc/sc0 (return for atomics), bit 1 slc, bit 2 dlc, bit 3 sve
    /// (MUBUF: offen), bit 4 MUBUF idxen.
    pub flags: u8,
    /// VOP3 op_sel of 16-bit operations: bit k reads the high half of source k, bit 3 writes
    /// the high half of the destination.
    pub opsel: u8,
    /// gfx9 SDWA: the second word (operand selects, dst_sel, dst_unused); `None` otherwise.
    pub sdwa: Option<u32>,
    /// VOPD: the X and Y halves.
    pub dual: Option<[DualHalf; 2]>,
    /// DPP: how src0 is read across lanes; `None` otherwise.
    pub dpp: Option<Dpp>,
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
    pub(crate) fn new(op: Op, enc: Enc) -> Self {
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
            opsel: 0,
            sdwa: None,
            dual: None,
            dpp: None,
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
    let family = match isa {
        Isa::Gfx11 => gfx11::decode,
        Isa::Gfx12 => gfx12::decode,
        Isa::Gfx9 => gfx9::decode,
    };
    let w0 = words[0];
    let dpp_marker = |x: u32| matches!(bits(x, 0, 9), 0xe9 | 0xea | 0xfa);
    let mut i = if isa != Isa::Gfx9 && w0 >> 24 == 0xcd {
        vinterp::decode(words)?
    } else if (w0 >> 31 == 0 && dpp_marker(w0))
        || (isa != Isa::Gfx9 && w0 >> 26 == 0b110101 && dpp_marker(words[1]))
        || (isa != Isa::Gfx9 && w0 >> 24 == 0xcc && dpp_marker(words[1]))
    {
        dpp(isa, words, family)?
    } else {
        family(words)?
    };
    // 16-bit VGPR operands of the e32 and DPP forms name halves (the DPP word's source too).
    if isa != Isa::Gfx9 && matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) {
        true16::half_regs(&mut i);
    }
    if i.uses_lit() {
        let at = usize::from(i.len / 4);
        i.lit = words.get(at).copied().unwrap_or(0);
        i.len += 4;
    }
    let n = usize::from(i.len / 4);
    for (k, slot) in i.words.iter_mut().enumerate() {
        *slot = if k < n { words[k] } else { 0 };
    }
    Ok(i)
}

/// As [`decode`], for a chip of the family where chips give an encoding different meanings:
/// `gfx940` false is gfx90a (CDNA2), whose SCRATCH encoding has no SVE bit: the address VGPR
/// is used exactly when SADDR is off (0x7f), per the MI200 (CDNA2) ISA guide's scratch
/// addressing ("SADDR: ... if NULL, the VGPR address is used"). [`decode`] is this with
/// the family default (gfx940 semantics on gfx9).
///
/// # Errors
/// Words that are no instruction of `isa` the interpreter knows.
pub fn decode_for(isa: Isa, gfx940: bool, words: &[u32; 3]) -> Result<Inst, Undecodable> {
    let mut i = decode(isa, words)?;
    if isa == Isa::Gfx9 && !gfx940 && i.enc == Enc::Flat && i.sub == SEG_SCRATCH {
        let saddr_off = bits(words[1], 16, 7) == 0x7f;
        i.flags &= !8;
        i.src[0] = if saddr_off {
            i.flags |= 8;
            VGPR + b16(words[1], 0, 8)
        } else {
            NONE
        };
    }
    // The matrix row the chip names (gfx940's SMFMAC share opcodes with gfx90a's MFMA).
    if isa == Isa::Gfx9 && i.op == Op::VMfma {
        let opc = bits(words[0], 16, 7);
        if let Some(row) = crate::isa::mai::find_for(isa, gfx940, opc) {
            // CAST: the row (< 256) replaces the low byte.
            i.imm = (i.imm & !0xff) | row as i32;
        }
    }
    Ok(i)
}

/// A VOP1/VOP2/VOPC word whose src0 field is a DPP marker (0xfa DPP16; 0xe9, 0xea DPP8 on
/// gfx11+), or a gfx11+ VOP3 whose src0 field is: the family decodes the instruction as if
/// src0 were v0, then the DPP word (the second word; VOP3: the third) gives the source VGPR,
/// the lane control and, for the 32-bit forms' DPP16, src0/src1 neg and abs (VOP3 keeps its
/// own modifiers).
fn dpp(
    isa: Isa,
    w: &[u32; 3],
    family: fn(&[u32; 3]) -> Result<Inst, Undecodable>,
) -> Result<Inst, Undecodable> {
    let w0 = w[0];
    let vop3 = w0 >> 31 == 1;
    let (marker, w1) = if vop3 {
        (bits(w[1], 0, 9), w[2])
    } else {
        (bits(w0, 0, 9), w[1])
    };
    let refuse = |what| Err(undec(w0, what, bits(w0, 25, 7)));
    if isa == Isa::Gfx9 && marker != 0xfa {
        return refuse("VOP (src0 0xe9/0xea: no DPP8 on gfx9)");
    }
    let mut i = if vop3 {
        family(&[w0, (w[1] & !0x1ff) | u32::from(VGPR), 0])?
    } else {
        family(&[(w0 & !0x1ff) | u32::from(VGPR), 0, 0])?
    };
    let forms: &[Enc] = if vop3 {
        &[Enc::Vop3, Enc::Vop3sd, Enc::Vop3p]
    } else {
        &[Enc::Vop1, Enc::Vop2, Enc::Vopc]
    };
    if !forms.contains(&i.enc)
        || i.src.contains(&LIT)
        || i.sdwa.is_some()
        || matches!(
            i.op,
            Op::VReadfirstlaneB32
                | Op::VAccvgprMovB32
                | Op::VClrexcp
                | Op::VPipeflush
                | Op::VFmamkF32
                | Op::VFmaakF32
        )
        // gfx9 decodes v_nop with a DPP word (it does nothing either way).
        || (i.op == Op::VNop && (isa != Isa::Gfx9 || vop3))
        || (i.enc == Enc::Vop3p
            && !matches!(
                i.op,
                Op::VFmaMixF32
                    | Op::VFmaMixloF16
                    | Op::VFmaMixhiF16
                    | Op::VDot2F32F16
                    | Op::VDot4F32Fp8Bf8
                    | Op::VDot4F32Bf8Fp8
                    | Op::VDot4F32Fp8Fp8
                    | Op::VDot4F32Bf8Bf8
            ))
    {
        return refuse("DPP (an operation without a DPP form)");
    }
    if i.enc == Enc::Vopc && isa == Isa::Gfx9 {
        return refuse("DPP (VOPC has no DPP form on gfx9)");
    }
    i.len = if vop3 { 12 } else { 8 };
    if i.op != Op::VNop {
        i.src[0] = VGPR + b16(w1, 0, 8);
    }
    let d = if marker == 0xfa {
        if !vop3 {
            // CAST: single bits: neg in bits 0..1, abs in bits 4..5 (the VOP3 layout).
            i.mods = (bits(w1, 20, 1)
                | (bits(w1, 22, 1) << 1)
                | (bits(w1, 21, 1) << 4)
                | (bits(w1, 23, 1) << 5)) as u8;
        }
        let ctrl = match b16(w1, 8, 9) {
            // gfx9's row_bcast:15, a code the RDNA guides list as unused (DPP_CTRL
            // enumeration: 0x142..=0x14f), reads lane 0 of each row on gfx1100, as row_share:0
            // does (tinygrad test/amd/hw test_dpp.py test_row_bcast15_materializes_vcc compares
            // all 64 lanes of a wave64 on the GPU with an emulator that reads each row's lane 0).
            0x142 if isa != Isa::Gfx9 => 0x150,
            c => c,
        };
        Dpp::Row {
            ctrl,
            // CAST: 4-bit fields.
            row_mask: bits(w1, 28, 4) as u8,
            bank_mask: bits(w1, 24, 4) as u8,
            bound_ctrl: bits(w1, 19, 1) == 1,
            fi: isa != Isa::Gfx9 && bits(w1, 18, 1) == 1,
        }
    } else {
        Dpp::Lane8 {
            sel: w1 >> 8,
            fi: marker == 0xea,
        }
    };
    if !d.valid(isa) {
        return refuse("DPP (a DPP_CTRL this family does not define)");
    }
    i.dpp = Some(d);
    Ok(i)
}

fn undec(word: u32, what: &'static str, opcode: u32) -> Undecodable {
    Undecodable { word, what, opcode }
}

/// SOP2 fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn sop2(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 23, 7);
    let op = table(opc).ok_or_else(|| undec(w, "SOP2", opc))?;
    let mut i = Inst::new(op, Enc::Sop2);
    i.dst = b16(w, 16, 7);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    if matches!(op, Op::SCbranchGFork | Op::SRfeRestoreB64) {
        i.dst = NONE;
    }
    Ok(i)
}

/// SOP1 fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn sop1(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    use Op::*;
    let opc = bits(w, 8, 8);
    let op = table(opc).ok_or_else(|| undec(w, "SOP1", opc))?;
    let mut i = Inst::new(op, Enc::Sop1);
    i.dst = b16(w, 16, 7);
    i.src[0] = b16(w, 0, 8);
    if op == SGetpcB64 {
        i.src[0] = NONE;
    }
    if matches!(op, SSetpcB64 | SRfeB64 | SCbranchJoin | SSetGprIdxIdx) {
        i.dst = NONE;
    }
    // The message is the SSRC0 field itself (no SGPR is read).
    if matches!(op, SSendmsgRtnB32 | SSendmsgRtnB64) {
        i.src[0] = NONE;
        // CAST: an 8-bit field.
        i.imm = bits(w, 0, 8) as i32;
    }
    Ok(i)
}

/// SOPK fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn sopk(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 23, 5);
    let op = table(opc).ok_or_else(|| undec(w, "SOPK", opc))?;
    let mut i = Inst::new(op, Enc::Sopk);
    i.dst = b16(w, 16, 7);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    match op {
        // The SDST field names the source (s_setreg's SGPR, s_cbranch_i_fork's mask pair).
        Op::SSetregB32 | Op::SCbranchIFork => {
            i.src[0] = i.dst;
            i.dst = NONE;
        }
        // The value is the 32-bit literal after the instruction.
        Op::SSetregImm32B32 => {
            i.src[0] = LIT;
            i.dst = NONE;
        }
        Op::SVersion => i.dst = NONE,
        _ => {}
    }
    Ok(i)
}

/// SOPC fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn sopc(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let op = table(opc).ok_or_else(|| undec(w, "SOPC", opc))?;
    let mut i = Inst::new(op, Enc::Sopc);
    i.src = [b16(w, 0, 8), b16(w, 8, 8), NONE];
    // gfx9 s_set_gpr_idx_on: the SSRC1 field is the 4-bit mode (which operands index).
    if op == Op::SSetGprIdxOn {
        i.src[1] = NONE;
        // CAST: a 4-bit field.
        i.imm = bits(w, 8, 4) as i32;
    }
    Ok(i)
}

/// SOPP fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn sopp(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let op = table(opc).ok_or_else(|| undec(w, "SOPP", opc))?;
    let mut i = Inst::new(op, Enc::Sopp);
    // CAST: simm16 sign-extends.
    i.imm = i32::from(w as u16 as i16);
    Ok(i)
}

/// VOP1 fields (the same layout on every family); `table` is the family's opcode map.
pub(super) fn vop1(w: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 9, 8);
    let op = table(opc).ok_or_else(|| undec(w, "VOP1", opc))?;
    let mut i = Inst::new(op, Enc::Vop1);
    i.dst = VGPR + b16(w, 17, 8);
    i.src[0] = b16(w, 0, 9);
    if op == Op::VReadfirstlaneB32 {
        i.dst = b16(w, 17, 8);
    }
    if matches!(op, Op::VNop | Op::VClrexcp | Op::VPipeflush) {
        i.dst = NONE;
        i.src[0] = NONE;
    }
    Ok(i)
}

/// VOP3P fields (the same layout on gfx9, gfx11 and gfx12; only the encoding's prefix
/// differs): 7-bit opcode, clamp, op_sel/op_sel_hi/neg_lo/neg_hi per source.
pub(super) fn vop3p(w: u32, w1: u32, table: fn(u32) -> Option<Op>) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let op = table(opc).ok_or_else(|| undec(w, "VOP3P", opc))?;
    let mut i = Inst::new(op, Enc::Vop3p);
    i.len = 8;
    i.dst = VGPR + b16(w, 0, 8);
    i.src = [b16(w1, 0, 9), b16(w1, 9, 9), b16(w1, 18, 9)];
    let three = matches!(
        op,
        Op::VPkFmaF16
            | Op::VPkFmaF32
            | Op::VWmma
            | Op::VPkMadI16
            | Op::VPkMadU16
            | Op::VFmaMixF32
            | Op::VFmaMixloF16
            | Op::VFmaMixhiF16
            | Op::VDot2F32F16
            | Op::VDot2F32Bf16
            | Op::VDot4I32Iu8
            | Op::VDot4U32U8
            | Op::VDot8I32Iu4
            | Op::VDot8U32U4
            | Op::VDot2I32I16
            | Op::VDot2U32U16
            | Op::VDot4I32I8
            | Op::VDot8I32I4
            | Op::VDot4F32Fp8Bf8
            | Op::VDot4F32Bf8Fp8
            | Op::VDot4F32Fp8Fp8
            | Op::VDot4F32Bf8Bf8
    );
    if !three {
        i.src[2] = NONE;
    }
    i.clamp = bits(w, 15, 1) == 1;
    let op_sel = bits(w, 11, 3);
    let op_sel_hi = bits(w1, 27, 2) | (bits(w, 14, 1) << 2);
    let (neg_lo, neg_hi) = (bits(w1, 29, 3), bits(w, 8, 3));
    // CAST: 3-bit fields in 4-bit slots.
    i.sub = (op_sel | (op_sel_hi << 4)) as u8;
    // CAST: as above.
    i.mods = (neg_lo | (neg_hi << 4)) as u8;
    Ok(i)
}

/// gfx11/gfx12 WMMA and SWMMAC (VOP3P opcodes 0x40..): the VOP3P fields, with the
/// instruction's [`crate::isa::mai::TABLE`] row in `imm`.
pub(super) fn wmma(isa: Isa, w: u32, w1: u32) -> Result<Inst, Undecodable> {
    let opc = bits(w, 16, 7);
    let row = crate::isa::mai::find(isa, opc).ok_or_else(|| undec(w, "VOP3P (WMMA)", opc))?;
    let mut i = vop3p(w, w1, |_| Some(Op::VWmma))?;
    // CAST: the table has fewer than 256 rows.
    i.imm = row as i32;
    Ok(i)
}

/// A typed buffer opcode (MUBUF 0..=15, 38, 39 on every family; MTBUF 0..=15): the
/// operation and its `omod` (component count - 1, d16 in bit 2, d16_hi in bit 3).
pub(super) fn format_op(opc: u32) -> Option<(Op, u8)> {
    // CAST: opc < 16 below.
    let n = (opc & 3) as u8;
    Some(match opc {
        0..=3 => (Op::MLoadFormat, n),
        4..=7 => (Op::MStoreFormat, n),
        8..=11 => (Op::MLoadFormat, n | 4),
        12..=15 => (Op::MStoreFormat, n | 4),
        38 => (Op::MLoadFormat, 4 | 8),
        39 => (Op::MStoreFormat, 4 | 8),
        _ => return None,
    })
}

/// gfx10+'s unified buffer formats by number (LLVM's UfmtSymbolicGFX11 less the
/// `BUF_FMT_` prefix; the RDNA3/RDNA4 ISA guides' buffer format tables): data format and
/// numeric format of each.
pub const UFMT_NAMES: [&str; 64] = [
    "INVALID",
    "8_UNORM",
    "8_SNORM",
    "8_USCALED",
    "8_SSCALED",
    "8_UINT",
    "8_SINT",
    "16_UNORM",
    "16_SNORM",
    "16_USCALED",
    "16_SSCALED",
    "16_UINT",
    "16_SINT",
    "16_FLOAT",
    "8_8_UNORM",
    "8_8_SNORM",
    "8_8_USCALED",
    "8_8_SSCALED",
    "8_8_UINT",
    "8_8_SINT",
    "32_UINT",
    "32_SINT",
    "32_FLOAT",
    "16_16_UNORM",
    "16_16_SNORM",
    "16_16_USCALED",
    "16_16_SSCALED",
    "16_16_UINT",
    "16_16_SINT",
    "16_16_FLOAT",
    "10_11_11_FLOAT",
    "11_11_10_FLOAT",
    "10_10_10_2_UNORM",
    "10_10_10_2_SNORM",
    "10_10_10_2_UINT",
    "10_10_10_2_SINT",
    "2_10_10_10_UNORM",
    "2_10_10_10_SNORM",
    "2_10_10_10_USCALED",
    "2_10_10_10_SSCALED",
    "2_10_10_10_UINT",
    "2_10_10_10_SINT",
    "8_8_8_8_UNORM",
    "8_8_8_8_SNORM",
    "8_8_8_8_USCALED",
    "8_8_8_8_SSCALED",
    "8_8_8_8_UINT",
    "8_8_8_8_SINT",
    "32_32_UINT",
    "32_32_SINT",
    "32_32_FLOAT",
    "16_16_16_16_UNORM",
    "16_16_16_16_SNORM",
    "16_16_16_16_USCALED",
    "16_16_16_16_SSCALED",
    "16_16_16_16_UINT",
    "16_16_16_16_SINT",
    "16_16_16_16_FLOAT",
    "32_32_32_UINT",
    "32_32_32_SINT",
    "32_32_32_FLOAT",
    "32_32_32_32_UINT",
    "32_32_32_32_SINT",
    "32_32_32_32_FLOAT",
];

/// Registers of a typed buffer access's data: one per component, or one per two with d16.
#[must_use]
pub fn format_regs(omod: u8) -> u16 {
    let n = u16::from(omod & 3) + 1;
    if omod & 4 != 0 { n.div_ceil(2) } else { n }
}

/// The VOP3P opcodes gfx9 and gfx11 share (0..=18, the f16/f32 mixed fma 32..=34).
pub(super) fn vop3p_op(opc: u32) -> Option<Op> {
    use Op::*;
    Some(table! {opc, return None;
        0 => VPkMadI16, 1 => VPkMulLoU16, 2 => VPkAddI16, 3 => VPkSubI16, 4 => VPkLshlrevB16,
        5 => VPkLshrrevB16, 6 => VPkAshrrevI16, 7 => VPkMaxI16, 8 => VPkMinI16, 9 => VPkMadU16,
        10 => VPkAddU16, 11 => VPkSubU16, 12 => VPkMaxU16, 13 => VPkMinU16, 14 => VPkFmaF16,
        15 => VPkAddF16, 16 => VPkMulF16, 17 => VPkMinF16, 18 => VPkMaxF16, 32 => VFmaMixF32,
        33 => VFmaMixloF16, 34 => VFmaMixhiF16,
    })
}
